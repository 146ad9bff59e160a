# Block probes (the blk-io set): in the catalog with its four layers; dd's
# direct writes and reads of 64 KiB on a disk, captured by magnet-read -P
# blk-io, come out as one journey each, with dd as the submitter, every
# layer in order, the disk's numbers, the sectors dd asked for, the bytes
# all completed, and the device's own delay between issue and completion;
# the same in text, and from a trace file read back.
# rig-programs: jq dd
# rig-kmods: null_blk
. /magnet/lib.sh

unload_all
load_magnet

magnetctl probe catalog > /tmp/blk-catalog.txt
for l in bio queue issue complete; do
	check "the catalog has blk-io.$l" grep -q "^blk-io.$l " /tmp/blk-catalog.txt
done
magnetctl probe sets > /tmp/blk-sets.txt
check "probe sets lists blk-io's four layers, each on its tracepoint" \
	sh -c '[ $(grep -c -E "^blk-io +(bio|queue|issue|complete) .*block_(bio_queue|rq_insert|rq_issue|rq_complete)" /tmp/blk-sets.txt) -eq 4 ]'
check "magnetctl probe add-set blk-io" magnetctl probe add-set blk-io
check "... four probes" sh -c '[ $(magnetctl probe list | grep -c "blk-io\.") -eq 4 ]'
check "magnetctl probe del-set blk-io" magnetctl probe del-set blk-io
check "... none left" sh -c '! magnetctl probe list | grep -q "blk-io\."'

# The disk: null_blk's, memory-backed, each request completed by a timer
# 500 us after it was issued (irqmode=2), under mq-deadline, so that
# requests are queued before they are issued. Debug kernels have no
# null_blk: a loop device on a file there, completed by its worker.
DELAY=500000
if modprobe null_blk nr_devices=1 gb=1 memory_backed=1 irqmode=2 \
	completion_nsec=$DELAY 2> /dev/null; then
	DISK=nullb0
else
	echo "# no null_blk: a loop device instead"
	DELAY=0
	dd if=/dev/zero of=/tmp/blk.img bs=1M count=64 2> /dev/null
	losetup /dev/loop0 /tmp/blk.img
	DISK=loop0
fi
check "a disk to write to ($DISK)" test -b /dev/$DISK
echo mq-deadline > /sys/block/$DISK/queue/scheduler 2> /dev/null
QUEUED=0
grep -q '\[mq-deadline\]' /sys/block/$DISK/queue/scheduler && QUEUED=1
echo "# scheduler: $(cat /sys/block/$DISK/queue/scheduler)"
DEV=$(cat /sys/block/$DISK/dev)

# io NAME DD-ARGS...: GNU dd with DD-ARGS on the disk, its pid in
# /tmp/NAME.pid, while magnet-read -P blk-io writes JSON to
# /tmp/NAME.json and a trace file /tmp/NAME.mtr.
io() {
	io=$1
	shift
	magnet-read -P blk-io -j --print --trace /tmp/$io.mtr > /tmp/$io.json \
		2> /tmp/$io.err &
	mr=$!
	wait_for 30 sh -c 'magnetctl probe list | grep -q "blk-io.complete"'
	sleep 0.5
	sh -c "echo \$\$ > /tmp/$io.pid; exec $M/bin/dd $* 2> /dev/null"
	sleep 0.5
	interrupt $mr
	wait $mr
	cat /tmp/$io.err
}

# blocks NAME OP: NAME's journeys of OP on the disk, one a line
blocks() {
	jq -c --arg dev "$DEV" --arg op "$2" \
		'select(.type == "block" and (.major|tostring) + ":" + (.minor|tostring) == $dev and .op == $op)' \
		/tmp/$1.json
}

# the journeys of one dd: NAME OP COUNT (64 KiB each, from sector 0)
expect_ios() {
	io=$1 op=$2 count=$3
	pid=$(cat /tmp/$io.pid)
	blocks $io $op > /tmp/$io.ios
	n=$(wc -l < /tmp/$io.ios)
	head -n 1 /tmp/$io.ios | sed 's/^/# /'
	check "$io: $count journeys of dd's $op on $DEV ($n)" [ "$n" -eq "$count" ]
	check "$io: each submitted by dd ($pid), 65536 bytes, all completed, no error" \
		sh -c "[ \$(jq -c --argjson pid $pid 'select(.tgid != \$pid or .bytes != 65536 or .completed_bytes != 65536 or .error != 0)' /tmp/$io.ios | wc -l) -eq 0 ]"
	check "$io: at sectors 0, 128, ... as dd wrote them, in order" \
		sh -c "[ \"\$(jq .sector /tmp/$io.ios | tr '\n' ' ')\" = \"\$(seq 0 128 $(((count - 1) * 128)) | tr '\n' ' ')\" ]"
	if [ $QUEUED = 1 ]; then
		layers='bio queue issue complete'
	else
		layers='bio issue complete'
	fi
	check "$io: every journey passed $layers, in time order" \
		sh -c "[ \$(jq -r '[.journey[].layer] | join(\" \")' /tmp/$io.ios | grep -c -x '$layers') -eq $count ] &&
			[ \$(jq '[.journey[].ts] as \$t | \$t == (\$t | sort)' /tmp/$io.ios | grep -c true) -eq $count ]"
	if [ $DELAY -gt 0 ]; then
		check "$io: issue to completion at least the disk's $DELAY ns, in every journey" \
			sh -c "[ \$(jq '.journey[] | select(.layer == \"complete\") | .delta_ns' /tmp/$io.ios | awk -v d=$DELAY '\$1 >= d' | wc -l) -eq $count ]"
	fi
	check "$io: the bio layer ran in dd's thread" \
		sh -c "[ \$(jq --argjson pid $pid '.journey[0] | select(.layer == \"bio\" and .tid == \$pid and .context == \"task\")' /tmp/$io.ios | grep -c layer) -eq $count ]"
}

io write if=/dev/zero of=/dev/$DISK bs=64k count=32 oflag=direct
expect_ios write write 32
io read if=/dev/$DISK of=/dev/null bs=64k count=16 iflag=direct
expect_ios read read 16

# The same journeys in text, read back from the trace file.
magnet-read -r /tmp/write.mtr > /tmp/write.txt 2> /tmp/write-r.err
cat /tmp/write-r.err
grep -A 4 -m 1 ' BLOCK ' /tmp/write.txt | sed 's/^/# /'
n=$(grep -c " BLOCK $DEV write 65536 bytes at [0-9]* \(\[[a-z,]*\] \)\?by $(cat /tmp/write.pid)/[0-9]*: bio" /tmp/write.txt)
check "text from the trace file: a line for each write ($n)" [ "$n" -eq 32 ]
check "... each with its layers' times, to completion" \
	sh -c "[ \$(grep ' BLOCK $DEV write ' /tmp/write.txt | grep -c ' issue +[0-9.]* us complete +[0-9.]* us$') -eq 32 ]"
check "... and a line per layer under it" \
	sh -c "[ \$(grep -c '^    complete ' /tmp/write.txt) -ge 32 ]"
check "... and the count at the end" grep -q "magnet-read: [0-9]* block I/Os" /tmp/write-r.err
magnet-read -r /tmp/write.mtr -q > /tmp/write-q.txt 2> /dev/null
check "-q: the lines alone" sh -c "! grep -q '^    ' /tmp/write-q.txt && grep -q ' BLOCK ' /tmp/write-q.txt"
check "a packet expression selects no block I/O" \
	sh -c "magnet-read -r /tmp/write.mtr udp > /tmp/write-udp.txt 2> /dev/null; ! grep -q BLOCK /tmp/write-udp.txt"

if [ $DISK = nullb0 ]; then
	rmmod null_blk
else
	losetup -d /dev/loop0
fi
summary

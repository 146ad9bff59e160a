# Packet journeys on real traffic: the probe sets, magnet-read's journeys,
# trace files and pcapng, next to tcpdump on the same interface.
#
# Two network namespaces, A (10.9.0.1, fd09::1 on va) and B (10.9.0.2,
# fd09::2 on vb), joined by a veth pair. UDP and TCP transfers from A to B,
# and UDP over loopback (IPv4 and IPv6). What the kernel logged is checked
# here and, record by record, on the host (packets.host: tshark, tcpdump
# and an independent reader of the trace files). Then -w's rotation, live.
# rig-programs: gzip
. /magnet/lib.sh

unload_all
load_magnet buffers=default:4M

# --- the network -------------------------------------------------------------

check "two namespaces joined by a veth pair" netns_pair
# One write, one segment: what the TCP checks count on.
inA sysctl -qw net.ipv4.tcp_autocorking=0
check "veth pair between namespaces" inA ping -c 1 -W 2 10.9.0.2

# --- probe sets ----------------------------------------------------------------

magnetctl probe sets > /tmp/sets.txt 2>&1
check "four probe sets in the catalog" \
	sh -c 'for s in udp-send tcp-send udp-recv tcp-recv; do grep -q "$s" /tmp/sets.txt || exit 1; done'
magnetctl probe add-set udp-send,udp-recv,tcp-send,tcp-recv snaplen 4000 > /tmp/add.txt 2>&1
cat /tmp/add.txt
check "add-set installs the layers" grep -q 'udp-send.dev-xmit' /tmp/add.txt
check "add-set names the function used" grep -q 'udp_sendmsg' /tmp/add.txt
# What each layer uses on this kernel, as probe sets says it before any
# probe is added, is what add-set then puts each probe on.
cat /tmp/sets.txt
check "probe sets: every layer has its function in this kernel" \
	sh -c '! grep -q "not in this kernel" /tmp/sets.txt'
mismatch=$(awk 'NR == FNR { if (FNR > 1) uses[$1 "." $2] = $5; next }
	FNR > 1 && $1 ~ /\./ && uses[$1] != $3 { print $1 ": sets say " uses[$1] ", add-set used " $3 }' \
	/tmp/sets.txt /tmp/add.txt)
echo "$mismatch"
check "probe sets' USES is what add-set used, layer by layer" \
	sh -c "[ -z '$mismatch' ] && [ \$(grep -c '\.' /tmp/add.txt) -eq 28 ]"
n=$(magnetctl probe list | grep -c -E '^ *[0-9]+ +(udp|tcp)-(send|recv)\.')
magnetctl probe list | grep -E '(udp|tcp)-(send|recv)\.' | head -40
check "28 packet probes listed ($n)" [ "$n" -eq 28 ]
check_fails "a set twice is refused" magnetctl probe add-set udp-send
check "and the first is intact" sh -c '[ $(magnetctl probe list | grep -c "udp-send\.") -eq 7 ]'
check_fails "an unknown set is refused" magnetctl probe add-set nosuch
magnet-read -N -q 2>/dev/null

# capture NAME FILTER -- TRAFFIC...: tcpdump on va (in A) and magnet-read
# (trace file, pcapng and live text) around the traffic.
capture() {
	name=$1; filter=$2; shift 2
	inA tcpdump -Z root -i va -n -U -w /tmp/$name-tcpdump.pcap $filter \
		2> /tmp/$name-tcpdump.err &
	td=$!
	magnet-read -n --trace /tmp/$name.mtr --print -w /tmp/$name.pcapng \
		$filter > /tmp/$name-live.txt 2> /tmp/$name-read.err &
	mr=$!
	# tcpdump captures once it says it listens (late on a slow kernel)
	i=0
	while [ $i -lt 200 ] && ! grep -q 'listening on' /tmp/$name-tcpdump.err; do
		sleep 0.1
		i=$((i + 1))
	done
	sleep 1
	"$@"
	sleep 1
	# (nsenter may stay in front of tcpdump: signal it by name)
	killall -INT tcpdump
	interrupt $mr
	wait $td $mr
	cat /tmp/$name-read.err
	artifact /tmp/$name.mtr
	artifact /tmp/$name.pcapng
	artifact /tmp/$name-tcpdump.pcap
	artifact /tmp/$name-live.txt
}

udp_transfer() {
	inB magnet-test udp-recv 10.9.0.2 5001 50 > /tmp/udp-recv.out &
	rx=$!
	sleep 0.3
	inA magnet-test udp-send 10.9.0.2 5001 50 1000 4242
	wait $rx
}
capture udp "udp port 5001" udp_transfer
check "udp: all 50 datagrams received" grep -q '^received 50 ' /tmp/udp-recv.out
check "udp: magnet-read read without loss" grep -q ' 0 lost$' /tmp/udp-read.err
n=$(grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP' /tmp/udp-live.txt)
check "udp: 50 packet lines ($n)" [ "$n" -eq 50 ]
magnet-read -r /tmp/udp.mtr -n udp port 5001 > /tmp/udp-replay.txt 2>/dev/null
check "udp: -r of the trace file reproduces the live output" cmp /tmp/udp-live.txt /tmp/udp-replay.txt
magnet-read -r /tmp/udp.pcapng -n udp port 5001 > /tmp/udp-replay-ng.txt 2>/dev/null
check "udp: -r of the pcapng file reproduces it too (the journeys from the comments)" \
	cmp /tmp/udp-live.txt /tmp/udp-replay-ng.txt

# read_during NAME TRANSFER ARGS...: magnet-read ARGS around TRANSFER,
# its output in /tmp/NAME.txt, its messages in /tmp/NAME.err.
read_during() {
	name=$1 transfer=$2
	shift 2
	magnet-read "$@" > /tmp/$name.txt 2> /tmp/$name.err &
	mr=$!
	sleep 1
	$transfer
	sleep 1
	interrupt $mr
	wait $mr
	cat /tmp/$name.err
}

# --trace alone saves without assembling: the same transfer again, and
# the packets come out of the file as they came out live.
read_during udp-save udp_transfer --trace /tmp/udp-save.mtr
check "udp, --trace alone: counts records, says nothing of packets" \
	sh -c "! grep -q 'packets captured' /tmp/udp-save.err && grep -q '^magnet-read: [1-9][0-9]* records, 0 lost$' /tmp/udp-save.err"
magnet-read -r /tmp/udp-save.mtr -n udp port 5001 > /tmp/udp-save.txt 2> /tmp/udp-save-r.err
n=$(grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP' /tmp/udp-save.txt)
check "udp, --trace alone: -r assembles the 50 packets ($n)" [ "$n" -eq 50 ]
check "udp, --trace alone: each with the journey of the live capture" \
	sh -c "[ \$(grep -c '^  ' /tmp/udp-save.txt) -eq \$(grep -c '^  ' /tmp/udp-live.txt) ]"
saved=$(sed -n 's/^magnet-read: \([0-9]*\) records.*/\1/p' /tmp/udp-save.err)
check "udp, --trace alone: the file holds every record counted" \
	grep -q "^magnet-read: $saved records, 0 lost$" /tmp/udp-save-r.err

# SIGINT ends a capture with what was logged until then: a reader that
# its watermarks never woke still saves the whole transfer.
read_during udp-int udp_transfer --trace /tmp/udp-int.mtr --size-wm 1048576 --timeout 60000
magnet-read -r /tmp/udp-int.mtr -n udp port 5001 > /tmp/udp-int.txt 2> /dev/null
n=$(grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP' /tmp/udp-int.txt)
check "udp, SIGINT before any wake-up: the 50 packets saved ($n)" [ "$n" -eq 50 ]

# --no-map: the same transfer copied out with read() instead of read in
# place: the same packets, with the same journeys.
read_during udp-nomap udp_transfer -n --no-map udp port 5001
n=$(grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP' /tmp/udp-nomap.txt)
check "udp, --no-map: 50 packet lines ($n)" [ "$n" -eq 50 ]
check "udp, --no-map: each with the journey of the capture in place" \
	sh -c "[ \$(grep -c '^  ' /tmp/udp-nomap.txt) -eq \$(grep -c '^  ' /tmp/udp-live.txt) ]"

# The CPUs' records put back in order, however late the reader: the
# receiver on CPU 0, the sender (and the receive path, in its softirq) on
# CPU 1, 50 datagrams sent over about half a second, and magnet-read woken
# only once it is over. It reads CPU 0's ring first (the application's
# records), then CPU 1's: each record is held until every ring has been
# read past it, so every packet still has its whole journey, the
# application's copy last.
spread_transfer() {
	inB taskset 1 magnet-test udp-recv 10.9.0.2 5001 50 > /tmp/udp-recv.out &
	rx=$!
	sleep 0.3
	for i in 1 2 3 4 5 6 7 8 9 10; do
		inA taskset 2 magnet-test udp-send 10.9.0.2 5001 5 1000 4242 > /dev/null
		sleep 0.05
	done
	wait $rx
}
magnet-read -n --size-wm 1048576 --timeout 4000 udp port 5001 \
	> /tmp/udp-late.txt 2> /tmp/udp-late.err &
mr=$!
sleep 1
spread_transfer
sleep 5
interrupt $mr
wait $mr
cat /tmp/udp-late.err
check "udp, read late: all 50 datagrams received" grep -q '^received 50 ' /tmp/udp-recv.out
n=$(grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP' /tmp/udp-late.txt)
check "udp, read late: 50 packet lines ($n)" [ "$n" -eq 50 ]
check "udp, read late: each with the journey of the capture read at once" \
	sh -c "[ \$(grep -c '^  ' /tmp/udp-late.txt) -eq \$(grep -c '^  ' /tmp/udp-live.txt) ]"
[ "$(grep -c '^  ' /tmp/udp-late.txt)" -eq "$(grep -c '^  ' /tmp/udp-live.txt)" ] ||
	artifact /tmp/udp-late.txt udp-late.txt

# The timeline (--perfetto), live: checked on the host (packets.host).
read_during udp-tl udp_transfer --perfetto /tmp/udp-timeline.json udp port 5001
artifact /tmp/udp-timeline.json

# Rotation, live, as tcpdump's: -C by size (with -W, round and round,
# -z run on each file) and -G by time, every packet in one of the files.
mkdir -p /tmp/rot
read_during udp-rot-c udp_transfer -w /tmp/rot/c.pcapng -C 16k udp port 5001
n=0 files=0
for f in /tmp/rot/c.pcapng*; do
	n=$((n + $(tcpdump -Z root -r "$f" -n 2> /dev/null | grep -c 'IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP')))
	files=$((files + 1))
done
check "udp, -C 16k: the 100 packets (50 out of va, 50 in at vb) in $files files ($n)" \
	sh -c "[ $n -eq 100 ] && [ $files -ge 5 ] && [ -e /tmp/rot/c.pcapng ] && [ -e /tmp/rot/c.pcapng1 ]"
rm -f /tmp/rot/*
read_during udp-rot-w udp_transfer -w /tmp/rot/w.pcapng -C 16k -W 2 -z gzip udp port 5001
check "udp, -C 16k -W 2 -z gzip: two files, each gzipped once written" \
	sh -c "[ \"\$(cd /tmp/rot && ls | tr '\n' ' ')\" = 'w.pcapng0 w.pcapng0.gz w.pcapng1 w.pcapng1.gz ' ] && gzip -t /tmp/rot/*.gz"
ls /tmp/rot
rm -f /tmp/rot/*
slow_transfer() {
	inB magnet-test udp-recv 10.9.0.2 5001 6 > /dev/null &
	rx=$!
	sleep 0.3
	for i in 1 2 3; do
		inA magnet-test udp-send 10.9.0.2 5001 2 100 4242 > /dev/null
		sleep 1.2
	done
	wait $rx
}
read_during udp-rot-g slow_transfer -w /tmp/rot/g-%s.pcapng -G 1 -i va udp port 5001
n=0 files=0
for f in /tmp/rot/g-*.pcapng; do
	n=$((n + $(tcpdump -Z root -r "$f" -n 2> /dev/null | grep -c 'UDP')))
	files=$((files + 1))
done
check "udp, -G 1 -i va: the 6 packets in $files files, one per second ($n)" \
	sh -c "[ $n -eq 6 ] && [ $files -ge 3 ]"
rm -rf /tmp/rot
read_during udp-rot-bad udp_transfer -w /tmp/no/such/dir/x.pcapng -C 1
check "udp, a rotation target that cannot be written: status 1, says why" \
	grep -q 'x.pcapng: No such file or directory' /tmp/udp-rot-bad.err

tcp_transfer() {
	inB magnet-test tcp-recv 10.9.0.2 5002 > /tmp/tcp-recv.out &
	rx=$!
	sleep 0.3
	inA magnet-test tcp-send 10.9.0.2 5002 30 200
	wait $rx
}
capture tcp "tcp port 5002" tcp_transfer
check "tcp: all 6000 bytes received" grep -q '^received 6000$' /tmp/tcp-recv.out
check "tcp: magnet-read read without loss" grep -q ' 0 lost$' /tmp/tcp-read.err
magnet-read -r /tmp/tcp.mtr -n tcp port 5002 > /tmp/tcp-replay.txt 2>/dev/null
check "tcp: -r reproduces the live output" cmp /tmp/tcp-live.txt /tmp/tcp-replay.txt

# Loopback, IPv4 and IPv6: one process sends and receives.
loopback() {
	magnet-test udp 127.0.0.1 5003 20 4343 &&
	magnet-test udp ::1 5004 20 4444
}
magnet-read -n --trace /tmp/lo.mtr --print udp > /tmp/lo-live.txt 2> /tmp/lo-read.err &
mr=$!
sleep 1
check "loopback: 20 + 20 datagrams" loopback
sleep 1
interrupt $mr
wait $mr
artifact /tmp/lo.mtr
n=$(grep -c 'IP 127.0.0.1.4343 > 127.0.0.1.5003: UDP' /tmp/lo-live.txt)
check "loopback: 20 IPv4 packets ($n)" [ "$n" -eq 20 ]
n=$(grep -c 'IP6 ::1.4444 > ::1.5004: UDP' /tmp/lo-live.txt)
check "loopback: 20 IPv6 packets ($n)" [ "$n" -eq 20 ]

# --- user errors -------------------------------------------------------------

magnet-read -n 'port' > /dev/null 2> /tmp/err.txt
check "bad expression: exit 1, as tcpdump" [ $? -eq 1 ]
check "bad expression: one line, tcpdump's words" \
	grep -qx "magnet-read: can't parse filter expression: syntax error" /tmp/err.txt
magnet-read -n > /dev/null 2>&1 &
first=$!
sleep 0.5
magnet-read -N > /dev/null 2> /tmp/err.txt
check "busy buffer: non-zero exit" [ $? -ne 0 ]
check "busy buffer: says so" grep -q 'another reader' /tmp/err.txt
interrupt $first
wait $first
magnet-read -N -i nosuch0 > /dev/null 2> /tmp/err.txt
check "-i of no device: status 1, says so" sh -c \
	"[ $? -eq 1 ] && grep -q 'nosuch0: no such device' /tmp/err.txt"
magnet-read -N -q -i va > /dev/null 2> /tmp/err.txt
check "-i of a device of another namespace (va, in A): taken" [ $? -eq 0 ]
magnet-read -D > /tmp/devs.txt
cat /tmp/devs.txt
check "-D lists va, in A's namespace, with its index and flags" \
	grep -qE "^[0-9]+\.va \(ifindex [0-9]+, netns of pid $A: sleep\) \[Up, Running\]$" /tmp/devs.txt
check "... and this namespace's lo, with no namespace named" \
	grep -qE '^[0-9]+\.lo \(ifindex 1\) \[Up, Running, Loopback\]$' /tmp/devs.txt
# (the one up and not loopback: a kernel with sit built in lists sit0
# there too, down)
name=$(sed -n "s/^[0-9]*\.\([^ ]*\) (ifindex [0-9]*, netns of pid $A: sleep) \[Up, Running\]$/\1/p" \
	/tmp/devs.txt)
magnet-read -N -q -i "$name" > /dev/null 2> /tmp/err.txt
check "... and -i takes the name it printed ($name)" [ $? -eq 0 ]
magnet-read -r /nonexistent > /dev/null 2> /tmp/err.txt
check "unreadable file: non-zero exit" [ $? -ne 0 ]
check "unreadable file: one line" [ "$(wc -l < /tmp/err.txt)" -eq 1 ]

check "del-set removes every layer" magnetctl probe del-set udp-send,udp-recv,tcp-send,tcp-recv
n=$(magnetctl probe list | grep -c -E '(udp|tcp)-(send|recv)\.')
check "no packet probe left ($n)" [ "$n" -eq 0 ]

# magnet-read -P installs sets for one capture and removes them after.
magnet-read -n -P udp-send -c 5 udp port 5005 > /tmp/p.txt 2> /tmp/p.err &
mr=$!
# (installing the set takes seconds on a debug kernel: wait for it)
for i in $(seq 300); do
	magnetctl probe list 2>/dev/null | grep -q 'udp-send.dev-xmit' && break
	sleep 0.1
done
sleep 0.5
magnet-test udp 127.0.0.1 5005 10 > /dev/null
wait $mr
check "-P: 5 packets captured" [ "$(grep -c 'IP 127.0.0.1' /tmp/p.txt)" -eq 5 ]
# (what magnet-read showed, when it was not that)
[ "$(grep -c 'IP 127.0.0.1' /tmp/p.txt)" -eq 5 ] ||
	{ artifact /tmp/p.txt capture-P.txt; artifact /tmp/p.err capture-P.err; }
check "-P: the probes are gone afterwards" \
	sh -c '! magnetctl probe list | grep -q udp-send'

kill $A $B
unload_all
check "module unloads" sh -c '! lsmod | grep -q "^magnet "'
summary

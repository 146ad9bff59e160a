# Per-call accounting: the accounting device and libmagnet's calls, as
# an application uses them (tests/bin/acct-test.c): arming the next call,
# the next n, from start to stop, tokens that sum; what a call reports
# (blocked time on a pipe and a sleep, a UDP send split by subsystem, a
# buffered write's dirtied bytes and an fsync's I/O wait, the CPU time of
# every call against the thread's schedstat, an interrupt storm shown as
# interrupt time); and bad input (garbage control words, the results
# mapped writable, a handle after fork or from another thread, thousands
# of threads, the handle limit); the example program, magnet-callcost.
# rig-programs: mke2fs tc
# rig-kmods: null_blk ext4 crc32c_generic sch_netem
. /magnet/lib.sh

unload_all
load_magnet
[ -w /sys/kernel/debug/kmemleak ] && echo clear > /sys/kernel/debug/kmemleak

check "the device, for every user" sh -c '[ -c /dev/magnet-acct ] &&
	[ "$(stat -c %a /dev/magnet-acct)" = 666 ]'

# A block-backed ext4 for the write tests, where the kernel has null_blk.
if modprobe null_blk nr_devices=1 gb=1 memory_backed=1 2> /dev/null; then
	check "ext4 on null_blk" sh -c "modprobe crc32c_generic && modprobe ext4 &&
		/magnet/bin/mke2fs -q -t ext4 -N 1024 -E lazy_itable_init=0,lazy_journal_init=0 /dev/nullb0 &&
		mkdir -p /mnt/acct && mount -t ext4 /dev/nullb0 /mnt/acct"
	export ACCT_FILE=/mnt/acct/file
fi

# lo's receive steered to CPU 0 (RPS), for the storm
rps=/sys/class/net/lo/queues/rx-0/rps_cpus
ip link set lo up 2> /dev/null
# (not on the debug kernels, fault injection's home: there the flood
# keeps CPU 0 in softirqs long enough for the soft-lockup watchdog)
if [ -d /sys/kernel/debug/fail_page_alloc ]; then
	echo "# the storm is left out on a debug kernel"
elif [ -w $rps ] && [ "$(cat /sys/devices/system/cpu/online)" != 0 ]; then
	echo 1 > $rps && export ACCT_STORM=1
fi

# A dummy device behind netem, which holds each packet 100 ms.
[ -d /sys/module/dummy ] || insmod $M/kmods/dummy.ko
if modprobe sch_netem 2> /dev/null; then
	if ip link add acct0 type dummy && ip addr add 10.77.0.1/24 dev acct0 &&
	   ip link set acct0 up &&
	   /magnet/bin/tc qdisc add dev acct0 root netem delay 100ms; then
		pass "a dummy device behind a 100 ms netem qdisc"
		export ACCT_DELAYED_TO=10.77.0.2
	else
		fail "a dummy device behind a 100 ms netem qdisc" "set-up failed"
	fi
else
	echo "ok - a dummy device behind a 100 ms netem qdisc # SKIP no sch_netem"
fi

# The hooks go in at the first handle and out after the last (acct.c):
# a handle held by this shell keeps them in from here to the end, put in
# and taken out with CPU 1 offline (docs/testing.md: TCG and patching).
other_cpus off
exec 3<> /dev/magnet-acct
other_cpus on

run_c acct-test
[ -n "${ACCT_STORM:-}" ] && echo 0 > $rps

# The example program, as its user runs it
check "magnet-callcost: three writes and an fsync, each with its cost" \
	sh -c 'magnet-callcost -f /tmp/cc.out > /tmp/cc.txt && cat /tmp/cc.txt &&
		[ "$(grep -c "^write: .* ns wall, .* on a CPU (.*pagecache" /tmp/cc.txt)" = 3 ] &&
		grep -q "^fsync: " /tmp/cc.txt'
check "magnet-callcost -u: a datagram's bytes at the socket layer" \
	sh -c 'magnet-callcost -u 9 -n 1 -s 1000 | grep "^sendto: .*(udp [0-9]*).*socket 1000 B out"'
check_fails "magnet-callcost -n 0: refused" magnet-callcost -n 0

# The limit, lowered: the handle past it is refused; back up, all work.
echo 8 > /sys/module/magnet/parameters/max_acct_threads
run_c acct-test handles_beyond_the_limit
echo 4096 > /sys/module/magnet/parameters/max_acct_threads

# Nothing left behind by handles that armed and never read, closed with
# parts pending, or went with their threads (kmemleak, on the debug
# kernels: an object unreferenced for 5 s at a scan is reported).
KML=/sys/kernel/debug/kmemleak
if [ -w $KML ]; then
	sleep 6
	echo scan > $KML; sleep 1; echo scan > $KML
	check "kmemleak finds nothing of per-call accounting's" \
		sh -c "! grep -q 'acct_\|magnet' $KML || { cat $KML; false; }"
fi

# Every handle closed with its process: the module is free to go.
check_fails "does not unload while a handle is open" rmmod magnet
other_cpus off
exec 3>&-
check "unloads with no handle open" rmmod magnet
other_cpus on
check "loads again" load_magnet
[ -n "${ACCT_DELAYED_TO:-}" ] && ip link del acct0
if [ -n "${ACCT_FILE:-}" ]; then
	umount /mnt/acct
	rmmod ext4 null_blk 2> /dev/null
fi
summary

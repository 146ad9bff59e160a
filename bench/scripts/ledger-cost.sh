# Benchmark 9 of `make bench`: ledger-cost. What the ledger adds while it
# is on: getppid() on CPU 0 (a system call loop: each call crosses the
# kernel and back, no boundary of the ledger's on the way unless the
# scheduler or an interrupt comes), and a stream of UDP datagrams of 64
# bytes sent over loopback to a socket that holds them (each sendto()
# runs the NET_RX softirq for its datagram on the way out, in which the
# ledger times the packet and finds its socket's cgroup), each with the
# ledger off and on. Each run (the fastest of five chunks of its calls)
# prints
#	BENCH-RECORD ledger-cost CASE RUN NS_PER_CALL
# with CASE calls-off, calls-on, udp-off or udp-on. (Not "ledger":
# tests/rig/vm-run finds tests/suites/ledger.sh, the test suite, first.)
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
unload_all
load_magnet
# (on and off repatch every CPU's hottest paths: with any other vCPU
# offline, which TCG needs; see tests/suites/ledger.sh)
CPU1=/sys/devices/system/cpu/cpu1/online
ledger() {
	[ -e $CPU1 ] && echo 0 > $CPU1
	magnetctl account "$@"
	rc=$?
	[ -e $CPU1 ] && echo 1 > $CPU1
	return $rc
}

# chunk CASE: one chunk of N / 5 calls on CPU 0, ns per call
chunk() {
	case $1 in
	calls-*) taskset 1 magnet-test syscalls $((N / 5)) ;;
	udp-*) taskset 1 magnet-test udp-calls 127.0.0.1 7001 $((N / 5)) 64 ;;
	esac | awk '{ print $6 }'
}
# run CASE: the warm-up and R timed runs, each the fastest of 5 chunks
run() {
	i=0
	while [ $i -le $R ]; do
		v=$(k=0; while [ $k -lt 5 ]; do chunk $1; k=$((k + 1)); done |
			sort -n | head -1)
		[ $i -gt 0 ] && echo "BENCH-RECORD ledger-cost $1 $i $v"
		i=$((i + 1))
	done
}

# the receiving socket: in a cgroup of its own, holding what it gets
# (once its 64 MiB are full the rest is dropped at the socket, after the
# ledger has charged it)
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
mkdir -p $CG/bench-rx
sh -c "echo \$\$ > $CG/bench-rx/cgroup.procs
	exec env HOLD=1 magnet-test udp-recv 127.0.0.1 7001 1000000000" > /tmp/bench-rx.out 2>&1 &
rx=$!
check "the receiving socket holds its datagrams" wait_for 20 grep -q holding /tmp/bench-rx.out

run calls-off
run udp-off
check "the ledger on" ledger on
run calls-on
run udp-on
check "... it charged NET_RX time to the receiver's cgroup" \
	sh -c "magnetctl account | awk '\$1 == \"/bench-rx\" && \$3 == \"net_rx\"' | grep -q ."
magnetctl account top 12 | sed 's/^/BENCH: /'
check "the ledger off" ledger off
kill $rx
wait $rx 2> /dev/null
rmdir $CG/bench-rx
check "magnet unloads" rmmod magnet
summary

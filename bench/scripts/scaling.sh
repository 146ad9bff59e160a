# Benchmark 4 of `make bench`: scaling. The cost added to getppid() by
# magnet's kprobe and by ftrace's kprobe event with one CPU calling it and
# with both at once; and magnet with N probes on the call (N events per
# call) logging into one buffer against N buffers. Buffers in overwrite
# mode and no reader: the producer side only. Each run prints
#	BENCH-RECORD scaling CASE RUN NS_PER_CALL
# (with both CPUs: the mean of the two loops).
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
SYM=__x64_sys_getppid
bench_tracefs
unload_all
load_magnet buffers=default:4M:overwrite

# run CASE CPUS: the warm-up and R timed runs, on CPU 0 or on both.
run() {
	i=0
	while [ $i -le $R ]; do
		if [ "$2" = 1 ]; then
			v=$(taskset 1 magnet-test syscalls $N | awk '{ print $6 }')
		else
			taskset 1 magnet-test syscalls $N > /tmp/s0 &
			p0=$!
			taskset 2 magnet-test syscalls $N > /tmp/s1
			wait $p0
			v=$(cat /tmp/s0 /tmp/s1 | awk '{ s += $6 } END { printf "%.1f", s / NR }')
		fi
		[ $i -gt 0 ] && echo "BENCH-RECORD scaling $1 $i $v"
		i=$((i + 1))
	done
}

run none-1cpu 1
run none-2cpu 2
magnetctl probe add kp kprobe $SYM > /dev/null
run magnet-1cpu 1
run magnet-2cpu 2
# Where growth with both CPUs comes from: the event dropped by its filter
# (magnet's dispatch and gate, no record), an empty kprobe (the kernel's
# dispatch alone) and an empty ftrace_ops callback that reads the clock
# magnet's records take.
magnetctl filter add kp tgid 1 > /dev/null
run magnet-filtered-1cpu 1
run magnet-filtered-2cpu 2
magnetctl filter del "$(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p')"
magnetctl probe del kp
insmod $M/magnet_bench.ko
echo $SYM > $DBG/magnet_bench/empty_kprobe
run kprobe-empty-1cpu 1
run kprobe-empty-2cpu 2
echo - > $DBG/magnet_bench/empty_kprobe
echo "$SYM clocked" > $DBG/magnet_bench/empty_ftrace
run ftrace-ops-clocked-1cpu 1
run ftrace-ops-clocked-2cpu 2
echo - > $DBG/magnet_bench/empty_ftrace
rmmod magnet_bench

echo "p:bench/getppid $SYM" > $T/kprobe_events
echo 1 > $T/events/bench/getppid/enable
run ftrace-1cpu 1
run ftrace-2cpu 2
echo 0 > $T/events/bench/getppid/enable
echo > $T/kprobe_events

# N probes on the call: into one buffer, then into N buffers.
for n in 4 16; do
	i=1
	while [ $i -le $n ]; do
		magnetctl probe add p$i kprobe $SYM > /dev/null
		i=$((i + 1))
	done
	run magnet-$n-probes-1-buffer 1
	i=1
	while [ $i -le $n ]; do
		magnetctl probe del p$i
		i=$((i + 1))
	done
	bench_probes $n $SYM 256K
	run magnet-$n-probes-$n-buffers 1
	bench_probes_del $n
done

unload_all
check "the scaling benchmark ran" true
summary

# Benchmark 2 of `make bench`: kernel-to-user throughput. A kprobe on
# getppid() logs records of a given size while magnet-test calls it on
# CPU 0 at a given rate (0: as fast as it can); the reader drains on CPU 1
# into /dev/null (magnet-read --trace, which only saves) or, for ftrace, into a
# tmpfs file (trace-cmd record: splice from trace_pipe_raw; its events
# are counted in the file afterwards). Each run prints
#	BENCH-TP TOOL CASE RECORD_BYTES RATE WATERMARKS CALLS SECONDS READ LOST READER_TICKS RUN
# (SECONDS: the producer's time; READER_TICKS: CPU 1's busy time in 1/100 s
# over the run and a 1 s drain, whatever processes the reader has).
# magnet-read drains at two watermark settings: bulk (wake at 256 KiB or
# every 100 ms) and event (wake on every record), reading in place through
# the mapping; and bulk-read: bulk, copying with read() (--no-map), the
# way it read before the mapping. Every setting runs
# BENCH_TP_RUNS times (default 3), round-robin.
. /magnet/lib.sh

SYM=__x64_sys_getppid
HDR=40		# magnet's record header
bench_tracefs
unload_all
# Drop mode: what the reader cannot take is lost, and counted.
load_magnet buffers=default:4M
insmod $M/magnet_bench.ko

calls() {	# RATE: calls for about 2 s (1 000 000 unpaced)
	if [ "$1" = 0 ]; then echo 1000000; else echo $(($1 * 2)); fi
}
R=${BENCH_TP_RUNS:-3}
# CPU 1's busy time (user, nice, system, irq, softirq, steal), 1/100 s.
ticks() { awk '$1 == "cpu1" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
# produce RATE: the producer's seconds for calls(RATE) calls.
produce() {
	n=$(calls $1)
	taskset 1 magnet-test syscalls $n $1 | awk -v n=$n '{ printf "%.4f", $6 * n / 1e9 }'
}

# magnet_run CASE BYTES RATE WM: one run through magnet-read.
magnet_run() {
	case $4 in
	bulk) wm="--size-wm 262144 --timeout 100" ;;
	bulk-read) wm="--size-wm 262144 --timeout 100 --no-map" ;;
	event) wm="--size-wm 0 --count-wm 1 --timeout 100" ;;
	esac
	taskset 2 magnet-read -b default --trace /dev/null $wm 2> /tmp/tp.err &
	rd=$!
	sleep 1
	t0=$(ticks)
	secs=$(produce $3)
	sleep 1		# the reader drains what is left
	t1=$(ticks)
	kill -INT $rd
	wait $rd
	set -- "$@" $(sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) lost.*/\1 \2/p' /tmp/tp.err)
	echo "BENCH-TP magnet $1 $2 $3 $4 $(calls $3) $secs ${5:-0} ${6:-0} $((t1 - t0)) $RUN"
}

# ftrace_run RATE: the same kprobe as an ftrace kprobe event, recorded
# by trace-cmd with as large a buffer and nothing overwritten.
ftrace_run() {
	echo 0 > $T/options/overwrite
	echo "p:bench/getppid $SYM" > $T/kprobe_events
	rm -f /tmp/tp.dat
	taskset 2 trace-cmd record -q -O norecord-cmd -b 4096 -e bench:getppid \
		-o /tmp/tp.dat > /dev/null 2> /tmp/tp.err &
	rd=$!
	wait_for 60 grep -q '^1$' $T/events/bench/getppid/enable
	sleep 1
	t0=$(ticks)
	secs=$(produce $1)
	sleep 1
	t1=$(ticks)
	# What the ring refused, counted before trace-cmd resets it.
	lost=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } /^dropped events:/ { n += $3 } END { print n + 0 }')
	kill -INT $rd
	wait $rd
	read=$(trace-cmd report /tmp/tp.dat 2> /dev/null | grep -c 'getppid:')
	rm -f /tmp/tp.dat
	echo > $T/kprobe_events
	# ftrace's kprobe event: 8-byte ring header, 8 of common fields, 8 of ip.
	echo "BENCH-TP ftrace kprobe 24 $1 bulk $(calls $1) $secs $read $lost $((t1 - t0)) $RUN"
}

run_all() {
	for size in 32 256 1024 4096; do
		echo "$SYM $size" > $DBG/magnet_bench/log_kprobe
		magnetctl probe enable bench_log
		for rate in 100000 400000 0; do
			for wm in bulk bulk-read event; do
				magnet_run log-$size $((HDR + size)) $rate $wm
			done
		done
		echo - > $DBG/magnet_bench/log_kprobe
	done

	# Like for like with ftrace: the same kprobe, magnet's generic probe
	# (a 40-byte record) and ftrace's kprobe event, each read in bulk.
	magnetctl probe add kp kprobe $SYM > /dev/null
	for rate in 100000 400000 0; do
		magnet_run kprobe $HDR $rate bulk
	done
	magnetctl probe del kp
	if command -v trace-cmd > /dev/null; then
		for rate in 100000 400000 0; do
			ftrace_run $rate
		done
	fi
}

RUN=1
while [ $RUN -le $R ]; do
	run_all
	RUN=$((RUN + 1))
done
echo 1 > $T/options/overwrite

rmmod magnet_bench
unload_all
check "the throughput benchmark ran" true
summary

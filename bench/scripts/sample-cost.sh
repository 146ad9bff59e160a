# Benchmark 17 of `make bench`: sample-cost. What sampling every CPU at
# 1 kHz costs the work it samples, magnet's sampler beside Linux's own
# perf, in one boot: the burner (tests/bin/magnet-test burn, CPU-bound, no
# system calls) pinned to CPU 0, and the paper's UDP stream (section 3's),
# each with nothing sampling (none), with magnet-read -P cpu --trace (the
# cpu.sample probe at its default, 1 ms and stacks of 32 frames, its
# records written to a file: magnet), and with perf record -F 1000 -g -a
# (cpu-clock, the hrtimer event there is under TCG, which has no PMU; call
# chains by frame pointers; perf.data written: perf). Both write their
# samples raw, symbols resolved later (perf report, magnet-read -r
# --profile). Each run prints
#	BENCH-RECORD sample-cost CASE RUN VALUE
# with CASE burn-TOOL (the burner's time, ns) or stream-TOOL (bytes
# received in BENCH_STREAM_SECS), and TOOL-ticks cases: the samples each
# wrote during its burn, to show both sampled at the same rate. The cases
# take turns within each run. Under QEMU's instruction counter (bench/run
# with BENCH_CLOCK=icount: one vCPU, its clock a count of instructions)
# it is named sample-cost-insns, and the stream's receiver shares CPU 0.
# rig-programs: perf
. /magnet/lib.sh

R=${BENCH_RUNS:-5}
S=${BENCH_STREAM_SECS:-3}
UNITS=${BENCH_SAMPLE_UNITS:-1200}
NAME=sample-cost
RX_CPU=2
if [ "${BENCH_CLOCK:-}" = icount ]; then
	NAME=sample-cost-insns
	RX_CPU=1
fi
unload_all
load_magnet
if ! command -v perf > /dev/null; then
	echo "BENCH-UNAVAILABLE perf not installed (linux-perf)"
fi

# start TOOL: sampling every CPU until stop; its pid in $sp
start() {
	case $1 in
	magnet)
		rm -f /tmp/smp.mtr
		magnet-read -P cpu --trace /tmp/smp.mtr > /dev/null 2> /tmp/smp.err &
		sp=$!
		wait_for 30 grep -q "^magnet-read: capturing" /tmp/smp.err
		;;
	perf)
		rm -f /tmp/perf.data
		perf record -e cpu-clock -F 1000 -g -a -o /tmp/perf.data \
			> /dev/null 2> /tmp/smp.err &
		sp=$!
		# (its events open: perf_event files among its descriptors)
		wait_for 30 sh -c "ls -l /proc/$sp/fd 2> /dev/null | grep -q perf_event"
		;;
	*) sp= ;;
	esac
}
# stop TOOL: it stops, done writing; the samples it wrote in $ticks
# (not in a subshell: its wait would not wait)
stop() {
	ticks=0
	[ -n "$sp" ] || return 0
	kill -INT $sp
	wait $sp 2> /dev/null
	case $1 in
	magnet)
		ticks=$(sed -n 's/^magnet-read: \([0-9]*\) records, .*/\1/p' /tmp/smp.err) ;;
	perf)
		ticks=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/smp.err | tail -n 1) ;;
	esac
}

TOOLS=none
command -v perf > /dev/null && TOOLS="$TOOLS perf"
TOOLS="$TOOLS magnet"

# --- the burner ------------------------------------------------------------------
# (what the boot leaves running settles first)
sleep 5
taskset 1 magnet-test burn $UNITS > /dev/null
i=1
while [ $i -le $R ]; do
	for tool in $TOOLS; do
		start $tool
		v=$(taskset 1 magnet-test burn $UNITS)
		stop $tool
		echo "BENCH-RECORD $NAME burn-$tool $i $(awk -v v=$v 'BEGIN { printf "%.0f\n", v * 1e9 }')"
		[ $tool = none ] || echo "BENCH-RECORD $NAME $tool-ticks $i ${ticks:-0}"
	done
	i=$((i + 1))
done
check "magnet's sampler wrote samples" [ -s /tmp/smp.mtr ]

# --- the paper's UDP stream ------------------------------------------------------------
# iperf, unpaced, 8000-byte datagrams, namespace A to B over a veth pair of
# MTU 9000, the sender on CPU 0, the receiver on CPU 1 (CPU 0 under
# icount), for S s: the bytes B received.
netns_pair && inA $IP link set va mtu 9000 && inB $IP link set vb mtu 9000
check "two namespaces joined by a veth pair, MTU 9000" [ $? -eq 0 ]
sysctl -qw net.core.rmem_max=8388608
stream() {	# stream TOOL RUN
	rm -f /tmp/rx1.csv
	inB taskset $RX_CPU iperf -s -u -p 5001 -w 4M -y C > /tmp/rx1.csv 2> /dev/null &
	srv=$!
	sleep 1
	start $1
	inA taskset 1 iperf -c 10.9.0.2 -u -p 5001 -b 10G -l 8000 -t $S > /dev/null 2>&1
	stop $1
	wait_for 30 test -s /tmp/rx1.csv
	killall iperf 2> /dev/null
	wait $srv
	echo "BENCH-RECORD $NAME stream-$1 $2 $(awk -F, 'NR == 1 { print $8 + 0 }' /tmp/rx1.csv)"
}
stream none 0 > /dev/null
i=1
while [ $i -le $R ]; do
	for tool in $TOOLS; do
		stream $tool $i
	done
	i=$((i + 1))
done
kill $A $B 2> /dev/null
check "magnet unloads" rmmod magnet
summary

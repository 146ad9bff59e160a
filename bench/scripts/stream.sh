# Benchmark 3 of `make bench`: the MAGNET paper's tcpdump experiments. A
# UDP stream (iperf, unpaced, 8000-byte datagrams) goes from namespace A
# to namespace B across a veth pair (MTU 9000, so that every snap length
# of the paper's sweep cuts the packet). The sender and the capturing
# process share CPU 0, as on the paper's single-CPU hosts, so whatever
# capturing costs, in the kernel or in its process, comes out of the
# stream; the receiver runs on CPU 1. Each run prints
#	BENCH-STREAM EXPERIMENT CASE RUN SECS RX_BYTES RX_DGRAMS RX_LOST CAP_TICKS CAPTURED DROPPED RX2_BYTES
# RX_*: what B's iperf received of the stream (bytes, datagrams and the
# datagrams it counted lost); CAP_TICKS: the capturing process's CPU time
# in 1/100 s over the stream and its drain; CAPTURED, DROPPED: records
# read and lost (magnet-read) or packets captured and dropped by the
# kernel (tcpdump); RX2_BYTES: the competing stream's bytes (filter).
# The runs go round-robin over the cases, so that drift in the host hits
# every case alike.
# Under QEMU's instruction counter (bench/run with BENCH_CLOCK=icount: one
# vCPU, its clock a count of instructions; Figure 8 only) the receiver
# shares CPU 0 too, and the experiment is named filter-insns.
. /magnet/lib.sh

R=${BENCH_RUNS:-5}
SECS=${BENCH_STREAM_SECS:-3}
# which experiments, comma-separated (a run of Figure 8 alone takes about
# 45 s, so that it can have many more runs than the whole benchmark)
EXPERIMENTS=,${BENCH_STREAM_EXPERIMENTS:-paper,filter,sampling},
for e in $(echo "$EXPERIMENTS" | tr , ' '); do
	case $e in
	paper|filter|sampling) ;;
	*) fail "BENCH_STREAM_EXPERIMENTS: no experiment '$e' (paper, filter, sampling)"; summary; exit 1 ;;
	esac
done
doing() { case $EXPERIMENTS in *,$1,*) return 0 ;; esac; return 1; }
RX_CPU=2
SUFFIX=
if [ "${BENCH_CLOCK:-}" = icount ]; then	# (bench/run allows Figure 8 only)
	RX_CPU=1
	SUFFIX=-insns
fi
LEN=8000
unload_all
load_magnet buffers=default:4M
insmod $M/magnet_packet.ko
netns_pair
inA $IP link set va mtu 9000
inB $IP link set vb mtu 9000
sysctl -qw net.core.rmem_max=8388608
inB taskset $RX_CPU iperf -s -u -p 5001 -w 4M -y C > /tmp/rx1.csv 2> /dev/null &
inB taskset $RX_CPU iperf -s -u -p 5002 -w 4M -y C > /tmp/rx2.csv 2> /dev/null &
sleep 1

ticks() { awk '{ print $14 + $15 }' /proc/$1/stat 2>/dev/null || echo 0; }
lines() { wc -l < $1; }
grew() { [ "$(lines $1)" -gt "$2" ]; }	# FILE LINES: FILE has more

# sender PORT: an unpaced stream to B:PORT from CPU 0, after a second in
# which its process id (in /tmp/sender-PORT.pid) can go into filter rules.
sender() {
	inA sh -c "echo \$\$ > /tmp/sender-$1.pid; sleep 1; exec taskset 1 iperf -c 10.9.0.2 -u -p $1 -b 10G -l $LEN -t $SECS" \
		> /dev/null 2>&1 &
}

# The capturing process, started before the stream: $CAP is its pid.
LAYERS1=udp-send.dev-xmit
LAYERS2="$LAYERS1 udp-send.udp"
LAYERS4="$LAYERS2 udp-send.ip udp-send.dev-queue"
# magnet_start EVENTS SNAPLEN [SAMPLE]: EVENTS probes per packet along
# the send path, each keeping SNAPLEN bytes of the packet, sampling one
# hit in SAMPLE; magnet-read saves every record to /dev/null.
magnet_start() {
	eval layers=\$LAYERS$1
	for l in $layers; do
		magnetctl probe add "m-${l#udp-send.}" $l snaplen $2 > /dev/null
		[ -n "${3:-}" ] && magnetctl probe set "m-${l#udp-send.}" sample every $3
	done
	taskset 1 magnet-read ${MR_OPTS:-} --trace /dev/null 2> /tmp/cap.err &
	CAP=$!
	sleep 1
}
magnet_expression() {	# EXPRESSION: a packet rule on each probe
	for l in $layers; do
		magnetctl filter add "m-${l#udp-send.}" packet "$@" > /dev/null
	done
}
magnet_filter() {	# TGID: log only what that process sends
	for l in $layers; do
		magnetctl filter add "m-${l#udp-send.}" tgid $1 > /dev/null
	done
}
magnet_stop() {
	kill -INT $CAP
	wait $CAP
	set -- $(sed -n 's/.*: \([0-9]*\) records, \([0-9]*\) lost.*/\1 \2/p' /tmp/cap.err)
	CAPTURED=${1:-0}
	DROPPED=${2:-0}
	for l in $layers; do
		magnetctl probe del "m-${l#udp-send.}" > /dev/null
	done
}
# tcpdump_start SNAPLEN [FILTER]: tcpdump on A's side of the veth pair
# with a 4 MiB buffer (magnet's is 4 MiB per CPU), into /dev/null.
tcpdump_start() {
	rm -f /tmp/cap.err
	inA taskset 1 tcpdump -Z root -i va -n -s $1 -B 4096 -w /dev/null ${2:-} 2> /tmp/cap.err &
	TD=$!
	wait_for 10 grep -q listening /tmp/cap.err
	CAP=$(pidof tcpdump)
}
tcpdump_stop() {
	# (nsenter may stay in front of tcpdump: signal it by name)
	killall -INT tcpdump
	wait $TD
	CAPTURED=$(sed -n 's/^\([0-9]*\) packets captured.*/\1/p' /tmp/cap.err)
	DROPPED=$(sed -n 's/^\([0-9]*\) packets dropped by kernel.*/\1/p' /tmp/cap.err)
}

# measure EXPERIMENT CASE RUN [competing]: the stream (and, with
# "competing", a second one to port 5002 from CPU 0 at the same time)
# while the capturer started before runs; prints the BENCH-STREAM line.
measure() {
	n1=$(lines /tmp/rx1.csv)
	n2=$(lines /tmp/rx2.csv)
	rm -f /tmp/sender-*.pid
	[ "${4:-}" = competing ] && sender 5002
	sender 5001
	wait_for 5 test -s /tmp/sender-5001.pid
	[ -n "$FILTER" ] && magnet_filter "$(cat /tmp/sender-5001.pid)"
	t0=0
	[ -n "$CAP" ] && t0=$(ticks $CAP)
	wait_for $((SECS + 30)) grew /tmp/rx1.csv $n1
	[ "${4:-}" = competing ] && wait_for 30 grew /tmp/rx2.csv $n2
	sleep 1		# the capturer drains
	t1=0
	[ -n "$CAP" ] && t1=$(ticks $CAP)
	# time,src,sport,dst,dport,id,interval,bytes,bits/s,jitter,lost,total,%,ooo
	rx=$(sed -n "$((n1 + 1))p" /tmp/rx1.csv | awk -F, '{ print $8, $12, $11 }')
	rx2=0
	[ "${4:-}" = competing ] && rx2=$(sed -n "$((n2 + 1))p" /tmp/rx2.csv | awk -F, '{ print $8 }')
	RESULT="$1$SUFFIX $2 $3 $SECS ${rx:-0 0 0} $((t1 - t0))"
	COMPETING=$rx2
}
report() {
	echo "BENCH-STREAM $RESULT ${CAPTURED:-0} ${DROPPED:-0} ${COMPETING:-0}"
}

FILTER=
# One run of every case.
run_all() {
	r=$1
	# Figures 5 and 6, Table 3: nothing, magnet with 1, 2 and 4 events per
	# packet (96 bytes of each, and 1 event with 4000), tcpdump at the
	# paper's snap lengths.
	CAP= CAPTURED=0 DROPPED=0
	if doing paper; then
		measure paper none $r; report
		for c in 1:96 2:96 4:96 1:4000; do
			magnet_start ${c%:*} ${c#*:}
			measure paper magnet-${c%:*}-events-snap-${c#*:} $r
			magnet_stop; report
		done
		# The same whole packets, magnet-read woken for 64 KiB at a time
		# (its default when it prints) instead of a quarter of the ring (its
		# default when it only saves, 1 MiB here): what wake-ups cost.
		MR_OPTS="--size-wm 65536"
		magnet_start 1 4000
		measure paper magnet-1-events-snap-4000-wm64k $r
		magnet_stop; report
		MR_OPTS=
		for s in 96 500 1000 2000 4000; do
			tcpdump_start $s
			measure paper tcpdump-snap-$s $r
			tcpdump_stop; report
		done
	fi

	# Figure 8: a second, competing stream from the same CPU. Like for
	# like with tcpdump, one capture point (dev-xmit): magnet logs the
	# monitored sender's packets only (a tgid rule on the probe, or
	# tcpdump's own expression as a packet rule); tcpdump filters by port
	# on the interface, where both streams pass.
	CAP= CAPTURED=0 DROPPED=0
	if doing filter; then
		measure filter none $r competing; report
		magnet_start 1 96
		FILTER=1
		measure filter magnet-thread $r competing
		FILTER=
		magnet_stop; report
		magnet_start 1 96
		magnet_expression udp dst port 5001
		measure filter magnet-expression $r competing
		magnet_stop; report
		magnet_start 1 96
		measure filter magnet-unfiltered $r competing
		magnet_stop; report
		tcpdump_start 96 "udp port 5001"
		measure filter tcpdump-port $r competing
		tcpdump_stop; report
		tcpdump_start 96
		measure filter tcpdump-unfiltered $r competing
		tcpdump_stop; report
	fi

	# Figure 7: sampling, 4 events per packet, one hit in N of each probe.
	doing sampling || return 0
	for n in 1 2 4 16 64; do
		magnet_start 4 96 $n
		measure sampling every-$n $r
		magnet_stop; report
	done
}

check "veth pair at MTU 9000" inA ping -c 1 -W 2 -s 8000 10.9.0.2
r=1
while [ $r -le $R ]; do
	run_all $r
	r=$((r + 1))
done

killall iperf 2> /dev/null
kill $A $B
unload_all
check "the stream benchmark ran" true
summary

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
# (ledger-cost-insns under icount, below)
# with CASE calls-off, calls-on, udp-off or udp-on; then the paper's UDP
# stream, the ledger off and on (stream-off, stream-on: bytes received);
# then 60 s of mixed
# load (below), which prints the part of the CPUs' time that went to no
# activity and the residue, in parts per million, as CASEs
# mixed-unattributed-ppm and mixed-residue-ppm (and mixed-elapsed-ns).
# Under QEMU's instruction counter (bench/run with BENCH_CLOCK=icount: one
# vCPU, its clock a count of instructions) the benchmark is named
# ledger-cost-insns, the stream's receiver shares CPU 0, and the mixed
# load, which measures no cost, is left out.
# (Not "ledger":
# tests/rig/vm-run finds tests/suites/ledger.sh, the test suite, first.)
# rig-programs: mke2fs
# rig-kmods: null_blk ext4 crc32c_generic
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
NAME=ledger-cost
RX_CPU=2
if [ "${BENCH_CLOCK:-}" = icount ]; then
	NAME=ledger-cost-insns
	RX_CPU=1
fi
unload_all
load_magnet
# (on and off with the other CPUs offline: ledger_set, tests/lib.sh)
ledger() { ledger_set "$@"; }

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
		[ $i -gt 0 ] && echo "BENCH-RECORD $NAME $1 $i $v"
		i=$((i + 1))
	done
}

# the receiving socket: in a cgroup of its own, holding what it gets
# (once its 64 MiB are full the rest is dropped at the socket, after the
# ledger has charged it)
check "the loopback device up" ip link set lo up
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
mkdir -p $CG/bench-rx
sh -c "echo \$\$ > $CG/bench-rx/cgroup.procs
	exec env HOLD=1 magnet-test udp-recv 127.0.0.1 7001 1000000000" > /tmp/bench-rx.out 2>&1 &
rx=$!
check "the receiving socket holds its datagrams" wait_for 20 grep -q holding /tmp/bench-rx.out
# (what the boot leaves running settles first: under icount it made the
# first runs of the loop twice as long)
sleep 5

run calls-off
run udp-off
check "the ledger on" ledger on
run calls-on
run udp-on
check "... it charged NET_RX time to the receiver's cgroup" \
	sh -c "magnetctl account | awk '\$1 == \"/bench-rx\" && \$3 == \"net_rx\"' | grep -q ."
magnetctl account top 12 | sed 's/^/BENCH: /'

# --- the paper's UDP stream: what the ledger takes of it -------------------------
# Section 3's stream (iperf, unpaced, 8000-byte datagrams, namespace A to
# B over a veth pair of MTU 9000, the sender on CPU 0, the receiver on
# CPU 1, or CPU 0 under icount) for BENCH_STREAM_SECS, the ledger off and on in turn, R times:
# the bytes B received, as
#	BENCH-RECORD ledger-cost[-insns] stream-off|stream-on RUN BYTES
S=${BENCH_STREAM_SECS:-3}
netns_pair && inA $IP link set va mtu 9000 && inB $IP link set vb mtu 9000
check "two namespaces joined by a veth pair, MTU 9000" [ $? -eq 0 ]
sysctl -qw net.core.rmem_max=8388608
# stream CASE RUN: one stream, its BENCH-RECORD line. The receiver starts
# anew each time: turning the ledger on or off takes CPU 1, its CPU,
# offline, and iperf's server does not survive that.
stream() {
	rm -f /tmp/rx1.csv
	inB taskset $RX_CPU iperf -s -u -p 5001 -w 4M -y C > /tmp/rx1.csv 2> /dev/null &
	srv=$!
	sleep 1
	inA taskset 1 iperf -c 10.9.0.2 -u -p 5001 -b 10G -l 8000 -t $S > /dev/null 2>&1
	wait_for 30 test -s /tmp/rx1.csv
	# (nsenter may stay in front of iperf: by name)
	killall iperf 2> /dev/null
	wait $srv
	# time,src,sport,dst,dport,id,interval,bytes,...
	echo "BENCH-RECORD $NAME $1 $2 $(awk -F, 'NR == 1 { print $8 + 0 }' /tmp/rx1.csv)"
}
stream stream-warm-up 0 > /dev/null
i=1
while [ $i -le $R ]; do
	ledger off 2> /dev/null
	stream stream-off $i
	ledger on
	stream stream-on $i
	i=$((i + 1))
done
check "... the ledger charged the stream's receiver" \
	sh -c "magnetctl account | awk '\$1 == \"/\" && \$2 == \"softirq\" && \$3 == \"net_rx\"' | grep -q ."
kill $A $B 2> /dev/null
if [ "$NAME" = ledger-cost-insns ]; then
	kill $rx
	wait $rx 2> /dev/null
	rmdir $CG/bench-rx
	check "magnet unloads" rmmod magnet
	summary
	exit
fi

# --- 60 s of mixed load: what went to no activity, and the residue ---------------
# A CPU-bound loop, the loopback datagrams, and a writer that dirties and fsyncs
# 16 MiB at a time on ext4 on a null_blk disk, each in a cgroup of its
# own, from a fresh ledger; then the part of all CPUs' time that went to
# no activity but idle (interrupts, softirqs and work items that served
# none, kernel threads) and the residue (elapsed less charged: what was
# charged while the counters were read), in parts per million.
check "a memory-backed null_blk disk with ext4, for the writer" \
	sh -c "modprobe null_blk nr_devices=1 gb=1 memory_backed=1 irqmode=2 &&
		modprobe crc32c_generic && modprobe ext4 &&
		/magnet/bin/mke2fs -q -t ext4 -N 1024 /dev/nullb0 &&
		mkdir -p /mnt/bench && mount -t ext4 /dev/nullb0 /mnt/bench"
echo '+memory +io +cpu' > $CG/cgroup.subtree_control
for g in bench-cpu bench-tx bench-io; do mkdir -p $CG/$g; done
ledger off
ledger on
M=60
sh -c "echo \$\$ > $CG/bench-cpu/cgroup.procs
	exec timeout $M sh -c 'while :; do :; done'" &
load=$!
sh -c "echo \$\$ > $CG/bench-tx/cgroup.procs
	exec timeout $M sh -c 'while :; do magnet-test udp-calls 127.0.0.1 7001 20000 64; done'" > /dev/null &
load="$load $!"
sh -c "echo \$\$ > $CG/bench-io/cgroup.procs
	exec timeout $M sh -c 'while :; do dd if=/dev/zero of=/mnt/bench/f bs=1M count=16 conv=fsync 2> /dev/null; done'" &
load="$load $!"
wait $load
magnetctl -j account > /tmp/bench-mixed.json
magnetctl account top 16 | sed 's/^/BENCH: mixed load: /'
# field NAME: the JSON's top-level number NAME
field() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" /tmp/bench-mixed.json; }
e=$(field elapsed_ns)
u=$(field unattributed_ns)
c=$(field charged_ns)
check "the mixed load's ledger read" [ "${e:-0}" -gt 0 ]
echo "BENCH-RECORD ledger-cost mixed-unattributed-ppm 1 $(awk -v u=$u -v e=$e 'BEGIN { printf "%.0f", u * 1e6 / e }')"
echo "BENCH-RECORD ledger-cost mixed-residue-ppm 1 $(awk -v c=$c -v e=$e 'BEGIN { d = e - c; if (d < 0) d = -d; printf "%.1f", d * 1e6 / e }')"
echo "BENCH-RECORD ledger-cost mixed-elapsed-ns 1 $e"
check "the ledger off" ledger off
umount /mnt/bench
rmmod null_blk
kill $rx
wait $rx 2> /dev/null
rmdir $CG/bench-rx $CG/bench-cpu $CG/bench-tx $CG/bench-io
check "magnet unloads" rmmod magnet
summary

# Benchmark 5 of `make bench`: what a packet costs that a filter rule
# drops, the expression in the kernel (filter type "packet": tcpdump's
# language, a classic BPF program libpcap compiled) against the header
# rule (type "header": protocol and ports as fixed fields), on one packet
# probe, at two layers:
#   socket: the send call (udp-send.socket), where there is no packet
#	yet: the expression sees headers built from the socket and the call,
#	which the kernel's BPF (JIT-compiled) runs it on where it reads
#	only what every such call knows (these expressions do).
#	Every call goes to a blackhole route, so nothing happens after it.
#   ip: IP output (udp-send.ip), an skb: the expression reads the packet,
#	run by the kernel's own BPF (JIT-compiled); packet-drop-interp is
#	the same selection through magnet's interpreter (it reads the
#	length, which the kernel's BPF cannot).
#	The datagrams go out of a dummy device, which drops them.
#   dev: the device's transmit (udp-send.dev-xmit, the stream benchmark's
#	capture point), out of the dummy device: what a packet of a
#	competing stream costs when each tool's filter drops it, magnet's
#	expression on the skb against tcpdump's own filter (libpcap's
#	program attached to its socket on d0, run for every packet the
#	device sends: tcpdump-drop; tcpdump waits on CPU 1).
# The datagrams go to port 5002; every rule keeps port 5001 only, so every
# hit is dropped. Each case times R runs of N sendto() calls on CPU 0
# (after a warm-up run; a run's figure is its fastest fifth), round-robin
# over the cases, and prints
#	BENCH-RECORD pfilter CASE RUN NS_PER_CALL
# Under QEMU's instruction counter (bench/run with BENCH_CLOCK=icount: one
# vCPU, its clock a count of instructions) the records are pfilter-insns,
# their figure instructions per call, and tcpdump waits on CPU 0.
. /magnet/lib.sh

EXP=pfilter
TD_CPU=2
if [ "${BENCH_CLOCK:-}" = icount ]; then
	EXP=pfilter-insns
	TD_CPU=1
fi

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
# Calls through the whole path cost more than getppid(): fewer of them.
N=$((N / 4))
unload_all
load_magnet buffers=default:4M:overwrite
insmod $M/magnet_header.ko
insmod $M/magnet_packet.ko
ip link set lo up
ip route add blackhole 10.99.0.0/16
insmod $M/kmods/dummy.ko
ip link add d0 type dummy
ip link set d0 up
ip addr add 10.98.0.1/24 dev d0
ip neigh add 10.98.0.2 lladdr 02:00:00:00:00:02 dev d0

# calls LAYER: one run, ns per call: the fastest of 5 chunks of N / 5
# calls (the host's disturbances only ever add time, and one of a second
# or so lands in a run as noise as large as what is measured)
calls() {
	k=0
	while [ $k -lt 5 ]; do
		case $1 in
		socket) taskset 1 magnet-test udp-calls 10.99.0.1 5002 $((N / 5)) 32 ;;
		ip|dev) taskset 1 magnet-test udp-calls 10.98.0.2 5002 $((N / 5)) 32 ;;
		esac | awk '{ print $6 }'
		k=$((k + 1))
	done | sort -n | head -1
}
cases() {	# LAYER: its cases
	case $1 in
	dev) echo none header-drop packet-drop tcpdump-drop ;;
	*) echo none header-drop packet-drop packet-drop-long packet-drop-interp ;;
	esac
}
# setup LAYER CASE: the probe and its rule for CASE (or tcpdump's filter)
setup() {
	[ $2 = none ] && return
	if [ $2 = tcpdump-drop ]; then
		rm -f /tmp/td.err
		taskset $TD_CPU tcpdump -Z root -i d0 -n -s 96 -B 4096 -w /dev/null udp dst port 5001 \
			2> /tmp/td.err &
		TD=$!
		wait_for 10 grep -q listening /tmp/td.err
		return
	fi
	case $1 in
	dev) magnetctl probe add pf udp-send.dev-xmit > /dev/null ;;
	*) magnetctl probe add pf udp-send.$1 > /dev/null ;;
	esac
	case $2 in
	header-drop) magnetctl filter add pf header proto udp dport 5001 > /dev/null ;;
	packet-drop) magnetctl filter add pf packet udp dst port 5001 > /dev/null ;;
	packet-drop-long)
		magnetctl filter add pf packet '(udp dst port 5001 or tcp dst port 5001 or udp port 53) and not net 192.168.0.0/16' > /dev/null ;;
	# the same selection, but reading tcpdump's length: magnet's
	# interpreter runs it where the kernel's BPF would (at ip)
	packet-drop-interp)
		magnetctl filter add pf packet 'udp dst port 5001 and greater 0' > /dev/null ;;
	esac
}
stat_pf() { magnetctl -j stats | tr '{' '\n' | grep '"name":"pf"' | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"; }
teardown() {
	case $1 in
	none) ;;
	tcpdump-drop) kill -INT $TD; wait $TD ;;
	*) magnetctl probe del pf > /dev/null ;;
	esac
}
said() {	# LAYER CASE RUN: what the rule or tcpdump did with the calls
	case $2 in
	none) ;;
	tcpdump-drop) echo "BENCH: $EXP $1-$2 run $3: tcpdump $(grep -h 'captured\|received by filter' /tmp/td.err | tr '\n' ',')" ;;
	*) echo "BENCH: $EXP $1-$2 run $3: logged $(stat_pf logged), filtered $(stat_pf filtered), native $(magnetctl -j filter list pf | sed -n 's/.*"native":\([0-9]*\).*/\1/p'), fields $(magnetctl -j filter list pf | sed -n 's/.*"fields":\([0-9]*\).*/\1/p')" ;;
	esac
}

LAYERS="socket ip dev"
for layer in $LAYERS; do
	for c in $(cases $layer); do
		setup $layer $c; calls $layer > /dev/null; teardown $c
	done
done
i=1
while [ $i -le $R ]; do
	for layer in $LAYERS; do
		for c in $(cases $layer); do
			setup $layer $c
			echo "BENCH-RECORD $EXP $layer-$c $i $(calls $layer)"
			[ $c = tcpdump-drop ] || said $layer $c $i
			teardown $c
			[ $c != tcpdump-drop ] || said $layer $c $i
		done
	done
	i=$((i + 1))
done
ip route del blackhole 10.99.0.0/16
ip link del d0
check "the packet filter benchmark ran" true
unload_all
summary

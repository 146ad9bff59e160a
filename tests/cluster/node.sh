# A node of the cluster test (tests/rig/cluster): magnet, magnetd and gmond
# with modmagnet.so, sending to the collector gmond on the host (10.0.2.2
# on QEMU's user network) under this node's own name, with IPv6 UDP
# traffic between two namespaces, until the host says it is done. magnetd
# serves Prometheus too (port 9737, which the host reaches through QEMU's
# hostfwd), and magnet-read captures the same receives, so that the host
# can hold Prometheus's cluster-wide quantiles against the exact ones: when
# the traffic stops, the node prints how many datagrams it sent and each
# received packet's time from dev-recv to app (ns, as magnetd's latency
# udp_recv pairs them), then keeps magnetd serving until the host says
# Prometheus has read the last values. magnetd runs in a cgroup with the
# ledger on, and the node checks what the ledger charged that cgroup.
#
# From the kernel command line (the environment of init):
#   rig_node   this node's name (gmond's override_hostname)
#   rig_ip     the address gmond reports for it (override_ip)
#   rig_port   the collector's UDP port on the host
#   rig_stop   a TCP port on the host that accepts once the host is done
#   rig_final  a TCP port on the host that accepts once Prometheus is done
. /magnet/lib.sh

NODE=${rig_node:-node}
S=/tmp/md.sock
MAX_SECONDS=900

unload_all
load_magnet
[ -d /sys/module/e1000 ] || insmod $M/kmods/e1000.ko
echo "127.0.0.1 localhost $NODE" > /etc/hosts
hostname "$NODE"
nic_up() {
	$IP link set eth0 up &&
	$IP addr add 10.0.2.15/24 dev eth0 &&
	$IP route add default via 10.0.2.2
}
check "the NIC on QEMU's user network" wait_for 10 nic_up
check "two namespaces joined by a veth pair" netns_pair
# Warm-up datagrams before magnetd and magnet-read start: under TCG the
# first packets through a path also pay for translating its code, which
# would leave the counts and percentiles to that.
inB magnet-test udp-recv fd09::2 5001 100 > /dev/null 2>&1 &
WR=$!
sleep 0.5
inA magnet-test udp-send fd09::2 5001 100 100 > /dev/null
wait $WR

# As v6_sends_conf (tests/lib.sh), but the receive layers magnetd times
# are probes of its own names, so that magnet-read -P can add the
# udp-recv set (named udp-recv.LAYER) beside them.
cat > /tmp/md.conf <<CONF
socket { path = "$S" }
metrics { interval = 1 }
prometheus {
	enable = true
	address = "0.0.0.0"
	port = 9737
}
buffer net { size = 1048576 }
probe v6-sends {
	buffer = net
	kind = kprobe
	target = "udpv6_sendmsg"
}
probe rx-dev {
	predef = "udp-recv.dev-recv"
	buffer = net
	snaplen = 16
}
probe rx-app {
	predef = "udp-recv.app"
	buffer = net
	snaplen = 16
}
latency udp_recv {
	start = "rx-dev"
	end = "rx-app"
	key = skb
}
ledger { enable = true }
CONF
# magnetd in a cgroup of its own, which the ledger (on from its
# configuration; one vCPU, so no other CPU runs the paths it patches)
# charges for the packets of Prometheus's scrapes and the NIC's hardirqs
# that brought them.
CG=/sys/fs/cgroup
mkdir -p $CG
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
mkdir -p $CG/md
sh -c "echo \$\$ > $CG/md/cgroup.procs; exec magnetd -c /tmp/md.conf" > /tmp/md.log 2>&1 &
MD=$!
check "magnetd runs, healthy" wait_for 60 healthy

cat > /tmp/gmond.conf <<CONF
globals {
  daemonize = no
  setuid = no
  mute = no
  deaf = yes
  host_dmax = 0
  send_metadata_interval = 10
  override_hostname = "$NODE"
  override_ip = "${rig_ip:-10.0.2.15}"
}
cluster { name = "magnet-rig" }
udp_send_channel { host = 10.0.2.2 port = ${rig_port:-8649} }
modules {
  module {
    name = "magnet_module"
    path = "$M/lib/modmagnet.so"
    param Socket { value = "$S" }
    param Refresh { value = "2" }
  }
}
collection_group {
  collect_every = 5
  time_threshold = 20
  metric { name_match = "magnet_(.+)" title = "magnet \\\\1" value_threshold = 0 }
}
CONF
gmond -c /tmp/gmond.conf > /tmp/gmond.log 2>&1 &
G=$!
sleep 2
check "gmond runs" kill -0 $G

# The receives' journeys, from before the first datagram.
insmod $M/magnet_packet.ko
magnet-read -n -P udp-recv 'ip6 and udp dst port 5001' > /tmp/cap.txt 2> /tmp/cap.err &
CAP=$!
check "magnet-read captures the receives, its expression in the kernel" \
	wait_for 60 session_probe_enabled udp-recv.app

# Traffic until the host has seen what it wanted (or MAX_SECONDS).
echo "MAGNET-RIG: node $NODE sending"
inB magnet-test udp-recv fd09::2 5001 100000000 > /dev/null 2>&1 &
RX=$!
start=$(date +%s)
stopped=0
sent=0
while [ $(($(date +%s) - start)) -lt $MAX_SECONDS ]; do
	inA magnet-test udp-send fd09::2 5001 20 100 > /dev/null && sent=$((sent + 20))
	if echo | timeout 3 nc 10.0.2.2 ${rig_stop:-1} > /dev/null 2>&1; then
		stopped=1
		break
	fi
	sleep 1
done
echo "MAGNET-RIG: node $NODE sent for $(($(date +%s) - start)) s"
check "the host said it was done" [ $stopped -eq 1 ]
sleep 2
kill -INT $CAP
wait $CAP
cat /tmp/cap.err
# dev-recv to app of each packet, ns (layer lines: LAYER HH:MM:SS.NNNNNNNNN ...)
awk '
function ns(t,  a) { split(t, a, ":"); return ((a[1] * 60 + a[2]) * 60) * 1e9 + a[3] * 1e9 }
/^[0-9]/ { d = ""; next }
$1 == "dev-recv" && d == "" { d = ns($2) }
$1 == "app" && d != "" { printf "%.0f\n", ns($2) - d; d = "" }
' /tmp/cap.txt > /tmp/lat.txt
echo "MAGNET-RIG: node $NODE sent $sent datagrams, captured $(wc -l < /tmp/lat.txt) latencies"
check "magnet-read captured journeys from dev-recv to app" [ -s /tmp/lat.txt ]
xargs -n 100 < /tmp/lat.txt | sed "s/^/MAGNET-RIG: latency $NODE /"
echo "MAGNET-RIG: node $NODE latencies-end"
# magnetd serves until Prometheus has scraped the final counts
final=0
for i in $(seq 300); do
	if echo | timeout 3 nc 10.0.2.2 ${rig_final:-1} > /dev/null 2>&1; then
		final=1
		break
	fi
	sleep 1
done
check "the host said Prometheus was done" [ $final -eq 1 ]
check "gmond ran throughout" kill -0 $G
check "magnetd stayed healthy" healthy
n=$(metric v6-sends.count)
check "magnetd counted the node's sends ($n)" [ "${n:-0}" -gt 0 ]
magnetctl account top 20
# (the NIC's irq: its hardirq rows charged to none are its alone)
irq=$(awk '/eth0/ { sub(":", "", $1); print $1; exit }' /proc/interrupts)
check "the ledger charged magnetd's cgroup for its packets' NET_RX time" \
	sh -c "magnetctl account | awk '\$1 == \"/md\" && \$2 == \"softirq\" && \$3 == \"net_rx\"' | grep -q ."
check "... and for a part of the NIC's hardirqs (irq ${irq:-?}) that led to them" \
	sh -c "magnetctl account | awk '\$1 == \"/md\" && \$2 == \"hardirq\" && \$3 == \"${irq:-none}\"' | grep -q ."
cat /tmp/gmond.log
kill -TERM $G
wait $G
kill -TERM $MD
wait $MD
check "magnetd exits cleanly" [ $? -eq 0 ]
kill $RX $A $B 2>/dev/null
unload_all
summary

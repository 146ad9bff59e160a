# A node of the cluster test (tests/rig/cluster): magnet, magnetd and gmond
# with modmagnet.so, sending to the collector gmond on the host (10.0.2.2
# on QEMU's user network) under this node's own name, with IPv6 UDP
# traffic between two namespaces, until the host says it is done.
#
# From the kernel command line (the environment of init):
#   rig_node   this node's name (gmond's override_hostname)
#   rig_ip     the address gmond reports for it (override_ip)
#   rig_port   the collector's UDP port on the host
#   rig_stop   a TCP port on the host that accepts once the host is done
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

v6_sends_conf /tmp/md.conf $S
magnetd -c /tmp/md.conf > /tmp/md.log 2>&1 &
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

# Traffic until the host has seen what it wanted (or MAX_SECONDS).
echo "MAGNET-RIG: node $NODE sending"
inB magnet-test udp-recv fd09::2 5001 100000000 > /dev/null 2>&1 &
RX=$!
start=$(date +%s)
stopped=0
while [ $(($(date +%s) - start)) -lt $MAX_SECONDS ]; do
	inA magnet-test udp-send fd09::2 5001 20 100 > /dev/null
	if echo | timeout 3 nc 10.0.2.2 ${rig_stop:-1} > /dev/null 2>&1; then
		stopped=1
		break
	fi
	sleep 1
done
echo "MAGNET-RIG: node $NODE sent for $(($(date +%s) - start)) s"
check "the host said it was done" [ $stopped -eq 1 ]
check "gmond ran throughout" kill -0 $G
check "magnetd stayed healthy" healthy
n=$(metric v6-sends.count)
check "magnetd counted the node's sends ($n)" [ "${n:-0}" -gt 0 ]
cat /tmp/gmond.log
kill -TERM $G
wait $G
kill -TERM $MD
wait $MD
check "magnetd exits cleanly" [ $? -eq 0 ]
kill $RX $A $B 2>/dev/null
unload_all
summary

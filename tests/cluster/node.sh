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
#   rig_otlp   the host's port of an OTLP/HTTP receiver, for magnetd's
#              spans (its otlp section; rig_otlp_queue: its queue's bytes)
#   rig_role   client or server: its side of the request across the nodes
#   rig_wire   its address on the wire between the nodes (eth1)
#   rig_peer   the other node's
# rig-kmods: null_blk nbd
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

# --- One request across the two nodes (spans; tests/rig/cluster-spans) -----------
# The nodes share an Ethernet of their own (eth1, QEMU's dgram netdev):
# node2 (rig_role=server, 10.9.1.2) serves a file with Debian's lighttpd
# and a null_blk disk with nbd-server; node1 (client, 10.9.1.1) fetches
# the file with curl, each request with a traceparent of its own, and
# writes 64 KiB blocks with O_DIRECT to the NBD disk, each write in a span
# of its own (magnet-test span-write). Both capture with magnet-read
# --trace twice: a short capture, then node2 steps its wall clock by
# exactly CLOCK_STEP_NS, then the capture of the requests; the host reads
# each pair of files as one (magnet-read -r -r) and checks the clock
# estimate against the step, and each request's trace. The two nodes
# signal each other on port 9001 (busybox nc).
CLOCK_STEP_NS=2500000000
HTTP_N=${rig_http_n:-50}
NBD_N=${rig_nbd_n:-20}
wire_up() {
	[ -e /sys/class/net/eth1 ] && $IP link set eth1 up &&
		$IP addr add "${rig_wire:-10.9.1.1}/24" dev eth1
}
check "the wire between the nodes (eth1, ${rig_wire:-?})" wait_for 20 wire_up
# signal: wait for the peer's word on port 9001; tell: say it
signal() { timeout 600 nc -l -p 9001 < /dev/null > /dev/null 2>&1; }
tell() {
	for i in $(seq 120); do
		echo go | timeout 3 nc "$rig_peer" 9001 > /dev/null 2>&1 && return 0
		sleep 1
	done
	return 1
}
# capture NAME SETS: magnet-read -P SETS --trace /tmp/NAME.mtr, until stopped
capture() {
	# (-s 300: the headers, a request's traceparent among them, not
	# the 64 KiB each NBD write carries)
	magnet-read -s 300 -P "$2" --trace /tmp/$1.mtr 2> /tmp/$1.err &
	CAP=$!
	wait_for 60 grep -q "^magnet-read: capturing" /tmp/$1.err
	sleep 1
}
capture_end() {
	interrupt $CAP
	wait $CAP
	cat /tmp/$1.err
	gzip -1 /tmp/$1.mtr
	artifact /tmp/$1.mtr.gz
}
if [ "${rig_role:-}" = server ]; then
	check "a null_blk disk" modprobe null_blk nr_devices=1 gb=1
	mkdir -p /srv/www /var/run
	dd if=/dev/urandom of=/srv/www/f.bin bs=1024 count=16 2> /dev/null
	cat > /tmp/lighttpd.conf <<CONF
server.document-root = "/srv/www"
server.port = 80
server.bind = "${rig_wire:-10.9.1.2}"
server.errorlog = "/tmp/lighttpd.err"
server.pid-file = "/tmp/lighttpd.pid"
CONF
	check "lighttpd serves on the wire" lighttpd -f /tmp/lighttpd.conf
	# (each write synced by nbd-server's thread: the disk's I/O is its)
	printf '[generic]\nuser = root\ngroup = root\n[disk]\nexportname = /dev/nullb0\nsync = true\n' > /tmp/nbd.conf
	check "nbd-server exports a null_blk disk" nbd-server -C /tmp/nbd.conf
	capture b1 tcp-send,tcp-recv,blk-io
	check "the client is ready" tell
	check "the client's first requests done" signal
	capture_end b1
	check "the clock stepped by $CLOCK_STEP_NS ns" magnet-test clock-step $CLOCK_STEP_NS
	capture b2 tcp-send,tcp-recv,blk-io
	check "the client told to go on" tell
	check "the client's requests done" signal
	capture_end b2
	kill "$(cat /tmp/lighttpd.pid)" 2> /dev/null
	killall nbd-server 2> /dev/null
elif [ "${rig_role:-}" = client ]; then
	check "the nbd module" modprobe nbd
	check "the server is ready" signal
	capture a1 tcp-send,tcp-recv,app,blk-io
	for i in $(seq 10); do
		curl -s -o /dev/null "http://$rig_peer/f.bin"
	done
	capture_end a1
	check "the server told of the first requests" tell
	check "the server stepped its clock and captures" signal
	capture a2 tcp-send,tcp-recv,app,blk-io
	: > /tmp/http.tp
	for i in $(seq "$HTTP_N"); do
		tp=$(printf '00-%08x%08x%08x%08x-%016x-01' $i $$ $i 7 $((i + 1000)))
		echo "$tp" >> /tmp/http.tp
		curl -s -o /dev/null -H "traceparent: $tp" "http://$rig_peer/f.bin" || echo "curl $i failed"
	done
	check "nbd-client attaches the server's disk" \
		nbd-client "$rig_peer" -N disk /dev/nbd0
	check "$NBD_N writes of 64 KiB, each in a span" \
		sh -c "magnet-test span-write /dev/nbd0 $NBD_N 65536 > /tmp/nbd.tp"
	nbd-client -d /dev/nbd0 > /dev/null 2>&1
	capture_end a2
	artifact /tmp/http.tp
	artifact /tmp/nbd.tp
	check "the server told it is done" tell
fi
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
otlp {
	url = "http://10.0.2.2:${rig_otlp:-1}/v1/traces"
	# (the applications' spans alone: probes on the send path would
	# add to the latencies the host compares with Prometheus's)
	probe-sets = "app"
	queue = ${rig_otlp_queue:-4194304}
	timeout = 3
}
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
	# (spans for magnetd to post: a request of five steps)
	magnet-spans -n 5 > /dev/null
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

# --- magnetd's exporter reloaded (node1) -------------------------------------------
# A new url and a new capture in one SIGHUP: the capture (magnet-read)
# started anew, not counted as a restart, the spans made after it posted
# to the new url (the host checks that its receiver took them there); then
# the url removed: the capture ended, nothing posted, no otlp metrics.
if [ "${rig_role:-}" = client ]; then
	scrape() { printf 'GET /metrics HTTP/1.0\r\n\r\n' | timeout 5 nc 127.0.0.1 9737; }
	prom() { scrape | awk -v k="$1" '$1 == k { print $2 }'; }	# NAME: its value
	capture() {	# SETS: the pid of magnetd's magnet-read -P SETS (no pgrep here)
		for d in /proc/[0-9]*; do
			tr '\0' ' ' < $d/cmdline 2> /dev/null |
				grep -q "^magnet-read -P $1 --otlp - $" && echo ${d#/proc/}
		done
	}
	restarts=$(prom magnet_otlp_exporter_restarts_total)
	sent=$(prom 'magnet_otlp_spans_total{outcome="sent"}')
	old=$(capture app)
	check "reload: magnetd's capture runs (pid ${old:-none})" [ -n "$old" ]
	sed -i -e 's|/v1/traces"$|/reloaded/v1/traces"|' \
	       -e 's|probe-sets = "app"$|probe-sets = "app,blk-io"|' /tmp/md.conf
	kill -HUP $MD
	check "reload: a new url and capture, installed" \
		wait_for 30 grep -q "reload: /tmp/md.conf installed" /tmp/md.log
	check "... the capture started anew, posting to the new url" \
		wait_for 60 grep -q "otlp: spans of app,blk-io to http://.*/reloaded/v1/traces" /tmp/md.log
	check "... the old capture ended ($old)" wait_for 30 sh -c "! kill -0 $old"
	# (once the new capture's probes are in; spans of a service of their
	# own, which only the new capture can have seen: libmagnet names it
	# after the program)
	wait_for 60 session_probe_enabled app.span > /dev/null
	ln -sf "$(command -v magnet-spans)" /tmp/after-reload
	/tmp/after-reload -n 5 > /dev/null
	posted() {
		n=$(prom 'magnet_otlp_spans_total{outcome="sent"}')
		[ "${n:-0}" -gt "${sent:-0}" ] && [ "$(prom magnet_otlp_queue_bytes)" = 0 ]
	}
	check "... the spans made after it posted (sent ${sent:-?} -> more)" wait_for 60 posted
	check "... not counted as the capture's restart (${restarts:-?})" \
		[ "$(prom magnet_otlp_exporter_restarts_total)" = "${restarts:-x}" ]
	echo "MAGNET-RIG: node $NODE otlp reloaded"
	sed -i 's|^\turl = .*|\turl = ""|' /tmp/md.conf
	kill -HUP $MD
	check "reload: the url removed: spans no longer posted" \
		wait_for 30 grep -q "otlp: no url: spans no longer posted" /tmp/md.log
	ended() { [ -z "$(capture app,blk-io)" ]; }
	check "... the capture ended" wait_for 30 ended
	no_otlp() { scrape > /tmp/m.txt; grep -q '^magnet_' /tmp/m.txt && ! grep -q '^magnet_otlp_' /tmp/m.txt; }
	check "... its metrics gone from /metrics" no_otlp
	check "... magnetd healthy" healthy
fi
cat /tmp/gmond.log
grep otlp /tmp/md.log
kill -TERM $G
wait $G
kill -TERM $MD
wait $MD
check "magnetd exits cleanly" [ $? -eq 0 ]
kill $RX $A $B 2>/dev/null
unload_all
summary

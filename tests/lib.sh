# Shell test harness for the suites that run inside the VM (busybox sh).
# Each check prints "ok - NAME" or "not ok - NAME: WHY"; summary() prints
# "N passed, N failed" and returns non-zero if anything failed: the one
# format of every test of the project (tests/harness.h, which the C test
# programs use), which the rig adds up.

passed=0
failed=0
M=/magnet
DBG=/sys/kernel/debug
PATH=$M/bin:$PATH

pass() { passed=$((passed + 1)); echo "ok - $1"; }
fail() { failed=$((failed + 1)); echo "not ok - $1: $2"; }

# check NAME COMMAND...: passes if COMMAND succeeds.
check() {
	name=$1; shift
	if "$@"; then pass "$name"; else fail "$name" "failed: $*"; fi
}

# check_fails NAME COMMAND...: passes if COMMAND fails.
check_fails() {
	name=$1; shift
	if "$@"; then fail "$name" "succeeded: $*"; else pass "$name"; fi
}

# run_c COMMAND...: run a C test program and add its tally to ours.
run_c() {
	out=$("$@" 2>&1)
	echo "$out"
	line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		fail "$*" "no summary line (crashed?)"
		return
	fi
	set -- $line
	passed=$((passed + $1))
	failed=$((failed + $3))
}

# run_nl COMMAND...: run a C test program as one check of ours: fails if
# it fails or any of its checks failed.
run_nl() {
	out=$("$@" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] && ! echo "$out" | grep -q '^not ok'
}

load_magnet() {
	insmod $M/magnet.ko "$@"
}

unload_all() {
	for m in magnet_stress magnet_sample magnet_pairs magnet_pcapdiff magnet_header \
		 magnet_packet magnet_correlate; do
		rmmod $m 2>/dev/null
	done
	rmmod magnet 2>/dev/null
	true
}

# best_ns_per_call N: the fastest of 5 runs of N getppid() calls, in ns
# per call (for the benchmarks).
best_ns_per_call() {
	b=
	for i in 1 2 3 4 5; do
		v=$(magnet-test syscalls $1 | awk '{ print $6 }')
		[ -z "$b" ] && b=$v
		b=$(awk -v a="$b" -v c="$v" 'BEGIN { print (c < a ? c : a) }')
	done
	echo "$b"
}

# bench_probes N SYM SIZE: for the benchmarks, kprobes p1..pN on SYM,
# each logging into a buffer of its own, b1..bN of SIZE bytes a CPU in
# overwrite mode; bench_probes_del N removes them.
bench_probes() {
	i=1
	while [ $i -le $1 ]; do
		magnetctl buffer add b$i size $3 mode overwrite > /dev/null
		magnetctl probe add p$i kprobe $2 buffer b$i > /dev/null
		i=$((i + 1))
	done
}
bench_probes_del() {
	i=1
	while [ $i -le $1 ]; do
		magnetctl probe del p$i
		magnetctl buffer del b$i
		i=$((i + 1))
	done
}

# bench_tracefs: for the benchmarks, tracefs at $T and no command-name
# recording. That option hooks sched_switch whenever an event is enabled
# and unhooks it when the last is disabled, and patching that hot site
# while the other vCPU switches can livelock under TCG (seen once as a
# soft lockup in trace-cmd's shutdown).
bench_tracefs() {
	T=/sys/kernel/tracing
	mount -t tracefs nodev $T 2>/dev/null
	echo 0 > $T/options/record-cmd
}

# artifact FILE [NAME]: hand FILE to the host, for tests/suites/SUITE.host
# (vm-run puts it in build/<release>/artifacts/SUITE/NAME).
artifact() {
	echo "MAGNET-RIG: artifact ${2:-$(basename "$1")}"
	base64 "$1"
	echo "MAGNET-RIG: artifact-end"
}

# iproute2's ip (busybox sh would run its own applet for a bare "ip").
IP=$M/bin/ip

# netns_pair: two network namespaces joined by a veth pair: A (10.9.0.1,
# fd09::1 on va) and B (10.9.0.2, fd09::2 on vb), held by sleeping
# processes $A and $B (kill them to remove both). inA/inB run a command
# in one. Loopback is brought up in all three namespaces.
netns_pair() {
	if [ -f $M/kmods/veth.ko ] && [ ! -d /sys/module/veth ]; then
		insmod $M/kmods/veth.ko
	fi
	$IP link set lo up
	unshare -n sleep 100000 &
	A=$!
	unshare -n sleep 100000 &
	B=$!
	sleep 0.2
	$IP link add va type veth peer name vb &&
	$IP link set va netns $A && $IP link set vb netns $B &&
	inA $IP addr add 10.9.0.1/24 dev va &&
	inB $IP addr add 10.9.0.2/24 dev vb &&
	inA $IP -6 addr add fd09::1/64 dev va nodad &&
	inB $IP -6 addr add fd09::2/64 dev vb nodad &&
	inA $IP link set lo up && inB $IP link set lo up &&
	inA $IP link set va up && inB $IP link set vb up
}
inA() { nsenter -t $A -n "$@"; }
inB() { nsenter -t $B -n "$@"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds, at most SECONDS.
wait_for() {
	t=$(($1 * 10)); shift
	while [ $t -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}

# other_cpus off|on: every CPU but CPU 0 offline, or back online. Turning
# the ledger on or off repatches the kernel's hottest paths (the
# scheduler's, the interrupts'), which TCG does not survive with another
# vCPU running them (docs/testing.md): it is done with them offline.
other_cpus() {
	v=0
	[ "$1" = on ] && v=1
	for f in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ -w "$f" ] && echo $v > "$f"
	done
	return 0
}
# ledger_set on|off [by-tgid]: magnetctl account on or off, the other
# CPUs offline meanwhile.
ledger_set() {
	other_cpus off
	magnetctl account "$@"
	rc=$?
	other_cpus on
	return $rc
}

# session_probe_enabled NAME: probe NAME is enabled in a session other
# than the default (where magnetd's probes of that name may be): what a
# magnet-read -P has once its expression is in place, for it enables its
# probes after that. (probe show NAME looks in the default session only.)
session_probe_enabled() {
	magnetctl -j probe list 2> /dev/null | sed 's/{"id":/\n&/g' |
		grep "\"name\":\"$1\"" | grep '"enabled":true' |
		grep -q '"session":[1-9]'
}

# interrupt PID: SIGINT to a program started in the background, once it
# has its handler. The shell starts background commands with SIGINT
# ignored, so a signal sent before the program's sigaction() is lost and
# the program never ends (seen on the slow debug kernel); SigCgt in its
# status says when the handler is there. Not after 30 s: sent anyway.
catches_int() {
	m=$(sed -n 's/^SigCgt:[[:space:]]*//p' /proc/$1/status) &&
		[ $(((0x$m >> 1) & 1)) -eq 1 ]
}
interrupt() {
	wait_for 30 catches_int $1
	kill -INT $1
}

# metric NAME: its value in a snapshot of the magnetd at $S ("" if none);
# healthy: magnetd there has its configuration installed.
metric() {
	magnetctl daemon snapshot socket $S 2>/dev/null |
		awk -v n="$1" '$1 == n { print $4 }'
}
healthy() { [ "$(metric magnetd.health)" = 1 ]; }

# v6_sends_conf FILE SOCKET [SOCKET-LINES]: a magnetd.conf for the Ganglia
# tests, with SOCKET-LINES added to its socket section. magnetd counts IPv6
# UDP sends with a kprobe of its own ("v6-sends") and times receives
# through the udp-recv set (latency "udp_recv"). gmond's own traffic is
# IPv4 over loopback, so only the tests' datagrams are IPv6 sends.
v6_sends_conf() {
	cat > "$1" <<EOF
socket {
	path = "$2"
${3:-}
}
metrics {
	interval = 1
}
buffer net {
	size = 1048576
}
probe v6-sends {
	buffer = net
	kind = kprobe
	target = "udpv6_sendmsg"
}
probe-set udp-recv {
	buffer = net
	snaplen = 16
}
latency udp_recv {
	start = "udp-recv.dev-recv"
	end = "udp-recv.app"
	key = skb
}
EOF
}

# gmond_conf FILE [PARAM VALUE]...: a gmond.conf with magnet's module (and
# these module parameters) for a gmond alone on this node, with its UDP
# channel on port $UDP, its XML on TCP port $TCP, magnetd at $S. With
# GMOND_USER set, gmond drops to that user after loading its modules (as
# Debian's gmond.conf has it: setuid = yes, user = ganglia).
gmond_conf() {
	f=$1; shift
	{
		cat <<EOF
globals {
  daemonize = no
EOF
		if [ -n "${GMOND_USER:-}" ]; then
			printf '  setuid = yes\n  user = %s\n' "$GMOND_USER"
		else
			echo '  setuid = no'
		fi
		cat <<EOF
  debug_level = 0
  mute = no
  deaf = no
  host_dmax = 0
  cleanup_threshold = 300
  send_metadata_interval = 10
}
cluster { name = "rig" }
host { location = "vm" }
udp_send_channel { host = 127.0.0.1 port = $UDP }
udp_recv_channel { port = $UDP bind = 127.0.0.1 }
tcp_accept_channel { port = $TCP bind = 127.0.0.1 }
modules {
  module {
    name = "magnet_module"
    path = "$M/lib/modmagnet.so"
    param Socket { value = "$S" }
    param Refresh { value = "1" }
EOF
		while [ $# -ge 2 ]; do
			echo "    param $1 { value = \"$2\" }"
			shift 2
		done
		cat <<EOF
  }
}
collection_group {
  collect_every = 2
  time_threshold = 20
  metric { name_match = "magnet_(.+)" title = "magnet \\\\1" value_threshold = 0 }
}
EOF
	} > $f
}

# xml: the XML gmond serves on its TCP port $TCP.
xml() { timeout 10 nc 127.0.0.1 $TCP < /dev/null 2>/dev/null; }
# gval NAME: metric NAME's VAL in gmond's XML ("" if absent).
gval() {
	xml | grep -o "<METRIC NAME=\"$1\" VAL=\"[^\"]*\"" | sed 's/.*VAL="//; s/"$//'
}
gis() { [ "$(gval "$1")" = "$2" ]; }

summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

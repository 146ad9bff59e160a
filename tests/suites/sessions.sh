# Sessions: several users of the same probe points at once. magnetd with
# the shipped configuration (the default and net buffers, the udp-send and
# udp-recv sets) and two magnet-read -P captures whose probe sets overlap
# with it and with each other, with different expressions, each in a
# session of its own: each gets exactly its packets, held against
# tcpdump's capture of the same traffic. Then: one capture killed with
# SIGKILL leaves nothing behind; who may change what; the limits.
. /magnet/lib.sh

unload_all
load_magnet buffers=default:1M
insmod $M/magnet_packet.ko

check "two namespaces joined by a veth pair" netns_pair
check "veth pair between namespaces" inA ping -c 1 -W 2 10.9.0.2

# --- magnetd, as the package runs it -----------------------------------------
sed 's|/run/magnetd.sock|/tmp/ses-magnetd.sock|' $M/conf/magnetd.conf > /tmp/ses-magnetd.conf
S=/tmp/ses-magnetd.sock
magnetd -c /tmp/ses-magnetd.conf > /tmp/ses-magnetd.log 2>&1 &
md=$!
check "magnetd starts with the shipped configuration" wait_for 30 healthy
check "... its udp-send probes are in the default session" \
	sh -c "magnetctl probe list | awk '\$2 == \"udp-send.socket\" && \$NF == 0' | grep -q ."

# --- two captures beside it, overlapping -------------------------------------
# start_capture NAME SETS EXPRESSION [OPTION]: magnet-read -P in the
# background ($!), the packets that passed va
start_capture() {
	magnet-read -n -q -i va -P "$2" -w /tmp/ses-$1.pcapng $4 "$3" \
		> /tmp/ses-$1.out 2> /tmp/ses-$1.err &
}
# session_of PID: the session process PID made
session_of() { magnetctl session list | awk -v p="$1" '$3 == p { print $1 }'; }
# column NAME SESSION COLUMN: a column of probe NAME of SESSION in probe list
column() {
	magnetctl probe list | awk -v n="$1" -v s="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		$2 == n && $NF == s { print $k }'
}
sent_before=$(column udp-send.socket 0 LOGGED)
start_capture one udp-send,udp-recv "udp and dst port 5001"
c1=$!
start_capture two udp-send,tcp-send "udp and dst port 5002"
c2=$!
capturing() { grep -q '^magnet-read: capturing on ' /tmp/ses-$1.err; }
check "the first capture starts beside magnetd" wait_for 30 capturing one
check "the second too, on probe sets the first and magnetd use" wait_for 30 capturing two
cat /tmp/ses-one.err /tmp/ses-two.err | head
check "one line says it started: the sets, the probes, the expression in the kernel" \
	grep -qE '^magnet-read: capturing on udp-send,udp-recv \([0-9]+ probes(, [0-9]+ layers? skipped)?\), expression in the kernel$' /tmp/ses-one.err
check "... and no line per probe without -v" \
	sh -c "! grep -q '^magnet-read: probe ' /tmp/ses-one.err"
magnetctl session list
check "magnetctl session list shows the two sessions" \
	sh -c "[ \$(magnetctl session list | sed 1d | wc -l) -eq 2 ]"
check "... each with its buffer and its probes" \
	sh -c "magnetctl session list | sed 1d | awk '\$4 != 1 || \$5 < 5 { exit 1 }'"
check "both have a probe udp-send.socket, each in its session" \
	sh -c "[ \$(magnetctl probe list | awk '\$2 == \"udp-send.socket\"' | wc -l) -eq 3 ]"
ses1=$(session_of $c1)
ses2=$(session_of $c2)
echo "# sessions: $ses1 (pid $c1), $ses2 (pid $c2)"
check "each session's buffer has its data file" \
	sh -c "[ -e /sys/kernel/debug/magnet/data/$ses1/default ] && [ -e /sys/kernel/debug/magnet/data/$ses2/default ]"

inA tcpdump -Z root -i any -n -U -w /tmp/ses-td.pcap udp 2> /tmp/ses-td.err &
td=$!
wait_for 20 grep -q 'listening on' /tmp/ses-td.err
inB magnet-test udp-recv 10.9.0.2 5001 5 > /dev/null &
r1=$!
inB magnet-test udp-recv 10.9.0.2 5002 7 > /dev/null &
r2=$!
sleep 0.3
inA magnet-test udp-send 10.9.0.2 5001 5 200 4001
inA magnet-test udp-send 10.9.0.2 5002 7 300 4002
inA magnet-test udp-send 10.9.0.2 5003 3 100 4003
wait $r1 $r2
sleep 1
killall -INT tcpdump
wait $td
interrupt $c1
interrupt $c2
wait $c1
check "the first capture exits 0" [ $? -eq 0 ]
wait $c2
check "the second too" [ $? -eq 0 ]
cat /tmp/ses-one.err /tmp/ses-two.err

# the packets of a pcap file as tcpdump -q prints them, sorted
lines() {
	tcpdump -Z root -r "$1" -n -q -t "$2" 2> /dev/null |
		sed -E 's/^[^ ]+ +(In|Out|M|P|B) +//' | sort
}
for c in "one 5001 5" "two 5002 7"; do
	set -- $c
	want=$(lines /tmp/ses-td.pcap "udp and dst port $2")
	got=$(lines /tmp/ses-$1.pcapng "")
	check "capture $1 got exactly its $3 datagrams to port $2, as tcpdump saw them" \
		[ "$got" = "$want" -a "$(echo "$got" | grep -c .)" -eq "$3" ]
	[ "$got" = "$want" ] || { echo "# tcpdump:"; echo "$want"; echo "# capture $1:"; echo "$got"; }
done
sent=$(column udp-send.socket 0 LOGGED)
check "magnetd's own udp-send.socket logged the 15 sends too ($sent_before, then $sent)" \
	[ "$sent" -ge $((sent_before + 15)) ]
check "the captures' sessions are gone" \
	wait_for 10 sh -c "[ -z \"\$(magnetctl session list | sed 1d)\" ]"
check "... with their buffers' directories" \
	sh -c "[ ! -e /sys/kernel/debug/magnet/data/$ses1 ] && [ ! -e /sys/kernel/debug/magnet/data/$ses2 ]"
check "magnetd is still healthy" healthy

# --- killed mid-capture ------------------------------------------------------
start_capture killed udp-send,udp-recv "" -v
ck=$!
check "a third capture starts" wait_for 30 capturing killed
check "... with -v, a line per probe before" \
	grep -qE '^magnet-read: probe udp-recv\.app on [a-z_]+$' /tmp/ses-killed.err
check "... and no expression: none said" \
	grep -qE '^magnet-read: capturing on udp-send,udp-recv \([0-9]+ probes(, [0-9]+ layers? skipped)?\)$' /tmp/ses-killed.err
inA magnet-test udp-send 10.9.0.2 5001 3 100 > /dev/null
kill -9 $ck
wait $ck 2> /dev/null
check "killed with SIGKILL, its session goes" \
	wait_for 10 sh -c "[ -z \"\$(magnetctl session list | sed 1d)\" ]"
check "... and its probes, only its: magnetd's stay" \
	sh -c "[ \$(magnetctl probe list | awk '\$2 == \"udp-send.socket\"' | wc -l) -eq 1 ]"
check "... and its buffer" sh -c "[ \$(magnetctl buffer list | awk '\$NF != 0' | sed 1d | wc -l) -eq 0 ]"

# --- who may change what -----------------------------------------------------
magnet-read -n -q -i va -B 8192 -P udp-send > /dev/null 2> /tmp/ses-other.err &
co=$!
wait_for 30 sh -c "grep -q '^magnet-read: capturing on udp-send ' /tmp/ses-other.err"
sid=$(session_of $co)
pid=$(column udp-send.socket "$sid" ID)
echo "# session $sid, its probe udp-send.socket is $pid"
size=$(magnetctl -j buffer list | tr '{' '\n' | grep "\"session\":$sid[,}]" |
	sed -n 's/.*"size":\([0-9]*\).*/\1/p')
check "-B 8192: 8 MiB in all, over $(nproc) CPUs ($size bytes a CPU)" \
	[ "$size" -eq $((8388608 / $(nproc))) ]
check_fails "another socket cannot remove a session's probe by its id" \
	magnetctl probe del $pid
check "... and says why" sh -c "magnetctl probe del $pid 2>&1 | grep -q 'session of another socket'"
check_fails "nor disable it" magnetctl probe disable $pid
check_fails "nor filter it" magnetctl filter add $pid tgid 1
check "probe show by name finds the default session's udp-send.socket, magnetd's" \
	sh -c "magnetctl probe show udp-send.socket | awk 'NR == 2 && \$NF == 0' | grep -q ."
check "root may end another's session (CAP_SYS_ADMIN)" magnetctl session del $sid
check "... which takes its probes with it" \
	sh -c "! magnetctl probe list | awk -v s=$sid '\$NF == s' | grep -q ."
wait $co 2> /dev/null
check_fails "a session that does not exist: session del fails" magnetctl session del $sid
check "two sockets, a session each: neither may change the other's, a name is per session" \
	run_nl magnet-nltest sessions

# --- limits ------------------------------------------------------------------
echo 1 > /sys/module/magnet/parameters/max_sessions
start_capture lim1 udp-send ""
l1=$!
wait_for 30 capturing lim1
magnet-read -q -P udp-recv > /dev/null 2> /tmp/ses-lim2.err
rc=$?
cat /tmp/ses-lim2.err
check "max_sessions=1: a second session of the same user is refused (exit 1)" [ $rc -eq 1 ]
check "... saying which limit" grep -q 'max_sessions' /tmp/ses-lim2.err
interrupt $l1
wait $l1
echo 16 > /sys/module/magnet/parameters/max_sessions
echo 3 > /sys/module/magnet/parameters/max_session_probes
magnet-read -q -P udp-send > /dev/null 2> /tmp/ses-lim3.err
rc=$?
cat /tmp/ses-lim3.err
check "max_session_probes=3: a set of seven probes is refused" [ $rc -eq 1 ]
check "... saying which limit" grep -q 'max_session_probes' /tmp/ses-lim3.err
check "... leaving nothing behind" \
	wait_for 10 sh -c "[ -z \"\$(magnetctl session list | sed 1d)\" ]"
echo 256 > /sys/module/magnet/parameters/max_session_probes

# --- files that cannot be made -----------------------------------------------
# -w's, --trace's and --perfetto's files are made before anything is
# installed: with no session to be had (max_sessions=0), the file is what
# is refused, and nothing is left behind.
echo 0 > /sys/module/magnet/parameters/max_sessions
mkdir -m 755 /tmp/ses-root-only
for f in "-w /nonexistent/dir/x.pcapng:No such file or directory" \
	 "--trace /nonexistent/dir/x.mtr:No such file or directory" \
	 "--perfetto /nonexistent/dir/x.json:No such file or directory" \
	 "-Z nobody -w /tmp/ses-root-only/x.pcapng:Permission denied"; do
	args=${f%:*}
	magnet-read -q -P udp-send $args > /dev/null 2> /tmp/ses-nofile.err
	rc=$?
	cat /tmp/ses-nofile.err
	check "$args: exit 1, saying why, before asking for a session" \
		sh -c "[ $rc -eq 1 ] && [ \"\$(cat /tmp/ses-nofile.err)\" = 'magnet-read: ${args##* }: ${f##*:}' ]"
	check "... nothing installed: no session, no probe but magnetd's" \
		sh -c "[ -z \"\$(magnetctl session list | sed 1d)\" ] &&
		       ! magnetctl probe list | sed 1d | awk '\$NF != 0' | grep -q ."
done
check "-Z nobody: nothing made where nobody may not make it" \
	[ -z "$(ls /tmp/ses-root-only)" ]
echo 16 > /sys/module/magnet/parameters/max_sessions

# --- nothing to read ----------------------------------------------------------
magnetctl buffer add empty size 64K
magnet-read -N -q -b empty > /dev/null 2> /tmp/ses-empty.err
cat /tmp/ses-empty.err
check "without -P, on a buffer no probe logs into, magnet-read says what to add" \
	grep -q 'no probes log into buffer "empty": for packets add -P udp-send,udp-recv,tcp-send,tcp-recv' /tmp/ses-empty.err
magnetctl buffer del empty

kill $md
wait $md
check "magnetd exits 0" [ $? -eq 0 ]
check "magnet unloads" sh -c "rmmod magnet_packet && rmmod magnet"
summary

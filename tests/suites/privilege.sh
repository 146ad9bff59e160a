# Who may do what, above the kernel: magnetd's socket honours its
# configured mode and group; gmond, running as its own user the way Debian
# runs it (setuid to ganglia after loading its modules), gets magnet's
# metrics through a socket group and says why when the socket keeps it out;
# magnet-supermon runs as an unprivileged user; and neither plugin passes
# on anything but metrics, nor lets a client change anything. (The kernel's
# side, netlink changes and debugfs as nobody, is in the probes and
# lifecycle suites.) Sessions: a user's capture's data is that user's;
# others see that the session exists, not what it holds.
# rig-programs: setpriv
. /magnet/lib.sh

S=/tmp/md.sock
CONF=/tmp/md.conf
GCONF=/tmp/gmond.conf
GLOG=/tmp/gmond.log
UDP=18649
TCP=18650
PORT=2709

# Debian's gmond user, an unprivileged user for magnet-supermon, and a
# group for magnetd's socket that both are in (nobody is not).
echo 'ganglia:x:103:111::/:/bin/sh' >> /etc/passwd
echo 'smon:x:1001:1001::/:/bin/sh' >> /etc/passwd
echo 'ganglia:x:111:' >> /etc/group
echo 'smon:x:1001:' >> /etc/group
echo 'magnet:x:1100:ganglia,smon' >> /etc/group
echo "127.0.0.1 localhost node0" > /etc/hosts
hostname node0

unload_all
load_magnet
check "two namespaces joined by a veth pair" netns_pair

# conf SOCKET-LINES: magnetd's configuration (lib.sh's v6_sends_conf) with
# these lines in its socket section.
conf() { v6_sends_conf $CONF $S "$1"; }
start_magnetd() {
	magnetd -c $CONF >> /tmp/md.log 2>&1 &
	MD=$!
	wait_for 30 healthy
}
stop_magnetd() {
	kill -TERM $MD
	wait $MD
}
# snap_as USER: a snapshot from magnetd as USER, into /tmp/as.out.
snap_as() {
	su "$1" -s /bin/sh -c "$M/bin/magnetctl daemon snapshot socket $S" > /tmp/as.out 2>&1 &&
		grep -q '^magnetd.health ' /tmp/as.out
}
refused_as() {
	! snap_as "$1" && grep -q "$S: Permission denied" /tmp/as.out
}
uid_of() { awk '$1 == "Uid:" { print $2 }' /proc/$1/status; }
is() { [ "$(metric "$1")" = "$2" ]; }
# send_200: 200 IPv6 datagrams from A to B, sent by magnet-test, which
# then stays (pid $SND) so that magnetd can name it; stop_sender ends it.
send_200() {
	inB magnet-test udp-recv fd09::2 5001 200 > /tmp/recv.out 2>&1 &
	rx=$!
	sleep 0.3
	# nsenter and env exec: $! is magnet-test's pid.
	nsenter -t $A -n env LINGER=120 magnet-test udp-send fd09::2 5001 200 100 > /dev/null &
	SND=$!
	wait $rx
}
stop_sender() { kill $SND; wait $SND 2>/dev/null; }
# named_in_top FILE: magnetd's snapshot in FILE ranks the sender first,
# by pid and name.
named_in_top() {
	grep -qE "^ *v6-sends +1 +$SND +200 +magnet-test *\$" "$1" ||
		{ echo "# sender $SND; the snapshot's ranking:"; grep -vE ' (counter|gauge) ' "$1"; false; }
}

# --- magnetd's socket: mode and group -------------------------------------------

conf '	group = "magnet"'
check "group magnet, mode 0660 (the default): magnetd starts" start_magnetd
check "... the socket is root's, group magnet, mode 660" \
	sh -c "[ \"\$(stat -c '%U %G %a' $S)\" = 'root magnet 660' ]"
check "... a member of the group connects" snap_as smon
check "... nobody, not a member, is refused (Permission denied)" refused_as nobody
stop_magnetd

conf '	group = "magnet"
	mode = "0600"'
check "mode 0600: magnetd starts" start_magnetd
check "... the socket's mode is 600" sh -c "[ \"\$(stat -c %a $S)\" = 600 ]"
check "... the group's members are refused too" refused_as smon
stop_magnetd

conf '	mode = "0666"'
check "mode 0666: magnetd starts" start_magnetd
check "... anyone connects, nobody too" snap_as nobody
stop_magnetd

conf '	group = "no-such-group"'
magnetd -n -c $CONF > /tmp/check.out 2>&1
rc=$?
cat /tmp/check.out
check "a group that does not exist: --check fails (exit status 1)" [ $rc -eq 1 ]
check "... naming the group, the file and the line" \
	grep -q "$CONF:3.*group \"no-such-group\": no such group" /tmp/check.out
timeout 30 magnetd -c $CONF > /tmp/start.out 2>&1
rc=$?
check "... and magnetd refuses to start (exit status 1)" [ $rc -eq 1 ]
check "... leaving no socket" [ ! -e $S ]
check "... and nothing in the kernel" \
	sh -c '[ -z "$(magnetctl probe list)" ] && ! magnetctl buffer list | grep -q "^ *net "'

# --- gmond as its own user --------------------------------------------------------------

# gmond as Debian's gmond.conf has it in what matters here: setuid = yes,
# user = ganglia. The module loads as root, then gmond drops to ganglia.
GMOND_USER=ganglia
gmond_conf $GCONF
unset GMOND_USER

# The socket as shipped (root's, 0660, no group): gmond's user is kept out.
conf ''
check "socket without a group: magnetd starts" start_magnetd
gmond -c $GCONF -m > /tmp/m.out 2> /tmp/m.err
check "gmond -m (as root) lists magnet's metrics" grep -q '^magnet_v6_sends_count[[:space:]]' /tmp/m.out
gmond -c $GCONF > $GLOG 2>&1 &
G=$!
serves_health() { xml | grep -q '<METRIC NAME="magnet_health"'; }
check "gmond serves its XML" wait_for 30 serves_health
check "... running as ganglia (uid 103)" [ "$(uid_of $G)" = 103 ]
check "... where the module cannot reach magnetd: magnet_health 0" wait_for 15 gis magnet_health 0
cat $GLOG
check "... and the log says why, naming gmond's user" \
	grep -q "\[magnet\] magnetd at $S cannot be reached (Permission denied): its socket's mode and group (magnetd.conf) do not admit gmond's user ganglia" $GLOG

# The group docs/usage.md says, ganglia: the running gmond recovers by itself.
stop_magnetd
conf '	group = "ganglia"'
check "socket group ganglia: magnetd restarts" start_magnetd
check "... gmond's module reaches it: magnet_health 1" wait_for 15 gis magnet_health 1
check "... and logs that it is back" grep -q "magnetd at $S is back" $GLOG
base=$(gval magnet_v6_sends_count)
send_200
check "magnetd counted 200 sends" wait_for 10 is v6-sends.count 200
check "... and gmond, as ganglia, reads 200 more ($base before)" \
	wait_for 15 gis magnet_v6_sends_count $((base + 200))

# Nothing beyond the metrics: magnetd's snapshot names the busiest
# processes (for its socket's users); gmond's XML does not.
magnetctl daemon snapshot socket $S > /tmp/snap.txt
check "magnetd's snapshot names the sender (magnet-test)" named_in_top /tmp/snap.txt
sleep 2		# a refresh of the module's
xml > /tmp/x.xml
check "gmond's XML does not" sh -c '! grep -q magnet-test /tmp/x.xml'
stop_sender
grep -o '<METRIC NAME="magnet_[^"]*"' /tmp/x.xml | sed 's/.*NAME="//; s/"$//' > /tmp/x.names
awk '/^magnet_/ { print $1 }' /tmp/m.out > /tmp/m.names
check "every magnet_ metric in the XML is one gmond -m listed ($(wc -l < /tmp/x.names))" \
	sh -c '[ -s /tmp/x.names ] && ! grep -qvxF -f /tmp/m.names /tmp/x.names'
check "... and all are numbers (TYPE double)" \
	sh -c '! grep "<METRIC NAME=\"magnet_" /tmp/x.xml | grep -qv "TYPE=\"double\""'
kill -TERM $G
wait $G 2>/dev/null

# --- magnet-supermon as an unprivileged user -----------------------------------------

stop_magnetd
conf '	group = "magnet"'
check "socket group magnet: magnetd restarts" start_magnetd

su smon -s /bin/sh -c "exec $M/bin/magnet-supermon -l 127.0.0.1 -p $PORT -s $S -r 1 -n node0" \
	> /tmp/sm.log 2>&1 &
SM=$!
# ask REQUESTS: the answers (busybox nc stops at the end of its input:
# keep it open while the answers come).
ask() { { printf "$1"; sleep 1; } | timeout 10 nc 127.0.0.1 $PORT; }
serves() { ask 'S\n' | grep -q "$1"; }
check "magnet-supermon as smon serves, with health 1" wait_for 15 serves '(health 1)'
check "... running as smon (uid 1001)" [ "$(uid_of $SM)" = 1001 ]
send_200
check "magnetd counted 200 sends" wait_for 10 is v6-sends.count 200
magnetctl daemon snapshot socket $S > /tmp/snap.txt
check "... and names the sender" named_in_top /tmp/snap.txt
sleep 2		# a refresh of magnet-supermon's
ask 'S\n' > /tmp/sample.txt
v6_sends_200() {
	grep -oE '\(v6-sends \(mask 0x[0-9a-f]+\) \(node 0x[0-9a-f]+\)( \([^ ()]+ [0-9]+\))*\)' /tmp/sample.txt |
		grep -q '(count 200)'
}
check "its sample has the 200 sends" v6_sends_200
check "... and not the sender's name" sh -c '! grep -q magnet-test /tmp/sample.txt'
stop_sender

# Whatever a client sends changes nothing: magnetd's own requests (release
# would close its data files), and every other single byte as a line.
# The configuration and magnetd's state, not the counters (stray IPv6
# traffic on the veth pair, neighbour discovery, hits the udp-recv probes)
# nor the tables' widths.
state() {
	magnetctl probe list | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
	magnetctl buffer list
	magnetctl daemon snapshot socket $S |
		awk '$1 ~ /^magnetd\.(health|attaches|reloads)$/ { print $1, $4 }'
}
state > /tmp/state-before.txt
reqs='release\nattach\nsnapshot\nsubscribe event v6-sends\nsubscribe threshold v6-sends.count > 0\nunsubscribe 1\n'
i=1
while [ $i -le 255 ]; do
	case $i in 10 | 35 | 83) ;; *) reqs="$reqs\\$(printf %03o $i)\n" ;; esac
	i=$((i + 1))
done
nreq=$(printf "$reqs" | wc -l)
ask "$reqs" > /tmp/answers.txt
nerr=$(grep -c '^(error "' /tmp/answers.txt)
check "$nreq other requests: $nerr answers, every one an error" [ "$nerr" -eq "$nreq" ]
check "... and nothing else" [ "$(grep -vc '^(error "\|^$' /tmp/answers.txt)" -eq 0 ]
state > /tmp/state-after.txt
same_state() {
	cmp -s /tmp/state-before.txt /tmp/state-after.txt ||
		{ diff /tmp/state-before.txt /tmp/state-after.txt; false; }
}
check "... magnetd and the kernel as before (still attached, nothing reloaded)" same_state
check "magnet-supermon still serves" serves '(health 1)'
kill -TERM $SM
wait $SM
check "magnet-supermon exits 0 on SIGTERM" [ $? -eq 0 ]

stop_magnetd
check "magnetd exits cleanly" [ $? -eq 0 ]

# --- sessions: a user's capture ---------------------------------------------------
# smon with CAP_NET_ADMIN (as setcap would give magnet-read) captures in a
# session of its own; debugfs opened up to let users through, as an
# administrator may.
chmod 755 /sys/kernel/debug
$M/bin/setpriv --reuid=smon --regid=smon --init-groups --inh-caps=+net_admin \
	--ambient-caps=+net_admin $M/bin/magnet-read -n -q -P udp-send \
	> /tmp/smon-cap.out 2> /tmp/smon-cap.err &
SC=$!
check "smon, with CAP_NET_ADMIN, captures with magnet-read -P" \
	wait_for 30 grep -q '^magnet-read: capturing on udp-send ' /tmp/smon-cap.err
cat /tmp/smon-cap.err
sid=$(magnetctl session list | awk -v p=$SC '$3 == p { print $1 }')
check "its session is smon's (uid 1001)" \
	sh -c "magnetctl session list | awk -v p=$SC '\$3 == p && \$2 == 1001' | grep -q ."
D=/sys/kernel/debug/magnet/data/$sid
check "... so are its directory (0700) and its buffer" \
	sh -c "[ \"\$(stat -c '%u %a' $D)\" = '1001 700' ] && [ \"\$(stat -c %u $D/default)\" = 1001 ]"
check "nobody lists the session" \
	sh -c "su nobody -s /bin/sh -c '$M/bin/magnetctl session list' | awk -v s=$sid '\$1 == s' | grep -q ."
check_fails "... but cannot open its data" \
	su nobody -s /bin/sh -c "cat $D/default > /dev/null"
check_fails "... nor end it (no CAP_NET_ADMIN)" \
	su nobody -s /bin/sh -c "$M/bin/magnetctl session del $sid"
inA magnet-test udp-send 10.9.0.2 5009 3 100 > /dev/null
interrupt $SC
wait $SC
check "smon's capture exits 0, having read its records" \
	sh -c "[ $? -eq 0 ] && grep -q '[1-9][0-9]* packets captured' /tmp/smon-cap.err"
check "... and its session is gone" sh -c "[ -z \"\$(magnetctl session list | sed 1d)\" ]"
chmod 700 /sys/kernel/debug
kill $A $B 2>/dev/null
unload_all
summary

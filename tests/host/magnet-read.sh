#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# magnet-read on the host, without the kernel module: trace files made by
# magnet-tracegen.py (packets of every layer, UDP and TCP, IPv4 and IPv6,
# two CPUs out of order, a reused skb, a loss, other records, a JOURNEY
# record) printed, filtered, converted to pcapng and read back by tcpdump
# and tshark where the host has them.
#
# Usage: tests/host/magnet-read.sh [MAGNET_READ]   (default build/bin/magnet-read)
# Prints the tests' one format (tests/harness.h): "ok - ..." /
# "not ok - ..." lines, then "N passed, M failed"; exits 1 if any failed.

top=$(cd "$(dirname "$0")/../.." && pwd)
MR=${1:-$top/build/bin/magnet-read}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TZ=UTC LC_ALL=C
n=0
failed=0

ok() { n=$((n + 1)); echo "ok - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok - $1"; }
# check DESCRIPTION COMMAND...: passes if COMMAND succeeds
check() {
	d=$1
	shift
	if "$@" > /dev/null 2>&1; then ok "$d"; else not_ok "$d"; fi
}
# same TEXT EXPECTED DESCRIPTION
same() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		not_ok "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" | head -20
	fi
}
# mr ARGS...: run magnet-read; stdout in $T/out, stderr in $T/err, status in $rc
mr() {
	"$MR" "$@" > "$T/out" 2> "$T/err"
	rc=$?
}
packets() { grep -E '^([0-9]{2}:){2}[0-9]{2}\.[0-9]{9} IP6? ' "$T/out"; }
skip() { echo "ok - $1 # SKIP"; }

if ! command -v python3 > /dev/null; then
	skip "python3 missing: no trace files to read"
	exit 0
fi
[ -x "$MR" ] || { echo "not ok - $MR is not built"; exit 1; }
GEN="python3 $top/tests/host/magnet-tracegen.py"
$GEN "$T/t.mtr"

# --- journeys, text ------------------------------------------------------------
mr -r "$T/t.mtr" -n
check "reads a trace file (status 0)" test "$rc" -eq 0
same "$(packets | cut -c20-)" "IP 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100
IP6 2001:db8::1.40001 > 2001:db8::2.5002: UDP, length 50
IP6 2001:db8::1.40001 > 2001:db8::2.5002: UDP, length 20
IP 10.0.0.1.45000 > 10.0.0.2.5201: Flags [P.], seq 1:301, ack 7001, win 502, length 300
IP 10.0.0.1.45000 > 10.0.0.2.5201: Flags [P.], seq 301:401, ack 7001, win 502, length 100
IP 10.0.0.2.5201 > 10.0.0.1.45000: Flags [.], ack 301, win 512, length 0
IP 10.0.0.1.40002 > 10.0.0.53.53: UDP, length 30
IP 10.0.0.2.41000 > 10.0.0.1.9999: UDP, length 12" \
	"eight packets, one line each, as tcpdump words them, in time order"
same "$(packets | cut -c1-18 | head -1)" "14:02:03.000000000" \
	"wall clock time from the trace file's offset"
same "$(sed -n '2,11p' "$T/out" | awk '{ print $1 }' | tr '\n' ' ')" \
	"socket udp ip dev-queue dev-xmit dev-recv ip udp sock-queue app " \
	"loopback UDP journey: ten layers, send to app"
same "$(sed -n '11p' "$T/out")" \
	"    app        14:02:03.000040000    +22.000 us cpu 1 2000/2001 lo" \
	"layer line: time, delta, CPU, TGID/TID, device"
same "$(sed -n '7p' "$T/out" | awk '{ print $7, $8 }')" "softirq 1000/1000" \
	"layer line names the context"
same "$(grep -c '^    dev-xmit ' "$T/out")" 6 \
	"a reused skb starts a new journey (six packets left a device)"
same "$(grep -A4 '2001:db8::2.5002: UDP, length 20' "$T/out" | sed 1d | awk '{ print $1 }' | tr '\n' ' ')" \
	"socket udp ip dev-queue " "the second packet on the reused skb has its own send call"
same "$(grep -A4 'seq 301:401' "$T/out" | sed 1d | awk '{ print $1 }' | tr '\n' ' ')" \
	"tcp ip dev-queue dev-xmit " "tcp segment joins its IP layer by socket and CPU"
same "$(grep -E 'LOST|length 20$|seq 1:301' "$T/out" | awk '{ print $NF }' | tr '\n' ' ')" \
	"20 made) 300 " "the loss line stands in time order between packets"
check "other records keep their line" grep -qE \
	'^1000\.000010000 cpu 1 ev 102 hardirq 3000/3000 id 0x22 len 16$' "$T/out"
check "JOURNEY record printed with its records" grep -qE \
	'^    1000\.000068000 cpu 0 ev 104 1000/1000 id 0x33 len 0$' "$T/out"
check "summary: packets" grep -qx \
	'magnet-read: 8 packets captured, 0 filtered, 1 without packet data' "$T/err"
check "summary: records (the line the suites read)" grep -qx \
	'magnet-read: 41 records, 3 lost' "$T/err"
same "$(head -1 "$T/err")" "magnet-read: reading from file $T/t.mtr" \
	"one line to start, naming the file read (tcpdump's \"reading from file\")"
check "per-hop statistics on stderr" grep -qE \
	'^  sock-queue -> app +1 +22\.000 +22\.000 +22\.000 +22\.000$' "$T/err"
check "per-hop statistics: count, min, median, p99, max" grep -qE \
	'^  dev-recv -> ip +3 +2\.000 +3\.000 +5000\.000 +5000\.000$' "$T/err"

mr -r "$T/t.mtr" -n --journey-timeout 1
same "$(packets | wc -l)" 9 "--journey-timeout 1: a 5 ms gap splits a journey"
mr -r "$T/t.mtr"
check "without -n: names from /etc/services" grep -q '10\.0\.0\.53\.domain: UDP' "$T/out"

# --- -c, -i, -q, -x -------------------------------------------------------------
mr -r "$T/t.mtr" -n -c 3 udp
same "$(packets | wc -l)" 3 "-c 3 udp: three packets"
mr -r "$T/t.mtr" -n -c 2
same "$(grep -vc '^    ' "$T/out")" 2 "-c 2 counts packets and records alike"
mr -r "$T/t.mtr" -n -i lo
same "$(packets | wc -l)/$(grep -c ' ev ' "$T/out")" "1/0" \
	"-i lo: only the loopback packet, no other records"
mr -r "$T/t.mtr" -n -i eth0
same "$(packets | wc -l)" 7 "-i eth0: seven packets"
mr -r "$T/t.mtr" -n -q
same "$(wc -l < "$T/out")/$(packets | wc -l)" "8/8" "-q: one line per packet, nothing else"
check "-q: tcp as tcpdump -q" grep -q '10.0.0.2.5201: tcp 300$' "$T/out"
mr -r "$T/t.mtr" -n -x -c 1
same "$(sed -n '12p' "$T/out")" "$(printf '\t0x0000:  4500 0080 1234 4000 4011 %s 7f00 0001' \
	"$(sed -n '12p' "$T/out" | awk '{ print $7 }')")" "-x: hex of the packet from its IP header"
mr -r "$T/t.mtr" -n -x -s 16 -c 1
same "$(grep -c '	0x' "$T/out")" 1 "-s 16 keeps 16 bytes"

# --- JSON --------------------------------------------------------------------------
mr -r "$T/t.mtr" -j
bad=0
while IFS= read -r line; do
	printf '%s\n' "$line" | python3 -m json.tool > /dev/null 2>&1 || bad=$((bad + 1))
done < "$T/out"
same "$bad" 0 "-j: every line is JSON"
same "$(grep -c '"type":"packet"' "$T/out")/$(grep -c '"type":"record"' "$T/out")/$(grep -c '"type":"loss"' "$T/out")/$(grep -c '"type":"summary"' "$T/out")" \
	"8/4/1/1" "-j: packets, records, loss, summary"
check "-j: journey array with layer, delta_ns, cpu, tgid, dev" grep -q \
	'"layer":"app","ts":1000000040000,"time_ns":"1704204123000040000","delta_ns":22000,"cpu":1,"context":"task","tgid":2000,"tid":2001,"len":100,"dev":"lo"' "$T/out"
check "-j: hop statistics in the summary" grep -q \
	'"hop":"sock-queue -> app","count":1,"min_us":22.000' "$T/out"
same "$(python3 -c '
import json, sys
ts = [json.loads(l)["ts"] for l in open(sys.argv[1]) if "\"ts\"" in l[:30]]
print(ts == sorted(ts), len(ts))' "$T/out")" "True 13" "-j: items in timestamp order"
check "-j: no statistics on stderr" sh -c "! grep -q 'latency' '$T/err'"

# --- expressions -----------------------------------------------------------------------
expr_count() { # expr_count EXPECTED_PACKETS/EXPECTED_RECORDS EXPR...
	want=$1
	shift
	mr -r "$T/t.mtr" -n "$@"
	same "$(packets | wc -l)/$(grep -c ' ev ' "$T/out")" "$want" "expression: $*"
}
expr_count 5/0 udp
expr_count 2/0 tcp and dst port 5201
expr_count 1/0 src host 10.0.0.2 and tcp
expr_count 2/0 src 10.0.0.2
expr_count 2/0 ip6
expr_count 5/0 net 10.0.0.0/24
expr_count 2/0 dst net 2001:db8::/32
expr_count 2/0 host 2001:db8::2
expr_count 3/0 portrange 5000-5100
expr_count 3/0 not udp
expr_count 6/0 '(udp or tcp)' '&&' '!ip6'
expr_count 1/0 udp port domain
expr_count 2/0 tcp dst port 5201 or tcp src port 9
expr_count 1/0 'udp and (dst port 53 || dst port 54)'
check "filtered packets are counted" grep -qx \
	'magnet-read: 1 packets captured, 7 filtered, 1 without packet data' "$T/err"
# tcpdump's language beyond what magnet-read once parsed itself
expr_count 2/0 'tcp[tcpflags] & tcp-push != 0'
expr_count 1/0 'tcp[tcpflags] = tcp-ack'
expr_count 5/0 'ip[8] = 64'
expr_count 4/0 greater 100
# (the packet over lo goes out and comes in: tcpdump -i any sees it both ways)
expr_count 3/0 inbound
expr_count 6/0 outbound
expr_count 1/0 ifindex 1
expr_count 3/0 proto 17 and ip
expr_count 3/0 'ip proto \udp'
# magnet's selectors are options
expr_count 1/0 --tgid 2000
expr_count 1/0 --tgid 1,2000
expr_count 5/2 --cpu 1
expr_count 2/0 --cpu 1 udp and ip
expr_count 1/0 -i lo
expr_count 1/0 -i eth9 -i lo
expr_count 8/6 -i any
mr -r "$T/t.mtr" -n udp port 53
check "a packet without IP bytes is matched on headers built from its records" \
	grep -q 'headers built from the records of 1 packets' "$T/err"
printf 'tcp and\n  dst port 5201\n' > "$T/filter"
expr_count 2/0 -F "$T/filter"
# The same expression on the same packets as tcpdump runs it: the packets
# that kept their IP bytes, written to pcapng (-w) unfiltered, and
# each expression's selection written by magnet-read.
if command -v tcpdump > /dev/null; then
	"$MR" -r "$T/t.mtr" -w "$T/all.pcapng" 2> /dev/null
	for e in udp 'tcp[13] & 8 != 0' 'ip[8] = 64' 'ip6[6] = 17' \
		 'udp[4:2] > 20' 'ip[2:2] > 100' 'tcp[tcpflags] & (tcp-syn|tcp-fin) = 0' \
		 'ip and not tcp' 'src portrange 40000-41000' 'ip6 or dst port 9999' \
		 'tcp[((tcp[12:1] & 0xf0) >> 2):4] != 0'; do
		"$MR" -r "$T/t.mtr" -w "$T/sel.pcapng" "$e" 2> /dev/null
		same "$(tcpdump -r "$T/sel.pcapng" 2> /dev/null | wc -l)" \
		     "$(tcpdump -r "$T/all.pcapng" "$e" 2> /dev/null | wc -l)" \
		     "'$e' selects what tcpdump selects"
	done
else
	skip "tcpdump missing: the expressions not held against it"
fi
# a bad expression: one line, status 1, as tcpdump (its words, where the
# host has it: libpcap's message after the program's name)
bad_expr() { # bad_expr MESSAGE-PART EXPR...
	part=$1
	shift
	mr -r /nonexistent "$@"
	if [ "$rc" -eq 1 ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
	   grep -q "^magnet-read: .*$part" "$T/err"; then
		ok "bad expression '$*': status 1, one line"
	else
		not_ok "bad expression '$*': status $rc: $(cat "$T/err")"
	fi
	if command -v tcpdump > /dev/null; then
		td=$(tcpdump -y LINUX_SLL2 -d "$*" 2>&1)
		tdrc=$?
		same "$rc:$(sed 's/^magnet-read: /tcpdump: /' "$T/err")" "$tdrc:$td" \
			"... as tcpdump says it, with its status"
	fi
}
mr -r /nonexistent 'foo bar'
same "$rc:$(cat "$T/err")" "1:magnet-read: can't parse filter expression: syntax error" \
	"a bad expression: tcpdump's words and status"
bad_expr 'syntax error' port
bad_expr 'syntax error' udp and
bad_expr 'syntax error' foo
bad_expr 'syntax error' '( udp'
bad_expr 'syntax error' 'udp )'
bad_expr 'illegal port number 70000' port 70000
bad_expr 'mask length must be <= 32' net 10.0.0.0/33
bad_expr 'unknown host' host no-such-host.invalid
mr -r /nonexistent --tgid x
check "a bad --tgid: status 2" test "$rc" -eq 2
mr -r /nonexistent --cpu 1-
check "a bad --cpu: status 2" test "$rc" -eq 2
mr -r "$T/t.mtr" -F "$T/filter" udp
check "-F and an expression on the command line: status 2" test "$rc" -eq 2

# --- tcpdump's flags -----------------------------------------------------------------------
mr -r "$T/t.mtr" -n -q -t
same "$(packets | wc -l)" 0 "-t: packet lines start with no time"
same "$(grep -c '^IP6\{0,1\} ' "$T/out")" 8 "-t: the packet lines start with IP or IP6"
mr -r "$T/t.mtr" -n -q -tt
check "-tt: seconds since the epoch, nanoseconds" grep -qx \
	'1704204123.000000000 IP 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100' "$T/out"
mr -r "$T/t.mtr" -n -q -tt --time-stamp-precision=micro
check "--time-stamp-precision=micro: six digits" grep -qx \
	'1704204123.000000 IP 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100' "$T/out"
mr -r "$T/t.mtr" -n -q -ttt
check "-ttt: since the packet before" grep -q \
	'^00:00:00.000003000 IP6 2001:db8::1.40001 > 2001:db8::2.5002: UDP, length 50$' "$T/out"
mr -r "$T/t.mtr" -n -q -tttt
check "-tttt: with the date" grep -q \
	'^2024-01-02 14:02:03.000000000 IP 127.0.0.1.40000 > ' "$T/out"
mr -r "$T/t.mtr" -n -q -ttttt
check "-ttttt: since the first packet" grep -q \
	'^00:00:02.000000000 IP 10.0.0.2.41000 > 10.0.0.1.9999: UDP, length 12$' "$T/out"
mr -r "$T/t.mtr" -n -q -tttttt
check "-tttttt: status 2" test "$rc" -eq 2
mr -r "$T/t.mtr" -n -q -X udp port 5001
check "-X: hex and ASCII" grep -q '^	0x0000:  4500 0080 .*  E\.\.' "$T/out"
mr -r "$T/t.mtr" -n -q -A udp port 5001
check "-A: the bytes as ASCII" sh -c "sed -n 2p '$T/out' | grep -q '^E'"
mr -r "$T/t.mtr" -d udp
check "-d: the compiled program, as tcpdump prints it" grep -q '^(000) ldh ' "$T/out"
mr -r "$T/t.mtr" -dd
check "-dd: as C" grep -q '^{ 0x6, 0, 0, 0x00040000 },$' "$T/out"
mr --version
check "--version: magnet-read's and libpcap's" sh -c \
	"grep -q '^magnet-read version ' '$T/out' && grep -q '^libpcap version ' '$T/out'"
mr -D
check "-D: any, and the devices, with their index and flags" \
	sh -c "grep -q '^1\.any ' '$T/out' && grep -q '^[0-9]*\.lo (ifindex 1) \[.*Loopback\]$' '$T/out'"
# a device of another namespace: listed, and a name -i takes (a live
# capture checks -i's devices before it looks for the module)
if [ "$(id -u)" = 0 ] && command -v ip > /dev/null &&
   unshare -n true 2> /dev/null; then
	unshare -n sh -c "ip link add mrva0 type veth peer name mrvb0 &&
		ip link set mrva0 up && touch '$T/ns-up' && exec sleep 30" 2> /dev/null &
	ns=$!
	i=0
	while [ ! -e "$T/ns-up" ] && kill -0 $ns 2> /dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ -e "$T/ns-up" ]; then
		mr -D
		check "-D: a device of another namespace, with its index, namespace and flags" \
			grep -qE "^[0-9]+\.mrva0 \(ifindex [0-9]+, netns of pid $ns: sleep\) \[Up\]$" "$T/out"
		name=$(sed -n "s/^[0-9]*\.\(mrva0\) (.*/\1/p" "$T/out")
		mr -N -i "$name"
		check "... -i takes the name -D printed" \
			sh -c "[ -n '$name' ] && ! grep -q 'no such device' '$T/err'"
		mr -N -i mrva9
		check "... and refuses one no namespace has" grep -q 'mrva9: no such device' "$T/err"
	else
		skip "no veth pair in a new network namespace here: -D of another namespace not tried"
	fi
	kill $ns 2> /dev/null
	wait $ns 2> /dev/null
fi
mr -r "$T/t.mtr" -n -v -q -t
# (packets that kept no IP bytes are not in the pcapng file: apart)
awk '/^IP \(proto / { skip = 2 } skip { skip--; next } { print }' "$T/out" > "$T/v-mine"
check "-v, a packet that kept no IP bytes: the protocol and the length" \
	grep -q '^IP (proto UDP (17), length 58)$' "$T/out"
mr -r "$T/t.mtr" -n -q -w "$T/v.pcapng"
# (tcpdump sees a packet once on each device and direction: over lo,
# going out and coming in; its lines start with the device and direction)
tcpdump -r "$T/v.pcapng" -n -v -q -t 2> /dev/null |
	sed -E 's/\[(bad udp cksum [^]]*|udp sum ok)\] //; s/^[^ ]+ +(In|Out) +//' |
	awk '/^IP/ { if ($0 == last) { skip = 1; next } last = $0; skip = 0 } !skip' > "$T/v-tcpdump"
check "-v: the IP header's fields, as tcpdump -v prints them (checksums aside)" \
	sh -c "[ -s '$T/v-mine' ] && cmp -s '$T/v-mine' '$T/v-tcpdump'"
# -e: the cooked header's fields, as tcpdump -e prints them, each device
# and direction on one line (tcpdump: a line each)
elines() { grep -E '^([0-9]{2}:){2}[0-9]{2}\.[0-9]{9} ' "$T/out"; }
mr -r "$T/t.mtr" -n -e 'not host 10.0.0.53'
same "$(elines | head -1 | cut -c20-)" \
	"lo Out ifindex 1, lo In ifindex 1 ethertype IPv4 (0x0800), length 148: 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100" \
	"-e: the devices and directions, the ethertype, the frame's length"
if command -v tcpdump > /dev/null; then
	# (UDP: tcpdump prints TCP's options, which magnet-read does not)
	elines | grep UDP | sed 's/.* ethertype/ethertype/' > "$T/e-mine"
	"$MR" -r "$T/t.mtr" -w "$T/e.pcapng" 2> /dev/null
	tcpdump -r "$T/e.pcapng" -n -e udp 2> /dev/null | grep ethertype |
		sed 's/.* ethertype/ethertype/' | uniq > "$T/e-tcpdump"
	check "-e: what follows the devices is what tcpdump -e prints" \
		sh -c "[ -s '$T/e-mine' ] && cmp -s '$T/e-mine' '$T/e-tcpdump'"
fi
mr -r "$T/t.mtr" -n -e -q udp
same "$(elines | head -1 | cut -c20-)" \
	"lo Out ifindex 1, lo In ifindex 1 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100" \
	"-e -q: the devices only, as tcpdump -e -q"
mr -r "$T/t.mtr" -n -vv
check "-vv: each layer's skb, socket, length and bytes kept" \
	grep -q '^        skb 0x[0-9a-f]* sock 0x[0-9a-f]* len [0-9]* kept [0-9]* from the IP header$' "$T/out"
cp "$T/out" "$T/vv.txt"
mr -r "$T/t.mtr" -n -vvv
check "-vvv: prints as -vv (tcpdump takes it)" \
	sh -c "[ $rc -eq 0 ] && cmp -s '$T/vv.txt' '$T/out'"
mr -r "$T/t.mtr" -B 4096
check "-B sizes -P's buffer: without -P, refused with why" \
	sh -c "[ $rc -eq 2 ] && grep -q '^magnet-read: -B sizes the buffer -P makes' '$T/err'"
for f in -p -I '-y EN10MB' -L -K -O '-Q in'; do
	mr -r "$T/t.mtr" $f
	if [ "$rc" -eq 2 ] && [ "$(wc -l < "$T/err")" -eq 2 ] &&
	   grep -q "^magnet-read: ${f%% *}: " "$T/err"; then
		ok "tcpdump's $f is refused, with why"
	else
		not_ok "tcpdump's $f: status $rc: $(cat "$T/err")"
	fi
done
if [ "$(id -u)" = 0 ]; then
	chmod 1777 "$T"
	mr -r "$T/t.mtr" -Z nobody -w "$T/z.pcapng" --trace "$T/z.mtr" \
		--perfetto "$T/z.json"
	same "$rc:$(stat -c %U "$T/z.pcapng" "$T/z.mtr" "$T/z.json" | tr '\n' ' ')" \
		"0:nobody nobody nobody " \
		"-Z nobody: -w's, --trace's and --perfetto's files are made as nobody"
	mkdir "$T/root-only"
	mr -r "$T/t.mtr" -Z nobody -w "$T/root-only/z.pcapng"
	same "$rc:$(cat "$T/err"):$(ls "$T/root-only")" \
		"1:magnet-read: $T/root-only/z.pcapng: Permission denied:" \
		"-Z nobody: a file where nobody may not write is refused, as to nobody"
	rmdir "$T/root-only"
	mr -r "$T/t.mtr" -Z no-such-user-here -q
	check "-Z: an unknown user is an error" sh -c \
		"[ $rc -eq 1 ] && grep -q 'no such user' '$T/err'"
fi
mr -r "$T/t.mtr" -w "$T/u.pcapng" -U
check "-U: the pcapng file is written" sh -c "tcpdump -r '$T/u.pcapng' 2> /dev/null | grep -q ."

# --- trace files ---------------------------------------------------------------------------
mr -r "$T/t.mtr" --trace "$T/copy.mtr" --print -n 'udp or tcp'
cp "$T/out" "$T/live.txt"
cp "$T/err" "$T/live.err"
mr -r "$T/copy.mtr" -n 'udp or tcp'
check "--trace FILE --print EXPR and -r FILE EXPR print the same" cmp "$T/live.txt" "$T/out"
same "$(sed 1d "$T/live.err")" "$(sed 1d "$T/err")" \
	"... and say the same on stderr, after the line naming the file read"
# (the copy's header is 144 bytes: after the 72, the capturing host's name
# and its wall clock's bound)
tail -c +73 "$T/t.mtr" > "$T/t.records"
tail -c +145 "$T/copy.mtr" > "$T/copy.records"
check "--trace saves every record, unfiltered, as read" cmp "$T/t.records" "$T/copy.records"
same "$(dd if="$T/copy.mtr" bs=1 skip=72 count=64 2> /dev/null | tr -d '\000')" "" \
	"--trace: a copy of a file that names no host names none (not this one)"
$GEN --spans --host nodex "$T/hx.mtr"
mr -r "$T/hx.mtr" --trace "$T/hx-copy.mtr"
same "$(dd if="$T/hx-copy.mtr" bs=1 skip=72 count=64 2> /dev/null | tr -d '\000')" "nodex" \
	"--trace: a copy names the host that captured the records (for the spans' host.name)"
mr -r "$T/t.mtr" --trace "$T/copy2.mtr" tcp
same "$(wc -c < "$T/out")" 0 "--trace without --print prints nothing"
$GEN --v1 "$T/v1.mtr"
mr -r "$T/v1.mtr" -n -q
same "$rc:$(head -1 "$T/out")" \
	"0:1000.000000000 IP 127.0.0.1.40000 > 127.0.0.1.5001: UDP, length 100" \
	"version 1 trace files are read (times as CLOCK_MONOTONIC)"
$GEN --truncate "$T/trunc.mtr"
mr -r "$T/trunc.mtr" -n
same "$rc:$(sed 1d "$T/err")" "1:magnet-read: $T/trunc.mtr: truncated: ends inside a record at byte $(($(wc -c < "$T/t.mtr") - 176))" \
	"truncated file: one line after the one that starts, status 1"
$GEN --garbage "$T/garbage.mtr"
mr -r "$T/garbage.mtr" -n
same "$rc:$(sed 1d "$T/err")" "1:magnet-read: $T/garbage.mtr: damaged record at byte 272" \
	"damaged file: one line after the one that starts, status 1"
echo "not a trace" > "$T/bad.mtr"
mr -r "$T/bad.mtr"
same "$rc:$(cat "$T/err")" "1:magnet-read: $T/bad.mtr is neither a magnet trace file nor a pcapng file" \
	"neither a trace file nor pcapng: one line, status 1"
printf 'MAGNETTR\011\0\0\0\110\0\0\0' > "$T/future.mtr"
mr -r "$T/future.mtr"
check "newer trace file version: refused, says why" grep -q 'version 9 trace file' "$T/err"
head -c 72 "$T/t.mtr" > "$T/empty.mtr"
mr -r "$T/empty.mtr"
same "$rc:$(tail -1 "$T/err")" "0:magnet-read: 0 records, 0 lost" "a trace file without records"

# --- wall clock times far from now -------------------------------------------------------
# An offset putting the first record half a second before the epoch: the
# second before it, and positive nanoseconds.
$GEN --offset -1000500000000 "$T/epoch.mtr"
mr -r "$T/epoch.mtr" -n
same "$rc:$(packets | cut -c1-18 | head -1)" "0:23:59:59.500000000" \
	"a wall time before the epoch: the second before, nanoseconds positive"
same "$(sed -n '11p' "$T/out" | awk '{ print $2 }')" "23:59:59.500040000" \
	"... on the layer lines too"
check "... and no negative field anywhere" sh -c "! grep -q '\.-' '$T/out'"
mr -r "$T/epoch.mtr" -j
same "$(head -1 "$T/out" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["ts"], d["time_ns"])')" \
	"1000000000000 -500000000" "-j: time_ns before the epoch, exact (negative)"
# Timestamps of 9e18 ns with the usual offset: the wall time (the year
# 2309) is past what a signed 64-bit count of nanoseconds holds (and its
# sum overflowed one); near 2^64, in the year 2608, even more so.
$GEN --t0 9000000000000000000 --offset 1703204123000000000 "$T/big.mtr"
mr -r "$T/big.mtr" -n
same "$rc:$(packets | cut -c1-18 | head -1)" "0:16:15:23.000000000" \
	"a wall time beyond 64 bits of nanoseconds: printed all the same"
mr -r "$T/big.mtr" -j
same "$rc:$(grep -c time_ns "$T/out")" "0:0" "... and no time_ns in JSON"
$GEN --t0 18446744000000000000 --offset 1703204123000000000 "$T/huge.mtr"
mr -r "$T/huge.mtr" -n
same "$rc:$(packets | cut -c1-18 | head -1)" "0:23:48:43.000000000" \
	"timestamps near 2^64: the wall time, not a negative one"
same "$(packets | wc -l)" 8 "... every packet"
mr -r "$T/huge.mtr" -j
bad=0
while IFS= read -r line; do
	printf '%s\n' "$line" | python3 -m json.tool > /dev/null 2>&1 || bad=$((bad + 1))
done < "$T/out"
same "$rc:$bad:$(grep -c '"ts":"18446744000000000000",' "$T/out")" "0:0:1" \
	"-j: every line is JSON, ts above 2^53 a string of every digit"
# jq reads numbers as doubles: a ts above 2^53 must come through whole
# (scripts/install-deps installs jq)
same "$(head -1 "$T/out" | jq -r .ts)" 18446744000000000000 \
	"... which jq reads whole"
check "-j: time_ns left out where the wall time does not fit in 64 bits" \
	sh -c "! grep -q time_ns '$T/out'"

# --- pcapng ------------------------------------------------------------------------------------
mr -r "$T/t.mtr" -w "$T/p.pcapng"
same "$rc:$(wc -c < "$T/out")" "0:0" "-w alone prints nothing"
check "-w: packets without bytes are counted" grep -qx \
	'magnet-read: 8 packets captured, 0 filtered, 1 without packet data' "$T/err"
mr -r "$T/t.mtr" -n -q
packets | grep UDP | grep -v '10.0.0.53' | cut -c20- > "$T/ours.txt"
if command -v tcpdump > /dev/null; then
	tcpdump -nn -r "$T/p.pcapng" > "$T/tcpdump.txt" 2> "$T/tcpdump.err"
	check "tcpdump -r reads it" test $? -eq 0
	# seven packets with bytes (one had none), the one over lo seen twice
	# (tcpdump names the devices by their index on the host that reads)
	same "$(tr -s ' ' < "$T/tcpdump.txt" | cut -d' ' -f3 | tr '\n' ,)" \
		"Out,In,Out,Out,Out,Out,In,In," \
		"tcpdump: each packet on each device and direction it passed"
	same "$(grep UDP "$T/tcpdump.txt" | tr -s ' ' | cut -d' ' -f4- | uniq)" \
		"$(cat "$T/ours.txt")" "tcpdump prints the UDP packets as magnet-read does"
	tcpdump --nano -nn -r "$T/p.pcapng" 2> /dev/null | head -2 | cut -c1-18 | tr '\n' ' ' > "$T/ts.txt"
	same "$(cat "$T/ts.txt")" "14:02:03.000007000 14:02:03.000012000 " \
		"nanosecond timestamps, wall clock: each when the packet was at the device (dev-queue out, dev-recv in)"
else
	skip "tcpdump not installed"
fi
if command -v tshark > /dev/null; then
	tshark -r "$T/p.pcapng" -T fields -E separator=, -e ip.src -e ipv6.src \
		-e udp.dstport -e tcp.dstport -e ip.len -e frame.len -e frame.cap_len \
		-e frame.packet_flags_direction > "$T/tshark.txt" 2> /dev/null
	# frames: the 20-byte cooked header, then the IP packet
	same "$(tr '\n' ' ' < "$T/tshark.txt")" "127.0.0.1,,5001,,128,148,148,0x00000002 127.0.0.1,,5001,,128,148,148,0x00000001 ,2001:db8::1,5002,,,118,118,0x00000002 ,2001:db8::1,5002,,,88,88,0x00000002 10.0.0.1,,,5201,340,360,80,0x00000002 10.0.0.1,,,5201,140,160,80,0x00000002 10.0.0.2,,,45000,52,72,72,0x00000001 10.0.0.2,,9999,,40,60,60,0x00000001 " \
		"tshark: addresses, ports, lengths (original and snapped), direction"
	tshark -r "$T/p.pcapng" -T fields -E separator=, -e frame.interface_name \
		-e sll.ifindex -e sll.pkttype > "$T/ifs.txt" 2> /dev/null
	same "$(tr '\n' ' ' < "$T/ifs.txt")" "lo,1,4 lo,1,0 eth0,2,4 eth0,2,4 eth0,2,4 eth0,2,4 eth0,2,0 eth0,2,0 " \
		"tshark: one interface per device (if_name), the cooked header's index and direction"
	tshark -r "$T/p.pcapng" -T fields -e frame.comment -c 1 > "$T/comment.txt" 2> /dev/null
	same "$(sed 's/\\n/\n/g' "$T/comment.txt" | awk '{ print $1 }' | tr '\n' ' ')" \
		"socket udp ip dev-queue dev-xmit dev-recv ip udp sock-queue app " \
		"tshark: the journey is the packet's comment"
	# the trace's loss (3 records) before the first TCP packet
	same "$(tshark -r "$T/p.pcapng" -T fields -e frame.drop_count 2> /dev/null | tr '\n' ,)" \
		",,,,3,,,," "tshark: the records lost before a packet are its drop count"
	# as tcpdump writes: only the packets (sightings) the expression and
	# -i select
	"$MR" -r "$T/t.mtr" -w "$T/in.pcapng" inbound 2> /dev/null
	same "$(tshark -r "$T/in.pcapng" -T fields -E separator=, -e frame.interface_name \
		-e frame.packet_flags_direction 2> /dev/null | tr '\n' ' ')" \
		"lo,0x00000001 eth0,0x00000001 eth0,0x00000001 " \
		"-w inbound: the packets coming in only (over lo: the one coming in)"
	"$MR" -r "$T/t.mtr" -w "$T/lo.pcapng" -i lo 2> /dev/null
	same "$(tshark -r "$T/lo.pcapng" -T fields -E separator=, -e frame.interface_name \
		-e frame.packet_flags_direction 2> /dev/null | tr '\n' ' ')" \
		"lo,0x00000002 lo,0x00000001 " "-w -i lo: the packets on lo only, out and in"
	# The Wireshark dissector, installed where Debian's Wireshark loads
	# Lua plugins, loaded from there.
	luadir=$(tshark -G folders 2> /dev/null | sed -n 's/^Global Lua Plugins:[[:space:]]*//p')
	make -s -C "$top" install-wireshark DESTDIR="$T/root" > /dev/null 2>&1
	check "make install puts magnet.lua in Wireshark's global Lua plugins folder ($luadir)" \
		test -n "$luadir" -a -s "$T/root$luadir/magnet.lua"
	lua="-X lua_script:$T/root$luadir/magnet.lua"
	tshark $lua -r "$T/p.pcapng" -T fields -E separator=';' -e magnet.nlayers \
		-e magnet.total_us -e magnet.layers -e magnet.hop.us -e magnet.hop.cpu \
		-e magnet.hop.context -e magnet.hop.tgid -e magnet.hop.dev \
		> "$T/lua.txt" 2> "$T/lua.err"
	same "$(head -1 "$T/lua.txt")" "10;40;socket,udp,ip,dev-queue,dev-xmit,dev-recv,ip,udp,sock-queue,app;0,2,3,2,1,4,2,2,2,22;0,0,0,0,0,0,0,0,0,1;softirq,softirq,softirq,softirq;1000,1000,1000,1000,1000,1000,1000,1000,1000,2000;lo,lo,lo,lo,lo,lo,lo" \
		"the dissector: layers, per-hop and total microseconds, CPUs, contexts, processes, devices"
	# each packet's total against magnet-read's own journey (-j)
	"$MR" -r "$T/p.pcapng" -j 2> /dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    p = json.loads(line)
    if p["type"] == "packet":
        ts = [int(h["ts"]) for h in p["journey"]]
        print("%g" % ((ts[-1] - ts[0]) / 1000))' > "$T/totals-mr.txt"
	# (a journey's sightings, in a row, have the same comment: once)
	tshark $lua -r "$T/p.pcapng" -T fields -E separator=';' -e frame.comment \
		-e magnet.total_us 2> /dev/null | uniq | cut -d';' -f2 > "$T/totals-lua.txt"
	check "the dissector's magnet.total_us is each journey's, as magnet-read -r reads it" \
		sh -c "[ -s '$T/totals-mr.txt' ] && cmp -s '$T/totals-mr.txt' '$T/totals-lua.txt'"
	same "$(tshark $lua -r "$T/p.pcapng" -Y 'magnet.total_us > 30' -T fields \
		-e frame.number 2> /dev/null | tr '\n' ,)" "1,2,8," \
		"tshark -Y 'magnet.total_us > 30' selects the packets whose journey took longer"
	same "$(tshark $lua -r "$T/p.pcapng" -Y 'magnet.hop.layer == "app" && magnet.hop.cpu == 1' \
		-T fields -e frame.number 2> /dev/null | tr '\n' ,)" "1,2," \
		"tshark -Y on a layer's fields"
	tshark -r "$T/all.pcapng" $lua -T fields -e magnet.layers 2> /dev/null | grep -c . > "$T/n-lua.txt"
	same "$(cat "$T/n-lua.txt")" "$(tshark -r "$T/all.pcapng" -T fields -e frame.number 2> /dev/null | grep -c .)" \
		"every packet magnet-read wrote has its journey"
	same "$(grep -ci 'error' "$T/lua.err")" 0 "the dissector loads without an error"
else
	skip "tshark not installed"
fi
# Statistics at the end of the file: an Interface Statistics Block per
# interface with its packets and the capture's lost records, read here
# without magnet-read.
same "$(python3 - "$T/p.pcapng" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off, out = 0, []
while off < len(d):
    t, n = struct.unpack_from("<II", d, off)
    if t == 5:
        iface = struct.unpack_from("<I", d, off + 8)[0]
        o, opts = off + 20, {}
        while o < off + n - 4:
            c, l = struct.unpack_from("<HH", d, o)
            if c == 0:
                break
            opts[c] = d[o + 4:o + 4 + l]
            o += 4 + (l + 3) // 4 * 4
        out.append("%d:%d:%d" % (iface, struct.unpack("<Q", opts[4])[0],
                                 struct.unpack("<Q", opts[7])[0]))
    off += n
print(" ".join(out))
PY
)" "0:2:3 1:6:3" "statistics: each interface's packets (isb_ifrecv), the records lost (isb_osdrop)"
# -r of a pcapng file: the same packets, the same journeys, as from the
# trace file (but for the packet that kept no bytes, not in the file)
notrec() { grep -v -E ' cpu [0-9]+ (ev |LOST )' "$T/out" | grep -v '^magnet-read: [0-9]* records'; }
mr -r "$T/t.mtr" -n 'not host 10.0.0.53'
notrec > "$T/from-trace.txt"
mr -r "$T/p.pcapng" -n 'not host 10.0.0.53'
same "$rc" 0 "-r reads a pcapng file"
notrec > "$T/from-pcapng.txt"
check "-r FILE.pcapng prints what -r FILE.mtr printed" \
	sh -c "[ -s '$T/from-trace.txt' ] && cmp -s '$T/from-trace.txt' '$T/from-pcapng.txt'"
same "$(tail -1 "$T/err")" "magnet-read: 7 packets read" "... and counts packets"
mr -r "$T/p.pcapng" -n -q -i lo
same "$(packets | wc -l)" 1 "-r pcapng: -i selects by the devices of the journey"
mr -r "$T/p.pcapng" -n -q inbound
same "$(packets | wc -l)" 3 "-r pcapng: inbound (the lo packet, coming in; two received)"
mr -r "$T/p.pcapng" -w "$T/again.pcapng"
check "-r pcapng -w pcapng: the same file again, but its time stamps" sh -c \
	"[ $rc -eq 0 ] && [ \"\$(tcpdump -r '$T/again.pcapng' -n 2> /dev/null | cut -c16-)\" = \"\$(tcpdump -r '$T/p.pcapng' -n 2> /dev/null | cut -c16-)\" ]"
mr -r "$T/p.pcapng" --trace "$T/x.mtr"
check "-r pcapng --trace: refused (packets, not records)" sh -c \
	"[ $rc -eq 2 ] && grep -q 'holds packets, not the records' '$T/err'"
if command -v tcpdump > /dev/null; then
	# tcpdump's own files: pcap and pcapng, without journeys
	tcpdump -r "$T/p.pcapng" -w "$T/tcpdump.pcap" 2> /dev/null
	mr -r "$T/tcpdump.pcap" -n
	same "$rc:$(packets | cut -c20- | uniq | tr '\n' ,)" "0:$(mr -r "$T/p.pcapng" -n; packets | cut -c20- | tr '\n' ,)" \
		"-r reads tcpdump's pcap files (each sighting a packet of its own)"
fi
# --- the timeline: --perfetto (Chrome's trace-event JSON) --------------------------
TEC="python3 $top/tests/host/trace_event_check.py"
D="$top/tests/host/data/udp-veth.mtr"
mr -r "$D" --perfetto "$T/tl.json"
same "$rc:$(wc -c < "$T/out")" "0:0" "--perfetto alone prints nothing"
$TEC "$T/tl.json" > "$T/tec.txt"
check "--perfetto: the file passes the trace-event format's checks" grep -q '^ok - ' "$T/tec.txt"
grep '^not ok' "$T/tec.txt" | head -5
# what the file holds against magnet-read's own journeys (-j)
"$MR" -r "$D" -j 2> /dev/null > "$T/tl-j.txt"
same "$(python3 - "$T/tl.json" "$T/tl-j.txt" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pk = [json.loads(l) for l in open(sys.argv[2])]
pk = [p for p in pk if p["type"] == "packet"]
names = {e["tid"]: e["args"]["name"] for e in ev
         if e["ph"] == "M" and e["name"] == "thread_name"}
sl = [e for e in ev if e["ph"] == "X"]
want = [(h["layer"], h["cpu"], h.get("dev")) for p in pk for h in p["journey"]]
got = [(e["name"], e["args"]["cpu"], e["args"].get("dev")) for e in sl]
print("slices", "same" if got == want else "differ: %d vs %d" % (len(got), len(want)))
print("tracks", all(names[e["tid"]].split()[1] == str(e["args"]["cpu"]) for e in sl))
print("flows", sum(1 for e in ev if e["ph"] == "s"), sum(1 for p in pk if len(p["journey"]) > 1))
# each slice lasts until the next layer's time, but for its last ns
ok = True
by = {}
for e in sl:
    by.setdefault(e["args"]["packet_id"], []).append(e)
for p, (pid, es) in zip(pk, sorted(by.items())):
    ts = [int(h["ts"]) for h in p["journey"]]
    for i, e in enumerate(es):
        d = (ts[i + 1] - ts[i]) if i + 1 < len(ts) else 0
        ok = ok and abs(e["dur"] * 1000 - max(d - 1, 0)) < 0.01
print("durations", ok)
PY
)" "slices same
tracks True
flows 50 50
durations True" "--perfetto: a slice per layer on its CPU's track, each until the next layer, a flow per packet"
mr -r "$T/p.pcapng" --perfetto "$T/tl2.json" udp
$TEC "$T/tl2.json" > "$T/tec.txt"
same "$rc:$(tail -1 "$T/tec.txt")" "0:slices 23 flows 4 tracks 3" \
	"--perfetto from a pcapng file, with an expression: its packets' journeys (4 UDP packets, 23 layers)"
# the checker finds what is wrong: slices of one track overlapping in
# part, a flow without its end, an event without a time
printf '%s' '{"traceEvents":[{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"CPU 0"}},{"ph":"X","pid":1,"tid":1,"name":"a","ts":0,"dur":10},{"ph":"X","pid":1,"tid":1,"name":"b","ts":5,"dur":10},{"ph":"s","pid":1,"tid":1,"name":"j","cat":"j","id":1,"ts":1},{"ph":"X","pid":1,"tid":1,"name":"c"}]}' > "$T/bad.json"
$TEC "$T/bad.json" > "$T/tec.txt"
same "$?:$(grep -c '^not ok' "$T/tec.txt")" "1:3" "the trace-event checker fails a file with three faults, each named"
mr -r "$D" --perfetto "$T/nodir/tl.json"
same "$rc:$(cat "$T/err")" "1:magnet-read: $T/nodir/tl.json: No such file or directory" \
	"--perfetto to a file that cannot be made: status 1, says why"
for f in "-w $T/nodir/x.pcapng" "--trace $T/nodir/x.mtr" "--perfetto $T/nodir/x.json"; do
	mr -r "$T/t.mtr" $f
	same "$rc:$(cat "$T/err")" "1:magnet-read: ${f#* }: No such file or directory" \
		"${f% *} to a file that cannot be made: status 1, says why, before reading"
done
mr -r "$D" --perfetto - -w -
check "--perfetto - and -w -: refused" sh -c "[ $rc -eq 2 ] && grep -q 'cannot share standard output' '$T/err'"

# --- rotation: -C, -W, -G, -z (tcpdump's) ------------------------------------------
# the real capture's 100 packets (50 journeys, out of va and in at vb)
D="$top/tests/host/data/udp-veth.mtr"
# Its first datagram's sender moved from CPU 1 to CPU 0 between the UDP
# and IP layers: still one packet, with the addresses its headers had.
mr -r "$D" -n -c 1
same "$(head -1 "$T/out" | cut -d' ' -f2-):$(grep -c '^    ' "$T/out")" \
	"IP 10.9.0.1.4242 > 10.9.0.2.5001: UDP, length 1000:10" \
	"a send that changed CPU between two layers is one packet, all ten layers"
# -w's file read back prints as the capture did, -e's devices included
mr -r "$D" -n -e
cp "$T/out" "$T/e-live.txt"
mr -r "$D" -w "$T/e.pcapng"
mr -r "$T/e.pcapng" -n -e
same "$(cmp "$T/e-live.txt" "$T/out" 2>&1 && grep -c 'vb In ifindex 4' "$T/out")" 50 \
	"-r of -w's pcapng: the same lines, -e's devices and indexes, as the capture (50 packets)"
mkdir "$T/rot"
mr -r "$D" -w "$T/rot/c.pcapng" -C 20k
same "$rc:$(cd "$T/rot" && ls | tr '\n' ' ')" \
	"0:c.pcapng c.pcapng1 c.pcapng2 c.pcapng3 c.pcapng4 c.pcapng5 c.pcapng6 c.pcapng7 c.pcapng8 " \
	"-C 20k: a new file once one is past 20 KiB, named as tcpdump names them"
big=0
for f in "$T"/rot/c.pcapng*; do
	[ "$(wc -c < "$f")" -le $((20480 + 2048)) ] || big=$((big + 1))
done
same "$big" 0 "... none more than a packet past 20 KiB"
if command -v tcpdump > /dev/null; then
	k=0
	for f in "$T"/rot/c.pcapng*; do
		k=$((k + $(tcpdump -r "$f" 2> /dev/null | wc -l)))
	done
	same "$k" 100 "... every packet in one of them, each file read by tcpdump"
fi
rm -f "$T"/rot/*
# nine files in three names: the first round's are gzipped; gzip leaves
# the later rounds' (their .gz is there) and the last file, which is open
# at the end, is given to gzip too
mr -r "$D" -w "$T/rot/w.pcapng" -C 20k -W 3 -z gzip < /dev/null
same "$rc:$(cd "$T/rot" && ls | tr '\n' ' ')" \
	"0:w.pcapng0 w.pcapng0.gz w.pcapng1 w.pcapng1.gz w.pcapng2 w.pcapng2.gz " \
	"-C -W 3: three files, round and round; -z gzip run on each"
check "-z: the files it was given are whole (gzip -t)" gzip -t "$T"/rot/*.gz
rm -f "$T"/rot/*
# a slow command: a name that comes round again is not written while the
# command given it still runs (each file whole, in the order written);
# magnet-read ends after the last command
printf '#!/bin/sh\nsleep 0.3\nn=$(cat "$1.n" 2> /dev/null || echo 0)\necho $((n + 1)) > "$1.n"\ntcpdump -r "$1" 2> /dev/null | wc -l >> "$1.k"\n' > "$T/slowz"
chmod +x "$T/slowz"
mr -r "$D" -w "$T/rot/s.pcapng" -C 20k -W 3 -z "$T/slowz" < /dev/null
if command -v tcpdump > /dev/null; then
	same "$rc:$(cat "$T"/rot/s.pcapng?.n | tr '\n' ' '):$(cat "$T"/rot/s.pcapng?.k | awk '{ k += $1 } END { print k }')" \
		"0:3 3 3 :100" \
		"-z a slow command: each of the nine files given to it whole, after magnet-read has ended none still running"
fi
rm -f "$T"/rot/*
# -G: a file per second, the name through strftime(); the packets come in
# two parts 1.5 s apart (pcapng read from a pipe as it comes)
python3 - "$T/p.pcapng" "$T/part1" "$T/part2" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off, epb = 0, 0
while off < len(d):
    t, n = struct.unpack_from("<II", d, off)
    if t == 6:
        epb += 1
        if epb == 4:
            break
    off += n
open(sys.argv[2], "wb").write(d[:off])
open(sys.argv[3], "wb").write(d[off:])
PY
(cat "$T/part1"; sleep 1.5; cat "$T/part2") | "$MR" -r - -w "$T/rot/g-%s.pcapng" -G 1 \
	> /dev/null 2> "$T/err"
set -- "$T"/rot/g-*.pcapng
same "$#" 2 "-G 1: a new file after a second"
if command -v tcpdump > /dev/null && [ $# -eq 2 ]; then
	same "$(tcpdump -r "$1" 2> /dev/null | wc -l):$(tcpdump -r "$2" 2> /dev/null | wc -l)" "3:5" \
		"... the packets before the pause in the first, the rest in the second"
	t1=$(basename "$1" .pcapng)
	t2=$(basename "$2" .pcapng)
	check "... each named by the time it began (%s)" test "${t2#g-}" -gt "${t1#g-}"
fi
rm -f "$T"/rot/*
(cat "$T/part1"; sleep 1.5; cat "$T/part2") | "$MR" -r - -w "$T/rot/g1.pcapng" -G 1 -W 1 \
	> /dev/null 2> "$T/err"
rc=$?
same "$rc:$(ls "$T/rot" | tr '\n' ' ')" "0:g1.pcapng " "-G 1 -W 1: one file, then the capture ends (status 0)"
mr -r "$T/t.mtr" -w "$T/nodir/x.pcapng" -C 1
same "$rc:$(cat "$T/err")" "1:magnet-read: $T/nodir/x.pcapng: No such file or directory" \
	"a rotation target that cannot be written: status 1, says why"
chmod 0555 "$T/rot"
if ! touch "$T/rot/probe" 2> /dev/null; then
	mr -r "$D" -w "$T/rot/x.pcapng" -C 20k
	same "$rc" 1 "a directory that cannot be written: status 1"
fi
chmod 0755 "$T/rot"
mr -r "$T/t.mtr" -C 1
check "-C without -w: refused" sh -c "[ $rc -eq 2 ] && grep -q 'rotate the -w file' '$T/err'"
mr -r "$T/t.mtr" -w - -G 5
check "-G with -w -: refused" sh -c "[ $rc -eq 2 ] && grep -q 'not standard output' '$T/err'"
mr -r "$T/t.mtr" -w "$T/x" -W 2
check "-W without -C or -G: refused" sh -c "[ $rc -eq 2 ] && grep -q 'go with -C or -G' '$T/err'"
for bad in 0 -1 x 1q 99999999999999999999g; do
	mr -r "$T/t.mtr" -w "$T/x" -C "$bad"
	check "-C $bad: refused, status 2" sh -c "[ $rc -eq 2 ] && grep -q 'bad -C' '$T/err'"
done
mr -r "$T/t.mtr" -w "$T/x" -G 0
check "-G 0: refused" test "$rc" -eq 2

head -c 300 "$T/p.pcapng" > "$T/cut.pcapng"
mr -r "$T/cut.pcapng" -n
same "$rc:$(tail -1 "$T/err")" "1:magnet-read: $T/cut.pcapng: not a pcapng file magnet-read can read: it ends inside a block" \
	"a pcapng file cut short: status 1, says why"
mr -r "$T/t.mtr" -s 40 -w "$T/s40.pcapng" tcp
if command -v tcpdump > /dev/null; then
	same "$(tcpdump -r "$T/s40.pcapng" 2> /dev/null | wc -l)" 3 "-w honours the expression"
fi
if command -v tshark > /dev/null; then
	same "$(tshark -r "$T/s40.pcapng" -T fields -e frame.cap_len 2> /dev/null | tr '\n' ' ')" \
		"60 60 60 " "-s 40: 40 bytes kept per packet (behind the cooked header's 20)"
fi

# --- usage and errors ---------------------------------------------------------------------------
usage_fails() { # usage_fails DESCRIPTION ARGS...
	d=$1
	shift
	mr "$@"
	if [ "$rc" -eq 2 ] && [ -s "$T/err" ]; then ok "$d: status 2"; else not_ok "$d: status $rc"; fi
}
usage_fails "unknown option" --bogus
check "unknown option: the synopsis on standard error" grep -q '^Usage: magnet-read ' "$T/err"
usage_fails "-s not a number" -s abc -r "$T/t.mtr"
usage_fails "--journey-timeout 0" --journey-timeout 0 -r "$T/t.mtr"
usage_fails "-P with -r" -P udp-send -r "$T/t.mtr"
usage_fails "-w - with --print" -w - --print
mr -t 5
same "$rc:$(cat "$T/err")" "1:magnet-read: can't parse filter expression: syntax error" \
	"the old -t 5: 5 is an expression (tcpdump's -t takes no number), refused as tcpdump refuses it"
mr --help
same "$rc:$(cat "$T/err")" "0:" "--help: status 0, nothing on standard error"
check "--help: the synopsis" grep -q '^Usage: magnet-read \[-' "$T/out"
check "--help names the manual" grep -q 'magnet-read(1)' "$T/out"
# The manual is the reference: each option the synopsis names has its
# entry under OPTIONS (a .TP tag, \- read as -).
man1=$top/tools/magnet-read/magnet-read.1
tags=$(awk '/^\.SH/ { on = ($0 == ".SH OPTIONS") } on && prev == ".TP" { print } { prev = $0 }' \
	"$man1" | sed 's/\\-/-/g')
syn=$(sed -n '/^Usage:/,/expression \]$/p' "$T/out")
opts="$(printf '%s\n' "$syn" | sed -n 's/^Usage: magnet-read \[-\([A-Za-z]*\)\].*/\1/p' |
	sed 's/./-& /g') $(printf '%s\n' "$syn" | grep -oE '\[ --?[A-Za-z][A-Za-z-]*' | sed 's/^\[ //')"
missing=
for o in $opts; do
	printf '%s\n' "$tags" | grep -qE -- "[ \"]$o([ \",]|\$)" || missing="$missing $o"
done
check "the synopsis names 40 options or more" test "$(echo $opts | wc -w)" -ge 40
same "$missing" "" "each option of the synopsis has its entry in the manual"
check "the manual documents the output" grep -q 'LOST \\fIN\\fP records' "$man1"
check "the manual documents the expression" grep -q 'pcap\\-filter (7)' "$man1"
if [ ! -e /sys/module/magnet ]; then
	mr -N
	same "$rc" 1 "no module: status 1"
	check "no module: says so" \
		grep -q '^magnet-read: the magnet module is not loaded (no /sys/module/magnet: modprobe magnet)' "$T/err"
	if [ "$(stat -f -c %T /sys/kernel/debug 2> /dev/null)" = debugfs ]; then
		check "... and no more: debugfs is mounted" sh -c "! grep -q 'debugfs is not mounted' '$T/err'"
	else
		check "... and debugfs not mounted either" \
			grep -q ', and debugfs is not mounted at /sys/kernel/debug (mount -t debugfs none /sys/kernel/debug)$' "$T/err"
	fi
	mr -P udp-send -w "$T/nomod.pcapng"
	same "$rc:$(head -c 40 "$T/err"):$(ls "$T/nomod.pcapng" 2> /dev/null)" \
		"1:magnet-read: the magnet module is not lo:" \
		"no module, -P -w: said first, no file made"
fi
# --- block I/O journeys (the blk-io set's records) --------------------------------
$GEN --block "$T/b.mtr"
mr -r "$T/b.mtr"
blocks() { grep -E '^([0-9]{2}:){2}[0-9]{2}\.[0-9]{9} BLOCK ' "$T/out" | cut -c20-; }
same "$(blocks)" "BLOCK 254:0 write 65536 bytes at 0 [sync] by 300/300: bio queue +10.000 us issue +15.000 us complete +275.000 us
BLOCK 254:0 write 8192 bytes at 120 by 300/300: bio queue +1.000 us issue +9.000 us complete +270.000 us
BLOCK 254:0 write 4096 bytes at 128 by 300/300: bio, no request (merged into another's, or not seen)
BLOCK 254:0 read 8192 bytes at 512 by 301/301: bio issue +2.000 us complete +278.000 us
BLOCK 254:0 write 4096 bytes at 900 [fua] by 301/301: bio issue +5.000 us complete +95.000 us
BLOCK 254:0 flush 0 bytes at 0 [preflush] by 302/302: issue complete +150.000 us, error -5" \
	"block I/O: one line each, by first record, the CPUs' records merged; a merged bio alone; a reused request a new I/O; a flush with its error"
same "$(grep -A4 ' BLOCK 254:0 write 65536 ' "$T/out" | sed 1d | awk '{ print $1, $5, $6, $7, $8 }' | tr '\n' ';')" \
	"bio cpu 0 300/300 ;queue cpu 0 300/300 ;issue cpu 1 50/50 ;complete cpu 0 hardirq 0/0;" \
	"block I/O: a line per layer, its CPU, context and thread"
same "$(grep -c 'block I/Os$' "$T/err"):$(grep 'block I/Os$' "$T/err")" "1:magnet-read: 6 block I/Os" \
	"block I/O: counted in the summary"
mr -r "$T/b.mtr" -j
same "$(grep '"type":"block"' "$T/out" | jq -c '[.op, .sector, .bytes, .completed_bytes, .completions, .error, .request, .flags, [.journey[].layer]]' 2> /dev/null | tr '\n' ';')" \
	'["write",0,65536,65536,1,0,true,["sync"],["bio","queue","issue","complete"]];["write",120,8192,8192,1,0,true,[],["bio","queue","issue","complete"]];["write",128,4096,0,0,0,false,[],["bio"]];["read",512,8192,8192,2,0,true,[],["bio","issue","complete"]];["write",900,4096,4096,1,0,true,["fua"],["bio","issue","complete"]];["flush",0,0,0,1,-5,true,["preflush"],["issue","complete"]];' \
	"block I/O, JSON: the fields, the parts completed, the layers"
same "$(grep '"type":"summary"' "$T/out" | jq .block_ios 2> /dev/null)" 6 "block I/O, JSON: counted in the summary"
mr -r "$T/b.mtr" --tgid 301 -q
same "$(blocks | cut -c1-40)" "BLOCK 254:0 read 8192 bytes at 512 by 30
BLOCK 254:0 write 4096 bytes at 900 [fua" "block I/O: --tgid selects by the submitter"
same "$(grep -c '^    ' "$T/out")" 0 "block I/O: -q, the lines alone"
mr -r "$T/b.mtr" udp
same "$(blocks)" "" "block I/O: a packet expression selects none"

# --- spans: --otlp and --zipkin (an HTTP request's spans, packets, block I/O) -------
$GEN --spans --host nodeb "$T/s.mtr"
mr -r "$T/s.mtr" --otlp "$T/s.otlp" --zipkin "$T/s.zipkin"
check "spans: --otlp and --zipkin written (status 0)" test "$rc" -eq 0
same "$(grep 'spans written' "$T/err")" "magnet-read: 31 spans written, 1 of them still open at the end; 1 ends or events of no open span, 1 begins of one already open and 0 beyond the limits dropped; 1 traceparent headers not W3C's" \
	"spans: counted in the summary: the one never ended, the end and begin of no span, the header not W3C's"
# (each span flat: its resource's service, host and pid; ids; name; times; attributes)
cat > "$T/flat.jq" << 'JQ'
.resourceSpans[] | ([.resource.attributes[] | {(.key): (.value | to_entries[0].value)}] | add) as $r
| .scopeSpans[].spans[]
| {svc: $r["service.name"], host: $r["host.name"], pid: $r["process.pid"], t: .traceId, id: .spanId,
   p: (.parentSpanId // ""), n: .name, k: .kind, s: .startTimeUnixNano, e: .endTimeUnixNano,
   a: ([.attributes[] | {(.key): (.value | to_entries[0].value)}] | add), ev: [.events[]?.name]}
JQ
jq -c -f "$T/flat.jq" "$T/s.otlp" > "$T/flat" 2> "$T/jq.err"
TR=4bf92f3577b34da6a3ce929d0e0e4736
same "$(jq -c 'select(.a["magnet.layer"] == null) | [.n, .svc, .pid, .t == "'$TR'", .p, .s, .e, .ev]' "$T/flat" | head -3 | sort)" \
'["fetch","client","400",true,"00f067aa0ba902b7","1704204123000002000","1704204123000150000",["connected"]]
["request","client","400",true,"","1704204123000000000","1704204123000160000",[]]
["tcp send","client","400",true,"00f067aa0ba902c8","1704204123000010000","1704204123000040000",[]]' \
	"spans: the application's, begin to end, service.name from its root span; the request's packet a child of the span its traceparent names"
Q=$(jq -r 'select(.a["magnet.traceparent"] == true) | .id' "$T/flat")
same "$(jq -c 'select(.p == "'$Q'" and .a["magnet.layer"] == null) | [.n, .t == "'$TR'", .a["thread.id"], .a["magnet.block.bytes"]]' "$T/flat")" \
'["block read",true,"501","4096"]
["tcp send",true,"501",null]' \
	"spans: the server's block read (by the thread that read the request) and its reply (on the connection) are the request's children"
same "$(jq -r 'select(.p == "'$Q'") | .n' "$T/flat" | tr '\n' ' ')" \
	"socket tcp ip dev-queue dev-xmit dev-recv ip tcp sock-queue app block read tcp send " \
	"spans: a packet's layers are its children, each from its record to the next"
same "$(jq -c 'select(.a["magnet.layer"] == null and .p == "") | [.n, .t == "'$TR'", .a["magnet.span.incomplete"]]' "$T/flat")" \
'["request",true,null]
["lost",false,true]
["udp send",false,null]
["tcp send",false,null]' \
	"spans: roots: the request; a span never ended, as it stood; a packet of no span; one whose traceparent is not W3C's"
same "$(jq -r '.p' "$T/flat" | sort -u | while read -r p; do [ -z "$p" ] || grep -q "\"id\":\"$p\"" "$T/flat" || echo "$p"; done)" "" \
	"spans: every parent is a span of the file"
same "$(jq -r '"\(.host) \((.s | tonumber) <= (.e | tonumber))"' "$T/flat" | sort | uniq -c | sed 's/^ *//')" "31 nodeb true" \
	"spans: host.name from the trace file's header, none ending before it starts"
same "$(jq -c 'select(.n == "block read") | [.a["magnet.block.device"], .a["magnet.block.sector"], .a["magnet.block.operation"]]' "$T/flat")" \
	'["254:0","2048","read"]' "spans: a block I/O's attributes"
same "$(jq -c 'select(.n == "tcp send" and .a["thread.id"] == "501") | [.a["source.address"], .a["source.port"], .a["destination.port"], .a["network.transport"], .k]' "$T/flat")" \
	'["127.0.0.1","80","46000","tcp",4]' "spans: a packet's attributes (OpenTelemetry's names), kind PRODUCER"
same "$(jq -r '.[].id' "$T/s.zipkin" 2> /dev/null | sort | tr '\n' ' ')" "$(jq -r '.id' "$T/flat" | sort | tr '\n' ' ')" \
	"spans: --zipkin holds the same spans"
same "$(jq -c '.[] | select(.name == "fetch") | [.parentId, .timestamp, .duration, .localEndpoint.serviceName, .annotations[0].value, .tags["http.status"]]' "$T/s.zipkin" 2> /dev/null)" \
	'["00f067aa0ba902b7",1704204123000002,148,"client","connected net.peer=127.0.0.1","200"]' \
	"spans, Zipkin: microseconds, the service, an event as an annotation, attributes as tags"
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import jsonschema, yaml' 2> /dev/null; then
	same "$(/usr/bin/python3 "$top/tests/host/zipkin-check.py" "$top/tests/host/data/zipkin2-api.yaml" "$T/s.zipkin" 2>&1)" \
		'{"spans": 31}' "spans, Zipkin: valid against Zipkin's schema (zipkin2-api.yaml, ListOfSpans)"
else
	skip "spans, Zipkin: no python3-jsonschema to validate with"
fi
if command -v node > /dev/null && [ -e "$top/build/otlp-proto/trace_service.proto" ] &&
   [ -d "$top/build/viewer/node_modules/protobufjs" ]; then
	same "$(node "$top/tests/host/otlp-decode.js" "$top/build/otlp-proto" "$T/s.otlp" 2>&1)" \
		'{"requests":1,"resources":5,"spans":31}' \
		"spans, OTLP: decodes with OpenTelemetry's .proto files, no unknown field, the same after protobuf's encoding"
else
	skip "spans, OTLP: no OTLP .proto files or protobufjs (scripts/install-deps)"
fi
# an expression selects packets; the applications' spans stay, the parents
mr -r "$T/s.mtr" --otlp - tcp
jq -c -f "$T/flat.jq" "$T/out" > "$T/eflat" 2> /dev/null
same "$(jq -r 'select(.a["magnet.layer"] == null) | .n' "$T/eflat" | sort | uniq -c | sed 's/^ *//' | tr '\n' ' ')" \
	"1 fetch 1 lost 1 request 3 tcp send " \
	"spans, an expression (tcp): the applications' spans kept, packets it selects, no block I/O"
parents() {	# the request's packets' parents, by name
	jq -s -r 'map({(.id): .n}) | add as $n | .[] | select(.n == "tcp send" and .t == "'$TR'") | $n[.p]' "$1" | sort | tr '\n' ' '
}
same "$(parents "$T/eflat")" "$(parents "$T/flat")" "spans, an expression: the packets' parents as without it"
mr -r "$T/s.mtr" --otlp - --tgid 1 tcp
same "$(jq -r 'select(.a["magnet.layer"] == null) | .n' "$T/out" 2> /dev/null | sort -u | tr '\n' ' ')" "" \
	"spans, --tgid of no process: no span, the applications' neither"
mr -r "$T/s.mtr" --otlp - --zipkin -
same "$rc:$(head -1 "$T/err")" "2:magnet-read: -w, --trace, --perfetto, --otlp, --zipkin, --folded and --profile cannot share standard output" \
	"spans: --otlp - and --zipkin - refused together"
mr -r "$T/s.mtr" --otlp /nonexistent/dir/x
same "$rc:$(head -1 "$T/err")" "1:magnet-read: /nonexistent/dir/x: No such file or directory" "spans: a file that cannot be made: an error"
# the old header (no host): no host.name
$GEN --spans "$T/s2.mtr"
mr -r "$T/s2.mtr" --otlp -
same "$(jq -c '[.resourceSpans[].resource.attributes[].key] | unique' "$T/out" 2> /dev/null)" \
	'["process.pid","service.name"]' "spans: a file without the host's name: no host.name"

# --- several nodes' files: one clock, packets joined across nodes ------------------
# (node b's clock 3 s ahead; the wire 80 us going and 120 us back: the
# estimate 20 us off, within its bound of 100 us)
$GEN --node a "$T/na.mtr"
$GEN --node b "$T/nb.mtr"
mr -r "$T/na.mtr" -r "$T/nb.mtr" -n
check "nodes: two files read as one (status 0)" test "$rc" -eq 0
same "$(sed -n 3p "$T/err")" "magnet-read: nodeb ($T/nb.mtr): its clock 2.999980000 s ahead of nodea ($T/na.mtr)'s, within 0.000100000 s (from 3 packets to it, 3 back)" \
	"nodes: the second node's clock estimated from the packets both ways, with its bound"
same "$(packets | cut -c20-60 | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')" \
	"3 IP 10.9.1.1.47000 > 10.9.1.2.80: Flags [P;3 IP 10.9.1.2.80 > 10.9.1.1.47000: Flags [P;" \
	"nodes: each request and reply once: the sender's journey and the receiver's one"
same "$(grep -A10 '^[0-9:.]* IP 10.9.1.1.47000 > 10.9.1.2.80: Flags \[P.\], seq 1:90' "$T/out" | sed -n '2,11p' | awk '{ print $1, $NF }' | tr '\n' ';')" \
	"socket @nodea;tcp @nodea;ip @nodea;dev-queue @nodea;dev-xmit @nodea;dev-recv @nodeb;ip @nodeb;tcp @nodeb;sock-queue @nodeb;app @nodeb;" \
	"nodes: a request's journey: node a's layers, then node b's, each named by its node"
same "$(grep '^    ' "$T/out" | awk '{ print $2 }' | awk 'NR > 1 && $1 < p { bad++ } { p = $1 } END { print bad + 0 }')" 0 \
	"nodes: after the correction no layer before the one it follows (across the wire too)"
same "$(grep 'joined' "$T/err")" "magnet-read: 6 packets joined across nodes, 0 sent that no other node's file saw arrive" \
	"nodes: the packets joined, counted"
mr -r "$T/na.mtr" -r "$T/nb.mtr" -j
same "$(grep '"type":"summary"' "$T/out" | jq -c '[.joined, .not_joined, [.nodes[] | [.host, .offset_ns, .error_ns, .packets_to, .packets_back]]]' 2> /dev/null)" \
	'[6,0,[["nodea",null,null,0,0],["nodeb",2999980000,100000,3,3]]]' \
	"nodes, JSON: the clocks and the joined packets in the summary"
same "$(grep '"type":"packet"' "$T/out" | head -1 | jq -c '[.journey[] | .node] | unique' 2> /dev/null)" '["nodea","nodeb"]' \
	"nodes, JSON: each layer names its node"
# the skew's sign, and a node whose clock is behind
$GEN --node b --skew -2500000000 "$T/nb2.mtr"
mr -r "$T/na.mtr" -r "$T/nb2.mtr" -n -q
same "$(sed -n 3p "$T/err" | sed 's/(from.*//')" "magnet-read: nodeb ($T/nb2.mtr): its clock 2.500020000 s behind nodea ($T/na.mtr)'s, within 0.000100000 s " \
	"nodes: a clock behind"
# the headers' own bounds on their wall clocks (the tightest bracket of
# the clocks' reads when the capture started): the bound that much wider
$GEN --node a --offset-error 1500 "$T/nae.mtr"
$GEN --node b --offset-error 2500 "$T/nbe.mtr"
mr -r "$T/nae.mtr" -r "$T/nbe.mtr" -n -q
same "$(sed -n 3p "$T/err" | sed 's/(from.*//')" "magnet-read: nodeb ($T/nbe.mtr): its clock 2.999980000 s ahead of nodea ($T/nae.mtr)'s, within 0.000104000 s " \
	"nodes: each header's bound on its wall clock widens the clock's bound"
printf '\377\377\377\377\377\377\377\177' | dd of="$T/nbe.mtr" bs=1 seek=136 conv=notrunc 2> /dev/null
mr -r "$T/nae.mtr" -r "$T/nbe.mtr" -n -q
same "$rc:$(head -1 "$T/err")" "1:magnet-read: $T/nbe.mtr: damaged trace file header" \
	"nodes: a header's bound on its wall clock past all reason: a damaged header"
# a peer that went away: only its first request's files
$GEN --node b --requests 1 "$T/nb1.mtr"
mr -r "$T/na.mtr" -r "$T/nb1.mtr" -n -q
same "$rc:$(grep 'joined' "$T/err")" "0:magnet-read: 2 packets joined across nodes, 2 sent that no other node's file saw arrive" \
	"nodes: a peer that vanished: what it saw joined, the rest shown alone and counted"
same "$(sed -n 3p "$T/err" | sed 's/.*(from/(from/')" "(from 1 packets to it, 1 back)" \
	"nodes: ... and the clock from what both saw"
# no packets between them: each clock as it is
$GEN --spans --host nodec "$T/nc.mtr"
mr -r "$T/na.mtr" -r "$T/nc.mtr" -n -q
same "$(sed -n 3p "$T/err")" "magnet-read: nodec ($T/nc.mtr): no packet seen between it and the first file's node: its clock taken as it is" \
	"nodes: no packet between two nodes: the clock taken as it is, said"
# spans across the nodes: one trace, node b's reply the request's child
mr -r "$T/na.mtr" -r "$T/nb.mtr" --otlp "$T/n.otlp"
jq -c -f "$T/flat.jq" "$T/n.otlp" > "$T/nflat" 2> /dev/null
same "$(jq -r '.p' "$T/nflat" | sort -u | while read -r p; do [ -z "$p" ] || grep -q "\"id\":\"$p\"" "$T/nflat" || echo "$p"; done; jq -r '.t' "$T/nflat" | sort -u)" \
	"4bf92f3577b34da6a3ce929d0e0e4736" "nodes, spans: one trace, every parent in it"
same "$(jq -c 'select(.a["magnet.layer"] == null and .n == "tcp send") | [.host, .svc]' "$T/nflat" | sort | uniq -c | sed 's/^ *//' | tr '\n' ';')" \
	'3 ["nodea","client"];3 ["nodeb","unknown_service"];' \
	"nodes, spans: the requests node a's, the replies node b's (host.name)"
same "$(jq -r '[.id, .s] | @tsv' "$T/nflat" | sort > "$T/starts"; jq -r 'select(.p != "") | [.p, .s] | @tsv' "$T/nflat" | while read -r p s; do
		ps=$(awk -v p="$p" '$1 == p { print $2 }' "$T/starts"); [ "$s" -ge "$ps" ] || echo "$p"; done)" "" \
	"nodes, spans: no span starts before its parent"
mr -r "$T/na.mtr" -r "$T/nb.mtr" --perfetto "$T/n.json"
same "$(jq -c '[.traceEvents[] | select(.name == "process_name") | .args.name] | .[1:]' "$T/n.json" 2> /dev/null):$(jq '[.traceEvents[] | select(.ph == "f") | .pid] | unique | length' "$T/n.json" 2> /dev/null)" \
	'["nodea","nodeb"]:2' "nodes, --perfetto: a process per node, flows from one to the other"
# bad usage
mr -r "$T/na.mtr" -r -
same "$rc:$(head -1 "$T/err")" "2:magnet-read: -r -: standard input is one node's file; several -r read files" "nodes: -r - refused among several"
mr -r "$T/na.mtr" -r "$T/nb.mtr" -w "$T/x.pcapng"
same "$rc" 2 "nodes: -w refused with several -r"
mr -r "$T/na.mtr" -r "$T/u.pcapng"
same "$rc" 1 "nodes: a pcapng file among several -r: an error"

# --- the sampler's profile: blanks found and charged (sample_scenario) ---------------
$GEN --samples "$T/smp.mtr"
printf '%s\n' 'ffffffff81000000 T func_a' 'ffffffff81001000 t func_b' \
	'ffffffff81002000 T default_idle' 'ffffffff81003000 T _etext' > "$T/kallsyms"
mr -r "$T/smp.mtr" --profile -j --kallsyms "$T/kallsyms" --folded "$T/folded"
check "profile: read (status 0)" test "$rc" -eq 0
same "$(jq -c '[.samples, .period_ns, .margin_ns, .blank_ns, .steal_reported_ns, .steal_unreported_ns, .charged_ns.process, .charged_ns.thread, .charged_ns.function, .idle_gaps_ns, .other_probes_samples]' "$T/out")" \
	"[12,1000000,100000,8000000,1000000,7000000,8000000,6000000,4000000,3000000,1]" \
	"profile: three blanks (8 ms, 1 reported), charged 8 ms to the process, 6 to the thread, 4 to the function; the idle gap not steal; the other probe's tick left out"
same "$(jq -c '[.processes[] | [.pid, .name, .apparent_ns, .steal_ns, .compensated_ns, .samples]]' "$T/out")" \
	'[[4000000,"pid 4000000",16000000,8000000,8000000,10],[0,"[idle]",5000000,0,5000000,2]]' \
	"profile: processes: apparent, steal, compensated (a gone process by its pid)"
same "$(jq -c '[.threads[] | [.tid, .apparent_ns, .steal_ns, .compensated_ns]]' "$T/out")" \
	'[[4000000,15000000,6000000,9000000],[0,5000000,0,5000000],[4000001,1000000,0,1000000]]' \
	"profile: threads: the blank across two threads charged to neither"
same "$(jq -c '[.functions[] | [.function, .apparent_ns, .steal_ns, .steal_reported_ns, .compensated_ns]]' "$T/out")" \
	'[["func_a",9000000,4000000,1000000,5000000],["func_b",7000000,0,0,7000000],["default_idle",5000000,0,0,5000000]]' \
	"profile: functions, named from --kallsyms: the blank across two charged to neither"
same "$(sort "$T/folded" | tr '\n' '|')" \
	"[idle];default_idle 5000|pid 4000000;func_a 3000|pid 4000000;func_a;[steal] 4000|pid 4000000;func_b 7000|pid 4000000;func_b;func_a 2000|" \
	"profile: folded stacks in microseconds, steal a frame of its own"
mr -r "$T/smp.mtr" --profile --kallsyms "$T/kallsyms"
same "$(sed -n 2p "$T/out")" "blank time 8.000 ms: reported steal 1.000, unreported 7.000; charged to a process 8.000, a thread 6.000, a function 4.000; unattributed to a function 4.000; idle gaps 3.000 (not steal)" \
	"profile: the text report's summary"
mr -r "$T/smp.mtr" --profile --kallsyms "$T/nonexistent"
same "$rc:$(head -1 "$T/err")" "1:magnet-read: $T/nonexistent: No such file or directory" \
	"profile: an unreadable --kallsyms file: an error"
mr -r "$T/smp.mtr" --kallsyms "$T/kallsyms"
same "$rc:$(head -1 "$T/err")" "2:magnet-read: --kallsyms names kernel functions for --profile and --folded: give one" \
	"profile: --kallsyms alone refused"
mr -r "$T/smp.mtr" --profile --folded -
same "$rc" 2 "profile: --profile and --folded - refused together"
mr -r "$T/smp.mtr" -n
same "$(grep -c ' SAMPLE cpu ' "$T/out")" 13 "samples: a SAMPLE line each, printed"

if command -v groff > /dev/null; then
	groff -man -Tutf8 -ww -z "$top/tools/magnet-read/magnet-read.1" > "$T/groff.txt" 2>&1
	same "$(cat "$T/groff.txt")" "" "the man page formats without warnings"
fi

echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

# magnet-supermon on a real kernel with traffic: its schema, samples and
# masked samples, and its files for mon, captured here and handed to the
# host, where tests/suites/supermon.host parses them with python3-sexpdata
# and compares the values with magnetd's snapshot of the same moment.
# Also: magnetd killed (health 0, still answering) and restarted.
. /magnet/lib.sh

S=/tmp/md.sock
PORT=2709
OUT=/tmp/supermon-files

unload_all
load_magnet
check "two namespaces joined by a veth pair" netns_pair
v6_sends_conf /tmp/md.conf $S
magnetd -c /tmp/md.conf > /tmp/md.log 2>&1 &
MD=$!
check "magnetd runs, healthy" wait_for 30 healthy

mkdir -p $OUT
magnet-supermon -l 127.0.0.1 -p $PORT -s $S -r 1 -n node0 -a 10.0.4.1 -o $OUT \
	> /tmp/sm.log 2>&1 &
SM=$!
# ask REQUESTS: the answers (busybox nc stops at the end of its input:
# keep it open while the answers come).
ask() { { printf "$1"; sleep 1; } | timeout 10 nc 127.0.0.1 $PORT; }
serves() { ask 'S\n' | grep -q "$1"; }
check "magnet-supermon serves port $PORT" wait_for 10 serves node0

inB magnet-test udp-recv fd09::2 5001 200 > /tmp/recv.out 2>&1 &
rx=$!
sleep 0.3
inA magnet-test udp-send fd09::2 5001 200 100
wait $rx
cat /tmp/recv.out
is() { [ "$(metric "$1")" = "$2" ]; }
check "magnetd counted the 200 sends" wait_for 10 is v6-sends.count 200
check "... and 200 receive latencies" wait_for 10 is udp_recv.count 200
sleep 2.5	# one refresh of magnet-supermon, and one of its files

magnetctl daemon snapshot socket $S > /tmp/snap-before.txt
ask '#\nS\n0x5S\nS\n' > /tmp/replies.txt
magnetctl daemon snapshot socket $S > /tmp/snap-after.txt
cat /tmp/replies.txt
check "four answers, each ending in an empty line" [ "$(grep -c '^$' /tmp/replies.txt)" -eq 4 ]
cp "$OUT/#" /tmp/file-schema.txt
cp "$OUT/S" /tmp/file-sample.txt
for f in snap-before.txt replies.txt snap-after.txt file-schema.txt file-sample.txt; do
	artifact /tmp/$f
done

# magnetd away: the server keeps answering, health 0; back: health 1.
kill -9 $MD
wait $MD 2>/dev/null
sleep 2.5
ask 'S\n' > /tmp/away.txt
cat /tmp/away.txt
check "magnetd killed: still answering, with health 0" grep -q '(magnetd (mask 0x2) (node 0x104000a) (health 0)' /tmp/away.txt
check "... and the categories kept" grep -q '(v6-sends (mask 0x4)' /tmp/away.txt
check "... logged once" [ "$(grep -c 'cannot be reached' /tmp/sm.log)" -eq 1 ]
artifact /tmp/away.txt
magnetctl probe del v6-sends 2>/dev/null
magnetctl probe del-set udp-recv 2>/dev/null
magnetctl buffer del net 2>/dev/null
magnetd -c /tmp/md.conf >> /tmp/md.log 2>&1 &
MD=$!
check "magnetd restarted" wait_for 30 healthy
check "health 1 again" wait_for 10 serves '(health 1)'
check "... logged that it is back" grep -q 'is back' /tmp/sm.log
check "magnet-supermon ran throughout" kill -0 $SM

kill -TERM $SM
wait $SM
check "magnet-supermon exits 0 on SIGTERM" [ $? -eq 0 ]
kill -TERM $MD
wait $MD
kill $A $B 2>/dev/null
unload_all
summary

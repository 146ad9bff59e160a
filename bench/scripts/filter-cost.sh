# Benchmark (not a test): what an event that a filter rule drops costs the
# path it instruments, next to a kprobe whose handler does nothing (the
# floor of any kprobe-based sensor), the same magnet probe logging, and no
# probe at all, measured side by side in this boot. The path is getppid();
# each figure is the best of 5 runs of 200 000 calls. Also a rule of each
# kind, many rules, and sampling.
. /magnet/lib.sh
unload_all
load_magnet buffers=default:4M:overwrite
insmod $M/magnet_bench.ko
N=200000
SYM=__x64_sys_getppid

best() { best_ns_per_call $N; }
row() { awk -v n="$1" -v v="$2" -v b="$base" -v e="$empty" 'BEGIN {
	printf "BENCH: %-38s %7.1f ns/call  +%6.1f ns  %5.2f x empty kprobe\n", n, v, v - b, (v - b) / (e - b) }'; }

base=$(best)
echo $SYM > $DBG/magnet_bench/empty_kprobe
empty=$(best)
echo - > $DBG/magnet_bench/empty_kprobe

magnetctl probe add kp kprobe $SYM
logged=$(best)
# Dropped by a rule on the header: this tgid is not the one included.
magnetctl filter add kp tgid 1
f_tgid=$(best)
check "the rule dropped every call" test "$(magnetctl -j stats | tr '{' '\n' | grep '"name":"kp"' | sed -n 's/.*"filtered":\([0-9]*\).*/\1/p')" -ge $((5 * N))
magnetctl filter del $(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p')
magnetctl filter add kp exclude cpu 0-$(($(nproc) - 1))
f_cpu=$(best)
magnetctl filter del $(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p')
# Rules on ids: the gate cannot decide them, the full rules do, from the
# hit's id and payload. One that drops; then sixteen that do not match
# before it (what each rule adds).
magnetctl filter add kp exclude id 0 > /dev/null
f_one=$(best)
magnetctl filter del $(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p')
for i in $(seq 16); do magnetctl filter add kp exclude id $((1000 + i)) > /dev/null; done
magnetctl filter add kp exclude id 0 > /dev/null
f_many=$(best)
for r in $(magnetctl -j filter list | tr '{' '\n' | sed -n 's/^"id":\([0-9]*\),.*/\1/p'); do magnetctl filter del $r; done
magnetctl probe set kp sample every 1000
s_every=$(best)
magnetctl probe del kp

echo "BENCH: getppid(), best of 5 x $N calls; +ns is the cost added to the call"
row "no probe" "$base"
row "kprobe, empty handler" "$empty"
row "magnet kprobe, logged (32 B record)" "$logged"
row "magnet kprobe, dropped by tgid rule" "$f_tgid"
row "magnet kprobe, dropped by cpu rule" "$f_cpu"
row "magnet kprobe, 1 id rule, drops" "$f_one"
row "magnet kprobe, 17 rules, last drops" "$f_many"
awk -v one="$f_one" -v many="$f_many" -v cpu="$f_cpu" 'BEGIN {
	printf "BENCH: the full rules: %+.1f ns for the first (id) rule over a gate-decided drop, %+.1f ns for each further rule\n", one - cpu, (many - one) / 16 }'
row "magnet kprobe, 1 in 1000 sampled" "$s_every"
rmmod magnet_bench
rmmod magnet
summary

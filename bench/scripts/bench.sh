# Benchmark (not a test): cost of logging one event with magnet, next to
# the kernel's ftrace ring buffer and a copy-only baseline, in this boot.
# Absolute figures under TCG are not hardware figures; the ratios are.
. /magnet/lib.sh
load_magnet buffers=default:64K,bench:256K:overwrite
insmod $M/magnet_bench.ko
for size in 16 64 256; do
	if echo "n=100000 size=$size buffer=bench" > $DBG/magnet_bench/run; then
		pass "benchmark ran, $size-byte payload"
		cat $DBG/magnet_bench/result | sed 's/^/BENCH: /'
		awk '/^magnet / { m = $2 } /^ftrace / { f = $2 } /^baseline / { b = $2 }
		     END { printf "BENCH: magnet/ftrace = %.2f, logging cost magnet %.1f ns, ftrace %.1f ns\n",
			   m / f, m - b, f - b }' $DBG/magnet_bench/result
	else
		fail "benchmark ran, $size-byte payload" "write failed"
	fi
done
unload_all
rmmod magnet_bench
summary

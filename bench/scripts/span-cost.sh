# Benchmark 13 of `make bench`: span-cost. What an application's span
# costs it: magnet-test spans (spans begun and ended through libmagnet,
# each call one write to /dev/magnet-span) against magnet-test syscalls
# (getppid(), about the cheapest system call) and magnet-test devnull (a
# write() of a span's 48 bytes to /dev/null), with no app.span probe,
# and with one logging into an overwrite-mode buffer with no reader (the
# producer side only). On CPU 0; a run is the fastest of five chunks of
# BENCH_N / 5 calls. Per run and case
#	BENCH-RECORD span-cost[-insns] CASE RUN NS_PER_CALL
# CASEs: getppid, devnull, span-off, span-on (a call: a begin or an end). Under
# BENCH_CLOCK=icount every figure is in instructions.
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
NAME=span-cost
[ "${BENCH_CLOCK:-}" = icount ] && NAME=span-cost-insns
unload_all
load_magnet
sleep 5		# (what the boot left running settles first)

# calls WHAT: one run's ns per call, the fastest of 5 chunks
calls() {
	k=0
	while [ $k -lt 5 ]; do
		taskset 1 magnet-test $1 $((N / 5)) | awk '{ print $6 }'
		k=$((k + 1))
	done | sort -n | head -1
}

# run CASE WHAT: a warm-up, then R runs
run() {
	i=0
	while [ $i -le $R ]; do
		v=$(calls $2)
		[ $i -gt 0 ] && echo "BENCH-RECORD $NAME $1 $i $v"
		i=$((i + 1))
	done
}

logged() {
	magnetctl -j probe list | tr '{' '\n' | grep '"name":"app.span"' |
		sed -n 's/.*"logged":\([0-9]*\).*/\1/p'
}

run getppid syscalls
run devnull devnull
run span-off spans
check "a buffer for the spans" magnetctl buffer add spans size 1M mode overwrite
check "app.span into it" magnetctl probe add app.span app.span buffer spans
run span-on spans
n=$(logged)
check "app.span logged every begin and end ($n)" \
	[ "${n:-0}" -ge $((2 * N * (R + 1))) ]
magnetctl probe del app.span
magnetctl buffer del spans
summary

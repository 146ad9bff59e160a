# Shell test harness for the suites that run inside the VM (busybox sh).
# Each check prints "ok - NAME" or "not ok - NAME: WHY"; summary() prints
# "N passed, N failed" and returns non-zero if anything failed.

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

# run_nl COMMAND...: run a program that prints ok/FAIL lines; fails if it
# fails or prints a FAIL line.
run_nl() {
	out=$("$@" 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 0 ] && ! echo "$out" | grep -q '^FAIL'
}

load_magnet() {
	insmod $M/magnet.ko "$@"
}

unload_all() {
	for m in magnet_stress magnet_sample magnet_pairs magnet_pktfilter \
		 magnet_correlate; do
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

# artifact FILE [NAME]: hand FILE to the host, for tests/suites/SUITE.host
# (vm-run puts it in build/<release>/artifacts/SUITE/NAME).
artifact() {
	echo "MAGNET-RIG: artifact ${2:-$(basename "$1")}"
	base64 "$1"
	echo "MAGNET-RIG: artifact-end"
}

summary() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

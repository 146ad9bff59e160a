# Benchmark 8 of `make bench`: session-cost. What a hit of one probe point
# costs with 1, 2 and 4 sessions on it, each with its own kprobe logging
# into its own buffer (magnet-nltest session-hold: a session lives as long
# as its netlink socket), against 1, 2 and 4 probes on it in the default
# session, each with its own buffer: what a second session costs is read
# against what a second probe costs. getppid() on CPU 0, buffers in
# overwrite mode and no reader: the producer side only. Each run (the
# fastest of five chunks of its calls) prints
#	BENCH-RECORD session-cost CASE RUN NS_PER_CALL
# (Not "sessions": tests/rig/vm-run finds tests/suites/sessions.sh, the
# sessions test suite, first.)
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
SYM=__x64_sys_getppid
SIZE=256K
unload_all
load_magnet

# calls: one run on CPU 0, ns per call: the fastest of 5 chunks of N / 5
# calls (as pfilter's: the host's disturbances only ever add time, and
# on a shared host one lands in most runs as noise as large as what is
# measured).
calls() {
	k=0
	while [ $k -lt 5 ]; do
		taskset 1 magnet-test syscalls $((N / 5)) | awk '{ print $6 }'
		k=$((k + 1))
	done | sort -n | head -1
}

# run CASE: the warm-up and R timed runs.
run() {
	i=0
	while [ $i -le $R ]; do
		v=$(calls)
		[ $i -gt 0 ] && echo "BENCH-RECORD session-cost $1 $i $v"
		i=$((i + 1))
	done
}

# logged_all N: N probes are there, and each logged every call of the
# warm-up and the timed runs.
logged_all() {
	magnetctl -j probe list | tr '{' '\n' | sed -n 's/.*"logged":\([0-9]*\).*/\1/p' |
		awk -v n="$1" -v want=$((N * (R + 1))) '
			$1 >= want { ok++ } END { exit !(NR == n && ok == n) }'
}
sessions_listed() { [ "$(magnetctl session list | sed 1d | wc -l)" -eq "$1" ]; }
# dispatch CASE: how its probes are called, for the remarks.
dispatch() {
	echo "BENCH: $1: the probes' dispatch: $(magnetctl -j probe list | tr '{' '\n' |
		sed -n 's/.*"dispatch":"\([a-z]*\)".*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
}

run none
for n in 1 2 4; do
	# n probes in the default session, a buffer each
	bench_probes $n $SYM $SIZE
	dispatch default-$n
	run default-$n
	check "default-$n: every probe logged every call" logged_all $n
	bench_probes_del $n

	# n sessions, each with its probe and its buffer
	pids=
	i=1
	while [ $i -le $n ]; do
		magnet-nltest session-hold $SYM $SIZE > /tmp/hold$i 2>&1 &
		pids="$pids $!"
		wait_for 30 grep -q . /tmp/hold$i
		i=$((i + 1))
	done
	check "sessions-$n: the sessions listed ($n)" sessions_listed $n
	dispatch sessions-$n
	run sessions-$n
	check "sessions-$n: every probe logged every call" logged_all $n
	kill $pids
	wait $pids 2> /dev/null
	rm -f /tmp/hold*
	check "sessions-$n: their sessions ended with their programs" \
		wait_for 10 sessions_listed 0
done

check "magnet unloads" rmmod magnet
summary

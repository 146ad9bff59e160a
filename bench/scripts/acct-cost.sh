# Benchmark 11 of `make bench`: acct-cost. Resourceful's experiment
# (its Table 1 and Figure 2): Debian's lighttpd serving a 22-byte file on
# 127.0.0.1, pinned to CPU 0, and wrk on CPU 1 fetching it, one request
# at a time, each on a new connection (accept, read, write, close), for
# BENCH_ACCT_SECS seconds a run; per run and case
#	BENCH-RECORD acct-cost[-insns] CASE-rps RUN REQUESTS_PER_SECOND
#	BENCH-RECORD acct-cost[-insns] CASE-p50 RUN NS
#	BENCH-RECORD acct-cost[-insns] CASE-p99 RUN NS
#	BENCH-RECORD acct-cost[-insns] CASE-cpu RUN NS
# (wrk's latency percentiles; cpu: lighttpd's own run time, from its
# schedstat, per request). CASEs: plain (lighttpd, the module loaded,
# no handle anywhere); perf-trace and syscount (plain lighttpd while
# perf trace -s, or syscount's way in bpftrace, counts its system calls
# per type with their latency: what users pick today); hooked (plain
# lighttpd while another process holds a handle: the system-call hooks'
# cost to every process); watch (magnetctl acct watch on lighttpd: every
# call accounted, summed per type in the kernel); shim-none and shim-all
# (lighttpd under bench/acct-shim.c, LD_PRELOAD, accounting its every
# accept, receive and send through libmagnet and reading each result,
# its CPU time split among no subsystem, and among all). The cases take
# turns within each run; the hooks go in and out with CPU 1 offline
# (docs/testing.md), and the tracers attach with it offline too.
# Under BENCH_CLOCK=icount (acct-cost-insns: one vCPU, wrk on it too,
# the clock a count of instructions) every figure is in instructions
# and the same from boot to boot; cpu is then the server's instructions
# per request, wrk's apart.
# rig-programs: lighttpd wrk perf bpftrace jq
. /magnet/lib.sh

R=${BENCH_RUNS:-5}
D=${BENCH_ACCT_SECS:-10}
NAME=acct-cost WRK_CPU=2
if [ "${BENCH_CLOCK:-}" = icount ]; then
	NAME=acct-cost-insns WRK_CPU=1
fi
unload_all
load_magnet
check "the loopback device up" ip link set lo up

mkdir -p /tmp/www /tmp/lighttpd
printf 'magnet acct benchmark\n' > /tmp/www/small.html	# 22 bytes
cat > /tmp/lighttpd/lighttpd.conf <<CONF
server.document-root = "/tmp/www"
server.bind = "127.0.0.1"
server.port = 8080
server.errorlog = "/tmp/lighttpd/error.log"
server.max-keep-alive-requests = 0
mimetype.assign = (".html" => "text/html")
CONF

# ns VALUE: wrk's 412.00us, 1.20ms, 2.00s in ns
ns() {
	echo "$1" | awk '{ v = $1 + 0; u = $1; sub(/^[0-9.]+/, "", u)
		m = (u == "us") ? 1e3 : (u == "ms") ? 1e6 : (u == "s") ? 1e9 : 1
		printf "%.0f\n", v * m }'
}

# tracer CASE PID: start what the case watches lighttpd with, attached
# (its events enabled) before it returns; its pid in $tr
tracer() {
	tr=
	other_cpus off
	case $1 in
	perf-trace)
		perf trace -s -p $2 -o /tmp/tracer.out 2> /tmp/tracer.err &
		tr=$!
		wait_for 120 sh -c "ls -l /proc/$tr/fd | grep -q perf_event" ;;
	syscount)
		# bcc's syscount -L -p PID: calls and summed latency per type
		bpftrace -e 'tracepoint:raw_syscalls:sys_enter /pid == $1/ { @start[tid] = nsecs; }
			tracepoint:raw_syscalls:sys_exit /pid == $1 && @start[tid]/ {
				@calls[args->id] = count();
				@ns[args->id] = sum(nsecs - @start[tid]);
				delete(@start[tid]); }' $2 > /tmp/tracer.out 2> /tmp/tracer.err &
		tr=$!
		wait_for 300 grep -q '^Attaching' /tmp/tracer.out ;;
	watch)
		magnetctl acct watch $2 ;;
	esac
	rc=$?
	other_cpus on
	sleep 2
	return $rc
}

# untrace CASE PID REQUESTS: stop it; it saw lighttpd's accepts
untrace() {
	case $1 in
	perf-trace|syscount)
		kill -INT $tr
		wait $tr
		if [ $1 = perf-trace ]; then
			n=$(awk '$1 == "accept4" || $1 == "accept" { s += $2 } END { print s + 0 }' /tmp/tracer.out)
		else
			# (accept4 is 288 on x86-64)
			# (not awk -F'[][: ]+': "[:" opens a character class to
			# busybox's awk, which then matches nothing)
			n=$(sed -n 's/^@calls\[288\]: *\([0-9][0-9]*\).*/\1/p' /tmp/tracer.out)
		fi ;;
	watch)
		magnetctl -j acct -p $2 > /tmp/tracer.out
		magnetctl acct stop $2
		n=$(jq '[.[0].syscalls[] | select(.syscall == "accept4" or .syscall == "accept") | .calls] | add // 0' /tmp/tracer.out) ;;
	esac
	if [ "${n:-0}" -ge "$3" ]; then
		pass "$1 counted lighttpd's accepts ($n, wrk's requests $3)"
	else
		fail "$1 counted lighttpd's accepts" "${n:-none}, wrk's requests $3"
		# (what it printed, for why)
		tail -n 12 /tmp/tracer.out /tmp/tracer.err | sed 's/^/# /'
	fi
}

# serve CASE RUN: lighttpd as the case has it, wrk against it, the records
serve() {
	case $1 in
	shim-none) env="LD_PRELOAD=/magnet/lib/magnet-acct-shim.so MAGNET_ACCT_SUBSYS=0" ;;
	shim-all) env="LD_PRELOAD=/magnet/lib/magnet-acct-shim.so" ;;
	*) env= ;;
	esac
	env $env MAGNET_ACCT_REPORT=1 taskset 1 lighttpd -D -f /tmp/lighttpd/lighttpd.conf \
		2> /tmp/lighttpd/stderr &
	srv=$!
	wait_for 20 sh -c "wget -q -O /dev/null http://127.0.0.1:8080/small.html" || {
		fail "lighttpd ($1) serves" "not up"; kill $srv; return; }
	case $1 in perf-trace|syscount|watch)
		tracer $1 $srv || {
			cat /tmp/tracer.err 2> /dev/null
			fail "$1 attached to lighttpd" "not in time"
			kill $srv; wait $srv; return; }
	esac
	run0=$(cut -d' ' -f1 /proc/$srv/schedstat)
	taskset $WRK_CPU wrk -t1 -c1 -d${D}s --latency -H "Connection: close" \
		http://127.0.0.1:8080/small.html > /tmp/wrk.out 2>&1
	run1=$(cut -d' ' -f1 /proc/$srv/schedstat)
	reqs=$(awk '$2 == "requests" && $3 == "in" { print $1 }' /tmp/wrk.out)
	case $1 in perf-trace|syscount|watch) untrace $1 $srv "${reqs:-0}" ;; esac
	kill -TERM $srv
	wait $srv
	rps=$(awk '/^Requests\/sec:/ { print $2 }' /tmp/wrk.out)
	p50=$(awk '$1 == "50%" { print $2 }' /tmp/wrk.out)
	p99=$(awk '$1 == "99%" { print $2 }' /tmp/wrk.out)
	if [ -z "$rps" ] || [ -z "$p99" ] || [ -z "$reqs" ] || [ "$reqs" -eq 0 ]; then
		cat /tmp/wrk.out
		fail "wrk against lighttpd ($1)" "no figures"
		return
	fi
	echo "BENCH-RECORD $NAME $1-rps $2 $rps"
	echo "BENCH-RECORD $NAME $1-p50 $2 $(ns $p50)"
	echo "BENCH-RECORD $NAME $1-p99 $2 $(ns $p99)"
	echo "BENCH-RECORD $NAME $1-cpu $2 $(( (run1 - run0) / reqs ))"
	case $1 in shim-*)
		# the shim accounted calls, and every one it tried
		grep "calls accounted" /tmp/lighttpd/stderr
		check "the shim accounted lighttpd's calls ($1)" \
			sh -c "grep -q 'magnet-acct-shim: [1-9][0-9]* calls accounted.* 0 not' /tmp/lighttpd/stderr"
	esac
}

hooks() {
	other_cpus off
	if [ "$1" = on ]; then
		exec 3<> /dev/magnet-acct
	else
		exec 3>&-
		sleep 6		# (acct.c lets them go 5 s after the last handle)
	fi
	other_cpus on
}

# a warm-up, then the runs
serve plain 0 > /dev/null
i=1
while [ $i -le $R ]; do
	serve plain $i
	for c in perf-trace syscount; do
		case $c in
		perf-trace) have=perf ;;
		*) have=bpftrace ;;
		esac
		if command -v $have > /dev/null; then
			serve $c $i
		elif [ $i = 1 ]; then
			echo "BENCH-UNAVAILABLE $have not in the rig: no $c figures"
		fi
	done
	hooks on
	serve hooked $i
	serve watch $i
	serve shim-none $i
	serve shim-all $i
	hooks off
	i=$((i + 1))
done
summary

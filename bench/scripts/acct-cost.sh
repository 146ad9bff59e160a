# Benchmark 11 of `make bench`: acct-cost. Resourceful's experiment
# (its Table 1 and Figure 2): Debian's lighttpd serving a 22-byte file on
# 127.0.0.1, pinned to CPU 0, and wrk on CPU 1 fetching it, one request
# at a time, each on a new connection (accept, read, write, close), for
# BENCH_ACCT_SECS seconds a run; per run and case
#	BENCH-RECORD acct-cost CASE-rps RUN REQUESTS_PER_SECOND
#	BENCH-RECORD acct-cost CASE-p50 RUN NS
#	BENCH-RECORD acct-cost CASE-p99 RUN NS
# (wrk's latency percentiles). CASEs: plain (lighttpd, the module loaded,
# no handle anywhere); hooked (plain lighttpd while another process holds
# a handle: the system-call hooks' cost to every process); shim-none and
# shim-all (lighttpd under bench/acct-shim.c, LD_PRELOAD, accounting its
# every accept, receive and send through libmagnet and reading each
# result, its CPU time split among no subsystem, and among all). The
# cases take turns within each run; the hooks go in and out with CPU 1
# offline (docs/testing.md).
# rig-programs: lighttpd wrk
. /magnet/lib.sh

R=${BENCH_RUNS:-5}
D=${BENCH_ACCT_SECS:-10}
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
	taskset 2 wrk -t1 -c1 -d${D}s --latency -H "Connection: close" \
		http://127.0.0.1:8080/small.html > /tmp/wrk.out 2>&1
	kill -TERM $srv
	wait $srv
	rps=$(awk '/^Requests\/sec:/ { print $2 }' /tmp/wrk.out)
	p50=$(awk '$1 == "50%" { print $2 }' /tmp/wrk.out)
	p99=$(awk '$1 == "99%" { print $2 }' /tmp/wrk.out)
	if [ -z "$rps" ] || [ -z "$p99" ]; then
		cat /tmp/wrk.out
		fail "wrk against lighttpd ($1)" "no figures"
		return
	fi
	echo "BENCH-RECORD acct-cost $1-rps $2 $rps"
	echo "BENCH-RECORD acct-cost $1-p50 $2 $(ns $p50)"
	echo "BENCH-RECORD acct-cost $1-p99 $2 $(ns $p99)"
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
	hooks on
	serve hooked $i
	serve shim-none $i
	serve shim-all $i
	hooks off
	i=$((i + 1))
done
summary

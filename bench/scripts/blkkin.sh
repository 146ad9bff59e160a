# Benchmark 15 of `make bench`: blkkin. BlkKin's experiment (its thesis,
# §5: 1 GB of 64 KB sequential writes, 12.7 MB/s bare, 11.8 MB/s with the
# instrumentation present but stopped, 11 MB/s while tracing: 0.93x and
# 0.87x): 64 KiB sequential writes with O_DIRECT to an NBD disk, whose
# server (Debian's nbd-server, exporting a null_blk disk, each write
# synced) runs in a second network namespace joined by a veth pair; and
# its HTTP case, wrk fetching a 16 KiB file from Debian's lighttpd in that
# namespace. In one boot, so that the cases' ratios are the same
# machine's (two VMs under TCG would share the host's CPUs and take each
# other's time). Cases, each run in a rotated order:
#   bare      the writer without spans (magnet-test span-write ... plain),
#             wrk without a traceparent; magnet loaded, no probes
#   present   each write in a span (libmagnet, a write to /dev/magnet-span
#             per edge), wrk's requests with a traceparent; no probes
#   tracing   the same, with magnet-read -P app,tcp-send,tcp-recv,blk-io
#             writing the spans as OTLP/JSON to a file (--otlp; the first
#             1024 bytes of each packet, its default for spans alone)
# Per run and case
#	BENCH-RECORD blkkin[-insns] nbd-CASE RUN MB_PER_S
#	BENCH-RECORD blkkin[-insns] http-CASE RUN REQUESTS_PER_S
# Under BENCH_CLOCK=icount (blkkin-insns: one vCPU, the clock a count of
# the instructions the guest runs) a second is a thousand million
# instructions: MB and requests per thousand million instructions of
# everything (writer, server, reader), the same in every boot.
# rig-programs: nbd-server nbd-client lighttpd wrk
# rig-kmods: null_blk nbd
. /magnet/lib.sh

R=${BENCH_RUNS:-5}
NAME=blkkin
[ "${BENCH_CLOCK:-}" = icount ] && NAME=blkkin-insns
N=${BENCH_BLKKIN_WRITES:-256}		# 64 KiB writes per run: 16 MiB
D=${BENCH_ACCT_SECS:-10}		# seconds of wrk per run
unload_all
load_magnet
check "two namespaces joined by a veth pair" netns_pair
check "a null_blk disk" modprobe null_blk nr_devices=1 gb=1
check "the nbd module" modprobe nbd
printf '[generic]\nuser = root\ngroup = root\n[disk]\nexportname = /dev/nullb0\nsync = true\n' > /tmp/nbd.conf
check "nbd-server in namespace B" inB nbd-server -C /tmp/nbd.conf
check "nbd-client in namespace A" wait_for 30 inA nbd-client 10.9.0.2 -N disk /dev/nbd0
mkdir -p /tmp/www
dd if=/dev/urandom of=/tmp/www/f.bin bs=1024 count=16 2> /dev/null
cat > /tmp/lighttpd.conf <<CONF
server.document-root = "/tmp/www"
server.bind = "10.9.0.2"
server.port = 80
server.errorlog = "/tmp/lighttpd.err"
server.pid-file = "/tmp/lighttpd.pid"
CONF
check "lighttpd in namespace B" inB lighttpd -f /tmp/lighttpd.conf
sleep 5		# (what the boot left running settles first)
TP=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01

# trace on|off: magnet-read capturing the sets as spans (with the other
# CPUs offline while its probes go in and out: TCG, docs/testing.md)
trace() {
	other_cpus off
	if [ $1 = on ]; then
		magnet-read -B 8192 -P app,tcp-send,tcp-recv,blk-io --otlp /tmp/spans.otlp 2> /tmp/mr.err &
		MR=$!
		wait_for 120 grep -q "^magnet-read: capturing" /tmp/mr.err
	else
		interrupt $MR
		wait $MR
		tail -n 2 /tmp/mr.err | sed 's/^/# /'
	fi
	other_cpus on
}

# nbd CASE RUN: MB/s of N 64 KiB writes
nbd() {
	mode=spans
	[ $1 = bare ] && mode=plain
	inA magnet-test span-write /dev/nbd0 $N 65536 $mode 2> /tmp/w.txt > /dev/null || return 1
	ns=$(awk '{ print $4 }' /tmp/w.txt)
	echo "BENCH-RECORD $NAME nbd-$1 $2 $(awk -v t=$ns -v n=$N 'BEGIN { printf "%.3f\n", n * 65536 / 1048576 / (t / 1e9) }')"
}

# http CASE RUN: requests/s of wrk (one connection, keep-alive)
http() {
	hdr=
	[ $1 = bare ] || hdr="traceparent: $TP"
	if [ -n "$hdr" ]; then
		inA wrk -t1 -c1 -d${D}s -H "$hdr" http://10.9.0.2:80/f.bin > /tmp/wrk.txt 2>&1
	else
		inA wrk -t1 -c1 -d${D}s http://10.9.0.2:80/f.bin > /tmp/wrk.txt 2>&1
	fi
	rps=$(awk '/^Requests\/sec:/ { print $2 }' /tmp/wrk.txt)
	[ -n "$rps" ] || { cat /tmp/wrk.txt; return 1; }
	echo "BENCH-RECORD $NAME http-$1 $2 $rps"
}

# (each run's cases in another order, bare first, then second, then
# last: a machine that drifts in a boot, as TCG's does, moves every case
# alike)
i=0
while [ $i -le $R ]; do
	case $((i % 3)) in
	0) order="bare present tracing" ;;
	1) order="present tracing bare" ;;
	2) order="tracing bare present" ;;
	esac
	for c in $order; do
		[ $c = tracing ] && trace on
		# (run 0: a warm-up, not recorded)
		if [ $i -gt 0 ]; then
			nbd $c $i || fail "nbd $c run $i" "the writes failed"
			http $c $i || fail "http $c run $i" "wrk failed"
		else
			nbd $c 0 > /dev/null
		fi
		[ $c = tracing ] && trace off
	done
	i=$((i + 1))
done
n=$(grep -c '"spanId"' /tmp/spans.otlp 2> /dev/null || echo 0)
check "the traced runs' spans were written ($n lines of requests)" [ "$n" -gt 0 ]
inA nbd-client -d /dev/nbd0 > /dev/null 2>&1
kill "$(cat /tmp/lighttpd.pid)" 2> /dev/null
killall nbd-server 2> /dev/null
kill $A $B 2> /dev/null
summary

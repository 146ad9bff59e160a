# Benchmark (not a test): what a probe adds to the path it instruments,
# for magnet and for ftrace's own kprobe and syscall events, measured side
# by side in this boot. The path is the getppid() system call; each figure
# is the best of 5 runs of 200 000 calls. Both tools log into an
# overwrite-mode buffer nobody reads, so only the producer side is timed.
. /magnet/lib.sh
unload_all
load_magnet buffers=default:4M:overwrite
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
N=200000

best() { best_ns_per_call $N; }

base=$(best)
echo "BENCH: getppid() without probes: $base ns per call"

magnetctl probe add kp kprobe __x64_sys_getppid
m_kp=$(best)
hits=$(magnetctl -j probe list | sed -n 's/.*"name":"kp".*"hits":\([0-9]*\).*/\1/p')
check "the magnet kprobe was hit for every call ($hits)" test "${hits:-0}" -ge $((5 * N))
magnetctl probe del kp
magnetctl probe add kp kprobe __x64_sys_getppid args 2
m_kp2=$(best)
magnetctl probe del kp

echo 'p:magnet_bench/getppid __x64_sys_getppid' > $T/kprobe_events
echo 1 > $T/events/magnet_bench/getppid/enable
f_kp=$(best)
echo 0 > $T/events/magnet_bench/getppid/enable
echo > $T/kprobe_events

magnetctl probe add se syscall_enter
m_tp=$(best)
magnetctl probe del se

echo 1 > $T/events/raw_syscalls/sys_enter/enable
f_tp=$(best)
echo 0 > $T/events/raw_syscalls/sys_enter/enable

awk -v b="$base" -v mk="$m_kp" -v mk2="$m_kp2" -v fk="$f_kp" -v mt="$m_tp" -v ft="$f_tp" 'BEGIN {
	printf "BENCH: kprobe, no arguments:   magnet +%.0f ns, ftrace kprobe event +%.0f ns, magnet/ftrace %.2f\n", mk - b, fk - b, (mk - b) / (fk - b)
	printf "BENCH: kprobe, 2 arguments:    magnet +%.0f ns\n", mk2 - b
	printf "BENCH: syscall entry:          magnet syscall_enter +%.0f ns, ftrace raw_syscalls:sys_enter +%.0f ns, magnet/ftrace %.2f\n", mt - b, ft - b, (mt - b) / (ft - b)
}'
rmmod magnet
summary

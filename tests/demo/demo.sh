# The demonstration: magnet loaded in a real kernel, events flowing from
# task, softirq, hardirq and NMI context on every CPU into per-CPU buffers,
# read with magnet-read; then a buffer overflowing and saying what it lost;
# then probes added at run time with magnetctl, and notifications; then
# packet journeys through the network stack.
. /magnet/lib.sh
C=$DBG/magnet/control
say() { printf '\n=== %s\n' "$*"; }

say "Loading magnet: a default buffer, and a small one that will overflow"
insmod $M/magnet.ko buffers=default:256K,small:8K
cat $C/buffers
say "The record format the module speaks (control/format)"
cat $C/format

insmod $M/magnet_stress.ko
say "Events from every context on $(nproc) CPUs, as magnet-read prints them"
( sleep 0.2; echo "ms=800 period_us=4000 burst=1 task_sleep_us=8000 max=64" \
	> $DBG/magnet_stress/run ) &
magnet-read -c 30
wait
magnet-read -N -q

say "Writers flat out into the 8 KiB buffer: losses appear where they happened"
echo "buffer=small ms=200 period_us=500 burst=4" > $DBG/magnet_stress/run
magnet-read -b small -N | grep -m 6 -B1 LOST

say "Counters (control/stats): produced = read + lost on every CPU"
cat $C/stats

rmmod magnet_stress

say "Probes at run time, over generic netlink: the catalog"
magnetctl probe catalog
say "A kprobe on getppid(), a kretprobe on nanosleep, the sched_switch tracepoint"
magnetctl probe add ppid kprobe __x64_sys_getppid
magnetctl probe add nap kretprobe __x64_sys_clock_nanosleep
magnetctl probe add sw sched_switch
magnet-read -N -q 2>/dev/null
magnet-test syscalls 5
usleep 100000
ids=$(magnetctl -j probe list | tr '{' '\n' |
	sed -n 's/.*"id":\([0-9]*\),"name":"\(ppid\|nap\)".*/\1/p' | tr '\n' '|')
# ppid's records, and nap's with its payload: return value, nanoseconds
magnet-read -N -x | grep -A1 -E " ev (${ids%|}) " |
	grep -E "^    | ev (${ids%|}) " | head -20
say "Probes with their counters (magnetctl probe list)"
magnetctl probe list
say "Notifications: magnetctl monitor sees each hit of a notify probe"
magnetctl -j monitor count 2 &
sleep 0.5
magnetctl probe set ppid notify on
magnet-test syscalls 2 > /dev/null
wait
magnetctl stats | tail -n 1
magnetctl probe del ppid
magnetctl probe del nap
magnetctl probe del sw

say "Packet journeys: UDP between two network namespaces joined by a veth pair"
netns_pair
echo "magnet-read -n -P udp-send,udp-recv -s 64 -c 3 udp port 5001"
timeout 30 magnet-read -n -P udp-send,udp-recv -s 64 -c 3 udp port 5001 &
mr=$!
sleep 2
inB magnet-test udp-recv 10.9.0.2 5001 3 > /dev/null &
sleep 0.3
inA magnet-test udp-send 10.9.0.2 5001 3 100 4242 > /dev/null
wait $mr

say "TCP over loopback, one line per packet (-q)"
echo "magnet-read -n -q -P tcp-send,tcp-recv -c 10 tcp port 5002"
timeout 30 magnet-read -n -q -P tcp-send,tcp-recv -c 10 tcp port 5002 &
mr=$!
sleep 2
timeout 10 magnet-test tcp-recv 127.0.0.1 5002 > /dev/null &
sleep 0.3
magnet-test tcp-send 127.0.0.1 5002 3 100 > /dev/null
wait $mr
kill $A $B

rmmod magnet
say "Done: magnet unloaded cleanly, its probes with it"
check "demo ran" true
summary

# Benchmark 1 of `make bench`: cost per event. The path is the getppid()
# system call in a tight loop on CPU 0; every case times R runs of N
# calls (after one warm-up run, the same for every case) while the tool's
# reader, where it has one, drains on CPU 1. Each run prints
#	BENCH-RECORD cost CASE RUN NS_PER_CALL
# and bench/report.py turns them into added cost per call, ratios and spread.
# Tools missing from the rig, or that cannot work in this kernel, print
#	BENCH-UNAVAILABLE TOOL REASON
# and the clocksource in use (bench/run boots with the TSC's) as
#	BENCH-INFO clocksource NAME
. /magnet/lib.sh

N=${BENCH_N:-200000}
R=${BENCH_RUNS:-5}
SYM=__x64_sys_getppid
bench_tracefs	# (magnet's own sched probes are not used either)
unload_all
# Overwrite mode, as ftrace's buffers: when the reader falls behind, every
# event still pays for being written, and for evicting the oldest (in drop
# mode a full buffer would make the lost ones cheap and flatter magnet).
# Each case prints what its reader read and what was overwritten first.
load_magnet buffers=default:4M:overwrite
insmod $M/magnet_bench.ko

# run CASE: the warm-up and R timed runs on CPU 0.
run() {
	CASE=$1
	taskset 1 magnet-test syscalls $N > /dev/null
	i=1
	while [ $i -le $R ]; do
		v=$(taskset 1 magnet-test syscalls $N | awk '{ print $6 }')
		echo "BENCH-RECORD cost $1 $i $v"
		i=$((i + 1))
	done
}
# Readers on CPU 1, into tmpfs files (both tools alike).
reader_start() {
	rm -f /tmp/bench.out
	taskset 2 "$@" > /tmp/bench.stdout 2> /tmp/bench.err &
	RD=$!
	sleep 2
}
# What the reader says about loss (magnet-read: records and lost;
# trace-cmd: overruns per CPU; bpftrace: lost events).
reader_stop() {
	# ftrace's rings count what was overwritten; trace-cmd resets them.
	case $CASE in ftrace-*)
		echo "$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }') events overrun" > /tmp/bench.err.ftrace ;;
	esac
	kill -INT $RD 2>/dev/null
	wait $RD 2>/dev/null
	echo "BENCH: $CASE, reader: $(cat /tmp/bench.err /tmp/bench.err.ftrace /tmp/bench.stdout 2>/dev/null |
		awk '/records, [0-9]+ lost|overrun/ { print }
		     /^Lost [0-9]+ events/ { lost += $2; seen = 1 }
		     END { if (seen) print lost " events lost (bpftrace)" }' | tr -s ' \n' ' ')"
	rm -f /tmp/bench.out /tmp/bench.stdout /tmp/bench.err.ftrace
}
magnet_reader() { reader_start magnet-read -b default --trace /tmp/bench.out; }
ftrace_reader() {	# EVENT: trace-cmd records it into a file
	reader_start trace-cmd record -O norecord-cmd -e "$1" -o /tmp/bench.out
	sleep 3		# trace-cmd enables the event once its recorders run
}
have() { command -v "$1" > /dev/null; }

CS=/sys/devices/system/clocksource/clocksource0
echo "BENCH-INFO clocksource $(cat $CS/current_clocksource)"
echo "BENCH: clocksources available: $(cat $CS/available_clocksource)"
# How this kernel returns from functions and calls through pointers on
# the emulated CPU: every tool pays it per call and return.
V=/sys/devices/system/cpu/vulnerabilities
for v in spectre_v2 retbleed spec_rstack_overflow; do
	[ -f $V/$v ] && echo "BENCH-INFO mitigation-$v $(cat $V/$v)"
done

run none

# The floor of a kprobe-based sensor: a handler that does nothing.
echo $SYM > $DBG/magnet_bench/empty_kprobe
run kprobe-empty
echo - > $DBG/magnet_bench/empty_kprobe

# The floor at a function's entry: an ftrace_ops callback that does nothing.
echo $SYM > $DBG/magnet_bench/empty_ftrace
run ftrace-ops-empty
# ... and one that takes the guards every real callback needs (ftrace's
# recursion lock, RCU watching) and nothing more: magnet's own ops and
# its callback's share of a filtered-out event.
echo "$SYM guarded" > $DBG/magnet_bench/empty_ftrace
run ftrace-ops-guarded
# ... and one that also reads the clock magnet stamps its records with:
# what a logged record's timestamp costs in this boot.
echo "$SYM clocked" > $DBG/magnet_bench/empty_ftrace
run ftrace-ops-clocked
echo "$SYM local-clocked" > $DBG/magnet_bench/empty_ftrace
run ftrace-ops-local-clocked
echo - > $DBG/magnet_bench/empty_ftrace

# magnet's generic kprobe (a 40-byte header, no argument; at a function's
# entry, so through magnet's own ftrace_ops), the event dropped by a
# filter rule, then logged while magnet-read drains.
magnetctl probe add kp kprobe $SYM > /dev/null
magnetctl filter add kp tgid 1 > /dev/null
run magnet-kprobe-filtered
magnetctl filter del "$(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p')"
magnet_reader
run magnet-kprobe
reader_stop
magnetctl probe del kp

# The same through the kernel's kprobe (magnet's dispatch before its own
# ftrace_ops): what the ftrace_ops saves.
magnetctl probe add kp kprobe $SYM dispatch kprobe > /dev/null
magnet_reader
run magnet-kprobe-kdispatch
reader_stop
magnetctl probe del kp

# Payloads of 32 B, 256 B and 4 KiB logged from a kprobe (magnet_bench's
# event "bench_log"), magnet-read draining.
for size in 32 256 4096; do
	echo "$SYM $size" > $DBG/magnet_bench/log_kprobe
	magnetctl probe enable bench_log
	magnet_reader
	run magnet-log-$size
	reader_stop
	echo - > $DBG/magnet_bench/log_kprobe
done

# The system call entry tracepoint: a handler that does nothing (the
# floor of any tracepoint-based sensor: it also turns on the system
# calls' tracing path), then magnet's predefined probe.
echo sys_enter > $DBG/magnet_bench/empty_tracepoint
run tracepoint-empty
echo - > $DBG/magnet_bench/empty_tracepoint
magnetctl probe add se syscall_enter > /dev/null
magnet_reader
run magnet-tracepoint
reader_stop
magnetctl probe del se

# A kretprobe.
magnetctl probe add kr kretprobe $SYM > /dev/null
magnet_reader
run magnet-kretprobe
reader_stop
magnetctl probe del kr

# ftrace: the same points as kprobe events and the raw_syscalls
# tracepoint, recorded by trace-cmd.
if have trace-cmd; then
	echo "p:bench/getppid $SYM" > $T/kprobe_events
	echo "r:bench/getppid_ret $SYM" >> $T/kprobe_events
	ftrace_reader bench:getppid
	run ftrace-kprobe
	reader_stop
	ftrace_reader raw_syscalls:sys_enter
	run ftrace-tracepoint
	reader_stop
	ftrace_reader bench:getppid_ret
	run ftrace-kretprobe
	reader_stop
	echo > $T/kprobe_events
else
	echo "BENCH-UNAVAILABLE trace-cmd not in the rig (scripts/install-deps installs it)"
fi

# bpftrace: counting in the kernel (its usual way), and one line per
# event through its perf buffer (what logging every event takes).
if have bpftrace; then
	for c in "bpftrace-kprobe-count kprobe:$SYM { @n = count(); }" \
		 "bpftrace-kprobe-printf kprobe:$SYM { printf(\"%d %d\\n\", tid, cpu); }" \
		 "bpftrace-kretprobe-count kretprobe:$SYM { @n = count(); }"; do
		name=${c%% *}
		prog=${c#* }
		taskset 2 bpftrace -e "$prog" > /tmp/bench.stdout 2> /tmp/bench.err &
		RD=$!
		# bpftrace compiles its program first (slow under TCG).
		t=0
		while [ $t -lt 300 ] && ! grep -q Attaching /tmp/bench.stdout /tmp/bench.err 2>/dev/null; do
			sleep 1
			t=$((t + 1))
		done
		sleep 2
		if grep -q Attaching /tmp/bench.stdout /tmp/bench.err; then
			run $name
		else
			echo "BENCH-UNAVAILABLE bpftrace did not attach: $(head -c 200 /tmp/bench.err)"
		fi
		reader_stop
	done
else
	echo "BENCH-UNAVAILABLE bpftrace not in the rig (scripts/install-deps installs it)"
fi

# LTTng: its kernel modules (bench/run builds them for this kernel) and
# its session daemon, a kprobe event recorded by its consumer daemon into
# a tmpfs file, as trace-cmd's.
# The session daemon loads LTTng's modules itself, as it does on a
# system where they are installed (the rig indexes them with depmod); of
# its probe modules (instrumented tracepoints) a kprobe event needs none,
# so only one is asked for instead of all of them.
lttng_load() {
	[ -d /lib/modules/$(uname -r)/extra ] && have lttng-sessiond || return 1
	mkdir -p /var/run /dev/shm
	export HOME=/tmp LTTNG_HOME=/tmp
	lttng-sessiond -d --kmod-probes=sched \
		--consumerd64-path=/magnet/bin/lttng-consumerd \
		> /tmp/lttng-sessiond.log 2>&1 || return 1
	sleep 2
	[ -d /sys/module/lttng_tracer ]
}
if lttng_load; then
	rm -rf /tmp/lttng-out
	if lttng create bench --output=/tmp/lttng-out > /tmp/lttng.log 2>&1 &&
	   lttng enable-event -k --probe=$SYM getppid >> /tmp/lttng.log 2>&1 &&
	   lttng start >> /tmp/lttng.log 2>&1; then
		CASE=lttng-kprobe
		run lttng-kprobe
		lttng stop > /tmp/bench.err 2>&1
		echo "BENCH: lttng-kprobe, reader: $(grep -i 'discard\|lost' /tmp/bench.err | tr -s ' \n' ' ')$(du -s /tmp/lttng-out | awk '{ print $1 }') KiB recorded"
		lttng destroy bench > /dev/null 2>&1
	else
		echo "BENCH-UNAVAILABLE lttng could not set up its session: $(tail -n 3 /tmp/lttng.log /tmp/lttng-sessiond.log | tr -s ' \n' ' ' | head -c 300)"
	fi
	rm -rf /tmp/lttng-out
	killall lttng-sessiond 2>/dev/null
	sleep 1
elif [ -f /tmp/lttng-sessiond.log ]; then
	echo "BENCH-UNAVAILABLE lttng its session daemon found no kernel tracer: $(grep -i 'error\|warning' /tmp/lttng-sessiond.log | tr -s ' \n' ' ' | head -c 300)"
	killall lttng-sessiond 2>/dev/null
else
	echo "BENCH-UNAVAILABLE lttng no LTTng in the rig for $(uname -r): bench/run builds its modules where Debian's lttng-tools is installed"
fi

# What the HPET clocksource would add, in this boot: magnet's kprobe event
# again with the clock switched to the HPET (the clocksource under TCG
# when the TSC is not declared reliable), then back.
if [ "$(cat $CS/current_clocksource)" = tsc ] && grep -qw hpet $CS/available_clocksource; then
	echo hpet > $CS/current_clocksource
	sleep 1
	if [ "$(cat $CS/current_clocksource)" = hpet ]; then
		run none-hpet
		magnetctl probe add kp kprobe $SYM > /dev/null
		magnet_reader
		run magnet-kprobe-hpet
		reader_stop
		magnetctl probe del kp
	fi
	echo tsc > $CS/current_clocksource
	sleep 1
	echo "BENCH-INFO clocksource-after $(cat $CS/current_clocksource)"
fi

run none-after
rmmod magnet_bench
unload_all
check "the cost benchmark ran" true
summary

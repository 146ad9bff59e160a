# Sampling (cpu.sample): in the catalog as a probe of kind sample; its
# period and stack depth refused out of range, and on any other probe,
# leaving nothing behind; at 1 kHz, every online CPU ticks about once a
# period; a CPU-bound program pinned to CPU 0 shows in CPU 0's samples as
# itself, in user mode, with its user stack walked by its frame pointers,
# the return addresses in its two functions 4:1 as their work is; the
# other CPU, idle, shows the idle task with a kernel stack; depth 0
# records no stack; a CPU taken offline and back starts again (a first
# tick, no gap counted as lost time); deleting the probe stops its
# timers.
# rig-programs: jq
. /magnet/lib.sh

unload_all
load_magnet

check "the catalog has cpu.sample, of kind sample" \
	sh -c 'magnetctl probe catalog | grep -q "^cpu\.sample  *sample "'
check "probe sets lists the cpu set" \
	sh -c 'magnetctl probe sets | grep -q "^cpu  *sample "'
check "buffer smp" magnetctl buffer add smp size 1M

# bad input: a clear error, nothing added
refused() {	# refused MESSAGE COMMAND...: fails, saying MESSAGE
	m=$1; shift
	! "$@" 2> /tmp/refused.err && grep -q "$m" /tmp/refused.err ||
		{ cat /tmp/refused.err; return 1; }
}
check "period 0 refused" \
	refused "the period is 100000 ns" magnetctl probe add s0 cpu.sample period 0
check "period 50us (20 kHz) refused" \
	refused "the period is 100000 ns" magnetctl probe add s0 cpu.sample period 50us
check "period 2s refused" \
	refused "the period is 100000 ns" magnetctl probe add s0 cpu.sample period 2s
check "depth 65 refused" \
	refused "depth" magnetctl probe add s0 cpu.sample depth 65
check "a period on sched_switch refused" \
	refused "for cpu.sample only" magnetctl probe add s0 sched_switch period 1ms
check "a period on a generic probe refused" \
	refused "for cpu.sample only" magnetctl probe add s0 tracepoint sched_switch period 1ms
check "... and nothing was added" sh -c '[ -z "$(magnetctl probe list | tail -n +2)" ]'

# CPU 0 busy with the burner, CPU 1 idle; 1 kHz
ncpu=$(grep -c ^processor /proc/cpuinfo)
check "the probe: period 1ms" magnetctl probe add s1 cpu.sample buffer smp period 1ms
check "... shown with its period and depth" \
	sh -c 'magnetctl -j probe show s1 | jq -e "[.. | objects | select(.name? == \"s1\")][0] | .period_ns == 1000000 and .depth == 32" > /dev/null'
t0=$(date +%s)
taskset 1 magnet-test burn 60000 > /tmp/burn.txt &
burner=$!
sleep 1
[ $ncpu -gt 1 ] && { echo 0 > /sys/devices/system/cpu/cpu1/online; sleep 1; echo 1 > /sys/devices/system/cpu/cpu1/online; }
wait $burner
sleep 1
check "delete the probe" magnetctl probe del s1
magnet-read -b smp -N -j > /tmp/s1.json 2> /tmp/s1.err
echo "# burn took $(cat /tmp/burn.txt) s; $(wc -l < /tmp/s1.json) samples"
n0=$(jq -s '[.[] | select(.type == "sample" and .cpu == 0)] | length' /tmp/s1.json)
secs=$(($(date +%s) - t0))
echo "# CPU 0: $n0 samples in about $secs s"
check "CPU 0 ticked at about 1 kHz (at least 500 a second)" [ $n0 -ge $((secs * 500)) ]
check "... no more than one a period (plus one a second of slack)" [ $n0 -le $((secs * 1000 + secs)) ]
jq -s '[.[] | select(.type == "sample" and (.flags | index("first") | not)) | .since_ns] | sort | .[length / 2 | floor]' /tmp/s1.json > /tmp/median.txt
echo "# median time between ticks: $(cat /tmp/median.txt) ns"
check "... the median time between ticks is the period (0.8 to 1.25 ms)" \
	sh -c '[ $(cat /tmp/median.txt) -ge 800000 ] && [ $(cat /tmp/median.txt) -le 1250000 ]'
burnpid=$(jq -s "[.[] | select(.type == \"sample\" and .cpu == 0 and (.flags | index(\"user\")))] | group_by(.tgid) | max_by(length) | .[0].tgid" /tmp/s1.json)
jq -s "[.[] | select(.type == \"sample\" and .tgid == $burnpid)]" /tmp/s1.json > /tmp/burn.json
nb=$(jq 'length' /tmp/burn.json)
nu=$(jq '[.[] | select(.flags | index("user"))] | length' /tmp/burn.json)
echo "# the burner ($burnpid): $nb samples, $nu in user mode"
# (before taskset's exec, the process may run on CPU 1)
check "the burner's samples are on CPU 0 (99 %)" \
	sh -c "[ \$(jq '[.[] | select(.cpu != 0)] | length' /tmp/burn.json) -le $((nb / 100)) ]"
# (a debug kernel spends a tenth of it in the kernel: exec, faults)
check "... most in user mode (80 %)" [ $((nu * 100)) -ge $((nb * 80)) ]
check "... with their user ip" \
	sh -c "[ \$(jq '[.[] | select((.flags | index(\"user\")) and .user_ip != .ip)] | length' /tmp/burn.json) -eq 0 ]"
# burn_steps() is called from burn_major() 4 times as long as from
# burn_minor(): the two commonest innermost return addresses
jq -r '[.[] | select((.flags | index("user")) and .user_depth >= 3) | .user_stack[0]] | group_by(.) | map(length) | sort | reverse | .[0:2] | @tsv' /tmp/burn.json > /tmp/split.txt
echo "# the two commonest callers: $(cat /tmp/split.txt)"
check "... user stacks walked: 4:1 between its two functions (3 to 5.5)" \
	awk '{ r = $1 / $2; exit !(r >= 3 && r <= 5.5 && $1 + $2 >= 0.9 * '$nu') }' /tmp/split.txt
check "... each to burn_loop and beyond (3 frames or more)" \
	sh -c "[ \$(jq '[.[] | select((.flags | index(\"user\")) and .user_depth < 3)] | length' /tmp/burn.json) -le $((nu / 20)) ]"
if [ $ncpu -gt 1 ]; then
	jq -s '[.[] | select(.type == "sample" and .cpu == 1)]' /tmp/s1.json > /tmp/cpu1.json
	n1=$(jq 'length' /tmp/cpu1.json)
	ni=$(jq '[.[] | select(.flags | index("idle"))] | length' /tmp/cpu1.json)
	echo "# CPU 1: $n1 samples, $ni idle"
	check "the idle CPU shows its idle task (half its samples or more)" \
		[ $((ni * 2)) -ge $n1 ]
	check "... as tgid 0, in the kernel, with a kernel stack" \
		sh -c "[ \$(jq '[.[] | select((.flags | index(\"idle\")) and (.tgid != 0 or (.flags | index(\"user\")) or .kernel_depth == 0))] | length' /tmp/cpu1.json) -le $((ni / 20)) ]"
	check "taken offline and back: CPU 1 started again (two first ticks)" \
		sh -c "[ \$(jq '[.[] | select(.flags | index(\"first\"))] | length' /tmp/cpu1.json) -eq 2 ]"
	check "... and no tick there counts the time it was away (all under 0.5 s)" \
		sh -c "[ \$(jq '[.[] | select(.since_ns > 500000000)] | length' /tmp/cpu1.json) -eq 0 ]"
fi
check "no sample after the probe was deleted" \
	sh -c '[ -z "$(magnet-read -b smp -N -q 2>&1 | grep "^magnet-read: [1-9][0-9]* records")" ]'

# depth 0: no stacks; 250 Hz
check "a probe at depth 0, period 4ms" magnetctl probe add s2 cpu.sample buffer smp period 4ms depth 0
sleep 2
magnetctl probe del s2
magnet-read -b smp -N -j > /tmp/s2.json 2> /dev/null
n2=$(jq -s '[.[] | select(.type == "sample")] | length' /tmp/s2.json)
echo "# depth 0 at 250 Hz: $n2 samples"
check "... ticks (at least 200 a CPU in 2 s at 250 Hz)" [ $n2 -ge $((200 * ncpu)) ]
check "... with no stack" \
	sh -c "[ \$(jq -s '[.[] | select(.type == \"sample\" and (.kernel_depth + .user_depth) > 0)] | length' /tmp/s2.json) -eq 0 ]"
check "... with its period" \
	sh -c "[ \$(jq -s '[.[] | select(.type == \"sample\" and .period_ns != 4000000)] | length' /tmp/s2.json) -eq 0 ]"
check "text output: one SAMPLE line a record" \
	sh -c 'magnetctl probe add s3 cpu.sample buffer smp && sleep 0.2 && magnetctl probe del s3 && magnet-read -b smp -N 2> /dev/null | grep -q "SAMPLE cpu 0 .* since [0-9]* steal 0"'
check "buffer smp removed" magnetctl buffer del smp
check "unload" rmmod magnet
summary

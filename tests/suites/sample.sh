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
taskset 1 magnet-test burn 600 > /tmp/burn.txt &
burner=$!
sleep 1
[ $ncpu -gt 1 ] && { echo 0 > /sys/devices/system/cpu/cpu1/online; sleep 1; echo 1 > /sys/devices/system/cpu/cpu1/online; }
wait $burner
sleep 1
check "delete the probe" magnetctl probe del s1
magnet-read -b smp -N -j > /tmp/s1.json 2> /tmp/s1.err
echo "# burn took $(cat /tmp/burn.txt) s; $(wc -l < /tmp/s1.json) samples"
n0=$(jq -s '[.[] | select(.type == "sample" and .cpu == 0)] | length' /tmp/s1.json)
# ticks a second on CPU 0, from its first sample's time to its last's
rate=$(jq -s '[.[] | select(.type == "sample" and .cpu == 0) | .ts] | (length - 1) * 1e9 / (max - min) | floor' /tmp/s1.json)
echo "# CPU 0: $n0 samples, $rate a second"
check "CPU 0 ticked at about 1 kHz (at least 500 a second)" [ $rate -ge 500 ]
check "... no more than one a period" [ $rate -le 1000 ]
jq -s '[.[] | select(.type == "sample" and (.flags | index("first") | not)) | .since_ns] | sort | .[length / 2 | floor]' /tmp/s1.json > /tmp/median.txt
echo "# median time between ticks: $(cat /tmp/median.txt) ns"
check "... the median time between ticks is the period (0.8 to 1.25 ms)" \
	sh -c '[ $(cat /tmp/median.txt) -ge 800000 ] && [ $(cat /tmp/median.txt) -le 1250000 ]'
burnpid=$(jq -s "[.[] | select(.type == \"sample\" and .cpu == 0 and (.flags | index(\"user\")))] | group_by(.tgid) | max_by(length) | .[0].tgid" /tmp/s1.json)
jq -s "[.[] | select(.type == \"sample\" and .tgid == $burnpid)]" /tmp/s1.json > /tmp/burn.json
nb=$(jq 'length' /tmp/burn.json)
nu=$(jq '[.[] | select(.flags | index("user"))] | length' /tmp/burn.json)
echo "# the burner ($burnpid): $nb samples, $nu in user mode"
# (in the kernel, before taskset's exec, the process may run on CPU 1:
# an exec under TCG took more than 1 % of the burn in a boot)
check "the burner's samples in user mode are on CPU 0 (99 %)" \
	sh -c "[ \$(jq '[.[] | select(.cpu != 0 and (.flags | index(\"user\")))] | length' /tmp/burn.json) -le $((nu / 100)) ]"
# (a debug kernel spends a tenth of it in the kernel: exec, faults)
check "... most in user mode (80 %)" [ $((nu * 100)) -ge $((nb * 80)) ]
check "... with their user ip" \
	sh -c "[ \$(jq '[.[] | select((.flags | index(\"user\")) and .user_ip != .ip)] | length' /tmp/burn.json) -eq 0 ]"
check "... user stacks walked by frame pointers (burn_loop, cmd_burn, main)" \
	sh -c "[ \$(jq '[.[] | select((.flags | index(\"user\")) and .user_depth < 3)] | length' /tmp/burn.json) -le $((nu / 20)) ]"
if [ $ncpu -gt 1 ]; then
	jq -s '[.[] | select(.type == "sample" and .cpu == 1)]' /tmp/s1.json > /tmp/cpu1.json
	n1=$(jq 'length' /tmp/cpu1.json)
	ni=$(jq '[.[] | select(.flags | index("idle"))] | length' /tmp/cpu1.json)
	echo "# CPU 1: $n1 samples, $ni idle"
	check "the idle CPU shows its idle task (a third of its samples or more)" \
		[ $((ni * 3)) -ge $n1 ]
	check "... as tgid 0, in the kernel, with a kernel stack" \
		sh -c "[ \$(jq '[.[] | select((.flags | index(\"idle\")) and (.tgid != 0 or (.flags | index(\"user\")) or .kernel_depth == 0))] | length' /tmp/cpu1.json) -le $((ni / 20)) ]"
	check "taken offline and back: CPU 1 started again (two first ticks)" \
		sh -c "[ \$(jq '[.[] | select(.flags | index(\"first\"))] | length' /tmp/cpu1.json) -eq 2 ]"
	check "... and no tick there counts the time it was away (all under 0.5 s)" \
		sh -c "[ \$(jq '[.[] | select(.since_ns > 500000000)] | length' /tmp/cpu1.json) -eq 0 ]"
fi
# The profile, live, as a user asks for it: magnet-read -P cpu --profile
magnet-read -P cpu --profile -j --folded /tmp/folded.txt > /tmp/prof.json 2> /tmp/prof.err &
mr=$!
wait_for 30 grep -q "^magnet-read: capturing" /tmp/prof.err
# (some 5000 samples of it: a share's standard error is then 0.6 points.
# Units of 20 million steps, some 40 ms under TCG: with units of a
# million, about 2 ms, the ticks kept step with the loop for stretches,
# and one boot on 6.1 gave burn_major 82.6 %, three others 79.6 to 80.7)
taskset 1 magnet-test burn 120 20000000 > /dev/null
sleep 1
interrupt $mr
wait $mr
sed 's/^/# /' /tmp/prof.err
jq -c '{samples, cpus, period_ns, margin_ns, blank_ns, charged_ns, idle_gaps_ns}' /tmp/prof.json | sed 's/^/# /'
jq -r '.functions[0:8][] | "# \(.apparent_ns) \(.samples) \(.function)"' /tmp/prof.json
share() {	# share FUNCTION: its share of the burner's samples, per mille
	jq -r --arg f "$1 (magnet-test)" '([.functions[] | select(.function | endswith("(magnet-test)")) | .samples] | add) as $all |
		[.functions[] | select(.function == $f) | .samples] | add / $all * 1000 | floor' /tmp/prof.json
}
major=$(share burn_major)
minor=$(share burn_minor)
echo "# burn_major $major per mille, burn_minor $minor"
check "the profile: burn_major 80 % of the burner's samples (within 2 points)" \
	[ $major -ge 780 -a $major -le 820 ]
check "... burn_minor 20 % (within 2 points)" [ $minor -ge 180 -a $minor -le 220 ]
check "... the process by its name, with its thread" \
	sh -c "jq -e '[.processes[] | select(.name == \"magnet-test\")] | length == 1' /tmp/prof.json > /dev/null &&
	       jq -e '[.threads[] | select(.name == \"magnet-test\")] | length == 1' /tmp/prof.json > /dev/null"
kfun=$(jq -r '[.functions[] | select(.function | test("^[a-z_][a-z0-9_.]*$"))][0].function' /tmp/prof.json)
echo "# the top kernel function: $kfun"
check "... kernel functions by name, from kallsyms" grep -q " [tTwW] $kfun\$" /proc/kallsyms
check "... the idle CPU's halted time is not steal" \
	sh -c "jq -e '[.processes[] | select(.name == \"[idle]\") | .steal_ns] | add == 0' /tmp/prof.json > /dev/null"
check "... folded stacks, the burner's through burn_loop" \
	grep -q "^magnet-test;.*burn_loop (magnet-test);burn_major (magnet-test) [0-9]*\$" /tmp/folded.txt

# code without symbols: named by its mapping. The burner lives until
# magnet-read has ended: a process's mappings are read when its first
# sample is read, and on a debug kernel magnet-read has lagged a burner
# of 0.7 s by more than that ("[pid N gone]", magnet-read(1)).
magnet-read -P cpu --profile -j > /tmp/strip.json 2> /tmp/strip.err &
mr=$!
wait_for 30 grep -q "^magnet-read: capturing" /tmp/strip.err
taskset 1 magnet-test-stripped burn 1000000 > /dev/null &
sb=$!
sleep 1
interrupt $mr
wait $mr
kill $sb
wait $sb 2> /dev/null
jq -r '.functions[0:3][] | "# \(.samples) \(.function)"' /tmp/strip.json
check "a stripped program: its samples under its mapping's range" \
	sh -c "jq -e '[.functions[] | select(.function | test(\"^\\\\[magnet-test-stripped 0x[0-9a-f]+-0x[0-9a-f]+\\\\]\$\"))][0].samples > 100' /tmp/strip.json > /dev/null"

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

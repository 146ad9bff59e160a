# magnet-read against the real module: printing, counting, trace files,
# loss lines, and its errors.
. /magnet/lib.sh

unload_all
load_magnet buffers=default:256K,tiny:4K
insmod $M/magnet_stress.ko
run="$DBG/magnet_stress/run"

# -c N stops after N records; lines match the documented layout.
( sleep 0.2; echo "ms=500 period_us=1000 burst=1 task_sleep_us=5000" > $run ) &
magnet-read -c 40 > /tmp/out.txt 2>/tmp/err.txt
wait
n=$(grep -c ' cpu [0-9]* ev 10[0-3]' /tmp/out.txt)
check "-c 40 prints 40 records" test "$n" -eq 40
check "record lines show tgid/tid, id and length" \
	grep -qE '^[0-9]+\.[0-9]{9} cpu [0-9]+ ev 10[0-3]( softirq| hardirq| nmi)? [0-9]+/[0-9]+ id 0x[0-9a-f]+ len [0-9]+$' /tmp/out.txt
check "contexts are named" grep -qE ' ev 102 hardirq ' /tmp/out.txt
check "summary on stderr" grep -q '^magnet-read: 40 records, 0 lost$' /tmp/err.txt
check "one line to start, naming the buffer read" \
	grep -qx 'magnet-read: reading buffer default' /tmp/err.txt
magnet-read -N -q 2>/dev/null	# drain

# Trace file: what --trace saves, -r prints exactly as a live read would.
echo "ms=300 period_us=1000 burst=1" > $run
magnet-read -N --trace /tmp/trace.mtr 2>/tmp/err.txt
saved=$(sed -n 's/^magnet-read: \([0-9]*\) records.*/\1/p' /tmp/err.txt)
magnet-read -r /tmp/trace.mtr > /tmp/replay.txt 2>/tmp/err2.txt
check "trace file replays every record" test "$(grep -c ' ev ' /tmp/replay.txt)" -eq "$saved"
# (the summary's counts: live, magnet-read also said what it read, and
# that no probe logs into the buffer)
grep '^magnet-read: [0-9]' /tmp/err.txt > /tmp/err-live.txt
grep '^magnet-read: [0-9]' /tmp/err2.txt > /tmp/err-replay.txt
check "trace file summary matches the live one" \
	sh -c '[ -s /tmp/err-live.txt ] && cmp -s /tmp/err-live.txt /tmp/err-replay.txt'
cmp -s /tmp/err-live.txt /tmp/err-replay.txt || diff /tmp/err.txt /tmp/err2.txt
check "saved something" test "$saved" -gt 0

# Loss lines, in a buffer too small for the writers.
echo "buffer=tiny ms=300 period_us=200 burst=8" > $run
magnet-read -b tiny -N > /tmp/loss.txt 2>/tmp/err.txt
check "loss shown in the stream" grep -qE '^[0-9]+\.[0-9]{9} cpu [0-9]+ LOST [0-9]+ records \([0-9]+ since the buffer was made\)$' /tmp/loss.txt
lost_stream=$(sed -n 's/.*records, \([0-9]*\) lost$/\1/p' /tmp/err.txt)
lost_kernel=$(awk '$1 == "tiny" { s += $6 } END { print s }' $DBG/magnet/control/stats)
check "lost in the stream = lost in control/stats ($lost_stream)" test "$lost_stream" = "$lost_kernel"

# Errors: clear message, exit status 1 (2 for bad usage).
magnet-read -b nosuch > /dev/null 2>/tmp/err.txt
check "missing buffer: status 1" test $? -eq 1
check "missing buffer: says so" grep -q 'no buffer "nosuch"' /tmp/err.txt
cat $DBG/magnet/data/default > /dev/null &
holder=$!
sleep 0.3
magnet-read -N > /dev/null 2>/tmp/err.txt
check "busy buffer: says so" grep -q 'already has a reader' /tmp/err.txt
kill $holder; wait $holder 2>/dev/null
magnet-read --count-wm 99999999 -N > /dev/null 2>/tmp/err.txt
check "out-of-range watermark: says so" grep -q 'out of range' /tmp/err.txt
magnet-read --bogus > /dev/null 2>&1
check "unknown option: status 2" test $? -eq 2
echo "not a trace" > /tmp/bad.mtr
magnet-read -r /tmp/bad.mtr > /dev/null 2>/tmp/err.txt
check "bad trace file: says so" grep -q 'neither a magnet trace file nor a pcapng file' /tmp/err.txt
check "--help: the synopsis, naming magnet-read(1)" \
	sh -c 'magnet-read --help | grep -q "magnet-read(1)"'
# Interrupted while waiting on an idle buffer: the read returns, it exits.
magnet-read -q > /dev/null 2>&1 &
pid=$!
sleep 0.5
kill $pid
i=0; while kill -0 $pid 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
check_fails "SIGTERM stops a reader waiting on an idle buffer" kill -0 $pid
kill -9 $pid 2>/dev/null
# What is missing, told apart: no right, debugfs not mounted, no module.
# said RC LINE: magnet-read exited RC (status 1) having said LINE alone
said() { [ "$1" -eq 1 ] && [ "$(cat /tmp/err.txt)" = "$2" ]; }
su nobody -s /bin/sh -c "/magnet/bin/magnet-read -N -q" > /dev/null 2> /tmp/err.txt
check "not root: status 1, permission denied, says so" said $? \
	"magnet-read: /sys/kernel/debug/magnet/control/format: Permission denied (are you root? debugfs lets only root in)"
cat /tmp/err.txt
# (lazily if tracefs is mounted under it: mounted again, it is the same)
umount $DBG 2> /dev/null || umount -l $DBG
magnet-read -N > /dev/null 2>/tmp/err.txt
rc=$?
mount -t debugfs debugfs $DBG
check "debugfs not mounted: status 1, says so, and that only" said $rc \
	"magnet-read: debugfs is not mounted at /sys/kernel/debug, where the magnet module's files are (mount -t debugfs none /sys/kernel/debug)"
cat /tmp/err.txt
check "debugfs mounted again: magnet-read reads" sh -c 'magnet-read -N -q 2> /dev/null'
unload_all
magnet-read -N > /dev/null 2>/tmp/err.txt
check "module not loaded: status 1, says so, and that only" said $? \
	"magnet-read: the magnet module is not loaded (no /sys/module/magnet: modprobe magnet)"
cat /tmp/err.txt
summary

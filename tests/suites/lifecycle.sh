# Lifecycle: module parameters (good and bad), the files and their modes,
# the one-reader rule, unloading under a blocked reader.
. /magnet/lib.sh

unload_all

# Bad parameters: the load fails, says why, and leaves nothing behind.
nmark=0
bad_load() {
	nmark=$((nmark + 1))
	echo "magnet-test: mark $nmark" > /dev/kmsg
	if insmod $M/magnet.ko "$@" 2>/dev/null; then
		fail "refuse $*" "module loaded"
		rmmod magnet
		return
	fi
	msg=$(dmesg | sed -n "/magnet-test: mark $nmark\$/,\$p" |
	      grep 'magnet: ' | grep -v 'taint' | tail -n 1)
	if [ -z "$msg" ]; then
		fail "refuse $*" "no message in the kernel log"
	elif [ -e $DBG/magnet ]; then
		fail "refuse $*" "debugfs files left behind"
	else
		pass "refuse $* ($msg)"
	fi
}
bad_load buffers=x:1000
bad_load buffers=x:1K
bad_load buffers=x:2G
bad_load buffers=a:4K,a:4K
bad_load buffers=bad/name:4K
bad_load "buffers=x"
bad_load buffers=x:4K:sideways
bad_load buffers=x:4K:drop:extra
bad_load buffers=averyveryveryverylongbuffername0123:4K
bad_load max_memory_mb=1 buffers=x:1M
bad_load max_memory_mb=0

# Good load with defaults.
check "load with defaults" load_magnet
check "default buffer file" test -e $DBG/magnet/data/default
check "control/buffers lists default" \
	grep -q '^default 262144 drop ' $DBG/magnet/control/buffers
for f in data/default control/buffers control/stats; do
	mode=$(stat -c %a $DBG/magnet/$f)
	if [ "$mode" = 400 ]; then pass "$f is root-only"; else fail "$f is root-only" "mode $mode"; fi
done
# (the record layout, which every reader checks first, a session's owner too)
mode=$(stat -c %a $DBG/magnet/control/format)
check "control/format is everyone's to read (mode $mode)" [ "$mode" = 444 ]
check "control files are not consumed" sh -c \
	"cmp $DBG/magnet/control/format $DBG/magnet/control/format"
check "second load refused" sh -c "! insmod $M/magnet.ko 2>/dev/null"
rmmod magnet

# Several buffers, both modes.
check "load with named buffers" load_magnet buffers=net:64K,flight:8K:overwrite,default:16K
check "buffers listed with sizes and modes" sh -c \
	"grep -q '^net 65536 drop ' $DBG/magnet/control/buffers &&
	 grep -q '^flight 8192 overwrite ' $DBG/magnet/control/buffers &&
	 grep -q '^default 16384 drop ' $DBG/magnet/control/buffers"
check "stats has a line per buffer and CPU" sh -c \
	"[ \$(grep -c '^net ' $DBG/magnet/control/stats) -eq $(nproc) ]"

# Unloading while a reader is blocked in read(): refused, nothing breaks.
cat $DBG/magnet/data/net > /dev/null &
reader=$!
sleep 1
check "reader is blocked" kill -0 $reader
check_fails "rmmod refused while a reader is blocked" rmmod magnet
check "blocked reader survives the refused rmmod" kill -0 $reader
check "module still works" test -e $DBG/magnet/data/net
kill $reader
wait $reader 2>/dev/null
check "rmmod once the reader is gone" rmmod magnet
check "files gone after unload" test ! -e $DBG/magnet

# The same with the stress module writing.
load_magnet buffers=default:64K
insmod $M/magnet_stress.ko
cat $DBG/magnet/data/default > /dev/null &
reader=$!
echo "ms=500" > $DBG/magnet_stress/run
check_fails "rmmod refused while a reader is open after writes" rmmod magnet
kill $reader
wait $reader 2>/dev/null
check "unload stress module" rmmod magnet_stress
check "unload magnet" rmmod magnet

# Allocation failures (kernels with failslab, e.g. the debug kernel):
# opening a data file fails cleanly wherever an allocation fails, and
# leaves the buffer free for the next reader. Only the process under test
# gets failures (task-filter). Loads are not fault-injected: failures
# injected into insmod hit the kernel's own module loader first.
FS=$DBG/failslab
if [ -d $FS ]; then
	load_magnet buffers=default:64K,f:16K:overwrite
	echo Y > $FS/task-filter
	echo 100 > $FS/probability
	echo 0 > $FS/verbose
	echo N > $FS/ignore-gfp-wait
	open_failed=0 stuck=
	space=0
	while [ $space -le 65536 ]; do
		# one failure: the first allocation after SPACE bytes
		echo 1 > $FS/times
		echo $space > $FS/space
		sh -c 'echo 1 > /proc/self/make-it-fail; exec "$@"' sh \
			$M/bin/magnet-read -b f -N -q 2>/dev/null || open_failed=$((open_failed + 1))
		$M/bin/magnet-read -b f -N -q 2>/dev/null || stuck="$stuck $space"
		space=$(( space ? space * 2 : 8 ))
	done
	echo 0 > $FS/probability
	check "opens that failed allocations ($open_failed) left the buffer free" \
		test -z "$stuck" -a $open_failed -gt 0
	unload_all
else
	echo "# no failslab in this kernel: allocation-failure tests skipped"
fi

# One reader at a time, the kernel's against the file's.
load_magnet
insmod $M/magnet_stress.ko
echo "kreader=1 ms=4000 period_us=1000 burst=1 task_sleep_us=1000" > $DBG/magnet_stress/run &
run=$!
# The module opens its reader before it starts the consuming thread.
check "the kernel reader is attached" \
	wait_for 3 sh -c 'grep -qx magnet_kreader /proc/[0-9]*/comm'
check_fails "file open refused while a kernel reader is attached" \
	$M/bin/magnet-read -N -q
wait $run
check "file opens once the kernel reader is gone" $M/bin/magnet-read -N -q
unload_all

# Bad input to the test module's control file (sanity of the rig itself).
load_magnet
insmod $M/magnet_stress.ko
check_fails "stress run on a missing buffer" sh -c "echo buffer=nosuch ms=10 > $DBG/magnet_stress/run"
unload_all
summary

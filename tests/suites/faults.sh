# Allocation failures injected into every creating request, one fault
# point at a time (fail-nth): each request fails cleanly and leaves nothing
# behind, or goes through anyway. Needs a fault-injection kernel (the
# debug kernel); elsewhere the suite says it skipped.
. /magnet/lib.sh

if [ ! -e /proc/thread-self/fail-nth ] || [ ! -d $DBG/failslab ]; then
	echo "skip - this kernel has no fault injection"
	summary
	exit
fi
# Quiet injections (no dumps in the log); slab allocations that may sleep
# are fair game; page allocations are left alone except where said.
for d in $DBG/fail*; do [ -e $d/verbose ] && echo 0 > $d/verbose; done
echo N > $DBG/failslab/ignore-gfp-wait
echo 11 > $DBG/fail_page_alloc/min-order

unload_all
load_magnet
insmod $M/magnet_header.ko
insmod $M/magnet_packet.ko
insmod $M/magnet_correlate.ko
magnetctl probe add fi_rx netif_receive
magnetctl probe add fi_tx net_start_xmit
# A slab failure inside vmalloc (ftrace allocating the trampoline of
# magnet's ops for a function) makes vmalloc warn with a stack dump: the
# markers tell the rig it is expected.
echo "magnet-rig: injected allocation failures begin" > /dev/kmsg
check "every fault point fails cleanly or is survived" run_nl magnet-nltest faults
echo "magnet-rig: injected allocation failures end" > /dev/kmsg
# The same sweep with the page allocator's fault points too, of every
# order, allocations that may sleep included: a ring's pages, vmalloc's,
# the kernel's own on the way. Page-allocation failures other than
# magnet's (__GFP_NOWARN) rings warn with a stack dump: the markers tell
# the rig those are expected.
echo 0 > $DBG/fail_page_alloc/min-order
echo N > $DBG/fail_page_alloc/ignore-gfp-wait
echo N > $DBG/fail_page_alloc/ignore-gfp-highmem
echo "magnet-rig: injected allocation failures begin" > /dev/kmsg
check "... page allocations too" run_nl magnet-nltest faults
echo "magnet-rig: injected allocation failures end" > /dev/kmsg
echo 11 > $DBG/fail_page_alloc/min-order
magnetctl probe del fi_rx
magnetctl probe del fi_tx
rmmod magnet_header magnet_packet magnet_correlate
check_fails "no kprobe left behind" grep -q vfs_read $DBG/kprobes/list
check "magnet unloads" rmmod magnet

# --- module load ----------------------------------------------------------------
# Fail the 1st, 2nd, ... fault point of loading magnet (slab and page
# allocations of every order, and user copies, in the kernel's module
# loader and in magnet's init, which makes two buffers) until the load no
# longer reaches the injected one: each failure leaves no module, no
# debugfs directory and no netlink family behind; a load that survives its
# fault works and unloads. The kernel's loader warns, with a stack dump,
# when its own allocations fail (vmalloc): the markers tell the rig those
# dumps are expected. FAULTS_LOAD_STRIDE=K (default 1) fails one fault
# point in K only: each load takes about half a second on a debug kernel,
# and there are about 700. Which one in K is FAULTS_LOAD_FIRST (1 to K;
# by default one picked at random and printed, so that runs in turn
# cover every point, and a failure is repeated by giving its first).
STRIDE=${FAULTS_LOAD_STRIDE:-1}
case $STRIDE in
''|*[!0-9]*|0) fail "FAULTS_LOAD_STRIDE" "not a positive number: $STRIDE"; STRIDE=1 ;;
esac
FIRST=${FAULTS_LOAD_FIRST:-$(( $(od -An -N2 -tu2 /dev/urandom) % STRIDE + 1 ))}
case $FIRST in
''|*[!0-9]*|0) fail "FAULTS_LOAD_FIRST" "not a positive number: $FIRST"; FIRST=1 ;;
esac
[ "$FIRST" -le "$STRIDE" ] || { fail "FAULTS_LOAD_FIRST" "$FIRST is past the stride, $STRIDE"; FIRST=1; }
echo 0 > $DBG/fail_page_alloc/min-order
echo "magnet-rig: injected allocation failures begin" > /dev/kmsg
n=$FIRST nfailed=0 survived=0 left= errs=
while [ $n -le 5000 ]; do
	set -- $(magnet-test insmod-nth $n $M/magnet.ko buffers=fa:64K,fb:64K:overwrite)
	what=$1; shift
	res="$*"
	if [ "$what" = not-reached ]; then
		break
	fi
	if [ "$res" = loaded ]; then
		survived=$((survived + 1))
		magnetctl buffer list | grep -q '^ *fb ' || left="$left $n(broken)"
		rmmod magnet || left="$left $n(rmmod)"
	else
		nfailed=$((nfailed + 1))
		grep -q '^magnet ' /proc/modules && left="$left $n(module)" && rmmod magnet
		[ -d $DBG/magnet ] && left="$left $n(debugfs)"
		case "$errs" in *"$res"*) ;; *) errs="$errs${errs:+, }$res" ;; esac
	fi
	n=$((n + STRIDE))
done
echo "magnet-rig: injected allocation failures end" > /dev/kmsg
echo 11 > $DBG/fail_page_alloc/min-order
which="every fault point"
[ "$STRIDE" = 1 ] || which="one fault point in $STRIDE, starting at point $FIRST: FAULTS_LOAD_FIRST=$FIRST repeats it"
echo "# loading magnet ($which): $nfailed fault points failed it ($errs), $survived were survived, then: $what $res"
check "every fault point of the load fails it cleanly or is survived ($nfailed, $survived)" \
	test -z "$left" -a $nfailed -gt 0 -a "$what" = not-reached -a "$res" = loaded
check "and the module then loaded works" sh -c "magnetctl buffer list | grep -q '^ *fb '"
check "magnet unloads" rmmod magnet

# --- fail_function: magnet's own failure points -----------------------------------
# Each of the functions magnet marks ALLOW_ERROR_INJECTION is made to
# fail once while a request goes through it: the request fails with the
# injected error, the configuration is as before, and the same request
# then succeeds.
FF=$DBG/fail_function
if [ -d $FF ]; then
	load_magnet buffers=default:64K
	insmod $M/magnet_correlate.ko
	# (points nothing here runs: listings must not change by themselves)
	magnetctl probe add fx_tx kprobe __x64_sys_fsync > /dev/null
	magnetctl probe add fx_rx kprobe __x64_sys_fdatasync > /dev/null
	echo 0 > $FF/verbose
	echo N > $FF/task-filter
	echo 100 > $FF/probability
	config() {
		magnetctl buffer list
		magnetctl probe list
		magnetctl filter list
		grep -E 'fsync|fdatasync' $DBG/kprobes/list
	}
	# inject FUNCTION RETVAL NTH WHAT -- REQUEST...: fail the NTH call of
	# FUNCTION (returning RETVAL) during REQUEST.
	inject() {
		fn=$1 retval=$2 nth=$3 what=$4
		shift 5
		config > /tmp/before.txt 2>&1
		echo $fn > $FF/inject
		echo $retval > $FF/$fn/retval
		echo $nth > $FF/interval
		echo 1 > $FF/times
		"$@" > /tmp/inject.out 2> /tmp/inject.err
		rc=$?
		echo > $FF/inject
		cat /tmp/inject.err
		config > /tmp/after.txt 2>&1
		check "$what fails when $fn fails (call $nth)" [ $rc -ne 0 ]
		check "$what: says why" grep -q 'Cannot allocate memory' /tmp/inject.err
		check "$what: configuration as before" cmp -s /tmp/before.txt /tmp/after.txt
		cmp -s /tmp/before.txt /tmp/after.txt || diff /tmp/before.txt /tmp/after.txt
		check "$what: succeeds afterwards" "$@"
	}
	ENOMEM=$(printf %#x -12)
	inject magnet_ring_create 0 2 "buffer add (the second CPU's ring)" -- \
		magnetctl buffer add fx_buf size 64K
	magnetctl buffer del fx_buf
	inject magnet_fs_add_buffer $ENOMEM 1 "buffer add (its data file)" -- \
		magnetctl buffer add fx_buf size 64K
	magnetctl buffer del fx_buf
	inject hook_register $ENOMEM 1 "kprobe add" -- \
		magnetctl probe add fx_kp kprobe __x64_sys_fsync args 2
	magnetctl probe del fx_kp
	inject hook_register $ENOMEM 1 "kretprobe add" -- \
		magnetctl probe add fx_kr kretprobe __x64_sys_fsync
	magnetctl probe del fx_kr
	inject hook_register $ENOMEM 1 "tracepoint add" -- \
		magnetctl probe add fx_tp tracepoint sched_process_exec
	magnetctl probe del fx_tp
	inject ruleset_alloc_for_add 0 1 "filter rule add" -- \
		magnetctl filter add fx_rx tgid 1
	magnetctl filter del "$(magnetctl -j filter list | sed -n 's/.*"id":\([0-9]*\),"probe_id".*/\1/p' | tail -n 1)"
	# A correlating rule spans two probes: the second fails, the first
	# is undone.
	inject ruleset_alloc_for_add 0 2 "correlating rule add (its second probe)" -- \
		magnetctl filter add fx_rx correlate end fx_tx
	magnetctl probe del fx_tx
	magnetctl probe del fx_rx
	check "no rule, no probe left" sh -c "[ -z \"\$(magnetctl filter list | sed 1d)\" ] && [ -z \"\$(magnetctl probe list | sed 1d)\" ]"
	rmmod magnet_correlate
	check "magnet unloads after the injections" rmmod magnet
else
	echo "# no fail_function in this kernel: function injection skipped"
fi
echo Y > $DBG/failslab/ignore-gfp-wait
summary

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
# are fair game; page allocations are left alone (their failure warnings
# would come from the page allocator, not from magnet).
for d in $DBG/fail*; do [ -e $d/verbose ] && echo 0 > $d/verbose; done
echo N > $DBG/failslab/ignore-gfp-wait
echo 11 > $DBG/fail_page_alloc/min-order

unload_all
load_magnet
insmod $M/magnet_pktfilter.ko
insmod $M/magnet_correlate.ko
magnetctl probe add fi_rx netif_receive
magnetctl probe add fi_tx net_start_xmit
check "every fault point fails cleanly or is survived" run_nl magnet-nltest faults
magnetctl probe del fi_rx
magnetctl probe del fi_tx
rmmod magnet_pktfilter magnet_correlate
check_fails "no kprobe left behind" grep -q vfs_read $DBG/kprobes/list
check "magnet unloads" rmmod magnet
echo Y > $DBG/failslab/ignore-gfp-wait
summary

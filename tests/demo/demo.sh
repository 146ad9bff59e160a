# The demonstration: magnet loaded in a real kernel, events flowing from
# task, softirq, hardirq and NMI context on every CPU into per-CPU buffers,
# read with magnet-read; then a buffer overflowing and saying what it lost.
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
rmmod magnet
say "Done: magnet unloaded cleanly"
check "demo ran" true
summary

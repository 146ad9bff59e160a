# Netlink fuzzing: FUZZ_N (default 100 000) random and mutated requests
# to the magnet family (magnet-nltest fuzz: random commands, attributes,
# lengths, nesting and ids, and valid requests of every kind mutated),
# while a kprobe fires 20 000 times a second and magnet-read reads its
# buffer. Every message must be answered; the configuration must follow
# exactly what was accepted; afterwards everything created is removed,
# the statistics add up, and the module unloads with a clean kernel log.
# FUZZ_SEED picks the sequence (default: the clock; printed, to replay).
# A soak: tests/rig/vm-run with APPEND="FUZZ_N=2000000".
. /magnet/lib.sh

N=${FUZZ_N:-100000}
SEED=${FUZZ_SEED:-$(date +%s)}
unload_all
load_magnet buffers=default:64K,fz_read:256K
insmod $M/magnet_header.ko
insmod $M/magnet_packet.ko
insmod $M/magnet_correlate.ko
magnetctl probe add fz_load kprobe __x64_sys_getppid args 2 buffer fz_read > /dev/null
magnet-read -b fz_read --trace /dev/null 2> /tmp/fz-read.err &
reader=$!
taskset 2 magnet-test syscalls 2000000000 20000 > /dev/null &
load=$!
sleep 1

echo "# seed $SEED"
check "$N random and mutated requests while the probe fires and the reader reads" \
	run_nl taskset 1 magnet-nltest fuzz $N $SEED fz_load fz_read

kill $load
wait $load 2> /dev/null
sleep 1
check "the reader kept reading through the run" kill -0 $reader
interrupt $reader
wait $reader
cat /tmp/fz-read.err
read=$(sed -n 's/^magnet-read: \([0-9]*\) records, \([0-9]*\) lost$/\1/p' /tmp/fz-read.err)
lost=$(sed -n 's/^magnet-read: \([0-9]*\) records, \([0-9]*\) lost$/\2/p' /tmp/fz-read.err)
check "the reader got the load's records ($read)" [ "${read:-0}" -gt 10000 ]
check "every probe's statistics add up" run_nl magnet-nltest probestats
# Buffer fz_read, drained: produced = written + dropped = read + lost
# (+ discarded), per CPU, and the reader saw what the kernel counted.
awk '$1 == "fz_read" { p += $3; w += $4; r += $5; l += $6; d += $7; o += $8; x += $9 }
     END { print p, w, r, l, d, o, x }' $DBG/magnet/control/stats > /tmp/fz-stats
set -- $(cat /tmp/fz-stats)
check "buffer statistics add up (produced $1, written $2, read $3, lost $4)" \
	[ "$1" -eq $(($2 + $5)) -a "$4" -eq $(($5 + $6)) -a "$1" -eq $(($3 + $4 + $7)) ]
check "the reader's count is the kernel's (read $3, lost $4)" \
	[ "$3" -eq "${read:-0}" -a "$4" -eq "${lost:-0}" ]
check "the load probe is intact" sh -c "magnetctl probe show fz_load | grep -q 'yes'"
magnetctl probe del fz_load
check_fails "no kprobe left behind" grep -qE 'vfs_fsync|do_sys_openat2|getppid' $DBG/kprobes/list
check "filter modules unload" rmmod magnet_header magnet_packet magnet_correlate
check "magnet unloads" rmmod magnet
summary

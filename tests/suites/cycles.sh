# Lifecycle under load: CYCLES (default 200) rounds of load, configure,
# traffic with a reader attached, unload; a reader killed mid-read; a
# buffer destroyed while it is read; a CPU taken offline and back while
# events flow; magnet-read -P and magnetd killed with SIGKILL (what they
# made belongs to their netlink sockets, and goes with them). A soak:
# tests/rig/vm-run with APPEND="CYCLES=5000".
. /magnet/lib.sh

CYCLES=${CYCLES:-200}
SYM=__x64_sys_getppid
unload_all

# --- load, configure, traffic, unload ------------------------------------------
# Each round: a drop-mode buffer, a kprobe with a filter rule that keeps
# this shell's children, 2000 calls read by magnet-read: every call read,
# none lost, and the module unloads.
bad=0 i=1
while [ $i -le $CYCLES ]; do
	ok=1
	load_magnet buffers=cyc:256K || ok=0
	magnetctl probe add cyc_kp kprobe $SYM buffer cyc args 1 > /dev/null || ok=0
	magnetctl filter add cyc_kp exclude tgid 1 > /dev/null || ok=0
	magnet-read -b cyc --trace /dev/null 2> /tmp/cyc.err &
	rd=$!
	sleep 0.2
	magnet-test syscalls 2000 > /dev/null || ok=0
	sleep 0.2
	interrupt $rd
	wait $rd
	grep -q '^magnet-read: 2000 records, 0 lost$' /tmp/cyc.err || ok=0
	rmmod magnet || ok=0
	if [ $ok = 0 ]; then
		bad=$((bad + 1))
		echo "# round $i: $(cat /tmp/cyc.err)"
		unload_all
	fi
	i=$((i + 1))
done
check "$CYCLES rounds of load, probe, filter, traffic read whole, unload ($bad failed)" [ $bad -eq 0 ]

# --- readers that go away ----------------------------------------------------------
load_magnet buffers=default:256K,gone:64K
magnetctl probe add kp kprobe $SYM > /dev/null
taskset 2 magnet-test syscalls 100000000 20000 > /dev/null &
load=$!
magnet-read --trace /dev/null &
rd=$!
sleep 1
check "magnet-read reads through the data file's mapping" \
	grep -q 'magnet/data/default' /proc/$rd/maps
kill -9 $rd
wait $rd 2> /dev/null
check "after a reader killed mid-read, the next one opens the buffer" \
	sh -c 'magnet-read -N -q 2> /dev/null'
# A buffer destroyed while it is read (and mapped): the reader sees it end.
magnet-read -b gone --trace /dev/null 2> /tmp/gone.err &
rd=$!
sleep 0.5
check "a buffer with a reader attached can be removed" magnetctl buffer del gone
check "its reader ends, saying so" wait_for 10 grep -q 'buffer "gone" was removed' /tmp/gone.err
grep -q 'was removed' /tmp/gone.err || interrupt $rd
wait $rd
check "and exits 0" [ $? -eq 0 ]

# --- CPU hotplug ------------------------------------------------------------------
# Events on both CPUs into a drop-mode buffer with a reader; CPU 1 goes
# offline and comes back while they flow. Everything produced is read or
# counted lost, and CPU 1 logs again once it is back.
CPU1=/sys/devices/system/cpu/cpu1/online
if [ -w $CPU1 ]; then
	magnetctl buffer add hp size 1M > /dev/null
	magnetctl probe add kp_hp kprobe $SYM buffer hp > /dev/null
	magnet-read -b hp --trace /tmp/hp.mtr 2> /tmp/hp.err &
	rd=$!
	sleep 0.5
	taskset 1 magnet-test syscalls 100000000 20000 > /dev/null &
	load0=$!
	sleep 1
	check "CPU 1 goes offline under load" sh -c "echo 0 > $CPU1"
	sleep 1
	check "and comes back" sh -c "echo 1 > $CPU1"
	before=$(awk '$1 == "hp" && $2 == 1 { print $3 }' $DBG/magnet/control/stats)
	kill $load
	taskset 2 magnet-test syscalls 100000 50000 > /dev/null
	after=$(awk '$1 == "hp" && $2 == 1 { print $3 }' $DBG/magnet/control/stats)
	check "CPU 1 logs again once back ($before -> $after)" [ "$after" -ge $((before + 100000)) ]
	kill $load0
	wait $load $load0 2> /dev/null
	sleep 1
	interrupt $rd
	wait $rd
	cat /tmp/hp.err
	awk '$1 == "hp" { p += $3; r += $5; l += $6; x += $9 }
	     END { print p, r, l, x }' $DBG/magnet/control/stats > /tmp/hp.stats
	set -- $(cat /tmp/hp.stats)
	check "every record produced read or counted lost (produced $1, read $2, lost $3)" \
		[ "$1" -eq $(($2 + $3 + $4)) ]
	check "magnet-read counted what the kernel did" \
		grep -q "^magnet-read: $2 records, $3 lost$" /tmp/hp.err
	n=$(magnet-read -r /tmp/hp.mtr -q 2>&1 | sed -n 's/^magnet-read: \([0-9]*\) records.*/\1/p')
	check "the trace file holds them ($n)" [ "$n" = "$2" ]
	magnetctl probe del kp_hp
	magnetctl buffer del hp
else
	kill $load
	wait $load 2> /dev/null
	echo "# CPU 1 cannot go offline in this kernel: hotplug skipped"
fi
magnetctl probe del kp
check "magnet unloads" rmmod magnet

# --- programs killed with SIGKILL ---------------------------------------------------
# What magnet-read -P and magnetd make belongs to their netlink socket
# (MAGNET_A_OWNED): the kernel removes it when they die, however they die.
load_magnet
magnet-read -P udp-send -q > /dev/null 2>&1 &
rd=$!
wait_for 30 sh -c "magnetctl probe list | grep -q 'udp-send.dev-xmit'"
check "magnet-read -P installed its probes" sh -c "magnetctl probe list | grep -q 'udp-send.dev-xmit'"
kill -9 $rd
wait $rd 2> /dev/null
check "killed with SIGKILL, its probes are gone" \
	wait_for 10 sh -c "! magnetctl probe list | grep -q 'udp-send\.'"

S=/tmp/cyc-magnetd.sock
cat > /tmp/cyc-magnetd.conf <<EOF
socket {
	path = "$S"
}
metrics {
	interval = 1
}
buffer cycd {
	size = 65536
}
probe calls {
	buffer = cycd
	kind = kprobe
	target = "$SYM"
}
probe-set udp-send {
	buffer = cycd
}
EOF
magnetd -c /tmp/cyc-magnetd.conf > /tmp/cyc-magnetd.log 2>&1 &
md=$!
check "magnetd starts" wait_for 30 healthy
probes=$(magnetctl probe list | sed 1d | wc -l)
kill -9 $md
wait $md 2> /dev/null
check "magnetd killed with SIGKILL: its probes and buffer are gone" \
	wait_for 10 sh -c "[ -z \"\$(magnetctl probe list)\" ] && ! magnetctl buffer list | grep -q '^ *cycd '"
magnetd -c /tmp/cyc-magnetd.conf >> /tmp/cyc-magnetd.log 2>&1 &
md=$!
check "restarted, it is healthy" wait_for 30 healthy
check "with its probes once ($probes)" \
	[ "$(magnetctl probe list | sed 1d | wc -l)" -eq "$probes" -a "$probes" -gt 5 ]
magnet-test syscalls 1000 > /dev/null
counted() { [ "$(metric calls.count)" -ge 1000 ] 2> /dev/null; }
check "and counts" wait_for 10 counted
kill $md
wait $md
check "magnetd exits 0 on SIGTERM" [ $? -eq 0 ]
check "leaving nothing behind" sh -c "[ -z \"\$(magnetctl probe list)\" ]"
cat /tmp/cyc-magnetd.log | tail -5
check "magnet unloads" rmmod magnet
summary

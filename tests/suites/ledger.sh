# The ledger: every CPU nanosecond charged to an activity (a cgroup) and a
# kind. Turned on and off, and its bad input; three CPU-bound processes
# in cgroups weighted 300/200/100 on one CPU get 50/33/17 % of it in the
# ledger, which agrees with the cgroups' own cpu.stat; on every CPU the
# rows add up to the elapsed time (conservation); interrupts, softirqs
# and work items are named; a cgroup removed after it was charged keeps
# its rows; three receivers fed UDP at byte rates 1:2:4 are charged NET_RX
# time in that proportion; a sender's packets that a qdisc held, their
# NET_TX time to its cgroup; writeback, block completions and the hardirqs
# that raised them to the writer's cgroup, a work item to its queuer's;
# rows per thread group.
# rig-programs: mke2fs tc
# rig-kmods: null_blk ext4 crc32c_generic sch_netem
. /magnet/lib.sh

unload_all
load_magnet

# (on and off with the other CPUs offline: ledger_set, tests/lib.sh)
ledger() { ledger_set "$@"; }
CPU1=/sys/devices/system/cpu/cpu1/online

CG=/sys/fs/cgroup
mkdir -p $CG
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
check "cgroup2, with the cpu controller for its children" \
	sh -c "echo +cpu > $CG/cgroup.subtree_control"

# --- on, off, and what is refused ------------------------------------------------
check_fails "read while off: refused" magnetctl account
check "... saying it is off, and how to turn it on" \
	sh -c "magnetctl account 2>&1 | grep -q 'the ledger is off (magnetctl account on)'"
check_fails "off while off: refused" ledger off
check_fails "on by something else: refused" ledger on by-pid
check "on" ledger on
check_fails "on twice: refused" ledger on
check "... saying so, and the counters kept" \
	sh -c "magnetctl account on 2>&1 | grep -q 'on already'"
check_fails "-n without -d: refused" magnetctl account -n 2
check_fails "-d 0: refused" magnetctl account -d 0
check "read while on" sh -c "magnetctl account | grep -q '^elapsed '"
check "... its cgroup-root given" \
	sh -c "magnetctl account cgroup-root $CG | grep -q '^elapsed '"
check_fails "a cgroup-root that is no cgroup2: refused" magnetctl account cgroup-root /tmp
check "... saying so" sh -c "magnetctl account cgroup-root /tmp 2>&1 |
	grep -q 'cgroup-root /tmp: not a cgroup2 file system'"
check_fails "a cgroup-root that is not there: refused" magnetctl account cgroup-root /nonexistent

# --- three CPU-bound processes in weighted cgroups, on CPU 0 ----------------------
# The ledger from scratch, so that the cgroups' totals are all it has.
ledger off
ledger on
for g in a:300 b:200 c:100; do
	mkdir -p $CG/${g%:*}
	echo ${g#*:} > $CG/${g%:*}/cpu.weight
done
T=${LEDGER_SECONDS:-20}
for g in a b c; do
	sh -c "echo \$\$ > $CG/$g/cgroup.procs
		exec taskset 1 timeout $T sh -c 'while :; do :; done'" &
done
wait
magnetctl account > /tmp/led.txt
cat /tmp/led.txt
magnetctl -j account per-cpu | tr '{' '\n' > /tmp/led-rows.txt
# ns GROUP: what the ledger charged the cgroup's tasks (user + system)
ns() {
	grep "\"cgroup\":\"/$1\"" /tmp/led-rows.txt |
		grep -E '"kind":"(user|system)"' |
		sed 's/.*"ns":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }'
}
# usage GROUP: the cgroup's own count, ns
usage() { awk '$1 == "usage_usec" { print $2 * 1000 }' $CG/$1/cpu.stat; }
na=$(ns a); nb=$(ns b); nc=$(ns c)
ua=$(usage a); ub=$(usage b); uc=$(usage c)
# CPU 0's interrupts: cpu.stat counts them in whichever task they
# interrupted (Debian's kernels have no IRQ_TIME_ACCOUNTING), the ledger
# in no activity. They fall on what runs in proportion to its time, so a
# cgroup's share of them is its share of CPU 0's task-level time.
cpu0() {
	grep '"cpu":0,' /tmp/led-rows.txt | grep -E "\"kind\":\"($1)\"" |
		sed 's/.*"ns":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }'
}
irq=$(cpu0 'hardirq|softirq')
task0=$(cpu0 'user|system|kthread|work|idle')
echo "# ledger: a $na b $nb c $nc ns; cpu.stat: a $ua b $ub c $uc ns"
echo "# CPU 0: interrupts $irq ns, tasks and idle $task0 ns"
# On a debug kernel the bounds are looser (the figures are the stock
# kernels'): 2 points and 3 %. Lockdep makes interrupts a sixth of CPU
# 0's time, which moves the shares, and the softirqs ksoftirqd runs there
# (cpu.stat charges them to ksoftirqd) are a larger part of them.
# NET_RX below is held to 10 % everywhere: under TCG a datagram of the
# rarest flow (1 in 7) costs its softirq up to 9 % more than one of the
# busiest, run after run (its socket is colder in the emulated TLB), and
# the ledger charges what it cost.
pts=1 tol=0.01 rxtol=0.10
[ -e /proc/lockdep ] && pts=2 tol=0.03
# share X TOTAL WANT [POINTS]: X/TOTAL within POINTS (or $pts) of WANT %
share() { awk -v x="$1" -v t="$2" -v w="$3" -v p="${4:-$pts}" 'BEGIN { d = 100 * x / t - w; exit !(t > 0 && d < p && d > -p) }'; }
# pct X TOTAL: X as a percentage of TOTAL
pct() { awk -v x="$1" -v t="$2" 'BEGIN { printf "%.2f", (t > 0 ? 100 * x / t : 0) }'; }
t=$((na + nb + nc)) u=$((ua + ub + uc))
# The shares are first the scheduler's, then the ledger's: CFS under TCG
# keeps the weights only to a point or so (c has had 17.0 to 18.0 % by
# its own cpu.stat, boots on f6bf15a and c442bfe), so the weights are
# held to 2 points, and the ledger to the cgroups' own cpu.stat shares
# to $pts.
wpts=2
# A debug kernel's scheduler keeps the weights less well still: c had
# 20.0 % by its own cpu.stat there (the boot of 56df989's CI run), with
# the ledger agreeing. There the ledger is held to cpu.stat only (below),
# which is what it answers for; the weights are the stock kernels' test.
if [ -e /proc/lockdep ]; then
	echo "ok - weights 300/200/100 on CPU 0: 50/33/17 % # SKIP a debug kernel's scheduler misses them (cpu.stat: a $(pct $ua $u) %, b $(pct $ub $u) %, c $(pct $uc $u) %); the ledger is held to cpu.stat"
else
	check "weights 300/200/100 on CPU 0: the ledger gives a 50 % of their time (within $wpts points)" share $na $t 50 $wpts
	check "... b 33.3 %" share $nb $t 33.333 $wpts
	check "... c 16.7 %" share $nc $t 16.667 $wpts
fi
check "the ledger's share of each is the cgroup's cpu.stat's within $pts points: a ($(pct $ua $u) %)" \
	share $na $t "$(pct $ua $u)"
check "... b ($(pct $ub $u) %)" share $nb $t "$(pct $ub $u)"
check "... c ($(pct $uc $u) %)" share $nc $t "$(pct $uc $u)"
# The interrupts fall on what runs in proportion to its time only on
# average: under TCG one that comes soon after a switch costs more (the
# emulated TLB is cold), and each of the three is switched in about as
# often per period, so c, with a sixth of the time, takes a larger part
# of them than its share: its cpu.stat has been from 1.2 % to 10.6 %
# above what the ledger charged it, with the interrupts a twentieth of
# CPU 0's time (boots on f6bf15a and d2b3890). So the three together,
# whose share is all of CPU 0's interrupts, are held to $tol, and each
# is held to be charged no more than its cpu.stat's (within $tol), and
# no less by more than all of CPU 0's interrupts: time the ledger moved
# from one cgroup to another fails one of the two.
# within X Y: X, with its share of CPU 0's interrupts, is Y within $tol
within() {
	awk -v x="$1" -v t="$task0" -v i="$irq" -v y="$2" -v tol=$tol \
		'BEGIN { s = i * x / t; d = (x + s - y) / y
			 exit !(y > 0 && d < tol && d > -tol) }'
}
# bounded X Y: Y - X between -$tol of Y and CPU 0's interrupts + $tol of Y
bounded() {
	awk -v x="$1" -v y="$2" -v i="$irq" -v tol=$tol \
		'BEGIN { g = y - x; exit !(y > 0 && g > -tol * y && g < i + tol * y) }'
}
check "... a, b and c together, with CPU 0's interrupts, are their cpu.stat's within $(awk -v t=$tol 'BEGIN { print t * 100 }') %" \
	within $((na + nb + nc)) $((ua + ub + uc))
check "... each is its cpu.stat's less at most CPU 0's interrupts ($irq ns), within $(awk -v t=$tol 'BEGIN { print t * 100 }') %: a ($na ns, cpu.stat $ua)" \
	bounded $na $ua
check "... b ($nb ns, cpu.stat $ub)" bounded $nb $ub
check "... c ($nc ns, cpu.stat $uc)" bounded $nc $uc

# --- conservation, and what else is there -----------------------------------------
# residue: elapsed less the rows, over all CPUs, within 0.01 % of elapsed
conserved() {
	magnetctl -j account per-cpu > /tmp/led.json
	e=$(sed 's/.*"elapsed_ns":\([0-9]*\).*/\1/' /tmp/led.json)
	c=$(sed 's/.*"charged_ns":\([0-9]*\).*/\1/' /tmp/led.json)
	echo "# elapsed $e ns, charged $c ns"
	awk -v e="$e" -v c="$c" 'BEGIN { d = (e - c) / e; exit !(e > 0 && d < 0.0001 && d > -0.0001) }'
}
check "conservation: the rows add up to the CPUs' elapsed time (within 0.01 %)" conserved
check "... over both CPUs" sh -c "magnetctl account | grep -q 'on 2 CPUs'"
check "idle time, to no activity" \
	sh -c "awk '\$1 == \"-\" && \$2 == \"idle\"' /tmp/led.txt | grep -q ."
check "softirqs by name: timer" \
	sh -c "awk '\$2 == \"softirq\" && \$3 == \"timer\"' /tmp/led.txt | grep -q ."
check "hardirqs: the local timer" \
	sh -c "awk '\$2 == \"hardirq\" && \$4 == \"local_timer\"' /tmp/led.txt | grep -q ."
check "work items by function" \
	sh -c "awk '\$2 == \"work\" && \$4 != \"-\"' /tmp/led.txt | grep -q ."
grep '^elapsed' /tmp/led.txt
check "per CPU: CPU 0 and CPU 1" \
	sh -c "magnetctl account per-cpu | awk 'NR > 1 { c[\$1] = 1 } END { exit !(c[0] && c[1]) }'"

# --- a CPU offline: its time there is in neither elapsed nor the rows --------------
# Elapsed grows by CPU 0's whole window and CPU 1's time online in it,
# which the window less the 3 s bounds; taking a CPU down and up takes
# seconds on a debug kernel, so the window is measured, not assumed.
elapsed() { magnetctl -j account | sed 's/.*"elapsed_ns":\([0-9]*\).*/\1/'; }
# (busybox's date has no %N: the uptime, to 10 ms)
uptime_ns() { awk '{ printf "%.0f\n", $1 * 1e9 }' /proc/uptime; }
t1=$(uptime_ns)
e1=$(elapsed)
echo 0 > $CPU1
sleep 3
echo 1 > $CPU1
e2=$(elapsed)
t2=$(uptime_ns)
echo "# elapsed over both CPUs grew by $((e2 - e1)) ns in $((t2 - t1)) ns with CPU 1 offline 3 s of it"
check "CPU 1 offline for 3 s: elapsed grows by CPU 0's time and CPU 1's online only (within 0.5 s)" \
	[ $((e2 - e1)) -gt 2500000000 -a $((e2 - e1)) -lt $((2 * (t2 - t1) - 2500000000)) ]
check "... and still conserved" conserved

# --- a cgroup removed after it was charged ----------------------------------------
rmdir $CG/c
check "a removed cgroup keeps its rows, by id" \
	sh -c "magnetctl account | awk '\$1 == \"(gone)\"' | grep -q ."
check "... nothing lost: still conserved" conserved

# --- -d: what each row gained in each interval -------------------------------------
magnetctl account -d 1 -n 2 > /tmp/led-d.txt
cat /tmp/led-d.txt
# (an idle CPU's time shows once it next has a boundary: an interval
# holds at most its second on each CPU, and some of it)
check "-d 1 -n 2: two tables, each of at most a second on each CPU" \
	sh -c "[ \$(grep -c '^elapsed' /tmp/led-d.txt) -eq 2 ] &&
		grep '^elapsed' /tmp/led-d.txt | awk '{ if (\$2 <= 0.1 || \$2 > 2.6) exit 1 }'"

# --- NET_RX: each packet's time to the cgroup of the socket it reached --------------
# Three receivers in three cgroups, fed UDP over a veth pair at byte rates
# 1:2:4 (1, 2 and 4 senders of the same datagrams, all at once). The
# receivers read only once every datagram is in (SIGUSR1): a receiver
# that sleeps makes each delivery wake it, and one that reads meanwhile
# contends with it, both costing the softirq more per datagram the rarer
# its datagrams are (the ledger charges that too: 6 % more per datagram
# to the receiver of 1 in 7 when they slept).
# Under TCG a vCPU the host stops for a while makes whatever packet it was
# in pay for it; three rounds, and the median of each receiver's share.
check "two namespaces joined by a veth pair" netns_pair
N=${LEDGER_PACKETS:-1000}
for r in 1 2 4; do mkdir -p $CG/r$r; done
# rx GROUP: NET_RX time the ledger charged to the cgroup
rx() {
	tr '{' '\n' < /tmp/led-rx.json | grep "\"cgroup\":\"/$1\"" |
		grep '"vector":"net_rx"' | sed 's/.*"ns":\([0-9]*\).*/\1/' |
		awk '{ s += $1 } END { print s + 0 }'
}
# rx_round: one round, from a fresh ledger; appends "r1 r2 r4" (ns) to
# /tmp/led-rounds.txt
rx_round() {
	ledger off
	ledger on
	rjobs= sjobs=
	for r in 1 2 4; do
		sh -c "echo \$\$ > $CG/r$r/cgroup.procs
			exec env HOLD=1 nsenter -t $B -n magnet-test udp-recv 10.9.0.2 600$r $((r * N))" \
			> /tmp/led-r$r.out 2>&1 &
		rjobs="$rjobs $!"
	done
	wait_for 20 sh -c 'grep -q holding /tmp/led-r1.out && grep -q holding /tmp/led-r2.out &&
		grep -q holding /tmp/led-r4.out'
	for r in 1 2 4; do
		for i in $(seq $r); do
			inA magnet-test udp-send 10.9.0.2 600$r $N 1000 > /dev/null &
			sjobs="$sjobs $!"
		done
	done
	wait $sjobs
	magnetctl -j account > /tmp/led-rx.json
	kill -USR1 $rjobs
	wait $rjobs
	cat /tmp/led-r1.out /tmp/led-r2.out /tmp/led-r4.out | grep received | tr '\n' ' '
	echo
	grep -qx "received $N $((N * 1000))" /tmp/led-r1.out &&
		grep -qx "received $((2 * N)) $((2 * N * 1000))" /tmp/led-r2.out &&
		grep -qx "received $((4 * N)) $((4 * N * 1000))" /tmp/led-r4.out ||
		lost=1
	echo "$(rx r1) $(rx r2) $(rx r4)" >> /tmp/led-rounds.txt
}
rm -f /tmp/led-rounds.txt
lost=
for round in 1 2 3; do rx_round; done
check "three receivers in cgroups r1, r2, r4 got every datagram, three times" [ -z "$lost" ]
magnetctl account | awk '$2 == "softirq" && $3 == "net_rx"'
sed 's/^/# NET_RX in the ledger, r1 r2 r4 (ns): /' /tmp/led-rounds.txt
echo "# cpu.stat charges it to whichever task ran (the senders, root): r1 $(usage r1) r2 $(usage r2) r4 $(usage r4) ns"
# part COLUMN WANT: the median over the rounds of the receiver's part of
# the three's NET_RX time is WANT sevenths, within $rxtol
part() {
	awk -v k="$1" '{ print $k / ($1 + $2 + $3) }' /tmp/led-rounds.txt | sort -n |
		sed -n 2p | awk -v w="$2" -v tol=$rxtol \
			'{ d = $1 / (w / 7) - 1; print "# median part " $1; exit !(d < tol && d > -tol) }'
}
check "NET_RX time in proportion to the bytes, 1:2:4, within $(awk -v t=$rxtol 'BEGIN { print t * 100 }') %: r1" part 1 1
check "... r2" part 2 2
check "... r4" part 3 4
# By what befell them: datagrams to a port no socket has are dropped;
# those to 10.10.0.0/24, which B routes on to a dummy device, forwarded.
[ -d /sys/module/dummy ] || insmod $M/kmods/dummy.ko
check "B forwards 10.10.0.0/24 to a dummy device" sh -c "
	inB() { nsenter -t $B -n \"\$@\"; }
	inB $IP link add d0 type dummy && inB $IP addr add 10.10.0.1/24 dev d0 &&
	inB $IP link set d0 up && inB sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward' &&
	nsenter -t $A -n $IP route add 10.10.0.0/24 via 10.9.0.2"
ledger off
ledger on
inA magnet-test udp-send 10.9.0.2 6999 200 100 > /dev/null
inA magnet-test udp-send 10.10.0.5 7000 200 100 > /dev/null
magnetctl account | awk 'NR == 1 || ($1 == "-" && $3 == "net_rx")'
# fate NAME: the packets no socket took have a row NAME
fate() {
	magnetctl account | awk -v n="$1" '$1 == "-" && $2 == "softirq" && $3 == "net_rx" && $4 == n' | grep -q .
}
check "packets for no socket stay with no activity, by why: dropped, to a port no socket has" fate dropped
check "... forwarded" fate forwarded
rmdir $CG/r1 $CG/r2 $CG/r4
kill $A $B

# --- NET_TX: a packet a qdisc held leaves in the softirq, its sender's -------------
# A sender in cgroup t sends 200 datagrams through a dummy device behind
# a netem qdisc that holds each 20 ms: they leave in NET_TX softirqs (the
# qdisc's watchdog raises them), each packet's time charged to the cgroup
# of the socket that sent it (skb->sk). (The debug kernels have no
# sch_netem.)
if [ -d /sys/module/dummy ] && modprobe sch_netem 2> /dev/null; then
	mkdir -p $CG/t
	check "a dummy device behind a 20 ms netem qdisc" sh -c "
		$IP link add led0 type dummy && $IP addr add 10.78.0.1/24 dev led0 &&
		$IP link set led0 up &&
		/magnet/bin/tc qdisc add dev led0 root netem delay 20ms"
	ledger off
	ledger on
	sh -c "echo \$\$ > $CG/t/cgroup.procs
		exec magnet-test udp-calls 10.78.0.2 7001 200 64" > /dev/null
	sleep 1
	magnetctl -j account | tr '{' '\n' | grep '"vector":"net_tx"' > /tmp/led-tx.txt
	cut -c 1-200 /tmp/led-tx.txt
	# tx PATTERN: NET_TX time of the rows that match
	tx() {
		grep "$1" /tmp/led-tx.txt | sed 's/.*"ns":\([0-9]*\).*/\1/' |
			awk '{ s += $1 } END { print s + 0 }'
	}
	txt=$(tx '"cgroup":"/t"') txall=$(tx .)
	check "NET_TX: the held packets' time to their sender's cgroup, 90 % of it at least (t: $txt of $txall ns)" \
		awk -v t=$txt -v a=$txall 'BEGIN { exit !(t > 0 && t >= 0.9 * a) }'
	$IP link del led0
	rmdir $CG/t
else
	echo "ok - NET_TX: a netem qdisc's packets to their sender's cgroup # SKIP no dummy device or sch_netem"
fi

# --- writeback and block completions: to the cgroup whose pages they were ---------
# A writer in cgroup w dirties 64 MiB of a file on ext4 and fsyncs it.
# Background writeback starts at 4 MiB dirty, so the flusher's work items
# (wb_workfn) write much of it, for the cgroup Linux's writeback records
# as the inode's (memory and io controllers on). The disk is null_blk's,
# memory-backed, completing each request from a timer, in its hardirq,
# in the BLOCK softirq it raises, or (PREEMPT_RT) in the HRTIMER softirq:
# each completion is charged to the cgroup that submitted the request.
# (the debug kernels have no null_blk, nor the memory controller)
writeback() {
	check "a memory-backed null_blk disk, completing from a timer" \
		modprobe null_blk nr_devices=1 gb=1 memory_backed=1 irqmode=2
	check "ext4 on it" sh -c "modprobe crc32c_generic && modprobe ext4 && /magnet/bin/mke2fs -q -t ext4 -N 1024 -E lazy_itable_init=0,lazy_journal_init=0 /dev/nullb0 &&
		mkdir -p /mnt/wb && mount -t ext4 /dev/nullb0 /mnt/wb"
	check "the memory and io controllers for the cgroups" \
		sh -c "echo '+memory +io' > $CG/cgroup.subtree_control"
	mkdir -p $CG/w
	bg=$(cat /proc/sys/vm/dirty_background_ratio)
	echo $((4 << 20)) > /proc/sys/vm/dirty_background_bytes
	ledger off
	ledger on
	check "a writer in cgroup w dirties and fsyncs 64 MiB" \
		sh -c "echo \$\$ > $CG/w/cgroup.procs
			exec dd if=/dev/zero of=/mnt/wb/f bs=1M count=64 conv=fsync 2> /dev/null"
	magnetctl -j account | tr '{' '\n' > /tmp/led-wb.txt
	magnetctl account | awk 'NR == 1 || $1 == "/w" || $3 == "block" || $4 == "wb_workfn"'
	echo $bg > /proc/sys/vm/dirty_background_ratio
	# wb SELECT: nanoseconds of the rows grep SELECT picks
	wb() {
		grep -E -- "$1" /tmp/led-wb.txt | sed 's/.*"ns":\([0-9]*\).*/\1/' |
			awk '{ s += $1 } END { print s + 0 }'
	}
	echo "# writeback work (wb_workfn): /w $(wb '"cgroup":"/w".*"name":"wb_workfn"') ns of $(wb '"name":"wb_workfn"') ns"
	echo "# completions, in hardirqs and softirqs: /w $(wb '"cgroup":"/w".*"kind":"(hard|soft)irq"') ns, other cgroups $(wb '"cgroup":"/[^w].*"kind":"(hard|soft)irq"') ns"
	# most A B: A is at least 90 % of B, and not 0
	most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > 0 && a >= 0.9 * b) }'; }
	check "the flusher's writeback work goes to w, 90 % of it at least" \
		most "$(wb '"cgroup":"/w".*"name":"wb_workfn"')" "$(wb '"name":"wb_workfn"')"
	check "block completions go to their submitters: w's to w, 90 % of them at least" \
		most "$(wb '"cgroup":"/w".*"kind":"(hard|soft)irq"')" \
		"$(wb '"cgroup":"/.*"kind":"(hard|soft)irq"')"
	umount /mnt/wb
	rmmod null_blk
	rmdir $CG/w
}
if zcat /proc/config.gz 2> /dev/null | grep -q '^# CONFIG_BLK_DEV_NULL_BLK is not set'; then
	echo "# the writeback test needs null_blk, which this kernel lacks: not run"
else
	writeback
fi

# --- a work item: to the cgroup that queued it ----------------------------------------
# An emergency sync asked for from cgroup q: its work item (do_sync_work)
# is q's.
ledger off
ledger on
mkdir -p $CG/q
sh -c "echo \$\$ > $CG/q/cgroup.procs; echo s > /proc/sysrq-trigger"
check "an emergency sync asked for from cgroup q ran" \
	wait_for 20 sh -c "dmesg | grep -q 'Emergency Sync complete'"
# (the message comes before the work item's end, where its row is made)
check "its work item is q's (do_sync_work)" \
	wait_for 20 sh -c "magnetctl account | awk '\$1 == \"/q\" && \$2 == \"work\" && \$4 == \"do_sync_work\"' | grep -q ."
magnetctl account | awk 'NR == 1 || $1 == "/q"'
rmdir $CG/q

# --- rows per thread group ----------------------------------------------------------
ledger off
check "on by-tgid" ledger on by-tgid
sh -c "echo \$\$ > $CG/a/cgroup.procs; exec magnet-test spin 2" &
sp=$!
wait $sp
check "a row for the spinning process's thread group" \
	sh -c "magnetctl account | awk -v p=$sp '\$1 == \"/a\" && \$2 == p' | grep -q ."
# a work item's rows carry the thread group that queued it, not the worker's
mkdir -p $CG/q
sh -c "echo \$\$ > $CG/q/cgroup.procs; echo s > /proc/sysrq-trigger" &
sy=$!
wait $sy
check "an emergency sync from cgroup q: its work item's row carries the asking thread group" \
	wait_for 20 sh -c "magnetctl account | awk -v p=$sy '\$1 == \"/q\" && \$2 == p && /do_sync_work/' | grep -q ."
magnetctl account | awk 'NR == 1 || $1 == "/q"'
rmdir $CG/q
check "off" ledger off
check_fails "... and then nothing to read" magnetctl account

# --- the module unloaded with the ledger on -----------------------------------------
ledger on
magnet-test spin 2 > /dev/null &
sp=$!
echo 0 > $CPU1
check "the module unloads with the ledger on, under load" rmmod magnet
echo 1 > $CPU1
wait $sp

rmdir $CG/a $CG/b
unload_all
summary

// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: the ledger, every CPU nanosecond charged to an activity and a
 * kind (MAGNET_CMD_LEDGER_*; the rules are in the uapi header).
 *
 * Each CPU cuts its time at boundaries: sched_switch, a hardirq
 * handler's or softirq's entry and exit, a work item's start and end.
 * At each boundary the span since the previous one is charged to what
 * ran until then: the top of the CPU's stack of interrupt levels, or
 * below them the task level, which is worked out from current at the
 * time (its cgroup, whether it is idle, a kernel thread or a worker in
 * a work item). Every span is charged once to one row, so a CPU's rows
 * add up to its elapsed time by construction; what the tests check is
 * that no path loses or double-counts a span.
 *
 * Counters: a table of MAGNET_LEDGER_ROWS rows per CPU, open addressing
 * on the row's key. Only its CPU writes a table, with interrupts off
 * (the softirq tracepoints run with them on); a reader on any CPU sees
 * a row once its key is published (row->used, release/acquire) and its
 * nanoseconds as a whole u64.
 *
 * Items: an interrupt level keeps its time aside (ledger_level.ns) and
 * charges it, at each item boundary and at its end, to the owner of the
 * item it works on, or to none. In a NET_RX or NET_TX softirq the items
 * are packets, from one packet's start (netif_receive_skb,
 * net_dev_start_xmit) to the next's or to the end of the softirq; the
 * owner is the cgroup of its socket: for a packet received, the socket
 * it is delivered to (sk_filter_trim_cap(), which every TCP, UDP and raw
 * delivery passes); for one sent, the socket that sent it (skb->sk). In
 * a hardirq or a softirq that completes block requests, the items are
 * the requests (block_rq_complete), the owner the io controller's cgroup
 * of the request's first bio. A level's time before its first item is
 * that item's: the first start cuts no boundary, so a softirq that
 * handles one packet reads the clock at its entry and exit only. A
 * delivery of a packet other than the open item's (the packets of a GRO
 * list all start before the first is delivered; a clone for a second
 * socket) cuts one: the time since goes to the open item's owner, or if
 * it has none yet to this delivery's, and the delivered packet becomes
 * the item. A packet no socket took, and a level's time with no item at
 * all, stay with no activity; such a packet's row says what befell it
 * (ledger_fate: freed as a drop, kfree_skb; else sent on,
 * net_dev_start_xmit of the same skb; else the kernel's own).
 *
 * Served hardirqs: a hardirq that raises NET_RX or BLOCK (pending at its
 * end, and not at its start) leaves its time outside items waiting on its
 * CPU (ledger_cpu.served) for that softirq, which at its end splits it
 * among the owners it charged, in proportion.
 *
 * Work items: their owner is their queuer's (workqueue_queue_work, in the
 * queuer's context), carried to their start through a machine-wide table
 * (ledger_queued) since they may start on any CPU; writeback's take the
 * cgroup of the pages they write at each pass and inode. A worker that
 * may move between CPUs carries its item through another such table
 * (ledger_moving) from its switch out to its switch in.
 *
 * Turning on: the handlers do nothing until every tracepoint is in
 * place (ledger_armed). Registering one patches code on every CPU with
 * an IPI; had the IPI's entry tracepoint been live before its exit's, a
 * CPU would have kept a hardirq level that never ended. An interrupt
 * under way when the ledger arms then has an exit without its entry:
 * exits pop only the level their entry pushed, and ignore the others.
 *
 * Locking: ledger_lock serialises on and off; requests already are
 * (generic netlink, no parallel_ops), and a dump's callbacks run under
 * the same genl lock, so the tables cannot go while a dump reads them.
 * The two carry tables have a raw spinlock each, taken with interrupts
 * off in sched_switch and in queueing work, and nothing under it: leaves.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/backing-dev-defs.h>
#include <linux/blk-cgroup.h>
#include <linux/blk-mq.h>
#include <linux/cgroup.h>
#include <linux/clocksource.h>
#include <linux/cpuhotplug.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/math64.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/writeback.h>
#include <net/genetlink.h>
#include <net/sock.h>
#ifdef CONFIG_X86_TSC
#include <asm/tsc.h>
#endif

#include "compat.h"
#include "magnet.h"

/* (the tracepoints' arguments the ledger passes by) */
struct pool_workqueue;
struct wb_writeback_work;

#define LEDGER_DEPTH	8	/* interrupt levels kept; deeper ones count */
#define LEDGER_WORKERS	8	/* work items in progress a CPU remembers */
#define LEDGER_PROBES	16	/* rows tried for a new key, then overflow */
#define LEDGER_OWNERS	4	/* activities a softirq splits hardirqs among */
#define LEDGER_CARRY	512	/* items queued, or workers moving, remembered */

struct ledger_key {
	u64 cgroup;
	u64 what;		/* WORK: the function; HARDIRQ: vector name */
	u32 tgid;
	u32 vector;
	u32 kind;
	u32 pad;		/* (zero) */
};

/*
 * A work item under way on a CPU: its worker, the item, its function,
 * and the activity it works for (its queuer's, or the writeback's).
 */
struct ledger_work {
	struct task_struct *task;
	struct work_struct *work;
	work_func_t func;
	u64 owner;
	u32 tgid;		/* the queuer's thread group, or 0 */
};

/*
 * A level of interrupts: its key, and its time since it began or since
 * its last item (a packet, a block request) began, kept until the item's
 * owner is known and charged to it then.
 */
struct ledger_level {
	struct ledger_key key;
	u64 ns;
	u64 owner;		/* the item's cgroup, 0: none (yet) */
	bool item;		/* an item is open */
	u8 raised;		/* a hardirq: the softirqs it raised (bits) */
	u8 pending;		/* a hardirq: the softirqs pending at its start */
	u8 fate;		/* a packet received: what befell it (bits) */
	const struct sk_buff *skb;	/* the packet, if the item is one */
};

/* A received packet no socket took: why, a NET_RX row's NAME. */
enum ledger_fate {
	LEDGER_FATE_KERNEL = 1,	/* the kernel's own (ARP, ICMP, ...) */
	LEDGER_FATE_DROPPED,	/* freed as a drop (kfree_skb) */
	LEDGER_FATE_FORWARDED,	/* sent on (the same skb), in the softirq */
};

struct ledger_levels {
	unsigned int depth;	/* interrupt levels on the stack */
	struct ledger_level stack[LEDGER_DEPTH];
	/*
	 * The softirq's time, and its part per owner, tallied while a
	 * hardirq waits for it to be served (ledger_cpu.served).
	 */
	bool tally;
	u64 softirq_ns;
	struct {
		u64 owner, ns;
	} owners[LEDGER_OWNERS];
};

/* Hardirq time waiting for the softirq it raised (NET_RX, BLOCK). */
struct ledger_served {
	struct ledger_key key;
	u64 ns;
};

struct ledger_row {
	struct ledger_key key;
	u64 ns;
	u32 used;
};

/*
 * The rows of an activity whose task time this CPU charged lately, so
 * that they are found without a search: [0] USER, or IDLE for the idle
 * task (cgroup 0, which no task's cgroup is); [1] SYSTEM (NULL until
 * first charged). Two are kept (ledger_cpu.task_later the one charged
 * last): a sender and a receiver that take turns on a CPU, a task and
 * the idle task.
 */
struct ledger_task {
	u64 cgroup;
	u32 tgid;
	struct ledger_row *row[2];
};

struct ledger_cpu {
	u64 last;		/* the latest boundary */
	u64 elapsed;		/* from first boundary to last, online */
	u64 pending;		/* task time from a softirq's entry on */
	bool started;
	bool tsc;		/* ->last is the TSC's (clock_now()) */
	bool down;		/* going offline, or not back yet: no boundary */
	struct ledger_levels l;
	struct ledger_task task[2];
	unsigned int task_later;	/* of the two, the one charged last */
	struct ledger_row *flushed;	/* a level's last (level_flush()) */
	/*
	 * PREEMPT_RT runs softirqs in tasks that may be preempted: the
	 * levels of the one preempted in a softirq (softirqs on a CPU are
	 * serialised, so one at most), until it runs again.
	 */
	struct task_struct *parked_task;
	struct ledger_levels parked;
	struct ledger_served served[2][2];	/* [NET_RX, BLOCK][irq] */
	struct ledger_work work[LEDGER_WORKERS];
	unsigned int work_next;	/* the slot a full table gives up next */
	struct ledger_row rows[MAGNET_LEDGER_ROWS];
	struct ledger_row overflow;
} ____cacheline_aligned;

/*
 * What the machine carries between CPUs: the owner of a work item from
 * its queueing to its start, and a worker's item while it may move to
 * another CPU. One slot per key's hash; a newer key in the slot replaces
 * the older (whose item then works for no activity).
 */
struct ledger_carry {
	raw_spinlock_t lock;
	atomic_t used;		/* slots with a key: none, nothing to take */
	struct {
		const void *key;
		struct ledger_work w;
	} slot[LEDGER_CARRY];
};

static DEFINE_MUTEX(ledger_lock);
static struct ledger_cpu *ledger;	/* nr_cpu_ids of them, or NULL */
static struct ledger_carry *ledger_queued, *ledger_moving;
static bool ledger_by_tgid;
static u32 ledger_owner;		/* its netlink socket's portid, or 0 */
static bool ledger_armed;		/* every handler in place */
static int ledger_hp_state;		/* its CPU hotplug callbacks' */
static unsigned long ledger_generation;

static const char *const fate_names[] = {
	NULL, "kernel", "dropped", "forwarded",
};

/* x86's interrupt vectors outside request_irq() handlers, named. */
static const char *const vector_names[] = {
	NULL, "local_timer", "reschedule", "call_function",
	"call_function_single", "irq_work",
};

/* --- charging ----------------------------------------------------------- */

/*
 * The ledger's clock, read at every boundary: the TSC scaled to
 * nanoseconds as sched_clock() scales it, while the kernel has not found
 * the TSC unstable (its rate changing, or stopping in idle: asked when
 * the ledger is turned on and at each read, clock_check()); else
 * local_clock(). local_clock() costs some 40 instructions (its stability
 * check, the preemption count, cyc2ns's sequence count), the largest part
 * of a boundary; the TSC read and scaled, a handful. Only differences on
 * one CPU with interrupts off are taken, so CPUs' TSCs need not agree. A
 * CPU whose clock changes from one to the other starts again: the span
 * across the change is in neither its elapsed time nor its rows.
 */
static struct {
	bool on;
	u32 mult, shift;
} ledger_tsc;

static void clock_choose(void)
{
#ifdef CONFIG_X86_TSC
	ledger_tsc.on = boot_cpu_has(X86_FEATURE_TSC) && tsc_khz &&
			!check_tsc_unstable();
	if (ledger_tsc.on)
		clocks_calc_mult_shift(&ledger_tsc.mult, &ledger_tsc.shift,
				       tsc_khz, NSEC_PER_MSEC, 0);
#endif
}

/* The TSC found unstable since: local_clock() from each CPU's next boundary. */
static void clock_check(void)
{
#ifdef CONFIG_X86_TSC
	if (READ_ONCE(ledger_tsc.on) && check_tsc_unstable())
		WRITE_ONCE(ledger_tsc.on, false);
#endif
}

/* Now, on this CPU, and in *@tsc whether by the TSC. Interrupts off. */
static __always_inline u64 clock_now(bool *tsc)
{
#ifdef CONFIG_X86_TSC
	*tsc = READ_ONCE(ledger_tsc.on);
	if (likely(*tsc))
		return mul_u64_u32_shr(rdtsc(), ledger_tsc.mult,
				       ledger_tsc.shift);
#else
	*tsc = false;
#endif
	return local_clock();
}

/*
 * The row of the key (@cgroup, @what, @tgid, @vector, @kind) on CPU @c,
 * made if it has none. (The key's fields one by one: a key on the stack
 * costs the hot paths its zeroing and a stack canary.)
 */
static struct ledger_row *row_find(struct ledger_cpu *c, u64 cgroup,
				   u64 what, u32 tgid, u32 vector, u32 kind)
{
	u32 h = hash_64(cgroup ^ what ^ ((u64)tgid << 32) ^
			((u64)vector << 8) ^ kind, ilog2(MAGNET_LEDGER_ROWS));
	unsigned int i;

	BUILD_BUG_ON(!is_power_of_2(MAGNET_LEDGER_ROWS));
	/* (a bounded search: this runs with interrupts off) */
	for (i = 0; i < LEDGER_PROBES; i++) {
		struct ledger_row *r = &c->rows[(h + i) % MAGNET_LEDGER_ROWS];

		if (!r->used) {
			r->key.cgroup = cgroup;
			r->key.what = what;
			r->key.tgid = tgid;
			r->key.vector = vector;
			r->key.kind = kind;
			/* the key before the reader may see the row */
			smp_store_release(&r->used, 1);
			return r;
		}
		if (r->key.cgroup == cgroup && r->key.what == what &&
		    r->key.tgid == tgid && r->key.vector == vector &&
		    r->key.kind == kind)
			return r;
	}
	return &c->overflow;
}

static struct ledger_row *row_of(struct ledger_cpu *c,
				 const struct ledger_key *k)
{
	return row_find(c, k->cgroup, k->what, k->tgid, k->vector, k->kind);
}

/* (one writer, one store: a reader sees the row's time whole) */
static void row_add(struct ledger_row *r, u64 ns)
{
	WRITE_ONCE(r->ns, r->ns + ns);
}

static void add(struct ledger_cpu *c, const struct ledger_key *k, u64 ns)
{
	if (ns)
		row_add(row_of(c, k), ns);
}

static void carry_put(struct ledger_carry *t, const void *key,
		      const struct ledger_work *w)
{
	unsigned int h = hash_ptr(key, ilog2(LEDGER_CARRY));
	unsigned long flags;

	BUILD_BUG_ON(!is_power_of_2(LEDGER_CARRY));
	raw_spin_lock_irqsave(&t->lock, flags);
	if (!t->slot[h].key)
		atomic_inc(&t->used);
	t->slot[h].key = key;
	t->slot[h].w = *w;
	raw_spin_unlock_irqrestore(&t->lock, flags);
}

/* Take @key's entry out of @t into @w: true, or false if it has none. */
static bool carry_take(struct ledger_carry *t, const void *key,
		       struct ledger_work *w)
{
	unsigned int h = hash_ptr(key, ilog2(LEDGER_CARRY));
	unsigned long flags;
	bool found;

	if (!atomic_read(&t->used))
		return false;
	raw_spin_lock_irqsave(&t->lock, flags);
	found = t->slot[h].key == key;
	if (found) {
		*w = t->slot[h].w;
		t->slot[h].key = NULL;
		atomic_dec(&t->used);
	}
	raw_spin_unlock_irqrestore(&t->lock, flags);
	return found;
}

/* The slot of @t's work item in progress on this CPU, or NULL. */
static struct ledger_work *work_of(struct ledger_cpu *c,
				   struct task_struct *t)
{
	unsigned int i;

	for (i = 0; i < LEDGER_WORKERS; i++)
		if (c->work[i].task == t)
			return &c->work[i];
	return NULL;
}

/*
 * A slot for @t's item on this CPU: its own, a free one, or (a full
 * table gives up its slots in turn: their items go on as unnamed work)
 * the next one.
 */
static struct ledger_work *work_slot(struct ledger_cpu *c,
				     struct task_struct *t)
{
	struct ledger_work *w = work_of(c, t);
	unsigned int i;

	for (i = 0; !w && i < LEDGER_WORKERS; i++)
		if (!c->work[i].task)
			w = &c->work[i];
	if (!w)
		w = &c->work[c->work_next++ % LEDGER_WORKERS];
	w->task = t;
	return w;
}

/* @ns to row @i of task @lt, of kind @kind, found the first time. */
static void charge_row(struct ledger_cpu *c, struct ledger_task *lt,
		       unsigned int i, u32 kind, u64 ns)
{
	if (!ns)
		return;
	if (!lt->row[i])
		lt->row[i] = row_find(c, lt->cgroup, 0, lt->tgid, 0, kind);
	row_add(lt->row[i], ns);
}

/*
 * The rows of cgroup @cgroup and thread group @tgid (0 and 0: the idle
 * task's), made the later of this CPU's two (a new one replaces the
 * earlier).
 */
static struct ledger_task *task_rows(struct ledger_cpu *c, u64 cgroup,
				     u32 tgid)
{
	struct ledger_task *lt = &c->task[c->task_later];

	if (lt->cgroup == cgroup && lt->tgid == tgid)
		return lt;
	c->task_later ^= 1;
	lt = &c->task[c->task_later];
	if (lt->cgroup != cgroup || lt->tgid != tgid) {
		lt->cgroup = cgroup;
		lt->tgid = tgid;
		lt->row[0] = NULL;
		lt->row[1] = NULL;
	}
	return lt;
}

/*
 * A kernel thread, for @ns: the work item this CPU saw start or its
 * worker bring, by its function and owner; one that began elsewhere
 * (current_work() answers in task context only), as unnamed work.
 */
static noinline void charge_kthread(struct ledger_cpu *c,
				    struct task_struct *t, u32 tgid, u64 ns)
{
	struct ledger_work *w = work_of(c, t);
	struct ledger_key k = { .kind = MAGNET_LEDGER_KTHREAD, .tgid = tgid };

	if (w) {
		k.kind = MAGNET_LEDGER_WORK;
		k.what = (unsigned long)w->func;
		k.cgroup = w->owner;
		k.tgid = tgid ? w->tgid : 0;
	} else if ((t->flags & PF_WQ_WORKER) && in_task() && current_work()) {
		k.kind = MAGNET_LEDGER_WORK;
	}
	add(c, &k, ns);
}

/* The task level: what current is doing, for @ns of it. */
static void charge_task(struct ledger_cpu *c, u64 ns)
{
	struct task_struct *t = current;
	u32 tgid = ledger_by_tgid ? t->tgid : 0;
	struct ledger_task *lt;
	u64 user, sys, u;

	if (is_idle_task(t)) {
		lt = task_rows(c, 0, 0);
		charge_row(c, lt, 0, MAGNET_LEDGER_IDLE, ns);
		return;
	}
	if (t->flags & PF_KTHREAD) {
		charge_kthread(c, t, tgid, ns);
		return;
	}
	/* the cgroup, and the tick-sampled user:system proportion */
	lt = task_rows(c, cgroup_id(task_dfl_cgroup(t)), tgid);
	user = READ_ONCE(t->utime);
	sys = READ_ONCE(t->stime);
	u = user + sys ? mul_u64_u64_div_u64(ns, user, user + sys) : 0;
	charge_row(c, lt, 0, MAGNET_LEDGER_USER, u);
	charge_row(c, lt, 1, MAGNET_LEDGER_SYSTEM, ns - u);
}

/* The top level kept on this CPU's stack, or NULL. */
static struct ledger_level *top_of(struct ledger_cpu *c)
{
	if (!c->l.depth || c->l.depth > LEDGER_DEPTH)
		return NULL;
	return &c->l.stack[c->l.depth - 1];
}

/*
 * This CPU's state in *@cp, and its top level or NULL (also while the
 * CPU is going offline): what a handler looks at before it decides it
 * has a boundary to cut. Interrupts off.
 */
static struct ledger_level *top_here(struct ledger_cpu **cp)
{
	struct ledger_cpu *c = &READ_ONCE(ledger)[smp_processor_id()];

	*cp = c;
	return c->down ? NULL : top_of(c);
}

/*
 * A boundary on this CPU: charge the span since the last one to what ran
 * until now (an interrupt level keeps it until its item's owner is
 * known). Interrupts off. Returns the CPU's state, or NULL while it is
 * going offline or coming back (that time is in neither its elapsed
 * time nor its rows).
 *
 * @defer (a softirq's entry): a task's span is kept (ledger_cpu.pending)
 * and charged with the task's next, at its next boundary out of the
 * softirq (a switch, an interrupt, a work item's start or end): a
 * softirq that a send runs on its way out charges no row on entry. Its
 * elapsed time waits with it, so the rows still add up to it.
 */
static __always_inline struct ledger_cpu *boundary_at(bool defer)
{
	struct ledger_cpu *c = &READ_ONCE(ledger)[smp_processor_id()];
	u64 now, span;
	bool tsc;

	if (c->down)
		return NULL;
	now = clock_now(&tsc);
	if (!c->started || c->tsc != tsc) {
		c->last = now;
		c->started = true;
		c->tsc = tsc;
		return c;
	}
	/* (a clock set back, as a TSC may be on resume: no time) */
	span = now > c->last ? now - c->last : 0;
	c->last = now;
	if (!c->l.depth && defer) {
		c->pending += span;
		return c;
	}
	if (c->l.depth > LEDGER_DEPTH) {
		add(c, &c->l.stack[LEDGER_DEPTH - 1].key, span);
	} else if (c->l.depth) {
		c->l.stack[c->l.depth - 1].ns += span;
	} else {
		span += c->pending;
		c->pending = 0;
		charge_task(c, span);
	}
	/* (one writer, one store: a reader never sees it torn or go back) */
	WRITE_ONCE(c->elapsed, c->elapsed + span);
	return c;
}

/* (out of line, for the paths less taken) */
static noinline struct ledger_cpu *boundary(void)
{
	return boundary_at(false);
}

/* The task time kept (boundary_at()) to current, now. */
static void pending_flush(struct ledger_cpu *c)
{
	if (!c->pending)
		return;
	charge_task(c, c->pending);
	WRITE_ONCE(c->elapsed, c->elapsed + c->pending);
	c->pending = 0;
}

/* The level's time kept so far to its item's owner (0: to none). */
static void level_flush(struct ledger_cpu *c, struct ledger_level *lv)
{
	u64 what = lv->key.what;
	struct ledger_row *r;
	unsigned int i;

	if (!lv->ns)
		return;
	if (lv->key.kind == MAGNET_LEDGER_SOFTIRQ && c->l.tally) {
		c->l.softirq_ns += lv->ns;
		for (i = 0; lv->owner && i < LEDGER_OWNERS; i++) {
			if (c->l.owners[i].owner &&
			    c->l.owners[i].owner != lv->owner)
				continue;
			c->l.owners[i].owner = lv->owner;
			c->l.owners[i].ns += lv->ns;
			break;
		}
	}
	if (lv->item && !lv->owner && lv->key.kind == MAGNET_LEDGER_SOFTIRQ &&
	    lv->key.vector == NET_RX_SOFTIRQ)
		what = lv->fate & BIT(LEDGER_FATE_DROPPED) ?
		       LEDGER_FATE_DROPPED :
		       lv->fate & BIT(LEDGER_FATE_FORWARDED) ?
		       LEDGER_FATE_FORWARDED : LEDGER_FATE_KERNEL;
	/* (mostly the row of the level before: the same owner, the same kind) */
	r = c->flushed;
	if (!r || r->key.cgroup != lv->owner || r->key.what != what ||
	    r->key.tgid != lv->key.tgid || r->key.vector != lv->key.vector ||
	    r->key.kind != lv->key.kind) {
		r = row_find(c, lv->owner, what, lv->key.tgid, lv->key.vector,
			     lv->key.kind);
		c->flushed = r;
	}
	row_add(r, lv->ns);
	lv->ns = 0;
}

/*
 * An item starts at level @lv: the one before it, if any, is done; if
 * none, the level's time so far is this one's.
 */
static void item_open(struct ledger_cpu *c, struct ledger_level *lv,
		      u64 owner, const struct sk_buff *skb)
{
	if (lv->item)
		level_flush(c, lv);
	lv->item = true;
	lv->owner = owner;
	lv->fate = 0;
	lv->skb = skb;
}

/* An item starts at level @lv now: a boundary if one is open before it. */
static void item_start(struct ledger_cpu *c, struct ledger_level *lv,
		       u64 owner, const struct sk_buff *skb)
{
	if (lv->item)
		boundary();
	item_open(c, lv, owner, skb);
}

/* The softirqs that may serve a hardirq: their index in ->served. */
static int served_index(unsigned int vec)
{
	return vec == NET_RX_SOFTIRQ ? 0 : vec == BLOCK_SOFTIRQ ? 1 : -1;
}

/* Hardirq time waits for the softirq with index @idx in ->served. */
static bool served_waiting(struct ledger_cpu *c, int idx)
{
	return idx >= 0 && (c->served[idx][0].ns || c->served[idx][1].ns);
}

/*
 * The softirq under way tallies its time per owner from now on, for the
 * hardirq time it will serve. (Only then: most softirqs serve none.)
 */
static void tally_begin(struct ledger_levels *l)
{
	l->tally = true;
	l->softirq_ns = 0;
	memset(l->owners, 0, sizeof(l->owners));
}

/*
 * A hardirq that raised NET_RX or BLOCK ends: its time outside items
 * waits for that softirq, which knows whose packets or requests it was
 * for (two hardirqs at most wait per softirq; others go to none now):
 * the next to begin, or the one it interrupted, from now on.
 */
static void serve_later(struct ledger_cpu *c, struct ledger_level *lv)
{
	unsigned int vec = lv->raised & BIT(NET_RX_SOFTIRQ) ? NET_RX_SOFTIRQ :
			   BLOCK_SOFTIRQ;
	struct ledger_served *s = c->served[served_index(vec)];
	struct ledger_level *below;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->served[0]); i++) {
		if (s[i].ns && memcmp(&s[i].key, &lv->key, sizeof(lv->key)))
			continue;
		s[i].key = lv->key;
		s[i].ns += lv->ns;
		lv->ns = 0;
		below = c->l.depth >= 2 && c->l.depth <= LEDGER_DEPTH ?
			&c->l.stack[c->l.depth - 2] : NULL;
		if (below && below->key.kind == MAGNET_LEDGER_SOFTIRQ &&
		    below->key.vector == vec && !c->l.tally)
			tally_begin(&c->l);
		return;
	}
	level_flush(c, lv);
}

/*
 * A softirq of vector @vec that tallied its owners ends (pop()): the
 * hardirq time it serves is split among them in proportion, the rest to
 * none.
 */
static void serve(struct ledger_cpu *c, unsigned int vec)
{
	int idx = served_index(vec);
	struct ledger_served *s;
	struct ledger_key k;
	unsigned int i, j;
	u64 part, rest;

	if (idx < 0)
		return;
	s = c->served[idx];
	for (i = 0; i < ARRAY_SIZE(c->served[0]); i++) {
		if (!s[i].ns)
			continue;
		k = s[i].key;
		rest = s[i].ns;
		for (j = 0; j < LEDGER_OWNERS && c->l.softirq_ns; j++) {
			if (!c->l.owners[j].owner)
				break;
			part = mul_u64_u64_div_u64(s[i].ns,
						   c->l.owners[j].ns,
						   c->l.softirq_ns);
			k.cgroup = c->l.owners[j].owner;
			add(c, &k, part);
			rest -= part;
		}
		k.cgroup = 0;
		add(c, &k, rest);
		s[i].ns = 0;
	}
}

/* Every level's and waiting hardirq's time to its owner now. */
static void flush_all(struct ledger_cpu *c)
{
	unsigned int i, j;

	pending_flush(c);
	for (i = 0; i < min(c->l.depth, LEDGER_DEPTH); i++)
		level_flush(c, &c->l.stack[i]);
	for (i = 0; i < ARRAY_SIZE(c->served); i++)
		for (j = 0; j < ARRAY_SIZE(c->served[0]); j++) {
			add(c, &c->served[i][j].key, c->served[i][j].ns);
			c->served[i][j].ns = 0;
		}
}

/*
 * A level of kind @kind, vector @vector (and @what, its name) begins.
 * (Inline: each tracepoint's handler has its own, for its kind.)
 */
static __always_inline void push(u32 kind, u32 vector, u64 what)
{
	struct ledger_level *lv;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed))
		return;
	local_irq_save(flags);
	c = boundary_at(kind == MAGNET_LEDGER_SOFTIRQ);
	if (!c)
		goto out;
	if (c->l.depth < LEDGER_DEPTH) {
		lv = &c->l.stack[c->l.depth];
		*lv = (struct ledger_level){
			.key = { .kind = kind, .vector = vector, .what = what },
		};
		if (kind == MAGNET_LEDGER_HARDIRQ)
			lv->pending = local_softirq_pending();
	}
	if (kind == MAGNET_LEDGER_SOFTIRQ) {
		c->l.tally = false;
		if (served_waiting(c, served_index(vector)))
			tally_begin(&c->l);
	}
	c->l.depth++;
out:
	local_irq_restore(flags);
}

/* The level of kind @kind and vector @vector ends, if it is the top. */
static __always_inline void pop(u8 kind, u32 vector)
{
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed))
		return;
	local_irq_save(flags);
	c = boundary_at(false);
	if (!c || !c->l.depth)
		goto out;
	top = top_of(c);
	/* (an exit whose entry came before the ledger armed: nothing) */
	if (top && (top->key.kind != kind || top->key.vector != vector))
		goto out;
	/*
	 * (what it raised, seen here rather than at softirq_raise, which
	 * fires for every raise, a send's NET_RX included)
	 */
	if (top && kind == MAGNET_LEDGER_HARDIRQ && in_hardirq())
		top->raised = local_softirq_pending() & ~top->pending &
			      (BIT(NET_RX_SOFTIRQ) | BIT(BLOCK_SOFTIRQ));
	if (top && top->raised && !top->owner)
		serve_later(c, top);
	else if (top)
		level_flush(c, top);
	if (top && kind == MAGNET_LEDGER_SOFTIRQ && c->l.tally)
		serve(c, vector);
	c->l.depth--;
out:
	local_irq_restore(flags);
}

/* --- the kernel's tracepoints ------------------------------------------- */

/*
 * A switch from @prev to @next, one of them a workqueue worker: a worker
 * that may resume elsewhere takes its item along.
 */
static noinline void switch_workers(struct ledger_cpu *c,
				    struct task_struct *prev,
				    struct task_struct *next)
{
	struct ledger_work *w, moved;

	w = (prev->flags & PF_WQ_WORKER) && prev->nr_cpus_allowed > 1 ?
	    work_of(c, prev) : NULL;
	if (w) {
		carry_put(ledger_moving, prev, w);
		w->task = NULL;
	}
	if ((next->flags & PF_WQ_WORKER) && !work_of(c, next) &&
	    carry_take(ledger_moving, next, &moved))
		*work_slot(c, next) = moved;
}

static void on_switch(void *data, bool preempt, struct task_struct *prev,
		      struct task_struct *next, unsigned int prev_state)
{
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed))
		return;
	local_irq_save(flags);
	c = boundary_at(false);
	if (!c)
		goto out;
	/* (prev's span before a softirq it is preempted in, PREEMPT_RT) */
	pending_flush(c);
	/* PREEMPT_RT: a task preempted in a softirq keeps its levels */
	if (c->l.depth) {
		c->parked_task = prev;
		c->parked = c->l;
		c->l.depth = 0;
	}
	if (next == c->parked_task) {
		c->l = c->parked;
		c->parked_task = NULL;
	}
	if ((prev->flags | next->flags) & PF_WQ_WORKER)
		switch_workers(c, prev, next);
out:
	local_irq_restore(flags);
}

static void on_irq_entry(void *data, int irq, struct irqaction *action)
{
	push(MAGNET_LEDGER_HARDIRQ, irq, 0);
}

static void on_irq_exit(void *data, int irq, struct irqaction *action,
			int ret)
{
	pop(MAGNET_LEDGER_HARDIRQ, irq);
}

/* @data: the index of the vector's name */
static void on_vector_entry(void *data, int vector)
{
	push(MAGNET_LEDGER_HARDIRQ, vector, (unsigned long)data);
}

static void on_vector_exit(void *data, int vector)
{
	pop(MAGNET_LEDGER_HARDIRQ, vector);
}

static void on_softirq_entry(void *data, unsigned int vec)
{
	push(MAGNET_LEDGER_SOFTIRQ, vec, 0);
}

static void on_softirq_exit(void *data, unsigned int vec)
{
	pop(MAGNET_LEDGER_SOFTIRQ, vec);
}

/*
 * What current works for, queueing a work item now: its cgroup (0: none)
 * and thread group (*@tgid, 0: none known).
 */
static u64 queuer(struct ledger_cpu *c, u32 *tgid)
{
	struct ledger_level *top = top_of(c);
	struct ledger_work *w;

	*tgid = 0;
	if (top)
		return top->owner;
	if (c->l.depth || !in_task())
		return 0;
	if (!(current->flags & PF_KTHREAD)) {
		*tgid = current->tgid;
		return cgroup_id(task_dfl_cgroup(current));
	}
	w = work_of(c, current);
	if (!w)
		return 0;
	*tgid = w->tgid;
	return w->owner;
}

/* A work item is queued: it works for its queuer's activity. */
static void on_queue(void *data, int req_cpu, struct pool_workqueue *pwq,
		     struct work_struct *work)
{
	struct ledger_work w = {};
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed))
		return;
	local_irq_save(flags);
	c = &READ_ONCE(ledger)[smp_processor_id()];
	if (!c->down)
		w.owner = queuer(c, &w.tgid);
	local_irq_restore(flags);
	carry_put(ledger_queued, work, &w);
}

/* A work item starts: the worker's time from here is the item's. */
static void on_work_start(void *data, struct work_struct *work)
{
	struct ledger_work *w, queued;
	unsigned long flags;
	struct ledger_cpu *c;

	/* (a BH work item, 6.9 on, runs in its softirq: that level's) */
	if (!READ_ONCE(ledger_armed) || !in_task())
		return;
	local_irq_save(flags);
	c = boundary();
	if (!c)
		goto out;
	w = work_slot(c, current);
	w->work = work;
	w->func = work->func;
	if (!carry_take(ledger_queued, work, &queued))
		queued = (struct ledger_work){};
	w->owner = queued.owner;
	w->tgid = queued.tgid;
out:
	local_irq_restore(flags);
}

static void on_work_end(void *data, struct work_struct *work,
			work_func_t func)
{
	struct ledger_work *w;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || !in_task())
		return;
	local_irq_save(flags);
	c = boundary();
	w = c ? work_of(c, current) : NULL;
	if (w && w->work == work)
		w->task = NULL;
	local_irq_restore(flags);
}

/* The work item under way in current works for @owner from now. */
static void work_owner(u64 owner)
{
	struct ledger_work *w;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || !owner)
		return;
	local_irq_save(flags);
	c = boundary();
	w = c && !c->l.depth ? work_of(c, current) : NULL;
	if (w) {
		w->owner = owner;
		w->tgid = 0;	/* (the pages' owner's: not known) */
	}
	local_irq_restore(flags);
}

/* The cgroup of writeback @wb's memory (the dirty pages' owner), or 0. */
static u64 wb_owner(struct bdi_writeback *wb)
{
#ifdef CONFIG_CGROUP_WRITEBACK
	if (wb && wb->memcg_css)
		return cgroup_id(wb->memcg_css->cgroup);
#endif
	return 0;
}

/* A writeback worker begins a pass for @wb, */
static void on_wb_start(void *data, struct bdi_writeback *wb,
			struct wb_writeback_work *work)
{
	work_owner(wb_owner(wb));
}

/* and an inode, whose pages' owner writeback records (inode->i_wb). */
static void on_wb_inode(void *data, struct inode *inode,
			struct writeback_control *wbc,
			unsigned long nr_to_write)
{
#ifdef CONFIG_CGROUP_WRITEBACK
	work_owner(wb_owner(inode->i_wb));
#endif
}

/* A block request completes: the level's time is its submitter's. */
static void on_block_done(void *data, struct request *rq,
			  blk_status_t error, unsigned int nr_bytes)
{
	struct cgroup_subsys_state *css;
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || in_task())
		return;
	local_irq_save(flags);
	top = top_here(&c);
	if (top) {
		css = rq->bio ? bio_blkcg_css(rq->bio) : NULL;
		item_start(c, top, css ? cgroup_id(css->cgroup) : 0, NULL);
	}
	local_irq_restore(flags);
}

/* The cgroup of @sk, 0 if it is not a full socket. */
static u64 sock_owner(const struct sock *sk)
{
	if (!sk || !sk_fullsock(sk))
		return 0;
	return cgroup_id(sock_cgroup_ptr((struct sock_cgroup_data *)
					 &sk->sk_cgrp_data));
}

/* @top is a level of a softirq of vector @vec. */
static bool softirq_of(const struct ledger_level *top, unsigned int vec)
{
	return top && top->key.kind == MAGNET_LEDGER_SOFTIRQ &&
	       top->key.vector == vec;
}

/* Packet @skb, received, and that no socket took yet, meets @fate. */
static void packet_fate(struct ledger_level *top, const struct sk_buff *skb,
			enum ledger_fate fate)
{
	if (softirq_of(top, NET_RX_SOFTIRQ) && top->item &&
	    top->skb == skb && !top->owner)
		top->fate |= BIT(fate);
}

/* netif_receive_skb: a packet starts, if in NET_RX (its owner to come) */
static void on_rx(void *data, struct sk_buff *skb)
{
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || !in_serving_softirq())
		return;
	local_irq_save(flags);
	top = top_here(&c);
	if (softirq_of(top, NET_RX_SOFTIRQ))
		item_start(c, top, 0, skb);
	local_irq_restore(flags);
}

/*
 * net_dev_start_xmit: in NET_TX a packet starts, its sender's; in NET_RX
 * the packet it has open is sent on. (A send elsewhere, in a task or
 * during NET_RX for another packet, an ACK, is that context's work.)
 */
static void on_tx(void *data, struct sk_buff *skb, struct net_device *dev)
{
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || !in_serving_softirq())
		return;
	local_irq_save(flags);
	top = top_here(&c);
	if (softirq_of(top, NET_TX_SOFTIRQ))
		item_start(c, top, sock_owner(skb->sk), skb);
	else
		packet_fate(top, skb, LEDGER_FATE_FORWARDED);
	local_irq_restore(flags);
}

/*
 * kfree_skb(skb, location, ...): a packet dropped. (The arguments after
 * these differ, 6.1 to 6.12, and are not read.)
 */
static void on_drop(void *data, struct sk_buff *skb, void *location)
{
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;

	if (!READ_ONCE(ledger_armed) || !in_serving_softirq())
		return;
	local_irq_save(flags);
	top = top_here(&c);
	packet_fate(top, skb, LEDGER_FATE_DROPPED);
	local_irq_restore(flags);
}

/*
 * sk_filter_trim_cap(sk, skb, ...): a packet reaches a socket. If it is
 * not the open item (a GRO list's, a clone), it becomes the item.
 * An ftrace_ops of the ledger's own, without saved registers: kprobes'
 * way there, through the same call site, saves them all and looks the
 * kprobe up in a hash, on every TCP, UDP and raw delivery. It needs no
 * guard against recursion (ftrace_test_recursion_trylock()): it traces
 * sk_filter_trim_cap() alone, which it never calls, and runs with
 * interrupts off from its first look at this CPU's state.
 */
static void notrace on_deliver(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *op,
			       struct ftrace_regs *fregs)
{
	struct pt_regs *regs = magnet_fregs_args(fregs);
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const void *skb = (void *)regs_get_kernel_argument(regs, 1);
	struct ledger_level *top;
	unsigned long flags;
	struct ledger_cpu *c;
	u64 owner;

	if (!READ_ONCE(ledger_armed) || !in_serving_softirq())
		return;
	local_irq_save(flags);
	top = top_here(&c);
	/* (netlink's deliveries pass there too: a listener is no owner) */
	if (!softirq_of(top, NET_RX_SOFTIRQ) || !top->item ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6))
		goto out;
	owner = sock_owner(sk);
	if (!top->owner)
		top->owner = owner;
	if (skb != top->skb) {
		boundary();
		item_open(c, top, owner, skb);
	}
out:
	local_irq_restore(flags);
}

/*
 * (allocated each time it is turned on: ftrace_free_filter() leaves the
 * ops pointing at the hashes it freed)
 */
static struct ftrace_ops *deliver_ops;

static int deliver_register(void)
{
	static const char name[] = "sk_filter_trim_cap";
	struct ftrace_ops *ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	int err;

	if (!ops)
		return -ENOMEM;
	ops->func = on_deliver;
	err = ftrace_set_filter(ops, (unsigned char *)name, strlen(name), 1);
	if (!err)
		err = register_ftrace_function(ops);
	if (err) {
		ftrace_free_filter(ops);
		kfree(ops);
		return err;
	}
	deliver_ops = ops;
	return 0;
}

/* Returns once no CPU runs on_deliver(). */
static void deliver_unregister(void)
{
	unregister_ftrace_function(deliver_ops);
	ftrace_free_filter(deliver_ops);
	kfree(deliver_ops);
	deliver_ops = NULL;
}

struct ledger_tp {
	const char *name;
	void *handler;
	unsigned long data;
	bool optional;		/* x86's vectors: only where they exist */
	struct tracepoint *tp;
};

static struct ledger_tp ledger_tps[] = {
	{ "sched_switch", on_switch },
	{ "irq_handler_entry", on_irq_entry },
	{ "irq_handler_exit", on_irq_exit },
	{ "softirq_entry", on_softirq_entry },
	{ "softirq_exit", on_softirq_exit },
	{ "workqueue_queue_work", on_queue },
	{ "workqueue_execute_start", on_work_start },
	{ "workqueue_execute_end", on_work_end },
	{ "netif_receive_skb", on_rx },
	{ "net_dev_start_xmit", on_tx },
	{ "kfree_skb", on_drop },
	{ "block_rq_complete", on_block_done },
	{ "writeback_start", on_wb_start },
	{ "writeback_single_inode_start", on_wb_inode },
	{ "local_timer_entry", on_vector_entry, 1, true },
	{ "local_timer_exit", on_vector_exit, 1, true },
	{ "reschedule_entry", on_vector_entry, 2, true },
	{ "reschedule_exit", on_vector_exit, 2, true },
	{ "call_function_entry", on_vector_entry, 3, true },
	{ "call_function_exit", on_vector_exit, 3, true },
	{ "call_function_single_entry", on_vector_entry, 4, true },
	{ "call_function_single_exit", on_vector_exit, 4, true },
	{ "irq_work_entry", on_vector_entry, 5, true },
	{ "irq_work_exit", on_vector_exit, 5, true },
};

static void tps_unregister(unsigned int n)
{
	while (n--) {
		struct ledger_tp *t = &ledger_tps[n];

		if (t->tp)
			tracepoint_probe_unregister(t->tp, t->handler,
						    (void *)t->data);
		t->tp = NULL;
	}
	tracepoint_synchronize_unregister();
}

/*
 * Every tracepoint, entries and exits in pairs: an optional pair the
 * kernel lacks half of is left out whole.
 */
static int tps_register(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(ledger_tps); i++) {
		struct ledger_tp *t = &ledger_tps[i];
		struct tracepoint *tp = magnet_tracepoint_find(t->name);

		if (!tp && t->optional)
			continue;
		if (!tp) {
			pr_warn("ledger: no tracepoint %s\n", t->name);
			err = -ENOENT;
			goto fail;
		}
		/* (an optional entry is followed by its exit) */
		if (t->optional && strstr(t->name, "_entry") &&
		    !magnet_tracepoint_find(ledger_tps[i + 1].name))
			continue;
		if (t->optional && strstr(t->name, "_exit") &&
		    !ledger_tps[i - 1].tp)
			continue;
		err = tracepoint_probe_register(tp, t->handler,
						(void *)t->data);
		if (err)
			goto fail;
		t->tp = tp;
	}
	return 0;
fail:
	tps_unregister(i);
	return err;
}

/*
 * CPU hotplug: a CPU going offline closes its stretch (its levels go: it
 * runs nothing more it could be in the middle of), and one coming back
 * starts the next at its first boundary; the time between is in neither
 * its elapsed time nor its rows. Both run on that CPU.
 */
static int ledger_cpu_down(unsigned int cpu)
{
	unsigned long flags;
	struct ledger_cpu *c;

	local_irq_save(flags);
	c = &ledger[cpu];
	if (c->started)
		boundary();
	flush_all(c);
	/* PREEMPT_RT: a softirq task preempted here ends it elsewhere */
	if (c->parked_task) {
		c->l = c->parked;
		flush_all(c);
		c->parked_task = NULL;
	}
	c->started = false;
	c->down = true;
	c->l.depth = 0;
	local_irq_restore(flags);
	return 0;
}

static int ledger_cpu_up(unsigned int cpu)
{
	unsigned long flags;

	local_irq_save(flags);
	ledger[cpu].down = false;
	local_irq_restore(flags);
	return 0;
}

/* --- on, off ------------------------------------------------------------ */

static void carries_free(void)
{
	vfree(ledger_queued);
	vfree(ledger_moving);
	ledger_queued = NULL;
	ledger_moving = NULL;
}

static int carries_alloc(void)
{
	ledger_queued = vzalloc(sizeof(*ledger_queued));
	ledger_moving = vzalloc(sizeof(*ledger_moving));
	if (!ledger_queued || !ledger_moving) {
		carries_free();
		return -ENOMEM;
	}
	raw_spin_lock_init(&ledger_queued->lock);
	raw_spin_lock_init(&ledger_moving->lock);
	return 0;
}

/* Off: disarmed, unhooked, and freed once no handler runs. */
static void ledger_off(void)
{
	struct ledger_cpu *c = ledger;

	lockdep_assert_held(&ledger_lock);
	WRITE_ONCE(ledger_armed, false);
	cpuhp_remove_state_nocalls(ledger_hp_state);
	deliver_unregister();
	tps_unregister(ARRAY_SIZE(ledger_tps));
	WRITE_ONCE(ledger, NULL);
	vfree(c);
	carries_free();
	ledger_owner = 0;
}

/*
 * On or off. @owner: the netlink socket whose closing turns it off
 * (MAGNET_A_OWNED; magnet_ledger_release()), or 0.
 */
int magnet_ledger_set(bool on, bool by_tgid, u32 owner,
		      struct netlink_ext_ack *extack)
{
	struct ledger_cpu *c;
	unsigned int i;
	int err = 0;

	mutex_lock(&ledger_lock);
	if (on == !!ledger) {
		if (on)
			NL_SET_ERR_MSG(extack,
				       "the ledger is on already (off first: its counters start again)");
		else
			NL_SET_ERR_MSG(extack, "the ledger is off already");
		err = -EALREADY;
		goto out;
	}
	if (!on) {
		ledger_off();
		goto out;
	}
	c = vzalloc(array_size(nr_cpu_ids, sizeof(*c)));
	if (!c || carries_alloc()) {
		vfree(c);
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr_cpu_ids; i++)
		c[i].overflow.key.kind = MAGNET_LEDGER_OVERFLOW;
	ledger_by_tgid = by_tgid;
	ledger_generation++;
	clock_choose();
	WRITE_ONCE(ledger, c);
	err = tps_register();
	if (err) {
		if (err == -ENOENT)
			NL_SET_ERR_MSG(extack,
				       "the kernel lacks a tracepoint the ledger needs");
		goto undo;
	}
	err = deliver_register();
	if (err) {
		NL_SET_ERR_MSG(extack,
			       "cannot probe sk_filter_trim_cap, where packets reach sockets");
		tps_unregister(ARRAY_SIZE(ledger_tps));
		goto undo;
	}
	err = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "magnet/ledger",
					ledger_cpu_up, ledger_cpu_down);
	if (err < 0) {
		deliver_unregister();
		tps_unregister(ARRAY_SIZE(ledger_tps));
		goto undo;
	}
	ledger_hp_state = err;
	err = 0;
	ledger_owner = owner;
	WRITE_ONCE(ledger_armed, true);
	goto out;
undo:
	WRITE_ONCE(ledger, NULL);
	vfree(c);
	carries_free();
out:
	mutex_unlock(&ledger_lock);
	return err;
}

/* Netlink socket @portid closed: a ledger it owned goes off. */
void magnet_ledger_release(u32 portid)
{
	mutex_lock(&ledger_lock);
	if (ledger && ledger_owner == portid)
		ledger_off();
	mutex_unlock(&ledger_lock);
}

void magnet_ledger_exit(void)
{
	mutex_lock(&ledger_lock);
	if (ledger)
		ledger_off();
	mutex_unlock(&ledger_lock);
}

/* --- reading ------------------------------------------------------------ */

static int fill_row(struct sk_buff *skb, unsigned int cpu,
		    const struct ledger_row *r)
{
	const struct ledger_key *k = &r->key;
	char name[KSYM_SYMBOL_LEN];

	if (nla_put_u32(skb, MAGNET_A_LEDGER_CPU, cpu) ||
	    nla_put_u64_64bit(skb, MAGNET_A_LEDGER_CGROUP, k->cgroup,
			      MAGNET_A_PAD) ||
	    nla_put_u8(skb, MAGNET_A_LEDGER_KIND, k->kind) ||
	    nla_put_u64_64bit(skb, MAGNET_A_LEDGER_NS, READ_ONCE(r->ns),
			      MAGNET_A_PAD))
		return -EMSGSIZE;
	if (ledger_by_tgid && k->tgid &&
	    nla_put_u32(skb, MAGNET_A_LEDGER_TGID, k->tgid))
		return -EMSGSIZE;
	if ((k->kind == MAGNET_LEDGER_HARDIRQ ||
	     k->kind == MAGNET_LEDGER_SOFTIRQ) &&
	    nla_put_u32(skb, MAGNET_A_LEDGER_VECTOR, k->vector))
		return -EMSGSIZE;
	*name = 0;
	/* (a function kallsyms does not know prints as its address: none) */
	if (k->kind == MAGNET_LEDGER_WORK && k->what &&
	    snprintf(name, sizeof(name), "%ps", (void *)k->what) > 0 &&
	    !strncmp(name, "0x", 2))
		*name = 0;
	else if (k->kind == MAGNET_LEDGER_HARDIRQ &&
		 k->what < ARRAY_SIZE(vector_names) && vector_names[k->what])
		strscpy(name, vector_names[k->what], sizeof(name));
	else if (k->kind == MAGNET_LEDGER_SOFTIRQ &&
		 k->what < ARRAY_SIZE(fate_names) && fate_names[k->what])
		strscpy(name, fate_names[k->what], sizeof(name));
	if (*name && nla_put_string(skb, MAGNET_A_LEDGER_NAME, name))
		return -EMSGSIZE;
	return 0;
}

/*
 * A CPU's elapsed time and rows as of one instant, for a dump: copied on
 * that CPU with interrupts off (an IPI), so that no boundary falls
 * between the two. Read live, a span charged while the dump was between
 * a CPU's elapsed time and its rows (an idle CPU's, at its wakeup) made
 * its rows exceed its elapsed time. The time of levels still open at the
 * copy is in the elapsed time and in no row yet: the residue.
 */
struct ledger_snap {
	unsigned int cpu;
	unsigned int n;		/* rows */
	u64 elapsed;
	struct ledger_row rows[MAGNET_LEDGER_ROWS + 1];
};

/* On snap->cpu, interrupts off (or that CPU offline). */
static void snap_take(void *arg)
{
	struct ledger_snap *snap = arg;
	struct ledger_cpu *c = &ledger[snap->cpu];
	unsigned int i;

	snap->elapsed = READ_ONCE(c->elapsed);
	snap->n = 0;
	for (i = 0; i < MAGNET_LEDGER_ROWS; i++)
		/* the row's key once used is (row_find()'s release) */
		if (smp_load_acquire(&c->rows[i].used))
			snap->rows[snap->n++] = c->rows[i];
	if (READ_ONCE(c->overflow.ns))
		snap->rows[snap->n++] = c->overflow;
}

static void snap_cpu(struct ledger_snap *snap, unsigned int cpu)
{
	snap->cpu = cpu;
	cpus_read_lock();
	if (!cpu_online(cpu) ||
	    smp_call_function_single(cpu, snap_take, snap, 1))
		snap_take(snap);	/* (offline: nothing writes there) */
	cpus_read_unlock();
}

/*
 * The dump: cb->args[0] the CPU, [1] the next message (0: the CPU's own,
 * then row i of its copy at i + 1), [2] the generation it began with (a
 * ledger turned off and on again meanwhile fails it), [3] the copy of the
 * CPU (struct ledger_snap, taken at its own message; freed by
 * magnet_ledger_dump_done()).
 */
int magnet_ledger_dump(struct sk_buff *skb, struct netlink_callback *cb,
		       const struct genl_family *family)
{
	struct ledger_snap *snap = (struct ledger_snap *)cb->args[3];
	unsigned int cpu = cb->args[0];
	unsigned long i = cb->args[1];
	void *hdr;

	if (!ledger) {
		NL_SET_ERR_MSG(cb->extack,
			       "the ledger is off (magnetctl account on)");
		return -ENODATA;
	}
	if (!cpu && !i) {
		clock_check();
		cb->args[2] = ledger_generation;
	} else if (cb->args[2] != ledger_generation) {
		NL_SET_ERR_MSG(cb->extack,
			       "the ledger was turned off and on while being read: read it again");
		return -EAGAIN;
	}
	if (!snap) {
		snap = kvmalloc(sizeof(*snap), GFP_KERNEL);
		if (!snap)
			return -ENOMEM;
		cb->args[3] = (unsigned long)snap;
	}
	for (; cpu < nr_cpu_ids; cpu++, i = 0) {
		if (!cpu_possible(cpu))
			continue;
		if (!i)
			snap_cpu(snap, cpu);
		for (; i <= snap->n; i++) {
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, family,
					  NLM_F_MULTI, MAGNET_CMD_LEDGER_GET);
			if (!hdr)
				goto full;
			if (i ? fill_row(skb, cpu, &snap->rows[i - 1]) :
			    (nla_put_u32(skb, MAGNET_A_LEDGER_CPU, cpu) ||
			     nla_put_u64_64bit(skb, MAGNET_A_LEDGER_ELAPSED,
					       snap->elapsed, MAGNET_A_PAD))) {
				genlmsg_cancel(skb, hdr);
				goto full;
			}
			genlmsg_end(skb, hdr);
		}
	}
full:
	cb->args[0] = cpu;
	cb->args[1] = i;
	return skb->len;
}

int magnet_ledger_dump_done(struct netlink_callback *cb)
{
	kvfree((void *)cb->args[3]);
	cb->args[3] = 0;
	return 0;
}

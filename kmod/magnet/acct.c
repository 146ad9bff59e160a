// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: per-call accounting, what one system call of a thread cost
 * (MAGNET_ACCT_DEVICE; the contract is in the uapi header).
 *
 * A handle is an open file of the device, bound to the thread that
 * opened it, and found from that thread's hooks through acct_hash, keyed
 * by its task_struct (a reference held, so that the key is never a later
 * task's). Its two areas are vmalloc_user() memory mapped into the
 * thread's process: the control word, which the thread writes and the
 * kernel reads at each system call's entry, and the results, which only
 * the kernel writes.
 *
 * An accounted call cuts the thread's time at marks: its entry and exit,
 * each switch of the thread off and on a CPU, each entry and return of a
 * subsystem's boundary function. The span since the previous mark, on
 * one CPU, goes to the subsystem on top of the call's stack, less the
 * interrupts that ran on that CPU meanwhile: each CPU sums the time of
 * its hardirq handlers and softirqs (struct acct_cpu, the outermost
 * level only, a nested one cutting the outer's stretch), and a mark takes
 * the growth of those sums since the previous one. Off the CPU, a
 * preempted thread waits in the run queue until it is back; one that
 * slept is blocked, by how it slept, until its wakeup (sched_wakeup),
 * then waits in the run queue.
 *
 * Receive processing before the call: a CPU's NET_RX softirq works on
 * one packet at a time, from its start (netif_receive_skb) to the next
 * packet's start or the softirq's end (the ledger's items, ledger.c),
 * and a packet delivered to a TCP or UDP socket (sk_filter_trim_cap())
 * with a payload has its time, interrupts apart, and payload added to
 * that socket's pending receive processing (acct_rx[], direct-mapped by
 * socket): its time so far at the delivery, before a reader can be woken
 * for it, the rest as it ends. An accounted call whose sock_recvmsg()
 * returns n bytes takes n/pending of it (all, if n is as much or more).
 * A socket's entry is known by its address and its inode's number, so
 * that a socket allocated where a closed one was never takes that one's
 * pending; sk_free() clears it early where the hook sees it.
 *
 * The hooks are registered while some handle is open (and ACCT_LINGER
 * after the last one closes), and only then:
 * the system-call tracepoints make every thread's system calls take the
 * slow path, and the boundary kretprobes cost every caller of those
 * functions a lookup. A boundary's entry handler declines (and takes no
 * return instance) unless the caller is a thread in an accounted call,
 * in task context, asking for that subsystem.
 *
 * Concurrency: a handle's call state is written only by its own thread's
 * hooks (entry, exit, its own switch out and in, boundaries), which are
 * ordered by that thread's execution; sched_wakeup, from any CPU, writes
 * only wake_ns, for a thread that is off its CPU asleep, and the thread's
 * switch in reads it after the wakeup that made it runnable. Results are
 * published under their slot's sequence count. acct_lock serialises
 * opening and closing handles and the hooks' registration.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/interrupt.h>
#include <linux/kprobes.h>
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <net/sock.h>

#include "compat.h"
#include "magnet.h"

static unsigned int max_acct_threads = 4096;
module_param(max_acct_threads, uint, 0644);
MODULE_PARM_DESC(max_acct_threads,
		 "Most threads with a per-call accounting handle at once (default 4096)");

#define ACCT_DEPTH	8	/* subsystems nested in one call */
#define ACCT_LEVELS	4	/* interrupt levels nested on one CPU */
#define ACCT_MAXACTIVE	256	/* calls in one boundary function at once */

static_assert(PAGE_SIZE == MAGNET_ACCT_CTL_SIZE);
static_assert(sizeof(struct magnet_acct_area) == MAGNET_ACCT_AREA_SIZE);
static_assert(sizeof(struct magnet_acct_result) == 512);

/* Where a thread in an accounted call is, off its CPU. */
enum acct_off {
	ACCT_ON,		/* on its CPU */
	ACCT_RUNNABLE,		/* preempted, or woken */
	ACCT_ASLEEP,		/* blocked, .how says how */
};

/* What a call has summed so far, published into its slot at its exit. */
struct acct_sums {
	u64 cpu, runq, hardirq, softirq;
	u64 blocked[__MAGNET_ACCT_BLOCK_MAX];
	u64 subsys[MAGNET_ACCT_SUBSYS_SLOTS];
	u64 sock_tx, sock_rx, retrans;
	u64 rx_bytes, rx_ns;		/* receive processing of what it read */
};

struct acct_handle {
	struct hlist_node node;		/* in acct_hash, by task */
	struct task_struct *task;	/* its thread, referenced */
	struct mm_struct *mm;		/* its process's (compared only) */
	struct magnet_acct_ctl *ctl;	/* vmalloc_user(), one page */
	struct magnet_acct_area *area;	/* vmalloc_user() */
	struct rcu_head rcu;
	raw_spinlock_t slot_lock;	/* the slots' writers: the thread, and
					 * deferred parts coming in
					 */
	wait_queue_head_t wait;		/* poll(): deferred parts */
	u32 polled;			/* area->completions poll() saw */
	unsigned int async_parts;	/* its parts, under acct_async_lock */
	bool closing;			/* no more parts: under acct_async_lock */
	u32 epoch[MAGNET_ACCT_TOKENS];	/* each slot's restarts, under
					 * slot_lock: a part of an earlier
					 * epoch is dropped
					 */

	struct acct_watch *watch;	/* a shadow's (no areas), or NULL */
	struct acct_handle *next_free;	/* a shadow in its watch's pool */
	bool hashed;			/* a shadow in acct_hash: under
					 * acct_hash_lock
					 */

	/* the call under way */
	bool in_call;
	bool armed;			/* by the control word: a slot's */
	u8 wslot;			/* and a watch's, if wserial */
	u32 wserial;
	bool sum_into;			/* MAGNET_ACCT_SUM */
	u8 depth;			/* of stack[] */
	u8 token;
	u8 off;				/* enum acct_off */
	u8 how;				/* enum magnet_acct_block, ASLEEP */
	u16 mask;
	u16 gen;
	u16 nr;
	u8 stack[ACCT_DEPTH];		/* subsystems entered */
	u64 entry_ns;
	u64 mark_ns;			/* the last mark, on this CPU */
	u64 mark_irq[2];		/* the CPU's sums then */
	u64 off_ns;			/* left the CPU */
	u64 wake_ns;			/* woken (0: not yet) */
	unsigned long minflt, majflt, nvcsw, nivcsw;
	u64 rbytes, wbytes;
	struct inode *written;		/* the file vfs_write() wrote */
	struct acct_sums sum;
};

/* A CPU's time in interrupts, outermost levels only. */
struct acct_cpu {
	u64 ns[2];			/* hardirq, softirq: closed stretches */
	u64 since;			/* the open stretch's start */
	u8 depth;
	u8 kind[ACCT_LEVELS];		/* 0 hardirq, 1 softirq */

	/* NET_RX: the packet under way (rx_open), and its socket once delivered */
	bool rx_in;			/* in a NET_RX softirq */
	bool rx_open;
	bool rx_first;			/* no packet yet in this softirq */
	bool rx_payload;		/* rx_sk's, with a payload */
	const struct sock *rx_sk;
	const void *rx_skb;
	const struct task_struct *rx_task;	/* the softirq's (RT: preemptible) */
	u64 rx_since;			/* its time not yet added, from */
	u64 rx_irq;			/* ns[0] then: its hardirqs apart */
	u64 rx_off;			/* rx_task switched out (RT), or 0 */
};

static DEFINE_PER_CPU(struct acct_cpu, acct_cpus);
static DEFINE_HASHTABLE(acct_hash, 10);
static DEFINE_MUTEX(acct_lock);
static DEFINE_RAW_SPINLOCK(acct_hash_lock);	/* writers of acct_hash */
static unsigned int acct_handles;	/* open, under acct_lock */
static unsigned int acct_watching;	/* watches, under acct_lock */
static bool acct_hooked;		/* hooks in place, under acct_lock */

/*
 * The hooks stay this long after the last handle closes: a program whose
 * threads come and go (each test, a server's worker) does not register
 * them again and again, which patches kernel text on every CPU each time.
 */
#define ACCT_LINGER	(5 * HZ)
static void acct_unhook(struct work_struct *work);
static DECLARE_DELAYED_WORK(acct_off_work, acct_unhook);

static inline u64 acct_now(void)
{
	return ktime_get_mono_fast_ns();
}

static struct acct_handle *acct_find(struct task_struct *t)
{
	struct acct_handle *h;

	hash_for_each_possible_rcu_notrace(acct_hash, h, node, (unsigned long)t)
		if (h->task == t)
			return h;
	return NULL;
}

/* --- interrupt time, per CPU ------------------------------------------------ */

static void irq_enter_level(u8 kind)
{
	struct acct_cpu *c = this_cpu_ptr(&acct_cpus);
	u64 now = acct_now();

	if (c->depth && c->depth <= ACCT_LEVELS)
		c->ns[c->kind[c->depth - 1]] += now - c->since;
	if (c->depth < ACCT_LEVELS)
		c->kind[c->depth] = kind;
	c->depth++;
	c->since = now;
}

static void irq_exit_level(u8 kind)
{
	struct acct_cpu *c = this_cpu_ptr(&acct_cpus);
	u64 now = acct_now();

	/*
	 * An exit whose entry came before the hooks were in place (depth 0,
	 * or another kind on top) is ignored.
	 */
	if (!c->depth || (c->depth <= ACCT_LEVELS &&
			  c->kind[c->depth - 1] != kind))
		return;
	if (c->depth <= ACCT_LEVELS)
		c->ns[kind] += now - c->since;
	c->depth--;
	c->since = now;
}

static void on_irq_entry(void *data, int irq, struct irqaction *action)
{
	irq_enter_level(0);
}

static void on_irq_exit(void *data, int irq, struct irqaction *action,
			int ret)
{
	irq_exit_level(0);
}

static void on_vector_entry(void *data, int vector)
{
	irq_enter_level(0);
}

static void on_vector_exit(void *data, int vector)
{
	irq_exit_level(0);
}

static void rx_softirq(struct acct_cpu *c, bool entry);

/* (softirqs run with interrupts on) */
static void on_softirq_entry(void *data, unsigned int vec)
{
	unsigned long flags;

	local_irq_save(flags);
	irq_enter_level(1);
	if (vec == NET_RX_SOFTIRQ)
		rx_softirq(this_cpu_ptr(&acct_cpus), true);
	local_irq_restore(flags);
}

static void on_softirq_exit(void *data, unsigned int vec)
{
	unsigned long flags;

	local_irq_save(flags);
	if (vec == NET_RX_SOFTIRQ)
		rx_softirq(this_cpu_ptr(&acct_cpus), false);
	irq_exit_level(1);
	local_irq_restore(flags);
}

/* --- marks -------------------------------------------------------------------- */

/* Start counting @h's time on this CPU from @now. Interrupts off. */
static void mark_start(struct acct_handle *h, u64 now)
{
	struct acct_cpu *c = this_cpu_ptr(&acct_cpus);

	h->mark_ns = now;
	h->mark_irq[0] = c->ns[0];
	h->mark_irq[1] = c->ns[1];
}

/*
 * Charge @h's span on this CPU since its last mark: the interrupts that
 * ran meanwhile apart, the rest to the subsystem on top. Interrupts off.
 */
static void mark(struct acct_handle *h, u64 now)
{
	struct acct_cpu *c = this_cpu_ptr(&acct_cpus);
	u64 hard = c->ns[0] - h->mark_irq[0];
	u64 soft = c->ns[1] - h->mark_irq[1];
	u64 span = now - h->mark_ns;
	u64 own = span > hard + soft ? span - hard - soft : 0;
	u8 top = h->depth ? h->stack[h->depth - 1] : MAGNET_ACCT_SUBSYS_OTHER;

	h->sum.hardirq += hard;
	h->sum.softirq += soft;
	h->sum.cpu += own;
	h->sum.subsys[top] += own;
	mark_start(h, now);
}

/* --- results ------------------------------------------------------------------- */

/* Open a write of @r (under slot_lock); slot_done() closes it. */
static void slot_begin(struct magnet_acct_result *r)
{
	WRITE_ONCE(r->seq, r->seq + 1);
	smp_wmb();		/* pairs with the reader's smp_rmb() */
}

static void slot_done(struct magnet_acct_result *r)
{
	smp_wmb();		/* pairs with the reader's smp_rmb() */
	WRITE_ONCE(r->seq, r->seq + 1);
}

/* The first call of an arm without MAGNET_ACCT_SUM starts its slot. */
static void slot_start(struct acct_handle *h)
{
	struct magnet_acct_result *r = &h->area->slot[h->token];
	unsigned long flags;

	if (h->sum_into || r->gen == h->gen)
		return;
	raw_spin_lock_irqsave(&h->slot_lock, flags);
	slot_begin(r);
	memset((char *)r + offsetof(struct magnet_acct_result, state), 0,
	       sizeof(*r) - offsetof(struct magnet_acct_result, state));
	r->gen = h->gen;
	h->epoch[h->token]++;
	slot_done(r);
	raw_spin_unlock_irqrestore(&h->slot_lock, flags);
}

/* Add the call's sums to @r (a slot, or a watch's row). */
static void result_add(struct magnet_acct_result *r, struct acct_handle *h,
		       u64 wall, long ret)
{
	struct task_struct *t = current;
	unsigned int i;

	r->state |= MAGNET_ACCT_S_DONE;
	r->calls++;
	r->last_nr = h->nr;
	r->last_ret = ret;
	r->wall_ns += wall;
	r->cpu_ns += h->sum.cpu;
	r->runq_ns += h->sum.runq;
	for (i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++)
		r->blocked_ns[i] += h->sum.blocked[i];
	r->hardirq_ns += h->sum.hardirq;
	r->softirq_ns += h->sum.softirq;
	for (i = 0; i < MAGNET_ACCT_SUBSYS_SLOTS; i++)
		r->subsys_ns[i] += h->sum.subsys[i];
	r->minflt += t->min_flt - h->minflt;
	r->majflt += t->maj_flt - h->majflt;
	r->vcsw += t->nvcsw - h->nvcsw;
	r->ivcsw += t->nivcsw - h->nivcsw;
	r->sock_tx_bytes += h->sum.sock_tx;
	r->sock_rx_bytes += h->sum.sock_rx;
	r->blk_read_bytes += t->ioac.read_bytes - h->rbytes;
	r->blk_write_bytes += t->ioac.write_bytes - h->wbytes;
	r->tcp_retrans += h->sum.retrans;
	r->async_rx_bytes += h->sum.rx_bytes;
	r->async_rx_ns += h->sum.rx_ns;
}

/* Publish the call's sums into its slot. */
static void publish(struct acct_handle *h, u64 wall, long ret)
{
	struct magnet_acct_result *r = &h->area->slot[h->token];
	unsigned long flags;

	raw_spin_lock_irqsave(&h->slot_lock, flags);
	slot_begin(r);
	result_add(r, h, wall, ret);
	r->gen = h->gen;
	slot_done(r);
	raw_spin_unlock_irqrestore(&h->slot_lock, flags);
}

/* --- watches -------------------------------------------------------------------- */

/*
 * A process watched (MAGNET_CMD_ACCT_SET): each of its threads gets a
 * shadow handle at its first system call, from the watch's pool (the
 * hooks run where no memory may be allocated), and every call of theirs
 * is accounted and summed into the watch's row for its system call. A
 * shadow goes back to the pool an RCU grace period after its thread
 * exits. A call, or a deferred part, names its watch by slot and serial,
 * looked up again when it adds to it: a watch that ended meanwhile (or a
 * later one in its slot) is not written.
 */
#define ACCT_WATCH_NRS	1024	/* system call numbers with a row of their own */

struct acct_watch_row {
	struct magnet_acct_result r;
	u64 errors, max_ns;
	u64 hist[MAGNET_ACCT_HIST];
};

struct acct_watch {
	struct pid *pid;		/* the thread group's, referenced */
	u32 serial;
	u32 owner;			/* netlink port, or 0 */
	u64 since;
	bool exited;			/* its last thread exited */
	raw_spinlock_t lock;		/* the rows, the pool, the counts */
	struct acct_handle *free;	/* the pool's free shadows */
	unsigned int threads;		/* shadows taken */
	unsigned int async_parts;	/* its parts under way */
	u64 missed;			/* calls of threads with no shadow */
	unsigned int rows;
	u8 row_of[ACCT_WATCH_NRS];	/* a number's row + 1, or 0 */
	struct acct_watch_row row[MAGNET_ACCT_WATCH_ROWS];
	struct acct_handle pool[MAGNET_ACCT_WATCH_THREADS];
};

static struct acct_watch __rcu *acct_watches[MAGNET_ACCT_WATCHES];
static u32 acct_watch_serial;		/* the last given, under acct_lock */

/* The watch of @slot if it is still @serial's. RCU (a hook). */
static struct acct_watch *watch_at(u8 slot, u32 serial)
{
	struct acct_watch *w;

	if (!serial)
		return NULL;
	w = rcu_dereference_sched(acct_watches[slot]);
	return w && w->serial == serial ? w : NULL;
}

/* The watch of @t's thread group, and its slot in *@slot, or NULL. */
static struct acct_watch *watch_of(struct task_struct *t, u8 *slot)
{
	struct pid *tgid = task_tgid(t);
	struct acct_watch *w;
	unsigned int i;

	for (i = 0; i < MAGNET_ACCT_WATCHES; i++) {
		w = rcu_dereference_sched(acct_watches[i]);
		if (w && w->pid == tgid) {
			*slot = i;
			return w;
		}
	}
	return NULL;
}

/* The row of system call @nr. Under w->lock. */
static struct acct_watch_row *watch_row(struct acct_watch *w, u32 nr)
{
	struct acct_watch_row *row;

	if (nr < ACCT_WATCH_NRS && w->row_of[nr])
		return &w->row[w->row_of[nr] - 1];
	if (nr >= ACCT_WATCH_NRS || w->rows >= MAGNET_ACCT_WATCH_ROWS - 1) {
		/* (the last row: every other system call) */
		row = &w->row[MAGNET_ACCT_WATCH_ROWS - 1];
		row->r.last_nr = (u16)MAGNET_ACCT_NR_OTHER;
		return row;
	}
	w->row_of[nr] = ++w->rows;
	return &w->row[w->rows - 1];
}

/* Add @h's call, its sums taken, to its watch's row. */
static void watch_add(struct acct_handle *h, u64 wall, long ret)
{
	struct acct_watch *w = watch_at(h->wslot, h->wserial);
	struct acct_watch_row *row;
	unsigned long flags;
	unsigned int b;

	if (!w)
		return;
	b = wall < 1024 ? 0 : min(fls64(wall) - 10, MAGNET_ACCT_HIST - 1);
	raw_spin_lock_irqsave(&w->lock, flags);
	row = watch_row(w, h->nr);
	result_add(&row->r, h, wall, ret);
	if (ret < 0 && ret >= -MAX_ERRNO)
		row->errors++;
	row->max_ns = max(row->max_ns, wall);
	row->hist[b]++;
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

/* A shadow from @w's pool for current, in acct_hash; NULL: none left. */
static struct acct_handle *shadow_take(struct acct_watch *w)
{
	struct acct_handle *h;

	unsigned long flags;

	raw_spin_lock_irqsave(&w->lock, flags);
	h = w->free;
	if (h) {
		w->free = h->next_free;
		w->threads++;
	} else {
		w->missed++;
	}
	raw_spin_unlock_irqrestore(&w->lock, flags);
	if (!h)
		return NULL;
	memset(h, 0, sizeof(*h));
	raw_spin_lock_init(&h->slot_lock);
	h->task = current;	/* (no reference: dropped at its exit) */
	h->mm = current->mm;
	h->watch = w;
	raw_spin_lock_irqsave(&acct_hash_lock, flags);
	hash_add_rcu(acct_hash, &h->node, (unsigned long)current);
	h->hashed = true;
	raw_spin_unlock_irqrestore(&acct_hash_lock, flags);
	return h;
}

static void shadow_free_rcu(struct rcu_head *rcu)
{
	struct acct_handle *h = container_of(rcu, struct acct_handle, rcu);
	struct acct_watch *w = h->watch;
	unsigned long flags;

	raw_spin_lock_irqsave(&w->lock, flags);
	h->next_free = w->free;
	w->free = h;
	w->threads--;
	raw_spin_unlock_irqrestore(&w->lock, flags);
}

/* Take @h out of acct_hash; true if this did. */
static bool shadow_unhash(struct acct_handle *h)
{
	unsigned long flags;
	bool was;

	raw_spin_lock_irqsave(&acct_hash_lock, flags);
	was = h->hashed;
	if (was)
		hash_del_rcu(&h->node);
	h->hashed = false;
	raw_spin_unlock_irqrestore(&acct_hash_lock, flags);
	return was;
}

/* --- deferred parts ------------------------------------------------------------ */

/*
 * A deferred part of a call: what it shares with the work the kernel does
 * later on its behalf (its key), followed from the call to the work's end.
 * A machine-wide table of MAGNET_ACCT_ASYNC_MAX of them, hashed by key,
 * under acct_async_lock (a leaf but for the slot lock of a part's handle,
 * taken inside it); the hooks look only when some part is under way.
 */
enum acct_async_kind {
	ACCT_ASYNC_TX,		/* key: an skb handed to the device queue */
	ACCT_ASYNC_WRITE,	/* key: the inode whose pages it dirtied */
};

#define ACCT_ASYNC_PER_HANDLE	256
#define ACCT_WAKES		16

struct acct_async {
	struct hlist_node node;		/* in acct_async_hash, or free */
	const void *key;
	struct acct_handle *h;		/* its slot's handle, or NULL */
	const struct task_struct *task;	/* its call's (compared only) */
	u32 wserial;			/* its watch's (0: none), wslot */
	u16 nr;				/* its call's system call */
	u8 wslot;
	u64 since;			/* added; TX: its transmit's start */
	u64 left;			/* bytes yet to be sent or written */
	bool started;			/* TX: in the driver */
	u32 epoch;			/* its slot's, when it was added */
	u8 token;
	u8 kind;
};

static struct acct_async acct_asyncs[MAGNET_ACCT_ASYNC_MAX];
static HLIST_HEAD(acct_async_free);
static DEFINE_HASHTABLE(acct_async_hash, 8);
static DEFINE_RAW_SPINLOCK(acct_async_lock);
static unsigned int acct_async_used;	/* parts under way */

/* Handles to wake once acct_async_lock is let go. */
struct acct_wakes {
	unsigned int n;
	struct acct_handle *h[ACCT_WAKES];
};

static void wakes_add(struct acct_wakes *w, struct acct_handle *h)
{
	unsigned int i;

	for (i = 0; i < w->n; i++)
		if (w->h[i] == h)
			return;
	/* (beyond, a waiter finds out at its next look: libmagnet's wait) */
	if (w->n < ACCT_WAKES)
		w->h[w->n++] = h;
}

static void wakes_run(struct acct_wakes *w)
{
	unsigned int i;

	for (i = 0; i < w->n; i++)
		wake_up_interruptible_poll(&w->h[i]->wait, EPOLLIN);
}

struct acct_gain {
	u64 tx_bytes, tx_ns, blk_bytes, blk_ns;
};

/*
 * Add @g to @a's slot, if it is still its call's; @end: the part is in
 * (@lost: not followed to its end). Under acct_async_lock.
 */
static void gain_add(struct magnet_acct_result *r, const struct acct_gain *g,
		     bool end, bool lost)
{
	r->dev_tx_bytes += g->tx_bytes;
	r->async_tx_ns += g->tx_ns;
	r->async_blk_bytes += g->blk_bytes;
	r->async_blk_ns += g->blk_ns;
	if (end && r->async_pending)
		r->async_pending--;
	if (end && lost)
		r->async_lost++;
}

static void async_settle(struct acct_async *a, const struct acct_gain *g,
			 bool end, bool lost, struct acct_wakes *w)
{
	struct acct_watch *wt = watch_at(a->wslot, a->wserial);
	struct acct_handle *h = a->h;

	if (wt) {
		raw_spin_lock(&wt->lock);
		gain_add(&watch_row(wt, a->nr)->r, g, end, lost);
		raw_spin_unlock(&wt->lock);
	}
	if (!h)
		return;
	raw_spin_lock(&h->slot_lock);
	if (h->epoch[a->token] == a->epoch) {
		struct magnet_acct_result *r = &h->area->slot[a->token];

		slot_begin(r);
		gain_add(r, g, end, lost);
		slot_done(r);
	}
	raw_spin_unlock(&h->slot_lock);
	if (end) {
		WRITE_ONCE(h->area->completions, h->area->completions + 1);
		wakes_add(w, h);
	}
}

static void async_del(struct acct_async *a)
{
	struct acct_watch *wt = watch_at(a->wslot, a->wserial);

	hash_del(&a->node);
	if (a->h)
		a->h->async_parts--;
	if (wt)
		wt->async_parts--;
	a->h = NULL;
	a->wserial = 0;
	hlist_add_head(&a->node, &acct_async_free);
	WRITE_ONCE(acct_async_used, acct_async_used - 1);
}

static struct acct_async *async_find(const void *key, u8 kind)
{
	struct acct_async *a;

	hash_for_each_possible(acct_async_hash, a, node, (unsigned long)key)
		if (a->key == key && a->kind == kind)
			return a;
	return NULL;
}

/* A free part: one from the free list, or the oldest of those too old. */
static struct acct_async *async_take(u64 now, struct acct_wakes *w)
{
	static const struct acct_gain none;
	struct acct_async *a, *old = NULL;
	unsigned int i;

	if (!hlist_empty(&acct_async_free)) {
		a = hlist_entry(acct_async_free.first, struct acct_async, node);
		hlist_del(&a->node);
		return a;
	}
	for (i = 0; i < MAGNET_ACCT_ASYNC_MAX; i++) {
		a = &acct_asyncs[i];
		if (now - a->since > MAGNET_ACCT_ASYNC_AGE_NS &&
		    (!old || a->since < old->since))
			old = a;
	}
	if (!old)
		return NULL;
	async_settle(old, &none, true, true, w);
	async_del(old);
	hlist_del(&old->node);
	return old;
}

/* Follow @key, @len bytes, for @h's call under way. */
static void async_add(struct acct_handle *h, u8 kind, const void *key,
		      u64 len)
{
	struct acct_watch *wt = watch_at(h->wslot, h->wserial);
	struct acct_handle *sh = h->armed ? h : NULL;	/* its slot's */
	struct acct_wakes w = { 0 };
	struct acct_async *a = NULL;
	unsigned long flags;
	u64 now = acct_now();

	raw_spin_lock_irqsave(&acct_async_lock, flags);
	/*
	 * (closing: another thread closed the handle while this call was
	 * under way; the handle stays in memory until the call's hook
	 * returns, a part would outlive it)
	 */
	if (sh && sh->closing)
		sh = NULL;
	if ((!sh && !wt) ||
	    (kind == ACCT_ASYNC_TX && async_find(key, kind)))
		goto out;	/* (TX: requeued by the driver, followed) */
	if ((!sh || sh->async_parts < ACCT_ASYNC_PER_HANDLE) &&
	    (!wt || wt->async_parts < ACCT_ASYNC_PER_HANDLE))
		a = async_take(now, &w);
	if (sh) {
		struct magnet_acct_result *r = &sh->area->slot[sh->token];

		raw_spin_lock(&sh->slot_lock);
		slot_begin(r);
		if (a)
			r->async_pending++;
		else
			r->async_lost++;
		slot_done(r);
		raw_spin_unlock(&sh->slot_lock);
	}
	if (wt) {
		struct magnet_acct_result *r;

		raw_spin_lock(&wt->lock);
		r = &watch_row(wt, h->nr)->r;
		if (a)
			r->async_pending++;
		else
			r->async_lost++;
		raw_spin_unlock(&wt->lock);
	}
	if (!a)
		goto out;
	a->key = key;
	a->h = sh;
	a->task = current;
	a->wserial = wt ? h->wserial : 0;
	a->wslot = h->wslot;
	a->nr = h->nr;
	a->since = now;
	a->left = len;
	a->started = false;
	a->epoch = h->epoch[h->token];
	a->token = h->token;
	a->kind = kind;
	if (sh)
		sh->async_parts++;
	if (wt)
		wt->async_parts++;
	hash_add(acct_async_hash, &a->node, (unsigned long)key);
	WRITE_ONCE(acct_async_used, acct_async_used + 1);
out:
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
	wakes_run(&w);
}

/*
 * @h closes: its parts are dropped from its slot (those a watch counts
 * go on for it).
 */
static void async_forget(struct acct_handle *h)
{
	unsigned long flags;
	unsigned int i;

	raw_spin_lock_irqsave(&acct_async_lock, flags);
	h->closing = true;
	for (i = 0; i < MAGNET_ACCT_ASYNC_MAX && h->async_parts; i++) {
		struct acct_async *a = &acct_asyncs[i];

		if (a->h != h)
			continue;
		if (watch_at(a->wslot, a->wserial)) {
			a->h = NULL;
			h->async_parts--;
		} else {
			async_del(a);
		}
	}
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
}

static void on_xmit_start(void *data, struct sk_buff *skb,
			  struct net_device *dev)
{
	struct acct_async *a;
	unsigned long flags;

	if (likely(!READ_ONCE(acct_async_used)))
		return;
	raw_spin_lock_irqsave(&acct_async_lock, flags);
	a = async_find(skb, ACCT_ASYNC_TX);
	if (a) {
		a->started = true;
		a->since = acct_now();
		a->left = skb->len;
	}
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
}

/*
 * @a's transmit is over (@sent: the device took it). The driver's time
 * is deferred work unless the call itself ran it (then it is the call's
 * CPU time, in its device-queue subsystem).
 */
static void tx_end(struct acct_async *a, bool sent, struct acct_wakes *w)
{
	struct acct_gain g = { 0 };

	if (sent && a->started) {
		struct acct_handle *h = NULL;

		g.tx_bytes = a->left;
		if (in_task() && current == a->task)
			h = acct_find(current);
		if (!(h && h->in_call))
			g.tx_ns = acct_now() - a->since;
	}
	async_settle(a, &g, true, false, w);
	async_del(a);
}

static void on_xmit(void *data, struct sk_buff *skb, int rc,
		    struct net_device *dev, unsigned int len)
{
	struct acct_wakes w = { 0 };
	struct acct_async *a;
	unsigned long flags;

	if (likely(!READ_ONCE(acct_async_used)))
		return;
	raw_spin_lock_irqsave(&acct_async_lock, flags);
	a = async_find(skb, ACCT_ASYNC_TX);
	/* (NETDEV_TX_BUSY: back to the queue, to be sent again) */
	if (a && rc != NETDEV_TX_BUSY) {
		a->left = len;
		tx_end(a, rc == NETDEV_TX_OK, &w);
	}
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
	wakes_run(&w);
}

/* Freed: unsent (dropped on the way), or by its driver while sending. */
static void on_skb_free(void *data, struct sk_buff *skb)
{
	struct acct_wakes w = { 0 };
	struct acct_async *a;
	unsigned long flags;

	if (likely(!READ_ONCE(acct_async_used)))
		return;
	raw_spin_lock_irqsave(&acct_async_lock, flags);
	a = async_find(skb, ACCT_ASYNC_TX);
	if (a)
		tx_end(a, a->started, &w);
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
	wakes_run(&w);
}

/*
 * A block request completed: each bio of it that wrote a file's pages is
 * split among the writes waiting for that file's bytes, in proportion to
 * what each has yet to be written; the remainder of the division goes to
 * the one with most.
 */
/* Add @g to a write's part; once all its bytes are written, it is in. */
static void blk_settle(struct acct_async *a, const struct acct_gain *g,
		       struct acct_wakes *w)
{
	bool end = a->left < SECTOR_SIZE;

	async_settle(a, g, end, false, w);
	if (end)
		async_del(a);
}

static void blk_wrote(struct inode *inode, u64 bytes, u64 ns,
		      struct acct_wakes *w)
{
	struct acct_async *a, *most = NULL;
	struct hlist_node *tmp;
	u64 left = 0, given = 0;

	hash_for_each_possible(acct_async_hash, a, node, (unsigned long)inode)
		if (a->key == inode && a->kind == ACCT_ASYNC_WRITE) {
			left += a->left;
			if (!most || a->left > most->left)
				most = a;
		}
	if (!left)
		return;
	bytes = min(bytes, left);
	hash_for_each_possible_safe(acct_async_hash, a, tmp, node,
				    (unsigned long)inode) {
		struct acct_gain g = { 0 };
		u64 share;

		if (a->key != inode || a->kind != ACCT_ASYNC_WRITE)
			continue;
		share = div64_u64(bytes * a->left, left);
		if (a == most)	/* (last: what the others left) */
			continue;
		given += share;
		a->left -= share;
		g.blk_bytes = share;
		g.blk_ns = div64_u64(ns * share, bytes);
		blk_settle(a, &g, w);
	}
	{
		struct acct_gain g = {
			.blk_bytes = bytes - given,
			.blk_ns = div64_u64(ns * (bytes - given), bytes),
		};

		most->left -= bytes - given;
		blk_settle(most, &g, w);
	}
}

static void on_block_done(void *data, struct request *rq,
			  blk_status_t error, unsigned int nr_bytes)
{
	struct acct_wakes w = { 0 };
	unsigned long flags;
	struct bio *bio;
	u64 ns;

	if (likely(!READ_ONCE(acct_async_used)) || !op_is_write(req_op(rq)))
		return;
	ns = rq->start_time_ns ? ktime_get_ns() - rq->start_time_ns : 0;
	raw_spin_lock_irqsave(&acct_async_lock, flags);
	__rq_for_each_bio(bio, rq) {
		struct address_space *mapping;
		struct page *page;

		/* (a bio split to the queue's limits is a clone: no bi_vcnt) */
		if (!bio->bi_iter.bi_size)
			continue;
		page = bio_page(bio);
		if (PageAnon(page))
			continue;
		mapping = folio_mapping(page_folio(page));
		if (mapping && mapping->host)
			blk_wrote(mapping->host, bio->bi_iter.bi_size, ns, &w);
	}
	raw_spin_unlock_irqrestore(&acct_async_lock, flags);
	wakes_run(&w);
}

/* --- receive processing before the call ------------------------------------------ */

/*
 * A socket's receive processing not yet taken by a call, in acct_rx[] at
 * the socket's hash. Direct-mapped, so that a delivery costs one lock and
 * no search: a socket that takes an entry another holds drops that one's
 * pending (unread data of two sockets at once in one entry: rare with
 * ACCT_RX_SLOTS of them). An entry MAGNET_ACCT_ASYNC_AGE_NS old is not
 * taken.
 *
 * The socket's address alone does not name it: a socket's memory is
 * another's once it is freed, and the hook on sk_free() does not see
 * every free (in the rig's boots of 6.12 it saw TCP sockets' and no UDP
 * socket's, whose last reference goes in sk_common_release(), in
 * sk_free()'s own file). So an entry also keeps the
 * number of its socket's inode, which no later socket has: a socket
 * allocated where a closed one was, flooded and never read, found that
 * one's hundreds of megabytes pending and took a few per cent of each
 * packet's time. A TCP connection's packets can come before accept()
 * gives its socket an inode: an entry made then (inode 0) is the first
 * to find one's, and takes its number.
 */
#define ACCT_RX_SLOTS	1024

struct acct_rx {
	raw_spinlock_t lock;
	const struct sock *sk;
	unsigned long ino;	/* sk's inode's number, or 0: none yet */
	u64 bytes, ns;
	u64 stamp;		/* the last added */
};

static struct acct_rx acct_rx[ACCT_RX_SLOTS];

static struct acct_rx *rx_slot(const struct sock *sk)
{
	return &acct_rx[hash_ptr(sk, ilog2(ACCT_RX_SLOTS))];
}

/*
 * The number of @sk's inode, or 0 while it has none. (Its struct socket
 * and inode are freed an RCU grace period after the socket is orphaned,
 * so a softirq that found @sk may read them.)
 */
static unsigned long sk_ino(const struct sock *sk)
{
	struct socket *sock = READ_ONCE(sk->sk_socket);

	return sock ? SOCK_INODE(sock)->i_ino : 0;
}

/* @e is @sk's (inode number @ino), or its before it had one. Locked. */
static bool rx_mine(const struct acct_rx *e, const struct sock *sk,
		    unsigned long ino)
{
	return e->sk == sk && (e->ino == ino || !e->ino);
}

/* The packet under way's time, not yet added, runs from @now. */
static void rx_restart(struct acct_cpu *c, u64 now)
{
	c->rx_since = now;
	c->rx_irq = c->ns[0];
}

/*
 * Add the packet under way's time since it was last added, and @bytes,
 * to its socket's pending, if it has one and a payload. Interrupts off.
 */
static void rx_commit(struct acct_cpu *c, u64 now, u32 bytes)
{
	u64 ns = now - c->rx_since, irq = c->ns[0] - c->rx_irq;
	struct acct_rx *e;
	unsigned long ino;

	if (!c->rx_sk || !c->rx_payload)
		return;
	rx_restart(c, now);
	e = rx_slot(c->rx_sk);
	ino = sk_ino(c->rx_sk);
	raw_spin_lock(&e->lock);
	/*
	 * A UDP delivery finds its socket under RCU, with no reference: it
	 * may come after the socket's close, and after sk_free() cleared its
	 * entry. The socket was orphaned (SOCK_DEAD) before its sk_free(),
	 * which takes this lock: seen here, it adds nothing that a socket
	 * allocated where it was would inherit.
	 */
	if (sock_flag(c->rx_sk, SOCK_DEAD)) {
		raw_spin_unlock(&e->lock);
		return;
	}
	if (!rx_mine(e, c->rx_sk, ino) ||
	    now - e->stamp > MAGNET_ACCT_ASYNC_AGE_NS) {
		e->sk = c->rx_sk;
		e->bytes = 0;
		e->ns = 0;
	}
	e->ino = ino;
	e->bytes += bytes;
	e->ns += ns > irq ? ns - irq : 0;
	e->stamp = now;
	raw_spin_unlock(&e->lock);
}

/* The packet under way on this CPU is done at @now. Interrupts off. */
static void rx_close(struct acct_cpu *c, u64 now)
{
	if (!c->rx_open)
		return;
	rx_commit(c, now, 0);
	c->rx_open = false;
}

/*
 * A packet starts, the one before it done: its time runs from now, or
 * the softirq's start if it is the first. Interrupts off.
 */
static void rx_open(struct acct_cpu *c, u64 now)
{
	rx_close(c, now);
	if (!c->rx_first)
		rx_restart(c, now);
	c->rx_first = false;
	c->rx_open = true;
	c->rx_payload = false;
	c->rx_sk = NULL;
	c->rx_skb = NULL;
	c->rx_task = current;
	c->rx_off = 0;
}

/*
 * The packet under way is delivered to @sk with @bytes of payload: its
 * time so far and its payload are added to the socket's now, before the
 * reader can be woken for it; the rest of its time, its queueing and what
 * it sends back, when it is done. Interrupts off.
 */
static void rx_claim(struct acct_cpu *c, const struct sock *sk,
		     const void *skb, u32 bytes, u64 now)
{
	c->rx_sk = sk;
	c->rx_skb = skb;
	c->rx_payload = bytes;
	rx_commit(c, now, bytes);
}

/* A NET_RX softirq begins (@entry) or ends on this CPU. Interrupts off. */
static void rx_softirq(struct acct_cpu *c, bool entry)
{
	u64 now = acct_now();

	rx_close(c, now);
	c->rx_in = entry;
	c->rx_first = entry;
	rx_restart(c, now);
}

/*
 * A switch on this CPU: under PREEMPT_RT a softirq runs in a task and may
 * be preempted; its packet's clock stops while that task is off the CPU
 * (it comes back to this one: softirqs do not migrate). Interrupts off.
 */
static void rx_switch(struct task_struct *prev, struct task_struct *next,
		      u64 *now)
{
	struct acct_cpu *c = this_cpu_ptr(&acct_cpus);

	if (likely(!c->rx_open))
		return;
	if (!*now)
		*now = acct_now();
	if (prev == c->rx_task && !c->rx_off)
		c->rx_off = *now;
	if (next == c->rx_task && c->rx_off) {
		c->rx_since += *now - c->rx_off;
		c->rx_off = 0;
	}
}

/* netif_receive_skb: in NET_RX, a packet starts */
static void on_rx_start(void *data, struct sk_buff *skb)
{
	unsigned long flags;
	struct acct_cpu *c;

	if (!in_serving_softirq() || in_hardirq())
		return;
	local_irq_save(flags);
	c = this_cpu_ptr(&acct_cpus);
	if (c->rx_in)
		rx_open(c, acct_now());
	local_irq_restore(flags);
}

/*
 * sk_filter_trim_cap(sk, skb, cap, ...): a packet reaches a socket, its
 * transport header the first @cap bytes. The packet under way becomes
 * its, or if that is already another's (a GRO list's packets all start
 * before the first is delivered; a clone for a second socket), this one
 * starts here. TCP and UDP sockets only: raw and ICMP ones take clones
 * of what TCP and UDP will have.
 */
static void on_deliver(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	const struct sk_buff *skb = (void *)regs_get_kernel_argument(regs, 1);
	unsigned int cap = regs_get_kernel_argument(regs, 2);
	u32 bytes = skb->len > cap ? skb->len - cap : 0;
	unsigned long flags;
	struct acct_cpu *c;
	u64 now;

	if (!in_serving_softirq() ||
	    (sk->sk_family != AF_INET && sk->sk_family != AF_INET6) ||
	    (sk->sk_protocol != IPPROTO_TCP && sk->sk_protocol != IPPROTO_UDP &&
	     sk->sk_protocol != IPPROTO_UDPLITE))
		return;
	local_irq_save(flags);
	c = this_cpu_ptr(&acct_cpus);
	if (!c->rx_in || !c->rx_open || (c->rx_sk && skb == c->rx_skb))
		goto out;
	now = acct_now();
	if (c->rx_sk)
		rx_open(c, now);
	rx_claim(c, sk, skb, bytes, now);
out:
	local_irq_restore(flags);
}

/* sk_free(sk): a socket goes; what it had pending with it. */
static void on_sk_free(struct pt_regs *regs)
{
	const struct sock *sk = (void *)regs_get_kernel_argument(regs, 0);
	struct acct_rx *e = rx_slot(sk);
	unsigned long flags;

	if (READ_ONCE(e->sk) != sk)
		return;
	raw_spin_lock_irqsave(&e->lock, flags);
	if (e->sk == sk) {
		e->sk = NULL;
		e->ino = 0;
		e->bytes = 0;
		e->ns = 0;
	}
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

/*
 * Those two on function entry, through magnet's own ftrace_ops
 * (fentry.c): no return needed, so no kprobe's full register save and
 * table lookup on every packet delivered and every socket freed.
 */
static struct acct_fentry {
	const char *func;
	struct magnet_fentry_user u;
	bool on;
} acct_fentries[] = {
	{ "sk_filter_trim_cap" },	/* [0]: on_deliver() */
	{ "sk_free" },			/* [1]: on_sk_free() */
};

void magnet_acct_fentry_hit(struct magnet_fentry_user *u,
			    struct pt_regs *regs)
{
	if (u == &acct_fentries[0].u)
		on_deliver(regs);
	else
		on_sk_free(regs);
}

/* Where kprobes would put a probe on @func: its ftrace call site, or 0. */
static unsigned long fentry_site(const char *func)
{
	struct kprobe kp = {
		.symbol_name = func,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long ip;

	if (register_kprobe(&kp))
		return 0;
	ip = magnet_fentry_site(&kp);
	unregister_kprobe(&kp);
	return ip;
}

/* (without them, no receive processing is charged: not an error) */
static void fentries_attach(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(acct_fentries); i++) {
		struct acct_fentry *f = &acct_fentries[i];
		unsigned long ip = fentry_site(f->func);

		f->u.to = MAGNET_FENTRY_ACCT;
		f->on = ip && !magnet_fentry_attach(&f->u, ip);
		if (!f->on)
			pr_notice("acct: no ftrace hook on %s: receive processing is not charged\n",
				  f->func);
	}
}

static void fentries_detach(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(acct_fentries); i++) {
		if (acct_fentries[i].on)
			magnet_fentry_detach(&acct_fentries[i].u);
		acct_fentries[i].on = false;
	}
}

/*
 * @h's call read @n bytes from @sk: it takes their share of the socket's
 * pending receive processing.
 */
static void rx_take(struct acct_handle *h, const struct sock *sk, u64 n)
{
	struct acct_rx *e = rx_slot(sk);
	unsigned long flags;
	u64 b, ns;

	if (READ_ONCE(e->sk) != sk)
		return;
	raw_spin_lock_irqsave(&e->lock, flags);
	if (rx_mine(e, sk, sk_ino(sk)) && e->bytes &&
	    acct_now() - e->stamp <= MAGNET_ACCT_ASYNC_AGE_NS) {
		b = min(n, e->bytes);
		ns = b == e->bytes ? e->ns : mul_u64_u64_div_u64(e->ns, b, e->bytes);
		e->bytes -= b;
		e->ns -= ns;
		h->sum.rx_bytes += b;
		h->sum.rx_ns += ns;
	}
	raw_spin_unlock_irqrestore(&e->lock, flags);
}

static void rx_reset(void)
{
	unsigned int i;

	for (i = 0; i < ACCT_RX_SLOTS; i++) {
		raw_spin_lock_init(&acct_rx[i].lock);
		acct_rx[i].sk = NULL;
		acct_rx[i].ino = 0;
		acct_rx[i].bytes = 0;
		acct_rx[i].ns = 0;
	}
}

/* --- system calls ------------------------------------------------------------------ */

static void refuse(struct acct_handle *h, u64 word)
{
	WRITE_ONCE(h->area->refused, word);
	WRITE_ONCE(h->area->error, -EINVAL);
	cmpxchg(&h->ctl->arm, word, 0);
}

/* Take one call from the word's count; false if the thread changed it. */
static bool take_one(struct acct_handle *h, u64 word)
{
	if (MAGNET_ACCT_COUNT(word) == MAGNET_ACCT_UNTIL_STOP)
		return true;
	return cmpxchg(&h->ctl->arm, word, word - 1) == word;
}

/*
 * Does @h's control word arm this call? A word with unknown bits is
 * refused.
 */
static bool arms(struct acct_handle *h, u64 word)
{
	if (!MAGNET_ACCT_COUNT(word))
		return false;
	if (MAGNET_ACCT_TOKEN(word) >= MAGNET_ACCT_TOKENS ||
	    (MAGNET_ACCT_FLAG(word) & ~MAGNET_ACCT_FLAGS) ||
	    (MAGNET_ACCT_MASK(word) & ~MAGNET_ACCT_SUBSYS_ALL)) {
		refuse(h, word);
		return false;
	}
	return take_one(h, word);
}

static void on_sys_enter(void *data, struct pt_regs *regs, long id)
{
	struct acct_handle *h = acct_find(current);
	struct acct_watch *w = NULL;
	struct task_struct *t = current;
	unsigned long flags;
	u64 word = 0;
	u8 slot = 0;

	if (unlikely(READ_ONCE(acct_watching)) && !(h && h->watch))
		w = watch_of(t, &slot);
	if (likely(!h)) {
		if (likely(!w))
			return;
		h = shadow_take(w);
		if (!h)
			return;
	} else if (h->watch) {
		w = h->watch;
		slot = h->wslot;
	}
	if (h->area) {
		word = READ_ONCE(h->ctl->arm);
		h->armed = arms(h, word);
	}
	if (!h->armed && !w)
		return;
	memset(&h->sum, 0, sizeof(h->sum));
	if (h->armed) {
		h->token = MAGNET_ACCT_TOKEN(word);
		h->mask = MAGNET_ACCT_MASK(word);
		h->gen = MAGNET_ACCT_GEN(word);
		h->sum_into = MAGNET_ACCT_FLAG(word) & MAGNET_ACCT_SUM;
	} else {
		h->mask = MAGNET_ACCT_SUBSYS_ALL;
	}
	h->wslot = slot;
	h->wserial = w ? w->serial : 0;
	h->nr = id;
	h->depth = 0;
	h->off = ACCT_ON;
	h->minflt = t->min_flt;
	h->majflt = t->maj_flt;
	h->nvcsw = t->nvcsw;
	h->nivcsw = t->nivcsw;
	h->rbytes = t->ioac.read_bytes;
	h->wbytes = t->ioac.write_bytes;
	h->written = NULL;
	if (h->armed)
		slot_start(h);
	local_irq_save(flags);
	h->entry_ns = acct_now();
	mark_start(h, h->entry_ns);
	local_irq_restore(flags);
	h->in_call = true;
}

static void on_sys_exit(void *data, struct pt_regs *regs, long ret)
{
	struct acct_handle *h = acct_find(current);
	unsigned long flags;
	u64 now;

	if (likely(!h) || !h->in_call)
		return;
	local_irq_save(flags);
	now = acct_now();
	mark(h, now);
	local_irq_restore(flags);
	h->in_call = false;
	/* (pending before the call is published done) */
	if (h->written && current->ioac.write_bytes > h->wbytes)
		async_add(h, ACCT_ASYNC_WRITE, h->written,
			  current->ioac.write_bytes - h->wbytes);
	if (h->wserial)
		watch_add(h, now - h->entry_ns, ret);
	if (h->armed)
		publish(h, now - h->entry_ns, ret);
}

/*
 * A thread exits: its shadow goes back to its watch's pool (after a
 * grace period: a hook may be looking at it); the last thread of a
 * watched process marks its watch.
 */
static void on_task_exit(void *data, struct task_struct *p)
{
	struct acct_handle *h = acct_find(p);
	struct acct_watch *w;
	u8 slot;

	if (h && h->watch && shadow_unhash(h))
		call_rcu(&h->rcu, shadow_free_rcu);
	if (unlikely(READ_ONCE(acct_watching)) &&
	    !atomic_read(&p->signal->live)) {
		w = watch_of(p, &slot);
		if (w)
			WRITE_ONCE(w->exited, true);
	}
}

/* --- off and on the CPU ------------------------------------------------------------ */

static void on_switch(void *data, bool preempt, struct task_struct *prev,
		      struct task_struct *next, unsigned int prev_state)
{
	struct acct_handle *h;
	u64 now = 0;

	h = acct_find(prev);
	if (h && h->in_call) {
		now = acct_now();
		mark(h, now);
		h->off_ns = now;
		h->wake_ns = 0;
		if (preempt || prev_state == TASK_RUNNING) {
			h->off = ACCT_RUNNABLE;
		} else {
			h->how = prev->in_iowait ? MAGNET_ACCT_BLOCK_IO :
				 (prev_state & TASK_UNINTERRUPTIBLE) ?
				 MAGNET_ACCT_BLOCK_LOCK : MAGNET_ACCT_BLOCK_WAIT;
			WRITE_ONCE(h->off, ACCT_ASLEEP);
		}
	}
	rx_switch(prev, next, &now);
	h = acct_find(next);
	if (h && h->in_call && h->off != ACCT_ON) {
		u64 woke = READ_ONCE(h->wake_ns);

		if (!now)
			now = acct_now();
		if (h->off == ACCT_ASLEEP) {
			/* (a wakeup not seen: asleep until now) */
			if (!woke || woke < h->off_ns || woke > now)
				woke = now;
			h->sum.blocked[h->how] += woke - h->off_ns;
			h->sum.runq += now - woke;
		} else {
			h->sum.runq += now - h->off_ns;
		}
		h->off = ACCT_ON;
		mark_start(h, now);
	}
}

static void on_wakeup(void *data, struct task_struct *p)
{
	struct acct_handle *h = acct_find(p);

	if (h && READ_ONCE(h->off) == ACCT_ASLEEP && !READ_ONCE(h->wake_ns))
		WRITE_ONCE(h->wake_ns, acct_now());
}

static void on_retransmit(void *data, const struct sock *sk,
			  const struct sk_buff *skb)
{
	struct acct_handle *h;

	if (!in_task())
		return;
	h = acct_find(current);
	if (h && h->in_call)
		h->sum.retrans++;
}

/* --- subsystem boundaries --------------------------------------------------------- */

/*
 * The shipped boundaries: a function of a subsystem, entered from
 * another, makes the call's time that subsystem's until it returns.
 * TX and RX mark the socket layer's functions whose return is the bytes
 * they took or gave; FILE and SKB those whose first argument the call's
 * deferred parts are followed by. A function the kernel lacks is left
 * out.
 */
#define ACCT_TX		1
#define ACCT_RX		2
#define ACCT_FILE	4	/* its first argument: the file written */
#define ACCT_SKB	8	/* its first argument: an skb to follow */

struct acct_boundary {
	const char *func;
	u8 subsys;
	u8 what;		/* ACCT_* */
};

#define B(f, s, w) { #f, MAGNET_ACCT_SUBSYS_##s, w }
static const struct acct_boundary acct_boundaries[] = {
	B(inet_sendmsg, SOCKET, ACCT_TX),
	B(inet6_sendmsg, SOCKET, ACCT_TX),
	B(unix_stream_sendmsg, SOCKET, ACCT_TX),
	B(unix_dgram_sendmsg, SOCKET, ACCT_TX),
	B(sock_recvmsg, SOCKET, ACCT_RX),
	B(inet_accept, SOCKET, 0),
	B(__sys_connect_file, SOCKET, 0),
	B(tcp_sendmsg, TCP, 0),
	B(tcp_recvmsg, TCP, 0),
	B(tcp_v4_connect, TCP, 0),
	B(tcp_v6_connect, TCP, 0),
	B(inet_csk_accept, TCP, 0),
	B(tcp_close, TCP, 0),
	B(udp_sendmsg, UDP, 0),
	B(udp_recvmsg, UDP, 0),
	B(udpv6_sendmsg, UDP, 0),
	B(udpv6_recvmsg, UDP, 0),
	B(__ip_queue_xmit, IP, 0),
	B(ip_make_skb, IP, 0),
	B(ip_send_skb, IP, 0),
	B(ip6_xmit, IP, 0),
	B(ip6_make_skb, IP, 0),
	B(ip6_send_skb, IP, 0),
	B(__dev_queue_xmit, DEVQ, ACCT_SKB),
	B(vfs_read, VFS, 0),
	B(vfs_write, VFS, ACCT_FILE),
	B(vfs_fsync_range, VFS, 0),
	B(do_filp_open, VFS, 0),
	B(ext4_file_read_iter, FS, 0),
	B(ext4_file_write_iter, FS, 0),
	B(ext4_sync_file, FS, 0),
	B(ext4_da_write_begin, FS, 0),
	B(ext4_writepages, FS, 0),
	B(filemap_read, PAGECACHE, 0),
	B(generic_perform_write, PAGECACHE, 0),
	B(file_write_and_wait_range, PAGECACHE, 0),
	B(submit_bio, BLOCK, 0),
	B(blk_finish_plug, BLOCK, 0),
	B(handle_mm_fault, MM, 0),
	B(do_mmap, MM, 0),
	B(__vm_munmap, MM, 0),
	B(pipe_read, PIPE, 0),
	B(pipe_write, PIPE, 0),
};

#undef B

/*
 * Boundaries a configuration adds (acct_boundaries=FUNCTION:SUBSYSTEM,...
 * in modprobe.d, or written to the parameter at run time), as
 * Resourceful's subsystem lists do: taken at the next registration of the
 * hooks. A list with a bad entry is refused whole, the one before kept.
 */
#define ACCT_EXTRA	32
#define ACCT_FUNC_LEN	64

struct acct_extra {
	char func[ACCT_FUNC_LEN];
	u8 subsys;
};

static struct acct_extra acct_extra[ACCT_EXTRA];	/* under acct_lock */
static unsigned int acct_nextra;
static const char *const acct_subsys_names[] = { MAGNET_ACCT_SUBSYS_NAMES };
static_assert(ARRAY_SIZE(acct_subsys_names) == __MAGNET_ACCT_SUBSYS_MAX);

static bool boundary_shipped(const char *func)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(acct_boundaries); i++)
		if (!strcmp(acct_boundaries[i].func, func))
			return true;
	return false;
}

/* The entry FUNCTION:SUBSYSTEM at @val into @e, after @n in @before. */
static int extra_parse(const char *val, struct acct_extra *e,
		       const struct acct_extra *before, unsigned int n)
{
	size_t len = strcspn(val, ":,\n");
	unsigned int i;
	int sub;

	if (!len || len >= ACCT_FUNC_LEN || val[len] != ':') {
		pr_err("acct_boundaries: \"%.*s\": expected FUNCTION:SUBSYSTEM, the function's name 1 to %d characters\n",
		       (int)strcspn(val, ",\n"), val, ACCT_FUNC_LEN - 1);
		return -EINVAL;
	}
	memcpy(e->func, val, len);
	e->func[len] = 0;
	for (i = 0; i < len; i++)
		if (!isalnum(e->func[i]) && e->func[i] != '_' &&
		    e->func[i] != '.') {
			pr_err("acct_boundaries: \"%s\": not a function's name\n",
			       e->func);
			return -EINVAL;
		}
	val += len + 1;
	len = strcspn(val, ",\n");
	for (sub = 1; sub < __MAGNET_ACCT_SUBSYS_MAX; sub++)
		if (strlen(acct_subsys_names[sub]) == len &&
		    !strncmp(acct_subsys_names[sub], val, len))
			break;
	if (sub == __MAGNET_ACCT_SUBSYS_MAX) {
		pr_err("acct_boundaries: %s: \"%.*s\" is no subsystem (socket, tcp, udp, ip, devq, vfs, fs, pagecache, block, mm or pipe)\n",
		       e->func, (int)len, val);
		return -EINVAL;
	}
	e->subsys = sub;
	for (i = 0; i < n; i++)
		if (!strcmp(before[i].func, e->func))
			break;
	if (i < n || boundary_shipped(e->func)) {
		pr_err("acct_boundaries: %s is a boundary already\n", e->func);
		return -EINVAL;
	}
	return 0;
}

static int extra_set(const char *val, const struct kernel_param *kp)
{
	struct acct_extra *list;
	unsigned int n = 0;
	int err = 0;

	list = kcalloc(ACCT_EXTRA, sizeof(*list), GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	while (*val && *val != '\n') {
		if (n == ACCT_EXTRA) {
			pr_err("acct_boundaries: more than %d\n", ACCT_EXTRA);
			err = -EINVAL;
			break;
		}
		err = extra_parse(val, &list[n], list, n);
		if (err)
			break;
		n++;
		val += strcspn(val, ",\n");
		if (*val == ',')
			val++;
	}
	if (!err) {
		mutex_lock(&acct_lock);
		memcpy(acct_extra, list, sizeof(acct_extra));
		acct_nextra = n;
		mutex_unlock(&acct_lock);
	}
	kfree(list);
	return err;
}

static int extra_get(char *buf, const struct kernel_param *kp)
{
	unsigned int i;
	int len = 0;

	mutex_lock(&acct_lock);
	for (i = 0; i < acct_nextra; i++)
		len += scnprintf(buf + len, PAGE_SIZE - len, "%s%s:%s",
				 i ? "," : "", acct_extra[i].func,
				 acct_subsys_names[acct_extra[i].subsys]);
	mutex_unlock(&acct_lock);
	len += scnprintf(buf + len, PAGE_SIZE - len, "\n");
	return len;
}

static const struct kernel_param_ops extra_ops = {
	.set = extra_set,
	.get = extra_get,
};

module_param_cb(acct_boundaries, &extra_ops, NULL, 0644);
MODULE_PARM_DESC(acct_boundaries,
		 "Boundary functions added to per-call accounting's, FUNCTION:SUBSYSTEM,... (taken when its hooks next go in)");

/* What a boundary's entry leaves its return. */
struct acct_ri {
	const struct socket *sock;	/* RX: the socket read, unless peeked */
	u8 depth;			/* the stack's, before */
};

struct acct_probe {
	struct kretprobe krp;
	struct acct_boundary b;
	bool on;
};

static struct acct_probe *acct_probes;	/* one per boundary, or NULL */
static unsigned int acct_nprobes;

static int boundary_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct acct_probe *p = container_of(get_kretprobe(ri),
					    struct acct_probe, krp);
	unsigned long arg = regs_get_kernel_argument(regs, 0);
	struct acct_ri *saved = (struct acct_ri *)ri->data;
	u8 what = p->b.what;
	struct acct_handle *h;
	unsigned long flags;
	bool push;

	if (!in_task())
		return 1;
	h = acct_find(current);
	if (!h || !h->in_call || h->off != ACCT_ON)
		return 1;
	if (what & ACCT_FILE) {
		struct inode *inode = file_inode((struct file *)arg);

		if (S_ISREG(inode->i_mode))
			h->written = inode;
	}
	if (what & ACCT_SKB)
		async_add(h, ACCT_ASYNC_TX, (void *)arg,
			  ((struct sk_buff *)arg)->len);
	push = (h->mask & BIT(p->b.subsys)) && h->depth < ACCT_DEPTH;
	if (!push && !(what & (ACCT_TX | ACCT_RX)))
		return 1;
	saved->depth = h->depth;
	saved->sock = NULL;
	/* (sock_recvmsg(sock, msg, flags); a peek takes nothing) */
	if ((what & ACCT_RX) &&
	    !(regs_get_kernel_argument(regs, 2) & (MSG_PEEK | MSG_ERRQUEUE)))
		saved->sock = (const struct socket *)arg;
	if (!push)
		return 0;
	local_irq_save(flags);
	mark(h, acct_now());
	local_irq_restore(flags);
	h->stack[h->depth++] = p->b.subsys;
	return 0;
}

static int boundary_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct acct_probe *p = container_of(get_kretprobe(ri),
					    struct acct_probe, krp);
	const struct acct_ri *ri_saved = (const struct acct_ri *)ri->data;
	u8 saved = ri_saved->depth;
	struct acct_handle *h = acct_find(current);
	long ret = regs_return_value(regs);
	unsigned long flags;

	if (!h || !h->in_call)
		return 0;
	if (ret > 0 && (p->b.what & ACCT_TX))
		h->sum.sock_tx += ret;
	else if (ret > 0 && (p->b.what & ACCT_RX))
		h->sum.sock_rx += ret;
	if (ret > 0 && ri_saved->sock && ri_saved->sock->sk)
		rx_take(h, ri_saved->sock->sk, ret);
	if (h->depth > saved) {
		local_irq_save(flags);
		mark(h, acct_now());
		local_irq_restore(flags);
		h->depth = saved;
	}
	return 0;
}

static void probes_unregister(void)
{
	unsigned int i;

	if (!acct_probes)
		return;
	for (i = 0; i < acct_nprobes; i++)
		if (acct_probes[i].on)
			unregister_kretprobe(&acct_probes[i].krp);
	kfree(acct_probes);
	acct_probes = NULL;
}

/* The shipped boundaries and those added. Under acct_lock. */
static int probes_register(void)
{
	unsigned int i, n = 0, shipped = ARRAY_SIZE(acct_boundaries);

	acct_nprobes = shipped + acct_nextra;
	acct_probes = kcalloc(acct_nprobes, sizeof(*acct_probes), GFP_KERNEL);
	if (!acct_probes)
		return -ENOMEM;
	for (i = 0; i < acct_nprobes; i++) {
		struct acct_probe *p = &acct_probes[i];

		if (i < shipped) {
			p->b = acct_boundaries[i];
		} else {
			p->b.func = acct_extra[i - shipped].func;
			p->b.subsys = acct_extra[i - shipped].subsys;
		}
		p->krp.kp.symbol_name = p->b.func;
		p->krp.entry_handler = boundary_entry;
		p->krp.handler = boundary_return;
		p->krp.data_size = sizeof(struct acct_ri);
		p->krp.maxactive = ACCT_MAXACTIVE;
		p->on = !register_kretprobe(&p->krp);
		n += p->on;
		/* (a shipped one a kernel lacks is no news; an added one is) */
		if (!p->on && i >= shipped)
			pr_notice("acct_boundaries: %s: no such function to probe, left out\n",
				  p->b.func);
	}
	pr_debug("acct: %u of %u boundaries\n", n, acct_nprobes);
	return 0;
}

/* --- hooks on and off ---------------------------------------------------------------- */

struct acct_tp {
	const char *name;
	void *handler;
	bool optional;		/* x86's vectors: only where they exist */
	struct tracepoint *tp;
};

static struct acct_tp acct_tps[] = {
	{ "sys_enter", on_sys_enter },
	{ "sys_exit", on_sys_exit },
	{ "sched_switch", on_switch },
	{ "sched_wakeup", on_wakeup },
	{ "sched_process_exit", on_task_exit },
	{ "tcp_retransmit_skb", on_retransmit },
	{ "netif_receive_skb", on_rx_start },
	{ "net_dev_start_xmit", on_xmit_start },
	{ "net_dev_xmit", on_xmit },
	{ "kfree_skb", on_skb_free },
	{ "consume_skb", on_skb_free },
	{ "block_rq_complete", on_block_done },
	{ "irq_handler_entry", on_irq_entry },
	{ "irq_handler_exit", on_irq_exit },
	{ "softirq_entry", on_softirq_entry },
	{ "softirq_exit", on_softirq_exit },
	{ "local_timer_entry", on_vector_entry, true },
	{ "local_timer_exit", on_vector_exit, true },
	{ "reschedule_entry", on_vector_entry, true },
	{ "reschedule_exit", on_vector_exit, true },
	{ "call_function_entry", on_vector_entry, true },
	{ "call_function_exit", on_vector_exit, true },
	{ "call_function_single_entry", on_vector_entry, true },
	{ "call_function_single_exit", on_vector_exit, true },
	{ "irq_work_entry", on_vector_entry, true },
	{ "irq_work_exit", on_vector_exit, true },
};

static void tps_unregister(unsigned int n)
{
	while (n--) {
		struct acct_tp *t = &acct_tps[n];

		if (t->tp)
			tracepoint_probe_unregister(t->tp, t->handler, NULL);
		t->tp = NULL;
	}
	tracepoint_synchronize_unregister();
}

/*
 * Interrupt exits go in before their entries (an exit without its entry
 * is ignored; an entry without its exit would leave a level open), so
 * the table is registered from its end.
 */
static int tps_register(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(acct_tps); i++) {
		struct acct_tp *t = &acct_tps[ARRAY_SIZE(acct_tps) - 1 - i];
		struct tracepoint *tp = magnet_tracepoint_find(t->name);

		if (!tp && t->optional)
			continue;
		if (!tp) {
			pr_warn("acct: no tracepoint %s\n", t->name);
			err = -ENOENT;
			goto fail;
		}
		err = tracepoint_probe_register(tp, t->handler, NULL);
		if (err)
			goto fail;
		t->tp = tp;
	}
	return 0;
fail:
	tps_unregister(ARRAY_SIZE(acct_tps));
	return err;
}

static int hooks_on(void)
{
	unsigned int cpu;
	int err;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&acct_cpus, cpu), 0, sizeof(struct acct_cpu));
	rx_reset();
	err = tps_register();
	if (err)
		return err;
	err = probes_register();
	if (err) {
		tps_unregister(ARRAY_SIZE(acct_tps));
		return err;
	}
	fentries_attach();
	return 0;
}

static void hooks_off(void)
{
	fentries_detach();
	probes_unregister();
	tps_unregister(ARRAY_SIZE(acct_tps));
}

/* The hooks in place for a new handle or watch. Under acct_lock. */
static int hooks_need(void)
{
	int err;

	/* (an unhook pending finds a user, and leaves the hooks) */
	cancel_delayed_work(&acct_off_work);
	if (acct_hooked)
		return 0;
	err = hooks_on();
	if (!err)
		acct_hooked = true;
	return err;
}

/* A handle or watch gone: the hooks go ACCT_LINGER after the last. */
static void hooks_release(void)
{
	if (!acct_handles && !acct_watching)
		schedule_delayed_work(&acct_off_work, ACCT_LINGER);
}

/* --- the device ------------------------------------------------------------------------ */

static void handle_free(struct acct_handle *h)
{
	vfree(h->ctl);
	vfree(h->area);
	put_task_struct(h->task);
	kfree(h);
}

static void handle_free_rcu(struct rcu_head *rcu)
{
	handle_free(container_of(rcu, struct acct_handle, rcu));
}

static int acct_open(struct inode *inode, struct file *file)
{
	struct acct_handle *h;
	int err;

	h = kzalloc(sizeof(*h), GFP_KERNEL_ACCOUNT);
	if (!h)
		return -ENOMEM;
	h->ctl = vmalloc_user(MAGNET_ACCT_CTL_SIZE);
	h->area = vmalloc_user(MAGNET_ACCT_AREA_SIZE);
	if (!h->ctl || !h->area) {
		err = -ENOMEM;
		goto fail;
	}
	raw_spin_lock_init(&h->slot_lock);
	init_waitqueue_head(&h->wait);
	h->area->version = MAGNET_FORMAT_VERSION;
	h->area->tokens = MAGNET_ACCT_TOKENS;
	h->area->result_size = sizeof(struct magnet_acct_result);
	h->area->tid = task_pid_vnr(current);
	h->task = get_task_struct(current);
	h->mm = current->mm;

	mutex_lock(&acct_lock);
	err = -EBUSY;
	rcu_read_lock();
	if (acct_find(current)) {
		rcu_read_unlock();
		goto fail_locked;
	}
	rcu_read_unlock();
	err = -ENOSPC;
	if (acct_handles >= READ_ONCE(max_acct_threads))
		goto fail_locked;
	err = hooks_need();
	if (err)
		goto fail_locked;
	acct_handles++;
	raw_spin_lock_irq(&acct_hash_lock);
	hash_add_rcu(acct_hash, &h->node, (unsigned long)current);
	raw_spin_unlock_irq(&acct_hash_lock);
	mutex_unlock(&acct_lock);
	file->private_data = h;
	return 0;

fail_locked:
	mutex_unlock(&acct_lock);
fail:
	if (h->task)
		put_task_struct(h->task);
	vfree(h->ctl);
	vfree(h->area);
	kfree(h);
	return err;
}

static void acct_unhook(struct work_struct *work)
{
	mutex_lock(&acct_lock);
	if (!acct_handles && !acct_watching && acct_hooked) {
		hooks_off();
		acct_hooked = false;
	}
	mutex_unlock(&acct_lock);
}

static int acct_release(struct inode *inode, struct file *file)
{
	struct acct_handle *h = file->private_data;

	mutex_lock(&acct_lock);
	raw_spin_lock_irq(&acct_hash_lock);
	hash_del_rcu(&h->node);
	raw_spin_unlock_irq(&acct_hash_lock);
	async_forget(h);
	acct_handles--;
	hooks_release();
	mutex_unlock(&acct_lock);
	/* (a hook may be looking at it) */
	call_rcu(&h->rcu, handle_free_rcu);
	return 0;
}

/*
 * The control page read-write, the results read-only (and never to be
 * made writable), each whole, shared, and left out of a child's copy.
 */
static int acct_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct acct_handle *h = file->private_data;
	unsigned long size = vma->vm_end - vma->vm_start;
	void *mem;

	if (current->mm != h->mm)
		return -EPERM;
	if (!(vma->vm_flags & VM_SHARED) && !(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_pgoff == 0 && size == MAGNET_ACCT_CTL_SIZE) {
		mem = h->ctl;
	} else if (vma->vm_pgoff == MAGNET_ACCT_CTL_SIZE >> PAGE_SHIFT &&
		   size == MAGNET_ACCT_AREA_SIZE) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		magnet_vm_flags_clear(vma, VM_MAYWRITE);
		mem = h->area;
	} else {
		return -EINVAL;
	}
	magnet_vm_flags_set(vma, VM_DONTCOPY);
	return remap_vmalloc_range(vma, mem, 0);
}

/* Readable when a deferred part came in since the last poll said so. */
static __poll_t acct_poll(struct file *file, poll_table *wait)
{
	struct acct_handle *h = file->private_data;
	u32 c;

	poll_wait(file, &h->wait, wait);
	c = READ_ONCE(h->area->completions);
	if (c == READ_ONCE(h->polled))
		return 0;
	WRITE_ONCE(h->polled, c);
	return EPOLLIN | EPOLLRDNORM;
}

static const struct file_operations acct_fops = {
	.owner = THIS_MODULE,
	.open = acct_open,
	.release = acct_release,
	.mmap = acct_mmap,
	.poll = acct_poll,
	.llseek = noop_llseek,
};

static struct miscdevice acct_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "magnet-acct",
	.fops = &acct_fops,
	.mode = 0666,
};

/* --- watches on and off, read ------------------------------------------------------ */

/* End the watch in @slot. Under acct_lock. */
static void watch_end(unsigned int slot)
{
	struct acct_watch *w = rcu_dereference_protected(acct_watches[slot],
				lockdep_is_held(&acct_lock));
	unsigned int i;

	RCU_INIT_POINTER(acct_watches[slot], NULL);
	WRITE_ONCE(acct_watching, acct_watching - 1);
	synchronize_rcu();	/* no hook takes a shadow from it now */
	for (i = 0; i < MAGNET_ACCT_WATCH_THREADS; i++)
		shadow_unhash(&w->pool[i]);
	synchronize_rcu();	/* nor looks at one */
	rcu_barrier();		/* those freed before are back in its pool */
	put_pid(w->pid);
	vfree(w);
	hooks_release();
}

/*
 * The slot of the watch of the process numbered @nr in the asker's pid
 * namespace (one that exited keeps its number), or -1. Under acct_lock.
 */
static int watch_find(pid_t nr)
{
	unsigned int i;

	for (i = 0; i < MAGNET_ACCT_WATCHES; i++) {
		struct acct_watch *w = rcu_dereference_protected(acct_watches[i],
					lockdep_is_held(&acct_lock));

		if (w && pid_vnr(w->pid) == nr)
			return i;
	}
	return -1;
}

static int watch_start(struct pid *pid, u32 owner,
		       struct netlink_ext_ack *extack)
{
	struct acct_watch *w;
	unsigned int i;
	int slot, err;

	for (slot = 0; slot < MAGNET_ACCT_WATCHES; slot++)
		if (!rcu_access_pointer(acct_watches[slot]))
			break;
	if (slot == MAGNET_ACCT_WATCHES) {
		NL_SET_ERR_MSG(extack,
			       "as many processes are watched as can be at once (MAGNET_ACCT_WATCHES)");
		return -ENOSPC;
	}
	w = vzalloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = hooks_need();
	if (err) {
		vfree(w);
		NL_SET_ERR_MSG(extack, "the accounting hooks could not be placed");
		return err;
	}
	w->pid = get_pid(pid);
	w->serial = ++acct_watch_serial ?: ++acct_watch_serial;
	w->owner = owner;
	w->since = acct_now();
	raw_spin_lock_init(&w->lock);
	for (i = 0; i < MAGNET_ACCT_WATCH_THREADS; i++) {
		w->pool[i].next_free = w->free;
		w->free = &w->pool[i];
	}
	WRITE_ONCE(acct_watching, acct_watching + 1);
	rcu_assign_pointer(acct_watches[slot], w);
	return 0;
}

/*
 * Watch thread group @nr (in the asker's pid namespace), or stop;
 * @owner: the netlink port it ends with (MAGNET_A_OWNED), or 0.
 */
int magnet_acct_watch_set(u32 nr, bool on, u32 owner,
			  struct netlink_ext_ack *extack)
{
	struct pid *pid = find_get_pid(nr);
	int slot, err = 0;

	mutex_lock(&acct_lock);
	slot = watch_find(nr);
	if (!on) {
		if (slot < 0) {
			NL_SET_ERR_MSG(extack, "that process is not watched");
			err = -ENOENT;
		} else {
			watch_end(slot);
		}
	} else if (slot >= 0) {
		NL_SET_ERR_MSG(extack,
			       "that process is watched already (stop it first: its counters start again)");
		err = -EALREADY;
	} else if (!pid || !pid_has_task(pid, PIDTYPE_TGID)) {
		NL_SET_ERR_MSG(extack, "no process has that pid (a thread's is not one)");
		err = -ESRCH;
	} else {
		err = watch_start(pid, owner, extack);
	}
	mutex_unlock(&acct_lock);
	put_pid(pid);
	return err;
}

/* A netlink socket closed: end the watches it owned. */
void magnet_acct_release(u32 portid)
{
	unsigned int i;

	mutex_lock(&acct_lock);
	for (i = 0; i < MAGNET_ACCT_WATCHES; i++) {
		struct acct_watch *w = rcu_dereference_protected(acct_watches[i],
					lockdep_is_held(&acct_lock));

		if (w && w->owner == portid)
			watch_end(i);
	}
	mutex_unlock(&acct_lock);
}

/* A watch's rows, copied at one instant, for a dump. */
struct acct_snap {
	u32 serial;
	pid_t pid;
	bool exited;
	unsigned int threads, rows;
	u64 since, missed;
	u32 nr[MAGNET_ACCT_WATCH_ROWS];
	struct acct_watch_row row[MAGNET_ACCT_WATCH_ROWS];
};

/* Copy the watch in @slot, if any (and if @pid, @pid's). Under acct_lock. */
static bool snap_watch(struct acct_snap *sn, unsigned int slot, pid_t pid)
{
	struct acct_watch *w = rcu_dereference_protected(acct_watches[slot],
				lockdep_is_held(&acct_lock));
	unsigned int i;

	if (!w || (pid && pid_vnr(w->pid) != pid))
		return false;
	sn->serial = w->serial;
	sn->pid = pid_vnr(w->pid);
	raw_spin_lock_irq(&w->lock);
	sn->exited = READ_ONCE(w->exited);
	sn->threads = w->threads;
	sn->since = acct_now() - w->since;
	sn->missed = w->missed;
	sn->rows = 0;
	for (i = 0; i < ACCT_WATCH_NRS; i++)
		if (w->row_of[i]) {
			sn->nr[sn->rows] = i;
			sn->row[sn->rows++] = w->row[w->row_of[i] - 1];
		}
	if (w->row[MAGNET_ACCT_WATCH_ROWS - 1].r.calls ||
	    w->row[MAGNET_ACCT_WATCH_ROWS - 1].r.async_pending) {
		sn->nr[sn->rows] = MAGNET_ACCT_NR_OTHER;
		sn->row[sn->rows++] = w->row[MAGNET_ACCT_WATCH_ROWS - 1];
	}
	raw_spin_unlock_irq(&w->lock);
	return true;
}

static int fill_watch_row(struct sk_buff *skb, const struct acct_snap *sn,
			  unsigned int i)
{
	struct magnet_acct_result r = sn->row[i].r;

	r.seq = 0;
	r.gen = 0;
	return nla_put_u32(skb, MAGNET_A_ACCT_PID, sn->pid) ||
	       nla_put_u32(skb, MAGNET_A_ACCT_NR, sn->nr[i]) ||
	       nla_put(skb, MAGNET_A_ACCT_RESULT, sizeof(r), &r) ||
	       nla_put_u64_64bit(skb, MAGNET_A_ACCT_ERRORS, sn->row[i].errors,
				 MAGNET_A_PAD) ||
	       nla_put_u64_64bit(skb, MAGNET_A_ACCT_MAX, sn->row[i].max_ns,
				 MAGNET_A_PAD) ||
	       nla_put(skb, MAGNET_A_ACCT_HIST, sizeof(sn->row[i].hist),
		       sn->row[i].hist);
}

static int fill_watch(struct sk_buff *skb, const struct acct_snap *sn)
{
	return nla_put_u32(skb, MAGNET_A_ACCT_PID, sn->pid) ||
	       nla_put_u64_64bit(skb, MAGNET_A_ACCT_SINCE, sn->since,
				 MAGNET_A_PAD) ||
	       nla_put_u32(skb, MAGNET_A_ACCT_THREADS, sn->threads) ||
	       nla_put_u64_64bit(skb, MAGNET_A_ACCT_MISSED, sn->missed,
				 MAGNET_A_PAD) ||
	       (sn->exited && nla_put_flag(skb, MAGNET_A_ACCT_EXITED));
}

/*
 * MAGNET_CMD_ACCT_GET's dump: args[0] the slot, args[1] the message in
 * it (0 the watch's, i the row i - 1's), args[2] the slot's serial,
 * args[3] the snapshot, args[4] whether any watch was dumped.
 */
int magnet_acct_watch_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct genl_family *family)
{
	struct nlattr *pid_attr = magnet_genl_dump_attrs(cb)[MAGNET_A_ACCT_PID];
	struct acct_snap *sn = (struct acct_snap *)cb->args[3];
	pid_t pid = pid_attr ? nla_get_u32(pid_attr) : 0;
	unsigned long slot = cb->args[0], i = cb->args[1];
	int err = 0;
	void *hdr;

	if (!sn) {
		sn = kvmalloc(sizeof(*sn), GFP_KERNEL);
		if (!sn)
			return -ENOMEM;
		cb->args[3] = (unsigned long)sn;
	}
	mutex_lock(&acct_lock);
	for (; slot < MAGNET_ACCT_WATCHES; slot++, i = 0) {
		if (!i) {
			if (!snap_watch(sn, slot, pid))
				continue;
			cb->args[2] = sn->serial;
			cb->args[4] = 1;
		}
		for (; i <= sn->rows; i++) {
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, family,
					  NLM_F_MULTI, MAGNET_CMD_ACCT_GET);
			if (!hdr)
				goto full;
			if (i ? fill_watch_row(skb, sn, i - 1) :
			    fill_watch(skb, sn)) {
				genlmsg_cancel(skb, hdr);
				goto full;
			}
			genlmsg_end(skb, hdr);
		}
	}
	if (!cb->args[4]) {
		if (pid)
			NL_SET_ERR_MSG(cb->extack, "that process is not watched");
		else
			NL_SET_ERR_MSG(cb->extack, "no process is watched");
		err = -ENOENT;
	}
full:
	mutex_unlock(&acct_lock);
	cb->args[0] = slot;
	cb->args[1] = i;
	return err ?: skb->len;
}

int magnet_acct_watch_dump_done(struct netlink_callback *cb)
{
	kvfree((void *)cb->args[3]);
	cb->args[3] = 0;
	return 0;
}

int magnet_acct_init(void)
{
	unsigned int i;

	for (i = 0; i < MAGNET_ACCT_ASYNC_MAX; i++)
		hlist_add_head(&acct_asyncs[i].node, &acct_async_free);
	return misc_register(&acct_dev);
}

void magnet_acct_exit(void)
{
	unsigned int i;

	misc_deregister(&acct_dev);	/* no handle is open: none to come */
	mutex_lock(&acct_lock);
	for (i = 0; i < MAGNET_ACCT_WATCHES; i++)
		if (rcu_access_pointer(acct_watches[i]))
			watch_end(i);
	mutex_unlock(&acct_lock);
	cancel_delayed_work_sync(&acct_off_work);
	if (acct_hooked)
		hooks_off();
	acct_hooked = false;
	rcu_barrier();		/* handles freed after their last close */
}

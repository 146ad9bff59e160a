// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: probes inserted at run time.
 *
 * A probe is an event (event.c) plus a hook in the kernel: a kprobe, a
 * kretprobe or a tracepoint. Its handler tests the hit against the
 * event's gate (magnet_event_admit()), then builds the payload, in the
 * record itself where it can, or on the stack and hands it to
 * magnet_event_log_admitted(). A disabled probe costs its path nothing:
 * kprobes are disarmed (disable_kprobe()), tracepoint handlers are
 * unregistered.
 *
 * Handlers are either predefined (the catalog below: what matters at that
 * point, in a struct of the uapi header) or generic (the first N argument
 * registers, a kretprobe's return value and duration).
 *
 * Creating a probe registers its event first (the handler logs under the
 * event's id), then the hook; if the hook fails, the event goes again, so
 * a failed request leaves nothing behind. Removing unregisters the hook,
 * waits until no handler can still run, then frees.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/netdevice.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/syscall.h>

#include "magnet.h"
#include "writer.h"

struct magnet_probe {
	struct magnet_event ev;
	const struct magnet_predef *predef;
	u8 nargs;
	u8 id_arg;			/* 1-based, 0 = none */
	bool tp_registered;
	struct tracepoint *tp;
	struct kprobe kp;
	struct kretprobe rp;
	struct magnet_fentry_user fentry;	/* FTRACE dispatch */
	struct magnet_span_user span;		/* MAGNET_PROBE_USER */
	struct magnet_sample_user sample;	/* MAGNET_PROBE_SAMPLE */
	u8 dispatch;			/* kprobes: KPROBE or FTRACE */
	char target[MAGNET_TARGET_LEN];
	char symbol[MAGNET_TARGET_LEN];	/* target without "+offset" */
};

/* What a kretprobe keeps from entry to return, per call. */
struct ret_entry {
	u64 start;
	u64 args[MAGNET_PROBE_ARGS_MAX];
};

static struct magnet_probe *to_probe(struct magnet_event *ev)
{
	return container_of(ev, struct magnet_probe, ev);
}

static bool is_probe(struct magnet_event *ev)
{
	return ev->kind != MAGNET_PROBE_EXTERNAL;
}

static u64 probe_id(struct magnet_probe *p, const u64 *args)
{
	return p->id_arg ? args[p->id_arg - 1] : 0;
}

/* --- generic handlers ---------------------------------------------------- */

static void read_args(struct pt_regs *regs, u64 *args, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		args[i] = regs_get_kernel_argument(regs, i);
}

/*
 * Handlers test the hit against the event's gate first (magnet.h), and
 * build the payload in a function of its own: a hit filtered out by its
 * CPU or task then never pays for the payload, nor for the zeroing that
 * the kernel's automatic stack initialisation gives its variables.
 */
/* A hit for the full rules, which see the payload: built first. */
static noinline void kprobe_generic_ask(struct magnet_probe *p,
					struct pt_regs *regs)
{
	u64 args[MAGNET_PROBE_ARGS_MAX];

	read_args(regs, args, p->nargs);
	magnet_event_log_admitted(&p->ev, MAGNET_ADMIT_ASK, probe_id(p, args),
				  args, p->nargs * sizeof(u64), NULL);
}

static __always_inline u32 rec_keep(const struct magnet_record *rec)
{
	return rec->size - sizeof(*rec);
}

/*
 * Reserve the record of a hit whose payload is @size bytes of words, cut
 * to the event's snap length; the caller writes word i with put_word(),
 * given the payload bytes the record holds (rec_keep()).
 */
static __always_inline struct magnet_record *
reserve_words(struct magnet_probe *p, enum magnet_admit admit, u64 id,
	      u32 size)
{
	u32 snaplen = READ_ONCE(p->ev.snaplen);
	struct magnet_record *rec;

	rec = magnet_event_reserve(&p->ev, admit, id, NULL, 0,
				   snaplen && size > snaplen ? snaplen : size,
				   NULL);
	if (!IS_ERR_OR_NULL(rec) && rec_keep(rec) < size)
		rec->flags |= MAGNET_RF_TRUNCATED;
	return rec;
}

/* Word @i of a record's payload, as much of it as its @keep bytes hold. */
static __always_inline void put_word(struct magnet_record *rec, u32 keep,
				     unsigned int i, u64 w)
{
	u32 off = i * sizeof(u64);

	if (likely(off + sizeof(u64) <= keep))
		((u64 *)rec->payload)[i] = w;
	else if (off < keep)
		memcpy(rec->payload + off, &w, keep - off);
}

/* The arguments go from the registers straight into the record. */
static void kprobe_generic_log(struct magnet_probe *p, enum magnet_admit admit,
			       struct pt_regs *regs)
{
	struct magnet_record *rec;
	unsigned int i;
	u64 id = 0;
	u32 keep;

	if (admit == MAGNET_ADMIT_ASK) {
		kprobe_generic_ask(p, regs);
		return;
	}
	if (p->id_arg)
		id = regs_get_kernel_argument(regs, p->id_arg - 1);
	rec = reserve_words(p, admit, id, p->nargs * sizeof(u64));
	if (IS_ERR_OR_NULL(rec))
		return;
	keep = rec_keep(rec);
	for (i = 0; i < p->nargs; i++)
		put_word(rec, keep, i, regs_get_kernel_argument(regs, i));
	magnet_event_commit(&p->ev, rec);
}

static int kprobe_generic(struct kprobe *kp, struct pt_regs *regs)
{
	struct magnet_probe *p = container_of(kp, struct magnet_probe, kp);
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		kprobe_generic_log(p, admit, regs);
	return 0;
}

static int kprobe_hit(struct kprobe *kp, struct pt_regs *regs)
{
	struct magnet_probe *p = container_of(kp, struct magnet_probe, kp);

	if (!p->predef)
		return kprobe_generic(kp, regs);
	if (p->predef->packet) {
		magnet_packet_hit(&p->ev, p->predef->packet,
				  regs_get_kernel_argument(regs, 0),
				  regs_get_kernel_argument(regs, 1),
				  regs_get_kernel_argument(regs, 2));
		return 0;
	}
	return p->predef->kp_handler(kp, regs);
}

/* The same hit, from magnet's ftrace_ops on the function (fentry.c). */
void magnet_probe_fentry_hit(struct magnet_fentry_user *u,
			     struct pt_regs *regs)
{
	struct magnet_probe *p = container_of(u, struct magnet_probe, fentry);
	enum magnet_admit admit;

	if (p->predef) {
		kprobe_hit(&p->kp, regs);
		return;
	}
	admit = magnet_event_admit(&p->ev);
	if (admit != MAGNET_ADMIT_NO)
		kprobe_generic_log(p, admit, regs);
}

static int kretprobe_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct magnet_probe *p = container_of(rp, struct magnet_probe, rp);
	struct ret_entry *e = (struct ret_entry *)ri->data;

	read_args(regs, e->args, p->nargs);
	e->start = ktime_get_mono_fast_ns();
	return 0;
}

/* A return for the full rules, which see the payload: built first. */
static noinline void kretprobe_ask(struct magnet_probe *p,
				   struct ret_entry *e, struct pt_regs *regs)
{
	u64 now = ktime_get_mono_fast_ns();
	struct {
		struct magnet_ret_payload ret;
		u64 args[MAGNET_PROBE_ARGS_MAX];
	} pl;

	static_assert(offsetof(typeof(pl), args) ==
		      offsetof(struct magnet_ret_payload, args));
	pl.ret.retval = (s64)regs_return_value(regs);
	pl.ret.duration_ns = now - e->start;
	memcpy(pl.args, e->args, p->nargs * sizeof(u64));
	magnet_event_log_admitted(&p->ev, MAGNET_ADMIT_ASK,
				  probe_id(p, e->args), &pl,
				  sizeof(pl.ret) + p->nargs * sizeof(u64),
				  NULL);
}

/*
 * Return value, duration and the entry's arguments, into the record. The
 * return's time is the record's timestamp: one clock read, not two.
 */
static void kretprobe_log(struct magnet_probe *p, enum magnet_admit admit,
			  struct ret_entry *e, struct pt_regs *regs)
{
	struct magnet_record *rec;
	unsigned int i;
	u32 keep;

	static_assert(offsetof(struct magnet_ret_payload, args) ==
		      2 * sizeof(u64));
	if (admit == MAGNET_ADMIT_ASK) {
		kretprobe_ask(p, e, regs);
		return;
	}
	rec = reserve_words(p, admit, probe_id(p, e->args),
			    sizeof(struct magnet_ret_payload) +
			    p->nargs * sizeof(u64));
	if (IS_ERR_OR_NULL(rec))
		return;
	keep = rec_keep(rec);
	put_word(rec, keep, 0, (s64)regs_return_value(regs));
	put_word(rec, keep, 1, rec->timestamp - e->start);
	for (i = 0; i < p->nargs; i++)
		put_word(rec, keep, 2 + i, e->args[i]);
	magnet_event_commit(&p->ev, rec);
}

static int kretprobe_return(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct magnet_probe *p = container_of(rp, struct magnet_probe, rp);
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		kretprobe_log(p, admit, (struct ret_entry *)ri->data, regs);
	return 0;
}

/* A packet probe on a function's return: the function returns the skb. */
static int packet_kretprobe_return(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct magnet_probe *p = container_of(rp, struct magnet_probe, rp);
	unsigned long skb = regs_return_value(regs);

	if (!IS_ERR_OR_NULL((void *)skb))
		magnet_packet_hit(&p->ev, p->predef->packet, skb, 0, 0);
	return 0;
}

/*
 * A tracepoint calls its handlers with (data, its arguments): integer and
 * pointer arguments travel in registers, so a handler taking five longs
 * sees the first five arguments, whatever their declared types (narrower
 * ones in the low bits). The uapi header documents this for users.
 */
static noinline void tracepoint_generic_log(struct magnet_probe *p,
					    enum magnet_admit admit,
					    unsigned long a0, unsigned long a1,
					    unsigned long a2, unsigned long a3,
					    unsigned long a4)
{
	u64 args[MAGNET_TRACEPOINT_ARGS_MAX] = { a0, a1, a2, a3, a4 };
	struct magnet_record *rec;
	unsigned int i;
	u32 keep;

	if (admit == MAGNET_ADMIT_ASK) {
		magnet_event_log_admitted(&p->ev, admit, probe_id(p, args),
					  args, p->nargs * sizeof(u64), NULL);
		return;
	}
	/* The arguments go from the registers straight into the record. */
	rec = reserve_words(p, admit, probe_id(p, args),
			    p->nargs * sizeof(u64));
	if (IS_ERR_OR_NULL(rec))
		return;
	keep = rec_keep(rec);
	for (i = 0; i < p->nargs; i++)
		put_word(rec, keep, i, args[i]);
	magnet_event_commit(&p->ev, rec);
}

static void tracepoint_generic(void *data, unsigned long a0, unsigned long a1,
			       unsigned long a2, unsigned long a3,
			       unsigned long a4)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		tracepoint_generic_log(p, admit, a0, a1, a2, a3, a4);
}

/* --- predefined handlers --------------------------------------------------- */

/*
 * Packet tracepoints (net_dev_queue, net_dev_start_xmit, netif_receive_skb,
 * skb_copy_datagram_iovec) all take the packet first; the second argument
 * is the device or the bytes copied.
 */
static void predef_packet_tp(void *data, unsigned long a0, unsigned long a1)
{
	struct magnet_probe *p = data;

	magnet_packet_hit(&p->ev, p->predef->packet, a0, a1, 0);
}

/* Block tracepoints take the bio or the request first (block.c). */
static void predef_block_tp(void *data, unsigned long a0, unsigned long a1,
			    unsigned long a2)
{
	struct magnet_probe *p = data;

	magnet_block_hit(&p->ev, p->predef->block, a0, a1, a2);
}

/*
 * Each handler tests the gate first; its *_log() builds the payload of a
 * hit that goes on.
 */
static void sched_switch_log(struct magnet_probe *p, enum magnet_admit admit,
			     bool preempt, struct task_struct *prev,
			     struct task_struct *next, unsigned int prev_state)
{
	struct magnet_sched_switch e = {
		.prev_pid = prev->pid,
		.prev_tgid = prev->tgid,
		.next_pid = next->pid,
		.next_tgid = next->tgid,
		.prev_state = prev_state,
		.preempt = preempt,
	};

	memcpy(e.prev_comm, prev->comm, sizeof(e.prev_comm));
	memcpy(e.next_comm, next->comm, sizeof(e.next_comm));
	magnet_event_log_admitted(&p->ev, admit, next->pid, &e, sizeof(e), NULL);
}

static void predef_sched_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		sched_switch_log(p, admit, preempt, prev, next, prev_state);
}

static void process_fork_log(struct magnet_probe *p, enum magnet_admit admit,
			     struct task_struct *parent,
			     struct task_struct *child)
{
	struct magnet_process_fork e = {
		.parent_pid = parent->pid,
		.parent_tgid = parent->tgid,
		.child_pid = child->pid,
		.child_tgid = child->tgid,
	};

	memcpy(e.comm, child->comm, sizeof(e.comm));
	magnet_event_log_admitted(&p->ev, admit, child->pid, &e, sizeof(e),
				  NULL);
}

static void predef_process_fork(void *data, struct task_struct *parent,
				struct task_struct *child)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		process_fork_log(p, admit, parent, child);
}

static void process_exit_log(struct magnet_probe *p, enum magnet_admit admit,
			     struct task_struct *task)
{
	struct magnet_process_exit e = {
		.pid = task->pid,
		.tgid = task->tgid,
		.exit_code = task->exit_code,
	};

	memcpy(e.comm, task->comm, sizeof(e.comm));
	magnet_event_log_admitted(&p->ev, admit, task->pid, &e, sizeof(e),
				  NULL);
}

static void predef_process_exit(void *data, struct task_struct *task)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		process_exit_log(p, admit, task);
}

/* An entry for the full rules, which see the payload: built first. */
static noinline void syscall_enter_ask(struct magnet_probe *p,
				       struct pt_regs *regs, long nr)
{
	struct magnet_syscall_enter e;
	unsigned long args[6];
	unsigned int i;

	e.nr = nr;
	syscall_get_arguments(current, regs, args);
	for (i = 0; i < ARRAY_SIZE(args); i++)
		e.args[i] = args[i];
	magnet_event_log_admitted(&p->ev, MAGNET_ADMIT_ASK, nr, &e, sizeof(e),
				  NULL);
}

/* The number and the arguments, from the registers into the record. */
static void syscall_enter_log(struct magnet_probe *p, enum magnet_admit admit,
			      struct pt_regs *regs, long nr)
{
	struct magnet_record *rec;
	unsigned long args[6];
	unsigned int i;
	u32 keep;

	static_assert(sizeof(struct magnet_syscall_enter) ==
		      (1 + ARRAY_SIZE(args)) * sizeof(u64));
	if (admit == MAGNET_ADMIT_ASK) {
		syscall_enter_ask(p, regs, nr);
		return;
	}
	rec = reserve_words(p, admit, nr, sizeof(struct magnet_syscall_enter));
	if (IS_ERR_OR_NULL(rec))
		return;
	keep = rec_keep(rec);
	syscall_get_arguments(current, regs, args);
	put_word(rec, keep, 0, nr);
	for (i = 0; i < ARRAY_SIZE(args); i++)
		put_word(rec, keep, 1 + i, args[i]);
	magnet_event_commit(&p->ev, rec);
}

static void predef_syscall_enter(void *data, struct pt_regs *regs, long nr)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		syscall_enter_log(p, admit, regs, nr);
}

static void syscall_exit_log(struct magnet_probe *p, enum magnet_admit admit,
			     struct pt_regs *regs, long ret)
{
	struct magnet_syscall_exit e = {
		.nr = syscall_get_nr(current, regs),
		.ret = ret,
	};

	magnet_event_log_admitted(&p->ev, admit, e.nr, &e, sizeof(e), NULL);
}

static void predef_syscall_exit(void *data, struct pt_regs *regs, long ret)
{
	struct magnet_probe *p = data;
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		syscall_exit_log(p, admit, regs, ret);
}

static void skb_log(struct magnet_probe *p, enum magnet_admit admit,
		    const struct sk_buff *skb, u32 len,
		    const struct net_device *dev, u16 protocol, s32 result,
		    u64 location, const struct sk_buff *object)
{
	struct magnet_skb e = {
		.len = len,
		.ifindex = dev ? dev->ifindex : 0,
		.protocol = protocol,
		.result = result,
		.location = location,
	};

	magnet_event_log_admitted(&p->ev, admit, (unsigned long)skb, &e,
				  sizeof(e), object);
}

/* @object: the packet, for filters; NULL where it may be gone. */
static void log_skb(struct magnet_probe *p, const struct sk_buff *skb,
		    u32 len, const struct net_device *dev, u16 protocol,
		    s32 result, u64 location, const struct sk_buff *object)
{
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		skb_log(p, admit, skb, len, dev, protocol, result, location,
			object);
}

static void predef_netif_receive(void *data, struct sk_buff *skb)
{
	log_skb(data, skb, skb->len, skb->dev, ntohs(skb->protocol), 0, 0,
		skb);
}

static void predef_net_start_xmit(void *data, const struct sk_buff *skb,
				  const struct net_device *dev)
{
	log_skb(data, skb, skb->len, dev, ntohs(skb->protocol), 0, 0, skb);
}

/* The packet may be gone already: use only what the tracepoint passes. */
static void predef_net_xmit(void *data, struct sk_buff *skb, int rc,
			    struct net_device *dev, unsigned int skb_len)
{
	log_skb(data, skb, skb_len, dev, 0, rc, 0, NULL);
}

static void predef_skb_free(void *data, struct sk_buff *skb, void *location,
			    enum skb_drop_reason reason)
{
	log_skb(data, skb, skb->len, skb->dev, ntohs(skb->protocol), reason,
		(unsigned long)location, skb);
}

static void tcp_send_log(struct magnet_probe *p, enum magnet_admit admit,
			 struct pt_regs *regs)
{
	unsigned long sk = regs_get_kernel_argument(regs, 0);
	struct magnet_tcp_send e = {
		.size = regs_get_kernel_argument(regs, 2),
	};

	magnet_event_log_admitted(&p->ev, admit, sk, &e, sizeof(e),
				  (void *)sk);
}

static int predef_tcp_send(struct kprobe *kp, struct pt_regs *regs)
{
	struct magnet_probe *p = container_of(kp, struct magnet_probe, kp);
	enum magnet_admit admit = magnet_event_admit(&p->ev);

	if (admit != MAGNET_ADMIT_NO)
		tcp_send_log(p, admit, regs);
	return 0;
}

static const struct magnet_predef magnet_predefs[] = {
	{ "sched_switch", MAGNET_PROBE_TRACEPOINT, "sched_switch",
	  "context switch: both tasks, prev's state (struct magnet_sched_switch)",
	  predef_sched_switch },
	{ "process_fork", MAGNET_PROBE_TRACEPOINT, "sched_process_fork",
	  "new task (struct magnet_process_fork)", predef_process_fork },
	{ "process_exit", MAGNET_PROBE_TRACEPOINT, "sched_process_exit",
	  "task exit and its code (struct magnet_process_exit)",
	  predef_process_exit },
	{ "syscall_enter", MAGNET_PROBE_TRACEPOINT, "sys_enter",
	  "system call entry: number and arguments (struct magnet_syscall_enter)",
	  predef_syscall_enter },
	{ "syscall_exit", MAGNET_PROBE_TRACEPOINT, "sys_exit",
	  "system call return value (struct magnet_syscall_exit)",
	  predef_syscall_exit },
	{ "netif_receive", MAGNET_PROBE_TRACEPOINT, "netif_receive_skb",
	  "packet received by the stack (struct magnet_skb)",
	  predef_netif_receive, .object_type = MAGNET_OBJECT_SKB_RX },
	{ "net_start_xmit", MAGNET_PROBE_TRACEPOINT, "net_dev_start_xmit",
	  "packet about to be handed to a driver (struct magnet_skb)",
	  predef_net_start_xmit, .object_type = MAGNET_OBJECT_SKB },
	{ "net_xmit", MAGNET_PROBE_TRACEPOINT, "net_dev_xmit",
	  "packet handed to a driver, and its verdict (struct magnet_skb)",
	  predef_net_xmit },
	{ "skb_free", MAGNET_PROBE_TRACEPOINT, "kfree_skb",
	  "packet dropped, where and why (struct magnet_skb)",
	  predef_skb_free, .object_type = MAGNET_OBJECT_SKB },
	{ "tcp_send", MAGNET_PROBE_KPROBE, "tcp_sendmsg",
	  "TCP send call: socket and size (struct magnet_tcp_send)",
	  NULL, predef_tcp_send, .object_type = MAGNET_OBJECT_SOCK },
	{ "app.span", MAGNET_PROBE_USER, MAGNET_SPAN_DEVICE,
	  "an application's span begun, ended or annotated (struct magnet_span)" },
	{ "cpu.sample", MAGNET_PROBE_SAMPLE, "hrtimer",
	  "what each CPU runs, on a timer: task, addresses, stacks (struct magnet_sample)" },
};

/*
 * The catalog: the entries above, then the packet probes (packet.c), then
 * the block probes (block.c).
 */
const struct magnet_predef *magnet_predef_at(unsigned int i)
{
	if (i < ARRAY_SIZE(magnet_predefs))
		return &magnet_predefs[i];
	i -= ARRAY_SIZE(magnet_predefs);
	if (i < magnet_packet_predefs_count)
		return &magnet_packet_predefs[i];
	i -= magnet_packet_predefs_count;
	return i < magnet_block_predefs_count ? &magnet_block_predefs[i] :
						NULL;
}

static const struct magnet_predef *predef_find(const char *name)
{
	const struct magnet_predef *p;
	unsigned int i;

	for (i = 0; (p = magnet_predef_at(i)); i++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

/* --- hooks ------------------------------------------------------------------ */

struct tracepoint_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void tracepoint_match(struct tracepoint *tp, void *priv)
{
	struct tracepoint_lookup *l = priv;

	if (!strcmp(tp->name, l->name))
		l->tp = tp;
}

static void *tracepoint_handler(struct magnet_probe *p)
{
	if (!p->predef)
		return tracepoint_generic;
	if (p->predef->packet)
		return predef_packet_tp;
	return p->predef->block ? predef_block_tp : p->predef->tp_handler;
}

static int probe_enable(struct magnet_event *ev)
{
	struct magnet_probe *p = to_probe(ev);
	int err;

	switch (ev->kind) {
	case MAGNET_PROBE_KPROBE:
		if (p->dispatch == MAGNET_DISPATCH_FTRACE)
			return magnet_fentry_attach(&p->fentry,
						    (unsigned long)p->kp.addr);
		return enable_kprobe(&p->kp);
	case MAGNET_PROBE_KRETPROBE:
		return enable_kretprobe(&p->rp);
	case MAGNET_PROBE_TRACEPOINT:
		err = tracepoint_probe_register(p->tp, tracepoint_handler(p), p);
		if (!err)
			p->tp_registered = true;
		return err;
	case MAGNET_PROBE_USER:
		magnet_span_attach(&p->span, &p->ev);
		return 0;
	case MAGNET_PROBE_SAMPLE:
		return magnet_sample_attach(&p->sample, &p->ev);
	default:
		return -EINVAL;
	}
}

static void probe_disable(struct magnet_event *ev)
{
	struct magnet_probe *p = to_probe(ev);

	switch (ev->kind) {
	case MAGNET_PROBE_KPROBE:
		if (p->dispatch != MAGNET_DISPATCH_FTRACE)
			disable_kprobe(&p->kp);
		else if (p->fentry.fe)
			magnet_fentry_detach(&p->fentry);
		break;
	case MAGNET_PROBE_KRETPROBE:
		disable_kretprobe(&p->rp);
		break;
	case MAGNET_PROBE_TRACEPOINT:
		if (p->tp_registered)
			tracepoint_probe_unregister(p->tp,
						    tracepoint_handler(p), p);
		p->tp_registered = false;
		break;
	case MAGNET_PROBE_USER:
		magnet_span_detach(&p->span);	/* waits for writers */
		break;
	case MAGNET_PROBE_SAMPLE:
		magnet_sample_detach(&p->sample);	/* waits for ticks */
		break;
	default:
		break;
	}
}

static const struct magnet_event_ops probe_ops = {
	.enable = probe_enable,
	.disable = probe_disable,
};

/* "symbol" or "symbol+offset" into p->symbol and the kprobe's offset. */
static int parse_target(struct magnet_probe *p, struct kprobe *kp,
			struct netlink_ext_ack *extack)
{
	char *plus;
	unsigned int offset = 0;

	strscpy(p->symbol, p->target, sizeof(p->symbol));
	plus = strchr(p->symbol, '+');
	if (plus) {
		*plus++ = '\0';
		if (kstrtouint(plus, 0, &offset)) {
			NL_SET_ERR_MSG(extack,
				       "probe target: offset after '+' is not a number");
			return -EINVAL;
		}
	}
	if (!*p->symbol) {
		NL_SET_ERR_MSG(extack, "probe target: no symbol");
		return -EINVAL;
	}
	if (offset && p->ev.kind == MAGNET_PROBE_KRETPROBE) {
		NL_SET_ERR_MSG(extack,
			       "a kretprobe goes on a function's entry: no +offset");
		return -EINVAL;
	}
	kp->symbol_name = p->symbol;
	kp->offset = offset;
	return 0;
}

static void kprobe_error(int err, struct netlink_ext_ack *extack)
{
	switch (err) {
	case -ENOENT:
		NL_SET_ERR_MSG(extack, "no such symbol in the kernel");
		break;
	case -EINVAL:
		NL_SET_ERR_MSG(extack,
			       "kprobes refuses this address (blacklisted or not kernel code)");
		break;
	case -EILSEQ:
		NL_SET_ERR_MSG(extack,
			       "offset is not on an instruction boundary");
		break;
	case -EEXIST:
		NL_SET_ERR_MSG(extack, "kprobe already registered");
		break;
	default:
		NL_SET_ERR_MSG(extack, "kprobes could not register the probe");
		break;
	}
}

/*
 * The next alternative of a target list "a|b|c" (a predefined probe's):
 * copied to @sym (MAGNET_TARGET_LEN bytes); false after the last.
 */
static bool target_next(const char **next, char *sym)
{
	size_t len = strcspn(*next, "|");

	if (!**next)
		return false;
	strscpy(sym, *next, min_t(size_t, len + 1, MAGNET_TARGET_LEN));
	*next += len + ((*next)[len] == '|');
	return true;
}

/*
 * A kprobe on p->target, which for a predefined probe may list
 * alternatives ("a|b"): the first symbol the kernel has. p->target then
 * names it. It is registered disabled: it resolves and vets the address.
 */
static int kprobe_register_first(struct magnet_probe *p,
				 struct netlink_ext_ack *extack)
{
	char list[MAGNET_TARGET_LEN];
	const char *next = list;
	int err = -ENOENT;

	strscpy(list, p->target, sizeof(list));
	while (err == -ENOENT && target_next(&next, p->target)) {
		memset(&p->kp, 0, sizeof(p->kp));
		err = parse_target(p, &p->kp, extack);
		if (err)
			return err;
		p->kp.pre_handler = kprobe_hit;
		p->kp.flags = KPROBE_FLAG_DISABLED;
		err = register_kprobe(&p->kp);
	}
	if (err == -ENOENT && strchr(list, '|'))
		NL_SET_ERR_MSG(extack,
			       "none of the probe's functions is in this kernel");
	else if (err)
		kprobe_error(err, extack);
	return err;
}

/*
 * A kprobe probe: the kprobe, then how its handler is called (enum
 * magnet_probe_dispatch), then, if @enabled, armed that way.
 */
static int kprobe_hook_register(struct magnet_probe *p, u8 dispatch,
				bool enabled, struct netlink_ext_ack *extack)
{
	bool ftrace;
	int err;

	err = kprobe_register_first(p, extack);
	if (err)
		return err;
	/* kprobes put it on the function's ftrace call site: our ops can. */
	ftrace = magnet_fentry_site(&p->kp);
	if (dispatch == MAGNET_DISPATCH_FTRACE && !ftrace) {
		NL_SET_ERR_MSG(extack,
			       "ftrace dispatch needs a function's entry with an ftrace call site (no offset); use kprobe");
		err = -EOPNOTSUPP;
		goto unregister;
	}
	p->dispatch = ftrace && dispatch != MAGNET_DISPATCH_KPROBE ?
		      MAGNET_DISPATCH_FTRACE : MAGNET_DISPATCH_KPROBE;
	if (!enabled)
		return 0;
	err = probe_enable(&p->ev);
	if (!err)
		return 0;
	if (p->dispatch == MAGNET_DISPATCH_FTRACE)
		NL_SET_ERR_MSG(extack, "ftrace could not attach to the function");
	else
		NL_SET_ERR_MSG(extack, "kprobes could not arm the probe");
unregister:
	unregister_kprobe(&p->kp);
	return err;
}

/* The kernel's tracepoint @name (built in: modules' are not looked at). */
struct tracepoint *magnet_tracepoint_find(const char *name)
{
	struct tracepoint_lookup l = { .name = name };

	for_each_kernel_tracepoint(tracepoint_match, &l);
	return l.tp;
}

/**
 * magnet_predef_resolve - what the running kernel uses for a catalog entry
 * @p:		the entry
 * @used:	receives its tracepoint, or the first function of its target
 *		list that kprobes accepts here (MAGNET_TARGET_LEN bytes)
 *
 * The same choice a probe of the entry makes when it is added: each
 * function is tried with a disabled kprobe, registered and removed again
 * (which waits for an RCU grace period). Process context.
 * Return: 0, -ENOENT if the kernel has none of them, or kprobes' error
 * for the first it has (a probe of the entry would fail with it too).
 */
int magnet_predef_resolve(const struct magnet_predef *p, char *used)
{
	const char *next = p->target;
	int err = -ENOENT;
	struct kprobe kp;

	if (p->kind == MAGNET_PROBE_TRACEPOINT) {
		if (!magnet_tracepoint_find(p->target))
			return -ENOENT;
		strscpy(used, p->target, MAGNET_TARGET_LEN);
		return 0;
	}
	if (p->kind == MAGNET_PROBE_USER || p->kind == MAGNET_PROBE_SAMPLE) {
		strscpy(used, p->target, MAGNET_TARGET_LEN);
		return 0;
	}
	while (err == -ENOENT && target_next(&next, used)) {
		memset(&kp, 0, sizeof(kp));
		kp.symbol_name = used;
		kp.flags = KPROBE_FLAG_DISABLED;	/* never fires */
		err = register_kprobe(&kp);
		if (!err)
			unregister_kprobe(&kp);
	}
	return err;
}

/* noinline: a fault-injection point (fail_function), see below */
static noinline int hook_register(struct magnet_probe *p, u8 dispatch,
				  bool enabled, struct netlink_ext_ack *extack)
{
	int err;

	switch (p->ev.kind) {
	case MAGNET_PROBE_KPROBE:
		return kprobe_hook_register(p, dispatch, enabled, extack);
	case MAGNET_PROBE_KRETPROBE:
		err = parse_target(p, &p->rp.kp, extack);
		if (err)
			return err;
		if (p->predef && p->predef->packet) {
			p->rp.handler = packet_kretprobe_return;
		} else {
			p->rp.entry_handler = kretprobe_entry;
			p->rp.handler = kretprobe_return;
			p->rp.data_size = sizeof(struct ret_entry);
		}
		/* Calls that may sleep in the probed function each hold one. */
		p->rp.maxactive = max_t(int, 64, 4 * num_possible_cpus());
		if (!enabled)
			p->rp.kp.flags = KPROBE_FLAG_DISABLED;
		err = register_kretprobe(&p->rp);
		if (err)
			kprobe_error(err, extack);
		return err;
	case MAGNET_PROBE_TRACEPOINT:
		p->tp = magnet_tracepoint_find(p->target);
		if (!p->tp) {
			NL_SET_ERR_MSG(extack,
				       "no such tracepoint in the kernel (module tracepoints are not supported)");
			return -ENOENT;
		}
		if (!enabled)
			return 0;
		err = probe_enable(&p->ev);
		if (err)
			NL_SET_ERR_MSG(extack,
				       "the tracepoint refused the handler");
		return err;
	case MAGNET_PROBE_USER:
		return enabled ? probe_enable(&p->ev) : 0;
	case MAGNET_PROBE_SAMPLE:
		err = enabled ? probe_enable(&p->ev) : 0;
		if (err)
			NL_SET_ERR_MSG(extack,
				       "cannot start the sampling timers");
		return err;
	default:
		NL_SET_ERR_MSG(extack, "unknown probe kind");
		return -EINVAL;
	}
}

ALLOW_ERROR_INJECTION(hook_register, ERRNO);

/* Unregister the hook and wait until none of its handlers runs. */
static void hook_unregister(struct magnet_probe *p)
{
	switch (p->ev.kind) {
	case MAGNET_PROBE_KPROBE:
		if (p->fentry.fe)
			magnet_fentry_detach(&p->fentry); /* waits too */
		unregister_kprobe(&p->kp);	/* waits for handlers */
		break;
	case MAGNET_PROBE_KRETPROBE:
		unregister_kretprobe(&p->rp);	/* waits for handlers */
		break;
	case MAGNET_PROBE_TRACEPOINT:
		probe_disable(&p->ev);
		tracepoint_synchronize_unregister();
		break;
	case MAGNET_PROBE_USER:
	case MAGNET_PROBE_SAMPLE:
		probe_disable(&p->ev);
		break;
	default:
		break;
	}
}

static int sampler_check(const struct magnet_probe_spec *spec,
			 const struct magnet_predef *predef,
			 struct netlink_ext_ack *extack)
{
	if (predef->kind != MAGNET_PROBE_SAMPLE) {
		if (!spec->sampler)
			return 0;
		NL_SET_ERR_MSG(extack,
			       "a period and a stack depth are for cpu.sample only");
		return -EINVAL;
	}
	if (spec->period < MAGNET_SAMPLE_PERIOD_MIN ||
	    spec->period > MAGNET_SAMPLE_PERIOD_MAX) {
		NL_SET_ERR_MSG(extack,
			       "the period is 100000 ns (10 kHz) to 1 s");
		return -ERANGE;
	}
	if (spec->depth > MAGNET_SAMPLE_DEPTH_MAX) {
		NL_SET_ERR_MSG(extack, "a stack depth is 0 to 64 frames");
		return -ERANGE;
	}
	return 0;
}

static int spec_check(const struct magnet_probe_spec *spec,
		      const struct magnet_predef **predef,
		      struct netlink_ext_ack *extack)
{
	unsigned int max_args = MAGNET_PROBE_ARGS_MAX;

	*predef = NULL;
	if (spec->predef) {
		*predef = predef_find(spec->predef);
		if (!*predef) {
			NL_SET_ERR_MSG(extack,
				       "no predefined probe of that name (see the catalog)");
			return -ENOENT;
		}
		if (spec->dispatch && (*predef)->kind != MAGNET_PROBE_KPROBE) {
			NL_SET_ERR_MSG(extack,
				       "dispatch is for kprobes only: this predefined probe is not one");
			return -EINVAL;
		}
		if (spec->nargs || spec->id_arg) {
			NL_SET_ERR_MSG(extack,
				       "argument recording is for generic probes only");
			return -EINVAL;
		}
		return sampler_check(spec, *predef, extack);
	}
	if (spec->sampler) {
		NL_SET_ERR_MSG(extack,
			       "a period and a stack depth are for cpu.sample only");
		return -EINVAL;
	}
	if (spec->dispatch && spec->kind != MAGNET_PROBE_KPROBE) {
		NL_SET_ERR_MSG(extack, "dispatch is for kprobes only");
		return -EINVAL;
	}
	if (spec->kind == MAGNET_PROBE_TRACEPOINT)
		max_args = MAGNET_TRACEPOINT_ARGS_MAX;
	if (spec->nargs > max_args) {
		NL_SET_ERR_MSG(extack,
			       "too many arguments (6 for kprobes and kretprobes, 5 for tracepoints)");
		return -ERANGE;
	}
	if (spec->id_arg > spec->nargs) {
		NL_SET_ERR_MSG(extack,
			       "the id argument must be one of the arguments recorded");
		return -ERANGE;
	}
	return 0;
}

/**
 * magnet_probe_create - add a probe
 * @spec:	what to add (validated here)
 * @extack:	receives the reason of a failure
 *
 * Caller holds magnet_events_lock.
 * Return: the probe's event, or an ERR_PTR; on error nothing is left.
 */
struct magnet_event *magnet_probe_create(const struct magnet_probe_spec *spec,
					 struct netlink_ext_ack *extack)
{
	const struct magnet_predef *predef;
	struct magnet_probe *p;
	int err;

	lockdep_assert_held(&magnet_events_lock);
	err = spec_check(spec, &predef, extack);
	if (err)
		return ERR_PTR(err);
	if (spec->session && magnet_events_in_session(spec->session) >=
			     magnet_session_max_probes()) {
		NL_SET_ERR_MSG(extack,
			       "the session has max_session_probes probes (a module parameter)");
		return ERR_PTR(-ENOSPC);
	}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return ERR_PTR(-ENOMEM);
	p->predef = predef;
	p->nargs = spec->nargs;
	p->id_arg = spec->id_arg;
	p->sample.period = spec->period;
	p->sample.depth = spec->depth;
	p->ev.kind = predef ? predef->kind : spec->kind;
	strscpy(p->target, predef ? predef->target : spec->target,
		sizeof(p->target));
	strscpy(p->ev.name, spec->name, sizeof(p->ev.name));
	p->ev.snaplen = spec->snaplen;
	p->ev.notify = spec->notify;
	p->ev.object_type = predef ? predef->object_type : MAGNET_OBJECT_NONE;
	p->ev.ops = &probe_ops;
	p->ev.owner = THIS_MODULE;
	p->ev.owner_portid = spec->owner_portid;
	p->ev.session = spec->session;

	err = magnet_event_add(&p->ev, spec->buffer);
	if (err) {
		if (err == -EEXIST)
			NL_SET_ERR_MSG(extack, "a probe of that name exists");
		else if (err == -ENOENT)
			NL_SET_ERR_MSG(extack, "no buffer of that name");
		else if (err == -ENOSPC)
			NL_SET_ERR_MSG(extack, "no event id left");
		else if (err == -EINVAL)
			NL_SET_ERR_MSG(extack, "bad probe name");
		kfree(p);
		return ERR_PTR(err);
	}
	/* Logging is on before the hook is armed: no early hit is ignored. */
	p->ev.enabled = spec->enabled;
	err = hook_register(p, spec->dispatch, spec->enabled, extack);
	if (err) {
		p->ev.enabled = false;
		magnet_event_del(&p->ev);
		kfree(p);
		return ERR_PTR(err);
	}
	return &p->ev;
}

/* Remove a probe (not an external event). Caller holds magnet_events_lock. */
void magnet_probe_destroy(struct magnet_event *ev)
{
	struct magnet_probe *p = to_probe(ev);

	lockdep_assert_held(&magnet_events_lock);
	WRITE_ONCE(ev->enabled, false);
	hook_unregister(p);
	magnet_event_del(ev);
	kfree(p);
}

void magnet_probes_destroy_all(void)
{
	struct magnet_event *ev;
	u16 id = 1;

	mutex_lock(&magnet_events_lock);
	while ((ev = magnet_event_next(&id))) {
		if (is_probe(ev))
			magnet_probe_destroy(ev);
		else
			pr_warn("event %s of module %s still registered\n",
				ev->name, module_name(ev->owner));
		if (id == MAGNET_EVENT_ID_MAX)
			break;
		id++;
	}
	mutex_unlock(&magnet_events_lock);
}

/*
 * Remove the probes netlink socket @portid owned (it has closed), or if
 * @portid is 0 those of session @session (it ended).
 */
void magnet_probes_release(u32 portid, u32 session)
{
	struct magnet_event *ev;
	u16 id = 1;

	mutex_lock(&magnet_events_lock);
	while ((ev = magnet_event_next(&id))) {
		if (is_probe(ev) && (portid ? ev->owner_portid == portid :
					      ev->session == session))
			magnet_probe_destroy(ev);
		if (id == MAGNET_EVENT_ID_MAX)
			break;
		id++;
	}
	mutex_unlock(&magnet_events_lock);
}

const char *magnet_probe_target(struct magnet_event *ev)
{
	return is_probe(ev) ? to_probe(ev)->target : NULL;
}

const struct magnet_predef *magnet_probe_predef(struct magnet_event *ev)
{
	return is_probe(ev) ? to_probe(ev)->predef : NULL;
}

void magnet_probe_args(struct magnet_event *ev, u8 *nargs, u8 *id_arg)
{
	*nargs = is_probe(ev) ? to_probe(ev)->nargs : 0;
	*id_arg = is_probe(ev) ? to_probe(ev)->id_arg : 0;
}

/* A sampling probe's period and depth: false for any other event. */
bool magnet_probe_sampler(struct magnet_event *ev, u64 *period, u8 *depth)
{
	if (ev->kind != MAGNET_PROBE_SAMPLE)
		return false;
	*period = to_probe(ev)->sample.period;
	*depth = to_probe(ev)->sample.depth;
	return true;
}

u64 magnet_probe_missed(struct magnet_event *ev)
{
	struct magnet_probe *p;

	if (!is_probe(ev))
		return 0;
	p = to_probe(ev);
	switch (ev->kind) {
	case MAGNET_PROBE_KPROBE:
		if (p->dispatch == MAGNET_DISPATCH_FTRACE)
			return magnet_fentry_missed(&p->fentry);
		return p->kp.nmissed;
	case MAGNET_PROBE_KRETPROBE:
		return p->rp.kp.nmissed + p->rp.nmissed;
	default:
		return 0;
	}
}

/* How a kprobe probe's handler is called; -1 for anything else. */
int magnet_probe_dispatch(struct magnet_event *ev)
{
	if (ev->kind != MAGNET_PROBE_KPROBE)
		return -1;
	return to_probe(ev)->dispatch;
}

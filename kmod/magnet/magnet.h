/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: the module's internal interfaces.
 */
#ifndef _MAGNET_INTERNAL_H
#define _MAGNET_INTERNAL_H

#include <linux/bits.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/netlink.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/magnet.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <asm/local.h>

#include "rules.h"

#if BITS_PER_LONG != 64
#error "magnet's ring positions are 64-bit; 32-bit kernels are not supported"
#endif

/* Writers nested deeper than this on one CPU are refused (and counted). */
#define MAGNET_MAX_NESTING	8

#define MAGNET_RING_MIN		4096UL		/* per-CPU bytes */
#define MAGNET_RING_MAX		BIT(30)
#define MAGNET_NAME_MAX		MAGNET_NAME_LEN	/* names, with their NUL */
static_assert(MAGNET_RING_MIN == MAGNET_BUFFER_SIZE_MIN);
static_assert(MAGNET_RING_MAX == MAGNET_BUFFER_SIZE_MAX);

/*
 * struct magnet_ring - one CPU's circular buffer
 *
 * Positions (head, commit, tail) count bytes since the ring was created
 * and never wrap (64 bits); the offset in @data is position & @mask.
 *
 * @pub is the page before @data, in one vmalloc'd area that a data file
 * maps read-only (struct magnet_ring_pub in the uapi header): @commit,
 * @tail and @lost_seen live there, for a mapping reader to see.
 *
 * Writer side, touched only by code running on @cpu with preemption
 * disabled, possibly nested (task < softirq < hardirq < NMI):
 * @head:	end of the space reserved so far.
 * @nesting:	writers currently between reserve and commit on this CPU.
 * @pub->commit: end of the published bytes: everything below it is whole,
 *		committed records. Only the outermost writer advances it.
 * @written:	records reserved and committed.
 * (Records produced = @written + @dropped, see magnet_ring_produced().)
 * @dropped:	records refused: ring full or writers nested too deep.
 * @overwritten: records evicted unread (overwrite mode).
 * @lost_logged: loss total last written into the stream by a writer.
 * @tail_seen:	drop mode: @tail as the writer last read it (writer.h).
 *
 * Wake-up thresholds, written by the reading side, read by writers:
 * @wake_pos:	queue @wake_work once @commit reaches this position.
 * @wake_written: ... or once @written reaches this count.
 *
 * Reading side (the buffer's single reader, any CPU):
 * @pub->tail:	start of the oldest unread record. In overwrite mode
 *		writers on @cpu move it too, so it is only ever advanced by
 *		cmpxchg there.
 * @read:	records consumed by the reader.
 * @discarded:	records consumed but not delivered (reader fault).
 * @pub->lost_seen: loss total already reported to the reader.
 * @last_ts:	timestamp of the last record the reader got.
 */
static_assert(sizeof(struct magnet_ring_pub) <= PAGE_SIZE);
static_assert(offsetof(struct magnet_ring_pub, tail) == 64);

struct magnet_ring {
	local_t head;
	local_t nesting;
	local_t written;
	local_t dropped;
	local_t overwritten;
	struct magnet_ring_pub *pub;
	unsigned long lost_logged;
	unsigned long tail_seen;
	void *data;
	unsigned long mask;

	unsigned long wake_pos ____cacheline_aligned_in_smp;
	unsigned long wake_written;

	unsigned long read ____cacheline_aligned_in_smp;
	unsigned long discarded;
	u64 last_ts;

	struct irq_work wake_work;
	struct magnet_buffer *buf;
	unsigned int cpu;
};

/* The read attributes and wake-up condition of a buffer's reader. */
struct magnet_watermarks {
	unsigned long bytes;
	unsigned long records;
};

/*
 * struct magnet_buffer - a named set of per-CPU rings
 * @rings:	per-CPU ring pointers, indexed by CPU number.
 * @ring_size:	bytes per CPU, a power of two.
 * @max_record:	largest record (header + payload) accepted, bytes.
 * @wake:	the reader's current wake-up condition, used by the
 *		irq_work that decides whether to wake it.
 * @reader_busy: bit 0 set while a reader (file or kernel) is attached.
 * @dead:	set once the buffer is being destroyed; readers get EOF.
 * @events:	events that log into the buffer; it cannot be removed while
 *		there are any. Under magnet_buffers_lock.
 */
struct magnet_buffer {
	struct magnet_ring **rings;
	unsigned long ring_size;
	u32 max_record;
	enum magnet_full_mode mode;
	char name[MAGNET_NAME_MAX];

	struct magnet_watermarks wake;
	wait_queue_head_t wait;
	struct fasync_struct *fasync;
	struct magnet_recheck {		/* see magnet_buffer_wait_prepare() */
		struct rcu_head rcu;
		unsigned long queued;	/* bit 0: @rcu is queued */
		atomic_long_t asked;	/* waits that asked for a recheck */
		unsigned long covered;	/* @asked when @rcu was queued */
		bool used, stop;
	} recheck;
	unsigned long reader_busy;
	bool dead;
	unsigned int events;
	u32 owner_portid;	/* MAGNET_A_OWNED: its socket, else 0 */
	u32 session;		/* its names' session (session.c), 0: default */

	struct kref ref;
	struct list_head node;
	struct dentry *data_file;
};

/*
 * struct magnet_reader - the one reader attached to a buffer
 * @lock:	serialises reads by threads sharing the reader.
 * @next_cpu:	CPU whose ring the next read starts with (fairness).
 * @bounce:	copy of a record taken before consuming it (overwrite mode).
 */
struct magnet_reader {
	struct magnet_buffer *buf;
	struct mutex lock;	/* see above */
	unsigned int next_cpu;
	struct magnet_watermarks wm;
	u64 timeout_us;
	void *bounce;
};

/*
 * struct magnet_sink - where magnet_read_records() delivers records
 * @room:	bytes the sink can still take; records are charged
 *		ALIGN(size, MAGNET_RECORD_ALIGN).
 * @records:	records the sink took (its @deliver counts them).
 * @deliver:	takes one record; returns 0, > 0 to stop after it, or a
 *		negative errno (the record is then counted as discarded).
 */
struct magnet_sink {
	unsigned long room;
	long records;
	int (*deliver)(struct magnet_sink *sink,
		       const struct magnet_record *rec);
};

/*
 * Per-CPU counters of an event, summed when read (see enum
 * magnet_stat_attr). Every hit ends in exactly one of logged, filtered,
 * sampled or lost and bumps only that counter: hits are their sum
 * (magnet_event_stats_sum()).
 * @sample_seen: hits that reached sampling on this CPU (1 in N is kept
 *		of each CPU's hits)
 */
struct magnet_event_stats {
	u64 logged;
	u64 filtered;
	u64 sampled;
	u64 lost;
	u64 sample_seen;
};

/* An event's counters as reported. */
struct magnet_event_totals {
	u64 hits;
	u64 logged;
	u64 filtered;
	u64 sampled;
	u64 lost;
};

/*
 * struct magnet_event - anything that logs records under an event id:
 * magnet's probes and other modules' events.
 * @id:		event id, the record's @event field.
 * @enabled:	logging on; read locklessly by magnet_event_admit().
 * @notify:	copy each record to the notification queue.
 * @snaplen:	payload bytes kept, 0 = all.
 * @object_type: what its hits are about, for filter modules.
 * @gate:	its rules and sampling compiled for the hot path (rules.c),
 *		NULL when it has neither; read with preemption disabled
 *		(RCU-sched), replaced whole.
 * @rules:	its filter rules as configured (filter.c), under
 *		magnet_events_lock; hits see them through @gate.
 * @sample_every, @sample_interval: sampling as configured (see
 *		MAGNET_A_SAMPLE_*), under magnet_events_lock.
 * @sample_last: when the last hit was kept, for SAMPLE_INTERVAL.
 * @buf:	where its records go; the event holds it (buffer->events).
 * @ops:	enable/disable hooks, NULL for none.
 * @owner:	the module that registered it (magnet itself for probes).
 *
 * The registry (id, name, list) and @enabled changes are under
 * magnet_events_lock.
 */
struct magnet_event {
	u16 id;
	bool enabled;
	bool notify;
	u32 snaplen;
	enum magnet_probe_kind kind;
	enum magnet_object_type object_type;
	struct magnet_gate __rcu *gate;
	struct magnet_ruleset *rules;
	u32 sample_every;
	u64 sample_interval;
	atomic64_t sample_last;
	struct magnet_buffer *buf;
	struct magnet_event_stats __percpu *stats;
	const struct magnet_event_ops *ops;
	void *priv;
	struct module *owner;
	u32 owner_portid;	/* MAGNET_A_OWNED: its socket, else 0 */
	u32 session;		/* its names' session (session.c), 0: default */
	char name[MAGNET_NAME_MAX];
};

/* What a new probe should be; see MAGNET_CMD_PROBE_NEW. */
struct magnet_probe_spec {
	const char *name;
	const char *buffer;
	const char *predef;
	const char *target;
	enum magnet_probe_kind kind;
	u8 nargs;
	u8 id_arg;
	u8 dispatch;		/* enum magnet_probe_dispatch */
	bool sampler;		/* period or depth given */
	u64 period;		/* cpu.sample: ns, 0 = default */
	u8 depth;		/* cpu.sample: frames */
	u32 snaplen;
	bool enabled;
	bool notify;
	u32 owner_portid;
	u32 session;
};

/* ring.c */
struct magnet_ring *magnet_ring_create(struct magnet_buffer *buf,
				       unsigned int cpu);
void magnet_ring_destroy(struct magnet_ring *ring);
int magnet_ring_read(struct magnet_reader *reader, struct magnet_ring *ring,
		     struct magnet_sink *sink);
void magnet_ring_available(struct magnet_ring *ring, unsigned long *bytes,
			   unsigned long *records);
int magnet_ring_consume(struct magnet_ring *ring, u64 pos,
			struct magnet_consume *c);
unsigned long magnet_ring_produced(struct magnet_ring *ring);
unsigned long magnet_ring_lost(struct magnet_ring *ring);

/* buffer.c */
extern struct mutex magnet_buffers_lock;
extern struct list_head magnet_buffers;
extern unsigned long magnet_memory_limit;
bool magnet_name_valid(const char *name);
bool magnet_buffer_size_valid(unsigned long ring_size);
int magnet_buffer_create(const char *name, unsigned long ring_size,
			 enum magnet_full_mode mode, u32 owner_portid,
			 u32 session);
int magnet_buffer_remove(u32 session, const char *name);
void magnet_buffers_release(u32 portid, u32 session);
struct magnet_buffer *magnet_buffer_get_for_event(u32 session,
						  const char *name);
unsigned int magnet_buffers_in_session(u32 session);
void magnet_buffer_put_for_event(struct magnet_buffer *buf);
void magnet_buffer_destroy(struct magnet_buffer *buf);
void magnet_buffers_destroy_all(void);
int magnet_buffers_from_param(const char *spec);
bool magnet_buffer_ready(struct magnet_buffer *buf,
			 const struct magnet_watermarks *wm);
bool magnet_buffer_wait_prepare(struct magnet_buffer *buf,
				const struct magnet_watermarks *wm);
void magnet_buffer_wake_work(struct irq_work *work);
int magnet_reader_attach(struct magnet_buffer *buf,
			 struct magnet_reader *reader);
void magnet_reader_detach(struct magnet_reader *reader);
long magnet_read_records(struct magnet_reader *reader,
			 struct magnet_sink *sink);

/* What a hit's handler learns before it builds the payload. */
enum magnet_admit {
	MAGNET_ADMIT_NO,	/* disabled, filtered or sampled away (counted) */
	MAGNET_ADMIT_YES,	/* to be logged */
	MAGNET_ADMIT_ASK,	/* the full rules decide, from the payload too */
};

enum magnet_admit magnet_gate_sample(struct magnet_event *ev,
				     const struct magnet_gate *gate);

/**
 * magnet_event_admit - the first thing a hit's handler does
 * @ev:		the hit's event
 *
 * Tests the hit against the event's gate: enabled, then the rules that
 * the CPU and the current task decide, then sampling. Anything else the
 * rules ask (ids, filter modules) is left for magnet_event_log_admitted()
 * or magnet_event_reserve() (MAGNET_ADMIT_ASK).
 *
 * Probe context, preemption disabled: the gate is freed an RCU grace
 * period after it is replaced, and a preemption-disabled region holds
 * that off. Inline, and calling nothing unless the event samples: under
 * emulation every call and return is dear, and a hit dropped here should
 * cost no more than reaching the handler did.
 */
static __always_inline enum magnet_admit
magnet_event_admit(struct magnet_event *ev)
{
	const struct magnet_gate *gate;

	if (!READ_ONCE(ev->enabled))
		return MAGNET_ADMIT_NO;
	gate = rcu_dereference_sched(ev->gate);
	if (likely(!gate))
		return MAGNET_ADMIT_YES;
	if (gate->nflat) {
		switch (magnet_gate_flat(gate, raw_smp_processor_id(),
					 current->tgid, current->pid)) {
		case MAGNET_VERDICT_DROP:
			this_cpu_inc(ev->stats->filtered);
			return MAGNET_ADMIT_NO;
		case MAGNET_VERDICT_EVALUATE:
			return MAGNET_ADMIT_ASK;
		case MAGNET_VERDICT_PASS:
			break;
		}
	}
	if (gate->sample_every > 1 || gate->sample_interval)
		return magnet_gate_sample(ev, gate);
	return MAGNET_ADMIT_YES;
}

/**
 * magnet_payload_copy - copy a payload into its record
 * @to:		the record's payload (8-byte aligned)
 * @from:	the payload
 * @len:	bytes
 *
 * Payloads are mostly a few words: those are copied by words, as a string
 * instruction (what memcpy() is on x86) costs more to start than it saves,
 * and far more under emulation. The copy of each word is a separate
 * access, so the compiler does not turn the loop back into memcpy().
 */
static __always_inline void magnet_payload_copy(void *to, const void *from,
						u32 len)
{
	if (len <= 64 && IS_ALIGNED(len, sizeof(u64))) {
		u64 *d = to, w;

		for (; len; len -= sizeof(u64), from += sizeof(u64)) {
			memcpy(&w, from, sizeof(w));	/* @from: any alignment */
			WRITE_ONCE(*d++, w);
		}
	} else {
		memcpy(to, from, len);
	}
}

/* event.c */
bool magnet_event_evaluate(struct magnet_event *ev, u64 id,
			   const void *payload, u32 size, const void *object);
int magnet_event_log_admitted(struct magnet_event *ev,
			      enum magnet_admit admit, u64 id,
			      const void *payload, u32 payload_size,
			      const void *object);
int magnet_event_log_flagged(struct magnet_event *ev,
			     enum magnet_admit admit, u64 id,
			     const void *payload, u32 payload_size,
			     const void *object, u16 rflags);
extern struct mutex magnet_events_lock;
int magnet_event_add(struct magnet_event *ev, const char *buffer);
void magnet_event_del(struct magnet_event *ev);
struct magnet_event *magnet_event_find(u16 id, u32 session, const char *name);
unsigned int magnet_events_in_session(u32 session);
struct magnet_event *magnet_event_next(u16 *id);
int magnet_event_set_enabled(struct magnet_event *ev, bool on);
void magnet_event_stats_sum(struct magnet_event *ev,
			    struct magnet_event_totals *sum);

/* filter.c */
struct genl_info;
bool magnet_gate_evaluate(struct magnet_event *ev,
			  const struct magnet_hit *hit);
struct magnet_gate *magnet_sampling_prepare(struct magnet_event *ev,
					    u32 every, u64 interval);
void magnet_sampling_set(struct magnet_event *ev, struct magnet_gate *gate,
			 u32 every, u64 interval);
int magnet_filter_new(struct magnet_event *ev, struct genl_info *info);
int magnet_filter_del(u32 id);
struct magnet_filter_rule *magnet_filter_next(u32 *id);
struct magnet_event *magnet_filter_event(const struct magnet_filter_rule *r);
int magnet_filter_fill(struct sk_buff *skb, const struct magnet_filter_rule *r);
void magnet_filters_remove_event(struct magnet_event *ev);

/* packet.c */
struct magnet_packet_point;
void magnet_packet_hit(struct magnet_event *ev,
		       const struct magnet_packet_point *pt,
		       unsigned long a0, unsigned long a1, unsigned long a2);

/* block.c */
struct magnet_block_point;
void magnet_block_hit(struct magnet_event *ev,
		      const struct magnet_block_point *pt,
		      unsigned long a0, unsigned long a1, unsigned long a2);

/* probe.c */

/*
 * struct magnet_predef - a predefined probe of the catalog
 * @target:	tracepoint, or kprobe symbol; a packet probe's kprobe target
 *		may list several symbols separated by '|': the first the
 *		kernel has is used
 * @packet:	a packet probe's point (packet.c); its handlers are then
 *		probe.c's packet handlers, not @tp_handler/@kp_handler
 * @block:	a block probe's point (block.c), a tracepoint's; its handler
 *		is then probe.c's block handler
 */
struct magnet_predef {
	const char *name;
	enum magnet_probe_kind kind;
	const char *target;
	const char *desc;
	void *tp_handler;
	int (*kp_handler)(struct kprobe *kp, struct pt_regs *regs);
	enum magnet_object_type object_type;
	const struct magnet_packet_point *packet;
	const struct magnet_block_point *block;
};

extern const struct magnet_predef magnet_packet_predefs[];
extern const unsigned int magnet_packet_predefs_count;
extern const struct magnet_predef magnet_block_predefs[];
extern const unsigned int magnet_block_predefs_count;
const struct magnet_predef *magnet_predef_at(unsigned int i);
int magnet_predef_resolve(const struct magnet_predef *p, char *used);
struct magnet_event *magnet_probe_create(const struct magnet_probe_spec *spec,
					 struct netlink_ext_ack *extack);
void magnet_probe_destroy(struct magnet_event *ev);
void magnet_probes_destroy_all(void);
void magnet_probes_release(u32 portid, u32 session);
struct tracepoint *magnet_tracepoint_find(const char *name);
const char *magnet_probe_target(struct magnet_event *ev);
const struct magnet_predef *magnet_probe_predef(struct magnet_event *ev);
void magnet_probe_args(struct magnet_event *ev, u8 *nargs, u8 *id_arg);
bool magnet_probe_sampler(struct magnet_event *ev, u64 *period, u8 *depth);
u64 magnet_probe_missed(struct magnet_event *ev);
struct magnet_fentry_user;
void magnet_probe_fentry_hit(struct magnet_fentry_user *u,
			     struct pt_regs *regs);
int magnet_probe_dispatch(struct magnet_event *ev);

/* fentry.c */
struct magnet_fentry;

/* Whose hook a struct magnet_fentry_user is: the function it calls. */
enum magnet_fentry_to {
	MAGNET_FENTRY_PROBE,	/* magnet_probe_fentry_hit() */
	MAGNET_FENTRY_ACCT,	/* magnet_acct_fentry_hit() */
};

/*
 * struct magnet_fentry_user - a hook on a function's ftrace_ops: while it
 *	is attached, every entry of the function calls @to's function with
 *	it and the argument registers (preemption off, RCU watching)
 * @fe, @node:	the function's ops and the place in its list; @fe is NULL
 *		while detached
 * @to:		enum magnet_fentry_to
 * @missed:	hits missed in earlier attachments
 * @missed_start: the function's missed count when this one attached
 */
struct magnet_fentry_user {
	struct magnet_fentry *fe;
	struct list_head node;
	u8 to;
	u64 missed;
	long missed_start;
};

struct kprobe;
unsigned long magnet_fentry_site(const struct kprobe *kp);
int magnet_fentry_attach(struct magnet_fentry_user *u, unsigned long ip);
void magnet_fentry_detach(struct magnet_fentry_user *u);
u64 magnet_fentry_missed(const struct magnet_fentry_user *u);

/* span.c */

/*
 * struct magnet_span_user - an app.span probe's hook on the span device:
 *	while it is attached, every well-formed write is logged into @ev
 * @node:	in the device's list (RCU)
 * @ev:		the probe's event
 * @attached:	in the list
 */
struct magnet_span_user {
	struct list_head node;
	struct magnet_event *ev;
	bool attached;
};

void magnet_span_attach(struct magnet_span_user *u, struct magnet_event *ev);
void magnet_span_detach(struct magnet_span_user *u);
int magnet_span_init(void);
void magnet_span_exit(void);

/* sample.c */

/*
 * struct magnet_sample_user - a cpu.sample probe's timers: while it is
 *	attached, each online CPU's ticks are logged into @ev
 * @node:	the instance of the sampling CPU hotplug state
 * @ev:		the probe's event
 * @cpu:	the timers, one per CPU (NULL: detached)
 * @period:	ns between ticks
 * @depth:	frames of each stack recorded
 */
struct magnet_sample_user {
	struct hlist_node node;
	struct magnet_event *ev;
	struct magnet_sample_cpu __percpu *cpu;
	u64 period;
	u8 depth;
};

int magnet_sample_attach(struct magnet_sample_user *u,
			 struct magnet_event *ev);
void magnet_sample_detach(struct magnet_sample_user *u);
int magnet_sample_init(void);
void magnet_sample_exit(void);

/* notify.c */
int magnet_notify_init(void);
void magnet_notify_exit(void);
void magnet_notify_queue(const struct magnet_record *rec);
void magnet_notify_counters(u64 *sent, u64 *dropped, u32 *rate);

/* netlink.c */
int magnet_netlink_init(void);
void magnet_netlink_exit(void);
int magnet_notify_send(const struct magnet_record *rec, u32 len);

/* fs.c */
int magnet_fs_init(void);
void magnet_fs_exit(void);
int magnet_fs_add_buffer(struct magnet_buffer *buf);
void magnet_fs_remove_buffer(struct magnet_buffer *buf);
int magnet_fs_add_session(u32 id, kuid_t uid);
void magnet_fs_remove_session(u32 id);

/* acct.c */
struct genl_family;
int magnet_acct_init(void);
void magnet_acct_exit(void);
int magnet_acct_watch_set(u32 nr, bool on, u32 owner,
			  struct netlink_ext_ack *extack);
void magnet_acct_release(u32 portid);
int magnet_acct_watch_dump(struct sk_buff *skb, struct netlink_callback *cb,
			   const struct genl_family *family);
int magnet_acct_watch_dump_done(struct netlink_callback *cb);
void magnet_acct_fentry_hit(struct magnet_fentry_user *u,
			    struct pt_regs *regs);

/* ledger.c */
int magnet_ledger_set(bool on, bool by_tgid, u32 owner,
		      struct netlink_ext_ack *extack);
void magnet_ledger_release(u32 portid);
int magnet_ledger_dump(struct sk_buff *skb, struct netlink_callback *cb,
		       const struct genl_family *family);
int magnet_ledger_dump_done(struct netlink_callback *cb);
void magnet_ledger_exit(void);

/* session.c */
struct magnet_session_info {
	u32 id;
	u32 uid;
	pid_t tgid;
};

int magnet_session_new(u32 portid, u32 *id);
int magnet_session_del(u32 id, u32 portid, bool admin);
void magnet_sessions_release(u32 portid);
int magnet_session_check(u32 id, u32 portid);
unsigned int magnet_session_max_buffers(void);
unsigned int magnet_session_max_probes(void);
bool magnet_session_at(long idx, struct magnet_session_info *info);
void magnet_sessions_exit(void);

#endif /* _MAGNET_INTERNAL_H */

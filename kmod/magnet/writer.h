/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: the writer, inline: the rings' writer half and events' records.
 *
 * ring.c describes the rings and their invariants; this is its writer
 * path, in a header so that a probe's handler has the whole of it inline:
 * one call per logged hit into the handler's log function, none below it
 * but the clock (under emulation every call and return is dear, and on
 * hardware the saved calls are a fifth of a logged record's cost).
 *
 * magnet_ring_reserve() checks nothing its callers have already checked:
 * the event id (fixed when the event was registered) and the record size
 * (cut by the caller to the buffer's largest record). The exported
 * magnet_reserve() checks both, for other modules.
 *
 * What the writer reads of the reader's side:
 * - @tail, in drop mode, to know the free space: through @tail_seen, a
 *   copy in the writer's own cache line, refreshed only when the copy says
 *   the record does not fit. A stale copy is lower than @tail (which only
 *   grows), so it can only make the writer look again, never overwrite.
 * - the wake-up thresholds: see ring_publish().
 */
#ifndef _MAGNET_WRITER_H
#define _MAGNET_WRITER_H

#include <linux/err.h>
#include <linux/hardirq.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include "magnet.h"

#define REC_HDR		sizeof(struct magnet_record)
#define LOSS_REC_SIZE	(REC_HDR + sizeof(struct magnet_loss))

static_assert(REC_HDR % MAGNET_RECORD_ALIGN == 0);
static_assert(LOSS_REC_SIZE % MAGNET_RECORD_ALIGN == 0);

bool magnet_ring_make_room(struct magnet_ring *ring, unsigned long new_head);

static inline struct magnet_record *ring_rec(struct magnet_ring *ring,
					     unsigned long pos)
{
	return ring->data + (pos & ring->mask);
}

static inline unsigned long rec_len(u32 size)
{
	return ALIGN(size, MAGNET_RECORD_ALIGN);
}

/*
 * Publish everything reserved so far and wake the reader if it asked.
 *
 * No full barrier between the @commit store and the loads of the wake-up
 * thresholds: a writer that misses thresholds the reader has just set
 * (the reader's stores not yet visible to it), while the reader misses
 * this @commit (ours not yet visible to it), does not wake the reader.
 * The reader closes that window itself, once per sleep rather than once
 * per record: magnet_buffer_wait_prepare() looks at the rings again after
 * an RCU grace period. Writers run with preemption disabled, so any
 * writer that loaded the old thresholds has finished, its @commit visible,
 * by the end of that grace period, and any writer after it sees the new
 * thresholds.
 */
static __always_inline void ring_publish(struct magnet_ring *ring,
					 unsigned long head)
{
	/* Pairs with smp_load_acquire(&ring->pub->commit) in the reader. */
	smp_store_release(&ring->pub->commit, head);
	/*
	 * The @commit store before any later @dropped count. Pairs with
	 * the smp_rmb() in magnet_ring_read(). (x86: a compiler barrier.)
	 */
	smp_wmb();
	if (unlikely(head >= READ_ONCE(ring->wake_pos) ||
		     local_read(&ring->written) >=
		     READ_ONCE(ring->wake_written)))
		irq_work_queue(&ring->wake_work);
}

/* End a writer's critical section; the outermost one publishes. */
static __always_inline void ring_end_write(struct magnet_ring *ring)
{
	unsigned long head;

again:
	head = local_read(&ring->head);
	barrier();	/* read head before nesting; interrupts only */
	if (local_read(&ring->nesting) == 1)
		ring_publish(ring, head);
	local_dec(&ring->nesting);
	barrier();
	/*
	 * A writer that interrupted us after we read @head but before the
	 * decrement saw nesting > 1 and left its record unpublished. If
	 * nobody else is writing now, publish it ourselves.
	 */
	if (unlikely(local_read(&ring->head) != head) &&
	    !local_read(&ring->nesting)) {
		local_inc(&ring->nesting);
		goto again;
	}
}

static __always_inline u16 context_flags(void)
{
	if (in_nmi())
		return MAGNET_RF_NMI;
	if (in_hardirq())
		return MAGNET_RF_HARDIRQ;
	if (in_serving_softirq())
		return MAGNET_RF_SOFTIRQ;
	return 0;
}

static __always_inline void fill_header(struct magnet_record *rec, u32 size,
					u16 event, u16 flags,
					unsigned int cpu, u64 id, u64 ts)
{
	rec->size = size;
	rec->event = event;
	rec->flags = flags;
	rec->cpu = cpu;
	rec->tgid = current->tgid;
	rec->tid = current->pid;
	rec->__reserved = 0;
	rec->id = id;
	rec->timestamp = ts;
}

/* Drop mode: does [.., @new_head) fit? Reads @tail only when in doubt. */
static __always_inline bool ring_fits(struct magnet_ring *ring,
				      unsigned long new_head,
				      unsigned long size)
{
	unsigned long tail;

	if (likely(new_head - READ_ONCE(ring->tail_seen) <= size))
		return true;
	/*
	 * Capacity invariant: head - tail <= ring size. The acquire pairs
	 * with the reader's release of @tail: its reads of the freed space
	 * are done before we reuse it.
	 */
	tail = smp_load_acquire(&ring->pub->tail);
	WRITE_ONCE(ring->tail_seen, tail);
	return new_head - tail <= size;
}

/**
 * magnet_ring_reserve - reserve a record in this CPU's ring of @buf
 * @buf:	the buffer
 * @event:	a valid event id (see magnet_reserve())
 * @id:		abstract id
 * @payload_size: payload bytes, at most @buf's max_record less the header
 *
 * As magnet_reserve(), without its checks of @event and @payload_size.
 * Return: the record, its header filled in; or ERR_PTR(-ENOSPC) (ring
 * full), ERR_PTR(-EBUSY) (nested too deeply) or ERR_PTR(-EOPNOTSUPP) (NMI
 * without NMI-safe cmpxchg), each counted as dropped but the last.
 * On success preemption stays disabled until magnet_ring_commit().
 */
static __always_inline struct magnet_record *
magnet_ring_reserve(struct magnet_buffer *buf, u16 event, u64 id,
		    u32 payload_size)
{
	unsigned long head, new_head, pad, loss, len, size, mask;
	struct magnet_record *rec;
	struct magnet_ring *ring;
	unsigned int cpu;
	int err = -ENOSPC;
	bool drop_mode;
	u64 ts;

	/* local_cmpxchg() must not be interrupted half-way by an NMI writer. */
	if (!IS_ENABLED(CONFIG_ARCH_HAVE_NMI_SAFE_CMPXCHG) && in_nmi())
		return ERR_PTR(-EOPNOTSUPP);
	len = rec_len(REC_HDR + payload_size);
	size = buf->ring_size;
	drop_mode = buf->mode == MAGNET_FULL_DROP;

	preempt_disable_notrace();
	cpu = smp_processor_id();
	ring = buf->rings[cpu];
	mask = ring->mask;
	/* Bound recursion (e.g. a probe hit inside magnet's own path). */
	if (unlikely(local_inc_return(&ring->nesting) > MAGNET_MAX_NESTING)) {
		err = -EBUSY;
		goto drop;
	}

	do {
		head = local_read(&ring->head);
		/*
		 * Take the time after reading @head: a nested writer that gets
		 * in after that moves @head, so our cmpxchg fails and we retry
		 * with a later timestamp. Timestamps never decrease in ring
		 * order.
		 */
		ts = ktime_get_mono_fast_ns();
		loss = 0;
		if (drop_mode && unlikely(local_read(&ring->dropped) !=
					  READ_ONCE(ring->lost_logged)))
			loss = LOSS_REC_SIZE;
		pad = 0;
		if (unlikely((head & mask) + loss + len > size))
			pad = size - (head & mask);
		new_head = head + pad + loss + len;

		if (drop_mode) {
			if (unlikely(!ring_fits(ring, new_head, size)))
				goto drop;
		} else if (unlikely(new_head - READ_ONCE(ring->pub->tail) >
				    size) &&
			   !magnet_ring_make_room(ring, new_head)) {
			goto drop;	/* overwrite mode: a call only to evict */
		}
	} while (unlikely(local_cmpxchg(&ring->head, head, new_head) != head));

	if (unlikely(pad)) {
		rec = ring_rec(ring, head);
		rec->size = pad;
		rec->event = MAGNET_EVENT_PAD;
		head += pad;
	}
	if (unlikely(loss)) {
		struct magnet_loss *l;
		unsigned long total = local_read(&ring->dropped);

		rec = ring_rec(ring, head);
		fill_header(rec, LOSS_REC_SIZE, MAGNET_EVENT_LOSS,
			    context_flags(), cpu, 0, ts);
		l = (struct magnet_loss *)rec->payload;
		l->lost = 0;		/* the reader computes it */
		l->total = total;
		WRITE_ONCE(ring->lost_logged, total);
		head += loss;
	}
	rec = ring_rec(ring, head);
	/* Zero the alignment padding; the payload overwrites the rest. */
	*(u64 *)((void *)rec + len - sizeof(u64)) = 0;
	fill_header(rec, REC_HDR + payload_size, event, context_flags(), cpu,
		    id, ts);
	return rec;

drop:
	local_inc(&ring->dropped);
	ring_end_write(ring);
	preempt_enable_notrace();
	return ERR_PTR(err);
}

/* Publish a record from magnet_ring_reserve(), on the same CPU. */
static __always_inline void magnet_ring_commit(struct magnet_buffer *buf)
{
	struct magnet_ring *ring = buf->rings[smp_processor_id()];

	local_inc(&ring->written);
	ring_end_write(ring);
	preempt_enable_notrace();
}

/* --- events' records ---------------------------------------------------- */

/**
 * magnet_event_reserve - reserve the record of one hit, to fill in place
 * @ev:		the event
 * @admit:	what magnet_event_admit() said of the hit, not
 *		MAGNET_ADMIT_NO
 * @id:		the record's abstract id
 * @head:	the start of the payload as filters see it (the fixed part)
 * @head_size:	bytes at @head
 * @size:	payload bytes to reserve (at least @head_size); cut to what
 *		the buffer's largest record allows
 * @object:	what the hit is about, for filter modules, or NULL
 *
 * For hits that fill their record in place (packet probes, whose payload
 * is too big for the stack; generic kprobes, from the registers). The
 * caller fills the record (rec->size says how much was reserved) and calls
 * magnet_event_commit(). The event's snap length is the caller's business.
 * Probe context, preemption disabled.
 *
 * Return: the record; NULL if the full rules or sampling drop the hit; or
 * an ERR_PTR (counted as lost).
 */
static __always_inline struct magnet_record *
magnet_event_reserve(struct magnet_event *ev, enum magnet_admit admit, u64 id,
		     const void *head, u32 head_size, u32 size,
		     const void *object)
{
	struct magnet_buffer *buf = ev->buf;
	struct magnet_record *rec;

	if (admit == MAGNET_ADMIT_ASK &&
	    !magnet_event_evaluate(ev, id, head, head_size, object))
		return NULL;
	/* A record never exceeds its buffer's limit: cut rather than lose. */
	if (size > buf->max_record - sizeof(*rec))
		size = buf->max_record - sizeof(*rec);
	rec = magnet_ring_reserve(buf, ev->id, id, size);
	if (IS_ERR(rec))
		this_cpu_inc(ev->stats->lost);
	else
		this_cpu_inc(ev->stats->logged);
	return rec;
}

/* Publish a record from magnet_event_reserve(). */
static __always_inline void magnet_event_commit(struct magnet_event *ev,
						struct magnet_record *rec)
{
	if (unlikely(READ_ONCE(ev->notify)))
		magnet_notify_queue(rec);
	magnet_ring_commit(ev->buf);
}

#endif /* _MAGNET_WRITER_H */

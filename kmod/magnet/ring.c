// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: lockless per-CPU rings.
 *
 * Each CPU of a buffer has its own ring. Only code running on that CPU
 * writes records into it, with preemption disabled; writers may nest
 * (a hardirq interrupting a task that is between reserve and commit, an
 * NMI interrupting the hardirq, ...). One reader, on any CPU, consumes.
 *
 *          tail                commit              head
 *           |                    |                  |
 *   ...free | R | R | R | ... | R | r | r | (r) ... | free ...
 *           |<-- published ------>|<-- reserved --->|
 *
 *   R: committed and published record, readable
 *   r: reserved record, its writer still filling it in (or a finished
 *      nested record published only when the outermost writer finishes)
 *
 * Reserve: a writer moves @head forward with local_cmpxchg(). A nested
 * writer that interrupts it between reading @head and the cmpxchg makes the
 * cmpxchg fail; the interrupted writer then retries from the new @head. The
 * retry loop is bounded by the nesting depth.
 *
 * Commit: writers on one CPU finish in the reverse order they started, so
 * when the outermost writer (nesting == 1) finishes, every reservation
 * below @head is complete. Only then is @commit moved up to @head, with a
 * release store: the reader never sees a half-written record. This is the
 * "commit by the outermost writer" scheme of kernel/trace/ring_buffer.c.
 *
 * A record never wraps around the end of the ring: when it does not fit in
 * the space left before the end, that space is filled with a padding
 * record (event MAGNET_EVENT_PAD) and the record starts at offset 0.
 *
 * Full ring, drop mode: the record is refused and counted in @dropped. The
 * next writer that gets space first logs a MAGNET_EVENT_LOSS record with
 * the CPU's loss total, so the loss shows where it happened.
 *
 * Full ring, overwrite mode: the writer evicts the oldest published records
 * by advancing @tail with cmpxchg, racing the reader, who also consumes by
 * cmpxchg on @tail after copying a record out. Whoever wins owns the
 * record: the reader's copy is only used if its cmpxchg succeeded, which
 * proves that no writer evicted (and so overwrote) the record while it was
 * being copied.
 */

#include <linux/error-injection.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "writer.h"

/* Records writers tried to log: each was either written or dropped. */
unsigned long magnet_ring_produced(struct magnet_ring *ring)
{
	return local_read(&ring->written) + local_read(&ring->dropped);
}

unsigned long magnet_ring_lost(struct magnet_ring *ring)
{
	return local_read(&ring->dropped) + local_read(&ring->overwritten);
}

struct magnet_ring *magnet_ring_create(struct magnet_buffer *buf,
				       unsigned int cpu)
{
	int node = cpu_to_node(cpu);
	struct magnet_ring *ring;
	void *area;

	ring = kzalloc_node(sizeof(*ring), GFP_KERNEL, node);
	if (!ring)
		return NULL;
	/*
	 * The public page, then the ring: page-aligned and zeroed, for a data
	 * file to map.
	 */
	area = vzalloc_node(PAGE_SIZE + buf->ring_size, node);
	if (!area) {
		kfree(ring);
		return NULL;
	}
	ring->pub = area;
	ring->pub->cpu = cpu;
	ring->data = area + PAGE_SIZE;
	ring->buf = buf;
	ring->cpu = cpu;
	ring->mask = buf->ring_size - 1;
	ring->wake_pos = ULONG_MAX;
	ring->wake_written = ULONG_MAX;
	init_irq_work(&ring->wake_work, magnet_buffer_wake_work);
	return ring;
}

ALLOW_ERROR_INJECTION(magnet_ring_create, NULL);

void magnet_ring_destroy(struct magnet_ring *ring)
{
	if (!ring)
		return;
	irq_work_sync(&ring->wake_work);
	vfree(ring->pub);
	kfree(ring);
}

/*
 * Evict published records from the tail until @new_head fits (overwrite
 * mode). Runs on the ring's CPU inside a reservation. Returns false when
 * the space is held by records that are not published yet (nested writers
 * in progress): those cannot be evicted, so the new record is dropped.
 */
bool magnet_ring_make_room(struct magnet_ring *ring, unsigned long new_head)
{
	unsigned long size = ring->mask + 1;

	for (;;) {
		unsigned long tail = READ_ONCE(ring->pub->tail);
		struct magnet_record *old;
		unsigned long len;
		u16 event;

		/* Capacity invariant: head - tail <= ring size. */
		if (new_head - tail <= size)
			return true;
		/* @commit is only written on this CPU: a plain read is fine. */
		if (tail == READ_ONCE(ring->pub->commit))
			return false;

		old = ring_rec(ring, tail);
		len = rec_len(READ_ONCE(old->size));
		event = READ_ONCE(old->event);
		/*
		 * Full barrier of a successful cmpxchg: the eviction is visible
		 * before any store into the evicted space. Pairs with the
		 * reader's cmpxchg in ring_read_overwrite().
		 */
		if (cmpxchg(&ring->pub->tail, tail, tail + len) != tail)
			continue;	/* the reader consumed it first */
		if (event != MAGNET_EVENT_PAD)
			local_inc(&ring->overwritten);
	}
}

/**
 * magnet_reserve - reserve space for a record in this CPU's ring
 * @buf:	the buffer
 * @event:	event id, 1..MAGNET_EVENT_ID_MAX, or MAGNET_EVENT_JOURNEY
 * @id:		abstract id (see struct magnet_record)
 * @payload_size: bytes of payload the caller will write
 *
 * Callable from any context, NMI included. Fills in the header; the caller
 * writes the payload at rec->payload and then calls magnet_commit() on the
 * same CPU, without sleeping in between (preemption stays disabled until
 * the commit). Nothing is logged until the commit.
 *
 * Return: the record, or
 * ERR_PTR(-EINVAL) for an invalid event id,
 * ERR_PTR(-E2BIG) if the record is larger than the buffer's max_record,
 * ERR_PTR(-ENOSPC) if the ring is full (counted as dropped),
 * ERR_PTR(-EBUSY) if writers are nested too deeply (counted as dropped),
 * ERR_PTR(-EOPNOTSUPP) in NMI context where the architecture's cmpxchg is
 * not NMI-safe.
 */
struct magnet_record *magnet_reserve(struct magnet_buffer *buf, u16 event,
				     u64 id, u32 payload_size)
{
	if (unlikely(!event || (event > MAGNET_EVENT_ID_MAX &&
				event != MAGNET_EVENT_JOURNEY)))
		return ERR_PTR(-EINVAL);
	if (unlikely(payload_size > buf->max_record - REC_HDR))
		return ERR_PTR(-E2BIG);
	return magnet_ring_reserve(buf, event, id, payload_size);
}
EXPORT_SYMBOL_GPL(magnet_reserve);

/**
 * magnet_commit - publish a record obtained from magnet_reserve()
 * @buf:	the buffer passed to magnet_reserve()
 * @rec:	the record it returned
 */
void magnet_commit(struct magnet_buffer *buf, struct magnet_record *rec)
{
	magnet_ring_commit(buf);
}
EXPORT_SYMBOL_GPL(magnet_commit);

/**
 * magnet_log - log a record in one call
 * @buf:	the buffer
 * @event:	event id, 1..MAGNET_EVENT_ID_MAX
 * @id:		abstract id
 * @payload:	payload bytes, copied into the ring
 * @payload_size: number of payload bytes
 *
 * Return: 0, or the error magnet_reserve() gave.
 */
int magnet_log(struct magnet_buffer *buf, u16 event, u64 id,
	       const void *payload, u32 payload_size)
{
	struct magnet_record *rec;

	rec = magnet_reserve(buf, event, id, payload_size);
	if (IS_ERR(rec))
		return PTR_ERR(rec);
	memcpy(rec->payload, payload, payload_size);
	magnet_commit(buf, rec);
	return 0;
}
EXPORT_SYMBOL_GPL(magnet_log);

/* Bytes and records published but not yet consumed (an estimate under
 * concurrent writes, exact once writers are quiet).
 */
void magnet_ring_available(struct magnet_ring *ring, unsigned long *bytes,
			   unsigned long *records)
{
	/* Pairs with smp_store_release() in ring_publish(). */
	unsigned long commit = smp_load_acquire(&ring->pub->commit);

	*bytes += commit - READ_ONCE(ring->pub->tail);
	*records += local_read(&ring->written) - READ_ONCE(ring->read) -
		    READ_ONCE(ring->discarded) -
		    local_read(&ring->overwritten);
	/*
	 * A loss not yet reported is something to read too, even when no
	 * record follows it (writers that only dropped): magnet_ring_read()
	 * reports it once the ring is drained.
	 */
	if (magnet_ring_lost(ring) > READ_ONCE(ring->pub->lost_seen)) {
		*bytes += LOSS_REC_SIZE;
		*records += 1;
	}
}

/*
 * Report losses not yet reported, as a loss record made by the reader.
 * Returns what the sink returned, or 0 if there was nothing to report.
 */
static int ring_report_loss(struct magnet_ring *ring, unsigned long total,
			    u16 flags, u64 ts, struct magnet_sink *sink)
{
	struct {
		struct magnet_record hdr;
		struct magnet_loss loss;
	} rec = {};

	if (total <= ring->pub->lost_seen)
		return 0;
	if (sink->room < LOSS_REC_SIZE)
		return -ENOSPC;
	rec.hdr.size = LOSS_REC_SIZE;
	rec.hdr.event = MAGNET_EVENT_LOSS;
	rec.hdr.flags = flags;
	rec.hdr.cpu = ring->cpu;
	rec.hdr.timestamp = ts;
	rec.loss.lost = total - ring->pub->lost_seen;
	rec.loss.total = total;
	WRITE_ONCE(ring->pub->lost_seen, total);
	sink->room -= LOSS_REC_SIZE;
	ring->last_ts = ts;
	return sink->deliver(sink, &rec.hdr);
}

/* Hand one record to the sink; count it as read if the sink took it. */
static int ring_deliver(struct magnet_ring *ring, struct magnet_sink *sink,
			const struct magnet_record *rec)
{
	int ret = sink->deliver(sink, rec);

	if (ret >= 0) {
		sink->room -= rec_len(rec->size);
		ring->last_ts = rec->timestamp;
		WRITE_ONCE(ring->read, ring->read + 1);
	}
	return ret;
}

/*
 * Drop mode: the records below @commit are stable until we move @tail.
 * @tail is handed back once per batch (and every quarter ring in a long
 * one), not per record: writers read it only when their copy of it says
 * the ring is full, and each release is a store into their way.
 */
static int ring_read_drop(struct magnet_ring *ring, struct magnet_sink *sink)
{
	unsigned long tail = READ_ONCE(ring->pub->tail);
	unsigned long freed = tail, quarter = (ring->mask + 1) / 4;
	/* Pairs with smp_store_release() in ring_publish(). */
	unsigned long commit = smp_load_acquire(&ring->pub->commit);
	int ret = 0;

	while (tail != commit && !ret) {
		struct magnet_record *rec = ring_rec(ring, tail);
		unsigned long len = rec_len(rec->size);

		if (rec->event == MAGNET_EVENT_LOSS) {
			struct magnet_loss *l = (void *)rec->payload;

			ret = ring_report_loss(ring, l->total, rec->flags,
					       rec->timestamp, sink);
			if (ret == -ENOSPC)
				break;
		} else if (rec->event != MAGNET_EVENT_PAD) {
			if (sink->room < len) {
				ret = -ENOSPC;
				break;
			}
			/* A record the sink could not take stays unread. */
			ret = ring_deliver(ring, sink, rec);
			if (ret < 0)
				break;
		}
		tail += len;
		if (tail - freed >= quarter) {
			/*
			 * Our reads of the records are done before their
			 * space is handed back. Pairs with the writer's
			 * smp_load_acquire(&ring->pub->tail) in
			 * ring_fits().
			 */
			smp_store_release(&ring->pub->tail, tail);
			freed = tail;
		}
	}
	if (tail != freed)
		smp_store_release(&ring->pub->tail, tail);	/* as above */
	return ret;
}

/* Overwrite mode: copy a record out, then claim it by cmpxchg on @tail. */
static int ring_read_overwrite(struct magnet_reader *reader,
			       struct magnet_ring *ring,
			       struct magnet_sink *sink)
{
	struct magnet_record *copy = reader->bounce;
	unsigned long bad_tail = ULONG_MAX;
	int ret = 0;

	while (!ret) {
		unsigned long tail = READ_ONCE(ring->pub->tail);
		/* Pairs with smp_store_release() in ring_publish(). */
		unsigned long commit = smp_load_acquire(&ring->pub->commit);
		unsigned long len, lost, need;
		struct magnet_record *rec;
		u16 event;
		u32 size;

		if (tail == commit)
			break;
		rec = ring_rec(ring, tail);
		size = READ_ONCE(rec->size);
		event = READ_ONCE(rec->event);
		len = rec_len(size);
		/*
		 * A writer may be overwriting this record right now; then
		 * @tail has moved on. A header that is still insane with
		 * @tail unchanged means a broken ring: say so and stop.
		 */
		if (size < sizeof(u64) ||
		    len > ring->mask + 1 - (tail & ring->mask) ||
		    (event != MAGNET_EVENT_PAD &&
		     (size < REC_HDR || size > ring->buf->max_record))) {
			if (WARN_ON_ONCE(tail == bad_tail))
				return -EIO;
			bad_tail = tail;
			continue;
		}
		if (event == MAGNET_EVENT_PAD) {
			cmpxchg(&ring->pub->tail, tail, tail + len);
			continue;
		}
		/*
		 * Losses counted now all happened before @tail was read
		 * (writers count an eviction after making it), so they
		 * belong before this record.
		 */
		lost = magnet_ring_lost(ring);
		need = len + (lost > ring->pub->lost_seen ? LOSS_REC_SIZE : 0);
		if (sink->room < need)
			return -ENOSPC;
		memcpy(copy, rec, len);
		/*
		 * Full barrier: the copy is complete before we claim the
		 * record. Pairs with the evicting writer's cmpxchg in
		 * magnet_ring_make_room(), which comes before it overwrites: if we
		 * win, no writer touched the record while we copied it.
		 */
		if (cmpxchg(&ring->pub->tail, tail, tail + len) != tail)
			continue;
		ret = ring_report_loss(ring, lost, MAGNET_RF_SYNTHETIC,
				       copy->timestamp, sink);
		if (ret >= 0)
			ret = ring_deliver(ring, sink, copy);
		/* Already consumed: a record the sink refused is gone. */
		if (ret < 0)
			WRITE_ONCE(ring->discarded, ring->discarded + 1);
	}
	return ret;
}

/**
 * magnet_ring_consume - give back records a mapping reader has read
 * @ring:	the ring (drop mode)
 * @pos:	the new tail (struct magnet_consume)
 * @c:		filled in: records, losses to report, timestamp
 *
 * The reader's lock held. Accounts as magnet_ring_read() would have for
 * the same records: @read, the loss total reported, the last timestamp,
 * and the losses after the last record once the ring is drained.
 *
 * Return: 0, or -EINVAL if @pos is not a record boundary between the tail
 * and @commit (nothing changed).
 */
int magnet_ring_consume(struct magnet_ring *ring, u64 pos,
			struct magnet_consume *c)
{
	unsigned long tail = READ_ONCE(ring->pub->tail);
	/* Pairs with smp_store_release() in ring_publish(). */
	unsigned long commit = smp_load_acquire(&ring->pub->commit);
	unsigned long lost_seen = ring->pub->lost_seen, n = 0, lost;
	u64 last_ts = ring->last_ts;

	if (pos < tail || pos > commit)
		return -EINVAL;
	while (tail < pos) {
		struct magnet_record *rec = ring_rec(ring, tail);
		unsigned long len = rec_len(rec->size);

		if (WARN_ON_ONCE(len < sizeof(u64)))
			return -EIO;
		if (rec->event == MAGNET_EVENT_LOSS) {
			struct magnet_loss *l = (void *)rec->payload;

			if (l->total > lost_seen) {
				lost_seen = l->total;
				last_ts = rec->timestamp;
			}
		} else if (rec->event != MAGNET_EVENT_PAD) {
			n++;
			last_ts = rec->timestamp;
		}
		tail += len;
	}
	if (tail != pos)
		return -EINVAL;		/* inside a record */

	WRITE_ONCE(ring->read, ring->read + n);
	WRITE_ONCE(ring->pub->lost_seen, lost_seen);
	ring->last_ts = last_ts;
	/*
	 * The reader's reads of the records are done before their space is
	 * handed back. Pairs with the writer's acquire in ring_fits().
	 */
	smp_store_release(&ring->pub->tail, pos);
	c->records = n;
	c->lost = 0;
	c->lost_total = 0;
	/* Drained: the losses after the last record, as magnet_ring_read(). */
	lost = magnet_ring_lost(ring);
	smp_rmb();	/* as in magnet_ring_read() */
	if (smp_load_acquire(&ring->pub->commit) == pos && lost > lost_seen) {
		c->lost = lost - lost_seen;
		c->lost_total = lost;
		WRITE_ONCE(ring->pub->lost_seen, lost);
	}
	c->timestamp = ring->last_ts;
	return 0;
}

/**
 * magnet_ring_read - consume records of one ring into a sink
 * @reader:	the buffer's reader
 * @ring:	the ring
 * @sink:	where to put them
 *
 * When the ring is drained, losses not yet reported are reported with a
 * loss record at the end (they happened after everything read).
 *
 * Return: 0 when the ring is drained, -ENOSPC when the sink is full, > 0
 * if the sink asked to stop, or the sink's negative errno.
 */
int magnet_ring_read(struct magnet_reader *reader, struct magnet_ring *ring,
		     struct magnet_sink *sink)
{
	unsigned long lost;
	int ret;

	for (;;) {
		if (ring->buf->mode == MAGNET_FULL_DROP)
			ret = ring_read_drop(ring, sink);
		else
			ret = ring_read_overwrite(reader, ring, sink);
		if (ret)
			return ret;
		lost = magnet_ring_lost(ring);
		/*
		 * Losses counted before @commit last moved belong before the
		 * records it published: read those first. Pairs with the
		 * smp_wmb() in ring_publish(), which orders a writer's
		 * @commit store before its later drop count.
		 */
		smp_rmb();
		/* Pairs with smp_store_release() in ring_publish(). */
		if (smp_load_acquire(&ring->pub->commit) ==
		    READ_ONCE(ring->pub->tail))
			break;
	}
	/* Stamped like the last record read: the loss came after it. */
	return ring_report_loss(ring, lost, MAGNET_RF_SYNTHETIC, ring->last_ts,
				sink);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: buffers (named sets of per-CPU rings), their single reader, and
 * the deferred wake-up of that reader.
 *
 * Waking the reader: writers can sit anywhere, the scheduler and the
 * wake-up path included, so they never wake anyone themselves. The reader,
 * before it sleeps, gives every CPU's ring a threshold (a position and a
 * record count). A writer that publishes past a threshold queues the
 * ring's irq_work, which runs shortly after in hardirq context on the same
 * CPU, checks the reader's whole condition and wakes it, or sets new
 * thresholds if the condition is not met yet.
 *
 * Each CPU's threshold is its current level plus 1/n of what the reader
 * still needs (n = number of rings). If the buffer as a whole gets what the
 * reader needs, at least one CPU got its 1/n share, so at least one
 * irq_work runs: no wake-up is missed, and a writer far below its share
 * pays one compare per record.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "magnet.h"

/* Serialises creating, destroying and listing buffers. */
DEFINE_MUTEX(magnet_buffers_lock);
LIST_HEAD(magnet_buffers);

static unsigned long magnet_memory_used;	/* under magnet_buffers_lock */
unsigned long magnet_memory_limit;		/* set once at load */

static unsigned long buffer_memory(unsigned long ring_size)
{
	return ring_size * num_possible_cpus();
}

static void buffer_free(struct magnet_buffer *buf)
{
	unsigned int cpu;

	/*
	 * A recheck may be queued, and may queue itself again once: the
	 * first barrier waits for it, the second for what it queued (which
	 * sees @stop and queues nothing).
	 */
	if (buf->recheck.used) {
		WRITE_ONCE(buf->recheck.stop, true);
		smp_mb();	/* @stop seen by rechecks the barriers wait for */
		rcu_barrier();
		rcu_barrier();
	}
	if (buf->rings) {
		for_each_possible_cpu(cpu)
			magnet_ring_destroy(buf->rings[cpu]);
		kfree(buf->rings);
	}
	kfree(buf);
}

static void buffer_release(struct kref *ref)
{
	buffer_free(container_of(ref, struct magnet_buffer, ref));
}

/* How many buffers session @session has (its max_session_buffers). */
unsigned int magnet_buffers_in_session(u32 session)
{
	struct magnet_buffer *buf;
	unsigned int n = 0;

	lockdep_assert_held(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node)
		n += buf->session == session;
	return n;
}

/* The buffer named @name in session @session. */
static struct magnet_buffer *buffer_find(u32 session, const char *name)
{
	struct magnet_buffer *buf;

	lockdep_assert_held(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node)
		if (buf->session == session && !strcmp(buf->name, name))
			return buf;
	return NULL;
}

/**
 * magnet_buffer_get - look a buffer up by name and take a reference
 * @name:	buffer name, in the default session
 *
 * Return: the buffer, or NULL if there is none of that name. Drop the
 * reference with magnet_buffer_put().
 */
struct magnet_buffer *magnet_buffer_get(const char *name)
{
	struct magnet_buffer *buf;

	mutex_lock(&magnet_buffers_lock);
	buf = buffer_find(0, name);
	if (buf)
		kref_get(&buf->ref);
	mutex_unlock(&magnet_buffers_lock);
	return buf;
}
EXPORT_SYMBOL_GPL(magnet_buffer_get);

void magnet_buffer_put(struct magnet_buffer *buf)
{
	if (buf)
		kref_put(&buf->ref, buffer_release);
}
EXPORT_SYMBOL_GPL(magnet_buffer_put);

/*
 * Is @name usable as a buffer or event name (and as a file name)? Not all
 * digits: tools take a number for an event id.
 */
bool magnet_name_valid(const char *name)
{
	return *name && strlen(name) < MAGNET_NAME_MAX &&
	       !strpbrk(name, "/ \t\n") &&
	       name[strspn(name, "0123456789")];
}

bool magnet_buffer_size_valid(unsigned long ring_size)
{
	return is_power_of_2(ring_size) && ring_size >= MAGNET_RING_MIN &&
	       ring_size <= MAGNET_RING_MAX;
}

/**
 * magnet_buffer_alloc - allocate a buffer that is not listed anywhere
 * @name:	its name (not checked against the registry)
 * @ring_size:	bytes per CPU, valid per magnet_buffer_size_valid()
 * @mode:	what a full ring does
 *
 * For private staging areas (the notification queue, filter modules);
 * magnet_buffer_create() makes the buffers users see. Free with
 * magnet_buffer_put(). Not counted against max_memory_mb.
 */
struct magnet_buffer *magnet_buffer_alloc(const char *name,
					  unsigned long ring_size,
					  enum magnet_full_mode mode)
{
	struct magnet_buffer *buf;
	unsigned int cpu;

	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return NULL;
	strscpy(buf->name, name, sizeof(buf->name));
	buf->ring_size = ring_size;
	buf->max_record = min_t(unsigned long, MAGNET_RECORD_MAX,
				ring_size / 4);
	buf->mode = mode;
	init_waitqueue_head(&buf->wait);
	kref_init(&buf->ref);
	INIT_LIST_HEAD(&buf->node);

	buf->rings = kcalloc(nr_cpu_ids, sizeof(*buf->rings), GFP_KERNEL);
	if (!buf->rings)
		goto fail;
	for_each_possible_cpu(cpu) {
		buf->rings[cpu] = magnet_ring_create(buf, cpu);
		if (!buf->rings[cpu])
			goto fail;
	}
	return buf;

fail:
	buffer_free(buf);
	return NULL;
}
EXPORT_SYMBOL_GPL(magnet_buffer_alloc);

/*
 * Create a buffer of session @session and its debugfs file. Caller holds
 * magnet_buffers_lock. Returns ERR_PTR(-EINVAL) for a bad name or size,
 * -EEXIST for a name in use, -ENOSPC for a session that has its
 * max_session_buffers, -E2BIG when the memory limit would be exceeded,
 * -ENOMEM.
 */
static struct magnet_buffer *buffer_create_locked(const char *name,
						  unsigned long ring_size,
						  enum magnet_full_mode mode,
						  u32 session)
{
	struct magnet_buffer *buf;
	int err;

	lockdep_assert_held(&magnet_buffers_lock);
	if (!magnet_name_valid(name) || !magnet_buffer_size_valid(ring_size))
		return ERR_PTR(-EINVAL);
	if (buffer_find(session, name))
		return ERR_PTR(-EEXIST);
	if (session &&
	    magnet_buffers_in_session(session) >= magnet_session_max_buffers())
		return ERR_PTR(-ENOSPC);
	if (magnet_memory_used + buffer_memory(ring_size) >
	    magnet_memory_limit)
		return ERR_PTR(-E2BIG);

	buf = magnet_buffer_alloc(name, ring_size, mode);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	buf->session = session;
	err = magnet_fs_add_buffer(buf);
	if (err) {
		magnet_buffer_put(buf);
		return ERR_PTR(err);
	}
	list_add_tail(&buf->node, &magnet_buffers);
	magnet_memory_used += buffer_memory(ring_size);
	return buf;
}

/**
 * magnet_buffer_create - create a buffer and its data file at run time
 * @name:	its name, valid per magnet_name_valid()
 * @ring_size:	bytes per CPU
 * @mode:	what a full ring does
 *
 * @owner_portid: netlink socket the buffer belongs to (removed when it
 *		closes, see magnet_buffers_release()), or 0
 * @session:	the session whose names it is among (its socket is the
 *		owner), 0 for the default
 *
 * Return: 0, -EINVAL (bad name or size), -EEXIST (name in use), -ENOSPC
 * (the session's max_session_buffers), -E2BIG (beyond max_memory_mb) or
 * -ENOMEM.
 */
int magnet_buffer_create(const char *name, unsigned long ring_size,
			 enum magnet_full_mode mode, u32 owner_portid,
			 u32 session)
{
	struct magnet_buffer *buf;

	mutex_lock(&magnet_buffers_lock);
	buf = buffer_create_locked(name, ring_size, mode, session);
	if (!IS_ERR(buf))
		buf->owner_portid = owner_portid;
	mutex_unlock(&magnet_buffers_lock);
	return PTR_ERR_OR_ZERO(buf);
}

/**
 * magnet_buffer_remove - destroy the buffer of that name
 * @session:	the session whose names it is among
 * @name:	the buffer's name
 *
 * Return: 0, -ENOENT (no such buffer) or -EBUSY (events log into it).
 */
int magnet_buffer_remove(u32 session, const char *name)
{
	struct magnet_buffer *buf;
	int err = 0;

	mutex_lock(&magnet_buffers_lock);
	buf = buffer_find(session, name);
	if (!buf)
		err = -ENOENT;
	else if (buf->events)
		err = -EBUSY;
	else
		magnet_buffer_destroy(buf);
	mutex_unlock(&magnet_buffers_lock);
	return err;
}

/*
 * Remove the buffers netlink socket @portid owned (it has closed), or if
 * @portid is 0 those of session @session (it ended), but those probes of
 * others still log into: they stay, owned by no one.
 */
void magnet_buffers_release(u32 portid, u32 session)
{
	struct magnet_buffer *buf, *tmp;

	mutex_lock(&magnet_buffers_lock);
	list_for_each_entry_safe(buf, tmp, &magnet_buffers, node) {
		if (portid ? buf->owner_portid != portid :
			     buf->session != session)
			continue;
		if (buf->events)
			buf->owner_portid = 0;
		else
			magnet_buffer_destroy(buf);
	}
	mutex_unlock(&magnet_buffers_lock);
}

/*
 * An event's hold on its buffer: a reference, and a count that keeps the
 * buffer from being removed while the event may log into it.
 */
struct magnet_buffer *magnet_buffer_get_for_event(u32 session,
						  const char *name)
{
	struct magnet_buffer *buf;

	mutex_lock(&magnet_buffers_lock);
	buf = buffer_find(session, name);
	if (buf) {
		kref_get(&buf->ref);
		buf->events++;
	}
	mutex_unlock(&magnet_buffers_lock);
	return buf;
}

void magnet_buffer_put_for_event(struct magnet_buffer *buf)
{
	mutex_lock(&magnet_buffers_lock);
	buf->events--;
	mutex_unlock(&magnet_buffers_lock);
	magnet_buffer_put(buf);
}

/* Destroy a buffer: readers get EOF, memory goes with the last reference. */
void magnet_buffer_destroy(struct magnet_buffer *buf)
{
	lockdep_assert_held(&magnet_buffers_lock);
	list_del_init(&buf->node);
	magnet_memory_used -= buffer_memory(buf->ring_size);
	magnet_fs_remove_buffer(buf);
	WRITE_ONCE(buf->dead, true);
	wake_up_interruptible_poll(&buf->wait, EPOLLHUP | EPOLLIN);
	magnet_buffer_put(buf);
}

void magnet_buffers_destroy_all(void)
{
	struct magnet_buffer *buf, *tmp;

	mutex_lock(&magnet_buffers_lock);
	list_for_each_entry_safe(buf, tmp, &magnet_buffers, node)
		magnet_buffer_destroy(buf);
	mutex_unlock(&magnet_buffers_lock);
}

/*
 * Parse one "name:size[:drop|:overwrite]" entry; size takes K, M or G.
 * Returns 0 or -EINVAL, with the fields filled in.
 */
static int parse_buffer_spec(char *spec, const char **name,
			     unsigned long *size, enum magnet_full_mode *mode)
{
	char *size_str, *mode_str, *end;

	*name = strsep(&spec, ":");
	size_str = strsep(&spec, ":");
	mode_str = strsep(&spec, ":");
	if (!**name || !size_str || spec)
		return -EINVAL;
	*size = memparse(size_str, &end);
	if (end == size_str || *end)
		return -EINVAL;
	*mode = MAGNET_FULL_DROP;
	if (!mode_str || !strcmp(mode_str, "drop"))
		return 0;
	if (!strcmp(mode_str, "overwrite")) {
		*mode = MAGNET_FULL_OVERWRITE;
		return 0;
	}
	return -EINVAL;
}

/**
 * magnet_buffers_from_param - create the buffers a module parameter names
 * @spec:	comma-separated "name:size[:drop|:overwrite]" entries
 *
 * A buffer named "default" is added (256 KiB per CPU, drop mode) unless
 * @spec names one. On error nothing is left created.
 */
int magnet_buffers_from_param(const char *spec)
{
	char *copy, *cursor, *entry;
	struct magnet_buffer *buf;
	bool have_default = false;
	int err = 0;

	copy = kstrdup(spec ? spec : "", GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	mutex_lock(&magnet_buffers_lock);
	cursor = copy;
	while (!err && (entry = strsep(&cursor, ",")) != NULL) {
		enum magnet_full_mode mode;
		unsigned long size;
		const char *name;
		char *orig;

		entry = strim(entry);
		if (!*entry)
			continue;
		orig = kstrdup(entry, GFP_KERNEL);
		err = parse_buffer_spec(entry, &name, &size, &mode);
		if (err) {
			pr_err("buffers=: cannot parse \"%s\": expected name:size[:drop|:overwrite]\n",
			       orig ?: "?");
			kfree(orig);
			break;
		}
		buf = buffer_create_locked(name, size, mode, 0);
		if (IS_ERR(buf)) {
			err = PTR_ERR(buf);
			if (err == -EINVAL)
				pr_err("buffers=: \"%s\": a name of 1-%d characters without '/' or spaces, and a power-of-two size between %lu and %lu bytes per CPU\n",
				       orig ?: "?", MAGNET_NAME_MAX - 1,
				       MAGNET_RING_MIN, MAGNET_RING_MAX);
			else if (err == -EEXIST)
				pr_err("buffers=: buffer \"%s\" named twice\n",
				       name);
			else if (err == -E2BIG)
				pr_err("buffers=: \"%s\" would exceed max_memory_mb (%lu MiB in use, %lu bytes per CPU on %u CPUs asked)\n",
				       orig ?: "?", magnet_memory_used >> 20,
				       size, num_possible_cpus());
			else
				pr_err("buffers=: cannot create \"%s\": %pe\n",
				       orig ?: "?", ERR_PTR(err));
		}
		kfree(orig);
		if (!IS_ERR(buf) && !strcmp(buf->name, "default"))
			have_default = true;
	}
	if (!err && !have_default) {
		buf = buffer_create_locked("default", 256 * 1024,
					   MAGNET_FULL_DROP, 0);
		if (IS_ERR(buf)) {
			err = PTR_ERR(buf);
			pr_err("cannot create buffer \"default\": %pe\n",
			       buf);
		}
	}
	mutex_unlock(&magnet_buffers_lock);
	kfree(copy);
	if (err)
		magnet_buffers_destroy_all();
	return err;
}

static void buffer_available(struct magnet_buffer *buf, unsigned long *bytes,
			     unsigned long *records)
{
	unsigned int cpu;

	*bytes = 0;
	*records = 0;
	for_each_possible_cpu(cpu)
		magnet_ring_available(buf->rings[cpu], bytes, records);
}

/* Is there at least one record, and are both watermarks met? */
bool magnet_buffer_ready(struct magnet_buffer *buf,
			 const struct magnet_watermarks *wm)
{
	unsigned long bytes, records;

	buffer_available(buf, &bytes, &records);
	return records >= max(wm->records, 1UL) && bytes >= wm->bytes;
}

/* Give each ring its share of what is still missing (see top of file). */
static void buffer_arm(struct magnet_buffer *buf,
		       const struct magnet_watermarks *wm)
{
	unsigned long bytes, records, need_bytes, need_records;
	unsigned int n = num_possible_cpus();
	unsigned int cpu;

	buffer_available(buf, &bytes, &records);
	need_bytes = wm->bytes > bytes ? wm->bytes - bytes : 0;
	need_records = max(wm->records, 1UL);
	need_records = need_records > records ? need_records - records : 0;
	/*
	 * Already met: arm for the next record, so that a SIGIO owner who
	 * did not drain hears of new data (edge-triggered, as sockets do).
	 * Sleepers and pollers do not sleep on a met condition anyway.
	 */
	if (!need_bytes && !need_records)
		need_records = 1;

	for_each_possible_cpu(cpu) {
		struct magnet_ring *ring = buf->rings[cpu];
		/* Pairs with smp_store_release() in ring_publish(). */
		unsigned long commit = smp_load_acquire(&ring->pub->commit);

		WRITE_ONCE(ring->wake_pos, need_bytes ?
			   commit + DIV_ROUND_UP(need_bytes, n) : ULONG_MAX);
		WRITE_ONCE(ring->wake_written, need_records ?
			   local_read(&ring->written) +
			   DIV_ROUND_UP(need_records, n) : ULONG_MAX);
	}
}

static void buffer_disarm(struct magnet_buffer *buf)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		WRITE_ONCE(buf->rings[cpu]->wake_pos, ULONG_MAX);
		WRITE_ONCE(buf->rings[cpu]->wake_written, ULONG_MAX);
	}
}

/*
 * Wake the reader if its condition holds: from @ring's irq_work (whose
 * thresholds are cleared if nobody waits, and set anew if the condition
 * is not met yet), or from a recheck (@ring NULL).
 */
static void buffer_wake_if_ready(struct magnet_buffer *buf,
				 struct magnet_ring *ring)
{
	struct magnet_watermarks wm = {
		.bytes = READ_ONCE(buf->wake.bytes),
		.records = READ_ONCE(buf->wake.records),
	};

	/* wq_has_sleeper() has the barrier that pairs with the waiter's. */
	if (!wq_has_sleeper(&buf->wait) && !READ_ONCE(buf->fasync)) {
		/* Nobody waits (any more): stop firing on this CPU. */
		if (ring) {
			WRITE_ONCE(ring->wake_pos, ULONG_MAX);
			WRITE_ONCE(ring->wake_written, ULONG_MAX);
		}
		return;
	}
	if (magnet_buffer_ready(buf, &wm)) {
		/*
		 * One wake-up per arming: whoever we wake re-arms (sleepers
		 * and pollers when they look again, a SIGIO owner when it
		 * reads), so other CPUs need not fire too.
		 */
		buffer_disarm(buf);
		wake_up_interruptible_poll(&buf->wait, EPOLLIN | EPOLLRDNORM);
		kill_fasync(&buf->fasync, SIGIO, POLL_IN);
	} else if (ring) {
		buffer_arm(buf, &wm);
	}
}

static void buffer_recheck(struct rcu_head *rcu);

static void buffer_recheck_queue(struct magnet_buffer *buf)
{
	buf->recheck.covered = atomic_long_read(&buf->recheck.asked);
	call_rcu(&buf->recheck.rcu, buffer_recheck);
}

/*
 * RCU callback: look at the rings again, a grace period after a reader
 * armed the thresholds and found its condition unmet. Every writer that
 * may have missed the new thresholds has published by now (see
 * ring_publish() in writer.h). Waits that asked while this was queued
 * get a grace period of their own: queued again.
 */
static void buffer_recheck(struct rcu_head *rcu)
{
	struct magnet_buffer *buf = container_of(rcu, struct magnet_buffer,
						 recheck.rcu);
	unsigned long asked;

	buffer_wake_if_ready(buf, NULL);
	asked = atomic_long_read(&buf->recheck.asked);
	if (READ_ONCE(buf->recheck.stop)) {
		clear_bit_unlock(0, &buf->recheck.queued);
		return;
	}
	if (asked != buf->recheck.covered) {
		buffer_recheck_queue(buf);
		return;
	}
	clear_bit_unlock(0, &buf->recheck.queued);
	/*
	 * A wait that asked after our read of @asked found the bit still
	 * set and counts on us. Full barrier, pairing with the one after
	 * its increment: we see its @asked, or it saw the bit clear.
	 */
	smp_mb__after_atomic();
	if (atomic_long_read(&buf->recheck.asked) != asked &&
	    !test_and_set_bit(0, &buf->recheck.queued))
		buffer_recheck_queue(buf);
}

/**
 * magnet_buffer_wait_prepare - arm the wake-up, then check readiness
 * @buf:	the buffer
 * @wm:		the condition to wait for
 *
 * Call after queueing on buf->wait (prepare_to_wait(), poll_wait()).
 * Return: true if the condition already holds (do not sleep). A removed
 * buffer (buf->dead) is the caller's to check.
 */
bool magnet_buffer_wait_prepare(struct magnet_buffer *buf,
				const struct magnet_watermarks *wm)
{
	WRITE_ONCE(buf->wake.bytes, wm->bytes);
	WRITE_ONCE(buf->wake.records, wm->records);
	buffer_arm(buf, wm);
	/* Thresholds stored before we look at the rings again. */
	smp_mb();
	if (magnet_buffer_ready(buf, wm))
		return true;
	/*
	 * Writers do not order their @commit store before their load of
	 * the thresholds (no full barrier per record), so a writer may have
	 * published just now without seeing them, and we without seeing its
	 * record: look again after a grace period (ring_publish()).
	 */
	atomic_long_inc(&buf->recheck.asked);
	smp_mb__after_atomic();	/* see buffer_recheck() */
	if (!test_and_set_bit(0, &buf->recheck.queued)) {
		WRITE_ONCE(buf->recheck.used, true);
		buffer_recheck_queue(buf);
	}
	return false;
}

/* irq_work: a writer crossed its ring's threshold. */
void magnet_buffer_wake_work(struct irq_work *work)
{
	struct magnet_ring *ring = container_of(work, struct magnet_ring,
						wake_work);

	buffer_wake_if_ready(ring->buf, ring);
}

/* Attach the one reader a buffer may have. -EBUSY if it has one. */
int magnet_reader_attach(struct magnet_buffer *buf,
			 struct magnet_reader *reader)
{
	if (test_and_set_bit_lock(0, &buf->reader_busy))
		return -EBUSY;
	memset(reader, 0, sizeof(*reader));
	reader->buf = buf;
	mutex_init(&reader->lock);
	if (buf->mode == MAGNET_FULL_OVERWRITE) {
		reader->bounce = kvmalloc(ALIGN(buf->max_record,
						MAGNET_RECORD_ALIGN),
					  GFP_KERNEL);
		if (!reader->bounce) {
			clear_bit_unlock(0, &buf->reader_busy);
			return -ENOMEM;
		}
	}
	kref_get(&buf->ref);
	return 0;
}

void magnet_reader_detach(struct magnet_reader *reader)
{
	struct magnet_buffer *buf = reader->buf;

	WRITE_ONCE(buf->wake.bytes, ULONG_MAX);
	WRITE_ONCE(buf->wake.records, ULONG_MAX);
	kvfree(reader->bounce);
	mutex_destroy(&reader->lock);
	clear_bit_unlock(0, &buf->reader_busy);
	magnet_buffer_put(buf);
}

/*
 * Consume records from all CPUs' rings into @sink, one ring after the
 * other, starting one CPU further on each call so that no CPU's records
 * wait behind another's. Returns the number of records delivered, or a
 * negative errno if the sink failed before taking any (-ENOSPC: the next
 * record is larger than the sink's room).
 */
long magnet_read_records(struct magnet_reader *reader,
			 struct magnet_sink *sink)
{
	struct magnet_buffer *buf = reader->buf;
	unsigned int cpu = reader->next_cpu;
	unsigned int i;
	int ret = 0;

	lockdep_assert_held(&reader->lock);
	reader->next_cpu = cpu + 1 < nr_cpu_ids ? cpu + 1 : 0;
	for (i = 0; i < nr_cpu_ids && !ret; i++, cpu++) {
		if (cpu >= nr_cpu_ids)
			cpu = 0;
		if (cpu_possible(cpu))
			ret = magnet_ring_read(reader, buf->rings[cpu], sink);
	}
	/* -ENOSPC with nothing delivered: the next record did not fit. */
	if (ret < 0 && !sink->records)
		return ret;
	return sink->records;
}

/**
 * magnet_reader_open - attach a kernel-space reader to a buffer
 * @buf:	the buffer (the reader takes its own reference)
 *
 * The buffer's file cannot be opened while a kernel reader is attached,
 * and the other way round.
 *
 * Return: the reader, ERR_PTR(-EBUSY) if the buffer has a reader,
 * ERR_PTR(-ENOMEM).
 */
struct magnet_reader *magnet_reader_open(struct magnet_buffer *buf)
{
	struct magnet_reader *reader;
	int err;

	reader = kmalloc(sizeof(*reader), GFP_KERNEL);
	if (!reader)
		return ERR_PTR(-ENOMEM);
	err = magnet_reader_attach(buf, reader);
	if (err) {
		kfree(reader);
		return ERR_PTR(err);
	}
	return reader;
}
EXPORT_SYMBOL_GPL(magnet_reader_open);

void magnet_reader_close(struct magnet_reader *reader)
{
	magnet_reader_detach(reader);
	kfree(reader);
}
EXPORT_SYMBOL_GPL(magnet_reader_close);

struct consume_sink {
	struct magnet_sink sink;
	long max;
	magnet_consume_fn fn;
	void *ctx;
	int err;
};

static int consume_deliver(struct magnet_sink *sink,
			   const struct magnet_record *rec)
{
	struct consume_sink *cs = container_of(sink, struct consume_sink, sink);
	int ret = cs->fn(rec, cs->ctx);

	sink->records++;
	if (ret < 0)
		cs->err = ret;
	return ret < 0 || sink->records >= cs->max ? 1 : ret;
}

/**
 * magnet_reader_consume - hand available records to a function
 * @reader:	a reader from magnet_reader_open()
 * @max_records: stop after this many records
 * @fn:		called for each record, in process context (it may sleep)
 * @ctx:	passed to @fn
 *
 * Does not wait: it consumes what is there. Loss records are delivered
 * like the file's reader gets them.
 *
 * Return: the number of records consumed, or the negative errno @fn
 * returned.
 */
long magnet_reader_consume(struct magnet_reader *reader, long max_records,
			   magnet_consume_fn fn, void *ctx)
{
	struct consume_sink cs = {
		.sink = { .room = ULONG_MAX, .deliver = consume_deliver },
		.max = max_records,
		.fn = fn,
		.ctx = ctx,
	};
	long n;

	if (max_records <= 0)
		return 0;
	might_sleep();
	mutex_lock(&reader->lock);
	n = magnet_read_records(reader, &cs.sink);
	mutex_unlock(&reader->lock);
	return cs.err ? cs.err : n;
}
EXPORT_SYMBOL_GPL(magnet_reader_consume);

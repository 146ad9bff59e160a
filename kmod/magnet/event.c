// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: the event registry and the path every event's records take.
 *
 * An event is anything that logs under an event id: magnet's own probes
 * (probe.c) and events other modules register here. The registry maps ids
 * and names to events; magnet_event_log() is the one path from a hit to a
 * record: test the hit against the event's gate (filter.c), cut to the
 * snap length, log, count the outcome, and copy to the notification
 * queue if asked. Handlers of magnet's own probes take the same path in
 * two steps, magnet_event_admit() first, so that a hit filtered out by
 * who or where it runs costs them nothing more.
 *
 * Ids are handed out cyclically, so an id is not reused soon after its
 * event goes away and records still in a buffer are not mistaken for a
 * newer event's.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "magnet.h"
#include "writer.h"

/* Serialises the registry and enabling or disabling events. */
DEFINE_MUTEX(magnet_events_lock);
static DEFINE_IDR(magnet_events);

/**
 * magnet_event_add - give an event an id and a buffer
 * @ev:		the event, its name, kind and owner filled in
 * @buffer:	name of the buffer its records go to
 *
 * The event starts disabled. Caller holds magnet_events_lock.
 * Return: 0, -EINVAL (bad name), -EEXIST (name in use), -ENOENT (no such
 * buffer), -ENOSPC (no id left) or -ENOMEM.
 */
int magnet_event_add(struct magnet_event *ev, const char *buffer)
{
	int id;

	lockdep_assert_held(&magnet_events_lock);
	if (!magnet_name_valid(ev->name))
		return -EINVAL;
	if (magnet_event_find(0, ev->session, ev->name))
		return -EEXIST;
	ev->stats = alloc_percpu(struct magnet_event_stats);
	if (!ev->stats)
		return -ENOMEM;
	ev->buf = magnet_buffer_get_for_event(ev->session, buffer);
	if (!ev->buf) {
		free_percpu(ev->stats);
		return -ENOENT;
	}
	id = idr_alloc_cyclic(&magnet_events, ev, 1, MAGNET_EVENT_ID_MAX + 1,
			      GFP_KERNEL);
	if (id < 0) {
		magnet_buffer_put_for_event(ev->buf);
		free_percpu(ev->stats);
		return id;
	}
	ev->id = id;
	ev->enabled = false;
	return 0;
}

/*
 * Take an event out of the registry. Whoever calls this has made sure no
 * hit is still logging it (probes unregistered, module done).
 */
void magnet_event_del(struct magnet_event *ev)
{
	lockdep_assert_held(&magnet_events_lock);
	magnet_filters_remove_event(ev);
	idr_remove(&magnet_events, ev->id);
	magnet_buffer_put_for_event(ev->buf);
	free_percpu(ev->stats);
}

/*
 * The event with id @id, or if @id is 0 the one named @name in session
 * @session.
 */
struct magnet_event *magnet_event_find(u16 id, u32 session, const char *name)
{
	struct magnet_event *ev;
	int i;

	lockdep_assert_held(&magnet_events_lock);
	if (id)
		return idr_find(&magnet_events, id);
	idr_for_each_entry(&magnet_events, ev, i)
		if (ev->session == session && !strcmp(ev->name, name))
			return ev;
	return NULL;
}

/* How many events session @session has (its max_session_probes). */
unsigned int magnet_events_in_session(u32 session)
{
	struct magnet_event *ev;
	unsigned int n = 0;
	int i;

	lockdep_assert_held(&magnet_events_lock);
	idr_for_each_entry(&magnet_events, ev, i)
		n += ev->session == session;
	return n;
}

/* The event with the lowest id >= *@id (updated), for walking the list. */
struct magnet_event *magnet_event_next(u16 *id)
{
	int next = *id;
	struct magnet_event *ev;

	lockdep_assert_held(&magnet_events_lock);
	ev = idr_get_next(&magnet_events, &next);
	if (ev)
		*id = next;
	return ev;
}

int magnet_event_set_enabled(struct magnet_event *ev, bool on)
{
	int err;

	lockdep_assert_held(&magnet_events_lock);
	if (ev->enabled == on)
		return 0;
	if (on) {
		err = ev->ops && ev->ops->enable ? ev->ops->enable(ev) : 0;
		if (err)
			return err;
		WRITE_ONCE(ev->enabled, true);
	} else {
		WRITE_ONCE(ev->enabled, false);
		if (ev->ops && ev->ops->disable)
			ev->ops->disable(ev);
	}
	return 0;
}

void magnet_event_stats_sum(struct magnet_event *ev,
			    struct magnet_event_totals *sum)
{
	unsigned int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct magnet_event_stats *s = per_cpu_ptr(ev->stats, cpu);

		sum->logged += READ_ONCE(s->logged);
		sum->filtered += READ_ONCE(s->filtered);
		sum->sampled += READ_ONCE(s->sampled);
		sum->lost += READ_ONCE(s->lost);
	}
	/* A hit is counted once, by its outcome: hits are the sum. */
	sum->hits = sum->logged + sum->filtered + sum->sampled + sum->lost;
}

/*
 * The full rules, for a hit the gate could not decide alone: build the hit
 * as the record header would describe it and let filter.c decide.
 */
noinline bool magnet_event_evaluate(struct magnet_event *ev, u64 id,
				    const void *payload, u32 size,
				    const void *object)
{
	struct magnet_hit hit = {
		.event = ev,
		.event_id = ev->id,
		.cpu = raw_smp_processor_id(),
		.tgid = current->tgid,
		.tid = current->pid,
		.id = id,
		.payload = payload,
		.payload_size = size,
		.object = object,
	};

	return magnet_gate_evaluate(ev, &hit);
}

/**
 * magnet_event_log_admitted - log a hit that magnet_event_admit() let in
 * @ev:		the event
 * @admit:	what magnet_event_admit() said, not MAGNET_ADMIT_NO
 * @id:		the record's abstract id
 * @payload:	event data
 * @payload_size: bytes at @payload, cut here to the event's snap length
 * @object:	what the hit is about, for filter modules; or NULL
 *
 * Probe context, preemption disabled. Return: as magnet_event_log_object().
 */
int magnet_event_log_admitted(struct magnet_event *ev,
			      enum magnet_admit admit, u64 id,
			      const void *payload, u32 payload_size,
			      const void *object)
{
	return magnet_event_log_flagged(ev, admit, id, payload, payload_size,
					object, 0);
}

/**
 * magnet_event_log_flagged - magnet_event_log_admitted(), and record flags
 * @ev:		the event
 * @admit:	what magnet_event_admit() said, not MAGNET_ADMIT_NO
 * @id:		the record's abstract id
 * @payload:	event data
 * @payload_size: bytes at @payload, cut here to the event's snap length
 * @object:	what the hit is about, for filter modules; or NULL
 * @rflags:	MAGNET_RF_* saying what the payload is (MAGNET_RF_BLOCK)
 *
 * Probe context, preemption disabled. Return: as magnet_event_log_object().
 */
int magnet_event_log_flagged(struct magnet_event *ev,
			     enum magnet_admit admit, u64 id,
			     const void *payload, u32 payload_size,
			     const void *object, u16 rflags)
{
	struct magnet_record *rec;
	u32 keep = payload_size;
	u32 snaplen;

	snaplen = READ_ONCE(ev->snaplen);
	if (snaplen && keep > snaplen)
		keep = snaplen;
	rec = magnet_event_reserve(ev, admit, id, payload, keep, keep, object);
	if (IS_ERR_OR_NULL(rec))
		return PTR_ERR_OR_ZERO(rec);
	keep = rec->size - sizeof(*rec);
	magnet_payload_copy(rec->payload, payload, keep);
	rec->flags |= rflags;
	if (keep < payload_size)
		rec->flags |= MAGNET_RF_TRUNCATED;
	magnet_event_commit(ev, rec);
	return 0;
}

/**
 * magnet_event_log_object - log one hit of an event that concerns an object
 * @ev:		the event
 * @id:		the record's abstract id
 * @payload:	event data, cut to the event's snap length
 * @payload_size: bytes at @payload
 * @object:	what the hit is about, of the event's object type (see
 *		magnet_event_set_object_type()), for filter modules; or NULL
 *
 * Any context, NMI included. Does nothing while the event is disabled.
 * The event's filter rules and sampling decide, before any buffer space
 * is taken, whether the hit is logged.
 *
 * Return: 0 if the record was logged, filtered, sampled away, or the event
 * is disabled; else the negative errno of magnet_reserve() (the hit is
 * counted as lost).
 */
int magnet_event_log_object(struct magnet_event *ev, u64 id,
			    const void *payload, u32 payload_size,
			    const void *object)
{
	enum magnet_admit admit;
	int ret = 0;

	/* Callers may be preemptible: the gate is read under RCU-sched. */
	preempt_disable_notrace();
	admit = magnet_event_admit(ev);
	if (admit != MAGNET_ADMIT_NO)
		ret = magnet_event_log_admitted(ev, admit, id, payload,
						payload_size, object);
	preempt_enable_notrace();
	return ret;
}
EXPORT_SYMBOL_GPL(magnet_event_log_object);

/**
 * magnet_event_log - log one hit of an event
 * @ev:		the event
 * @id:		the record's abstract id
 * @payload:	event data, cut to the event's snap length
 * @payload_size: bytes at @payload
 *
 * magnet_event_log_object() for hits with no object.
 */
int magnet_event_log(struct magnet_event *ev, u64 id, const void *payload,
		     u32 payload_size)
{
	return magnet_event_log_object(ev, id, payload, payload_size, NULL);
}
EXPORT_SYMBOL_GPL(magnet_event_log);

struct magnet_event *__magnet_event_register(struct module *owner,
					     const char *name,
					     const char *buffer,
					     const struct magnet_event_ops *ops,
					     void *priv)
{
	struct magnet_event *ev;
	int err;

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return ERR_PTR(-ENOMEM);
	if (strscpy(ev->name, name, sizeof(ev->name)) < 0) {
		kfree(ev);
		return ERR_PTR(-EINVAL);
	}
	ev->kind = MAGNET_PROBE_EXTERNAL;
	ev->ops = ops;
	ev->priv = priv;
	ev->owner = owner;

	mutex_lock(&magnet_events_lock);
	err = magnet_event_add(ev, buffer);
	mutex_unlock(&magnet_events_lock);
	if (err) {
		kfree(ev);
		return ERR_PTR(err);
	}
	return ev;
}
EXPORT_SYMBOL_GPL(__magnet_event_register);

/**
 * magnet_event_unregister - remove a module's event
 * @ev:		from magnet_event_register()
 *
 * Disables the event (calling its @disable hook) and removes it. The
 * module must not log into it once this is called, and logging calls
 * already under way must have returned.
 */
void magnet_event_unregister(struct magnet_event *ev)
{
	mutex_lock(&magnet_events_lock);
	magnet_event_set_enabled(ev, false);
	magnet_event_del(ev);
	mutex_unlock(&magnet_events_lock);
	kfree(ev);
}
EXPORT_SYMBOL_GPL(magnet_event_unregister);

u16 magnet_event_id(const struct magnet_event *ev)
{
	return ev->id;
}
EXPORT_SYMBOL_GPL(magnet_event_id);

void *magnet_event_priv(const struct magnet_event *ev)
{
	return ev->priv;
}
EXPORT_SYMBOL_GPL(magnet_event_priv);

const char *magnet_event_name(const struct magnet_event *ev)
{
	return ev->name;
}
EXPORT_SYMBOL_GPL(magnet_event_name);

/* The buffer the event logs into; valid as long as the event is. */
struct magnet_buffer *magnet_event_buffer(const struct magnet_event *ev)
{
	return ev->buf;
}
EXPORT_SYMBOL_GPL(magnet_event_buffer);

enum magnet_object_type magnet_event_object_type(const struct magnet_event *ev)
{
	return ev->object_type;
}
EXPORT_SYMBOL_GPL(magnet_event_object_type);

/**
 * magnet_event_set_object_type - say what an event's hits are about
 * @ev:		a module's event, before it is first enabled
 * @type:	the type of the @object its module passes to
 *		magnet_event_log_object()
 */
void magnet_event_set_object_type(struct magnet_event *ev,
				  enum magnet_object_type type)
{
	ev->object_type = type;
}
EXPORT_SYMBOL_GPL(magnet_event_set_object_type);

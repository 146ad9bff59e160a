/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: in-kernel API for modules that log into magnet's buffers or read
 * from them. The record format is in <uapi/linux/magnet.h>.
 */
#ifndef _LINUX_MAGNET_H
#define _LINUX_MAGNET_H

#include <linux/module.h>
#include <linux/types.h>
#include <uapi/linux/magnet.h>

struct magnet_buffer;
struct magnet_reader;

/* Buffer behaviour when a CPU's ring is full. */
enum magnet_full_mode {
	MAGNET_FULL_DROP,	/* drop the new record, count it (default) */
	MAGNET_FULL_OVERWRITE,	/* evict the oldest records (flight recorder) */
};

struct magnet_buffer *magnet_buffer_get(const char *name);
void magnet_buffer_put(struct magnet_buffer *buf);

struct magnet_record *magnet_reserve(struct magnet_buffer *buf, u16 event,
				     u64 id, u32 payload_size);
void magnet_commit(struct magnet_buffer *buf, struct magnet_record *rec);
int magnet_log(struct magnet_buffer *buf, u16 event, u64 id,
	       const void *payload, u32 payload_size);

/**
 * typedef magnet_consume_fn - receives one record from magnet_reader_consume()
 * @rec:	the record; valid only during the call
 * @ctx:	the caller's context pointer
 *
 * Return: 0 to go on, a positive value to stop after this record, or a
 * negative errno to stop and make magnet_reader_consume() return it. The
 * record counts as read in every case.
 */
typedef int (*magnet_consume_fn)(const struct magnet_record *rec, void *ctx);

struct magnet_reader *magnet_reader_open(struct magnet_buffer *buf);
void magnet_reader_close(struct magnet_reader *reader);
long magnet_reader_consume(struct magnet_reader *reader, long max_records,
			   magnet_consume_fn fn, void *ctx);

/*
 * Events of other modules. A module registers an event by name, gets an
 * event id, and logs records with magnet_event_log(). Its events are listed,
 * enabled, disabled, filtered and counted like magnet's own probes
 * (kind MAGNET_PROBE_EXTERNAL). See kmod/sample/ for an example.
 */
struct magnet_event;

/**
 * struct magnet_event_ops - optional hooks of a module's event
 * @enable:	the event was enabled: start producing (e.g. arm a hook).
 *		A negative errno refuses, and the event stays disabled.
 * @disable:	the event was disabled: stop producing. Records logged
 *		while disabled are ignored anyway.
 *
 * Called in process context, serialised with each other and with
 * registration; they must not register or unregister events.
 */
struct magnet_event_ops {
	int (*enable)(struct magnet_event *ev);
	void (*disable)(struct magnet_event *ev);
};

struct magnet_event *__magnet_event_register(struct module *owner,
					     const char *name,
					     const char *buffer,
					     const struct magnet_event_ops *ops,
					     void *priv);
/**
 * magnet_event_register - register an event of the calling module
 * @name:	unique event name, 1..MAGNET_NAME_LEN-1 bytes, no '/' or spaces
 * @buffer:	name of the buffer its records go to (e.g. "default")
 * @ops:	hooks, or NULL
 * @priv:	the module's pointer, see magnet_event_priv()
 *
 * The event starts disabled; an administrator enables it (magnetctl probe
 * enable NAME). Unregister it before the module unloads.
 *
 * Return: the event, or ERR_PTR(-EINVAL) (bad name), -EEXIST (name in
 * use), -ENOENT (no such buffer), -ENOSPC (no event id left), -ENOMEM.
 */
#define magnet_event_register(name, buffer, ops, priv) \
	__magnet_event_register(THIS_MODULE, name, buffer, ops, priv)
void magnet_event_unregister(struct magnet_event *ev);
u16 magnet_event_id(const struct magnet_event *ev);
void *magnet_event_priv(const struct magnet_event *ev);
int magnet_event_log(struct magnet_event *ev, u64 id, const void *payload,
		     u32 payload_size);

#endif /* _LINUX_MAGNET_H */

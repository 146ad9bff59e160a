/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: in-kernel API for modules that log into magnet's buffers or read
 * from them. The record format is in <uapi/linux/magnet.h>.
 */
#ifndef _LINUX_MAGNET_H
#define _LINUX_MAGNET_H

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

#endif /* _LINUX_MAGNET_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Walking the whole records of a run of bytes, as read(), the mapping and
 * a trace file hand them out (struct magnet_record and MAGNET_RECORD_LEN()
 * in <linux/magnet.h>), with the checks every reader makes: a header that
 * does not fit, a @size below the header's or running past the end, is
 * where the walk stops, and says so.
 *
 *	struct record_walk w;
 *	const struct magnet_record *rec;
 *
 *	record_walk_init(&w, buf, len);
 *	while ((rec = record_next(&w)))
 *		use(rec);
 *	if (w.bad)
 *		the bytes from w.off on are not a whole record
 */
#ifndef MAGNET_RECORD_H
#define MAGNET_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/magnet.h>

struct record_walk {
	const unsigned char *buf;
	size_t len;
	size_t off;	/* where the next record starts */
	bool bad;	/* the walk stopped at bytes that are not a record */
};

static inline void record_walk_init(struct record_walk *w, const void *buf,
				    size_t len)
{
	w->buf = buf;
	w->len = len;
	w->off = 0;
	w->bad = false;
}

/*
 * The next whole record, NULL at the end of the bytes or at the first
 * that are not a whole record (then @bad is set, and @off is where they
 * start). The last record may end without its alignment padding.
 */
static inline const struct magnet_record *record_next(struct record_walk *w)
{
	const struct magnet_record *rec;
	size_t left = w->len - w->off;

	if (!left || w->bad)
		return NULL;
	rec = (const void *)(w->buf + w->off);
	if (left < sizeof(*rec) || rec->size < sizeof(*rec) ||
	    rec->size > left) {
		w->bad = true;
		return NULL;
	}
	w->off += MAGNET_RECORD_LEN(rec->size) < left ?
		  MAGNET_RECORD_LEN(rec->size) : left;
	return rec;
}

#endif /* MAGNET_RECORD_H */

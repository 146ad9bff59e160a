/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Putting the CPUs' records back in timestamp order, as magnet-read and
 * magnetd read them: one CPU's records come in order (the ring's), the
 * CPUs' interleaved in no particular order, so a record can only be
 * handed on once no record older than it can still come: once it is more
 * than a window older than a time up to which every CPU's records are in (the
 * reader's horizon: the newest record seen, the clock, or what the mapping
 * says). The window is the reader's choice: how late, at most, a CPU's
 * records come in after another's.
 *
 * The merge holds the caller's items, each with its timestamp; equal
 * timestamps come out in the order they went in. It does not copy or free
 * them.
 */
#ifndef MAGNET_MERGE_H
#define MAGNET_MERGE_H

#include <stddef.h>
#include <stdint.h>

#define MERGE_ALL	UINT64_MAX	/* a horizon past every record */

struct merge;

/* A merge that holds records @window_ns; NULL: out of memory. */
struct merge *merge_new(uint64_t window_ns);

/* Free the merge, not the items it still holds (merge_pop() them first). */
void merge_free(struct merge *m);

/* Hold @item, stamped @ts. Returns 0, or -1 (ENOMEM) and holds nothing. */
int merge_add(struct merge *m, uint64_t ts, void *item);

/*
 * The oldest item held, if it is more than the window older than @horizon (a
 * CLOCK_MONOTONIC time; MERGE_ALL: whatever is held), else NULL. @ts, if
 * not NULL, gets its timestamp.
 */
void *merge_pop(struct merge *m, uint64_t horizon, uint64_t *ts);

/* Items held. */
size_t merge_count(const struct merge *m);

/* The newest timestamp added so far (0 before the first). */
uint64_t merge_newest(const struct merge *m);

#endif /* MAGNET_MERGE_H */

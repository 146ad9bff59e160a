// SPDX-License-Identifier: GPL-2.0
/*
 * The cross-CPU merge (see merge.h): a binary heap by (timestamp, arrival).
 */
#include <errno.h>
#include <stdlib.h>

#include "merge.h"

struct entry {
	uint64_t ts;
	uint64_t seq;		/* arrival, for equal timestamps */
	void *item;
};

struct merge {
	struct entry *heap;
	size_t n, size;
	uint64_t seq, newest, window;
};

struct merge *merge_new(uint64_t window_ns)
{
	struct merge *m = calloc(1, sizeof(*m));

	if (m)
		m->window = window_ns;
	return m;
}

void merge_free(struct merge *m)
{
	if (m)
		free(m->heap);
	free(m);
}

static int before(const struct entry *a, const struct entry *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->seq < b->seq);
}

int merge_add(struct merge *m, uint64_t ts, void *item)
{
	struct entry e = { ts, m->seq, item };
	size_t i;

	if (m->n == m->size) {
		size_t size = m->size * 2 + 1024;
		struct entry *heap = realloc(m->heap, size * sizeof(*heap));

		if (!heap) {
			errno = ENOMEM;
			return -1;
		}
		m->heap = heap;
		m->size = size;
	}
	m->seq++;
	if (ts > m->newest)
		m->newest = ts;
	for (i = m->n++; i && before(&e, &m->heap[(i - 1) / 2]); i = (i - 1) / 2)
		m->heap[i] = m->heap[(i - 1) / 2];
	m->heap[i] = e;
	return 0;
}

void *merge_pop(struct merge *m, uint64_t horizon, uint64_t *ts)
{
	struct entry top, last;
	size_t i = 0, c;

	if (!m->n)
		return NULL;
	top = m->heap[0];
	/* held until more than the window older than the horizon */
	if (horizon != MERGE_ALL &&
	    (horizon <= m->window || top.ts >= horizon - m->window))
		return NULL;
	last = m->heap[--m->n];
	while ((c = 2 * i + 1) < m->n) {
		if (c + 1 < m->n && before(&m->heap[c + 1], &m->heap[c]))
			c++;
		if (!before(&m->heap[c], &last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	m->heap[i] = last;
	if (ts)
		*ts = top.ts;
	return top.item;
}

size_t merge_count(const struct merge *m)
{
	return m->n;
}

uint64_t merge_newest(const struct merge *m)
{
	return m->newest;
}

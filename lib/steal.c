// SPDX-License-Identifier: GPL-2.0
/* Steal time from a sampler's ticks (steal.h). */
#include <stdlib.h>
#include <string.h>

#include <linux/magnet.h>

#include "steal.h"

uint64_t steal_margin(uint64_t period, uint64_t median_dev)
{
	uint64_t m = 4 * median_dev;

	return m > period / 10 ? m : period / 10;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t steal_margin_of(uint64_t period, uint64_t *dev, size_t n)
{
	qsort(dev, n, sizeof(*dev), cmp_u64);
	return steal_margin(period, n ? dev[n / 2] : 0);
}

void steal_judge(const struct steal_tick *prev, const struct steal_tick *cur,
		 uint64_t period, uint64_t margin, struct steal_gap *g)
{
	memset(g, 0, sizeof(*g));
	if (!prev || (cur->flags & MAGNET_SAMPLE_F_FIRST) ||
	    cur->since <= period + margin)
		return;
	g->blank = cur->since - period;
	g->reported = cur->steal < g->blank ? cur->steal : g->blank;
	g->idle = (prev->flags | cur->flags) & MAGNET_SAMPLE_F_IDLE;
	if (g->idle)
		return;
	g->process = prev->tgid == cur->tgid;
	g->thread = prev->tid == cur->tid;
	g->function = g->thread && prev->func && cur->func &&
		      !strcmp(prev->func, cur->func);
}

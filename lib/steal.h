/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steal time from a sampler's ticks: the rules of "Execution Time
 * Compensation for Cloud Applications by Subtracting Steal Time based on
 * Host-Level Sampling" (Yamamoto, Nakashima, ICPE'16), applied to
 * cpu.sample's records (struct magnet_sample), one tick against its CPU's
 * previous one. Every reader that reports steal uses these, so that they
 * all say the same of the same ticks.
 *
 *   - A tick covers the time since its CPU's previous tick: the apparent
 *     time of what it found running.
 *   - A tick later than the period by more than the jitter margin ends a
 *     blank of that time less one period: the CPU did not run.
 *   - A blank is split into reported steal (what the kernel accounted as
 *     steal meanwhile, at most the blank) and the rest.
 *   - It is charged at each level (process, thread, function) whose
 *     context is the same on both sides; a blank next to the idle task is
 *     a halted CPU, and not steal at all.
 */
#ifndef MAGNET_STEAL_H
#define MAGNET_STEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One tick, as the rules see it */
struct steal_tick {
	uint32_t tgid, tid;
	uint32_t flags;		/* MAGNET_SAMPLE_F_* */
	uint64_t since;		/* ns since the CPU's previous tick */
	uint64_t steal;		/* ns of steal the kernel accounted meanwhile */
	const char *func;	/* the function it found, compared by name */
};

/* The gap a tick ends */
struct steal_gap {
	uint64_t blank;		/* ns the CPU did not run; 0: no blank */
	uint64_t reported;	/* of it, reported as steal */
	bool idle;		/* next to the idle task: not steal */
	bool process, thread, function;	/* charged at these levels */
};

/*
 * The margin beyond the period for ticks whose median distance from the
 * period is @median_dev: four times that, and a tenth of the period at
 * least.
 */
uint64_t steal_margin(uint64_t period, uint64_t median_dev);

/* A tick's distance from the period: |@since - @period| */
static inline uint64_t steal_deviation(uint64_t since, uint64_t period)
{
	return since > period ? since - period : period - since;
}

/*
 * The margin for ticks whose distances from the period are @dev[0..@n)
 * (steal_deviation(); put in order here): steal_margin() of their median.
 */
uint64_t steal_margin_of(uint64_t period, uint64_t *dev, size_t n);

/*
 * The gap that @cur ends, after its CPU's previous tick @prev (NULL: none
 * known, or @cur is the CPU's first, MAGNET_SAMPLE_F_FIRST).
 */
void steal_judge(const struct steal_tick *prev, const struct steal_tick *cur,
		 uint64_t period, uint64_t margin, struct steal_gap *g);

#endif

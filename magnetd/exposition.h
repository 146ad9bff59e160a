/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetd's metrics in the formats Prometheus scrapes (exposition.c): the
 * text format 0.0.4 and OpenMetrics 1.0.0, and which one a request's
 * Accept header asks for.
 */
#ifndef MAGNETD_EXPOSITION_H
#define MAGNETD_EXPOSITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "magnetd.h"

enum exposition_format {
	EXPOSITION_PROMETHEUS,		/* text/plain; version=0.0.4 */
	EXPOSITION_OPENMETRICS,		/* application/openmetrics-text */
};

struct exposition_input {
	const struct metrics *metrics;
	const struct config *cfg;	/* probe-sets: set and layer labels */
	const struct server *server;	/* magnetd's own metrics, or NULL */
	bool per_cpu;			/* magnet_cpu_events_total */
	unsigned int buckets;		/* histogram buckets per doubling: a
					 * divisor of METRICS_LE_PER_DOUBLING
					 */
	uint64_t scrapes, refused;	/* the endpoint's own counters */
	const struct account *ledger;	/* NULL: the ledger is off */
	const struct acct_watches *acct; /* watched processes, or NULL */
	const struct export_stats *otlp; /* spans posted, or NULL: no url */
	const struct samplers *samplers; /* cpu.sample probes' sums, or NULL */
};

/*
 * The page, malloc'ed (*@len bytes, not NUL-terminated), or NULL out of
 * memory. Its size is linear in what is configured: about 110 bytes per
 * event and family (2 families; per-cpu adds one line per CPU that logged),
 * 26 x buckets + 2 bucket lines of about 70 bytes per latency, 3 KB besides;
 * with the ledger on, a line per distinct label set of its rows (about
 * 100 bytes and the cgroup's path); per cpu.sample probe, about 330 bytes
 * for each process it sampled.
 */
char *exposition_render(const struct exposition_input *in,
			enum exposition_format fmt, size_t *len);
const char *exposition_content_type(enum exposition_format fmt);

/*
 * The format an Accept header's value asks for (NULL: none given): the
 * media range of higher q between application/openmetrics-text and
 * text/plain (or text/ *, * / *); OpenMetrics on a tie, the text format
 * if neither is named (as Prometheus's own clients answer).
 */
enum exposition_format exposition_negotiate(const char *accept);

#endif /* MAGNETD_EXPOSITION_H */

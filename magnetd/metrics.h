/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetd's aggregation: what the records of the kernel's buffers add up
 * to. Per event (a probe of the daemon's configuration): counts, bytes,
 * rates, per-CPU counts and the busiest thread groups. Per latency (a pair
 * of events whose records share a key, e.g. a packet's socket and its
 * handover to the driver): the distribution of the time between them.
 *
 * Nothing here does I/O or reads a clock: records and ticks come with
 * their CLOCK_MONOTONIC timestamps, so recorded traces replay exactly
 * (tests/host/metrics-unit.c).
 *
 * Memory is bounded whatever the records: per event, at most max_tgids
 * thread groups are tracked (the least busy is evicted for a new one); per
 * latency, at most max_pending starts wait for their end (a start beyond
 * that is counted in "overflow" and dropped), and a start still waiting
 * after the latency's timeout is aged out and counted in "expired".
 * Histograms are fixed-size.
 */
#ifndef MAGNETD_METRICS_H
#define MAGNETD_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/magnet.h>

#include "libmagnet.h"

struct metrics;

struct metrics_limits {
	unsigned int window_s;		/* rates and percentiles cover the
					 * last window_s seconds (>= 1)
					 */
	unsigned int top_tgids;		/* "top" lines per event */
	unsigned int max_tgids;		/* thread groups tracked per event */
	unsigned int max_cpus;		/* per-CPU counts kept for CPUs below
					 * this; others count in the total
					 */
};

/* What a latency matches a start and an end record by. */
enum metrics_key {
	METRICS_KEY_ID,		/* the record header's abstract id */
	METRICS_KEY_SOCK,	/* struct magnet_packet's sock (packet probes) */
	METRICS_KEY_SKB,	/* struct magnet_packet's skb (packet probes) */
};

struct metrics *metrics_new(const struct metrics_limits *lim);
void metrics_free(struct metrics *m);

/*
 * Declare event @name. Its metrics exist from now on, at zero. Declaring a
 * name that exists keeps it and its totals (a reload). Returns 0, or -1
 * with errno (EINVAL: bad name; EEXIST: a latency has that name; ENOSPC:
 * 65534 events; ENOMEM).
 */
int metrics_event(struct metrics *m, const char *name);

/*
 * Bind kernel event id @id to event @name (declared before): records with
 * that id count for it. Ids change when the module is reloaded or the
 * probe re-created; binding an id unbinds any name it had. Id 0 unbinds
 * @name. Returns 0, or -1 with errno (ENOENT; EINVAL: id above
 * MAGNET_EVENT_ID_MAX).
 */
int metrics_bind(struct metrics *m, const char *name, uint16_t id);

/*
 * Declare latency @name from event @start to event @end (both declared
 * since the last metrics_mark()), keyed by @key: an end record closes the
 * oldest waiting start with the same key (first in, first out); key 0
 * never pairs, and an end stamped before its start counts as 0 ns. A
 * start waits at most @timeout_ns; at most @max_pending wait at once.
 * Redeclaring keeps the totals and histograms and takes the new
 * parameters (waiting starts too, if start, end and key are the same).
 * Times (min, mean, pNN, max) are over the window, 0 while it holds no
 * pair. Returns 0, or -1 with errno (EINVAL: bad name, start == end,
 * max_pending 0; ENOENT: start or end not declared; EEXIST: an event has
 * that name; ENOMEM).
 */
int metrics_latency(struct metrics *m, const char *name, const char *start,
		    const char *end, enum metrics_key key, uint64_t timeout_ns,
		    uint32_t max_pending);

/*
 * Forget events and latencies not declared since the last
 * metrics_mark() (a reload that dropped them). metrics_mark() marks all
 * as undeclared.
 */
void metrics_mark(struct metrics *m);
void metrics_sweep(struct metrics *m);

/*
 * Count one record (header and payload, rec->size bytes; the caller has
 * checked that rec->size is within what it read). Latencies want records
 * in timestamp order (reader.c restores it across CPUs); an end that
 * comes before its start still pairs, but a key reused on another CPU
 * meanwhile (an skb) can pair wrongly out of order. Loss records
 * (MAGNET_EVENT_LOSS) add to the loss counter; records of unbound ids are
 * counted as "unknown".
 */
void metrics_record(struct metrics *m, const struct magnet_record *rec);

/*
 * Advance time to @now_ns (CLOCK_MONOTONIC): rotates the windows and ages
 * out waiting starts. Call at least once per second of record time; record
 * timestamps later than the last tick are fine.
 */
void metrics_tick(struct metrics *m, uint64_t now_ns);

/*
 * Hand every metric to @cb, in a stable order (events in declaration
 * order, then latencies, then the totals). Names are "EVENT.count",
 * "EVENT.rate", "EVENT.bytes", "EVENT.byte_rate", "EVENT.cpuN.count",
 * "LATENCY.count", "LATENCY.min", "LATENCY.mean", "LATENCY.p50",
 * "LATENCY.p90", "LATENCY.p99", "LATENCY.max", "LATENCY.pending",
 * "LATENCY.expired", "LATENCY.overflow", and "records", "records.lost",
 * "records.unknown". Units and descriptions as in libmagnet.h's "metric"
 * lines.
 */
typedef void (*metrics_cb)(void *ctx, const char *name,
			   enum magnet_metric_type type, const char *unit,
			   double value, const char *description);
void metrics_foreach(const struct metrics *m, metrics_cb cb, void *ctx);

/* The busiest thread groups of each event over the window, by rank. */
typedef void (*metrics_top_cb)(void *ctx, const char *event,
			       unsigned int rank, uint32_t tgid,
			       uint64_t count);
void metrics_foreach_top(const struct metrics *m, metrics_top_cb cb,
			 void *ctx);

/*
 * The same, structured, for exporters that label rather than name
 * (exposition.c). A view (its names and histogram included) stays valid
 * until the metrics next change: a record, a tick, a declaration.
 *
 * A latency's histogram, as Prometheus wants one: every pair since
 * metrics_new() by its start-to-end time, in METRICS_LE buckets with
 * inclusive upper bounds metrics_le_ns(0 .. METRICS_LE - 1): 256 ns, then
 * eight per doubling up to 2^34 ns (17.2 s), each bound 1/8 to 1/16 above
 * the one before; le[METRICS_LE] counts the longer ones. A quantile
 * interpolated within a bucket (PromQL's histogram_quantile()) is within
 * that bucket: off by at most 12.5 % of the exact value, for a latency
 * from 256 ns to 17.2 s. Every second, fourth or eighth bound is a
 * coarser histogram of 4, 2 or 1 buckets per doubling (exposition.c
 * serves one of those if asked), off by at most 25, 50 or 100 %.
 */
#define METRICS_LE_MIN_EXP	8
#define METRICS_LE_MAX_EXP	34
#define METRICS_LE_PER_DOUBLING	8
#define METRICS_LE	(1 + (METRICS_LE_MAX_EXP - METRICS_LE_MIN_EXP) * \
			 METRICS_LE_PER_DOUBLING)
uint64_t metrics_le_ns(unsigned int i);	/* UINT64_MAX from METRICS_LE */

struct metrics_event_view {
	const char *name;
	uint64_t count, bytes;		/* totals */
	double rate, byte_rate;		/* over the window, per second */
	unsigned int ncpus;
	const uint64_t *cpu;		/* [ncpus] records per CPU */
};

struct metrics_latency_view {
	const char *name;
	uint64_t count, sum_ns;		/* pairs, their total time */
	const uint64_t *le;		/* [METRICS_LE + 1], not cumulative */
	uint64_t pending, expired, overflow;
	unsigned int window_s;
	uint64_t window_count;		/* pairs in the window */
	uint64_t min, p50, p90, p99, max;	/* ns, over the window */
	double mean;
};

typedef void (*metrics_event_cb)(void *ctx,
				 const struct metrics_event_view *v);
typedef void (*metrics_latency_cb)(void *ctx,
				   const struct metrics_latency_view *v);
void metrics_foreach_event(const struct metrics *m, metrics_event_cb cb,
			   void *ctx);
void metrics_foreach_latency(const struct metrics *m, metrics_latency_cb cb,
			     void *ctx);
void metrics_totals(const struct metrics *m, uint64_t *records,
		    uint64_t *lost, uint64_t *unknown);

/* The value of metric @name now; false if there is none. */
bool metrics_get(const struct metrics *m, const char *name, double *value);

#endif /* MAGNETD_METRICS_H */

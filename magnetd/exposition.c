// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's metrics as Prometheus scrapes them: the text format 0.0.4 or
 * OpenMetrics 1.0.0 (exposition.h). Written here, not with a library:
 * Debian has no C client library of Prometheus, and the formats are a few
 * line shapes; they are checked by Prometheus's own tools in the tests
 * (promtool check metrics, a real scrape, the OpenMetrics parser of
 * Debian's python3-prometheus-client).
 *
 * Families (labels in braces; set and layer only for the layers of a
 * probe-set, cpu only with per-cpu = true):
 *   magnet_events_total{event,set,layer}		counter
 *   magnet_event_bytes_total{event,set,layer}		counter
 *   magnet_cpu_events_total{event,set,layer,cpu}	counter
 *   magnet_latency_seconds{latency}			histogram: _bucket{le},
 *							_sum, _count
 *   magnet_latency_starts_pending{latency}		gauge
 *   magnet_latency_starts_expired_total, _dropped_total	counters
 *   magnet_records_total, _lost_total, _unknown_total	counters
 *   magnet_ledger_enabled				gauge: 1 while the
 *							ledger is on
 *   magnet_cpu_seconds_total{cgroup,kind,vector,name}	counter, ledger on:
 *							its rows, summed
 *   magnet_cpu_elapsed_seconds_total			counter, ledger on
 *   magnet_acct_call_seconds{pid,comm,syscall}		histogram, per-call
 *							costs of watched
 *							processes, and their
 *   magnet_acct_{cpu,runq,blocked,interrupt,async}_seconds_total,
 *   magnet_acct_{errors,faults,bytes}_total		counters (blocked by
 *							how, interrupt by
 *							kind, async by part,
 *							bytes by layer and
 *							direction)
 *   magnet_acct_watched_threads{pid,comm}		gauge
 *   magnet_acct_missed_calls_total{pid,comm}		counter
 *   magnet_sampled_seconds_total{event,pid,comm}	counters, per
 *   magnet_steal_seconds_total{event,pid,comm,type}	cpu.sample probe
 *   magnet_steal_unattributed_seconds_total{event,type}	(sampler.c):
 *   magnet_sampled_idle_seconds_total{event}		apparent time,
 *   magnet_sampler_ticks_total{event}			steal charged
 *   magnet_sampler_processes_evicted_total{event}	(type reported or
 *   magnet_sampler_margin_seconds{event}		unreported), ...;
 *							the margin a gauge
 *   magnet_otlp_spans_total{outcome}			counters, with an
 *   magnet_otlp_requests_total{outcome}		otlp url: sent,
 *							dropped (queue full),
 *							rejected, failed
 *   magnet_otlp_queue_bytes, magnet_otlp_up		gauges
 *   magnet_otlp_exporter_restarts_total		counter
 *   process_cpu_seconds_total, process_start_time_seconds, ... (the
 *   process, as Prometheus's client libraries export it), magnetd_health,
 *   magnetd_clients, ... (magnetd's own, as in snapshots, but for
 *   magnetd.uptime), magnetd_build_info{version}, and magnetd_scrapes_total,
 *   magnetd_http_requests_refused_total (the endpoint's).
 *
 * Only totals and gauges of now, no value over magnetd's own window
 * (metrics.window): rates are PromQL's rate() over the counters, and
 * quantiles histogram_quantile() over the histograms, over any range and
 * any set of nodes; the window's rates and percentiles stay on the Unix
 * socket (snapshots, thresholds, gmond, Supermon).
 *
 * The two formats differ in the family's name on # TYPE and # HELP lines
 * (OpenMetrics names a counter without _total), # UNIT lines, the info
 * type, and the closing "# EOF".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "exposition.h"
#include "json.h"
#include "words.h"

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
	enum exposition_format fmt;
	const struct config *cfg;
	bool per_cpu;
	unsigned int le_step;	/* every le_step-th bound of metrics.h's */
};

static void __attribute__((format(printf, 2, 3)))
add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->oom)
		return;
	for (;;) {
		size_t room = o->cap - o->len;

		va_start(ap, fmt);
		n = vsnprintf(o->buf ? o->buf + o->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = true;
			return;
		}
		if ((size_t)n < room) {
			o->len += n;
			return;
		}
		size_t cap = o->cap ? 2 * o->cap : 65536;

		while (cap - o->len <= (size_t)n)
			cap *= 2;
		char *p = realloc(o->buf, cap);

		if (!p) {
			o->oom = true;
			return;
		}
		o->buf = p;
		o->cap = cap;
	}
}

/*
 * A label value, escaped as both formats want (\\, \", \n); a byte that
 * is not UTF-8 (a cgroup's name may be any bytes, and one bad label fails
 * the whole scrape) becomes U+FFFD.
 */
static void fmt_label(char *s, size_t len, const char *v)
{
	const unsigned char *u = (const unsigned char *)v;
	size_t n = 0, k;

	while (*u && n + 4 < len) {
		k = utf8_length(u);
		if (*u == '\\' || *u == '"' || *u == '\n') {
			s[n++] = '\\';
			s[n++] = *u == '\n' ? 'n' : *u;
		} else if (!k) {
			memcpy(s + n, "\xef\xbf\xbd", 3);
			n += 3;
			k = 1;
		} else {
			memcpy(s + n, u, k);
			n += k;
		}
		u += k ? k : 1;
	}
	s[n] = '\0';
}

enum kind { COUNTER, GAUGE, HISTOGRAM, INFO };

/*
 * The metadata lines of family @name (without _total: the OpenMetrics
 * name; the 0.0.4 name of a counter has it).
 */
static void family(struct out *o, const char *name, enum kind kind,
		   const char *unit, const char *help)
{
	static const char *const om_type[] = { "counter", "gauge",
					       "histogram", "info" };
	static const char *const prom_type[] = { "counter", "gauge",
						 "histogram", "gauge" };

	if (o->fmt == EXPOSITION_OPENMETRICS) {
		add(o, "# TYPE %s %s\n", name, om_type[kind]);
		if (unit)
			add(o, "# UNIT %s %s\n", name, unit);
		add(o, "# HELP %s %s\n", name, help);
	} else {
		const char *sfx = kind == COUNTER ? "_total" :
				  kind == INFO ? "_info" : "";

		add(o, "# HELP %s%s %s\n", name, sfx, help);
		add(o, "# TYPE %s%s %s\n", name, sfx, prom_type[kind]);
	}
}

static void sample(struct out *o, const char *name, const char *labels,
		   double value)
{
	char v[32];

	format_double(value, v);
	add(o, "%s%s%s%s %s\n", name, *labels ? "{" : "", labels,
	    *labels ? "}" : "", v);
}

/* An event's labels: event, and set and layer for a probe-set's layer. */
static void event_labels(const struct out *o, const char *event, char *s,
			 size_t len)
{
	char ev[2 * MAGNET_NAME_LEN], set[2 * MAGNET_NAME_LEN];
	const char *dot = strchr(event, '.');
	unsigned int i;

	fmt_label(ev, sizeof(ev), event);
	for (i = 0; dot && o->cfg && i < o->cfg->nsets; i++) {
		size_t n = strlen(o->cfg->sets[i].set);

		if ((size_t)(dot - event) != n ||
		    strncmp(event, o->cfg->sets[i].set, n))
			continue;
		fmt_label(set, sizeof(set), o->cfg->sets[i].set);
		snprintf(s, len, "event=\"%s\",set=\"%s\",layer=\"%s\"", ev,
			 set, dot + 1);
		return;
	}
	snprintf(s, len, "event=\"%s\"", ev);
}

/* ---- events ---- */

struct pass {
	struct out *o;
	int what;
};

/* Views gathered once per page, for every family to read. */
struct views {
	void *v;
	size_t n, cap, size;
	bool oom;
};

static void gather(struct views *g, const void *v)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		void *p = realloc(g->v, cap * g->size);

		if (!p) {
			g->oom = true;
			return;
		}
		g->v = p;
		g->cap = cap;
	}
	memcpy((char *)g->v + g->n++ * g->size, v, g->size);
}

static void gather_event(void *ctx, const struct metrics_event_view *v)
{
	gather(ctx, v);
}

static void gather_latency(void *ctx, const struct metrics_latency_view *v)
{
	gather(ctx, v);
}

enum { EV_COUNT, EV_BYTES, EV_CPU };

static void event_cb(void *ctx, const struct metrics_event_view *v)
{
	struct pass *p = ctx;
	char l[256], lc[300];
	unsigned int i;

	event_labels(p->o, v->name, l, sizeof(l));
	switch (p->what) {
	case EV_COUNT:
		sample(p->o, "magnet_events_total", l, v->count);
		break;
	case EV_BYTES:
		sample(p->o, "magnet_event_bytes_total", l, v->bytes);
		break;
	case EV_CPU:
		for (i = 0; i < v->ncpus; i++) {
			if (!v->cpu[i])
				continue;
			snprintf(lc, sizeof(lc), "%s,cpu=\"%u\"", l, i);
			sample(p->o, "magnet_cpu_events_total", lc, v->cpu[i]);
		}
		break;
	}
}

struct fam {
	const char *name;
	enum kind kind;
	const char *unit, *help;
	int what;
};

static const struct fam event_fams[] = {
	{ "magnet_events", COUNTER, NULL,
	  "Records logged by magnet's probes, counted since magnetd started",
	  EV_COUNT },
	{ "magnet_event_bytes", COUNTER, "bytes",
	  "Bytes of the records' packets (their length), or of the records, since magnetd started",
	  EV_BYTES },
	{ "magnet_cpu_events", COUNTER, NULL,
	  "Records logged on each CPU since magnetd started", EV_CPU },
};

static void events(struct out *o, const struct metrics *m)
{
	struct views g = { .size = sizeof(struct metrics_event_view) };
	const struct metrics_event_view *v;
	struct pass p = { .o = o };
	unsigned int i;
	size_t k;

	metrics_foreach_event(m, gather_event, &g);
	o->oom |= g.oom;
	for (i = 0; i < sizeof(event_fams) / sizeof(event_fams[0]); i++) {
		const struct fam *f = &event_fams[i];

		if (f->what == EV_CPU && !o->per_cpu)
			continue;
		family(o, f->name, f->kind, f->unit, f->help);
		p.what = f->what;
		for (k = 0, v = g.v; k < g.n; k++)
			event_cb(&p, &v[k]);
	}
	free(g.v);
}

/* ---- latencies ---- */

enum { LAT_HIST, LAT_PENDING, LAT_EXPIRED, LAT_OVERFLOW };

/* Bucket @i's le label, in seconds ("+Inf" past the last): made once. */
static const char *le_label(unsigned int i)
{
	static char text[METRICS_LE][32];
	static bool made;
	unsigned int k;

	if (i >= METRICS_LE)
		return "+Inf";
	for (k = 0; !made && k < METRICS_LE; k++)
		format_double(metrics_le_ns(k) / 1e9, text[k]);
	made = true;
	return text[i];
}

static void latency_cb(void *ctx, const struct metrics_latency_view *v)
{
	struct pass *p = ctx;
	char name[2 * MAGNET_NAME_LEN], l[300];
	uint64_t cum = 0;
	unsigned int i;

	fmt_label(name, sizeof(name), v->name);
	snprintf(l, sizeof(l), "latency=\"%s\"", name);
	switch (p->what) {
	case LAT_HIST:
		/* a coarser histogram: the buckets between two bounds kept
		 * add up in the cumulative count
		 */
		for (i = 0; i <= METRICS_LE; i++) {
			cum += v->le[i];
			if (i < METRICS_LE && i % p->o->le_step)
				continue;
			snprintf(l, sizeof(l), "latency=\"%s\",le=\"%.31s\"",
				 name, le_label(i));
			sample(p->o, "magnet_latency_seconds_bucket", l, cum);
		}
		snprintf(l, sizeof(l), "latency=\"%s\"", name);
		sample(p->o, "magnet_latency_seconds_sum", l, v->sum_ns / 1e9);
		sample(p->o, "magnet_latency_seconds_count", l, v->count);
		break;
	case LAT_PENDING:
		sample(p->o, "magnet_latency_starts_pending", l, v->pending);
		break;
	case LAT_EXPIRED:
		sample(p->o, "magnet_latency_starts_expired_total", l,
		       v->expired);
		break;
	case LAT_OVERFLOW:
		sample(p->o, "magnet_latency_starts_dropped_total", l,
		       v->overflow);
		break;
	}
}

static const struct fam latency_fams[] = {
	{ "magnet_latency_seconds", HISTOGRAM, "seconds", NULL, LAT_HIST },
	{ "magnet_latency_starts_pending", GAUGE, NULL,
	  "Starts waiting for their end", LAT_PENDING },
	{ "magnet_latency_starts_expired", COUNTER, NULL,
	  "Starts that found no end within the latency's timeout", LAT_EXPIRED },
	{ "magnet_latency_starts_dropped", COUNTER, NULL,
	  "Starts dropped on arrival because max-pending starts were waiting (LATENCY.overflow in snapshots)",
	  LAT_OVERFLOW },
};

static void latencies(struct out *o, const struct metrics *m)
{
	struct views g = { .size = sizeof(struct metrics_latency_view) };
	const struct metrics_latency_view *v;
	struct pass p = { .o = o };
	unsigned int i;
	size_t k;

	metrics_foreach_latency(m, gather_latency, &g);
	o->oom |= g.oom;
	for (i = 0; i < sizeof(latency_fams) / sizeof(latency_fams[0]); i++) {
		const struct fam *f = &latency_fams[i];
		char help[192];

		/* the histogram's: its buckets as configured */
		snprintf(help, sizeof(help),
			 "Time from a latency's start event to its end event, every pair since magnetd started (buckets: 256 ns, then %u per doubling to 17.2 s)",
			 METRICS_LE_PER_DOUBLING / o->le_step);
		family(o, f->name, f->kind, f->unit, f->help ? f->help : help);
		p.what = f->what;
		for (k = 0, v = g.v; k < g.n; k++)
			latency_cb(&p, &v[k]);
	}
	free(g.v);
}

/* ---- the ledger ---- */

/*
 * A row of the ledger as a sample: its label set (the rows of one set are
 * summed: rows of thread groups, of cgroups under one cut path, of
 * cgroups gone) and time.
 */
struct ledger_sample {
	char *labels;
	uint64_t ns;
};

static int by_labels(const void *a, const void *b)
{
	const struct ledger_sample *x = a, *y = b;

	return strcmp(x->labels, y->labels);
}

/* The labels of row @i of @a, malloc'ed, or NULL. */
static char *ledger_labels(const struct account *a, size_t i)
{
	const struct ledger_row *r = &a->s.rows[i];
	char cg[2 * 4096], vec[16], name[2 * sizeof(r->name)];
	char *s;

	fmt_label(cg, sizeof(cg), a->path[i]);
	account_vector(r, vec, sizeof(vec));
	fmt_label(name, sizeof(name), r->name);
	if (asprintf(&s, "cgroup=\"%s\",kind=\"%s\"%s%s%s%s%s%s", cg,
		     ledger_kind_name(r->kind),
		     *vec ? ",vector=\"" : "", vec, *vec ? "\"" : "",
		     *name ? ",name=\"" : "", name, *name ? "\"" : "") < 0)
		return NULL;
	return s;
}

static void ledger(struct out *o, const struct account *a)
{
	struct ledger_sample *smp;
	size_t i, n = 0;

	family(o, "magnet_ledger_enabled", GAUGE, NULL,
	       "1 while the kernel's ledger is on (magnetctl account on, or magnetd.conf's ledger section), and magnet_cpu_seconds_total is served");
	sample(o, "magnet_ledger_enabled", "", a != NULL);
	if (!a)
		return;
	smp = calloc(a->s.count + 1, sizeof(*smp));
	if (!smp) {
		o->oom = true;
		return;
	}
	for (i = 0; i < a->s.count; i++) {
		smp[i].labels = ledger_labels(a, i);
		smp[i].ns = a->s.rows[i].ns;
		if (!smp[i].labels) {
			o->oom = true;
			goto out;
		}
	}
	/* one sample per label set: the rows' times summed */
	qsort(smp, a->s.count, sizeof(*smp), by_labels);
	for (i = 0; i < a->s.count; i++) {
		if (n && !strcmp(smp[n - 1].labels, smp[i].labels)) {
			smp[n - 1].ns += smp[i].ns;
			free(smp[i].labels);
		} else {
			smp[n++] = smp[i];
		}
		if (i >= n)
			smp[i].labels = NULL;
	}
	family(o, "magnet_cpu_seconds", COUNTER, "seconds",
	       "CPU time the kernel's ledger charged to a cgroup (its path under the cgroup2 mount; \"\" for no activity: idle, kernel threads, and interrupts and work items that served none) and a kind, summed over CPUs and thread groups, since the ledger was turned on");
	for (i = 0; i < n; i++)
		sample(o, "magnet_cpu_seconds_total", smp[i].labels,
		       smp[i].ns / 1e9);
	family(o, "magnet_cpu_elapsed_seconds", COUNTER, "seconds",
	       "Time the CPUs were online since the ledger was turned on, summed over CPUs: what magnet_cpu_seconds_total adds up to");
	sample(o, "magnet_cpu_elapsed_seconds_total", "", a->elapsed_ns / 1e9);
out:
	for (i = 0; i < a->s.count; i++)
		free(smp[i].labels);
	free(smp);
}

/* ---- per-call costs of watched processes ---- */

enum {
	AC_CALLS, AC_CPU, AC_RUNQ, AC_BLOCKED, AC_IRQ, AC_ASYNC, AC_ERRORS,
	AC_FAULTS, AC_BYTES,
};

static const struct fam acct_fams[] = {
	{ "magnet_acct_call_seconds", HISTOGRAM, "seconds",
	  "Wall time of each system call of a watched process (magnetd.conf's acct section, or magnetctl acct watch), from its entry to its return, since the watch began (buckets: 1.024 us, then each power of two to 4.29 s)",
	  AC_CALLS },
	{ "magnet_acct_cpu_seconds", COUNTER, "seconds",
	  "Time on a CPU for a watched process's system calls, interrupts apart",
	  AC_CPU },
	{ "magnet_acct_runq_seconds", COUNTER, "seconds",
	  "Time a watched process's system calls waited for a CPU, runnable",
	  AC_RUNQ },
	{ "magnet_acct_blocked_seconds", COUNTER, "seconds",
	  "Time a watched process's system calls were asleep, by how: io (waiting for I/O), lock (uninterruptible otherwise), wait (interruptible)",
	  AC_BLOCKED },
	{ "magnet_acct_interrupt_seconds", COUNTER, "seconds",
	  "Time hardirqs and softirqs took from a watched process's system calls (charged to what they served, in the ledger)",
	  AC_IRQ },
	{ "magnet_acct_async_seconds", COUNTER, "seconds",
	  "Deferred work of a watched process's system calls, as it came in: the device's transmits after the calls returned (tx), the block writes of the pages they dirtied (block), the receive processing, before the calls, of the data they read (rx)",
	  AC_ASYNC },
	{ "magnet_acct_errors", COUNTER, NULL,
	  "System calls of a watched process that returned an error", AC_ERRORS },
	{ "magnet_acct_faults", COUNTER, NULL,
	  "Page faults in a watched process's system calls, minor and major",
	  AC_FAULTS },
	{ "magnet_acct_bytes", COUNTER, "bytes",
	  "Bytes a watched process's system calls moved: at the socket layer (out, in), read from block devices (block, in) and dirtied for them (block, out)",
	  AC_BYTES },
};

/* (a histogram bucket's le, in seconds: 2^(i+10) ns; +Inf past) */
static void acct_le(unsigned int i, char buf[32])
{
	if (i >= MAGNET_ACCT_HIST - 1)
		snprintf(buf, 32, "+Inf");
	else
		format_double(acct_hist_edge(i) / 1e9, buf);
}

static void acct_row(struct out *o, int what, const char *l,
		     const struct acct_watch_row *row)
{
	const struct magnet_acct_result *r = &row->r;
	char ls[512], le[32];
	uint64_t cum = 0;
	unsigned int i;

	switch (what) {
	case AC_CALLS:
		for (i = 0; i < MAGNET_ACCT_HIST; i++) {
			cum += row->hist[i];
			acct_le(i, le);
			snprintf(ls, sizeof(ls), "%s,le=\"%s\"", l, le);
			sample(o, "magnet_acct_call_seconds_bucket", ls, cum);
		}
		sample(o, "magnet_acct_call_seconds_sum", l, r->wall_ns / 1e9);
		sample(o, "magnet_acct_call_seconds_count", l, r->calls);
		break;
	case AC_CPU:
		sample(o, "magnet_acct_cpu_seconds_total", l, r->cpu_ns / 1e9);
		break;
	case AC_RUNQ:
		sample(o, "magnet_acct_runq_seconds_total", l, r->runq_ns / 1e9);
		break;
	case AC_BLOCKED:
		for (i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++) {
			static const char *const how[] = { "io", "lock", "wait" };

			snprintf(ls, sizeof(ls), "%s,how=\"%s\"", l, how[i]);
			sample(o, "magnet_acct_blocked_seconds_total", ls,
			       r->blocked_ns[i] / 1e9);
		}
		break;
	case AC_IRQ:
		snprintf(ls, sizeof(ls), "%s,kind=\"hardirq\"", l);
		sample(o, "magnet_acct_interrupt_seconds_total", ls,
		       r->hardirq_ns / 1e9);
		snprintf(ls, sizeof(ls), "%s,kind=\"softirq\"", l);
		sample(o, "magnet_acct_interrupt_seconds_total", ls,
		       r->softirq_ns / 1e9);
		break;
	case AC_ASYNC:
		snprintf(ls, sizeof(ls), "%s,part=\"tx\"", l);
		sample(o, "magnet_acct_async_seconds_total", ls,
		       r->async_tx_ns / 1e9);
		snprintf(ls, sizeof(ls), "%s,part=\"block\"", l);
		sample(o, "magnet_acct_async_seconds_total", ls,
		       r->async_blk_ns / 1e9);
		snprintf(ls, sizeof(ls), "%s,part=\"rx\"", l);
		sample(o, "magnet_acct_async_seconds_total", ls,
		       r->async_rx_ns / 1e9);
		break;
	case AC_ERRORS:
		sample(o, "magnet_acct_errors_total", l, row->errors);
		break;
	case AC_FAULTS:
		sample(o, "magnet_acct_faults_total", l, r->minflt + r->majflt);
		break;
	case AC_BYTES: {
		const struct { const char *layer, *dir; uint64_t v; } b[] = {
			{ "socket", "out", r->sock_tx_bytes },
			{ "socket", "in", r->sock_rx_bytes },
			{ "block", "in", r->blk_read_bytes },
			{ "block", "out", r->blk_write_bytes },
		};

		for (i = 0; i < 4; i++) {
			snprintf(ls, sizeof(ls), "%s,layer=\"%s\",direction=\"%s\"",
				 l, b[i].layer, b[i].dir);
			sample(o, "magnet_acct_bytes_total", ls, b[i].v);
		}
		break;
	}
	}
}

static void watched(struct out *o, const struct acct_watches *ws)
{
	char comm[2 * sizeof(ws->w->comm)], name[64], l[256];
	unsigned int f;
	size_t i, k;

	if (!ws || !ws->count)
		return;
	family(o, "magnet_acct_watched_threads", GAUGE, NULL,
	       "Threads of a watched process its watch accounts now");
	for (i = 0; i < ws->count; i++) {
		fmt_label(comm, sizeof(comm), ws->w[i].comm);
		snprintf(l, sizeof(l), "pid=\"%u\",comm=\"%s\"",
			 ws->w[i].pid, comm);
		sample(o, "magnet_acct_watched_threads", l, ws->w[i].threads);
	}
	family(o, "magnet_acct_missed_calls", COUNTER, NULL,
	       "System calls of a watched process's threads beyond the 256 a watch holds, not accounted");
	for (i = 0; i < ws->count; i++) {
		fmt_label(comm, sizeof(comm), ws->w[i].comm);
		snprintf(l, sizeof(l), "pid=\"%u\",comm=\"%s\"",
			 ws->w[i].pid, comm);
		sample(o, "magnet_acct_missed_calls_total", l, ws->w[i].missed);
	}
	for (f = 0; f < sizeof(acct_fams) / sizeof(acct_fams[0]); f++) {
		family(o, acct_fams[f].name, acct_fams[f].kind,
		       acct_fams[f].unit, acct_fams[f].help);
		for (i = 0; i < ws->count; i++) {
			const struct acct_watch *w = &ws->w[i];

			fmt_label(comm, sizeof(comm), w->comm);
			for (k = 0; k < w->count; k++) {
				snprintf(l, sizeof(l),
					 "pid=\"%u\",comm=\"%s\",syscall=\"%s\"",
					 w->pid, comm,
					 acct_syscall_name(w->rows[k].nr, name,
							   sizeof(name)));
				acct_row(o, acct_fams[f].what, l, &w->rows[k]);
			}
		}
	}
}

/* ---- the samplers: apparent time and steal per process ---- */

/* A sample per probe, labelled by it: its view's field at @off, scaled */
static void per_sampler(struct out *o, const struct samplers *ss,
			const char *name, size_t off, double scale)
{
	char ev[2 * MAGNET_NAME_LEN], l[2 * MAGNET_NAME_LEN + 16];
	uint64_t v;
	size_t i;

	for (i = 0; i < samplers_count(ss); i++) {
		const struct sampler_view *sv = samplers_view(ss, i);

		fmt_label(ev, sizeof(ev), sv->event);
		snprintf(l, sizeof(l), "event=\"%s\"", ev);
		memcpy(&v, (const char *)sv + off, sizeof(v));
		sample(o, name, l, v * scale);
	}
}

static void samplers(struct out *o, const struct samplers *ss)
{
	static const char *const type[] = { "reported", "unreported" };
	char ev[2 * MAGNET_NAME_LEN], comm[4 * SAMPLED_COMM_LEN], l[256];
	size_t i, k, t, n = samplers_count(ss);

	if (!n)
		return;
	family(o, "magnet_sampled_seconds", COUNTER, "seconds",
	       "Time a cpu.sample probe found a process running, summed over CPUs: each tick counts the time since its CPU's previous tick (apparent time, steal included; less magnet_steal_seconds_total, the compensated time)");
	for (i = 0; i < n; i++) {
		const struct sampler_view *sv = samplers_view(ss, i);

		fmt_label(ev, sizeof(ev), sv->event);
		for (k = 0; k < sv->nprocs; k++) {
			const struct sampled_process *p = &sv->procs[k];

			fmt_label(comm, sizeof(comm), p->comm);
			snprintf(l, sizeof(l), "event=\"%s\",pid=\"%u\",comm=\"%s\"",
				 ev, p->tgid, comm);
			sample(o, "magnet_sampled_seconds_total", l,
			       p->apparent_ns / 1e9);
		}
	}
	family(o, "magnet_steal_seconds", COUNTER, "seconds",
	       "Blank time charged to a process: its CPU did not run between two ticks of a cpu.sample probe that both found it running (ICPE'16's rule). type: reported (the kernel accounted it as steal), unreported (it did not: the hypervisor's own time, or a host that does not say)");
	for (i = 0; i < n; i++) {
		const struct sampler_view *sv = samplers_view(ss, i);

		fmt_label(ev, sizeof(ev), sv->event);
		for (k = 0; k < sv->nprocs; k++) {
			const struct sampled_process *p = &sv->procs[k];

			fmt_label(comm, sizeof(comm), p->comm);
			for (t = 0; t < 2; t++) {
				snprintf(l, sizeof(l),
					 "event=\"%s\",pid=\"%u\",comm=\"%s\",type=\"%s\"",
					 ev, p->tgid, comm, type[t]);
				sample(o, "magnet_steal_seconds_total", l,
				       p->steal_ns[t] / 1e9);
			}
		}
	}
	family(o, "magnet_steal_unattributed_seconds", COUNTER, "seconds",
	       "Blank time between two ticks of a cpu.sample probe that found different processes running: steal no process is charged with, by type as magnet_steal_seconds_total");
	for (i = 0; i < n; i++) {
		const struct sampler_view *sv = samplers_view(ss, i);

		fmt_label(ev, sizeof(ev), sv->event);
		for (t = 0; t < 2; t++) {
			snprintf(l, sizeof(l), "event=\"%s\",type=\"%s\"", ev,
				 type[t]);
			sample(o, "magnet_steal_unattributed_seconds_total", l,
			       sv->unattributed_ns[t] / 1e9);
		}
	}
	family(o, "magnet_sampled_idle_seconds", COUNTER, "seconds",
	       "Time a cpu.sample probe found the CPUs idle (halted), summed over CPUs; blank time next to an idle tick is counted here, never as steal");
	per_sampler(o, ss, "magnet_sampled_idle_seconds_total",
		    offsetof(struct sampler_view, idle_ns), 1e-9);
	family(o, "magnet_sampler_ticks", COUNTER, NULL,
	       "Ticks of a cpu.sample probe read, on every CPU");
	per_sampler(o, ss, "magnet_sampler_ticks_total",
		    offsetof(struct sampler_view, ticks), 1);
	family(o, "magnet_sampler_processes_evicted", COUNTER, NULL,
	       "Processes whose sums were dropped to make room for another (metrics.max-tgids per probe), their series with them");
	per_sampler(o, ss, "magnet_sampler_processes_evicted_total",
		    offsetof(struct sampler_view, evicted), 1);
	family(o, "magnet_sampler_margin_seconds", GAUGE, "seconds",
	       "How much later than its period a tick must come to end a blank: four times the last 1024 ticks' median distance from the period, a tenth of the period at least");
	per_sampler(o, ss, "magnet_sampler_margin_seconds",
		    offsetof(struct sampler_view, margin_ns), 1e-9);
}

/* ---- magnetd's own ---- */

/* "magnetd.pushes.dropped" -> "magnetd_pushes_dropped" (+ "_seconds") */
static void own_cb(void *ctx, const char *name, enum magnet_metric_type type,
		   const char *unit, double value, const char *description)
{
	struct out *o = ctx;
	bool seconds = !strcmp(unit, "s");
	char fam[96], s[112];
	size_t i;

	/* process_start_time_seconds says it, as Prometheus's clients do */
	if (!strcmp(name, "magnetd.uptime"))
		return;
	snprintf(fam, sizeof(fam), "%s%s", name, seconds ? "_seconds" : "");
	for (i = 0; fam[i]; i++)
		if (fam[i] == '.' || fam[i] == '-')
			fam[i] = '_';
	family(o, fam, type == MAGNET_COUNTER ? COUNTER : GAUGE,
	       seconds ? "seconds" : NULL, description);
	snprintf(s, sizeof(s), "%s%s", fam,
		 type == MAGNET_COUNTER ? "_total" : "");
	sample(o, s, "", value);
}

/* ---- the process, as Prometheus's client libraries export it ---- */

struct process {
	bool stat;			/* /proc/self/stat was read */
	uint64_t ticks;			/* user and system time, clock ticks */
	uint64_t start;			/* since boot, clock ticks */
	uint64_t vsize, rss;		/* bytes, pages */
	long open_fds;			/* -1: /proc/self/fd not read */
	struct rlimit nofile;
};

/*
 * The boot time, seconds since the epoch ("btime" of /proc/stat). Where
 * /proc/stat is hidden (the shipped unit's ProcSubset=pid), the realtime
 * clock less the time since boot, to within a second. It does not
 * change: found once.
 */
static uint64_t boot_time(void)
{
	static uint64_t btime;
	unsigned long long v;
	struct timespec now, up;
	char line[256];
	FILE *f;

	if (btime)
		return btime;
	f = fopen("/proc/stat", "re");
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "btime %llu", &v) == 1) {
				btime = v;
				break;
			}
		fclose(f);
	}
	if (!btime && !clock_gettime(CLOCK_REALTIME, &now) &&
	    !clock_gettime(CLOCK_BOOTTIME, &up) && now.tv_sec > up.tv_sec)
		btime = now.tv_sec - up.tv_sec;
	return btime;
}

static void process_read(struct process *p)
{
	unsigned long long utime, stime, start, vsize, rss;
	struct dirent *e;
	char buf[1024];
	const char *s;
	size_t n = 0;
	FILE *f;
	DIR *d;

	memset(p, 0, sizeof(*p));
	f = fopen("/proc/self/stat", "re");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	/* after the command's name, which may hold anything but ends at
	 * the last ')': fields 3 (state) on; 14, 15, 22, 23, 24 wanted
	 */
	s = strrchr(buf, ')');
	p->stat = s && sscanf(s + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %*s %*s %*s %*s %*s %*s %llu %llu %llu",
			      &utime, &stime, &start, &vsize, &rss) == 5;
	if (p->stat) {
		p->ticks = utime + stime;
		p->start = start;
		p->vsize = vsize;
		p->rss = rss;
	}
	p->open_fds = -1;
	d = opendir("/proc/self/fd");
	if (d) {
		p->open_fds = 0;
		while ((e = readdir(d)))
			/* not ".", "..", nor the listing's own */
			p->open_fds += e->d_name[0] != '.' &&
				       atoi(e->d_name) != dirfd(d);
		closedir(d);
	}
	if (getrlimit(RLIMIT_NOFILE, &p->nofile))
		p->nofile.rlim_cur = RLIM_INFINITY;
}

/*
 * Seconds from clock ticks, and the start time from the boot time, as
 * one division each of exact integers: no float noise in the printing.
 */
static void process(struct out *o)
{
	double hz = sysconf(_SC_CLK_TCK);
	uint64_t btime = boot_time();
	struct process p;

	process_read(&p);
	if (p.stat) {
		family(o, "process_cpu_seconds", COUNTER, "seconds",
		       "Total user and system CPU time spent in seconds.");
		sample(o, "process_cpu_seconds_total", "", p.ticks / hz);
	}
	if (p.open_fds >= 0) {
		family(o, "process_open_fds", GAUGE, NULL,
		       "Number of open file descriptors.");
		sample(o, "process_open_fds", "", p.open_fds);
	}
	family(o, "process_max_fds", GAUGE, NULL,
	       "Maximum number of open file descriptors.");
	sample(o, "process_max_fds", "", p.nofile.rlim_cur == RLIM_INFINITY ?
	       INFINITY : (double)p.nofile.rlim_cur);
	if (!p.stat)
		return;
	family(o, "process_virtual_memory_bytes", GAUGE, "bytes",
	       "Virtual memory size in bytes.");
	sample(o, "process_virtual_memory_bytes", "", p.vsize);
	family(o, "process_resident_memory_bytes", GAUGE, "bytes",
	       "Resident memory size in bytes.");
	sample(o, "process_resident_memory_bytes", "",
	       (double)p.rss * sysconf(_SC_PAGESIZE));
	if (!btime)
		return;
	family(o, "process_start_time_seconds", GAUGE, "seconds",
	       "Start time of the process since unix epoch in seconds.");
	sample(o, "process_start_time_seconds", "",
	       (btime * (uint64_t)hz + p.start) / hz);
}

/* Spans posted to a collector (export.c), with an otlp url */
static void otlp(struct out *o, const struct export_stats *st)
{
	if (!st)
		return;
	family(o, "magnet_otlp_spans", COUNTER, NULL,
	       "Spans of magnetd.conf's otlp section by outcome: sent (the collector took them), dropped (the queue was full while the collector was away), rejected (the collector refused their request with a 4xx)");
	sample(o, "magnet_otlp_spans_total", "outcome=\"sent\"", st->spans_sent);
	sample(o, "magnet_otlp_spans_total", "outcome=\"dropped\"", st->spans_dropped);
	sample(o, "magnet_otlp_spans_total", "outcome=\"rejected\"", st->spans_rejected);
	family(o, "magnet_otlp_requests", COUNTER, NULL,
	       "OTLP/HTTP requests posted to the collector by outcome: sent, failed (no answer, a timeout, 408, 429 or 5xx: posted again), rejected (another 4xx: dropped)");
	sample(o, "magnet_otlp_requests_total", "outcome=\"sent\"", st->requests_sent);
	sample(o, "magnet_otlp_requests_total", "outcome=\"failed\"", st->requests_failed);
	sample(o, "magnet_otlp_requests_total", "outcome=\"rejected\"", st->requests_rejected);
	family(o, "magnet_otlp_queue_bytes", GAUGE, "bytes",
	       "Bytes of requests waiting for the collector");
	sample(o, "magnet_otlp_queue_bytes", "", st->queue_bytes);
	family(o, "magnet_otlp_up", GAUGE, NULL,
	       "1 if the collector took the last request posted to it, else 0");
	sample(o, "magnet_otlp_up", "", st->up);
	family(o, "magnet_otlp_exporter_restarts", COUNTER, NULL,
	       "Times the capture that makes the spans (magnet-read) ended and was started again");
	sample(o, "magnet_otlp_exporter_restarts_total", "", st->restarts);
}

char *exposition_render(const struct exposition_input *in,
			enum exposition_format fmt, size_t *len)
{
	struct out o = {
		.fmt = fmt, .cfg = in->cfg, .per_cpu = in->per_cpu,
		.le_step = in->buckets ?
			   METRICS_LE_PER_DOUBLING / in->buckets : 1,
	};
	uint64_t records, lost, unknown;

	process(&o);
	if (in->server)
		server_foreach_own(in->server, own_cb, &o);
	family(&o, "magnetd_build", INFO, NULL, "magnetd's version");
	sample(&o, "magnetd_build_info", "version=\"" MAGNETD_VERSION "\"", 1);
	family(&o, "magnetd_scrapes", COUNTER, NULL,
	       "Metrics requests answered by magnetd's HTTP endpoint, this one included");
	sample(&o, "magnetd_scrapes_total", "", in->scrapes);
	family(&o, "magnetd_http_requests_refused", COUNTER, NULL,
	       "HTTP requests magnetd's endpoint answered with an error status");
	sample(&o, "magnetd_http_requests_refused_total", "", in->refused);
	events(&o, in->metrics);
	latencies(&o, in->metrics);
	metrics_totals(in->metrics, &records, &lost, &unknown);
	family(&o, "magnet_records", COUNTER, NULL,
	       "Records read from the kernel's buffers since magnetd started");
	sample(&o, "magnet_records_total", "", records);
	family(&o, "magnet_records_lost", COUNTER, NULL,
	       "Records the kernel lost (a buffer full, or overwritten)");
	sample(&o, "magnet_records_lost_total", "", lost);
	family(&o, "magnet_records_unknown", COUNTER, NULL,
	       "Records of event ids bound to no event of magnetd's configuration");
	sample(&o, "magnet_records_unknown_total", "", unknown);
	ledger(&o, in->ledger);
	watched(&o, in->acct);
	samplers(&o, in->samplers);
	otlp(&o, in->otlp);
	if (fmt == EXPOSITION_OPENMETRICS)
		add(&o, "# EOF\n");
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}

const char *exposition_content_type(enum exposition_format fmt)
{
	return fmt == EXPOSITION_OPENMETRICS ?
		"application/openmetrics-text; version=1.0.0; charset=utf-8" :
		"text/plain; version=0.0.4; charset=utf-8";
}

/*
 * The q of media range @r (from "type/sub;p=v;q=0.5"), or -1 if @r is
 * not @type (a wildcard "*" matches).
 */
static double range_q(const char *r, size_t n, const char *type)
{
	const char *semi = memchr(r, ';', n), *p;
	size_t tl = semi ? (size_t)(semi - r) : n;
	const char *slash = strchr(type, '/');
	double q = 1;

	while (tl && (r[tl - 1] == ' ' || r[tl - 1] == '\t'))
		tl--;
	if (!(tl == 3 && !memcmp(r, "*/*", 3)) &&
	    !(tl == strlen(type) && !strncasecmp(r, type, tl)) &&
	    !(tl == (size_t)(slash - type) + 2 &&
	      !strncasecmp(r, type, slash - type + 1) && r[tl - 1] == '*'))
		return -1;
	for (p = semi; p && p < r + n; p = memchr(p + 1, ';', r + n - p - 1)) {
		const char *a = p + 1;

		while (a < r + n && (*a == ' ' || *a == '\t'))
			a++;
		if (a + 2 <= r + n && (a[0] == 'q' || a[0] == 'Q') &&
		    a[1] == '=')
			q = strtod(a + 2, NULL);
	}
	return q;
}

enum exposition_format exposition_negotiate(const char *accept)
{
	double om = -1, text = -1, q;
	const char *r = accept, *end;

	while (r && *r) {
		while (*r == ' ' || *r == '\t' || *r == ',')
			r++;
		end = strchr(r, ',');
		if (!end)
			end = r + strlen(r);
		q = range_q(r, end - r, "application/openmetrics-text");
		/* a wildcard is no wish for OpenMetrics */
		if (q > om && !(end - r >= 1 && r[0] == '*'))
			om = q;
		q = range_q(r, end - r, "text/plain");
		if (q > text)
			text = q;
		r = end;
	}
	return om > 0 && om >= text ? EXPOSITION_OPENMETRICS :
				      EXPOSITION_PROMETHEUS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's HTTP endpoint (magnetd/http.c, exposition.c) on the host, for
 * tests/host/prometheus.sh: the endpoint, the server (its own metrics)
 * and the metrics built from their own sources, with the configuration
 * read by magnetd's own config.c and the rest of the daemon stubbed
 * (daemon-stubs.c). The records are made up: every layer of every
 * configured probe-set and every probe is an event; each latency gets
 * PAIRS start/end pairs whose times are drawn from a log-uniform
 * distribution between LOW and HIGH ns (a xorshift generator seeded with
 * SEED, so two runs with different seeds are two different nodes), and
 * each time is written to TIMES, one per line, for the test to compute
 * the exact percentiles from.
 *
 * The ledger is on, with the made-up rows below (tests/host/prometheus-test.py
 * knows them): two thread groups of one cgroup, a path with a quote, a
 * cgroup gone, a softirq, a work item, idle. So is a sampler, "steal-sample",
 * whose made-up ticks (sampler_ticks() below) go through magnetd's own
 * sampler.c.
 *
 * usage: http-host CONFIG SEED PAIRS LOW HIGH TIMES
 * Serves until SIGTERM; prints "ready" on standard output once it listens.
 * The prometheus section's web-config is read as magnetd reads it, and
 * read again on SIGHUP: "reload: in force" or "reload: refused" follows on
 * standard output (refused: the one in force stays, as in magnetd).
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "magnetd.h"
#include "webconfig.h"

static void vlog(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "http-host: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define LOG_FN(fn, level)				\
void fn(const char *fmt, ...)				\
{							\
	va_list ap;					\
							\
	va_start(ap, fmt);				\
	vlog(level, fmt, ap);				\
	va_end(ap);					\
}

LOG_FN(log_error, "error: ")
LOG_FN(log_warn, "warning: ")
LOG_FN(log_info, "")

static uint64_t rng;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *const layers[] = { "socket", "ip", "dev-xmit" };

/* The events, in the order of their ids (event[i] has id i + 1). */
#define EVENTS_MAX	256
static char event[EVENTS_MAX][2 * MAGNET_NAME_LEN];
static unsigned int nev;

static void add_event(struct daemon *d, const char *name)
{
	if (nev == EVENTS_MAX) {
		fprintf(stderr, "http-host: more than %d events\n", EVENTS_MAX);
		exit(2);
	}
	snprintf(event[nev], sizeof(event[nev]), "%s", name);
	metrics_event(d->metrics, name);
	metrics_bind(d->metrics, name, ++nev);
}

static uint16_t event_id(const char *name)
{
	unsigned int i;

	for (i = 0; i < nev; i++)
		if (!strcmp(event[i], name))
			return i + 1;
	return 0;
}

static void on_term(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* What magnetd's reload does with the web configuration (magnetd.c). */
static void on_hup(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon *d = w->data;
	const char *file = d->cfg->prometheus.web_config;
	struct webconfig *wc = NULL;
	char err[4096];

	(void)loop;
	(void)revents;
	if (*file) {
		wc = webconfig_load(file, err, sizeof(err));
		if (!wc) {
			log_error("reload: keeping the web configuration in force:\n%s",
				  err);
			goto refused;
		}
	}
	if (http_web_update(d->http, wc)) {
		webconfig_put(wc);
		goto refused;
	}
	webconfig_put(d->web);
	d->web = wc;
	printf("reload: in force\n");
	fflush(stdout);
	return;
refused:
	printf("reload: refused\n");
	fflush(stdout);
}

static void record(struct daemon *d, uint16_t id, uint64_t key, uint64_t ts,
		   uint32_t cpu)
{
	struct magnet_record r = {
		.size = sizeof(r), .event = id, .cpu = cpu, .tgid = 1,
		.tid = 1, .id = key, .timestamp = ts,
	};

	metrics_record(d->metrics, &r);
}

/*
 * The ticks of a cpu.sample probe of 1 ms, as sampler.c reads them: this
 * process (A) and one that is gone (B, a pid above any pid_max). CPU 0: A's
 * first tick, ten of 1 ms, one 4 ms late with 1 ms of reported steal (a
 * blank of 4 ms charged to A, 1 reported); B 2 ms late (a blank of 2 ms
 * between two processes: unattributed, unreported); the idle task, then
 * idle 3 ms late (halted: not steal). CPU 1: A's first tick and one of
 * 1 ms. A: 16 ms, B: 3 ms, idle 5 ms, 17 ticks.
 */
#define SAMPLER_ID	0xfe00
#define GONE_PID	4194303

static void tick(struct daemon *d, uint32_t cpu, uint32_t tgid,
		 uint32_t flags, uint64_t since, uint64_t steal)
{
	struct {
		struct magnet_record r;
		struct magnet_sample s;
	} t = {
		.r = { .size = sizeof(t), .event = SAMPLER_ID,
		       .flags = MAGNET_RF_SAMPLE, .cpu = cpu, .tgid = tgid,
		       .tid = tgid },
		.s = { .since = since, .steal = steal, .flags = flags,
		       .period = 1000000 },
	};

	sampler_record(d, &t.r);
}

static void sampler_ticks(struct daemon *d)
{
	uint32_t a = getpid();
	int i;

	d->event_name[SAMPLER_ID] = "steal-sample";
	tick(d, 0, a, MAGNET_SAMPLE_F_FIRST, 0, 0);
	for (i = 0; i < 10; i++)
		tick(d, 0, a, 0, 1000000, 0);
	tick(d, 0, a, 0, 5000000, 1000000);
	tick(d, 0, GONE_PID, 0, 3000000, 0);
	tick(d, 0, 0, MAGNET_SAMPLE_F_IDLE, 1000000, 0);
	tick(d, 0, 0, MAGNET_SAMPLE_F_IDLE, 4000000, 0);
	tick(d, 1, a, MAGNET_SAMPLE_F_FIRST, 0, 0);
	tick(d, 1, a, 0, 1000000, 0);
}

extern const struct account *stub_ledger;

static struct ledger_row ledger_rows[] = {
	{ .cgroup = 10, .tgid = 100, .kind = MAGNET_LEDGER_USER, .ns = 1500000000 },
	{ .cgroup = 10, .tgid = 101, .kind = MAGNET_LEDGER_USER, .ns = 500000000 },
	{ .cgroup = 11, .kind = MAGNET_LEDGER_SYSTEM, .ns = 250000000 },
	{ .kind = MAGNET_LEDGER_SOFTIRQ, .has_vector = true, .vector = 3,
	  .ns = 125000000 },
	{ .kind = MAGNET_LEDGER_WORK, .name = "vmstat_update", .ns = 1000 },
	{ .cgroup = 12, .kind = MAGNET_LEDGER_USER, .ns = 3000000000 },
	{ .kind = MAGNET_LEDGER_IDLE, .ns = 10000000000 },
};
static const char *ledger_paths[] = {
	"/a", "/a", "/b \"q\"", "", "", ACCOUNT_GONE, "",
};
static uint64_t ledger_elapsed[] = { 7687500500, 7687500500 };
static const struct account ledger = {
	.s = { .rows = ledger_rows, .count = 7, .cpus = 2,
	       .elapsed = ledger_elapsed },
	.path = ledger_paths,
	.elapsed_ns = 15375001000,
};

extern const struct acct_watches *stub_acct;
extern const struct export_stats *stub_export;

/* Spans posted: 40 sent in 3 requests, 2 failed; 7 dropped, 5 rejected */
static const struct export_stats export = {
	.spans_sent = 40, .spans_dropped = 7, .spans_rejected = 5,
	.requests_sent = 3, .requests_failed = 2, .requests_rejected = 1,
	.queue_bytes = 1234, .restarts = 1, .up = true,
};

/*
 * A watched process: write() 3 calls, at 500 ns, 3 us and 3 us (buckets
 * 0 and 2), 1 an error; read() 1 call of 2 s (bucket 21).
 */
static struct acct_watch_row acct_rows[] = {
	{ .nr = 1, .r = { .calls = 3, .wall_ns = 6500, .cpu_ns = 4000,
			  .runq_ns = 1000, .blocked_ns = { 500, 0, 0 },
			  .hardirq_ns = 1000, .sock_tx_bytes = 300,
			  .async_tx_ns = 2000, .async_rx_ns = 3000 },
	  .errors = 1, .max_ns = 3000, .hist = { [0] = 1, [2] = 2 } },
	{ .nr = 0, .r = { .calls = 1, .wall_ns = 2000000000,
			  .cpu_ns = 1000, .blocked_ns = { 0, 0, 1999999000 } },
	  .max_ns = 2000000000, .hist = { [21] = 1 } },
};
static struct acct_watch acct_watch = {
	.pid = 4242, .comm = "web \"1\"", .threads = 2, .missed = 5,
	.rows = acct_rows, .count = 2,
};
static const struct acct_watches acct_watches = { .w = &acct_watch, .count = 1 };

int main(int argc, char **argv)
{
	static struct daemon d;
	struct metrics_limits lim = {
		.window_s = 10, .top_tgids = 5, .max_tgids = 64, .max_cpus = 4,
	};
	char err[4096], name[2 * MAGNET_NAME_LEN];
	unsigned int i, k;
	uint64_t pairs, low, high, t0, key = 1;
	ev_signal term, hup;
	FILE *times;

	if (argc != 7) {
		fprintf(stderr, "usage: http-host CONFIG SEED PAIRS LOW HIGH TIMES\n");
		return 2;
	}
	stub_ledger = &ledger;
	stub_acct = &acct_watches;
	stub_export = &export;
	d.cfg = config_load(argv[1], err, sizeof(err));
	if (!d.cfg) {
		fputs(err, stderr);
		return 1;
	}
	if (d.cfg->prometheus.web_config[0]) {
		d.web = webconfig_load(d.cfg->prometheus.web_config, err,
				       sizeof(err));
		if (!d.web) {
			fputs(err, stderr);
			return 1;
		}
	}
	rng = strtoull(argv[2], NULL, 0) | 1;
	pairs = strtoull(argv[3], NULL, 0);
	low = strtoull(argv[4], NULL, 0);
	high = strtoull(argv[5], NULL, 0);
	times = fopen(argv[6], "w");
	if (!times || !low || high < low) {
		fprintf(stderr, "http-host: bad TIMES, LOW or HIGH\n");
		return 2;
	}
	d.loop = ev_default_loop(EVFLAG_AUTO);
	d.metrics = metrics_new(&lim);
	d.start_ns = now_ns();
	d.attached = true;
	for (i = 0; i < d.cfg->nsets; i++)
		for (k = 0; k < sizeof(layers) / sizeof(layers[0]); k++) {
			snprintf(name, sizeof(name), "%s.%s",
				 d.cfg->sets[i].set, layers[k]);
			add_event(&d, name);
		}
	for (i = 0; i < d.cfg->nprobes; i++)
		add_event(&d, d.cfg->probes[i].name);
	for (i = 0; i < d.cfg->nlatencies; i++) {
		const struct config_latency *l = &d.cfg->latencies[i];

		if (metrics_latency(d.metrics, l->name, l->start, l->end,
				    METRICS_KEY_ID, l->timeout_ns,
				    l->max_pending)) {
			fprintf(stderr, "http-host: latency %s: %s to %s: not events here\n",
				l->name, l->start, l->end);
			return 1;
		}
	}
	/* every event once per CPU, then the pairs, a microsecond apart */
	t0 = now_ns();
	for (i = 1; i <= nev; i++)
		for (k = 0; k < lim.max_cpus; k++)
			record(&d, i, 0, t0, k);
	for (i = 0; i < d.cfg->nlatencies; i++) {
		const struct config_latency *l = &d.cfg->latencies[i];
		uint16_t start = event_id(l->start), end = event_id(l->end);

		for (uint64_t p = 0; p < pairs; p++, key++) {
			double u = (xorshift() >> 11) * 0x1.0p-53;
			uint64_t v = (uint64_t)llround(exp(log(low) +
						u * (log(high) - log(low))));
			uint64_t ts = t0 + p * 1000;

			record(&d, start, key, ts, p % lim.max_cpus);
			record(&d, end, key, ts + v, p % lim.max_cpus);
			fprintf(times, "%s %llu\n", l->name,
				(unsigned long long)v);
		}
	}
	fclose(times);
	metrics_tick(d.metrics, now_ns());
	sampler_ticks(&d);
	/* as magnetd's setup(): max-clients within RLIMIT_NOFILE */
	if (nofile_fit(d.cfg->nbuffers, &d.cfg->socket, &d.cfg->prometheus))
		return 1;
	d.server = server_new(&d, &d.cfg->socket);
	if (!d.server)
		return 1;
	d.http = http_new(&d, &d.cfg->prometheus);
	if (!d.http)
		return 1;
	ev_signal_init(&term, on_term, SIGTERM);
	ev_signal_start(d.loop, &term);
	ev_signal_init(&hup, on_hup, SIGHUP);
	hup.data = &d;
	ev_signal_start(d.loop, &hup);
	signal(SIGPIPE, SIG_IGN);
	printf("ready\n");
	fflush(stdout);
	ev_run(d.loop, 0);
	http_free(d.http);
	webconfig_put(d.web);
	server_free(d.server);
	metrics_free(d.metrics);
	sampler_free_all(&d);
	config_free(d.cfg);
	return 0;
}

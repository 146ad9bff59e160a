// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of magnetd's aggregation engine (magnetd/metrics.c):
 * traces are built in memory as the kernel's byte stream would carry them
 * (whole records at MAGNET_RECORD_ALIGN boundaries), replayed into a
 * struct metrics, and the metrics compared with exact expectations or
 * with a simple reference model. Tests on tests/harness.h, most with
 * FIXTURE(metrics): metrics of the usual limits and a trace.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "metrics.h"

#define NS		1000000000ULL
#define MS		1000000ULL
#define US		1000ULL
#define ALIGN8(x)	(((x) + 7) & ~(size_t)7)
#define HDR		sizeof(struct magnet_record)
#define PKT		sizeof(struct magnet_packet)

/* The source tree, for tests/host/data/ (the Makefile names it). */
#ifndef SRCDIR
#define SRCDIR		"."
#endif

/* ---- traces ---- */

struct trace {
	uint8_t *buf;
	size_t len, cap;
};

static struct magnet_record *tr_add(struct trace *t, uint32_t size)
{
	size_t need = t->len + ALIGN8(size < HDR ? HDR : size);
	struct magnet_record *r;

	if (need > t->cap) {
		t->cap = need * 2;
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			abort();
	}
	r = (struct magnet_record *)(t->buf + t->len);
	memset(r, 0, need - t->len);
	r->size = size;
	t->len = need;
	return r;
}

static void tr_rec(struct trace *t, uint16_t event, uint32_t cpu,
		   uint32_t tgid, uint64_t id, uint64_t ts, uint32_t size)
{
	struct magnet_record *r = tr_add(t, size);

	r->event = event;
	r->cpu = cpu;
	r->tgid = tgid;
	r->tid = tgid;
	r->id = id;
	r->timestamp = ts;
}

/* A packet record; @size may be too small for struct magnet_packet. */
static void tr_pkt(struct trace *t, uint16_t event, uint64_t ts,
		   uint64_t skb, uint64_t sock, uint32_t len, uint32_t size)
{
	struct magnet_packet p = { .skb = skb, .sock = sock, .len = len };
	struct magnet_record *r = tr_add(t, size);

	r->event = event;
	r->flags = MAGNET_RF_PACKET;
	r->tgid = 1;
	r->id = skb ? skb : sock;
	r->timestamp = ts;
	memcpy(r->payload, &p, size - HDR < PKT ? size - HDR : PKT);
}

static void tr_loss(struct trace *t, uint32_t cpu, uint64_t ts, uint64_t lost)
{
	struct magnet_loss l = { .lost = lost, .total = lost };
	struct magnet_record *r = tr_add(t, HDR + sizeof(l));

	r->event = MAGNET_EVENT_LOSS;
	r->cpu = cpu;
	r->timestamp = ts;
	memcpy(r->payload, &l, sizeof(l));
}

/* Feed the records of @t as a reader would: each at its aligned place. */
static void replay(struct metrics *m, struct trace *t)
{
	size_t off = 0;
	const struct magnet_record *r;

	while (off < t->len) {
		r = (const struct magnet_record *)(t->buf + off);
		metrics_record(m, r);
		off += ALIGN8(r->size < HDR ? HDR : r->size);
	}
	t->len = 0;
}

static void tr_free(struct trace *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* ---- reading metrics ---- */

static double get(const struct metrics *m, const char *fmt, ...)
{
	char name[128];
	va_list ap;
	double v;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!metrics_get(m, name, &v)) {
		TH_LOG("no metric %s", name);
		return NAN;
	}
	return v;
}

struct mlist {
	unsigned int n;
	struct {
		char name[128], unit[16];
		enum magnet_metric_type type;
		double value;
		bool desc_ok;
	} e[512];
};

static void mlist_cb(void *ctx, const char *name, enum magnet_metric_type type,
		     const char *unit, double value, const char *desc)
{
	struct mlist *l = ctx;

	if (l->n >= sizeof(l->e) / sizeof(l->e[0]))
		return;
	snprintf(l->e[l->n].name, sizeof(l->e[0].name), "%s", name);
	snprintf(l->e[l->n].unit, sizeof(l->e[0].unit), "%s", unit);
	l->e[l->n].type = type;
	l->e[l->n].value = value;
	l->e[l->n].desc_ok = desc && *desc && !strchr(desc, '\n') &&
			     strlen(desc) < 160 && strlen(name) < 128;
	l->n++;
}

/* The names of all metrics, space-separated, in @buf. */
static const char *names(const struct metrics *m, char *buf, size_t len)
{
	static struct mlist l;
	unsigned int i;
	size_t off = 0;

	l.n = 0;
	metrics_foreach(m, mlist_cb, &l);
	buf[0] = 0;
	for (i = 0; i < l.n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? " " : "",
				l.e[i].name);
	return buf;
}

struct toplist {
	unsigned int n;
	struct {
		char event[32];
		unsigned int rank;
		uint32_t tgid;
		uint64_t count;
	} e[4096];
};

static void top_cb(void *ctx, const char *event, unsigned int rank,
		   uint32_t tgid, uint64_t count)
{
	struct toplist *l = ctx;

	if (l->n >= sizeof(l->e) / sizeof(l->e[0]))
		return;
	snprintf(l->e[l->n].event, sizeof(l->e[0].event), "%s", event);
	l->e[l->n].rank = rank;
	l->e[l->n].tgid = tgid;
	l->e[l->n].count = count;
	l->n++;
}

/* The top lines of @event as "tgid:count ..." in @buf. */
static const char *tops(const struct metrics *m, const char *event, char *buf,
			size_t len)
{
	static struct toplist l;
	unsigned int i;
	size_t off = 0;

	l.n = 0;
	metrics_foreach_top(m, top_cb, &l);
	buf[0] = 0;
	for (i = 0; i < l.n && off < len; i++)
		if (!strcmp(l.e[i].event, event))
			off += snprintf(buf + off, len - off, "%s%u:%llu",
					off ? " " : "", l.e[i].tgid,
					(unsigned long long)l.e[i].count);
	return buf;
}

static unsigned int top_lines(const struct metrics *m, const char *event)
{
	static struct toplist l;
	unsigned int i, n = 0;

	l.n = 0;
	metrics_foreach_top(m, top_cb, &l);
	for (i = 0; i < l.n; i++)
		if (!strcmp(l.e[i].event, event) && l.e[i].rank == n + 1)
			n++;
	return n;
}

static struct metrics *mk(unsigned int window, unsigned int top,
			  unsigned int max_tgids, unsigned int max_cpus)
{
	struct metrics_limits lim = {
		.window_s = window, .top_tgids = top,
		.max_tgids = max_tgids, .max_cpus = max_cpus,
	};
	struct metrics *m = metrics_new(&lim);

	if (!m) {
		perror("metrics_new");
		exit(1);
	}
	return m;
}

/* Declare @name and bind it to @id. */
static void ev(struct metrics *m, const char *name, uint16_t id)
{
	if (metrics_event(m, name) || metrics_bind(m, name, id)) {
		TH_LOG("cannot declare %s: %s", name, strerror(errno));
		exit(1);
	}
}

static int err_of(int ret)
{
	return ret ? errno : 0;
}

/* ---- random numbers (xorshift64*) ---- */

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The exact pNN of sorted @v: the value of rank ceil(pct/100 * n). */
static uint64_t exact_pct(const uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank = (n * pct + 99) / 100;

	return v[rank ? rank - 1 : 0];
}

/* Reported @got within the histogram's precision of exact @want. */
static bool pct_close(double got, uint64_t want)
{
	return fabs(got - (double)want) <= (double)want / 64 + 0.5;
}

/* ---- tests ---- */

/* Metrics of the usual limits (a 10 s window) and a trace to feed them. */
FIXTURE(metrics) {
	struct metrics *m;
	struct trace t;
};

FIXTURE_SETUP(metrics)
{
	self->m = mk(10, 5, 16, 4);
}

FIXTURE_TEARDOWN(metrics)
{
	tr_free(&self->t);
	metrics_free(self->m);
}

TEST(metrics_event_names_checked)
{
	struct metrics *m = mk(10, 5, 16, 8);
	char n31[32], n32[33];

	memset(n31, 'a', 31);
	n31[31] = 0;
	memset(n32, 'b', 32);
	n32[32] = 0;
	/* refused: empty, 32 bytes, bad characters */
	EXPECT_EQ(err_of(metrics_event(m, "")), EINVAL);
	EXPECT_EQ(err_of(metrics_event(m, n32)), EINVAL);
	EXPECT_EQ(err_of(metrics_event(m, "a b")), EINVAL);
	EXPECT_EQ(err_of(metrics_event(m, "a/b")), EINVAL);
	EXPECT_EQ(err_of(metrics_event(m, "a\n")), EINVAL);
	EXPECT_EQ(err_of(metrics_event(m, NULL)), EINVAL);
	/* 31 bytes of [A-Za-z0-9._-] accepted */
	EXPECT_EQ(metrics_event(m, n31), 0);
	EXPECT_EQ(metrics_event(m, "Az09._-"), 0);
	/* binding an undeclared event: ENOENT */
	EXPECT_EQ(err_of(metrics_bind(m, "nope", 3)), ENOENT);
	/* metrics_get: no such metric */
	EXPECT_FALSE(metrics_get(m, "nope.count", NULL));
	EXPECT_FALSE(metrics_get(m, "Az09._-.cpu0.count", NULL));
	EXPECT_FALSE(metrics_get(m, "Az09._-", NULL));
	EXPECT_FALSE(metrics_get(m, "records.none", NULL));
	/* declared metrics exist at zero */
	EXPECT_EQ(get(m, "Az09._-.count"), 0);
	EXPECT_EQ(get(m, "Az09._-.rate"), 0);
	EXPECT_EQ(get(m, "records"), 0);
	metrics_free(m);
	/* window_s 0 refused */
	EXPECT_TRUE(metrics_new(&(struct metrics_limits){ .window_s = 0 }) == NULL);
	EXPECT_EQ(errno, EINVAL);
	metrics_free(NULL);
}

TEST_F(metrics, counts_bytes_and_per_cpu)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	char buf[1024];
	struct mlist *l = calloc(1, sizeof(*l));
	unsigned int i;
	bool good = true;

	ASSERT_TRUE(l);
	ev(m, "a", 5);
	ev(m, "b", 6);
	for (i = 0; i < 100; i++)		/* CPUs 0, 2, 7 (beyond 4) */
		tr_rec(t, 5, i % 3 == 0 ? 0 : i % 3 == 1 ? 2 : 7, 10, 0,
		       NS + i * MS, HDR + 16);
	tr_rec(t, 6, 1, 10, 0, 2 * NS, HDR + 3);	/* odd size */
	replay(m, t);
	/* counts per event */
	EXPECT_EQ(get(m, "a.count"), 100);
	EXPECT_EQ(get(m, "b.count"), 1);
	/* bytes are the record sizes */
	EXPECT_EQ(get(m, "a.bytes"), 100 * (HDR + 16));
	EXPECT_EQ(get(m, "b.bytes"), HDR + 3);
	/* per-CPU counts: seen CPUs below max_cpus only */
	EXPECT_EQ(get(m, "a.cpu0.count"), 34);
	EXPECT_EQ(get(m, "a.cpu2.count"), 33);
	EXPECT_FALSE(metrics_get(m, "a.cpu1.count", NULL));
	EXPECT_FALSE(metrics_get(m, "a.cpu7.count", NULL));
	/* metric order: events, CPUs by number, totals */
	EXPECT_STREQ(names(m, buf, sizeof(buf)),
		     "a.count a.rate a.bytes a.byte_rate a.cpu0.count "
		     "a.cpu2.count b.count b.rate b.bytes b.byte_rate "
		     "b.cpu1.count records records.lost records.unknown");
	/* units, types and one-line descriptions */
	metrics_foreach(m, mlist_cb, l);
	for (i = 0; i < l->n; i++) {
		const char *n = l->e[i].name, *u = l->e[i].unit;
		bool counter = l->e[i].type == MAGNET_COUNTER;

		if (!l->e[i].desc_ok)
			good = false;
		if (strstr(n, ".rate"))
			good &= !strcmp(u, "events/s") && !counter;
		else if (strstr(n, ".byte_rate"))
			good &= !strcmp(u, "bytes/s") && !counter;
		else if (strstr(n, ".bytes"))
			good &= !strcmp(u, "bytes") && counter;
		else if (strstr(n, ".count"))
			good &= !strcmp(u, "events") && counter;
		else
			good &= !strcmp(u, "records") && counter;
		if (!good)
			break;
	}
	EXPECT_TRUE(good) TH_LOG("%s %s", l->e[i].name, l->e[i].unit);
	EXPECT_EQ(l->n, 14);
	free(l);
	tr_pkt(t, 6, 3 * NS, 0x1000, 0x2000, 1500, HDR + PKT + 64);
	tr_pkt(t, 6, 3 * NS, 0x1000, 0x2000, 1500, HDR + PKT - 1);
	replay(m, t);
	/* packet records count their length; too short, their size */
	EXPECT_EQ(get(m, "b.bytes"), HDR + 3 + 1500 + HDR + PKT - 1);
	/* records counted */
	EXPECT_EQ(get(m, "records"), 103);
	EXPECT_EQ(get(m, "records.unknown"), 0);
}

TEST_F(metrics, rates_over_the_window)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	unsigned int i;

	ev(m, "e", 1);
	for (i = 0; i < 100; i++)		/* 100 in seconds 100..109 */
		tr_rec(t, 1, 0, 1, 0, 100 * NS + i * 100 * MS, HDR + 24);
	replay(m, t);
	metrics_tick(m, 109 * NS + 999 * MS);
	/* 100 records in a 10 s window: 10/s */
	EXPECT_EQ(get(m, "e.rate"), 10);
	EXPECT_EQ(get(m, "e.byte_rate"), 10 * (HDR + 24));
	/* second 100 left the window: 9/s */
	metrics_tick(m, 110 * NS + 500 * MS);
	EXPECT_EQ(get(m, "e.rate"), 9);
	tr_rec(t, 1, 0, 1, 0, 100 * NS, HDR);	/* late: before the window */
	tr_rec(t, 1, 0, 1, 0, 105 * NS, HDR);	/* late but in it */
	replay(m, t);
	/* late records count in the window only if still in it */
	EXPECT_EQ(get(m, "e.rate"), 9.1);
	EXPECT_EQ(get(m, "e.count"), 102);
	/* rotation by ticks */
	metrics_tick(m, 114 * NS);
	EXPECT_EQ(get(m, "e.rate"), 5.1);
	tr_rec(t, 1, 0, 1, 0, 500 * NS, HDR);
	replay(m, t);
	/* a later record rotates too; counters keep everything */
	EXPECT_EQ(get(m, "e.rate"), 0.1);
	EXPECT_EQ(get(m, "e.count"), 103);
	EXPECT_EQ(get(m, "e.bytes"), 100 * (HDR + 24) + 3 * HDR);
	/* an earlier tick changes nothing: time never goes back */
	metrics_tick(m, 400 * NS);
	EXPECT_EQ(get(m, "e.rate"), 0.1);
	/* empty window: rate 0 */
	metrics_tick(m, 510 * NS);
	EXPECT_EQ(get(m, "e.rate"), 0);
	EXPECT_EQ(get(m, "e.byte_rate"), 0);
}

TEST(metrics_top_tgids_busiest_first_evicting_least_busy)
{
	struct metrics *m = mk(10, 10, 3, 4);
	struct trace t = { 0 };
	char buf[256];
	unsigned int i;

	ev(m, "e", 1);
	for (i = 0; i < 5; i++)
		tr_rec(&t, 1, 0, 100, 0, NS + i, HDR);
	for (i = 0; i < 3; i++)
		tr_rec(&t, 1, 0, 200, 0, NS + 10 + i, HDR);
	tr_rec(&t, 1, 0, 300, 0, NS + 20, HDR);
	replay(m, &t);
	/* top thread groups, busiest first */
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "100:5 200:3 300:1");
	/* a fourth evicts the least busy */
	tr_rec(&t, 1, 0, 400, 0, NS + 30, HDR);
	replay(m, &t);
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "100:5 200:3 400:1");
	/* eviction by window count, then by age */
	tr_rec(&t, 1, 0, 500, 0, NS + 40, HDR);
	tr_rec(&t, 1, 0, 500, 0, NS + 41, HDR);
	tr_rec(&t, 1, 0, 600, 0, NS + 42, HDR);
	replay(m, &t);
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "100:5 200:3 600:1");
	/* evicted records still count */
	EXPECT_EQ(get(m, "e.count"), 13);
	tr_rec(&t, 1, 0, 600, 0, 5 * NS, HDR);
	tr_rec(&t, 1, 0, 600, 0, 5 * NS, HDR);
	replay(m, &t);
	/* top covers the window only: second 1 leaves */
	metrics_tick(m, 11 * NS);
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "600:2");
	tr_free(&t);
	metrics_free(m);
}

TEST(metrics_top_lines_per_event_ties_by_tgid)
{
	struct metrics *m = mk(10, 2, 100, 4);
	struct trace t = { 0 };
	char buf[256];
	unsigned int i;

	ev(m, "e", 1);
	ev(m, "f", 2);
	for (i = 0; i < 50; i++)
		tr_rec(&t, 1, 0, 1000 + i % 7, 0, NS + i, HDR);
	tr_rec(&t, 2, 0, 9, 0, NS, HDR);
	replay(m, &t);
	/* top_tgids lines; 50 = 7 * 7 + 1: tgid 1000 has 8, the others 7, by tgid */
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "1000:8 1001:7");
	/* top per event */
	EXPECT_STREQ(tops(m, "f", buf, sizeof(buf)), "9:1");
	tr_free(&t);
	metrics_free(m);
}

TEST(metrics_top_evicts_least_recent_of_equally_busy)
{
	struct metrics *m = mk(10, 5, 2, 4);
	struct trace t = { 0 };
	char buf[256];

	ev(m, "e", 1);
	tr_rec(&t, 1, 0, 1, 0, NS + 1, HDR);
	tr_rec(&t, 1, 0, 2, 0, NS + 2, HDR);
	tr_rec(&t, 1, 0, 3, 0, NS + 3, HDR);
	replay(m, &t);
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "2:1 3:1");
	tr_rec(&t, 1, 0, 3, 0, NS + 4, HDR);
	tr_rec(&t, 1, 0, 2, 0, NS + 5, HDR);
	tr_rec(&t, 1, 0, 4, 0, NS + 6, HDR);
	replay(m, &t);
	EXPECT_STREQ(tops(m, "e", buf, sizeof(buf)), "2:2 4:1");
	tr_free(&t);
	metrics_free(m);
}

/* A: start of "ab" and "ac"; B: end of "ab", start of "bc"; C: ends. */
TEST_F(metrics, latency_pairs_by_id_oldest_start_first)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	struct mlist *l = calloc(1, sizeof(*l));
	bool good = true;
	char buf[1024];
	unsigned int i;

	ASSERT_TRUE(l);
	ev(m, "A", 1);
	ev(m, "B", 2);
	ev(m, "C", 3);
	/* refused: start == end, an undeclared end, a bad name or key */
	EXPECT_EQ(err_of(metrics_latency(m, "x", "A", "A", METRICS_KEY_ID, NS, 8)),
		  EINVAL);
	EXPECT_EQ(err_of(metrics_latency(m, "x", "A", "D", METRICS_KEY_ID, NS, 8)),
		  ENOENT);
	EXPECT_EQ(err_of(metrics_latency(m, "x y", "A", "B", METRICS_KEY_ID, NS, 8)),
		  EINVAL);
	EXPECT_EQ(err_of(metrics_latency(m, "x", "A", "B", 7, NS, 8)), EINVAL);
	/* a latency cannot take an event's name */
	EXPECT_EQ(err_of(metrics_latency(m, "C", "A", "B", METRICS_KEY_ID, NS, 8)),
		  EEXIST);
	/* latencies declared */
	EXPECT_EQ(metrics_latency(m, "ab", "A", "B", METRICS_KEY_ID, NS, 8), 0);
	EXPECT_EQ(metrics_latency(m, "bc", "B", "C", METRICS_KEY_ID, NS, 8), 0);
	EXPECT_EQ(metrics_latency(m, "ac", "A", "C", METRICS_KEY_ID, NS, 8), 0);
	/* an event cannot take a latency's name */
	EXPECT_EQ(err_of(metrics_event(m, "ab")), EEXIST);
	/* key 7: two starts, FIFO; key 8 between them */
	tr_rec(t, 1, 0, 1, 7, NS + 1000, HDR);
	tr_rec(t, 1, 0, 1, 8, NS + 1500, HDR);
	tr_rec(t, 1, 0, 1, 7, NS + 2000, HDR);
	tr_rec(t, 1, 0, 1, 0, NS + 2100, HDR);	/* id 0: no key */
	replay(m, t);
	/* starts wait in every latency they start */
	EXPECT_EQ(get(m, "ab.pending"), 3);
	EXPECT_EQ(get(m, "ac.pending"), 3);
	EXPECT_EQ(get(m, "bc.pending"), 0);
	tr_rec(t, 2, 0, 1, 7, NS + 5000, HDR);	/* ab 4000; starts bc */
	tr_rec(t, 2, 0, 1, 7, NS + 6000, HDR);	/* ab 4000; starts bc */
	tr_rec(t, 2, 0, 1, 7, NS + 6500, HDR);	/* no start left */
	tr_rec(t, 2, 0, 1, 8, NS + 9500, HDR);	/* ab 8000 */
	tr_rec(t, 3, 0, 1, 7, NS + 7000, HDR);	/* bc 2000, ac 6000 */
	replay(m, t);
	/* FIFO pairs per key: oldest start first */
	EXPECT_EQ(get(m, "ab.count"), 3);
	EXPECT_EQ(get(m, "ab.min"), 4000);
	EXPECT_EQ(get(m, "ab.max"), 8000);
	EXPECT_EQ(get(m, "ab.mean"), 16000.0 / 3);
	EXPECT_EQ(get(m, "ab.p50"), 4000);
	EXPECT_EQ(get(m, "ab.p99"), 8000);
	/* an unmatched end leaves nothing */
	EXPECT_EQ(get(m, "ab.pending"), 0);
	/* an event ending one latency starts another */
	EXPECT_EQ(get(m, "bc.count"), 1);
	EXPECT_EQ(get(m, "bc.min"), 2000);
	EXPECT_EQ(get(m, "bc.pending"), 3);
	/* an event in several latencies */
	EXPECT_EQ(get(m, "ac.count"), 1);
	EXPECT_EQ(get(m, "ac.max"), 6000);
	EXPECT_EQ(get(m, "ac.pending"), 2);
	/* latency metrics in declaration order, after the events' */
	EXPECT_STREQ(names(m, buf, sizeof(buf)) + strlen(
		     "A.count A.rate A.bytes A.byte_rate A.cpu0.count "
		     "B.count B.rate B.bytes B.byte_rate B.cpu0.count "
		     "C.count C.rate C.bytes C.byte_rate C.cpu0.count "),
		     "ab.count ab.min ab.mean ab.p50 ab.p90 ab.p99 ab.max "
		     "ab.pending ab.expired ab.overflow "
		     "bc.count bc.min bc.mean bc.p50 bc.p90 bc.p99 bc.max "
		     "bc.pending bc.expired bc.overflow "
		     "ac.count ac.min ac.mean ac.p50 ac.p90 ac.p99 ac.max "
		     "ac.pending ac.expired ac.overflow "
		     "records records.lost records.unknown");
	/* latency units, types and descriptions */
	metrics_foreach(m, mlist_cb, l);
	for (i = 0; i < l->n && good; i++) {
		const char *n = l->e[i].name, *u = l->e[i].unit;
		bool c = l->e[i].type == MAGNET_COUNTER;

		if (strncmp(n, "ab.", 3))
			continue;
		good &= l->e[i].desc_ok;
		if (!strcmp(n, "ab.count"))
			good &= c && !strcmp(u, "pairs");
		else if (!strcmp(n, "ab.pending"))
			good &= !c && !strcmp(u, "starts");
		else if (!strcmp(n, "ab.expired") ||
			 !strcmp(n, "ab.overflow"))
			good &= c && !strcmp(u, "starts");
		else
			good &= !c && !strcmp(u, "ns");
	}
	EXPECT_TRUE(good) TH_LOG("%s %s", l->e[i - 1].name, l->e[i - 1].unit);
	free(l);
}

/* Packet keys: sock from the send call, skb below IP. */
TEST_F(metrics, latency_keys_of_packet_records)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;

	ev(m, "sock", 1);
	ev(m, "ip", 2);
	ev(m, "xmit", 3);
	metrics_latency(m, "by-sock", "sock", "ip", METRICS_KEY_SOCK, NS, 64);
	metrics_latency(m, "by-skb", "ip", "xmit", METRICS_KEY_SKB, NS, 64);
	metrics_latency(m, "by-id", "sock", "xmit", METRICS_KEY_ID, NS, 64);
	tr_pkt(t, 1, NS, 0, 0xa0, 100, HDR + PKT);
	tr_pkt(t, 1, NS + 10, 0, 0xb0, 100, HDR + PKT + 20);
	tr_pkt(t, 1, NS + 20, 0, 0xa0, 100, HDR + PKT);
	tr_rec(t, 1, 0, 1, 0xa0, NS + 30, HDR + PKT);	/* not a packet */
	tr_pkt(t, 1, NS + 40, 0, 0xc0, 100, HDR + PKT - 8); /* too short */
	replay(m, t);
	/* sock key: packet records only, large enough */
	EXPECT_EQ(get(m, "by-sock.pending"), 3);
	/* id key: any record with an id */
	EXPECT_EQ(get(m, "by-id.pending"), 5);
	tr_pkt(t, 2, NS + 100, 0x51, 0xa0, 128, HDR + PKT);	/* 100 */
	tr_pkt(t, 2, NS + 200, 0x52, 0xb0, 128, HDR + PKT);	/* 190 */
	tr_pkt(t, 2, NS + 300, 0x53, 0xa0, 128, HDR + PKT);	/* 280 */
	tr_pkt(t, 2, NS + 400, 0x54, 0xc0, 128, HDR + PKT);	/* none */
	replay(m, t);
	/* paired by socket, FIFO */
	EXPECT_EQ(get(m, "by-sock.count"), 3);
	EXPECT_EQ(get(m, "by-sock.min"), 100);
	EXPECT_EQ(get(m, "by-sock.max"), 280);
	EXPECT_EQ(get(m, "by-sock.mean"), 190);
	EXPECT_EQ(get(m, "by-sock.pending"), 0);
	/* ip records start by skb */
	EXPECT_EQ(get(m, "by-skb.pending"), 4);
	tr_pkt(t, 3, NS + 1000, 0x53, 0, 128, HDR + PKT);
	tr_pkt(t, 3, NS + 1100, 0x51, 0, 128, HDR + PKT);
	tr_pkt(t, 3, NS + 1200, 0x53, 0, 128, HDR + PKT - 1);	/* short */
	tr_rec(t, 3, 0, 1, 0xa0, NS + 1300, HDR);	/* not a packet */
	replay(m, t);
	/* paired by skb; a short record cannot pair */
	EXPECT_EQ(get(m, "by-skb.count"), 2);
	EXPECT_EQ(get(m, "by-skb.min"), 700);
	EXPECT_EQ(get(m, "by-skb.max"), 1000);
	EXPECT_EQ(get(m, "by-skb.pending"), 2);
	/* id key: the record header's id, packet or not */
	EXPECT_EQ(get(m, "by-id.count"), 1);
	EXPECT_EQ(get(m, "by-id.max"), 1300);
	EXPECT_EQ(get(m, "by-id.pending"), 4);
	/* packet bytes: the packet's length */
	EXPECT_EQ(get(m, "xmit.bytes"), 128 * 2 + HDR + PKT - 1 + HDR);
}

/* Page-end records: any read beyond rec->size faults. */
TEST_F(metrics, records_at_a_guard_page_read_within_their_size)
{
	struct metrics *m = self->m;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const uint32_t sizes[] = { HDR, HDR + 8, HDR + 16, HDR + 88,
					  HDR + PKT, HDR + PKT + 8 };
	struct magnet_record *r;
	unsigned int i, j;

	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(mprotect(p + pg, pg, PROT_NONE), 0);
	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_SKB, NS, 64);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < 4; j++) {
			r = (struct magnet_record *)(p + pg - sizes[i]);
			memset(r, 0x11, sizes[i]);
			r->size = sizes[i];
			r->event = j < 2 ? j + 1 : j == 2 ? MAGNET_EVENT_LOSS : 9;
			r->flags = MAGNET_RF_PACKET;
			r->cpu = 0;
			r->timestamp = NS + i;
			metrics_record(m, r);
		}
	}
	/* records ending at a guard page: no fault */
	EXPECT_EQ(get(m, "records"), 24);
	/* only records holding their payload are read */
	EXPECT_EQ(get(m, "l.count"), 2);
	EXPECT_EQ(get(m, "l.pending"), 0);
	EXPECT_EQ(get(m, "records.lost"), (double)(0x1111111111111111ULL * 4));
	EXPECT_EQ(get(m, "records.unknown"), 6);
	munmap(p, 2 * pg);
}

struct hist_seen {
	const char *name;
	struct metrics_latency_view v;
	uint64_t le[METRICS_LE + 1];
	bool found;
};

static void hist_cb(void *ctx, const struct metrics_latency_view *v)
{
	struct hist_seen *h = ctx;

	if (strcmp(v->name, h->name))
		return;
	h->v = *v;
	memcpy(h->le, v->le, sizeof(h->le));
	h->found = true;
}

/*
 * The exported histogram: every pair in the first bucket whose bound it
 * does not exceed, values at, just above and just below each bound; the
 * bounds as documented; _sum and _count.
 */
TEST_F(metrics, histogram_buckets_bounds_sum_and_count)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	struct hist_seen h = { .name = "l" };
	uint64_t want[METRICS_LE + 1] = { 0 }, key = 1, sum = 0, n = 0;
	uint64_t vals[3 * METRICS_LE + 4];
	unsigned int i, k, nv = 0, bad = 0;
	bool bounds = true;

	for (i = 0; i < METRICS_LE; i++) {
		uint64_t b = metrics_le_ns(i), e = i ? (i - 1) / 8 + 8 : 8;
		uint64_t j = i ? (i - 1) % 8 + 1 : 0;

		if (b != (i ? (1ULL << e) + j * (1ULL << (e - 3)) : 256))
			bounds = false;
		if (i && b <= metrics_le_ns(i - 1))
			bounds = false;
		vals[nv++] = b;
		vals[nv++] = b + 1;
		vals[nv++] = b - 1;
	}
	vals[nv++] = 0;
	vals[nv++] = 1;
	vals[nv++] = 1ULL << 40;
	vals[nv++] = (1ULL << 34) + 1;
	/* bounds: 256 ns, then 8 per doubling to 2^34 ns (209) */
	EXPECT_TRUE(bounds);
	EXPECT_EQ(metrics_le_ns(METRICS_LE - 1), 1ULL << 34);
	EXPECT_EQ(metrics_le_ns(METRICS_LE), UINT64_MAX);
	EXPECT_EQ(METRICS_LE, 209);
	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 5000 * NS, 100000);
	for (i = 0; i < nv; i++, key++) {
		tr_rec(t, 1, 0, 1, key, NS + i * 10, HDR);
		tr_rec(t, 2, 0, 1, key, NS + i * 10 + vals[i], HDR);
		for (k = 0; k < METRICS_LE && vals[i] > metrics_le_ns(k); k++)
			;
		want[k]++;
		sum += vals[i];
		n++;
	}
	replay(m, t);
	metrics_foreach_latency(m, hist_cb, &h);
	for (i = 0; i <= METRICS_LE; i++)
		if (h.le[i] != want[i])
			bad++;
	/*
	 * each pair (at, above and below every bound) in the first bucket
	 * it does not exceed
	 */
	EXPECT_TRUE(h.found);
	EXPECT_EQ(bad, 0) TH_LOG("buckets wrong, of %u pairs", nv);
	/* count and sum are every pair's */
	EXPECT_EQ(h.v.count, n);
	EXPECT_EQ(h.v.sum_ns, sum);
}

TEST_F(metrics, percentiles_within_1_64_of_exact)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	enum { N = 20000 };
	uint64_t *v = malloc(N * sizeof(*v)), sum = 0, base = 50 * NS;
	static const unsigned int pcts[] = { 50, 90, 99 };
	unsigned int i;

	ASSERT_TRUE(v);
	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 5 * NS, N);
	for (i = 0; i < N; i++) {
		/* log-uniform from 1 ns to ~1.6 s, some exact small ones */
		v[i] = i % 10 ? (uint64_t)exp(log(1.6e9) * (rnd() >> 11) /
					      9007199254740992.0)
			      : rnd_below(64);
		sum += v[i];
		tr_rec(t, 1, i % 4, 1, i + 1, base + i * 100, HDR);
	}
	replay(m, t);
	for (i = 0; i < N; i++)
		tr_rec(t, 2, i % 4, 1, i + 1, base + i * 100 + v[i], HDR);
	replay(m, t);
	qsort(v, N, sizeof(*v), cmp_u64);
	/* all paired */
	EXPECT_EQ(get(m, "l.count"), N);
	EXPECT_EQ(get(m, "l.pending"), 0);
	/* min, max and mean exact */
	EXPECT_EQ(get(m, "l.min"), v[0]);
	EXPECT_EQ(get(m, "l.max"), v[N - 1]);
	EXPECT_LT(fabs(get(m, "l.mean") - (double)sum / N), 1e-6);
	/* p50, p90, p99 within 1/64 */
	for (i = 0; i < 3; i++) {
		double got = get(m, "l.p%u", pcts[i]);
		uint64_t want = exact_pct(v, N, pcts[i]);

		EXPECT_TRUE(pct_close(got, want))
			TH_LOG("p%u %.0f, exact %llu", pcts[i], got,
			       (unsigned long long)want);
	}
	free(v);
}

TEST_F(metrics, percentiles_exact_for_one_sample_and_below_64_ns)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	bool good = true;
	unsigned int i;

	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 1ULL << 44, 4);
	/* every bucket edge: each value alone is reported exactly */
	for (i = 0; i < 2 * 44 && good; i++) {
		uint64_t x = (1ULL << (i / 2)) - (i % 2), now = 20000 * NS * (i + 1);

		tr_rec(t, 1, 0, 1, 5, now, HDR);
		tr_rec(t, 2, 0, 1, 5, now + x, HDR);
		replay(m, t);
		good = get(m, "l.p50") == x && get(m, "l.p99") == x &&
		       get(m, "l.min") == x && get(m, "l.max") == x;
		if (!good)
			TH_LOG("%llu: p50 %.0f", (unsigned long long)x,
			       get(m, "l.p50"));
		metrics_tick(m, now + x + 20 * NS);
	}
	/* one sample is reported exactly, 1 ns .. 2^43 ns */
	EXPECT_TRUE(good);
	/* sparse: values 0..63 are exact */
	for (i = 0; i < 64; i++) {
		tr_rec(t, 1, 0, 1, 100 + i, 2000000 * NS, HDR);
		tr_rec(t, 2, 0, 1, 100 + i, 2000000 * NS + i, HDR);
		replay(m, t);
	}
	EXPECT_EQ(get(m, "l.p50"), 31);
	EXPECT_EQ(get(m, "l.p90"), 57);
	EXPECT_EQ(get(m, "l.p99"), 63);
	EXPECT_EQ(get(m, "l.mean"), 31.5);
}

TEST_F(metrics, latency_expiry_and_max_pending)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	unsigned int i;

	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 10 * MS, 3);
	tr_rec(t, 1, 0, 1, 1, NS, HDR);
	tr_rec(t, 1, 0, 1, 2, NS + 5 * MS, HDR);
	replay(m, t);
	/* a start waits its whole timeout */
	metrics_tick(m, NS + 10 * MS);
	EXPECT_EQ(get(m, "l.pending"), 2);
	EXPECT_EQ(get(m, "l.expired"), 0);
	/* then ages out at a tick */
	metrics_tick(m, NS + 10 * MS + 1);
	EXPECT_EQ(get(m, "l.pending"), 1);
	EXPECT_EQ(get(m, "l.expired"), 1);
	tr_rec(t, 2, 0, 1, 1, NS + 12 * MS, HDR);	/* its start expired */
	tr_rec(t, 1, 0, 1, 3, NS + 20 * MS, HDR);	/* 2 expires now */
	replay(m, t);
	/* records age out starts too */
	EXPECT_EQ(get(m, "l.count"), 0);
	EXPECT_EQ(get(m, "l.expired"), 2);
	EXPECT_EQ(get(m, "l.pending"), 1);
	for (i = 0; i < 5; i++)
		tr_rec(t, 1, 0, 1, 10 + i, NS + 21 * MS, HDR);
	replay(m, t);
	/* max_pending bounds the waiting starts; the rest overflow */
	EXPECT_EQ(get(m, "l.pending"), 3);
	EXPECT_EQ(get(m, "l.overflow"), 3);
	tr_rec(t, 2, 0, 1, 10, NS + 22 * MS, HDR);
	tr_rec(t, 2, 0, 1, 13, NS + 22 * MS, HDR);	/* overflowed */
	replay(m, t);
	/* overflowed starts cannot pair */
	EXPECT_EQ(get(m, "l.count"), 1);
	EXPECT_EQ(get(m, "l.pending"), 2);
	/*
	 * redeclared with the same events and key and fewer pending: the
	 * newest dropped, the oldest kept
	 */
	EXPECT_EQ(metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 10 * MS, 1), 0);
	EXPECT_EQ(get(m, "l.pending"), 1);
	EXPECT_EQ(get(m, "l.overflow"), 4);
	EXPECT_EQ(get(m, "l.count"), 1);
	tr_rec(t, 2, 0, 1, 3, NS + 23 * MS, HDR);
	replay(m, t);
	/* the kept start still pairs */
	EXPECT_EQ(get(m, "l.count"), 2);
	EXPECT_EQ(get(m, "l.max"), 3 * MS);
	/* a larger max_pending: grows to the new bound */
	EXPECT_EQ(metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, 10 * MS, 100), 0);
	for (i = 0; i < 200; i++)
		tr_rec(t, 1, 0, 1, 1000 + i, NS + 24 * MS, HDR);
	replay(m, t);
	EXPECT_EQ(get(m, "l.pending"), 100);
	EXPECT_EQ(get(m, "l.overflow"), 104);
	/* new start and end: waiting starts dropped, totals kept */
	EXPECT_EQ(metrics_latency(m, "l", "e", "s", METRICS_KEY_ID, 10 * MS, 100), 0);
	EXPECT_EQ(get(m, "l.pending"), 0);
	EXPECT_EQ(get(m, "l.count"), 2);
}

TEST(metrics_latency_window_leaves_the_count)
{
	struct metrics *m = mk(5, 5, 16, 4);
	struct trace t = { 0 };

	ev(m, "s", 1);
	ev(m, "e", 2);
	metrics_latency(m, "l", "s", "e", METRICS_KEY_ID, NS, 16);
	tr_rec(&t, 1, 0, 1, 1, 10 * NS, HDR);
	tr_rec(&t, 2, 0, 1, 1, 10 * NS + 500, HDR);
	tr_rec(&t, 1, 0, 1, 1, 12 * NS, HDR);
	tr_rec(&t, 2, 0, 1, 1, 12 * NS + 300, HDR);
	replay(m, &t);
	/* a window of two samples */
	EXPECT_EQ(get(m, "l.min"), 300);
	EXPECT_EQ(get(m, "l.max"), 500);
	EXPECT_EQ(get(m, "l.mean"), 400);
	/* the older sample left the window, the count keeps it */
	metrics_tick(m, 15 * NS);
	EXPECT_EQ(get(m, "l.min"), 300);
	EXPECT_EQ(get(m, "l.max"), 300);
	EXPECT_EQ(get(m, "l.p50"), 300);
	EXPECT_EQ(get(m, "l.count"), 2);
	/* an empty window: 0 */
	metrics_tick(m, 17 * NS);
	EXPECT_EQ(get(m, "l.min"), 0);
	EXPECT_EQ(get(m, "l.max"), 0);
	EXPECT_EQ(get(m, "l.mean"), 0);
	EXPECT_EQ(get(m, "l.p99"), 0);
	EXPECT_EQ(get(m, "l.count"), 2);
	tr_free(&t);
	metrics_free(m);
}

TEST_F(metrics, loss_unknown_ids_and_rebinding)
{
	struct metrics *m = self->m;
	struct trace *t = &self->t;

	ev(m, "e", 1);
	tr_loss(t, 0, NS, 5);
	tr_loss(t, 1, NS, 7);
	tr_rec(t, 99, 0, 1, 0, NS, HDR);
	tr_rec(t, MAGNET_EVENT_JOURNEY, 0, 1, 0, NS, HDR);
	tr_rec(t, 1, 0, 1, 0, NS, HDR);
	replay(m, t);
	/* loss records add up */
	EXPECT_EQ(get(m, "records.lost"), 12);
	/* unbound ids are unknown; all count in records */
	EXPECT_EQ(get(m, "records.unknown"), 2);
	EXPECT_EQ(get(m, "records"), 5);
	/* module reload: e gets id 3; id 1 now unbound */
	EXPECT_EQ(metrics_bind(m, "e", 3), 0);
	tr_rec(t, 1, 0, 1, 0, NS, HDR);
	tr_rec(t, 3, 0, 1, 0, NS, HDR);
	replay(m, t);
	/* rebinding keeps the totals; the old id is unbound */
	EXPECT_EQ(get(m, "e.count"), 2);
	EXPECT_EQ(get(m, "records.unknown"), 3);
	ev(m, "f", 3);		/* id 3 moves to f */
	tr_rec(t, 3, 0, 1, 0, NS, HDR);
	replay(m, t);
	/* binding an id unbinds its previous event */
	EXPECT_EQ(get(m, "e.count"), 2);
	EXPECT_EQ(get(m, "f.count"), 1);
	/* id 0 unbinds */
	EXPECT_EQ(metrics_bind(m, "f", 0), 0);
	tr_rec(t, 3, 0, 1, 0, NS, HDR);
	replay(m, t);
	EXPECT_EQ(get(m, "f.count"), 1);
	EXPECT_EQ(get(m, "records.unknown"), 4);
}

TEST_F(metrics, reload_keeps_what_is_declared_again)
{
	static const char want[] = "a.count a.rate a.bytes "
		"a.byte_rate a.cpu0.count b.count b.rate b.bytes "
		"b.byte_rate b.cpu0.count d.count d.rate d.bytes "
		"d.byte_rate ab.count ab.min";
	struct metrics *m = self->m;
	struct trace *t = &self->t;
	char buf[1024];

	ev(m, "a", 1);
	ev(m, "b", 2);
	ev(m, "c", 3);
	metrics_latency(m, "ab", "a", "b", METRICS_KEY_ID, NS, 16);
	metrics_latency(m, "bc", "b", "c", METRICS_KEY_ID, NS, 16);
	tr_rec(t, 1, 0, 1, 5, NS, HDR);
	tr_rec(t, 2, 0, 1, 5, NS + 100, HDR);
	tr_rec(t, 3, 0, 1, 5, NS + 300, HDR);
	tr_rec(t, 1, 0, 1, 6, NS + 400, HDR);	/* stays pending in ab */
	replay(m, t);
	/* reload: same a, b, ab; c and bc dropped; d new */
	metrics_mark(m);
	EXPECT_EQ(metrics_event(m, "b"), 0);
	EXPECT_EQ(metrics_event(m, "a"), 0);
	EXPECT_EQ(metrics_event(m, "d"), 0);
	/* a latency needs events declared since the mark */
	EXPECT_EQ(err_of(metrics_latency(m, "cx", "c", "a", METRICS_KEY_ID, NS, 1)),
		  ENOENT);
	EXPECT_EQ(metrics_latency(m, "ab", "a", "b", METRICS_KEY_ID, 2 * NS, 16), 0);
	metrics_sweep(m);
	/* the sweep forgets what was not declared */
	EXPECT_FALSE(metrics_get(m, "c.count", NULL));
	EXPECT_FALSE(metrics_get(m, "bc.count", NULL));
	/* reload keeps totals, histograms and waiting starts */
	EXPECT_EQ(get(m, "a.count"), 2);
	EXPECT_EQ(get(m, "ab.count"), 1);
	EXPECT_EQ(get(m, "ab.max"), 100);
	EXPECT_EQ(get(m, "ab.pending"), 1);
	/* the order after the sweep: first declaration */
	EXPECT_EQ(strncmp(names(m, buf, sizeof(buf)), want, strlen(want)), 0)
		TH_LOG("%s", buf);
	tr_rec(t, 3, 0, 1, 0, NS, HDR);		/* c's id: unbound */
	tr_rec(t, 2, 0, 1, 6, NS + 500, HDR);
	replay(m, t);
	/* the swept event's id unbound; the latency works on */
	EXPECT_EQ(get(m, "records.unknown"), 1);
	EXPECT_EQ(get(m, "ab.count"), 2);
	/* sweeping all leaves the totals */
	metrics_mark(m);
	metrics_sweep(m);
	EXPECT_STREQ(names(m, buf, sizeof(buf)),
		     "records records.lost records.unknown");
	EXPECT_EQ(get(m, "records"), 6);
}

/* ---- random traces against a reference model ---- */

struct ref_lat {
	uint16_t start, end;
	enum metrics_key key;
	uint64_t timeout;
	uint32_t max;
	uint32_t n;
	struct { uint64_t key, ts; } *q;	/* arrival order */
	uint32_t en;				/* ends before their start */
	struct { uint64_t key, ts; } *eq;
	uint64_t count, expired, overflow;
	uint64_t *val, *sec;			/* samples and their second */
	size_t nval, capval;
};

struct ref {
	uint64_t now;
	uint64_t records, lost, unknown;
	uint64_t count[5], bytes[5];
	uint64_t *persec[5];			/* records per second */
	struct ref_lat lat[4];
};

#define REF_SECS	4096

static bool ref_key(const struct magnet_record *r, enum metrics_key k,
		    uint64_t *key)
{
	struct magnet_packet p;

	if (k == METRICS_KEY_ID) {
		*key = r->id;
		return *key;
	}
	if (!(r->flags & MAGNET_RF_PACKET) || r->size < HDR + PKT)
		return false;
	memcpy(&p, r->payload, sizeof(p));
	*key = k == METRICS_KEY_SOCK ? p.sock : p.skb;
	return *key;
}

static void ref_expire(struct ref *f, struct ref_lat *l)
{
	while (l->n && f->now > l->q[0].ts && f->now - l->q[0].ts > l->timeout) {
		memmove(l->q, l->q + 1, --l->n * sizeof(l->q[0]));
		l->expired++;
	}
	while (l->en && f->now > l->eq[0].ts &&
	       f->now - l->eq[0].ts > l->timeout)
		memmove(l->eq, l->eq + 1, --l->en * sizeof(l->eq[0]));
}

static void ref_sample(struct ref_lat *l, uint64_t v, uint64_t ts)
{
	if (l->nval == l->capval) {
		l->capval = l->capval * 2 + 1024;
		l->val = realloc(l->val, l->capval * 8);
		l->sec = realloc(l->sec, l->capval * 8);
	}
	l->val[l->nval] = v;
	l->sec[l->nval++] = ts / NS;
	l->count++;
}

static void ref_record(struct ref *f, const struct magnet_record *r)
{
	struct magnet_packet p;
	uint64_t key;
	unsigned int i, j;

	f->records++;
	if (r->timestamp > f->now)
		f->now = r->timestamp;
	if (r->event == MAGNET_EVENT_LOSS) {
		f->lost += ((const struct magnet_loss *)r->payload)->lost;
		return;
	}
	if (r->event < 1 || r->event > 4) {
		f->unknown++;
		return;
	}
	f->count[r->event]++;
	memcpy(&p, r->payload, r->size >= HDR + PKT ? PKT : 0);
	f->bytes[r->event] += (r->flags & MAGNET_RF_PACKET) &&
			      r->size >= HDR + PKT ? p.len : r->size;
	f->persec[r->event][r->timestamp / NS % REF_SECS]++;
	for (i = 0; i < 4; i++) {
		struct ref_lat *l = &f->lat[i];

		if (l->end == r->event && ref_key(r, l->key, &key)) {
			ref_expire(f, l);
			for (j = 0; j < l->n && l->q[j].key != key; j++)
				;
			if (j < l->n && l->q[j].ts <= r->timestamp) {
				ref_sample(l, r->timestamp - l->q[j].ts,
					   r->timestamp);
				memmove(l->q + j, l->q + j + 1,
					(--l->n - j) * sizeof(l->q[0]));
			} else if (l->en < l->max) {
				l->eq[l->en].key = key;
				l->eq[l->en++].ts = r->timestamp;
			}
		}
		if (l->start == r->event && ref_key(r, l->key, &key)) {
			bool paired = false;

			ref_expire(f, l);
			for (;;) {
				for (j = 0; j < l->en && l->eq[j].key != key; j++)
					;
				if (j == l->en)
					break;
				uint64_t ets = l->eq[j].ts;

				memmove(l->eq + j, l->eq + j + 1,
					(--l->en - j) * sizeof(l->eq[0]));
				if (ets >= r->timestamp) {
					ref_sample(l, ets - r->timestamp, ets);
					paired = true;
					break;
				}
			}
			if (paired) {
				/* the start met its end */
			} else if (l->n == l->max) {
				l->overflow++;
			} else {
				l->q[l->n].key = key;
				l->q[l->n++].ts = r->timestamp;
			}
		}
	}
}

static void ref_tick(struct ref *f, uint64_t now)
{
	unsigned int i;

	if (now > f->now)
		f->now = now;
	for (i = 0; i < 4; i++)
		ref_expire(f, &f->lat[i]);
}

/* One random record: events 1-4 bound, 5-8 not, and loss records. */
static void random_record(struct trace *t, uint64_t ts, uint64_t nkeys,
			  uint32_t ntgids)
{
	static const uint32_t sizes[] = { HDR, HDR + 8, HDR + 60, HDR + PKT - 4,
					  HDR + PKT, HDR + PKT + 100 };
	uint64_t r = rnd();
	uint16_t event = r % 100 < 2 ? MAGNET_EVENT_LOSS : 1 + r % 8;
	uint32_t size = sizes[(r >> 8) % 6];
	uint64_t skb = (r >> 16) % 8 ? 0x1000 + rnd_below(nkeys) : 0;
	uint64_t sock = (r >> 20) % 8 ? 0x8000 + rnd_below(nkeys) : 0;

	if (event == MAGNET_EVENT_LOSS) {
		tr_loss(t, r % 4, ts, (r >> 24) % 10);
		return;
	}
	if ((r >> 28) % 4) {
		tr_pkt(t, event, ts, skb, sock, (r >> 32) % 9000, size);
		if ((r >> 30) % 2) {	/* an abstract id of its own */
			struct magnet_record *rec = (void *)(t->buf + t->len -
							     ALIGN8(size));
			rec->id = rnd_below(nkeys);
		}
	} else {
		tr_rec(t, event, (r >> 32) % 6, 0, rnd_below(nkeys), ts, size);
	}
	((struct magnet_record *)(t->buf + t->len - ALIGN8(size)))->tgid =
		1 + (uint32_t)rnd_below(ntgids);
	((struct magnet_record *)(t->buf + t->len - ALIGN8(size)))->cpu =
		(r >> 40) % 6;
}

static void ref_setup(struct ref *f, struct metrics *m, uint32_t maxp)
{
	static const char *evn[] = { NULL, "e1", "e2", "e3", "e4" };
	static const struct { uint16_t s, e; enum metrics_key k; uint64_t to; }
	lat[4] = {
		{ 1, 2, METRICS_KEY_ID, 50 * MS },
		{ 2, 3, METRICS_KEY_SOCK, 200 * MS },
		{ 3, 4, METRICS_KEY_SKB, 2 * NS },
		{ 1, 4, METRICS_KEY_ID, 20 * MS },
	};
	char name[8];
	unsigned int i;

	memset(f, 0, sizeof(*f));
	for (i = 1; i <= 4; i++) {
		ev(m, evn[i], i);
		f->persec[i] = calloc(REF_SECS, sizeof(uint64_t));
	}
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "l%u", i);
		metrics_latency(m, name, evn[lat[i].s], evn[lat[i].e],
				lat[i].k, lat[i].to, maxp);
		f->lat[i] = (struct ref_lat){ .start = lat[i].s,
			.end = lat[i].e, .key = lat[i].k, .timeout = lat[i].to,
			.max = maxp };
		f->lat[i].q = calloc(maxp, sizeof(f->lat[i].q[0]));
		f->lat[i].eq = calloc(maxp, sizeof(f->lat[i].eq[0]));
	}
}

static void ref_free(struct ref *f)
{
	unsigned int i;

	for (i = 1; i <= 4; i++)
		free(f->persec[i]);
	for (i = 0; i < 4; i++) {
		free(f->lat[i].q);
		free(f->lat[i].eq);
		free(f->lat[i].val);
		free(f->lat[i].sec);
	}
}

/* Compare everything with the reference; @ws the window. */
static bool ref_compare(struct ref *f, const struct metrics *m,
			unsigned int ws, bool pct)
{
	uint64_t nowsec = f->now / NS, s, n;
	unsigned int i, k;
	bool good = true;

	good &= get(m, "records") == f->records &&
		get(m, "records.lost") == f->lost &&
		get(m, "records.unknown") == f->unknown;
	for (i = 1; i <= 4; i++) {
		n = 0;
		for (s = nowsec + 1 - ws; s <= nowsec; s++)
			n += f->persec[i][s % REF_SECS];
		good &= get(m, "e%u.count", i) == f->count[i] &&
			get(m, "e%u.bytes", i) == f->bytes[i] &&
			get(m, "e%u.rate", i) == (double)n / ws;
	}
	for (i = 0; i < 4; i++) {
		struct ref_lat *l = &f->lat[i];
		uint64_t *w = malloc((l->nval + 1) * sizeof(*w)), sum = 0;
		size_t nw = 0;

		good &= get(m, "l%u.count", i) == l->count &&
			get(m, "l%u.expired", i) == l->expired &&
			get(m, "l%u.overflow", i) == l->overflow &&
			get(m, "l%u.pending", i) == l->n;
		for (k = 0; k < l->nval; k++)
			if (l->sec[k] + ws > nowsec) {
				w[nw++] = l->val[k];
				sum += l->val[k];
			}
		qsort(w, nw, sizeof(*w), cmp_u64);
		if (!nw) {
			good &= get(m, "l%u.max", i) == 0;
		} else {
			good &= get(m, "l%u.min", i) == w[0] &&
				get(m, "l%u.max", i) == w[nw - 1] &&
				fabs(get(m, "l%u.mean", i) - (double)sum / nw) <
				1e-6 * ((double)sum / nw + 1);
			if (pct)
				good &= pct_close(get(m, "l%u.p50", i),
						  exact_pct(w, nw, 50)) &&
					pct_close(get(m, "l%u.p90", i),
						  exact_pct(w, nw, 90)) &&
					pct_close(get(m, "l%u.p99", i),
						  exact_pct(w, nw, 99));
		}
		if (!good)
			TH_LOG("l%u: count %llu/%.0f expired %llu/%.0f "
			       "pending %u/%.0f window %zu", i,
			       (unsigned long long)l->count,
			       get(m, "l%u.count", i),
			       (unsigned long long)l->expired,
			       get(m, "l%u.expired", i), l->n,
			       get(m, "l%u.pending", i), nw);
		free(w);
	}
	return good;
}

/* Records a little out of order (merged CPUs), ticks now and then. */
TEST(metrics_random_trace_as_the_reference_model)
{
	struct metrics *m = mk(3, 5, 32, 4);
	struct trace t = { 0 };
	struct ref f;
	uint64_t base = 10 * NS, ts, next_tick = base;
	unsigned int i, checks = 0, bad = 0;
	const struct magnet_record *r;

	ref_setup(&f, m, 40);
	for (i = 0; i < 200000; i++) {
		base += rnd_below(100 * US);
		ts = base - rnd_below(2 * MS);
		random_record(&t, ts, 64, 50);
		r = (const struct magnet_record *)t.buf;
		ref_record(&f, r);
		replay(m, &t);
		if (base >= next_tick) {
			metrics_tick(m, base);
			ref_tick(&f, base);
			next_tick = base + rnd_below(1500 * MS);
		}
		if (i % 5000 == 4999) {
			checks++;
			bad += !ref_compare(&f, m, 3, true);
		}
	}
	EXPECT_EQ(bad, 0) TH_LOG("of %u comparisons", checks);
	tr_free(&t);
	ref_free(&f);
	metrics_free(m);
}

/* A million random records with random ids: memory stays bounded. */
TEST(metrics_million_random_records_bounded_and_as_the_model)
{
	enum { MAXP = 256, MAXTG = 64 };
	struct metrics *m = mk(10, 100000, MAXTG, 4);
	struct trace t = { 0 };
	struct ref f;
	uint64_t base = 100 * NS, ts, maxpend = 0, nkeys;
	unsigned int i, j, maxtop = 0, n;
	char name[16];
	double v;

	ref_setup(&f, m, MAXP);
	for (i = 0; i < 1000000; i++) {
		/* phases: few keys (pairs), then many (overflow) */
		nkeys = (i / 100000) % 2 ? 1ULL << 40 : 500;
		base += rnd_below(40 * US);
		ts = base - rnd_below(MS);
		random_record(&t, ts, nkeys, (i / 250000) % 2 ? 1000000 : 40);
		ref_record(&f, (const struct magnet_record *)t.buf);
		replay(m, &t);
		if (i % 25000 == 0)
			ref_tick(&f, base), metrics_tick(m, base);
		if (i % 10007 == 0) {
			for (j = 0; j < 4; j++) {
				snprintf(name, sizeof(name), "l%u.pending", j);
				if (metrics_get(m, name, &v) && v > maxpend)
					maxpend = v;
			}
			for (j = 1; j <= 4; j++) {
				snprintf(name, sizeof(name), "e%u", j);
				n = top_lines(m, name);
				if (n > maxtop)
					maxtop = n;
			}
		}
	}
	/* pending never above max_pending, and near it */
	EXPECT_LE(maxpend, MAXP);
	EXPECT_GT(maxpend, MAXP / 2);
	/* thread groups tracked never above max_tgids, and near it */
	EXPECT_LE(maxtop, MAXTG);
	EXPECT_GT(maxtop, MAXTG / 2);
	/* overflow, expiry and pairs all seen */
	EXPECT_GT(get(m, "l0.overflow"), 0);
	EXPECT_GT(get(m, "l2.expired"), 0);
	EXPECT_GT(get(m, "l0.count"), 1000);
	/* totals and window as the reference */
	EXPECT_TRUE(ref_compare(&f, m, 10, true));
	EXPECT_EQ(get(m, "records"), 1000000);
	TH_LOG("%.0f pairs, %.0f expired, %.0f overflow, %.0f unknown",
	       get(m, "l0.count") + get(m, "l1.count") + get(m, "l2.count") +
	       get(m, "l3.count"), get(m, "l0.expired") + get(m, "l1.expired") +
	       get(m, "l2.expired") + get(m, "l3.expired"),
	       get(m, "l0.overflow") + get(m, "l1.overflow") +
	       get(m, "l2.overflow") + get(m, "l3.overflow"),
	       get(m, "records.unknown"));
	tr_free(&t);
	ref_free(&f);
	metrics_free(m);
}

/* ---- a trace recorded on a real kernel ---- */

/*
 * tests/host/data/udp-veth.mtr: magnet-read --trace of the packets suite's
 * UDP transfer (50 datagrams of 1000 bytes from namespace A to B over a
 * veth pair, the four probe sets installed), as the module's reads
 * returned the records: each CPU's in order, one CPU after the other.
 * The events are named after their packet layer, as magnetd names set
 * layers. Fed to the metrics in time order (as magnetd's reader hands
 * them on), the latencies are checked against a plain computation over
 * the same records; in read order, the send side must pair the same.
 */
struct rec_trace {
	uint8_t *buf;
	size_t len;
	size_t n;
	const struct magnet_record **rec;	/* file order */
};

static bool load_recorded(const char *path, struct rec_trace *t)
{
	FILE *f = fopen(path, "rb");
	uint32_t hsize;
	size_t off;
	long end;

	memset(t, 0, sizeof(*t));
	if (!f)
		return false;
	fseek(f, 0, SEEK_END);
	end = ftell(f);
	rewind(f);
	t->buf = malloc(end > 0 ? end : 1);
	if (!t->buf || fread(t->buf, 1, end, f) != (size_t)end || end < 72 ||
	    memcmp(t->buf, "MAGNETTR", 8)) {
		fclose(f);
		return false;
	}
	fclose(f);
	memcpy(&hsize, t->buf + 12, 4);
	t->len = end;
	t->rec = calloc(end / HDR + 1, sizeof(*t->rec));
	for (off = hsize; off + HDR <= t->len;) {
		const struct magnet_record *r = (const void *)(t->buf + off);

		if (r->size < HDR || off + r->size > t->len)
			return false;
		t->rec[t->n++] = r;
		off += ALIGN8(r->size);
	}
	return t->n > 0;
}

static const char *layer_name(const struct magnet_record *r)
{
	static const char *const udp[] = {
		[MAGNET_LAYER_SOCKET] = "udp-send.socket",
		[MAGNET_LAYER_PROTO_SEND] = "udp-send.udp",
		[MAGNET_LAYER_IP_SEND] = "udp-send.ip",
		[MAGNET_LAYER_DEV_QUEUE] = "udp-send.dev-queue",
		[MAGNET_LAYER_DEV_XMIT] = "udp-send.dev-xmit",
		[MAGNET_LAYER_DEV_RECV] = "udp-recv.dev-recv",
		[MAGNET_LAYER_IP_RECV] = "udp-recv.ip",
		[MAGNET_LAYER_PROTO_RECV] = "udp-recv.udp",
		[MAGNET_LAYER_SOCK_QUEUE] = "udp-recv.sock-queue",
		[MAGNET_LAYER_APP] = "udp-recv.app",
	};
	struct magnet_packet p;

	if (!(r->flags & MAGNET_RF_PACKET) || r->size < HDR + PKT)
		return NULL;
	memcpy(&p, r->payload, PKT);
	if (p.proto != 17 || p.layer >= MAGNET_LAYER_COUNT)
		return NULL;
	return udp[p.layer];
}

static int cmp_rec_time(const void *a, const void *b)
{
	const struct magnet_record *x = *(const struct magnet_record *const *)a;
	const struct magnet_record *y = *(const struct magnet_record *const *)b;

	return x->timestamp < y->timestamp ? -1 : x->timestamp > y->timestamp;
}

/* Socket to driver, by hand: the n-th send call of a socket with its n-th
 * dev-xmit, in time order. Returns how many pairs, durations in @v.
 */
static size_t plain_send_latencies(const struct magnet_record **sorted,
				   size_t n, uint64_t *v)
{
	size_t i, j, k = 0;
	bool *used = calloc(n, 1);

	for (i = 0; i < n; i++) {
		const char *ni = layer_name(sorted[i]);
		struct magnet_packet a, b;

		if (!ni || strcmp(ni, "udp-send.socket"))
			continue;
		memcpy(&a, sorted[i]->payload, PKT);
		for (j = i + 1; j < n; j++) {
			const char *nj = layer_name(sorted[j]);

			if (used[j] || !nj || strcmp(nj, "udp-send.dev-xmit"))
				continue;
			memcpy(&b, sorted[j]->payload, PKT);
			if (b.sock == a.sock) {
				used[j] = true;
				v[k++] = sorted[j]->timestamp -
					 sorted[i]->timestamp;
				break;
			}
		}
	}
	free(used);
	return k;
}

static void replay_recorded(const struct magnet_record **order, size_t n,
		   const struct rec_trace *t, double *count, double *min,
		   double *max, double *p50, double *rcount)
{
	struct metrics_limits lim = { .window_s = 3600, .top_tgids = 3,
				      .max_tgids = 64, .max_cpus = 64 };
	struct metrics *m = metrics_new(&lim);
	uint16_t bound[MAGNET_EVENT_ID_MAX + 1] = { 0 };
	size_t i;

	for (i = 0; i < t->n; i++) {
		const char *name = layer_name(t->rec[i]);
		uint16_t ev = t->rec[i]->event;

		if (!name || ev > MAGNET_EVENT_ID_MAX || bound[ev])
			continue;
		metrics_event(m, name);
		metrics_bind(m, name, ev);
		bound[ev] = 1;
	}
	metrics_latency(m, "udp_send", "udp-send.socket", "udp-send.dev-xmit",
			METRICS_KEY_SOCK, 10 * NS, 4096);
	metrics_latency(m, "udp_recv", "udp-recv.dev-recv", "udp-recv.app",
			METRICS_KEY_SKB, 10 * NS, 4096);
	metrics_tick(m, order[0]->timestamp);
	for (i = 0; i < n; i++)
		metrics_record(m, order[i]);
	metrics_get(m, "udp_send.count", count);
	metrics_get(m, "udp_send.min", min);
	metrics_get(m, "udp_send.max", max);
	metrics_get(m, "udp_send.p50", p50);
	metrics_get(m, "udp_recv.count", rcount);
	metrics_free(m);
}

TEST(metrics_recorded_trace_latencies_as_computed_by_hand)
{
	const char *path = SRCDIR "/tests/host/data/udp-veth.mtr";
	struct rec_trace t = { 0 };
	const struct magnet_record **sorted;
	double c1, mn1, mx1, p1, r1, c2, mn2, mx2, p2, r2, sends = 0;
	uint64_t *v;
	size_t i, k;

	ASSERT_TRUE(load_recorded(path, &t)) TH_LOG("%s", path);
	sorted = malloc(t.n * sizeof(*sorted));
	memcpy(sorted, t.rec, t.n * sizeof(*sorted));
	qsort(sorted, t.n, sizeof(*sorted), cmp_rec_time);
	for (i = 0; i < t.n; i++)
		sends += layer_name(t.rec[i]) &&
			 !strcmp(layer_name(t.rec[i]), "udp-send.socket");
	v = malloc(t.n * sizeof(*v));
	k = plain_send_latencies(sorted, t.n, v);
	qsort(v, k, sizeof(*v), cmp_u64);

	replay_recorded(sorted, t.n, &t, &c1, &mn1, &mx1, &p1, &r1);
	replay_recorded(t.rec, t.n, &t, &c2, &mn2, &mx2, &p2, &r2);
	/* 50 send calls */
	EXPECT_EQ(sends, 50);
	/* in time order: 50 send and 50 receive latencies */
	EXPECT_EQ(c1, 50);
	EXPECT_EQ(r1, 50);
	/*
	 * In read order (CPU after CPU) the send side (one socket, start and
	 * end on the sender's CPU or the end early) pairs the same; the
	 * receive side reuses skbs across CPUs and needs the time order
	 * magnetd's reader restores, so only its count is bounded here.
	 */
	EXPECT_EQ(c2, c1);
	EXPECT_EQ(mn2, mn1);
	EXPECT_EQ(mx2, mx1);
	EXPECT_EQ(p2, p1);
	EXPECT_LE(r2, r1);
	/* min and max as computed by hand */
	ASSERT_EQ(k, 50);
	EXPECT_EQ(mn1, v[0]);
	EXPECT_EQ(mx1, v[k - 1]);
	/* p50 within 1/64 of the hand computation */
	EXPECT_LE(fabs(p1 - v[(k + 1) / 2 - 1]), v[(k + 1) / 2 - 1] / 64.0 + 1);
	free(v);
	free(sorted);
	free(t.rec);
	free(t.buf);
}

TEST_MAIN

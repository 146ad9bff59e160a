// SPDX-License-Identifier: GPL-2.0
/*
 * --otlp FILE, --zipkin FILE: the stream as spans, in the formats tracing
 * systems read (lib/otel.c writes them).
 *
 * - An application's span (libmagnet's magnet_span_*, the app.span
 *   probe's records) is its begin and its end records, joined by span id,
 *   with its events; written at its end. One still open when the input
 *   ends is written as it stands, ending at the last record, with
 *   magnet.span.incomplete; an end or event of no open span is counted
 *   and dropped (its begin was never read: there is no start to give).
 * - A packet's journey is a span ("tcp send", "udp receive": OpenTelemetry's
 *   PRODUCER and CONSUMER, a message's kinds), and each layer it passed a
 *   child of it, from its record to the next layer's. A block I/O is a
 *   span ("block write"), its layers (bio, queue, issue, complete) its
 *   children.
 * - A kernel span's parent, the first that applies:
 *   1. a W3C traceparent in the packet's bytes (an HTTP request's
 *      "traceparent:" header): its trace, its parent span; the
 *      connection then carries this span's context (3.);
 *   2. the innermost application span open on the thread of the packet's
 *      first layer run by a thread (not in an interrupt), or of the block
 *      I/O's submitter;
 *   3. the context the packet's connection carries, both ways (the
 *      reply to a request with a traceparent);
 *   4. the context the thread adopted from a packet it received: a
 *      packet with a parent (any of these) makes the thread that read it
 *      (its last layer run by a thread, on the receiving side) work for
 *      its span, for ADOPT_NS at most, until it reads another; a thread
 *      that read none takes what its process adopted last (a worker
 *      handed the request in user space: right while the process serves
 *      one request at a time, the latest one's otherwise); and a thread
 *      that issued a block request of a trace for another (a driver's
 *      worker) works for that I/O;
 *   5. none: a root span, in a trace of its own.
 *   The parent is looked up when the journey is shown, in start order,
 *   so the thread's spans are those open at the journey's start.
 * - service.name: the process's, from the service.name attribute its
 *   spans carry (libmagnet puts it on a thread's root span), or, live,
 *   /proc's name for it; else OpenTelemetry's "unknown_service".
 * - Bounded: SPANS_OPEN_MAX spans open, SPAN_EVENTS_MAX events each,
 *   FLOWS slots of connections' contexts (a direct-mapped table: a new
 *   connection takes its slot), THREADS_MAX threads; beyond, counted.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"
#include "magnet-read.h"
#include "otel.h"

#define SPANS_OPEN_MAX	65536
#define SPAN_EVENTS_MAX	128
#define SPAN_DEPTH	32		/* per thread, as libmagnet's */
#define THREADS_MAX	65536
#define HASH_BITS	12
#define FLOWS		4096
#define ADOPT_NS	(10 * NSEC_PER_SEC)	/* an adopted context, at most */
#define ATTRS_MAX	32

struct span_event {
	uint64_t ts;
	char *name;
	char *attrs;			/* "key=value\0"... */
	size_t attrs_len;
};

struct app_span {
	struct app_span *hnext;		/* by span id */
	struct sthread *thread;
	uint8_t trace[16], id[8], parent[8];
	uint64_t start;
	char *name;
	char *attrs;			/* the begin's, then the end's */
	size_t attrs_len;
	struct span_event *events;
	unsigned int nevents;
};

struct sthread {
	struct sthread *hnext;
	uint32_t tid, tgid, node;
	struct app_span *stack[SPAN_DEPTH];	/* open, innermost last */
	unsigned int depth;
	bool adopted;
	uint8_t ad_trace[16], ad_span[8];
	uint64_t ad_ts;
};

struct service {
	struct service *hnext;
	uint32_t tgid, node;
	char *name;			/* NULL: not known */
	/* what a thread of it adopted last (its threads' fallback) */
	bool adopted;
	uint8_t ad_trace[16], ad_span[8];
	uint64_t ad_ts;
};

struct flow {
	uint8_t key[36];		/* both ends, lower first; 0: free */
	uint8_t trace[16], span[8];
	uint64_t ts;
	bool used;
};

struct spans {
	struct otel_out *out[2];
	unsigned int nout;
	int64_t offset;			/* Unix time - record time */
	bool live, failed;
	uint64_t last_ts;
	uint64_t rng[2];
	struct app_span *by_id[1 << HASH_BITS];
	struct sthread *threads[1 << HASH_BITS];
	struct service *services[1 << HASH_BITS];
	struct flow flows[FLOWS];
	char *hosts[NODES_MAX];		/* host.name of each node; NULL: the writers' */
	unsigned int nopen, nthreads;
	struct spans_stats st;
};

/* A context: a span to be the parent of the next */
struct ctx {
	uint8_t trace[16], span[8];
	bool valid;
};

static char *xmemdup(const void *s, size_t n)
{
	char *p = malloc(n + 1);

	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

static unsigned int hash32(uint32_t v)
{
	return (v * 2654435761U) >> (32 - HASH_BITS);
}

static unsigned int hash_id(const uint8_t *id)
{
	uint32_t v;

	memcpy(&v, id, sizeof(v));
	return hash32(v);
}

/* xorshift128+, seeded from getrandom(): ids for the kernel's spans */
static uint64_t rnd(struct spans *sp)
{
	uint64_t s1 = sp->rng[0];
	const uint64_t s0 = sp->rng[1];

	sp->rng[0] = s0;
	s1 ^= s1 << 23;
	sp->rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	return sp->rng[1] + s0;
}

static void new_id(struct spans *sp, uint8_t *id, size_t len)
{
	do {
		for (size_t i = 0; i < len; i += 8) {
			uint64_t r = rnd(sp);

			memcpy(id + i, &r, len - i < 8 ? len - i : 8);
		}
	} while (otel_id_zero(id, len));
}

struct spans *spans_new(int64_t offset, bool live)
{
	struct spans *sp = xcalloc(1, sizeof(*sp));

	if (getrandom(sp->rng, sizeof(sp->rng), 0) != sizeof(sp->rng)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		sp->rng[0] = (uint64_t)ts.tv_nsec << 20 ^ (uint64_t)getpid();
		sp->rng[1] = (uint64_t)ts.tv_sec;
	}
	if (!sp->rng[0] && !sp->rng[1])
		sp->rng[1] = 1;
	sp->offset = offset;
	sp->live = live;
	return sp;
}

void spans_node(struct spans *sp, unsigned int node, const char *host)
{
	if (node < NODES_MAX && host) {
		free(sp->hosts[node]);
		sp->hosts[node] = xmemdup(host, strlen(host));
	}
}

static const char *node_host(const struct spans *sp, unsigned int node)
{
	return node < NODES_MAX ? sp->hosts[node] : NULL;
}

void spans_output(struct spans *sp, struct otel_out *out)
{
	if (sp->nout < 2)
		sp->out[sp->nout++] = out;
}

static void emit(struct spans *sp, const struct otel_span *s)
{
	for (unsigned int i = 0; i < sp->nout; i++)
		if (otel_add(sp->out[i], s))
			sp->failed = true;
	sp->st.written++;
}

/* --- threads and processes ---------------------------------------------------- */

/* (threads and processes are a node's: several -r files, nodes.c) */
static struct sthread *thread_get(struct spans *sp, unsigned int node,
				  uint32_t tid, uint32_t tgid, bool make)
{
	struct sthread **b = &sp->threads[hash32(tid ^ node)], *t;

	for (t = *b; t; t = t->hnext)
		if (t->tid == tid && t->node == node)
			return t;
	if (!make)
		return NULL;
	if (sp->nthreads >= THREADS_MAX) {
		sp->st.dropped++;
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->tgid = tgid;
	t->node = node;
	t->hnext = *b;
	*b = t;
	sp->nthreads++;
	return t;
}

static struct service *service_get(struct spans *sp, unsigned int node,
				   uint32_t tgid)
{
	struct service **b = &sp->services[hash32(tgid ^ node)], *s;

	for (s = *b; s; s = s->hnext)
		if (s->tgid == tgid && s->node == node)
			return s;
	s = xcalloc(1, sizeof(*s));
	s->tgid = tgid;
	s->node = node;
	s->hnext = *b;
	*b = s;
	return s;
}

/* The process's service.name, NULL if not known (see the top) */
static const char *service_name(struct spans *sp, unsigned int node,
				uint32_t tgid)
{
	struct service *s;
	char path[64], comm[64];
	FILE *f;

	if (!tgid)
		return NULL;
	s = service_get(sp, node, tgid);
	if (s->name || !sp->live)
		return s->name;
	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			if (*comm)
				s->name = xmemdup(comm, strlen(comm));
		}
		fclose(f);
	}
	return s->name;
}

/* A span of process @tgid names its service */
static void service_set(struct spans *sp, unsigned int node, uint32_t tgid,
			const char *name)
{
	struct service *sv = service_get(sp, node, tgid);

	if (!sv->name || strcmp(sv->name, name)) {
		free(sv->name);
		sv->name = xmemdup(name, strlen(name));
	}
}

/* --- application spans ----------------------------------------------------------- */

static struct app_span **find(struct spans *sp, const uint8_t *id)
{
	struct app_span **p = &sp->by_id[hash_id(id)];

	for (; *p; p = &(*p)->hnext)
		if (!memcmp((*p)->id, id, 8))
			return p;
	return p;
}

static void append(char **buf, size_t *len, const char *add, size_t n)
{
	char *b = realloc(*buf, *len + n + 1);

	if (!b) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	memcpy(b + *len, add, n);
	*len += n;
	b[*len] = 0;
	*buf = b;
}

/* "key=value\0"... into @a (at most @max); service.name into *@service */
static unsigned int parse_attrs(const char *kv, size_t len,
				struct otel_attr *a, unsigned int max,
				const char **service)
{
	unsigned int n = 0;

	for (const char *p = kv, *end = kv + len; p < end; p += strlen(p) + 1) {
		const char *eq = strchr(p, '=');

		if (!eq)
			continue;
		if (!strncmp(p, "service.name=", 13)) {
			if (service)
				*service = eq + 1;
			continue;
		}
		/* (the key ends at its '=' once split_kv() has run) */
		if (n < max)
			a[n++] = (struct otel_attr){ p, OTEL_STRING, eq + 1, 0 };
	}
	return n;
}

/*
 * Keys and values share the "key=value" strings: each '=' becomes a NUL
 * once, when the span is written (after that the blob is not read again).
 */
static void split_kv(char *kv, size_t len)
{
	for (char *p = kv, *end = kv + len; p < end; p += strlen(p) + 1) {
		char *eq = strchr(p, '=');

		if (eq) {
			*eq = 0;
			p = eq + 1;
		}
	}
}

static void write_app_span(struct spans *sp, struct app_span *a, uint64_t end,
			   bool incomplete)
{
	struct otel_attr attrs[ATTRS_MAX + 3];
	struct otel_event ev[SPAN_EVENTS_MAX];
	struct otel_attr *eattrs = NULL;
	struct otel_span s = { 0 };
	const char *service = NULL;
	unsigned int n, used = 0;

	n = parse_attrs(a->attrs, a->attrs_len, attrs, ATTRS_MAX, &service);
	if (service)
		service_set(sp, a->thread->node, a->thread->tgid, service);
	split_kv(a->attrs, a->attrs_len);
	attrs[n++] = (struct otel_attr){ "thread.id", OTEL_INT, NULL, a->thread->tid };
	if (incomplete)
		attrs[n++] = (struct otel_attr){ "magnet.span.incomplete", OTEL_BOOL, NULL, 1 };
	if (a->nevents)
		eattrs = xcalloc((size_t)a->nevents * ATTRS_MAX, sizeof(*eattrs));
	for (unsigned int i = 0; i < a->nevents; i++) {
		struct span_event *e = &a->events[i];
		unsigned int k = parse_attrs(e->attrs, e->attrs_len,
					     eattrs + used, ATTRS_MAX, NULL);

		split_kv(e->attrs, e->attrs_len);
		ev[i] = (struct otel_event){ e->ts + sp->offset, e->name,
					     eattrs + used, k };
		used += k;
	}
	memcpy(s.trace_id, a->trace, 16);
	memcpy(s.span_id, a->id, 8);
	memcpy(s.parent_id, a->parent, 8);
	s.name = a->name;
	s.kind = OTEL_KIND_INTERNAL;
	s.start_ns = a->start + sp->offset;
	s.end_ns = end + sp->offset;
	s.service = service_name(sp, a->thread->node, a->thread->tgid);
	s.pid = a->thread->tgid;
	s.host = node_host(sp, a->thread->node);
	s.attrs = attrs;
	s.nattrs = n;
	s.events = ev;
	s.nevents = a->nevents;
	emit(sp, &s);
	free(eattrs);
}

static void app_span_free(struct app_span *a)
{
	for (unsigned int i = 0; i < a->nevents; i++) {
		free(a->events[i].name);
		free(a->events[i].attrs);
	}
	free(a->events);
	free(a->name);
	free(a->attrs);
	free(a);
}

/* Take @a off its thread's stack and the table (and free it) */
static void app_span_close(struct spans *sp, struct app_span *a)
{
	struct sthread *t = a->thread;
	struct app_span **p = find(sp, a->id);

	for (unsigned int i = 0; i < t->depth; i++)
		if (t->stack[i] == a) {
			memmove(&t->stack[i], &t->stack[i + 1],
				(t->depth - i - 1) * sizeof(t->stack[0]));
			t->depth--;
			break;
		}
	if (*p == a)
		*p = a->hnext;
	sp->nopen--;
	app_span_free(a);
}

static void span_begin(struct spans *sp, const struct magnet_record *r,
		       const struct magnet_span *m)
{
	const char *attrs = (const char *)m->data + m->name_len;
	struct app_span **p = find(sp, m->span_id), *a;
	struct sthread *t;

	if (*p) {			/* begun twice: the first stands */
		sp->st.unmatched_begins++;
		return;
	}
	t = thread_get(sp, record_node(r), r->tid, r->tgid, true);
	if (!t)
		return;
	if (sp->nopen >= SPANS_OPEN_MAX || t->depth >= SPAN_DEPTH) {
		sp->st.dropped++;
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->thread = t;
	memcpy(a->trace, m->trace_id, 16);
	memcpy(a->id, m->span_id, 8);
	memcpy(a->parent, m->parent_id, 8);
	a->start = r->timestamp;
	a->name = xmemdup(m->data, m->name_len);
	append(&a->attrs, &a->attrs_len, attrs, m->attrs_len);
	for (const char *kv = a->attrs, *end = a->attrs + a->attrs_len; kv < end;
	     kv += strlen(kv) + 1)
		if (!strncmp(kv, "service.name=", 13))
			service_set(sp, record_node(r), r->tgid, kv + 13);
	*p = a;
	t->stack[t->depth++] = a;
	sp->nopen++;
}

static void span_end(struct spans *sp, const struct magnet_record *r,
		     const struct magnet_span *m)
{
	const char *attrs = (const char *)m->data + m->name_len;
	struct app_span *a = *find(sp, m->span_id);

	if (!a) {
		sp->st.unmatched_ends++;
		return;
	}
	append(&a->attrs, &a->attrs_len, attrs, m->attrs_len);
	write_app_span(sp, a, r->timestamp, false);
	app_span_close(sp, a);
}

static void span_event(struct spans *sp, const struct magnet_record *r,
		       const struct magnet_span *m)
{
	const char *attrs = (const char *)m->data + m->name_len;
	struct app_span *a = *find(sp, m->span_id);
	struct span_event *e;

	if (!a) {
		sp->st.unmatched_ends++;
		return;
	}
	if (a->nevents >= SPAN_EVENTS_MAX) {
		sp->st.dropped++;
		return;
	}
	e = realloc(a->events, (a->nevents + 1) * sizeof(*e));
	if (!e) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	a->events = e;
	e = &a->events[a->nevents++];
	memset(e, 0, sizeof(*e));
	e->ts = r->timestamp;
	e->name = xmemdup(m->data, m->name_len);
	append(&e->attrs, &e->attrs_len, attrs, m->attrs_len);
}

void spans_record(struct spans *sp, const struct magnet_record *r)
{
	const struct magnet_span *m = (const void *)r->payload;

	if (r->timestamp > sp->last_ts)
		sp->last_ts = r->timestamp;
	if (!is_span_record(r))
		return;
	switch (m->type) {
	case MAGNET_SPAN_BEGIN:
		span_begin(sp, r, m);
		break;
	case MAGNET_SPAN_END:
		span_end(sp, r, m);
		break;
	case MAGNET_SPAN_EVENT:
		span_event(sp, r, m);
		break;
	}
}

/* --- the kernel's spans ------------------------------------------------------------ */

/* The innermost span open on thread @tid, or what it adopted */
static struct ctx thread_ctx(struct spans *sp, unsigned int node, uint32_t tid,
			     uint32_t tgid, uint64_t ts, bool adopted)
{
	struct sthread *t = thread_get(sp, node, tid, 0, false);
	struct ctx c = { .valid = false };
	struct service *sv;

	if (t && t->depth) {
		memcpy(c.trace, t->stack[t->depth - 1]->trace, 16);
		memcpy(c.span, t->stack[t->depth - 1]->id, 8);
		c.valid = true;
	} else if (adopted && t && t->adopted && ts - t->ad_ts < ADOPT_NS) {
		memcpy(c.trace, t->ad_trace, 16);
		memcpy(c.span, t->ad_span, 8);
		c.valid = true;
	} else if (adopted && tgid && (sv = service_get(sp, node, tgid)) &&
		   sv->adopted && ts - sv->ad_ts < ADOPT_NS) {
		/* a worker handed the request in user space: its process's */
		memcpy(c.trace, sv->ad_trace, 16);
		memcpy(c.span, sv->ad_span, 8);
		c.valid = true;
	}
	return c;
}

/* A new span: the child of @c if it is valid, else a root of a new trace */
static void place(struct spans *sp, struct otel_span *s, const struct ctx *c)
{
	if (c->valid) {
		memcpy(s->trace_id, c->trace, 16);
		memcpy(s->parent_id, c->span, 8);
	} else {
		new_id(sp, s->trace_id, 16);
	}
	new_id(sp, s->span_id, 8);
}

/*
 * A "traceparent:" header in the packet's bytes (HTTP's header names
 * are not case-sensitive; optional white space after the colon), its
 * value (to the line's end, or the capture's) W3C's level 1, as
 * libmagnet's magnet_span_parse_traceparent() takes it. A value that is
 * not is no context (counted).
 */
static bool find_traceparent(struct spans *sp, const struct journey *j,
			     struct ctx *c)
{
	static const char name[] = "traceparent:";
	const size_t nl = sizeof(name) - 1;
	const uint8_t *d = j->data;

	if (!d || j->caplen < nl + MAGNET_TRACEPARENT_LEN)
		return false;
	for (size_t i = 0; i + nl + MAGNET_TRACEPARENT_LEN <= j->caplen; i++) {
		/* (a later version may go on after its flags: one byte of it) */
		char v[MAGNET_TRACEPARENT_LEN + 2];
		size_t k = i + nl, n = 0;

		if ((d[i] | 0x20) != 't' || strncasecmp((const char *)d + i, name, nl) ||
		    (i && d[i - 1] != '\n'))
			continue;
		while (k < j->caplen && (d[k] == ' ' || d[k] == '\t'))
			k++;
		while (k < j->caplen && n < sizeof(v) - 1 && d[k] != '\r' &&
		       d[k] != '\n' && d[k])
			v[n++] = (char)d[k++];
		v[n] = 0;
		if (magnet_span_parse_traceparent(v, c->trace, c->span)) {
			sp->st.bad_traceparent++;
			return false;
		}
		c->valid = true;
		return true;
	}
	return false;
}

/* The connection's key: both ends (address, port), the lower first */
static bool flow_key(const struct journey *j, uint8_t key[36])
{
	uint8_t a[18], b[18];
	size_t al = j->family == AF_INET6 ? 16 : 4;

	if (!j->have_addrs || (j->proto != 6 && j->proto != 17))
		return false;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memcpy(a, j->saddr, al);
	memcpy(b, j->daddr, al);
	a[16] = j->sport >> 8;
	a[17] = j->sport;
	b[16] = j->dport >> 8;
	b[17] = j->dport;
	if (memcmp(a, b, 18) > 0) {
		memcpy(key, b, 18);
		memcpy(key + 18, a, 18);
	} else {
		memcpy(key, a, 18);
		memcpy(key + 18, b, 18);
	}
	key[0] ^= j->proto;	/* (TCP and UDP on the same ports apart) */
	return true;
}

static struct flow *flow_slot(struct spans *sp, const uint8_t key[36])
{
	uint32_t h = 2166136261U;

	for (int i = 0; i < 36; i++)
		h = (h ^ key[i]) * 16777619U;
	return &sp->flows[h % FLOWS];
}

/* The first (@last: the last) layer run by a thread, not an interrupt */
static const struct hop *task_hop(const struct journey *j, bool last)
{
	for (unsigned int k = 0; k < j->nhops; k++) {
		unsigned int i = last ? j->nhops - 1 - k : k;
		const struct hop *h = &j->hop[i];

		if (!(h->rflags & (MAGNET_RF_HARDIRQ | MAGNET_RF_SOFTIRQ |
				   MAGNET_RF_NMI)) && h->tid)
			return h;
	}
	return NULL;
}

static const char *proto_name(uint8_t proto)
{
	return proto == 6 ? "tcp" : proto == 17 ? "udp" : "ip";
}

/* A layer's child span: from its record to the next layer's */
static void layer_span(struct spans *sp, const uint8_t *trace,
		       const uint8_t *parent, const char *name, uint64_t start,
		       uint64_t end, unsigned int node, uint32_t cpu,
		       uint32_t tgid, uint32_t tid, uint16_t rflags,
		       const char *dev)
{
	struct otel_attr a[6];
	struct otel_span s = { 0 };
	unsigned int n = 0;
	const char *ctx = context(rflags);

	memcpy(s.trace_id, trace, 16);
	new_id(sp, s.span_id, 8);
	memcpy(s.parent_id, parent, 8);
	s.name = name;
	s.kind = OTEL_KIND_INTERNAL;
	s.start_ns = start + sp->offset;
	s.end_ns = end + sp->offset;
	a[n++] = (struct otel_attr){ "magnet.layer", OTEL_STRING, name, 0 };
	a[n++] = (struct otel_attr){ "magnet.cpu", OTEL_INT, NULL, cpu };
	if (*ctx)
		a[n++] = (struct otel_attr){ "magnet.context", OTEL_STRING, ctx, 0 };
	else if (tid)
		a[n++] = (struct otel_attr){ "thread.id", OTEL_INT, NULL, tid };
	if (dev && *dev)
		a[n++] = (struct otel_attr){ "network.interface.name", OTEL_STRING, dev, 0 };
	s.attrs = a;
	s.nattrs = n;
	if (!*ctx && tgid) {
		s.service = service_name(sp, node, tgid);
		s.pid = tgid;
	}
	s.host = node_host(sp, node);
	emit(sp, &s);
}

void spans_packet(struct spans *sp, const struct journey *j)
{
	char saddr[INET6_ADDRSTRLEN] = "", daddr[INET6_ADDRSTRLEN] = "";
	const struct hop *first = task_hop(j, false), *reader = task_hop(j, true);
	uint32_t tid = first ? first->tid : 0, tgid = first ? first->tgid : 0;
	bool sends, header = false, have_flow;
	struct otel_attr a[12];
	struct otel_span s = { 0 };
	struct ctx c = { .valid = false };
	struct flow *fl = NULL;
	uint8_t key[36];
	unsigned int n = 0;
	char name[32], *summary;
	int af;

	if (!j->nhops || j->bare)
		return;
	if (j->hop[j->nhops - 1].ts > sp->last_ts)
		sp->last_ts = j->hop[j->nhops - 1].ts;
	sends = layer_sends(j->hop[0].layer);
	have_flow = flow_key(j, key);
	if (have_flow)
		fl = flow_slot(sp, key);
	if (find_traceparent(sp, j, &c))
		header = true;
	if (!c.valid && tid)
		c = thread_ctx(sp, first->node, tid, tgid, j->hop[0].ts, false);
	if (!c.valid && fl && fl->used && !memcmp(fl->key, key, 36)) {
		memcpy(c.trace, fl->trace, 16);
		memcpy(c.span, fl->span, 8);
		c.valid = true;
	}
	if (!c.valid && tid)
		c = thread_ctx(sp, first->node, tid, tgid, j->hop[0].ts, true);
	place(sp, &s, &c);
	/* a request's header: the connection carries its context */
	if (header && fl) {
		memcpy(fl->key, key, 36);
		memcpy(fl->trace, s.trace_id, 16);
		memcpy(fl->span, s.span_id, 8);
		fl->ts = j->hop[0].ts;
		fl->used = true;
	}
	/* a packet of a trace: the thread that read it works for it now */
	if (c.valid && reader && !layer_sends(reader->layer)) {
		struct sthread *t = thread_get(sp, reader->node, reader->tid,
					       reader->tgid, true);

		struct service *sv = reader->tgid ?
				     service_get(sp, reader->node, reader->tgid) : NULL;

		if (t) {
			memcpy(t->ad_trace, s.trace_id, 16);
			memcpy(t->ad_span, s.span_id, 8);
			t->ad_ts = j->hop[0].ts;
			t->adopted = true;
		}
		if (sv) {
			memcpy(sv->ad_trace, s.trace_id, 16);
			memcpy(sv->ad_span, s.span_id, 8);
			sv->ad_ts = j->hop[0].ts;
			sv->adopted = true;
		}
	}
	snprintf(name, sizeof(name), "%s %s", proto_name(j->proto),
		 sends ? "send" : "receive");
	s.name = name;
	s.kind = sends ? OTEL_KIND_PRODUCER : OTEL_KIND_CONSUMER;
	s.start_ns = j->hop[0].ts + sp->offset;
	s.end_ns = j->hop[j->nhops - 1].ts + sp->offset;
	summary = packet_summary(j);
	a[n++] = (struct otel_attr){ "magnet.packet", OTEL_STRING, summary, 0 };
	a[n++] = (struct otel_attr){ "network.transport", OTEL_STRING,
				     proto_name(j->proto), 0 };
	if (j->have_addrs) {
		af = j->family == AF_INET6 ? AF_INET6 : AF_INET;
		inet_ntop(af, j->saddr, saddr, sizeof(saddr));
		inet_ntop(af, j->daddr, daddr, sizeof(daddr));
		a[n++] = (struct otel_attr){ "network.type", OTEL_STRING,
					     af == AF_INET6 ? "ipv6" : "ipv4", 0 };
		a[n++] = (struct otel_attr){ "source.address", OTEL_STRING, saddr, 0 };
		a[n++] = (struct otel_attr){ "source.port", OTEL_INT, NULL, j->sport };
		a[n++] = (struct otel_attr){ "destination.address", OTEL_STRING, daddr, 0 };
		a[n++] = (struct otel_attr){ "destination.port", OTEL_INT, NULL, j->dport };
	}
	a[n++] = (struct otel_attr){ "magnet.packet.length", OTEL_INT, NULL, j->hop[0].len };
	if (j->have_seq)
		a[n++] = (struct otel_attr){ "magnet.tcp.seq", OTEL_INT, NULL, j->seq };
	if (tid)
		a[n++] = (struct otel_attr){ "thread.id", OTEL_INT, NULL, tid };
	if (header)
		a[n++] = (struct otel_attr){ "magnet.traceparent", OTEL_BOOL, NULL, 1 };
	s.attrs = a;
	s.nattrs = n;
	if (tgid) {
		s.service = service_name(sp, first->node, tgid);
		s.pid = tgid;
	}
	s.host = node_host(sp, j->hop[0].node);
	emit(sp, &s);
	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];

		layer_span(sp, s.trace_id, s.span_id,
			   layer_name(h->layer, j->proto), h->ts,
			   i + 1 < j->nhops ? j->hop[i + 1].ts : h->ts,
			   h->node, h->cpu, h->tgid, h->tid, h->rflags, h->dev);
	}
	free(summary);
}

void spans_block(struct spans *sp, const struct blockio *b)
{
	const char *op = block_op_name(b->op);
	struct otel_attr a[8];
	struct otel_span s = { 0 };
	struct ctx c = { .valid = false };
	uint64_t start = 0, end = 0;
	char name[32], dev[24];
	unsigned int n = 0;

	for (unsigned int i = 0; i < MAGNET_BLOCK_COUNT; i++) {
		if (!b->hop[i].ts)
			continue;
		if (!start || b->hop[i].ts < start)
			start = b->hop[i].ts;
		if (b->hop[i].ts > end)
			end = b->hop[i].ts;
	}
	if (!start)
		return;
	if (end > sp->last_ts)
		sp->last_ts = end;
	if (b->tid)
		c = thread_ctx(sp, b->node, b->tid, b->tgid, start, true);
	place(sp, &s, &c);
	/*
	 * A request of a trace issued by another thread (a driver's worker:
	 * nbd's sends its request from kblockd's work): that thread works
	 * for the I/O now, its packets the I/O's children.
	 */
	for (unsigned int i = MAGNET_BLOCK_QUEUE; c.valid && i < MAGNET_BLOCK_COMPLETE; i++) {
		const struct block_hop *h = &b->hop[i];
		struct sthread *t;

		if (!h->ts || !h->tid || h->tid == b->tid ||
		    (h->rflags & (MAGNET_RF_HARDIRQ | MAGNET_RF_SOFTIRQ | MAGNET_RF_NMI)))
			continue;
		t = thread_get(sp, b->node, h->tid, h->tgid, true);
		if (t && !t->depth) {
			memcpy(t->ad_trace, s.trace_id, 16);
			memcpy(t->ad_span, s.span_id, 8);
			t->ad_ts = h->ts;
			t->adopted = true;
		}
	}
	snprintf(name, sizeof(name), "block %s", op ? op : "io");
	snprintf(dev, sizeof(dev), "%u:%u", b->major, b->minor);
	s.name = name;
	s.kind = OTEL_KIND_INTERNAL;
	s.start_ns = start + sp->offset;
	s.end_ns = end + sp->offset;
	a[n++] = (struct otel_attr){ "magnet.block.device", OTEL_STRING, dev, 0 };
	a[n++] = (struct otel_attr){ "magnet.block.sector", OTEL_INT, NULL, (int64_t)b->sector };
	a[n++] = (struct otel_attr){ "magnet.block.bytes", OTEL_INT, NULL, b->bytes };
	a[n++] = (struct otel_attr){ "magnet.block.operation", OTEL_STRING, op ? op : "other", 0 };
	if (b->tid)
		a[n++] = (struct otel_attr){ "thread.id", OTEL_INT, NULL, b->tid };
	if (b->error) {
		s.error = true;
		s.status_message = strerror(-b->error);
		a[n++] = (struct otel_attr){ "magnet.block.error", OTEL_INT, NULL, b->error };
	}
	s.attrs = a;
	s.nattrs = n;
	if (b->tgid) {
		s.service = service_name(sp, b->node, b->tgid);
		s.pid = b->tgid;
	}
	s.host = node_host(sp, b->node);
	emit(sp, &s);
	for (unsigned int i = 0; i < MAGNET_BLOCK_COUNT; i++) {
		const struct block_hop *h = &b->hop[i];
		uint64_t next = h->ts;

		if (!h->ts)
			continue;
		for (unsigned int k = i + 1; k < MAGNET_BLOCK_COUNT; k++)
			if (b->hop[k].ts) {
				next = b->hop[k].ts;
				break;
			}
		layer_span(sp, s.trace_id, s.span_id, block_layer_name(i), h->ts,
			   next, b->node, h->cpu, h->tgid, h->tid, h->rflags, NULL);
	}
}

int spans_end(struct spans *sp)
{
	/* spans still open: as they stand, to the last record */
	for (unsigned int i = 0; i < (1U << HASH_BITS); i++)
		while (sp->by_id[i]) {
			struct app_span *a = sp->by_id[i];

			write_app_span(sp, a, sp->last_ts > a->start ? sp->last_ts : a->start,
				       true);
			sp->st.incomplete++;
			app_span_close(sp, a);
		}
	return sp->failed ? -1 : 0;
}

const struct spans_stats *spans_stats(const struct spans *sp)
{
	return &sp->st;
}

void spans_free(struct spans *sp)
{
	if (!sp)
		return;
	for (unsigned int i = 0; i < NODES_MAX; i++)
		free(sp->hosts[i]);
	for (unsigned int i = 0; i < (1U << HASH_BITS); i++) {
		while (sp->by_id[i])
			app_span_close(sp, sp->by_id[i]);
		for (struct sthread *t = sp->threads[i], *n; t; t = n) {
			n = t->hnext;
			free(t);
		}
		for (struct service *s = sp->services[i], *n; s; s = n) {
			n = s->hnext;
			free(s->name);
			free(s);
		}
	}
	free(sp);
}

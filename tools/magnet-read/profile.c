// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-read: the sampler's profile (--profile, --folded): apparent,
 * steal and compensated time per process, thread and function, and folded
 * stacks, from cpu.sample's records.
 *
 * The rules are lib/steal.h's, the ICPE'16 paper's on the guest's own
 * ticks: a tick's time since its CPU's previous one is the apparent time
 * of what it found; a tick late by more than the jitter margin ends a
 * blank, charged to the process, thread and function found on both
 * sides of it (compensated time is apparent time less it), unattributed
 * when they differ, not steal next to the idle task. The margin comes
 * from the ticks' median distance from the period, so the samples are
 * kept until the end, when it is known.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "magnet-read.h"
#include "steal.h"
#include "symbols.h"

struct sample {
	struct steal_tick t;		/* .func: the interrupted ip's function */
	uint32_t cpu;
	const char *comm;
	const char *stack;		/* folded: "comm;outer;...;inner" */
};

enum level { BY_PROCESS, BY_THREAD, BY_FUNCTION, LEVELS };

struct row {
	const char *key;		/* process: comm; function: its label */
	uint32_t tgid, tid;
	uint64_t apparent, reported, unreported, samples;
	struct row *next;		/* in its hash chain */
};

#define ROW_BUCKETS	1024

struct table {
	struct row *bucket[ROW_BUCKETS];
	struct row **rows;		/* for sorting */
	size_t n;
};

struct profile {
	struct symbols *syms;
	struct sample *samples;
	size_t n, cap;
	uint64_t period;
	uint16_t event;			/* the sampling probe profiled */
	uint64_t others;		/* samples of other sampling probes */
	unsigned int cpus_seen;
	uint8_t cpu_seen[1024];
	struct table t[LEVELS];
	struct table folded;
	uint64_t margin, blank, reported, unreported, charged[LEVELS];
	uint64_t idle_gaps, apparent;
	char *buf;			/* building a folded stack */
	size_t buf_cap;
	bool failed;
};

struct profile *profile_new(const char *kallsyms)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (p)
		p->syms = symbols_new(kallsyms);
	if (p && !p->syms) {
		free(p);
		return NULL;
	}
	/*
	 * The kernel's symbols now, before the capture: reading them takes
	 * a while, and processes whose first samples wait for it may be
	 * gone before their mappings are read.
	 */
	if (p)
		symbols_kernel(p->syms, 0);
	return p;
}

/* @own_keys: the keys are the table's copies (the folded stacks) */
static void table_free(struct table *t, bool own_keys)
{
	size_t i;
	struct row *r, *next;

	for (i = 0; i < ROW_BUCKETS; i++)
		for (r = t->bucket[i]; r; r = next) {
			next = r->next;
			if (own_keys)
				free((char *)r->key);
			free(r);
		}
	free(t->rows);
}

void profile_free(struct profile *p)
{
	unsigned int l;

	if (!p)
		return;
	for (l = 0; l < LEVELS; l++)
		table_free(&p->t[l], false);
	table_free(&p->folded, true);
	symbols_free(p->syms);
	free(p->samples);
	free(p->buf);
	free(p);
}

/* --- building the samples --------------------------------------------------- */

/* Append "sep name" to the folded stack being built; false: no memory. */
static bool put_frame(struct profile *p, size_t *len, const char *name)
{
	size_t n = strlen(name);

	if (*len + n + 2 > p->buf_cap) {
		size_t cap = (*len + n + 2) * 2;
		char *grown = realloc(p->buf, cap);

		if (!grown)
			return false;
		p->buf = grown;
		p->buf_cap = cap;
	}
	if (*len)
		p->buf[(*len)++] = ';';
	/* (';' separates frames; a frame may have spaces, the count is last) */
	for (size_t i = 0; i < n; i++)
		p->buf[(*len)++] = name[i] == ';' || name[i] == '\n' ? '_' : name[i];
	p->buf[*len] = '\0';
	return true;
}

static const char *intern(struct profile *p, const char *str);

/* The folded stack of sample @r: outermost first, the process's name root. */
static const char *fold(struct profile *p, const struct magnet_record *r,
			const char *comm, unsigned int k, unsigned int u)
{
	const struct magnet_sample *s = (const void *)r->payload;
	const __u64 *ustack = s->stack + k;
	size_t len = 0;
	bool ok = put_frame(p, &len, comm);
	unsigned int i;

	for (i = u; ok && i-- > 0;)
		ok = put_frame(p, &len, symbols_user(p->syms, r->tgid, ustack[i]));
	if (ok && s->user_ip && r->tgid)
		ok = put_frame(p, &len, symbols_user(p->syms, r->tgid, s->user_ip));
	if (!(s->flags & MAGNET_SAMPLE_F_USER)) {
		for (i = k; ok && i-- > 0;)
			ok = put_frame(p, &len, symbols_kernel(p->syms, s->stack[i]));
		if (ok)
			ok = put_frame(p, &len, symbols_kernel(p->syms, s->ip));
	}
	return ok ? intern(p, p->buf) : NULL;
}

int profile_sample(struct profile *p, const struct magnet_record *r)
{
	const struct magnet_sample *s = (const void *)r->payload;
	size_t held = (r->size - sizeof(*r) - sizeof(*s)) / sizeof(uint64_t);
	unsigned int k = s->kernel_depth < held ? s->kernel_depth : held;
	unsigned int u = s->user_depth < held - k ? s->user_depth : held - k;
	struct sample *x;

	/* one probe's ticks: another's, at its own period, would interleave */
	if (p->n && r->event != p->event) {
		p->others++;
		return 0;
	}
	p->event = r->event;
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		struct sample *grown = realloc(p->samples, cap * sizeof(*grown));

		if (!grown) {
			p->failed = true;
			return -1;
		}
		p->samples = grown;
		p->cap = cap;
	}
	x = &p->samples[p->n];
	memset(x, 0, sizeof(*x));
	x->cpu = r->cpu;
	x->t.tgid = r->tgid;
	x->t.tid = r->tid;
	x->t.flags = s->flags;
	x->t.since = s->since;
	x->t.steal = s->steal;
	x->comm = symbols_comm(p->syms, r->tgid);
	x->t.func = s->flags & MAGNET_SAMPLE_F_USER ?
		  symbols_user(p->syms, r->tgid, s->ip) :
		  symbols_kernel(p->syms, s->ip);
	x->stack = fold(p, r, x->comm, k, u);
	if (!x->stack) {
		p->failed = true;
		return -1;
	}
	p->period = s->period;
	if (r->cpu < sizeof(p->cpu_seen) && !p->cpu_seen[r->cpu]) {
		p->cpu_seen[r->cpu] = 1;
		p->cpus_seen++;
	}
	p->n++;
	return 0;
}

/* --- tables ----------------------------------------------------------------- */

static uint64_t hash_str(const char *s, uint64_t h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static struct row *row_get(struct table *t, const char *key, uint32_t tgid,
			   uint32_t tid)
{
	uint64_t h = hash_str(key, 0xcbf29ce484222325ULL ^ tgid ^
			      ((uint64_t)tid << 32)) % ROW_BUCKETS;
	struct row *r;

	for (r = t->bucket[h]; r; r = r->next)
		if (r->tgid == tgid && r->tid == tid && !strcmp(r->key, key))
			return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->key = key;
	r->tgid = tgid;
	r->tid = tid;
	r->next = t->bucket[h];
	t->bucket[h] = r;
	t->n++;
	return r;
}

/* One copy of each folded stack: the folded table's keys. */
static const char *intern(struct profile *p, const char *str)
{
	uint64_t h = hash_str(str, 0xcbf29ce484222325ULL) % ROW_BUCKETS;
	struct row *r;
	char *copy;

	for (r = p->folded.bucket[h]; r; r = r->next)
		if (!strcmp(r->key, str))
			return r->key;
	copy = strdup(str);
	r = copy ? calloc(1, sizeof(*r)) : NULL;
	if (!r) {
		free(copy);
		return NULL;
	}
	/* (the table owns the copy: profile_free()) */
	r->key = copy;
	r->next = p->folded.bucket[h];
	p->folded.bucket[h] = r;
	p->folded.n++;
	return r->key;
}

/* --- the accounting --------------------------------------------------------- */

/* Four times the ticks' median distance from the period; a tenth at least. */
static uint64_t jitter_margin(const struct profile *p)
{
	uint64_t *d = malloc((p->n ? p->n : 1) * sizeof(*d)), m;
	size_t i, n = 0;

	if (!d)
		return steal_margin(p->period, 0);
	for (i = 0; i < p->n; i++) {
		const struct sample *x = &p->samples[i];

		if (!(x->t.flags & MAGNET_SAMPLE_F_FIRST))
			d[n++] = steal_deviation(x->t.since, p->period);
	}
	m = steal_margin_of(p->period, d, n);
	free(d);
	return m;
}

static bool charged(enum level l, const struct steal_gap *g)
{
	return l == BY_PROCESS ? g->process :
	       l == BY_THREAD ? g->thread : g->function;
}

static struct row *level_row(struct profile *p, enum level l,
			     const struct sample *x)
{
	switch (l) {
	case BY_PROCESS:
		return row_get(&p->t[l], x->comm, x->t.tgid, 0);
	case BY_THREAD:
		return row_get(&p->t[l], x->comm, x->t.tgid, x->t.tid);
	default:
		return row_get(&p->t[l], x->t.func, 0, 0);
	}
}

/* The folded stack's weights: row->apparent its own time, reported the steal. */
static int account(struct profile *p)
{
	const struct sample *prev[1024] = { NULL };
	size_t i;
	enum level l;

	p->margin = jitter_margin(p);
	for (i = 0; i < p->n; i++) {
		const struct sample *x = &p->samples[i];
		const struct sample *b = x->cpu < 1024 ? prev[x->cpu] : NULL;
		struct steal_gap g;
		struct row *r;

		if (x->cpu < 1024)
			prev[x->cpu] = x;
		steal_judge(b ? &b->t : NULL, &x->t, p->period, p->margin, &g);
		p->apparent += x->t.since;
		if (g.idle) {
			p->idle_gaps += g.blank;
		} else {
			p->blank += g.blank;
			p->reported += g.reported;
			p->unreported += g.blank - g.reported;
		}
		for (l = 0; l < LEVELS; l++) {
			r = level_row(p, l, x);
			if (!r)
				return -1;
			r->apparent += x->t.since;
			r->samples++;
			if (charged(l, &g)) {
				r->reported += g.reported;
				r->unreported += g.blank - g.reported;
				p->charged[l] += g.blank;
			}
		}
		/* folded: the stack's own time, and its charged steal */
		r = row_get(&p->folded, x->stack, 0, 0);
		if (!r)
			return -1;
		if (g.function) {
			r->apparent += x->t.since - g.blank;
			r->reported += g.blank;
		} else {
			r->apparent += x->t.since;
		}
	}
	return 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;

	if (x->apparent != y->apparent)
		return x->apparent > y->apparent ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int sort_rows(struct table *t)
{
	size_t i, n = 0;
	struct row *r;

	t->rows = malloc((t->n ? t->n : 1) * sizeof(*t->rows));
	if (!t->rows)
		return -1;
	for (i = 0; i < ROW_BUCKETS; i++)
		for (r = t->bucket[i]; r; r = r->next)
			t->rows[n++] = r;
	qsort(t->rows, n, sizeof(*t->rows), cmp_rows);
	return 0;
}

/* --- reports ---------------------------------------------------------------- */

static const char *const level_names[LEVELS] = { "processes", "threads",
						 "functions" };

static double ms(uint64_t ns)
{
	return ns / 1e6;
}

static void text_rows(const struct profile *p, enum level l, FILE *f)
{
	const struct table *t = &p->t[l];
	size_t i;

	if (l == BY_FUNCTION)
		fprintf(f, "\n%14s %12s %14s %8s  %s\n", "APPARENT_MS", "STEAL_MS",
			"COMPENSATED_MS", "SAMPLES", "FUNCTION");
	else
		fprintf(f, "\n%8s %8s %14s %12s %14s %8s  %s\n",
			"PID", l == BY_THREAD ? "TID" : "",
			"APPARENT_MS", "STEAL_MS", "COMPENSATED_MS", "SAMPLES",
			"NAME");
	for (i = 0; i < t->n; i++) {
		const struct row *r = t->rows[i];
		uint64_t steal = r->reported + r->unreported;

		if (l == BY_PROCESS)
			fprintf(f, "%8u %8s ", r->tgid, "");
		else if (l == BY_THREAD)
			fprintf(f, "%8u %8u ", r->tgid, r->tid);
		fprintf(f, "%14.3f %12.3f %14.3f %8" PRIu64 "  %s\n",
			ms(r->apparent), ms(steal), ms(r->apparent - steal),
			r->samples, r->key);
	}
}

static void json_rows(const struct profile *p, enum level l, FILE *f)
{
	const struct table *t = &p->t[l];
	size_t i;

	fprintf(f, ",\"%s\":[", level_names[l]);
	for (i = 0; i < t->n; i++) {
		const struct row *r = t->rows[i];
		uint64_t steal = r->reported + r->unreported;

		fputs(i ? ",{" : "{", f);
		if (l == BY_FUNCTION) {
			fputs("\"function\":", f);
		} else {
			fprintf(f, "\"pid\":%u,", r->tgid);
			if (l == BY_THREAD)
				fprintf(f, "\"tid\":%u,", r->tid);
			fputs("\"name\":", f);
		}
		json_string(f, r->key);
		fprintf(f, ",\"apparent_ns\":%" PRIu64 ",\"steal_ns\":%" PRIu64
			",\"steal_reported_ns\":%" PRIu64
			",\"compensated_ns\":%" PRIu64 ",\"samples\":%" PRIu64 "}",
			r->apparent, steal, r->reported, r->apparent - steal,
			r->samples);
	}
	fputc(']', f);
}

static int finish(struct profile *p)
{
	enum level l;

	if (p->failed) {
		errno = ENOMEM;
		return -1;
	}
	if (account(p))
		return -1;
	for (l = 0; l < LEVELS; l++)
		if (sort_rows(&p->t[l]))
			return -1;
	return sort_rows(&p->folded);
}

int profile_report(struct profile *p, FILE *f, bool json)
{
	enum level l;

	if (!p->t[0].rows && finish(p))
		return -1;
	if (json) {
		fprintf(f, "{\"type\":\"profile\",\"samples\":%zu,\"cpus\":%u,\"period_ns\":%" PRIu64
			",\"margin_ns\":%" PRIu64 ",\"apparent_ns\":%" PRIu64
			",\"blank_ns\":%" PRIu64 ",\"steal_reported_ns\":%" PRIu64
			",\"steal_unreported_ns\":%" PRIu64
			",\"charged_ns\":{\"process\":%" PRIu64 ",\"thread\":%" PRIu64
			",\"function\":%" PRIu64 "},\"idle_gaps_ns\":%" PRIu64
			",\"other_probes_samples\":%" PRIu64,
			p->n, p->cpus_seen, p->period, p->margin, p->apparent,
			p->blank, p->reported, p->unreported,
			p->charged[BY_PROCESS], p->charged[BY_THREAD],
			p->charged[BY_FUNCTION], p->idle_gaps, p->others);
		for (l = 0; l < LEVELS; l++)
			json_rows(p, l, f);
		fputs("}\n", f);
	} else {
		fprintf(f, "profile: %zu samples on %u CPUs, %.3f ms of them; period %.3f ms, jitter margin %.3f ms\n",
			p->n, p->cpus_seen, ms(p->apparent), ms(p->period),
			ms(p->margin));
		fprintf(f, "blank time %.3f ms: reported steal %.3f, unreported %.3f; charged to a process %.3f, a thread %.3f, a function %.3f; unattributed to a function %.3f; idle gaps %.3f (not steal)\n",
			ms(p->blank), ms(p->reported), ms(p->unreported),
			ms(p->charged[BY_PROCESS]), ms(p->charged[BY_THREAD]),
			ms(p->charged[BY_FUNCTION]),
			ms(p->blank - p->charged[BY_FUNCTION]), ms(p->idle_gaps));
		if (p->others)
			fprintf(f, "%" PRIu64 " samples of other sampling probes left out (one probe is profiled: the first seen)\n",
				p->others);
		for (l = 0; l < LEVELS; l++)
			text_rows(p, l, f);
	}
	return ferror(f) ? -1 : 0;
}

/*
 * Folded stacks, a line each: the frames, outermost first, and the
 * microseconds spent there; steal charged to a stack is a frame of its
 * own, "[steal]", under it (Brendan Gregg's format, which flamegraph.pl
 * and speedscope read).
 */
int profile_folded(struct profile *p, FILE *f)
{
	size_t i;

	if (!p->t[0].rows && finish(p))
		return -1;
	for (i = 0; i < p->folded.n; i++) {
		const struct row *r = p->folded.rows[i];

		if (r->apparent >= 1000)
			fprintf(f, "%s %" PRIu64 "\n", r->key, r->apparent / 1000);
		if (r->reported >= 1000)
			fprintf(f, "%s;[steal] %" PRIu64 "\n", r->key,
				r->reported / 1000);
	}
	return ferror(f) ? -1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's aggregation engine: the contract is metrics.h.
 *
 * Time. The engine's clock, m->now, is the latest CLOCK_MONOTONIC time it
 * has seen, from ticks or from record timestamps; it never goes back.
 * Windowed values live in rings of window_s one-second slots: slot
 * (sec % window_s) holds second sec, for the window_s seconds up to and
 * including now's (the current second counts while it elapses). When now
 * enters a new second, the slots of the seconds that left the window are
 * cleared in every event and latency. A record older than the window
 * counts in the totals only.
 *
 * Windowed metrics: EVENT.rate and EVENT.byte_rate (the window's sum over
 * window_s), the "top" thread groups, and LATENCY.min, .mean, .p50, .p90,
 * .p99 and .max, over the pairs whose end record falls in the window (all
 * 0 when there is none): what a monitor shows now. The other counters are
 * totals since metrics_new(); LATENCY.pending is a gauge.
 *
 * Histograms are log-linear (HDR-like), in nanoseconds: values below
 * 2 * HIST_SUB have a bucket each; above, each [2^e, 2^(e+1))
 * is cut into HIST_SUB = 32 buckets of width 2^(e-5). A percentile is
 * reported as its bucket's middle, clamped to the window's exact min and
 * max, so it is exact below 64 ns and within 1/64 (1.6 %) of the exact
 * value above. Values from 2^40 ns (about 18 minutes) share the last
 * bucket. A percentile pNN is the smallest sample that at least NN % of
 * the window's samples do not exceed (rank ceil(NN/100 * n)).
 *
 * Pairing. A key of 0 (no id, no skb yet, socket unknown) never pairs,
 * nor does a packet key of a record too short for struct magnet_packet.
 * Starts age out in arrival order, checked at every tick and before every
 * start or end of their latency; an end before its start (merged CPU
 * streams) counts 0 ns. Thread groups: a new one evicts the one with the
 * fewest records in the window, the least recently seen among equals.
 *
 * Memory. Per event: about 150 bytes, 8 per CPU below max_cpus and 16 per
 * window second, plus up to max_tgids thread groups of 44-52 + 4 * window_s
 * bytes each. Per latency: about 9.4 KB (the window's histogram), 4.6 KB
 * per window second (a histogram per slot), and up to max_pending waiting
 * starts of 64-72 bytes each (node, key entry, hash heads). Tables grow by
 * doubling up to their bound and never shrink but on a smaller
 * max_pending; every operation on a record is O(1) amortized but the
 * thread-group heap's O(log max_tgids).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#define NSEC_PER_SEC	1000000000ULL
#define NAME_LEN_MAX	31		/* event and latency names */
#define NIL		UINT32_MAX	/* "no entry" in index links */
#define EVENTS_MAX	0xfffe		/* idmap holds 1 + index in 16 bits */
#define IDS		0x10000		/* every record event id */

/* ---- histograms ---- */

#define HIST_SUB_BITS	5
#define HIST_SUB	(1U << HIST_SUB_BITS)
#define HIST_TOP_BITS	40		/* values below 2^40 ns are resolved */
#define HIST_BUCKETS	((HIST_TOP_BITS - HIST_SUB_BITS + 1) * HIST_SUB)

static unsigned int hist_bucket(uint64_t v)
{
	unsigned int e;

	if (v < 2 * HIST_SUB)
		return v;
	if (v >> HIST_TOP_BITS)
		return HIST_BUCKETS - 1;
	e = 63 - __builtin_clzll(v);
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (unsigned int)(v >> (e - HIST_SUB_BITS)) - HIST_SUB;
}

/* The middle of bucket @b: within half its width of any value in it. */
static uint64_t hist_mid(unsigned int b)
{
	unsigned int e;
	uint64_t low, width;

	if (b < 2 * HIST_SUB)
		return b;
	e = b / HIST_SUB + HIST_SUB_BITS - 1;
	low = (uint64_t)(b % HIST_SUB + HIST_SUB) << (e - HIST_SUB_BITS);
	width = 1ULL << (e - HIST_SUB_BITS);
	return low + (width - 1) / 2;
}

/*
 * The exported histogram's bounds: 2^8 ns, then eight per doubling up to
 * 2^34 ns. Bound i >= 1 is 2^e * (1 + j/8) with e = 8 + (i - 1) / 8 and
 * j = (i - 1) % 8 + 1; every bound is an edge of the buckets above.
 */
uint64_t metrics_le_ns(unsigned int i)
{
	unsigned int e, j;

	if (!i || i >= METRICS_LE)
		return i ? UINT64_MAX : 1ULL << METRICS_LE_MIN_EXP;
	e = METRICS_LE_MIN_EXP + (i - 1) / 8;
	j = (i - 1) % 8 + 1;
	return (8ULL + j) << (e - 3);
}

/* The first bound @v does not exceed; METRICS_LE past the last. */
static unsigned int le_index(uint64_t v)
{
	unsigned int e;

	if (v <= 1ULL << METRICS_LE_MIN_EXP)
		return 0;
	if (v > 1ULL << METRICS_LE_MAX_EXP)
		return METRICS_LE;
	v--;
	e = 63 - __builtin_clzll(v);
	return (e - METRICS_LE_MIN_EXP) * 8 + ((v >> (e - 3)) & 7) + 1;
}

/* ---- thread groups of an event: bounded table, min-heap for eviction ---- */

struct tgent {
	uint32_t tgid;
	uint32_t hnext;		/* hash chain */
	uint32_t hpos;		/* place in the heap */
	uint64_t wcount;	/* records in the window: the sum of its row */
	uint64_t last;		/* latest record's timestamp: breaks ties */
};

/*
 * Entries [0, n) are in use, n <= cap <= max_tgids. heap[] is a min-heap
 * of entry indices by (wcount, last): its root is the least busy, the one
 * a new thread group evicts. After every rotation no entry has wcount 0.
 */
struct tgtab {
	uint32_t n, cap, shift;
	struct tgent *ent;
	uint32_t *row;		/* cap rows of window_s per-second counts */
	uint32_t *heap;
	uint32_t *bucket;	/* chain heads, 2^(32 - shift) >= 2 * cap */
};

static uint32_t tg_hash(const struct tgtab *t, uint32_t tgid)
{
	return (tgid * 0x9e3779b1U) >> t->shift;
}

static void tg_rehash(struct tgtab *t)
{
	uint32_t i, h;

	memset(t->bucket, 0xff, (sizeof(uint32_t) << (32 - t->shift)));
	for (i = 0; i < t->n; i++) {
		h = tg_hash(t, t->ent[i].tgid);
		t->ent[i].hnext = t->bucket[h];
		t->bucket[h] = i;
	}
}

static int tg_grow(struct tgtab *t, uint32_t max, unsigned int ws)
{
	uint32_t cap = t->cap ? t->cap * 2 : 8, bits = 1, *p;
	struct tgent *ent;

	if (cap > max || cap < t->cap)
		cap = max;
	ent = realloc(t->ent, cap * sizeof(*ent));
	if (!ent)
		return -1;
	t->ent = ent;
	p = realloc(t->row, (size_t)cap * ws * sizeof(*p));
	if (!p)
		return -1;
	t->row = p;
	p = realloc(t->heap, cap * sizeof(*p));
	if (!p)
		return -1;
	t->heap = p;
	while ((1ULL << bits) < 2ULL * cap)
		bits++;
	p = malloc(sizeof(*p) << bits);
	if (!p)
		return -1;
	free(t->bucket);
	t->bucket = p;
	t->shift = 32 - bits;
	t->cap = cap;
	tg_rehash(t);
	return 0;
}

static uint32_t tg_find(const struct tgtab *t, uint32_t tgid)
{
	uint32_t i;

	if (!t->cap)
		return NIL;
	for (i = t->bucket[tg_hash(t, tgid)]; i != NIL; i = t->ent[i].hnext)
		if (t->ent[i].tgid == tgid)
			return i;
	return NIL;
}

static void tg_unhash(struct tgtab *t, uint32_t i)
{
	uint32_t *pp = &t->bucket[tg_hash(t, t->ent[i].tgid)];

	while (*pp != i)
		pp = &t->ent[*pp].hnext;
	*pp = t->ent[i].hnext;
}

static bool tg_less(const struct tgtab *t, uint32_t a, uint32_t b)
{
	const struct tgent *x = &t->ent[a], *y = &t->ent[b];

	if (x->wcount != y->wcount)
		return x->wcount < y->wcount;
	return x->last < y->last;
}

static void tg_heap_set(struct tgtab *t, uint32_t pos, uint32_t i)
{
	t->heap[pos] = i;
	t->ent[i].hpos = pos;
}

static void tg_sift_up(struct tgtab *t, uint32_t pos)
{
	uint32_t i = t->heap[pos], parent;

	while (pos) {
		parent = (pos - 1) / 2;
		if (!tg_less(t, i, t->heap[parent]))
			break;
		tg_heap_set(t, pos, t->heap[parent]);
		pos = parent;
	}
	tg_heap_set(t, pos, i);
}

static void tg_sift_down(struct tgtab *t, uint32_t pos)
{
	uint32_t i = t->heap[pos], c;

	for (;;) {
		c = 2 * pos + 1;
		if (c >= t->n)
			break;
		if (c + 1 < t->n && tg_less(t, t->heap[c + 1], t->heap[c]))
			c++;
		if (!tg_less(t, t->heap[c], i))
			break;
		tg_heap_set(t, pos, t->heap[c]);
		pos = c;
	}
	tg_heap_set(t, pos, i);
}

/* Entry @i becomes @tgid with one record in @slot, hashed. */
static void tg_place(struct tgtab *t, uint32_t i, uint32_t tgid, uint64_t ts,
		     unsigned int slot, unsigned int ws)
{
	struct tgent *e = &t->ent[i];
	uint32_t h = tg_hash(t, tgid);

	e->tgid = tgid;
	e->wcount = 1;
	e->last = ts;
	memset(&t->row[(size_t)i * ws], 0, ws * sizeof(*t->row));
	t->row[(size_t)i * ws + slot] = 1;
	e->hnext = t->bucket[h];
	t->bucket[h] = i;
}

/* One record of @tgid at @ts, in window slot @slot. */
static void tg_count(struct tgtab *t, const struct metrics_limits *lim,
		     uint32_t tgid, uint64_t ts, unsigned int slot)
{
	unsigned int ws = lim->window_s;
	uint32_t i = tg_find(t, tgid);
	struct tgent *e;

	if (i != NIL) {
		e = &t->ent[i];
		e->wcount++;
		if (ts > e->last)
			e->last = ts;
		t->row[(size_t)i * ws + slot]++;
		tg_sift_down(t, e->hpos);	/* its key only grew */
		return;
	}
	if (!lim->max_tgids)
		return;
	if (t->n < lim->max_tgids) {
		if (t->n == t->cap && tg_grow(t, lim->max_tgids, ws))
			return;			/* no memory: not tracked */
		i = t->n++;
		tg_place(t, i, tgid, ts, slot, ws);
		t->heap[i] = i;
		tg_sift_up(t, i);
		return;
	}
	i = t->heap[0];				/* evict the least busy */
	tg_unhash(t, i);
	tg_place(t, i, tgid, ts, slot, ws);
	tg_sift_down(t, 0);
}

/* Empty window slot @slot; true if any count changed. */
static bool tg_clear_slot(struct tgtab *t, unsigned int slot, unsigned int ws)
{
	bool changed = false;
	uint32_t i, *r;

	for (i = 0; i < t->n; i++) {
		r = &t->row[(size_t)i * ws + slot];
		if (*r) {
			t->ent[i].wcount -= *r;
			*r = 0;
			changed = true;
		}
	}
	return changed;
}

/* Drop entries left with nothing in the window, rebuild hash and heap. */
static void tg_compact(struct tgtab *t, unsigned int ws)
{
	uint32_t i, j = 0;

	for (i = 0; i < t->n; i++) {
		if (!t->ent[i].wcount)
			continue;
		if (i != j) {
			t->ent[j] = t->ent[i];
			memcpy(&t->row[(size_t)j * ws], &t->row[(size_t)i * ws],
			       ws * sizeof(*t->row));
		}
		j++;
	}
	t->n = j;
	if (t->cap)
		tg_rehash(t);
	for (i = 0; i < t->n; i++)
		tg_heap_set(t, i, i);
	for (i = t->n / 2; i-- > 0;)
		tg_sift_down(t, i);
}

static void tg_free(struct tgtab *t)
{
	free(t->ent);
	free(t->row);
	free(t->heap);
	free(t->bucket);
}

/* ---- waiting starts of a latency ---- */

struct pnode {
	uint64_t key, ts;
	uint32_t next;		/* next newer start of its key; free list */
	uint32_t older, newer;	/* age list (arrival order) */
	uint32_t kent;		/* its key entry */
};

struct pkey {
	uint64_t key;
	uint32_t head, tail;	/* its starts, oldest first */
	uint32_t hnext;		/* hash chain; free list */
};

/*
 * n starts wait, n <= cap <= max; a key entry exists for each key with a
 * waiting start. Both the age list and each key's FIFO are in arrival
 * order and starts leave only from their key's head, so the oldest start
 * of all is always the head of its key.
 */
struct pending {
	uint32_t n, cap, max, bits;
	struct pnode *node;
	struct pkey *kent;
	uint32_t *bucket;	/* 2^bits >= 2 * cap chain heads */
	uint32_t oldest, newest;
	uint32_t nfree, kfree;
};

static void pend_init(struct pending *p, uint32_t max)
{
	memset(p, 0, sizeof(*p));
	p->max = max;
	p->oldest = p->newest = p->nfree = p->kfree = NIL;
}

static void pend_free(struct pending *p)
{
	free(p->node);
	free(p->kent);
	free(p->bucket);
}

static uint32_t pend_hash(uint64_t key, uint32_t bits)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - bits);
}

static int pend_grow(struct pending *p)
{
	uint32_t cap = p->cap ? p->cap * 2 : 16, bits = 1, i, k, next;
	size_t h;
	uint32_t *bucket;
	struct pnode *node;
	struct pkey *kent;

	if (cap > p->max || cap < p->cap)
		cap = p->max;
	while ((1ULL << bits) < 2ULL * cap)
		bits++;
	node = realloc(p->node, cap * sizeof(*node));
	if (!node)
		return -1;
	p->node = node;
	kent = realloc(p->kent, cap * sizeof(*kent));
	if (!kent)
		return -1;
	p->kent = kent;
	bucket = malloc(sizeof(*bucket) << bits);
	if (!bucket)
		return -1;
	memset(bucket, 0xff, sizeof(*bucket) << bits);
	for (h = 0; p->cap && h < ((size_t)1 << p->bits); h++) {
		for (k = p->bucket[h]; k != NIL; k = next) {
			next = kent[k].hnext;
			kent[k].hnext = bucket[pend_hash(kent[k].key, bits)];
			bucket[pend_hash(kent[k].key, bits)] = k;
		}
	}
	for (i = p->cap; i < cap; i++) {
		node[i].next = p->nfree;
		p->nfree = i;
		kent[i].hnext = p->kfree;
		p->kfree = i;
	}
	free(p->bucket);
	p->bucket = bucket;
	p->bits = bits;
	p->cap = cap;
	return 0;
}

static uint32_t pend_find(const struct pending *p, uint64_t key)
{
	uint32_t k;

	if (!p->cap)
		return NIL;
	for (k = p->bucket[pend_hash(key, p->bits)]; k != NIL;
	     k = p->kent[k].hnext)
		if (p->kent[k].key == key)
			return k;
	return NIL;
}

/* Queue a start; false if max are waiting (or no memory). */
static bool pend_push(struct pending *p, uint64_t key, uint64_t ts)
{
	uint32_t k, i, h;

	if (p->n >= p->max)
		return false;
	if (p->n == p->cap && pend_grow(p))
		return false;
	k = pend_find(p, key);
	if (k == NIL) {
		k = p->kfree;
		p->kfree = p->kent[k].hnext;
		h = pend_hash(key, p->bits);
		p->kent[k] = (struct pkey){ key, NIL, NIL, p->bucket[h] };
		p->bucket[h] = k;
	}
	i = p->nfree;
	p->nfree = p->node[i].next;
	p->node[i] = (struct pnode){ key, ts, NIL, p->newest, NIL, k };
	if (p->kent[k].tail != NIL)
		p->node[p->kent[k].tail].next = i;
	else
		p->kent[k].head = i;
	p->kent[k].tail = i;
	if (p->newest != NIL)
		p->node[p->newest].newer = i;
	else
		p->oldest = i;
	p->newest = i;
	p->n++;
	return true;
}

/* Take the oldest start of key entry @k; returns its timestamp. */
static uint64_t pend_pop(struct pending *p, uint32_t k)
{
	struct pkey *ke = &p->kent[k];
	uint32_t i = ke->head, *pp;
	struct pnode *nd = &p->node[i];

	ke->head = nd->next;
	if (ke->head == NIL) {
		pp = &p->bucket[pend_hash(ke->key, p->bits)];
		while (*pp != k)
			pp = &p->kent[*pp].hnext;
		*pp = ke->hnext;
		ke->hnext = p->kfree;
		p->kfree = k;
	}
	if (nd->older != NIL)
		p->node[nd->older].newer = nd->newer;
	else
		p->oldest = nd->newer;
	if (nd->newer != NIL)
		p->node[nd->newer].older = nd->older;
	else
		p->newest = nd->older;
	nd->next = p->nfree;
	p->nfree = i;
	p->n--;
	return nd->ts;
}

/* ---- events and latencies ---- */

struct lslot {
	uint64_t count, sum, min, max;
};

struct event {
	char name[NAME_LEN_MAX + 1];
	bool declared;			/* since the last metrics_mark() */
	uint16_t id;			/* bound kernel id, 0 = none */
	uint64_t count, bytes;		/* totals */
	uint64_t *cpu;			/* [max_cpus] records per CPU */
	uint64_t *wcount, *wbytes;	/* [window_s] per-second slots */
	struct tgtab tg;
	struct latency *starts, *ends;	/* latencies it starts, ends */
};

struct latency {
	char name[NAME_LEN_MAX + 1];
	bool declared;
	struct event *start, *end;
	struct latency *snext, *enext;	/* same start, same end event */
	enum metrics_key key;
	uint64_t timeout;
	uint64_t count, expired, overflow;	/* totals */
	struct pending pend;
	/*
	 * Ends read before their start: records of different CPUs reach
	 * us in batches, not in time order. An end waits here (as long as
	 * a start would) for a start stamped no later than itself.
	 */
	struct pending early;
	struct lslot *slot;		/* [window_s] */
	uint32_t *row;			/* [window_s][HIST_BUCKETS] */
	uint64_t whist[HIST_BUCKETS];	/* sum of the rows: the window */
	uint64_t sum;			/* ns, of all pairs (a total) */
	uint64_t le[METRICS_LE + 1];	/* all pairs by metrics_le_ns() */
};

struct metrics {
	struct metrics_limits lim;
	struct event **ev;		/* declaration order */
	struct latency **lat;
	unsigned int nev, evcap, nlat, latcap;
	uint16_t *idmap;		/* [id] = 1 + index in ev, 0 unbound */
	bool started;			/* now is set */
	uint64_t now;
	uint64_t records, lost, unknown;
};

static bool name_ok(const char *s)
{
	size_t n;
	char c;

	if (!s)
		return false;
	for (n = 0; s[n]; n++) {
		c = s[n];
		if (n >= NAME_LEN_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return n > 0;
}

static int find_event(const struct metrics *m, const char *name)
{
	unsigned int i;

	for (i = 0; i < m->nev; i++)
		if (!strcmp(m->ev[i]->name, name))
			return i;
	return -1;
}

static struct latency *find_latency(const struct metrics *m, const char *name)
{
	unsigned int i;

	for (i = 0; i < m->nlat; i++)
		if (!strcmp(m->lat[i]->name, name))
			return m->lat[i];
	return NULL;
}

static void event_free(struct event *ev)
{
	if (!ev)
		return;
	free(ev->cpu);
	free(ev->wcount);
	free(ev->wbytes);
	tg_free(&ev->tg);
	free(ev);
}

static void latency_free(struct latency *l)
{
	if (!l)
		return;
	pend_free(&l->pend);
	pend_free(&l->early);
	free(l->slot);
	free(l->row);
	free(l);
}

/* Rebuild the events' lists of latencies, in declaration order. */
static void relink(struct metrics *m)
{
	struct latency *l;
	unsigned int i;

	for (i = 0; i < m->nev; i++)
		m->ev[i]->starts = m->ev[i]->ends = NULL;
	for (i = m->nlat; i-- > 0;) {
		l = m->lat[i];
		l->snext = l->start->starts;
		l->start->starts = l;
		l->enext = l->end->ends;
		l->end->ends = l;
	}
}

static void rebuild_idmap(struct metrics *m)
{
	unsigned int i;

	memset(m->idmap, 0, IDS * sizeof(*m->idmap));
	for (i = 0; i < m->nev; i++)
		if (m->ev[i]->id)
			m->idmap[m->ev[i]->id] = i + 1;
}

struct metrics *metrics_new(const struct metrics_limits *lim)
{
	struct metrics *m;

	if (!lim || !lim->window_s) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->lim = *lim;
	m->idmap = calloc(IDS, sizeof(*m->idmap));
	if (!m->idmap) {
		free(m);
		return NULL;
	}
	return m;
}

void metrics_free(struct metrics *m)
{
	unsigned int i;

	if (!m)
		return;
	for (i = 0; i < m->nlat; i++)
		latency_free(m->lat[i]);
	for (i = 0; i < m->nev; i++)
		event_free(m->ev[i]);
	free(m->lat);
	free(m->ev);
	free(m->idmap);
	free(m);
}

int metrics_event(struct metrics *m, const char *name)
{
	unsigned int ws = m->lim.window_s;
	struct event *ev = NULL;
	int i;

	if (!name_ok(name)) {
		errno = EINVAL;
		return -1;
	}
	i = find_event(m, name);
	if (i >= 0) {
		m->ev[i]->declared = true;
		return 0;
	}
	if (find_latency(m, name)) {
		errno = EEXIST;		/* the metrics' names would clash */
		return -1;
	}
	if (m->nev >= EVENTS_MAX) {
		errno = ENOSPC;
		return -1;
	}
	if (m->nev == m->evcap) {
		unsigned int cap = m->evcap ? 2 * m->evcap : 8;
		struct event **p = realloc(m->ev, cap * sizeof(*p));

		if (!p)
			goto nomem;
		m->ev = p;
		m->evcap = cap;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		goto nomem;
	ev->wcount = calloc(ws, sizeof(*ev->wcount));
	ev->wbytes = calloc(ws, sizeof(*ev->wbytes));
	if (m->lim.max_cpus)
		ev->cpu = calloc(m->lim.max_cpus, sizeof(*ev->cpu));
	if (!ev->wcount || !ev->wbytes || (m->lim.max_cpus && !ev->cpu))
		goto nomem;
	strcpy(ev->name, name);
	ev->declared = true;
	m->ev[m->nev++] = ev;
	return 0;
nomem:
	event_free(ev);
	errno = ENOMEM;
	return -1;
}

int metrics_bind(struct metrics *m, const char *name, uint16_t id)
{
	int i = name ? find_event(m, name) : -1;
	struct event *ev;

	if (i < 0) {
		errno = ENOENT;
		return -1;
	}
	if (id > MAGNET_EVENT_ID_MAX) {
		errno = EINVAL;
		return -1;
	}
	ev = m->ev[i];
	if (ev->id)
		m->idmap[ev->id] = 0;
	ev->id = 0;
	if (!id)
		return 0;
	if (m->idmap[id])
		m->ev[m->idmap[id] - 1]->id = 0;
	m->idmap[id] = i + 1;
	ev->id = id;
	return 0;
}

static struct latency *latency_new(struct metrics *m, const char *name)
{
	unsigned int ws = m->lim.window_s;
	struct latency *l;

	if (m->nlat == m->latcap) {
		unsigned int cap = m->latcap ? 2 * m->latcap : 8;
		struct latency **p = realloc(m->lat, cap * sizeof(*p));

		if (!p)
			return NULL;
		m->lat = p;
		m->latcap = cap;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->slot = calloc(ws, sizeof(*l->slot));
	l->row = calloc((size_t)ws * HIST_BUCKETS, sizeof(*l->row));
	if (!l->slot || !l->row) {
		latency_free(l);
		return NULL;
	}
	strcpy(l->name, name);
	pend_init(&l->pend, 0);
	pend_init(&l->early, 0);
	m->lat[m->nlat++] = l;
	return l;
}

/*
 * Take a new bound on waiting starts. Below the current capacity the
 * table is rebuilt smaller; the newest starts beyond the bound are
 * dropped as overflow, as they would have been on arrival.
 */
static void pend_resize(struct latency *l, uint32_t max)
{
	struct pending old = l->pend;
	struct pnode *o;

	if (max >= old.cap) {
		l->pend.max = max;
		return;
	}
	pend_init(&l->pend, max);
	while (old.oldest != NIL) {
		o = &old.node[old.oldest];
		if (!pend_push(&l->pend, o->key, o->ts))
			l->overflow++;
		pend_pop(&old, o->kent);
	}
	pend_free(&old);
}

int metrics_latency(struct metrics *m, const char *name, const char *start,
		    const char *end, enum metrics_key key, uint64_t timeout_ns,
		    uint32_t max_pending)
{
	struct event *s, *e;
	struct latency *l;
	int si, ei;

	if (!name_ok(name) || !name_ok(start) || !name_ok(end) ||
	    !strcmp(start, end) || !max_pending ||
	    (key != METRICS_KEY_ID && key != METRICS_KEY_SOCK &&
	     key != METRICS_KEY_SKB)) {
		errno = EINVAL;
		return -1;
	}
	si = find_event(m, start);
	ei = find_event(m, end);
	if (si < 0 || ei < 0 || !m->ev[si]->declared || !m->ev[ei]->declared) {
		errno = ENOENT;
		return -1;
	}
	if (find_event(m, name) >= 0) {
		errno = EEXIST;
		return -1;
	}
	s = m->ev[si];
	e = m->ev[ei];
	l = find_latency(m, name);
	if (!l) {
		l = latency_new(m, name);
		if (!l) {
			errno = ENOMEM;
			return -1;
		}
	} else if (l->start != s || l->end != e || l->key != key) {
		pend_free(&l->pend);	/* the waiting starts mean nothing now */
		pend_init(&l->pend, 0);
	pend_init(&l->early, 0);
	}
	pend_resize(l, max_pending);
	pend_free(&l->early);
	pend_init(&l->early, max_pending);
	l->start = s;
	l->end = e;
	l->key = key;
	l->timeout = timeout_ns;
	l->declared = true;
	relink(m);
	return 0;
}

void metrics_mark(struct metrics *m)
{
	unsigned int i;

	for (i = 0; i < m->nev; i++)
		m->ev[i]->declared = false;
	for (i = 0; i < m->nlat; i++)
		m->lat[i]->declared = false;
}

void metrics_sweep(struct metrics *m)
{
	unsigned int i, j;
	struct latency *l;

	for (i = j = 0; i < m->nlat; i++) {
		l = m->lat[i];
		if (l->declared && l->start->declared && l->end->declared)
			m->lat[j++] = l;
		else
			latency_free(l);
	}
	m->nlat = j;
	for (i = j = 0; i < m->nev; i++) {
		if (m->ev[i]->declared)
			m->ev[j++] = m->ev[i];
		else
			event_free(m->ev[i]);
	}
	m->nev = j;
	rebuild_idmap(m);
	relink(m);
}

/* ---- time ---- */

static bool in_window(const struct metrics *m, uint64_t ts)
{
	return ts / NSEC_PER_SEC + m->lim.window_s > m->now / NSEC_PER_SEC;
}

static unsigned int slot_of(const struct metrics *m, uint64_t ts)
{
	return (ts / NSEC_PER_SEC) % m->lim.window_s;
}

static void latency_clear_slot(struct latency *l, unsigned int s)
{
	struct lslot *sl = &l->slot[s];
	uint32_t *row = &l->row[(size_t)s * HIST_BUCKETS];
	unsigned int b, last;

	if (!sl->count)
		return;
	/* the row's counts all lie between its min's and max's buckets */
	last = hist_bucket(sl->max);
	for (b = hist_bucket(sl->min); b <= last; b++) {
		l->whist[b] -= row[b];
		row[b] = 0;
	}
	memset(sl, 0, sizeof(*sl));
}

/* Move now to @t if later, clearing the slots of seconds left behind. */
static void advance(struct metrics *m, uint64_t t)
{
	unsigned int ws = m->lim.window_s, i, s;
	uint64_t old = m->now / NSEC_PER_SEC, n, k;
	struct event *ev;
	bool changed;

	if (m->started && t <= m->now)
		return;
	if (!m->started) {
		m->started = true;
		m->now = t;
		return;
	}
	m->now = t;
	n = t / NSEC_PER_SEC - old;
	if (n > ws)
		n = ws;
	for (i = 0; i < m->nev; i++) {
		ev = m->ev[i];
		changed = false;
		for (k = 1; k <= n; k++) {
			s = (old + k) % ws;
			ev->wcount[s] = ev->wbytes[s] = 0;
			changed |= tg_clear_slot(&ev->tg, s, ws);
		}
		if (changed)
			tg_compact(&ev->tg, ws);
	}
	for (i = 0; i < m->nlat; i++)
		for (k = 1; k <= n; k++)
			latency_clear_slot(m->lat[i], (old + k) % ws);
}

/* Age out the starts that waited longer than the timeout by now. */
static void latency_expire(const struct metrics *m, struct latency *l)
{
	struct pending *p = &l->pend;
	uint64_t ts;

	while (p->oldest != NIL) {
		ts = p->node[p->oldest].ts;
		if (m->now <= ts || m->now - ts <= l->timeout)
			break;
		pend_pop(p, p->node[p->oldest].kent);
		l->expired++;
	}
	p = &l->early;		/* ends whose start never came: dropped */
	while (p->oldest != NIL) {
		ts = p->node[p->oldest].ts;
		if (m->now <= ts || m->now - ts <= l->timeout)
			break;
		pend_pop(p, p->node[p->oldest].kent);
	}
}

void metrics_tick(struct metrics *m, uint64_t now_ns)
{
	unsigned int i;

	advance(m, now_ns);
	for (i = 0; i < m->nlat; i++)
		latency_expire(m, m->lat[i]);
}

/* ---- records ---- */

static bool rec_is_packet(const struct magnet_record *rec)
{
	return (rec->flags & MAGNET_RF_PACKET) &&
	       rec->size >= sizeof(*rec) + sizeof(struct magnet_packet);
}

static uint64_t rec_bytes(const struct magnet_record *rec)
{
	__u32 len;

	if (!rec_is_packet(rec))
		return rec->size;
	memcpy(&len, rec->payload + offsetof(struct magnet_packet, len),
	       sizeof(len));
	return len;
}

/* The record's key of kind @kind; false if it has none (0 is none). */
static bool rec_key(const struct magnet_record *rec, enum metrics_key kind,
		    uint64_t *key)
{
	size_t off;

	if (kind == METRICS_KEY_ID) {
		*key = rec->id;
		return *key != 0;
	}
	if (!rec_is_packet(rec))
		return false;
	off = kind == METRICS_KEY_SOCK ? offsetof(struct magnet_packet, sock)
				       : offsetof(struct magnet_packet, skb);
	memcpy(key, rec->payload + off, sizeof(*key));
	return *key != 0;
}

static void latency_sample(const struct metrics *m, struct latency *l,
			   uint64_t v, uint64_t ts)
{
	unsigned int s, b;
	struct lslot *sl;

	l->count++;
	l->sum += v;
	l->le[le_index(v)]++;
	if (!in_window(m, ts))
		return;
	s = slot_of(m, ts);
	sl = &l->slot[s];
	if (!sl->count || v < sl->min)
		sl->min = v;
	if (!sl->count || v > sl->max)
		sl->max = v;
	sl->count++;
	sl->sum += v;
	b = hist_bucket(v);
	l->row[(size_t)s * HIST_BUCKETS + b]++;
	l->whist[b]++;
}

static void latency_start(const struct metrics *m, struct latency *l,
			  const struct magnet_record *rec)
{
	uint64_t key;

	uint64_t end;
	uint32_t k;

	if (!rec_key(rec, l->key, &key))
		return;
	latency_expire(m, l);
	/* An end read earlier: the oldest stamped at or after us is ours. */
	while ((k = pend_find(&l->early, key)) != NIL) {
		end = pend_pop(&l->early, k);
		if (end >= rec->timestamp) {
			latency_sample(m, l, end - rec->timestamp, end);
			return;
		}
		/* before us: the end of a start we never saw */
	}
	if (!pend_push(&l->pend, key, rec->timestamp))
		l->overflow++;
}

static void latency_end(const struct metrics *m, struct latency *l,
			const struct magnet_record *rec)
{
	uint64_t key, ts;
	uint32_t k;

	if (!rec_key(rec, l->key, &key))
		return;
	latency_expire(m, l);
	k = pend_find(&l->pend, key);
	/* No start yet, or only later ones: ours has not been read yet. */
	if (k == NIL || l->pend.node[l->pend.kent[k].head].ts > rec->timestamp) {
		pend_push(&l->early, key, rec->timestamp);
		return;
	}
	ts = pend_pop(&l->pend, k);
	latency_sample(m, l, rec->timestamp - ts, rec->timestamp);
}

static void event_count(const struct metrics *m, struct event *ev,
			const struct magnet_record *rec)
{
	uint64_t bytes = rec_bytes(rec);
	unsigned int s;

	ev->count++;
	ev->bytes += bytes;
	if (rec->cpu < m->lim.max_cpus)
		ev->cpu[rec->cpu]++;
	if (!in_window(m, rec->timestamp))
		return;
	s = slot_of(m, rec->timestamp);
	ev->wcount[s]++;
	ev->wbytes[s] += bytes;
	tg_count(&ev->tg, &m->lim, rec->tgid, rec->timestamp, s);
}

void metrics_record(struct metrics *m, const struct magnet_record *rec)
{
	struct magnet_loss loss;
	struct latency *l;
	struct event *ev;

	m->records++;
	advance(m, rec->timestamp);
	if (rec->event == MAGNET_EVENT_LOSS) {
		if (rec->size >= sizeof(*rec) + sizeof(loss)) {
			memcpy(&loss, rec->payload, sizeof(loss));
			m->lost += loss.lost;
		}
		return;
	}
	if (!m->idmap[rec->event]) {
		m->unknown++;
		return;
	}
	ev = m->ev[m->idmap[rec->event] - 1];
	event_count(m, ev, rec);
	for (l = ev->ends; l; l = l->enext)
		latency_end(m, l, rec);
	for (l = ev->starts; l; l = l->snext)
		latency_start(m, l, rec);
}

/* ---- reading ---- */

struct emit {
	metrics_cb cb;
	void *ctx;
	const char *want;	/* metrics_get(): the one name sought */
	bool found;
	double value;
};

/* Whether @obj may own the metric sought ("OBJ.something"). */
static bool emit_wants(const struct emit *e, const char *obj)
{
	size_t n = strlen(obj);

	return !e->want || (!strncmp(e->want, obj, n) && e->want[n] == '.');
}

static void __attribute__((format(printf, 7, 8)))
put(struct emit *e, const char *obj, const char *suffix,
    enum magnet_metric_type type, const char *unit, double value,
    const char *fmt, ...)
{
	char name[128], desc[160];
	va_list ap;

	snprintf(name, sizeof(name), "%s%s%s", obj, suffix ? "." : "",
		 suffix ? suffix : "");
	if (e->want) {
		if (!e->found && !strcmp(name, e->want)) {
			e->found = true;
			e->value = value;
		}
		return;
	}
	va_start(ap, fmt);
	vsnprintf(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	e->cb(e->ctx, name, type, unit, value, desc);
}

static void event_view(const struct metrics *m, const struct event *ev,
		       struct metrics_event_view *v)
{
	unsigned int ws = m->lim.window_s, i;
	uint64_t n = 0, b = 0;

	for (i = 0; i < ws; i++) {
		n += ev->wcount[i];
		b += ev->wbytes[i];
	}
	v->name = ev->name;
	v->count = ev->count;
	v->bytes = ev->bytes;
	v->rate = (double)n / ws;
	v->byte_rate = (double)b / ws;
	v->ncpus = m->lim.max_cpus;
	v->cpu = ev->cpu;
}

static void emit_event(struct emit *e, const struct metrics *m,
		       const struct event *ev)
{
	unsigned int ws = m->lim.window_s, i;
	const char *nm = ev->name;
	struct metrics_event_view v;
	char sfx[32];

	event_view(m, ev, &v);
	put(e, nm, "count", MAGNET_COUNTER, "events", v.count,
	    "%s: records counted since magnetd started", nm);
	put(e, nm, "rate", MAGNET_GAUGE, "events/s", v.rate,
	    "%s: records per second over the last %u s", nm, ws);
	put(e, nm, "bytes", MAGNET_COUNTER, "bytes", v.bytes,
	    "%s: bytes (packet length, else record size) since magnetd started",
	    nm);
	put(e, nm, "byte_rate", MAGNET_GAUGE, "bytes/s", v.byte_rate,
	    "%s: bytes per second over the last %u s", nm, ws);
	for (i = 0; i < v.ncpus; i++) {
		if (!v.cpu[i])
			continue;
		snprintf(sfx, sizeof(sfx), "cpu%u.count", i);
		put(e, nm, sfx, MAGNET_COUNTER, "events", v.cpu[i],
		    "%s: records of CPU %u since magnetd started", nm, i);
	}
}

struct lsum {
	uint64_t n, min, max, sum;
};

static void latency_window(const struct metrics *m, const struct latency *l,
			   struct lsum *s)
{
	const struct lslot *sl;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < m->lim.window_s; i++) {
		sl = &l->slot[i];
		if (!sl->count)
			continue;
		if (!s->n || sl->min < s->min)
			s->min = sl->min;
		if (sl->max > s->max)
			s->max = sl->max;
		s->n += sl->count;
		s->sum += sl->sum;
	}
}

/* The window's @pct percentile: rank ceil(pct/100 * n), 0 if empty. */
static uint64_t latency_pct(const struct latency *l, const struct lsum *s,
			    unsigned int pct)
{
	uint64_t rank = (s->n * pct + 99) / 100, seen = 0, v;
	unsigned int b;

	if (!s->n)
		return 0;
	if (rank <= 1 || rank >= s->n)		/* the exact ends */
		return rank <= 1 ? s->min : s->max;
	for (b = hist_bucket(s->min); b < HIST_BUCKETS - 1; b++) {
		seen += l->whist[b];
		if (seen >= rank)
			break;
	}
	v = hist_mid(b);
	return v < s->min ? s->min : v > s->max ? s->max : v;
}

static void latency_view(const struct metrics *m, const struct latency *l,
			 struct metrics_latency_view *v)
{
	struct lsum s;

	latency_window(m, l, &s);
	v->name = l->name;
	v->count = l->count;
	v->sum_ns = l->sum;
	v->le = l->le;
	v->pending = l->pend.n;
	v->expired = l->expired;
	v->overflow = l->overflow;
	v->window_s = m->lim.window_s;
	v->window_count = s.n;
	v->min = s.min;
	v->mean = s.n ? (double)s.sum / s.n : 0;
	v->p50 = latency_pct(l, &s, 50);
	v->p90 = latency_pct(l, &s, 90);
	v->p99 = latency_pct(l, &s, 99);
	v->max = s.max;
}

static void emit_latency(struct emit *e, const struct metrics *m,
			 const struct latency *l)
{
	unsigned int ws = m->lim.window_s;
	const char *nm = l->name;
	struct metrics_latency_view v;

	latency_view(m, l, &v);
	put(e, nm, "count", MAGNET_COUNTER, "pairs", v.count,
	    "%s: starts matched with their end since magnetd started", nm);
	put(e, nm, "min", MAGNET_GAUGE, "ns", v.min,
	    "%s: shortest start-to-end time over the last %u s", nm, ws);
	put(e, nm, "mean", MAGNET_GAUGE, "ns", v.mean,
	    "%s: mean start-to-end time over the last %u s", nm, ws);
	put(e, nm, "p50", MAGNET_GAUGE, "ns", v.p50,
	    "%s: median start-to-end time over the last %u s (+-1.6%%)", nm, ws);
	put(e, nm, "p90", MAGNET_GAUGE, "ns", v.p90,
	    "%s: 90th percentile over the last %u s (+-1.6%%)", nm, ws);
	put(e, nm, "p99", MAGNET_GAUGE, "ns", v.p99,
	    "%s: 99th percentile over the last %u s (+-1.6%%)", nm, ws);
	put(e, nm, "max", MAGNET_GAUGE, "ns", v.max,
	    "%s: longest start-to-end time over the last %u s", nm, ws);
	put(e, nm, "pending", MAGNET_GAUGE, "starts", v.pending,
	    "%s: starts waiting for their end", nm);
	put(e, nm, "expired", MAGNET_COUNTER, "starts", v.expired,
	    "%s: starts that found no end within the timeout", nm);
	put(e, nm, "overflow", MAGNET_COUNTER, "starts", v.overflow,
	    "%s: starts dropped because max-pending starts were waiting", nm);
}

void metrics_foreach_event(const struct metrics *m, metrics_event_cb cb,
			   void *ctx)
{
	struct metrics_event_view v;
	unsigned int i;

	for (i = 0; i < m->nev; i++) {
		event_view(m, m->ev[i], &v);
		cb(ctx, &v);
	}
}

void metrics_foreach_latency(const struct metrics *m, metrics_latency_cb cb,
			     void *ctx)
{
	struct metrics_latency_view v;
	unsigned int i;

	for (i = 0; i < m->nlat; i++) {
		latency_view(m, m->lat[i], &v);
		cb(ctx, &v);
	}
}

void metrics_totals(const struct metrics *m, uint64_t *records,
		    uint64_t *lost, uint64_t *unknown)
{
	*records = m->records;
	*lost = m->lost;
	*unknown = m->unknown;
}

static void emit_all(const struct metrics *m, struct emit *e)
{
	unsigned int i;

	for (i = 0; i < m->nev; i++)
		if (emit_wants(e, m->ev[i]->name))
			emit_event(e, m, m->ev[i]);
	for (i = 0; i < m->nlat; i++)
		if (emit_wants(e, m->lat[i]->name))
			emit_latency(e, m, m->lat[i]);
	put(e, "records", NULL, MAGNET_COUNTER, "records", m->records,
	    "records read from the kernel's buffers since magnetd started");
	put(e, "records", "lost", MAGNET_COUNTER, "records", m->lost,
	    "records the kernel lost (buffer full or overwritten)");
	put(e, "records", "unknown", MAGNET_COUNTER, "records", m->unknown,
	    "records of event ids bound to no event");
}

void metrics_foreach(const struct metrics *m, metrics_cb cb, void *ctx)
{
	struct emit e = { .cb = cb, .ctx = ctx };

	emit_all(m, &e);
}

bool metrics_get(const struct metrics *m, const char *name, double *value)
{
	struct emit e = { .want = name };

	if (!name)
		return false;
	emit_all(m, &e);
	if (e.found && value)
		*value = e.value;
	return e.found;
}

struct topent {
	uint64_t count;
	uint32_t tgid;
};

static int top_cmp(const void *a, const void *b)
{
	const struct topent *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* Ranked by window count, busiest first; equal counts by tgid. */
void metrics_foreach_top(const struct metrics *m, metrics_top_cb cb,
			 void *ctx)
{
	const struct tgtab *t;
	struct topent *top;
	unsigned int i, k;

	for (i = 0; i < m->nev && m->lim.top_tgids; i++) {
		t = &m->ev[i]->tg;
		top = t->n ? malloc(t->n * sizeof(*top)) : NULL;
		if (!top)
			continue;	/* nothing, or no memory: no lines */
		for (k = 0; k < t->n; k++)
			top[k] = (struct topent){ t->ent[k].wcount,
						  t->ent[k].tgid };
		qsort(top, t->n, sizeof(*top), top_cmp);
		for (k = 0; k < t->n && k < m->lim.top_tgids; k++)
			if (top[k].count)
				cb(ctx, m->ev[i]->name, k + 1, top[k].tgid,
				   top[k].count);
		free(top);
	}
}

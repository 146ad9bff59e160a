// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger, as every program reads it (see ledger.h). The cgroup of an
 * id is found by walking the cgroup2 tree with nftw(): a cgroup's id is
 * its directory's inode number there, and no library maps one to the
 * other (systemd's does for its own units only). A walk stats every
 * cgroup, so one walk names all the ids a reader has at hand, and stops
 * once it has found them all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include <libmnl/libmnl.h>
#include <linux/magnet.h>

#include "ledger.h"

int ledger_set(struct nl_ctx *nl, bool on, bool by_tgid, bool owned)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_LEDGER_SET, 0);

	mnl_attr_put_u8(nlh, MAGNET_A_LEDGER_ENABLED, on);
	if (by_tgid)
		mnl_attr_put_u8(nlh, MAGNET_A_LEDGER_BY_TGID, 1);
	if (owned)
		mnl_attr_put(nlh, MAGNET_A_OWNED, 0, NULL);
	return nl_request(nl, &req, NULL, NULL);
}

struct read_state {
	struct ledger_snapshot *s;
	size_t elapsed_alloc;
};

static int row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct read_state *st = data;
	struct ledger_snapshot *s = st->s;
	struct ledger_row *r;
	uint32_t cpu;

	if (parse_magnet_attrs(nlh, tb) || !tb[MAGNET_A_LEDGER_CPU])
		return MNL_CB_ERROR;
	cpu = attr_uint(tb[MAGNET_A_LEDGER_CPU]);
	if (tb[MAGNET_A_LEDGER_ELAPSED]) {
		if (nl_grow((void **)&s->elapsed, &st->elapsed_alloc, cpu + 1,
			 sizeof(*s->elapsed)))
			return MNL_CB_ERROR;
		s->elapsed[cpu] = attr_uint(tb[MAGNET_A_LEDGER_ELAPSED]);
		if (cpu + 1 > s->cpus)
			s->cpus = cpu + 1;
		return MNL_CB_OK;
	}
	if (nl_grow((void **)&s->rows, &s->alloc, s->count + 1, sizeof(*r)))
		return MNL_CB_ERROR;
	r = &s->rows[s->count++];
	memset(r, 0, sizeof(*r));
	r->cpu = cpu;
	r->cgroup = attr_uint(tb[MAGNET_A_LEDGER_CGROUP]);
	r->tgid = attr_uint(tb[MAGNET_A_LEDGER_TGID]);
	r->kind = attr_uint(tb[MAGNET_A_LEDGER_KIND]);
	r->has_vector = tb[MAGNET_A_LEDGER_VECTOR];
	r->vector = attr_uint(tb[MAGNET_A_LEDGER_VECTOR]);
	if (tb[MAGNET_A_LEDGER_NAME])
		snprintf(r->name, sizeof(r->name), "%s",
			 mnl_attr_get_str(tb[MAGNET_A_LEDGER_NAME]));
	r->ns = attr_uint(tb[MAGNET_A_LEDGER_NS]);
	return MNL_CB_OK;
}

int ledger_read(struct nl_ctx *nl, struct ledger_snapshot *s)
{
	struct read_state st = { .s = s, .elapsed_alloc = s->cpus };
	struct request req;
	struct timespec ts;

	s->count = 0;
	if (s->elapsed)
		memset(s->elapsed, 0, s->cpus * sizeof(*s->elapsed));
	request_start(nl, &req, MAGNET_CMD_LEDGER_GET, NLM_F_DUMP);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->taken_ns = (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return nl_request(nl, &req, row_cb, &st);
}

void ledger_free(struct ledger_snapshot *s)
{
	free(s->rows);
	free(s->elapsed);
	memset(s, 0, sizeof(*s));
}

/*
 * The order of rows by their key, every field but ns: a row is the same
 * row in two snapshots when this says 0 (CPU, cgroup, thread group,
 * kind, vector, name).
 */
static int by_key(const struct ledger_row *x, const struct ledger_row *y)
{
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->has_vector != y->has_vector)
		return x->has_vector < y->has_vector ? -1 : 1;
	if (x->vector != y->vector)
		return x->vector < y->vector ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int row_by_key(const void *a, const void *b)
{
	return by_key(a, b);
}

/* Pointers to rows, by key, then by place (the first of equal rows first). */
static int ptr_by_key(const void *a, const void *b)
{
	const struct ledger_row *x = *(const struct ledger_row *const *)a;
	const struct ledger_row *y = *(const struct ledger_row *const *)b;
	int k = by_key(x, y);

	return k ? k : x < y ? -1 : x > y;
}

/* The row's key against a pointer's row: bsearch()'s, by key alone. */
static int key_vs_ptr(const void *key, const void *p)
{
	return by_key(key, *(const struct ledger_row *const *)p);
}

int ledger_subtract(struct ledger_snapshot *now,
		    const struct ledger_snapshot *before)
{
	const struct ledger_row **sorted, **p;
	size_t n = before->count;

	/*
	 * @before's rows sorted by key, each of @now's found by bisection:
	 * n log n, where a search row by row would cost n^2 (1024 rows per
	 * CPU, MAGNET_LEDGER_ROWS). @now keeps its order.
	 */
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted)
		return -1;
	for (size_t j = 0; j < n; j++)
		sorted[j] = &before->rows[j];
	qsort(sorted, n, sizeof(*sorted), ptr_by_key);
	for (size_t i = 0; i < now->count; i++) {
		p = n ? bsearch(&now->rows[i], sorted, n, sizeof(*sorted),
				key_vs_ptr) : NULL;
		if (!p)
			continue;
		/* equal keys (none, from the kernel): @before's first */
		while (p > sorted && !by_key(p[-1], *p))
			p--;
		now->rows[i].ns -= (*p)->ns;
	}
	free(sorted);
	for (uint32_t c = 0; c < now->cpus && c < before->cpus; c++)
		now->elapsed[c] -= before->elapsed[c];
	return 0;
}

/* Time, the largest first; equal times by key, so the order is stable. */
static int by_ns(const void *a, const void *b)
{
	const struct ledger_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return by_key(x, y);
}

void ledger_sum_cpus(struct ledger_snapshot *s)
{
	size_t n = 0;

	/*
	 * Every row on CPU 0, sorted by key: the rows to add up are then
	 * next to one another (n log n, not n^2 for 1024 rows per CPU).
	 */
	for (size_t i = 0; i < s->count; i++)
		s->rows[i].cpu = 0;
	qsort(s->rows, s->count, sizeof(*s->rows), row_by_key);
	for (size_t i = 0; i < s->count; i++) {
		if (n && !by_key(&s->rows[n - 1], &s->rows[i]))
			s->rows[n - 1].ns += s->rows[i].ns;
		else
			s->rows[n++] = s->rows[i];
	}
	s->count = n;
	qsort(s->rows, n, sizeof(*s->rows), by_ns);
}

const char *ledger_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[MAGNET_LEDGER_USER] = "user",
		[MAGNET_LEDGER_SYSTEM] = "system",
		[MAGNET_LEDGER_KTHREAD] = "kthread",
		[MAGNET_LEDGER_WORK] = "work",
		[MAGNET_LEDGER_HARDIRQ] = "hardirq",
		[MAGNET_LEDGER_SOFTIRQ] = "softirq",
		[MAGNET_LEDGER_IDLE] = "idle",
		[MAGNET_LEDGER_OVERFLOW] = "overflow",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ?
	       names[kind] : "?";
}

const char *ledger_softirq_name(uint32_t vector)
{
	/* the kernel's softirq_to_name[], lower case */
	static const char *const names[] = {
		"hi", "timer", "net_tx", "net_rx", "block", "irq_poll",
		"tasklet", "sched", "hrtimer", "rcu",
	};

	return vector < sizeof(names) / sizeof(names[0]) ? names[vector] :
	       NULL;
}

/* nftw() has no argument for its callback: the search, one at a time. */
static struct {
	const uint64_t *ids;	/* increasing */
	char **paths;
	size_t n, left;		/* left: ids not found yet */
	size_t skip;		/* the root's length, less trailing '/' */
	bool oom;
} search;

int ledger_id_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

size_t ledger_ids_unique(uint64_t *ids, size_t n)
{
	size_t i, k = 0;

	qsort(ids, n, sizeof(*ids), ledger_id_order);
	for (i = 0; i < n; i++)
		if (!k || ids[k - 1] != ids[i])
			ids[k++] = ids[i];
	return k;
}

static int visit(const char *fpath, const struct stat *sb, int type,
		 struct FTW *ftw)
{
	uint64_t id = sb->st_ino;
	const uint64_t *p;
	char **path;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	p = bsearch(&id, search.ids, search.n, sizeof(*p), ledger_id_order);
	if (!p)
		return 0;
	path = &search.paths[p - search.ids];
	if (*path)		/* the first directory with the id */
		return 0;
	*path = strdup(fpath[search.skip] ? fpath + search.skip : "/");
	if (!*path) {
		search.oom = true;
		return 1;
	}
	/* non-zero stops the walk: every id has its path */
	return !--search.left;
}

int ledger_root_check(const char *root)
{
	struct statfs fs;

	if (statfs(root, &fs))
		return -1;
	if (fs.f_type != CGROUP2_SUPER_MAGIC) {
		errno = EMEDIUMTYPE;
		return -1;
	}
	return 0;
}

const char *ledger_root_strerror(int err)
{
	return err == EMEDIUMTYPE ?
	       "not a cgroup2 file system (where cgroup2 is mounted)" :
	       strerror(err);
}

int ledger_cgroup_paths(const char *root, const uint64_t *ids, size_t n,
			char **paths)
{
	size_t skip = strlen(root);

	while (skip > 1 && root[skip - 1] == '/')
		skip--;
	for (size_t i = 0; i < n; i++)
		paths[i] = NULL;
	if (!n)
		return 0;
	search.ids = ids;
	search.paths = paths;
	search.n = n;
	search.left = n;
	search.skip = skip;
	search.oom = false;
	/* a root that cannot be walked has none of them */
	nftw(root, visit, 16, FTW_PHYS | FTW_MOUNT);
	if (!search.oom)
		return 0;
	for (size_t i = 0; i < n; i++) {
		free(paths[i]);
		paths[i] = NULL;
	}
	return -1;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger (MAGNET_CMD_LEDGER_*) as magnetd serves it: read through
 * lib/ledger.c, summed over CPUs, each row's cgroup named by its path,
 * for the socket's "ledger" request (server.c) and the Prometheus
 * endpoint (exposition.c); and turned on and off as magnetd.conf's ledger
 * section says.
 *
 * Paths. A cgroup's id is its directory's inode number in the cgroup2
 * tree (lib/ledger.c walks the tree to find it, one walk for all the ids
 * a read has not seen before). A walk per read would cost a stat of
 * every cgroup each scrape, so each id's path is kept from the first
 * read that had it: a cgroup removed later keeps the path it had (the
 * kernel keeps its rows), and one removed before magnetd first saw its
 * rows is "(gone)", for good. Ids the ledger no longer has (it was
 * turned off and on) are forgotten, so the cache holds at most what the
 * kernel's tables hold.
 *
 * On and off. With "enable = true" magnetd turns the ledger on when it
 * attaches (at start, and when the module is loaded again) and off when
 * it lets go of the module (release, SIGTERM) or a reload says false,
 * but only if it was magnetd that turned it on: one an administrator
 * turned on (magnetctl account on) is left as it is. The ledger it turns
 * on is owned by its socket (MAGNET_A_OWNED), so the kernel turns it off
 * should magnetd be killed. Turning it on or
 * off repatches the kernel's hottest paths; it is never done per scrape.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetd.h"
#include "ledger.h"
#include "nl.h"

struct account_path {
	uint64_t id;
	char *path;		/* NULL: gone before it was first seen */
	bool seen;		/* in the last read */
};

struct account_paths {
	struct account_path *p;
	size_t n, cap;
};

static int by_id(const void *a, const void *b)
{
	const struct account_path *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* @id among the first @n (sorted) entries of @c, or NULL. */
static struct account_path *path_find(struct account_paths *c, size_t n,
				      uint64_t id)
{
	struct account_path key = { .id = id };

	return n ? bsearch(&key, c->p, n, sizeof(*c->p), by_id) : NULL;
}

/*
 * "/a/b/c" cut to its first @depth levels ("/a/b" at 2); the root "/"
 * and paths of @depth levels or fewer stay whole; 0: no cut.
 */
void account_cut_path(char *path, unsigned int depth)
{
	char *p = path;

	if (!depth)
		return;
	for (unsigned int level = 0; *p; level++) {
		char *next = strchr(p + 1, '/');

		if (level == depth) {
			*p = '\0';
			return;
		}
		if (!next)
			return;
		p = next;
	}
}

/*
 * Learn the paths of @ids[0..@n) (sorted, each once, none in the cache)
 * in one walk of the tree, appended to @c (to be sorted in). -1: out of
 * memory, @c as it was.
 */
static int learn_paths(const struct config_ledger *cl,
		       struct account_paths *c, const uint64_t *ids,
		       size_t n)
{
	char **paths;
	size_t i;

	if (!n)
		return 0;
	if (c->n + n > c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct account_path *p;

		while (cap < c->n + n)
			cap *= 2;
		p = realloc(c->p, cap * sizeof(*p));
		if (!p)
			return -1;
		c->p = p;
		c->cap = cap;
	}
	paths = malloc(n * sizeof(*paths));
	if (!paths || ledger_cgroup_paths(cl->cgroup_root, ids, n, paths)) {
		free(paths);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct account_path *e = &c->p[c->n++];

		/* NULL: gone before it was first seen */
		if (paths[i])
			account_cut_path(paths[i], cl->cgroup_depth);
		e->id = ids[i];
		e->path = paths[i];
		e->seen = true;
	}
	free(paths);
	return 0;
}

/* Find, or learn, the path of every row's cgroup. -1: out of memory. */
static int name_rows(struct daemon *d, struct account *a)
{
	struct account_paths *c = d->account_paths;
	uint64_t *ids;		/* the ids new to the cache */
	size_t i, k, n = 0;
	int ret;

	for (i = 0; i < c->n; i++)
		c->p[i].seen = false;
	ids = malloc((a->s.count + 1) * sizeof(*ids));
	if (!ids)
		return -1;
	for (i = 0; i < a->s.count; i++) {
		uint64_t id = a->s.rows[i].cgroup;
		struct account_path *e;

		if (!id)
			continue;
		e = path_find(c, c->n, id);
		if (e)
			e->seen = true;
		else
			ids[n++] = id;
	}
	/* each new id once, all named in one walk */
	k = ledger_ids_unique(ids, n);
	ret = learn_paths(&d->cfg->ledger, c, ids, k);
	free(ids);
	if (ret)
		return -1;
	/* forget what the ledger no longer has, then sort */
	for (i = k = 0; i < c->n; i++) {
		if (c->p[i].seen)
			c->p[k++] = c->p[i];
		else
			free(c->p[i].path);
	}
	c->n = k;
	qsort(c->p, c->n, sizeof(*c->p), by_id);
	a->path = calloc(a->s.count + 1, sizeof(*a->path));
	if (!a->path)
		return -1;
	for (i = 0; i < a->s.count; i++) {
		const struct account_path *e;

		if (!a->s.rows[i].cgroup) {
			a->path[i] = "";
			continue;
		}
		e = path_find(c, c->n, a->s.rows[i].cgroup);
		a->path[i] = e && e->path ? e->path : ACCOUNT_GONE;
	}
	return 0;
}

int account_read(struct daemon *d, struct account *a)
{
	const struct nl_error *e;

	memset(a, 0, sizeof(*a));
	if (!d->account_paths) {
		d->account_paths = calloc(1, sizeof(*d->account_paths));
		if (!d->account_paths) {
			errno = ENOMEM;
			return -1;
		}
	}
	/* EAGAIN: turned off and on during the dump; once more will do */
	if (ledger_read(d->ledger_nl, &a->s) &&
	    (nl_err(d->ledger_nl)->error != EAGAIN ||
	     ledger_read(d->ledger_nl, &a->s))) {
		e = nl_err(d->ledger_nl);
		ledger_free(&a->s);
		/* the module not loaded: its ledger is off too */
		errno = e->error == ENOENT && !e->kernel ? ENODATA : e->error;
		return -1;
	}
	for (uint32_t c = 0; c < a->s.cpus; c++)
		a->elapsed_ns += a->s.elapsed[c];
	ledger_sum_cpus(&a->s);
	if (name_rows(d, a)) {
		account_release(a);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

/* The ledger on (@on) or off, logged; 0, or -1 with its nl error. */
static int set(struct daemon *d, bool on)
{
	const struct nl_error *e;

	/* (owned: should magnetd be killed, the ledger goes off with it) */
	if (!ledger_set(d->ledger_nl, on, false, on))
		return 0;
	e = nl_err(d->ledger_nl);
	if (e->kernel && e->error == EALREADY)
		return -1;
	log_error("ledger: turning it %s: %s", on ? "on" : "off", e->text);
	if (e->hint[0])
		log_error("%s", e->hint);
	return -1;
}

void account_apply(struct daemon *d)
{
	bool want = d->cfg->ledger.enable;

	if (want && !d->ledger_ours) {
		if (!set(d, true)) {
			d->ledger_ours = true;
			log_info("ledger: turned on (magnetd.conf's ledger section); magnetd turns it off when it lets go of the module");
		} else if (nl_err(d->ledger_nl)->error == EALREADY) {
			log_info("ledger: on already (turned on by someone else); magnetd leaves it on");
		}
	} else if (!want && d->ledger_ours) {
		account_stop(d);
	}
}

void account_stop(struct daemon *d)
{
	if (!d->ledger_ours)
		return;
	d->ledger_ours = false;
	/* EALREADY: someone turned it off meanwhile; nothing to do */
	if (!set(d, false))
		log_info("ledger: turned off");
}

void account_module_gone(struct daemon *d)
{
	/* the module's ledger went with it */
	d->ledger_ours = false;
	nl_close(d->ledger_nl);
}

void account_free(struct daemon *d)
{
	struct account_paths *c = d->account_paths;

	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->p[i].path);
	free(c->p);
	free(c);
	d->account_paths = NULL;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The rest of magnetd, stubbed, for programs that run its server (server.c)
 * and metrics (metrics.c) on the host without a kernel: server-unit and the
 * request fuzz target. Each brings its own log_error/warn/info.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "magnetd.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void readers_flush(struct daemon *d)
{
	(void)d;
}

void daemon_release(struct daemon *d)
{
	d->released = true;
}

int daemon_attach(struct daemon *d)
{
	d->released = false;
	return 0;
}

/*
 * The ledger: off, unless a test points stub_ledger at one (its rows
 * summed over CPUs and their paths, as account.c makes them); each read
 * is a copy, as account_release() frees it.
 */
const struct account *stub_ledger;

int account_read(struct daemon *d, struct account *a)
{
	const struct account *l = stub_ledger;

	(void)d;
	memset(a, 0, sizeof(*a));
	if (!l) {
		errno = ENODATA;
		return -1;
	}
	*a = *l;
	a->s.rows = malloc((l->s.count + 1) * sizeof(*a->s.rows));
	a->s.elapsed = malloc((l->s.cpus + 1) * sizeof(*a->s.elapsed));
	a->path = malloc((l->s.count + 1) * sizeof(*a->path));
	if (!a->s.rows || !a->s.elapsed || !a->path) {
		account_release(a);
		errno = ENOMEM;
		return -1;
	}
	memcpy(a->s.rows, l->s.rows, l->s.count * sizeof(*a->s.rows));
	memcpy(a->s.elapsed, l->s.elapsed, l->s.cpus * sizeof(*a->s.elapsed));
	memcpy(a->path, l->path, l->s.count * sizeof(*a->path));
	return 0;
}

/*
 * The watched processes: none, unless a test points stub_acct at some;
 * each read is a copy, as acct_watches_free() frees it.
 */
const struct acct_watches *stub_acct;

int acct_read(struct daemon *d, struct acct_watches *ws)
{
	const struct acct_watches *a = stub_acct;

	(void)d;
	memset(ws, 0, sizeof(*ws));
	if (!a || !a->count)
		return -1;
	ws->w = calloc(a->count, sizeof(*ws->w));
	if (!ws->w)
		return -1;
	for (size_t i = 0; i < a->count; i++) {
		ws->w[i] = a->w[i];
		ws->w[i].rows = malloc((a->w[i].count + 1) * sizeof(*ws->w[i].rows));
		if (!ws->w[i].rows) {
			ws->count = i;
			acct_watches_free(ws);
			return -1;
		}
		memcpy(ws->w[i].rows, a->w[i].rows,
		       a->w[i].count * sizeof(*ws->w[i].rows));
		ws->w[i].alloc = a->w[i].count;
		ws->count = i + 1;
	}
	return 0;
}

/* Spans posted to a collector: none, unless a test points stub_export at some */
const struct export_stats *stub_export;

const struct export_stats *export_stats(const struct daemon *d)
{
	(void)d;
	return stub_export;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * magnet-cputop: where the CPUs' time went, by cgroup, over the next few
 * seconds: the kernel's ledger as libmagnet serves it.
 *
 * It takes a snapshot of the ledger (magnet_ledger_snapshot()), waits,
 * takes another, and subtracts the first from the second
 * (magnet_ledger_subtract()): what each row gained in between. It adds
 * each cgroup's rows up (its tasks' user and system time, its packets'
 * softirq time) and prints the cgroups busiest first, with their share of
 * the CPUs' elapsed time, then the time that went to no cgroup: idle,
 * and the rest (kernel threads, and interrupts and work items that served
 * none).
 *
 * usage: magnet-cputop [-s SOCKET] [-n ROWS] [SECONDS]
 * Exit status 0, or 1 when magnetd cannot be asked or the ledger is off.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libmagnet.h"

#define PROG	"magnet-cputop"

struct cgroup_time {
	const char *path;
	uint64_t ns;
};

static int by_ns(const void *a, const void *b)
{
	const struct cgroup_time *x = a, *y = b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : strcmp(x->path, y->path);
}

/* @l's rows, one per cgroup path, busiest first: into @out (nrows room). */
static unsigned int by_cgroup(const struct magnet_ledger *l,
			      struct cgroup_time *out)
{
	unsigned int n = 0, i, j;

	for (i = 0; i < l->nrows; i++) {
		const struct magnet_ledger_row *r = &l->rows[i];

		if (!r->cgroup)
			continue;
		for (j = 0; j < n && strcmp(out[j].path, r->path); j++)
			;
		if (j == n)
			out[n++] = (struct cgroup_time){ .path = r->path };
		out[j].ns += r->ns;
	}
	qsort(out, n, sizeof(*out), by_ns);
	return n;
}

static int take(struct magnet_client *c, struct magnet_ledger *l)
{
	if (!magnet_ledger_snapshot(c, l, 5000))
		return 0;
	fprintf(stderr, PROG ": %s\n", magnet_last_error(c));
	return -1;
}

int main(int argc, char **argv)
{
	struct magnet_ledger before, now;
	struct magnet_client *c;
	struct cgroup_time *cg;
	const char *sock = NULL;
	double seconds = 2, elapsed = 0;
	uint64_t idle = 0, other = 0;
	unsigned int rows = 20, n, i;
	int opt;

	while ((opt = getopt(argc, argv, "s:n:h")) != -1) {
		switch (opt) {
		case 's':
			sock = optarg;
			break;
		case 'n':
			rows = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: " PROG " [-s SOCKET] [-n ROWS] [SECONDS]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind < argc)
		seconds = strtod(argv[optind], NULL);
	if (!(seconds >= 0.1 && seconds <= 3600)) {
		fprintf(stderr, PROG ": SECONDS: 0.1 to 3600\n");
		return 2;
	}
	c = magnet_connect(sock);
	if (!c) {
		fprintf(stderr, PROG ": magnetd: %s\n", strerror(errno));
		return 1;
	}
	if (take(c, &before)) {
		magnet_close(c);
		return 1;
	}
	nanosleep(&(struct timespec){ (time_t)seconds,
				      (long)((seconds - (time_t)seconds) * 1e9) },
		  NULL);
	if (take(c, &now)) {
		magnet_ledger_free(&before);
		magnet_close(c);
		return 1;
	}
	if (magnet_ledger_subtract(&now, &before)) {
		if (errno == ESTALE)
			fprintf(stderr, PROG ": the ledger was turned off and on meanwhile: try again\n");
		else
			fprintf(stderr, PROG ": %s\n", strerror(errno));
		magnet_ledger_free(&before);
		magnet_ledger_free(&now);
		magnet_close(c);
		return 1;
	}
	for (i = 0; i < now.ncpus; i++)
		elapsed += now.elapsed_ns[i];
	for (i = 0; i < now.nrows; i++)
		if (now.rows[i].cgroup)
			continue;
		else if (!strcmp(now.rows[i].kind, "idle"))
			idle += now.rows[i].ns;
		else
			other += now.rows[i].ns;
	cg = calloc(now.nrows + 1, sizeof(*cg));
	if (!cg) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	n = by_cgroup(&now, cg);
	printf("%.3f CPU-seconds on %u CPUs in %.3f s\n", elapsed / 1e9,
	       now.ncpus, seconds);
	printf("%8s %10s  %s\n", "SHARE", "SECONDS", "CGROUP");
	for (i = 0; i < n && i < rows; i++)
		printf("%7.2f%% %10.3f  %s\n",
		       elapsed ? 100 * cg[i].ns / elapsed : 0.0, cg[i].ns / 1e9,
		       cg[i].path);
	printf("%7.2f%% %10.3f  (no cgroup: kernel threads, interrupts, work)\n",
	       elapsed ? 100 * other / elapsed : 0.0, other / 1e9);
	printf("%7.2f%% %10.3f  (idle)\n", elapsed ? 100 * idle / elapsed : 0.0,
	       idle / 1e9);
	free(cg);
	magnet_ledger_free(&before);
	magnet_ledger_free(&now);
	magnet_close(c);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ledger, as every program reads it (MAGNET_CMD_LEDGER_*, rules in
 * the uapi header): turn it on or off, take a snapshot of its rows, the
 * difference of two snapshots, and the cgroups the rows' ids name.
 */
#ifndef MAGNET_LIB_LEDGER_H
#define MAGNET_LIB_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nl.h"

struct ledger_row {
	uint32_t cpu;
	uint64_t cgroup;	/* 0: no activity */
	uint32_t tgid;		/* 0 unless the ledger keeps thread groups */
	uint8_t kind;		/* enum magnet_ledger_kind */
	bool has_vector;
	uint32_t vector;
	char name[64];		/* a work item's function, a vector's name */
	uint64_t ns;
};

struct ledger_snapshot {
	struct ledger_row *rows;
	size_t count, alloc;
	uint32_t cpus;		/* CPUs with an elapsed time: elapsed[cpu] */
	uint64_t *elapsed;	/* ns per CPU, first to last boundary */
	uint64_t taken_ns;	/* CLOCK_MONOTONIC when taken */
};

/*
 * On (@by_tgid: a row per thread group; @owned: off again when @nl's socket
 * closes) or off. 0, or -1 (nl_err()).
 */
int ledger_set(struct nl_ctx *nl, bool on, bool by_tgid, bool owned);

/* Read every row into @s (emptied first). 0, or -1 (nl_err()). */
int ledger_read(struct nl_ctx *nl, struct ledger_snapshot *s);
void ledger_free(struct ledger_snapshot *s);

/*
 * @now less @before, row by row and CPU by CPU, into @now, its rows left
 * in their order (rows of @before that @now lacks cannot be: counters
 * only grow). 0, or -1 out of memory (@now as it was).
 */
int ledger_subtract(struct ledger_snapshot *now,
		    const struct ledger_snapshot *before);

/*
 * The same rows summed over CPUs (cpu 0 in each), sorted by time, the
 * largest first, equal times in the order of their keys, in @s itself.
 */
void ledger_sum_cpus(struct ledger_snapshot *s);

/* The kind's name ("user", "softirq", ...), or "?". */
const char *ledger_kind_name(unsigned int kind);
/* A softirq's name ("net_rx"), or NULL. */
const char *ledger_softirq_name(uint32_t vector);

/* The order of cgroup ids (uint64_t), for qsort() and bsearch(). */
int ledger_id_order(const void *a, const void *b);
/* @ids[0..@n) sorted, each once; returns how many are left. */
size_t ledger_ids_unique(uint64_t *ids, size_t n);

/* Where cgroup2 is mounted, unless told otherwise (not checked there) */
#define LEDGER_ROOT_DEFAULT	"/sys/fs/cgroup"
/*
 * 0 if @root is in a cgroup2 file system (where cgroup2 is mounted, for
 * ledger_cgroup_paths()); -1 otherwise, errno statfs()'s (ENOENT, ...)
 * or EMEDIUMTYPE: another file system.
 */
int ledger_root_check(const char *root);
/* Why ledger_root_check() refused a root, from its errno @err */
const char *ledger_root_strerror(int err);

/*
 * The paths of the cgroups @ids[0..@n) under the cgroup2 mount @root (a
 * cgroup's id is its directory's inode number), found in one walk of
 * its tree: @paths[i] is @ids[i]'s, malloc()ed ("/" for the root, "/a/b"
 * below it), or NULL if no directory has that id now (the cgroup is
 * gone). @ids in increasing order, each once. 0, or -1 out of memory
 * (@paths all NULL).
 */
int ledger_cgroup_paths(const char *root, const uint64_t *ids, size_t n,
			char **paths);

#endif

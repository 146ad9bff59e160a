/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-call accounting of a whole process, as every program reads it
 * (MAGNET_CMD_ACCT_*, rules in the uapi header): watch a process or stop,
 * read its rows (one per system call), the difference of two readings,
 * and system calls' names.
 */
#ifndef MAGNET_LIB_ACCTWATCH_H
#define MAGNET_LIB_ACCTWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/magnet.h>

#include "nl.h"

struct acct_watch_row {
	uint32_t nr;			/* or MAGNET_ACCT_NR_OTHER */
	struct magnet_acct_result r;	/* the calls summed */
	uint64_t errors;
	uint64_t max_ns;
	uint64_t hist[MAGNET_ACCT_HIST];
};

struct acct_watch {
	uint32_t pid;
	char comm[16];			/* its name, "" once it is gone */
	uint64_t since_ns;		/* its age when read */
	uint32_t threads;
	uint64_t missed;
	bool exited;
	struct acct_watch_row *rows;
	size_t count, alloc;
};

struct acct_watches {
	struct acct_watch *w;
	size_t count, alloc;
};

/*
 * Watch process @pid (@owned: the watch ends when @nl's socket closes),
 * or stop watching it. 0, or -1 (nl_err()).
 */
int acct_watch_set(struct nl_ctx *nl, uint32_t pid, bool on, bool owned);

/*
 * Read the watch of @pid (0: every watch) into @out (emptied first). 0,
 * or -1 (nl_err(); ENOENT: not watched).
 */
int acct_watch_read(struct nl_ctx *nl, uint32_t pid, struct acct_watches *out);
void acct_watches_free(struct acct_watches *ws);

/* Process @pid's name (/proc/PID/comm) in @buf; false ("") if gone. */
bool acct_comm(uint32_t pid, char *buf, size_t size);

/* The watch of @pid in @ws, or NULL. */
struct acct_watch *acct_watch_find(struct acct_watches *ws, uint32_t pid);

/*
 * @now less @before, row by row (rows matched by number; a row @before
 * lacks stays whole; max_ns stays @now's), in @now. A watch restarted
 * in between (@before older than @now's age) is left whole.
 */
void acct_watch_subtract(struct acct_watch *now,
			 const struct acct_watch *before);

/* Rows by total wall time, the largest first, equal ones by number. */
void acct_watch_sort(struct acct_watch *w);

/*
 * System call @nr's name on this machine's architecture ("write"), in
 * @buf; "other" for MAGNET_ACCT_NR_OTHER, "syscall_N" for a number the
 * table lacks.
 */
const char *acct_syscall_name(uint32_t nr, char *buf, size_t size);

/*
 * The wall time below which a fraction @q (0 to 1) of @row's calls
 * returned, from its histogram: the upper edge of the bucket the
 * quantile falls in (max_ns for the last), in ns; 0 with no calls.
 */
uint64_t acct_watch_quantile(const struct acct_watch_row *row, double q);

/* The upper edge of histogram bucket @i, in ns (UINT64_MAX: the last). */
uint64_t acct_hist_edge(unsigned int i);

#endif

// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl acct: per-call accounting of a whole process, summed per
 * system call, as perf trace -s sums it (see magnetctl.h and
 * lib/acctwatch.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "acctwatch.h"
#include "libmagnet.h"
#include "magnetctl.h"
#include "print.h"

const char help_acct[] =
"Per-call accounting of a process (every system call of its threads):\n"
"  magnetctl acct -p PID [-d SECONDS] [top N]\n"
"      What each system call of process PID cost, summed per system call\n"
"      (as perf trace -s sums them): CALLS, ERRORS, WALL, CPU (interrupts\n"
"      apart), RUNQ (waiting for a CPU), BLOCKED (asleep), IRQ (hardirqs\n"
"      and softirqs that ran in the calls), FAULTS, BYTES (socket and\n"
"      block), ASYNC (work on the calls' behalf outside them: the device's\n"
"      transmits, the block writes of the data the calls dirtied, and the\n"
"      receive processing of the data they read), in ms; P50, P99 and MAX of\n"
"      the wall time, in us (quantiles to the histogram's power of two).\n"
"      If PID is not watched, it is watched from now until SECONDS have\n"
"      passed, the process exits, or magnetctl is interrupted (the watch\n"
"      ends with magnetctl). If it is, what its watch has summed; with\n"
"      -d, what it sums in the next SECONDS. top N: the N largest by wall\n"
"      time. -j: every counter, the subsystems' split and the histogram.\n"
"  magnetctl acct watch PID\n"
"      Watch PID until stopped (for magnetd, or reading again and again).\n"
"      At most 8 processes at once.\n"
"  magnetctl acct stop PID\n"
"      Stop watching it; its counters are dropped.\n"
"  magnetctl acct [show]\n"
"      Every watch's table.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint32_t parse_pid(const char *word)
{
	return parse_uint(word, 1, 0x3fffffff, "pid");
}

static void print_ms(const char *key, uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", ns / 1e6);
	print_number(PRINT_TEXT, key, text);
}

static void print_us(const char *key, uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%.1f", ns / 1e3);
	print_number(PRINT_TEXT, key, text);
}

static uint64_t blocked(const struct magnet_acct_result *r)
{
	uint64_t b = 0;

	for (int i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++)
		b += r->blocked_ns[i];
	return b;
}

static void print_row_json(const struct acct_watch_row *row)
{
	const struct magnet_acct_result *r = &row->r;

	print_u64(PRINT_JSON, "nr", NULL, row->nr);
	print_u64(PRINT_JSON, "wall_ns", NULL, r->wall_ns);
	print_u64(PRINT_JSON, "cpu_ns", NULL, r->cpu_ns);
	print_u64(PRINT_JSON, "runq_ns", NULL, r->runq_ns);
	print_open_object("blocked_ns");
	for (int i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++)
		print_u64(PRINT_JSON, magnet_acct_block_name(i), NULL,
			  r->blocked_ns[i]);
	print_close_object();
	print_u64(PRINT_JSON, "hardirq_ns", NULL, r->hardirq_ns);
	print_u64(PRINT_JSON, "softirq_ns", NULL, r->softirq_ns);
	print_open_object("subsys_ns");
	for (int i = 0; i < __MAGNET_ACCT_SUBSYS_MAX; i++)
		if (r->subsys_ns[i])
			print_u64(PRINT_JSON, magnet_acct_subsys_name(i), NULL,
				  r->subsys_ns[i]);
	print_close_object();
	print_u64(PRINT_JSON, "minflt", NULL, r->minflt);
	print_u64(PRINT_JSON, "majflt", NULL, r->majflt);
	print_u64(PRINT_JSON, "vcsw", NULL, r->vcsw);
	print_u64(PRINT_JSON, "ivcsw", NULL, r->ivcsw);
	print_u64(PRINT_JSON, "sock_tx_bytes", NULL, r->sock_tx_bytes);
	print_u64(PRINT_JSON, "sock_rx_bytes", NULL, r->sock_rx_bytes);
	print_u64(PRINT_JSON, "blk_read_bytes", NULL, r->blk_read_bytes);
	print_u64(PRINT_JSON, "blk_write_bytes", NULL, r->blk_write_bytes);
	print_u64(PRINT_JSON, "tcp_retrans", NULL, r->tcp_retrans);
	print_u64(PRINT_JSON, "dev_tx_bytes", NULL, r->dev_tx_bytes);
	print_u64(PRINT_JSON, "async_tx_ns", NULL, r->async_tx_ns);
	print_u64(PRINT_JSON, "async_blk_bytes", NULL, r->async_blk_bytes);
	print_u64(PRINT_JSON, "async_blk_ns", NULL, r->async_blk_ns);
	print_u64(PRINT_JSON, "async_rx_bytes", NULL, r->async_rx_bytes);
	print_u64(PRINT_JSON, "async_rx_ns", NULL, r->async_rx_ns);
	print_u64(PRINT_JSON, "async_pending", NULL, r->async_pending);
	print_u64(PRINT_JSON, "async_lost", NULL, r->async_lost);
	print_u64(PRINT_JSON, "p50_ns", NULL, acct_watch_quantile(row, 0.5));
	print_u64(PRINT_JSON, "p99_ns", NULL, acct_watch_quantile(row, 0.99));
	print_u64(PRINT_JSON, "max_ns", NULL, row->max_ns);
	print_open_array("hist");
	for (int i = 0; i < MAGNET_ACCT_HIST; i++)
		print_u64(PRINT_JSON, NULL, NULL, row->hist[i]);
	print_close_array();
}

static void print_watch(struct acct_watch *w, size_t top)
{
	const char *comm = w->comm[0] ? w->comm : "-";
	char name[64];
	size_t n;

	acct_watch_sort(w);
	n = top && top < w->count ? top : w->count;
	print_open_object(NULL);
	print_u64(PRINT_JSON, "pid", NULL, w->pid);
	print_string(PRINT_JSON, "comm", NULL, comm);
	print_u64(PRINT_JSON, "since_ns", NULL, w->since_ns);
	print_u64(PRINT_JSON, "threads", NULL, w->threads);
	print_u64(PRINT_JSON, "missed", NULL, w->missed);
	print_bool(PRINT_JSON, "exited", NULL, w->exited);
	if (!print_is_json()) {
		printf("pid %" PRIu32 " (%s), watched %.3f s, %" PRIu32 " thread%s now%s",
		       w->pid, comm, w->since_ns / 1e9, w->threads,
		       w->threads == 1 ? "" : "s", w->exited ? ", exited" : "");
		if (w->missed)
			printf(", %" PRIu64 " calls of threads beyond the watch's room not counted",
			       w->missed);
		putchar('\n');
	}
	print_open_array("syscalls");
	table_begin();
	for (size_t i = 0; i < n; i++) {
		const struct acct_watch_row *row = &w->rows[i];
		const struct magnet_acct_result *r = &row->r;

		if (!r->calls && !r->async_pending)
			continue;	/* (none in the interval) */
		print_row_begin();
		print_string(PRINT_ANY, "syscall", NULL,
			     acct_syscall_name(row->nr, name, sizeof(name)));
		print_u64(PRINT_ANY, "calls", NULL, r->calls);
		print_u64(PRINT_ANY, "errors", NULL, row->errors);
		print_ms("wall_ms", r->wall_ns);
		print_ms("cpu_ms", r->cpu_ns);
		print_ms("runq_ms", r->runq_ns);
		print_ms("blocked_ms", blocked(r));
		print_ms("irq_ms", r->hardirq_ns + r->softirq_ns);
		print_u64(PRINT_TEXT, "faults", NULL, r->minflt + r->majflt);
		print_u64(PRINT_TEXT, "bytes", NULL,
			  r->sock_tx_bytes + r->sock_rx_bytes +
			  r->blk_read_bytes + r->blk_write_bytes);
		print_ms("async_ms", r->async_tx_ns + r->async_blk_ns +
			 r->async_rx_ns);
		print_us("p50_us", acct_watch_quantile(row, 0.5));
		print_us("p99_us", acct_watch_quantile(row, 0.99));
		print_us("max_us", row->max_ns);
		if (print_is_json())
			print_row_json(row);
		print_row_end();
	}
	table_end();
	print_close_array();
	print_close_object();
}

static int print_watches(struct acct_watches *ws, size_t top)
{
	print_open_array(NULL);
	for (size_t i = 0; i < ws->count; i++) {
		if (i && !print_is_json())
			putchar('\n');
		print_watch(&ws->w[i], top);
	}
	print_close_array();
	fflush(stdout);
	return 0;
}

/*
 * Wait until @seconds pass (0: no end), the process @pidfd is exits (-1:
 * none), or a signal.
 */
static void wait_for(double seconds, int pidfd)
{
	struct timespec start, now;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!stop) {
		int ms = 1000;

		if (seconds) {
			double left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left = seconds - (now.tv_sec - start.tv_sec) -
			       (now.tv_nsec - start.tv_nsec) / 1e9;
			if (left <= 0)
				return;
			if (left < 1)
				ms = (int)(left * 1000) + 1;
		}
		if (poll(&p, pidfd >= 0, ms) > 0)
			return;		/* (the process exited) */
	}
}

static int acct_process(uint32_t pid, double seconds, size_t top)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct acct_watches before = { 0 }, now = { 0 };
	bool ours = false;
	int pidfd = -1, ret;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (acct_watch_read(nl, pid, &before)) {
		if (nl_err(nl)->error != ENOENT)
			return print_nl_error();
		/* not watched: a watch of this command's own, while it runs */
		if (acct_watch_set(nl, pid, true, true))
			return print_nl_error();
		ours = true;
		pidfd = syscall(SYS_pidfd_open, pid, 0);
	} else if (!seconds) {
		ret = print_watches(&before, top);
		acct_watches_free(&before);
		return ret;
	}
	wait_for(seconds, pidfd);
	if (pidfd >= 0)
		close(pidfd);
	ret = acct_watch_read(nl, pid, &now) ? print_nl_error() : 0;
	if (!ret && !ours && now.count && before.count)
		acct_watch_subtract(&now.w[0], &before.w[0]);
	if (!ret)
		ret = print_watches(&now, top);
	if (ours && acct_watch_set(nl, pid, false, false) && !ret)
		ret = print_nl_error();
	acct_watches_free(&now);
	acct_watches_free(&before);
	return ret;
}

int acct_show(struct args *a)
{
	const char *w = more(a) ? a->word[0] : "show";
	double seconds = 0;
	uint32_t pid = 0;
	size_t top = 0;
	struct acct_watches ws = { 0 };
	int ret;

	if (!strcmp(w, "watch") || !strcmp(w, "stop")) {
		next_word(a);
		pid = parse_pid(take_arg(a, "a pid"));
		no_more_args(a);
		if (acct_watch_set(nl, pid, !strcmp(w, "watch"), false))
			return print_nl_error();
		return 0;
	}
	if (!strcmp(w, "show")) {
		next_word(a);
		no_more_args(a);
		if (acct_watch_read(nl, 0, &ws))
			return print_nl_error();
		ret = print_watches(&ws, 0);
		acct_watches_free(&ws);
		return ret;
	}
	while (more(a)) {
		w = next_word(a);
		if (!strcmp(w, "-p"))
			pid = parse_pid(take_value(a, w));
		else if (!strcmp(w, "-d"))
			seconds = parse_seconds(take_value(a, w));
		else if (!strcmp(w, "top"))
			top = parse_uint(take_value(a, w), 1, 1000000, "row count");
		else
			unknown_keyword(w);
	}
	if (!pid)
		usage_error("%s: which process? -p PID", command);
	return acct_process(pid, seconds, top);
}

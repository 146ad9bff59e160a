// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-test: user-space half of magnet's VM test suites.
 *
 *   magnet-test stream [options]   read a buffer while magnet_stress writes
 *                                  into it; check every record and the
 *                                  accounting; one test
 *   magnet-test attrs [BUFFER]     read attributes (lseek), poll readiness,
 *                                  the one-reader rule, bad input
 *   magnet-test kreader [BUFFER [ARGS]] the in-kernel reader API, checked
 *                                  against the buffer's counters
 *   magnet-test format             control/format matches the uapi header
 *   magnet-test predefs NAME=ID... the predefined probes' records say what
 *                                  this program did
 *   magnet-test wakeups BUFFER N   every record wakes a reader in poll(),
 *                                  raced against its going to sleep
 *   magnet-test mapping BUFFER [OW] the data file's mapping and consume
 *                                  ioctl, their bad input
 *
 * Every test prints "ok - name" or "not ok - name: why"; each command ends
 * with "N passed, N failed" and exits non-zero if anything failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <getopt.h>
#include <inttypes.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magnet.h>
#include "harness.h"
#include "libmagnet.h"
#include "stress_format.h"
#include "mapped.h"

#define DEBUGFS		"/sys/kernel/debug/"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DATA_DIR	DEBUGFS "magnet/data/"
#define CONTROL_DIR	DEBUGFS "magnet/control/"
#define STRESS_RUN	DEBUGFS "magnet_stress/run"
#define STRESS_RESULT	DEBUGFS "magnet_stress/result"
#define MAX_CPUS	64


/*
 * A result in the harness's format (tests/harness.h); @fmt says why it
 * failed, "" if there is nothing to add.
 */
static void result(bool ok, const char *name, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	harness_result(ok, name, why[0] ? "%s" : NULL, why);
}

#define summary harness_summary

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

/* ---- kernel-side counters ---------------------------------------------- */

struct cpu_stats {
	unsigned long produced, written, read, lost, dropped, overwritten,
		      discarded;
};

static int read_stats(const char *buffer, struct cpu_stats *st, int *ncpu)
{
	FILE *f = fopen(CONTROL_DIR "stats", "r");
	char line[256], name[64];
	struct cpu_stats s;
	unsigned int cpu;

	if (!f)
		return -errno;
	*ncpu = 0;
	memset(st, 0, sizeof(*st) * MAX_CPUS);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %u %lu %lu %lu %lu %lu %lu %lu", name,
			   &cpu, &s.produced, &s.written, &s.read, &s.lost,
			   &s.dropped, &s.overwritten, &s.discarded) != 9 ||
		    strcmp(name, buffer) || cpu >= MAX_CPUS)
			continue;
		st[cpu] = s;
		if ((int)cpu + 1 > *ncpu)
			*ncpu = cpu + 1;
	}
	fclose(f);
	return 0;
}

/* @st -= @before, counter by counter */
static void stats_sub(struct cpu_stats *st, const struct cpu_stats *before,
		      int ncpu)
{
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		st[cpu].produced -= before[cpu].produced;
		st[cpu].written -= before[cpu].written;
		st[cpu].read -= before[cpu].read;
		st[cpu].lost -= before[cpu].lost;
		st[cpu].dropped -= before[cpu].dropped;
		st[cpu].overwritten -= before[cpu].overwritten;
		st[cpu].discarded -= before[cpu].discarded;
	}
}

struct stress_result {
	unsigned long attempts[MAX_CPUS][STRESS_NR_CTX];
	unsigned long ok[MAX_CPUS][STRESS_NR_CTX];
	unsigned long nested;	/* writes that interrupted another write */
	int tid[MAX_CPUS];
};

static int read_stress_result(struct stress_result *r)
{
	static const char * const names[] = STRESS_CTX_NAMES;
	FILE *f = fopen(STRESS_RESULT, "r");
	unsigned long att, ok;
	char line[256], ctx[16];
	unsigned int cpu;
	int tid, c;

	if (!f)
		return -errno;
	memset(r, 0, sizeof(*r));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "nested %u %lu", &cpu, &att) == 2) {
			r->nested += att;
			continue;
		}
		if (sscanf(line, "%u %15s %lu %lu %d", &cpu, ctx, &att, &ok,
			   &tid) != 5 || cpu >= MAX_CPUS)
			continue;
		for (c = 0; c < STRESS_NR_CTX; c++)
			if (!strcmp(ctx, names[c]))
				break;
		if (c == STRESS_NR_CTX)
			continue;
		r->attempts[cpu][c] = att;
		r->ok[cpu][c] = ok;
		r->tid[cpu] = tid;
	}
	fclose(f);
	return 0;
}

/* ---- stream test ------------------------------------------------------- */

enum io_mode { IO_READ, IO_POLL, IO_EPOLL, IO_SIGIO, IO_URING, IO_MAP };
static const char * const io_names[] = {
	"read", "poll", "epoll", "sigio", "uring", "map",
};

struct stream_opts {
	const char *buffer;
	const char *run;
	enum io_mode io;
	long size_wm, count_wm, timeout_us;
	size_t read_size;
	long read_delay_us;	/* pause after each read: a slow reader */
	int expect_loss;	/* -1 don't care, 0 none, 1 some */
	bool overwrite;
};

struct checker {
	unsigned long records[MAX_CPUS][STRESS_NR_CTX];
	long long next_seq[MAX_CPUS][STRESS_NR_CTX];
	unsigned long gaps[MAX_CPUS];
	unsigned long lost[MAX_CPUS];
	unsigned long loss_records;
	unsigned long last_total[MAX_CPUS];
	uint64_t last_ts[MAX_CPUS];
	unsigned long total_records, bytes, errors, reads, wakeups;
	int tid[MAX_CPUS];
	char first_error[256];
};

static void check_fail(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ < 5) {
		char msg[256];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		if (c->errors == 1)
			strcpy(c->first_error, msg);
		printf("# error: %s\n", msg);
	}
}

static const uint16_t ctx_flags[STRESS_NR_CTX] = {
	0, MAGNET_RF_SOFTIRQ, MAGNET_RF_HARDIRQ, MAGNET_RF_NMI,
};

/* Check the records of one read() result. */
static void check_chunk(struct checker *c, const void *data, size_t n)
{
	size_t off = 0;

	c->reads++;
	c->bytes += n;
	while (off < n) {
		const struct magnet_record *r = (const void *)((const char *)data + off);
		size_t len;
		unsigned int ctx;

		if (n - off < sizeof(*r) || r->size < sizeof(*r) ||
		    (len = (r->size + 7) & ~7UL) > n - off) {
			check_fail(c, "torn record at offset %zu of %zu", off, n);
			return;
		}
		off += len;
		if (r->cpu >= MAX_CPUS) {
			check_fail(c, "cpu %u out of range", r->cpu);
			continue;
		}
		if (r->timestamp < c->last_ts[r->cpu])
			check_fail(c, "cpu %u: timestamp went back %" PRIu64 " -> %" PRIu64,
				   r->cpu, c->last_ts[r->cpu], r->timestamp);
		c->last_ts[r->cpu] = r->timestamp;
		if (r->event == MAGNET_EVENT_LOSS) {
			const struct magnet_loss *l = (const void *)r->payload;

			c->loss_records++;
			if (r->size != sizeof(*r) + sizeof(*l) || !l->lost ||
			    l->total != c->last_total[r->cpu] + l->lost)
				check_fail(c, "cpu %u: bad loss record lost %llu total %llu after %lu",
					   r->cpu, (unsigned long long)l->lost,
					   (unsigned long long)l->total,
					   c->last_total[r->cpu]);
			c->last_total[r->cpu] = l->total;
			c->lost[r->cpu] += l->lost;
			continue;
		}
		ctx = r->event - STRESS_EVENT_BASE;
		if (ctx >= STRESS_NR_CTX) {
			check_fail(c, "unexpected event %u", r->event);
			continue;
		}
		const struct stress_payload *p = (const void *)r->payload;

		if (stress_check(p, r->size - sizeof(*r), r->cpu, ctx)) {
			check_fail(c, "cpu %u ctx %u: corrupt payload (seq %llu)",
				   r->cpu, ctx, (unsigned long long)p->seq);
			continue;
		}
		if (r->id != stress_id(r->cpu, ctx, p->seq))
			check_fail(c, "cpu %u: wrong abstract id", r->cpu);
		if ((r->flags & (MAGNET_RF_SOFTIRQ | MAGNET_RF_HARDIRQ |
				 MAGNET_RF_NMI)) != ctx_flags[ctx])
			check_fail(c, "cpu %u ctx %u: context flags %#x", r->cpu,
				   ctx, r->flags);
		if ((long long)p->seq < c->next_seq[r->cpu][ctx]) {
			check_fail(c, "cpu %u ctx %u: seq %llu after %lld (order)",
				   r->cpu, ctx, (unsigned long long)p->seq,
				   c->next_seq[r->cpu][ctx] - 1);
			continue;
		}
		c->gaps[r->cpu] += p->seq - c->next_seq[r->cpu][ctx];
		c->next_seq[r->cpu][ctx] = p->seq + 1;
		c->records[r->cpu][ctx]++;
		c->total_records++;
		if (ctx == STRESS_CTX_TASK) {
			if (c->tid[r->cpu] && c->tid[r->cpu] != (int)r->tid)
				check_fail(c, "cpu %u: task records from tids %d and %u",
					   r->cpu, c->tid[r->cpu], r->tid);
			c->tid[r->cpu] = r->tid;
		}
	}
}

struct run_arg {
	const char *cmd;
	pthread_t reader;
	volatile int done, acked;
	int err;
};

static void *run_thread(void *p)
{
	struct run_arg *a = p;

	a->err = write_file(STRESS_RUN, a->cmd);
	a->done = 1;
	/* Knock the reader out of a blocking wait until it notices. */
	while (!a->acked) {
		pthread_kill(a->reader, SIGUSR1);
		usleep(20000);
	}
	return NULL;
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

static int set_attrs(int fd, const struct stream_opts *o)
{
	if (lseek(fd, o->size_wm, MAGNET_SEEK_SIZE_WM) < 0 ||
	    lseek(fd, o->count_wm, MAGNET_SEEK_COUNT_WM) < 0 ||
	    lseek(fd, o->timeout_us, MAGNET_SEEK_TIMEOUT) < 0)
		return -errno;
	return 0;
}

/*
 * Read until EAGAIN with the watermarks off: everything left, checked
 * into @c (or thrown away if @c is NULL). Leaves the file O_NONBLOCK.
 */
static void drain(int fd, struct checker *c)
{
	static char buf[1 << 20] __attribute__((aligned(8)));
	ssize_t n;

	lseek(fd, 0, MAGNET_SEEK_SIZE_WM);
	lseek(fd, 0, MAGNET_SEEK_COUNT_WM);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (c)
			check_chunk(c, buf, n);
	if (c && n < 0 && errno != EAGAIN)
		check_fail(c, "drain read: %s", strerror(errno));
}

static void read_loop(int fd, const struct stream_opts *o, struct checker *c,
		      char *buf, struct run_arg *run)
{
	struct io_uring ring;
	struct epoll_event ev = { .events = EPOLLIN };
	int epfd = -1, sig = SIGRTMIN + 1;
	struct mapped *map = NULL;
	sigset_t set;
	ssize_t n = -1;

	switch (o->io) {
	case IO_READ:
		break;
	case IO_POLL:
		fcntl(fd, F_SETFL, O_NONBLOCK);
		break;
	case IO_EPOLL:
		fcntl(fd, F_SETFL, O_NONBLOCK);
		epfd = epoll_create1(0);
		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
		break;
	case IO_SIGIO:
		/* SIGIO itself comes when the queue of @sig overflows */
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigaddset(&set, SIGIO);
		fcntl(fd, F_SETOWN, getpid());
		fcntl(fd, F_SETSIG, sig);
		if (fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC) < 0)
			check_fail(c, "O_ASYNC: %s", strerror(errno));
		break;
	case IO_URING:
		if (io_uring_queue_init(4, &ring, 0) < 0) {
			check_fail(c, "io_uring_queue_init failed");
			return;
		}
		break;
	case IO_MAP:
		fcntl(fd, F_SETFL, O_NONBLOCK);
		map = mapped_open(fd);
		if (!map) {
			check_fail(c, "mapping the data file: %s", strerror(errno));
			return;
		}
		break;
	}

	while (!run->done) {
		switch (o->io) {
		case IO_READ:
			n = read(fd, buf, o->read_size);
			if (n < 0 && errno == EINTR)
				continue;
			break;
		case IO_POLL: {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };

			if (poll(&pfd, 1, 100) <= 0)
				continue;
			c->wakeups++;
			n = read(fd, buf, o->read_size);
			break;
		}
		case IO_EPOLL:
			if (epoll_wait(epfd, &ev, 1, 100) <= 0)
				continue;
			c->wakeups++;
			n = read(fd, buf, o->read_size);
			break;
		case IO_MAP: {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			const char *data;
			bool readable = true;

			if (poll(&pfd, 1, 100) <= 0)
				continue;
			c->wakeups++;
			/* Each run where the kernel wrote it, given back after. */
			while ((n = mapped_next(map, &data, readable)) > 0) {
				readable = false;
				check_chunk(c, data, n);
				if (o->read_delay_us)
					usleep(o->read_delay_us);
			}
			if (n < 0)
				check_fail(c, "mapped_next: %s", strerror(errno));
			if (mapped_consume(map))
				check_fail(c, "consume: %s", strerror(errno));
			continue;
		}
		case IO_SIGIO: {
			struct timespec ts = { 0, 100000000 }, zero = { 0, 0 };
			siginfo_t si;
			int got, i;

			got = sigtimedwait(&set, &si, &ts);
			if (got != sig && got != SIGIO)
				continue;
			if (got == sig && (si.si_fd != fd || !(si.si_band & POLLIN)))
				check_fail(c, "SIGIO with fd %d band %#lx",
					   si.si_fd, (long)si.si_band);
			c->wakeups++;
			/* take the signals queued meanwhile, then read until
			 * EAGAIN, but come back to them while data keeps coming
			 */
			while (sigtimedwait(&set, &si, &zero) > 0)
				;
			for (i = 0; i < 16 && (n = read(fd, buf, o->read_size)) > 0; i++) {
				if (o->read_delay_us)
					usleep(o->read_delay_us);
				check_chunk(c, buf, n);
			}
			continue;
		}
		case IO_URING: {
			struct __kernel_timespec ts = { 0, 100000000 };
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;
			int ret, pending = 1;

			io_uring_prep_read(sqe, fd, buf, o->read_size, 0);
			sqe->user_data = 1;
			io_uring_submit(&ring);
			while (((ret = io_uring_wait_cqe_timeout(&ring, &cqe, &ts)) == -ETIME ||
				ret == -EINTR) && !run->done)
				;
			if (ret == -EINTR)
				ret = -ETIME;	/* the run is over */
			if (ret == -ETIME) {
				/* the run is over: cancel the read */
				sqe = io_uring_get_sqe(&ring);
				io_uring_prep_cancel64(sqe, 1, 0);
				sqe->user_data = 2;
				io_uring_submit(&ring);
				pending = 2;
			}
			n = -1;
			errno = EAGAIN;
			while (pending--) {
				do
					ret = io_uring_wait_cqe(&ring, &cqe);
				while (ret == -EINTR);
				if (ret < 0) {
					check_fail(c, "io_uring wait: %s", strerror(-ret));
					goto out;
				}
				if (cqe->user_data == 1 && cqe->res >= 0) {
					n = cqe->res;
					c->wakeups++;
				} else if (cqe->user_data == 1 &&
					   cqe->res != -ECANCELED) {
					errno = -cqe->res;
				}
				io_uring_cqe_seen(&ring, cqe);
			}
			break;
		}
		}
		if (n > 0 && o->read_delay_us)
			usleep(o->read_delay_us);
		if (n > 0)
			check_chunk(c, buf, n);
		else if (n == 0)
			check_fail(c, "read returned 0 (EOF) while running");
		else if (errno != EAGAIN && errno != EINTR)
			check_fail(c, "read: %s", strerror(errno));
	}
out:
	if (o->io == IO_URING)
		io_uring_queue_exit(&ring);
	mapped_close(map);
	if (epfd >= 0)
		close(epfd);
	if (o->io == IO_SIGIO)
		fcntl(fd, F_SETFL, O_NONBLOCK);
}

static int cmd_stream(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "run", required_argument, NULL, 'r' },
		{ "io", required_argument, NULL, 'i' },
		{ "size-wm", required_argument, NULL, 's' },
		{ "count-wm", required_argument, NULL, 'c' },
		{ "timeout-us", required_argument, NULL, 't' },
		{ "read-size", required_argument, NULL, 'n' },
		{ "read-delay-us", required_argument, NULL, 'd' },
		{ "expect-loss", no_argument, NULL, 'L' },
		{ "expect-no-loss", no_argument, NULL, 'N' },
		{ "overwrite", no_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'T' },
		{}
	};
	struct stream_opts o = {
		.buffer = "default", .run = "ms=1000", .read_size = 1 << 20,
		.expect_loss = -1,
	};
	static struct checker c;
	static struct stress_result sr;
	struct cpu_stats st[MAX_CPUS], before[MAX_CPUS];
	struct run_arg run = {};
	const char *name = "stream";
	char path[256], *buf;
	pthread_t tid;
	int fd, opt, ncpu, cpu, ctx, i;
	bool ok = true;
	char why[512] = "";

	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (opt) {
		case 'b': o.buffer = optarg; break;
		case 'r': o.run = optarg; break;
		case 's': o.size_wm = atol(optarg); break;
		case 'c': o.count_wm = atol(optarg); break;
		case 't': o.timeout_us = atol(optarg); break;
		case 'n': o.read_size = atol(optarg); break;
		case 'd': o.read_delay_us = atol(optarg); break;
		case 'L': o.expect_loss = 1; break;
		case 'N': o.expect_loss = 0; break;
		case 'o': o.overwrite = true; break;
		case 'T': name = optarg; break;
		case 'i':
			for (i = 0; i < (int)ARRAY_SIZE(io_names); i++)
				if (!strcmp(optarg, io_names[i]))
					break;
			if (i == (int)ARRAY_SIZE(io_names)) {
				fprintf(stderr, "unknown --io %s\n", optarg);
				return 2;
			}
			o.io = i;
			break;
		default:
			return 2;
		}
	}
	buf = aligned_alloc(8, o.read_size < MAGNET_RECORD_MAX ?
			    MAGNET_RECORD_MAX : o.read_size);
	snprintf(path, sizeof(path), DATA_DIR "%s", o.buffer);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		result(false, name, "open %s: %s", path, strerror(errno));
		return summary();
	}
	/* Start from an empty buffer, whatever an earlier reader left. */
	drain(fd, NULL);
	fcntl(fd, F_SETFL, 0);
	if (set_attrs(fd, &o)) {
		result(false, name, "lseek attributes: %s", strerror(errno));
		return summary();
	}
	/* Counters are per buffer lifetime: compare what this run added. */
	read_stats(o.buffer, before, &ncpu);
	for (cpu = 0; cpu < ncpu; cpu++)
		c.last_total[cpu] = before[cpu].lost;
	/* the SIGIO signal is taken with sigtimedwait(): block it everywhere */
	sigset_t rt;

	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN + 1);
	sigaddset(&rt, SIGIO);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);
	/* no SA_RESTART: the signal must break a blocking read */
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_sigusr1 }, NULL);
	run.cmd = o.run;
	run.reader = pthread_self();
	pthread_create(&tid, NULL, run_thread, &run);
	read_loop(fd, &o, &c, buf, &run);
	run.acked = 1;
	pthread_join(tid, NULL);
	drain(fd, &c);

	if (run.err) {
		result(false, name, "stress run \"%s\": %s", o.run,
		       strerror(-run.err));
		return summary();
	}
	read_stress_result(&sr);
	read_stats(o.buffer, st, &ncpu);
	stats_sub(st, before, ncpu);

#define FAIL(...) do { if (ok) snprintf(why, sizeof(why), __VA_ARGS__); \
		       ok = false; } while (0)
	if (c.errors)
		FAIL("%lu bad records, first: %s", c.errors, c.first_error);
	unsigned long total_lost = 0, total_produced = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		unsigned long att = 0, trailing = 0;

		for (ctx = 0; ctx < STRESS_NR_CTX; ctx++) {
			att += sr.attempts[cpu][ctx];
			/* drops after the last record read */
			trailing += sr.attempts[cpu][ctx] - c.next_seq[cpu][ctx];
			if (!o.overwrite &&
			    c.records[cpu][ctx] != sr.ok[cpu][ctx])
				FAIL("cpu %d ctx %d: %lu records logged, %lu read (drop mode loses nothing logged)",
				     cpu, ctx, sr.ok[cpu][ctx],
				     c.records[cpu][ctx]);
		}
		if (st[cpu].produced != att)
			FAIL("cpu %d: produced %lu != %lu attempts", cpu,
			     st[cpu].produced, att);
		if (st[cpu].produced != st[cpu].read + st[cpu].lost)
			FAIL("cpu %d: produced %lu != read %lu + lost %lu", cpu,
			     st[cpu].produced, st[cpu].read, st[cpu].lost);
		unsigned long got = 0;

		for (ctx = 0; ctx < STRESS_NR_CTX; ctx++)
			got += c.records[cpu][ctx];
		if (got != st[cpu].read)
			FAIL("cpu %d: %lu records read, kernel says %lu", cpu,
			     got, st[cpu].read);
		if (c.lost[cpu] != st[cpu].lost)
			FAIL("cpu %d: loss records sum to %lu, kernel lost %lu",
			     cpu, c.lost[cpu], st[cpu].lost);
		if (c.gaps[cpu] + trailing != st[cpu].lost)
			FAIL("cpu %d: %lu sequence gaps, kernel lost %lu", cpu,
			     c.gaps[cpu] + trailing, st[cpu].lost);
		if (sr.tid[cpu] && c.tid[cpu] && sr.tid[cpu] != c.tid[cpu])
			FAIL("cpu %d: task records carry tid %d, writer was %d",
			     cpu, c.tid[cpu], sr.tid[cpu]);
		if (st[cpu].discarded)
			FAIL("cpu %d: %lu records discarded", cpu,
			     st[cpu].discarded);
		total_lost += st[cpu].lost;
		total_produced += st[cpu].produced;
	}
	if (!total_produced)
		FAIL("nothing was produced");
	/* Every context the run asked for must have logged (NMI: if any). */
	unsigned long per_ctx[STRESS_NR_CTX] = {};
	static const char * const ctx_names[] = STRESS_CTX_NAMES;

	for (ctx = 0; ctx < STRESS_NR_CTX; ctx++)
		for (cpu = 0; cpu < ncpu; cpu++)
			per_ctx[ctx] += c.records[cpu][ctx];
	for (ctx = 0; ctx < STRESS_NR_CTX; ctx++) {
		bool asked = !strstr(o.run, "ctx=") || strstr(o.run, ctx_names[ctx]);

		if (asked && !per_ctx[ctx] && ctx != STRESS_CTX_NMI)
			FAIL("no %s-context record arrived", ctx_names[ctx]);
	}
	if (!strstr(o.run, "ctx=") && !sr.nested)
		FAIL("no write interrupted another: nesting was not exercised");
	if (o.expect_loss == 0 && total_lost)
		FAIL("%lu records lost where none should be", total_lost);
	if (o.expect_loss == 1 && !total_lost)
		FAIL("no loss where the buffer should overflow");
	if (o.io != IO_READ && !c.wakeups)
		FAIL("never woken by %s", io_names[o.io]);
	printf("# %s: io=%s produced=%lu read=%lu lost=%lu loss_records=%lu reads=%lu wakeups=%lu bytes=%lu task/softirq/hardirq/nmi=%lu/%lu/%lu/%lu nested=%lu\n",
	       name, io_names[o.io], total_produced, c.total_records,
	       total_lost, c.loss_records, c.reads, c.wakeups, c.bytes,
	       per_ctx[0], per_ctx[1], per_ctx[2], per_ctx[3], sr.nested);
	if (!per_ctx[STRESS_CTX_NMI] && !strstr(o.run, "ctx="))
		printf("# %s: no NMI-context records: this machine gave no NMIs\n", name);
	result(ok, name, "%s", why);
	close(fd);
	free(buf);
	return summary();
}

/* ---- read attributes and the data file's rules ------------------------- */

static int open_data(const char *buffer, int flags)
{
	char path[256];

	snprintf(path, sizeof(path), DATA_DIR "%s", buffer);
	return open(path, flags);
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

static bool select_readable(int fd)
{
	struct timeval tv = { 0, 0 };
	fd_set set;

	FD_ZERO(&set);
	FD_SET(fd, &set);
	return select(fd + 1, &set, NULL, NULL, &tv) == 1 && FD_ISSET(fd, &set);
}

/* Make exactly @per_cpu task-context records on every online CPU. */
static int produce(const char *buffer, int per_cpu, int payload)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "buffer=%s ctx=task events=%d ms=300 min=%d max=%d",
		 buffer, per_cpu, payload, payload);
	return write_file(STRESS_RUN, cmd);
}

struct blocked_read {
	int fd;
	size_t size;
	ssize_t n;
	int err;
	double returned_ms;
};

static void *blocked_read_thread(void *p)
{
	struct blocked_read *b = p;
	static char buf[1 << 20];

	b->n = read(b->fd, buf, b->size);
	b->err = errno;
	b->returned_ms = now_ms();
	return NULL;
}

static long ncpus(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* Throw away whatever is waiting; keep the file's flags. */
static void drain_all(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	drain(fd, NULL);
	fcntl(fd, F_SETFL, fl);
}

static int cmd_attrs(int argc, char **argv)
{
	const char *buffer = argc > 1 ? argv[1] : "default";
	const long rec = sizeof(struct magnet_record) + sizeof(struct stress_payload);
	long n = ncpus(), per_cpu = 5, total = per_cpu * n;
	struct blocked_read b = {};
	pthread_t t;
	char small[64];
	double t0;
	int fd, fd2;

	fd = open_data(buffer, O_RDONLY);
	result(fd >= 0, "open data file", "%s", strerror(errno));
	if (fd < 0)
		return summary();
	drain_all(fd);

	/* One reader at a time, file against file and file against kernel. */
	fd2 = open_data(buffer, O_RDONLY);
	result(fd2 < 0 && errno == EBUSY, "second open gets EBUSY",
	       "got fd %d errno %s", fd2, strerror(errno));
	if (fd2 >= 0)
		close(fd2);
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "buffer=%s kreader=1 ms=10 ctx=task events=1",
		 buffer);
	int err = write_file(STRESS_RUN, cmd);

	result(err == -EBUSY, "kernel reader refused while the file is open",
	       "got %s", strerror(-err));
	fd2 = open_data(buffer, O_RDWR);
	result(fd2 < 0 && errno != EBUSY, "open for writing refused",
	       "got fd %d errno %s", fd2, strerror(errno));

	/* Bad attribute values: EINVAL, nothing changed. */
	struct { long long v; int whence; int err; const char *what; } bad[] = {
		{ -1, MAGNET_SEEK_SIZE_WM, EINVAL, "negative size watermark" },
		{ 1LL << 40, MAGNET_SEEK_SIZE_WM, EINVAL, "size watermark above ring size" },
		{ -5, MAGNET_SEEK_COUNT_WM, EINVAL, "negative count watermark" },
		{ 1LL << 40, MAGNET_SEEK_COUNT_WM, EINVAL, "count watermark above ring capacity" },
		{ -1, MAGNET_SEEK_TIMEOUT, EINVAL, "negative timeout" },
		{ MAGNET_TIMEOUT_MAX_US + 1, MAGNET_SEEK_TIMEOUT, EINVAL, "timeout above an hour" },
		{ 10, SEEK_SET, ESPIPE, "SEEK_SET to a position" },
		{ 10, SEEK_CUR, ESPIPE, "SEEK_CUR by an offset" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		off_t r = lseek(fd, bad[i].v, bad[i].whence);

		result(r == -1 && errno == bad[i].err, bad[i].what,
		       "lseek returned %lld errno %s", (long long)r,
		       strerror(errno));
	}
	result(lseek(fd, 0, SEEK_CUR) == 0 && lseek(fd, 0, SEEK_SET) == 0,
	       "position queries are harmless", "%s", strerror(errno));

	/* Count watermark: readiness exactly at the watermark. */
	result(produce(buffer, per_cpu, 32) == 0, "produce records", "%s",
	       strerror(errno));
	lseek(fd, total + 1, MAGNET_SEEK_COUNT_WM);
	result(!readable(fd, 0), "count watermark above available: not readable",
	       "poll says readable with %ld records, watermark %ld", total, total + 1);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	ssize_t r = read(fd, small, sizeof(small));

	result(r == -1 && errno == EAGAIN, "O_NONBLOCK read below watermark: EAGAIN",
	       "read returned %zd (%s)", r, strerror(errno));
	/* a rejected lseek left the watermark where it was */
	lseek(fd, -1, MAGNET_SEEK_COUNT_WM);
	result(!readable(fd, 0), "rejected lseek changed nothing",
	       "watermark changed by a rejected lseek");
	lseek(fd, total, MAGNET_SEEK_COUNT_WM);
	result(readable(fd, 0), "count watermark met: readable",
	       "poll says not readable with %ld records, watermark %ld", total, total);
	result(select_readable(fd), "select() agrees with poll()",
	       "select says not readable");
	lseek(fd, total + 1, MAGNET_SEEK_COUNT_WM);
	result(!select_readable(fd), "select() not readable below the watermark",
	       "select says readable");
	lseek(fd, total, MAGNET_SEEK_COUNT_WM);

	/* Size watermark likewise, in bytes. */
	lseek(fd, 0, MAGNET_SEEK_COUNT_WM);
	lseek(fd, total * rec + 1, MAGNET_SEEK_SIZE_WM);
	result(!readable(fd, 0), "size watermark above available: not readable",
	       "readable with %ld bytes, watermark %ld", total * rec, total * rec + 1);
	lseek(fd, total * rec, MAGNET_SEEK_SIZE_WM);
	result(readable(fd, 0), "size watermark met: readable",
	       "not readable with %ld bytes, watermark %ld", total * rec, total * rec);

	/* A buffer too small for the next record. */
	lseek(fd, 0, MAGNET_SEEK_SIZE_WM);
	r = read(fd, small, 16);
	result(r == -1 && errno == EMSGSIZE, "read buffer smaller than a record: EMSGSIZE",
	       "read returned %zd (%s)", r, strerror(errno));
	/* Whole records only: 3.5 records' room gives 3 records. */
	static char mid[4096];

	r = read(fd, mid, 3 * rec + rec / 2);
	result(r == 3 * rec, "read returns whole records only",
	       "read of %ld bytes returned %zd", 3 * rec + rec / 2, r);
	drain_all(fd);
	fcntl(fd, F_SETFL, 0);

	/* A blocking read returns when the count watermark is crossed. */
	lseek(fd, 2 * total, MAGNET_SEEK_COUNT_WM);
	b.fd = fd;
	b.size = 1 << 20;
	pthread_create(&t, NULL, blocked_read_thread, &b);
	produce(buffer, per_cpu, 32);	/* half the watermark */
	usleep(300000);
	double half_done = now_ms();

	result(!b.returned_ms, "blocking read waits below the count watermark",
	       "returned %zd after half the records", b.n);
	produce(buffer, per_cpu, 32);
	pthread_join(t, NULL);
	result(b.n == 2 * total * rec && b.returned_ms >= half_done,
	       "blocking read returns once the count watermark is met",
	       "read returned %zd (want %ld), %s", b.n, 2 * total * rec,
	       strerror(b.err));

	/* Size watermark on a blocking read. */
	lseek(fd, 0, MAGNET_SEEK_COUNT_WM);
	lseek(fd, 2 * total * rec, MAGNET_SEEK_SIZE_WM);
	memset(&b, 0, sizeof(b));
	b.fd = fd;
	b.size = 1 << 20;
	pthread_create(&t, NULL, blocked_read_thread, &b);
	produce(buffer, per_cpu, 32);
	usleep(300000);
	half_done = now_ms();
	result(!b.returned_ms, "blocking read waits below the size watermark",
	       "returned %zd", b.n);
	produce(buffer, per_cpu, 32);
	pthread_join(t, NULL);
	result(b.n == 2 * total * rec && b.returned_ms >= half_done,
	       "blocking read returns once the size watermark is met",
	       "read returned %zd (want %ld)", b.n, 2 * total * rec);

	/* Timeout: returns what there is once it expires. */
	lseek(fd, 0, MAGNET_SEEK_SIZE_WM);
	lseek(fd, 10 * total, MAGNET_SEEK_COUNT_WM);
	lseek(fd, 400000, MAGNET_SEEK_TIMEOUT);
	produce(buffer, per_cpu, 32);
	memset(&b, 0, sizeof(b));
	b.fd = fd;
	b.size = 1 << 20;
	t0 = now_ms();
	blocked_read_thread(&b);
	result(b.n == total * rec && b.returned_ms - t0 >= 390,
	       "read timeout returns the records there are after it expires",
	       "read returned %zd (want %ld) after %.0f ms (timeout 400 ms)",
	       b.n, total * rec, b.returned_ms - t0);

	/* Timeout with nothing there: waits for the first record. */
	memset(&b, 0, sizeof(b));
	b.fd = fd;
	b.size = 1 << 20;
	lseek(fd, 100000, MAGNET_SEEK_TIMEOUT);
	pthread_create(&t, NULL, blocked_read_thread, &b);
	usleep(500000);
	result(!b.returned_ms, "expired timeout with no record keeps waiting",
	       "returned %zd", b.n);
	produce(buffer, 1, 32);
	pthread_join(t, NULL);
	result(b.n >= rec, "then returns the first records", "returned %zd", b.n);

	/* Lowering the watermark releases a blocked reader. */
	drain_all(fd);
	lseek(fd, 0, MAGNET_SEEK_TIMEOUT);
	lseek(fd, 10 * total, MAGNET_SEEK_COUNT_WM);
	produce(buffer, per_cpu, 32);
	memset(&b, 0, sizeof(b));
	b.fd = fd;
	b.size = 1 << 20;
	pthread_create(&t, NULL, blocked_read_thread, &b);
	usleep(200000);
	lseek(fd, total, MAGNET_SEEK_COUNT_WM);
	pthread_join(t, NULL);
	result(b.n == total * rec, "lowering the watermark releases a blocked read",
	       "read returned %zd (want %ld)", b.n, total * rec);

	/* Attributes belong to the open file: reset on the next open. */
	lseek(fd, 10 * total, MAGNET_SEEK_COUNT_WM);
	close(fd);
	fd = open_data(buffer, O_RDONLY | O_NONBLOCK);
	produce(buffer, 1, 32);
	result(fd >= 0 && readable(fd, 0), "attributes reset when reopened",
	       "not readable after reopen");
	drain_all(fd);
	close(fd);
	return summary();
}

/* ---- kernel-space reader ------------------------------------------------ */

/* magnet-test kreader BUFFER [RUN ARGS]: magnet_stress consumes with the
 * in-kernel reader API while it writes; its findings must match the
 * buffer's counters exactly.
 */
static int cmd_kreader(int argc, char **argv)
{
	const char *buffer = argc > 1 ? argv[1] : "default";
	const char *args = argc > 2 ? argv[2] : "ms=1000";
	unsigned long records = 0, lost = 0, errors = 1;
	unsigned long produced = 0, read = 0, klost = 0;
	struct cpu_stats st[MAX_CPUS], before[MAX_CPUS];
	char cmd[512], line[512], first[256] = "";
	int err, ncpu, cpu;
	FILE *f;

	read_stats(buffer, before, &ncpu);
	snprintf(cmd, sizeof(cmd), "buffer=%s kreader=1 %s", buffer, args);
	err = write_file(STRESS_RUN, cmd);
	result(!err, "kernel reader run", "%s", strerror(-err));
	f = fopen(STRESS_RESULT, "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "kreader records %lu lost %lu errors %lu %255[^\n]",
		       &records, &lost, &errors, first);
	if (f)
		fclose(f);
	read_stats(buffer, st, &ncpu);
	stats_sub(st, before, ncpu);
	for (cpu = 0; cpu < ncpu; cpu++) {
		produced += st[cpu].produced;
		read += st[cpu].read;
		klost += st[cpu].lost;
	}
	printf("# kreader: produced=%lu read=%lu lost=%lu\n", produced, records, lost);
	result(errors == 0, "kernel reader sees no bad record", "%lu bad, first: %s",
	       errors, first);
	result(records > 0 && records == read, "kernel reader got every record read",
	       "it got %lu, kernel counted %lu read", records, read);
	result(lost == klost && produced == read + klost,
	       "kernel reader's loss records add up",
	       "loss records %lu, kernel lost %lu, produced %lu read %lu",
	       lost, klost, produced, read);
	return summary();
}

/* ---- control/format ---------------------------------------------------- */

static int cmd_format(void)
{
	FILE *f = fopen(CONTROL_DIR "format", "r");
	char line[256], type[16], field[32];
	size_t off, size;
	int version = -1, header = -1, fields = 0, bad = 0;

	if (!f) {
		result(false, "format file", "%s", strerror(errno));
		return summary();
	}
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "version: %d", &version);
		sscanf(line, "header_size: %d", &header);
		if (sscanf(line, "field: %15s %31[^;]; offset: %zu; size: %zu",
			   type, field, &off, &size) == 4) {
			fields++;
#define CHECK(name) if (!strcmp(field, #name) && \
	(off != offsetof(struct magnet_record, name) || \
	 size != sizeof(((struct magnet_record *)0)->name))) bad++
			CHECK(size); CHECK(event); CHECK(flags); CHECK(cpu);
			CHECK(tgid); CHECK(tid); CHECK(id); CHECK(timestamp);
		}
	}
	fclose(f);
	result(version == MAGNET_FORMAT_VERSION, "format version matches",
	       "module %d, header %d", version, MAGNET_FORMAT_VERSION);
	result(header == (int)sizeof(struct magnet_record),
	       "header size matches", "module %d, header %zu", header,
	       sizeof(struct magnet_record));
	result(fields == 9 && !bad, "field layout matches",
	       "%d fields, %d differ", fields, bad);
	return summary();
}

/* Who we are and what each of @n calls from @t0 to @t1 cost. */
static void print_ns_per_call(const struct timespec *t0,
			      const struct timespec *t1, long n)
{
	printf("tgid %d tid %ld ns_per_call %.1f\n", getpid(),
	       (long)syscall(SYS_gettid),
	       n ? ((t1->tv_sec - t0->tv_sec) * 1e9 +
		    (t1->tv_nsec - t0->tv_nsec)) / n : 0.0);
}

/*
 * syscalls N [RATE]: make N getppid() calls from this thread (at most RATE
 * a second when RATE is given and not 0), then say who we are and what a
 * call cost, or took at that pace.
 */
static int cmd_syscalls(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 0;
	double rate = argc > 2 ? atof(argv[2]) : 0;
	struct timespec t0, t1, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		syscall(SYS_getppid);
		/* Paced: every 64 calls, wait for the schedule to catch up. */
		while (rate > 0 && (i & 63) == 63) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) +
			    (now.tv_nsec - t0.tv_nsec) / 1e9 >= (i + 1) / rate)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_ns_per_call(&t0, &t1, n);
	return 0;
}

/*
 * spans N: N spans begun and ended through libmagnet (2N calls, each a
 * write to the span device); prints ns per call as syscalls does.
 */
static int cmd_spans(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 0;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (magnet_span_begin("bench", NULL) || magnet_span_end(NULL)) {
			perror("magnet-test spans");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_ns_per_call(&t0, &t1, 2 * n);
	return 0;
}

/*
 * clock-step NS: step CLOCK_REALTIME by NS nanoseconds (signed), exactly:
 * a node's clock put off on purpose (the cluster test's known offset).
 * ADJ_SETOFFSET adds it in the kernel, in one step: a clock read and set
 * again would lose the time between the two (a loaded virtual machine's
 * vCPU waits milliseconds).
 */
static int cmd_clock_step(int argc, char **argv)
{
	long long ns = argc > 1 ? atoll(argv[1]) : 0;
	struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };

	/* (tv_usec holds ns with ADJ_NANO, and is never negative) */
	tx.time.tv_sec = ns / 1000000000LL;
	tx.time.tv_usec = ns % 1000000000LL;
	if (tx.time.tv_usec < 0) {
		tx.time.tv_sec--;
		tx.time.tv_usec += 1000000000LL;
	}
	if (clock_adjtime(CLOCK_REALTIME, &tx) < 0) {
		perror("magnet-test clock-step");
		return 1;
	}
	return 0;
}

/*
 * span-write FILE N SIZE [plain]: N writes of SIZE bytes to FILE (opened
 * O_DIRECT), each in a root span "write" of its own trace; prints each
 * span's traceparent, one per line, and on stderr "N writes in NS ns"
 * (CLOCK_MONOTONIC). plain: the writes alone, no spans.
 */
static int cmd_span_write(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	size_t size = argc > 3 ? (size_t)atol(argv[3]) : 65536;
	bool plain = argc > 4 && !strcmp(argv[4], "plain");
	struct timespec t0, t1;
	char tp[MAGNET_TRACEPARENT_LEN + 1];
	void *buf;
	int fd;

	if (argc < 3 || !size || size % 4096 ||
	    posix_memalign(&buf, 4096, size)) {
		fprintf(stderr, "usage: magnet-test span-write FILE N SIZE (SIZE a multiple of 4096)\n");
		return 2;
	}
	memset(buf, 0x5a, size);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fd = open(argv[1], O_WRONLY | O_DIRECT);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (long i = 0; i < n; i++) {
		if (plain) {
			if (pwrite(fd, buf, size, (off_t)i * size) != (ssize_t)size) {
				perror("magnet-test span-write");
				return 1;
			}
			continue;
		}
		if (magnet_span_begin("write", NULL) ||
		    magnet_span_traceparent(tp) ||
		    pwrite(fd, buf, size, (off_t)i * size) != (ssize_t)size ||
		    magnet_span_end(NULL)) {
			perror("magnet-test span-write");
			return 1;
		}
		puts(tp);
	}
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "%ld writes in %lld ns\n", n,
		(long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
		(t1.tv_nsec - t0.tv_nsec));
	free(buf);
	return 0;
}

/*
 * devnull N: N writes of 48 bytes (a span's begin, named "bench") to
 * /dev/null; prints ns per call as syscalls does.
 */
static int cmd_devnull(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 0;
	int fd = open("/dev/null", O_WRONLY);
	struct timespec t0, t1;
	char buf[48] = "";

	if (fd < 0) {
		perror("magnet-test devnull");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf)) {
			perror("magnet-test devnull");
			return 1;
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(fd);
	print_ns_per_call(&t0, &t1, n);
	return 0;
}

/*
 * udp ADDR PORT COUNT [SRCPORT]: send COUNT datagrams to ADDR:PORT (an
 * IPv4 or IPv6 address of this machine, e.g. 127.0.0.1 or ::1) from
 * SRCPORT (default: any), to a socket of our own bound there, and receive
 * them, each starting with its number as for udp-send. Prints "sent N
 * received M".
 */
static int cmd_udp(int argc, char **argv)
{
	struct sockaddr_storage dst = {}, src = {};
	socklen_t alen;
	int family, rx, tx, i, n, got = 0;
	struct timeval tv = { .tv_sec = 2 };
	char payload[32] = "magnet udp test";

	if (argc < 4) {
		fprintf(stderr, "usage: magnet-test udp ADDR PORT COUNT [SRCPORT]\n");
		return 2;
	}
	n = atoi(argv[3]);
	if (inet_pton(AF_INET, argv[1],
		      &((struct sockaddr_in *)&dst)->sin_addr) == 1) {
		family = AF_INET;
		alen = sizeof(struct sockaddr_in);
		((struct sockaddr_in *)&dst)->sin_port = htons(atoi(argv[2]));
		((struct sockaddr_in *)&src)->sin_port =
			htons(argc > 4 ? atoi(argv[4]) : 0);
	} else if (inet_pton(AF_INET6, argv[1],
			     &((struct sockaddr_in6 *)&dst)->sin6_addr) == 1) {
		family = AF_INET6;
		alen = sizeof(struct sockaddr_in6);
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(atoi(argv[2]));
		((struct sockaddr_in6 *)&src)->sin6_port =
			htons(argc > 4 ? atoi(argv[4]) : 0);
	} else {
		fprintf(stderr, "magnet-test udp: bad address %s\n", argv[1]);
		return 2;
	}
	dst.ss_family = src.ss_family = family;
	rx = socket(family, SOCK_DGRAM, 0);
	tx = socket(family, SOCK_DGRAM, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&dst, alen) ||
	    bind(tx, (struct sockaddr *)&src, alen)) {
		perror("magnet-test udp: socket");
		return 1;
	}
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < n; i++) {
		/* Numbered, as udp-send's: "00000007-magnet udp test". */
		snprintf(payload, sizeof(payload), "%08d-magnet udp test",
			 i % 100000000);
		if (sendto(tx, payload, sizeof(payload), 0,
			   (struct sockaddr *)&dst, alen) < 0) {
			perror("magnet-test udp: sendto");
			return 1;
		}
		/* Receive as we go: the socket's queue never overflows. */
		if (recv(rx, payload, sizeof(payload), 0) > 0)
			got++;
	}
	printf("sent %d received %d\n", n, got);
	return got == n ? 0 : 1;
}

/* ADDR and PORT into @sa; returns its length, 0 if ADDR is no address. */
static socklen_t sockaddr_of(const char *addr, const char *port,
			     struct sockaddr_storage *sa)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)sa;

	memset(sa, 0, sizeof(*sa));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(atoi(port));
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(atoi(port));
		return sizeof(*sin6);
	}
	fprintf(stderr, "magnet-test: bad address %s\n", addr);
	return 0;
}

/*
 * udp-send ADDR PORT COUNT SIZE [SRCPORT]: send COUNT datagrams of SIZE
 * bytes to ADDR:PORT, 1 ms apart (the receiver keeps up), each starting
 * with its number ("00000000-" ...) when SIZE >= 9. Prints "sent N".
 * With LINGER=S in the environment, it then stays S seconds (for tests
 * that look the sender up by its pid). With IPOPTS=rr, IPv4 datagrams
 * carry a record-route option (8 bytes: a header of 28).
 */
static int cmd_udp_send(int argc, char **argv)
{
	struct sockaddr_storage dst, src;
	char payload[65536];
	socklen_t alen;
	int fd, i, n, size;

	if (argc < 5) {
		fprintf(stderr, "usage: magnet-test udp-send ADDR PORT COUNT SIZE [SRCPORT]\n");
		return 2;
	}
	n = atoi(argv[3]);
	size = atoi(argv[4]);
	alen = sockaddr_of(argv[1], argv[2], &dst);
	if (!alen || size < 0 || size > (int)sizeof(payload))
		return 2;
	sockaddr_of(dst.ss_family == AF_INET ? "0.0.0.0" : "::",
		    argc > 5 ? argv[5] : "0", &src);
	for (i = 0; i < size; i++)
		payload[i] = 'a' + i % 26;
	fd = socket(dst.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, alen)) {
		perror("magnet-test udp-send: socket");
		return 1;
	}
	if (getenv("IPOPTS") && !strcmp(getenv("IPOPTS"), "rr")) {
		/* record route, room for one address; then the end */
		static const unsigned char rr[8] = { 7, 7, 4, 0, 0, 0, 0, 0 };

		if (dst.ss_family != AF_INET ||
		    setsockopt(fd, IPPROTO_IP, IP_OPTIONS, rr, sizeof(rr))) {
			perror("magnet-test udp-send: IP_OPTIONS");
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		/* Each datagram starts with its number: "00000042". */
		if (size >= 8) {
			snprintf(payload, 9, "%08d", i % 100000000);
			payload[8] = '-';
		}
		if (sendto(fd, payload, size, 0, (struct sockaddr *)&dst,
			   alen) != size) {
			perror("magnet-test udp-send: sendto");
			return 1;
		}
		usleep(1000);
	}
	printf("sent %d\n", n);
	fflush(stdout);
	if (getenv("LINGER"))
		sleep(atoi(getenv("LINGER")));
	return 0;
}

/*
 * udp-calls ADDR PORT N SIZE: N sendto() calls of SIZE bytes to ADDR:PORT
 * from one unbound socket, unpaced, errors ignored (a blackhole route
 * refuses each call after the socket layer), then what a call cost,
 * printed as syscalls prints it (for the benchmarks).
 */
static int cmd_udp_calls(int argc, char **argv)
{
	struct sockaddr_storage dst;
	struct timespec t0, t1;
	char payload[2048] = "";
	socklen_t alen;
	long i, n;
	int fd, size;

	if (argc < 5) {
		fprintf(stderr, "usage: magnet-test udp-calls ADDR PORT N SIZE\n");
		return 2;
	}
	alen = sockaddr_of(argv[1], argv[2], &dst);
	n = atol(argv[3]);
	size = atoi(argv[4]);
	if (!alen || size < 0 || size > (int)sizeof(payload))
		return 2;
	fd = socket(dst.ss_family, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("magnet-test udp-calls: socket");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		(void)!sendto(fd, payload, size, 0, (struct sockaddr *)&dst,
			      alen);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_ns_per_call(&t0, &t1, n);
	return 0;
}

/*
 * udp-recv ADDR PORT COUNT: receive COUNT datagrams on ADDR:PORT (at most
 * 5 s of silence). Prints "received N BYTES". With HOLD=1 in the
 * environment it reads nothing until SIGUSR1, with a receive buffer of
 * 64 MiB (SO_RCVBUFFORCE) to hold them all meanwhile: no datagram's
 * delivery wakes it or meets it reading, so every datagram costs the
 * kernel the same, whatever the rate.
 */
static int cmd_udp_recv(int argc, char **argv)
{
	struct sockaddr_storage sa;
	struct timeval tv = { .tv_sec = 5 };
	char buf[65536];
	sigset_t usr1;
	long bytes = 0;
	socklen_t alen;
	int fd, n, got = 0;
	ssize_t r;

	if (argc < 4) {
		fprintf(stderr, "usage: magnet-test udp-recv ADDR PORT COUNT\n");
		return 2;
	}
	alen = sockaddr_of(argv[1], argv[2], &sa);
	n = atoi(argv[3]);
	if (!alen)
		return 2;
	/* (blocked before "ready": a signal sent after it waits for sigwait) */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	fd = socket(sa.ss_family, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, alen)) {
		perror("magnet-test udp-recv: socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	printf("ready\n");
	fflush(stdout);
	if (getenv("HOLD")) {
		int size = 64 << 20, sig;

		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size,
			       sizeof(size))) {
			perror("magnet-test udp-recv: SO_RCVBUFFORCE");
			return 1;
		}
		printf("holding\n");
		fflush(stdout);
		sigwait(&usr1, &sig);
	}
	while (got < n && (r = recv(fd, buf, sizeof(buf), 0)) >= 0) {
		got++;
		bytes += r;
	}
	printf("received %d %ld\n", got, bytes);
	return got == n ? 0 : 1;
}

/*
 * tcp-send ADDR PORT COUNT SIZE: connect to ADDR:PORT with TCP_NODELAY and
 * write COUNT times SIZE bytes, 2 ms apart, each starting with its number
 * as for udp-send, then close. Prints "sent N BYTES".
 */
static int cmd_tcp_send(int argc, char **argv)
{
	struct sockaddr_storage sa;
	char payload[65536];
	socklen_t alen;
	int fd, i, n, size, one = 1;

	if (argc < 5) {
		fprintf(stderr, "usage: magnet-test tcp-send ADDR PORT COUNT SIZE\n");
		return 2;
	}
	alen = sockaddr_of(argv[1], argv[2], &sa);
	n = atoi(argv[3]);
	size = atoi(argv[4]);
	if (!alen || size <= 0 || size > (int)sizeof(payload))
		return 2;
	for (i = 0; i < size; i++)
		payload[i] = 'A' + i % 26;
	fd = socket(sa.ss_family, SOCK_STREAM, 0);
	if (fd < 0) {
		perror("magnet-test tcp-send: socket");
		return 1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; connect(fd, (struct sockaddr *)&sa, alen); i++) {
		if (i == 50) {
			perror("magnet-test tcp-send: connect");
			return 1;
		}
		usleep(100000);
	}
	for (i = 0; i < n; i++) {
		if (size >= 8) {
			snprintf(payload, 9, "%08d", i % 100000000);
			payload[8] = '-';
		}
		if (write(fd, payload, size) != size) {
			perror("magnet-test tcp-send: write");
			return 1;
		}
		usleep(2000);
	}
	close(fd);
	printf("sent %d %ld\n", n, (long)n * size);
	return 0;
}

/*
 * tcp-recv ADDR PORT: accept one connection on ADDR:PORT and read it to
 * the end. Prints "received BYTES".
 */
static int cmd_tcp_recv(int argc, char **argv)
{
	struct sockaddr_storage sa;
	char buf[65536];
	long bytes = 0;
	socklen_t alen;
	int fd, c, one = 1;
	ssize_t r;

	if (argc < 3) {
		fprintf(stderr, "usage: magnet-test tcp-recv ADDR PORT\n");
		return 2;
	}
	alen = sockaddr_of(argv[1], argv[2], &sa);
	if (!alen)
		return 2;
	fd = socket(sa.ss_family, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, alen) || listen(fd, 1)) {
		perror("magnet-test tcp-recv: socket");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	c = accept(fd, NULL, NULL);
	if (c < 0) {
		perror("magnet-test tcp-recv: accept");
		return 1;
	}
	while ((r = read(c, buf, sizeof(buf))) > 0)
		bytes += r;
	printf("received %ld\n", bytes);
	return 0;
}

static volatile bool spin_stop;

static void *spin_thread(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((long)arg, &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!spin_stop)
		syscall(SYS_getppid);
	return NULL;
}

/*
 * spin SECONDS [NICE]: getppid() in a loop on every CPU, for load; at
 * NICE, the threads take what CPU time the others leave them (nice 19:
 * a test's commands run at their own pace while every CPU spins between
 * them).
 */
static int cmd_spin(int argc, char **argv)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), i;
	pthread_t t[256];

	if (cpus > 256)
		cpus = 256;
	/* (the threads inherit it) */
	if (argc > 2 && setpriority(PRIO_PROCESS, 0, atoi(argv[2]))) {
		perror("magnet-test spin: setpriority");
		return 1;
	}
	for (i = 0; i < cpus; i++)
		pthread_create(&t[i], NULL, spin_thread, (void *)i);
	sleep(argc > 1 ? atoi(argv[1]) : 1);
	spin_stop = true;
	for (i = 0; i < cpus; i++)
		pthread_join(t[i], NULL);
	return 0;
}

/*
 * burn UNITS [STEPS]: CPU-bound work without system calls, in two
 * functions of one loop: burn_major() does four fifths of it and
 * burn_minor() one fifth (the same steps inlined in each, 4:1), each unit
 * STEPS steps (default a million; a multiple of 5).
 * The program is built with frame pointers and without sibling calls
 * (the Makefile), and neither is a leaf, so that a sampler can walk the
 * user stack from either to burn_loop() and cmd_burn(). Prints the wall
 * seconds it took.
 */
static volatile uint64_t burn_sink;

#define BURN_FP __attribute__((noinline))

/* (a call, so that the functions that work are not leaves: frames) */
static BURN_FP void burn_keep(uint64_t x)
{
	burn_sink = x;
}

static inline __attribute__((always_inline)) void burn_steps(long n)
{
	uint64_t x = burn_sink;

	while (n--)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	burn_keep(x);
}

static BURN_FP void burn_major(long steps)
{
	burn_steps(steps / 5 * 4);
}

static BURN_FP void burn_minor(long steps)
{
	burn_steps(steps / 5);
}

static BURN_FP void burn_loop(long units, long steps)
{
	while (units--) {
		burn_major(steps);
		burn_minor(steps);
	}
}

static BURN_FP int cmd_burn(int argc, char **argv)
{
	struct timespec a, b;
	long units = argc > 2 ? atol(argv[2]) : 0;
	long steps = argc > 3 ? atol(argv[3]) : 1000000;

	if (units <= 0 || steps <= 0 || steps % 5) {
		fprintf(stderr, "usage: magnet-test burn UNITS [STEPS] (UNITS > 0, STEPS a multiple of 5)\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	burn_loop(units, steps);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}

/*
 * insmod-nth N MODULE [PARAMS]: load MODULE with the Nth fault point of
 * the load (fail-nth: slab allocations, user copies, ...) failing, and
 * print "injected" or "not-reached" (N is beyond the load's fault
 * points), then "loaded" or the load's error. Exit 0 if it loaded.
 */
static int cmd_insmod_nth(int argc, char **argv)
{
	char num[16] = "";
	int nth_fd, mod_fd, err;
	bool hit;
	ssize_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: magnet-test insmod-nth N MODULE [PARAMS]\n");
		return 2;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	mod_fd = open(argv[2], O_RDONLY);
	if (nth_fd < 0 || mod_fd < 0) {
		perror("magnet-test: insmod-nth");
		return 2;
	}
	/* The number is copied in before the countdown starts. */
	if (pwrite(nth_fd, argv[1], strlen(argv[1]), 0) < 0) {
		perror("magnet-test: arming fail-nth");
		return 2;
	}
	err = syscall(SYS_finit_module, mod_fd, argc > 3 ? argv[3] : "", 0) ?
	      errno : 0;
	/*
	 * What is left of the countdown: 0 if the fault was injected; a read
	 * that fails (EFAULT) ended it on its own copy-out, not the load.
	 */
	n = pread(nth_fd, num, sizeof(num) - 1, 0);
	hit = n > 0 && atoi(num) == 0;
	if (pwrite(nth_fd, "0", 1, 0) < 0 && errno != EFAULT)
		perror("magnet-test: disarming fail-nth");
	printf("%s %s\n", hit ? "injected" : "not-reached",
	       err ? strerror(err) : "loaded");
	return err ? 1 : 0;
}

/* ---- the predefined probes' records ------------------------------------ */

/* What "predefs" did, to be found in the records. */
struct predef_truth {
	pid_t self, child;
	char comm[MAGNET_COMM_LEN];
	int drop_reason;		/* NO_SOCKET on this kernel, -1: unknown */
	bool sw_out, sw_in, fork, exit, sys_enter, sys_exit;
	bool rx, start_xmit, xmit, drop, tcp_send;
	uint64_t xmit_skb;		/* net_start_xmit's skb, for net_xmit */
	uint32_t drop_found;		/* reason of a NO_SOCKET-sized drop */
};

struct predef_ids {
	int sched_switch, process_fork, process_exit, syscall_enter,
	    syscall_exit, netif_receive, net_start_xmit, net_xmit, skb_free,
	    tcp_send;
};

#define PREDEF_UDP_PAYLOAD	100
#define PREDEF_TCP_SIZE		1234
#define PREDEF_LSEEK_OFFSET	0x1122334455LL

/*
 * The number this kernel gives SKB_DROP_REASON_NO_SOCKET, from the
 * kfree_skb tracepoint's format ("{ 3, "NO_SOCKET" }"): the numbering is
 * the running kernel's and differs between releases.
 */
static int drop_reason_no_socket(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/skb/kfree_skb/format",
		DEBUGFS "tracing/events/skb/kfree_skb/format",
	};
	static char text[65536];
	size_t i, n;
	char *p;
	FILE *f;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		f = fopen(paths[i], "r");
		if (!f)
			continue;
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
		text[n] = '\0';
		p = strstr(text, "\"NO_SOCKET\"");
		if (!p)
			return -1;
		while (p > text && *p != '{')
			p--;
		return *p == '{' ? atoi(p + 1) : -1;
	}
	return -1;
}

static void predef_record(const struct magnet_record *r,
			  const struct predef_ids *ids, struct predef_truth *t)
{
	const void *pl = r->payload;
	uint32_t len = r->size - sizeof(*r);

	if (r->event == ids->sched_switch && len == sizeof(struct magnet_sched_switch)) {
		const struct magnet_sched_switch *e = pl;

		if (e->prev_pid == (uint32_t)t->self && e->prev_tgid == (uint32_t)t->self &&
		    e->prev_state && !e->preempt && r->id == e->next_pid &&
		    !strncmp(e->prev_comm, t->comm, MAGNET_COMM_LEN))
			t->sw_out = true;
		if (e->next_pid == (uint32_t)t->self && r->id == (uint64_t)t->self &&
		    !strncmp(e->next_comm, t->comm, MAGNET_COMM_LEN))
			t->sw_in = true;
	} else if (r->event == ids->process_fork && len == sizeof(struct magnet_process_fork)) {
		const struct magnet_process_fork *e = pl;

		if (e->parent_pid == (uint32_t)t->self && e->parent_tgid == (uint32_t)t->self &&
		    e->child_pid == (uint32_t)t->child && e->child_tgid == (uint32_t)t->child &&
		    r->id == (uint64_t)t->child && !strncmp(e->comm, t->comm, MAGNET_COMM_LEN))
			t->fork = true;
	} else if (r->event == ids->process_exit && len == sizeof(struct magnet_process_exit)) {
		const struct magnet_process_exit *e = pl;

		/* exit(7): the kernel's exit code is the status << 8 */
		if (e->pid == (uint32_t)t->child && e->tgid == (uint32_t)t->child &&
		    e->exit_code == 7 << 8 && r->id == (uint64_t)t->child &&
		    r->tgid == (uint32_t)t->child)
			t->exit = true;
	} else if (r->event == ids->syscall_enter && len == sizeof(struct magnet_syscall_enter)) {
		const struct magnet_syscall_enter *e = pl;

		if (r->tid == (uint32_t)t->self && e->nr == SYS_lseek && r->id == SYS_lseek &&
		    e->args[0] == (uint64_t)-1 && e->args[1] == PREDEF_LSEEK_OFFSET &&
		    e->args[2] == SEEK_CUR)
			t->sys_enter = true;
	} else if (r->event == ids->syscall_exit && len == sizeof(struct magnet_syscall_exit)) {
		const struct magnet_syscall_exit *e = pl;

		if (r->tid == (uint32_t)t->self && e->nr == SYS_lseek && r->id == SYS_lseek &&
		    e->ret == -EBADF)
			t->sys_exit = true;
	} else if (len == sizeof(struct magnet_skb) &&
		   (r->event == ids->netif_receive || r->event == ids->net_start_xmit ||
		    r->event == ids->net_xmit || r->event == ids->skb_free)) {
		const struct magnet_skb *e = pl;
		/* lo: Ethernet, IPv4 and UDP headers around the payload */
		uint32_t frame = 14 + 20 + 8 + PREDEF_UDP_PAYLOAD;

		if (r->event == ids->net_start_xmit && e->ifindex == 1 &&
		    e->protocol == 0x0800 && e->len == frame && r->id) {
			t->start_xmit = true;
			t->xmit_skb = r->id;
		}
		/* net_dev_xmit runs after start_xmit, on the same skb */
		if (r->event == ids->net_xmit && e->ifindex == 1 && e->result == 0 &&
		    e->len == frame && r->id && r->id == t->xmit_skb)
			t->xmit = true;
		if (r->event == ids->netif_receive && e->ifindex == 1 &&
		    e->protocol == 0x0800 && e->len == frame - 14)
			t->rx = true;
		/* dropped by UDP for want of a socket: UDP header and data left */
		if (r->event == ids->skb_free && e->protocol == 0x0800 &&
		    e->len == 8 + PREDEF_UDP_PAYLOAD && e->location && r->id) {
			t->drop_found = e->result;
			if (t->drop_reason < 0 ? e->result > 0 :
			    e->result == t->drop_reason)
				t->drop = true;
		}
	} else if (r->event == ids->tcp_send && len == sizeof(struct magnet_tcp_send)) {
		const struct magnet_tcp_send *e = pl;

		if (r->tid == (uint32_t)t->self && e->size == PREDEF_TCP_SIZE && r->id)
			t->tcp_send = true;
	}
}

/* Every probe named has its record. */
static bool predef_all_found(const struct predef_ids *ids,
			     const struct predef_truth *t)
{
	return (ids->sched_switch < 0 || (t->sw_out && t->sw_in)) &&
	       (ids->process_fork < 0 || t->fork) &&
	       (ids->process_exit < 0 || t->exit) &&
	       (ids->syscall_enter < 0 || t->sys_enter) &&
	       (ids->syscall_exit < 0 || t->sys_exit) &&
	       (ids->netif_receive < 0 || t->rx) &&
	       (ids->net_start_xmit < 0 || t->start_xmit) &&
	       (ids->net_xmit < 0 || t->xmit) &&
	       (ids->skb_free < 0 || t->drop) &&
	       (ids->tcp_send < 0 || t->tcp_send);
}

/* One UDP datagram to a port nobody listens on, over loopback. */
static int predef_udp_drop(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(9) };	/* discard */
	char payload[PREDEF_UDP_PAYLOAD] = "magnet predefs";
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || sendto(fd, payload, sizeof(payload), 0,
			     (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	usleep(100000);
	close(fd);
	return 0;
}

/* A TCP connection to ourselves over loopback, one write of 1234 bytes. */
static int predef_tcp(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t alen = sizeof(sa);
	char buf[PREDEF_TCP_SIZE] = "magnet predefs";
	int l, c, a;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = socket(AF_INET, SOCK_STREAM, 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || c < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(l, 1) || getsockname(l, (struct sockaddr *)&sa, &alen) ||
	    connect(c, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	a = accept(l, NULL, NULL);
	if (a < 0 || write(c, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
	    recv(a, buf, sizeof(buf), MSG_WAITALL) != (ssize_t)sizeof(buf))
		return -1;
	close(a);
	close(c);
	close(l);
	return 0;
}

/*
 * predefs NAME=ID...: the predefined probes NAME (sched_switch,
 * process_fork, process_exit, syscall_enter, syscall_exit, netif_receive,
 * net_start_xmit, net_xmit, skb_free, tcp_send), added by the caller as
 * event ID into buffer "default": drain it, do what each probe sees (fork
 * a child that exits with 7 while we wait, a failing lseek, a UDP datagram
 * to a closed loopback port, a TCP write over loopback), then read the
 * buffer and find a record of each probe whose every field says exactly
 * what was done. One test per probe named.
 */
static int cmd_predefs(int argc, char **argv)
{
	struct predef_ids ids = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
	struct predef_truth t = { .self = getpid() };
	static char buf[1 << 20];
	int fd, i, status;
	double deadline;
	ssize_t n;
	FILE *f;

	for (i = 1; i < argc; i++) {
		char name[32];
		int id;

		if (sscanf(argv[i], "%31[^=]=%d", name, &id) != 2) {
			fprintf(stderr, "magnet-test predefs: %s: NAME=ID\n", argv[i]);
			return 2;
		}
#define PREDEF_ID(n) if (!strcmp(name, #n)) ids.n = id; else
		PREDEF_ID(sched_switch) PREDEF_ID(process_fork)
		PREDEF_ID(process_exit) PREDEF_ID(syscall_enter)
		PREDEF_ID(syscall_exit) PREDEF_ID(netif_receive)
		PREDEF_ID(net_start_xmit) PREDEF_ID(net_xmit)
		PREDEF_ID(skb_free) PREDEF_ID(tcp_send) {
			fprintf(stderr, "magnet-test predefs: no predefined probe %s\n", name);
			return 2;
		}
#undef PREDEF_ID
	}
	f = fopen("/proc/self/comm", "r");
	if (!f || !fgets(t.comm, sizeof(t.comm), f))
		return 1;
	fclose(f);
	t.comm[strcspn(t.comm, "\n")] = '\0';
	t.drop_reason = drop_reason_no_socket();
	fd = open_data("default", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		perror("magnet-test predefs: open");
		return 1;
	}
	/*
	 * Drain what is there. The probes log our own reads as we go, so
	 * this stops at a short read, not at an empty buffer.
	 */
	deadline = now_ms() + 2000;
	while (now_ms() < deadline && read(fd, buf, sizeof(buf)) > 4096)
		;

	t.child = fork();
	if (t.child == 0) {
		usleep(50000);
		_exit(7);
	}
	result(t.child > 0 && waitpid(t.child, &status, 0) == t.child &&
	       WEXITSTATUS(status) == 7, "child exits with 7", "%s",
	       strerror(errno));
	errno = 0;
	result(syscall(SYS_lseek, -1L, PREDEF_LSEEK_OFFSET, (long)SEEK_CUR) == -1 &&
	       errno == EBADF, "lseek(-1) fails with EBADF", "%s", strerror(errno));
	result(!predef_udp_drop(), "UDP datagram to a closed port", "%s",
	       strerror(errno));
	result(!predef_tcp(), "TCP write over loopback", "%s", strerror(errno));
	usleep(200000);

	/*
	 * Our own reads make syscall and sched_switch records as we go: read
	 * until every record is found, for at most 5 s, not until the buffer
	 * is empty.
	 */
	deadline = now_ms() + 5000;
	while (!predef_all_found(&ids, &t) && now_ms() < deadline &&
	       (n = read(fd, buf, sizeof(buf))) > 0) {
		size_t off = 0;

		while (off + sizeof(struct magnet_record) <= (size_t)n) {
			const struct magnet_record *r = (const void *)(buf + off);

			if (r->size < sizeof(*r) || off + r->size > (size_t)n)
				break;
			predef_record(r, &ids, &t);
			off += (r->size + 7) & ~7UL;
		}
	}
	close(fd);

	if (ids.sched_switch >= 0) {
		result(t.sw_out, "sched_switch: we went to sleep (prev: our pid, tgid, comm, a sleeping state)", "no such record");
		result(t.sw_in, "sched_switch: we came back (next: our pid and comm, id = next pid)", "no such record");
	}
	if (ids.process_fork >= 0)
		result(t.fork, "process_fork: parent and child pids, tgids, comm, id = child", "no such record");
	if (ids.process_exit >= 0)
		result(t.exit, "process_exit: the child, exit code 7 << 8, id = pid", "no such record");
	if (ids.syscall_enter >= 0)
		result(t.sys_enter, "syscall_enter: lseek's number and its three arguments", "no such record");
	if (ids.syscall_exit >= 0)
		result(t.sys_exit, "syscall_exit: lseek's number and -EBADF", "no such record");
	if (ids.net_start_xmit >= 0)
		result(t.start_xmit, "net_start_xmit: the datagram's frame on lo, IPv4", "no such record");
	if (ids.net_xmit >= 0)
		result(t.xmit, "net_xmit: the same skb, its length, driver's verdict 0", "no such record");
	if (ids.netif_receive >= 0)
		result(t.rx, "netif_receive: the datagram received on lo, IPv4", "no such record");
	if (ids.skb_free >= 0)
		result(t.drop, "skb_free: dropped for want of a socket (the kernel's NO_SOCKET reason), where", "reason %u, NO_SOCKET is %d here", t.drop_found, t.drop_reason);
	if (ids.tcp_send >= 0)
		result(t.tcp_send, "tcp_send: our write's size, id = the socket", "no such record");
	return summary();
}

/* ---- the reader's wake-up, raced --------------------------------------- */

struct wake_race {
	_Atomic long go;		/* round the reader is ready for */
	_Atomic long sent_ns;		/* when the writer made its call */
	long rounds, max_spin;
	int cpu;
};

static long mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void spin_for(long n)
{
	volatile long v;

	for (v = 0; v < n; v++)
		;
}

static long count_records(const char *buf, ssize_t n)
{
	const struct magnet_record *rec;
	long records = 0;
	ssize_t off;

	for (off = 0; off + (ssize_t)sizeof(*rec) <= n;
	     off += MAGNET_RECORD_LEN(rec->size)) {
		rec = (const void *)(buf + off);
		if (rec->size < sizeof(*rec))
			break;
		records += rec->event != MAGNET_EVENT_LOSS;
	}
	return records;
}

static void *wake_race_writer(void *arg)
{
	struct wake_race *w = arg;
	unsigned int seed = 1;
	long i;

	pin(w->cpu);
	for (i = 1; i <= w->rounds; i++) {
		while (atomic_load(&w->go) < i)
			;
		spin_for(rand_r(&seed) % (w->max_spin + 1));
		atomic_store(&w->sent_ns, mono_ns());
		syscall(SYS_getppid);
	}
	return NULL;
}

/*
 * wakeups BUFFER ROUNDS: every record wakes a reader in poll(), however
 * close its commit comes to the reader's going to sleep. The suite puts a
 * probe on getppid() logging into BUFFER. Each round, a thread on another
 * CPU makes one getppid() call at a varying moment around the reader's
 * entry into poll() (over twice the time poll() takes to find nothing),
 * and the reader polls with a count watermark of one record. A writer
 * that publishes while the reader arms its wake-up may miss the new
 * thresholds; the reader's recheck a grace period later must catch it
 * (a late wake-up). Fails if a poll waits 2 s with a record there (a
 * missed wake-up) or a round's record is not read.
 */
static int cmd_wakeups(int argc, char **argv)
{
	long rounds = argc > 2 ? atol(argv[2]) : 0, i, t0, poll_ns, missed = 0;
	long fast = 0, slow = 0, late = 0, worst = 0, records = 0, spins;
	struct wake_race w = { .rounds = rounds };
	struct pollfd pfd = { .events = POLLIN };
	char buf[4096];
	pthread_t t;
	ssize_t n;
	int fd;

	if (argc < 3 || rounds <= 0) {
		fprintf(stderr, "usage: magnet-test wakeups BUFFER ROUNDS\n");
		return 2;
	}
	fd = open_data(argv[1], O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "magnet-test: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	pfd.fd = fd;
	w.cpu = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 1 : 0;
	pin(0);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	/* Calibrate: poll() finding nothing, and the writer's spin loop. */
	t0 = mono_ns();
	for (i = 0; i < 200; i++)
		poll(&pfd, 1, 0);
	poll_ns = (mono_ns() - t0) / 200;
	t0 = mono_ns();
	spin_for(1000000);
	spins = 1000000 * 2 * poll_ns / (mono_ns() - t0 + 1);
	w.max_spin = spins > 0 ? spins : 1;
	pthread_create(&t, NULL, wake_race_writer, &w);

	for (i = 1; i <= rounds; i++) {
		long took;

		atomic_store(&w.go, i);
		if (poll(&pfd, 1, 2000) != 1) {
			n = read(fd, buf, sizeof(buf));
			if (n > 0) {
				missed++;
				records += count_records(buf, n);
			}
			continue;
		}
		took = mono_ns() - atomic_load(&w.sent_ns);
		if (took > worst)
			worst = took;
		if (took < 1000000)
			fast++;
		else if (took < 10000000)
			slow++;
		else
			late++;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			records += count_records(buf, n);
	}
	pthread_join(t, NULL);
	printf("# wakeups: %ld rounds, a poll() finding nothing %ld ns, writer delays 0-%ld ns; woke within 1 ms %ld, 1-10 ms %ld, later %ld (a recheck's), worst %.1f ms; missed %ld; records read %ld\n",
	       rounds, poll_ns, 2 * poll_ns, fast, slow, late, worst / 1e6,
	       missed, records);
	result(!missed, "every record woke the poll (no wake-up missed)",
	       "%ld of %ld polls waited 2 s with a record there", missed, rounds);
	result(records == rounds, "one record read per round",
	       "%ld records read in %ld rounds", records, rounds);
	close(fd);
	return summary();
}

/* ---- the mapping's rules ----------------------------------------------- */

static int consume_at(int fd, uint32_t slot, uint32_t flags, uint64_t pos,
		      struct magnet_consume *c)
{
	memset(c, 0, sizeof(*c));
	c->slot = slot;
	c->flags = flags;
	c->pos = pos;
	return ioctl(fd, MAGNET_IOC_CONSUME, c) ? errno : 0;
}

/*
 * mapping BUFFER [OVERWRITE_BUFFER]: the mapping of a drop-mode buffer's
 * data file and its bad input. The suite puts a probe on getppid() logging
 * into BUFFER; we make the calls on CPU 0.
 */
/*
 * span-writes: writes to MAGNET_SPAN_DEVICE, each malformed in one way
 * and refused with its errno, and a well-formed one taken whole; a line
 * per case, "ok"/"not ok" as the harness's. Status 0 if every case went
 * as it should.
 */
struct span_case {
	const char *what;
	int err;		/* the errno expected, 0: accepted */
	size_t len;		/* bytes written, 0: the span's own */
	void (*make)(struct magnet_span *sp, uint8_t *data);
};

static void span_good(struct magnet_span *sp, uint8_t *data)
{
	static const char text[] = "request" "k=v\0" "service.name=x\0";

	sp->type = MAGNET_SPAN_BEGIN;
	memset(sp->trace_id, 0xab, sizeof(sp->trace_id));
	memset(sp->span_id, 0xcd, sizeof(sp->span_id));
	sp->name_len = 7;
	sp->attrs_len = sizeof(text) - 1 - 7;
	memcpy(data, text, sizeof(text) - 1);
}

static void span_bad_type(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->type = 9; }
static void span_bad_type0(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->type = 0; }
static void span_bad_flags(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->flags = 0x80; }
static void span_bad_reserved(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->__reserved = 1; }
static void span_bad_trace(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); memset(sp->trace_id, 0, 16); }
static void span_bad_id(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); memset(sp->span_id, 0, 8); }
static void span_bad_noname(struct magnet_span *sp, uint8_t *d)
{
	span_good(sp, d);
	memmove(d, d + 7, sp->attrs_len);
	sp->name_len = 0;
}
static void span_bad_ctl(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); d[2] = '\n'; }
static void span_bad_key(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); d[7] = ' '; }
static void span_bad_noeq(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); d[8] = 'x'; }
static void span_bad_nonul(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); d[7 + sp->attrs_len - 1] = 'y'; }
static void span_bad_lens(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->attrs_len += 8; }
static void span_bad_remote(struct magnet_span *sp, uint8_t *d) { span_good(sp, d); sp->flags = MAGNET_SPAN_F_REMOTE; }
static void span_good_end(struct magnet_span *sp, uint8_t *d)
{
	span_good(sp, d);
	sp->type = MAGNET_SPAN_END;
	memmove(d, d + 7, sp->attrs_len);
	sp->name_len = 0;
}
static void span_long_name(struct magnet_span *sp, uint8_t *d)
{
	span_good(sp, d);
	sp->name_len = MAGNET_SPAN_NAME_MAX + 1;
	sp->attrs_len = 0;
	memset(d, 'n', sp->name_len);
}

static int cmd_span_writes(void)
{
	static const struct span_case cases[] = {
		{ "a begin with a name and two attributes: taken", 0, 0, span_good },
		{ "an end without a name: taken", 0, 0, span_good_end },
		{ "type 9: EINVAL", EINVAL, 0, span_bad_type },
		{ "type 0: EINVAL", EINVAL, 0, span_bad_type0 },
		{ "unknown flags: EINVAL", EINVAL, 0, span_bad_flags },
		{ "reserved bytes set: EINVAL", EINVAL, 0, span_bad_reserved },
		{ "an all-zero trace id: EINVAL", EINVAL, 0, span_bad_trace },
		{ "an all-zero span id: EINVAL", EINVAL, 0, span_bad_id },
		{ "a begin without a name: EINVAL", EINVAL, 0, span_bad_noname },
		{ "a control byte in the name: EINVAL", EINVAL, 0, span_bad_ctl },
		{ "a space in a key: EINVAL", EINVAL, 0, span_bad_key },
		{ "an attribute without '=': EINVAL", EINVAL, 0, span_bad_noeq },
		{ "attributes not ending in a NUL: EINVAL", EINVAL, 0, span_bad_nonul },
		{ "lengths beyond the write: EINVAL", EINVAL, 0, span_bad_lens },
		{ "remote without a parent: EINVAL", EINVAL, 0, span_bad_remote },
		{ "a name over MAGNET_SPAN_NAME_MAX: EINVAL", EINVAL, 0, span_long_name },
		{ "shorter than the header: EINVAL", EINVAL, 8, span_good },
		{ "over MAGNET_SPAN_MAX: EMSGSIZE", EMSGSIZE, MAGNET_SPAN_MAX + 8, span_good },
	};
	union {
		struct magnet_span sp;
		uint8_t b[MAGNET_SPAN_MAX + 64];
	} u;
	int fd = open(MAGNET_SPAN_DEVICE, O_WRONLY), bad = 0;

	if (fd < 0) {
		printf("not ok - open %s: %s\n", MAGNET_SPAN_DEVICE, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct span_case *c = &cases[i];
		size_t len;
		ssize_t n;

		memset(&u, 0, sizeof(u));
		c->make(&u.sp, u.sp.data);
		len = c->len ? c->len :
		      sizeof(u.sp) + u.sp.name_len + u.sp.attrs_len;
		if (len > sizeof(u))
			len = sizeof(u);
		n = write(fd, u.b, len);
		if (c->err ? (n < 0 && errno == c->err) : n == (ssize_t)len) {
			printf("ok - %s\n", c->what);
		} else {
			printf("not ok - %s: got %zd (%s)\n", c->what, n,
			       n < 0 ? strerror(errno) : "taken");
			bad = 1;
		}
	}
	errno = 0;
	if (read(fd, u.b, 8) < 0 && errno == EBADF)
		printf("ok - reading the write-only descriptor: EBADF\n");
	else
		printf("not ok - reading: %s\n", strerror(errno)), bad = 1;
	close(fd);
	if (open(MAGNET_SPAN_DEVICE, O_RDWR) < 0 && errno == EINVAL)
		printf("ok - opening it for reading: EINVAL\n");
	else
		printf("not ok - opening it for reading: %s\n", strerror(errno)), bad = 1;
	return bad;
}

static int cmd_mapping(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE), calls = 100;
	struct cpu_stats before[MAX_CPUS], after[MAX_CPUS];
	struct magnet_map_info mi;
	struct magnet_ring_pub *pub;
	struct magnet_consume c;
	uint64_t tail, commit, first_len = 0;
	const struct magnet_record *rec;
	int fd, ncpu, err, i;
	unsigned long n = 0;
	char *base;
	void *p;

	if (argc < 2) {
		fprintf(stderr, "usage: magnet-test mapping BUFFER [OVERWRITE_BUFFER]\n");
		return 2;
	}
	fd = open_data(argv[1], O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "magnet-test: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	err = ioctl(fd, MAGNET_IOC_MAP_INFO, &mi) ? errno : 0;
	result(!err && mi.slots == (uint32_t)sysconf(_SC_NPROCESSORS_CONF) &&
	       mi.pub_size == page && mi.slot_size == mi.pub_size + mi.ring_size &&
	       mi.map_size == mi.slots * mi.slot_size && mi.max_record,
	       "MAP_INFO: one slot per CPU, a page then the ring",
	       "err %d slots %u pub %u ring %llu slot %llu map %llu", err,
	       mi.slots, mi.pub_size, (unsigned long long)mi.ring_size,
	       (unsigned long long)mi.slot_size, (unsigned long long)mi.map_size);
	if (err)
		return summary();

	p = mmap(NULL, mi.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	result(p == MAP_FAILED && errno == EACCES, "a writable mapping: EACCES",
	       "%s", p == MAP_FAILED ? strerror(errno) : "mapped");
	p = mmap(NULL, mi.map_size, PROT_READ, MAP_PRIVATE, fd, 0);
	result(p == MAP_FAILED && errno == EINVAL, "a private mapping: EINVAL",
	       "%s", p == MAP_FAILED ? strerror(errno) : "mapped");
	p = mmap(NULL, mi.map_size - page, PROT_READ, MAP_SHARED, fd, page);
	result(p == MAP_FAILED && errno == EINVAL, "an offset other than 0: EINVAL",
	       "%s", p == MAP_FAILED ? strerror(errno) : "mapped");
	p = mmap(NULL, mi.map_size + page, PROT_READ, MAP_SHARED, fd, 0);
	result(p == MAP_FAILED && errno == EINVAL, "larger than map_size: EINVAL",
	       "%s", p == MAP_FAILED ? strerror(errno) : "mapped");
	base = mmap(NULL, mi.map_size, PROT_READ, MAP_SHARED, fd, 0);
	result(base != MAP_FAILED, "a read-only shared mapping",
	       "%s", strerror(errno));
	if (base == MAP_FAILED)
		return summary();
	for (i = 0; i < (int)mi.slots; i++)
		if (((struct magnet_ring_pub *)(base + i * mi.slot_size))->cpu != (uint32_t)i)
			break;
	result(i == (int)mi.slots, "each slot's page names its CPU", "slot %d", i);
	result(mprotect(base, page, PROT_READ | PROT_WRITE) && errno == EACCES,
	       "mprotect() cannot make it writable", "%s", strerror(errno));

	/* Records on CPU 0, read in place. */
	while (read(fd, (char [4096]){}, 4096) > 0)
		;
	pin(0);
	for (i = 0; i < calls; i++)
		syscall(SYS_getppid);
	pub = (void *)base;
	tail = pub->tail;
	commit = __atomic_load_n(&pub->commit, __ATOMIC_ACQUIRE);
	for (uint64_t pos = tail; pos < commit;) {
		rec = (const void *)(base + mi.pub_size + (pos & (mi.ring_size - 1)));
		if (!first_len)
			first_len = (rec->size + 7) & ~7ULL;
		n += rec->event != MAGNET_EVENT_PAD && rec->event != MAGNET_EVENT_LOSS;
		pos += (rec->size + 7) & ~7ULL;
	}
	result(n == (unsigned long)calls, "the records are in the mapping, in place",
	       "%lu records between tail %llu and commit %llu, %ld calls", n,
	       (unsigned long long)tail, (unsigned long long)commit, calls);

	/* Bad consume requests change nothing. */
	read_stats(argv[1], before, &ncpu);
	result(consume_at(fd, mi.slots, 0, tail, &c) == EINVAL,
	       "consume: a slot that does not exist: EINVAL", "");
	result(consume_at(fd, 0, 1, tail, &c) == EINVAL,
	       "consume: unknown flags: EINVAL", "");
	result(consume_at(fd, 0, 0, commit + 8, &c) == EINVAL,
	       "consume: beyond the written data: EINVAL", "");
	result(first_len > 8 && consume_at(fd, 0, 0, tail + 8, &c) == EINVAL,
	       "consume: inside a record: EINVAL", "first record %llu bytes",
	       (unsigned long long)first_len);
	result(!tail || consume_at(fd, 0, 0, tail - 8, &c) == EINVAL,
	       "consume: behind the tail: EINVAL", "");
	if (mi.slots > 1) {
		struct magnet_ring_pub *pub1 = (void *)(base + mi.slot_size);

		/* (unless it happens to fall within CPU 1's records) */
		result((commit >= pub1->tail && commit <= pub1->commit) ||
		       consume_at(fd, 1, 0, commit, &c) == EINVAL,
		       "consume: CPU 0's position on another CPU: EINVAL", "");
	}
	{
		/* an argument it can read and not write: the answer would be lost */
		struct magnet_consume *ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		memset(ro, 0, sizeof(*ro));
		ro->pos = commit;
		mprotect(ro, page, PROT_READ);
		result(ioctl(fd, MAGNET_IOC_CONSUME, ro) && errno == EFAULT,
		       "consume: an argument that cannot be written: EFAULT",
		       "%s", strerror(errno));
		munmap(ro, page);
	}
	read_stats(argv[1], after, &ncpu);
	result(pub->tail == tail && after[0].read == before[0].read,
	       "... and nothing changed", "tail %llu -> %llu, read %lu -> %lu",
	       (unsigned long long)tail, (unsigned long long)pub->tail,
	       before[0].read, after[0].read);

	/* A good one: the kernel moves the tail and counts the records. */
	err = consume_at(fd, 0, 0, commit, &c);
	read_stats(argv[1], after, &ncpu);
	result(!err && pub->tail == commit && c.records == n &&
	       after[0].read - before[0].read == n,
	       "consume to the writers' position: tail moved, records counted",
	       "err %d tail %llu commit %llu records %llu read %lu", err,
	       (unsigned long long)pub->tail, (unsigned long long)commit,
	       (unsigned long long)c.records, after[0].read - before[0].read);
	result(consume_at(fd, 0, 0, commit, &c) == 0 && c.records == 0,
	       "consume at the tail: nothing, no error", "");
	munmap(base, mi.map_size);
	close(fd);

	if (argc > 2) {
		fd = open_data(argv[2], O_RDONLY | O_NONBLOCK);
		p = fd < 0 ? MAP_FAILED :
		    mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
		result(p == MAP_FAILED && errno == EOPNOTSUPP,
		       "an overwrite-mode buffer is not mapped: EOPNOTSUPP",
		       "%s", p == MAP_FAILED ? strerror(errno) : "mapped");
		result(consume_at(fd, 0, 0, 0, &c) == EOPNOTSUPP,
		       "... nor consumed: EOPNOTSUPP", "");
		close(fd);
	}
	return summary();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "insmod-nth"))
		return cmd_insmod_nth(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "syscalls"))
		return cmd_syscalls(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "burn"))
		return cmd_burn(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "spin"))
		return cmd_spin(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "udp"))
		return cmd_udp(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "udp-send"))
		return cmd_udp_send(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "udp-calls"))
		return cmd_udp_calls(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "udp-recv"))
		return cmd_udp_recv(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "tcp-send"))
		return cmd_tcp_send(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "tcp-recv"))
		return cmd_tcp_recv(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "stream"))
		return cmd_stream(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "attrs"))
		return cmd_attrs(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "kreader"))
		return cmd_kreader(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "format"))
		return cmd_format();
	if (argc > 1 && !strcmp(argv[1], "predefs"))
		return cmd_predefs(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "wakeups"))
		return cmd_wakeups(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "mapping"))
		return cmd_mapping(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "devnull"))
		return cmd_devnull(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "spans"))
		return cmd_spans(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "clock-step"))
		return cmd_clock_step(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "span-write"))
		return cmd_span_write(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "span-writes"))
		return cmd_span_writes();
	fprintf(stderr,
		"usage: magnet-test stream [--buffer B] [--run ARGS] [--io read|poll|epoll|sigio|uring|map]\n"
		"                          [--size-wm N] [--count-wm N] [--timeout-us N] [--read-size N]\n"
		"                          [--read-delay-us N]\n"
		"                          [--expect-loss|--expect-no-loss] [--overwrite] [--name NAME]\n"
		"       magnet-test attrs [BUFFER]\n"
		"       magnet-test udp ADDR PORT COUNT [SRCPORT]\n"
		"       magnet-test udp-calls ADDR PORT N SIZE\n"
		"       magnet-test udp-send ADDR PORT COUNT SIZE [SRCPORT]\n"
		"       magnet-test udp-recv ADDR PORT COUNT\n"
		"       magnet-test tcp-send ADDR PORT COUNT SIZE\n"
		"       magnet-test tcp-recv ADDR PORT\n"
		"       magnet-test kreader [BUFFER [RUN ARGS]]\n"
		"       magnet-test format\n"
		"       magnet-test predefs NAME=ID...\n"
		"       magnet-test wakeups BUFFER ROUNDS\n"
		"       magnet-test mapping BUFFER [OVERWRITE_BUFFER]\n"
		"       magnet-test syscalls N [RATE]\n"
		"       magnet-test spin SECONDS [NICE]\n"
		"       magnet-test insmod-nth N MODULE [PARAMS]\n");
	return 2;
}

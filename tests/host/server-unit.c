// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of magnetd's socket (magnetd/server.c): the server is
 * built from its own source, on a socket in a temporary directory and an
 * event loop of its own, with metrics of made-up probes (magnetd/metrics.c)
 * and the rest of the daemon (its readers, its attach and release, its log)
 * reduced to the stubs below. The test is the client: it sends requests,
 * turns the loop and reads what comes back. Each test has a server of
 * its own (FIXTURE(server)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "magnetd.h"

#define PROBES		60	/* a snapshot of ~30 KB */
#define QUEUE		4096	/* client-queue: the smallest allowed */
#define WAIT_MS		5000

/* --- the rest of the daemon ------------------------------------------------ */

static unsigned int warnings;
static bool quiet;		/* count the warnings, print nothing */

static void vlog(const char *level, const char *fmt, va_list ap)
{
	if (quiet)
		return;
	printf("# magnetd %s: ", level);
	vprintf(fmt, ap);
	putchar('\n');
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	warnings++;
	va_start(ap, fmt);
	vlog("warning", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("info", fmt, ap);
	va_end(ap);
}

/* --- a client ---------------------------------------------------------------- */

struct conn {
	int fd;
	char *in;		/* what came, NUL-terminated */
	size_t len, cap;
	bool eof;
};

static struct daemon d;

/* Turn the loop and read what there is; false once @ms have passed. */
static bool turn(struct conn *c, int64_t deadline_ms)
{
	char buf[65536];
	ssize_t n = -1;

	ev_run(d.loop, EVRUN_NOWAIT);
	while (!c->eof && (n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT)) != 0) {
		if (n < 0) {
			if (errno == ECONNRESET)
				break;
			if (errno != EAGAIN && errno != EINTR)
				abort();
			break;
		}
		if (c->len + n + 1 > c->cap) {
			c->cap = 2 * (c->len + n + 1);
			c->in = realloc(c->in, c->cap);
			if (!c->in)
				abort();
		}
		memcpy(c->in + c->len, buf, n);
		c->len += n;
		c->in[c->len] = '\0';
	}
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		c->eof = true;
	usleep(1000);
	return (int64_t)(now_ns() / 1000000) < deadline_ms;
}

static int64_t deadline(void)
{
	return now_ns() / 1000000 + WAIT_MS;
}

/* How many times @text has come. */
static unsigned int count(const struct conn *c, const char *text)
{
	unsigned int n = 0;
	const char *p = c->in;

	while (p && (p = strstr(p, text))) {
		n++;
		p += strlen(text);
	}
	return n;
}

/* Read until @text has come @times (or the connection ended). */
static bool wait_for_n(struct conn *c, const char *text, unsigned int times)
{
	int64_t dl = deadline();

	while (count(c, text) < times && !c->eof && turn(c, dl))
		;
	return count(c, text) >= times;
}

static bool wait_for(struct conn *c, const char *text)
{
	return wait_for_n(c, text, 1);
}

static bool wait_eof(struct conn *c)
{
	int64_t dl = deadline();

	while (!c->eof && turn(c, dl))
		;
	return c->eof;
}

/* Send @data; a connection the server closed counts as ended. */
static void send_all(struct conn *c, const char *data, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(c->fd, data, len, MSG_NOSIGNAL);
		if (n <= 0) {
			c->eof = true;
			return;
		}
		data += n;
		len -= n;
	}
}

static void forget(struct conn *c)
{
	c->len = 0;
	if (c->in)
		c->in[0] = '\0';
}

static bool connect_to(struct conn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(c, 0, sizeof(*c));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return false;
	return wait_for(c, "\n");
}

static void disconnect(struct conn *c)
{
	close(c->fd);
	free(c->in);
	c->in = NULL;
	/* the server sees the end and frees the client */
	for (int i = 0; i < 10; i++)
		ev_run(d.loop, EVRUN_NOWAIT);
}

/*
 * A whole snapshot reply at @s: "snapshot TIME N", N lines, "end". Its
 * size in *@bytes.
 */
static bool whole_snapshot(const char *s, size_t *bytes)
{
	unsigned int nlines, lines = 0;
	unsigned long long t;
	const char *p = s, *nl;
	int used = 0;

	*bytes = 0;
	if (!p || sscanf(p, "snapshot %llu %u\n%n", &t, &nlines, &used) != 2 ||
	    !used)
		return false;
	p += used;
	while (lines < nlines && (nl = strchr(p, '\n'))) {
		if (strncmp(p, "metric ", 7) && strncmp(p, "top ", 4))
			return false;
		p = nl + 1;
		lines++;
	}
	if (lines != nlines || strncmp(p, "end\n", 4))
		return false;
	*bytes = p + 4 - s;
	return true;
}

/* --- the tests ------------------------------------------------------------------- */

/* A server of PROBES probes' metrics on a socket in a directory of its own. */
FIXTURE(server) {
	char dir[32];
	struct config_socket cs;
};

FIXTURE_SETUP(server)
{
	struct metrics_limits lim = {
		.window_s = 10, .top_tgids = 5, .max_tgids = 64, .max_cpus = 2,
	};
	char name[32];

	strcpy(self->dir, "/tmp/server-unit.XXXXXX");
	ASSERT_TRUE(mkdtemp(self->dir)) TH_LOG("mkdtemp: %s", strerror(errno));
	self->cs = (struct config_socket){
		.mode = 0600, .max_clients = 4, .client_queue = QUEUE,
	};
	snprintf(self->cs.path, sizeof(self->cs.path), "%s/magnetd.sock",
		 self->dir);
	d.loop = ev_loop_new(EVFLAG_AUTO);
	d.metrics = metrics_new(&lim);
	ASSERT_TRUE(d.loop && d.metrics);
	d.start_ns = now_ns();
	d.attached = true;
	for (int i = 0; i < PROBES; i++) {
		snprintf(name, sizeof(name), "udp-send.probe%02d", i);
		ASSERT_EQ(metrics_event(d.metrics, name), 0);
	}
	d.server = server_new(&d, &self->cs);
	ASSERT_TRUE(d.server) TH_LOG("no server on %s", self->cs.path);
}

FIXTURE_TEARDOWN(server)
{
	server_free(d.server);
	metrics_free(d.metrics);
	ev_loop_destroy(d.loop);
	rmdir(self->dir);
}

static void server_stats(unsigned int *clients, uint64_t *dropped)
{
	uint64_t pushes;

	server_metrics(d.server, clients, &pushes, dropped);
}

/* A snapshot many times the queue limit reaches a client that reads. */
TEST_F(server, sends_snapshot_larger_than_queue_whole)
{
	unsigned int clients;
	uint64_t dropped;
	size_t bytes = 0, more = 0;
	struct conn c;

	ASSERT_TRUE(connect_to(&c, self->cs.path));
	EXPECT_STREQ(c.in, "magnetd 1 " MAGNETD_VERSION "\n");
	forget(&c);
	send_all(&c, "snapshot\n", 9);
	wait_for(&c, "\nend\n");
	/* a snapshot of PROBES probes comes whole ... */
	EXPECT_TRUE(whole_snapshot(c.in, &bytes));
	EXPECT_EQ(bytes, c.len);
	/* ... is more than 4 x client-queue ... */
	EXPECT_GT(bytes, 4 * QUEUE);
	/* ... and the connection stays */
	EXPECT_FALSE(c.eof);
	forget(&c);
	/* two snapshots asked in one go: both whole */
	send_all(&c, "snapshot\nsnapshot\n", 18);
	wait_for_n(&c, "\nend\n", 2);
	EXPECT_TRUE(whole_snapshot(c.in, &bytes));
	EXPECT_TRUE(whole_snapshot(c.in + bytes, &more));
	EXPECT_EQ(bytes + more, c.len);
	forget(&c);
	/* no client dropped, nothing logged */
	server_stats(&clients, &dropped);
	EXPECT_EQ(clients, 1);
	EXPECT_EQ(dropped, 0);
	EXPECT_EQ(warnings, 0);
	disconnect(&c);
}

extern const struct account *stub_ledger;

/*
 * The "ledger" request: "ledger off" while it is off; then the CPUs'
 * elapsed times and the rows, each word escaped as libmagnet.h says.
 */
TEST_F(server, ledger_off_then_rows_escaped)
{
	struct ledger_row rows[] = {
		{ .cgroup = 42, .kind = MAGNET_LEDGER_USER, .ns = 1500 },
		{ .kind = MAGNET_LEDGER_SOFTIRQ, .has_vector = true,
		  .vector = 3, .ns = 700 },
		{ .kind = MAGNET_LEDGER_HARDIRQ, .has_vector = true,
		  .vector = 236, .name = "local_timer", .ns = 5 },
		{ .kind = MAGNET_LEDGER_WORK, .name = "fn [mod]", .ns = 9 },
		{ .cgroup = 43, .tgid = 17, .kind = MAGNET_LEDGER_SYSTEM,
		  .ns = 11 },
	};
	const char *paths[] = { "/a b\\c", "", "", "", ACCOUNT_GONE };
	uint64_t elapsed[] = { 2000, 3000 };
	struct account l = {
		.s = { .rows = rows, .count = 5, .cpus = 2,
		       .elapsed = elapsed },
		.path = paths,
		.elapsed_ns = 5000,
	};
	struct conn c;

	ASSERT_TRUE(connect_to(&c, self->cs.path));
	forget(&c);
	stub_ledger = NULL;
	send_all(&c, "ledger\n", 7);
	EXPECT_TRUE(wait_for(&c, "\n"));
	EXPECT_STREQ(c.in, "ledger off\n");
	forget(&c);
	stub_ledger = &l;
	send_all(&c, "ledger\n", 7);
	EXPECT_TRUE(wait_for(&c, "\nend\n"));
	EXPECT_TRUE(!strncmp(c.in, "ledger ", 7));
	EXPECT_TRUE(strstr(c.in, " 7\n"
			   "cpu 0 2000\n"
			   "cpu 1 3000\n"
			   "row 1500 42 0 user - - /a\\x20b\\x5cc\n"
			   "row 700 0 0 softirq net_rx - -\n"
			   "row 5 0 0 hardirq 236 local_timer -\n"
			   "row 9 0 0 work - fn\\x20[mod] -\n"
			   "row 11 43 17 system - - (gone)\n"
			   "end\n")) TH_LOG("%s", c.in);
	stub_ledger = NULL;
	disconnect(&c);
}

/*
 * A client that asks and does not read: cut off once a request finds
 * more than 4 x client-queue unread, never holding more than that and
 * one reply.
 */
TEST_F(server, cuts_off_client_not_reading)
{
	unsigned int clients;
	uint64_t dropped;
	struct conn c;
	char reqs[100 * 9 + 1] = "";
	int i;

	ASSERT_TRUE(connect_to(&c, self->cs.path));
	forget(&c);
	for (i = 0; i < 100; i++)
		strcat(reqs, "snapshot\n");
	send_all(&c, reqs, strlen(reqs));
	/* turn the loop without reading: the socket's buffer fills, then the queue */
	for (i = 0; i < 50; i++)
		ev_run(d.loop, EVRUN_NOWAIT);
	/* cut off, and said so once */
	server_stats(&clients, &dropped);
	EXPECT_EQ(dropped, 1);
	EXPECT_EQ(warnings, 1);
	/* ... its connection closed ... */
	EXPECT_TRUE(wait_eof(&c));
	/* ... after less than a reply per request ... */
	EXPECT_LT(c.len, 100 * 30000);
	disconnect(&c);
	/* ... and freed */
	server_stats(&clients, &dropped);
	EXPECT_EQ(clients, 0);
}

static void on_stop(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ONE);
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/*
 * Out of descriptors: a client waits in the listen queue while accept()
 * fails with EMFILE for a second. The server neither spins nor floods the
 * log meanwhile, and takes the client once descriptors are free.
 */
TEST_F(server, waits_for_descriptors_without_spinning)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int filler[1024], nfill = 0, fd, err;
	struct rlimit was, low;
	double cpu, t;
	ev_timer stop;
	struct conn c;

	memset(&c, 0, sizeof(c));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", self->cs.path);
	c.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(c.fd, 0);
	ASSERT_EQ(connect(c.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	getrlimit(RLIMIT_NOFILE, &was);
	low = was;
	low.rlim_cur = 64;
	setrlimit(RLIMIT_NOFILE, &low);
	while (nfill < 1024 &&
	       (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
		filler[nfill++] = fd;
	err = errno;
	/* every descriptor taken */
	EXPECT_LT(nfill, 1024);
	EXPECT_EQ(err, EMFILE);
	quiet = true;
	ev_timer_init(&stop, on_stop, 1., 0.);
	ev_timer_start(d.loop, &stop);
	cpu = cpu_seconds();
	ev_run(d.loop, 0);
	cpu = cpu_seconds() - cpu;
	quiet = false;
	/* accept() failing for a second: no spin, one line logged */
	EXPECT_LT(cpu, 0.1);
	EXPECT_EQ(warnings, 1);
	while (nfill)
		close(filler[--nfill]);
	setrlimit(RLIMIT_NOFILE, &was);
	/* the client is served once descriptors are free */
	t = now_ns() / 1e9;
	EXPECT_TRUE(wait_for(&c, "magnetd "));
	EXPECT_LT(now_ns() / 1e9 - t, 1);
	disconnect(&c);
}

TEST_MAIN

// SPDX-License-Identifier: GPL-2.0
/*
 * libmagnet-unit: the client library's parsing and bookkeeping against
 * scripted byte streams.
 *
 * Each case forks a tiny line server of its own on a Unix socket in a
 * temporary directory (FIXTURE(libmagnet), one per test). The server plays a script (send these bytes, pause,
 * expect this request line, signal the client, hang up) and exits 1 if
 * the library sent something else; the test asserts what the library made
 * of the bytes. This is not magnetd: the daemon is tested elsewhere, this
 * feeds the library the edge cases a real daemon seldom produces (lines
 * split anywhere, pushes between replies, malformed lines, a line too
 * long, a daemon leaving mid-reply). Tests on tests/harness.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "libmagnet.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define GREETING	"magnetd 1 0.1.0\n"
#define SERVER_WAIT_MS	10000

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* --- the scripted server ------------------------------------------------ */

enum step_op { S_END, S_SEND, S_EXPECT, S_PAUSE, S_SIGNAL, S_HANGUP };

struct step {
	enum step_op op;
	const char *data;	/* S_SEND, S_EXPECT */
	size_t len;		/* S_SEND: 0 = strlen(data) */
	int ms;			/* S_PAUSE */
};

#define SEND(s)		{ .op = S_SEND, .data = (s) }
#define SENDN(s, n)	{ .op = S_SEND, .data = (s), .len = (n) }
#define EXPECT(s)	{ .op = S_EXPECT, .data = (s) }
#define PAUSE(t)	{ .op = S_PAUSE, .ms = (t) }
#define SIGNAL		{ .op = S_SIGNAL }
#define HANGUP		{ .op = S_HANGUP }
#define END		{ .op = S_END }

static bool write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

/* One byte, waiting at most SERVER_WAIT_MS; -1 at the end or on error. */
static int read_byte(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char ch;

	if (poll(&p, 1, SERVER_WAIT_MS) <= 0 || read(fd, &ch, 1) != 1)
		return -1;
	return (unsigned char)ch;
}

/* The client's next request must be @want. */
static bool expect_line(int fd, const char *want)
{
	char got[MAGNET_LINE_MAX + 1];
	size_t n = 0;
	int ch;

	while ((ch = read_byte(fd)) >= 0 && ch != '\n' && n < MAGNET_LINE_MAX)
		got[n++] = ch;
	got[n] = '\0';
	if (ch == '\n' && !strcmp(got, want))
		return true;
	fprintf(stderr, "# server: expected \"%s\", got \"%s\"%s\n", want, got,
		ch == '\n' ? "" : " (no newline)");
	return false;
}

static int run_script(int fd, const struct step *s)
{
	for (; s->op != S_END; s++) {
		switch (s->op) {
		case S_SEND:
			if (!write_all(fd, s->data,
				       s->len ? s->len : strlen(s->data)))
				return 1;
			break;
		case S_EXPECT:
			if (!expect_line(fd, s->data))
				return 1;
			break;
		case S_PAUSE:
			usleep(s->ms * 1000);
			break;
		case S_SIGNAL:
			kill(getppid(), SIGUSR1);
			break;
		case S_HANGUP:
			return 0;
		case S_END:
			break;
		}
	}
	/* stay until the client is done, so it sees no early end */
	while (read_byte(fd) >= 0)
		;
	return 0;
}

/* A directory of the test's own for the scripted server's socket. */
FIXTURE(libmagnet) {
	char dir[64];
	char sock[108];
};

FIXTURE_SETUP(libmagnet)
{
	strcpy(self->dir, "/tmp/libmagnet-unit.XXXXXX");
	ASSERT_TRUE(mkdtemp(self->dir)) TH_LOG("mkdtemp: %s", strerror(errno));
	snprintf(self->sock, sizeof(self->sock), "%s/magnetd.sock", self->dir);
}

FIXTURE_TEARDOWN(libmagnet)
{
	unlink(self->sock);
	rmdir(self->dir);
}

static int listen_here(struct harness_test *_t, FIXTURE_DATA(libmagnet) *self)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	strcpy(sa.sun_path, self->sock);
	unlink(self->sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(fd, 0) TH_LOG("socket: %s", strerror(errno));
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0)
		TH_LOG("bind %s: %s", self->sock, strerror(errno));
	ASSERT_EQ(listen(fd, 4), 0) TH_LOG("listen: %s", strerror(errno));
	return fd;
}

/* Fork a server playing @script to one client; returns its pid. */
static pid_t serve(struct harness_test *_t, FIXTURE_DATA(libmagnet) *self,
		   const struct step *script)
{
	int lfd = listen_here(_t, self), fd;
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ASSERT_GE(pid, 0) TH_LOG("fork: %s", strerror(errno));
	if (pid == 0) {
		if (poll(&p, 1, SERVER_WAIT_MS) <= 0)
			_exit(1);
		fd = accept(lfd, NULL, NULL);
		close(lfd);
		if (fd < 0)
			_exit(1);
		_exit(run_script(fd, script));
	}
	close(lfd);
	return pid;
}

/* Did the server see what it expected? */
static bool server_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * The common shape of a case: a server with the greeting and @script,
 * a client connected to it (or the test ends, failed).
 */
static struct magnet_client *open_case(struct harness_test *_t,
				       FIXTURE_DATA(libmagnet) *self,
				       const struct step *script, pid_t *pid)
{
	static const struct step greet[] = { SEND(GREETING), END };
	struct step *all;
	struct magnet_client *c;
	size_t n;

	for (n = 0; script[n].op != S_END; n++)
		;
	all = calloc(n + 2, sizeof(*all));
	ASSERT_TRUE(all);
	all[0] = greet[0];
	memcpy(all + 1, script, (n + 1) * sizeof(*all));
	*pid = serve(_t, self, all);
	free(all);
	c = magnet_connect(self->sock);
	ASSERT_TRUE(c) TH_LOG("connect to the scripted server: %s",
			      strerror(errno));
	return c;
}

/* The client closed, the server must have got the requests it expected. */
static void close_case(struct harness_test *_t, struct magnet_client *c,
		       pid_t pid, const char *what)
{
	magnet_close(c);
	EXPECT_TRUE(server_ok(pid))
		TH_LOG("%s: the server did not get the requests it expected",
		       what);
}

/* --- connecting --------------------------------------------------------- */

TEST_F(libmagnet, greeting_read_whole_from_pieces)
{
	static const struct step script[] = {
		SEND("mag"), PAUSE(30), SEND("netd 1 "), PAUSE(30),
		SEND("0.1.0\n"), END
	};
	struct magnet_client *c;
	pid_t pid = serve(_t, self, script);
	int flags;

	/* a greeting in three pieces is read whole */
	c = magnet_connect(self->sock);
	ASSERT_TRUE(c) TH_LOG("%s", strerror(errno));
	/* the socket is close-on-exec */
	flags = fcntl(magnet_fd(c), F_GETFD);
	EXPECT_GE(flags, 0);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	/* no error message before any error */
	EXPECT_STREQ(magnet_last_error(c), "");
	magnet_close(c);
	EXPECT_TRUE(server_ok(pid));
}

/* magnet_connect() must refuse @greeting with @err. */
static void check_bad_greeting(struct harness_test *_t,
			       FIXTURE_DATA(libmagnet) *self,
			       const char *greeting, size_t len, int err,
			       const char *what)
{
	const struct step script[] = { SENDN(greeting, len), HANGUP, END };
	struct magnet_client *c;
	pid_t pid = serve(_t, self, script);
	int got;

	errno = 0;
	c = magnet_connect(self->sock);
	got = errno;
	EXPECT_FALSE(c) TH_LOG("%s: a client", what);
	EXPECT_EQ(got, err) TH_LOG("%s: %s, not %s", what, strerror(got),
				   strerror(err));
	magnet_close(c);
	server_ok(pid);
}

TEST_F(libmagnet, bad_greetings_refused)
{
	check_bad_greeting(_t, self, "magnetd 2 0.9.0\n", 0, EPROTO,
			   "another protocol version");
	check_bad_greeting(_t, self, "magnetd 01x 0.1.0\n", 0, EPROTO,
			   "a protocol version that is no number");
	check_bad_greeting(_t, self, "magnetd 1\n", 0, EPROTO,
			   "greeting without release");
	check_bad_greeting(_t, self, "magnetd 1 0.1.0 extra\n", 0, EPROTO,
			   "greeting with a word too many");
	check_bad_greeting(_t, self, "SSH-2.0-OpenSSH_9.2p1\r\n", 0, EPROTO,
			   "not magnetd");
	check_bad_greeting(_t, self, "magnetd 1 0.1", 0, EPIPE,
			   "server leaving in the middle of the greeting");
	check_bad_greeting(_t, self, "", 0, EPIPE,
			   "server leaving without a greeting");
}

TEST_F(libmagnet, no_daemon_enoent_or_econnrefused)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct magnet_client *c;
	int fd, err;

	/* no socket: ENOENT */
	unlink(self->sock);
	errno = 0;
	c = magnet_connect(self->sock);
	err = errno;
	EXPECT_FALSE(c);
	EXPECT_EQ(err, ENOENT) TH_LOG("%s", strerror(err));

	/* a socket nobody listens on, a daemon that died: ECONNREFUSED */
	strcpy(sa.sun_path, self->sock);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	errno = 0;
	c = magnet_connect(self->sock);
	err = errno;
	EXPECT_FALSE(c);
	EXPECT_EQ(err, ECONNREFUSED) TH_LOG("%s", strerror(err));
	close(fd);
	unlink(self->sock);
}

/* --- snapshots ------------------------------------------------------------ */

TEST_F(libmagnet, snapshot_read_with_pushes_around_it)
{
	static const struct step script[] = {
		EXPECT("snapshot"),
		SEND("event 1 udp-send.socket 123456789 3 42 43 7 100\n"),
		SEND("alert 2 udp_send.p99 412000 fi"), PAUSE(20),
		SEND("red\nsnaps"), PAUSE(20),
		SEND("hot 1700000000123456789 7\n"
		     "metric records counter records 9007199254740991 Records read,  all buffers\n"
		     "metric udp_send.p99 gauge ns 412000.5 99th percentile\n"
		     "metric udp-send.socket.rate gauge events/s 1.5e+03\n"
		     "metric neg gauge s -0.25 \n"
		     "histogram udp_send 1 2 3\n"
		     "top udp-send.socket 1 4242 1000 Web Content\n"
		     "top udp-send.socket 2 1 5 -\n"),
		SEND("en"), PAUSE(20), SEND("d\n"),
		END
	};
	const struct magnet_metric *m;
	struct magnet_snapshot s;
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	/* with pushes before it, split anywhere */
	r = magnet_snapshot(c, &s, 2000);
	ASSERT_EQ(r, 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(s.time_ns, 1700000000123456789ULL);
	/* 4 metrics, 2 top lines, the unknown line skipped */
	EXPECT_EQ(s.nmetrics, 4);
	EXPECT_EQ(s.ntops, 2);
	/* a counter: 2^53-1 exact, the description the rest of the line */
	m = magnet_snapshot_find(&s, "records");
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, MAGNET_COUNTER);
	EXPECT_STREQ(m->unit, "records");
	EXPECT_EQ(m->value, 9007199254740991.0);
	EXPECT_STREQ(m->description, "Records read,  all buffers");
	/* a gauge with a fraction */
	m = magnet_snapshot_find(&s, "udp_send.p99");
	ASSERT_TRUE(m);
	EXPECT_EQ(m->type, MAGNET_GAUGE);
	EXPECT_STREQ(m->unit, "ns");
	EXPECT_EQ(m->value, 412000.5);
	/* the exponent form, no description */
	m = magnet_snapshot_find(&s, "udp-send.socket.rate");
	ASSERT_TRUE(m);
	EXPECT_EQ(m->value, 1500);
	EXPECT_STREQ(m->unit, "events/s");
	EXPECT_STREQ(m->description, "");
	/* a negative value, an empty description */
	m = magnet_snapshot_find(&s, "neg");
	ASSERT_TRUE(m);
	EXPECT_EQ(m->value, -0.25);
	EXPECT_STREQ(m->description, "");
	/* snapshot_find: absent names are NULL */
	EXPECT_FALSE(magnet_snapshot_find(&s, "nothing"));
	EXPECT_FALSE(magnet_snapshot_find(&s, "udp_send"));
	/* top lines, a command name with a space */
	ASSERT_EQ(s.ntops, 2);
	EXPECT_STREQ(s.tops[0].event, "udp-send.socket");
	EXPECT_EQ(s.tops[0].rank, 1);
	EXPECT_EQ(s.tops[0].tgid, 4242);
	EXPECT_EQ(s.tops[0].count, 1000);
	EXPECT_STREQ(s.tops[0].comm, "Web Content");
	EXPECT_EQ(s.tops[1].rank, 2);
	EXPECT_STREQ(s.tops[1].comm, "-");

	/* the event pushed before the reply was kept */
	r = magnet_receive(c, &msg, 0);
	ASSERT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_EVENT);
	EXPECT_EQ(msg.sub, 1);
	EXPECT_STREQ(msg.event.name, "udp-send.socket");
	EXPECT_EQ(msg.event.timestamp, 123456789);
	EXPECT_EQ(msg.event.cpu, 3);
	EXPECT_EQ(msg.event.tgid, 42);
	EXPECT_EQ(msg.event.tid, 43);
	EXPECT_EQ(msg.event.id, 7);
	EXPECT_EQ(msg.event.size, 100);
	/* the alert split across reads was kept, in order */
	r = magnet_receive(c, &msg, 0);
	ASSERT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_ALERT);
	EXPECT_EQ(msg.sub, 2);
	EXPECT_STREQ(msg.alert.metric, "udp_send.p99");
	EXPECT_EQ(msg.alert.value, 412000);
	EXPECT_TRUE(msg.alert.fired);
	/* then nothing */
	EXPECT_EQ(magnet_receive(c, &msg, 0), 0);
	/* snapshot_free empties it */
	magnet_snapshot_free(&s);
	EXPECT_FALSE(s.metrics);
	EXPECT_EQ(s.nmetrics, 0);
	magnet_snapshot_free(&s);
	close_case(_t, c, pid, "snapshot");
}

TEST_F(libmagnet, snapshot_error_replies_eremoteio)
{
	static const struct step script[] = {
		EXPECT("snapshot"), SEND("error no metrics yet\n"),
		EXPECT("snapshot"), SEND("error\n"),
		EXPECT("snapshot"), SEND("snapshot 5 0\nend\n"),
		END
	};
	struct magnet_snapshot s;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	/* an error reply: EREMOTEIO and its message */
	r = magnet_snapshot(c, &s, 2000);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_STREQ(magnet_last_error(c), "no metrics yet");
	/* a bare "error": EREMOTEIO, an empty message */
	r = magnet_snapshot(c, &s, 2000);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_STREQ(magnet_last_error(c), "");
	/* the connection stays usable; an empty snapshot */
	r = magnet_snapshot(c, &s, 2000);
	ASSERT_EQ(r, 0);
	EXPECT_EQ(s.time_ns, 5);
	EXPECT_EQ(s.nmetrics, 0);
	EXPECT_EQ(s.ntops, 0);
	magnet_snapshot_free(&s);
	close_case(_t, c, pid, "snapshot error");
}

/* --- the ledger ---------------------------------------------------------- */

/*
 * A ledger's rows, its CPUs' elapsed times, its escapes, a line of a
 * kind to come, a push before it; "ledger off" is ENODATA, an older daemon's refusal EOPNOTSUPP;
 * the connection stays usable after each.
 */
TEST_F(libmagnet, ledger_read_off_and_unknown)
{
	static const struct step script[] = {
		EXPECT("ledger"),
		SEND("alert 3 x.count 5 fired\n"
		     "ledger 77 7\n"
		     "cpu 1 3000000000\n"
		     "row 1500000000 4242 0 user - - /a/b\\x20c\n"
		     "cpu 0 2000000000\n"
		     "row 700 0 0 softirq net_rx - -\n"
		     "later a line of a kind to come\n"
		     "row 9 0 0 work - vmstat_update -\n"
		     "row 11 5151 17 system - - (gone)\n"
		     "end\n"),
		EXPECT("ledger"), SEND("ledger off\n"),
		EXPECT("ledger"),
		SEND("error unknown request \"ledger\" (snapshot, subscribe)\n"),
		EXPECT("ledger"), SEND("ledger 78 0\nend\n"),
		END
	};
	struct magnet_ledger l;
	struct magnet_message m;
	struct magnet_client *c;
	pid_t pid;

	c = open_case(_t, self, script, &pid);
	ASSERT_EQ(magnet_ledger_snapshot(c, &l, 2000), 0)
		TH_LOG("%s", magnet_last_error(c));
	EXPECT_EQ(l.time_ns, 77);
	ASSERT_EQ(l.ncpus, 2);
	EXPECT_EQ(l.elapsed_ns[0], 2000000000);
	EXPECT_EQ(l.elapsed_ns[1], 3000000000);
	ASSERT_EQ(l.nrows, 4);
	EXPECT_EQ(l.rows[0].ns, 1500000000);
	EXPECT_EQ(l.rows[0].cgroup, 4242);
	EXPECT_STREQ(l.rows[0].path, "/a/b c");
	EXPECT_STREQ(l.rows[0].kind, "user");
	EXPECT_STREQ(l.rows[0].vector, "");
	EXPECT_STREQ(l.rows[1].kind, "softirq");
	EXPECT_STREQ(l.rows[1].vector, "net_rx");
	EXPECT_STREQ(l.rows[1].path, "");
	EXPECT_STREQ(l.rows[2].name, "vmstat_update");
	EXPECT_EQ(l.rows[3].tgid, 17);
	EXPECT_STREQ(l.rows[3].path, "(gone)");
	magnet_ledger_free(&l);
	/* the push before it was kept */
	ASSERT_EQ(magnet_receive(c, &m, 0), 1);
	EXPECT_EQ(m.kind, MAGNET_MSG_ALERT);
	/* off */
	EXPECT_EQ(magnet_ledger_snapshot(c, &l, 2000), -1);
	EXPECT_EQ(errno, ENODATA);
	EXPECT_TRUE(strstr(magnet_last_error(c), "the ledger is off"));
	EXPECT_EQ(l.nrows, 0);
	/* a magnetd that does not know the request */
	EXPECT_EQ(magnet_ledger_snapshot(c, &l, 2000), -1);
	EXPECT_EQ(errno, EOPNOTSUPP);
	/* still usable */
	ASSERT_EQ(magnet_ledger_snapshot(c, &l, 2000), 0);
	EXPECT_EQ(l.nrows, 0);
	EXPECT_EQ(l.ncpus, 0);
	magnet_ledger_free(&l);
	close_case(_t, c, pid, "ledger");
}

/* Malformed rows: EPROTO, the ledger left empty. */
TEST_F(libmagnet, ledger_malformed_rows_eproto)
{
	static const char *const bad[] = {
		"ledger 1 1\nrow 1 0 0 user - -\nend\n",	/* a word short */
		"ledger 1 1\nrow x 0 0 user - - -\nend\n",	/* NS */
		"ledger 1 1\nrow 1 5 0 user - - -\nend\n",	/* cgroup, no path */
		"ledger 1 1\nrow 1 0 0 user - - /a\nend\n",	/* no cgroup, a path */
		"ledger 1 1\nrow 1 5 0 user - - /a\\x0\nend\n", /* an escape cut */
		"ledger 1 1\nrow 1 5 0 user - - /a\\x00\nend\n", /* a NUL */
		"ledger 1 1\ncpu 70000 1\nend\n",		/* CPU */
		"ledger 1 1\nrow 1 5 0 user - - /a\nfin\n",	/* no end */
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const struct step script[] = {
			EXPECT("ledger"), SEND(bad[i]), END
		};
		struct magnet_ledger l;
		struct magnet_client *c;
		pid_t pid;

		c = open_case(_t, self, script, &pid);
		EXPECT_EQ(magnet_ledger_snapshot(c, &l, 2000), -1)
			TH_LOG("case %zu", i);
		EXPECT_EQ(errno, EPROTO) TH_LOG("case %zu: %s", i,
						magnet_last_error(c));
		EXPECT_EQ(l.nrows, 0);
		EXPECT_TRUE(l.rows == NULL && l.elapsed_ns == NULL);
		close_case(_t, c, pid, "malformed ledger");
	}
}

/* Two ledgers less one another: rows by their key, CPUs; ESTALE after a restart. */
TEST(libmagnet_ledger_subtract)
{
	struct magnet_ledger_row r0[] = {
		{ .ns = 100, .cgroup = 7, .path = "/a", .kind = "user" },
		{ .ns = 50, .kind = "softirq", .vector = "net_rx" },
	};
	struct magnet_ledger_row r1[] = {
		{ .ns = 80, .kind = "softirq", .vector = "net_rx" },
		{ .ns = 30, .kind = "softirq", .vector = "timer" },
		{ .ns = 160, .cgroup = 7, .path = "/a", .kind = "user" },
	};
	uint64_t e0[] = { 1000, 2000 }, e1[] = { 1500, 2600 }, e2[] = { 10, 10 };
	struct magnet_ledger before = {
		.ncpus = 2, .elapsed_ns = e0, .nrows = 2, .rows = r0,
	};
	struct magnet_ledger now = {
		.ncpus = 2, .elapsed_ns = e1, .nrows = 3, .rows = r1,
	};
	struct magnet_ledger restarted = {
		.ncpus = 2, .elapsed_ns = e2, .nrows = 0,
	};

	ASSERT_EQ(magnet_ledger_subtract(&now, &before), 0);
	EXPECT_EQ(r1[0].ns, 30);
	EXPECT_EQ(r1[1].ns, 30);	/* new since: all of it */
	EXPECT_EQ(r1[2].ns, 60);
	EXPECT_EQ(e1[0], 500);
	EXPECT_EQ(e1[1], 600);
	EXPECT_EQ(magnet_ledger_subtract(&restarted, &before), -1);
	EXPECT_EQ(errno, ESTALE);
	EXPECT_EQ(e2[0], 10);		/* left as it was */
	EXPECT_EQ(magnet_ledger_subtract(NULL, &before), -1);
	EXPECT_EQ(errno, EINVAL);
}

/*
 * Rows found by their whole key whatever the order of either ledger; a
 * row that went back (ESTALE) leaves every row of @now as it was, those
 * before it included.
 */
TEST(libmagnet_ledger_subtract_by_key)
{
	struct magnet_ledger_row r0[] = {
		{ .ns = 10, .cgroup = 7, .kind = "user" },
		{ .ns = 20, .cgroup = 7, .tgid = 42, .kind = "user" },
		{ .ns = 30, .cgroup = 8, .kind = "user" },
		{ .ns = 40, .kind = "softirq", .vector = "net_rx" },
		{ .ns = 50, .kind = "work", .name = "a" },
		{ .ns = 60, .kind = "system" },
	};
	struct magnet_ledger_row r1[] = {
		{ .ns = 100, .kind = "work", .name = "ab" },	/* new */
		{ .ns = 100, .kind = "work", .name = "a" },
		{ .ns = 100, .kind = "softirq", .vector = "net_tx" }, /* new */
		{ .ns = 100, .kind = "softirq", .vector = "net_rx" },
		{ .ns = 100, .cgroup = 8, .kind = "user" },
		{ .ns = 100, .cgroup = 7, .tgid = 42, .kind = "user" },
		{ .ns = 100, .cgroup = 7, .kind = "user" },
		{ .ns = 100, .cgroup = 7, .kind = "system" },	/* new */
	};
	const uint64_t want[] = { 100, 50, 100, 60, 70, 80, 90, 100 };
	struct magnet_ledger_row r2[] = {
		{ .ns = 100, .cgroup = 7, .kind = "user" },
		{ .ns = 5, .kind = "system" },		/* below 60 */
	};
	uint64_t e0[] = { 1000 }, e1[] = { 1500 }, e2[] = { 2000 };
	struct magnet_ledger before = {
		.ncpus = 1, .elapsed_ns = e0, .nrows = 6, .rows = r0,
	};
	struct magnet_ledger now = {
		.ncpus = 1, .elapsed_ns = e1, .nrows = 8, .rows = r1,
	};
	struct magnet_ledger back = {
		.ncpus = 1, .elapsed_ns = e2, .nrows = 2, .rows = r2,
	};
	struct magnet_ledger empty = { .ncpus = 0 };

	ASSERT_EQ(magnet_ledger_subtract(&now, &before), 0);
	for (unsigned int i = 0; i < 8; i++)
		EXPECT_EQ(r1[i].ns, want[i]) TH_LOG("row %u", i);
	EXPECT_STREQ(r1[0].name, "ab");		/* in their order */
	EXPECT_STREQ(r1[7].kind, "system");
	EXPECT_EQ(e1[0], 500);

	EXPECT_EQ(magnet_ledger_subtract(&back, &before), -1);
	EXPECT_EQ(errno, ESTALE);
	EXPECT_EQ(r2[0].ns, 100);
	EXPECT_EQ(r2[1].ns, 5);
	EXPECT_EQ(e2[0], 2000);

	/* nothing before: nothing taken */
	ASSERT_EQ(magnet_ledger_subtract(&back, &empty), 0);
	EXPECT_EQ(r2[0].ns, 100);
	EXPECT_EQ(e2[0], 2000);
}

/* magnet_snapshot() must fail with EPROTO on @reply, leaving it empty. */
static void check_bad_snapshot(struct harness_test *_t,
			       FIXTURE_DATA(libmagnet) *self,
			       const char *reply, const char *what)
{
	const struct step script[] = { EXPECT("snapshot"), SEND(reply), END };
	struct magnet_snapshot s;
	struct magnet_client *c;
	pid_t pid;
	int r, err;

	c = open_case(_t, self, script, &pid);
	memset(&s, 0x5a, sizeof(s));
	r = magnet_snapshot(c, &s, 2000);
	err = errno;
	/* EPROTO, nothing returned */
	EXPECT_EQ(r, -1) TH_LOG("malformed snapshot (%s)", what);
	EXPECT_EQ(err, EPROTO) TH_LOG("malformed snapshot (%s)", what);
	EXPECT_TRUE(!s.metrics && !s.nmetrics && !s.tops)
		TH_LOG("malformed snapshot (%s)", what);
	/* and the client stays broken */
	r = magnet_snapshot(c, &s, 2000);
	err = errno;
	EXPECT_EQ(r, -1) TH_LOG("malformed snapshot (%s), again", what);
	EXPECT_EQ(err, EPROTO) TH_LOG("malformed snapshot (%s), again", what);
	magnet_close(c);
	server_ok(pid);
}

TEST_F(libmagnet, malformed_snapshots_eproto)
{
	check_bad_snapshot(_t, self, "ok 1\n", "not a snapshot");
	check_bad_snapshot(_t, self, "snapshot x 1\nend\n", "bad time");
	check_bad_snapshot(_t, self, "snapshot 1\nend\n", "no count");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a bogus s 1 x\nend\n",
			   "unknown type");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a gauge s one x\nend\n",
			   "value no number");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a gauge s inf x\nend\n",
			   "value inf");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a gauge  1 x\nend\n",
			   "empty unit");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a/b gauge s 1 x\nend\n",
			   "bad name");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a gauge s\nend\n",
			   "no value");
	check_bad_snapshot(_t, self, "snapshot 1 1\ntop e 0 1 1 c\nend\n",
			   "rank 0");
	check_bad_snapshot(_t, self, "snapshot 1 1\ntop e 1 1 1\nend\n",
			   "no comm");
	check_bad_snapshot(_t, self, "snapshot 1 1\n\nend\n", "empty line");
	check_bad_snapshot(_t, self, "snapshot 1 1\nmetric a gauge s 1 x\nstop\n",
			   "no \"end\"");
	check_bad_snapshot(_t, self, "snapshot 1 0\nmetric a gauge s 1 x\nend\n",
			   "more lines than the count");
}

/* A snapshot that must fail with EMSGSIZE, saying @why, at once. */
static void check_large_snapshot(struct harness_test *_t,
				 FIXTURE_DATA(libmagnet) *self,
				 const char *reply, size_t len,
				 const char *why, const char *what)
{
	const struct step script[] = {
		EXPECT("snapshot"), SENDN(reply, len), END
	};
	struct magnet_snapshot s;
	struct magnet_client *c;
	int64_t t0, dt;
	pid_t pid;
	int r, err;

	c = open_case(_t, self, script, &pid);
	memset(&s, 0x5a, sizeof(s));
	t0 = now_ms();
	r = magnet_snapshot(c, &s, 5000);
	err = errno;
	dt = now_ms() - t0;
	/* EMSGSIZE, nothing returned */
	EXPECT_EQ(r, -1) TH_LOG("%s", what);
	EXPECT_EQ(err, EMSGSIZE) TH_LOG("%s", what);
	EXPECT_TRUE(!s.metrics && !s.nmetrics && !s.tops) TH_LOG("%s", what);
	/* at once, not at the timeout */
	EXPECT_LT(dt, 4000) TH_LOG("%s", what);
	/* magnet_last_error() says why */
	EXPECT_TRUE(strstr(magnet_last_error(c), why))
		TH_LOG("%s: \"%s\"", what, magnet_last_error(c));
	/* and the client stays broken */
	r = magnet_snapshot(c, &s, 2000);
	err = errno;
	EXPECT_EQ(r, -1) TH_LOG("%s, again", what);
	EXPECT_EQ(err, EMSGSIZE) TH_LOG("%s, again", what);
	/* whatever fails later (here a bad argument), the reason stays */
	EXPECT_EQ(magnet_unsubscribe(c, 0), -1) TH_LOG("%s", what);
	EXPECT_TRUE(strstr(magnet_last_error(c), why))
		TH_LOG("%s, later: \"%s\"", what, magnet_last_error(c));
	magnet_close(c);
	server_ok(pid);
}

/*
 * Snapshots beyond MAGNET_SNAPSHOT_LINES_MAX lines or
 * MAGNET_SNAPSHOT_BYTES_MAX bytes: the client's tables must not grow with
 * whatever a peer announces and sends.
 */
TEST_F(libmagnet, snapshot_size_bounded)
{
	static const char endless[] =
		"snapshot 1 4294967295\nmetric a gauge s 1 x\nmetric b gauge s 1 x\n";
	const struct step at_max[] = {
		EXPECT("snapshot"),
		SEND("snapshot 1 1048576\nmetric a bogus s 1 x\n"), END
	};
	const struct step raw[] = {
		EXPECT("snapshot"), SEND("snapshot 1 1048577\n"), END
	};
	struct magnet_snapshot s;
	struct magnet_client *c;
	size_t line_len = 4000, n, len = 0;
	char reply[64], *big;
	unsigned int i;
	pid_t pid;
	int r;

	check_large_snapshot(_t, self, endless, strlen(endless),
			     "MAGNET_SNAPSHOT_LINES_MAX",
			     "a snapshot of 4294967295 lines");
	snprintf(reply, sizeof(reply), "snapshot 1 %u\n", MAGNET_SNAPSHOT_LINES_MAX + 1);
	check_large_snapshot(_t, self, reply, strlen(reply),
			     "MAGNET_SNAPSHOT_LINES_MAX",
			     "a snapshot of MAGNET_SNAPSHOT_LINES_MAX + 1 lines");

	/* MAGNET_SNAPSHOT_LINES_MAX lines are taken (its bad line is EPROTO) */
	c = open_case(_t, self, at_max, &pid);
	r = magnet_snapshot(c, &s, 2000);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPROTO);
	magnet_close(c);
	server_ok(pid);

	/* lines of 4000 bytes, 68 MB of them: past MAGNET_SNAPSHOT_BYTES_MAX */
	n = (size_t)MAGNET_SNAPSHOT_BYTES_MAX / line_len + 256;
	big = malloc(n * line_len + 64);
	ASSERT_TRUE(big);
	len = sprintf(big, "snapshot 1 %zu\n", n);
	for (i = 0; i < n; i++) {
		int head = sprintf(big + len, "metric m%u gauge s 1 ", i);

		memset(big + len + head, 'x', line_len - head - 1);
		big[len + line_len - 1] = '\n';
		len += line_len;
	}
	check_large_snapshot(_t, self, big, len, "MAGNET_SNAPSHOT_BYTES_MAX",
			     "a snapshot of more than MAGNET_SNAPSHOT_BYTES_MAX bytes");
	free(big);

	/* raw, MAGNET_SNAPSHOT_LINES_MAX + 1 lines: EMSGSIZE, its first line returned */
	c = open_case(_t, self, raw, &pid);
	r = magnet_request(c, "snapshot", reply, sizeof(reply));
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EMSGSIZE);
	EXPECT_STREQ(reply, "snapshot 1 1048577");
	magnet_close(c);
	server_ok(pid);
}

/* --- subscriptions and requests ---------------------------------------- */

TEST_F(libmagnet, subscribe_requests_and_replies)
{
	static const struct step script[] = {
		EXPECT("subscribe event udp-send.socket tgid 42 id 7"),
		SEND("ok 3\n"),
		EXPECT("subscribe event sched_switch cpu 0"), SEND("ok 4\n"),
		EXPECT("subscribe threshold udp_send.p99 > 200000"),
		SEND("ok 5\n"),
		EXPECT("subscribe threshold x.mean <= 0.10000000000000001"),
		SEND("ok 6\n"),
		EXPECT("subscribe threshold x.rate >= 2.5e+20"), SEND("ok 7\n"),
		EXPECT("subscribe threshold x.rate < -1.5"),
		SEND("error no such metric: x.rate\n"),
		EXPECT("subscribe event e"), SEND("ok 2147483647\n"),
		END
	};
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	/* an event with tgid and id */
	r = magnet_subscribe_event(c, "udp-send.socket", 42, -1, 7);
	EXPECT_EQ(r, 3);
	/* an event with cpu 0 */
	r = magnet_subscribe_event(c, "sched_switch", -1, 0, -1);
	EXPECT_EQ(r, 4);
	/* a name with a space: EINVAL, not sent */
	r = magnet_subscribe_event(c, "bad name", -1, -1, -1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EINVAL);
	/* a tgid beyond 32 bits: EINVAL */
	r = magnet_subscribe_event(c, "e", 1LL << 32, -1, -1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EINVAL);
	/* a threshold: integers plain */
	r = magnet_subscribe_threshold(c, "udp_send.p99", ">", 200000);
	EXPECT_EQ(r, 5);
	/* a value with 17 digits */
	r = magnet_subscribe_threshold(c, "x.mean", "<=", 0.1);
	EXPECT_EQ(r, 6);
	/* a value in exponent form */
	r = magnet_subscribe_threshold(c, "x.rate", ">=", 2.5e20);
	EXPECT_EQ(r, 7);
	/* op "=": EINVAL */
	r = magnet_subscribe_threshold(c, "x.rate", "=", 1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EINVAL);
	/* a NaN threshold: EINVAL */
	r = magnet_subscribe_threshold(c, "x.rate", ">", 0.0 / 0.0);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EINVAL);
	/* a refused subscription: EREMOTEIO and the daemon's message */
	r = magnet_subscribe_threshold(c, "x.rate", "<", -1.5);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_STREQ(magnet_last_error(c), "no such metric: x.rate");
	/* subscription number INT_MAX */
	r = magnet_subscribe_event(c, "e", -1, -1, -1);
	EXPECT_EQ(r, 2147483647);
	close_case(_t, c, pid, "subscribe");
}

/* Thresholds are written with a decimal point whatever the locale. */
TEST_F(libmagnet, threshold_written_with_a_point_in_any_locale)
{
	static const char *const locales[] = {
		"de_DE.UTF-8", "fr_FR.UTF-8", "de_DE.utf8", "fr_FR.utf8",
		"ru_RU.UTF-8", "it_IT.UTF-8",
	};
	static const struct step script[] = {
		EXPECT("subscribe threshold m > 1.5"),
		SEND("ok 1\nalert 1 m 2.25 fired\n"), END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	const char *loc = NULL;
	size_t i;
	pid_t pid;
	int r;

	for (i = 0; i < ARRAY_SIZE(locales) && !loc; i++)
		if (setlocale(LC_NUMERIC, locales[i]) &&
		    localeconv()->decimal_point[0] == ',')
			loc = locales[i];
	if (!loc)
		SKIP("no locale with a decimal comma installed");
	c = open_case(_t, self, script, &pid);
	/* the threshold written with a point */
	r = magnet_subscribe_threshold(c, "m", ">", 1.5);
	EXPECT_EQ(r, 1) TH_LOG("%s", loc);
	/* the value read with a point */
	r = magnet_receive(c, &msg, 2000);
	EXPECT_EQ(r, 1) TH_LOG("%s", loc);
	EXPECT_EQ(msg.alert.value, 2.25) TH_LOG("%s", loc);
	close_case(_t, c, pid, "locale");
	setlocale(LC_NUMERIC, "C");
}

TEST_F(libmagnet, unsubscribe_drops_its_queued_pushes)
{
	static const struct step script[] = {
		EXPECT("unsubscribe 3"),
		SEND("event 3 a 1 0 1 1 1 1\nevent 4 b 1 0 1 1 1 1\n"
		     "alert 3 m 5 fired\nlost 2\nok\n"),
		EXPECT("unsubscribe 4"), SEND("ok 4\n"),
		END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	r = magnet_unsubscribe(c, 3);
	EXPECT_EQ(r, 0);
	/* the queued pushes of the subscription ended are gone */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_EVENT);
	EXPECT_EQ(msg.sub, 4);
	/* but not the others, nor "lost" */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_LOST);
	EXPECT_EQ(msg.lost.count, 2);
	/* then nothing */
	EXPECT_EQ(magnet_receive(c, &msg, 0), 0);
	/* unsubscribe 0: EINVAL */
	EXPECT_EQ(magnet_unsubscribe(c, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	/* "ok 4" to unsubscribe: EPROTO */
	r = magnet_unsubscribe(c, 4);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPROTO);
	close_case(_t, c, pid, "unsubscribe");
}

TEST_F(libmagnet, raw_requests_and_their_replies)
{
	static const struct step script[] = {
		EXPECT("release"), SEND("ok\n"),
		EXPECT("attach"), SEND("error not allowed: uid 1000\n"),
		EXPECT("snapshot"),
		SEND("snapshot 1 2\nmetric a gauge s 1 x\ntop e 1 2 3 c\nend\n"
		     "event 1 e 1 0 1 1 1 1\n"),
		EXPECT("release"), SEND("ok\n"),
		END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	char reply[64];
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	/* a raw request: its reply */
	r = magnet_request(c, "release", reply, sizeof(reply));
	EXPECT_EQ(r, 0);
	EXPECT_STREQ(reply, "ok");
	/* refused: EREMOTEIO, the line and the message */
	r = magnet_request(c, "attach", reply, sizeof(reply));
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_STREQ(reply, "error not allowed: uid 1000");
	EXPECT_STREQ(magnet_last_error(c), "not allowed: uid 1000");
	/* a raw snapshot: its first line */
	r = magnet_request(c, "snapshot", reply, sizeof(reply));
	EXPECT_EQ(r, 0);
	EXPECT_STREQ(reply, "snapshot 1 2");
	/* the snapshot's body is skipped, the push after it received */
	r = magnet_receive(c, &msg, 2000);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_EVENT);
	/* a request with a newline: EINVAL */
	r = magnet_request(c, "two\nlines", reply, sizeof(reply));
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EINVAL);
	/* a short reply buffer: cut */
	r = magnet_request(c, "release", reply, 2);
	EXPECT_EQ(r, 0);
	EXPECT_STREQ(reply, "o");
	close_case(_t, c, pid, "raw requests");
}

/* --- malformed and odd lines ---------------------------------------------- */

/* magnet_receive() must take @line (and its newline) as @good. */
static void check_push(struct harness_test *_t, FIXTURE_DATA(libmagnet) *self,
		       const char *line, bool good)
{
	char buf[256];
	const struct step script[] = { SEND(buf), END };
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r, err;

	snprintf(buf, sizeof(buf), "%s\n", line);
	c = open_case(_t, self, script, &pid);
	r = magnet_receive(c, &msg, 2000);
	err = errno;
	if (good) {
		/* a well-formed push accepted */
		EXPECT_EQ(r, 1) TH_LOG("\"%s\"", line);
	} else {
		/* a malformed line rejected (EPROTO) ... */
		EXPECT_EQ(r, -1) TH_LOG("\"%s\"", line);
		EXPECT_EQ(err, EPROTO) TH_LOG("\"%s\"", line);
		/* ... and the client stays broken */
		r = magnet_receive(c, &msg, 0);
		err = errno;
		EXPECT_EQ(r, -1) TH_LOG("\"%s\", again", line);
		EXPECT_EQ(err, EPROTO) TH_LOG("\"%s\", again", line);
	}
	magnet_close(c);
	server_ok(pid);
}

TEST_F(libmagnet, push_lines_parsed_strictly)
{
	static const char *const bad[] = {
		"event 1 a 1 0 1 1 1",
		"event 1 a 1 0 1 1 1 1 9",
		"event  1 a 1 0 1 1 1 1",
		"event 1 a 1 0 1 1 1 1 ",
		" event 1 a 1 0 1 1 1 1",
		"event 0 a 1 0 1 1 1 1",
		"event 1 a/b 1 0 1 1 1 1",
		"event 1 a 1 4294967296 1 1 1 1",
		"event 1 a 18446744073709551616 0 1 1 1 1",
		"event 1 a -1 0 1 1 1 1",
		"event 1 a +1 0 1 1 1 1",
		"event 2147483648 a 1 0 1 1 1 1",
		"alert 1 m 5 maybe",
		"alert 1 m nan fired",
		"alert 1 m 0x10 fired",
		"alert 1 m 1e999 fired",
		"alert 1 m .5 fired",
		"alert 1 m 5. fired",
		"alert 1 m 5e fired",
		"alert 1 m 5 fired extra",
		"lost",
		"lost -3",
		"lost 1 2",
		"ok 1",
		"",
		"hello world",
	};
	static const char *const good[] = {
		("event 2147483647 a.b-c_d 18446744073709551615 4294967295 "
		 "4294967295 4294967295 18446744073709551615 4294967295"),
		"alert 1 m -2.5e-3 cleared",
		"alert 1 m 1E+2 fired",
		"lost 0",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		check_push(_t, self, bad[i], false);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		check_push(_t, self, good[i], true);
}

TEST_F(libmagnet, nul_byte_in_a_line_eproto)
{
	static const struct step script[] = {
		SENDN("lost\0 1\n", 8), END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(_t, self, script, &pid);
	r = magnet_receive(c, &msg, 2000);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPROTO);
	close_case(_t, c, pid, "NUL");
}

static char line_max[MAGNET_LINE_MAX + 1];	/* "error xxx...\n", LINE_MAX bytes */
static char line_over[MAGNET_LINE_MAX + 2];	/* one byte more */
static char line_endless[2 * MAGNET_LINE_MAX];	/* no newline at all */

TEST_F(libmagnet, lines_longer_than_magnet_line_max_eproto)
{
	static const struct step script[] = {
		EXPECT("attach"), SEND(line_max),
		EXPECT("attach"), SEND("ok\n"),
		EXPECT("attach"), SEND(line_over),
		END
	};
	static const struct step endless[] = { SEND(line_endless), END };
	struct magnet_message msg;
	struct magnet_client *c;
	int64_t t0, dt;
	pid_t pid;
	int r, err;

	memset(line_max, 'x', MAGNET_LINE_MAX - 1);
	memcpy(line_max, "error ", 6);
	line_max[MAGNET_LINE_MAX - 1] = '\n';
	memset(line_over, 'x', MAGNET_LINE_MAX);
	memcpy(line_over, "error ", 6);
	line_over[MAGNET_LINE_MAX] = '\n';
	memset(line_endless, 'x', sizeof(line_endless) - 1);
	memcpy(line_endless, "lost ", 5);

	c = open_case(_t, self, script, &pid);
	/* a line of MAGNET_LINE_MAX bytes with its newline is taken */
	r = magnet_request(c, "attach", NULL, 0);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EREMOTEIO);
	EXPECT_EQ(strlen(magnet_last_error(c)), MAGNET_LINE_MAX - 7);
	/* and the next reply read right */
	r = magnet_request(c, "attach", NULL, 0);
	EXPECT_EQ(r, 0);
	/* a line of MAGNET_LINE_MAX + 1 bytes: EPROTO */
	r = magnet_request(c, "attach", NULL, 0);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPROTO);
	close_case(_t, c, pid, "long lines");

	/* a line without end: EPROTO as soon as it is too long */
	c = open_case(_t, self, endless, &pid);
	t0 = now_ms();
	r = magnet_receive(c, &msg, 5000);
	err = errno;
	dt = now_ms() - t0;
	EXPECT_EQ(r, -1);
	EXPECT_EQ(err, EPROTO);
	EXPECT_LT(dt, 4000);
	close_case(_t, c, pid, "endless line");
}

/* --- the daemon going away --------------------------------------------- */

TEST_F(libmagnet, daemon_leaving_epipe)
{
	static const struct step mid_reply[] = {
		EXPECT("snapshot"),
		SEND("snapshot 1 3\nmetric a gauge s 1 x\n"), HANGUP, END
	};
	static const struct step mid_line[] = {
		EXPECT("subscribe event a"), SEND("ok"), HANGUP, END
	};
	static const struct step pushes_first[] = {
		EXPECT("subscribe event a"),
		SEND("alert 1 m 1 fired\nlost 4\n"), HANGUP, END
	};
	static const struct step gone[] = { HANGUP, END };
	struct magnet_message msg;
	struct magnet_snapshot s;
	struct magnet_client *c;
	pid_t pid;
	int r;

	/* mid-snapshot: EPIPE, nothing returned */
	c = open_case(_t, self, mid_reply, &pid);
	r = magnet_snapshot(c, &s, 2000);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	EXPECT_FALSE(s.metrics);
	EXPECT_EQ(s.nmetrics, 0);
	/* and later calls: EPIPE */
	r = magnet_subscribe_event(c, "a", -1, -1, -1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	close_case(_t, c, pid, "mid-reply");

	/* mid-line: EPIPE */
	c = open_case(_t, self, mid_line, &pid);
	r = magnet_subscribe_event(c, "a", -1, -1, -1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	close_case(_t, c, pid, "mid-line");

	/* before the reply: EPIPE ... */
	c = open_case(_t, self, pushes_first, &pid);
	r = magnet_subscribe_event(c, "a", -1, -1, -1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	/* ... the pushes that came before are still received ... */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_ALERT);
	/* ... all of them ... */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_LOST);
	EXPECT_EQ(msg.lost.count, 4);
	/* ... then EPIPE */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	close_case(_t, c, pid, "pushes first");

	/* a request to a daemon gone: EPIPE, not a SIGPIPE killing us */
	c = open_case(_t, self, gone, &pid);
	server_ok(pid);
	usleep(50 * 1000);
	r = magnet_subscribe_threshold(c, "m", ">", 1);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, EPIPE);
	magnet_close(c);
}

/* --- timeouts, signals, overflow ----------------------------------------- */

TEST_F(libmagnet, timeouts_and_late_replies)
{
	static const struct step late_head[] = {
		EXPECT("snapshot"), PAUSE(400),
		SEND("snapshot 7 2\nmetric a gauge s 1 x\nmetric b gauge s 2 y\nend\n"),
		EXPECT("subscribe event late"), SEND("ok 9\n"),
		END
	};
	static const struct step late_body[] = {
		EXPECT("snapshot"),
		SEND("snapshot 7 3\nmetric a gauge s 1 x\n"), PAUSE(400),
		SEND("metric b gauge s 2 y\ntop e 1 2 3 c\nend\n"
		     "alert 4 m 1 fired\n"),
		EXPECT("snapshot"),
		SEND("snapshot 8 1\nmetric c gauge s 3 z\nend\n"),
		END
	};
	static const struct step quiet[] = { END };
	struct magnet_message msg;
	struct magnet_snapshot s;
	struct magnet_client *c;
	int64_t t0, dt;
	pid_t pid;
	int r, err;

	/* a snapshot times out */
	c = open_case(_t, self, late_head, &pid);
	t0 = now_ms();
	r = magnet_snapshot(c, &s, 100);
	err = errno;
	dt = now_ms() - t0;
	EXPECT_EQ(r, -1);
	EXPECT_EQ(err, ETIMEDOUT);
	EXPECT_GE(dt, 95);
	EXPECT_LT(dt, 380);
	/* the late snapshot is dropped, the next reply read */
	r = magnet_subscribe_event(c, "late", -1, -1, -1);
	EXPECT_EQ(r, 9);
	close_case(_t, c, pid, "late reply");

	/* a snapshot times out in its body */
	c = open_case(_t, self, late_body, &pid);
	r = magnet_snapshot(c, &s, 100);
	EXPECT_EQ(r, -1);
	EXPECT_EQ(errno, ETIMEDOUT);
	EXPECT_FALSE(s.metrics);
	/* the rest of the old one is dropped, the new one read */
	r = magnet_snapshot(c, &s, 2000);
	ASSERT_EQ(r, 0);
	EXPECT_EQ(s.time_ns, 8);
	ASSERT_EQ(s.nmetrics, 1);
	EXPECT_STREQ(s.metrics[0].name, "c");
	magnet_snapshot_free(&s);
	/* the push between them is kept */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_ALERT);
	EXPECT_EQ(msg.sub, 4);
	close_case(_t, c, pid, "late body");

	/* a receive with nothing: 0 after its timeout */
	c = open_case(_t, self, quiet, &pid);
	t0 = now_ms();
	r = magnet_receive(c, &msg, 150);
	dt = now_ms() - t0;
	EXPECT_EQ(r, 0);
	EXPECT_GE(dt, 145);
	EXPECT_LT(dt, 1000);
	/* with timeout 0: at once */
	t0 = now_ms();
	r = magnet_receive(c, &msg, 0);
	dt = now_ms() - t0;
	EXPECT_EQ(r, 0);
	EXPECT_LT(dt, 50);
	close_case(_t, c, pid, "quiet");
}

static volatile sig_atomic_t signals;

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

TEST_F(libmagnet, waits_go_on_through_signals)
{
	static const struct step script[] = {
		PAUSE(50), SIGNAL, PAUSE(50), SIGNAL, PAUSE(50),
		SEND("lost 3\n"),
		EXPECT("release"), SIGNAL, PAUSE(50), SIGNAL, PAUSE(50),
		SEND("ok\n"),
		END
	};
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	sigaction(SIGUSR1, &sa, NULL);
	signals = 0;
	c = open_case(_t, self, script, &pid);
	/* a receive goes on waiting through signals */
	r = magnet_receive(c, &msg, 5000);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_LOST);
	EXPECT_EQ(msg.lost.count, 3);
	EXPECT_EQ(signals, 2);
	/* so does a request */
	r = magnet_request(c, "release", NULL, 0);
	EXPECT_EQ(r, 0);
	EXPECT_EQ(signals, 4);
	close_case(_t, c, pid, "signals");
	signal(SIGUSR1, SIG_DFL);
}

#define FLOOD		5000
#define QUEUE_LIMIT	4096

static char flood[FLOOD * 32];

TEST_F(libmagnet, pushes_beyond_the_queue_counted_as_lost)
{
	static const struct step script[] = {
		EXPECT("subscribe event e"), SEND(flood), SEND("ok 1\n"),
		EXPECT("release"), SEND("event 1 e 0 0 1 1 5000 0\nok\n"),
		SEND("lost 7\nevent 1 e 0 0 1 1 5001 0\n"),
		END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	unsigned int i, inorder = 0;
	size_t len = 0;
	pid_t pid;
	int r;

	for (i = 0; i < FLOOD; i++)
		len += sprintf(flood + len, "event 1 e %u 0 1 1 %u 0\n", i, i);

	c = open_case(_t, self, script, &pid);
	/* a subscription while FLOOD pushes come first */
	r = magnet_subscribe_event(c, "e", -1, -1, -1);
	EXPECT_EQ(r, 1);
	for (i = 0; i < 10; i++)
		if (magnet_receive(c, &msg, 0) == 1 &&
		    msg.kind == MAGNET_MSG_EVENT && msg.event.id == i)
			inorder++;
	/* a request while the queue is nearly full */
	r = magnet_request(c, "release", NULL, 0);
	EXPECT_EQ(r, 0);
	for (; i < QUEUE_LIMIT; i++)
		if (magnet_receive(c, &msg, 0) == 1 &&
		    msg.kind == MAGNET_MSG_EVENT && msg.event.id == i)
			inorder++;
	/* the first QUEUE_LIMIT pushes, in order */
	EXPECT_EQ(inorder, QUEUE_LIMIT);
	/* then "lost" for the pushes beyond the queue */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_LOST);
	EXPECT_EQ(msg.lost.count, FLOOD - QUEUE_LIMIT);
	/* then the push that came after them */
	r = magnet_receive(c, &msg, 0);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_EVENT);
	EXPECT_EQ(msg.event.id, 5000);
	/* the daemon's own "lost" */
	r = magnet_receive(c, &msg, 2000);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_LOST);
	EXPECT_EQ(msg.lost.count, 7);
	/* and what follows it */
	r = magnet_receive(c, &msg, 2000);
	EXPECT_EQ(r, 1);
	EXPECT_EQ(msg.kind, MAGNET_MSG_EVENT);
	EXPECT_EQ(msg.event.id, 5001);
	/* then nothing */
	EXPECT_EQ(magnet_receive(c, &msg, 100), 0);
	close_case(_t, c, pid, "overflow");
}

/* What magnet_last_error() says now contains @want. */
static void expect_said(struct harness_test *_t, struct magnet_client *c,
			const char *want)
{
	EXPECT_TRUE(strstr(magnet_last_error(c), want))
		TH_LOG("magnet_last_error(): \"%s\", not \"%s\"",
		       magnet_last_error(c), want);
}

/* A call on @c returned @r: a failure with @err, saying @want. */
#define EXPECT_FAILED(c, r, err, want) do {				\
		int _r = (r), _e = errno;				\
									\
		EXPECT_EQ(_r, -1);					\
		EXPECT_EQ(_e, (err));					\
		expect_said(_t, (c), (want));				\
	} while (0)

/*
 * Failures of the library's own set magnet_last_error() too, each saying
 * what went wrong: a bad argument, a reply not come in time, a reply not
 * understood, the daemon gone; a success keeps it, and so does a
 * magnet_receive() that found nothing.
 */
TEST_F(libmagnet, last_error_says_local_failures)
{
	static const struct step script[] = {
		EXPECT("snapshot"), PAUSE(300),
		SEND("snapshot 7 0\nend\n"),
		EXPECT("subscribe event a"), SEND("ok 3\n"),
		EXPECT("subscribe event b"), SEND("okay\n"),
		END
	};
	static const struct step gone[] = {
		EXPECT("subscribe event a"), HANGUP, END
	};
	struct magnet_snapshot snap;
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;

	c = open_case(_t, self, script, &pid);
	EXPECT_STREQ(magnet_last_error(c), "");
	/* bad arguments: EINVAL, and which */
	EXPECT_FAILED(c, magnet_subscribe_event(c, "a b", -1, -1, -1), EINVAL,
		      "event name");
	EXPECT_FAILED(c, magnet_subscribe_threshold(c, "m", "!=", 1), EINVAL,
		      "operator \"!=\"");
	EXPECT_FAILED(c, magnet_unsubscribe(c, 0), EINVAL, "subscription 0");
	EXPECT_FAILED(c, magnet_request(c, "a\nb", NULL, 0), EINVAL,
		      "one line");
	EXPECT_FAILED(c, magnet_snapshot(c, NULL, 100), EINVAL, "no snapshot");
	/* a reply not come in time: ETIMEDOUT, and to what */
	EXPECT_FAILED(c, magnet_snapshot(c, &snap, 100), ETIMEDOUT,
		      "no reply from magnetd to \"snapshot\" in time");
	/* nothing to receive is no failure: the message stays */
	EXPECT_EQ(magnet_receive(c, &msg, 50), 0);
	expect_said(_t, c, "in time");
	/* nor is a success (the late snapshot dropped on the way) */
	EXPECT_EQ(magnet_subscribe_event(c, "a", -1, -1, -1), 3);
	expect_said(_t, c, "in time");
	/* a reply not understood: EPROTO, and which; from then on the same
	 * errno, and the message that says why
	 */
	EXPECT_FAILED(c, magnet_subscribe_event(c, "b", -1, -1, -1), EPROTO,
		      "not \"ok SUB\"");
	EXPECT_FAILED(c, magnet_receive(c, &msg, 0), EPROTO, "not \"ok SUB\"");
	close_case(_t, c, pid, "local failures");

	/* the daemon gone: EPIPE, said, and said again */
	c = open_case(_t, self, gone, &pid);
	EXPECT_FAILED(c, magnet_subscribe_event(c, "a", -1, -1, -1), EPIPE,
		      "closed the connection");
	EXPECT_FAILED(c, magnet_snapshot(c, &snap, 100), EPIPE,
		      "closed the connection");
	close_case(_t, c, pid, "gone");
	/* no client, nothing to say */
	EXPECT_STREQ(magnet_last_error(NULL), "");
}

TEST(libmagnet_bad_arguments_einval)
{
	struct magnet_message msg;
	char longpath[200];

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	/* a path too long for a Unix socket: ENAMETOOLONG */
	errno = 0;
	EXPECT_FALSE(magnet_connect(longpath));
	EXPECT_EQ(errno, ENAMETOOLONG);
	/* a NULL client: EINVAL */
	EXPECT_EQ(magnet_receive(NULL, &msg, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	/* magnet_fd(NULL): -1 */
	EXPECT_EQ(magnet_fd(NULL), -1);
	magnet_close(NULL);
	magnet_snapshot_free(NULL);
	/* snapshot_find(NULL): NULL */
	EXPECT_FALSE(magnet_snapshot_find(NULL, "x"));
}

TEST(libmagnet_per_cpu_metric_names)
{
	static const char *const yes[] = {
		"udp-send.socket.cpu0.count", "e.cpu17.count", "a.cpu1.b.cpu2.count",
	};
	static const char *const no[] = {
		"udp-send.socket.count", "e.cpu.count", "e.cpux.count",
		"e.cpu1.rate", "e.cpu1.count.x", "cpu1.count", "", NULL,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(yes); i++)
		EXPECT_TRUE(magnet_metric_per_cpu(yes[i])) TH_LOG("%s", yes[i]);
	for (i = 0; i < ARRAY_SIZE(no); i++)
		EXPECT_FALSE(magnet_metric_per_cpu(no[i]))
			TH_LOG("%s", no[i] ? no[i] : "NULL");
}

/* --- spans, without the module: the bookkeeping and the traceparent ---- */

TEST(libmagnet_span_traceparent_parse)
{
	static const char *const bad[] = {
		"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
	};
	uint8_t trace[16], parent[8];

	ASSERT_EQ(magnet_span_parse_traceparent(
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		trace, parent), 0);
	EXPECT_EQ(trace[0], 0x4b);
	EXPECT_EQ(trace[15], 0x36);
	EXPECT_EQ(parent[0], 0x00);
	EXPECT_EQ(parent[7], 0xb7);
	/* a later version may go on after a '-' */
	EXPECT_EQ(magnet_span_parse_traceparent(
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-xyz",
		trace, parent), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(magnet_span_parse_traceparent(bad[i], trace, parent), -1)
			TH_LOG("accepted \"%s\"", bad[i]);
		EXPECT_EQ(errno, EINVAL);
	}
	EXPECT_EQ(magnet_span_parse_traceparent(NULL, trace, parent), -1);
}

TEST(libmagnet_span_nesting_without_the_module)
{
	char root[MAGNET_TRACEPARENT_LEN + 1], child[MAGNET_TRACEPARENT_LEN + 1];
	const char *attrs[] = { "k=v", NULL };
	const char *noeq[] = { "kv", NULL };
	char big[600];
	const char *long_attrs[] = { big, NULL };

	errno = 0;
	EXPECT_EQ(magnet_span_fd(), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(magnet_span_traceparent(root), -1);
	EXPECT_EQ(errno, ESRCH);
	EXPECT_EQ(magnet_span_end(NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(magnet_span_event("x", NULL), -1);
	EXPECT_EQ(magnet_span_begin("", NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(magnet_span_begin("a", noeq), -1);
	EXPECT_EQ(errno, EINVAL);
	memset(big, 'v', sizeof(big) - 1);
	big[0] = 'k';
	big[1] = '=';
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(magnet_span_begin("a", long_attrs), -1);
	EXPECT_EQ(errno, EMSGSIZE);
	EXPECT_EQ(magnet_span_traceparent(root), -1);	/* none opened */

	ASSERT_EQ(magnet_span_begin("root", attrs), 0);
	ASSERT_EQ(magnet_span_traceparent(root), 0);
	EXPECT_EQ(strlen(root), (size_t)MAGNET_TRACEPARENT_LEN);
	EXPECT_EQ(memcmp(root, "00-", 3), 0);
	EXPECT_EQ(strcmp(root + 52, "-01"), 0);
	ASSERT_EQ(magnet_span_begin("child", NULL), 0);
	ASSERT_EQ(magnet_span_traceparent(child), 0);
	EXPECT_EQ(memcmp(root, child, 36), 0) TH_LOG("%s vs %s", root, child);
	EXPECT_NE(memcmp(root + 36, child + 36, 16), 0);
	EXPECT_EQ(magnet_span_event("e", attrs), 0);
	EXPECT_EQ(magnet_span_end(NULL), 0);
	ASSERT_EQ(magnet_span_traceparent(child), 0);
	EXPECT_STREQ(child, root);
	EXPECT_EQ(magnet_span_end(NULL), 0);
	EXPECT_EQ(magnet_span_end(NULL), -1);

	/* MAGNET_SPAN_DEPTH at most */
	for (int i = 0; i < MAGNET_SPAN_DEPTH; i++)
		ASSERT_EQ(magnet_span_begin("deep", NULL), 0);
	EXPECT_EQ(magnet_span_begin("deeper", NULL), -1);
	EXPECT_EQ(errno, ENOSPC);
	for (int i = 0; i < MAGNET_SPAN_DEPTH; i++)
		ASSERT_EQ(magnet_span_end(NULL), 0);
	EXPECT_EQ(magnet_span_end(NULL), -1);
}

TEST(libmagnet_span_adopted_parent)
{
	const char *tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
	char got[MAGNET_TRACEPARENT_LEN + 1];

	EXPECT_EQ(magnet_span_adopt("nonsense"), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(magnet_span_traceparent(got), -1);	/* nothing adopted */
	ASSERT_EQ(magnet_span_adopt(tp), 0);
	ASSERT_EQ(magnet_span_traceparent(got), 0);
	EXPECT_STREQ(got, tp);
	ASSERT_EQ(magnet_span_begin("server", NULL), 0);
	ASSERT_EQ(magnet_span_traceparent(got), 0);
	EXPECT_EQ(memcmp(got, tp, 36), 0) TH_LOG("%s", got);
	EXPECT_NE(memcmp(got + 36, tp + 36, 16), 0);
	EXPECT_EQ(magnet_span_end(NULL), 0);
	/* one root per adoption: the next root starts a trace of its own */
	EXPECT_EQ(magnet_span_traceparent(got), -1);
	ASSERT_EQ(magnet_span_begin("next", NULL), 0);
	ASSERT_EQ(magnet_span_traceparent(got), 0);
	EXPECT_NE(memcmp(got + 3, tp + 3, 32), 0);
	EXPECT_EQ(magnet_span_end(NULL), 0);
}

TEST_MAIN

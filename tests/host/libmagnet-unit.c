// SPDX-License-Identifier: GPL-2.0
/*
 * libmagnet-unit: the client library's parsing and bookkeeping against
 * scripted byte streams.
 *
 * Each case forks a tiny line server of its own on a Unix socket in a
 * temporary directory. The server plays a script (send these bytes, pause,
 * expect this request line, signal the client, hang up) and exits 1 if
 * the library sent something else; the test asserts what the library made
 * of the bytes. This is not magnetd: the daemon is tested elsewhere, this
 * feeds the library the edge cases a real daemon seldom produces (lines
 * split anywhere, pushes between replies, malformed lines, a line too
 * long, a daemon leaving mid-reply).
 *
 * Prints "ok - what" or "not ok - what" per check (tests/harness.h), then
 * "N passed, M failed"; exits 1 if anything failed.
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

static char sock_path[108];
static char tmp_dir[64];

/* A check, in the harness's format (tests/harness.h). */
#define ok harness_check

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

static int listen_here(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	strcpy(sa.sun_path, sock_path);
	unlink(sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, 4)) {
		perror("libmagnet-unit: listen");
		exit(1);
	}
	return fd;
}

/* Fork a server playing @script to one client; returns its pid. */
static pid_t serve(const struct step *script)
{
	int lfd = listen_here(), fd;
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("libmagnet-unit: fork");
		exit(1);
	}
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
 * a client connected to it. NULL (and a failed check) if it could not
 * connect.
 */
static struct magnet_client *open_case(const struct step *script, pid_t *pid)
{
	static const struct step greet[] = { SEND(GREETING), END };
	struct step *all;
	struct magnet_client *c;
	size_t n;

	for (n = 0; script[n].op != S_END; n++)
		;
	all = calloc(n + 2, sizeof(*all));
	all[0] = greet[0];
	memcpy(all + 1, script, (n + 1) * sizeof(*all));
	*pid = serve(all);
	free(all);
	c = magnet_connect(sock_path);
	if (!c)
		ok(false, "connect to the scripted server: %s", strerror(errno));
	return c;
}

static void close_case(struct magnet_client *c, pid_t pid, const char *what)
{
	magnet_close(c);
	ok(server_ok(pid), "%s: the server got the requests it expected", what);
}

/* --- connecting --------------------------------------------------------- */

static void test_greeting_split(void)
{
	static const struct step script[] = {
		SEND("mag"), PAUSE(30), SEND("netd 1 "), PAUSE(30),
		SEND("0.1.0\n"), END
	};
	struct magnet_client *c;
	pid_t pid = serve(script);
	int flags;

	c = magnet_connect(sock_path);
	ok(c, "greeting in three pieces is read whole");
	if (c) {
		flags = fcntl(magnet_fd(c), F_GETFD);
		ok(flags >= 0 && (flags & FD_CLOEXEC),
		   "the socket is close-on-exec");
		ok(!strcmp(magnet_last_error(c), ""),
		   "no error message before any error");
	}
	magnet_close(c);
	ok(server_ok(pid), "greeting: server done");
}

/* magnet_connect() must refuse @greeting with @err. */
static void check_bad_greeting(const char *greeting, size_t len, int err,
			       const char *what)
{
	const struct step script[] = { SENDN(greeting, len), HANGUP, END };
	struct magnet_client *c;
	pid_t pid = serve(script);

	errno = 0;
	c = magnet_connect(sock_path);
	ok(!c && errno == err, "%s: %s (got %s)", what, strerror(err),
	   c ? "a client" : strerror(errno));
	magnet_close(c);
	server_ok(pid);
}

static void test_bad_greetings(void)
{
	check_bad_greeting("magnetd 2 0.9.0\n", 0, EPROTO,
			   "another protocol version");
	check_bad_greeting("magnetd 01x 0.1.0\n", 0, EPROTO,
			   "a protocol version that is no number");
	check_bad_greeting("magnetd 1\n", 0, EPROTO, "greeting without release");
	check_bad_greeting("magnetd 1 0.1.0 extra\n", 0, EPROTO,
			   "greeting with a word too many");
	check_bad_greeting("SSH-2.0-OpenSSH_9.2p1\r\n", 0, EPROTO,
			   "not magnetd");
	check_bad_greeting("magnetd 1 0.1", 0, EPIPE,
			   "server leaving in the middle of the greeting");
	check_bad_greeting("", 0, EPIPE, "server leaving without a greeting");
}

static void test_no_daemon(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct magnet_client *c;
	int fd;

	unlink(sock_path);
	errno = 0;
	c = magnet_connect(sock_path);
	ok(!c && errno == ENOENT, "no socket: ENOENT (got %s)", strerror(errno));

	/* a socket nobody listens on: a daemon that died */
	strcpy(sa.sun_path, sock_path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	errno = 0;
	c = magnet_connect(sock_path);
	ok(!c && errno == ECONNREFUSED, "nobody listening: ECONNREFUSED (got %s)",
	   strerror(errno));
	close(fd);
	unlink(sock_path);
}

/* --- snapshots ------------------------------------------------------------ */

static void test_snapshot(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_snapshot(c, &s, 2000);
	ok(r == 0, "snapshot with pushes before it, split anywhere (%s)",
	   r ? strerror(errno) : "ok");
	ok(s.time_ns == 1700000000123456789ULL, "snapshot time");
	ok(s.nmetrics == 4 && s.ntops == 2,
	   "4 metrics, 2 top lines, the unknown line skipped (%u, %u)",
	   s.nmetrics, s.ntops);
	m = magnet_snapshot_find(&s, "records");
	ok(m && m->type == MAGNET_COUNTER && !strcmp(m->unit, "records") &&
	   m->value == 9007199254740991.0 &&
	   !strcmp(m->description, "Records read,  all buffers"),
	   "counter: 2^53-1 exact, description is the rest of the line");
	m = magnet_snapshot_find(&s, "udp_send.p99");
	ok(m && m->type == MAGNET_GAUGE && !strcmp(m->unit, "ns") &&
	   m->value == 412000.5, "gauge with a fraction");
	m = magnet_snapshot_find(&s, "udp-send.socket.rate");
	ok(m && m->value == 1500 && !strcmp(m->unit, "events/s") &&
	   !strcmp(m->description, ""),
	   "exponent form, no description");
	m = magnet_snapshot_find(&s, "neg");
	ok(m && m->value == -0.25 && !strcmp(m->description, ""),
	   "negative value, empty description");
	ok(!magnet_snapshot_find(&s, "nothing") &&
	   !magnet_snapshot_find(&s, "udp_send"),
	   "snapshot_find: absent names are NULL");
	ok(s.ntops == 2 && !strcmp(s.tops[0].event, "udp-send.socket") &&
	   s.tops[0].rank == 1 && s.tops[0].tgid == 4242 &&
	   s.tops[0].count == 1000 && !strcmp(s.tops[0].comm, "Web Content") &&
	   s.tops[1].rank == 2 && !strcmp(s.tops[1].comm, "-"),
	   "top lines, a command name with a space");

	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_EVENT && msg.sub == 1 &&
	   !strcmp(msg.event.name, "udp-send.socket") &&
	   msg.event.timestamp == 123456789 && msg.event.cpu == 3 &&
	   msg.event.tgid == 42 && msg.event.tid == 43 && msg.event.id == 7 &&
	   msg.event.size == 100, "event pushed before the reply was kept");
	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_ALERT && msg.sub == 2 &&
	   !strcmp(msg.alert.metric, "udp_send.p99") &&
	   msg.alert.value == 412000 && msg.alert.fired,
	   "alert split across reads was kept, in order");
	ok(magnet_receive(c, &msg, 0) == 0, "then nothing");
	magnet_snapshot_free(&s);
	ok(!s.metrics && !s.nmetrics, "snapshot_free empties it");
	magnet_snapshot_free(&s);
	close_case(c, pid, "snapshot");
}

static void test_snapshot_error(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_snapshot(c, &s, 2000);
	ok(r == -1 && errno == EREMOTEIO &&
	   !strcmp(magnet_last_error(c), "no metrics yet"),
	   "error reply: EREMOTEIO and its message");
	r = magnet_snapshot(c, &s, 2000);
	ok(r == -1 && errno == EREMOTEIO && !strcmp(magnet_last_error(c), ""),
	   "bare \"error\": EREMOTEIO, empty message");
	r = magnet_snapshot(c, &s, 2000);
	ok(r == 0 && s.time_ns == 5 && s.nmetrics == 0 && s.ntops == 0,
	   "the connection stays usable; an empty snapshot");
	magnet_snapshot_free(&s);
	close_case(c, pid, "snapshot error");
}

/* magnet_snapshot() must fail with EPROTO on @reply, leaving it empty. */
static void check_bad_snapshot(const char *reply, const char *what)
{
	const struct step script[] = { EXPECT("snapshot"), SEND(reply), END };
	struct magnet_snapshot s;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(script, &pid);
	if (!c)
		return;
	memset(&s, 0x5a, sizeof(s));
	r = magnet_snapshot(c, &s, 2000);
	ok(r == -1 && errno == EPROTO && !s.metrics && !s.nmetrics && !s.tops,
	   "malformed snapshot (%s): EPROTO, nothing returned", what);
	r = magnet_snapshot(c, &s, 2000);
	ok(r == -1 && errno == EPROTO, "  and the client stays broken");
	magnet_close(c);
	server_ok(pid);
}

static void test_bad_snapshots(void)
{
	check_bad_snapshot("ok 1\n", "not a snapshot");
	check_bad_snapshot("snapshot x 1\nend\n", "bad time");
	check_bad_snapshot("snapshot 1\nend\n", "no count");
	check_bad_snapshot("snapshot 1 1\nmetric a bogus s 1 x\nend\n",
			   "unknown type");
	check_bad_snapshot("snapshot 1 1\nmetric a gauge s one x\nend\n",
			   "value no number");
	check_bad_snapshot("snapshot 1 1\nmetric a gauge s inf x\nend\n",
			   "value inf");
	check_bad_snapshot("snapshot 1 1\nmetric a gauge  1 x\nend\n",
			   "empty unit");
	check_bad_snapshot("snapshot 1 1\nmetric a/b gauge s 1 x\nend\n",
			   "bad name");
	check_bad_snapshot("snapshot 1 1\nmetric a gauge s\nend\n",
			   "no value");
	check_bad_snapshot("snapshot 1 1\ntop e 0 1 1 c\nend\n", "rank 0");
	check_bad_snapshot("snapshot 1 1\ntop e 1 1 1\nend\n", "no comm");
	check_bad_snapshot("snapshot 1 1\n\nend\n", "empty line");
	check_bad_snapshot("snapshot 1 1\nmetric a gauge s 1 x\nstop\n",
			   "no \"end\"");
	check_bad_snapshot("snapshot 1 0\nmetric a gauge s 1 x\nend\n",
			   "more lines than the count");
}

/* A snapshot that must fail with EMSGSIZE, saying @why, at once. */
static void check_large_snapshot(const char *reply, size_t len,
				 const char *why, const char *what)
{
	const struct step script[] = {
		EXPECT("snapshot"), SENDN(reply, len), END
	};
	struct magnet_snapshot s;
	struct magnet_client *c;
	int64_t t0;
	pid_t pid;
	int r;

	c = open_case(script, &pid);
	if (!c)
		return;
	memset(&s, 0x5a, sizeof(s));
	t0 = now_ms();
	r = magnet_snapshot(c, &s, 5000);
	ok(r == -1 && errno == EMSGSIZE && !s.metrics && !s.nmetrics && !s.tops,
	   "%s: EMSGSIZE, nothing returned", what);
	ok(now_ms() - t0 < 4000, "  at once, not at the timeout (%lld ms)",
	   (long long)(now_ms() - t0));
	ok(strstr(magnet_last_error(c), why) != NULL,
	   "  magnet_last_error() says why: \"%s\"", magnet_last_error(c));
	r = magnet_snapshot(c, &s, 2000);
	ok(r == -1 && errno == EMSGSIZE, "  and the client stays broken");
	magnet_close(c);
	server_ok(pid);
}

/*
 * Snapshots beyond MAGNET_SNAPSHOT_LINES_MAX lines or
 * MAGNET_SNAPSHOT_BYTES_MAX bytes: the client's tables must not grow with
 * whatever a peer announces and sends.
 */
static void test_snapshot_bounds(void)
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

	check_large_snapshot(endless, strlen(endless), "MAGNET_SNAPSHOT_LINES_MAX",
			     "a snapshot of 4294967295 lines");
	snprintf(reply, sizeof(reply), "snapshot 1 %u\n", MAGNET_SNAPSHOT_LINES_MAX + 1);
	check_large_snapshot(reply, strlen(reply), "MAGNET_SNAPSHOT_LINES_MAX",
			     "a snapshot of MAGNET_SNAPSHOT_LINES_MAX + 1 lines");

	c = open_case(at_max, &pid);
	if (c) {
		r = magnet_snapshot(c, &s, 2000);
		ok(r == -1 && errno == EPROTO,
		   "a snapshot of MAGNET_SNAPSHOT_LINES_MAX lines is taken (its bad line is EPROTO)");
		magnet_close(c);
		server_ok(pid);
	}

	/* lines of 4000 bytes, 68 MB of them: past MAGNET_SNAPSHOT_BYTES_MAX */
	n = (size_t)MAGNET_SNAPSHOT_BYTES_MAX / line_len + 256;
	big = malloc(n * line_len + 64);
	if (!big)
		abort();
	len = sprintf(big, "snapshot 1 %zu\n", n);
	for (i = 0; i < n; i++) {
		int head = sprintf(big + len, "metric m%u gauge s 1 ", i);

		memset(big + len + head, 'x', line_len - head - 1);
		big[len + line_len - 1] = '\n';
		len += line_len;
	}
	check_large_snapshot(big, len, "MAGNET_SNAPSHOT_BYTES_MAX",
			     "a snapshot of more than MAGNET_SNAPSHOT_BYTES_MAX bytes");
	free(big);

	c = open_case(raw, &pid);
	if (c) {
		r = magnet_request(c, "snapshot", reply, sizeof(reply));
		ok(r == -1 && errno == EMSGSIZE && !strcmp(reply, "snapshot 1 1048577"),
		   "raw snapshot of MAGNET_SNAPSHOT_LINES_MAX + 1 lines: EMSGSIZE, its first line returned");
		magnet_close(c);
		server_ok(pid);
	}
}

/* --- subscriptions and requests ---------------------------------------- */

static void test_subscribe(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_subscribe_event(c, "udp-send.socket", 42, -1, 7);
	ok(r == 3, "subscribe event with tgid and id (%d)", r);
	r = magnet_subscribe_event(c, "sched_switch", -1, 0, -1);
	ok(r == 4, "subscribe event with cpu 0 (%d)", r);
	r = magnet_subscribe_event(c, "bad name", -1, -1, -1);
	ok(r == -1 && errno == EINVAL, "a name with a space: EINVAL, not sent");
	r = magnet_subscribe_event(c, "e", 1LL << 32, -1, -1);
	ok(r == -1 && errno == EINVAL, "a tgid beyond 32 bits: EINVAL");
	r = magnet_subscribe_threshold(c, "udp_send.p99", ">", 200000);
	ok(r == 5, "subscribe threshold: integers plain (%d)", r);
	r = magnet_subscribe_threshold(c, "x.mean", "<=", 0.1);
	ok(r == 6, "threshold value with 17 digits (%d)", r);
	r = magnet_subscribe_threshold(c, "x.rate", ">=", 2.5e20);
	ok(r == 7, "threshold value in exponent form (%d)", r);
	r = magnet_subscribe_threshold(c, "x.rate", "=", 1);
	ok(r == -1 && errno == EINVAL, "op \"=\": EINVAL");
	r = magnet_subscribe_threshold(c, "x.rate", ">", 0.0 / 0.0);
	ok(r == -1 && errno == EINVAL, "NaN threshold: EINVAL");
	r = magnet_subscribe_threshold(c, "x.rate", "<", -1.5);
	ok(r == -1 && errno == EREMOTEIO &&
	   !strcmp(magnet_last_error(c), "no such metric: x.rate"),
	   "refused subscription: EREMOTEIO and the daemon's message");
	r = magnet_subscribe_event(c, "e", -1, -1, -1);
	ok(r == 2147483647, "subscription number INT_MAX (%d)", r);
	close_case(c, pid, "subscribe");
}

/* Thresholds are written with a decimal point whatever the locale. */
static void test_threshold_locale(void)
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
	if (!loc) {
		setlocale(LC_NUMERIC, "C");
		ok(true, "# SKIP no locale with a decimal comma installed");
		return;
	}
	c = open_case(script, &pid);
	if (c) {
		r = magnet_subscribe_threshold(c, "m", ">", 1.5);
		ok(r == 1, "%s: threshold written with a point", loc);
		r = magnet_receive(c, &msg, 2000);
		ok(r == 1 && msg.alert.value == 2.25,
		   "%s: value read with a point", loc);
		close_case(c, pid, "locale");
	}
	setlocale(LC_NUMERIC, "C");
}

static void test_unsubscribe(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_unsubscribe(c, 3);
	ok(r == 0, "unsubscribe");
	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_EVENT && msg.sub == 4,
	   "the queued pushes of the subscription ended are gone");
	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_LOST && msg.lost.count == 2,
	   "but not the others, nor \"lost\"");
	ok(magnet_receive(c, &msg, 0) == 0, "then nothing");
	ok(magnet_unsubscribe(c, 0) == -1 && errno == EINVAL,
	   "unsubscribe 0: EINVAL");
	r = magnet_unsubscribe(c, 4);
	ok(r == -1 && errno == EPROTO, "\"ok 4\" to unsubscribe: EPROTO");
	close_case(c, pid, "unsubscribe");
}

static void test_request(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_request(c, "release", reply, sizeof(reply));
	ok(r == 0 && !strcmp(reply, "ok"), "raw request: its reply");
	r = magnet_request(c, "attach", reply, sizeof(reply));
	ok(r == -1 && errno == EREMOTEIO &&
	   !strcmp(reply, "error not allowed: uid 1000") &&
	   !strcmp(magnet_last_error(c), "not allowed: uid 1000"),
	   "raw request refused: EREMOTEIO, the line and the message");
	r = magnet_request(c, "snapshot", reply, sizeof(reply));
	ok(r == 0 && !strcmp(reply, "snapshot 1 2"),
	   "raw snapshot: its first line");
	r = magnet_receive(c, &msg, 2000);
	ok(r == 1 && msg.kind == MAGNET_MSG_EVENT,
	   "the snapshot's body is skipped, the push after it received");
	r = magnet_request(c, "two\nlines", reply, sizeof(reply));
	ok(r == -1 && errno == EINVAL, "a request with a newline: EINVAL");
	r = magnet_request(c, "release", reply, 2);
	ok(r == 0 && !strcmp(reply, "o"), "a short reply buffer: cut");
	close_case(c, pid, "raw requests");
}

/* --- malformed and odd lines ---------------------------------------------- */

/* magnet_receive() must take @line (and its newline) as @good. */
static void check_push(const char *line, bool good)
{
	char buf[256];
	const struct step script[] = { SEND(buf), END };
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	snprintf(buf, sizeof(buf), "%s\n", line);
	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_receive(c, &msg, 2000);
	if (good) {
		ok(r == 1, "well-formed push accepted: \"%s\"", line);
	} else {
		ok(r == -1 && errno == EPROTO,
		   "malformed line rejected (EPROTO): \"%s\"", line);
		r = magnet_receive(c, &msg, 0);
		ok(r == -1 && errno == EPROTO, "  and the client stays broken");
	}
	magnet_close(c);
	server_ok(pid);
}

static void test_pushes(void)
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
		check_push(bad[i], false);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		check_push(good[i], true);
}

static void test_nul_byte(void)
{
	static const struct step script[] = {
		SENDN("lost\0 1\n", 8), END
	};
	struct magnet_message msg;
	struct magnet_client *c;
	pid_t pid;
	int r;

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_receive(c, &msg, 2000);
	ok(r == -1 && errno == EPROTO, "a NUL inside a line: EPROTO");
	close_case(c, pid, "NUL");
}

static char line_max[MAGNET_LINE_MAX + 1];	/* "error xxx...\n", LINE_MAX bytes */
static char line_over[MAGNET_LINE_MAX + 2];	/* one byte more */
static char line_endless[2 * MAGNET_LINE_MAX];	/* no newline at all */

static void test_long_lines(void)
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
	int64_t t0;
	pid_t pid;
	int r;

	memset(line_max, 'x', MAGNET_LINE_MAX - 1);
	memcpy(line_max, "error ", 6);
	line_max[MAGNET_LINE_MAX - 1] = '\n';
	memset(line_over, 'x', MAGNET_LINE_MAX);
	memcpy(line_over, "error ", 6);
	line_over[MAGNET_LINE_MAX] = '\n';
	memset(line_endless, 'x', sizeof(line_endless) - 1);
	memcpy(line_endless, "lost ", 5);

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_request(c, "attach", NULL, 0);
	ok(r == -1 && errno == EREMOTEIO &&
	   strlen(magnet_last_error(c)) == MAGNET_LINE_MAX - 7,
	   "a line of MAGNET_LINE_MAX bytes with its newline is taken");
	r = magnet_request(c, "attach", NULL, 0);
	ok(r == 0, "and the next reply read right");
	r = magnet_request(c, "attach", NULL, 0);
	ok(r == -1 && errno == EPROTO,
	   "a line of MAGNET_LINE_MAX + 1 bytes: EPROTO");
	close_case(c, pid, "long lines");

	c = open_case(endless, &pid);
	if (!c)
		return;
	t0 = now_ms();
	r = magnet_receive(c, &msg, 5000);
	ok(r == -1 && errno == EPROTO && now_ms() - t0 < 4000,
	   "a line without end: EPROTO as soon as it is too long");
	close_case(c, pid, "endless line");
}

/* --- the daemon going away --------------------------------------------- */

static void test_hangups(void)
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

	c = open_case(mid_reply, &pid);
	if (c) {
		r = magnet_snapshot(c, &s, 2000);
		ok(r == -1 && errno == EPIPE && !s.metrics && !s.nmetrics,
		   "daemon leaving mid-snapshot: EPIPE, nothing returned");
		r = magnet_subscribe_event(c, "a", -1, -1, -1);
		ok(r == -1 && errno == EPIPE, "  and later calls: EPIPE");
		close_case(c, pid, "mid-reply");
	}

	c = open_case(mid_line, &pid);
	if (c) {
		r = magnet_subscribe_event(c, "a", -1, -1, -1);
		ok(r == -1 && errno == EPIPE, "daemon leaving mid-line: EPIPE");
		close_case(c, pid, "mid-line");
	}

	c = open_case(pushes_first, &pid);
	if (c) {
		r = magnet_subscribe_event(c, "a", -1, -1, -1);
		ok(r == -1 && errno == EPIPE, "daemon leaving before the reply: EPIPE");
		r = magnet_receive(c, &msg, 0);
		ok(r == 1 && msg.kind == MAGNET_MSG_ALERT,
		   "  the pushes that came before are still received");
		r = magnet_receive(c, &msg, 0);
		ok(r == 1 && msg.kind == MAGNET_MSG_LOST && msg.lost.count == 4,
		   "  all of them");
		r = magnet_receive(c, &msg, 0);
		ok(r == -1 && errno == EPIPE, "  then EPIPE");
		close_case(c, pid, "pushes first");
	}

	/* a send to a daemon gone must be EPIPE, not a SIGPIPE killing us */
	c = open_case(gone, &pid);
	if (c) {
		server_ok(pid);
		usleep(50 * 1000);
		r = magnet_subscribe_threshold(c, "m", ">", 1);
		ok(r == -1 && errno == EPIPE,
		   "request to a daemon gone: EPIPE and no SIGPIPE");
		magnet_close(c);
	}
}

/* --- timeouts, signals, overflow ----------------------------------------- */

static void test_timeouts(void)
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
	int r;

	c = open_case(late_head, &pid);
	if (c) {
		t0 = now_ms();
		r = magnet_snapshot(c, &s, 100);
		dt = now_ms() - t0;
		ok(r == -1 && errno == ETIMEDOUT && dt >= 95 && dt < 380,
		   "snapshot times out (%lld ms)", (long long)dt);
		r = magnet_subscribe_event(c, "late", -1, -1, -1);
		ok(r == 9, "the late snapshot is dropped, the next reply read (%d)",
		   r);
		close_case(c, pid, "late reply");
	}

	c = open_case(late_body, &pid);
	if (c) {
		r = magnet_snapshot(c, &s, 100);
		ok(r == -1 && errno == ETIMEDOUT && !s.metrics,
		   "snapshot times out in its body");
		r = magnet_snapshot(c, &s, 2000);
		ok(r == 0 && s.time_ns == 8 && s.nmetrics == 1 &&
		   !strcmp(s.metrics[0].name, "c"),
		   "the rest of the old one is dropped, the new one read");
		magnet_snapshot_free(&s);
		r = magnet_receive(c, &msg, 0);
		ok(r == 1 && msg.kind == MAGNET_MSG_ALERT && msg.sub == 4,
		   "the push between them is kept");
		close_case(c, pid, "late body");
	}

	c = open_case(quiet, &pid);
	if (c) {
		t0 = now_ms();
		r = magnet_receive(c, &msg, 150);
		dt = now_ms() - t0;
		ok(r == 0 && dt >= 145 && dt < 1000,
		   "receive with nothing: 0 after its timeout (%lld ms)",
		   (long long)dt);
		t0 = now_ms();
		r = magnet_receive(c, &msg, 0);
		ok(r == 0 && now_ms() - t0 < 50, "receive with timeout 0: at once");
		close_case(c, pid, "quiet");
	}
}

static volatile sig_atomic_t signals;

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

static void test_signals(void)
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
	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_receive(c, &msg, 5000);
	ok(r == 1 && msg.kind == MAGNET_MSG_LOST && msg.lost.count == 3 &&
	   signals == 2, "receive goes on waiting through signals (%d signals)",
	   (int)signals);
	r = magnet_request(c, "release", NULL, 0);
	ok(r == 0 && signals == 4, "so does a request (%d signals)",
	   (int)signals);
	close_case(c, pid, "signals");
	signal(SIGUSR1, SIG_DFL);
}

#define FLOOD		5000
#define QUEUE_LIMIT	4096

static char flood[FLOOD * 32];

static void test_overflow(void)
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

	c = open_case(script, &pid);
	if (!c)
		return;
	r = magnet_subscribe_event(c, "e", -1, -1, -1);
	ok(r == 1, "subscribe while %d pushes come first", FLOOD);
	for (i = 0; i < 10; i++)
		if (magnet_receive(c, &msg, 0) == 1 &&
		    msg.kind == MAGNET_MSG_EVENT && msg.event.id == i)
			inorder++;
	r = magnet_request(c, "release", NULL, 0);
	ok(r == 0, "a request while the queue is nearly full");
	for (; i < QUEUE_LIMIT; i++)
		if (magnet_receive(c, &msg, 0) == 1 &&
		    msg.kind == MAGNET_MSG_EVENT && msg.event.id == i)
			inorder++;
	ok(inorder == QUEUE_LIMIT, "the first %d pushes, in order (%u)",
	   QUEUE_LIMIT, inorder);
	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_LOST &&
	   msg.lost.count == FLOOD - QUEUE_LIMIT,
	   "then \"lost %d\" for the pushes beyond the queue (%llu)",
	   FLOOD - QUEUE_LIMIT, (unsigned long long)msg.lost.count);
	r = magnet_receive(c, &msg, 0);
	ok(r == 1 && msg.kind == MAGNET_MSG_EVENT && msg.event.id == 5000,
	   "then the push that came after them");
	r = magnet_receive(c, &msg, 2000);
	ok(r == 1 && msg.kind == MAGNET_MSG_LOST && msg.lost.count == 7,
	   "the daemon's own \"lost\"");
	r = magnet_receive(c, &msg, 2000);
	ok(r == 1 && msg.kind == MAGNET_MSG_EVENT && msg.event.id == 5001,
	   "and what follows it");
	ok(magnet_receive(c, &msg, 100) == 0, "then nothing");
	close_case(c, pid, "overflow");
}

static void test_bad_args(void)
{
	struct magnet_message msg;
	char longpath[200];

	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	errno = 0;
	ok(!magnet_connect(longpath) && errno == ENAMETOOLONG,
	   "a path too long for a Unix socket: ENAMETOOLONG");
	ok(magnet_receive(NULL, &msg, 0) == -1 && errno == EINVAL,
	   "NULL client: EINVAL");
	ok(magnet_fd(NULL) == -1, "magnet_fd(NULL): -1");
	magnet_close(NULL);
	magnet_snapshot_free(NULL);
	ok(!magnet_snapshot_find(NULL, "x"), "snapshot_find(NULL): NULL");
}

static void test_per_cpu_names(void)
{
	static const char *const yes[] = {
		"udp-send.socket.cpu0.count", "e.cpu17.count", "a.cpu1.b.cpu2.count",
	};
	static const char *const no[] = {
		"udp-send.socket.count", "e.cpu.count", "e.cpux.count",
		"e.cpu1.rate", "e.cpu1.count.x", "cpu1.count", "", NULL,
	};
	unsigned int i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ok(magnet_metric_per_cpu(yes[i]), "per-CPU: %s", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ok(!magnet_metric_per_cpu(no[i]), "not per-CPU: %s",
		   no[i] ? no[i] : "NULL");
}

static void cleanup(void)
{
	unlink(sock_path);
	rmdir(tmp_dir);
}

int main(void)
{
	strcpy(tmp_dir, "/tmp/libmagnet-unit.XXXXXX");
	if (!mkdtemp(tmp_dir)) {
		perror("libmagnet-unit: mkdtemp");
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/magnetd.sock", tmp_dir);
	atexit(cleanup);
	alarm(300);	/* a hang fails the run rather than the CI job */

	test_greeting_split();
	test_bad_greetings();
	test_no_daemon();
	test_snapshot();
	test_snapshot_error();
	test_bad_snapshots();
	test_snapshot_bounds();
	test_subscribe();
	test_threshold_locale();
	test_unsubscribe();
	test_request();
	test_pushes();
	test_nul_byte();
	test_long_lines();
	test_hangups();
	test_timeouts();
	test_signals();
	test_overflow();
	test_bad_args();
	test_per_cpu_names();

	return harness_summary();
}

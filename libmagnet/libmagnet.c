// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmagnet: the client side of magnetd's line protocol (libmagnet.h).
 *
 * A client owns its socket, a receive buffer a few lines long and a queue
 * of parsed pushes. Nothing is shared between clients and nothing is
 * global, so a program may run one client per thread without locking.
 *
 * The daemon answers requests in order. While a call waits for its reply,
 * the pushes that come first are parsed and queued for magnet_receive().
 * A request that timed out still gets its reply later: the client counts
 * the replies (and the lines of a snapshot) it is owed and drops them when
 * they come, so that a timeout does not make the next request read the
 * wrong reply. A protocol violation (EPROTO), a snapshot larger than the
 * client takes (EMSGSIZE: its lines are bounded, and so is the memory
 * they take) or the daemon going away (EPIPE) cannot be recovered from: once the pushes already queued have
 * been received, every call fails with the same errno, and the program
 * closes the client and connects again.
 *
 * Numbers are read and written in the "C" locale whatever the program's
 * LC_NUMERIC, through a locale object of the client's own.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"

/* The API stays exported even when built with -fvisibility=hidden. */
#define MAGNET_EXPORT		__attribute__((visibility("default")))

/*
 * Room for a whole line (MAGNET_LINE_MAX) and then some, so that one
 * recv() usually brings several pushes.
 */
#define RBUF_SIZE		(4 * MAGNET_LINE_MAX)
/* Pushes kept while nobody receives them; more are counted as lost. */
#define QUEUE_MAX		4096
#define QUEUE_MIN		64
/* For the calls that take no timeout: connecting, subscribing, requests. */
#define DEFAULT_TIMEOUT_MS	10000

/* What the message structure has room for. */
#define NAME_SIZE		sizeof(((struct magnet_message *)0)->event.name)
#define METRIC_SIZE		sizeof(((struct magnet_message *)0)->alert.metric)

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define NSEC_PER_MSEC		1000000LL
#define NSEC_PER_SEC		1000000000LL

struct magnet_client {
	int fd;
	int broken;			/* EPROTO, EPIPE, ...: for good */
	locale_t c_locale;		/* numbers on the wire are "C" */

	/* bytes received and not yet parsed: rbuf[rhead, rtail) */
	size_t rhead, rtail;

	/* replies to requests that timed out; lines of a snapshot left */
	unsigned int owed_replies;
	uint64_t owed_lines;

	/* pushes waiting for magnet_receive(): a ring, grown on demand */
	struct magnet_message *queue;
	unsigned int qhead, qlen, qcap;
	uint64_t overflow;		/* pushes dropped since the queue filled */

	char last_error[MAGNET_LINE_MAX];
	char rbuf[RBUF_SIZE];
};

/* --- time -------------------------------------------------------------- */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* A CLOCK_MONOTONIC deadline @timeout_ms from now; -1: none. */
static int64_t deadline_in(int timeout_ms)
{
	if (timeout_ms < 0)
		return -1;
	return now_ns() + timeout_ms * NSEC_PER_MSEC;
}

/* Milliseconds left until @deadline for poll(), rounded up; -1: none. */
static int ms_left(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ns();
	if (left <= 0)
		return 0;
	left = (left + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/* --- errors ------------------------------------------------------------ */

/*
 * A call failed with @err: errno, and what happened for
 * magnet_last_error() (a client's, kept until another call fails). No
 * message without a client (a NULL one, or magnet_connect()'s).
 */
static int fail_soft(struct magnet_client *c, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_soft(struct magnet_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	/* (once broken, the message that says why stays) */
	if (c && !c->broken) {
		va_start(ap, fmt);
		vsnprintf(c->last_error, sizeof(c->last_error), fmt, ap);
		va_end(ap);
	}
	errno = err;
	return -1;
}

/*
 * The connection is unusable from now on: say so, now and later (every
 * call fails with @err, and its message stays).
 */
#define fail(c, err, ...)	(fail_soft((c), (err), __VA_ARGS__), \
				 (c)->broken = (err), -1)

/* A call failing again because the connection broke before. */
static int fail_broken(struct magnet_client *c)
{
	errno = c->broken;
	return -1;
}

/* --- socket I/O -------------------------------------------------------- */

/*
 * Wait until @fd is ready for @events or @deadline passes (ETIMEDOUT). A
 * signal only makes it recompute the time left: the caller's timeout,
 * not the signal, ends the wait.
 */
static int wait_fd(struct magnet_client *c, short events, int64_t deadline)
{
	struct pollfd p = { .fd = c->fd, .events = events };
	int ms, n;

	for (;;) {
		ms = ms_left(deadline);
		if (ms == 0) {
			/* the caller says what did not come in time */
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return fail_soft(c, errno, "poll: %s", strerror(errno));
	}
}

/*
 * Read what the socket has into the buffer, waiting for it until
 * @deadline. The socket stays blocking for whoever polls magnet_fd(); every
 * call here says MSG_DONTWAIT instead.
 */
static int fill(struct magnet_client *c, int64_t deadline)
{
	ssize_t n;

	if (c->rhead) {
		memmove(c->rbuf, c->rbuf + c->rhead, c->rtail - c->rhead);
		c->rtail -= c->rhead;
		c->rhead = 0;
	}
	for (;;) {
		n = recv(c->fd, c->rbuf + c->rtail, sizeof(c->rbuf) - c->rtail,
			 MSG_DONTWAIT);
		if (n > 0) {
			c->rtail += n;
			return 0;
		}
		if (n == 0 || errno == ECONNRESET)
			return fail(c, EPIPE, "magnetd closed the connection");
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return fail(c, errno, "recv: %s", strerror(errno));
		if (wait_fd(c, POLLIN, deadline))
			return -1;
	}
}

/*
 * The next whole line, without its "\n" and NUL-terminated in place: valid
 * until the buffer is filled again. A line longer than MAGNET_LINE_MAX or
 * holding a NUL breaks the framing for good.
 */
static int next_line(struct magnet_client *c, int64_t deadline, char **line)
{
	size_t avail, scan;
	char *s, *nl;

	for (;;) {
		s = c->rbuf + c->rhead;
		avail = c->rtail - c->rhead;
		scan = avail < MAGNET_LINE_MAX ? avail : MAGNET_LINE_MAX;
		nl = memchr(s, '\n', scan);
		if (nl) {
			*nl = '\0';
			c->rhead += nl - s + 1;
			if (memchr(s, '\0', nl - s))
				return fail(c, EPROTO,
					    "a line from magnetd holds a NUL byte");
			*line = s;
			return 0;
		}
		if (avail >= MAGNET_LINE_MAX)
			return fail(c, EPROTO,
				    "a line from magnetd longer than MAGNET_LINE_MAX (%d)",
				    MAGNET_LINE_MAX);
		if (fill(c, deadline))
			return -1;
	}
}

/*
 * Send @req and its newline. MSG_NOSIGNAL: a daemon gone away is EPIPE,
 * never SIGPIPE.
 */
static int send_line(struct magnet_client *c, const char *req,
		     int64_t deadline)
{
	char buf[MAGNET_LINE_MAX];
	size_t len = strlen(req), off = 0;
	ssize_t n;

	if (len + 1 > sizeof(buf) || strchr(req, '\n'))
		return fail_soft(c, EINVAL,
				 "a request line of %zu bytes, or holding a newline (at most %zu)",
				 len, sizeof(buf) - 1);
	memcpy(buf, req, len);
	buf[len++] = '\n';
	while (off < len) {
		n = send(c->fd, buf + off, len - off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0) {
			off += n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EPIPE || errno == ECONNRESET)
			return fail(c, EPIPE, "magnetd closed the connection");
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return fail(c, errno, "send: %s", strerror(errno));
		if (wait_fd(c, POLLOUT, deadline)) {
			if (errno != ETIMEDOUT)
				return -1;
			/* half a request cannot be taken back */
			return off ? fail(c, ETIMEDOUT, "magnetd took part of a request, not all of it in time") :
				     fail_soft(c, ETIMEDOUT,
					       "magnetd took no request in time");
		}
	}
	return 0;
}

/* --- parsing ------------------------------------------------------------ */

/*
 * Split @s in place at single spaces into at most @max words, the last of
 * which takes the rest of the line unsplit. Returns the number of words,
 * or -1 if a word before the rest is empty (two spaces, a space at either
 * end, an empty line).
 */
static int split(char *s, char **w, int max)
{
	char *sp;
	int n = 0;

	for (;;) {
		if (n == max - 1) {
			w[n++] = s;
			return n;
		}
		sp = strchr(s, ' ');
		if (sp == s || !*s)
			return -1;
		w[n++] = s;
		if (!sp)
			return n;
		*sp = '\0';
		s = sp + 1;
	}
}

/* Is the first word of @line @word? */
static bool first_word_is(const char *line, const char *word)
{
	size_t len = strlen(word);

	return !strncmp(line, word, len) &&
	       (line[len] == ' ' || line[len] == '\0');
}

/* A decimal integer from 0 to @max: digits only, no sign, no spaces. */
static bool parse_u64(const char *s, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int d;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		d = *s - '0';
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (!parse_u64(s, UINT32_MAX, &x))
		return false;
	*v = x;
	return true;
}

/* A subscription number: 1 to INT_MAX, as the API returns them. */
static bool parse_sub(const char *s, unsigned int *sub)
{
	uint64_t x;

	if (!parse_u64(s, INT_MAX, &x) || !x)
		return false;
	*sub = x;
	return true;
}

static bool skip_digits(const char **s)
{
	const char *p = *s;

	while (**s >= '0' && **s <= '9')
		(*s)++;
	return *s > p;
}

/*
 * A decimal number: [-]DIGITS[.DIGITS][e[+-]DIGITS], the integers and
 * fractions the protocol speaks and the exponent form "%g" may print.
 * Neither "inf", "nan", hex nor blanks, which strtod() would take.
 */
static bool parse_number(const struct magnet_client *c, const char *s,
			 double *v)
{
	const char *p = s;
	char *end;

	if (*p == '-')
		p++;
	if (!skip_digits(&p))
		return false;
	if (*p == '.') {
		p++;
		if (!skip_digits(&p))
			return false;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!skip_digits(&p))
			return false;
	}
	if (*p)
		return false;
	*v = strtod_l(s, &end, c->c_locale);
	return end == p && isfinite(*v);
}

/* Letters, digits and "._-", whatever the locale says letters are. */
static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-';
}

/* A name as the protocol makes them, fitting in @size bytes. */
static bool valid_name(const char *s, size_t size)
{
	size_t len;

	for (len = 0; s[len]; len++)
		if (!name_char(s[len]))
			return false;
	return len && len < size;
}

/* One word of printable bytes (a unit such as "events/s"). */
static bool valid_word(const char *s, size_t size)
{
	size_t len = strlen(s), i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return false;
	return len && len < size;
}

/* Free text (a description, a command name): cut to fit. */
static void copy_text(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* "event SUB EVENT TIMESTAMP CPU TGID TID ID SIZE" */
static bool parse_event(char **w, int n, struct magnet_message *m)
{
	m->kind = MAGNET_MSG_EVENT;
	if (n != 9 || !parse_sub(w[1], &m->sub) ||
	    !valid_name(w[2], NAME_SIZE))
		return false;
	strcpy(m->event.name, w[2]);
	return parse_u64(w[3], UINT64_MAX, &m->event.timestamp) &&
	       parse_u32(w[4], &m->event.cpu) &&
	       parse_u32(w[5], &m->event.tgid) &&
	       parse_u32(w[6], &m->event.tid) &&
	       parse_u64(w[7], UINT64_MAX, &m->event.id) &&
	       parse_u32(w[8], &m->event.size);
}

/* "alert SUB METRIC VALUE fired|cleared" */
static bool parse_alert(const struct magnet_client *c, char **w, int n,
			struct magnet_message *m)
{
	m->kind = MAGNET_MSG_ALERT;
	if (n != 5 || !parse_sub(w[1], &m->sub) ||
	    !valid_name(w[2], METRIC_SIZE) ||
	    !parse_number(c, w[3], &m->alert.value))
		return false;
	strcpy(m->alert.metric, w[2]);
	if (!strcmp(w[4], "fired"))
		m->alert.fired = true;
	else if (strcmp(w[4], "cleared"))
		return false;
	return true;
}

/* "lost N" */
static bool parse_lost(char **w, int n, struct magnet_message *m)
{
	m->kind = MAGNET_MSG_LOST;
	return n == 2 && parse_u64(w[1], UINT64_MAX, &m->lost.count);
}

static bool is_push(const char *line)
{
	return first_word_is(line, "event") || first_word_is(line, "alert") ||
	       first_word_is(line, "lost");
}

/* A push line (is_push() said so) into @m; false if malformed. */
static bool parse_push(const struct magnet_client *c, char *line,
		       struct magnet_message *m)
{
	char *w[10];
	int n;

	memset(m, 0, sizeof(*m));
	n = split(line, w, 10);
	if (n < 1)
		return false;
	if (!strcmp(w[0], "event"))
		return parse_event(w, n, m);
	if (!strcmp(w[0], "alert"))
		return parse_alert(c, w, n, m);
	return parse_lost(w, n, m);
}

/* "snapshot TIME COUNT", or "ledger TIME COUNT" */
static bool parse_snapshot_head(char *line, uint64_t *time_ns,
				uint64_t *count)
{
	char *w[4];

	return split(line, w, 4) == 3 &&
	       (!strcmp(w[0], "snapshot") || !strcmp(w[0], "ledger")) &&
	       parse_u64(w[1], UINT64_MAX, time_ns) &&
	       parse_u64(w[2], UINT_MAX, count);
}

/* Does reply @line start a reply of many lines (a snapshot, a ledger)? */
static bool many_lines(const char *line)
{
	return first_word_is(line, "snapshot") ||
	       (first_word_is(line, "ledger") && strcmp(line, "ledger off"));
}

/* A snapshot too large to take: say what, and fail for good. */
static int too_large(struct magnet_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int too_large(struct magnet_client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->last_error, sizeof(c->last_error), fmt, ap);
	va_end(ap);
	c->broken = EMSGSIZE;
	errno = EMSGSIZE;
	return -1;
}

/*
 * A snapshot's first line into @time_ns and @count: -1 with EPROTO if it
 * is not one, or EMSGSIZE if it announces more than
 * MAGNET_SNAPSHOT_LINES_MAX lines (the lines that follow could not be
 * told from what comes after them: the connection is done either way).
 */
static int snapshot_head(struct magnet_client *c, char *line,
			 uint64_t *time_ns, uint64_t *count)
{
	if (!parse_snapshot_head(line, time_ns, count))
		return fail(c, EPROTO,
			    "a snapshot's first line is not \"snapshot TIME COUNT\": \"%.80s\"",
			    line);
	if (*count > MAGNET_SNAPSHOT_LINES_MAX)
		return too_large(c, "snapshot of %" PRIu64 " lines: more than MAGNET_SNAPSHOT_LINES_MAX (%u)",
				 *count, MAGNET_SNAPSHOT_LINES_MAX);
	return 0;
}

/* --- the queue of pushes ---------------------------------------------- */

static bool queue_grow(struct magnet_client *c)
{
	struct magnet_message *q;
	unsigned int cap, i;

	if (c->qcap >= QUEUE_MAX)
		return false;
	cap = c->qcap ? 2 * c->qcap : QUEUE_MIN;
	if (cap > QUEUE_MAX)
		cap = QUEUE_MAX;
	q = malloc(cap * sizeof(*q));
	if (!q)
		return false;
	for (i = 0; i < c->qlen; i++)
		q[i] = c->queue[(c->qhead + i) % c->qcap];
	free(c->queue);
	c->queue = q;
	c->qcap = cap;
	c->qhead = 0;
	return true;
}

/* Make room for @n more messages. */
static bool queue_reserve(struct magnet_client *c, unsigned int n)
{
	while (c->qcap - c->qlen < n)
		if (!queue_grow(c))
			return false;
	return true;
}

static void queue_put(struct magnet_client *c, const struct magnet_message *m)
{
	c->queue[(c->qhead + c->qlen) % c->qcap] = *m;
	c->qlen++;
}

/*
 * Queue push @m. With the queue full it is counted instead, and the count
 * is handed out as a "lost" message in the place of the pushes dropped:
 * before the next push that fits, or once the queue has been read.
 * Nothing is dropped without being counted.
 */
static void queue_add(struct magnet_client *c, const struct magnet_message *m)
{
	struct magnet_message lost = { .kind = MAGNET_MSG_LOST };
	uint64_t count = m->kind == MAGNET_MSG_LOST ? m->lost.count : 1;

	if (!c->overflow) {
		if (queue_reserve(c, 1)) {
			queue_put(c, m);
			return;
		}
	} else if (m->kind != MAGNET_MSG_LOST && queue_reserve(c, 2)) {
		lost.lost.count = c->overflow;
		c->overflow = 0;
		queue_put(c, &lost);
		queue_put(c, m);
		return;
	}
	/* also where the daemon's own "lost" joins ours: one count */
	c->overflow += count;
}

static bool queue_pop(struct magnet_client *c, struct magnet_message *m)
{
	if (c->qlen) {
		*m = c->queue[c->qhead];
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
		return true;
	}
	if (c->overflow) {
		memset(m, 0, sizeof(*m));
		m->kind = MAGNET_MSG_LOST;
		m->lost.count = c->overflow;
		c->overflow = 0;
		return true;
	}
	return false;
}

/*
 * Forget the queued pushes of subscription @sub: after its unsubscribe,
 * a program should not have to expect any more of them.
 */
static void queue_purge(struct magnet_client *c, unsigned int sub)
{
	struct magnet_message *m;
	unsigned int i, n = 0;

	for (i = 0; i < c->qlen; i++) {
		m = &c->queue[(c->qhead + i) % c->qcap];
		if (m->kind != MAGNET_MSG_LOST && m->sub == sub)
			continue;
		c->queue[(c->qhead + n++) % c->qcap] = *m;
	}
	c->qlen = n;
}

/* --- requests and replies --------------------------------------------- */

/* A line of a snapshot whose request gave up on it. */
static int drop_owed_line(struct magnet_client *c, const char *line)
{
	if (--c->owed_lines == 0 && strcmp(line, "end"))
		return fail(c, EPROTO,
			    "a snapshot's last line is not \"end\": \"%.80s\"",
			    line);
	return 0;
}

/* The reply to a request that gave up on it; a snapshot's lines follow. */
static int drop_owed_reply(struct magnet_client *c, char *line)
{
	uint64_t time_ns, count;

	c->owed_replies--;
	if (!many_lines(line))
		return 0;
	if (snapshot_head(c, line, &time_ns, &count))
		return -1;
	c->owed_lines = count + 1;
	return 0;
}

/*
 * Read lines until the reply to the current request (returned in @reply)
 * or, with @reply NULL, until a push has been queued. On the way, pushes
 * are queued and what is owed to requests that gave up is dropped. A
 * reply that no request waits for is a protocol error.
 */
static int pump(struct magnet_client *c, int64_t deadline, char **reply)
{
	struct magnet_message m;
	char *line;

	for (;;) {
		if (next_line(c, deadline, &line))
			return -1;
		if (c->owed_lines) {
			if (drop_owed_line(c, line))
				return -1;
			continue;
		}
		if (is_push(line)) {
			if (!parse_push(c, line, &m))
				return fail(c, EPROTO,
					    "a malformed push from magnetd: \"%.80s\"",
					    line);
			queue_add(c, &m);
			if (!reply)
				return 0;
			continue;
		}
		if (c->owed_replies) {
			if (drop_owed_reply(c, line))
				return -1;
			continue;
		}
		if (!reply)
			return fail(c, EPROTO,
				    "a reply from magnetd to no request: \"%.80s\"",
				    line);
		*reply = line;
		return 0;
	}
}

/*
 * Send request @req and wait for the first line of its reply, returned in
 * @reply (in the receive buffer: valid until the next read). An "error"
 * reply is returned too, with -1 and EREMOTEIO, its message kept for
 * magnet_last_error(). A reply not come by @deadline is owed.
 */
static int transact(struct magnet_client *c, const char *req,
		    int64_t deadline, char **reply)
{
	if (c->broken)
		return fail_broken(c);
	if (send_line(c, req, deadline))
		return -1;
	if (pump(c, deadline, reply)) {
		if (c->broken)
			return -1;
		c->owed_replies++;
		if (errno == ETIMEDOUT)
			return fail_soft(c, ETIMEDOUT,
					 "no reply from magnetd to \"%.64s\" in time",
					 req);
		return -1;
	}
	if (first_word_is(*reply, "error")) {
		copy_text(c->last_error, sizeof(c->last_error),
			  (*reply)[5] ? *reply + 6 : "");
		errno = EREMOTEIO;
		return -1;
	}
	return 0;
}

/* A request answered "ok SUB" (subscribe). */
static int request_sub(struct magnet_client *c, const char *req)
{
	unsigned int sub;
	char *line, *w[3];

	if (transact(c, req, deadline_in(DEFAULT_TIMEOUT_MS), &line))
		return -1;
	if (split(line, w, 3) != 2 || strcmp(w[0], "ok") ||
	    !parse_sub(w[1], &sub))
		return fail(c, EPROTO,
			    "a reply to \"%.64s\" that is not \"ok SUB\"", req);
	return sub;
}

/* --- connecting ---------------------------------------------------------- */

/*
 * Connect, waiting at most DEFAULT_TIMEOUT_MS for room in a busy daemon's
 * backlog. A signal interrupting a Unix socket's connect() leaves it
 * unconnected, so it is simply tried again.
 */
static int connect_unix(int fd, const char *path)
{
	struct timeval tv = { .tv_sec = DEFAULT_TIMEOUT_MS / 1000 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	/* no client yet: errno says it all */
	if (!*path)
		return fail_soft(NULL, EINVAL, "no path");
	if (strlen(path) >= sizeof(sa.sun_path))
		return fail_soft(NULL, ENAMETOOLONG, "path too long");
	strcpy(sa.sun_path, path);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (errno == EAGAIN)
			return fail_soft(NULL, ETIMEDOUT, "backlog full");
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* "magnetd PROTO VERSION", of our protocol version. */
static int read_greeting(struct magnet_client *c)
{
	char *line, *w[4];
	uint64_t proto;

	if (next_line(c, deadline_in(DEFAULT_TIMEOUT_MS), &line))
		return -1;
	if (split(line, w, 4) != 3 || strcmp(w[0], "magnetd") ||
	    !parse_u64(w[1], UINT64_MAX, &proto) ||
	    proto != MAGNET_PROTO_VERSION)
		return fail(c, EPROTO, "not magnetd of protocol %d",
			    MAGNET_PROTO_VERSION);
	return 0;
}

MAGNET_EXPORT struct magnet_client *magnet_connect(const char *path)
{
	struct magnet_client *c;
	int err;

	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->fd = -1;
	c->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (c->c_locale == (locale_t)0)
		goto err;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 ||
	    connect_unix(c->fd, path ? path : MAGNET_SOCKET_PATH) ||
	    read_greeting(c))
		goto err;
	return c;

err:
	err = errno;
	magnet_close(c);
	errno = err;
	return NULL;
}

MAGNET_EXPORT void magnet_close(struct magnet_client *c)
{
	int err = errno;

	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->c_locale != (locale_t)0)
		freelocale(c->c_locale);
	free(c->queue);
	free(c);
	errno = err;
}

MAGNET_EXPORT int magnet_fd(const struct magnet_client *c)
{
	return c ? c->fd : -1;
}

MAGNET_EXPORT const char *magnet_last_error(const struct magnet_client *c)
{
	return c ? c->last_error : "";
}

/* --- snapshots ----------------------------------------------------------- */

/* A snapshot being read, with the room its arrays have. */
struct snap_build {
	struct magnet_snapshot *snap;
	unsigned int mcap, tcap;
};

/* Room for one more element in @*arr (@n used of @*cap). */
static bool grow(void **arr, unsigned int n, unsigned int *cap, size_t size)
{
	unsigned int cap2;
	void *p;

	if (n < *cap)
		return true;
	cap2 = *cap ? 2 * *cap : 16;
	p = realloc(*arr, (size_t)cap2 * size);
	if (!p)
		return false;
	*arr = p;
	*cap = cap2;
	return true;
}

/* "metric NAME TYPE UNIT VALUE DESCRIPTION..." (the description may be empty) */
static int add_metric(struct magnet_client *c, struct snap_build *b,
		      char *line)
{
	struct magnet_snapshot *s = b->snap;
	struct magnet_metric *m;
	char *w[6];
	int n;

	if (!grow((void **)&s->metrics, s->nmetrics, &b->mcap, sizeof(*m)))
		return fail_soft(c, ENOMEM,
				 "out of memory for a snapshot of %u metrics",
				 s->nmetrics + 1);
	m = &s->metrics[s->nmetrics];
	memset(m, 0, sizeof(*m));
	n = split(line, w, 6);
	if (n < 5 || !valid_name(w[1], sizeof(m->name)) ||
	    !valid_word(w[3], sizeof(m->unit)) ||
	    !parse_number(c, w[4], &m->value))
		return fail(c, EPROTO, "a malformed metric line in a snapshot");
	if (!strcmp(w[2], "counter"))
		m->type = MAGNET_COUNTER;
	else if (!strcmp(w[2], "gauge"))
		m->type = MAGNET_GAUGE;
	else
		return fail(c, EPROTO, "metric %s of type \"%.32s\"", w[1],
			    w[2]);
	strcpy(m->name, w[1]);
	strcpy(m->unit, w[3]);
	copy_text(m->description, sizeof(m->description), n == 6 ? w[5] : "");
	s->nmetrics++;
	return 0;
}

/* "top EVENT RANK TGID COUNT COMM" (a command name may hold spaces) */
static int add_top(struct magnet_client *c, struct snap_build *b, char *line)
{
	struct magnet_snapshot *s = b->snap;
	struct magnet_top *t;
	uint64_t rank;
	char *w[6];

	if (!grow((void **)&s->tops, s->ntops, &b->tcap, sizeof(*t)))
		return fail_soft(c, ENOMEM,
				 "out of memory for a snapshot of %u top lines",
				 s->ntops + 1);
	t = &s->tops[s->ntops];
	memset(t, 0, sizeof(*t));
	if (split(line, w, 6) != 6 || !valid_name(w[1], sizeof(t->event)) ||
	    !parse_u64(w[2], UINT_MAX, &rank) || !rank ||
	    !parse_u32(w[3], &t->tgid) ||
	    !parse_u64(w[4], UINT64_MAX, &t->count) || !*w[5])
		return fail(c, EPROTO, "a malformed top line in a snapshot");
	strcpy(t->event, w[1]);
	t->rank = rank;
	copy_text(t->comm, sizeof(t->comm), w[5]);
	s->ntops++;
	return 0;
}

/* One line of a snapshot's body; kinds this library does not know are skipped. */
static int add_snapshot_line(struct magnet_client *c, struct snap_build *b,
			     char *line)
{
	if (!*line || *line == ' ')
		return fail(c, EPROTO,
			    "an empty line, or one led by a blank, in a snapshot");
	if (first_word_is(line, "metric"))
		return add_metric(c, b, line);
	if (first_word_is(line, "top"))
		return add_top(c, b, line);
	return 0;
}

/*
 * The body of a snapshot: @count lines, then "end". @bytes, those of its
 * first line, add up to at most MAGNET_SNAPSHOT_BYTES_MAX with the body's.
 */
static int read_snapshot_body(struct magnet_client *c, struct snap_build *b,
			      uint64_t count, uint64_t bytes, int64_t deadline)
{
	uint64_t left = count + 1;
	char *line;

	for (;;) {
		if (next_line(c, deadline, &line))
			goto give_up;
		bytes += strlen(line) + 1;
		if (bytes > MAGNET_SNAPSHOT_BYTES_MAX)
			return too_large(c, "snapshot of more than MAGNET_SNAPSHOT_BYTES_MAX (%u) bytes",
					 MAGNET_SNAPSHOT_BYTES_MAX);
		if (--left == 0)
			break;
		if (add_snapshot_line(c, b, line))
			goto give_up;
	}
	if (strcmp(line, "end"))
		return fail(c, EPROTO,
			    "a snapshot's last line is not \"end\": \"%.80s\"",
			    line);
	return 0;

give_up:
	if (c->broken)
		return -1;
	/* what is left of the reply still comes: drop it then */
	c->owed_lines = left;
	if (errno == ETIMEDOUT)
		return fail_soft(c, ETIMEDOUT,
				 "a snapshot not come whole in time (%" PRIu64 " of %" PRIu64 " lines left)",
				 left, count + 1);
	return -1;
}

MAGNET_EXPORT int magnet_snapshot(struct magnet_client *c,
				  struct magnet_snapshot *snap, int timeout_ms)
{
	int64_t deadline = deadline_in(timeout_ms);
	struct snap_build b = { .snap = snap };
	uint64_t count, bytes;
	char *line;

	if (!c || !snap)
		return fail_soft(c, EINVAL, "magnet_snapshot: no snapshot to fill");
	memset(snap, 0, sizeof(*snap));
	if (transact(c, "snapshot", deadline, &line))
		return -1;
	bytes = strlen(line) + 1;
	if (snapshot_head(c, line, &snap->time_ns, &count))
		return -1;
	if (read_snapshot_body(c, &b, count, bytes, deadline)) {
		magnet_snapshot_free(snap);
		return -1;
	}
	return 0;
}

MAGNET_EXPORT void magnet_snapshot_free(struct magnet_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->metrics);
	free(snap->tops);
	memset(snap, 0, sizeof(*snap));
}

MAGNET_EXPORT const struct magnet_metric *
magnet_snapshot_find(const struct magnet_snapshot *snap, const char *name)
{
	unsigned int i;

	if (!snap || !name)
		return NULL;
	for (i = 0; i < snap->nmetrics; i++)
		if (!strcmp(snap->metrics[i].name, name))
			return &snap->metrics[i];
	return NULL;
}

MAGNET_EXPORT bool magnet_metric_per_cpu(const char *name)
{
	const char *c = name ? strstr(name, ".cpu") : NULL;

	for (; c; c = strstr(c + 1, ".cpu")) {
		const char *d = c + 4;

		if (!isdigit((unsigned char)*d))
			continue;
		while (isdigit((unsigned char)*d))
			d++;
		if (!strcmp(d, ".count"))
			return true;
	}
	return false;
}

/* --- the ledger ---------------------------------------------------------- */

/* A ledger being read, with the room its arrays have. */
struct ledger_build {
	struct magnet_ledger *l;
	unsigned int rcap;
	size_t ecap;
};

/*
 * A word of a "row" line into @dst (@size bytes): "-" is "", "\xHH" a
 * byte. false if it is malformed or does not fit.
 */
static bool unescape(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	if (!strcmp(src, "-")) {
		*dst = '\0';
		return true;
	}
	for (; *src; src++) {
		char ch = *src;

		if (ch == '\\') {
			if (src[1] != 'x' || !isxdigit((unsigned char)src[2]) ||
			    !isxdigit((unsigned char)src[3]))
				return false;
			ch = (char)((isdigit((unsigned char)src[2]) ?
				     src[2] - '0' : (src[2] | 0x20) - 'a' + 10) << 4 |
				    (isdigit((unsigned char)src[3]) ?
				     src[3] - '0' : (src[3] | 0x20) - 'a' + 10));
			if (!ch)
				return false;
			src += 3;
		}
		if (n + 1 >= size)
			return false;
		dst[n++] = ch;
	}
	dst[n] = '\0';
	return n > 0;
}

/* "cpu CPU ELAPSED" */
static int add_cpu(struct magnet_client *c, struct ledger_build *b,
		   char *line)
{
	struct magnet_ledger *l = b->l;
	uint64_t cpu, ns;
	char *w[4];

	if (split(line, w, 4) != 3 || !parse_u64(w[1], 65535, &cpu) ||
	    !parse_u64(w[2], UINT64_MAX, &ns))
		return fail(c, EPROTO, "a malformed cpu line in a ledger");
	if (cpu >= b->ecap) {
		size_t cap = b->ecap ? b->ecap : 16;
		uint64_t *e;

		while (cap <= cpu)
			cap *= 2;
		e = realloc(l->elapsed_ns, cap * sizeof(*e));
		if (!e)
			return fail_soft(c, ENOMEM,
					 "out of memory for a ledger of %" PRIu64 " CPUs",
					 cpu + 1);
		memset(e + b->ecap, 0, (cap - b->ecap) * sizeof(*e));
		l->elapsed_ns = e;
		b->ecap = cap;
	}
	l->elapsed_ns[cpu] = ns;
	if (cpu + 1 > l->ncpus)
		l->ncpus = cpu + 1;
	return 0;
}

/* "row NS CGROUP TGID KIND VECTOR NAME PATH" */
static int add_row(struct magnet_client *c, struct ledger_build *b,
		   char *line)
{
	struct magnet_ledger *l = b->l;
	struct magnet_ledger_row *r;
	char path[MAGNET_LINE_MAX];
	char *w[9];

	if (!grow((void **)&l->rows, l->nrows, &b->rcap, sizeof(*r)))
		return fail_soft(c, ENOMEM,
				 "out of memory for a ledger of %u rows",
				 l->nrows + 1);
	r = &l->rows[l->nrows];
	memset(r, 0, sizeof(*r));
	if (split(line, w, 9) != 8 || !parse_u64(w[1], UINT64_MAX, &r->ns) ||
	    !parse_u64(w[2], UINT64_MAX, &r->cgroup) ||
	    !parse_u32(w[3], &r->tgid) ||
	    !valid_word(w[4], sizeof(r->kind)) ||
	    !unescape(r->vector, sizeof(r->vector), w[5]) ||
	    !unescape(r->name, sizeof(r->name), w[6]) ||
	    !unescape(path, sizeof(path), w[7]) ||
	    (!r->cgroup != !*path))
		return fail(c, EPROTO, "a malformed row line in a ledger");
	strcpy(r->kind, w[4]);
	r->path = strdup(path);
	if (!r->path)
		return fail_soft(c, ENOMEM, "out of memory for a ledger's paths");
	l->nrows++;
	return 0;
}

MAGNET_EXPORT int magnet_ledger_snapshot(struct magnet_client *c,
					 struct magnet_ledger *ledger,
					 int timeout_ms)
{
	int64_t deadline = deadline_in(timeout_ms);
	struct ledger_build b = { .l = ledger };
	uint64_t left, count, bytes;
	char *line;

	if (!c || !ledger)
		return fail_soft(c, EINVAL,
				 "magnet_ledger_snapshot: no ledger to fill");
	memset(ledger, 0, sizeof(*ledger));
	if (transact(c, "ledger", deadline, &line)) {
		/* a magnetd before the ledger */
		if (errno == EREMOTEIO &&
		    !strncmp(c->last_error, "unknown request", 15))
			return fail_soft(c, EOPNOTSUPP,
					 "this magnetd does not serve the ledger (it is older than libmagnet)");
		return -1;
	}
	if (!strcmp(line, "ledger off"))
		return fail_soft(c, ENODATA,
				 "the ledger is off (magnetctl account on, or magnetd.conf's ledger section)");
	bytes = strlen(line) + 1;
	if (first_word_is(line, "snapshot"))
		return fail(c, EPROTO, "a snapshot in reply to \"ledger\"");
	if (snapshot_head(c, line, &ledger->time_ns, &count))
		return -1;
	/* as read_snapshot_body(), with a ledger's lines */
	for (left = count + 1;;) {
		if (next_line(c, deadline, &line))
			goto give_up;
		bytes += strlen(line) + 1;
		if (bytes > MAGNET_SNAPSHOT_BYTES_MAX) {
			magnet_ledger_free(ledger);
			return too_large(c, "ledger of more than MAGNET_SNAPSHOT_BYTES_MAX (%u) bytes",
					 MAGNET_SNAPSHOT_BYTES_MAX);
		}
		if (--left == 0)
			break;
		if (!*line || *line == ' ') {
			(void)fail(c, EPROTO,
				   "an empty line, or one led by a blank, in a ledger");
			goto give_up;
		}
		if ((first_word_is(line, "cpu") && add_cpu(c, &b, line)) ||
		    (first_word_is(line, "row") && add_row(c, &b, line)))
			goto give_up;
	}
	if (strcmp(line, "end")) {
		magnet_ledger_free(ledger);
		return fail(c, EPROTO,
			    "a ledger's last line is not \"end\": \"%.80s\"",
			    line);
	}
	return 0;

give_up:
	magnet_ledger_free(ledger);
	if (c->broken)
		return -1;
	c->owed_lines = left;
	if (errno == ETIMEDOUT)
		return fail_soft(c, ETIMEDOUT,
				 "a ledger not come whole in time (%" PRIu64 " of %" PRIu64 " lines left)",
				 left, count + 1);
	return -1;
}

MAGNET_EXPORT void magnet_ledger_free(struct magnet_ledger *ledger)
{
	if (!ledger)
		return;
	for (unsigned int i = 0; i < ledger->nrows; i++)
		free(ledger->rows[i].path);
	free(ledger->rows);
	free(ledger->elapsed_ns);
	memset(ledger, 0, sizeof(*ledger));
}

/*
 * The order of rows by their key (cgroup, thread group, kind, vector,
 * name): a row is the same row in two ledgers when this says 0.
 */
static int row_order(const struct magnet_ledger_row *x,
		     const struct magnet_ledger_row *y)
{
	int k;

	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	k = strcmp(x->kind, y->kind);
	if (!k)
		k = strcmp(x->vector, y->vector);
	return k ? k : strcmp(x->name, y->name);
}

/* Pointers to rows, by key, then by place (the first of equal rows first). */
static int row_ptr_order(const void *a, const void *b)
{
	const struct magnet_ledger_row *x =
		*(const struct magnet_ledger_row *const *)a;
	const struct magnet_ledger_row *y =
		*(const struct magnet_ledger_row *const *)b;
	int k = row_order(x, y);

	return k ? k : x < y ? -1 : x > y;
}

static int row_vs_ptr(const void *key, const void *p)
{
	return row_order(key, *(const struct magnet_ledger_row *const *)p);
}

/* @before's first row with @r's key, in @sorted (@n of them), or NULL. */
static const struct magnet_ledger_row *
row_find(const struct magnet_ledger_row *const *sorted, unsigned int n,
	 const struct magnet_ledger_row *r)
{
	const struct magnet_ledger_row *const *p;

	p = n ? bsearch(r, sorted, n, sizeof(*sorted), row_vs_ptr) : NULL;
	if (!p)
		return NULL;
	/* equal keys (none, from magnetd): the first, as they came */
	while (p > sorted && !row_order(p[-1], *p))
		p--;
	return *p;
}

MAGNET_EXPORT int magnet_ledger_subtract(struct magnet_ledger *now,
					 const struct magnet_ledger *before)
{
	const struct magnet_ledger_row **sorted, *b;
	unsigned int i, n;

	if (!now || !before) {
		errno = EINVAL;
		return -1;
	}
	/* counters only grow while the ledger stays on */
	for (i = 0; i < now->ncpus && i < before->ncpus; i++)
		if (now->elapsed_ns[i] < before->elapsed_ns[i]) {
			errno = ESTALE;
			return -1;
		}
	/*
	 * @before's rows sorted by key, each of @now's found by bisection:
	 * n log n, where a search row by row would cost n^2 (the kernel
	 * keeps up to 1024 rows per CPU; those that differ from CPU to CPU
	 * stay apart in magnetd's sums). @now keeps its order.
	 */
	n = before->nrows;
	sorted = malloc((n + 1) * sizeof(*sorted));
	if (!sorted) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++)
		sorted[i] = &before->rows[i];
	qsort(sorted, n, sizeof(*sorted), row_ptr_order);
	for (i = 0; i < now->nrows; i++) {
		b = row_find(sorted, n, &now->rows[i]);
		if (b && now->rows[i].ns < b->ns) {
			free(sorted);
			errno = ESTALE;
			return -1;
		}
	}
	for (i = 0; i < now->nrows; i++) {
		b = row_find(sorted, n, &now->rows[i]);
		if (b)
			now->rows[i].ns -= b->ns;
	}
	free(sorted);
	for (i = 0; i < now->ncpus && i < before->ncpus; i++)
		now->elapsed_ns[i] -= before->elapsed_ns[i];
	return 0;
}

/* --- subscriptions and raw requests ------------------------------------- */

/* Append " KEY VALUE" to @req when @v is set (non-negative). */
static void add_condition(char *req, size_t size, const char *key, int64_t v)
{
	size_t len = strlen(req);

	if (v >= 0)
		snprintf(req + len, size - len, " %s %" PRId64, key, v);
}

MAGNET_EXPORT int magnet_subscribe_event(struct magnet_client *c,
					 const char *event, int64_t tgid,
					 int64_t cpu, int64_t id)
{
	char req[256];

	if (!c || !event || !valid_name(event, NAME_SIZE) ||
	    tgid > UINT32_MAX || cpu > UINT32_MAX)
		return fail_soft(c, EINVAL,
				 "magnet_subscribe_event: %s",
				 !event ? "no event" :
				 !valid_name(event, NAME_SIZE) ?
				 "an event name is 1 to 127 letters, digits, '.', '_' or '-'" :
				 "tgid and cpu are at most 4294967295");
	snprintf(req, sizeof(req), "subscribe event %s", event);
	add_condition(req, sizeof(req), "tgid", tgid);
	add_condition(req, sizeof(req), "cpu", cpu);
	add_condition(req, sizeof(req), "id", id);
	return request_sub(c, req);
}

MAGNET_EXPORT int magnet_subscribe_threshold(struct magnet_client *c,
					     const char *metric,
					     const char *op, double value)
{
	static const char *const ops[] = { ">", ">=", "<", "<=" };
	locale_t old;
	char req[256];
	size_t i;

	if (!c || !metric || !op || !valid_name(metric, METRIC_SIZE) ||
	    !isfinite(value))
		return fail_soft(c, EINVAL, "magnet_subscribe_threshold: %s",
				 !metric || !op ? "no metric or operator" :
				 !isfinite(value) ? "the value is not finite" :
				 "a metric name is 1 to 127 letters, digits, '.', '_' or '-'");
	for (i = 0; i < ARRAY_SIZE(ops); i++)
		if (!strcmp(op, ops[i]))
			break;
	if (i == ARRAY_SIZE(ops))
		return fail_soft(c, EINVAL,
				 "magnet_subscribe_threshold: operator \"%.8s\" is none of >, >=, <, <=",
				 op);
	/* 17 digits: the daemon reads back exactly this double */
	old = uselocale(c->c_locale);
	snprintf(req, sizeof(req), "subscribe threshold %s %s %.17g",
		 metric, op, value);
	uselocale(old);
	return request_sub(c, req);
}

MAGNET_EXPORT int magnet_unsubscribe(struct magnet_client *c, int sub)
{
	char req[32], *line;

	if (!c || sub <= 0)
		return fail_soft(c, EINVAL,
				 "magnet_unsubscribe: subscription %d (they are > 0)",
				 sub);
	snprintf(req, sizeof(req), "unsubscribe %d", sub);
	if (transact(c, req, deadline_in(DEFAULT_TIMEOUT_MS), &line))
		return -1;
	if (strcmp(line, "ok"))
		return fail(c, EPROTO, "a reply to \"%s\" that is not \"ok\"",
			    req);
	queue_purge(c, sub);
	return 0;
}

/*
 * The reply's first line goes to @reply, cut to @len bytes if need be (the
 * request has been carried out either way). A snapshot's or a ledger's
 * body, should the request be "snapshot" or "ledger", is dropped as it
 * comes.
 */
MAGNET_EXPORT int magnet_request(struct magnet_client *c, const char *line,
				 char *reply, size_t len)
{
	uint64_t time_ns, count;
	char *r;
	int ret;

	if (!c || !line || !*line || strchr(line, '\n') ||
	    strlen(line) + 1 > MAGNET_LINE_MAX)
		return fail_soft(c, EINVAL,
				 "magnet_request: a request is one line of 1 to %d bytes",
				 MAGNET_LINE_MAX - 1);
	ret = transact(c, line, deadline_in(DEFAULT_TIMEOUT_MS), &r);
	if (ret && errno != EREMOTEIO)
		return -1;
	if (reply && len)
		copy_text(reply, len, r);
	if (!ret && many_lines(r)) {
		if (snapshot_head(c, r, &time_ns, &count))
			return -1;
		c->owed_lines = count + 1;
	}
	return ret;
}

/* --- pushes --------------------------------------------------------------- */

MAGNET_EXPORT int magnet_receive(struct magnet_client *c,
				 struct magnet_message *msg, int timeout_ms)
{
	int64_t deadline = deadline_in(timeout_ms);

	if (!c || !msg)
		return fail_soft(c, EINVAL, "magnet_receive: no message to fill");
	for (;;) {
		if (queue_pop(c, msg))
			return 1;
		if (c->broken)
			return fail_broken(c);
		if (pump(c, deadline, NULL))
			return errno == ETIMEDOUT ? 0 : -1;
	}
}

/* --- the poller ------------------------------------------------------------------ */

struct magnet_poller {
	char *path;
	unsigned int first_ms, interval_ms;
	int timeout_ms;
	magnet_poll_cb cb;
	void *data;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;		/* CLOCK_MONOTONIC */
	bool stop;			/* under @lock */
};

/* One snapshot through *@c, connecting first if need be. */
static void poll_once(struct magnet_poller *p, struct magnet_client **c)
{
	struct magnet_snapshot snap;
	int err;

	if (!*c)
		*c = magnet_connect(p->path);
	if (!*c) {
		p->cb(NULL, errno ? errno : EIO, p->data);
		return;
	}
	if (magnet_snapshot(*c, &snap, p->timeout_ms)) {
		err = errno ? errno : EIO;
		/* a connection that failed once is not trusted again */
		magnet_close(*c);
		*c = NULL;
		p->cb(NULL, err, p->data);
		return;
	}
	p->cb(&snap, 0, p->data);
	magnet_snapshot_free(&snap);
}

/* Wait @ms, or until stopped; under @p->lock. */
static void poller_wait(struct magnet_poller *p, unsigned int ms)
{
	struct timespec at;

	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += ms / 1000;
	at.tv_nsec += (long)(ms % 1000) * 1000000;
	if (at.tv_nsec >= 1000000000) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000;
	}
	while (!p->stop &&
	       pthread_cond_timedwait(&p->wake, &p->lock, &at) != ETIMEDOUT)
		;
}

static void *poller_thread(void *arg)
{
	struct magnet_poller *p = arg;
	struct magnet_client *c = NULL;

	pthread_mutex_lock(&p->lock);
	poller_wait(p, p->first_ms);
	while (!p->stop) {
		pthread_mutex_unlock(&p->lock);
		poll_once(p, &c);
		pthread_mutex_lock(&p->lock);
		poller_wait(p, p->interval_ms);
	}
	pthread_mutex_unlock(&p->lock);
	magnet_close(c);
	return NULL;
}

MAGNET_EXPORT struct magnet_poller *magnet_poller_start(const char *path,
					  unsigned int first_ms,
					  unsigned int interval_ms,
					  int timeout_ms, magnet_poll_cb cb,
					  void *data)
{
	struct magnet_poller *p = calloc(1, sizeof(*p));
	pthread_condattr_t attr;
	int err;

	if (!p)
		return NULL;
	if (!cb || !interval_ms) {
		free(p);
		errno = EINVAL;
		return NULL;
	}
	p->path = strdup(path ? path : MAGNET_SOCKET_PATH);
	if (!p->path) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->first_ms = first_ms;
	p->interval_ms = interval_ms;
	p->timeout_ms = timeout_ms;
	p->cb = cb;
	p->data = data;
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&p->thread, NULL, poller_thread, p);
	if (err) {
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p->path);
		free(p);
		errno = err;
		return NULL;
	}
	return p;
}

MAGNET_EXPORT void magnet_poller_stop(struct magnet_poller *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's Unix socket: local clients ask for snapshots and subscribe to
 * events and thresholds (the protocol is in libmagnet.h).
 *
 * The daemon never waits for a client. Each client has an output queue:
 * a reply always goes in whole, however large (a snapshot of many probes
 * is larger than the limit), but a request that finds more than four
 * times the limit still queued is not answered: its client asks and does
 * not read, and is cut off. Pushes go in only while the queue is under
 * the limit; a push that does not fit is dropped and counted, and the
 * client is told how many with a "lost N" line before its next push. Writes are non-blocking and resume when the socket
 * drains. A client that fails is marked dead and freed before the loop's
 * next iteration, never under a caller that may still hold it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "magnetd.h"
#include "words.h"

#define SUBS_PER_CLIENT	64
#define WORDS_MAX	12
#define REPLY_BACKLOG	4	/* x client-queue: unread output a request may find */
#define ACCEPT_PAUSE	0.25	/* s: no accept() after one failed ... */
#define ACCEPT_SAY_EVERY 60.	/* s: ... and one line about it at most per */

struct outq {
	char *buf;
	size_t off, len, cap;		/* unsent bytes: buf[off, len) */
};

enum sub_kind { SUB_EVENT, SUB_THRESHOLD };
enum sub_op { OP_GT, OP_GE, OP_LT, OP_LE };

struct sub {
	unsigned int id;
	enum sub_kind kind;
	char name[128];			/* event, or metric */
	/* event: -1 = any */
	int64_t tgid, cpu;
	bool has_id;
	uint64_t rid;
	/* threshold */
	enum sub_op op;
	double value;
	bool state;			/* the condition held at the last tick */
	struct sub *next;
};

struct client {
	struct server *s;
	int fd;
	uid_t uid;
	pid_t pid;
	ev_io rio, wio;
	char in[MAGNET_LINE_MAX];
	size_t inlen;
	struct outq out;
	uint64_t lost;			/* pushes dropped, not yet told */
	unsigned int nsubs;
	struct sub *subs;
	bool dead;
	struct client *next;
};

struct server {
	struct daemon *d;
	int lfd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	ev_io lio;
	ev_timer accept_pause;		/* running: lio stopped */
	ev_tstamp accept_said;		/* when a failure was last logged */
	uint64_t accept_failures;	/* since then, not logged */
	ev_prepare reaper;
	size_t limit;
	unsigned int max_clients;
	struct client *clients;
	unsigned int nclients;
	unsigned int next_sub;
	unsigned int event_subs;	/* all clients' event subscriptions */
	uint64_t pushes_dropped, clients_dropped;
};

/* --- output -------------------------------------------------------------------- */

static void client_kill(struct client *c, const char *why)
{
	if (c->dead)
		return;
	if (why)
		log_warn("client pid %d: %s; disconnected", (int)c->pid, why);
	c->dead = true;
	ev_io_stop(c->s->d->loop, &c->rio);
	ev_io_stop(c->s->d->loop, &c->wio);
	ev_prepare_start(c->s->d->loop, &c->s->reaper);
}

static size_t queued(const struct client *c)
{
	return c->out.len - c->out.off;
}

static int outq_append(struct outq *q, const char *data, size_t len)
{
	if (q->off && q->len + len > q->cap) {	/* reuse the sent part */
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
	}
	if (q->len + len > q->cap) {
		size_t cap = q->cap ? q->cap : 4096;
		char *buf;

		while (cap < q->len + len)
			cap *= 2;
		buf = realloc(q->buf, cap);
		if (!buf)
			return -1;
		q->buf = buf;
		q->cap = cap;
	}
	memcpy(q->buf + q->len, data, len);
	q->len += len;
	return 0;
}

static void client_flush(struct client *c)
{
	struct outq *q = &c->out;

	while (queued(c)) {
		ssize_t n = send(c->fd, q->buf + q->off, queued(c),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			q->off += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_start(c->s->d->loop, &c->wio);
			return;
		}
		client_kill(c, NULL);	/* gone: EPIPE, ECONNRESET */
		return;
	}
	q->off = q->len = 0;
	ev_io_stop(c->s->d->loop, &c->wio);
	/* Drained: tell of the pushes dropped meanwhile, without waiting
	 * for the next push (there may be none).
	 */
	if (c->lost && !c->dead) {
		char lost[48];
		int n = snprintf(lost, sizeof(lost), "lost %llu\n",
				 (unsigned long long)c->lost);

		c->lost = 0;
		if (outq_append(q, lost, n) == 0)
			client_flush(c);
	}
}

/*
 * Whether a request is answered: the output its client has not read yet,
 * @queued bytes before the reply, is within REPLY_BACKLOG times the
 * client-queue @limit. The reply then goes in whole, so a client that
 * reads promptly gets every reply however large, and one that asks and
 * does not read holds at most REPLY_BACKLOG x @limit plus one reply.
 */
static bool backlog_ok(size_t queued, size_t limit)
{
	return queued <= REPLY_BACKLOG * limit;
}

/* A reply, or a part of one: always queued (request() checked the backlog). */
static void reply(struct client *c, const char *data, size_t len)
{
	if (c->dead)
		return;
	if (outq_append(&c->out, data, len)) {
		client_kill(c, "out of memory");
		return;
	}
	client_flush(c);
}

/* Format one protocol line into @line; one too long is cut, still a line. */
static int vformat_line(char line[MAGNET_LINE_MAX], const char *fmt,
			va_list ap)
{
	int n = vsnprintf(line, MAGNET_LINE_MAX, fmt, ap);

	if (n >= MAGNET_LINE_MAX) {
		n = MAGNET_LINE_MAX - 1;
		line[n - 1] = '\n';
	}
	return n;
}

static void replyf(struct client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void replyf(struct client *c, const char *fmt, ...)
{
	char line[MAGNET_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vformat_line(line, fmt, ap);
	va_end(ap);
	reply(c, line, n);
}

/* A push: dropped and counted when the client's queue is full. */
static void push(struct client *c, const char *line, size_t len)
{
	char lost[48];
	int n = 0;

	if (c->dead)
		return;
	if (c->lost)
		n = snprintf(lost, sizeof(lost), "lost %llu\n",
			     (unsigned long long)c->lost);
	if (queued(c) + n + len > c->s->limit) {
		c->lost++;
		c->s->pushes_dropped++;
		return;
	}
	if ((n && outq_append(&c->out, lost, n)) ||
	    outq_append(&c->out, line, len)) {
		client_kill(c, "out of memory");
		return;
	}
	c->lost = 0;
	/*
	 * A burst of records goes out in few send()s: when the loop next
	 * turns, or now if the queue is half full (the socket buffer takes
	 * it, and the queue is kept for a client that truly lags).
	 */
	if (queued(c) >= c->s->limit / 2)
		client_flush(c);
	else
		ev_io_start(c->s->d->loop, &c->wio);
}

/* --- snapshots ----------------------------------------------------------------- */

struct snapshot {
	struct outq lines;
	unsigned int count;
	bool oom;
};

static void snap_line(struct snapshot *sn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void snap_line(struct snapshot *sn, const char *fmt, ...)
{
	char line[MAGNET_LINE_MAX];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vformat_line(line, fmt, ap);
	va_end(ap);
	if (outq_append(&sn->lines, line, n))
		sn->oom = true;
	else
		sn->count++;
}

static void snap_metric(void *ctx, const char *name,
			enum magnet_metric_type type, const char *unit,
			double value, const char *description)
{
	char v[64];

	format_double(value, v);
	snap_line(ctx, "metric %s %s %s %s %s\n", name,
		  type == MAGNET_COUNTER ? "counter" : "gauge", unit, v,
		  description);
}

static void snap_top(void *ctx, const char *event, unsigned int rank,
		     uint32_t tgid, uint64_t count)
{
	char comm[64] = "-", path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n ")] = '\0';
		fclose(f);
		if (!comm[0])
			strcpy(comm, "-");
	}
	snap_line(ctx, "top %s %u %u %llu %s\n", event, rank, tgid,
		  (unsigned long long)count, comm);
}

/* magnetd's own metrics. */
static double own_health(const struct server *s)
{
	return s->d->attached;
}

static double own_uptime(const struct server *s)
{
	return (now_ns() - s->d->start_ns) / 1e9;
}

static double own_clients(const struct server *s)
{
	return s->nclients;
}

static double own_pushes_dropped(const struct server *s)
{
	return s->pushes_dropped;
}

static double own_clients_dropped(const struct server *s)
{
	return s->clients_dropped;
}

static double own_reloads(const struct server *s)
{
	return s->d->reloads;
}

static double own_attaches(const struct server *s)
{
	return s->d->attaches;
}

static const struct {
	const char *name, *unit, *description;
	enum magnet_metric_type type;
	double (*value)(const struct server *s);
} own_metrics[] = {
	{ "magnetd.health", "bool", "1 while magnetd's configuration is installed in the magnet module and read, 0 otherwise", MAGNET_GAUGE, own_health },
	{ "magnetd.uptime", "s", "seconds since magnetd started", MAGNET_GAUGE, own_uptime },
	{ "magnetd.clients", "clients", "clients connected to magnetd", MAGNET_GAUGE, own_clients },
	{ "magnetd.pushes.dropped", "messages", "messages not pushed to clients that were not reading", MAGNET_COUNTER, own_pushes_dropped },
	{ "magnetd.clients.dropped", "clients", "clients disconnected for not reading their replies", MAGNET_COUNTER, own_clients_dropped },
	{ "magnetd.reloads", "reloads", "configuration reloads (SIGHUP)", MAGNET_COUNTER, own_reloads },
	{ "magnetd.attaches", "attaches", "times the configuration was installed in the module", MAGNET_COUNTER, own_attaches },
};

#define OWN_METRICS	(sizeof(own_metrics) / sizeof(own_metrics[0]))

void server_foreach_own(const struct server *s, metrics_cb cb, void *ctx)
{
	unsigned int i;

	for (i = 0; i < OWN_METRICS; i++)
		cb(ctx, own_metrics[i].name, own_metrics[i].type,
		   own_metrics[i].unit, own_metrics[i].value(s),
		   own_metrics[i].description);
}

/* The value of metric @name, magnetd's own or derived; false if none. */
static bool metric_value(const struct server *s, const char *name,
			 double *value)
{
	unsigned int i;

	for (i = 0; i < OWN_METRICS; i++)
		if (!strcmp(name, own_metrics[i].name)) {
			*value = own_metrics[i].value(s);
			return true;
		}
	return metrics_get(s->d->metrics, name, value);
}

static void do_snapshot(struct client *c)
{
	struct server *s = c->s;
	struct snapshot sn = {};
	struct timespec ts;

	readers_flush(s->d);
	server_foreach_own(s, snap_metric, &sn);
	metrics_foreach(s->d->metrics, snap_metric, &sn);
	metrics_foreach_top(s->d->metrics, snap_top, &sn);
	if (sn.oom) {
		replyf(c, "error out of memory\n");
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		replyf(c, "snapshot %llu %u\n",
		       (unsigned long long)ts.tv_sec * 1000000000ULL +
			       ts.tv_nsec,
		       sn.count);
		reply(c, sn.lines.buf, sn.lines.len);
		reply(c, "end\n", 4);
	}
	free(sn.lines.buf);
}

/* --- the ledger ---------------------------------------------------------------- */

/*
 * @s as one word of a "row" line (libmagnet.h): "-" if empty, else with
 * every byte outside '!'..'~' and every '\\' written as \xHH.
 */
static void ledger_word(const char *s, char *out, size_t size)
{
	size_t n = 0;

	if (!*s) {
		snprintf(out, size, "-");
		return;
	}
	for (; *s && n + 5 < size; s++) {
		unsigned char ch = *s;

		if (ch <= ' ' || ch > '~' || ch == '\\')
			n += snprintf(out + n, size - n, "\\x%02x", ch);
		else
			out[n++] = ch;
	}
	out[n] = '\0';
}

static void do_ledger(struct client *c)
{
	char vector[16], vword[64];
	char name[4 * sizeof(((struct ledger_row *)0)->name)];
	char path[MAGNET_LINE_MAX / 2];
	struct snapshot sn = {};
	struct account a;
	struct timespec ts;

	if (account_read(c->s->d, &a)) {
		if (errno == ENODATA)
			replyf(c, "ledger off\n");
		else
			replyf(c, "error the ledger cannot be read: %s\n",
			       strerror(errno));
		return;
	}
	for (uint32_t cpu = 0; cpu < a.s.cpus; cpu++)
		snap_line(&sn, "cpu %u %llu\n", cpu,
			  (unsigned long long)a.s.elapsed[cpu]);
	for (size_t i = 0; i < a.s.count; i++) {
		const struct ledger_row *r = &a.s.rows[i];

		account_vector(r, vector, sizeof(vector));
		ledger_word(vector, vword, sizeof(vword));
		ledger_word(r->name, name, sizeof(name));
		ledger_word(a.path[i], path, sizeof(path));
		snap_line(&sn, "row %llu %llu %u %s %s %s %s\n",
			  (unsigned long long)r->ns,
			  (unsigned long long)r->cgroup, r->tgid,
			  ledger_kind_name(r->kind), vword, name, path);
	}
	account_release(&a);
	if (sn.oom) {
		replyf(c, "error out of memory\n");
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		replyf(c, "ledger %llu %u\n",
		       (unsigned long long)ts.tv_sec * 1000000000ULL +
			       ts.tv_nsec,
		       sn.count);
		reply(c, sn.lines.buf, sn.lines.len);
		reply(c, "end\n", 4);
	}
	free(sn.lines.buf);
}

/* --- subscriptions ------------------------------------------------------------- */

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* A number with an optional unit suffix (ns us ms s k M G). */
static bool parse_value(const char *s, double *v)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "", 1 },
	};
	unsigned int i;
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v))
		return false;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].suffix)) {
			*v *= units[i].scale;
			return true;
		}
	return false;
}

static struct sub *sub_add(struct client *c, enum sub_kind kind,
			   const char *name)
{
	struct sub *sub;

	if (c->nsubs >= SUBS_PER_CLIENT) {
		replyf(c, "error too many subscriptions (at most %d per connection)\n",
		       SUBS_PER_CLIENT);
		return NULL;
	}
	sub = calloc(1, sizeof(*sub));
	if (!sub) {
		replyf(c, "error out of memory\n");
		return NULL;
	}
	sub->kind = kind;
	sub->tgid = sub->cpu = -1;
	snprintf(sub->name, sizeof(sub->name), "%s", name);
	return sub;
}

static void sub_link(struct client *c, struct sub *sub)
{
	sub->id = ++c->s->next_sub;
	sub->next = c->subs;
	c->subs = sub;
	c->nsubs++;
	if (sub->kind == SUB_EVENT)
		c->s->event_subs++;
	replyf(c, "ok %u\n", sub->id);
}

static bool event_known(const struct server *s, const char *name)
{
	char metric[160];
	double v;

	snprintf(metric, sizeof(metric), "%s.count", name);
	return metrics_get(s->d->metrics, metric, &v);
}

/* subscribe event EVENT [tgid N] [cpu N] [id N] */
static void subscribe_event(struct client *c, char **w, int n)
{
	struct sub *sub;
	uint64_t v;
	int i;

	if (n < 3 || !event_known(c->s, w[2])) {
		replyf(c, "error no event \"%s\" in magnetd's configuration\n",
		       n < 3 ? "" : w[2]);
		return;
	}
	if (n % 2 == 0) {
		replyf(c, "error usage: subscribe event EVENT [tgid N] [cpu N] [id N]\n");
		return;
	}
	sub = sub_add(c, SUB_EVENT, w[2]);
	if (!sub)
		return;
	for (i = 3; i + 1 < n; i += 2) {
		if (!parse_u64(w[i + 1], &v)) {
			replyf(c, "error %s: \"%s\" is not a number\n", w[i],
			       w[i + 1]);
			free(sub);
			return;
		}
		if (!strcmp(w[i], "tgid") && v <= UINT32_MAX) {
			sub->tgid = v;
		} else if (!strcmp(w[i], "cpu") && v <= UINT32_MAX) {
			sub->cpu = v;
		} else if (!strcmp(w[i], "id")) {
			sub->has_id = true;
			sub->rid = v;
		} else {
			replyf(c, "error unknown condition \"%s %s\" (tgid, cpu, id)\n",
			       w[i], w[i + 1]);
			free(sub);
			return;
		}
	}
	sub_link(c, sub);
}

/* subscribe threshold METRIC OP VALUE */
static void subscribe_threshold(struct client *c, char **w, int n)
{
	static const char *const ops[] = { ">", ">=", "<", "<=" };
	struct sub *sub;
	unsigned int op;
	double value;

	if (n != 5) {
		replyf(c, "error usage: subscribe threshold METRIC OP VALUE\n");
		return;
	}
	for (op = 0; op < 4 && strcmp(w[3], ops[op]); op++)
		;
	if (op == 4) {
		replyf(c, "error unknown operator \"%s\" (>, >=, <, <=)\n", w[3]);
		return;
	}
	if (!parse_value(w[4], &value)) {
		replyf(c, "error \"%s\" is not a number (with an optional unit: ns us ms s k M G)\n",
		       w[4]);
		return;
	}
	sub = sub_add(c, SUB_THRESHOLD, w[2]);
	if (!sub)
		return;
	sub->op = op;
	sub->value = value;
	sub_link(c, sub);
}

static void sub_unlink(struct client *c, struct sub **pp)
{
	struct sub *sub = *pp;

	*pp = sub->next;
	if (sub->kind == SUB_EVENT)
		c->s->event_subs--;
	c->nsubs--;
	free(sub);
}

static void unsubscribe(struct client *c, char **w, int n)
{
	struct sub **pp;
	uint64_t id;

	if (n != 2 || !parse_u64(w[1], &id)) {
		replyf(c, "error usage: unsubscribe SUB\n");
		return;
	}
	for (pp = &c->subs; *pp; pp = &(*pp)->next)
		if ((*pp)->id == id) {
			sub_unlink(c, pp);
			replyf(c, "ok\n");
			return;
		}
	replyf(c, "error no subscription %llu on this connection\n",
	       (unsigned long long)id);
}

void server_record(struct server *s, const struct magnet_record *rec)
{
	const char *name;
	struct client *c;
	struct sub *sub;
	char line[512];
	int n;

	if (!s || !s->event_subs || rec->event > MAGNET_EVENT_ID_MAX)
		return;
	name = s->d->event_name[rec->event];
	if (!name)
		return;
	for (c = s->clients; c; c = c->next)
		for (sub = c->subs; sub && !c->dead; sub = sub->next) {
			if (sub->kind != SUB_EVENT || strcmp(sub->name, name) ||
			    (sub->tgid >= 0 && sub->tgid != rec->tgid) ||
			    (sub->cpu >= 0 && sub->cpu != rec->cpu) ||
			    (sub->has_id && sub->rid != rec->id))
				continue;
			n = snprintf(line, sizeof(line),
				     "event %u %s %llu %u %u %u %llu %u\n",
				     sub->id, name,
				     (unsigned long long)rec->timestamp,
				     rec->cpu, rec->tgid, rec->tid,
				     (unsigned long long)rec->id, rec->size);
			push(c, line, n);
		}
}

static bool holds(enum sub_op op, double v, double limit)
{
	switch (op) {
	case OP_GT:
		return v > limit;
	case OP_GE:
		return v >= limit;
	case OP_LT:
		return v < limit;
	default:
		return v <= limit;
	}
}

void server_tick(struct server *s)
{
	struct client *c;
	struct sub *sub;
	char line[512], v[64];
	double value;
	bool now;
	int n;

	for (c = s->clients; c; c = c->next)
		for (sub = c->subs; sub && !c->dead; sub = sub->next) {
			if (sub->kind != SUB_THRESHOLD)
				continue;
			if (!metric_value(s, sub->name, &value))
				value = NAN;	/* no such metric (yet): false */
			now = holds(sub->op, value, sub->value);
			if (now == sub->state)
				continue;
			sub->state = now;
			if (isnan(value))
				value = 0;
			format_double(value, v);
			n = snprintf(line, sizeof(line), "alert %u %s %s %s\n",
				     sub->id, sub->name, v,
				     now ? "fired" : "cleared");
			push(c, line, n);
		}
}

/* --- requests ------------------------------------------------------------------ */

static bool privileged(const struct client *c)
{
	return c->uid == 0 || c->uid == geteuid();
}

static void request(struct client *c, char *line)
{
	char *w[WORDS_MAX], *save = NULL, *tok;
	int n = 0;

	if (!backlog_ok(queued(c), c->s->limit)) {
		c->s->clients_dropped++;
		client_kill(c, "replies not read (queue over 4x client-queue)");
		return;
	}
	for (tok = line; *tok; tok++)
		if ((unsigned char)*tok < ' ' || (unsigned char)*tok > '~') {
			replyf(c, "error the request is not printable text\n");
			return;
		}
	for (tok = strtok_r(line, " ", &save); tok && n < WORDS_MAX;
	     tok = strtok_r(NULL, " ", &save))
		w[n++] = tok;
	if (!n) {
		replyf(c, "error empty request\n");
	} else if (tok) {
		replyf(c, "error too many words\n");
	} else if (!strcmp(w[0], "snapshot") && n == 1) {
		do_snapshot(c);
	} else if (!strcmp(w[0], "ledger") && n == 1) {
		do_ledger(c);
	} else if (!strcmp(w[0], "subscribe") && n > 1 &&
		   !strcmp(w[1], "event")) {
		subscribe_event(c, w, n);
	} else if (!strcmp(w[0], "subscribe") && n > 1 &&
		   !strcmp(w[1], "threshold")) {
		subscribe_threshold(c, w, n);
	} else if (!strcmp(w[0], "subscribe")) {
		replyf(c, "error usage: subscribe event EVENT [tgid N] [cpu N] [id N] | subscribe threshold METRIC OP VALUE\n");
	} else if (!strcmp(w[0], "unsubscribe")) {
		unsubscribe(c, w, n);
	} else if ((!strcmp(w[0], "release") || !strcmp(w[0], "attach")) &&
		   n == 1) {
		if (!privileged(c)) {
			replyf(c, "error %s: only root or magnetd's user may do that\n",
			       w[0]);
		} else if (w[0][0] == 'r') {
			daemon_release(c->s->d);
			replyf(c, "ok\n");
		} else if (daemon_attach(c->s->d)) {
			replyf(c, "error attach failed (see magnetd's log)\n");
		} else {
			replyf(c, "ok\n");
		}
	} else {
		replyf(c, "error unknown request \"%.64s\" (snapshot, ledger, subscribe, unsubscribe, release, attach)\n",
		       w[0]);
	}
}

static void on_client_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *c = w->data;
	char *nl, *start;
	ssize_t n;

	(void)loop;
	(void)revents;
	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
		 MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		client_kill(c, NULL);
		return;
	}
	c->inlen += n;
	start = c->in;
	while (!c->dead &&
	       (nl = memchr(start, '\n', c->inlen - (start - c->in)))) {
		*nl = '\0';
		if (nl > start && nl[-1] == '\r')
			nl[-1] = '\0';
		request(c, start);
		start = nl + 1;
	}
	c->inlen -= start - c->in;
	memmove(c->in, start, c->inlen);
	if (c->inlen == sizeof(c->in))
		client_kill(c, "request line too long");
}

static void on_client_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	client_flush(w->data);
}

static void client_free(struct client *c)
{
	while (c->subs)
		sub_unlink(c, &c->subs);
	close(c->fd);
	free(c->out.buf);
	free(c);
}

/*
 * accept() failed, for want of descriptors (EMFILE, ENFILE) or memory:
 * the client stays in the listen queue, so the socket stays readable and
 * the next try would fail at once, over and over. Accepts rest for
 * ACCEPT_PAUSE instead, or until a client is freed; the log gets a line
 * per ACCEPT_SAY_EVERY at most, counting the failures it did not tell.
 */
static void accept_failed(struct server *s, int err)
{
	ev_tstamp now = ev_now(s->d->loop);

	if (!s->accept_said || now - s->accept_said >= ACCEPT_SAY_EVERY) {
		log_warn("accept: %s; clients wait, accepts pause %g s after each failure (%llu more failed since the last line)",
			 strerror(err), ACCEPT_PAUSE,
			 (unsigned long long)s->accept_failures);
		s->accept_said = now;
		s->accept_failures = 0;
	} else {
		s->accept_failures++;
	}
	ev_io_stop(s->d->loop, &s->lio);
	ev_timer_set(&s->accept_pause, ACCEPT_PAUSE, 0.);
	ev_timer_start(s->d->loop, &s->accept_pause);
}

static void accept_resume(struct server *s)
{
	ev_timer_stop(s->d->loop, &s->accept_pause);
	ev_io_start(s->d->loop, &s->lio);
}

static void on_accept_pause(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	accept_resume(w->data);
}

/* Free the dead clients, between loop iterations. */
static void on_reap(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct server *s = w->data;
	struct client **pp = &s->clients, *c;

	(void)revents;
	while ((c = *pp)) {
		if (c->dead) {
			*pp = c->next;
			s->nclients--;
			client_free(c);
		} else {
			pp = &c->next;
		}
	}
	ev_prepare_stop(loop, w);
	/* descriptors were freed: a paused accept may work now */
	if (ev_is_active(&s->accept_pause))
		accept_resume(s);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct server *s = w->data;
	struct ucred cred = {};
	socklen_t len = sizeof(cred);
	struct client *c;
	int fd;

	(void)revents;
	fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			accept_failed(s, errno);
		return;
	}
	if (s->nclients >= s->max_clients) {
		static const char full[] = "error too many clients\n";

		send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	c->s = s;
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	ev_io_init(&c->rio, on_client_readable, fd, EV_READ);
	ev_io_init(&c->wio, on_client_writable, fd, EV_WRITE);
	c->rio.data = c->wio.data = c;
	ev_io_start(loop, &c->rio);
	c->next = s->clients;
	s->clients = c;
	s->nclients++;
	replyf(c, "magnetd %d %s\n", MAGNET_PROTO_VERSION, MAGNETD_VERSION);
}

void server_metrics(const struct server *s, unsigned int *clients,
		    uint64_t *pushes_dropped, uint64_t *clients_dropped)
{
	*clients = s->nclients;
	*pushes_dropped = s->pushes_dropped;
	*clients_dropped = s->clients_dropped;
}

/* --- the socket ---------------------------------------------------------------- */

/* A socket file left by a magnetd that died goes; a live one stays. */
static int clear_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, ret;

	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		log_error("%s exists and is not a socket", sa->sun_path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	ret = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (ret == 0) {
		log_error("another magnetd is serving %s", sa->sun_path);
		return -1;
	}
	return unlink(sa->sun_path);
}

static int set_permissions(const struct config_socket *cs)
{
	struct group *g;

	if (cs->group[0]) {
		g = getgrnam(cs->group);
		if (!g) {
			log_error("socket group \"%s\": no such group", cs->group);
			return -1;
		}
		if (chown(cs->path, -1, g->gr_gid) < 0) {
			log_error("chown %s to group %s: %s", cs->path,
				  cs->group, strerror(errno));
			return -1;
		}
	}
	if (chmod(cs->path, cs->mode) < 0) {
		log_error("chmod %s %o: %s", cs->path, (unsigned int)cs->mode,
			  strerror(errno));
		return -1;
	}
	return 0;
}

struct server *server_new(struct daemon *d, const struct config_socket *cs)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct server *s = calloc(1, sizeof(*s));
	mode_t old;

	if (!s)
		return NULL;
	s->d = d;
	s->limit = cs->client_queue;
	s->max_clients = cs->max_clients;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cs->path);
	snprintf(s->path, sizeof(s->path), "%s", cs->path);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || clear_stale(&sa))
		goto fail;
	/* No window in which the socket is more open than configured. */
	old = umask(0177);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		log_error("bind %s: %s", cs->path, strerror(errno));
		goto fail;
	}
	umask(old);
	if (set_permissions(cs) || listen(s->lfd, 64) < 0) {
		unlink(cs->path);
		goto fail;
	}
	ev_io_init(&s->lio, on_accept, s->lfd, EV_READ);
	s->lio.data = s;
	ev_io_start(d->loop, &s->lio);
	ev_init(&s->accept_pause, on_accept_pause);
	s->accept_pause.data = s;
	ev_prepare_init(&s->reaper, on_reap);
	s->reaper.data = s;
	return s;
fail:
	if (s->lfd >= 0)
		close(s->lfd);
	free(s);
	return NULL;
}

void server_free(struct server *s)
{
	struct client *c;

	if (!s)
		return;
	ev_io_stop(s->d->loop, &s->lio);
	ev_timer_stop(s->d->loop, &s->accept_pause);
	ev_prepare_stop(s->d->loop, &s->reaper);
	while ((c = s->clients)) {
		s->clients = c->next;
		ev_io_stop(s->d->loop, &c->rio);
		ev_io_stop(s->d->loop, &c->wio);
		client_free(c);
	}
	close(s->lfd);
	unlink(s->path);
	free(s);
}

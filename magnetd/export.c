// SPDX-License-Identifier: GPL-2.0
/*
 * Spans posted live to an OpenTelemetry collector (magnetd.conf's otlp
 * section), over OTLP/HTTP with the JSON encoding.
 *
 * The spans come from a child: magnet-read -P SETS --otlp - [EXPRESSION],
 * whose output is OTLP's file format, one ExportTraceServiceRequest a
 * line, written at least every second (magnet-read(1), SPANS): the body
 * a POST to /v1/traces takes, as it is. One implementation of records to
 * spans, magnet-read's; magnetd keeps the connection to the collector:
 *
 * - the lines wait in a queue of at most queue bytes; a line that would
 *   go past it drops the oldest waiting (not the one being posted), and
 *   its spans are counted as dropped;
 * - one POST at a time, in order, through libcurl's multi interface on
 *   magnetd's libev loop (nothing blocks); a 2xx answer: sent; 408, 429,
 *   5xx, no answer within timeout, no connection: posted again after 1 s,
 *   then 2, 4 ... 30 s, the line kept; another 4xx: the collector refuses
 *   that request, dropped and counted as rejected;
 * - the child, should it end (the module unloaded, a bad expression), is
 *   started again after 5 s, counted; it ends with magnetd (SIGINT: it
 *   writes what it holds first, and that is posted before magnetd exits,
 *   for up to a POST's timeout).
 *
 * Its counters are Prometheus's magnet_otlp_* (exposition.c). A line's
 * spans are counted by its "spanId" keys: one a span, as lib/otel.c
 * writes them (no links).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "magnetd.h"

#define LINE_MAX_READ	65536		/* bytes read at once */
#define BACKOFF_MIN_S	1
#define BACKOFF_MAX_S	30
#define RESTART_S	5

struct line {
	struct line *next;
	size_t len;
	unsigned int spans;
	char body[];
};

struct sock {
	ev_io io;
	struct export *e;
};

struct export {
	struct daemon *d;
	struct config_otlp c;		/* in force */
	pid_t child;
	int fd;
	ev_io out;			/* the child's stdout */
	ev_child wait;
	ev_timer restart, retry, curl_timer;
	char *partial;			/* a line begun */
	size_t plen;
	struct line *head, **tail;	/* head: being posted, or next */
	CURLM *multi;
	CURL *easy;			/* in flight: head's */
	struct curl_slist *headers;
	unsigned int backoff_s;
	bool stopping;			/* no restart: the end */
	bool anew;			/* stopped to start again at once */
	bool skipping;			/* to the end of a line too long */
	struct export_stats st;
};

static unsigned int count_spans(const char *s, size_t len)
{
	static const char key[] = "\"spanId\":";
	unsigned int n = 0;

	for (const char *p = s, *end = s + len;
	     (p = memmem(p, end - p, key, sizeof(key) - 1)); p += sizeof(key) - 1)
		n++;
	return n;
}

/* --- the queue ------------------------------------------------------------------- */

static void line_drop(struct export *e, struct line *l)
{
	e->st.queue_bytes -= l->len;
	free(l);
}

static void post_next(struct export *e);
static void check_done(struct export *e);

static void enqueue(struct export *e, const char *s, size_t len)
{
	struct line *l;

	while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
		len--;
	if (!len)
		return;
	if (len > e->c.queue) {
		e->st.spans_dropped += count_spans(s, len);
		return;
	}
	/* room: the oldest waiting go (never the one in flight) */
	while (e->st.queue_bytes + len > e->c.queue) {
		struct line **p = e->easy ? &e->head->next : &e->head;
		struct line *old = *p;

		if (!old)
			break;
		*p = old->next;
		if (e->tail == &old->next)
			e->tail = p;
		e->st.spans_dropped += old->spans;
		line_drop(e, old);
	}
	l = malloc(sizeof(*l) + len + 1);
	if (!l) {
		e->st.spans_dropped += count_spans(s, len);
		return;
	}
	l->next = NULL;
	l->len = len;
	l->spans = count_spans(s, len);
	memcpy(l->body, s, len);
	l->body[len] = 0;
	*e->tail = l;
	e->tail = &l->next;
	e->st.queue_bytes += len;
	if (!e->easy && !ev_is_active(&e->retry))
		post_next(e);
}

static void dequeue(struct export *e)
{
	struct line *l = e->head;

	e->head = l->next;
	if (!e->head)
		e->tail = &e->head;
	line_drop(e, l);
}

/* --- libcurl on the loop -------------------------------------------------------- */

static void on_sock(struct ev_loop *loop, ev_io *w, int revents)
{
	/* (the action can free @w: sock_cb's CURL_POLL_REMOVE) */
	struct export *e = ((struct sock *)w)->e;
	int running;

	(void)loop;
	curl_multi_socket_action(e->multi, w->fd,
				 (revents & EV_READ ? CURL_CSELECT_IN : 0) |
				 (revents & EV_WRITE ? CURL_CSELECT_OUT : 0),
				 &running);
	check_done(e);
}

static int sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
		   void *sockp)
{
	struct export *e = userp;
	struct sock *s = sockp;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			ev_io_stop(e->d->loop, &s->io);
			free(s);
			curl_multi_assign(e->multi, fd, NULL);
		}
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		s->e = e;
		curl_multi_assign(e->multi, fd, s);
	} else {
		ev_io_stop(e->d->loop, &s->io);
	}
	ev_io_init(&s->io, on_sock, fd,
		   (what & CURL_POLL_IN ? EV_READ : 0) |
		   (what & CURL_POLL_OUT ? EV_WRITE : 0));
	ev_io_start(e->d->loop, &s->io);
	return 0;
}

static void on_curl_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct export *e = w->data;
	int running;

	(void)loop;
	(void)revents;
	curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(e);
}

static int timer_cb(CURLM *multi, long ms, void *userp)
{
	struct export *e = userp;

	(void)multi;
	ev_timer_stop(e->d->loop, &e->curl_timer);
	if (ms >= 0) {
		ev_timer_set(&e->curl_timer, ms / 1000.0, 0);
		ev_timer_start(e->d->loop, &e->curl_timer);
	}
	return 0;
}

static size_t discard(char *p, size_t size, size_t n, void *userp)
{
	(void)p;
	(void)userp;
	return size * n;
}

/* --- posting ----------------------------------------------------------------------- */

static void on_retry(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	post_next(w->data);
}

/* The POST of the queue's head, in e->easy: 0, or -1 out of memory */
static int request_new(struct export *e)
{
	e->easy = curl_easy_init();
	if (!e->easy)
		return -1;
	curl_easy_setopt(e->easy, CURLOPT_URL, e->c.url);
	curl_easy_setopt(e->easy, CURLOPT_HTTPHEADER, e->headers);
	curl_easy_setopt(e->easy, CURLOPT_POSTFIELDS, (const char *)e->head->body);
	curl_easy_setopt(e->easy, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)e->head->len);
	curl_easy_setopt(e->easy, CURLOPT_TIMEOUT, (long)e->c.timeout_s);
	curl_easy_setopt(e->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e->easy, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(e->easy, CURLOPT_USERAGENT, "magnetd/" MAGNETD_VERSION);
	return 0;
}

static void post_next(struct export *e)
{
	if (e->easy || !e->head || !e->multi || request_new(e))
		return;
	curl_multi_add_handle(e->multi, e->easy);
}

/* The POST ended: @res, and the collector's status if it answered */
static void posted(struct export *e, CURLcode res, long status)
{
	struct line *l = e->head;

	curl_multi_remove_handle(e->multi, e->easy);
	curl_easy_cleanup(e->easy);
	e->easy = NULL;
	if (res == CURLE_OK && status >= 200 && status < 300) {
		e->st.requests_sent++;
		e->st.spans_sent += l->spans;
		e->st.up = true;
		e->backoff_s = 0;
		dequeue(e);
		post_next(e);
		return;
	}
	if (res == CURLE_OK && status >= 400 && status < 500 &&
	    status != 408 && status != 429) {
		log_warn("otlp: %s refused a request of %u spans (HTTP %ld): dropped",
			 e->c.url, l->spans, status);
		e->st.requests_rejected++;
		e->st.spans_rejected += l->spans;
		dequeue(e);
		post_next(e);
		return;
	}
	e->st.requests_failed++;
	if (e->st.up || !e->backoff_s)
		log_warn("otlp: posting to %s: %s; trying again, the spans kept (up to %llu bytes)",
			 e->c.url, res != CURLE_OK ? curl_easy_strerror(res) :
			 status >= 500 ? "the collector failed (HTTP 5xx)" :
			 "the collector is busy (HTTP 408 or 429)",
			 (unsigned long long)e->c.queue);
	e->st.up = false;
	e->backoff_s = e->backoff_s ? e->backoff_s * 2 : BACKOFF_MIN_S;
	if (e->backoff_s > BACKOFF_MAX_S)
		e->backoff_s = BACKOFF_MAX_S;
	ev_timer_set(&e->retry, e->backoff_s, 0);
	ev_timer_start(e->d->loop, &e->retry);
}

static void check_done(struct export *e)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(e->multi, &left)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == e->easy) {
			long status = 0;

			curl_easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE, &status);
			posted(e, m->data.result, status);
		}
}

/* --- the child ---------------------------------------------------------------------- */

static void start_child(struct export *e);

static void on_restart(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	start_child(w->data);
}

/* A chunk of the child's output: its whole lines queued, the rest kept */
static void take_output(struct export *e, char *p, char *end)
{
	while (p < end) {
		char *nl = memchr(p, '\n', end - p);
		size_t k = (nl ? nl : end) - p;

		if (e->skipping) {
			/* (the rest of a line too long for the queue) */
			e->st.spans_dropped += count_spans(p, k);
			e->skipping = !nl;
		} else if (!nl || e->plen) {
			char *q = realloc(e->partial, e->plen + k + 1);

			if (!q) {
				e->plen = 0;
				e->skipping = !nl;
				p += k + (nl != NULL);
				continue;
			}
			e->partial = q;
			memcpy(e->partial + e->plen, p, k);
			e->plen += k;
			if (e->plen > e->c.queue) {
				/* a line the queue cannot hold: dropped */
				e->st.spans_dropped += count_spans(e->partial, e->plen);
				e->plen = 0;
				e->skipping = !nl;
			} else if (nl) {
				enqueue(e, e->partial, e->plen);
				e->plen = 0;
			}
		} else {
			enqueue(e, p, k);
		}
		p += k + (nl != NULL);
	}
}

/* What the child wrote, until there is no more now (or its end) */
static void on_output(struct ev_loop *loop, ev_io *w, int revents)
{
	struct export *e = w->data;
	char buf[LINE_MAX_READ];

	(void)loop;
	(void)revents;
	while (e->fd >= 0) {
		ssize_t n = read(e->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {		/* its end: ev_child says how */
			ev_io_stop(e->d->loop, &e->out);
			close(e->fd);
			e->fd = -1;
			return;
		}
		take_output(e, buf, buf + n);
	}
}

static void on_child(struct ev_loop *loop, ev_child *w, int revents)
{
	struct export *e = w->data;
	int st = w->rstatus;

	(void)revents;
	ev_child_stop(loop, w);
	e->child = 0;
	if (e->fd >= 0)
		on_output(loop, &e->out, EV_READ);	/* what it wrote last */
	if (e->stopping || !e->d->attached)
		return;		/* (daemon_attach() starts it again) */
	if (e->anew) {		/* a new capture (a reload) */
		e->anew = false;
		start_child(e);
		return;
	}
	e->st.restarts++;
	log_warn("otlp: %s ended (%s %d); starting it again in %d s",
		 e->c.program, WIFSIGNALED(st) ? "signal" : "status",
		 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st), RESTART_S);
	ev_timer_set(&e->restart, RESTART_S, 0);
	ev_timer_start(loop, &e->restart);
}

static void start_child(struct export *e)
{
	const char *argv[8];
	int p[2], argc = 0;
	pid_t pid;

	if (e->child || e->stopping)
		return;
	argv[argc++] = e->c.program;
	argv[argc++] = "-P";
	argv[argc++] = e->c.sets;
	argv[argc++] = "--otlp";
	argv[argc++] = "-";
	if (e->c.expression[0])
		argv[argc++] = e->c.expression;
	argv[argc] = NULL;
	if (pipe2(p, O_CLOEXEC)) {
		log_error("otlp: pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		log_error("otlp: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (!pid) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(p[1], STDOUT_FILENO) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "magnetd: otlp: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	e->child = pid;
	e->fd = p[0];
	ev_io_init(&e->out, on_output, e->fd, EV_READ);
	e->out.data = e;
	ev_io_start(e->d->loop, &e->out);
	ev_child_init(&e->wait, on_child, pid, 0);
	e->wait.data = e;
	ev_child_start(e->d->loop, &e->wait);
	log_info("otlp: spans of %s to %s (%s, pid %d)", e->c.sets, e->c.url,
		 e->c.program, pid);
}

static void stop_child(struct export *e)
{
	if (!e->child)
		return;
	kill(e->child, SIGINT);
}

/* --- the daemon's side ------------------------------------------------------------- */

static struct export *export_new(struct daemon *d)
{
	struct export *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->d = d;
	e->fd = -1;
	e->tail = &e->head;
	e->multi = curl_multi_init();
	e->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (!e->multi || !e->headers) {
		if (e->multi)
			curl_multi_cleanup(e->multi);
		curl_slist_free_all(e->headers);
		free(e);
		return NULL;
	}
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	ev_timer_init(&e->curl_timer, on_curl_timer, 0, 0);
	e->curl_timer.data = e;
	ev_timer_init(&e->retry, on_retry, 0, 0);
	e->retry.data = e;
	ev_timer_init(&e->restart, on_restart, 0, 0);
	e->restart.data = e;
	return e;
}

void export_apply(struct daemon *d)
{
	const struct config_otlp *c = &d->cfg->otlp;
	struct export *e = d->export;

	if (!c->url[0]) {
		export_drop(d);
		return;
	}
	if (!e) {
		static bool curl_ready;

		if (!curl_ready && curl_global_init(CURL_GLOBAL_DEFAULT)) {
			log_error("otlp: libcurl could not start: no spans posted");
			return;
		}
		curl_ready = true;
		e = d->export = export_new(d);
		if (!e) {
			log_error("otlp: out of memory: no spans posted");
			return;
		}
	}
	if (memcmp(&e->c, c, sizeof(*c))) {
		bool capture = strcmp(e->c.sets, c->sets) ||
			       strcmp(e->c.expression, c->expression) ||
			       strcmp(e->c.program, c->program);

		e->c = *c;
		if (capture && e->child) {
			e->anew = true;	/* on_child starts it anew */
			stop_child(e);
		}
	}
	start_child(e);
	check_done(e);
}

/* The child stopped, what it wrote last taken */
static void end_child(struct export *e)
{
	struct daemon *d = e->d;

	e->stopping = true;
	ev_timer_stop(d->loop, &e->restart);
	if (e->child)
		kill(e->child, SIGINT);
	/*
	 * What it writes as it ends, read to its end first: waiting for it
	 * with the pipe full would wait for ever (it waits to write).
	 */
	if (e->fd >= 0) {
		fcntl(e->fd, F_SETFL, 0);
		on_output(d->loop, &e->out, EV_READ);
	}
	if (e->child) {
		int st;

		waitpid(e->child, &st, 0);
		ev_child_stop(d->loop, &e->wait);
		e->child = 0;
	}
	if (e->partial && e->plen)
		enqueue(e, e->partial, e->plen);
	e->plen = 0;
}

static void export_free(struct export *e)
{
	struct daemon *d = e->d;

	while (e->head) {
		e->st.spans_dropped += e->head->spans;
		dequeue(e);
	}
	if (e->easy) {
		curl_multi_remove_handle(e->multi, e->easy);
		curl_easy_cleanup(e->easy);
	}
	ev_timer_stop(d->loop, &e->retry);
	ev_timer_stop(d->loop, &e->restart);
	ev_timer_stop(d->loop, &e->curl_timer);
	ev_io_stop(d->loop, &e->out);
	curl_multi_cleanup(e->multi);
	curl_slist_free_all(e->headers);
	free(e->partial);
	free(e);
	d->export = NULL;
}

void export_drop(struct daemon *d)
{
	if (!d->export)
		return;
	log_info("otlp: no url: spans no longer posted");
	end_child(d->export);
	export_free(d->export);
}

/*
 * At exit, the loop stopped: the child's last lines posted (each within a
 * POST's timeout, while the collector answers), then everything freed.
 */
void export_stop(struct daemon *d)
{
	struct export *e = d->export;

	if (!e)
		return;
	end_child(e);
	/* one try each for what is left, in order, while it answers */
	ev_timer_stop(d->loop, &e->retry);
	while (e->head) {
		unsigned int spans = e->head->spans;
		long status = 0;
		CURLcode res;

		if (e->easy) {
			curl_multi_remove_handle(e->multi, e->easy);
			curl_easy_cleanup(e->easy);
			e->easy = NULL;
		}
		if (request_new(e))
			break;
		res = curl_easy_perform(e->easy);
		curl_easy_getinfo(e->easy, CURLINFO_RESPONSE_CODE, &status);
		curl_easy_cleanup(e->easy);
		e->easy = NULL;
		if (res != CURLE_OK || status < 200 || status >= 300) {
			log_warn("otlp: %s did not take the last spans: dropped",
				 e->c.url);
			break;
		}
		e->st.spans_sent += spans;
		e->st.requests_sent++;
		dequeue(e);
	}
	export_free(e);
}

const struct export_stats *export_stats(const struct daemon *d)
{
	return d->export ? &d->export->st : NULL;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's HTTP endpoint for Prometheus (and whatever scrapes its
 * formats): GET /metrics, in the format the Accept header asks for
 * (exposition.c). Off unless magnetd.conf's prometheus section enables
 * it; loopback by default. TLS and basic authentication are the web
 * configuration's (webauth.h): a request without what it asks for is
 * answered 401 before anything else is looked at.
 *
 * HTTP is libmicrohttpd's (Debian's libmicrohttpd), run inside magnetd's
 * one libev loop: the library polls its sockets with an epoll set of its
 * own, which the loop watches, and its timeouts become a loop timer
 * (MHD_run() never blocks). So a scraper costs the loop only the page's
 * rendering (linear in the configuration, exposition.h); its bytes go out
 * as the client takes them. A connection silent for `timeout` seconds is
 * closed, and so is one whose request is not answered in full within
 * `request-timeout` seconds of the connection's opening (or of its
 * previous answer), however it trickles: the library's timeout counts
 * only silence, so that deadline is kept here (struct slot). At most
 * `max-clients` connections are served at once. One more is accepted
 * into a spare slot, and the connection that has waited longest for a
 * request (in its TLS handshake, still sending its headers, or idle
 * between requests) is closed to make room, or the newcomer if all the
 * others are being answered: clients that send nothing, or trickle, hold
 * the slots only until the next client comes. The deadline counts from
 * the TCP connection, so under TLS the handshake is within it; whatever
 * webauth keeps for a connection is released when the library closes it,
 * however it ended. Each connection has at most
 * HTTP_HEADER_MAX bytes of request line and headers (more: 414 or 431)
 * and at most one rendered page; a query string is ignored (on_uri()).
 *
 *	GET or HEAD /metrics	200, the metrics
 *	GET or HEAD /		200, a page that links to /metrics
 *	another path		404
 *	another method		405, Allow: GET, HEAD
 *	a GET with a body	413 (nothing here takes one)
 *
 * The endpoint serves what a snapshot has but the busiest processes: no
 * process ids or names, no subscriptions, nothing that changes magnetd
 * (SECURITY.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "exposition.h"
#include "magnetd.h"
#include "webauth.h"

#define HTTP_HEADER_MAX	16384	/* the request line and headers */

/*
 * A connection, from the library's STARTED notice to its CLOSED one (its
 * socket context): when its current request began (the connection's
 * opening, or the end of its previous answer), for the deadline, and what
 * webauth keeps for it (its TLS session's configuration), released at
 * CLOSED however the connection ends.
 */
struct slot {
	struct MHD_Connection *c;	/* NULL: free */
	ev_tstamp since;
	bool closing;			/* shut down; the library closes it */
	void *auth;			/* webauth_opened()'s */
};

struct http {
	struct daemon *d;
	bool started;		/* the library's complaints are not logged */
	struct MHD_Daemon *mhd;
	struct webauth *auth;	/* TLS, basic authentication */
	bool per_cpu;
	unsigned int buckets;	/* per doubling, in the histograms */
	ev_io io;		/* the library's epoll set */
	ev_timer timer;		/* its next timeout */
	unsigned int max_clients;
	ev_tstamp deadline;	/* request-timeout */
	struct slot *slots;	/* max_clients + 1: the spare one */
	ev_timer expiry;	/* the earliest deadline */
	uint64_t scrapes, refused;
};

/*
 * What the library says while it starts (why it cannot listen, say). Its
 * later complaints are about clients' requests, which it answers (400,
 * 431, 505 ...): not logged, or anyone who can reach the port could fill
 * the journal.
 */
static void http_logger(void *cls, const char *fmt, va_list ap)
{
	struct http *h = cls;
	char msg[512];
	size_t n;

	if (h->started)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_warn("http: %s", msg);
}

static enum MHD_Result answer(struct http *h, struct MHD_Connection *c,
			      unsigned int status, const char *type,
			      char *body, size_t len, bool must_free)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body,
					    must_free ? MHD_RESPMEM_MUST_FREE :
							MHD_RESPMEM_PERSISTENT);
	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	webauth_decorate(h->auth, r, status);
	if (status >= 400)
		h->refused++;
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result refuse(struct http *h, struct MHD_Connection *c,
			      unsigned int status, const char *text)
{
	return answer(h, c, status, "text/plain; charset=utf-8", (char *)text,
		      strlen(text), false);
}

static enum MHD_Result metrics_page(struct http *h, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							  MHD_HTTP_HEADER_ACCEPT);
	enum exposition_format fmt = exposition_negotiate(accept);
	struct exposition_input in = {
		.metrics = h->d->metrics,
		.cfg = h->d->cfg,
		.server = h->d->server,
		.per_cpu = h->per_cpu,
		.buckets = h->buckets,
		.scrapes = h->scrapes + 1,
		.refused = h->refused,
		.otlp = export_stats(h->d),
		.samplers = h->d->samplers,
	};
	struct account ledger;
	struct acct_watches acct = { 0 };
	size_t len;
	char *page;

	readers_flush(h->d);
	if (!account_read(h->d, &ledger))
		in.ledger = &ledger;
	else if (errno != ENODATA)
		log_warn("the ledger could not be read for a scrape: %s",
			 strerror(errno));
	if (!acct_read(h->d, &acct))
		in.acct = &acct;
	page = exposition_render(&in, fmt, &len);
	if (in.ledger)
		account_release(&ledger);
	acct_watches_free(&acct);
	if (!page)
		return refuse(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR,
			      "magnetd: out of memory\n");
	h->scrapes++;
	return answer(h, c, MHD_HTTP_OK, exposition_content_type(fmt), page,
		      len, true);
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>magnetd</title></head><body>\n"
	"<h1>magnetd</h1>\n<p><a href=\"/metrics\">Metrics</a></p>\n"
	"</body></html>\n";

/*
 * libmicrohttpd calls this once a request's headers are in (*state NULL),
 * then per piece of its body, then once more (*size 0): the answer goes
 * then, and a body is refused.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *size, void **state)
{
	static int seen, had_body;
	struct http *h = cls;
	const union MHD_ConnectionInfo *i;
	struct slot *s;
	const char *why;
	int status;

	(void)version;
	(void)upload;
	if (!*state) {
		*state = &seen;
		return MHD_YES;
	}
	if (*size) {
		*size = 0;
		*state = &had_body;
		return MHD_YES;
	}
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	s = i ? i->socket_context : NULL;
	status = webauth_check(h->auth, c, s ? s->auth : NULL, &why);
	if (status)
		return status < 0 ? MHD_NO : refuse(h, c, status, why);
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return refuse(h, c, MHD_HTTP_METHOD_NOT_ALLOWED,
			      "magnetd: only GET and HEAD\n");
	if (*state == &had_body)
		return refuse(h, c, MHD_HTTP_CONTENT_TOO_LARGE,
			      "magnetd: requests here take no body\n");
	if (!strcmp(url, "/metrics"))
		return metrics_page(h, c);
	if (!strcmp(url, "/"))
		return answer(h, c, MHD_HTTP_OK, "text/html; charset=utf-8",
			      (char *)index_page, sizeof(index_page) - 1,
			      false);
	return refuse(h, c, MHD_HTTP_NOT_FOUND,
		      "magnetd: no such page; the metrics are at /metrics\n");
}

static unsigned int connections(const struct http *h)
{
	const union MHD_DaemonInfo *i;

	i = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return i ? i->num_connections : 0;
}

/*
 * Run the library, then wake for its next timeout. At max-clients it
 * takes its listening socket out of its epoll set, and puts it back only
 * as a run starts: a run that closed connections is followed by another,
 * or no new connection would ever be accepted again.
 */
static void turn(struct http *h)
{
	MHD_UNSIGNED_LONG_LONG ms;
	unsigned int before = connections(h);

	MHD_run(h->mhd);
	if (connections(h) < before)
		MHD_run(h->mhd);
	/* the library has freed the closed connections' TLS sessions */
	webauth_idle(h->auth);
	ev_timer_stop(h->d->loop, &h->timer);
	if (MHD_get_timeout(h->mhd, &ms) == MHD_YES) {
		ev_timer_set(&h->timer, ms / 1000.0, 0.);
		ev_timer_start(h->d->loop, &h->timer);
	}
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	turn(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	turn(w->data);
}

/* --- the deadline, and room for a newcomer ------------------------------- */

/*
 * Close connection @c: shutdown() makes its socket report an end, and
 * the library closes it at its next run (there is no call to close one
 * that has not sent its headers).
 */
static void shut(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i;

	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (i)
		shutdown(i->connect_fd, SHUT_RDWR);
}

static void slot_close(struct slot *s)
{
	if (s->closing)
		return;
	s->closing = true;
	shut(s->c);
}

/*
 * Whether @s waits for a request: its headers are not all in (or, under
 * TLS, its handshake is not done: the library is reading nothing yet).
 */
static bool slot_waiting(const struct slot *s)
{
	return !MHD_get_connection_info(s->c,
					MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
}

/*
 * @newcomer came while max-clients others were open (the library's limit
 * is one more): the one that has waited longest for a request makes room,
 * or, if all are being answered, the newcomer goes.
 */
static void make_room(struct http *h, struct slot *newcomer)
{
	struct slot *s, *victim = newcomer;

	for (s = h->slots; s <= h->slots + h->max_clients; s++)
		if (s != newcomer && s->c && !s->closing && slot_waiting(s) &&
		    (victim == newcomer || s->since < victim->since))
			victim = s;
	slot_close(victim);
}

static void on_connection(void *cls, struct MHD_Connection *c,
			  void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http *h = cls;
	struct slot *s, *free_slot = NULL;
	unsigned int open = 0;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		s = *socket_context;
		if (s) {
			webauth_closed(h->auth, &s->auth);
			s->c = NULL;
		}
		*socket_context = NULL;
		return;
	}
	for (s = h->slots; s <= h->slots + h->max_clients; s++)
		if (!s->c)
			free_slot = free_slot ? free_slot : s;
		else if (!s->closing)
			open++;
	/*
	 * The library's limit is the number of slots: one is free. (If not,
	 * nothing would bound the connection: it goes.)
	 */
	s = free_slot;
	if (!s) {
		shut(c);
		return;
	}
	*s = (struct slot){ .c = c, .since = ev_now(h->d->loop) };
	*socket_context = s;
	/* its TLS session gets the web configuration in force */
	webauth_opened(h->auth, c, &s->auth);
	if (open >= h->max_clients)
		make_room(h, s);
	if (!ev_is_active(&h->expiry)) {
		ev_timer_set(&h->expiry, h->deadline, 0.);
		ev_timer_start(h->d->loop, &h->expiry);
	}
}

/* An answer went out whole: the next request's time starts now. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state,
			 enum MHD_RequestTerminationCode toe)
{
	const union MHD_ConnectionInfo *i;
	struct http *h = cls;
	struct slot *s;

	(void)state;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	s = i ? i->socket_context : NULL;
	if (s && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
		s->since = ev_now(h->d->loop);
}

/* Close the connections past the deadline; wake for the next one. */
static void on_expiry(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct http *h = w->data;
	ev_tstamp now = ev_now(loop), next = 0;
	bool closed = false;
	struct slot *s;

	(void)revents;
	for (s = h->slots; s <= h->slots + h->max_clients; s++) {
		if (!s->c || s->closing)
			continue;
		if (s->since + h->deadline <= now + 1e-3) {
			slot_close(s);
			closed = true;
		} else if (!next || s->since + h->deadline < next) {
			next = s->since + h->deadline;
		}
	}
	if (next) {
		ev_timer_set(w, next - now, 0.);
		ev_timer_start(loop, w);
	}
	if (closed)
		turn(h);
}

/*
 * The request line is in: its query string is cut off before the library
 * splits it into arguments. No page here takes any, and libmicrohttpd
 * 0.9.75 (Debian 12's) cannot refuse too many: each takes 56 bytes of the
 * connection's HTTP_HEADER_MAX, and when they do not fit, the 431 it
 * queues is lost and the connection hangs until a timeout closes it
 * unanswered (/metrics?a=1& 236 times, 953 bytes, did). The library
 * passes the line as it holds it, NUL-terminated, and splits it at the
 * first '?' only after this call: a NUL after that '?' leaves it nothing
 * to split. (Later versions, which refuse cleanly, find nothing either.)
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	char *query = uri ? strchr(uri, '?') : NULL;

	(void)cls;
	(void)c;
	if (query)
		query[1] = '\0';
	return NULL;
}

struct http *http_new(struct daemon *d, const struct config_prometheus *cp)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} addr = {};
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	struct http *h;

	if (inet_pton(AF_INET, cp->address, &addr.in.sin_addr) == 1) {
		addr.in.sin_family = AF_INET;
		addr.in.sin_port = htons(cp->port);
	} else if (inet_pton(AF_INET6, cp->address, &addr.in6.sin6_addr) == 1) {
		addr.in6.sin6_family = AF_INET6;
		addr.in6.sin6_port = htons(cp->port);
		flags |= MHD_USE_IPv6;
	} else {
		log_error("prometheus: address %s is not numeric", cp->address);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		log_error("out of memory");
		return NULL;
	}
	h->d = d;
	h->per_cpu = cp->per_cpu;
	h->buckets = cp->buckets;
	h->max_clients = cp->max_clients;
	h->deadline = cp->request_timeout_s;
	ev_init(&h->expiry, on_expiry);
	h->expiry.data = h;
	h->slots = calloc(h->max_clients + 1, sizeof(*h->slots));
	if (!h->slots) {
		log_error("out of memory");
		http_free(h);
		return NULL;
	}
	h->auth = webauth_new(d->web);
	if (!h->auth) {
		http_free(h);
		return NULL;
	}
	flags |= webauth_mhd_flags(h->auth);
	h->mhd = MHD_start_daemon(flags, cp->port, NULL, NULL, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, http_logger, h,
		MHD_OPTION_SOCK_ADDR, &addr.sa,
		MHD_OPTION_CONNECTION_LIMIT, h->max_clients + 1,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cp->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_HEADER_MAX,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
		MHD_OPTION_ARRAY, webauth_mhd_options(h->auth),
		MHD_OPTION_END);
	info = h->mhd ? MHD_get_daemon_info(h->mhd,
					    MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!info) {
		log_error("prometheus: cannot serve HTTP on %s%s%s port %u: %s",
			  flags & MHD_USE_IPv6 ? "[" : "", cp->address,
			  flags & MHD_USE_IPv6 ? "]" : "", cp->port,
			  strerror(errno ? errno : EINVAL));
		http_free(h);
		return NULL;
	}
	h->started = true;
	ev_io_init(&h->io, on_io, info->epoll_fd, EV_READ);
	h->io.data = h;
	ev_io_start(d->loop, &h->io);
	ev_init(&h->timer, on_timer);
	h->timer.data = h;
	log_info("prometheus: serving %s://%s%s%s:%u/metrics",
		 webauth_tls(h->auth) ? "https" : "http",
		 flags & MHD_USE_IPv6 ? "[" : "", cp->address,
		 flags & MHD_USE_IPv6 ? "]" : "", cp->port);
	return h;
}

void http_free(struct http *h)
{
	if (!h)
		return;
	if (h->mhd) {
		ev_io_stop(h->d->loop, &h->io);
		ev_timer_stop(h->d->loop, &h->timer);
		MHD_stop_daemon(h->mhd);
	}
	ev_timer_stop(h->d->loop, &h->expiry);
	/* after MHD_stop_daemon(): its connections' slots are free */
	webauth_free(h->auth);
	free(h->slots);
	free(h);
}

int http_web_update(struct http *h, struct webconfig *wc)
{
	return webauth_update(h->auth, wc);
}

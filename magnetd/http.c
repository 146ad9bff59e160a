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
 * as the client takes them, and a slow or silent client is closed after
 * `timeout` seconds, whatever it sends. At most `max-clients`
 * connections are open at once (more are closed at accept), each with at
 * most HTTP_HEADER_MAX bytes of request (more: 431), and at most one
 * rendered page each.
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

#include <microhttpd.h>

#include "exposition.h"
#include "magnetd.h"
#include "webauth.h"

#define HTTP_HEADER_MAX	16384	/* the request line and headers */

struct http {
	struct daemon *d;
	bool started;		/* the library's complaints are not logged */
	struct MHD_Daemon *mhd;
	struct webauth *auth;	/* TLS, basic authentication */
	bool per_cpu;
	ev_io io;		/* the library's epoll set */
	ev_timer timer;		/* its next timeout */
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
		.scrapes = h->scrapes + 1,
		.refused = h->refused,
	};
	size_t len;
	char *page;

	readers_flush(h->d);
	page = exposition_render(&in, fmt, &len);
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
	status = webauth_check(h->auth, c, &why);
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
	h->auth = webauth_new(d->web);
	if (!h->auth) {
		http_free(h);
		return NULL;
	}
	flags |= webauth_mhd_flags(h->auth);
	h->mhd = MHD_start_daemon(flags, cp->port, NULL, NULL, on_request, h,
		MHD_OPTION_EXTERNAL_LOGGER, http_logger, h,
		MHD_OPTION_SOCK_ADDR, &addr.sa,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)cp->max_clients,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)cp->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_HEADER_MAX,
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
	webauth_free(h->auth);
	free(h);
}

int http_web_update(struct http *h, struct webconfig *wc)
{
	return webauth_update(h->auth, wc);
}

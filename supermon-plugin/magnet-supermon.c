// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-supermon: magnet's metrics as a Supermon data source.
 *
 * It answers Supermon's clients (a concentrator, or anything speaking the
 * protocol) the way a node's mon does, on TCP port 2709 by default:
 *
 *	"S"		one sample of the categories in the client's mask
 *	"#"		the schema: every category with its fields
 *	"MASKS"		MASK hexadecimal ("0x5S", "5S"): set the client's mask
 *			(bit i = the schema's i-th category) and answer a sample
 *
 * one request per line ("\n" or "\r\n", at most REQUEST_MAX bytes), each
 * answered with one s-expression and an empty line; anything else gets
 * (error "..."). view.h says what the categories are; the README shows
 * the texts.
 *
 * Values come from magnetd's snapshots, taken by a thread of our own every
 * -r seconds, so a client never waits on magnetd (nor magnetd on a
 * client). When magnetd cannot be reached, the categories keep their
 * last shape and values and magnetd's health reads 0.
 *
 * Every client is bounded: its request line (REQUEST_MAX), its unread
 * replies (REPLY_QUEUE_MAX: beyond that, its requests are not read until
 * it reads), its time (a partial request or an unread reply for -t
 * seconds, or -t x 10 seconds of idleness, and it is closed), and their
 * number (-c). One event loop serves all; nothing blocks it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"
#include "view.h"

#define PROG		"magnet-supermon"
#define DEFAULT_PORT	"2709"
#define REQUEST_MAX	256
#define REPLY_QUEUE_MAX	(256 * 1024)
#define SNAP_TIMEOUT_MS	5000

struct client {
	int fd;
	ev_io rio, wio;
	char in[REQUEST_MAX];		/* the request being read */
	size_t inlen;
	char raw[4096];			/* received, not yet looked at */
	size_t rawlen, rawoff;
	char *out;
	size_t outlen, outoff, outcap;
	bool closing;			/* close once the output is sent */
	struct mask mask;
	ev_tstamp progress;		/* last request read or bytes sent */
	struct client *next;
};

static struct {
	const char *listen_addr, *port, *socket, *outdir;
	char node[64];
	uint32_t addr;			/* network byte order */
	unsigned int refresh, max_clients, timeout;

	struct ev_loop *loop;
	ev_io accept_io;
	ev_timer sweep;
	ev_signal sigterm, sigint;
	int listen_fd;
	struct client *clients;
	unsigned int nclients;

	/* Shared with libmagnet's poller thread. */
	pthread_mutex_t lock;
	struct view view;
} s = {
	.port = DEFAULT_PORT,
	.socket = MAGNET_SOCKET_PATH,
	.refresh = 5,
	.max_clients = 64,
	.timeout = 30,
	.listen_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static void log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* --- magnetd's snapshots, and the files for mon ------------------------------- */

/* Replace DIR/NAME with @len bytes of @text, atomically. */
static void write_file(const char *name, const char *text, size_t len)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", s.outdir, name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", s.outdir, name);
	f = fopen(tmp, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) ||
	    rename(tmp, path)) {
		log_msg("cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
}

static void write_files(void)
{
	char *schema, *sample;
	size_t slen, len;

	pthread_mutex_lock(&s.lock);
	schema = view_schema(&s.view, &slen);
	sample = view_file_sample(&s.view, &len);
	pthread_mutex_unlock(&s.lock);
	if (schema && sample) {
		/* The kernel module's "#" is one line. */
		if (slen >= 2 && schema[slen - 2] == '\n')
			slen--;
		write_file("#", schema, slen);
		write_file("S", sample, len);
	}
	free(schema);
	free(sample);
}

/* A snapshot into the view. */
static void take_snapshot(const struct magnet_snapshot *snap)
{
	struct view v;

	if (view_build(&v, snap) == 0) {
		pthread_mutex_lock(&s.lock);
		view_free(&s.view);
		s.view = v;
		pthread_mutex_unlock(&s.lock);
	}
}

static void log_down(int err)
{
	struct passwd *pw = getpwuid(geteuid());

	if (err == EACCES)
		log_msg("magnetd at %s cannot be reached (%s): its socket's mode and group (magnetd.conf) do not admit user %s; health reads 0 until it is back",
			s.socket, strerror(err), pw ? pw->pw_name : "?");
	else
		log_msg("magnetd at %s cannot be reached (%s); health reads 0 until it is back",
			s.socket, strerror(err));
}

/* Each refresh, on libmagnet's poller thread. */
static void on_poll(const struct magnet_snapshot *snap, int err, void *data)
{
	static bool down_logged;

	(void)data;
	if (snap) {
		take_snapshot(snap);
		if (down_logged)
			log_msg("magnetd at %s is back", s.socket);
		down_logged = false;
	} else {
		pthread_mutex_lock(&s.lock);
		view_unhealthy(&s.view);
		pthread_mutex_unlock(&s.lock);
		if (!down_logged)
			log_down(err);
		down_logged = true;
	}
	if (s.outdir)
		write_files();
}

/* --- clients ------------------------------------------------------------------- */

static void client_close(struct client *cl)
{
	struct client **p;

	for (p = &s.clients; *p; p = &(*p)->next) {
		if (*p == cl) {
			*p = cl->next;
			break;
		}
	}
	ev_io_stop(s.loop, &cl->rio);
	ev_io_stop(s.loop, &cl->wio);
	close(cl->fd);
	free(cl->out);
	free(cl);
	s.nclients--;
}

static bool queue(struct client *cl, const char *text, size_t len)
{
	if (cl->outlen + len > cl->outcap) {
		size_t cap = cl->outcap ? cl->outcap : 4096;
		char *out;

		/* Move what is left to the front first. */
		if (cl->outoff) {
			memmove(cl->out, cl->out + cl->outoff,
				cl->outlen - cl->outoff);
			cl->outlen -= cl->outoff;
			cl->outoff = 0;
		}
		while (cap < cl->outlen + len)
			cap *= 2;
		if (cap != cl->outcap) {
			out = realloc(cl->out, cap);
			if (!out)
				return false;
			cl->out = out;
			cl->outcap = cap;
		}
	}
	memcpy(cl->out + cl->outlen, text, len);
	cl->outlen += len;
	ev_io_start(s.loop, &cl->wio);
	return true;
}

static void reply_error(struct client *cl, const char *msg)
{
	char text[160];
	int n = snprintf(text, sizeof(text), "(error \"%s\")\n\n", msg);

	queue(cl, text, n);
}

/* Answer one request line (without its newline). */
static void answer(struct client *cl, char *line, size_t len)
{
	char *text;
	size_t n;

	if (len && line[len - 1] == '\r')
		line[--len] = 0;
	if (len == 1 && line[0] == '#') {
		pthread_mutex_lock(&s.lock);
		text = view_schema(&s.view, &n);
		pthread_mutex_unlock(&s.lock);
	} else if (len >= 1 && line[len - 1] == 'S') {
		if (len > 1 && !mask_parse(&cl->mask, line, len - 1)) {
			reply_error(cl, "bad mask: want hexadecimal digits, then S");
			return;
		}
		pthread_mutex_lock(&s.lock);
		text = view_sample(&s.view, s.node, s.addr, &cl->mask, &n);
		pthread_mutex_unlock(&s.lock);
	} else {
		reply_error(cl, len ? "unknown request: want S, #, or a hexadecimal mask then S"
				    : "empty request");
		return;
	}
	if (!text || !queue(cl, text, n)) {
		log_msg("out of memory answering a client: closed");
		cl->closing = true;
	}
	free(text);
}

static void process(struct client *cl);

static void update_reading(struct client *cl)
{
	/*
	 * Backpressure: no more requests read while too much is unread, or
	 * while received requests wait for their turn.
	 */
	if (cl->closing || cl->outlen - cl->outoff > REPLY_QUEUE_MAX ||
	    cl->rawoff < cl->rawlen)
		ev_io_stop(s.loop, &cl->rio);
	else
		ev_io_start(s.loop, &cl->rio);
}

static void on_write(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *cl = w->data;
	ssize_t n;

	(void)loop;
	(void)revents;
	while (cl->outoff < cl->outlen) {
		n = send(cl->fd, cl->out + cl->outoff, cl->outlen - cl->outoff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			client_close(cl);
			return;
		}
		cl->outoff += n;
		cl->progress = ev_now(s.loop);
	}
	if (cl->outoff == cl->outlen) {
		cl->outoff = cl->outlen = 0;
		ev_io_stop(s.loop, &cl->wio);
		if (cl->closing) {
			client_close(cl);
			return;
		}
	}
	process(cl);
	update_reading(cl);
}

/* Answer the complete requests received, while the replies fit. */
static void process(struct client *cl)
{
	while (cl->rawoff < cl->rawlen && !cl->closing &&
	       cl->outlen - cl->outoff <= REPLY_QUEUE_MAX) {
		char ch = cl->raw[cl->rawoff++];

		if (ch != '\n') {
			if (cl->inlen == sizeof(cl->in) - 1) {
				reply_error(cl, "request too long");
				cl->closing = true;
				break;
			}
			cl->in[cl->inlen++] = ch;
			continue;
		}
		cl->in[cl->inlen] = 0;
		answer(cl, cl->in, cl->inlen);
		cl->inlen = 0;
		cl->progress = ev_now(s.loop);
	}
	if (cl->rawoff == cl->rawlen)
		cl->rawoff = cl->rawlen = 0;
}

static void on_read(struct ev_loop *loop, ev_io *w, int revents)
{
	struct client *cl = w->data;
	ssize_t n;

	(void)loop;
	(void)revents;
	n = recv(cl->fd, cl->raw, sizeof(cl->raw), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(cl);
		return;
	}
	cl->rawoff = 0;
	cl->rawlen = n;
	process(cl);
	update_reading(cl);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	static const char full[] = "(error \"too many clients\")\n\n";
	struct client *cl;
	int fd;

	(void)loop;
	(void)revents;
	fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (s.nclients >= s.max_clients) {
		send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return;
	}
	cl = calloc(1, sizeof(*cl));
	if (!cl) {
		close(fd);
		return;
	}
	cl->fd = fd;
	cl->mask.all = true;
	cl->progress = ev_now(s.loop);
	ev_io_init(&cl->rio, on_read, fd, EV_READ);
	ev_io_init(&cl->wio, on_write, fd, EV_WRITE);
	cl->rio.data = cl->wio.data = cl;
	ev_io_start(s.loop, &cl->rio);
	cl->next = s.clients;
	s.clients = cl;
	s.nclients++;
}

/* Close clients that hold a partial request or an unread reply too long,
 * or that stay idle ten times as long.
 */
static void on_sweep(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *cl, *next;
	ev_tstamp now = ev_now(loop);

	(void)w;
	(void)revents;
	for (cl = s.clients; cl; cl = next) {
		bool pending = cl->inlen || cl->outlen > cl->outoff;
		ev_tstamp limit = pending ? s.timeout : 10.0 * s.timeout;

		next = cl->next;
		if (now - cl->progress > limit)
			client_close(cl);
	}
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* --- start ----------------------------------------------------------------------- */

static int listen_on(void)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV,
	}, *res, *ai;
	const char *addr = s.listen_addr ? s.listen_addr : "::";
	int fd = -1, one = 1, zero = 0, err;

	err = getaddrinfo(addr, s.port, &hints, &res);
	if (err && !s.listen_addr) {
		addr = "0.0.0.0";	/* no IPv6 here */
		err = getaddrinfo(addr, s.port, &hints, &res);
	}
	if (err) {
		log_msg("cannot listen on %s port %s: %s", addr, s.port,
			gai_strerror(err));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			    SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !s.listen_addr)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 64))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	if (fd < 0)
		log_msg("cannot listen on %s port %s: %s", addr, s.port,
			strerror(errno));
	else
		log_msg("serving %s port %s", addr, s.port);
	freeaddrinfo(res);
	return fd;
}

/* The node's name and IPv4 address, unless given. */
static void identify(bool have_addr)
{
	struct addrinfo hints = { .ai_family = AF_INET }, *res;

	if (!s.node[0] && gethostname(s.node, sizeof(s.node) - 1))
		snprintf(s.node, sizeof(s.node), "localhost");
	if (have_addr)
		return;
	if (getaddrinfo(s.node, NULL, &hints, &res) == 0) {
		s.addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
		freeaddrinfo(res);
	}
}

static void usage(FILE *f)
{
	fputs(
"Usage: " PROG " [OPTIONS]\n"
"\n"
"Serve magnet's metrics (from magnetd) as a Supermon data source: answer\n"
"Supermon clients and concentrators on TCP the way a node's mon does, in\n"
"Supermon's s-expression format. Requests, one per line:\n"
"  S         one sample: the categories in the client's mask (all at first)\n"
"  #         the schema: every category with its fields\n"
"  MASKS     MASK in hexadecimal (0x5S, 5S): keep MASK as the client's mask\n"
"            (bit i: the schema's i-th category) and answer a sample\n"
"Each answer is one s-expression and an empty line. Categories: time,\n"
"magnetd (health and magnetd's own figures), then one per magnetd event\n"
"(count rate bytes byte_rate) and per latency (count min mean p50 p90 p99\n"
"max pending expired overflow). Values are unsigned integers.\n"
"\n"
"Options:\n"
"  -l, --listen ADDRESS   address to listen on (default: every address,\n"
"                         IPv6 and IPv4); 127.0.0.1 for this host only\n"
"  -p, --port PORT        TCP port (default 2709)\n"
"  -s, --socket PATH      magnetd's socket (default " MAGNET_SOCKET_PATH ")\n"
"  -r, --refresh SECONDS  seconds between snapshots from magnetd (default 5)\n"
"  -n, --node NAME        the node's name in samples (default: host name)\n"
"  -a, --address IPV4     the node's address in samples (default: the host\n"
"                         name's IPv4 address)\n"
"  -o, --files DIRECTORY  also write the files # and S there after every\n"
"                         snapshot, in the Supermon kernel module's format,\n"
"                         for an existing mon\n"
"  -c, --clients N        most clients at once (default 64)\n"
"  -t, --timeout SECONDS  close a client that holds a partial request or an\n"
"                         unread answer this long, or is idle ten times as\n"
"                         long (default 30)\n"
"  -h, --help             show this help\n"
"  -V, --version          show the version\n"
"\n"
"While magnetd cannot be reached, the categories keep their last values and\n"
"magnetd's health reads 0. SIGTERM or SIGINT stops it.\n", f);
}

static bool number(const char *arg, unsigned long min, unsigned long max,
		   unsigned int *out, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
		log_msg("%s \"%s\": want a whole number from %lu to %lu", what,
			arg, min, max);
		return false;
	}
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "socket", required_argument, NULL, 's' },
		{ "refresh", required_argument, NULL, 'r' },
		{ "node", required_argument, NULL, 'n' },
		{ "address", required_argument, NULL, 'a' },
		{ "files", required_argument, NULL, 'o' },
		{ "clients", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct magnet_poller *poller;
	bool have_addr = false;
	unsigned int port;
	struct stat st;
	int c;

	while ((c = getopt_long(argc, argv, "l:p:s:r:n:a:o:c:t:hV", opts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			s.listen_addr = optarg;
			break;
		case 'p':
			if (!number(optarg, 1, 65535, &port, "port"))
				return 2;
			s.port = optarg;
			break;
		case 's':
			s.socket = optarg;
			break;
		case 'r':
			if (!number(optarg, 1, 3600, &s.refresh, "refresh"))
				return 2;
			break;
		case 'n':
			if (!*optarg || strlen(optarg) >= sizeof(s.node) ||
			    strpbrk(optarg, "() \t\"'")) {
				log_msg("node name \"%s\": want 1 to %zu characters, no spaces, quotes or parentheses",
					optarg, sizeof(s.node) - 1);
				return 2;
			}
			snprintf(s.node, sizeof(s.node), "%s", optarg);
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &s.addr) != 1) {
				log_msg("address \"%s\": want an IPv4 address (a.b.c.d)",
					optarg);
				return 2;
			}
			have_addr = true;
			break;
		case 'o':
			if (stat(optarg, &st) || !S_ISDIR(st.st_mode)) {
				log_msg("files: %s is not a directory", optarg);
				return 2;
			}
			s.outdir = optarg;
			break;
		case 'c':
			if (!number(optarg, 1, 4096, &s.max_clients, "clients"))
				return 2;
			break;
		case 't':
			if (!number(optarg, 1, 3600, &s.timeout, "timeout"))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(PROG " %s\n", MAGNET_VERSION);
			return 0;
		default:
			fputs("Try '" PROG " --help'.\n", stderr);
			return 2;
		}
	}
	if (optind < argc) {
		log_msg("unexpected argument \"%s\"", argv[optind]);
		return 2;
	}
	identify(have_addr);
	signal(SIGPIPE, SIG_IGN);
	if (view_empty(&s.view)) {
		log_msg("out of memory");
		return 1;
	}
	s.listen_fd = listen_on();
	if (s.listen_fd < 0)
		return 1;

	s.loop = EV_DEFAULT;
	ev_io_init(&s.accept_io, on_accept, s.listen_fd, EV_READ);
	ev_io_start(s.loop, &s.accept_io);
	ev_timer_init(&s.sweep, on_sweep, 1.0, 1.0);
	ev_timer_start(s.loop, &s.sweep);
	ev_signal_init(&s.sigterm, on_signal, SIGTERM);
	ev_signal_start(s.loop, &s.sigterm);
	ev_signal_init(&s.sigint, on_signal, SIGINT);
	ev_signal_start(s.loop, &s.sigint);
	poller = magnet_poller_start(s.socket, 0, s.refresh * 1000,
				     SNAP_TIMEOUT_MS, on_poll, NULL);
	if (!poller) {
		log_msg("cannot start the snapshot thread: %s", strerror(errno));
		return 1;
	}
	ev_run(s.loop, 0);

	magnet_poller_stop(poller);
	while (s.clients)
		client_close(s.clients);
	close(s.listen_fd);
	view_free(&s.view);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * magnet-adaptive: an adaptive application, the kind libmagnet is for.
 *
 * It sends a paced stream of UDP datagrams and lets magnetd tell it when
 * the network stack is congested: it subscribes to a threshold on a
 * latency metric ("udp_send.p99 > 200us": the 99th percentile of the time
 * its packets take from the socket to the driver) and adapts its rate the
 * way TCP does, AIMD: it halves the rate when the alert fires, and raises
 * it by a fixed step per second while nothing is wrong, up to the
 * maximum. Without magnetd it still sends, at the configured rate, and
 * keeps trying to reach the daemon.
 *
 * One poll() waits on everything: a timerfd for the next datagram due,
 * magnetd's socket (magnet_fd()) for alerts, a signalfd for SIGINT and
 * SIGTERM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"

#define PROG			"magnet-adaptive"
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC		1000000000LL
#define NSEC_PER_MSEC		1000000LL

#define DEFAULT_RATE		1000		/* pkt/s */
#define DEFAULT_SIZE		64		/* bytes */
#define DEFAULT_METRIC		"udp_send.p99"
#define DEFAULT_THRESHOLD	200000.0	/* ns: 200 us */
#define RATE_LIMIT		10000000	/* pkt/s */
#define SIZE_LIMIT		65507		/* a UDP payload over IPv4 */

/* Seconds between attempts to reach magnetd. */
#define RETRY_S			5
/* Seconds between additive increases while nothing is wrong. */
#define INCREASE_PERIOD_S	1
/*
 * Seconds an alert may stay fired before the rate is halved again:
 * magnetd's default metrics window, the time a percentile takes to show
 * the effect of the last decrease.
 */
#define DECREASE_HOLD_S		10
/* Most datagrams sent in one go, and how far the schedule may lag. */
#define BURST_MAX		256
#define LAG_MAX_NS		(20 * NSEC_PER_MSEC)
/* How long a snapshot of magnetd may take. */
#define SNAPSHOT_TIMEOUT_MS	2000

struct options {
	const char *socket;		/* NULL: MAGNET_SOCKET_PATH */
	const char *addr, *port;
	unsigned int rate, min, max;	/* pkt/s */
	unsigned int size;		/* payload bytes */
	uint64_t count;			/* 0: no limit */
	double seconds;			/* 0: no limit */
	const char *metric;
	const char *op;			/* ">" (--above) or "<" (--below) */
	double threshold;		/* in the metric's unit */
	bool threshold_ns;		/* given as a time: in ns */
	bool quiet;
};

/* The UDP stream. */
struct sender {
	int fd;
	char *payload;
	unsigned int rate;		/* pkt/s now */
	int64_t next_ns;		/* when the next datagram is due */
	uint64_t seq;			/* datagrams sent */
	uint64_t bytes;
	uint64_t failed;		/* sends refused locally or by ICMP */
	bool refused_warned;
};

/* What magnetd tells us, and what we did about it. */
struct feedback {
	struct magnet_client *c;	/* NULL: not connected */
	int sub;
	char unit[16];			/* the metric's, "" if unknown */
	bool congested;			/* the alert is fired */
	bool warned;			/* "magnetd unreachable" said once */
	int64_t retry_ns;		/* next connection attempt */
	int64_t step_ns;		/* next increase or repeated decrease */
	uint64_t alerts, fired, cleared, lost, changes;
};

static const struct options *opt;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void warning(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- options -------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [OPTIONS] ADDR PORT\n"
"\n"
"Send a stream of UDP datagrams to ADDR:PORT (an IPv4 or IPv6 address or a\n"
"host name; a port number or service name) and adapt its rate to the\n"
"congestion magnetd reports. It subscribes to a threshold on one of\n"
"magnetd's metrics, by default udp_send.p99 > 200us: the 99th percentile\n"
"of the time a datagram takes from the socket to the device, as the\n"
"latency \"udp_send\" of magnetd.conf measures it. Then, as TCP does\n"
"(additive increase, multiplicative decrease):\n"
"  - when the alert fires, it halves its rate (not below MIN), and halves\n"
"    it again every %d s while the alert stays fired (the time magnetd's\n"
"    percentiles take to show a change, with its default window);\n"
"  - while the alert is not fired, it raises its rate by MAX/16 pkt/s\n"
"    every second, up to MAX.\n"
"Without magnetd (not running, or refusing the threshold) it warns once,\n"
"sends at RATE and tries again every %d s; if magnetd goes away, it goes\n"
"back to RATE. When magnetd reports notifications lost, it reads the\n"
"metric again to learn whether the alert is fired.\n"
"\n"
"Each datagram starts with its number and a dash (\"00000042-\", counting\n"
"from 0, modulo 10^8) when SIZE is 9 bytes or more; the rest is letters.\n"
"\n"
"Options:\n"
"  -s, --socket PATH     magnetd's socket (default " MAGNET_SOCKET_PATH ")\n"
"  -r, --rate RATE       initial rate in datagrams per second, and the rate\n"
"                        without magnetd (default %d)\n"
"  -m, --min MIN         lowest rate a decrease goes to (default RATE/100,\n"
"                        at least 1)\n"
"  -M, --max MAX         highest rate an increase goes to (default RATE)\n"
"  -l, --length SIZE     payload bytes per datagram, 0 to %d (default %d)\n"
"  -c, --count COUNT     stop after COUNT datagrams sent (default: no limit)\n"
"  -t, --time SECONDS    stop after SECONDS, a decimal number (default: no\n"
"                        limit)\n"
"      --metric NAME     the metric to watch (default " DEFAULT_METRIC "); see\n"
"                        magnetd(8) for the metrics there are\n"
"      --above VALUE     congestion is NAME > VALUE (default 200us)\n"
"      --below VALUE     congestion is NAME < VALUE, for a metric that drops\n"
"                        under congestion (a rate)\n"
"  -q, --quiet           print only warnings and the summary\n"
"  -h, --help            show this help\n"
"VALUE is in the metric's unit, optionally with a suffix: ns, us, ms or s\n"
"make it a time in ns (the unit of magnetd's latencies), k, M and G\n"
"multiply it by 10^3, 10^6, 10^9.\n"
"\n"
"Output, on standard output: what it does, one line per rate change,\n"
"  rate 8000 -> 4000 pkt/s: udp_send.p99 = 412000 ns > 200000\n"
"  rate 4000 -> 4625 pkt/s: udp_send.p99 = 150000 ns, no longer > 200000\n"
"  rate 4625 -> 5250 pkt/s: additive increase, no congestion\n"
"(\"rate stays\" when an alert finds the rate at its bound), a line when it\n"
"connects to magnetd, and at the end (COUNT datagrams sent, SECONDS gone,\n"
"SIGINT or SIGTERM) a summary: datagrams and bytes sent, datagrams not\n"
"sent (the socket's queue full), rate changes, alerts received,\n"
"notifications lost. Warnings go to standard error.\n"
"\n"
"Examples:\n"
"  " PROG " -r 8000 -m 500 192.0.2.7 5001\n"
"  " PROG " -r 2000 -M 20000 --above 1ms -t 60 192.0.2.7 5001\n"
"  " PROG " --metric udp-send.dev-xmit.rate --below 5k 192.0.2.7 5001\n"
"\n"
"Exit status: 0 on success, 1 on an error, 2 on bad usage.\n",
		DECREASE_HOLD_S, RETRY_S, DEFAULT_RATE, SIZE_LIMIT,
		DEFAULT_SIZE);
}

static void bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	exit(2);
}

static unsigned long long number(const char *s, const char *what,
				 unsigned long long min,
				 unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		bad_usage("bad %s \"%s\": expected a number from %llu to %llu",
			  what, s, min, max);
	return v;
}

/*
 * A threshold: a number, optionally with a time suffix (ns, us, ms, s)
 * that makes it nanoseconds, or k, M, G.
 */
static double threshold_of(const char *s, bool *is_time)
{
	static const struct {
		const char *suffix;
		double scale;
		bool time;
	} units[] = {
		{ "", 1, false }, { "ns", 1, true }, { "us", 1e3, true },
		{ "ms", 1e6, true }, { "s", 1e9, true }, { "k", 1e3, false },
		{ "M", 1e6, false }, { "G", 1e9, false },
	};
	size_t i;
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		bad_usage("bad threshold \"%s\"", s);
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].suffix)) {
			*is_time = units[i].time;
			return v * units[i].scale;
		}
	}
	bad_usage("bad threshold \"%s\": suffixes are ns, us, ms, s, k, M, G", s);
	return 0;
}

enum { OPT_METRIC = 256, OPT_ABOVE, OPT_BELOW };

static void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option lopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "min", required_argument, NULL, 'm' },
		{ "max", required_argument, NULL, 'M' },
		{ "length", required_argument, NULL, 'l' },
		{ "count", required_argument, NULL, 'c' },
		{ "time", required_argument, NULL, 't' },
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "above", required_argument, NULL, OPT_ABOVE },
		{ "below", required_argument, NULL, OPT_BELOW },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	long long min = -1, max = -1;
	char *end;
	int c;

	*o = (struct options){
		.rate = DEFAULT_RATE, .size = DEFAULT_SIZE,
		.metric = DEFAULT_METRIC, .op = ">",
		.threshold = DEFAULT_THRESHOLD, .threshold_ns = true,
	};
	while ((c = getopt_long(argc, argv, "s:r:m:M:l:c:t:qh", lopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'r':
			o->rate = number(optarg, "rate", 1, RATE_LIMIT);
			break;
		case 'm':
			min = number(optarg, "minimum rate", 1, RATE_LIMIT);
			break;
		case 'M':
			max = number(optarg, "maximum rate", 1, RATE_LIMIT);
			break;
		case 'l':
			o->size = number(optarg, "length", 0, SIZE_LIMIT);
			break;
		case 'c':
			o->count = number(optarg, "count", 1, UINT64_MAX);
			break;
		case 't':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(o->seconds > 0 && o->seconds < 1e9))
				bad_usage("bad time \"%s\": expected seconds",
					  optarg);
			break;
		case OPT_METRIC:
			o->metric = optarg;
			break;
		case OPT_ABOVE:
		case OPT_BELOW:
			o->op = c == OPT_ABOVE ? ">" : "<";
			o->threshold = threshold_of(optarg, &o->threshold_ns);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			exit(2);
		}
	}
	if (argc - optind != 2)
		bad_usage("expected ADDR and PORT");
	o->addr = argv[optind];
	o->port = argv[optind + 1];
	o->max = max > 0 ? max : o->rate;
	o->min = min > 0 ? min : (o->rate / 100 ? o->rate / 100 : 1);
	if (o->min > o->max || o->rate < o->min || o->rate > o->max)
		bad_usage("rates must be MIN <= RATE <= MAX (%u, %u, %u)",
			  o->min, o->rate, o->max);
}

/* --- the UDP stream --------------------------------------------------------- */

static int open_udp(const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	int fd, err;

	err = getaddrinfo(addr, port, &hints, &ai);
	if (err) {
		warning("%s port %s: %s", addr, port, gai_strerror(err));
		return -1;
	}
	/* non-blocking: a full socket queue must not stall alerts */
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		warning("%s port %s: %s", addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

static int64_t interval_ns(unsigned int rate)
{
	return NSEC_PER_SEC / rate;
}

/* Send one datagram; false on an error that ends the run. */
static bool send_one(struct sender *s)
{
	ssize_t n;

	if (opt->size >= 9) {
		snprintf(s->payload, 9, "%08llu",
			 (unsigned long long)(s->seq % 100000000));
		s->payload[8] = '-';
	}
	n = send(s->fd, s->payload, opt->size, 0);
	/*
	 * ECONNREFUSED reports an ICMP "port unreachable" for an earlier
	 * datagram, and this one was not sent: send it now.
	 */
	if (n < 0 && errno == ECONNREFUSED) {
		if (!s->refused_warned)
			warning("%s port %s refuses datagrams (nobody listening?); going on",
				opt->addr, opt->port);
		s->refused_warned = true;
		n = send(s->fd, s->payload, opt->size, 0);
	}
	if (n >= 0) {
		s->seq++;
		s->bytes += n;
		return true;
	}
	/*
	 * The socket's queue full (or refusals again): this slot is lost,
	 * the stream goes on and keeps its numbers contiguous.
	 */
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ||
	    errno == ECONNREFUSED || errno == EINTR) {
		s->failed++;
		return true;
	}
	warning("send to %s port %s: %s", opt->addr, opt->port, strerror(errno));
	return false;
}

/* Send the datagrams due by @now, at most up to the count. */
static bool send_due(struct sender *s, int64_t now)
{
	unsigned int burst = 0;

	while (s->next_ns <= now && burst++ < BURST_MAX) {
		if (opt->count && s->seq >= opt->count)
			return true;
		if (!send_one(s))
			return false;
		s->next_ns += interval_ns(s->rate);
	}
	/* after a stall, go on at the rate rather than catch up in a burst */
	if (s->next_ns < now - LAG_MAX_NS)
		s->next_ns = now;
	return true;
}

/* --- adapting the rate ------------------------------------------------------- */

/* "udp_send.p99 = 412000 ns" */
static const char *value_text(const struct feedback *fb, double value)
{
	static char buf[192];

	snprintf(buf, sizeof(buf), "%s = %.15g%s%s", opt->metric, value,
		 *fb->unit ? " " : "", fb->unit);
	return buf;
}

static void set_rate(struct sender *s, struct feedback *fb,
		     unsigned int rate, const char *why)
{
	if (rate < opt->min)
		rate = opt->min;
	if (rate > opt->max)
		rate = opt->max;
	if (!opt->quiet) {
		if (rate == s->rate)
			printf("rate stays %u pkt/s: %s\n", rate, why);
		else
			printf("rate %u -> %u pkt/s: %s\n", s->rate, rate, why);
		fflush(stdout);
	}
	if (rate != s->rate) {
		s->rate = rate;
		fb->changes++;
	}
}

static unsigned int increase_step(void)
{
	return opt->max / 16 ? opt->max / 16 : 1;
}

/* The alert fired (@value: the metric's): halve. */
static void congestion(struct sender *s, struct feedback *fb, double value)
{
	char why[256];

	snprintf(why, sizeof(why), "%s %s %.15g", value_text(fb, value),
		 opt->op, opt->threshold);
	fb->congested = true;
	fb->step_ns = now_ns() + DECREASE_HOLD_S * NSEC_PER_SEC;
	set_rate(s, fb, s->rate / 2, why);
}

/* The alert cleared: start raising the rate again. */
static void relief(struct sender *s, struct feedback *fb, double value)
{
	char why[256];

	snprintf(why, sizeof(why), "%s, no longer %s %.15g",
		 value_text(fb, value), opt->op, opt->threshold);
	fb->congested = false;
	fb->step_ns = now_ns() + INCREASE_PERIOD_S * NSEC_PER_SEC;
	set_rate(s, fb, s->rate + increase_step(), why);
}

/* Time for the next step: halve again, or raise. */
static void adapt(struct sender *s, struct feedback *fb, int64_t now)
{
	char why[256];

	if (fb->congested) {
		fb->step_ns = now + DECREASE_HOLD_S * NSEC_PER_SEC;
		if (s->rate > opt->min) {
			snprintf(why, sizeof(why), "%s still %s %.15g after %d s",
				 opt->metric, opt->op, opt->threshold,
				 DECREASE_HOLD_S);
			set_rate(s, fb, s->rate / 2, why);
		}
		return;
	}
	fb->step_ns = now + INCREASE_PERIOD_S * NSEC_PER_SEC;
	if (s->rate < opt->max)
		set_rate(s, fb, s->rate + increase_step(),
			 "additive increase, no congestion");
}

static bool condition(double value)
{
	return *opt->op == '>' ? value > opt->threshold :
				 value < opt->threshold;
}

/*
 * Notifications were lost, maybe our alert's: read the metric and act on
 * what it says now.
 */
static void resync(struct sender *s, struct feedback *fb)
{
	const struct magnet_metric *m;
	struct magnet_snapshot snap;
	bool now_congested;

	if (magnet_snapshot(fb->c, &snap, SNAPSHOT_TIMEOUT_MS))
		return;
	m = magnet_snapshot_find(&snap, opt->metric);
	now_congested = m && condition(m->value);
	if (now_congested && !fb->congested)
		congestion(s, fb, m->value);
	else if (!now_congested && fb->congested)
		relief(s, fb, m ? m->value : 0);
	magnet_snapshot_free(&snap);
}

/* --- magnetd --------------------------------------------------------------- */

static void disconnect(struct sender *s, struct feedback *fb, const char *why)
{
	warning("%s; sending at %u pkt/s, retrying every %d s", why,
		opt->rate, RETRY_S);
	magnet_close(fb->c);
	fb->c = NULL;
	fb->congested = false;
	fb->warned = true;
	fb->retry_ns = now_ns() + RETRY_S * NSEC_PER_SEC;
	if (s->rate != opt->rate)
		set_rate(s, fb, opt->rate,
			 "magnetd went away, back to the configured rate");
}

/* The metric's unit, from a snapshot; a latency's is ns even before it has samples. */
static void learn_unit(struct feedback *fb)
{
	static const char *const latency_stats[] = {
		".min", ".mean", ".p50", ".p90", ".p99", ".max",
	};
	const struct magnet_metric *m;
	struct magnet_snapshot snap;
	size_t i, len = strlen(opt->metric), n;

	fb->unit[0] = '\0';
	if (!magnet_snapshot(fb->c, &snap, SNAPSHOT_TIMEOUT_MS)) {
		m = magnet_snapshot_find(&snap, opt->metric);
		if (m)
			snprintf(fb->unit, sizeof(fb->unit), "%s", m->unit);
		magnet_snapshot_free(&snap);
		if (m)
			return;
	}
	for (i = 0; i < ARRAY_SIZE(latency_stats); i++) {
		n = strlen(latency_stats[i]);
		if (len > n && !strcmp(opt->metric + len - n, latency_stats[i]))
			strcpy(fb->unit, "ns");
	}
}

static void try_connect(struct sender *s, struct feedback *fb)
{
	const char *path = opt->socket ? opt->socket : MAGNET_SOCKET_PATH;

	fb->retry_ns = now_ns() + RETRY_S * NSEC_PER_SEC;
	fb->c = magnet_connect(path);
	if (!fb->c) {
		if (!fb->warned)
			warning("no magnetd at %s (%s); sending at %u pkt/s, retrying every %d s",
				path, strerror(errno), s->rate, RETRY_S);
		fb->warned = true;
		return;
	}
	learn_unit(fb);
	if (opt->threshold_ns && *fb->unit && strcmp(fb->unit, "ns"))
		warning("the threshold is a time (ns) but %s is in %s",
			opt->metric, fb->unit);
	fb->sub = magnet_subscribe_threshold(fb->c, opt->metric, opt->op,
					     opt->threshold);
	if (fb->sub < 0) {
		if (!fb->warned)
			warning("magnetd refused %s %s %.15g: %s; retrying every %d s",
				opt->metric, opt->op, opt->threshold,
				errno == EREMOTEIO ? magnet_last_error(fb->c) :
						     strerror(errno),
				RETRY_S);
		fb->warned = true;
		magnet_close(fb->c);
		fb->c = NULL;
		return;
	}
	fb->warned = false;
	fb->congested = false;
	fb->step_ns = now_ns() + INCREASE_PERIOD_S * NSEC_PER_SEC;
	if (!opt->quiet) {
		printf("magnetd at %s: watching %s %s %.15g%s%s\n", path,
		       opt->metric, opt->op, opt->threshold,
		       *fb->unit ? " " : "", fb->unit);
		fflush(stdout);
	}
}

static void on_message(struct sender *s, struct feedback *fb,
		       const struct magnet_message *m)
{
	switch (m->kind) {
	case MAGNET_MSG_ALERT:
		if (m->sub != (unsigned int)fb->sub)
			break;
		fb->alerts++;
		if (m->alert.fired) {
			fb->fired++;
			congestion(s, fb, m->alert.value);
		} else {
			fb->cleared++;
			relief(s, fb, m->alert.value);
		}
		break;
	case MAGNET_MSG_LOST:
		fb->lost += m->lost.count;
		warning("magnetd lost %llu notifications; reading %s again",
			(unsigned long long)m->lost.count, opt->metric);
		resync(s, fb);
		break;
	case MAGNET_MSG_EVENT:
		break;
	}
}

/*
 * Everything magnetd has for us. The library may hold messages its socket
 * no longer signals (read while it waited for a reply), hence "until
 * none", after every request as after every wake-up.
 */
static void drain(struct sender *s, struct feedback *fb)
{
	struct magnet_message m;
	char why[160];
	int r;

	while (fb->c && (r = magnet_receive(fb->c, &m, 0)) != 0) {
		if (r < 0) {
			snprintf(why, sizeof(why), "lost magnetd: %s",
				 strerror(errno));
			disconnect(s, fb, why);
			return;
		}
		on_message(s, fb, &m);
	}
}

/* --- the loop ------------------------------------------------------------- */

static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Wake the pacing timer when the next datagram is due. */
static void arm_timer(int tfd, int64_t when)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = when / NSEC_PER_SEC,
			      .tv_nsec = when % NSEC_PER_SEC },
	};

	timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Milliseconds poll() may sleep before the next thing that is not a datagram. */
static int poll_ms(const struct feedback *fb, int64_t end_ns, int64_t now)
{
	int64_t next = -1, t;

	if (end_ns)
		next = end_ns;
	t = fb->c ? fb->step_ns : fb->retry_ns;
	if (next < 0 || t < next)
		next = t;
	if (next <= now)
		return 0;
	t = (next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
	return t > 60000 ? 60000 : (int)t;
}

static void summary(const struct sender *s, const struct feedback *fb,
		    int64_t start)
{
	double secs = (now_ns() - start) / 1e9;

	printf("sent %llu datagrams (%llu bytes) in %.3f s, %.0f pkt/s; %llu not sent\n",
	       (unsigned long long)s->seq, (unsigned long long)s->bytes, secs,
	       secs > 0 ? s->seq / secs : 0, (unsigned long long)s->failed);
	printf("%llu rate changes, last rate %u pkt/s; ",
	       (unsigned long long)fb->changes, s->rate);
	printf("%llu alerts received (%llu fired, %llu cleared), %llu notifications lost\n",
	       (unsigned long long)fb->alerts, (unsigned long long)fb->fired,
	       (unsigned long long)fb->cleared, (unsigned long long)fb->lost);
}

static int run(struct sender *s, struct feedback *fb)
{
	struct pollfd pfd[3];
	int64_t start = now_ns(), end_ns = 0, now;
	uint64_t ticks;
	int tfd, sfd, ret = 0;

	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	sfd = signal_fd();
	if (tfd < 0 || sfd < 0) {
		warning("timerfd/signalfd: %s", strerror(errno));
		return 1;
	}
	if (opt->seconds)
		end_ns = start + (int64_t)(opt->seconds * NSEC_PER_SEC);
	s->next_ns = start;
	try_connect(s, fb);
	drain(s, fb);
	for (;;) {
		now = now_ns();
		if ((end_ns && now >= end_ns) ||
		    (opt->count && s->seq >= opt->count))
			break;
		if (!fb->c && now >= fb->retry_ns) {
			try_connect(s, fb);
			drain(s, fb);
		}
		if (fb->c && now >= fb->step_ns)
			adapt(s, fb, now);
		if (!send_due(s, now)) {
			ret = 1;
			break;
		}
		arm_timer(tfd, s->next_ns);

		pfd[0] = (struct pollfd){ .fd = tfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[2] = (struct pollfd){ .fd = fb->c ? magnet_fd(fb->c) : -1,
					  .events = POLLIN };
		if (poll(pfd, 3, poll_ms(fb, end_ns, now)) < 0) {
			if (errno == EINTR)
				continue;
			warning("poll: %s", strerror(errno));
			ret = 1;
			break;
		}
		if (pfd[1].revents)
			break;
		if (pfd[0].revents &&
		    read(tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
			warning("timerfd: %s", strerror(errno));
		if (pfd[2].revents)
			drain(s, fb);
	}
	summary(s, fb, start);
	close(tfd);
	close(sfd);
	return ret;
}

int main(int argc, char **argv)
{
	static struct options o;
	struct feedback fb = { .sub = -1 };
	struct sender s = { .fd = -1 };
	unsigned int i;
	int ret;

	parse_args(argc, argv, &o);
	opt = &o;
	s.rate = o.rate;
	s.payload = malloc(o.size ? o.size : 1);
	if (!s.payload)
		return 1;
	for (i = 0; i < o.size; i++)
		s.payload[i] = 'a' + i % 26;
	s.fd = open_udp(o.addr, o.port);
	if (s.fd < 0)
		return 1;
	if (!o.quiet) {
		printf("sending %u-byte datagrams to %s port %s at %u pkt/s (between %u and %u)\n",
		       o.size, o.addr, o.port, o.rate, o.min, o.max);
		fflush(stdout);
	}
	ret = run(&s, &fb);
	magnet_close(fb.c);
	close(s.fd);
	free(s.payload);
	return ret;
}

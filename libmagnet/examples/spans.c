// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * magnet-spans: an application's spans around its own work, for
 * libmagnet(3)'s span calls.
 *
 *	magnet-spans [-p TRACEPARENT] [-u PORT] [-f FILE] [-n N]
 *
 * One root span "request" (in the trace of -p's traceparent, if given),
 * with N (default 1) child spans "step": each sends a datagram of 100
 * bytes to 127.0.0.1 port PORT (-u), writes 4 KiB to FILE and fsyncs it
 * (-f), and records an event "done" with the step's number. Prints the
 * root span's traceparent, and each step's, one a line.
 *
 * Build: cc spans.c $(pkg-config --cflags --libs libmagnet)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libmagnet.h"

static void die(const char *what)
{
	fprintf(stderr, "magnet-spans: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: magnet-spans [-p TRACEPARENT] [-u PORT] [-f FILE] [-n N]\n", stderr);
	exit(2);
}

static void step(int i, int port, const char *file)
{
	char tp[MAGNET_TRACEPARENT_LEN + 1], num[32];
	const char *attrs[] = { num, NULL };
	static char buf[4096];

	snprintf(num, sizeof(num), "step.number=%d", i);
	if (magnet_span_begin("step", attrs))
		die("magnet_span_begin");
	if (magnet_span_traceparent(tp))
		die("magnet_span_traceparent");
	printf("%s\n", tp);
	if (port) {
		struct sockaddr_in to = {
			.sin_family = AF_INET,
			.sin_port = htons(port),
			.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		};
		int s = socket(AF_INET, SOCK_DGRAM, 0);

		if (s < 0 || sendto(s, buf, 100, 0, (struct sockaddr *)&to,
				    sizeof(to)) != 100)
			die("sendto");
		close(s);
	}
	if (file) {
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || write(fd, buf, sizeof(buf)) != sizeof(buf) ||
		    fsync(fd))
			die(file);
		close(fd);
	}
	if (magnet_span_event("done", attrs))
		die("magnet_span_event");
	if (magnet_span_end(NULL))
		die("magnet_span_end");
}

int main(int argc, char **argv)
{
	const char *parent = NULL, *file = NULL;
	const char *attrs[] = { "request.kind=example", NULL };
	char tp[MAGNET_TRACEPARENT_LEN + 1], *end;
	long port = 0, n = 1;
	int opt;

	while ((opt = getopt(argc, argv, "p:u:f:n:")) != -1) {
		switch (opt) {
		case 'p':
			parent = optarg;
			break;
		case 'u':
			port = strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65535)
				usage();
			break;
		case 'f':
			file = optarg;
			break;
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*end || n < 0 || n > 100000)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (parent && magnet_span_adopt(parent)) {
		fprintf(stderr, "magnet-spans: -p %s: not a W3C traceparent\n", parent);
		return 2;
	}
	if (magnet_span_begin("request", attrs))
		die("magnet_span_begin");
	if (magnet_span_traceparent(tp))
		die("magnet_span_traceparent");
	printf("%s\n", tp);
	for (long i = 0; i < n; i++)
		step(i, port, file);
	if (magnet_span_end(NULL))
		die("magnet_span_end");
	return 0;
}

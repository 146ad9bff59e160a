// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: magnetd's line protocol (magnetd/server.c). The server
 * runs from its own source on a socket in a temporary directory, with
 * metrics of two made-up probes (magnetd/metrics.c) and the rest of the
 * daemon stubbed as in tests/host/server-unit.c. Each input is one
 * client: it connects, sends the input and hangs up; records of both
 * probes and a metrics tick are pushed to whatever it subscribed to on
 * the way; the server answers until it has read everything, then frees
 * the client.
 *
 * Input: one byte of options (bit 0: the client does not read, so that
 * its queue fills), then the bytes the client sends.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "magnetd.h"

#define TURNS_MAX	100000	/* a client never done after this: a hang */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* --- the rest of the daemon ------------------------------------------------ */

void log_error(const char *fmt, ...)
{
	(void)fmt;
}

void log_warn(const char *fmt, ...)
{
	(void)fmt;
}

void log_info(const char *fmt, ...)
{
	(void)fmt;
}

/* --- the server -------------------------------------------------------------- */

static struct daemon d;
static char dir[] = "/tmp/fuzz-request.XXXXXX";
static struct config_socket cs = {
	.mode = 0600, .max_clients = 4, .client_queue = 4096,
};
static const char *const probes[] = { "udp-send.socket", "tcp-recv.app" };

static void cleanup(void)
{
	server_free(d.server);
	metrics_free(d.metrics);
	ev_loop_destroy(d.loop);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct metrics_limits lim = {
		.window_s = 10, .top_tgids = 3, .max_tgids = 16, .max_cpus = 2,
	};

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(cs.path, sizeof(cs.path), "%s/magnetd.sock", dir);
	d.loop = ev_loop_new(EVFLAG_AUTO);
	d.metrics = metrics_new(&lim);
	d.start_ns = now_ns();
	d.attached = true;
	for (unsigned int i = 0; i < 2; i++) {
		if (metrics_event(d.metrics, probes[i]) ||
		    metrics_bind(d.metrics, probes[i], i + 1))
			abort();
		d.event_name[i + 1] = probes[i];
	}
	d.server = server_new(&d, &cs);
	if (!d.loop || !d.metrics || !d.server)
		abort();
	atexit(cleanup);
	return 0;
}

/* Some records of the probes, counted and pushed to subscriptions. */
static void records(unsigned int turn)
{
	struct magnet_record rec = {
		.size = sizeof(rec), .event = 1 + turn % 2, .cpu = turn % 3,
		.tgid = 1000 + turn % 2, .tid = 1000, .id = turn % 4,
		.timestamp = now_ns(),
	};

	metrics_record(d.metrics, &rec);
	server_record(d.server, &rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned int clients, turn;
	uint64_t pushes, dropped;
	bool reads = true, seen = false;
	char buf[65536];
	ssize_t n;
	int fd;

	if (size) {
		reads = !(*data & 1);
		data++;
		size--;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cs.path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		abort();
	/* the whole input fits in the socket's buffer: send it, hang up */
	while (size) {
		n = send(fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n <= 0)
			break;	/* the server closed it already */
		data += n;
		size -= n;
	}
	shutdown(fd, SHUT_WR);
	for (turn = 0; turn < TURNS_MAX; turn++) {
		ev_run(d.loop, EVRUN_NOWAIT);
		if (turn < 4) {
			records(turn);
			if (turn == 2) {
				metrics_tick(d.metrics, now_ns());
				server_tick(d.server);
			}
		}
		while (reads && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
		server_metrics(d.server, &clients, &pushes, &dropped);
		seen |= clients > 0;
		if (seen && !clients)
			break;
	}
	if (turn == TURNS_MAX) {
		fprintf(stderr, "fuzz-request: the server never let go of the client\n");
		abort();
	}
	close(fd);
	return 0;
}

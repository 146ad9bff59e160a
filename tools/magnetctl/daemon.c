// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl daemon ...: talking to magnetd over its Unix socket with
 * libmagnet: snapshots, watching subscriptions, and asking it to release
 * the module (so that the module can be unloaded) or attach again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "libmagnet.h"
#include "print.h"
#include "words.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* "socket PATH" may end any daemon command; it is taken out of @argv. */
static const char *take_socket(int *argc, char **argv)
{
	const char *path = getenv("MAGNETD_SOCKET");

	if (*argc >= 2 && !strcmp(argv[*argc - 2], "socket")) {
		path = argv[*argc - 1];
		*argc -= 2;
	}
	return path && *path ? path : MAGNET_SOCKET_PATH;
}

static struct magnet_client *connect_daemon(const char *path)
{
	struct magnet_client *c = magnet_connect(path);

	if (!c) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			fprintf(stderr, "magnetctl: magnetd is not running (no one listens on %s)\n",
				path);
		else if (errno == EPROTO)
			fprintf(stderr, "magnetctl: %s: not magnetd, or a magnetd of another protocol version\n",
				path);
		else
			fprintf(stderr, "magnetctl: %s: %s\n", path,
				strerror(errno));
	}
	return c;
}

static void client_error(struct magnet_client *c, const char *what)
{
	if (errno == EREMOTEIO)
		fprintf(stderr, "magnetctl: %s: magnetd says: %s\n", what,
			magnet_last_error(c));
	else if (errno == EPIPE)
		fprintf(stderr, "magnetctl: %s: magnetd went away\n", what);
	else if (errno == EMSGSIZE)
		fprintf(stderr, "magnetctl: %s: %s\n", what,
			magnet_last_error(c));
	else
		fprintf(stderr, "magnetctl: %s: %s\n", what, strerror(errno));
}

static int snapshot(struct magnet_client *c)
{
	struct magnet_snapshot snap;
	unsigned int i;
	char value[64];

	if (magnet_snapshot(c, &snap, 10000)) {
		client_error(c, "snapshot");
		return -1;
	}
	print_open_object(NULL);
	print_u64(PRINT_JSON, "time_ns", NULL, snap.time_ns);
	print_open_array("metrics");
	table_begin();
	for (i = 0; i < snap.nmetrics; i++) {
		const struct magnet_metric *m = &snap.metrics[i];

		print_row_begin();
		print_string(PRINT_ANY, "name", NULL, m->name);
		print_string(PRINT_ANY, "type", NULL,
			     m->type == MAGNET_COUNTER ? "counter" : "gauge");
		print_string(PRINT_ANY, "unit", NULL, m->unit);
		format_double(m->value, value);
		print_number(PRINT_ANY, "value", value);
		print_string(PRINT_JSON, "description", NULL, m->description);
		print_row_end();
		table_row_end();
	}
	table_end();
	print_close_array();
	print_open_array("top");
	if (snap.ntops && !print_is_json())
		putchar('\n');
	table_begin();
	for (i = 0; i < snap.ntops; i++) {
		const struct magnet_top *t = &snap.tops[i];

		print_row_begin();
		print_string(PRINT_ANY, "event", NULL, t->event);
		print_u64(PRINT_ANY, "rank", NULL, t->rank);
		print_u64(PRINT_ANY, "tgid", NULL, t->tgid);
		print_u64(PRINT_ANY, "count", NULL, t->count);
		print_string(PRINT_ANY, "comm", NULL, t->comm);
		print_row_end();
		table_row_end();
	}
	table_end();
	print_close_array();
	print_close_object();
	magnet_snapshot_free(&snap);
	return 0;
}

static void print_message(const struct magnet_message *m)
{
	print_open_object(NULL);
	switch (m->kind) {
	case MAGNET_MSG_EVENT:
		print_string(PRINT_ANY, "kind", "%s", "event");
		print_u64(PRINT_ANY, "sub", " %" PRIu64, m->sub);
		print_string(PRINT_ANY, "event", " %s", m->event.name);
		print_u64(PRINT_ANY, "timestamp", " ts %" PRIu64,
			  m->event.timestamp);
		print_u64(PRINT_ANY, "cpu", " cpu %" PRIu64, m->event.cpu);
		print_u64(PRINT_ANY, "tgid", " tgid %" PRIu64, m->event.tgid);
		print_u64(PRINT_ANY, "tid", " tid %" PRIu64, m->event.tid);
		print_u64(PRINT_ANY, "id", " id %" PRIu64, m->event.id);
		print_u64(PRINT_ANY, "size", " size %" PRIu64, m->event.size);
		break;
	case MAGNET_MSG_ALERT: {
		char value[32];

		format_double(m->alert.value, value);
		print_string(PRINT_ANY, "kind", "%s", "alert");
		print_u64(PRINT_ANY, "sub", " %" PRIu64, m->sub);
		print_string(PRINT_ANY, "metric", " %s", m->alert.metric);
		print_string(PRINT_TEXT, NULL, " ", NULL);
		print_number(PRINT_ANY, "value", value);
		print_string(PRINT_ANY, "state", " %s",
			     m->alert.fired ? "fired" : "cleared");
		break;
	}
	case MAGNET_MSG_LOST:
		print_string(PRINT_ANY, "kind", "%s", "lost");
		print_u64(PRINT_ANY, "count", " %" PRIu64, m->lost.count);
		break;
	}
	print_close_object();
	if (!print_is_json())
		putchar('\n');
	fflush(stdout);
}

/* watch event EVENT [tgid N] [cpu N] [id N] | watch threshold M OP V; [count N] */
static int watch(struct magnet_client *c, int argc, char **argv)
{
	struct magnet_message m;
	unsigned long long left = 0;
	struct sigaction sa = { .sa_handler = on_stop };
	char line[MAGNET_LINE_MAX], reply[256];
	size_t len = 0;
	int i, ret;

	if (argc >= 2 && !strcmp(argv[argc - 2], "count")) {
		left = strtoull(argv[argc - 1], NULL, 10);
		if (!left) {
			fprintf(stderr, "magnetctl: daemon watch: count must be a positive number\n");
			return -1;
		}
		argc -= 2;
	}
	if (argc < 2 || (strcmp(argv[0], "event") && strcmp(argv[0], "threshold"))) {
		fprintf(stderr, "magnetctl: daemon watch: expected \"event EVENT ...\" or \"threshold METRIC OP VALUE\"\n");
		return -1;
	}
	/* The words go to magnetd as they are; it checks them. */
	len = snprintf(line, sizeof(line), "subscribe");
	for (i = 0; i < argc && len < sizeof(line); i++)
		len += snprintf(line + len, sizeof(line) - len, " %s", argv[i]);
	if (len >= sizeof(line)) {
		fprintf(stderr, "magnetctl: daemon watch: request too long\n");
		return -1;
	}
	if (magnet_request(c, line, reply, sizeof(reply))) {
		client_error(c, "daemon watch");
		return -1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		ret = magnet_receive(c, &m, 500);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			client_error(c, "daemon watch");
			return -1;
		}
		if (!ret)
			continue;
		print_message(&m);
		if (left && m.kind != MAGNET_MSG_LOST && !--left)
			break;
	}
	return 0;
}

int daemon_command(const char *cmd, int argc, char **argv)
{
	const char *path = take_socket(&argc, argv);
	struct magnet_client *c;
	char reply[256];
	int ret = 0;

	if (strcmp(cmd, "snapshot") && strcmp(cmd, "watch") &&
	    strcmp(cmd, "release") && strcmp(cmd, "attach")) {
		fprintf(stderr, "magnetctl: unknown daemon command \"%s\" (snapshot, watch, release, attach)\n",
			cmd);
		return 2;
	}
	if (strcmp(cmd, "watch") && argc) {
		fprintf(stderr, "magnetctl: daemon %s: unexpected \"%s\"\n",
			cmd, argv[0]);
		return 2;
	}
	c = connect_daemon(path);
	if (!c)
		return 1;
	if (!strcmp(cmd, "snapshot")) {
		ret = snapshot(c);
	} else if (!strcmp(cmd, "watch")) {
		ret = watch(c, argc, argv);
	} else if (magnet_request(c, cmd, reply, sizeof(reply))) {
		client_error(c, cmd);
		ret = -1;
	}
	magnet_close(c);
	return ret ? 1 : 0;
}

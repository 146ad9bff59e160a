// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl monitor: the module's notifications, as they come (see
 * magnetctl.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>

#include "magnetctl.h"
#include "print.h"

const char help_monitor[] =
"Notifications:\n"
"  magnetctl monitor [count N]\n"
"      Print one line per hit of the probes marked notify, until SIGINT or\n"
"      SIGTERM (exit status 0) or, with count, N notifications:\n"
"        SECONDS.NANOSECONDS cpu C tgid T tid T probe NAME(ID) id 0xID\n"
"            size BYTES flags 0xF payload HEX\n"
"      The time is CLOCK_MONOTONIC, size the whole record's (header and\n"
"      payload), HEX the first payload bytes (at most 64). With -j every\n"
"      line is one JSON object; -p is ignored.\n";

/* --- monitor -------------------------------------------------------------- */

struct monitor {
	uint64_t left;		/* notifications to print; 0: no limit */
};

static void hex_string(const uint8_t *data, size_t len, char *hex)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", data[i]);
	hex[2 * len] = '\0';
}

static int notify_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	char hex[2 * MAGNET_NOTIFY_PREFIX_MAX + 1], time[48];
	struct monitor *m = data;
	struct magnet_record r;
	const uint8_t *record;
	size_t prefix;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (!tb[MAGNET_A_NOTIFY_RECORD] ||
	    mnl_attr_get_payload_len(tb[MAGNET_A_NOTIFY_RECORD]) < sizeof(r)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	record = mnl_attr_get_payload(tb[MAGNET_A_NOTIFY_RECORD]);
	memcpy(&r, record, sizeof(r));
	prefix = mnl_attr_get_payload_len(tb[MAGNET_A_NOTIFY_RECORD]) -
		 sizeof(r);
	if (prefix > MAGNET_NOTIFY_PREFIX_MAX)
		prefix = MAGNET_NOTIFY_PREFIX_MAX;
	hex_string(record + sizeof(r), prefix, hex);
	snprintf(time, sizeof(time), "%" PRIu64 ".%09" PRIu64,
		 (uint64_t)r.timestamp / 1000000000,
		 (uint64_t)r.timestamp % 1000000000);

	print_open_object(NULL);
	print_u64(PRINT_JSON, "timestamp", NULL, r.timestamp);
	print_string(PRINT_TEXT, "timestamp", "%s", time);
	print_u64(PRINT_ANY, "cpu", " cpu %" PRIu64, r.cpu);
	print_u64(PRINT_ANY, "tgid", " tgid %" PRIu64, r.tgid);
	print_u64(PRINT_ANY, "tid", " tid %" PRIu64, r.tid);
	print_u64(PRINT_JSON, "event", NULL, r.event);
	print_string(PRINT_ANY, "probe", " probe %s",
		     attr_str(tb[MAGNET_A_PROBE_NAME]));
	print_u64(PRINT_TEXT, "event", "(%" PRIu64 ")", tb[MAGNET_A_PROBE_ID] ?
		  attr_uint(tb[MAGNET_A_PROBE_ID]) : r.event);
	print_u64(PRINT_ANY, "id", " id 0x%" PRIx64, r.id);
	print_u64(PRINT_ANY, "size", " size %" PRIu64, r.size);
	print_u64(PRINT_ANY, "flags", " flags 0x%" PRIx64, r.flags);
	print_string(PRINT_JSON, "payload", NULL, hex);
	print_string(PRINT_TEXT, "payload", " payload %s\n",
		     prefix ? hex : "-");
	print_close_object();
	fflush(stdout);
	if (m->left && !--m->left)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Print notifications until @m's count or SIGINT/SIGTERM. The signals are
 * blocked except while waiting, so none goes unnoticed.
 */
static int listen_notify(struct monitor *m)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct pollfd pfd = { .events = POLLIN };
	sigset_t block, wait_mask;
	int ret;

	if (nl_join_notify(nl))
		return print_nl_error();
	pfd.fd = nl_fd(nl);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop_signal) {
		if (ppoll(&pfd, 1, NULL, &wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "magnetctl: poll: %s\n",
				strerror(errno));
			return -1;
		}
		ret = nl_recv_notify(nl, notify_cb, m);
		if (ret < 0)
			return print_nl_error();
		if (ret == NL_NOTIFY_LOST)
			fputs("magnetctl: warning: notifications lost, the socket's receive buffer overran (ENOBUFS)\n",
			      stderr);
		if (ret == NL_NOTIFY_STOP)
			break;
	}
	return 0;
}

int monitor(struct args *a)
{
	struct monitor m = { 0 };
	const char *key;

	while (more(a)) {
		key = next_word(a);
		if (strcmp(key, "count"))
			unknown_keyword(key);
		if (m.left)
			usage_error("%s: \"count\" given twice", command);
		m.left = parse_uint(take_value(a, key), 1, UINT64_MAX, key);
	}
	/* one object per line, whatever -p says */
	print_init(print_is_json(), false);
	return listen_notify(&m);
}

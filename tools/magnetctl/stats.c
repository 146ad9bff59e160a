// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl stats: every probe's and buffer's counters (see magnetctl.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "print.h"

const char help_stats[] =
"Statistics:\n"
"  magnetctl stats\n"
"      Per probe: ID, NAME, HITS (times it fired while enabled), LOGGED\n"
"      (records written), FILTERED (hits a rule rejected), SAMPLED (hits\n"
"      sampling skipped), LOST (records the buffer refused), MISSED (hits\n"
"      the kprobe machinery could not deliver). Per buffer and CPU, in\n"
"      records: BUFFER, CPU, PRODUCED (WRITTEN + DROPPED), WRITTEN, READ,\n"
"      LOST (DROPPED + OVERWRITTEN), DROPPED (ring full), OVERWRITTEN\n"
"      (evicted unread), DISCARDED (consumed but not delivered). Then the\n"
"      notifications sent and dropped, and the rate limit per second.\n";

/* --- stats ---------------------------------------------------------------- */

/*
 * The dump's messages are collected first, so that the output has one
 * section each for probes, buffers and notifications whatever their order.
 */
struct probe_stats {
	uint64_t id;
	char name[MAGNET_NAME_LEN];
	uint64_t value[MAGNET_STAT_MAX + 1];	/* by MAGNET_STAT_* */
	uint64_t missed;
};

struct buffer_stats {
	char name[MAGNET_NAME_LEN];
	uint64_t (*cpu)[MAGNET_CPU_MAX + 1];	/* by MAGNET_CPU_* */
	size_t cpus;
};

struct stats {
	struct probe_stats *probe;
	size_t probes;
	struct buffer_stats *buffer;
	size_t buffers;
	bool have_notify;
	uint64_t sent, dropped, rate;
};

static int stats_add_probe(struct stats *s, const struct nlattr **tb)
{
	const struct nlattr *st[MAGNET_STAT_MAX + 1] = { NULL };
	struct probe_stats *p;
	int i;

	if (tb[MAGNET_A_PROBE_STATS] &&
	    parse_stat_attrs(tb[MAGNET_A_PROBE_STATS], st))
		return MNL_CB_ERROR;
	s->probe = append(s->probe, &s->probes, sizeof(*s->probe));
	p = &s->probe[s->probes - 1];
	p->id = attr_uint(tb[MAGNET_A_PROBE_ID]);
	if (tb[MAGNET_A_PROBE_NAME])
		snprintf(p->name, sizeof(p->name), "%s",
			 attr_str(tb[MAGNET_A_PROBE_NAME]));
	for (i = MAGNET_STAT_HITS; i <= MAGNET_STAT_MAX; i++)
		p->value[i] = attr_uint(st[i]);
	p->missed = attr_uint(tb[MAGNET_A_PROBE_MISSED]);
	return MNL_CB_OK;
}

static int stats_add_buffer(struct stats *s, const struct nlmsghdr *nlh,
			    const struct nlattr **tb)
{
	const struct nlattr *ct[MAGNET_CPU_MAX + 1];
	const struct nlattr *attr;
	struct buffer_stats *b;
	int i;

	s->buffer = append(s->buffer, &s->buffers, sizeof(*s->buffer));
	b = &s->buffer[s->buffers - 1];
	snprintf(b->name, sizeof(b->name), "%s",
		 attr_str(tb[MAGNET_A_BUFFER_NAME]));
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) != MAGNET_A_BUFFER_CPU)
			continue;
		if (parse_cpu_attrs(attr, ct))
			return MNL_CB_ERROR;
		b->cpu = append(b->cpu, &b->cpus, sizeof(*b->cpu));
		for (i = MAGNET_CPU_ID; i <= MAGNET_CPU_MAX; i++)
			b->cpu[b->cpus - 1][i] = attr_uint(ct[i]);
	}
	return MNL_CB_OK;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct stats *s = data;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_ID] || tb[MAGNET_A_PROBE_STATS])
		return stats_add_probe(s, tb);
	if (tb[MAGNET_A_BUFFER_NAME])
		return stats_add_buffer(s, nlh, tb);
	if (tb[MAGNET_A_NOTIFY_SENT] || tb[MAGNET_A_NOTIFY_DROPPED] ||
	    tb[MAGNET_A_NOTIFY_RATE]) {
		s->have_notify = true;
		s->sent = attr_uint(tb[MAGNET_A_NOTIFY_SENT]);
		s->dropped = attr_uint(tb[MAGNET_A_NOTIFY_DROPPED]);
		s->rate = attr_uint(tb[MAGNET_A_NOTIFY_RATE]);
	}
	return MNL_CB_OK;
}

static void print_stats_probes(const struct stats *s)
{
	const struct probe_stats *p;
	int i;

	print_open_array("probes");
	table_begin();
	for (p = s->probe; p < s->probe + s->probes; p++) {
		print_row_begin();
		print_u64(PRINT_ANY, "id", NULL, p->id);
		print_string(PRINT_ANY, "name", NULL, p->name);
		for (i = MAGNET_STAT_HITS; i <= MAGNET_STAT_MAX; i++)
			print_u64(PRINT_ANY, probe_stat_names[i], NULL,
				  p->value[i]);
		print_u64(PRINT_ANY, "missed", NULL, p->missed);
		print_row_end();
	}
	table_end();
	print_close_array();
}

static void print_stats_buffers(const struct stats *s)
{
	const struct buffer_stats *b;
	size_t cpu;
	int i;

	print_open_array("buffers");
	table_begin();
	for (b = s->buffer; b < s->buffer + s->buffers; b++) {
		print_open_object(NULL);
		print_string(PRINT_JSON, "name", NULL, b->name);
		print_open_array("cpus");
		for (cpu = 0; cpu < b->cpus; cpu++) {
			print_row_begin();
			print_string(PRINT_TEXT, "buffer", NULL, b->name);
			print_u64(PRINT_ANY, "cpu", NULL,
				  b->cpu[cpu][MAGNET_CPU_ID]);
			for (i = MAGNET_CPU_PRODUCED; i <= MAGNET_CPU_MAX; i++)
				print_u64(PRINT_ANY, cpu_stat_names[i], NULL,
					  b->cpu[cpu][i]);
			print_row_end();
		}
		print_close_array();
		print_close_object();
	}
	table_end();
	print_close_array();
}

static void print_stats(const struct stats *s)
{
	bool text = !print_is_json();

	print_open_object(NULL);
	print_stats_probes(s);
	if (text && s->probes && (s->buffers || s->have_notify))
		putchar('\n');
	print_stats_buffers(s);
	if (text && s->buffers && s->have_notify)
		putchar('\n');
	if (s->have_notify) {
		print_open_object("notify");
		print_u64(PRINT_ANY, "sent", "notify: sent %" PRIu64, s->sent);
		print_u64(PRINT_ANY, "dropped", " dropped %" PRIu64,
			  s->dropped);
		print_u64(PRINT_ANY, "rate", " rate %" PRIu64 "/s\n", s->rate);
		print_close_object();
	}
	print_close_object();
}

static void free_stats(struct stats *s)
{
	size_t i;

	for (i = 0; i < s->buffers; i++)
		free(s->buffer[i].cpu);
	free(s->buffer);
	free(s->probe);
}

int stats_show(struct args *a)
{
	struct stats stats = { 0 };
	struct request req;
	int ret;

	no_more_args(a);
	request_start(nl, &req, MAGNET_CMD_STATS_GET, NLM_F_DUMP);
	ret = ctl_request(&req, stats_cb, &stats);
	if (!ret)
		print_stats(&stats);
	free_stats(&stats);
	return ret;
}

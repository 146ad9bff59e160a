// SPDX-License-Identifier: GPL-2.0
/*
 * Filter type "correlate" (the kernel's magnet_correlate module): a
 * probe's records are kept only for journeys that reach the end probe
 * late (an exclude rule: the fast ones are dropped).
 *
 *	correlate end PROBE [via PROBE]... [threshold DURATION]
 *		  [window DURATION] [max-open N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "print.h"

struct corr_state {
	uint32_t given;			/* by MAGNET_CORR_* */
	char end[MAGNET_NAME_LEN];
	char via[MAGNET_CORR_VIA_MAX][MAGNET_NAME_LEN];
	unsigned int vias;
	uint64_t threshold, window;
	uint32_t max_open;
};

_Static_assert(sizeof(struct corr_state) <= FILTER_TYPE_STATE,
	       "correlate state");

static const char *const words[] = {
	"end", "via", "threshold", "window", "max-open", NULL,
};

static const char *const stat_names[MAGNET_CORR_MAX + 1] = {
	[MAGNET_CORR_TAKEN]	= "taken",
	[MAGNET_CORR_JOURNEYS]	= "journeys",
	[MAGNET_CORR_PASSED]	= "passed",
	[MAGNET_CORR_EXPIRED]	= "expired",
	[MAGNET_CORR_UNMATCHED]	= "unmatched",
	[MAGNET_CORR_OVERFLOW]	= "overflow",
	[MAGNET_CORR_CUT]	= "cut",
	[MAGNET_CORR_LOST]	= "lost",
};

static struct corr_state *state(const struct filter_rule *r)
{
	return (struct corr_state *)r->state;
}

static int once(struct corr_state *c, unsigned int type, const char *key,
		struct parse_error *e)
{
	if (c->given & (1U << type))
		return parse_fail(e, "\"%s\" given twice", key);
	c->given |= 1U << type;
	return 0;
}

static int parse(struct filter_rule *r, const char *key, const char *value,
		 struct parse_error *e)
{
	struct corr_state *c = state(r);
	uint16_t id;
	uint64_t v;

	if (strlen(value) >= MAGNET_NAME_LEN)
		return parse_fail(e, "bad probe \"%s\" after \"%s\": at most %d bytes",
				  value, key, MAGNET_NAME_LEN - 1);
	if (!strcmp(key, "via")) {
		if (word_probe_ref(value, &id, e))
			return -1;
		if (c->vias == MAGNET_CORR_VIA_MAX)
			return parse_fail(e, "more than %d via probes",
					  MAGNET_CORR_VIA_MAX);
		snprintf(c->via[c->vias++], MAGNET_NAME_LEN, "%s", value);
		c->given |= 1U << MAGNET_CORR_VIA;
		return 0;
	}
	if (!strcmp(key, "end")) {
		if (once(c, MAGNET_CORR_END, key, e) ||
		    word_probe_ref(value, &id, e))
			return -1;
		snprintf(c->end, sizeof(c->end), "%s", value);
	} else if (!strcmp(key, "threshold")) {
		if (once(c, MAGNET_CORR_THRESHOLD, key, e) ||
		    word_duration(value, key, &c->threshold, e))
			return -1;
	} else if (!strcmp(key, "window")) {
		if (once(c, MAGNET_CORR_WINDOW, key, e) ||
		    word_duration(value, key, &c->window, e))
			return -1;
		if (c->window < MAGNET_CORR_WINDOW_MIN ||
		    c->window > MAGNET_CORR_WINDOW_MAX)
			return parse_fail(e, "bad window \"%s\": expected 1ms to 1 hour (3600s)",
					  value);
	} else {
		if (once(c, MAGNET_CORR_MAX_OPEN, key, e) ||
		    word_uint(value, 1, MAGNET_CORR_MAX_OPEN_MAX, key, &v, e))
			return -1;
		c->max_open = v;
	}
	return 0;
}

static int check(const struct filter_rule *r, const char *probe,
		 struct parse_error *e)
{
	const struct corr_state *c = state(r);

	if (!c->end[0])
		return parse_fail(e, "\"correlate\" needs \"end PROBE\"");
	if (probe && !strcmp(c->end, probe))
		return parse_fail(e, "the end probe \"%s\" is the start probe",
				  c->end);
	if (filter_has_header_predicate(r))
		return parse_fail(e, "a correlate rule has no other predicate (cpu, tgid, tid, id)");
	if (r->action == MAGNET_FILTER_INCLUDE)
		return parse_fail(e, "a correlate rule is an exclude rule");
	return 0;
}

/* The probes as ids: CORR_END and CORR_VIA are u16. */
static int encode(struct nl_ctx *nl, const struct filter_rule *r,
		  struct nlmsghdr *nlh)
{
	const struct corr_state *c = state(r);
	unsigned int i;
	uint16_t id;

	if (probe_ref_id(nl, c->end, &id))
		return -1;
	mnl_attr_put_u16(nlh, MAGNET_CORR_END, id);
	for (i = 0; i < c->vias; i++) {
		if (probe_ref_id(nl, c->via[i], &id))
			return -1;
		mnl_attr_put_u16(nlh, MAGNET_CORR_VIA, id);
	}
	if (c->given & (1U << MAGNET_CORR_THRESHOLD))
		mnl_attr_put_u64(nlh, MAGNET_CORR_THRESHOLD, c->threshold);
	if (c->given & (1U << MAGNET_CORR_WINDOW))
		mnl_attr_put_u64(nlh, MAGNET_CORR_WINDOW, c->window);
	if (c->given & (1U << MAGNET_CORR_MAX_OPEN))
		mnl_attr_put_u32(nlh, MAGNET_CORR_MAX_OPEN, c->max_open);
	return 0;
}

/* A duration: JSON "KEY_ns": N, text " KEY DURATION". */
static void print_duration(const char *key, const struct nlattr *attr)
{
	char json_key[32], text[32];

	if (!attr)
		return;
	snprintf(json_key, sizeof(json_key), "%s_ns", key);
	format_duration(attr_uint(attr), text);
	print_u64(PRINT_JSON, json_key, NULL, attr_uint(attr));
	print_word(key);
	print_string(PRINT_TEXT, NULL, " %s", text);
}

static void print_config(const struct nlattr *config,
			 const struct nlattr **ct)
{
	const struct nlattr *attr;
	bool any = false;

	print_open_object("config");
	if (ct[MAGNET_CORR_END]) {
		print_word("end");
		print_u64(PRINT_ANY, "end", " %" PRIu64,
			  attr_uint(ct[MAGNET_CORR_END]));
	}
	mnl_attr_for_each_nested(attr, config) {
		if (mnl_attr_get_type(attr) != MAGNET_CORR_VIA)
			continue;
		if (!any)
			print_open_array("via");
		any = true;
		print_word("via");
		print_u64(PRINT_ANY, NULL, " %" PRIu64, attr_uint(attr));
	}
	if (any)
		print_close_array();
	print_duration("threshold", ct[MAGNET_CORR_THRESHOLD]);
	print_duration("window", ct[MAGNET_CORR_WINDOW]);
	if (ct[MAGNET_CORR_MAX_OPEN]) {
		print_word("max-open");
		print_u64(PRINT_ANY, "max_open", " %" PRIu64,
			  attr_uint(ct[MAGNET_CORR_MAX_OPEN]));
	}
	print_close_object();
}

/* The counters: JSON "stats": {...}, text " KEY N". */
static void print_stats(const struct nlattr **st)
{
	int i;

	print_open_object("stats");
	for (i = MAGNET_CORR_TAKEN; i <= MAGNET_CORR_MAX; i++) {
		if (!st[i] || !stat_names[i])
			continue;
		print_word(stat_names[i]);
		print_u64(PRINT_ANY, stat_names[i], " %" PRIu64,
			  attr_uint(st[i]));
	}
	print_close_object();
}

static int validate(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *tb[MAGNET_CORR_MAX + 1];

	return (config && parse_corr_attrs(config, tb)) ||
	       (stats && parse_corr_attrs(stats, tb)) ? -1 : 0;
}

static void print(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *ct[MAGNET_CORR_MAX + 1];
	const struct nlattr *cs[MAGNET_CORR_MAX + 1];

	if (config && !parse_corr_attrs(config, ct))
		print_config(config, ct);
	if (stats && !parse_corr_attrs(stats, cs))
		print_stats(cs);
}

static void refs(const struct filter_rule *r,
		 void (*fn)(const char *word, const char *probe, void *data),
		 void *data)
{
	const struct corr_state *c = state(r);
	unsigned int i;

	if (c->end[0])
		fn("end", c->end, data);
	for (i = 0; i < c->vias; i++)
		fn("via", c->via[i], data);
}

const struct filter_type filter_correlate = {
	.name		= "correlate",
	.words		= words,
	.default_action	= MAGNET_FILTER_EXCLUDE,
	.parse		= parse,
	.check		= check,
	.encode		= encode,
	.validate	= validate,
	.print		= print,
	.refs		= refs,
};

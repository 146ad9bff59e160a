// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl filter: add, del, list, in lib/filter.c's words and through its
 * filter types (see magnetctl.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "magnetctl.h"
#include "print.h"
#include "words.h"

const char help_filter[] =
"Filter rules (which hits of a probe are logged):\n"
"  magnetctl filter add PROBE [include|exclude] [cpu LIST] [tgid TGIDS]\n"
"                       [tid N] [id IDS | id MIN-MAX]\n"
"                       [header HEADER... | correlate CORRELATE... |\n"
"                        packet EXPRESSION...]\n"
"      Add a rule to PROBE and print its id. A rule matches a hit when all\n"
"      it gives match (AND): the CPU is in LIST, the process in TGIDS (tgid\n"
"      may be repeated, 256 in all), the thread is N, the record id is in\n"
"      IDS (up to 256) or from MIN to MAX, and the filter type agrees. A\n"
"      hit that matches an exclude rule is dropped; if PROBE has include\n"
"      rules (include is the default), a hit that matches none of them is\n"
"      dropped too (OR across rules). A rule needs one predicate at least.\n"
"      packet (needs module magnet_packet; for the packet probes and the\n"
"      probes netif_receive, net_start_xmit, skb_free and tcp_send)\n"
"      matches the packets tcpdump's filter language selects: every word\n"
"      after it is the EXPRESSION (pcap-filter(7)), compiled by libpcap as\n"
"      tcpdump -i any compiles it and run in the kernel on each hit's\n"
"      packet, before anything is logged, e.g.\n"
"        magnetctl filter add udp-send.ip packet udp dst port 5001\n"
"      Where the probe holds no IP header (the send calls), the headers\n"
"      are built from what it knows (addresses, ports, protocol, length);\n"
"      an expression that asks what it does not know (TTL, IP id, the\n"
"      device before there is one, ...) lets the hit through, counted as\n"
"      undecided. 256 instructions at most.\n"
"      header (needs module magnet_header; for the same probes) matches\n"
"      fixed fields of the IPv4 or IPv6 packet; HEADER is any of:\n"
"        proto tcp|udp|icmp|icmp6|sctp|udplite|dccp|N   IP protocol\n"
"        src ADDR[/LEN]  dst ADDR[/LEN]  host ADDR[/LEN] (source or dest.)\n"
"        sport N  dport N  port N (source or destination port)\n"
"      correlate (needs module magnet_correlate) groups by record id the\n"
"      records of PROBE (the start), of the end probe and of via probes\n"
"      into journeys, and logs each journey that lasts at least the\n"
"      threshold as one journey record into PROBE's buffer. The records it\n"
"      takes count as filtered. Its rule is an exclude rule (the default\n"
"      here) without other predicates. CORRELATE is any of:\n"
"        end PROBE           the probe that closes a journey (required)\n"
"        via PROBE           a probe whose records join it (up to 8 times)\n"
"        threshold DURATION  log journeys this long or longer (default 0)\n"
"        window DURATION     a journey open this long expires (1ms to 1\n"
"                            hour, default 1s)\n"
"        max-open N          journeys open at once (default 4096)\n"
"  magnetctl filter del ID\n"
"      Remove rule ID.\n"
"  magnetctl filter list [PROBE]\n"
"  magnetctl filter show [PROBE]\n"
"      List the rules, or PROBE's, one line each: the rule's id, then its\n"
"      probe, action and predicates as filter add takes them, then the\n"
"      filter type's counters (packet: the expression, quoted, and the\n"
"      hits let through undecided, those the kernel's own BPF ran,\n"
"      native, and the send calls decided on their record's fields,\n"
"      fields; correlate: taken, journeys closed,\n"
"      passed (logged), expired, unmatched, overflow, cut, lost).\n";

/* --- filter --------------------------------------------------------------- */

static int filter_new_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_FILTER_ID])
		*(int64_t *)data = mnl_attr_get_u32(tb[MAGNET_A_FILTER_ID]);
	return MNL_CB_OK;
}

int filter_add(struct args *a)
{
	static struct filter_rule r;	/* a few KiB */
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_NEW, 0);
	const char *probe = take_arg(a, "PROBE");
	struct parse_error e;
	int64_t rule = -1;

	check_probe_ref(probe);
	filter_rule_init(&r);
	if (filter_parse(&r, a->count, a->word, &e) ||
	    filter_check(&r, probe, &e))
		usage_error("%s: %s", command, e.text);
	a->count = 0;
	put_probe_ref(nlh, probe);
	if (filter_encode(nl, &r, nlh))
		return print_nl_error();
	if (ctl_request(&req, filter_new_cb, &rule))
		return -1;
	print_open_object(NULL);
	if (rule >= 0)
		print_u64(PRINT_ANY, "id", "added filter id %" PRIu64 "\n",
			  rule);
	else
		print_string(PRINT_TEXT, NULL, "%s", "added filter\n");
	print_close_object();
	return 0;
}

int filter_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_DEL, 0);

	mnl_attr_put_u32(nlh, MAGNET_A_FILTER_ID,
			 parse_uint(take_arg(a, "ID"), 1, UINT32_MAX,
				    "filter id"));
	no_more_args(a);
	return ctl_request(&req, NULL, NULL);
}

/*
 * filter list: one line per rule in text, in filter add's syntax after
 * the rule's id ("3 sw include cpu 0-3 tgid 1234"), then the filter
 * type's counters; with -j an array of objects.
 */

/* In text, a keyword of filter add's: " WORD". */
static void print_filter_set(const struct nlmsghdr *nlh, uint16_t type,
			     const char *key, const char *word, bool hex)
{
	const struct nlattr *attr;
	bool any = false;
	char *text = NULL;
	uint64_t value;
	size_t size;
	FILE *f;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		any |= mnl_attr_get_type(attr) == type;
	if (!any)
		return;
	f = open_memstream(&text, &size);
	if (!f)
		out_of_memory();
	print_open_array(key);
	any = false;
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) != type)
			continue;
		value = attr_uint(attr);
		print_u64(PRINT_JSON, NULL, NULL, value);
		fprintf(f, hex ? "%s0x%" PRIx64 : "%s%" PRIu64,
			any ? "," : "", value);
		any = true;
	}
	print_close_array();
	if (fclose(f))
		out_of_memory();
	print_word(word);
	print_word(text);
	free(text);
}

static void print_filter_cpus(const struct nlattr *attr)
{
	const uint8_t *map = mnl_attr_get_payload(attr);
	size_t len = mnl_attr_get_payload_len(attr), cpu;
	char *list = cpu_list_text(map, len);

	print_open_array("cpus");
	for (cpu = 0; cpu < len * 8; cpu++)
		if (cpu_in_map(map, cpu))
			print_u64(PRINT_JSON, NULL, NULL, cpu);
	print_close_array();
	print_word("cpu");
	print_string(PRINT_TEXT, NULL, " %s", *list ? list : NULL);
	free(list);
}

/* An id range as given; text fills in a missing end. */
static void print_filter_id_range(const struct nlattr **tb)
{
	const struct nlattr *min = tb[MAGNET_A_FILTER_ID_MIN];
	const struct nlattr *max = tb[MAGNET_A_FILTER_ID_MAX];

	if (!min && !max)
		return;
	if (min)
		print_u64(PRINT_JSON, "id_min", NULL, attr_uint(min));
	if (max)
		print_u64(PRINT_JSON, "id_max", NULL, attr_uint(max));
	print_word("id");
	print_u64(PRINT_TEXT, NULL, " 0x%" PRIx64, attr_uint(min));
	print_u64(PRINT_TEXT, NULL, "-0x%" PRIx64,
		  max ? attr_uint(max) : UINT64_MAX);
}

static int filter_line_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct filter_type *known = NULL;
	const char *name, *type;
	char action[24];

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	/* a malformed nest fails the row before any of it is printed */
	type = attr_str(tb[MAGNET_A_FILTER_TYPE]);
	known = type ? filter_type_find(type) : NULL;
	if (known && known->validate(tb[MAGNET_A_FILTER_CONFIG],
				     tb[MAGNET_A_FILTER_STATS]))
		return MNL_CB_ERROR;
	name = attr_str(tb[MAGNET_A_PROBE_NAME]);
	print_open_object(NULL);
	print_u64(PRINT_ANY, "id", "%" PRIu64,
		  attr_uint(tb[MAGNET_A_FILTER_ID]));
	if (tb[MAGNET_A_PROBE_ID])
		print_u64(PRINT_JSON, "probe_id", NULL,
			  attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_JSON, "probe", NULL, name);
	if (name || !tb[MAGNET_A_PROBE_ID])
		print_string(PRINT_TEXT, NULL, " %s", name);
	else
		print_u64(PRINT_TEXT, NULL, " %" PRIu64,
			  attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_ANY, "action", " %s",
		     VALUE_NAME(filter_actions, tb[MAGNET_A_FILTER_ACTION],
				action));
	if (tb[MAGNET_A_FILTER_CPUS])
		print_filter_cpus(tb[MAGNET_A_FILTER_CPUS]);
	print_filter_set(nlh, MAGNET_A_FILTER_TGID, "tgids", "tgid", false);
	if (tb[MAGNET_A_FILTER_TID]) {
		print_word("tid");
		print_u64(PRINT_ANY, "tid", " %" PRIu64,
			  attr_uint(tb[MAGNET_A_FILTER_TID]));
	}
	print_filter_set(nlh, MAGNET_A_FILTER_IDS, "ids", "id", true);
	print_filter_id_range(tb);
	if (type) {
		print_string(PRINT_JSON, "type", NULL, type);
		if (known)
			print_word(type);
		else
			print_string(PRINT_TEXT, NULL, " type %s", type);
	}
	/* a type newer than us: its name, not its nests */
	if (known)
		known->print(tb[MAGNET_A_FILTER_CONFIG],
			     tb[MAGNET_A_FILTER_STATS]);
	print_string(PRINT_TEXT, NULL, "%s", "\n");
	print_close_object();
	return MNL_CB_OK;
}

int filter_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_GET,
					     NLM_F_DUMP);

	if (more(a))
		put_probe_ref(nlh, next_word(a));
	no_more_args(a);
	return list_lines(&req, filter_line_cb);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Filter type "packet" (the kernel's magnet_packet module): tcpdump's filter
 * language. Every word after "packet" is the expression; libpcap compiles
 * it (pcapfilter.c) and the kernel runs the program on each hit's packet
 * before anything is logged.
 *
 *	packet EXPRESSION...	e.g.  packet udp dst port 5001
 *
 * Listed as the expression it was compiled from, quoted, and the hits it
 * let through undecided (what the probe does not know: see "Filtering and
 * sampling" in the uapi header).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "pcapfilter.h"
#include "print.h"

struct packet_state {
	char text[MAGNET_PACKET_TEXT_MAX];
};

_Static_assert(sizeof(struct packet_state) <= FILTER_TYPE_STATE,
	       "packet state");

static const char *const words[] = { NULL };

/* The fixed-field rule's words, which the old "packet" rule took. */
static const char *const header_words[] = {
	"proto", "src", "dst", "sport", "dport", NULL,
};

static struct packet_state *state(const struct filter_rule *r)
{
	return (struct packet_state *)r->state;
}

/* Compile @text; the program's size checked against the kernel's limit. */
static int compile(const char *text, struct bpf_program *prog,
		   struct parse_error *e)
{
	char err[PCAP_ERRBUF_SIZE + 64];
	size_t n;

	if (pcapfilter_compile(text, prog, err, sizeof(err))) {
		n = strcspn(text, " ");
		for (const char *const *w = header_words; *w; w++)
			if (strlen(*w) == n && !strncmp(text, *w, n))
				return parse_fail(e, "packet: %s (\"packet\" takes tcpdump's language now; the rule in these words is \"header %s\")",
						  err, text);
		return parse_fail(e, "packet: %s", err);
	}
	if (prog->bf_len > MAGNET_PACKET_INSNS_MAX) {
		n = prog->bf_len;
		pcap_freecode(prog);
		return parse_fail(e, "packet: the expression compiles to %zu instructions; the kernel runs at most %d",
				  n, MAGNET_PACKET_INSNS_MAX);
	}
	return 0;
}

static int parse(struct filter_rule *r, const char *key, const char *value,
		 struct parse_error *e)
{
	struct packet_state *p = state(r);
	struct bpf_program prog;

	(void)key;
	if (pcapfilter_blank(value))
		return parse_fail(e, "\"packet\" needs an expression, in tcpdump's language (pcap-filter(7)), e.g. \"packet udp port 5001\"");
	if (strlen(value) >= sizeof(p->text))
		return parse_fail(e, "packet: the expression is longer than %d bytes",
				  MAGNET_PACKET_TEXT_MAX - 1);
	if (compile(value, &prog, e))
		return -1;
	pcap_freecode(&prog);
	snprintf(p->text, sizeof(p->text), "%s", value);
	return 0;
}

static int check(const struct filter_rule *r, const char *probe,
		 struct parse_error *e)
{
	(void)probe;
	if (!state(r)->text[0])
		return parse_fail(e, "\"packet\" needs an expression, in tcpdump's language (pcap-filter(7)), e.g. \"packet udp port 5001\"");
	return 0;
}

static int encode(struct nl_ctx *nl, const struct filter_rule *r,
		  struct nlmsghdr *nlh)
{
	const struct packet_state *p = state(r);
	struct bpf_program prog;
	struct parse_error e;
	struct sock_filter_ {
		uint16_t code;
		uint8_t jt, jf;
		uint32_t k;
	};

	_Static_assert(sizeof(struct bpf_insn) == sizeof(struct sock_filter_),
		       "libpcap's instruction is the kernel's");
	if (compile(p->text, &prog, &e))
		return nl_fail(nl, EINVAL, "%s", e.text);
	mnl_attr_put(nlh, MAGNET_PACKET_PROGRAM,
		     prog.bf_len * sizeof(struct bpf_insn), prog.bf_insns);
	mnl_attr_put_strz(nlh, MAGNET_PACKET_TEXT, p->text);
	pcap_freecode(&prog);
	return 0;
}

static int validate(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *tb[MAGNET_PACKET_MAX + 1];

	return (config && parse_packet_attrs(config, tb)) ||
	       (stats && parse_packet_attrs(stats, tb)) ? -1 : 0;
}

static void print(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *ct[MAGNET_PACKET_MAX + 1];
	const struct nlattr *st[MAGNET_PACKET_MAX + 1];

	if (config && !parse_packet_attrs(config, ct)) {
		print_open_object("config");
		if (ct[MAGNET_PACKET_TEXT])
			print_string(PRINT_ANY, "expression", " \"%s\"",
				     mnl_attr_get_str(ct[MAGNET_PACKET_TEXT]));
		if (ct[MAGNET_PACKET_PROGRAM])
			print_u64(ct[MAGNET_PACKET_TEXT] ? PRINT_JSON :
							   PRINT_ANY,
				  "instructions", " (%" PRIu64 " instructions)",
				  mnl_attr_get_payload_len(ct[MAGNET_PACKET_PROGRAM]) /
				  sizeof(struct bpf_insn));
		print_close_object();
	}
	if (stats && !parse_packet_attrs(stats, st) &&
	    st[MAGNET_PACKET_UNDECIDED]) {
		print_open_object("stats");
		print_word("undecided");
		print_u64(PRINT_ANY, "undecided", " %" PRIu64,
			  mnl_attr_get_u64(st[MAGNET_PACKET_UNDECIDED]));
		if (st[MAGNET_PACKET_NATIVE]) {
			print_word("native");
			print_u64(PRINT_ANY, "native", " %" PRIu64,
				  mnl_attr_get_u64(st[MAGNET_PACKET_NATIVE]));
		}
		if (st[MAGNET_PACKET_FIELDS]) {
			print_word("fields");
			print_u64(PRINT_ANY, "fields", " %" PRIu64,
				  mnl_attr_get_u64(st[MAGNET_PACKET_FIELDS]));
		}
		print_close_object();
	}
}

const struct filter_type filter_packet = {
	.name		= "packet",
	.words		= words,
	.rest		= true,
	.default_action	= MAGNET_FILTER_INCLUDE,
	.parse		= parse,
	.check		= check,
	.encode		= encode,
	.validate	= validate,
	.print		= print,
};

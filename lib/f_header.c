// SPDX-License-Identifier: GPL-2.0
/*
 * Filter type "header" (the kernel's magnet_header module): a packet
 * probe's hits by the fixed fields of a header rule, protocol, addresses
 * and ports. The filter type "packet" (f_packet.c) takes tcpdump's whole
 * language; this one stays for the rules written in these words.
 *
 *	header [proto P] [src A[/N]] [dst A[/N]] [host A[/N]]
 *	       [sport N] [dport N] [port N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "filter.h"
#include "print.h"

struct packet_addr {
	uint8_t bytes[16];
	size_t len;			/* 4 or 16 */
	int prefix;			/* bits compared, -1: not given */
};

struct packet_state {
	uint32_t given;			/* by MAGNET_HEADER_* */
	uint8_t proto;
	struct packet_addr addr[MAGNET_HEADER_MAX + 1];	/* SRC, DST, HOST */
	uint16_t port[MAGNET_HEADER_MAX + 1];		/* SPORT, DPORT, PORT */
};

_Static_assert(sizeof(struct packet_state) <= FILTER_TYPE_STATE,
	       "packet state");

static const char *const words[] = {
	"proto", "src", "dst", "host", "sport", "dport", "port", NULL,
};

/* The words, by attribute. */
static const char *const keys[MAGNET_HEADER_MAX + 1] = {
	[MAGNET_HEADER_PROTO]	= "proto",
	[MAGNET_HEADER_SRC]	= "src",
	[MAGNET_HEADER_DST]	= "dst",
	[MAGNET_HEADER_HOST]	= "host",
	[MAGNET_HEADER_SPORT]	= "sport",
	[MAGNET_HEADER_DPORT]	= "dport",
	[MAGNET_HEADER_PORT]	= "port",
};

static struct packet_state *state(const struct filter_rule *r)
{
	return (struct packet_state *)r->state;
}

/* The prefix attribute that goes with an address attribute. */
static uint16_t prefix_attr(int type)
{
	switch (type) {
	case MAGNET_HEADER_SRC:
		return MAGNET_HEADER_SRC_PREFIX;
	case MAGNET_HEADER_DST:
		return MAGNET_HEADER_DST_PREFIX;
	default:
		return MAGNET_HEADER_HOST_PREFIX;
	}
}

/* ADDR or ADDR/LEN, IPv4 or IPv6. */
static int parse_addr(const char *s, const char *key,
		      struct packet_addr *addr, struct parse_error *e)
{
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	char text[INET6_ADDRSTRLEN];
	uint64_t bits;

	addr->len = 0;
	addr->prefix = -1;
	if (len < sizeof(text)) {
		memcpy(text, s, len);
		text[len] = '\0';
		if (inet_pton(AF_INET, text, addr->bytes) == 1)
			addr->len = 4;
		else if (inet_pton(AF_INET6, text, addr->bytes) == 1)
			addr->len = 16;
	}
	if (!addr->len)
		return parse_fail(e, "bad address \"%s\" after \"%s\": expected an IPv4 or IPv6 address, optionally with /LEN",
				  s, key);
	if (!slash)
		return 0;
	if (!slash[1] || slash[1 + strspn(slash + 1, "0123456789")] ||
	    word_uint(slash + 1, 0, addr->len * 8, "prefix length", &bits, e))
		return parse_fail(e, "bad prefix length in \"%s\": expected /0 to /%zu for an %s address",
				  s, addr->len * 8,
				  addr->len == 4 ? "IPv4" : "IPv6");
	addr->prefix = bits;
	return 0;
}

static int parse(struct filter_rule *r, const char *key, const char *value,
		 struct parse_error *e)
{
	struct packet_state *p = state(r);
	uint64_t v;
	int type, proto;

	for (type = 1; type <= MAGNET_HEADER_MAX; type++)
		if (keys[type] && !strcmp(keys[type], key))
			break;
	if (p->given & (1U << type))
		return parse_fail(e, "\"%s\" given twice", key);
	p->given |= 1U << type;
	switch (type) {
	case MAGNET_HEADER_PROTO:
		proto = ip_protocol_number(value);
		if (proto < 0 && word_uint(value, 0, 255, "protocol", &v, e))
			return parse_fail(e, "bad protocol \"%s\": expected tcp, udp, icmp, icmp6, sctp, udplite, dccp or a number from 0 to 255",
					  value);
		p->proto = proto < 0 ? v : (uint64_t)proto;
		return 0;
	case MAGNET_HEADER_SRC:
	case MAGNET_HEADER_DST:
	case MAGNET_HEADER_HOST:
		return parse_addr(value, key, &p->addr[type], e);
	default:
		if (word_uint(value, 0, UINT16_MAX, key, &v, e))
			return -1;
		p->port[type] = v;
		return 0;
	}
}

static int check(const struct filter_rule *r, const char *probe,
		 struct parse_error *e)
{
	const struct packet_state *p = state(r);
	size_t family = 0;
	int i;

	(void)probe;
	if (!p->given)
		return parse_fail(e, "\"header\" needs at least one of proto, src, dst, host, sport, dport or port");
	for (i = MAGNET_HEADER_SRC; i <= MAGNET_HEADER_HOST; i++) {
		if (!(p->given & (1U << i)))
			continue;
		if (family && p->addr[i].len != family)
			return parse_fail(e, "src, dst and host mix IPv4 and IPv6: the rule could never match");
		family = p->addr[i].len;
	}
	return 0;
}

static int encode(struct nl_ctx *nl, const struct filter_rule *r,
		  struct nlmsghdr *nlh)
{
	const struct packet_state *p = state(r);
	const struct packet_addr *addr;
	int i;

	(void)nl;
	for (i = 1; i <= MAGNET_HEADER_MAX; i++) {
		if (!(p->given & (1U << i)))
			continue;
		switch (i) {
		case MAGNET_HEADER_PROTO:
			mnl_attr_put_u8(nlh, i, p->proto);
			break;
		case MAGNET_HEADER_SRC:
		case MAGNET_HEADER_DST:
		case MAGNET_HEADER_HOST:
			addr = &p->addr[i];
			mnl_attr_put(nlh, i, addr->len, addr->bytes);
			if (addr->prefix >= 0)
				mnl_attr_put_u8(nlh, prefix_attr(i),
						addr->prefix);
			break;
		default:
			mnl_attr_put_u16(nlh, i, p->port[i]);
		}
	}
	return 0;
}

/* JSON "src": "ADDR", "src_prefix": N; text " src ADDR/N". */
static void print_addr(const struct nlattr **pt, int type)
{
	const struct nlattr *attr = pt[type];
	const struct nlattr *prefix = pt[prefix_attr(type)];
	const char *key = keys[type];
	char addr[INET6_ADDRSTRLEN], prefix_key[16];
	size_t len;

	if (!attr)
		return;
	len = mnl_attr_get_payload_len(attr);
	if ((len != 4 && len != 16) ||
	    !inet_ntop(len == 4 ? AF_INET : AF_INET6,
		       mnl_attr_get_payload(attr), addr, sizeof(addr)))
		return;		/* not an address we know */
	print_word(key);
	print_string(PRINT_ANY, key, " %s", addr);
	if (prefix) {
		snprintf(prefix_key, sizeof(prefix_key), "%s_prefix", key);
		print_u64(PRINT_ANY, prefix_key, "/%" PRIu64,
			  attr_uint(prefix));
	}
}

static int validate(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *pt[MAGNET_HEADER_MAX + 1];

	(void)stats;
	return config ? parse_header_attrs(config, pt) : 0;
}

static void print(const struct nlattr *config, const struct nlattr *stats)
{
	const struct nlattr *pt[MAGNET_HEADER_MAX + 1];
	const char *name;
	uint64_t proto;
	int type;

	(void)stats;
	if (!config || parse_header_attrs(config, pt))
		return;
	print_open_object("config");
	if (pt[MAGNET_HEADER_PROTO]) {
		proto = attr_uint(pt[MAGNET_HEADER_PROTO]);
		name = ip_protocol_name(proto);
		print_word("proto");
		print_u64(PRINT_JSON, "proto", NULL, proto);
		if (name)
			print_string(PRINT_TEXT, NULL, " %s", name);
		else
			print_u64(PRINT_TEXT, NULL, " %" PRIu64, proto);
	}
	print_addr(pt, MAGNET_HEADER_SRC);
	print_addr(pt, MAGNET_HEADER_DST);
	print_addr(pt, MAGNET_HEADER_HOST);
	for (type = MAGNET_HEADER_SPORT; type <= MAGNET_HEADER_PORT; type++) {
		if (!pt[type])
			continue;
		print_word(keys[type]);
		print_u64(PRINT_ANY, keys[type], " %" PRIu64,
			  attr_uint(pt[type]));
	}
	print_close_object();
}

const struct filter_type filter_header = {
	.name		= "header",
	.words		= words,
	.default_action	= MAGNET_FILTER_INCLUDE,
	.parse		= parse,
	.check		= check,
	.encode		= encode,
	.validate	= validate,
	.print		= print,
};

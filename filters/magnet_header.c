// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_header: filter type "header" -- match the packets (or
 * sockets) of network events by protocol, address prefix and port, the
 * fixed fields of a header rule. (Filter type "packet", magnet_packet,
 * takes tcpdump's whole language.)
 *
 *   magnetctl filter add rx header proto udp dport 5001
 *   magnetctl filter add rx exclude header host 10.0.0.0/8
 *
 * Works on events whose hits carry a packet or a socket
 * (magnet_event_object_type()): the packet probes, whose payload is the
 * struct magnet_packet parsed already; netif_receive, net_start_xmit,
 * skb_free (packets) and tcp_send (socket). Packets are read with
 * skb_header_pointer(), so headers in paged data are found too; a packet
 * that is not IPv4 or IPv6, or too short for what the rule asks, does not
 * match. IPv6 extension headers are skipped to find the ports.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/ipv6.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <net/genetlink.h>
#include <net/ipv6.h>

#define HAS_PROTO	BIT(0)
#define HAS_SPORT	BIT(1)
#define HAS_DPORT	BIT(2)
#define HAS_PORT	BIT(3)
#define HAS_PORTS	(HAS_SPORT | HAS_DPORT | HAS_PORT)

/* An address prefix; family 0 = not given. */
struct prefix {
	u8 family;		/* AF_INET, AF_INET6 */
	u8 len;			/* bits compared */
	u8 given_len;		/* whether the prefix length was given */
	union {
		__be32 a4;
		struct in6_addr a6;
	};
};

struct pktfilter {
	u8 has;
	u8 proto;
	u16 sport, dport, port;
	struct prefix src, dst, host;
};

/*
 * What a rule looks at: the packet or socket parsed as a packet probe's
 * record would show it (a packet probe's payload is that record's;
 * magnet_packet_parse_ip/sock() of the core for the others). NULL: none.
 */
static const struct magnet_packet *flow_from_hit(const struct magnet_hit *hit,
						 struct magnet_packet *pk)
{
	const struct sk_buff *skb = hit->object;
	bool ok;

	if (!hit->object)
		return NULL;
	if (magnet_event_object_type(hit->event) == MAGNET_OBJECT_PACKET)
		return hit->payload;
	memset(pk, 0, sizeof(*pk));
	switch (magnet_event_object_type(hit->event)) {
	case MAGNET_OBJECT_SKB_RX:
		ok = magnet_packet_parse_ip(skb, 0, pk);
		break;
	case MAGNET_OBJECT_SKB:
		ok = magnet_packet_parse_ip(skb, skb_network_offset(skb), pk);
		break;
	case MAGNET_OBJECT_SOCK:
		ok = magnet_packet_parse_sock(hit->object, pk);
		break;
	default:
		ok = false;
	}
	return ok ? pk : NULL;
}

static bool prefix_match(const struct prefix *p, u8 family, const void *addr)
{
	if (p->family != family)
		return false;
	if (family == AF_INET) {
		__be32 mask = p->len ? htonl(~0U << (32 - p->len)) : 0;

		return !((*(const __be32 *)addr ^ p->a4) & mask);
	}
	return ipv6_prefix_equal(addr, &p->a6, p->len);
}

static bool pktfilter_match(void *state, const struct magnet_hit *hit)
{
	const struct pktfilter *pf = state;
	const struct magnet_packet *pk;
	struct magnet_packet parsed;
	u16 sport, dport;

	pk = flow_from_hit(hit, &parsed);
	if (!pk)
		return false;
	if ((pf->has & HAS_PROTO) && pk->proto != pf->proto)
		return false;
	if (pf->src.family && !prefix_match(&pf->src, pk->family, pk->saddr))
		return false;
	if (pf->dst.family && !prefix_match(&pf->dst, pk->family, pk->daddr))
		return false;
	if (pf->host.family && !prefix_match(&pf->host, pk->family, pk->saddr) &&
	    !prefix_match(&pf->host, pk->family, pk->daddr))
		return false;
	if (!(pf->has & HAS_PORTS))
		return true;
	/* Set only for protocols that have ports, and once they are read. */
	if (!(pk->flags & MAGNET_PKT_ADDRS))
		return false;
	sport = ntohs(pk->sport);
	dport = ntohs(pk->dport);
	if ((pf->has & HAS_SPORT) && sport != pf->sport)
		return false;
	if ((pf->has & HAS_DPORT) && dport != pf->dport)
		return false;
	if ((pf->has & HAS_PORT) && sport != pf->port && dport != pf->port)
		return false;
	return true;
}

static const struct nla_policy pktfilter_policy[MAGNET_HEADER_MAX + 1] = {
	[MAGNET_HEADER_PROTO] = { .type = NLA_U8 },
	[MAGNET_HEADER_SRC] = { .type = NLA_BINARY, .len = 16 },
	[MAGNET_HEADER_SRC_PREFIX] = NLA_POLICY_MAX(NLA_U8, 128),
	[MAGNET_HEADER_DST] = { .type = NLA_BINARY, .len = 16 },
	[MAGNET_HEADER_DST_PREFIX] = NLA_POLICY_MAX(NLA_U8, 128),
	[MAGNET_HEADER_HOST] = { .type = NLA_BINARY, .len = 16 },
	[MAGNET_HEADER_HOST_PREFIX] = NLA_POLICY_MAX(NLA_U8, 128),
	[MAGNET_HEADER_SPORT] = { .type = NLA_U16 },
	[MAGNET_HEADER_DPORT] = { .type = NLA_U16 },
	[MAGNET_HEADER_PORT] = { .type = NLA_U16 },
};

/* Fill @p from address attribute @addr and prefix attribute @len. */
static int parse_prefix(struct prefix *p, struct nlattr *addr,
			struct nlattr *len, struct netlink_ext_ack *extack)
{
	unsigned int bits;

	if (!addr) {
		if (len) {
			NL_SET_ERR_MSG_ATTR(extack, len,
					    "a prefix length needs its address");
			return -EINVAL;
		}
		return 0;
	}
	if (nla_len(addr) == 4) {
		p->family = AF_INET;
		bits = 32;
		memcpy(&p->a4, nla_data(addr), 4);
	} else if (nla_len(addr) == 16) {
		p->family = AF_INET6;
		bits = 128;
		memcpy(&p->a6, nla_data(addr), 16);
	} else {
		NL_SET_ERR_MSG_ATTR(extack, addr,
				    "an address is 4 (IPv4) or 16 (IPv6) bytes");
		return -EINVAL;
	}
	p->len = bits;
	if (len) {
		p->len = nla_get_u8(len);
		p->given_len = 1;
		if (p->len > bits) {
			NL_SET_ERR_MSG_ATTR(extack, len,
					    "prefix longer than the address");
			return -EINVAL;
		}
	}
	/* Keep only the network bits, as they are compared. */
	if (p->family == AF_INET)
		p->a4 &= p->len ? htonl(~0U << (32 - p->len)) : 0;
	else
		ipv6_addr_prefix(&p->a6, nla_data(addr), p->len);
	return 0;
}

static void *pktfilter_create(struct magnet_filter_ctx *ctx,
			      struct nlattr **tb,
			      struct netlink_ext_ack *extack)
{
	struct pktfilter *pf;
	int err;

	switch (magnet_event_object_type(ctx->event)) {
	case MAGNET_OBJECT_PACKET:
	case MAGNET_OBJECT_SKB:
	case MAGNET_OBJECT_SKB_RX:
	case MAGNET_OBJECT_SOCK:
		break;
	default:
		NL_SET_ERR_MSG(extack,
			       "the header filter needs a probe whose hits concern a packet or socket (a packet probe, netif_receive, net_start_xmit, skb_free, tcp_send)");
		return ERR_PTR(-EOPNOTSUPP);
	}

	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return ERR_PTR(-ENOMEM);
	err = parse_prefix(&pf->src, tb[MAGNET_HEADER_SRC],
			   tb[MAGNET_HEADER_SRC_PREFIX], extack) ?:
	      parse_prefix(&pf->dst, tb[MAGNET_HEADER_DST],
			   tb[MAGNET_HEADER_DST_PREFIX], extack) ?:
	      parse_prefix(&pf->host, tb[MAGNET_HEADER_HOST],
			   tb[MAGNET_HEADER_HOST_PREFIX], extack);
	if (err) {
		kfree(pf);
		return ERR_PTR(err);
	}
	if (tb[MAGNET_HEADER_PROTO]) {
		pf->has |= HAS_PROTO;
		pf->proto = nla_get_u8(tb[MAGNET_HEADER_PROTO]);
	}
	if (tb[MAGNET_HEADER_SPORT]) {
		pf->has |= HAS_SPORT;
		pf->sport = nla_get_u16(tb[MAGNET_HEADER_SPORT]);
	}
	if (tb[MAGNET_HEADER_DPORT]) {
		pf->has |= HAS_DPORT;
		pf->dport = nla_get_u16(tb[MAGNET_HEADER_DPORT]);
	}
	if (tb[MAGNET_HEADER_PORT]) {
		pf->has |= HAS_PORT;
		pf->port = nla_get_u16(tb[MAGNET_HEADER_PORT]);
	}
	if (!pf->has && !pf->src.family && !pf->dst.family &&
	    !pf->host.family) {
		kfree(pf);
		NL_SET_ERR_MSG(extack,
			       "the header filter needs a protocol, an address or a port");
		return ERR_PTR(-EINVAL);
	}
	return pf;
}

static int put_prefix(struct sk_buff *msg, const struct prefix *p,
		      int addr_type, int len_type)
{
	if (!p->family)
		return 0;
	if (nla_put(msg, addr_type, p->family == AF_INET ? 4 : 16,
		    p->family == AF_INET ? (void *)&p->a4 : (void *)&p->a6))
		return -EMSGSIZE;
	if (p->given_len && nla_put_u8(msg, len_type, p->len))
		return -EMSGSIZE;
	return 0;
}

static int pktfilter_fill_config(struct sk_buff *msg, void *state)
{
	const struct pktfilter *pf = state;

	if (((pf->has & HAS_PROTO) &&
	     nla_put_u8(msg, MAGNET_HEADER_PROTO, pf->proto)) ||
	    put_prefix(msg, &pf->src, MAGNET_HEADER_SRC,
		       MAGNET_HEADER_SRC_PREFIX) ||
	    put_prefix(msg, &pf->dst, MAGNET_HEADER_DST,
		       MAGNET_HEADER_DST_PREFIX) ||
	    put_prefix(msg, &pf->host, MAGNET_HEADER_HOST,
		       MAGNET_HEADER_HOST_PREFIX) ||
	    ((pf->has & HAS_SPORT) &&
	     nla_put_u16(msg, MAGNET_HEADER_SPORT, pf->sport)) ||
	    ((pf->has & HAS_DPORT) &&
	     nla_put_u16(msg, MAGNET_HEADER_DPORT, pf->dport)) ||
	    ((pf->has & HAS_PORT) &&
	     nla_put_u16(msg, MAGNET_HEADER_PORT, pf->port)))
		return -EMSGSIZE;
	return 0;
}

static void pktfilter_destroy(void *state)
{
	kfree(state);
}

static struct magnet_filter_type pktfilter_type = {
	.name = "header",
	.policy = pktfilter_policy,
	.maxattr = MAGNET_HEADER_MAX,
	.create = pktfilter_create,
	.match = pktfilter_match,
	.fill_config = pktfilter_fill_config,
	.destroy = pktfilter_destroy,
};

static int __init pktfilter_init(void)
{
	return magnet_filter_type_register(&pktfilter_type);
}

static void __exit pktfilter_exit(void)
{
	magnet_filter_type_unregister(&pktfilter_type);
}

module_init(pktfilter_init);
module_exit(pktfilter_exit);

MODULE_DESCRIPTION("magnet filter type \"header\": protocol, address prefix and port");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");
/* the module's name before it was named after its filter type */
MODULE_ALIAS("magnet_pktfilter");

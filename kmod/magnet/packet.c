// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: packet probes, the layers of the probe sets udp-send, tcp-send,
 * udp-recv and tcp-recv ("Packet probes" in the uapi header).
 *
 * Each layer is a predefined probe (probe.c hooks it) with a point that
 * says where the packet, its socket and the application's data are among
 * the probed function's arguments. magnet_packet_hit() turns a hit into a
 * struct magnet_packet and up to a snap length of data, reserved in the
 * buffer and filled in place: nothing big goes on the stack. Headers are
 * read with skb_header_pointer()/skb_copy_bits(), so paged packets are
 * read correctly; the application's bytes, still in user memory at the
 * send call, with copy_from_user_nofault(), which never faults.
 *
 * Traffic that is not the set's protocol over IPv4 or IPv6 returns before
 * anything is counted: a set's probes on shared points (the devices) log
 * only their own packets.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/if_packet.h>
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/socket.h>
#include <linux/tcp.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/udp.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "compat.h"
#include "magnet.h"
#include "writer.h"

/* Where a point finds what it needs among the function's arguments. */
enum packet_args {
	ARGS_SOCKET_MSG,	/* (struct socket *, struct msghdr *, size_t) */
	ARGS_SK_MSG,		/* (struct sock *, struct msghdr *, size_t) */
	/* (struct sock *, struct sk_buff *): a TCP segment, before IP */
	ARGS_SK_SEGMENT,
	ARGS_SKB0,		/* (struct sk_buff *, ...), network header set */
	ARGS_SKB1,		/* (_, struct sk_buff *, ...) */
	ARGS_SKB2,		/* (_, _, struct sk_buff *) */
	/* (struct sk_buff *): data at the network header, from a device */
	ARGS_SKB_RX,
	ARGS_SKB_COPY,		/* (struct sk_buff *, bytes copied) */
};

struct magnet_packet_point {
	u8 layer;		/* enum magnet_layer */
	u8 proto;		/* IPPROTO_UDP or IPPROTO_TCP */
	u8 args;		/* enum packet_args */
};

/* What one hit is about, before it is written out. */
struct packet_hit {
	const struct sk_buff *skb;
	const struct sock *sk;
	const struct msghdr *msg;
	int data_off;		/* where data starts, from skb->data */
	u32 data_avail;		/* bytes there */
	u32 ip_len;		/* the IP packet's length, where it is read */
	struct magnet_packet pk;
};

static bool proto_has_ports(u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	       proto == IPPROTO_UDPLITE || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_DCCP;
}

static void put_ports(struct magnet_packet *pk, const struct sk_buff *skb,
		      int off)
{
	struct tcphdr _th;
	const struct tcphdr *th;
	__be16 _ports[2];
	const __be16 *ports;

	if (!proto_has_ports(pk->proto))
		return;
	if (pk->proto == IPPROTO_TCP) {
		th = skb_header_pointer(skb, off, sizeof(_th), &_th);
		if (!th)
			return;
		pk->sport = th->source;
		pk->dport = th->dest;
		pk->seq = ntohl(th->seq);
		pk->tcp_flags = tcp_flag_byte(th);
	} else {
		ports = skb_header_pointer(skb, off, sizeof(_ports), _ports);
		if (!ports)
			return;
		pk->sport = ports[0];
		pk->dport = ports[1];
	}
	pk->flags |= MAGNET_PKT_ADDRS;
}

/**
 * magnet_packet_parse_ip - what a packet's headers say, as a record shows it
 * @skb:	the packet
 * @off:	where its IP header is, from skb->data (may be before it)
 * @pk:		filled in: family, protocol, length, addresses, and for
 *		protocols with ports the ports (MAGNET_PKT_ADDRS), for TCP
 *		also the sequence number and flags
 *
 * Any context. Used by the packet probes and the packet filter module.
 * Return: false if there is no IPv4 or IPv6 header at @off.
 */
bool magnet_packet_parse_ip(const struct sk_buff *skb, int off,
			    struct magnet_packet *pk)
{
	u8 _ver;
	const u8 *ver;

	if (skb->data + off < skb->head)
		return false;
	ver = skb_header_pointer(skb, off, 1, &_ver);
	if (!ver)
		return false;
	if (*ver >> 4 == 4) {
		struct iphdr _iph;
		const struct iphdr *iph;

		iph = skb_header_pointer(skb, off, sizeof(_iph), &_iph);
		if (!iph || iph->ihl < 5)
			return false;
		pk->family = AF_INET;
		pk->proto = iph->protocol;
		pk->len = ntohs(iph->tot_len);
		memcpy(pk->saddr, &iph->saddr, 4);
		memcpy(pk->daddr, &iph->daddr, 4);
		/* Only the first fragment has the ports. */
		if (!(iph->frag_off & htons(IP_OFFSET)))
			put_ports(pk, skb, off + iph->ihl * 4);
		return true;
	}
	if (*ver >> 4 == 6) {
		struct ipv6hdr _ip6h;
		const struct ipv6hdr *ip6h;
		__be16 frag_off = 0;
		u8 nexthdr;
		int l4;

		ip6h = skb_header_pointer(skb, off, sizeof(_ip6h), &_ip6h);
		if (!ip6h)
			return false;
		pk->family = AF_INET6;
		pk->len = ntohs(ip6h->payload_len) + sizeof(*ip6h);
		memcpy(pk->saddr, &ip6h->saddr, 16);
		memcpy(pk->daddr, &ip6h->daddr, 16);
		nexthdr = ip6h->nexthdr;
		l4 = off + sizeof(*ip6h);
		/* Offsets before skb->data are fine: only -1 is an error. */
		if (ipv6_ext_hdr(nexthdr)) {
			l4 = ipv6_skip_exthdr(skb, l4, &nexthdr, &frag_off);
			if (l4 == -1)
				return true;
		}
		pk->proto = nexthdr;
		if (!(frag_off & htons(IP6_OFFSET)))
			put_ports(pk, skb, l4);
		return true;
	}
	return false;
}
EXPORT_SYMBOL_GPL(magnet_packet_parse_ip);

/**
 * magnet_packet_parse_sock - a socket's family, protocol, addresses, ports
 * @sk:		the socket
 * @pk:		filled in (ports and MAGNET_PKT_ADDRS for protocols with
 *		ports)
 *
 * Any context. Return: false if it is not an IPv4 or IPv6 socket.
 */
bool magnet_packet_parse_sock(const struct sock *sk, struct magnet_packet *pk)
{
	pk->family = sk->sk_family;
	pk->proto = sk->sk_protocol;
	if (pk->family == AF_INET) {
		memcpy(pk->saddr, &sk->sk_rcv_saddr, 4);
		memcpy(pk->daddr, &sk->sk_daddr, 4);
#if IS_ENABLED(CONFIG_IPV6)
	} else if (pk->family == AF_INET6) {
		memcpy(pk->saddr, &sk->sk_v6_rcv_saddr, 16);
		memcpy(pk->daddr, &sk->sk_v6_daddr, 16);
#endif
	} else {
		return false;
	}
	if (proto_has_ports(pk->proto)) {
		pk->sport = inet_sk(sk)->inet_sport;
		pk->dport = sk->sk_dport;
		pk->flags |= MAGNET_PKT_ADDRS;
	}
	return true;
}
EXPORT_SYMBOL_GPL(magnet_packet_parse_sock);

/* An unconnected socket's destination is the call's address. */
static void parse_msg_name(const struct msghdr *msg, struct magnet_packet *pk)
{
	const struct sockaddr_in *sin = msg->msg_name;
	const struct sockaddr_in6 *sin6 = msg->msg_name;

	if (!sin)
		return;
	if (pk->family == AF_INET && msg->msg_namelen >= sizeof(*sin) &&
	    sin->sin_family == AF_INET) {
		memcpy(pk->daddr, &sin->sin_addr, 4);
		pk->dport = sin->sin_port;
	} else if (pk->family == AF_INET6 &&
		   msg->msg_namelen >= sizeof(*sin6) &&
		   sin6->sin6_family == AF_INET6) {
		memcpy(pk->daddr, &sin6->sin6_addr, 16);
		pk->dport = sin6->sin6_port;
	}
}

/* Where the application's bytes are: the first segment of the call. */
static const void __user *msg_data(const struct msghdr *msg, u32 *len)
{
	const struct iov_iter *it = &msg->msg_iter;
	size_t n = 0;
	const void __user *base = NULL;

	if (iter_is_ubuf(it)) {
		base = it->ubuf + it->iov_offset;
		n = it->count;
	} else if (iter_is_iovec(it) && it->nr_segs) {
		base = magnet_iter_iov(it)->iov_base + it->iov_offset;
		n = magnet_iter_iov(it)->iov_len - it->iov_offset;
	}
	*len = min_t(size_t, n, it->count);
	return base;
}

/* Fill @h from the probed function's arguments; false: not ours. */
static bool packet_parse(const struct magnet_packet_point *pt,
			 unsigned long a0, unsigned long a1, unsigned long a2,
			 struct packet_hit *h)
{
	struct magnet_packet *pk = &h->pk;
	const struct sk_buff *skb = NULL;
	int off;

	switch (pt->args) {
	case ARGS_SOCKET_MSG:
		h->sk = ((const struct socket *)a0)->sk;
		fallthrough;
	case ARGS_SK_MSG:
		if (pt->args == ARGS_SK_MSG)
			h->sk = (const struct sock *)a0;
		h->msg = (const struct msghdr *)a1;
		if (!h->sk || !magnet_packet_parse_sock(h->sk, pk))
			return false;
		parse_msg_name(h->msg, pk);
		pk->len = a2;
		break;
	case ARGS_SK_SEGMENT:
		h->sk = (const struct sock *)a0;
		skb = (const struct sk_buff *)a1;
		if (!magnet_packet_parse_sock(h->sk, pk))
			return false;
		off = skb_transport_offset(skb);
		put_ports(pk, skb, off);
		pk->len = skb->len - off;
		pk->flags |= MAGNET_PKT_DATA_TRANSPORT;
		h->data_off = off;
		h->data_avail = pk->len;
		break;
	case ARGS_SKB0:
	case ARGS_SKB1:
	case ARGS_SKB2:
	case ARGS_SKB_COPY:
		skb = (const struct sk_buff *)(pt->args == ARGS_SKB1 ? a1 :
					       pt->args == ARGS_SKB2 ? a2 : a0);
		off = skb_network_offset(skb);
		fallthrough;
	case ARGS_SKB_RX:
		if (pt->args == ARGS_SKB_RX) {
			skb = (const struct sk_buff *)a0;
			off = 0;
			if (skb->protocol != htons(ETH_P_IP) &&
			    skb->protocol != htons(ETH_P_IPV6))
				return false;
		}
		if (!magnet_packet_parse_ip(skb, off, pk))
			return false;
		pk->flags |= MAGNET_PKT_DATA_NET;
		h->data_off = off;
		h->data_avail = clamp_t(s64, (s64)skb->len - off, 0, pk->len);
		h->ip_len = pk->len;
		if (pt->args == ARGS_SKB_COPY)
			pk->len = a1;
		break;
	default:
		return false;
	}
	if (pk->proto != pt->proto)
		return false;
	if (skb) {
		h->skb = skb;
		if (!h->sk)
			h->sk = skb->sk;
		/*
		 * Once queued to a socket, skb->dev is UDP's scratch space
		 * (skb->dev_scratch): the device is known up to the
		 * protocol layer only.
		 */
		if (skb->dev && pt->layer < MAGNET_LAYER_SOCK_QUEUE) {
			pk->ifindex = skb->dev->ifindex;
			memcpy(pk->dev, skb->dev->name, sizeof(pk->dev));
		}
	}
	pk->skb = (unsigned long)skb;
	pk->sock = (unsigned long)h->sk;
	pk->layer = pt->layer;
	return true;
}

/* Copy the data into the record; returns the bytes copied. */
static u32 packet_copy(struct packet_hit *h, void *to, u32 len)
{
	const void __user *ubase;
	u32 ulen;

	if (!len)
		return 0;
	if (h->skb) {
		if (skb_copy_bits(h->skb, h->data_off, to, len))
			return 0;
		return len;
	}
	ubase = msg_data(h->msg, &ulen);
	if (!ubase)
		return 0;
	len = min(len, ulen);
	h->pk.flags |= MAGNET_PKT_DATA_USER;
	if (copy_from_user_nofault(to, ubase, len)) {
		h->pk.flags |= MAGNET_PKT_FAULT;
		return 0;
	}
	return len;
}

/**
 * magnet_packet_hit - log one hit of a packet probe
 * @ev:		the probe's event
 * @pt:		its point (the catalog entry's)
 * @a0:		the probed function's first argument (tracepoints: the first)
 * @a1:		the second
 * @a2:		the third
 *
 * Probe context.
 */
void magnet_packet_hit(struct magnet_event *ev,
		       const struct magnet_packet_point *pt,
		       unsigned long a0, unsigned long a1, unsigned long a2)
{
	struct packet_hit h = {};
	struct magnet_record *rec;
	struct magnet_packet *pk;
	enum magnet_admit admit;
	u32 want, snaplen;

	/* Parsed first: a hit that is no IP packet is not a hit at all. */
	if (!READ_ONCE(ev->enabled) || !packet_parse(pt, a0, a1, a2, &h))
		return;
	admit = magnet_event_admit(ev);
	if (admit == MAGNET_ADMIT_NO)
		return;
	if (h.msg) {
		msg_data(h.msg, &want);
		h.data_avail = min_t(u64, want, h.pk.len);
	}
	want = h.data_avail;
	snaplen = READ_ONCE(ev->snaplen);
	if (snaplen && want > snaplen)
		want = snaplen;
	want = min_t(u32, want, U16_MAX);

	static_assert(sizeof(*pk) == offsetof(struct magnet_packet, data));
	rec = magnet_event_reserve(ev, admit, h.skb ? h.pk.skb : h.pk.sock,
				   &h.pk, sizeof(h.pk), sizeof(h.pk) + want,
				   &h);
	if (IS_ERR_OR_NULL(rec))
		return;
	rec->flags |= MAGNET_RF_PACKET;
	pk = (struct magnet_packet *)rec->payload;
	want = rec->size - sizeof(*rec) - sizeof(*pk);
	h.pk.caplen = packet_copy(&h, pk->data, want);
	if (h.pk.caplen < want)
		memset(pk->data + h.pk.caplen, 0, want - h.pk.caplen);
	if (h.pk.caplen < h.data_avail)
		rec->flags |= MAGNET_RF_TRUNCATED;
	memcpy(pk, &h.pk, sizeof(*pk));
	magnet_event_commit(ev, rec);
}

/* --- the packet as tcpdump would see it, for filter modules ---------------- */

/*
 * Built header bytes: @n of them at @at, their value and unknown bits,
 * and (into @field, where it is not NULL) the field of struct
 * magnet_sent they come from, @f (its words each their own).
 */
static __always_inline void built_put(struct magnet_pkt_view *v,
				      unsigned int at, const void *val,
				      unsigned int n, u8 unk, bool mark,
				      u8 *field, unsigned int f)
{
	unsigned int i;

	memcpy(v->built + at, val, n);
	if (mark)
		memset(v->unknown + at, unk, n);
	if (field)
		for (i = 0; i < n; i++)
			field[at + i] = f + i / 4;
}

/*
 * An address (or port) of zero at a send call: not chosen yet (an
 * unbound socket's source is picked by the route, its port when it is
 * bound). Unknown, not zero.
 */
static u8 addr_unknown(const u8 *addr, unsigned int len)
{
	return magnet_addr_unset(addr, len) ? 0xff : 0;
}

/*
 * Word stores: gcc makes a memset() of this size a rep stos, which is
 * slow to start on hardware and far slower under emulation.
 */
static __always_inline void view_fill(u64 *w, u64 value)
{
	static_assert(MAGNET_PKT_VIEW_BUILT == 8 * 8);
	w[0] = value;
	w[1] = value;
	w[2] = value;
	w[3] = value;
	w[4] = value;
	w[5] = value;
	w[6] = value;
	w[7] = value;
}

/*
 * IP and UDP or TCP headers from what the record says (@pk), in front of
 * what follows (@l4: whether the transport header is built too). What a
 * send call does not know (TTL, IP id, ToS, flow label, checksums, the
 * TCP header's other fields, an address or port not chosen yet) is zero
 * and marked unknown; the first fragment's offset (zero) is known, its
 * flags are not.
 */
static __always_inline void view_build_as(struct magnet_pkt_view *v,
					  const struct magnet_packet *pk,
					  bool l4, bool mark, u8 *field)
{
	unsigned int ip = pk->family == AF_INET6 ? sizeof(struct ipv6hdr) :
						   sizeof(struct iphdr);
	unsigned int n = ip;
	u8 lenunk = v->len_known ? 0 : 0xff;
	__be16 be;

	view_fill(v->built_w, 0);
	if (mark)
		view_fill(v->unknown_w, ~0ULL);
	if (pk->family == AF_INET6) {
		v->built[0] = 0x60;
		if (mark)
			v->unknown[0] = 0x0f;
		be = v->len_known ? htons(v->len - ip) : 0;
		built_put(v, 4, &be, 2, lenunk, mark, field, MAGNET_SENT_IPLEN);
		built_put(v, 6, &pk->proto, 1, 0, mark, field, MAGNET_SENT_NONE);
		built_put(v, 8, pk->saddr, 16, addr_unknown(pk->saddr, 16), mark,
			  field, MAGNET_SENT_SADDR);
		built_put(v, 24, pk->daddr, 16, addr_unknown(pk->daddr, 16), mark,
			  field, MAGNET_SENT_DADDR);
	} else {
		v->built[0] = 0x45;
		be = v->len_known ? htons(v->len) : 0;
		built_put(v, 2, &be, 2, lenunk, mark, field, MAGNET_SENT_IPLEN);
		if (mark) {
			v->unknown[0] = 0;
			v->unknown[6] = 0xe0;	/* flags; the offset is 0 */
			v->unknown[7] = 0;
		}
		built_put(v, 9, &pk->proto, 1, 0, mark, field, MAGNET_SENT_NONE);
		built_put(v, 12, pk->saddr, 4, addr_unknown(pk->saddr, 4), mark,
			  field, MAGNET_SENT_SADDR);
		built_put(v, 16, pk->daddr, 4, addr_unknown(pk->daddr, 4), mark,
			  field, MAGNET_SENT_DADDR);
	}
	if (l4 && (pk->flags & MAGNET_PKT_ADDRS)) {
		built_put(v, n, &pk->sport, 2, pk->sport ? 0 : 0xff, mark,
			  field, MAGNET_SENT_SPORT);
		built_put(v, n + 2, &pk->dport, 2, pk->dport ? 0 : 0xff, mark,
			  field, MAGNET_SENT_DPORT);
		if (pk->proto == IPPROTO_UDP) {
			be = v->len_known ? htons(v->len - ip) : 0;
			built_put(v, n + 4, &be, 2, lenunk, mark, field,
				  MAGNET_SENT_UDPLEN);
			n += sizeof(struct udphdr);
		} else if (pk->proto == IPPROTO_TCP) {
			n += sizeof(struct tcphdr);
		} else {
			n += 4;
		}
	}
	v->nbuilt = n;
}

static void view_build(struct magnet_pkt_view *v, const struct magnet_packet *pk,
		       bool l4)
{
	view_build_as(v, pk, l4, true, NULL);
}

static void send_len(struct magnet_pkt_view *v, const struct magnet_packet *pk)
{
	v->len = magnet_sent_len(pk);
	v->len_known = v->len != 0;
}

/* A socket's packet: what the socket says, its length unknown. */
static bool view_sock(const struct sock *sk, struct magnet_pkt_view *v)
{
	struct magnet_packet pk = {};

	if (!magnet_packet_parse_sock(sk, &pk))
		return false;
	v->protocol = pk.family == AF_INET6 ? ETH_P_IPV6 : ETH_P_IP;
	v->pkttype = PACKET_OUTGOING;
	view_build(v, &pk, true);
	return true;
}

static void view_dev(struct magnet_pkt_view *v, const struct net_device *dev)
{
	v->ifindex_known = true;
	v->ifindex = dev->ifindex;
	v->hatype = dev->type;
}

/* The packet in @skb from @off (from skb->data), @avail bytes of it. */
static void view_skb(struct magnet_pkt_view *v, const struct sk_buff *skb,
		     int off, u32 avail)
{
	s64 lin = (s64)skb_headlen(skb) - off;

	v->skb = skb;
	v->off = off;
	v->avail = avail;
	if (skb->data + off >= skb->head && lin > 0) {
		v->linear = skb->data + off;
		v->nlinear = min_t(s64, lin, avail);
	}
}

/* A packet probe's hit (struct packet_hit). */
static void view_packet(const struct packet_hit *h, struct magnet_pkt_view *v)
{
	const struct magnet_packet *pk = &h->pk;
	bool send = pk->layer <= MAGNET_LAYER_DEV_XMIT;
	u32 ulen;

	v->protocol = pk->family == AF_INET6 ? ETH_P_IPV6 : ETH_P_IP;
	v->pkttype = send ? PACKET_OUTGOING :
		     h->skb ? h->skb->pkt_type : PACKET_HOST;
	/* parse set pk->ifindex only where skb->dev is the device */
	if (pk->ifindex)
		view_dev(v, h->skb->dev);
	if (pk->flags & MAGNET_PKT_DATA_NET) {
		v->len = h->ip_len;
		v->len_known = true;
		view_skb(v, h->skb, h->data_off, h->data_avail);
		return;
	}
	if (pk->flags & MAGNET_PKT_DATA_TRANSPORT) {
		/* a TCP segment: its header is there, IP's is not yet */
		v->len = (pk->family == AF_INET6 ? sizeof(struct ipv6hdr) :
						   sizeof(struct iphdr)) +
			 h->data_avail;
		v->len_known = true;
		view_build(v, pk, false);
		v->skb = h->skb;
		v->off = h->data_off;
		v->avail = h->data_avail;
		return;
	}
	send_len(v, pk);
	view_build(v, pk, true);
	if (pk->proto == IPPROTO_UDP && h->msg) {
		v->ubuf = msg_data(h->msg, &ulen);
		v->avail = min(ulen, pk->len);
	}
}

enum magnet_built_shape magnet_sock_sent(const struct magnet_hit *hit,
					 struct magnet_packet *room,
					 struct magnet_sent *s,
					 unsigned int *unknown)
{
	if (!hit->object || hit->event->object_type != MAGNET_OBJECT_SOCK)
		return MAGNET_BUILT_NONE;
	/* as view_sock(): a TCP socket's, its length not known */
	memset(room, 0, sizeof(*room));
	if (!magnet_packet_parse_sock(hit->object, room) ||
	    room->proto != IPPROTO_TCP)
		return MAGNET_BUILT_NONE;
	return magnet_sent_shape(room, s, unknown);
}
EXPORT_SYMBOL_GPL(magnet_sock_sent);

enum magnet_built_shape magnet_packet_built(const struct magnet_hit *hit,
					    struct magnet_pkt_view *v,
					    unsigned int *unknown)
{
	/* (filled where it is used: not zeroed on every hit first) */
	struct magnet_packet room __uninitialized;
	enum magnet_built_shape shape;
	struct magnet_sent s;

	shape = magnet_packet_sent(hit, &room, &s, unknown);
	if (shape == MAGNET_BUILT_NONE)
		return MAGNET_BUILT_NONE;
	v->len_known = s.len != 0;
	v->len = s.len;
	v->protocol = s.pk->family == AF_INET6 ? ETH_P_IPV6 : ETH_P_IP;
	view_build_as(v, s.pk, true, false, NULL);
	return shape;
}
EXPORT_SYMBOL_GPL(magnet_packet_built);

/*
 * A made-up hit for magnet_packet_template(): @b in every byte of its
 * addresses and ports, but for the source's fields in @unknown (zero: not
 * known yet, which view_build() marks so), and @len bytes sent.
 */
static void template_hit(struct magnet_pkt_view *v, bool ipv6,
			 enum magnet_built_shape shape, unsigned int unknown,
			 u8 b, u32 len, u8 *field)
{
	struct magnet_packet pk = {};

	pk.family = ipv6 ? AF_INET6 : AF_INET;
	pk.proto = shape == MAGNET_BUILT_UDP ? IPPROTO_UDP : IPPROTO_TCP;
	pk.flags = MAGNET_PKT_ADDRS;
	memset(pk.saddr, unknown & MAGNET_BUILT_SADDR_UNKNOWN ? 0 : b,
	       sizeof(pk.saddr));
	memset(pk.daddr, b, sizeof(pk.daddr));
	pk.sport = unknown & MAGNET_BUILT_SPORT_UNKNOWN ? 0 : htons(b * 0x101);
	pk.dport = htons(b * 0x101);
	pk.len = len;
	send_len(v, &pk);
	view_build_as(v, &pk, true, true, field);
}

void magnet_packet_template(bool ipv6, enum magnet_built_shape shape,
			    unsigned int unknown,
			    struct magnet_pkt_template *t)
{
	struct magnet_pkt_view a, b;
	u8 differ[MAGNET_PKT_VIEW_BUILT] = {};
	unsigned int i, n;

	/*
	 * Hits whose known fields differ in every bit between them: the
	 * addresses and ports 0x55 and 0xaa in every byte; the lengths
	 * (IPv4's 28 bytes more than what is sent, IPv6's payload and UDP's
	 * 8 more) 0x5555 and 0xaaaa in one of them each.
	 */
	memset(t->field, MAGNET_SENT_NONE, sizeof(t->field));
	template_hit(&a, ipv6, shape, unknown, 0x55, 0x5555 - 28, t->field);
	for (n = 1; n < 4; n++) {
		template_hit(&b, ipv6, shape, unknown, n & 1 ? 0xaa : 0x55,
			     (n & 1 ? 0xaaaa : 0x5555) - (n & 2 ? 8 : 28), NULL);
		for (i = 0; i < a.nbuilt; i++)
			differ[i] |= a.built[i] ^ b.built[i];
	}
	t->protocol = ipv6 ? ETH_P_IPV6 : ETH_P_IP;
	t->nbuilt = a.nbuilt;
	for (i = 0; i < a.nbuilt; i++) {
		t->known[i] = ~a.unknown[i];
		t->konst[i] = t->known[i] & ~differ[i];
		t->val[i] = a.built[i] & t->konst[i];
	}
}
EXPORT_SYMBOL_GPL(magnet_packet_template);

const struct sk_buff *magnet_packet_skb(const struct magnet_hit *hit,
					u16 *protocol)
{
	const struct packet_hit *h;
	const struct sk_buff *skb;

	if (!hit->object)
		return NULL;
	switch (hit->event->object_type) {
	case MAGNET_OBJECT_PACKET:
		/* as view_packet() shows it: from h->data_off, no header built */
		h = hit->object;
		if (!(h->pk.flags & MAGNET_PKT_DATA_NET) ||
		    h->data_off != skb_network_offset(h->skb))
			return NULL;
		*protocol = h->pk.family == AF_INET6 ? ETH_P_IPV6 : ETH_P_IP;
		return h->skb;
	case MAGNET_OBJECT_SKB_RX:
		/* magnet_packet_view() shows it from skb->data */
		skb = hit->object;
		if (skb_network_offset(skb))
			return NULL;
		break;
	case MAGNET_OBJECT_SKB:
		skb = hit->object;
		break;
	default:
		return NULL;
	}
	*protocol = ntohs(skb->protocol);
	return skb;
}
EXPORT_SYMBOL_GPL(magnet_packet_skb);

/**
 * magnet_packet_view - a hit's packet, as tcpdump -i any would see it
 * @hit:	a hit of an event of object type SKB, SKB_RX, SOCK or PACKET
 * @v:		filled in (see struct magnet_pkt_view)
 *
 * Any context. Return: false if the hit shows no packet.
 */
bool magnet_packet_view(const struct magnet_hit *hit,
			struct magnet_pkt_view *v)
{
	const struct sk_buff *skb = hit->object;

	v->hatype = 0;
	v->ifindex_known = false;
	v->ifindex = 0;
	v->len = 0;
	v->len_known = false;
	v->nbuilt = 0;
	v->skb = NULL;
	v->off = 0;
	v->avail = 0;
	v->ubuf = NULL;
	v->linear = NULL;
	v->nlinear = 0;
	if (!skb)
		return false;
	switch (hit->event->object_type) {
	case MAGNET_OBJECT_PACKET:
		view_packet(hit->object, v);
		return true;
	case MAGNET_OBJECT_SOCK:
		return view_sock(hit->object, v);
	case MAGNET_OBJECT_SKB_RX:
		view_dev(v, skb->dev);
		v->pkttype = skb->pkt_type;
		break;
	case MAGNET_OBJECT_SKB:
		/* skb->dev may be a protocol's scratch space by now */
		v->off = skb_network_offset(skb);
		v->pkttype = skb->pkt_type;
		break;
	default:
		return false;
	}
	v->protocol = ntohs(skb->protocol);
	v->len = max_t(s64, (s64)skb->len - v->off, 0);
	v->len_known = true;
	view_skb(v, skb, v->off, v->len);
	return true;
}
EXPORT_SYMBOL_GPL(magnet_packet_view);

/* A load across the end of the built headers, byte by byte. */
static int view_straddle(const struct magnet_pkt_view *v, u32 off, u32 size,
			 u32 *val, u32 *unk)
{
	u32 b, bu, i;

	*val = 0;
	*unk = 0;
	for (i = 0; i < size; i++, off++) {
		if (off < v->nbuilt) {
			b = v->built[off];
			bu = v->unknown[off];
		} else if (magnet_pkt_view_load(v, off, 1, &b, &bu)) {
			return -ERANGE;
		}
		*val = *val << 8 | b;
		*unk = *unk << 8 | bu;
	}
	return 0;
}

/**
 * magnet_pkt_view_load - a big-endian word, half word or byte of a packet
 * @v:		from magnet_packet_view()
 * @off:	from the network header
 * @size:	1, 2 or 4
 * @val:	the value, host order (unknown bits read as zero)
 * @unk:	its bits the probe does not know (0: all known)
 *
 * Any context. Return: 0, or -ERANGE past the end of the packet or where
 * its bytes cannot be read.
 */
int magnet_pkt_view_load(const struct magnet_pkt_view *v, u32 off, u32 size,
			 u32 *val, u32 *unk)
{
	u8 buf[4];
	const u8 *p;
	u32 rel;

	if (off < v->nbuilt) {
		if (size > v->nbuilt - off)
			return view_straddle(v, off, size, val, unk);
		p = v->built + off;
		*val = size == 4 ? get_unaligned_be32(p) :
		       size == 2 ? get_unaligned_be16(p) : *p;
		p = v->unknown + off;
		*unk = size == 4 ? get_unaligned_be32(p) :
		       size == 2 ? get_unaligned_be16(p) : *p;
		return 0;
	}
	rel = off - v->nbuilt;
	if (rel >= v->avail || size > v->avail - rel)
		return -ERANGE;
	*unk = 0;
	if (v->skb) {
		p = skb_header_pointer(v->skb, v->off + rel, size, buf);
		if (!p)
			return -ERANGE;
	} else if (v->ubuf && !copy_from_user_nofault(buf, v->ubuf + rel,
						     size)) {
		p = buf;
	} else {
		/* the application's bytes, out of reach: unknown, not absent */
		*val = 0;
		*unk = size == 4 ? U32_MAX : size == 2 ? U16_MAX : U8_MAX;
		return 0;
	}
	*val = size == 4 ? get_unaligned_be32(p) :
	       size == 2 ? get_unaligned_be16(p) : *p;
	return 0;
}
EXPORT_SYMBOL_GPL(magnet_pkt_view_load);

/* --- the sets -------------------------------------------------------------- */

#define POINT(l, p, a) (&(const struct magnet_packet_point){		\
	.layer = MAGNET_LAYER_##l, .proto = IPPROTO_##p, .args = ARGS_##a })

#define LAYER(n, k, t, d, pt) {					\
	.name = n, .kind = MAGNET_PROBE_##k, .target = t,		\
	.desc = d " (struct magnet_packet)",				\
	.object_type = MAGNET_OBJECT_PACKET, .packet = pt }

#define SOCK_SEND "security_socket_sendmsg|inet_sendmsg"

const struct magnet_predef magnet_packet_predefs[] = {
	LAYER("udp-send.socket", KPROBE, SOCK_SEND,
	      "application's send call, socket level",
	      POINT(SOCKET, UDP, SOCKET_MSG)),
	LAYER("udp-send.udp", KPROBE, "udp_sendmsg", "UDP send, IPv4",
	      POINT(PROTO_SEND, UDP, SK_MSG)),
	LAYER("udp-send.udp6", KPROBE, "udpv6_sendmsg", "UDP send, IPv6",
	      POINT(PROTO_SEND, UDP, SK_MSG)),
	LAYER("udp-send.ip", KPROBE, "ip_output", "IPv4 output",
	      POINT(IP_SEND, UDP, SKB2)),
	LAYER("udp-send.ip6", KPROBE, "ip6_output", "IPv6 output",
	      POINT(IP_SEND, UDP, SKB2)),
	LAYER("udp-send.dev-queue", TRACEPOINT, "net_dev_queue",
	      "queued to a device", POINT(DEV_QUEUE, UDP, SKB0)),
	LAYER("udp-send.dev-xmit", TRACEPOINT, "net_dev_start_xmit",
	      "handed to the driver", POINT(DEV_XMIT, UDP, SKB0)),

	LAYER("tcp-send.socket", KPROBE, SOCK_SEND,
	      "application's send call, socket level",
	      POINT(SOCKET, TCP, SOCKET_MSG)),
	/* The segment with its header, after it was cloned for IP. */
	LAYER("tcp-send.tcp", KPROBE, "tcp_v4_send_check",
	      "TCP segment built, IPv4",
	      POINT(PROTO_SEND, TCP, SK_SEGMENT)),
	LAYER("tcp-send.tcp6", KPROBE, "tcp_v6_send_check",
	      "TCP segment built, IPv6",
	      POINT(PROTO_SEND, TCP, SK_SEGMENT)),
	LAYER("tcp-send.ip", KPROBE, "ip_output", "IPv4 output",
	      POINT(IP_SEND, TCP, SKB2)),
	LAYER("tcp-send.ip6", KPROBE, "ip6_output", "IPv6 output",
	      POINT(IP_SEND, TCP, SKB2)),
	LAYER("tcp-send.dev-queue", TRACEPOINT, "net_dev_queue",
	      "queued to a device", POINT(DEV_QUEUE, TCP, SKB0)),
	LAYER("tcp-send.dev-xmit", TRACEPOINT, "net_dev_start_xmit",
	      "handed to the driver", POINT(DEV_XMIT, TCP, SKB0)),

	LAYER("udp-recv.dev-recv", TRACEPOINT, "netif_receive_skb",
	      "received from a device", POINT(DEV_RECV, UDP, SKB_RX)),
	LAYER("udp-recv.ip", KPROBE, "ip_rcv", "IPv4 input",
	      POINT(IP_RECV, UDP, SKB0)),
	LAYER("udp-recv.ip6", KPROBE, "ipv6_rcv", "IPv6 input",
	      POINT(IP_RECV, UDP, SKB0)),
	LAYER("udp-recv.udp", KPROBE, "udp_rcv", "UDP input, IPv4",
	      POINT(PROTO_RECV, UDP, SKB0)),
	LAYER("udp-recv.udp6", KPROBE, "udpv6_rcv", "UDP input, IPv6",
	      POINT(PROTO_RECV, UDP, SKB0)),
	LAYER("udp-recv.sock-queue", KPROBE, "__udp_enqueue_schedule_skb",
	      "put on the socket's receive queue",
	      POINT(SOCK_QUEUE, UDP, SKB1)),
	/*
	 * UDP copies linear datagrams without the copy's tracepoint: its
	 * app layer is the return of the dequeue, which hands over the skb.
	 */
	LAYER("udp-recv.app", KRETPROBE, "__skb_recv_udp",
	      "taken by the application's receive call",
	      POINT(APP, UDP, SKB0)),

	LAYER("tcp-recv.dev-recv", TRACEPOINT, "netif_receive_skb",
	      "received from a device", POINT(DEV_RECV, TCP, SKB_RX)),
	LAYER("tcp-recv.ip", KPROBE, "ip_rcv", "IPv4 input",
	      POINT(IP_RECV, TCP, SKB0)),
	LAYER("tcp-recv.ip6", KPROBE, "ipv6_rcv", "IPv6 input",
	      POINT(IP_RECV, TCP, SKB0)),
	LAYER("tcp-recv.tcp", KPROBE, "tcp_v4_rcv", "TCP input, IPv4",
	      POINT(PROTO_RECV, TCP, SKB0)),
	LAYER("tcp-recv.tcp6", KPROBE, "tcp_v6_rcv", "TCP input, IPv6",
	      POINT(PROTO_RECV, TCP, SKB0)),
	LAYER("tcp-recv.sock-queue", KPROBE, "tcp_queue_rcv",
	      "put on the socket's receive queue",
	      POINT(SOCK_QUEUE, TCP, SKB1)),
	LAYER("tcp-recv.app", TRACEPOINT, "skb_copy_datagram_iovec",
	      "copied to the application", POINT(APP, TCP, SKB_COPY)),
};

const unsigned int magnet_packet_predefs_count =
	ARRAY_SIZE(magnet_packet_predefs);

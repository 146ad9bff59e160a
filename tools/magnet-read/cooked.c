// SPDX-License-Identifier: GPL-2.0
/*
 * A packet as `tcpdump -i any` sees it: a Linux "cooked" v2 header
 * (LINKTYPE_LINUX_SLL2: protocol, interface index, device type,
 * direction) in front of the packet's IP bytes. The expression (expr.c)
 * runs on it, and pcapng files (pcapng.c) hold it, so both see the same
 * packet.
 *
 * The packet's bytes:
 * - the bytes its best record kept from the IP header on, its length the
 *   IP packet's, so that lengths, byte and bit access and every header
 *   field are the packet's own;
 * - a record that kept the segment from its TCP header (tcp send) gets an
 *   IP header built in front of those bytes;
 * - a packet no record kept bytes of gets its IP and UDP or TCP headers
 *   built from what its records say: addresses, ports, protocol, length,
 *   TCP flags and sequence number. What the records do not say (IP's TTL,
 *   ID, TOS and options, TCP's acknowledgement number and window, the
 *   payload) reads as zero there.
 *
 * The cooked header: a device the packet passed, "outgoing" on the send
 * path and "host" on the receive path, as tcpdump -i any marks them; no
 * link-layer address. tcpdump -i any sees a packet once on each device it
 * passes (over loopback: going out and coming in); magnet has one
 * journey, which has one sighting per device and direction.
 */
#define _GNU_SOURCE
#include <net/if_arp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"

#define SLL2_OUTGOING	4	/* packet type: PACKET_OUTGOING */
#define SLL2_HOST	0	/* PACKET_HOST */
#define ETH_P_IP_	0x0800
#define ETH_P_IPV6_	0x86dd
#define IP4_HDR		20
#define IP6_HDR		40

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = v >> 8;
	b[1] = v;
}

static void put32(uint8_t *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b + 2, v);
}

bool layer_sends(unsigned int layer)
{
	return layer <= MAGNET_LAYER_DEV_XMIT;
}

unsigned int cooked_sightings(const struct journey *j, struct sighting *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];
		bool out = layer_sends(h->layer), seen = false;

		if (!h->dev[0])
			continue;
		for (unsigned int k = 0; k < n && !seen; k++)
			seen = s[k].out == out && !strcmp(s[k].dev, h->dev);
		if (!seen)
			s[n++] = (struct sighting){ h->dev, h->ifindex, out };
	}
	return n;
}

struct sighting cooked_nowhere(const struct journey *j)
{
	return (struct sighting){ "", 0, !j->nhops || layer_sends(j->hop[0].layer) };
}

void cooked_header(uint8_t *b, const struct journey *j,
		   const struct sighting *s)
{
	memset(b, 0, COOKED_HDR_LEN);
	put16(b, j->family == AF_INET6 ? ETH_P_IPV6_ : ETH_P_IP_);
	put32(b + 4, s->ifindex);
	put16(b + 8, !strcmp(s->dev, "lo") ? ARPHRD_LOOPBACK : ARPHRD_ETHER);
	b[10] = s->out ? SLL2_OUTGOING : SLL2_HOST;
}

/*
 * The IP packet's length, from a layer whose record gives it (IP and
 * device layers, udp and tcp input), else from the transport layers'.
 */
static uint32_t ip_length(const struct journey *j, unsigned int iphdr)
{
	unsigned int thdr = j->proto == IPPROTO_TCP ? 20 : 8;

	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];

		if (h->layer >= MAGNET_LAYER_IP_SEND &&
		    h->layer <= MAGNET_LAYER_PROTO_RECV && h->len)
			return h->len;
	}
	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];

		if (h->layer == MAGNET_LAYER_PROTO_SEND)
			return iphdr + h->len + (j->proto == IPPROTO_TCP ? 0 : thdr);
	}
	return iphdr + thdr;
}

/* An IP header of @len bytes' packet from what the records say. */
static unsigned int build_ip(uint8_t *b, const struct journey *j,
			     uint32_t len)
{
	if (j->family == AF_INET6) {
		memset(b, 0, IP6_HDR);
		b[0] = 0x60;
		put16(b + 4, len > IP6_HDR ? len - IP6_HDR : 0);
		b[6] = j->proto;
		memcpy(b + 8, j->saddr, 16);
		memcpy(b + 24, j->daddr, 16);
		return IP6_HDR;
	}
	memset(b, 0, IP4_HDR);
	b[0] = 0x45;
	put16(b + 2, len);
	b[9] = j->proto;
	memcpy(b + 12, j->saddr, 4);
	memcpy(b + 16, j->daddr, 4);
	return IP4_HDR;
}

static unsigned int build_transport(uint8_t *b, const struct journey *j,
				    uint32_t len, unsigned int iphdr)
{
	if (j->proto == IPPROTO_TCP) {
		memset(b, 0, 20);
		put16(b, j->sport);
		put16(b + 2, j->dport);
		put32(b + 4, j->seq);
		b[12] = 5 << 4;
		b[13] = j->tcp_flags;
		return 20;
	}
	if (j->proto == IPPROTO_UDP) {
		memset(b, 0, 8);
		put16(b, j->sport);
		put16(b + 2, j->dport);
		put16(b + 4, len > iphdr ? len - iphdr : 0);
		return 8;
	}
	return 0;
}

enum cooked_bytes cooked_packet(uint8_t *ip, const struct journey *j,
				uint32_t *caplen, uint32_t *len)
{
	unsigned int iphdr = j->family == AF_INET6 ? IP6_HDR : IP4_HDR;
	uint32_t n;

	if (j->caplen && (j->data_flags & MAGNET_PKT_DATA_NET)) {
		n = j->caplen < COOKED_PACKET_MAX ? j->caplen : COOKED_PACKET_MAX;
		memcpy(ip, j->data, n);
		*caplen = n;
		*len = j->data_len > n ? j->data_len : n;
		return COOKED_KEPT;
	}
	if (!j->have_addrs)
		return COOKED_NONE;
	*len = ip_length(j, iphdr);
	n = build_ip(ip, j, *len);
	if (j->caplen && (j->data_flags & MAGNET_PKT_DATA_TRANSPORT)) {
		if (j->caplen > COOKED_PACKET_MAX - n)
			return COOKED_NONE;
		memcpy(ip + n, j->data, j->caplen);
		n += j->caplen;
	} else {
		n += build_transport(ip + n, j, *len, n);
	}
	if (*len < n)
		*len = n;
	*caplen = n;
	return COOKED_BUILT;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host tests of the packet filter's kernel code (filters/pcap_vm.c,
 * built with tests/host/kshim/) share: the core's part they call
 * (magnet_pkt_view_load()), a packet's view as the core fills it, the
 * templates of a send call's headers and random hits of them, as the core
 * makes them (kmod/magnet/packet.c), and a random number generator.
 * Used by tests/host/pcap-vm-unit.c and tests/fuzz/pcapvm.c.
 */
#ifndef MAGNET_PCAP_HOST_H
#define MAGNET_PCAP_HOST_H

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "pcap_vm.h"

static unsigned long long rng;

static u32 rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return rng >> 33;
}


/*
 * The core's magnet_pkt_view_load(), for the views made here: built
 * headers, then the application's bytes at @ubuf; or the packet in
 * memory at @linear (the kernel's is an skb's linear data).
 */
int magnet_pkt_view_load(const struct magnet_pkt_view *v, u32 off, u32 size,
			 u32 *val, u32 *unk)
{
	const u8 *p;
	u32 rel, i;

	*val = 0;
	*unk = 0;
	for (i = 0; i < size; i++, off++) {
		if (off < v->nbuilt) {
			*val = *val << 8 | v->built[off];
			*unk = *unk << 8 | v->unknown[off];
			continue;
		}
		rel = off - v->nbuilt;
		if (rel >= v->avail || (!v->ubuf && !v->linear))
			return -34;	/* ERANGE */
		p = (v->ubuf ? (const u8 *)v->ubuf : v->linear) + rel;
		*val = *val << 8 | *p;
		*unk <<= 8;
	}
	return 0;
}

/* The view of the packet at @b (cooked header first), as the core fills
 * it: the header's fields, then @built bytes built and the rest after. */
static void make_view(struct magnet_pkt_view *v, const u8 *b, unsigned int len,
		      unsigned int built)
{
	memset(v, 0, sizeof(*v));
	v->protocol = b[0] << 8 | b[1];
	v->ifindex_known = true;
	v->ifindex = b[4] << 24 | b[5] << 16 | b[6] << 8 | b[7];
	v->hatype = b[8] << 8 | b[9];
	v->pkttype = b[10];
	v->len = len - SLL2_LEN;
	v->len_known = true;
	if (!built) {
		v->linear = b + SLL2_LEN;
		v->nlinear = v->len;
		v->avail = v->len;
		return;
	}
	if (built > v->len)
		built = v->len;
	v->nbuilt = built;
	memcpy(v->built, b + SLL2_LEN, built);
	v->ubuf = b + SLL2_LEN + built;
	v->avail = v->len - built;
}

/*
 * A send call's headers, as the core builds them (kmod/magnet/packet.c,
 * view_build()): IPv4 with UDP (its length known), IPv6 with TCP (not).
 * Bits the same in every hit: the version and header length, the
 * protocol, IPv4's fragment offset; known: addresses, ports, UDP's
 * lengths; the rest (ToS, id, flags, TTL, checksums, flow label, hop
 * limit, TCP's other fields) unknown.
 */
static void make_template(struct magnet_pkt_template *t, int v6,
			  unsigned int unk)
{
	memset(t, 0, sizeof(*t));
	t->protocol = v6 ? 0x86dd : 0x0800;
	if (!v6) {
		t->nbuilt = 28;
		memset(t->known, 0xff, 28);
		t->known[1] = t->known[4] = t->known[5] = t->known[8] = 0;
		t->known[10] = t->known[11] = t->known[26] = t->known[27] = 0;
		t->known[6] = 0x1f;
		t->konst[0] = t->konst[9] = t->konst[7] = 0xff;
		t->konst[6] = 0x1f;
		t->val[0] = 0x45;
		t->val[9] = 17;
	} else {
		t->nbuilt = 60;
		memset(t->known + 8, 0xff, 36);	/* addresses, ports */
		t->known[0] = t->konst[0] = 0xf0;
		t->known[6] = t->konst[6] = 0xff;
		t->val[0] = 0x60;
		t->val[6] = 6;
	}
	/* a source not chosen yet (MAGNET_BUILT_*_UNKNOWN) */
	if (unk & MAGNET_BUILT_SADDR_UNKNOWN)
		memset(t->known + (v6 ? 8 : 12), 0, v6 ? 16 : 4);
	if (unk & MAGNET_BUILT_SPORT_UNKNOWN)
		memset(t->known + (v6 ? 40 : 20), 0, 2);
	/* the fields each byte is built from (struct magnet_sent's) */
	for (unsigned int i = 0; i < (v6 ? 16u : 4u); i++) {
		t->field[(v6 ? 8 : 12) + i] = MAGNET_SENT_SADDR + i / 4;
		t->field[(v6 ? 24 : 16) + i] = MAGNET_SENT_DADDR + i / 4;
	}
	t->field[v6 ? 4 : 2] = t->field[v6 ? 5 : 3] = MAGNET_SENT_IPLEN;
	t->field[v6 ? 40 : 20] = t->field[v6 ? 41 : 21] = MAGNET_SENT_SPORT;
	t->field[v6 ? 42 : 22] = t->field[v6 ? 43 : 23] = MAGNET_SENT_DPORT;
	if (!v6)
		t->field[24] = t->field[25] = MAGNET_SENT_UDPLEN;
}

/*
 * A random send call of template @tp's shape: its record in @pk (and
 * @s), and its headers built into @v as the core builds them (its
 * view_build()): the template's constant bits, the fields from @pk, the
 * unknown bits zero.
 */
static void make_sent(const struct magnet_pkt_template *tp,
		      struct magnet_packet *pk, struct magnet_sent *s,
		      struct magnet_pkt_view *v)
{
	static const u8 some[] = { 0, 1, 5, 17, 53, 80, 0x13, 0x89, 10, 9, 0xfd };
	static const u16 ports[] = { 53, 80, 5001, 6000 };
	int v6 = tp->protocol == 0x86dd;
	unsigned int ip = v6 ? 40 : 20;
	u16 be;

	memset(pk, 0, sizeof(*pk));
	memset(v, 0, sizeof(*v));
	pk->family = v6 ? AF_INET6 : AF_INET;
	pk->proto = v6 ? 6 : 17;
	for (unsigned int i = 0; i < 16; i++) {
		pk->saddr[i] = rnd() % 2 ? rnd() : some[rnd() % sizeof(some)];
		pk->daddr[i] = rnd() % 2 ? rnd() : some[rnd() % sizeof(some)];
	}
	pk->sport = htons(rnd() % 2 ? rnd() : ports[rnd() % 4]);
	pk->dport = htons(rnd() % 2 ? rnd() : ports[rnd() % 4]);
	pk->len = rnd() % 1500;
	s->pk = pk;
	s->iphlen = ip;
	s->len = v6 ? 0 : ip + 8 + pk->len;	/* TCP's is not known */

	v->protocol = tp->protocol;
	v->nbuilt = tp->nbuilt;
	v->len = s->len;
	v->len_known = !v6;
	for (unsigned int i = 0; i < tp->nbuilt; i++) {
		v->built[i] = tp->val[i] & tp->konst[i];
		v->unknown[i] = ~tp->known[i];
	}
	memcpy(v->built + (v6 ? 8 : 12), pk->saddr, v6 ? 16 : 4);
	memcpy(v->built + (v6 ? 24 : 16), pk->daddr, v6 ? 16 : 4);
	memcpy(v->built + ip, &pk->sport, 2);
	memcpy(v->built + ip + 2, &pk->dport, 2);
	if (!v6) {
		be = htons(s->len);
		memcpy(v->built + 2, &be, 2);
		be = htons(s->len - ip);
		memcpy(v->built + ip + 4, &be, 2);
	}
	/* what the template does not know: zero, as built */
	for (unsigned int i = 0; i < tp->nbuilt; i++)
		v->built[i] &= tp->known[i];
}

#endif

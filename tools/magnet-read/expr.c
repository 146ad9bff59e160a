// SPDX-License-Identifier: GPL-2.0
/*
 * The filter expression: tcpdump's own language, pcap-filter(7), compiled
 * by libpcap and run by libpcap's interpreter on each packet as
 * `tcpdump -i any` would see it: a Linux "cooked" v2 header
 * (LINKTYPE_LINUX_SLL2: protocol, interface index, device type,
 * direction) in front of the packet's IP bytes. The language, its
 * compiler and its interpreter are libpcap's; this file only builds what
 * a packet looks like to them.
 *
 * What a packet looks like:
 * - the bytes its best record kept from the IP header on, its length the
 *   IP packet's, so that lengths, byte and bit access and every header
 *   field are the packet's own;
 * - a record that kept the segment from its TCP header (tcp send) gets an
 *   IP header built in front of those bytes;
 * - a packet no record kept bytes of gets its IP and UDP or TCP headers
 *   built from what its records say: addresses, ports, protocol, length,
 *   TCP flags and sequence number. What the records do not say (IP's TTL,
 *   ID, TOS and options, TCP's acknowledgement number and window, the
 *   payload) reads as zero there: such packets are counted and the
 *   summary says so.
 * - the cooked header: a device the packet passed, "outgoing" on the
 *   send path and "host" on the receive path, as tcpdump -i any marks
 *   them (inbound, outbound and ifindex work); no link-layer address.
 *   tcpdump -i any sees a packet once on each device it passes (over
 *   loopback: going out and coming in); magnet has one journey. So the
 *   journey matches if the expression selects it as seen on any of its
 *   devices (with -i, on any of those given); a journey that met no
 *   device is seen once, on none (ifindex 0).
 *
 * magnet's own selectors are options, not words of the expression (an
 * expression means what it means to tcpdump): -i (a device any layer of
 * the packet passed; "any": every device), --tgid and --cpu (any of its
 * records' process or CPU). A record that is not a packet's never
 * matches an expression, but is selected by --tgid and --cpu on its own.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if_arp.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"
#include "pcapfilter.h"

#define SLL2_HDR_LEN	PCAPFILTER_SLL2_LEN
#define SLL2_OUTGOING	4	/* packet type: PACKET_OUTGOING */
#define SLL2_HOST	0	/* PACKET_HOST */
#define ETH_P_IP_	0x0800
#define ETH_P_IPV6_	0x86dd
#define IP4_HDR		20
#define IP6_HDR		40
#define PACKET_MAX	PCAPFILTER_SNAPLEN

struct expr {
	bool have_prog;
	struct bpf_program prog;
	struct expr_select sel;		/* the caller's arrays, not copied */
	bool by_dev;			/* -i given, and not "any" */
	unsigned long long built;	/* packets matched on built headers */
	uint8_t *buf;			/* cooked header + packet */
};

bool expr_selects(const struct expr *e)
{
	return e && (e->have_prog || e->by_dev || e->sel.ntgids || e->sel.cpus);
}

unsigned long long expr_built(const struct expr *e)
{
	return e ? e->built : 0;
}

void expr_free(struct expr *e)
{
	if (!e)
		return;
	if (e->have_prog)
		pcap_freecode(&e->prog);
	free(e->buf);
	free(e);
}

int expr_compile(const char *text, const struct expr_select *sel,
		 struct expr **out, char *err, size_t errlen)
{
	struct expr *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e || !(e->buf = malloc(SLL2_HDR_LEN + PACKET_MAX)))
		goto oom;
	if (!pcapfilter_blank(text)) {
		if (pcapfilter_compile(text, &e->prog, err, errlen)) {
			expr_free(e);
			return -1;
		}
		e->have_prog = true;
	}
	if (sel) {
		e->sel = *sel;
		e->by_dev = sel->ndevs;
		for (unsigned int i = 0; i < sel->ndevs; i++) {
			if (!strcmp(sel->devs[i], "any")) {
				e->by_dev = false;
			} else if (strlen(sel->devs[i]) >=
				   sizeof(((struct hop *)0)->dev)) {
				snprintf(err, errlen,
					 "no such device name \"%s\": a device's name has at most 15 bytes",
					 sel->devs[i]);
				expr_free(e);
				return -1;
			}
		}
	}
	*out = e;
	return 0;
oom:
	fputs(PROG ": out of memory\n", stderr);
	exit(1);
}

/* --- the options --------------------------------------------------------------- */

static bool tgid_selected(const struct expr *e, uint32_t tgid)
{
	for (unsigned int i = 0; i < e->sel.ntgids; i++)
		if (e->sel.tgids[i] == tgid)
			return true;
	return false;
}

static bool cpu_selected(const struct expr *e, uint32_t cpu)
{
	return cpu / 8 < e->sel.cpus_len && cpu_in_map(e->sel.cpus, cpu);
}

static bool dev_selected(const struct expr *e, const char *dev)
{
	for (unsigned int i = 0; i < e->sel.ndevs; i++)
		if (!strcmp(e->sel.devs[i], dev))
			return true;
	return false;
}

static bool journey_selected(const struct expr *e, const struct journey *j)
{
	bool tgid = !e->sel.ntgids, cpu = !e->sel.cpus;

	for (unsigned int i = 0; i < j->nhops; i++) {
		tgid = tgid || tgid_selected(e, j->hop[i].tgid);
		cpu = cpu || cpu_selected(e, j->hop[i].cpu);
	}
	return tgid && cpu;
}

/* --- what a packet looks like to the expression --------------------------------- */

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

static bool send_path(unsigned int layer)
{
	return layer <= MAGNET_LAYER_DEV_XMIT;
}

/* Where tcpdump -i any would see a packet: a device, a direction. */
struct sighting {
	const char *dev;
	uint32_t ifindex;
	bool out;
};

/* The journey's sightings, one per device and direction, in layer order. */
static unsigned int sightings(const struct journey *j, struct sighting *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];
		bool out = send_path(h->layer), seen = false;

		if (!h->dev[0])
			continue;
		for (unsigned int k = 0; k < n && !seen; k++)
			seen = s[k].out == out && !strcmp(s[k].dev, h->dev);
		if (!seen)
			s[n++] = (struct sighting){ h->dev, h->ifindex, out };
	}
	return n;
}

static void sll2_header(uint8_t *b, const struct journey *j,
			const struct sighting *s)
{
	memset(b, 0, SLL2_HDR_LEN);
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

/*
 * The packet at e->buf after room for the cooked header: the bytes seen
 * and the packet's length, with the cooked header's, in @h. False if
 * nothing is known of the packet.
 */
static bool packet_view(struct expr *e, const struct journey *j,
			struct pcap_pkthdr *h)
{
	uint8_t *ip = e->buf + SLL2_HDR_LEN;
	unsigned int iphdr = j->family == AF_INET6 ? IP6_HDR : IP4_HDR;
	uint32_t len, n;

	if (j->caplen && (j->data_flags & MAGNET_PKT_DATA_NET)) {
		n = j->caplen < PACKET_MAX ? j->caplen : PACKET_MAX;
		memcpy(ip, j->data, n);
		len = j->data_len > n ? j->data_len : n;
	} else if (j->caplen && (j->data_flags & MAGNET_PKT_DATA_TRANSPORT) &&
		   j->have_addrs) {
		len = ip_length(j, iphdr);
		n = build_ip(ip, j, len);
		if (j->caplen > PACKET_MAX - n)
			return false;
		memcpy(ip + n, j->data, j->caplen);
		n += j->caplen;
		if (len < n)
			len = n;
		e->built++;
	} else if (j->have_addrs) {
		len = ip_length(j, iphdr);
		n = build_ip(ip, j, len);
		n += build_transport(ip + n, j, len, n);
		if (len < n)
			len = n;
		e->built++;
	} else {
		return false;
	}
	h->ts.tv_sec = 0;
	h->ts.tv_usec = 0;
	h->caplen = SLL2_HDR_LEN + n;
	h->len = SLL2_HDR_LEN + len;
	return true;
}

bool expr_match_journey(struct expr *e, const struct journey *j)
{
	struct sighting s[MAGNET_LAYER_COUNT];
	struct pcap_pkthdr h;
	bool viewed = false;
	unsigned int n;

	if (!e)
		return true;
	if (!journey_selected(e, j))
		return false;
	n = sightings(j, s);
	if (!n) {
		if (e->by_dev)
			return false;
		s[0] = (struct sighting){ "", 0,
					  !j->nhops || send_path(j->hop[0].layer) };
		n = 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (e->by_dev && !dev_selected(e, s[i].dev))
			continue;
		if (!e->have_prog)
			return true;
		if (!viewed && !packet_view(e, j, &h))
			return false;
		viewed = true;
		sll2_header(e->buf, j, &s[i]);
		if (pcap_offline_filter(&e->prog, &h, e->buf))
			return true;
	}
	return false;
}

bool expr_match_record(const struct expr *e, const struct magnet_record *r)
{
	if (!e)
		return true;
	if (e->have_prog || e->by_dev)
		return false;	/* not a packet: no device, no bytes */
	return (!e->sel.ntgids || tgid_selected(e, r->tgid)) &&
	       (!e->sel.cpus || cpu_selected(e, r->cpu));
}

const char *expr_kernel_why_not(const struct expr *e)
{
	if (!e || !e->have_prog)
		return "there is no expression";
	/*
	 * Here a packet matches if it matches as seen on any device it
	 * passed; a layer in the kernel sees its own device or none.
	 */
	if (pcapfilter_reads_device(&e->prog))
		return "it asks about the device or the direction, which differ from layer to layer of one packet";
	if (e->prog.bf_len > MAGNET_PACKET_INSNS_MAX)
		return "it compiles to more instructions than the kernel runs";
	for (unsigned int i = 0; i < e->prog.bf_len; i++)
		if (e->prog.bf_insns[i].code == (BPF_JMP | BPF_JA) &&
		    (int32_t)e->prog.bf_insns[i].k < 0)
			return "it loops (protochain), which the kernel does not run";
	return NULL;
}

void expr_dump(const struct expr *e, int level)
{
	struct bpf_program all;
	char err[PCAP_ERRBUF_SIZE];

	if (e && e->have_prog) {
		bpf_dump(&e->prog, level);
		return;
	}
	/* no expression: the program that accepts everything */
	if (!pcapfilter_compile("", &all, err, sizeof(err))) {
		bpf_dump(&all, level);
		pcap_freecode(&all);
	}
}

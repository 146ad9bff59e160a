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
 * A packet looks as cooked.c makes it: its kept bytes (or headers built
 * from its records, counted: the summary says so) behind the cooked
 * header of each device it passed. tcpdump -i any sees a packet once on
 * each device; magnet has one journey. So the journey matches if the
 * expression selects it as seen on any of its devices (with -i, on any
 * of those given); a journey that met no device is seen once, on none
 * (ifindex 0).
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

_Static_assert(COOKED_HDR_LEN == PCAPFILTER_SLL2_LEN, "cooked header");
_Static_assert(COOKED_PACKET_MAX <= PCAPFILTER_SNAPLEN, "snap length");

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
	if (!e || !(e->buf = malloc(COOKED_HDR_LEN + COOKED_PACKET_MAX)))
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

/* The packet after room for the cooked header; false if nothing is known. */
static bool packet_view(struct expr *e, const struct journey *j,
			struct pcap_pkthdr *h)
{
	uint32_t caplen, len;

	switch (cooked_packet(e->buf + COOKED_HDR_LEN, j, &caplen, &len)) {
	case COOKED_NONE:
		return false;
	case COOKED_BUILT:
		e->built++;
		break;
	case COOKED_KEPT:
		break;
	}
	h->ts.tv_sec = 0;
	h->ts.tv_usec = 0;
	h->caplen = COOKED_HDR_LEN + caplen;
	h->len = COOKED_HDR_LEN + len;
	return true;
}

bool expr_match_sighting(struct expr *e, const struct journey *j,
			 const struct sighting *s)
{
	struct pcap_pkthdr h;

	if (!e)
		return true;
	if (e->by_dev && !dev_selected(e, s->dev))
		return false;
	if (!e->have_prog)
		return true;
	if (!packet_view(e, j, &h))
		return false;
	cooked_header(e->buf, j, s);
	return pcap_offline_filter(&e->prog, &h, e->buf);
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
	n = cooked_sightings(j, s);
	if (!n) {
		if (e->by_dev)
			return false;
		s[0] = cooked_nowhere(j);
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
		cooked_header(e->buf, j, &s[i]);
		if (pcap_offline_filter(&e->prog, &h, e->buf))
			return true;
	}
	return false;
}

bool expr_match_owner(const struct expr *e, const struct magnet_record *r)
{
	return !e || ((!e->sel.ntgids || tgid_selected(e, r->tgid)) &&
		      (!e->sel.cpus || cpu_selected(e, r->cpu)));
}

bool expr_match_record(const struct expr *e, const struct magnet_record *r)
{
	if (e && (e->have_prog || e->by_dev))
		return false;	/* not a packet: no device, no bytes */
	return expr_match_owner(e, r);
}

bool expr_match_block(const struct expr *e, const struct blockio *b)
{
	if (!e)
		return true;
	if (e->have_prog || e->by_dev)
		return false;	/* not a packet */
	if (e->sel.ntgids && !tgid_selected(e, b->tgid))
		return false;
	if (!e->sel.cpus)
		return true;
	for (unsigned int l = 0; l < MAGNET_BLOCK_COUNT; l++)
		if (b->hop[l].ts && cpu_selected(e, b->hop[l].cpu))
			return true;
	return false;
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
	/* (protochain's loop is unrolled: pcapfilter_compile()) */
	if (e->prog.bf_len > MAGNET_PACKET_INSNS_MAX)
		return "it compiles to more instructions than the kernel runs";
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

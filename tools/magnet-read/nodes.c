// SPDX-License-Identifier: GPL-2.0
/*
 * Several -r files, one per node (each written there by magnet-read
 * --trace): their records as one stream on one clock, and a packet that
 * left one node and reached another as one journey.
 *
 * A tool that merges the nodes' files, rather than daemons that trade
 * records live: the clocks are estimated from the packets both sides
 * saw, which only the two files together hold, and every node keeps
 * capturing alone (a peer that goes away loses nothing on this side).
 *
 * 1. The clocks. A file's records are on its node's CLOCK_MONOTONIC, and
 *    its header gives that node's wall clock at the capture's start; the
 *    wall clocks of two nodes differ by an unknown offset theta. Pass 1
 *    reads every file once and keeps, for each packet that crossed the
 *    wire (a journey that left a node at its device, one that arrived on
 *    another at its device), the two times. With node 0's clock as the
 *    reference, d_out = min(received on k - sent on 0) = a delay + theta,
 *    d_back = min(received on 0 - sent on k) = a delay - theta; so theta =
 *    (d_out - d_back) / 2, wrong by at most (d_out + d_back) / 2, as NTP
 *    reasons (no delay is negative). With that theta no packet arrives
 *    before it left: d - theta >= (d_out + d_back) / 2 >= 0 both ways.
 *    As a bound on the wall clocks' offset, it is wider by how far each
 *    header's wall clock may be off (its reading's own bound). A
 *    packet counts only where its identity is certain: a TCP segment, by
 *    addresses, ports, length on the wire, sequence number and flags,
 *    seen once on each side (not a pure ACK that repeats its sequence
 *    number).
 *    A node seen only one way, or not at all, keeps its own clock (said).
 *    Clock steps during a capture change nothing: records are stamped on
 *    CLOCK_MONOTONIC.
 * 2. The stream. Pass 2 reads the files again, each through its own
 *    pipeline (merged by CPU, assembled into journeys: an skb's address
 *    on one node means nothing on another), its times moved to wall clock
 *    time on node 0's clock; the items of all are merged by time. A
 *    journey that left a node waits until one that arrived elsewhere with
 *    the same identity comes (the two then become one: the sender's
 *    layers, then the receiver's) or until WIRE_WAIT_NS of the stream have
 *    passed; what comes after it waits with it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "magnet-read.h"

#define WIRE_WAIT_NS	NSEC_PER_SEC	/* a sent packet waits for its receipt */
#define EVENTS_BITS	16		/* pass 1: packets a node and direction */

/* Pass 1: a packet's time at a node's device, by identity */
struct wire_event {
	uint64_t fp;			/* 0: free */
	int64_t t;			/* wall clock ns, node 0's own */
};

struct node {
	const char *path;
	struct source *src;
	struct merge *merge;
	struct journeys *js;
	unsigned int idx;
	bool eof;
	int64_t offset;			/* its wall clock minus its records' */
	int64_t offset_error;		/* how far that may be off */
	int64_t theta;			/* its wall clock minus node 0's */
	int64_t error;			/* theta's bound; -1: not estimated */
	unsigned long long out, back;	/* packets matched each way */
	int64_t min_out, min_back;	/* (see the top) */
	struct item *head;		/* pass 2: its next item */
	unsigned long long records, lost;
	struct wire_event *sent, *recv;	/* pass 1 */
};

/* Pass 2: the items, in time order, some waiting for the wire */
struct queued {
	struct item *it;
	struct queued *next, *wnext;	/* the queue; waiting, by fp */
	uint64_t fp, sent;		/* wire: identity, sent at */
	bool wire;
};

struct nodes {
	const struct options *o;
	struct node node[NODES_MAX];
	unsigned int n;
	struct queued *qhead, **qtail;
	struct queued *waiting[1 << 12];
	uint64_t now;
	bool all_eof, failed;
	unsigned long long joined, alone, dropped;
};

/* --- a packet's identity on the wire ------------------------------------------------ */

/* FNV-1a, 64 bits */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* Its length on the wire: at the device it left or arrived at, or 0 */
static uint32_t wire_len(const struct journey *j)
{
	for (unsigned int i = 0; i < j->nhops; i++)
		if (j->hop[i].layer == MAGNET_LAYER_DEV_XMIT ||
		    j->hop[i].layer == MAGNET_LAYER_DEV_RECV)
			return j->hop[i].len;
	return 0;
}

/*
 * Its identity, from what both sides' records say alike: addresses,
 * ports, its length at the devices (the IP packet's, in magnet's
 * records at both), and TCP's sequence number and
 * flags; 0 for a packet without them (UDP: datagrams of one flow and
 * length are not told apart). One seen twice on a node (pure ACKs
 * repeat their sequence number) is no identity either (pass 1).
 */
static uint64_t wire_fp(const struct journey *j)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t al = j->family == AF_INET6 ? 16 : 4;
	uint32_t len = wire_len(j);

	if (!j->have_addrs || j->proto != 6 || !j->have_seq || !len)
		return 0;
	h = fnv(h, &j->family, 1);
	h = fnv(h, j->saddr, al);
	h = fnv(h, j->daddr, al);
	h = fnv(h, &j->sport, 2);
	h = fnv(h, &j->dport, 2);
	h = fnv(h, &len, 4);
	h = fnv(h, &j->seq, 4);
	h = fnv(h, &j->tcp_flags, 1);
	return h ? h : 1;
}

static bool has_layer(const struct journey *j, unsigned int layer, unsigned int *at)
{
	for (unsigned int i = 0; i < j->nhops; i++)
		if (j->hop[i].layer == layer) {
			if (at)
				*at = i;
			return true;
		}
	return false;
}

/* Left its node at the device (and was not received back on it: loopback) */
static bool leaves(const struct journey *j, unsigned int *at)
{
	return has_layer(j, MAGNET_LAYER_DEV_XMIT, at) &&
	       !has_layer(j, MAGNET_LAYER_DEV_RECV, NULL);
}

/* Arrived at a device, from the wire */
static bool arrives(const struct journey *j)
{
	return j->nhops && j->hop[0].layer == MAGNET_LAYER_DEV_RECV;
}

/* --- each node's pipeline ------------------------------------------------------------ */

static int node_open(struct nodes *ns, struct node *n)
{
	FILE *f = fopen(n->path, "r");
	uint8_t head[4];
	size_t got;

	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", n->path, strerror(errno));
		return -1;
	}
	got = fread(head, 1, sizeof(head), f);
	if (pcapng_is(head, got)) {
		fprintf(stderr, PROG ": %s is a pcapng file: several -r read magnet's trace files, whose records name their node's threads and clock\n",
			n->path);
		fclose(f);
		return -1;
	}
	n->src = source_open_file(f, n->path, head, got);
	if (!n->src)
		return -1;
	n->offset = source_have_offset(n->src) ? source_realtime_offset(n->src) : 0;
	n->offset_error = (int64_t)source_offset_error(n->src);
	n->merge = merge_new(REORDER_WINDOW_NS);
	n->js = journeys_new(ns->o->journey_timeout_ns, ns->o->snaplen);
	if (!n->merge || !n->js) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	n->eof = false;
	return 0;
}

static void node_close(struct node *n)
{
	if (n->head)
		item_free(n->head);
	n->head = NULL;
	if (n->js)
		journeys_free(n->js);
	if (n->merge)
		merge_free(n->merge);
	source_close(n->src);
	n->js = NULL;
	n->merge = NULL;
	n->src = NULL;
}

/* Its records, moved onto node 0's wall clock, into its pipeline */
static void node_take(struct node *n, const char *data, size_t len)
{
	int64_t delta = n->offset - n->theta;
	struct item *it;

	for (size_t off = 0; off < len;) {
		const struct magnet_record *r = (const void *)(data + off);

		it = item_new(r);
		it->rec->__reserved = n->idx;	/* record_node() */
		it->ts += delta;
		it->rec->timestamp = it->ts;
		if (it->kind == ITEM_LOSS)
			n->lost += ((struct magnet_loss *)it->rec->payload)->lost;
		else
			n->records++;
		if (merge_add(n->merge, it->ts, it)) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		off += MAGNET_RECORD_LEN(r->size);
	}
	while ((it = merge_pop(n->merge, merge_newest(n->merge), NULL)))
		journeys_add(n->js, it);
}

/* Its next item in time order, or NULL at its end */
static struct item *node_pull(struct nodes *ns, struct node *n)
{
	struct item *it;
	const char *data;
	size_t len;

	while (!(it = journeys_next(n->js))) {
		if (n->eof)
			return NULL;
		switch (source_next(n->src, &data, &len, true)) {
		case SOURCE_DATA:
			node_take(n, data, len);
			break;
		case SOURCE_IDLE:
			break;
		case SOURCE_ERROR:
			ns->failed = true;
			/* fall through */
		case SOURCE_END:
			while ((it = merge_pop(n->merge, MERGE_ALL, NULL)))
				journeys_add(n->js, it);
			journeys_end_all(n->js);
			n->eof = true;
			break;
		}
	}
	return it;
}

/* --- pass 1: the clocks ---------------------------------------------------------------- */

/*
 * Each node's packets that left or arrived, by identity: its time, or
 * DUP when two had the same (open addressing, EVENTS_BITS slots a node
 * and direction; what does not fit is not used, and counted).
 */
#define DUP	INT64_MIN

static void event_add(struct nodes *ns, struct wire_event *t, uint64_t fp,
		      int64_t when)
{
	size_t mask = (1U << EVENTS_BITS) - 1;

	for (size_t i = fp & mask, k = 0; k < 64; i = (i + 1) & mask, k++) {
		if (t[i].fp == fp) {
			t[i].t = DUP;
			return;
		}
		if (!t[i].fp) {
			t[i] = (struct wire_event){ fp, when };
			return;
		}
	}
	ns->dropped++;
}

static const struct wire_event *event_find(const struct wire_event *t,
					   uint64_t fp)
{
	size_t mask = (1U << EVENTS_BITS) - 1;

	for (size_t i = fp & mask, k = 0; k < 64; i = (i + 1) & mask, k++) {
		if (t[i].fp == fp)
			return t[i].t == DUP ? NULL : &t[i];
		if (!t[i].fp)
			return NULL;
	}
	return NULL;
}

static void pass1_item(struct nodes *ns, struct node *n, struct item *it)
{
	const struct journey *j;
	unsigned int at;
	uint64_t fp;

	if (it->kind != ITEM_PACKET)
		return;
	j = item_journey(it);
	fp = wire_fp(j);
	if (!fp)
		return;
	/* (the records' times are already their node's wall clock's) */
	if (leaves(j, &at))
		event_add(ns, n->sent, fp, (int64_t)j->hop[at].ts);
	else if (arrives(j))
		event_add(ns, n->recv, fp, (int64_t)j->hop[0].ts);
}

/* Node @n's offset from node 0's packets both ways (see the top) */
static void estimate(struct nodes *ns, struct node *n)
{
	const struct node *z = &ns->node[0];
	const struct wire_event *e;

	(void)ns;
	for (size_t i = 0; i < (1U << EVENTS_BITS); i++) {
		const struct wire_event *a = &z->sent[i], *b = &z->recv[i];
		int64_t d;

		/* out: sent by node 0, received by n: a delay + theta */
		if (a->fp && a->t != DUP && (e = event_find(n->recv, a->fp))) {
			d = e->t - a->t;
			if (!n->out++ || d < n->min_out)
				n->min_out = d;
		}
		/* back: sent by n, received by node 0: a delay - theta */
		if (b->fp && b->t != DUP && (e = event_find(n->sent, b->fp))) {
			d = b->t - e->t;
			if (!n->back++ || d < n->min_back)
				n->min_back = d;
		}
	}
	n->error = -1;
	if (n->out && n->back) {
		n->theta = (n->min_out - n->min_back) / 2;
		n->error = (n->min_out + n->min_back + 1) / 2 +
			   z->offset_error + n->offset_error;
	}
}

static int pass1(struct nodes *ns)
{
	struct item *it;

	for (unsigned int k = 0; k < ns->n; k++) {
		struct node *n = &ns->node[k];

		n->sent = xcalloc(1U << EVENTS_BITS, sizeof(*n->sent));
		n->recv = xcalloc(1U << EVENTS_BITS, sizeof(*n->recv));
		if (node_open(ns, n))
			return -1;
		while ((it = node_pull(ns, n))) {
			pass1_item(ns, n, it);
			item_free(it);
		}
		node_close(n);
		n->records = n->lost = 0;
	}
	for (unsigned int k = 1; k < ns->n; k++)
		estimate(ns, &ns->node[k]);
	for (unsigned int k = 0; k < ns->n; k++) {
		free(ns->node[k].sent);
		free(ns->node[k].recv);
		ns->node[k].sent = ns->node[k].recv = NULL;
	}
	return ns->failed ? -1 : 0;
}

/* "node2 (b.mtr)": its host's name, from its header, and its file */
static void node_name(FILE *f, const struct node *n)
{
	const char *host = n->src ? source_host(n->src) : NULL;

	if (host)
		fprintf(f, "%s (%s)", host, n->path);
	else
		fputs(n->path, f);
}

static void say_clock(const struct nodes *ns, const struct node *n)
{
	const struct node *ref = &ns->node[0];

	fputs(PROG ": ", stderr);
	node_name(stderr, n);
	if (n->error >= 0) {
		int64_t t = n->theta < 0 ? -n->theta : n->theta;

		fprintf(stderr, ": its clock %" PRId64 ".%09" PRId64 " s %s ",
			t / (int64_t)NSEC_PER_SEC, t % (int64_t)NSEC_PER_SEC,
			n->theta < 0 ? "behind" : "ahead of");
		node_name(stderr, ref);
		fprintf(stderr, "'s, within %" PRId64 ".%09" PRId64 " s (from %llu packets to it, %llu back)\n",
			n->error / (int64_t)NSEC_PER_SEC,
			n->error % (int64_t)NSEC_PER_SEC, n->out, n->back);
	} else {
		fprintf(stderr, ": %s: its clock taken as it is\n",
			n->out || n->back ?
			"packets seen one way only between it and the first file's node" :
			"no packet seen between it and the first file's node");
	}
}

struct nodes *nodes_open(const struct options *o)
{
	struct nodes *ns = xcalloc(1, sizeof(*ns));

	ns->o = o;
	ns->n = o->nread_files;
	ns->qtail = &ns->qhead;
	for (unsigned int k = 0; k < ns->n; k++) {
		ns->node[k].path = o->read_files[k];
		ns->node[k].idx = k;
	}
	if (pass1(ns))
		goto fail;
	for (unsigned int k = 0; k < ns->n; k++)
		if (node_open(ns, &ns->node[k]))
			goto fail;
	for (unsigned int k = 0; k < ns->n; k++) {
		fprintf(stderr, PROG ": reading from file %s\n", ns->node[k].path);
		if (k)
			say_clock(ns, &ns->node[k]);
	}
	return ns;
fail:
	nodes_close(ns);
	return NULL;
}

/* --- pass 2: the stream ----------------------------------------------------------------- */

static unsigned int wait_hash(uint64_t fp)
{
	return (fp * 0x9e3779b97f4a7c15ULL) >> (64 - 12);
}

static void enqueue(struct nodes *ns, struct item *it, uint64_t fp, uint64_t sent)
{
	struct queued *q = xcalloc(1, sizeof(*q));

	q->it = it;
	q->fp = fp;
	q->sent = sent;
	q->wire = fp != 0;
	*ns->qtail = q;
	ns->qtail = &q->next;
	if (q->wire) {
		struct queued **b = &ns->waiting[wait_hash(fp)];

		q->wnext = *b;
		*b = q;
	}
}

static void unwait(struct nodes *ns, struct queued *q)
{
	struct queued **p = &ns->waiting[wait_hash(q->fp)];

	for (; *p; p = &(*p)->wnext)
		if (*p == q) {
			*p = q->wnext;
			break;
		}
	q->wire = false;
}

/* @b arrived where @a left: one journey, @a's layers then @b's */
static bool join(struct nodes *ns, struct journey *b, unsigned int node)
{
	uint64_t fp = wire_fp(b);
	struct queued *q;

	for (q = ns->waiting[wait_hash(fp)]; q; q = q->wnext) {
		struct journey *a = item_journey(q->it);

		if (q->fp != fp || a->hop[0].node == node)
			continue;
		if (a->nhops + b->nhops > MAGNET_LAYER_COUNT)
			return false;
		memcpy(&a->hop[a->nhops], b->hop, b->nhops * sizeof(b->hop[0]));
		a->nhops += b->nhops;
		unwait(ns, q);
		ns->joined++;
		return true;
	}
	return false;
}

struct item *nodes_next(struct nodes *ns)
{
	for (;;) {
		struct queued *q = ns->qhead;
		struct node *first = NULL;
		struct item *it;
		unsigned int at;
		uint64_t fp;

		if (q && (!q->wire || ns->all_eof || ns->now >= q->sent + WIRE_WAIT_NS)) {
			if (q->wire) {
				unwait(ns, q);
				ns->alone++;
			}
			ns->qhead = q->next;
			if (!ns->qhead)
				ns->qtail = &ns->qhead;
			it = q->it;
			free(q);
			return it;
		}
		for (unsigned int k = 0; k < ns->n; k++) {
			struct node *n = &ns->node[k];

			if (!n->head && n->src)
				n->head = node_pull(ns, n);
			if (n->head && (!first || n->head->ts < first->head->ts))
				first = n;
		}
		if (!first) {
			ns->all_eof = true;
			if (!ns->qhead)
				return NULL;
			continue;
		}
		it = first->head;
		first->head = NULL;
		if (it->ts > ns->now)
			ns->now = it->ts;
		if (it->kind == ITEM_PACKET) {
			struct journey *j = item_journey(it);

			if (arrives(j) && wire_fp(j) && join(ns, j, first->idx)) {
				item_free(it);
				continue;
			}
			if (ns->n > 1 && leaves(j, &at) && (fp = wire_fp(j))) {
				enqueue(ns, it, fp, j->hop[at].ts);
				continue;
			}
		}
		enqueue(ns, it, 0, 0);
	}
}

const char *nodes_host(const struct nodes *ns, unsigned int node)
{
	if (node >= ns->n || !ns->node[node].src)
		return NULL;
	return source_host(ns->node[node].src);
}

void nodes_counts(const struct nodes *ns, unsigned long long *records,
		  unsigned long long *lost)
{
	*records = *lost = 0;
	for (unsigned int k = 0; k < ns->n; k++) {
		*records += ns->node[k].records;
		*lost += ns->node[k].lost;
	}
}

bool nodes_failed(const struct nodes *ns)
{
	return ns->failed;
}

void nodes_summary(const struct nodes *ns, FILE *f, bool json)
{
	if (!json) {
		fprintf(f, PROG ": %llu packets joined across nodes, %llu sent that no other node's file saw arrive\n",
			ns->joined, ns->alone);
		if (ns->dropped)
			fprintf(f, PROG ": %llu packets not used for the clocks (a node's table full)\n",
				ns->dropped);
		return;
	}
	fprintf(f, ",\"joined\":%llu,\"not_joined\":%llu,\"nodes\":[", ns->joined,
		ns->alone);
	for (unsigned int k = 0; k < ns->n; k++) {
		const struct node *n = &ns->node[k];
		const char *host = nodes_host(ns, k);

		fprintf(f, "%s{\"file\":", k ? "," : "");
		json_string(f, n->path);
		if (host) {
			fputs(",\"host\":", f);
			json_string(f, host);
		}
		if (k && n->error >= 0) {
			fputs(",\"offset_ns\":", f);
			json_s64(f, n->theta);
			fputs(",\"error_ns\":", f);
			json_s64(f, n->error);
		}
		fprintf(f, ",\"packets_to\":%llu,\"packets_back\":%llu}", n->out, n->back);
	}
	fputc(']', f);
}

void nodes_close(struct nodes *ns)
{
	if (!ns)
		return;
	while (ns->qhead) {
		struct queued *q = ns->qhead;

		ns->qhead = q->next;
		item_free(q->it);
		free(q);
	}
	for (unsigned int k = 0; k < ns->n; k++) {
		node_close(&ns->node[k]);
		free(ns->node[k].sent);
		free(ns->node[k].recv);
	}
	free(ns);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Packet journeys: the records of the packet probes, one per layer a
 * packet passes, assembled into one journey per packet; the order things
 * are shown in (block I/O's journeys too, blockio.c's); and per-hop
 * latency statistics.
 *
 * Records come in timestamp order (input.c merged the CPUs). Linking, as
 * "Packet probes" in <linux/magnet.h> describes:
 *  - records with the same non-zero skb belong to one packet as long as
 *    its layers go forward; a record of an open journey's skb at the same
 *    or an earlier layer starts a new journey (skb addresses are reused);
 *  - a record without an skb (the send call, udp's send layer), and tcp's
 *    send layer (whose skb is a clone), leave their journey pending on
 *    (sock, context): the next record of that socket in that context with
 *    a later layer continues it (tcp: if it has the same seq). The
 *    context is the thread in a task, which may move to another CPU
 *    between two layers of one send, and the CPU in an interrupt;
 *  - a journey ends at the app layer, when no record joined it for the
 *    journey timeout (stream time), or at the end of the input.
 * Items (packets, other records, losses) are shown in the order of their
 * first timestamp: an item waits behind a journey that started before it
 * until that journey has ended.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "magnet-read.h"

#define HASH_BITS	16
#define HASH_SIZE	(1U << HASH_BITS)
#define OPEN_MAX	(1U << 20)	/* journeys open at once */

struct journeys {
	struct blockios *blk;			/* block I/O (blockio.c) */
	struct journey **skb_hash, **pend_hash;
	struct journey *open_head, *open_tail;	/* by last record */
	size_t nopen;
	struct item *out_head, *out_tail;	/* in order of first record */
	uint64_t timeout_ns;
	uint32_t snaplen;
};

static unsigned int hash(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - HASH_BITS);
}

static unsigned int pend_key(uint64_t sock, uint64_t ctx)
{
	return hash(sock ^ (ctx << 40 | ctx));
}

/*
 * Where a record ran, for following one send call down the layers: its
 * thread in a task (bit 32 set), its CPU in an interrupt. One call chain
 * runs in one context, whichever CPUs a task is moved to in between.
 */
static uint64_t ctx_of(const struct magnet_record *r)
{
	if (r->flags & (MAGNET_RF_SOFTIRQ | MAGNET_RF_HARDIRQ | MAGNET_RF_NMI))
		return r->cpu;
	return 1ULL << 32 | r->tid;
}

static void *zalloc(size_t size)
{
	void *p = calloc(1, size);

	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

struct journeys *journeys_new(uint64_t timeout_ns, uint32_t snaplen)
{
	struct journeys *js = zalloc(sizeof(*js));

	js->skb_hash = zalloc(HASH_SIZE * sizeof(*js->skb_hash));
	js->pend_hash = zalloc(HASH_SIZE * sizeof(*js->pend_hash));
	js->blk = blockios_new();
	js->timeout_ns = timeout_ns;
	js->snaplen = snaplen;
	return js;
}

bool is_packet_record(const struct magnet_record *r)
{
	const struct magnet_packet *p = (const void *)r->payload;

	return r->event != MAGNET_EVENT_LOSS &&
	       (r->flags & MAGNET_RF_PACKET) &&
	       r->size >= sizeof(*r) + PACKET_HDR &&
	       p->layer > MAGNET_LAYER_NONE && p->layer < MAGNET_LAYER_COUNT;
}

/* --- the indexes: skb, pending (sock, context), open by last record ------ */

static void skb_unhash(struct journeys *js, struct journey *j)
{
	struct journey **pp = &js->skb_hash[hash(j->skb)];

	if (!j->in_skb)
		return;
	while (*pp != j)
		pp = &(*pp)->skb_next;
	*pp = j->skb_next;
	j->in_skb = false;
}

static void skb_rehash(struct journeys *js, struct journey *j, uint64_t skb)
{
	struct journey **head;

	skb_unhash(js, j);
	j->skb = skb;
	head = &js->skb_hash[hash(skb)];
	j->skb_next = *head;
	*head = j;
	j->in_skb = true;
}

static struct journey *skb_find(struct journeys *js, uint64_t skb)
{
	struct journey *j = js->skb_hash[hash(skb)];

	while (j && j->skb != skb)
		j = j->skb_next;
	return j;
}

static void pend_unhash(struct journeys *js, struct journey *j)
{
	struct journey **pp;

	if (!j->pending)
		return;
	pp = &js->pend_hash[pend_key(j->sock, j->pend_ctx)];
	while (*pp != j)
		pp = &(*pp)->pend_next;
	*pp = j->pend_next;
	j->pending = false;
}

static struct journey *pend_find(struct journeys *js, uint64_t sock,
				 uint64_t ctx)
{
	struct journey *j = js->pend_hash[pend_key(sock, ctx)];

	while (j && (j->sock != sock || j->pend_ctx != ctx))
		j = j->pend_next;
	return j;
}

/* @j waits for the next record of @sock in @ctx (the only one to). */
static void pend_set(struct journeys *js, struct journey *j, uint64_t sock,
		     uint64_t ctx)
{
	struct journey *other = pend_find(js, sock, ctx), **head;

	if (other == j)
		return;
	if (other)
		pend_unhash(js, other);
	pend_unhash(js, j);
	j->sock = sock;
	j->pend_ctx = ctx;
	head = &js->pend_hash[pend_key(sock, ctx)];
	j->pend_next = *head;
	*head = j;
	j->pending = true;
}

static void open_unlink(struct journeys *js, struct journey *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		js->open_head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		js->open_tail = j->prev;
	j->prev = j->next = NULL;
}

static void open_append(struct journeys *js, struct journey *j)
{
	j->prev = js->open_tail;
	j->next = NULL;
	if (js->open_tail)
		js->open_tail->next = j;
	else
		js->open_head = j;
	js->open_tail = j;
}

static void journey_end(struct journeys *js, struct journey *j)
{
	if (!j->open)
		return;
	skb_unhash(js, j);
	pend_unhash(js, j);
	open_unlink(js, j);
	js->nopen--;
	j->open = false;
}

static void out_append(struct journeys *js, struct item *it)
{
	it->next = NULL;
	if (js->out_tail)
		js->out_tail->next = it;
	else
		js->out_head = it;
	js->out_tail = it;
}

/* --- assembly --------------------------------------------------------------- */

static unsigned int last_layer(const struct journey *j)
{
	return j->hop[j->nhops - 1].layer;
}

/*
 * Does @p say it is another packet than @j's, whose skb it has? An skb
 * sent out of a device and freed can come back from a driver's pool as a
 * received packet's within microseconds, its layer (dev-recv) after the
 * last one's (dev-xmit): different addresses, ports or TCP sequence
 * number tell them apart. (Loopback's sent skb is the received one, the
 * same packet; a veth pair's too.)
 */
static bool other_packet(const struct journey *j, const struct magnet_packet *p)
{
	if (!(p->flags & MAGNET_PKT_ADDRS) || !j->have_addrs || !j->addrs_from_skb)
		return false;
	if (p->proto != j->proto || memcmp(p->saddr, j->saddr, 16) ||
	    memcmp(p->daddr, j->daddr, 16) || ntohs(p->sport) != j->sport ||
	    ntohs(p->dport) != j->dport)
		return true;
	return j->proto == IPPROTO_TCP && j->have_seq && p->seq &&
	       p->seq != j->seq;
}

/* The open journey @r continues, or NULL. */
static struct journey *link_record(struct journeys *js,
				   const struct magnet_record *r,
				   const struct magnet_packet *p)
{
	struct journey *j;

	if (p->skb && (j = skb_find(js, p->skb))) {
		if (p->layer > last_layer(j) && !other_packet(j, p))
			return j;
		journey_end(js, j);	/* the skb is another packet's now */
	}
	if (p->sock && (j = pend_find(js, p->sock, ctx_of(r))) &&
	    p->layer > last_layer(j) &&
	    !(j->proto == IPPROTO_TCP && j->have_seq && p->seq &&
	      p->seq != j->seq))
		return j;
	return NULL;
}

/* How good @p's bytes are for showing the packet (-1: none). */
static int data_rank(const struct magnet_packet *p, uint32_t caplen)
{
	if (!caplen)
		return -1;
	if (p->flags & MAGNET_PKT_DATA_NET) {
		switch (p->layer) {
		case MAGNET_LAYER_DEV_XMIT:
			return 5;
		case MAGNET_LAYER_DEV_QUEUE:
			return 4;
		case MAGNET_LAYER_DEV_RECV:
			return 3;
		default:
			return 2;
		}
	}
	if (p->flags & MAGNET_PKT_DATA_TRANSPORT)
		return 1;
	return p->flags & MAGNET_PKT_DATA_USER ? 0 : -1;
}

static void journey_join(struct journeys *js, struct journey *j,
			 const struct magnet_record *r,
			 const struct magnet_packet *p)
{
	size_t avail = r->size - sizeof(*r) - PACKET_HDR;
	uint32_t caplen = p->caplen < avail ? p->caplen : avail;
	struct hop *h = &j->hop[j->nhops++];
	int rank;

	*h = (struct hop){
		.ts = r->timestamp, .cpu = r->cpu, .tgid = r->tgid,
		.tid = r->tid, .len = p->len, .ifindex = p->ifindex,
		.node = record_node(r),
		.layer = p->layer, .rflags = r->flags, .pflags = p->flags,
		.caplen = caplen, .skb = p->skb, .sock = p->sock,
	};
	memcpy(h->dev, p->dev, sizeof(h->dev) - 1);
	if (j->nhops == 1) {
		j->family = p->family;
		j->proto = p->proto;
	}
	/*
	 * Addresses from the packet's own headers win over the socket's
	 * (an unconnected socket has no source address yet).
	 */
	if ((p->flags & MAGNET_PKT_ADDRS) &&
	    (!j->have_addrs || (p->skb && !j->addrs_from_skb))) {
		memcpy(j->saddr, p->saddr, 16);
		memcpy(j->daddr, p->daddr, 16);
		j->sport = ntohs(p->sport);
		j->dport = ntohs(p->dport);
		j->have_addrs = true;
		j->addrs_from_skb = p->skb != 0;
	}
	if (!j->have_seq && p->proto == IPPROTO_TCP && p->seq) {
		j->seq = p->seq;
		j->have_seq = true;
	}
	if (!j->tcp_flags)
		j->tcp_flags = p->tcp_flags;
	if (caplen > js->snaplen)
		caplen = js->snaplen;
	rank = data_rank(p, caplen);
	if (rank > j->data_rank) {
		free(j->data);
		j->data = malloc(caplen);
		if (!j->data) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		memcpy(j->data, p->data, caplen);
		j->caplen = caplen;
		j->data_len = p->len;
		j->data_flags = p->flags & (MAGNET_PKT_DATA_NET |
					    MAGNET_PKT_DATA_TRANSPORT |
					    MAGNET_PKT_DATA_USER);
		j->data_layer = p->layer;
		j->data_rank = rank;
	}

	if (p->skb && (p->skb != j->skb || !j->in_skb))
		skb_rehash(js, j, p->skb);
	if (p->sock && (!p->skb || (p->proto == IPPROTO_TCP &&
				    p->layer == MAGNET_LAYER_PROTO_SEND)))
		pend_set(js, j, p->sock, ctx_of(r));
	else
		pend_unhash(js, j);
	if (p->layer == MAGNET_LAYER_APP) {
		journey_end(js, j);
		return;
	}
	open_unlink(js, j);
	open_append(js, j);
}

void journeys_expire(struct journeys *js, uint64_t now)
{
	while (js->open_head &&
	       js->open_head->hop[js->open_head->nhops - 1].ts +
	       js->timeout_ns < now)
		journey_end(js, js->open_head);
	blockios_expire(js->blk, now);
}

void journeys_end_all(struct journeys *js)
{
	while (js->open_head)
		journey_end(js, js->open_head);
	blockios_end_all(js->blk);
}

void journeys_add(struct journeys *js, struct item *it)
{
	const struct magnet_record *r = it->rec;
	const struct magnet_packet *p = (const void *)r->payload;
	struct journey *j;

	journeys_expire(js, it->ts);
	if (it->kind == ITEM_RECORD && is_block_record(r)) {
		struct blockio *b = blockios_add(js->blk, it);

		if (b)
			out_append(js, &b->item);
		free(it);
		return;
	}
	if (it->kind != ITEM_RECORD || !is_packet_record(r)) {
		out_append(js, it);
		return;
	}
	j = link_record(js, r, p);
	if (!j) {
		if (js->nopen >= OPEN_MAX)
			journey_end(js, js->open_head);
		j = zalloc(sizeof(*j));
		j->item.kind = ITEM_PACKET;
		j->item.ts = it->ts;
		j->item.seq = it->seq;
		j->data_rank = -1;
		j->open = true;
		js->nopen++;
		open_append(js, j);
		out_append(js, &j->item);
	}
	journey_join(js, j, r, p);
	free(it);
}

struct item *journeys_next(struct journeys *js)
{
	struct item *it = js->out_head;

	if (!it || (it->kind == ITEM_PACKET && item_journey(it)->open) ||
	    (it->kind == ITEM_BLOCK && item_blockio(it)->open))
		return NULL;
	js->out_head = it->next;
	if (!js->out_head)
		js->out_tail = NULL;
	return it;
}

bool journeys_pending(const struct journeys *js)
{
	return js->out_head || js->open_head || blockios_pending(js->blk);
}

void journeys_free(struct journeys *js)
{
	struct item *it;

	if (!js)
		return;
	journeys_end_all(js);
	while ((it = journeys_next(js)))
		item_free(it);
	free(js->skb_hash);
	free(js->pend_hash);
	blockios_free(js->blk);
	free(js);
}

void item_free(struct item *it)
{
	if (it->kind == ITEM_PACKET)
		free(item_journey(it)->data);
	free(it);
}

/* --- per-hop latency ---------------------------------------------------------
 *
 * For each pair of consecutive layers: count, min and max
 * exactly; median and p99 from the samples, all of them up to
 * HOP_SAMPLES_MAX, then a uniform reservoir of that many.
 */
struct hopstat {
	uint64_t count, min, max;
	uint64_t *samples;
	uint32_t n, size;
};

#define PROTOS	3	/* other, udp, tcp */

struct hops {
	struct hopstat s[PROTOS][MAGNET_LAYER_COUNT][MAGNET_LAYER_COUNT];
	uint64_t rng;
};

struct hops *hops_new(void)
{
	struct hops *h = zalloc(sizeof(*h));

	h->rng = 0x2545f4914f6cdd1dULL;	/* fixed: a replay samples alike */
	return h;
}

void hops_free(struct hops *h)
{
	if (!h)
		return;
	for (unsigned int p = 0; p < PROTOS; p++)
		for (unsigned int i = 0; i < MAGNET_LAYER_COUNT; i++)
			for (unsigned int k = 0; k < MAGNET_LAYER_COUNT; k++)
				free(h->s[p][i][k].samples);
	free(h);
}

static uint64_t next_random(struct hops *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	return h->rng;
}

static void hop_sample(struct hops *h, struct hopstat *s, uint64_t d)
{
	if (!s->count || d < s->min)
		s->min = d;
	if (d > s->max)
		s->max = d;
	s->count++;
	if (s->n < HOP_SAMPLES_MAX) {
		if (s->n == s->size) {
			s->size = s->size ? 2 * s->size : 256;
			s->samples = realloc(s->samples, s->size * sizeof(*s->samples));
			if (!s->samples) {
				fprintf(stderr, PROG ": out of memory\n");
				exit(1);
			}
		}
		s->samples[s->n++] = d;
	} else {
		uint64_t i = next_random(h) % s->count;

		if (i < HOP_SAMPLES_MAX)
			s->samples[i] = d;
	}
}

static bool proto_layer(unsigned int layer)
{
	return layer == MAGNET_LAYER_PROTO_SEND ||
	       layer == MAGNET_LAYER_PROTO_RECV;
}

/* Hops are told apart by protocol only where a layer is the protocol's. */
void hops_add(struct hops *h, const struct journey *j)
{
	unsigned int proto = j->proto == IPPROTO_UDP ? 1 :
			     j->proto == IPPROTO_TCP ? 2 : 0;

	for (unsigned int i = 1; i < j->nhops; i++) {
		unsigned int from = j->hop[i - 1].layer, to = j->hop[i].layer;

		hop_sample(h, &h->s[proto_layer(from) || proto_layer(to) ?
				    proto : 0][from][to],
			   j->hop[i].ts - j->hop[i - 1].ts);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct hop_row {
	char name[48];
	uint64_t count;
	double min, median, p99, max;	/* microseconds */
};

/* The next hop with samples after *@k (start at 0), or false. */
static bool next_row(struct hops *h, unsigned int *k,
		     struct hop_row *row)
{
	static const unsigned int proto_of[PROTOS] = {
		0, IPPROTO_UDP, IPPROTO_TCP
	};
	const unsigned int per = MAGNET_LAYER_COUNT * MAGNET_LAYER_COUNT;

	/* in the order of the layers, then udp before tcp */
	for (; *k < PROTOS * per; (*k)++) {
		unsigned int from = *k / PROTOS / MAGNET_LAYER_COUNT,
			     to = *k / PROTOS % MAGNET_LAYER_COUNT,
			     p = *k % PROTOS;
		struct hopstat *s = &h->s[p][from][to];

		if (!s->count)
			continue;
		qsort(s->samples, s->n, sizeof(*s->samples), cmp_u64);
		snprintf(row->name, sizeof(row->name), "%s -> %s",
			 layer_name(from, proto_of[p]), layer_name(to, proto_of[p]));
		row->count = s->count;
		row->min = s->min / 1e3;
		row->max = s->max / 1e3;
		row->median = s->samples[(s->n - 1) / 2] / 1e3;
		/* nearest rank */
		row->p99 = s->samples[(s->n * 99 + 99) / 100 - 1] / 1e3;
		(*k)++;
		return true;
	}
	return false;
}

void hops_print(struct hops *h, FILE *f)
{
	struct hop_row row;
	unsigned int k = 0;
	bool first = true;

	while (next_row(h, &k, &row)) {
		if (first)
			fprintf(f, PROG ": latency per hop in microseconds:\n"
				"  %-26s %10s %12s %12s %12s %12s\n",
				"hop", "count", "min", "median", "p99", "max");
		first = false;
		fprintf(f, "  %-26s %10llu %12.3f %12.3f %12.3f %12.3f\n",
			row.name, (unsigned long long)row.count, row.min,
			row.median, row.p99, row.max);
	}
}

void hops_json(struct hops *h, FILE *f)
{
	struct hop_row row;
	unsigned int k = 0;
	bool first = true;

	fputc('[', f);
	while (next_row(h, &k, &row)) {
		fprintf(f, "%s{\"hop\":", first ? "" : ",");
		json_string(f, row.name);
		fputs(",\"count\":", f);
		json_u64(f, row.count);
		fprintf(f, ",\"min_us\":%.3f,\"median_us\":%.3f,\"p99_us\":%.3f,\"max_us\":%.3f}",
			row.min, row.median, row.p99, row.max);
		first = false;
	}
	fputc(']', f);
}

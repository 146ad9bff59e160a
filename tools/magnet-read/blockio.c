// SPDX-License-Identifier: GPL-2.0
/*
 * Block I/O journeys: the records of the blk-io probe set, one per layer
 * an I/O passes, assembled into one journey per I/O ("Block probes" in
 * <linux/magnet.h>).
 *
 * Records come in timestamp order. Linking:
 *  - a bio record starts a journey, found by its bio until a request's
 *    record names that bio as its first (its @bio) and takes it over;
 *  - a request's record continues the open journey of its request, or
 *    else the one of its first bio; a record of a layer the journey has
 *    passed already starts a new journey (requests are reused as soon as
 *    they complete);
 *  - a journey ends when its completions cover the request's bytes, when
 *    nothing joined it for BLOCK_TIMEOUT_NS (stream time: a merged bio's
 *    journey, which has only its bio record, ends so), or at the end of
 *    the input.
 * The order of output is journey.c's: by first record, each item waiting
 * behind the journeys that started before it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "magnet-read.h"

#define HASH_BITS	12
#define HASH_SIZE	(1U << HASH_BITS)
#define OPEN_MAX	(1U << 16)	/* journeys open at once */

struct blockios {
	struct blockio *bio_hash[HASH_SIZE], *rq_hash[HASH_SIZE];
	struct blockio *open_head, *open_tail;	/* by last record */
	size_t nopen;
};

static unsigned int hash(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ULL) >> (64 - HASH_BITS);
}

bool is_block_record(const struct magnet_record *r)
{
	const struct magnet_block *b = (const void *)r->payload;

	return r->event != MAGNET_EVENT_LOSS &&
	       (r->flags & MAGNET_RF_BLOCK) &&
	       r->size >= sizeof(*r) + sizeof(*b) &&
	       b->layer > MAGNET_BLOCK_NONE && b->layer < MAGNET_BLOCK_COUNT;
}

struct blockios *blockios_new(void)
{
	struct blockios *bs = calloc(1, sizeof(*bs));

	if (!bs) {
		fputs(PROG ": out of memory\n", stderr);
		exit(1);
	}
	return bs;
}

/* --- the indexes ------------------------------------------------------------ */

static void unhash(struct blockio **table, struct blockio *b, uint64_t key,
		   bool rq)
{
	struct blockio **pp = &table[hash(key)];

	while (*pp && *pp != b)
		pp = rq ? &(*pp)->rq_next : &(*pp)->bio_next;
	if (*pp)
		*pp = rq ? b->rq_next : b->bio_next;
}

static void bio_unhash(struct blockios *bs, struct blockio *b)
{
	if (b->in_bio)
		unhash(bs->bio_hash, b, b->bio, false);
	b->in_bio = false;
}

static void rq_unhash(struct blockios *bs, struct blockio *b)
{
	if (b->in_rq)
		unhash(bs->rq_hash, b, b->rq, true);
	b->in_rq = false;
}

static struct blockio *bio_find(struct blockios *bs, uint64_t bio)
{
	struct blockio *b = bs->bio_hash[hash(bio)];

	while (b && b->bio != bio)
		b = b->bio_next;
	return b;
}

static struct blockio *rq_find(struct blockios *bs, uint64_t rq)
{
	struct blockio *b = bs->rq_hash[hash(rq)];

	while (b && b->rq != rq)
		b = b->rq_next;
	return b;
}

static void open_unlink(struct blockios *bs, struct blockio *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		bs->open_head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else
		bs->open_tail = b->prev;
	b->prev = b->next = NULL;
}

static void open_append(struct blockios *bs, struct blockio *b)
{
	b->prev = bs->open_tail;
	b->next = NULL;
	if (bs->open_tail)
		bs->open_tail->next = b;
	else
		bs->open_head = b;
	bs->open_tail = b;
}

static void blockio_end(struct blockios *bs, struct blockio *b)
{
	if (!b->open)
		return;
	bio_unhash(bs, b);
	rq_unhash(bs, b);
	open_unlink(bs, b);
	bs->nopen--;
	b->open = false;
}

void blockios_expire(struct blockios *bs, uint64_t now)
{
	while (bs->open_head && bs->open_head->last_ts + BLOCK_TIMEOUT_NS < now)
		blockio_end(bs, bs->open_head);
}

void blockios_end_all(struct blockios *bs)
{
	while (bs->open_head)
		blockio_end(bs, bs->open_head);
}

bool blockios_pending(const struct blockios *bs)
{
	return bs->open_head;
}

/* --- joining ------------------------------------------------------------------ */

/* The open journey the record of @p continues, or NULL. */
static struct blockio *link_record(struct blockios *bs,
				   const struct magnet_block *p)
{
	struct blockio *b;

	if (p->layer == MAGNET_BLOCK_BIO) {
		b = bio_find(bs, p->bio);
		if (b)		/* the address of a bio that ended: a new one */
			bio_unhash(bs, b);
		return NULL;
	}
	b = rq_find(bs, p->rq);
	if (b) {
		/* a layer it has passed: the request, reused */
		bool passed = b->hop[p->layer].ts &&
			      p->layer != MAGNET_BLOCK_COMPLETE;

		for (unsigned int l = p->layer + 1; l < MAGNET_BLOCK_COUNT; l++)
			passed |= b->hop[l].ts != 0;
		if (!passed)
			return b;
		blockio_end(bs, b);
	}
	return p->bio ? bio_find(bs, p->bio) : NULL;
}

static void join(struct blockios *bs, struct blockio *b,
		 const struct magnet_record *r, const struct magnet_block *p)
{
	struct block_hop *h = &b->hop[p->layer];

	if (!h->ts) {
		h->ts = r->timestamp;
		h->cpu = r->cpu;
		h->tgid = r->tgid;
		h->tid = r->tid;
		h->rflags = r->flags;
	}
	if (!b->nlayers++) {
		b->bio = p->bio;
		b->sector = p->sector;
		b->major = p->major;
		b->minor = p->minor;
		b->op = p->op;
		b->tgid = r->tgid;
		b->tid = r->tid;
		b->node = record_node(r);
	}
	b->flags |= p->flags;
	if (p->layer == MAGNET_BLOCK_BIO) {
		b->bio_bytes = p->bytes;
		b->bytes = p->bytes;
		if (!b->in_bio) {
			struct blockio **head = &bs->bio_hash[hash(p->bio)];

			b->bio_next = *head;
			*head = b;
			b->in_bio = true;
		}
	} else {
		if (!b->rq) {
			struct blockio **head = &bs->rq_hash[hash(p->rq)];

			b->rq = p->rq;
			b->rq_next = *head;
			*head = b;
			b->in_rq = true;
			bio_unhash(bs, b);
		}
		if (p->layer == MAGNET_BLOCK_COMPLETE) {
			b->done_bytes += p->bytes;
			if (b->completions < 255)
				b->completions++;
			if (p->error && !b->error)
				b->error = p->error;
			h->ts = r->timestamp;	/* the last part's */
			h->cpu = r->cpu;
			h->rflags = r->flags;
		} else {
			/* the request: its bytes and first sector */
			b->bytes = p->bytes;
			b->sector = p->sector;
		}
	}
	b->last_ts = r->timestamp;
	open_unlink(bs, b);
	open_append(bs, b);
	if (p->layer == MAGNET_BLOCK_COMPLETE && b->done_bytes >= b->bytes)
		blockio_end(bs, b);
}

struct blockio *blockios_add(struct blockios *bs, struct item *it)
{
	const struct magnet_record *r = it->rec;
	const struct magnet_block *p = (const void *)r->payload;
	struct blockio *b, *fresh = NULL;

	b = link_record(bs, p);
	if (!b) {
		if (bs->nopen >= OPEN_MAX)
			blockio_end(bs, bs->open_head);
		b = calloc(1, sizeof(*b));
		if (!b) {
			fputs(PROG ": out of memory\n", stderr);
			exit(1);
		}
		b->item.kind = ITEM_BLOCK;
		b->item.ts = it->ts;
		b->item.seq = it->seq;
		b->open = true;
		bs->nopen++;
		open_append(bs, b);
		fresh = b;
	}
	join(bs, b, r, p);
	return fresh;
}

void blockios_free(struct blockios *bs)
{
	free(bs);
}

/* --- names ---------------------------------------------------------------------- */

const char *block_op_name(unsigned int op)
{
	switch (op) {
	case MAGNET_BLK_READ:
		return "read";
	case MAGNET_BLK_WRITE:
		return "write";
	case MAGNET_BLK_FLUSH:
		return "flush";
	case MAGNET_BLK_DISCARD:
		return "discard";
	case MAGNET_BLK_SECURE_ERASE:
		return "secure-erase";
	case MAGNET_BLK_WRITE_ZEROES:
		return "write-zeroes";
	default:
		return NULL;
	}
}

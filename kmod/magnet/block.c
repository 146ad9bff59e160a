// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: block probes, one I/O followed from the bio its submitter made
 * to the request's completion (the blk-io set; "Block probes" in the uapi
 * header says what each layer records and how a reader follows one I/O).
 *
 * Each layer is a tracepoint of the block layer, whose prototypes are the
 * same on every series magnet builds for: the bio layer's takes the bio,
 * the others the request (and the completion its status and bytes).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blk-mq.h>
#include <linux/blkdev.h>

#include "magnet.h"

/* What a layer's tracepoint passes, and which layer it is. */
struct magnet_block_point {
	enum magnet_block_layer layer;
};

static_assert((int)MAGNET_BLK_READ == (__force int)REQ_OP_READ);
static_assert((int)MAGNET_BLK_WRITE == (__force int)REQ_OP_WRITE);
static_assert((int)MAGNET_BLK_FLUSH == (__force int)REQ_OP_FLUSH);
static_assert((int)MAGNET_BLK_DISCARD == (__force int)REQ_OP_DISCARD);
static_assert((int)MAGNET_BLK_SECURE_ERASE == (__force int)REQ_OP_SECURE_ERASE);
static_assert((int)MAGNET_BLK_WRITE_ZEROES == (__force int)REQ_OP_WRITE_ZEROES);

static u16 block_flags(blk_opf_t opf)
{
	return (opf & REQ_SYNC ? MAGNET_BLK_SYNC : 0) |
	       (opf & REQ_FUA ? MAGNET_BLK_FUA : 0) |
	       (opf & REQ_PREFLUSH ? MAGNET_BLK_PREFLUSH : 0) |
	       (opf & REQ_META ? MAGNET_BLK_META : 0);
}

static void block_dev(struct magnet_block *b, const struct gendisk *disk)
{
	dev_t dev = disk ? disk_devt((struct gendisk *)disk) : 0;

	b->major = MAJOR(dev);
	b->minor = MINOR(dev);
}

/**
 * magnet_block_hit - a block probe's hit
 * @ev:		the probe's event
 * @pt:		its point (the catalog entry's)
 * @a0:		the tracepoint's first argument: the bio, or the request
 * @a1:		complete: the status (blk_status_t)
 * @a2:		complete: the bytes completed
 *
 * Probe context.
 */
void magnet_block_hit(struct magnet_event *ev,
		      const struct magnet_block_point *pt,
		      unsigned long a0, unsigned long a1, unsigned long a2)
{
	struct magnet_block b = { .layer = pt->layer };
	enum magnet_admit admit;
	u64 id;

	admit = magnet_event_admit(ev);
	if (admit == MAGNET_ADMIT_NO)
		return;
	if (pt->layer == MAGNET_BLOCK_BIO) {
		const struct bio *bio = (const struct bio *)a0;

		b.bio = a0;
		b.sector = bio->bi_iter.bi_sector;
		b.bytes = bio->bi_iter.bi_size;
		b.op = (__force u8)bio_op(bio);
		b.flags = block_flags(bio->bi_opf);
		block_dev(&b, bio->bi_bdev ? bio->bi_bdev->bd_disk : NULL);
		id = b.bio;
	} else {
		const struct request *rq = (const struct request *)a0;

		b.rq = a0;
		b.bio = (unsigned long)rq->bio;
		b.sector = blk_rq_pos(rq);
		b.bytes = blk_rq_bytes(rq);
		b.op = (__force u8)req_op(rq);
		b.flags = block_flags(rq->cmd_flags);
		block_dev(&b, rq->q->disk);
		if (pt->layer == MAGNET_BLOCK_COMPLETE) {
			b.bytes = (unsigned int)a2;
			b.error = blk_status_to_errno((__force blk_status_t)(u8)a1);
		}
		id = b.rq;
	}
	magnet_event_log_flagged(ev, admit, id, &b, sizeof(b), NULL,
				 MAGNET_RF_BLOCK);
}

/* --- the set -------------------------------------------------------------- */

#define LAYER(n, t, l, d) {						\
	.name = "blk-io." n, .kind = MAGNET_PROBE_TRACEPOINT, .target = t, \
	.desc = d " (struct magnet_block)",				\
	.block = &(const struct magnet_block_point){			\
		.layer = MAGNET_BLOCK_##l } }

const struct magnet_predef magnet_block_predefs[] = {
	LAYER("bio", "block_bio_queue", BIO, "a bio submitted to a device"),
	LAYER("queue", "block_rq_insert", QUEUE, "a request queued"),
	LAYER("issue", "block_rq_issue", ISSUE, "a request handed to the driver"),
	LAYER("complete", "block_rq_complete", COMPLETE,
	      "a request completed, or a part of it"),
};

const unsigned int magnet_block_predefs_count =
	ARRAY_SIZE(magnet_block_predefs);

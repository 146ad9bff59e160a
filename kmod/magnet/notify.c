// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: notifications of probe hits to netlink subscribers.
 *
 * A probe marked notify copies each record's header and the start of its
 * payload into a queue, an unlisted magnet buffer of its own (so the copy
 * is as lockless as the record itself), and queues an irq_work. The
 * irq_work schedules a work item; the work item drains the queue and
 * multicasts one message per copy, at most notify_rate per second (a token
 * bucket with a one-second burst). Nothing is sent from probe context.
 * Copies that find the queue full, exceed the rate, or that the socket
 * layer refuses are counted as dropped.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/workqueue.h>

#include "magnet.h"

#define NOTIFY_QUEUE_SIZE	(64 * 1024)	/* bytes per CPU */
#define NOTIFY_BATCH		256		/* records per work run */

static unsigned int notify_rate = 1000;
module_param(notify_rate, uint, 0644);
MODULE_PARM_DESC(notify_rate,
		 "Most notifications multicast per second (default 1000)");

static struct magnet_buffer *queue;
static struct magnet_reader *queue_reader;

/* Token bucket and counters, touched only by the (non-reentrant) work. */
static u64 tokens;
static unsigned long tokens_at;		/* jiffies of the last refill */
static u64 notify_sent;
static u64 notify_dropped;

static void notify_work_fn(struct work_struct *work);
static DECLARE_WORK(notify_work, notify_work_fn);

static void notify_irq_fn(struct irq_work *work)
{
	schedule_work(&notify_work);
}

static struct irq_work notify_irq = IRQ_WORK_INIT(notify_irq_fn);

/**
 * magnet_notify_queue - queue a notification of a record
 * @rec:	a reserved, filled, not yet committed record
 *
 * Any context. Copies the header and the first MAGNET_NOTIFY_PREFIX_MAX
 * bytes of payload.
 */
void magnet_notify_queue(const struct magnet_record *rec)
{
	u32 len = sizeof(*rec) + min_t(u32, rec->size - sizeof(*rec),
				       MAGNET_NOTIFY_PREFIX_MAX);
	struct magnet_record *copy;

	copy = magnet_reserve(queue, rec->event, rec->id, len);
	if (IS_ERR(copy))
		return;		/* counted by the queue, reported as a loss */
	memcpy(copy->payload, rec, len);
	magnet_commit(queue, copy);
	irq_work_queue(&notify_irq);
}

static void refill_tokens(void)
{
	unsigned long now = jiffies;
	u64 rate = READ_ONCE(notify_rate);
	u64 add = div_u64((u64)(now - tokens_at) * rate, HZ);

	/* Keep the remainder: only move the clock by what was credited. */
	if (add || !rate) {
		tokens = min(tokens + add, rate);
		tokens_at = now;
	}
}

static int notify_one(const struct magnet_record *rec, void *ctx)
{
	if (rec->event == MAGNET_EVENT_LOSS) {
		const struct magnet_loss *loss = (const void *)rec->payload;

		notify_dropped += loss->lost;
		return 0;
	}
	if (!tokens) {
		notify_dropped++;
		return 0;
	}
	tokens--;
	if (magnet_notify_send((const void *)rec->payload,
			       rec->size - sizeof(*rec)))
		notify_dropped++;
	else
		notify_sent++;
	return 0;
}

static void notify_work_fn(struct work_struct *work)
{
	long n;

	refill_tokens();
	n = magnet_reader_consume(queue_reader, NOTIFY_BATCH, notify_one,
				  NULL);
	/* More waiting: go on later rather than hog this worker. */
	if (n == NOTIFY_BATCH)
		schedule_work(&notify_work);
}

void magnet_notify_counters(u64 *sent, u64 *dropped, u32 *rate)
{
	/* Read under no lock: a stale value is fine for statistics. */
	*sent = READ_ONCE(notify_sent);
	*dropped = READ_ONCE(notify_dropped);
	*rate = READ_ONCE(notify_rate);
}

int magnet_notify_init(void)
{
	queue = magnet_buffer_alloc("notify", NOTIFY_QUEUE_SIZE,
				    MAGNET_FULL_DROP);
	if (!queue)
		return -ENOMEM;
	queue_reader = magnet_reader_open(queue);
	if (IS_ERR(queue_reader)) {
		magnet_buffer_put(queue);
		return PTR_ERR(queue_reader);
	}
	tokens = notify_rate;
	tokens_at = jiffies;
	return 0;
}

/* Call once no probe can log any more. */
void magnet_notify_exit(void)
{
	irq_work_sync(&notify_irq);
	cancel_work_sync(&notify_work);
	magnet_reader_close(queue_reader);
	magnet_buffer_put(queue);
}

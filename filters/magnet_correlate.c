// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_correlate: filter type "correlate" -- let through only the
 * journeys (records sharing an abstract id, from a start event to an end
 * event) that took at least a threshold, e.g. only slow packets:
 *
 *   magnetctl filter add net_start_xmit correlate end netif_receive \
 *	threshold 1ms
 *
 * In probe context the rule takes every record of its events into a
 * private per-CPU staging buffer (magnet's lockless rings) and drops it
 * from the event's own stream. A kernel thread drains the staging buffer
 * every CORR_PERIOD, orders what it read by timestamp, and groups records
 * by abstract id into journeys: a start record opens one, records of the
 * "via" events join it, the end record closes it. A closed journey that
 * lasted at least the threshold is logged as one MAGNET_EVENT_JOURNEY
 * record (struct magnet_journey followed by its records, original
 * headers and timestamps intact) into the start event's buffer. Journeys
 * still open a window after their start expire.
 *
 * The work per hit is one copy into the staging ring; everything else is
 * in the thread. Memory is bounded: at most max_open journeys and
 * CORR_MEMORY_MAX bytes of records are held; what does not fit is counted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <net/genetlink.h>

#define CORR_PERIOD		msecs_to_jiffies(10)
#define CORR_STAGE_SIZE		(256 * 1024)	/* per CPU */
#define CORR_PAYLOAD_MAX	1024		/* payload bytes kept per record */
#define CORR_MEMORY_MAX		(16 << 20)	/* bytes of records held */
#define CORR_BATCH_MAX		8192		/* records per pass */
#define CORR_WINDOW_DEFAULT	NSEC_PER_SEC
#define CORR_MAX_OPEN_DEFAULT	4096

/* Marks a staged record kept over for one more pass (a copy of ours). */
#define CARRIED			1

struct journey {
	struct hlist_node node;		/* in corr->table */
	struct list_head age;		/* in corr->open, oldest first */
	u64 id;
	u64 start_ts;
	u16 count;
	u16 flags;
	struct magnet_record *recs[MAGNET_JOURNEY_RECORDS_MAX];
};

struct corr_stats {
	u64 taken, journeys, passed, expired, unmatched, overflow, cut, lost;
};

struct corr {
	u32 rule_id;
	u16 start, end;
	u16 via[MAGNET_CORR_VIA_MAX];
	unsigned int nvia;
	u64 threshold, window;
	u32 max_open;
	struct magnet_buffer *stage;
	struct magnet_buffer *out;	/* the start event's; outlives us */
	struct magnet_reader *reader;
	struct task_struct *thread;

	/* The thread's own. */
	struct hlist_head *table;
	unsigned int table_bits;
	struct list_head open;
	unsigned int nopen;
	size_t held;			/* bytes of records held */
	struct magnet_record **batch;
	unsigned int nbatch;

	struct corr_stats stats;	/* written by the thread only */
};

/* --- probe context --------------------------------------------------------- */

static bool corr_match(void *state, const struct magnet_hit *hit)
{
	struct corr *c = state;
	u32 keep = min_t(u32, hit->payload_size, CORR_PAYLOAD_MAX);
	struct magnet_record *rec;

	rec = magnet_reserve(c->stage, hit->event_id, hit->id, keep);
	if (!IS_ERR(rec)) {
		memcpy(rec->payload, hit->payload, keep);
		if (keep < hit->payload_size)
			rec->flags |= MAGNET_RF_TRUNCATED;
		magnet_commit(c->stage, rec);
	}
	/* Lost or not, the record is ours: the staging stream counts it. */
	return true;
}

/* --- the thread ---------------------------------------------------------- */

static void stat_add(u64 *counter, u64 n)
{
	WRITE_ONCE(*counter, *counter + n);
}

static void rec_free(struct corr *c, struct magnet_record *rec)
{
	c->held -= rec->size;
	kfree(rec);
}

static int collect(const struct magnet_record *rec, void *ctx)
{
	struct corr *c = ctx;
	struct magnet_record *copy;

	if (rec->event == MAGNET_EVENT_LOSS) {
		const struct magnet_loss *loss = (const void *)rec->payload;

		stat_add(&c->stats.taken, loss->lost);
		stat_add(&c->stats.lost, loss->lost);
		return 0;
	}
	stat_add(&c->stats.taken, 1);
	copy = kmemdup(rec, rec->size, GFP_KERNEL);
	if (!copy) {
		stat_add(&c->stats.lost, 1);
		return 0;
	}
	copy->__reserved = 0;
	c->held += copy->size;
	c->batch[c->nbatch++] = copy;
	return 0;
}

static int cmp_ts(const void *a, const void *b)
{
	const struct magnet_record *x = *(const struct magnet_record **)a;
	const struct magnet_record *y = *(const struct magnet_record **)b;

	return x->timestamp < y->timestamp ? -1 :
	       x->timestamp > y->timestamp;
}

static struct journey *journey_find(struct corr *c, u64 id)
{
	struct journey *j;

	hlist_for_each_entry(j, &c->table[hash_64(id, c->table_bits)], node)
		if (j->id == id)
			return j;
	return NULL;
}

static void journey_free(struct corr *c, struct journey *j)
{
	unsigned int i;

	for (i = 0; i < j->count; i++)
		rec_free(c, j->recs[i]);
	hlist_del(&j->node);
	list_del(&j->age);
	c->nopen--;
	kfree(j);
}

static size_t journey_size(const struct journey *j)
{
	size_t size = sizeof(struct magnet_journey);
	unsigned int i;

	for (i = 0; i < j->count; i++)
		size += ALIGN(j->recs[i]->size, MAGNET_RECORD_ALIGN);
	return size;
}

/* Log a journey as one record; left out middle records if it is too big. */
static void journey_log(struct corr *c, struct journey *j, u64 duration)
{
	struct magnet_journey hdr = {
		.filter = c->rule_id,
		.duration_ns = duration,
	};
	struct magnet_record *rec;
	unsigned int i;
	u8 *p;

	for (;;) {
		rec = magnet_reserve(c->out, MAGNET_EVENT_JOURNEY, j->id,
				     journey_size(j));
		if (!IS_ERR(rec) || PTR_ERR(rec) != -E2BIG || j->count <= 2)
			break;
		/* Drop the last record before the end one. */
		rec_free(c, j->recs[j->count - 2]);
		j->recs[j->count - 2] = j->recs[j->count - 1];
		j->count--;
		j->flags |= MAGNET_JF_CUT;
		stat_add(&c->stats.cut, 1);
	}
	if (IS_ERR(rec)) {
		stat_add(&c->stats.lost, 1);
		return;
	}
	hdr.records = j->count;
	hdr.flags = j->flags;
	p = rec->payload;
	memcpy(p, &hdr, sizeof(hdr));
	p += sizeof(hdr);
	for (i = 0; i < j->count; i++) {
		size_t len = j->recs[i]->size;

		memcpy(p, j->recs[i], len);
		memset(p + len, 0, ALIGN(len, MAGNET_RECORD_ALIGN) - len);
		p += ALIGN(len, MAGNET_RECORD_ALIGN);
	}
	magnet_commit(c->out, rec);
	stat_add(&c->stats.passed, 1);
}

/*
 * One record, in timestamp order. Returns true if the record is to be
 * kept for the next pass (an end or via record whose start may still be
 * on its way from another CPU).
 */
static bool process(struct corr *c, struct magnet_record *rec)
{
	struct journey *j = journey_find(c, rec->id);

	if (rec->event == c->start) {
		if (j) {
			/* The id is in use again: the old journey never ended. */
			stat_add(&c->stats.expired, 1);
			journey_free(c, j);
		}
		if (c->nopen >= c->max_open || c->held > CORR_MEMORY_MAX) {
			stat_add(&c->stats.overflow, 1);
			rec_free(c, rec);
			return false;
		}
		j = kzalloc(sizeof(*j), GFP_KERNEL);
		if (!j) {
			stat_add(&c->stats.lost, 1);
			rec_free(c, rec);
			return false;
		}
		j->id = rec->id;
		j->start_ts = rec->timestamp;
		j->recs[j->count++] = rec;
		hlist_add_head(&j->node,
			       &c->table[hash_64(rec->id, c->table_bits)]);
		list_add_tail(&j->age, &c->open);
		c->nopen++;
		return false;
	}
	if (!j) {
		if (rec->__reserved != CARRIED) {
			rec->__reserved = CARRIED;
			return true;
		}
		stat_add(&c->stats.unmatched, 1);
		rec_free(c, rec);
		return false;
	}
	rec->__reserved = 0;
	if (rec->event == c->end) {
		u64 duration = rec->timestamp - j->start_ts;

		j->recs[j->count++] = rec;
		stat_add(&c->stats.journeys, 1);
		if (duration >= c->threshold)
			journey_log(c, j, duration);
		journey_free(c, j);
		return false;
	}
	/* A via record; the last slot is the end record's. */
	if (j->count >= MAGNET_JOURNEY_RECORDS_MAX - 1 ||
	    c->held > CORR_MEMORY_MAX) {
		j->flags |= MAGNET_JF_CUT;
		stat_add(&c->stats.cut, 1);
		rec_free(c, rec);
		return false;
	}
	j->recs[j->count++] = rec;
	return false;
}

static void expire(struct corr *c, u64 now)
{
	struct journey *j, *tmp;

	list_for_each_entry_safe(j, tmp, &c->open, age) {
		if (now - j->start_ts < c->window)
			break;
		stat_add(&c->stats.expired, 1);
		journey_free(c, j);
	}
}

static void corr_pass(struct corr *c)
{
	unsigned int i, kept = 0;

	/* Records kept from the last pass are at the start of the batch. */
	magnet_reader_consume(c->reader, CORR_BATCH_MAX - c->nbatch,
			      collect, c);
	sort(c->batch, c->nbatch, sizeof(*c->batch), cmp_ts, NULL);
	for (i = 0; i < c->nbatch; i++)
		if (process(c, c->batch[i]))
			c->batch[kept++] = c->batch[i];
	c->nbatch = kept;
	expire(c, ktime_get_mono_fast_ns());
}

static int corr_thread(void *arg)
{
	struct corr *c = arg;

	while (!kthread_should_stop()) {
		corr_pass(c);
		schedule_timeout_interruptible(CORR_PERIOD);
	}
	return 0;
}

/* --- configuration ------------------------------------------------------------ */

static struct netlink_range_validation window_range = {
	.min = MAGNET_CORR_WINDOW_MIN,
	.max = MAGNET_CORR_WINDOW_MAX,
};

static struct netlink_range_validation max_open_range = {
	.min = 1,
	.max = MAGNET_CORR_MAX_OPEN_MAX,
};

static struct netlink_range_validation event_range = {
	.min = 1,
	.max = MAGNET_EVENT_ID_MAX,
};

static const struct nla_policy corr_policy[MAGNET_CORR_MAX + 1] = {
	[MAGNET_CORR_END] = NLA_POLICY_FULL_RANGE(NLA_U16, &event_range),
	[MAGNET_CORR_VIA] = NLA_POLICY_FULL_RANGE(NLA_U16, &event_range),
	[MAGNET_CORR_THRESHOLD] = { .type = NLA_U64 },
	[MAGNET_CORR_WINDOW] = NLA_POLICY_FULL_RANGE(NLA_U64, &window_range),
	[MAGNET_CORR_MAX_OPEN] = NLA_POLICY_FULL_RANGE(NLA_U32,
						       &max_open_range),
};

static void corr_free(struct corr *c)
{
	struct journey *j, *tmp;
	unsigned int i;

	if (c->thread)
		kthread_stop(c->thread);
	list_for_each_entry_safe(j, tmp, &c->open, age)
		journey_free(c, j);
	for (i = 0; i < c->nbatch; i++)
		rec_free(c, c->batch[i]);
	WARN_ON(c->held);
	if (c->reader)
		magnet_reader_close(c->reader);
	if (c->stage)
		magnet_buffer_put(c->stage);
	kvfree(c->batch);
	kvfree(c->table);
	kfree(c);
}

/* The VIA events: every VIA attribute inside the config nest, in order. */
static int parse_via(struct corr *c, struct magnet_filter_ctx *ctx,
		     const struct nlattr *config, struct netlink_ext_ack *extack)
{
	const struct nlattr *nla;
	int rem, err;

	nla_for_each_nested(nla, config, rem) {
		if (nla_type(nla) != MAGNET_CORR_VIA)
			continue;
		if (c->nvia == MAGNET_CORR_VIA_MAX) {
			NL_SET_ERR_MSG_ATTR(extack, nla,
					    "at most 8 via probes");
			return -EINVAL;
		}
		c->via[c->nvia] = nla_get_u16(nla);
		err = magnet_filter_attach(ctx, c->via[c->nvia], extack);
		if (err)
			return err;
		c->nvia++;
	}
	return 0;
}

static void *corr_create(struct magnet_filter_ctx *ctx, struct nlattr **tb,
			 struct netlink_ext_ack *extack)
{
	struct corr *c;
	int err;

	if (!tb[MAGNET_CORR_END]) {
		NL_SET_ERR_MSG(extack,
			       "a correlating filter needs its end probe (MAGNET_CORR_END)");
		return ERR_PTR(-EINVAL);
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&c->open);
	c->rule_id = ctx->id;
	c->start = magnet_event_id(ctx->event);
	c->end = nla_get_u16(tb[MAGNET_CORR_END]);
	c->out = magnet_event_buffer(ctx->event);
	c->window = tb[MAGNET_CORR_WINDOW] ?
		    nla_get_u64(tb[MAGNET_CORR_WINDOW]) : CORR_WINDOW_DEFAULT;
	c->threshold = tb[MAGNET_CORR_THRESHOLD] ?
		       nla_get_u64(tb[MAGNET_CORR_THRESHOLD]) : 0;
	c->max_open = tb[MAGNET_CORR_MAX_OPEN] ?
		      nla_get_u32(tb[MAGNET_CORR_MAX_OPEN]) :
		      CORR_MAX_OPEN_DEFAULT;
	if (c->threshold >= c->window) {
		NL_SET_ERR_MSG_ATTR(extack, tb[MAGNET_CORR_THRESHOLD],
				    "the threshold must be shorter than the window");
		err = -EINVAL;
		goto fail;
	}

	err = magnet_filter_attach(ctx, c->end, extack);
	if (err)
		goto fail;
	/* The nest was validated; walk it again for the repeated VIA. */
	err = parse_via(c, ctx, ctx->config, extack);
	if (err)
		goto fail;

	err = -ENOMEM;
	c->table_bits = ilog2(roundup_pow_of_two(c->max_open));
	c->table = kvcalloc(1U << c->table_bits, sizeof(*c->table),
			    GFP_KERNEL);
	c->batch = kvcalloc(CORR_BATCH_MAX, sizeof(*c->batch), GFP_KERNEL);
	c->stage = magnet_buffer_alloc("correlate", CORR_STAGE_SIZE,
				       MAGNET_FULL_DROP);
	if (!c->table || !c->batch || !c->stage)
		goto fail;
	c->reader = magnet_reader_open(c->stage);
	if (IS_ERR(c->reader)) {
		err = PTR_ERR(c->reader);
		c->reader = NULL;
		goto fail;
	}
	c->thread = kthread_run(corr_thread, c, "magnet_corr/%u", c->rule_id);
	if (IS_ERR(c->thread)) {
		err = PTR_ERR(c->thread);
		c->thread = NULL;
		goto fail;
	}
	return c;

fail:
	corr_free(c);
	return ERR_PTR(err);
}

static int corr_fill_config(struct sk_buff *msg, void *state)
{
	const struct corr *c = state;
	unsigned int i;

	if (nla_put_u16(msg, MAGNET_CORR_END, c->end))
		return -EMSGSIZE;
	for (i = 0; i < c->nvia; i++)
		if (nla_put_u16(msg, MAGNET_CORR_VIA, c->via[i]))
			return -EMSGSIZE;
	if (nla_put_u64_64bit(msg, MAGNET_CORR_THRESHOLD, c->threshold,
			      MAGNET_CORR_PAD) ||
	    nla_put_u64_64bit(msg, MAGNET_CORR_WINDOW, c->window,
			      MAGNET_CORR_PAD) ||
	    nla_put_u32(msg, MAGNET_CORR_MAX_OPEN, c->max_open))
		return -EMSGSIZE;
	return 0;
}

static int corr_fill_stats(struct sk_buff *msg, void *state)
{
	const struct corr *c = state;
	const struct {
		int type;
		const u64 *v;
	} counters[] = {
		{ MAGNET_CORR_TAKEN, &c->stats.taken },
		{ MAGNET_CORR_JOURNEYS, &c->stats.journeys },
		{ MAGNET_CORR_PASSED, &c->stats.passed },
		{ MAGNET_CORR_EXPIRED, &c->stats.expired },
		{ MAGNET_CORR_UNMATCHED, &c->stats.unmatched },
		{ MAGNET_CORR_OVERFLOW, &c->stats.overflow },
		{ MAGNET_CORR_CUT, &c->stats.cut },
		{ MAGNET_CORR_LOST, &c->stats.lost },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (nla_put_u64_64bit(msg, counters[i].type,
				      READ_ONCE(*counters[i].v),
				      MAGNET_CORR_PAD))
			return -EMSGSIZE;
	return 0;
}

static void corr_destroy(void *state)
{
	corr_free(state);
}

static struct magnet_filter_type corr_type = {
	.name = "correlate",
	.policy = corr_policy,
	.maxattr = MAGNET_CORR_MAX,
	.flags = MAGNET_FILTER_TAKES,
	.create = corr_create,
	.match = corr_match,
	.fill_config = corr_fill_config,
	.fill_stats = corr_fill_stats,
	.destroy = corr_destroy,
};

static int __init corr_init(void)
{
	return magnet_filter_type_register(&corr_type);
}

static void __exit corr_exit(void)
{
	magnet_filter_type_unregister(&corr_type);
}

module_init(corr_init);
module_exit(corr_exit);

MODULE_DESCRIPTION("magnet filter type \"correlate\": only journeys slower than a threshold");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");

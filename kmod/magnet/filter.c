// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: filter rules and sampling, evaluated in probe context before a
 * record takes any buffer space.
 *
 * Each event has an ordered rule list (struct magnet_ruleset) and a gate
 * compiled from it and the sampling settings (struct magnet_gate, see
 * rules.c): the gate is what probe context reads, without a lock, with
 * preemption disabled (an RCU-sched reader). Neither is changed in place:
 * adding or removing a rule builds a new list and a new gate, publishes
 * the gate with one pointer store, and frees the old ones after a grace
 * period. Rules themselves are immutable once published, so a hit sees a
 * whole old gate or a whole new one, never a half-updated rule.
 *
 * A handler tests its hit's CPU and task against the gate before it
 * builds anything (magnet_event_admit()); only rules on ids or of filter
 * modules need the payload, and only hits they might match go on to the
 * full rules (magnet_gate_evaluate()).
 *
 * A rule is a conjunction of predicates on the record header (CPU set,
 * tgid set, tid, abstract id set or range) and optionally a filter
 * module's predicate (struct magnet_filter_type). A rule can span several
 * events (a correlating filter takes the records of a start, an end and
 * intermediate events); it is listed under the event it was created on
 * and goes away when any of its events does.
 *
 * Writers (netlink, module registration) are serialised by
 * magnet_events_lock, which also guards the rule registry and the list of
 * filter types.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/error-injection.h>
#include <linux/cpumask.h>
#include <linux/idr.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/timekeeping.h>
#include <net/genetlink.h>

#include "magnet.h"

static DEFINE_IDR(magnet_rules);
static LIST_HEAD(magnet_filter_types);

/* --- probe context ------------------------------------------------------- */

/*
 * 1 in N of this CPU's hits (its 1st, N+1th, ...), then at most one per
 * interval. The per-CPU count is one unlocked instruction, exact under
 * nesting; only a kept hit with an interval touches shared state.
 */
static bool sample_keep(struct magnet_event *ev, const struct magnet_gate *gate)
{
	u32 every = gate->sample_every;
	u64 interval = gate->sample_interval;

	if (every > 1 &&
	    (this_cpu_inc_return(ev->stats->sample_seen) - 1) % every)
		return false;
	if (interval) {
		u64 now = ktime_get_mono_fast_ns();
		s64 last = atomic64_read(&ev->sample_last);

		if (last && now - last < interval)
			return false;
		if (atomic64_cmpxchg(&ev->sample_last, last, now) != last)
			return false;
	}
	return true;
}

/**
 * magnet_gate_sample - sampling, for a hit the rules let through
 * @ev:		the event
 * @gate:	its gate, which samples
 *
 * The out-of-line end of magnet_event_admit(). Counts the hit as sampled
 * if it is dropped.
 */
enum magnet_admit magnet_gate_sample(struct magnet_event *ev,
				     const struct magnet_gate *gate)
{
	if (!sample_keep(ev, gate)) {
		this_cpu_inc(ev->stats->sampled);
		return MAGNET_ADMIT_NO;
	}
	return MAGNET_ADMIT_YES;
}

/**
 * magnet_gate_evaluate - decide a hit the gate could not (MAGNET_ADMIT_ASK)
 * @ev:		the event
 * @hit:	the hit, with its header fields, id and payload
 *
 * The full rules, then sampling; counts the hit as filtered or sampled if
 * it is dropped. Probe context, preemption disabled.
 *
 * Return: true if the hit goes on to be logged.
 */
bool magnet_gate_evaluate(struct magnet_event *ev,
			  const struct magnet_hit *hit)
{
	/* Maybe a newer gate than the one that asked: a whole one still. */
	const struct magnet_gate *gate = rcu_dereference_sched(ev->gate);

	if (!gate)
		return true;
	if (gate->rules && !magnet_rules_pass(gate->rules, hit)) {
		this_cpu_inc(ev->stats->filtered);
		return false;
	}
	if (!sample_keep(ev, gate)) {
		this_cpu_inc(ev->stats->sampled);
		return false;
	}
	return true;
}

/* --- configuration -------------------------------------------------------- */

/*
 * A gate for @rs and the given sampling, not yet published; NULL when
 * there is nothing to test, ERR_PTR(-ENOMEM). @gfp: __GFP_NOFAIL where
 * the change undoes something and must not fail.
 */
static struct magnet_gate *gate_build(const struct magnet_ruleset *rs,
				      u32 every, u64 interval, gfp_t gfp)
{
	struct magnet_gate *gate;

	if (!rs && every <= 1 && !interval)
		return NULL;
	gate = kzalloc(struct_size(gate, flat, rs ? rs->count : 0), gfp);
	if (!gate)
		return ERR_PTR(-ENOMEM);
	magnet_gate_fill(gate, rs);
	gate->sample_every = every;
	gate->sample_interval = interval;
	return gate;
}

/* Publish @gate as @ev's; the old one goes after a grace period. */
static void gate_publish(struct magnet_event *ev, struct magnet_gate *gate)
{
	struct magnet_gate *old;

	old = rcu_replace_pointer(ev->gate, gate,
				  lockdep_is_held(&magnet_events_lock));
	if (old)
		kfree_rcu(old, rcu);
}

/**
 * magnet_sampling_prepare - the gate an event would have with new sampling
 * @ev:		the event (caller holds magnet_events_lock)
 * @every:	keep 1 in @every hits of each CPU, 0 or 1 = all
 * @interval:	keep at most one hit per @interval ns, 0 = off
 *
 * The one step of a sampling change that can fail, taken before anything
 * changes. Return: the gate for magnet_sampling_set() (NULL: none is
 * needed), or ERR_PTR(-ENOMEM).
 */
struct magnet_gate *magnet_sampling_prepare(struct magnet_event *ev,
					    u32 every, u64 interval)
{
	lockdep_assert_held(&magnet_events_lock);
	return gate_build(ev->rules, every, interval, GFP_KERNEL);
}

/**
 * magnet_sampling_set - change an event's sampling
 * @ev:		the event (caller holds magnet_events_lock, and has not let
 *		it go since magnet_sampling_prepare())
 * @gate:	what magnet_sampling_prepare() returned for the same values
 * @every:	as given to it
 * @interval:	as given to it
 *
 * Restarts the counts, so each CPU's next hit is kept.
 */
void magnet_sampling_set(struct magnet_event *ev, struct magnet_gate *gate,
			 u32 every, u64 interval)
{
	unsigned int cpu;

	lockdep_assert_held(&magnet_events_lock);
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu_ptr(ev->stats, cpu)->sample_seen, 0);
	atomic64_set(&ev->sample_last, 0);
	ev->sample_every = every;
	ev->sample_interval = interval;
	gate_publish(ev, gate);
}

/*
 * A rule list of @count rules, for adding one. noinline: a fault-injection
 * point (fail_function) that only adding goes through.
 */
static noinline struct magnet_ruleset *ruleset_alloc_for_add(unsigned int count)
{
	struct magnet_ruleset *rs;

	return kzalloc(struct_size(rs, rules, count), GFP_KERNEL);
}

ALLOW_ERROR_INJECTION(ruleset_alloc_for_add, NULL);

/*
 * Publish @ev's rule list with @add appended and/or @del left out, and the
 * gate compiled from it. The old list and gate are freed after a grace
 * period; the caller waits for one before freeing @del. Taking a rule out
 * cannot fail: it undoes and unloads.
 */
static int ruleset_replace(struct magnet_event *ev,
			   struct magnet_filter_rule *add,
			   struct magnet_filter_rule *del)
{
	gfp_t gfp = add ? GFP_KERNEL : GFP_KERNEL | __GFP_NOFAIL;
	struct magnet_ruleset *old = ev->rules, *new = NULL;
	unsigned int n = old ? old->count : 0, i;
	struct magnet_gate *gate;

	lockdep_assert_held(&magnet_events_lock);
	if (add && n >= MAGNET_FILTER_RULES_MAX)
		return -ENOSPC;
	if (n + !!add - (del ? 1 : 0) > 0) {
		new = add ? ruleset_alloc_for_add(n + 1) :
			    kzalloc(struct_size(new, rules, n + 1), gfp);
		if (!new)
			return -ENOMEM;
		for (i = 0; i < n; i++)
			if (old->rules[i] != del)
				new->rules[new->count++] = old->rules[i];
		if (add)
			new->rules[new->count++] = add;
		for (i = 0; i < new->count; i++)
			if (new->rules[i]->action == MAGNET_FILTER_INCLUDE)
				new->has_include = true;
		if (!new->count) {
			kfree(new);
			new = NULL;
		}
	}
	gate = gate_build(new, ev->sample_every, ev->sample_interval, gfp);
	if (IS_ERR(gate)) {
		kfree(new);
		return PTR_ERR(gate);
	}
	ev->rules = new;
	gate_publish(ev, gate);
	/* Gates still being read may point to the old list. */
	if (old)
		kfree_rcu(old, rcu);
	return 0;
}

static void rule_free(struct magnet_filter_rule *r)
{
	if (r->state)
		r->type->destroy(r->state);
	kfree(r->tgids);
	kfree(r->ids);
	bitmap_free(r->cpus);
	kfree(r);
}

/* Unpublish @r from all its events; the caller then waits and frees. */
static void rule_unpublish(struct magnet_filter_rule *r)
{
	unsigned int i;

	for (i = 0; i < r->nevents; i++)
		ruleset_replace(r->events[i], NULL, r);	/* cannot fail */
	idr_remove(&magnet_rules, r->id);
}

static void rules_remove(struct magnet_filter_rule **rules, unsigned int n)
{
	unsigned int i;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		rule_unpublish(rules[i]);
	synchronize_rcu();
	for (i = 0; i < n; i++)
		rule_free(rules[i]);
}

/**
 * magnet_filter_del - remove a rule
 * @id:		its FILTER_ID
 *
 * Caller holds magnet_events_lock. Returns once no hit can still be
 * evaluating the rule. Return: 0 or -ENOENT.
 */
int magnet_filter_del(u32 id)
{
	struct magnet_filter_rule *r;

	lockdep_assert_held(&magnet_events_lock);
	r = idr_find(&magnet_rules, id);
	if (!r)
		return -ENOENT;
	rules_remove(&r, 1);
	return 0;
}

static bool rule_has_event(const struct magnet_filter_rule *r,
			   const struct magnet_event *ev)
{
	unsigned int i;

	for (i = 0; i < r->nevents; i++)
		if (r->events[i] == ev)
			return true;
	return false;
}

/*
 * Remove every rule that @ev is part of, or (@ev NULL) every rule of
 * filter type @type. Caller holds magnet_events_lock.
 */
static unsigned int rules_remove_matching(const struct magnet_event *ev,
					  const struct magnet_filter_type *type)
{
	struct magnet_filter_rule *batch[16], *r;
	unsigned int total = 0, n;
	int id;

	do {
		n = 0;
		idr_for_each_entry(&magnet_rules, r, id) {
			if (ev ? !rule_has_event(r, ev) : r->type != type)
				continue;
			batch[n++] = r;
			if (n == ARRAY_SIZE(batch))
				break;
		}
		rules_remove(batch, n);
		total += n;
	} while (n);
	return total;
}

/*
 * The event is going, no hit can reach it any more: its rules (and rules
 * spanning it) go, then its gate.
 */
void magnet_filters_remove_event(struct magnet_event *ev)
{
	lockdep_assert_held(&magnet_events_lock);
	rules_remove_matching(ev, NULL);
	gate_publish(ev, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Collect the values of repeated attribute @type of @msg, sorted. */
static int collect_set(struct genl_info *info, int type, u64 **out,
		       u16 *count)
{
	const struct nlattr *nla;
	unsigned int n = 0;
	int rem;
	u64 *set;

	nlmsg_for_each_attr(nla, info->nlhdr, GENL_HDRLEN, rem)
		if (nla_type(nla) == type)
			n++;
	if (!n)
		return 0;
	if (n > MAGNET_FILTER_SET_MAX) {
		NL_SET_ERR_MSG(info->extack,
			       "too many tgids or ids in one rule (at most 256)");
		return -EINVAL;
	}
	set = kcalloc(n, sizeof(*set), GFP_KERNEL);
	if (!set)
		return -ENOMEM;
	n = 0;
	nlmsg_for_each_attr(nla, info->nlhdr, GENL_HDRLEN, rem) {
		if (nla_type(nla) != type)
			continue;
		set[n++] = type == MAGNET_A_FILTER_TGID ? nla_get_u32(nla) :
							  nla_get_u64(nla);
	}
	sort(set, n, sizeof(*set), cmp_u64, NULL);
	*out = set;
	*count = n;
	return 0;
}

static const struct magnet_filter_type *type_find(const char *name)
{
	const struct magnet_filter_type *t;

	list_for_each_entry(t, &magnet_filter_types, node)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* Parse the header predicates of a FILTER_NEW request into @r. */
static int rule_parse_header(struct magnet_filter_rule *r,
			     struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	int err;

	if (a[MAGNET_A_FILTER_CPUS]) {
		const struct nlattr *nla = a[MAGNET_A_FILTER_CPUS];
		const u8 *bytes = nla_data(nla);
		unsigned int len = nla_len(nla), bit;

		r->cpus = bitmap_zalloc(nr_cpu_ids, GFP_KERNEL);
		if (!r->cpus)
			return -ENOMEM;
		for (bit = 0; bit < len * BITS_PER_BYTE; bit++) {
			if (!(bytes[bit / 8] & BIT(bit % 8)))
				continue;
			if (bit >= nr_cpu_ids || !cpu_possible(bit)) {
				NL_SET_ERR_MSG_ATTR(extack, nla,
						    "the CPU set names a CPU this machine does not have");
				return -EINVAL;
			}
			__set_bit(bit, r->cpus);
		}
		if (bitmap_empty(r->cpus, nr_cpu_ids)) {
			NL_SET_ERR_MSG_ATTR(extack, nla, "the CPU set is empty");
			return -EINVAL;
		}
		r->ncpu_bytes = len;
		r->match |= MAGNET_MATCH_CPU;
	}

	err = collect_set(info, MAGNET_A_FILTER_TGID, &r->tgids, &r->ntgids);
	if (!err && r->ntgids)
		r->match |= MAGNET_MATCH_TGID;
	if (!err)
		err = collect_set(info, MAGNET_A_FILTER_IDS, &r->ids, &r->nids);
	if (!err && r->nids)
		r->match |= MAGNET_MATCH_IDS;
	if (err)
		return err;

	if (a[MAGNET_A_FILTER_TID]) {
		r->tid = nla_get_u32(a[MAGNET_A_FILTER_TID]);
		r->match |= MAGNET_MATCH_TID;
	}

	if (a[MAGNET_A_FILTER_ID_MIN] || a[MAGNET_A_FILTER_ID_MAX]) {
		if (!a[MAGNET_A_FILTER_ID_MIN] || !a[MAGNET_A_FILTER_ID_MAX]) {
			NL_SET_ERR_MSG_ATTR(extack,
					    a[MAGNET_A_FILTER_ID_MIN] ?:
					    a[MAGNET_A_FILTER_ID_MAX],
					    "an id range needs both FILTER_ID_MIN and FILTER_ID_MAX");
			return -EINVAL;
		}
		if (r->match & MAGNET_MATCH_IDS) {
			NL_SET_ERR_MSG_ATTR(extack, a[MAGNET_A_FILTER_ID_MIN],
					    "give an id set or an id range, not both");
			return -EINVAL;
		}
		r->id_min = nla_get_u64(a[MAGNET_A_FILTER_ID_MIN]);
		r->id_max = nla_get_u64(a[MAGNET_A_FILTER_ID_MAX]);
		if (r->id_min > r->id_max) {
			NL_SET_ERR_MSG_ATTR(extack, a[MAGNET_A_FILTER_ID_MAX],
					    "the id range ends before it starts");
			return -EINVAL;
		}
		r->match |= MAGNET_MATCH_ID_RANGE;
	}
	return 0;
}

/* Let the rule's filter type parse its configuration and make its state. */
static int rule_parse_type(struct magnet_filter_rule *r,
			   struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	const struct magnet_filter_type *type;
	struct magnet_filter_ctx ctx;
	struct nlattr **tb;
	void *state;
	int err;

	if (!a[MAGNET_A_FILTER_TYPE]) {
		if (a[MAGNET_A_FILTER_CONFIG]) {
			NL_SET_ERR_MSG_ATTR(extack, a[MAGNET_A_FILTER_CONFIG],
					    "FILTER_CONFIG without FILTER_TYPE");
			return -EINVAL;
		}
		return 0;
	}
	type = type_find(nla_data(a[MAGNET_A_FILTER_TYPE]));
	if (!type) {
		NL_SET_ERR_MSG_ATTR(extack, a[MAGNET_A_FILTER_TYPE],
				    "no such filter type (is its module loaded?)");
		return -ENOENT;
	}
	if ((type->flags & MAGNET_FILTER_TAKES) && !a[MAGNET_A_FILTER_ACTION])
		r->action = MAGNET_FILTER_EXCLUDE;
	if ((type->flags & MAGNET_FILTER_TAKES) &&
	    (r->match || r->action != MAGNET_FILTER_EXCLUDE)) {
		NL_SET_ERR_MSG_ATTR(extack, a[MAGNET_A_FILTER_TYPE],
				    "this filter type takes the records it matches: its rule must be an exclude rule with no other predicate");
		return -EINVAL;
	}

	tb = kcalloc(type->maxattr + 1, sizeof(*tb), GFP_KERNEL);
	if (!tb)
		return -ENOMEM;
	if (a[MAGNET_A_FILTER_CONFIG]) {
		err = nla_parse_nested(tb, type->maxattr,
				       a[MAGNET_A_FILTER_CONFIG], type->policy,
				       extack);
		if (err)
			goto out;
	}
	ctx = (struct magnet_filter_ctx) {
		.rule = r,
		.id = r->id,
		.event = r->events[0],
		.action = r->action,
		.config = a[MAGNET_A_FILTER_CONFIG],
	};
	state = type->create(&ctx, tb, extack);
	if (IS_ERR(state)) {
		err = PTR_ERR(state);
		goto out;
	}
	r->type = type;
	r->state = state;
	err = 0;
out:
	kfree(tb);
	return err;
}

/**
 * magnet_filter_attach - make a rule under construction span another event
 * @ctx:	from the filter type's create()
 * @event_id:	the other event
 * @extack:	for the error message
 *
 * For create() of a filter type: the rule will be put in @event_id's list
 * too, and removed when that event goes.
 *
 * Return: 0, -ENOENT (no such event), -EEXIST (already part of the rule),
 * -ENOSPC (too many events).
 */
int magnet_filter_attach(struct magnet_filter_ctx *ctx, u16 event_id,
			 struct netlink_ext_ack *extack)
{
	struct magnet_filter_rule *r = ctx->rule;
	struct magnet_event *ev;

	lockdep_assert_held(&magnet_events_lock);
	ev = event_id ? magnet_event_find(event_id, 0, NULL) : NULL;
	if (!ev) {
		NL_SET_ERR_MSG(extack, "no probe with that id");
		return -ENOENT;
	}
	/* (r->events[0], the rule's own event, is there from the start) */
	if (r->nevents && ev->session != r->events[0]->session) {
		NL_SET_ERR_MSG(extack, "that probe is in another session");
		return -EPERM;
	}
	if (rule_has_event(r, ev)) {
		NL_SET_ERR_MSG(extack, "a probe appears twice in the rule");
		return -EEXIST;
	}
	if (r->nevents >= MAGNET_RULE_EVENTS_MAX) {
		NL_SET_ERR_MSG(extack, "the rule spans too many probes");
		return -ENOSPC;
	}
	r->events[r->nevents++] = ev;
	return 0;
}
EXPORT_SYMBOL_GPL(magnet_filter_attach);

/**
 * magnet_filter_new - add a rule from a FILTER_NEW request
 * @ev:		the event it is for
 * @info:	the request
 *
 * Caller holds magnet_events_lock. On failure nothing has changed.
 * Return: the new rule's id, or a negative errno (with a message).
 */
int magnet_filter_new(struct magnet_event *ev, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **a = info->attrs;
	struct magnet_filter_rule *r;
	unsigned int i;
	int err, id;

	lockdep_assert_held(&magnet_events_lock);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->events[r->nevents++] = ev;
	if (a[MAGNET_A_FILTER_ACTION])
		r->action = nla_get_u8(a[MAGNET_A_FILTER_ACTION]);

	/* An id now, for the filter type; published only at the end. */
	id = idr_alloc_cyclic(&magnet_rules, NULL, 1, INT_MAX, GFP_KERNEL);
	if (id < 0) {
		kfree(r);
		return id;
	}
	r->id = id;

	err = rule_parse_header(r, info);
	if (!err)
		err = rule_parse_type(r, info);
	if (err)
		goto fail;
	if (!r->match && !r->type) {
		NL_SET_ERR_MSG(extack,
			       "the rule has no predicate: give a CPU set, tgids, a tid, ids or a filter type");
		err = -EINVAL;
		goto fail;
	}
	for (i = 0; i < r->nevents; i++) {
		struct magnet_ruleset *rs = r->events[i]->rules;

		if (rs && rs->count >= MAGNET_FILTER_RULES_MAX) {
			NL_SET_ERR_MSG(extack,
				       "the probe has MAGNET_FILTER_RULES_MAX rules already");
			err = -ENOSPC;
			goto fail;
		}
	}
	for (i = 0; i < r->nevents; i++) {
		err = ruleset_replace(r->events[i], r, NULL);
		if (err) {
			/* Undo the events done so far (cannot fail). */
			while (i--)
				ruleset_replace(r->events[i], NULL, r);
			synchronize_rcu();
			goto fail;
		}
	}
	idr_replace(&magnet_rules, r, id);
	return id;

fail:
	idr_remove(&magnet_rules, id);
	rule_free(r);
	return err;
}

/* The rule with the lowest id >= *@id (updated), for listing. */
struct magnet_filter_rule *magnet_filter_next(u32 *id)
{
	struct magnet_filter_rule *r;
	int next = *id;

	lockdep_assert_held(&magnet_events_lock);
	/* Skips ids reserved for rules still being made (NULL entries). */
	r = idr_get_next(&magnet_rules, &next);
	if (r)
		*id = next;
	return r;
}

struct magnet_event *magnet_filter_event(const struct magnet_filter_rule *r)
{
	return r->events[0];
}

/* Put @r's attributes (all but PROBE_*) into a FILTER_GET reply. */
int magnet_filter_fill(struct sk_buff *skb, const struct magnet_filter_rule *r)
{
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_u32(skb, MAGNET_A_FILTER_ID, r->id) ||
	    nla_put_u8(skb, MAGNET_A_FILTER_ACTION, r->action))
		return -EMSGSIZE;
	if (r->match & MAGNET_MATCH_CPU) {
		u8 *bytes;

		nest = nla_reserve(skb, MAGNET_A_FILTER_CPUS, r->ncpu_bytes);
		if (!nest)
			return -EMSGSIZE;
		bytes = nla_data(nest);
		memset(bytes, 0, r->ncpu_bytes);
		for (i = 0; i < nr_cpu_ids && i < r->ncpu_bytes * 8; i++)
			if (test_bit(i, r->cpus))
				bytes[i / 8] |= BIT(i % 8);
	}
	for (i = 0; i < r->ntgids; i++)
		if (nla_put_u32(skb, MAGNET_A_FILTER_TGID, r->tgids[i]))
			return -EMSGSIZE;
	if ((r->match & MAGNET_MATCH_TID) &&
	    nla_put_u32(skb, MAGNET_A_FILTER_TID, r->tid))
		return -EMSGSIZE;
	for (i = 0; i < r->nids; i++)
		if (nla_put_u64_64bit(skb, MAGNET_A_FILTER_IDS, r->ids[i],
				      MAGNET_A_PAD))
			return -EMSGSIZE;
	if ((r->match & MAGNET_MATCH_ID_RANGE) &&
	    (nla_put_u64_64bit(skb, MAGNET_A_FILTER_ID_MIN, r->id_min,
			       MAGNET_A_PAD) ||
	     nla_put_u64_64bit(skb, MAGNET_A_FILTER_ID_MAX, r->id_max,
			       MAGNET_A_PAD)))
		return -EMSGSIZE;
	if (!r->type)
		return 0;
	if (nla_put_string(skb, MAGNET_A_FILTER_TYPE, r->type->name))
		return -EMSGSIZE;
	if (r->type->fill_config) {
		nest = nla_nest_start(skb, MAGNET_A_FILTER_CONFIG);
		if (!nest || r->type->fill_config(skb, r->state))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	if (r->type->fill_stats) {
		nest = nla_nest_start(skb, MAGNET_A_FILTER_STATS);
		if (!nest || r->type->fill_stats(skb, r->state))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

/* --- filter types (the filter modules' API) ------------------------------ */

/**
 * magnet_filter_type_register - offer a predicate type to filter rules
 * @type:	the type; its name must be unique
 *
 * Return: 0, -EINVAL (bad name or missing method), -EEXIST.
 */
int magnet_filter_type_register(struct magnet_filter_type *type)
{
	int err = 0;

	if (!type->name || !magnet_name_valid(type->name) || !type->create ||
	    !type->match || !type->destroy || !type->policy)
		return -EINVAL;
	mutex_lock(&magnet_events_lock);
	if (type_find(type->name))
		err = -EEXIST;
	else
		list_add_tail(&type->node, &magnet_filter_types);
	mutex_unlock(&magnet_events_lock);
	return err;
}
EXPORT_SYMBOL_GPL(magnet_filter_type_register);

/**
 * magnet_filter_type_unregister - withdraw a predicate type
 * @type:	registered with magnet_filter_type_register()
 *
 * Removes every rule of this type from its events, waits until no hit can
 * still be in @type's match(), and destroys the rules' states: after this
 * the module may go, even while its events keep firing.
 */
void magnet_filter_type_unregister(struct magnet_filter_type *type)
{
	unsigned int n;

	mutex_lock(&magnet_events_lock);
	n = rules_remove_matching(NULL, type);
	list_del(&type->node);
	mutex_unlock(&magnet_events_lock);
	if (n)
		pr_info("filter type %s withdrawn: %u rules removed\n",
			type->name, n);
}
EXPORT_SYMBOL_GPL(magnet_filter_type_unregister);

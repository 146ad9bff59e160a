/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: filter rules and the gate compiled from them (rules.c).
 *
 * This header and rules.c use nothing from the kernel but types, bit
 * operations and <linux/magnet.h>, so that tests/host/rules-unit.c can
 * build the very same code in user space and check, over many random rule
 * lists, that the compiled gate decides every hit as the rules do.
 */
#ifndef _MAGNET_RULES_H
#define _MAGNET_RULES_H

#include <linux/bitops.h>
#include <linux/types.h>
#include <linux/magnet.h>

#define MAGNET_MATCH_CPU	BIT(0)
#define MAGNET_MATCH_TGID	BIT(1)
#define MAGNET_MATCH_TID	BIT(2)
#define MAGNET_MATCH_IDS	BIT(3)
#define MAGNET_MATCH_ID_RANGE	BIT(4)

/* The predicates a hit's context answers before any payload exists. */
#define MAGNET_MATCH_FLAT	(MAGNET_MATCH_CPU | MAGNET_MATCH_TGID | \
				 MAGNET_MATCH_TID)

/* Events a rule can span: its own, a correlation's end and intermediates. */
#define MAGNET_RULE_EVENTS_MAX	10

/*
 * struct magnet_filter_rule - one rule, immutable once published
 * @match:	MAGNET_MATCH_* predicates present; all must hold
 * @tgids, @ids: sorted sets (u64: one search for both)
 * @cpus:	bitmap of nr_cpu_ids bits
 * @ncpu_bytes:	length of the CPU set as given, to report it back
 * @type:	filter module's predicate, NULL for header-only rules
 * @state:	@type's instance
 * @events:	events whose lists hold the rule; @events[0] is the one it
 *		was created on
 */
struct magnet_filter_rule {
	u32 id;
	u8 action;
	u8 match;
	u16 ntgids;
	u16 nids;
	u16 ncpu_bytes;
	u32 tid;
	u64 id_min;
	u64 id_max;
	u64 *tgids;
	u64 *ids;
	unsigned long *cpus;
	const struct magnet_filter_type *type;
	void *state;
	unsigned int nevents;
	struct magnet_event *events[MAGNET_RULE_EVENTS_MAX];
};

/*
 * struct magnet_ruleset - an event's rules, in order, as configured
 * @has_include: some rule is an include rule
 * @rcu:	the list is freed after a grace period (filter.c)
 */
struct magnet_ruleset {
	unsigned int count;
	bool has_include;
	struct rcu_head rcu;
	struct magnet_filter_rule *rules[];
};

/*
 * struct magnet_gate_rule - a rule as the gate sees it
 * @final:	the rule has only flat predicates, so when they hold its
 *		action is decided; otherwise it can only say "maybe"
 * @match:	its flat predicates (MAGNET_MATCH_FLAT bits)
 * @tgids, @cpus: the rule's own sets (the rule outlives every gate that
 *		points to it: it is freed a grace period after its last
 *		gate is replaced)
 */
struct magnet_gate_rule {
	u8 action;
	u8 match;
	bool final;
	u16 ntgids;
	u32 tid;
	const u64 *tgids;
	const unsigned long *cpus;
};

/*
 * struct magnet_gate - what a hit is tested against first, in its handler
 * @rules:	the full list, for hits the flat rules cannot decide; NULL
 *		when there are no rules (only sampling)
 * @sample_every, @sample_interval: sampling (see MAGNET_A_SAMPLE_*)
 * @has_include: some rule is an include rule
 * @nflat:	entries in @flat: one per rule, in the rules' order
 *
 * Built whenever the rules or the sampling change, published with one
 * pointer store (filter.c), immutable after: a hit sees a whole gate.
 */
struct magnet_gate {
	const struct magnet_ruleset *rules;
	u32 sample_every;
	u64 sample_interval;
	bool has_include;
	unsigned int nflat;
	struct rcu_head rcu;
	struct magnet_gate_rule flat[];
};

/* What the gate says of a hit. */
enum magnet_verdict {
	MAGNET_VERDICT_DROP,	 /* filtered out: no record */
	MAGNET_VERDICT_PASS,	 /* the rules let it through */
	MAGNET_VERDICT_EVALUATE, /* ask magnet_rules_pass() with the payload */
};

bool magnet_rules_pass(const struct magnet_ruleset *rs,
		       const struct magnet_hit *hit);
void magnet_gate_fill(struct magnet_gate *gate,
		      const struct magnet_ruleset *rs);

/* Is @v in the sorted set @set of @n values? (Binary search, any context.) */
static inline bool magnet_in_set(const u64 *set, unsigned int n, u64 v)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (set[mid] == v)
			return true;
		if (set[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/**
 * magnet_gate_flat - test a hit's context against the gate's rules
 * @gate:	the event's gate
 * @cpu:	the CPU the hit runs on
 * @tgid:	the current task's process
 * @tid:	the current task
 *
 * Any context; inline, as the first test of every hit of a gated event.
 * rules.c says what the verdicts mean and why they are exact.
 */
static inline enum magnet_verdict
magnet_gate_flat(const struct magnet_gate *gate, u32 cpu, u32 tgid, u32 tid)
{
	bool included = !gate->has_include, maybe = false;
	unsigned int i;

	for (i = 0; i < gate->nflat; i++) {
		const struct magnet_gate_rule *g = &gate->flat[i];

		/* Once included, only exclude rules can change the verdict. */
		if (included && g->action == MAGNET_FILTER_INCLUDE)
			continue;
		if ((g->match & MAGNET_MATCH_TID) && tid != g->tid)
			continue;
		if ((g->match & MAGNET_MATCH_CPU) && !test_bit(cpu, g->cpus))
			continue;
		if ((g->match & MAGNET_MATCH_TGID) &&
		    !magnet_in_set(g->tgids, g->ntgids, tgid))
			continue;
		if (!g->final) {
			maybe = true;
			continue;
		}
		/*
		 * A rule before this one may be a filter module's that
		 * takes or counts what it matches: it must still see it.
		 */
		if (g->action == MAGNET_FILTER_EXCLUDE)
			return maybe ? MAGNET_VERDICT_EVALUATE :
				       MAGNET_VERDICT_DROP;
		included = true;
	}
	if (maybe)
		return MAGNET_VERDICT_EVALUATE;
	return included ? MAGNET_VERDICT_PASS : MAGNET_VERDICT_DROP;
}

#endif /* _MAGNET_RULES_H */

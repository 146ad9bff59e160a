// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: how filter rules decide a hit, and the gate compiled from them.
 *
 * The rules of an event are an ordered list; a rule matches a hit when all
 * its predicates hold (CPU set, tgid set, tid, id set or range, a filter
 * module's predicate). The list's verdict: a matching exclude rule drops
 * the hit; otherwise, if there are include rules, one of them must match.
 * magnet_rules_pass() is that definition, run on a hit whose payload and
 * id are known.
 *
 * Most rules people write ask only who and where: a CPU set, a tgid set, a
 * tid. Those a handler can answer before it builds anything, from the CPU
 * it runs on and the current task. The gate is the rule list compiled for
 * that: one flat entry per rule with those three predicates only. Testing
 * a hit's context against it gives:
 *
 *   DROP	a rule with only flat predicates (a "final" one) excludes the
 *		hit, or no rule could include it while include rules exist;
 *   PASS	no rule could exclude it, and it is included (or there are
 *		no include rules);
 *   EVALUATE	a rule with more predicates (ids, a filter module) matches
 *		on its flat part, so only the full rules can tell.
 *
 * This is exact: a rule whose flat part does not hold does not match in
 * magnet_rules_pass() either, and a final rule that holds matches there
 * too. It is exact in what filter modules see as well: the gate decides
 * alone only when magnet_rules_pass() would not have called any module's
 * match() (some count or take what they match). tests/host/rules-unit.c
 * checks both against magnet_rules_pass() over random rule lists and hits.
 *
 * Nothing here allocates, locks or knows about RCU: filter.c owns the
 * lists' lifetime (and rules.h says why this file stands alone).
 */

#include "rules.h"

static bool rule_matches(const struct magnet_filter_rule *r,
			 const struct magnet_hit *hit)
{
	if ((r->match & MAGNET_MATCH_CPU) && !test_bit(hit->cpu, r->cpus))
		return false;
	if ((r->match & MAGNET_MATCH_TGID) &&
	    !magnet_in_set(r->tgids, r->ntgids, hit->tgid))
		return false;
	if ((r->match & MAGNET_MATCH_TID) && hit->tid != r->tid)
		return false;
	if ((r->match & MAGNET_MATCH_ID_RANGE) &&
	    (hit->id < r->id_min || hit->id > r->id_max))
		return false;
	if ((r->match & MAGNET_MATCH_IDS) && !magnet_in_set(r->ids, r->nids, hit->id))
		return false;
	return !r->type || r->type->match(r->state, hit);
}

/**
 * magnet_rules_pass - do the rules let this hit through?
 * @rs:		the event's rules
 * @hit:	the hit, header fields, id and payload filled in
 *
 * Exclude wins; include needs a match. Any context.
 */
bool magnet_rules_pass(const struct magnet_ruleset *rs,
		       const struct magnet_hit *hit)
{
	bool included = !rs->has_include;
	unsigned int i;

	for (i = 0; i < rs->count; i++) {
		const struct magnet_filter_rule *r = rs->rules[i];

		if (included && r->action == MAGNET_FILTER_INCLUDE)
			continue;
		if (!rule_matches(r, hit))
			continue;
		if (r->action == MAGNET_FILTER_EXCLUDE)
			return false;
		included = true;
	}
	return included;
}

/**
 * magnet_gate_fill - compile rules into a gate
 * @gate:	room for struct_size(gate, flat, @rs ? @rs->count : 0); its
 *		sampling fields are the caller's
 * @rs:		the rules, or NULL for none
 */
void magnet_gate_fill(struct magnet_gate *gate,
		      const struct magnet_ruleset *rs)
{
	unsigned int i;

	gate->rules = rs;
	gate->has_include = rs && rs->has_include;
	gate->nflat = rs ? rs->count : 0;
	for (i = 0; i < gate->nflat; i++) {
		const struct magnet_filter_rule *r = rs->rules[i];
		struct magnet_gate_rule *g = &gate->flat[i];

		g->action = r->action;
		g->match = r->match & MAGNET_MATCH_FLAT;
		g->final = !(r->match & ~MAGNET_MATCH_FLAT) && !r->type;
		g->tid = r->tid;
		g->ntgids = r->ntgids;
		g->tgids = r->tgids;
		g->cpus = r->cpus;
	}
}

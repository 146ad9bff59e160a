// SPDX-License-Identifier: GPL-2.0
/*
 * rules-unit: the module's filter gate against the module's full rules.
 *
 * Builds kmod/magnet/rules.c itself, the code the module runs, in user
 * space (tests/host/kshim/ stands in for the few kernel headers it uses),
 * and runs random rule lists and random hits through both ways a hit can
 * be decided:
 *   - magnet_rules_pass(), the definition of what rules mean;
 *   - magnet_gate_flat() on the gate magnet_gate_fill() compiled, which a
 *     handler asks first, from the CPU and the task only, followed by
 *     magnet_rules_pass() when the gate says EVALUATE.
 * They must agree on every hit. And where the gate decides alone, the full
 * rules must not have called any filter module's match() on that hit:
 * modules count and take what they match, so they must see the same hits
 * either way.
 *
 * A stand-in filter type plays the module: its match() looks at the
 * payload and counts its calls. The lists are what netlink accepts: 1 to
 * MAGNET_FILTER_RULES_MAX rules, each with at least one predicate.
 *
 * Usage: rules-unit [SEED]. Prints "ok N - what" or "not ok N - what" per
 * check, then "N passed, M failed"; exits 1 if anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rules.h"

#define NCPUS		8	/* CPUs the hits run on (one bitmap word) */
#define UNIVERSE	6	/* tgids and tids are 1..UNIVERSE */
#define IDS		10	/* ids are 0..IDS-1 */
#define LISTS		200000
#define HITS		64

static unsigned long match_calls;

/* A check, in the harness's format (tests/harness.h). */
static void check(int ok, const char *what)
{
	harness_check(ok, "%s", what);
}

static unsigned long long rng;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

/* The stand-in filter module: matches payloads whose byte is in its set. */
struct fake_state {
	unsigned int set;
};

static bool fake_match(void *state, const struct magnet_hit *hit)
{
	const struct fake_state *s = state;

	match_calls++;
	return (s->set >> (*(const u8 *)hit->payload % 8)) & 1;
}

static const struct magnet_filter_type fake_type = {
	.name = "fake",
	.match = fake_match,
};

/* A sorted set of n distinct values in [lo, lo + span). */
static u16 random_set(u64 *set, unsigned int n, unsigned int lo,
		      unsigned int span)
{
	unsigned int v, i = 0;

	for (v = 0; v < span && i < n; v++)
		if (rnd(span - v) < n - i)
			set[i++] = lo + v;
	return (u16)i;
}

struct list {
	struct magnet_ruleset *rs;
	struct magnet_filter_rule rules[MAGNET_FILTER_RULES_MAX];
	u64 sets[MAGNET_FILTER_RULES_MAX][2][IDS];
	unsigned long cpus[MAGNET_FILTER_RULES_MAX];
	struct fake_state states[MAGNET_FILTER_RULES_MAX];
	bool all_final;
};

static void random_rule(struct list *l, unsigned int i)
{
	struct magnet_filter_rule *r = &l->rules[i];

	memset(r, 0, sizeof(*r));
	r->action = rnd(2) ? MAGNET_FILTER_INCLUDE : MAGNET_FILTER_EXCLUDE;
	do {
		if (!rnd(3)) {
			l->cpus[i] = 1 + rnd((1u << NCPUS) - 1);
			r->cpus = &l->cpus[i];
			r->match |= MAGNET_MATCH_CPU;
		}
		if (!rnd(3)) {
			r->tgids = l->sets[i][0];
			r->ntgids = random_set(l->sets[i][0], 1 + rnd(3), 1,
					       UNIVERSE);
			r->match |= MAGNET_MATCH_TGID;
		}
		if (!rnd(3)) {
			r->tid = 1 + rnd(UNIVERSE);
			r->match |= MAGNET_MATCH_TID;
		}
		switch (rnd(6)) {
		case 0:
			r->ids = l->sets[i][1];
			r->nids = random_set(l->sets[i][1], 1 + rnd(4), 0, IDS);
			r->match |= MAGNET_MATCH_IDS;
			break;
		case 1:
			r->id_min = rnd(IDS);
			r->id_max = r->id_min + rnd(IDS - (unsigned int)r->id_min);
			r->match |= MAGNET_MATCH_ID_RANGE;
			break;
		}
		if (!rnd(5)) {
			l->states[i].set = rnd(256);
			r->type = &fake_type;
			r->state = &l->states[i];
		}
	} while (!r->match && !r->type);	/* netlink refuses empty rules */
	if ((r->match & ~MAGNET_MATCH_FLAT) || r->type)
		l->all_final = false;
}

static void random_list(struct list *l, unsigned int n)
{
	unsigned int i;

	l->all_final = true;
	l->rs->count = n;
	l->rs->has_include = false;
	for (i = 0; i < n; i++) {
		random_rule(l, i);
		l->rs->rules[i] = &l->rules[i];
		if (l->rules[i].action == MAGNET_FILTER_INCLUDE)
			l->rs->has_include = true;
	}
}

int main(int argc, char **argv)
{
	unsigned long verdicts[3] = { 0 }, disagree = 0, silent = 0;
	unsigned long final_asked = 0, final_lists = 0, empty_bad = 0;
	unsigned long hits = 0;
	struct magnet_gate *gate;
	static struct list l;
	char what[160];
	unsigned int i, h;
	u8 payload;

	rng = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x6d61676e6574ULL;
	if (!rng)
		rng = 1;
	printf("# seed %s\n", argc > 1 ? argv[1] : "0x6d61676e6574");
	l.rs = calloc(1, sizeof(*l.rs) +
		      MAGNET_FILTER_RULES_MAX * sizeof(l.rs->rules[0]));
	gate = calloc(1, sizeof(*gate) +
		      MAGNET_FILTER_RULES_MAX * sizeof(gate->flat[0]));
	if (!l.rs || !gate)
		return 2;

	/* A gate with sampling only (no rules) lets every hit through. */
	magnet_gate_fill(gate, NULL);
	for (h = 0; h < 1000; h++)
		if (magnet_gate_flat(gate, rnd(NCPUS), 1 + rnd(UNIVERSE),
				     1 + rnd(UNIVERSE)) != MAGNET_VERDICT_PASS)
			empty_bad++;
	check(!empty_bad, "a gate without rules passes every hit");

	for (i = 0; i < LISTS; i++) {
		/* Mostly short lists, as people write them; some long ones. */
		unsigned int n = rnd(8) ? 1 + rnd(4) :
				 1 + rnd(MAGNET_FILTER_RULES_MAX);

		random_list(&l, n);
		magnet_gate_fill(gate, l.rs);
		final_lists += l.all_final;
		for (h = 0; h < HITS; h++) {
			struct magnet_hit hit = {
				.cpu = rnd(NCPUS),
				.tgid = 1 + rnd(UNIVERSE),
				.tid = 1 + rnd(UNIVERSE),
				.id = rnd(IDS),
				.payload = &payload,
				.payload_size = 1,
			};
			enum magnet_verdict v;
			unsigned long calls;
			bool want, got;

			payload = (u8)rnd(256);
			match_calls = 0;
			want = magnet_rules_pass(l.rs, &hit);
			calls = match_calls;

			v = magnet_gate_flat(gate, hit.cpu, hit.tgid, hit.tid);
			verdicts[v]++;
			hits++;
			if (v == MAGNET_VERDICT_EVALUATE) {
				final_asked += l.all_final;
				got = magnet_rules_pass(gate->rules, &hit);
			} else {
				got = v == MAGNET_VERDICT_PASS;
				silent += calls != 0;
			}
			if (got != want && disagree++ < 5)
				printf("# list %u (%u rules), hit %u: rules say %d, gate says %d\n",
				       i, n, h, want, got);
		}
	}
	snprintf(what, sizeof(what),
		 "gate and rules agree on %lu hits of %d random rule lists (%lu disagree)",
		 hits, LISTS, disagree);
	check(!disagree, what);
	snprintf(what, sizeof(what),
		 "the gate decides alone only where no filter module is asked (%lu wrong)",
		 silent);
	check(!silent, what);
	snprintf(what, sizeof(what),
		 "lists of CPU, tgid and tid rules only are decided by the gate alone (%lu lists, %lu asked)",
		 final_lists, final_asked);
	check(final_lists && !final_asked, what);
	printf("# verdicts: %lu dropped, %lu passed, %lu to the full rules\n",
	       verdicts[MAGNET_VERDICT_DROP], verdicts[MAGNET_VERDICT_PASS],
	       verdicts[MAGNET_VERDICT_EVALUATE]);
	check(verdicts[MAGNET_VERDICT_DROP] && verdicts[MAGNET_VERDICT_PASS] &&
	      verdicts[MAGNET_VERDICT_EVALUATE],
	      "the random lists reach all three verdicts");

	free(l.rs);
	free(gate);
	return harness_summary();
}

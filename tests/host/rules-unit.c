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
 * Tests on tests/harness.h; RULES_SEED=N in the environment picks the
 * random lists (the seed is printed).
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

static unsigned long long rng;

/* Seed the random numbers: RULES_SEED, or the usual seed. */
static void seed(void)
{
	const char *s = getenv("RULES_SEED");

	rng = s ? strtoull(s, NULL, 0) : 0x6d61676e6574ULL;
	if (!rng)
		rng = 1;
	printf("# seed %s\n", s ? s : "0x6d61676e6574");
}

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

/* A gate with sampling only (no rules) lets every hit through. */
TEST(rules_gate_without_rules_passes_every_hit)
{
	struct magnet_gate *gate = calloc(1, sizeof(*gate) +
					  MAGNET_FILTER_RULES_MAX *
					  sizeof(gate->flat[0]));
	unsigned long bad = 0;
	unsigned int h;

	ASSERT_TRUE(gate != NULL);
	seed();
	magnet_gate_fill(gate, NULL);
	for (h = 0; h < 1000; h++)
		if (magnet_gate_flat(gate, rnd(NCPUS), 1 + rnd(UNIVERSE),
				     1 + rnd(UNIVERSE)) != MAGNET_VERDICT_PASS)
			bad++;
	EXPECT_EQ(bad, 0);
	free(gate);
}

/*
 * LISTS random rule lists, HITS random hits each, through both ways: the
 * same answer on every hit; the gate alone only where no filter module
 * would have been asked; lists of flat rules only decided by the gate
 * alone; and all three verdicts reached.
 */
TEST(rules_gate_agrees_with_full_rules_on_random_lists)
{
	unsigned long verdicts[3] = { 0 }, disagree = 0, silent = 0;
	unsigned long final_asked = 0, final_lists = 0;
	unsigned long hits = 0;
	struct magnet_gate *gate;
	static struct list l;
	unsigned int i, h;
	u8 payload;

	seed();
	l.rs = calloc(1, sizeof(*l.rs) +
		      MAGNET_FILTER_RULES_MAX * sizeof(l.rs->rules[0]));
	gate = calloc(1, sizeof(*gate) +
		      MAGNET_FILTER_RULES_MAX * sizeof(gate->flat[0]));
	ASSERT_TRUE(l.rs && gate);

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
				TH_LOG("list %u (%u rules), hit %u: rules say %d, gate says %d",
				       i, n, h, want, got);
		}
	}
	TH_LOG("%lu hits of %d lists; verdicts: %lu dropped, %lu passed, %lu to the full rules",
	       hits, LISTS, verdicts[MAGNET_VERDICT_DROP],
	       verdicts[MAGNET_VERDICT_PASS], verdicts[MAGNET_VERDICT_EVALUATE]);
	/* gate and rules agree on every hit */
	EXPECT_EQ(disagree, 0);
	/* the gate decides alone only where no filter module is asked */
	EXPECT_EQ(silent, 0);
	/* lists of CPU, tgid and tid rules only: decided by the gate alone */
	EXPECT_GT(final_lists, 0);
	EXPECT_EQ(final_asked, 0) TH_LOG("of %lu such lists", final_lists);
	/* the random lists reach all three verdicts */
	EXPECT_GT(verdicts[MAGNET_VERDICT_DROP], 0);
	EXPECT_GT(verdicts[MAGNET_VERDICT_PASS], 0);
	EXPECT_GT(verdicts[MAGNET_VERDICT_EVALUATE], 0);

	free(l.rs);
	free(gate);
}

TEST_MAIN

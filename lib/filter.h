/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Filter rules as magnetctl and magnetd give them to the kernel
 * (MAGNET_CMD_FILTER_NEW in <linux/magnet.h>): one model, one parser of
 * the words both take, one encoder, and the filter types of the kernel's
 * filter modules as plug-ins.
 *
 * The words, as magnetctl's filter add and magnetd.conf's "rule" take
 * them, in any order:
 *	include | exclude		the action (default: include; a
 *					correlate rule: exclude)
 *	cpu LIST			CPUs, "0-3,6"
 *	tgid LIST			thread groups, "1,2" (repeatable)
 *	tid N				one thread
 *	id LIST | id MIN-MAX		a set of record ids, or a range
 *	TYPE WORDS...			a filter type's own words (the type
 *					named first, e.g. "header proto udp")
 *	packet EXPRESSION...		tcpdump's language: every word after
 *					"packet" (so it comes last)
 *
 * A filter type (f_packet.c, f_header.c, f_correlate.c) is one file with its words,
 * their check, the FILTER_CONFIG nest it sends and how it prints what the
 * kernel lists; filter_types[] finds it by name. The generic code never
 * names a type: a new kernel filter type costs one small file here.
 */
#ifndef MAGNET_FILTER_H
#define MAGNET_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/magnet.h>

#include "nl.h"
#include "words.h"

/* Room for a filter type's parsed words, in struct filter_rule. */
#define FILTER_TYPE_STATE	1024

struct filter_type;

struct filter_rule {
	int action;			/* MAGNET_FILTER_*; -1: not given */
	uint64_t given;			/* words given, by MAGNET_A_* */
	uint8_t cpus[CPUS_MAX / 8];
	size_t cpus_len;		/* 0: no cpu predicate */
	uint32_t tgid[MAGNET_FILTER_SET_MAX];
	unsigned int tgids;
	uint32_t tid;			/* with MAGNET_A_FILTER_TID given */
	uint64_t id[MAGNET_FILTER_SET_MAX];
	unsigned int ids;
	uint64_t id_min, id_max;	/* with MAGNET_A_FILTER_ID_MIN given */
	const struct filter_type *type;	/* NULL: none */
	/* the type's own state, which only it reads */
	uint64_t state[FILTER_TYPE_STATE / sizeof(uint64_t)];
};

struct filter_type {
	const char *name;		/* MAGNET_A_FILTER_TYPE */
	const char *const *words;	/* its words, NULL-terminated */
	/*
	 * It takes every word after its name, joined by spaces, as one
	 * text: parse() gets @key NULL and the text as @value.
	 */
	bool rest;
	/* the action when none is given: MAGNET_FILTER_* */
	int default_action;
	/*
	 * Take the word @key (one of @words) and its value; 0, or -1 with
	 * @e set.
	 */
	int (*parse)(struct filter_rule *r, const char *key,
		     const char *value, struct parse_error *e);
	/*
	 * What the kernel would refuse anyway, said in the words: 0, or -1
	 * with @e set. @probe: the rule's probe, as given.
	 */
	int (*check)(const struct filter_rule *r, const char *probe,
		     struct parse_error *e);
	/*
	 * The FILTER_CONFIG nest's attributes into @nlh (the nest is open);
	 * may ask the kernel through @nl (e.g. for probes' ids). 0, or -1
	 * (nl_err()).
	 */
	int (*encode)(struct nl_ctx *nl, const struct filter_rule *r,
		      struct nlmsghdr *nlh);
	/*
	 * Validate a listed rule's FILTER_CONFIG and FILTER_STATS nests
	 * (either may be NULL): 0, or -1 if they are not this type's.
	 */
	int (*validate)(const struct nlattr *config,
			const struct nlattr *stats);
	/* Print them (print.h), once validated. */
	void (*print)(const struct nlattr *config, const struct nlattr *stats);
	/*
	 * The probes the rule names, as given, each handed to @fn with the
	 * word that named it ("end", "via"); NULL: it names none.
	 */
	void (*refs)(const struct filter_rule *r,
		     void (*fn)(const char *word, const char *probe,
				void *data),
		     void *data);
};

/* The filter types, NULL-terminated; and one by name (NULL: none). */
extern const struct filter_type *const filter_types[];
const struct filter_type *filter_type_find(const char *name);

/* An empty rule: no action given, no predicate. */
void filter_rule_init(struct filter_rule *r);

/*
 * Take the words @argv[0..@argc) into @r (see the top of this file);
 * 0, or -1 with @e set.
 */
int filter_parse(struct filter_rule *r, int argc, char *const *argv,
		 struct parse_error *e);

/*
 * After the words: does @r say something the kernel can take? @probe is
 * the rule's probe, as given. 0, or -1 with @e set.
 */
int filter_check(const struct filter_rule *r, const char *probe,
		 struct parse_error *e);

/* Does @r give cpu, tgid, tid or id? */
bool filter_has_header_predicate(const struct filter_rule *r);

/*
 * The request's attributes for @r, after the probe's: the action, the
 * predicates, the type and its nest. 0, or -1 (nl_err()).
 */
int filter_encode(struct nl_ctx *nl, const struct filter_rule *r,
		  struct nlmsghdr *nlh);

/*
 * A probe given by name or by number ("sw", "12"): its id, asked of the
 * kernel for a name. 0, or -1 (nl_err()).
 */
int probe_ref_id(struct nl_ctx *nl, const char *ref, uint16_t *id);

#endif /* MAGNET_FILTER_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Filter rules: the words, their check and the request (see filter.h).
 * Nothing here knows a filter type but through struct filter_type.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

extern const struct filter_type filter_packet, filter_header,
	filter_correlate;

const struct filter_type *const filter_types[] = {
	&filter_packet,
	&filter_header,
	&filter_correlate,
	NULL,
};

const struct filter_type *filter_type_find(const char *name)
{
	const struct filter_type *const *t;

	for (t = filter_types; *t; t++)
		if (!strcmp((*t)->name, name))
			return *t;
	return NULL;
}

static bool is_word(const char *const *words, const char *s)
{
	for (; *words; words++)
		if (!strcmp(*words, s))
			return true;
	return false;
}

void filter_rule_init(struct filter_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->action = -1;
}

static int given_once(struct filter_rule *r, unsigned int bit,
		      const char *key, struct parse_error *e)
{
	if (r->given & (1ULL << bit))
		return parse_fail(e, "\"%s\" given twice", key);
	r->given |= 1ULL << bit;
	return 0;
}

/* The next comma-separated item of *@rest, NULL after the last one. */
static char *list_item(char **rest)
{
	char *item = *rest, *comma;

	if (!item)
		return NULL;
	comma = strchr(item, ',');
	if (comma) {
		*comma = '\0';
		*rest = comma + 1;
	} else {
		*rest = NULL;
	}
	return item;
}

/* tgid LIST: the sets of repeated words add up. */
static int parse_tgids(struct filter_rule *r, const char *list,
		       struct parse_error *e)
{
	char *copy = strdup(list), *rest = copy, *item, *end;
	uint64_t value;
	int ret = 0;

	if (!copy)
		return parse_fail(e, "out of memory");
	while (!ret && (item = list_item(&rest))) {
		errno = 0;
		value = strtoull(item, &end, 10);
		if (!isdigit((unsigned char)*item) || *end || errno ||
		    value > UINT32_MAX)
			ret = parse_fail(e, "bad tgid list \"%s\": expected numbers from 0 to %u separated by commas",
					 list, UINT32_MAX);
		else if (r->tgids == MAGNET_FILTER_SET_MAX)
			ret = parse_fail(e, "more than %d tgids",
					 MAGNET_FILTER_SET_MAX);
		else
			r->tgid[r->tgids++] = value;
	}
	free(copy);
	return ret;
}

/* id LIST (a set) or id MIN-MAX (a range); ids decimal or 0x hex. */
static int parse_ids(struct filter_rule *r, const char *arg,
		     struct parse_error *e)
{
	char *copy = strdup(arg), *rest = copy, *item, *dash;
	uint64_t value;
	int ret = 0;

	if (!copy)
		return parse_fail(e, "out of memory");
	dash = strchr(copy, '-');
	if (dash && !strchr(copy, ',')) {
		*dash = '\0';
		if (!word_record_id(copy, &r->id_min) ||
		    !word_record_id(dash + 1, &r->id_max))
			ret = parse_fail(e, "bad id range \"%s\": expected MIN-MAX, decimal or 0x hex",
					 arg);
		else if (r->id_min > r->id_max)
			ret = parse_fail(e, "bad id range \"%s\": MIN is above MAX",
					 arg);
		else
			r->given |= 1ULL << MAGNET_A_FILTER_ID_MIN;
		free(copy);
		return ret;
	}
	while (!ret && (item = list_item(&rest))) {
		if (!word_record_id(item, &value))
			ret = parse_fail(e, "bad id list \"%s\": expected ids (decimal or 0x hex) separated by commas, or one range MIN-MAX",
					 arg);
		else if (r->ids == MAGNET_FILTER_SET_MAX)
			ret = parse_fail(e, "more than %d ids",
					 MAGNET_FILTER_SET_MAX);
		else
			r->id[r->ids++] = value;
	}
	free(copy);
	return ret;
}

/* A word that is a type's, not the rule's type or no type's at all. */
static int unknown_word(const struct filter_rule *r, const char *key,
			struct parse_error *e)
{
	const struct filter_type *const *t;

	for (t = filter_types; *t; t++)
		if (*t != r->type && is_word((*t)->words, key))
			return parse_fail(e, "\"%s\" goes after \"%s\"", key,
					  (*t)->name);
	return parse_fail(e, "unknown keyword \"%s\"", key);
}

/* The value after @key, the word at @argv[*i + 1]. */
static const char *take_value(int argc, char *const *argv, int *i,
			      struct parse_error *e)
{
	if (*i + 1 >= argc) {
		parse_fail(e, "missing value after \"%s\"", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

/* The words after a type that takes them all, as one text. */
static int parse_rest(struct filter_rule *r, int argc, char *const *argv,
		      struct parse_error *e)
{
	size_t len = 1;
	char *text;
	int i, ret;

	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = calloc(1, len);
	if (!text)
		return parse_fail(e, "out of memory");
	for (i = 0; i < argc; i++) {
		if (i)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	ret = r->type->parse(r, NULL, text, e);
	free(text);
	return ret;
}

int filter_parse(struct filter_rule *r, int argc, char *const *argv,
		 struct parse_error *e)
{
	const struct filter_type *type;
	const char *key, *value;
	uint64_t v;
	int i;

	for (i = 0; i < argc; i++) {
		key = argv[i];
		if (r->type && is_word(r->type->words, key)) {
			if (!(value = take_value(argc, argv, &i, e)) ||
			    r->type->parse(r, key, value, e))
				return -1;
		} else if (!strcmp(key, "include") || !strcmp(key, "exclude")) {
			if (given_once(r, MAGNET_A_FILTER_ACTION,
				       "include|exclude", e))
				return -1;
			r->action = !strcmp(key, "include") ?
				    MAGNET_FILTER_INCLUDE :
				    MAGNET_FILTER_EXCLUDE;
		} else if (!strcmp(key, "cpu") || !strcmp(key, "cpus")) {
			if (given_once(r, MAGNET_A_FILTER_CPUS, "cpu", e) ||
			    !(value = take_value(argc, argv, &i, e)) ||
			    word_cpu_list(value, r->cpus, &r->cpus_len, e))
				return -1;
		} else if (!strcmp(key, "tgid")) {
			if (!(value = take_value(argc, argv, &i, e)) ||
			    parse_tgids(r, value, e))
				return -1;
		} else if (!strcmp(key, "tid")) {
			if (given_once(r, MAGNET_A_FILTER_TID, key, e) ||
			    !(value = take_value(argc, argv, &i, e)) ||
			    word_uint(value, 0, UINT32_MAX, key, &v, e))
				return -1;
			r->tid = v;
		} else if (!strcmp(key, "id")) {
			/* a range given already (magnetd.conf's id-min) */
			if (r->given & (1ULL << MAGNET_A_FILTER_ID_MIN))
				return parse_fail(e, "\"id\" given twice");
			if (given_once(r, MAGNET_A_FILTER_IDS, key, e) ||
			    !(value = take_value(argc, argv, &i, e)) ||
			    parse_ids(r, value, e))
				return -1;
		} else if ((type = filter_type_find(key))) {
			if (r->type == type)
				return parse_fail(e, "\"%s\" given twice", key);
			if (r->type)
				return parse_fail(e, "\"%s\" and \"%s\" in one rule: a rule has one filter type",
						  r->type->name, key);
			r->type = type;
			if (type->rest)
				return parse_rest(r, argc - i - 1, argv + i + 1,
						  e);
		} else {
			return unknown_word(r, key, e);
		}
	}
	return 0;
}

bool filter_has_header_predicate(const struct filter_rule *r)
{
	return r->cpus_len || r->tgids ||
	       (r->given & (1ULL << MAGNET_A_FILTER_TID)) || r->ids ||
	       (r->given & (1ULL << MAGNET_A_FILTER_ID_MIN));
}

int filter_check(const struct filter_rule *r, const char *probe,
		 struct parse_error *e)
{
	const struct filter_type *const *t;
	char names[128] = "";

	if (!filter_has_header_predicate(r) && !r->type) {
		for (t = filter_types; *t; t++) {
			strncat(names, t[1] ? ", " : " or ",
				sizeof(names) - strlen(names) - 1);
			strncat(names, (*t)->name,
				sizeof(names) - strlen(names) - 1);
		}
		return parse_fail(e, "no predicate: give at least one of cpu, tgid, tid, id%s",
				  names);
	}
	if (r->type && r->type->check)
		return r->type->check(r, probe, e);
	return 0;
}

int filter_encode(struct nl_ctx *nl, const struct filter_rule *r,
		  struct nlmsghdr *nlh)
{
	struct nlattr *nest;
	unsigned int i;
	int action = r->action;

	if (action < 0)
		action = r->type ? r->type->default_action :
				   MAGNET_FILTER_INCLUDE;
	mnl_attr_put_u8(nlh, MAGNET_A_FILTER_ACTION, action);
	if (r->cpus_len)
		mnl_attr_put(nlh, MAGNET_A_FILTER_CPUS, r->cpus_len, r->cpus);
	for (i = 0; i < r->tgids; i++)
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TGID, r->tgid[i]);
	if (r->given & (1ULL << MAGNET_A_FILTER_TID))
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TID, r->tid);
	for (i = 0; i < r->ids; i++)
		mnl_attr_put_u64(nlh, MAGNET_A_FILTER_IDS, r->id[i]);
	if (r->given & (1ULL << MAGNET_A_FILTER_ID_MIN)) {
		mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MIN, r->id_min);
		mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MAX, r->id_max);
	}
	if (!r->type)
		return 0;
	mnl_attr_put_strz(nlh, MAGNET_A_FILTER_TYPE, r->type->name);
	nest = mnl_attr_nest_start(nlh, MAGNET_A_FILTER_CONFIG);
	if (r->type->encode(nl, r, nlh))
		return -1;
	mnl_attr_nest_end(nlh, nest);
	return 0;
}

int probe_ref_id(struct nl_ctx *nl, const char *ref, uint16_t *id)
{
	struct parse_error e;
	struct request req;
	struct nlmsghdr *nlh;

	if (word_probe_ref(ref, id, &e))
		return nl_fail(nl, EINVAL, "%s", e.text);
	if (*id)
		return 0;
	nlh = request_start(nl, &req, MAGNET_CMD_PROBE_GET, 0);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, ref);
	if (nl_request(nl, &req, nl_probe_id_cb, id)) {
		if (nl_err(nl)->kernel)
			nl_err_prefix(nl, "probe %s", ref);
		return -1;
	}
	if (!*id)
		return nl_fail(nl, EPROTO, "no id for probe \"%s\" in the kernel's reply",
			       ref);
	return 0;
}

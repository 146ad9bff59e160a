// SPDX-License-Identifier: GPL-2.0
/*
 * Probe sets: the catalog's entries named "SET.LAYER", added as probes of
 * the same name a set at a time, and removed the same way (see
 * probeset.h and "Packet probes" in <linux/magnet.h>).
 *
 * A set is whatever the catalog says it is: the part of an entry's name
 * before its first '.'. Nothing here knows the sets or their layers.
 * Failures are left in the netlink context's error, as nl.c's are.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "nl.h"
#include "probeset.h"

/* Distinct set names in one request (each set has one probe at least). */
#define SETS_MAX	PROBESET_MAX

struct set_list {
	unsigned int count;
	char name[SETS_MAX][MAGNET_NAME_LEN];
};

/* The catalog's entries that belong to a set, in the catalog's order. */
struct catalog_entry {
	char name[MAGNET_NAME_LEN];
	char target[MAGNET_TARGET_LEN];
};

struct catalog {
	struct catalog_entry *entry;
	size_t count;
	bool oom;
};

/* A probe of the kernel's, as a reply describes it. */
struct probe_reply {
	uint16_t id;
	uint8_t kind;
	char name[MAGNET_NAME_LEN];
	char target[MAGNET_TARGET_LEN];
};

/* --- names ---------------------------------------------------------------- */

/* The length of @name's set ("udp-send" of "udp-send.ip"), 0 if none. */
static size_t set_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name && dot[1] ? (size_t)(dot - name) : 0;
}

static bool in_set(const char *name, const char *set)
{
	size_t len = set_len(name);

	return len && len == strlen(set) && !strncmp(name, set, len);
}

static bool in_sets(const char *name, const struct set_list *list)
{
	unsigned int i;

	for (i = 0; i < list->count; i++)
		if (in_set(name, list->name[i]))
			return true;
	return false;
}

/* "udp-send,udp-recv": the names, each once, in their order. */
static int parse_sets(struct nl_ctx *nl, const char *sets,
		      struct set_list *list)
{
	const char *p = sets, *end;
	unsigned int i;
	size_t len;

	list->count = 0;
	for (;;) {
		end = strchrnul(p, ',');
		len = end - p;
		if (!len || len >= MAGNET_NAME_LEN) {
			return nl_fail(nl, EINVAL, "bad probe set list \"%s\": expected set names separated by commas, e.g. udp-send,udp-recv",
				       sets);
		}
		for (i = 0; i < list->count; i++)
			if (strlen(list->name[i]) == len &&
			    !strncmp(list->name[i], p, len))
				break;
		if (i == list->count) {
			if (list->count == SETS_MAX) {
				return nl_fail(nl, E2BIG, "more than %d probe sets in \"%s\"",
					       SETS_MAX, sets);
			}
			memcpy(list->name[i], p, len);
			list->name[i][len] = '\0';
			list->count++;
		}
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* --- the catalog ---------------------------------------------------------- */

static int catalog_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct catalog *cat = data;
	struct catalog_entry *grown;
	const char *name, *target;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (!tb[MAGNET_A_PROBE_PREDEF] || !tb[MAGNET_A_PROBE_TARGET])
		return MNL_CB_OK;
	name = mnl_attr_get_str(tb[MAGNET_A_PROBE_PREDEF]);
	target = mnl_attr_get_str(tb[MAGNET_A_PROBE_TARGET]);
	/* not a set's, or not a name one can give a probe */
	if (!set_len(name) || strlen(name) >= MAGNET_NAME_LEN ||
	    strlen(target) >= MAGNET_TARGET_LEN || cat->oom)
		return MNL_CB_OK;
	grown = realloc(cat->entry, (cat->count + 1) * sizeof(*cat->entry));
	if (!grown) {
		cat->oom = true;	/* said once the dump is over */
		return MNL_CB_OK;
	}
	cat->entry = grown;
	strcpy(cat->entry[cat->count].name, name);
	strcpy(cat->entry[cat->count].target, target);
	cat->count++;
	return MNL_CB_OK;
}

/* The catalog's set entries; on error -1 and nothing to free. */
static int catalog_load(struct nl_ctx *nl, struct catalog *cat)
{
	struct request req;

	memset(cat, 0, sizeof(*cat));
	request_start(nl, &req, MAGNET_CMD_CATALOG_GET, NLM_F_DUMP);
	if (!nl_request(nl, &req, catalog_cb, cat) && !cat->oom)
		return 0;
	if (cat->oom)
		nl_fail(nl, ENOMEM, "out of memory");
	free(cat->entry);
	cat->entry = NULL;
	return -1;
}

/* "no probe set NAME (sets: A, B)", the sets as the catalog has them. */
static int no_set(struct nl_ctx *nl, const struct catalog *cat,
		  const char *set)
{
	const struct catalog_entry *e = cat->entry;
	char known[384] = "";
	unsigned int sets = 0;
	size_t i, j, len, at;

	for (i = 0; i < cat->count; i++) {
		len = set_len(e[i].name);
		for (j = 0; j < i; j++)
			if (set_len(e[j].name) == len &&
			    !strncmp(e[j].name, e[i].name, len))
				break;
		if (j < i)
			continue;
		at = strlen(known);
		snprintf(known + at, sizeof(known) - at, "%s%.*s",
			 sets++ ? ", " : "", (int)len, e[i].name);
	}
	if (!sets)
		return nl_fail(nl, ENOENT, "no probe set %s (the magnet module has no probe sets)",
			       set);
	return nl_fail(nl, ENOENT, "no probe set %s (sets: %s)", set, known);
}

/* Every set of @list is in the catalog. */
static int check_sets(struct nl_ctx *nl, const struct catalog *cat,
		      const struct set_list *list)
{
	unsigned int s;
	size_t i;

	for (s = 0; s < list->count; s++) {
		for (i = 0; i < cat->count; i++)
			if (in_set(cat->entry[i].name, list->name[s]))
				break;
		if (i == cat->count)
			return no_set(nl, cat, list->name[s]);
	}
	return 0;
}

/* --- requests ------------------------------------------------------------- */

static int probe_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct probe_reply *r = data;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	memset(r, 0, sizeof(*r));
	if (tb[MAGNET_A_PROBE_ID])
		r->id = mnl_attr_get_u16(tb[MAGNET_A_PROBE_ID]);
	if (tb[MAGNET_A_PROBE_KIND])
		r->kind = mnl_attr_get_u8(tb[MAGNET_A_PROBE_KIND]);
	if (tb[MAGNET_A_PROBE_NAME])
		snprintf(r->name, sizeof(r->name), "%s",
			 mnl_attr_get_str(tb[MAGNET_A_PROBE_NAME]));
	if (tb[MAGNET_A_PROBE_TARGET])
		snprintf(r->target, sizeof(r->target), "%s",
			 mnl_attr_get_str(tb[MAGNET_A_PROBE_TARGET]));
	return MNL_CB_OK;
}

/* A function the probe is on: one name, not the catalog's alternatives. */
static bool target_resolved(const char *target)
{
	return *target && !strchr(target, '|');
}

/*
 * Remove probe @name, also by @id unless 0 (then another probe that took
 * the name meanwhile stays). Returns 0, or -1 (nl_err()).
 */
static int del_probe(struct nl_ctx *nl, const char *name, uint16_t id)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_DEL,
					     0);

	if (id)
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, name);
	return nl_request(nl, &req, NULL, NULL);
}

/* The probe's id and the function it went on, asked of the kernel. */
static int get_probe(struct nl_ctx *nl, struct probeset_probe *p)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_GET,
					     0);
	struct probe_reply r = { 0 };

	if (p->id)
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, p->id);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, p->name);
	if (nl_request(nl, &req, probe_reply_cb, &r))
		return -1;
	if (!r.id || !r.target[0])
		return nl_fail(nl, EPROTO, "%s: the kernel did not give the probe's id and target",
			       p->name);
	p->id = r.id;
	snprintf(p->target, sizeof(p->target), "%s", r.target);
	return 0;
}

/*
 * Add @p as a probe of its catalog entry; *@added says whether it was,
 * even if finding out its id or target failed after. Returns 0, or -1
 * (nl_err()).
 */
static int add_probe(struct nl_ctx *nl, struct probeset_probe *p,
		     const char *buffer, uint32_t snaplen, bool enabled,
		     bool *added)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_NEW,
					     0);
	struct probe_reply r = { 0 };

	*added = false;
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, p->name);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_PREDEF, p->name);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, buffer);
	mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN, snaplen);
	mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, enabled);
	if (nl_request(nl, &req, probe_reply_cb, &r))
		return -1;
	*added = true;
	p->id = r.id;
	if (r.id && target_resolved(r.target)) {
		snprintf(p->target, sizeof(p->target), "%s", r.target);
		return 0;
	}
	return get_probe(nl, p);
}

/* Probes go into an existing buffer: ENOENT then means a missing symbol. */
static int check_buffer(struct nl_ctx *nl, const char *buffer)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_GET,
					     0);

	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, buffer);
	if (!nl_request(nl, &req, NULL, NULL))
		return 0;
	if (nl_err(nl)->kernel)
		nl_err_prefix(nl, "buffer %s", buffer);
	return -1;
}

/*
 * Remove a probe this program added (gone already is fine). Returns 0, or
 * -1 (nl_err()).
 */
static int remove_added(struct nl_ctx *nl, const char *name, uint16_t id)
{
	if (!del_probe(nl, name, id) ||
	    (nl_err(nl)->kernel && nl_err(nl)->error == ENOENT))
		return 0;
	return nl_err_prefix(nl, "removing %s", name);
}

/*
 * Remove, last first, what the first @n probes of @out added, after a
 * failure whose error stays the context's; a probe that cannot be removed
 * is named in its hint.
 */
static void rollback(struct nl_ctx *nl, struct probeset *out,
		     const bool *added, unsigned int n)
{
	struct nl_error first = *nl_err(nl);
	char failed[sizeof(first.hint)] = "";

	while (n--) {
		if (!added[n] ||
		    !remove_added(nl, out->probe[n].name, out->probe[n].id))
			continue;
		snprintf(failed, sizeof(failed), "%s", nl_err(nl)->text);
		/* a failure on our side: the next request would repeat it */
		if (!nl_err(nl)->kernel)
			break;
	}
	if (failed[0])
		snprintf(first.hint, sizeof(first.hint), "%s", failed);
	nl_set_err(nl, &first);
	out->count = 0;
}

/* --- the API -------------------------------------------------------------- */

/* The probes of @list's sets, set by set, in the catalog's order. */
static int select_probes(struct nl_ctx *nl, const struct catalog *cat,
			 const struct set_list *list, const char *sets,
			 struct probeset *out)
{
	struct probeset_probe *p;
	unsigned int s;
	size_t i;

	for (s = 0; s < list->count; s++)
		for (i = 0; i < cat->count; i++) {
			if (!in_set(cat->entry[i].name, list->name[s]))
				continue;
			if (out->count == PROBESET_MAX)
				return nl_fail(nl, E2BIG, "the probe sets \"%s\" have more than %d probes; add fewer at once",
					       sets, PROBESET_MAX);
			p = &out->probe[out->count++];
			memset(p, 0, sizeof(*p));
			strcpy(p->name, cat->entry[i].name);
			/* the alternatives, until one is known used */
			strcpy(p->target, cat->entry[i].target);
		}
	return 0;
}

int probeset_add(struct nl_ctx *nl, const char *sets, const char *buffer,
		 uint32_t snaplen, bool enabled, struct probeset *out)
{
	bool added[PROBESET_MAX] = { false };
	struct probeset_probe *p;
	struct set_list list;
	struct catalog cat;
	unsigned int i;

	out->count = 0;
	if (!buffer)
		buffer = "default";
	if (parse_sets(nl, sets, &list))
		return -1;
	if (snaplen > MAGNET_RECORD_MAX)
		return nl_fail(nl, EINVAL, "bad snap length %u: at most %d bytes",
			       snaplen, MAGNET_RECORD_MAX);
	if (catalog_load(nl, &cat))
		return -1;
	if (check_sets(nl, &cat, &list) ||
	    select_probes(nl, &cat, &list, sets, out)) {
		free(cat.entry);
		out->count = 0;
		return -1;
	}
	free(cat.entry);
	if (check_buffer(nl, buffer)) {
		out->count = 0;
		return -1;
	}
	for (i = 0; i < out->count; i++) {
		p = &out->probe[i];
		if (!add_probe(nl, p, buffer, snaplen, enabled, &added[i]))
			continue;
		/* none of the entry's functions in this kernel */
		if (nl_err(nl)->kernel && nl_err(nl)->error == ENOENT &&
		    !added[i]) {
			p->error = ENOENT;
			p->id = 0;
			continue;
		}
		if (nl_err(nl)->kernel)
			nl_err_prefix(nl, "%s", p->name);
		rollback(nl, out, added, i + 1);
		return -1;
	}
	return 0;
}

int probeset_remove(struct nl_ctx *nl, const struct probeset *ps)
{
	struct nl_error first = { 0 };
	unsigned int i;

	for (i = 0; i < ps->count && i < PROBESET_MAX; i++) {
		if (ps->probe[i].error || !ps->probe[i].id ||
		    !remove_added(nl, ps->probe[i].name, ps->probe[i].id))
			continue;
		if (!first.error)
			first = *nl_err(nl);
		/* a failure on our side: the next request would repeat it */
		if (!nl_err(nl)->kernel)
			break;
	}
	return first.error ? nl_set_err(nl, &first) : 0;
}

/* The probes of some sets, as PROBE_GET lists them. */
struct set_probes {
	const struct set_list *list;
	struct probe_reply *probe;
	size_t count;
	bool oom;
};

static int set_probes_cb(const struct nlmsghdr *nlh, void *data)
{
	struct set_probes *sp = data;
	struct probe_reply r, *grown;

	if (probe_reply_cb(nlh, &r) != MNL_CB_OK)
		return MNL_CB_ERROR;
	/* events of other modules are theirs to remove */
	if (!r.id || !in_sets(r.name, sp->list) ||
	    r.kind == MAGNET_PROBE_EXTERNAL || sp->oom)
		return MNL_CB_OK;
	grown = realloc(sp->probe, (sp->count + 1) * sizeof(*sp->probe));
	if (!grown) {
		sp->oom = true;
		return MNL_CB_OK;
	}
	sp->probe = grown;
	sp->probe[sp->count++] = r;
	return MNL_CB_OK;
}

int probeset_del(struct nl_ctx *nl, const char *sets)
{
	struct set_probes sp = { 0 };
	struct set_list list;
	struct catalog cat;
	struct request req;
	int removed = 0;
	size_t i;

	if (parse_sets(nl, sets, &list) || catalog_load(nl, &cat))
		return -1;
	if (check_sets(nl, &cat, &list)) {
		free(cat.entry);
		return -1;
	}
	free(cat.entry);
	sp.list = &list;
	request_start(nl, &req, MAGNET_CMD_PROBE_GET, NLM_F_DUMP);
	if (nl_request(nl, &req, set_probes_cb, &sp) || sp.oom) {
		if (sp.oom)
			nl_fail(nl, ENOMEM, "out of memory");
		free(sp.probe);
		return -1;
	}
	for (i = 0; i < sp.count; i++) {
		if (!del_probe(nl, sp.probe[i].name, sp.probe[i].id)) {
			removed++;
			continue;
		}
		/* gone meanwhile */
		if (nl_err(nl)->kernel && nl_err(nl)->error == ENOENT)
			continue;
		if (nl_err(nl)->kernel)
			nl_err_prefix(nl, "removing %s", sp.probe[i].name);
		removed = -1;
		break;
	}
	free(sp.probe);
	return removed;
}

/* --- after the sets are added ---------------------------------------------- */

int probeset_enable(struct nl_ctx *nl, const struct probeset *ps)
{
	struct request req;
	struct nlmsghdr *nlh;

	for (unsigned int i = 0; i < ps->count; i++) {
		if (ps->probe[i].error || !ps->probe[i].id)
			continue;
		nlh = request_start(nl, &req, MAGNET_CMD_PROBE_SET, 0);
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, ps->probe[i].id);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, 1);
		if (nl_request(nl, &req, NULL, NULL)) {
			nl_err_prefix(nl, "probe %s", ps->probe[i].name);
			return -1;
		}
	}
	return 0;
}

int probeset_filter(struct nl_ctx *nl, const struct probeset *ps,
		    const struct filter_rule *r)
{
	struct request req;
	struct nlmsghdr *nlh;

	for (unsigned int i = 0; i < ps->count; i++) {
		const struct probe_set *set = probe_set_of_layer(ps->probe[i].name);

		/* (a packet rule concerns packets: not spans, not block I/O) */
		if (ps->probe[i].error || !ps->probe[i].id || !set || !set->packets)
			continue;
		nlh = request_start(nl, &req, MAGNET_CMD_FILTER_NEW, 0);
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, ps->probe[i].id);
		if (filter_encode(nl, r, nlh))
			return -1;
		if (nl_request(nl, &req, NULL, NULL)) {
			nl_err_prefix(nl, "filter on probe %s",
				      ps->probe[i].name);
			return -1;
		}
	}
	return 0;
}

static int filtered_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct nlattr *st[MAGNET_STAT_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_STATS] &&
	    !parse_stat_attrs(tb[MAGNET_A_PROBE_STATS], st) &&
	    st[MAGNET_STAT_FILTERED])
		*(uint64_t *)data += mnl_attr_get_u64(st[MAGNET_STAT_FILTERED]);
	return MNL_CB_OK;
}

int probeset_filtered(struct nl_ctx *nl, const struct probeset *ps,
		      uint64_t *filtered)
{
	struct request req;
	struct nlmsghdr *nlh;

	*filtered = 0;
	for (unsigned int i = 0; i < ps->count; i++) {
		if (ps->probe[i].error || !ps->probe[i].id)
			continue;
		nlh = request_start(nl, &req, MAGNET_CMD_PROBE_GET, 0);
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, ps->probe[i].id);
		if (nl_request(nl, &req, filtered_cb, filtered))
			return -1;
	}
	return 0;
}

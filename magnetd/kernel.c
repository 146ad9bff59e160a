// SPDX-License-Identifier: GPL-2.0
/*
 * Installing magnetd's configuration in the module, and removing it.
 *
 * Everything magnetd makes is listed in d->inst as it is made, so that
 * kernel_remove() takes away exactly that: buffers, probes and set layers
 * of the same names made by someone else are never touched (a name in use
 * fails the install instead). Probes are made disabled and enabled only
 * once their filters and sampling are in place, so no record escapes the
 * configured filtering. Filter rules go with their probe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetd.h"
#include "filter.h"
#include "nl.h"
#include "probeset.h"

/* Log what a failed request met, about @what @name if the kernel said. */
static void log_nl_error(struct nl_ctx *nl, const char *what,
			 const char *name)
{
	const struct nl_error *e = nl_err(nl);

	if (e->kernel)
		log_error("%s %s: %s", what, name, e->text);
	else
		log_error("%s", e->text);
	if (e->hint[0])
		log_error("%s", e->hint);
}

static int note_buffer(struct installed *in, const char *name)
{
	char (*b)[MAGNET_NAME_LEN];

	b = realloc(in->buffers, (in->nbuffers + 1) * sizeof(*b));
	if (!b)
		return -1;
	in->buffers = b;
	snprintf(b[in->nbuffers++], MAGNET_NAME_LEN, "%s", name);
	return 0;
}

static int note_probe(struct installed *in, const char *name, uint16_t id)
{
	struct installed_probe *p;

	p = realloc(in->probes, (in->nprobes + 1) * sizeof(*p));
	if (!p)
		return -1;
	in->probes = p;
	snprintf(p[in->nprobes].name, MAGNET_NAME_LEN, "%s", name);
	p[in->nprobes++].id = id;
	return 0;
}

/* --- requests ---------------------------------------------------------------- */

static int buffer_new(struct nl_ctx *nl, const struct config_buffer *b)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_NEW, 0);

	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, b->name);
	mnl_attr_put_u64(nlh, MAGNET_A_BUFFER_SIZE, b->size);
	mnl_attr_put_u8(nlh, MAGNET_A_BUFFER_MODE, b->mode);
	if (nl_request(nl, &req, NULL, NULL)) {
		if (nl_err(nl)->kernel && nl_err(nl)->error == EEXIST)
			log_error("buffer %s: a buffer of that name exists already (made by someone else: magnetctl buffer list)",
				  b->name);
		else
			log_nl_error(nl, "buffer", b->name);
		return -1;
	}
	return 0;
}

static void buffer_del(struct nl_ctx *nl, const char *name)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_DEL, 0);

	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	if (nl_request(nl, &req, NULL, NULL) &&
	    !(nl_err(nl)->kernel && nl_err(nl)->error == ENOENT))
		log_nl_error(nl, "removing buffer", name);
}

static int probe_new(struct nl_ctx *nl, const struct config_probe *p, uint16_t *id)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_NEW, 0);

	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, p->name);
	if (p->predef[0]) {
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_PREDEF, p->predef);
		if (!strcmp(p->predef, SAMPLE_PREDEF)) {
			if (p->period_ns)
				mnl_attr_put_u64(nlh, MAGNET_A_PROBE_PERIOD,
						 p->period_ns);
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_DEPTH, p->depth);
		}
	} else {
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_KIND, p->kind);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_TARGET, p->target);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ARGS, p->args);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ID_ARG, p->id_arg);
	}
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME,
			  p->buffer[0] ? p->buffer : "default");
	mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN, p->snaplen);
	mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, 0);
	*id = 0;
	if (nl_request(nl, &req, nl_probe_id_cb, id)) {
		if (nl_err(nl)->kernel && nl_err(nl)->error == EEXIST)
			log_error("probe %s: a probe of that name exists already (made by someone else: magnetctl probe list)",
				  p->name);
		else
			log_nl_error(nl, "probe", p->name);
		return -1;
	}
	if (!*id) {
		log_error("probe %s: the kernel did not say its id", p->name);
		return -1;
	}
	return 0;
}

static void probe_del(struct nl_ctx *nl, const struct installed_probe *p)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_DEL, 0);

	mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, p->id);
	if (nl_request(nl, &req, NULL, NULL) &&
	    !(nl_err(nl)->kernel && nl_err(nl)->error == ENOENT))
		log_nl_error(nl, "removing probe", p->name);
}

static int probe_enable(struct nl_ctx *nl, const struct installed_probe *p)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_SET, 0);

	mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, p->id);
	mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, 1);
	if (nl_request(nl, &req, NULL, NULL)) {
		log_nl_error(nl, "enabling probe", p->name);
		return -1;
	}
	return 0;
}

static int probe_sampling(struct nl_ctx *nl, const struct config_probe *p, uint16_t id)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!p->sample_every && !p->sample_interval_ns)
		return 0;
	nlh = request_start(nl, &req, MAGNET_CMD_PROBE_SET, 0);
	mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	mnl_attr_put_u32(nlh, MAGNET_A_SAMPLE_EVERY, p->sample_every);
	mnl_attr_put_u64(nlh, MAGNET_A_SAMPLE_INTERVAL, p->sample_interval_ns);
	if (nl_request(nl, &req, NULL, NULL)) {
		log_nl_error(nl, "sampling of probe", p->name);
		return -1;
	}
	return 0;
}

static int filter_new(struct nl_ctx *nl, const struct config_probe *p,
		      uint16_t id, const struct filter_rule *f,
		      unsigned int n)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_NEW, 0);
	char what[64];

	snprintf(what, sizeof(what), "%s, filter %u", p->name, n + 1);
	mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	if (filter_encode(nl, f, nlh) || nl_request(nl, &req, NULL, NULL)) {
		log_nl_error(nl, "probe", what);
		return -1;
	}
	return 0;
}

/* --- install and remove --------------------------------------------------------- */

static int install_probe(struct daemon *d, const struct config_probe *p,
			 uint16_t *id)
{
	if (probe_new(d->nl, p, id))
		return -1;
	if (note_probe(&d->inst, p->name, *id)) {
		probe_del(d->nl, &(struct installed_probe){ .id = *id });
		log_error("out of memory");
		return -1;
	}
	return 0;
}

/*
 * A probe's filters and sampling, once every probe is in: a correlate
 * rule names other probes, by name.
 */
static int configure_probe(struct daemon *d, const struct config_probe *p,
			   uint16_t id)
{
	unsigned int i;

	for (i = 0; i < p->nfilters; i++)
		if (filter_new(d->nl, p, id, &p->filters[i], i))
			return -1;
	return probe_sampling(d->nl, p, id);
}

static int install_set(struct daemon *d, const struct config_probeset *s)
{
	struct probeset ps;
	unsigned int i, added = 0;

	/* probeset_add() removes what it added when it fails. */
	if (probeset_add(d->nl, s->set, s->buffer[0] ? s->buffer : "default",
			 s->snaplen, false, &ps)) {
		log_error("probe-set %s: %s", s->set, nl_err(d->nl)->text);
		if (nl_err(d->nl)->hint[0])
			log_error("%s", nl_err(d->nl)->hint);
		return -1;
	}
	for (i = 0; i < ps.count; i++) {
		const struct probeset_probe *pp = &ps.probe[i];

		if (pp->error == ENOENT) {
			log_info("probe-set %s: layer %s has no function in this kernel; skipped",
				 s->set, pp->name);
			continue;
		}
		if (note_probe(&d->inst, pp->name, pp->id)) {
			log_error("out of memory");
			if (probeset_remove(d->nl, &ps))
				log_error("%s", nl_err(d->nl)->text);
			return -1;
		}
		added++;
	}
	log_info("probe-set %s: %u layers", s->set, added);
	return 0;
}

int kernel_install(struct daemon *d, const struct config *cfg)
{
	uint16_t *ids = NULL;
	unsigned int i;

	for (i = 0; i < cfg->nbuffers; i++) {
		/* The module's own: declared only for how it is read. */
		if (!strcmp(cfg->buffers[i].name, "default"))
			continue;
		if (buffer_new(d->nl, &cfg->buffers[i]))
			goto fail;
		if (note_buffer(&d->inst, cfg->buffers[i].name)) {
			buffer_del(d->nl, cfg->buffers[i].name);
			goto fail;
		}
	}
	for (i = 0; i < cfg->nsets; i++)
		if (install_set(d, &cfg->sets[i]))
			goto fail;
	ids = calloc(cfg->nprobes ?: 1, sizeof(*ids));
	if (!ids) {
		log_error("out of memory");
		goto fail;
	}
	for (i = 0; i < cfg->nprobes; i++)
		if (install_probe(d, &cfg->probes[i], &ids[i]))
			goto fail;
	for (i = 0; i < cfg->nprobes; i++)
		if (configure_probe(d, &cfg->probes[i], ids[i]))
			goto fail;
	free(ids);
	ids = NULL;
	for (i = 0; i < d->inst.nprobes; i++)
		if (probe_enable(d->nl, &d->inst.probes[i]))
			goto fail;
	return 0;
fail:
	free(ids);
	kernel_remove(d);
	return -1;
}

void kernel_remove(struct daemon *d)
{
	struct installed *in = &d->inst;
	unsigned int i;

	/* Probes first: a buffer cannot go while probes log into it. */
	for (i = in->nprobes; i-- > 0;)
		probe_del(d->nl, &in->probes[i]);
	for (i = in->nbuffers; i-- > 0;)
		buffer_del(d->nl, in->buffers[i]);
	free(in->probes);
	free(in->buffers);
	memset(in, 0, sizeof(*in));
}

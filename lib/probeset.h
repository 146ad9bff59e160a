/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Probe sets: adding and removing the packet probes of a named set
 * ("udp-send", "tcp-send", "udp-recv", "tcp-recv"; see "Packet probes" in
 * <linux/magnet.h>) in one step. Shared by magnetctl (probe add-set,
 * probe del-set) and magnet-read (-P, which installs sets for the length
 * of a capture).
 */
#ifndef MAGNET_PROBESET_H
#define MAGNET_PROBESET_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/magnet.h>

#include "filter.h"
#include "nl.h"

#define PROBESET_MAX	64	/* probes in all the sets of one request */

struct probeset_probe {
	char name[MAGNET_NAME_LEN];	/* "SET.LAYER", also the probe's name */
	char target[MAGNET_TARGET_LEN];	/* function or tracepoint used */
	uint16_t id;			/* probe id, 0 if not added */
	int error;			/* 0: added; ENOENT: nothing to probe
					 * in this kernel (skipped); else the
					 * errno of a failure
					 */
};

struct probeset {
	unsigned int count;
	struct probeset_probe probe[PROBESET_MAX];
};

/*
 * Add every catalog entry of the comma-separated @sets ("udp-send,udp-recv")
 * as a probe of the same name, logging into @buffer with snap length
 * @snaplen (packet bytes; 0 = whole packets), enabled or not. Layers the
 * running kernel has no function for are skipped (error ENOENT in @out).
 * Any other failure, or a set that does not exist, removes what was added
 * and returns -1 (nl_err(); a probe that could not be removed again is
 * named in its hint). Returns 0 on success; @out then lists every layer of
 * the sets with its outcome.
 */
int probeset_add(struct nl_ctx *nl, const char *sets, const char *buffer,
		 uint32_t snaplen, bool enabled, struct probeset *out);

/*
 * Remove the probes named "SET.*" of the comma-separated @sets, whoever
 * added them. Returns the number removed, or -1 (nl_err()).
 */
int probeset_del(struct nl_ctx *nl, const char *sets);

/*
 * Remove the probes @ps lists as added (error 0), e.g. at exit; those
 * gone already are fine. Returns 0, or -1 (nl_err(): the first failure).
 */
int probeset_remove(struct nl_ctx *nl, const struct probeset *ps);

/* Enable the probes @ps lists as added. 0, or -1 (nl_err()). */
int probeset_enable(struct nl_ctx *nl, const struct probeset *ps);

/*
 * Add packet rule @r to each probe @ps lists as added of a packet set
 * (udp-*, tcp-*; not app's or blk-io's, whose hits are no packets' and
 * which the kernel refuses it); they remove it when they go. 0, or -1
 * (nl_err(); rules added before stay with their probes).
 */
int probeset_filter(struct nl_ctx *nl, const struct probeset *ps,
		    const struct filter_rule *r);

/* The hits their rules dropped, summed over the probes @ps added. */
int probeset_filtered(struct nl_ctx *nl, const struct probeset *ps,
		      uint64_t *filtered);

#endif /* MAGNET_PROBESET_H */

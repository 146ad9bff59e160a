/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A view: magnetd's metrics arranged as Supermon categories, and their
 * three texts (the schema "#", a sample "S" as a node's mon serves it, and
 * the kernel module's positional sample for files).
 *
 * Categories, in this order: "time" (timestamp), "magnetd" (magnetd's own
 * metrics "magnetd.X" and the totals "records", "records.X", with dots
 * as "_"), then one per event and per latency in magnetd's order: the
 * metric "NAME.FIELD" is field FIELD of category NAME. Per-CPU counts
 * ("EVENT.cpuN.count") are left out. Values are unsigned integers
 * (magnetd's, rounded).
 */
#ifndef MAGNET_SUPERMON_VIEW_H
#define MAGNET_SUPERMON_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libmagnet.h"

struct category {
	char name[128];
	unsigned int nfields;
	char (*field)[64];
	uint64_t *value;
};

struct view {
	unsigned int ncats;
	struct category *cat;
	int health_field;	/* index in cat[1] of "health", or -1 */
};

/* Bits of categories a client wants: bit i is category i. */
#define MASK_BYTES	128
struct mask {
	bool all;
	uint8_t bit[MASK_BYTES];
};

/* Build @v from @snap; 0, or -1 (ENOMEM). */
int view_build(struct view *v, const struct magnet_snapshot *snap);
void view_free(struct view *v);

/* With no snapshot yet: "time" and "magnetd" only, at 0. */
int view_empty(struct view *v);

/* Say magnetd cannot be reached: its health field reads 0. */
void view_unhealthy(struct view *v);

/*
 * The texts, each one s-expression followed by an empty line (files: one
 * newline), malloc'ed; NULL on ENOMEM. @node is the node's name, @addr its
 * IPv4 address (network byte order).
 */
char *view_schema(const struct view *v, size_t *len);
char *view_sample(const struct view *v, const char *node, uint32_t addr,
		  const struct mask *m, size_t *len);
char *view_file_sample(const struct view *v, size_t *len);

/* Parse the hex digits of @s (@n of them, "0x" allowed) into @m. */
bool mask_parse(struct mask *m, const char *s, size_t n);

#endif /* MAGNET_SUPERMON_VIEW_H */

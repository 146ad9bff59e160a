/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names user space gives what the kernel numbers: the probe sets and
 * their layers ("Packet probes" and "Block probes" in <linux/magnet.h>), for
 * programs that must know them without asking the module (magnetd
 * checking its configuration, magnet-read naming a record's layer).
 * tests/host/nl-attrs.py holds them against the kernel's catalog
 * (kmod/magnet/packet.c, kmod/magnet/block.c).
 */
#ifndef MAGNET_NAMES_H
#define MAGNET_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define PROBE_SET_LAYERS_MAX	7

struct probe_set {
	const char *name;			/* "udp-send" */
	const char *layers[PROBE_SET_LAYERS_MAX]; /* "socket", ... */
	bool packets;				/* its hits are packets' */
};

/* The sets, NULL-terminated by a set without a name. */
extern const struct probe_set probe_sets[];

/* The set named by the @len bytes at @name, or NULL. */
const struct probe_set *probe_set_find(const char *name, size_t len);

/* The set of which @name ("udp-send.ip") is a layer, or NULL. */
const struct probe_set *probe_set_of_layer(const char *name);

/*
 * A record's layer (enum magnet_layer) as the sets name it: "dev-xmit";
 * the protocol layers by @proto (IPPROTO_*): "udp", "tcp". "?" if unknown.
 */
const char *layer_name(unsigned int layer, unsigned int proto);

/* A block record's layer (enum magnet_block_layer): "issue"; "?" if unknown. */
const char *block_layer_name(unsigned int layer);

#endif /* MAGNET_NAMES_H */

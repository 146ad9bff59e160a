// SPDX-License-Identifier: GPL-2.0
/*
 * Names of the packet probe sets and layers (see names.h).
 */
#include <string.h>
#include <netinet/in.h>

#include <linux/magnet.h>

#include "names.h"

const struct probe_set probe_sets[] = {
	{ "udp-send", { "socket", "udp", "udp6", "ip", "ip6", "dev-queue",
			"dev-xmit" }, true },
	{ "tcp-send", { "socket", "tcp", "tcp6", "ip", "ip6", "dev-queue",
			"dev-xmit" }, true },
	{ "udp-recv", { "dev-recv", "ip", "ip6", "udp", "udp6", "sock-queue",
			"app" }, true },
	{ "tcp-recv", { "dev-recv", "ip", "ip6", "tcp", "tcp6", "sock-queue",
			"app" }, true },
	{ "blk-io", { "bio", "queue", "issue", "complete" }, false },
	{ "app", { "span" }, false },
	{ "cpu", { "sample" }, false },
	{ NULL, { NULL }, false },
};

const struct probe_set *probe_set_find(const char *name, size_t len)
{
	const struct probe_set *set;

	for (set = probe_sets; set->name; set++)
		if (strlen(set->name) == len && !strncmp(set->name, name, len))
			return set;
	return NULL;
}

const struct probe_set *probe_set_of_layer(const char *name)
{
	const char *dot = strchr(name, '.');
	const struct probe_set *set;
	int i;

	if (!dot)
		return NULL;
	set = probe_set_find(name, dot - name);
	for (i = 0; set && i < PROBE_SET_LAYERS_MAX; i++)
		if (set->layers[i] && !strcmp(set->layers[i], dot + 1))
			return set;
	return NULL;
}

const char *layer_name(unsigned int layer, unsigned int proto)
{
	static const char *const names[MAGNET_LAYER_COUNT] = {
		[MAGNET_LAYER_NONE] = "none",
		[MAGNET_LAYER_SOCKET] = "socket",
		[MAGNET_LAYER_IP_SEND] = "ip",
		[MAGNET_LAYER_DEV_QUEUE] = "dev-queue",
		[MAGNET_LAYER_DEV_XMIT] = "dev-xmit",
		[MAGNET_LAYER_DEV_RECV] = "dev-recv",
		[MAGNET_LAYER_IP_RECV] = "ip",
		[MAGNET_LAYER_SOCK_QUEUE] = "sock-queue",
		[MAGNET_LAYER_APP] = "app",
	};

	if (layer == MAGNET_LAYER_PROTO_SEND || layer == MAGNET_LAYER_PROTO_RECV)
		return proto == IPPROTO_TCP ? "tcp" :
		       proto == IPPROTO_UDP ? "udp" : "proto";
	return layer < MAGNET_LAYER_COUNT && names[layer] ? names[layer] : "?";
}

const char *block_layer_name(unsigned int layer)
{
	static const char *const names[MAGNET_BLOCK_COUNT] = {
		[MAGNET_BLOCK_NONE] = "none",
		[MAGNET_BLOCK_BIO] = "bio",
		[MAGNET_BLOCK_QUEUE] = "queue",
		[MAGNET_BLOCK_ISSUE] = "issue",
		[MAGNET_BLOCK_COMPLETE] = "complete",
	};

	return layer < MAGNET_BLOCK_COUNT && names[layer] ? names[layer] : "?";
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Print what user space knows of the kernel's contract, for
 * tests/host/nl-attrs.py to hold against the uapi header, the kernel's
 * policies and its catalog:
 *	SPACE TYPE NAME MNL_TYPE	lib/nl.c's attribute tables (NAME "-"
 *					when it has none)
 *	set SET LAYER			lib/names.c's probe sets
 *	layer N NAME			lib/names.c's name of layer N
 */
#include <stdio.h>

#include "names.h"
#include "nl.h"

static const char *const mnl_names[MNL_TYPE_MAX] = {
	[MNL_TYPE_UNSPEC] = "unspec", [MNL_TYPE_U8] = "u8",
	[MNL_TYPE_U16] = "u16", [MNL_TYPE_U32] = "u32",
	[MNL_TYPE_U64] = "u64", [MNL_TYPE_STRING] = "string",
	[MNL_TYPE_FLAG] = "flag", [MNL_TYPE_MSECS] = "msecs",
	[MNL_TYPE_NESTED] = "nest", [MNL_TYPE_NESTED_COMPAT] = "nest-compat",
	[MNL_TYPE_NUL_STRING] = "string", [MNL_TYPE_BINARY] = "binary",
};

int main(void)
{
	static const char *const spaces[] = {
		"magnet", "stat", "cpu", "packet", "header", "correlate",
	};
	unsigned int s, type, max;
	const char *name;

	for (s = 0; s < sizeof(spaces) / sizeof(spaces[0]); s++) {
		nl_attr_type(spaces[s], 0, &max);
		for (type = 1; type <= max; type++) {
			name = nl_attr_name(spaces[s], type);
			printf("%s %u %s %s\n", spaces[s], type,
			       name ? name : "-",
			       mnl_names[nl_attr_type(spaces[s], type, NULL)]);
		}
	}
	for (const struct probe_set *set = probe_sets; set->name; set++)
		for (unsigned int i = 0; i < PROBE_SET_LAYERS_MAX; i++)
			if (set->layers[i])
				printf("set %s %s\n", set->name, set->layers[i]);
	for (type = 0; type < MAGNET_LAYER_COUNT; type++)
		printf("layer %u %s\n", type, layer_name(type, 0));
	for (type = 0; type < MAGNET_BLOCK_COUNT; type++)
		printf("blayer %u %s\n", type, block_layer_name(type));
	return 0;
}

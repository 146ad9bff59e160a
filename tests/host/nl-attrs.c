// SPDX-License-Identifier: GPL-2.0
/*
 * Print the user-space attribute tables of lib/nl.c, one line per type:
 *	SPACE TYPE NAME MNL_TYPE
 * (NAME "-" when it has none), for tests/host/nl-attrs.py to hold against
 * the uapi header's enums and the kernel's policies.
 */
#include <stdio.h>

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
		"magnet", "stat", "cpu", "packet", "correlate",
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
	return 0;
}

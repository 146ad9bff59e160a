// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl buffer: add, del, list (see magnetctl.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "print.h"

const char help_buffer[] =
"Buffers (per-CPU rings of event records, read with magnet-read(1)):\n"
"  magnetctl buffer add NAME size SIZE [mode drop|overwrite]\n"
"      Create buffer NAME with SIZE bytes per CPU, a power of two from 4K\n"
"      to 1G. When a CPU's ring is full, mode drop (the default) drops new\n"
"      records and mode overwrite evicts the oldest ones.\n"
"  magnetctl buffer del NAME\n"
"      Remove buffer NAME; refused while probes log into it. Its reader\n"
"      gets the records left, then end of file.\n"
"  magnetctl buffer list\n"
"  magnetctl buffer show [NAME]\n"
"      List the buffers, or buffer NAME: NAME, SIZE (bytes per CPU), MODE,\n"
"      CPUS (rings, one per possible CPU), MAX_RECORD (largest record in\n"
"      bytes), READER (busy while a reader is attached, else free),\n"
"      PROBES (probes logging into it) and SESSION (0: the default one;\n"
"      see magnetctl session). Names are those of the default session.\n";

/* --- buffer --------------------------------------------------------------- */

int buffer_add(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_NEW, 0);
	const char *name = take_arg(a, "NAME"), *key, *value;
	int mode;

	check_name(name, "buffer name");
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	while (more(a)) {
		key = next_word(a);
		if (!strcmp(key, "size")) {
			refuse_repeat(nlh, MAGNET_A_BUFFER_SIZE, key);
			mnl_attr_put_u64(nlh, MAGNET_A_BUFFER_SIZE,
					 parse_size(take_value(a, key)));
		} else if (!strcmp(key, "mode")) {
			refuse_repeat(nlh, MAGNET_A_BUFFER_MODE, key);
			value = take_value(a, key);
			mode = word_index(buffer_modes,
					  ARRAY_SIZE(buffer_modes), value);
			if (mode < 0)
				usage_error("%s: bad mode \"%s\": expected drop or overwrite",
					    command, value);
			mnl_attr_put_u8(nlh, MAGNET_A_BUFFER_MODE, mode);
		} else {
			unknown_keyword(key);
		}
	}
	if (!request_has(nlh, MAGNET_A_BUFFER_SIZE))
		usage_error("%s: missing \"size SIZE\"", command);
	return ctl_request(&req, NULL, NULL);
}

int buffer_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_DEL, 0);
	const char *name = take_arg(a, "NAME");

	check_name(name, "buffer name");
	no_more_args(a);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	return ctl_request(&req, NULL, NULL);
}

static int buffer_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	char mode[24], size[32];
	uint64_t bytes;

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	bytes = attr_uint(tb[MAGNET_A_BUFFER_SIZE]);
	format_size(bytes, size);
	print_row_begin();
	print_string(PRINT_ANY, "name", NULL,
		     attr_str(tb[MAGNET_A_BUFFER_NAME]));
	print_u64(PRINT_JSON, "size", NULL, bytes);
	print_string(PRINT_TEXT, "size", NULL, size);
	print_string(PRINT_ANY, "mode", NULL,
		     VALUE_NAME(buffer_modes, tb[MAGNET_A_BUFFER_MODE], mode));
	print_u64(PRINT_ANY, "cpus", NULL, attr_uint(tb[MAGNET_A_BUFFER_CPUS]));
	print_u64(PRINT_ANY, "max_record", NULL,
		  attr_uint(tb[MAGNET_A_BUFFER_MAX_RECORD]));
	print_string(PRINT_ANY, "reader", NULL,
		     tb[MAGNET_A_BUFFER_READER] ? "busy" : "free");
	print_u64(PRINT_ANY, "probes", NULL,
		  attr_uint(tb[MAGNET_A_BUFFER_PROBES]));
	print_u64(PRINT_ANY, "session", NULL, attr_uint(tb[MAGNET_A_SESSION]));
	print_row_end();
	return MNL_CB_OK;
}

int buffer_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!more(a)) {
		request_start(nl, &req, MAGNET_CMD_BUFFER_GET, NLM_F_DUMP);
	} else {
		nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_GET, 0);
		check_name(a->word[0], "buffer name");
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, next_word(a));
		no_more_args(a);
	}
	return list(&req, buffer_row_cb);
}

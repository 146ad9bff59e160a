// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl session: list, del (see magnetctl.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "print.h"

const char help_session[] =
"Sessions (each client's own buffers and probes, named inside it; made by\n"
"magnet-read -P and other programs, gone when they exit):\n"
"  magnetctl session list\n"
"      List the sessions: ID, UID (the user who made it), PID (the\n"
"      process), BUFFERS and PROBES in it. buffer list and probe list show\n"
"      their objects with a SESSION column; session 0 is the default, the\n"
"      one magnetctl's own commands work in.\n"
"  magnetctl session del ID\n"
"      End session ID and remove what is in it (needs CAP_SYS_ADMIN for\n"
"      another program's session).\n";

static int session_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	print_row_begin();
	print_u64(PRINT_ANY, "id", NULL, attr_uint(tb[MAGNET_A_SESSION]));
	print_u64(PRINT_ANY, "uid", NULL, attr_uint(tb[MAGNET_A_SESSION_UID]));
	print_u64(PRINT_ANY, "pid", NULL, attr_uint(tb[MAGNET_A_SESSION_PID]));
	print_u64(PRINT_ANY, "buffers", NULL,
		  attr_uint(tb[MAGNET_A_SESSION_BUFFERS]));
	print_u64(PRINT_ANY, "probes", NULL,
		  attr_uint(tb[MAGNET_A_SESSION_PROBES]));
	print_row_end();
	return MNL_CB_OK;
}

int session_list(struct args *a)
{
	struct request req;

	no_more_args(a);
	request_start(nl, &req, MAGNET_CMD_SESSION_GET, NLM_F_DUMP);
	return list(&req, session_row_cb);
}

int session_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_SESSION_DEL, 0);
	const char *word = take_arg(a, "ID");
	char *end;
	unsigned long id;

	no_more_args(a);
	errno = 0;
	id = strtoul(word, &end, 10);
	if (errno || *end || !id || id > UINT32_MAX || word[0] == '-')
		usage_error("%s: bad session id \"%s\": a number from magnetctl session list",
			    command, word);
	mnl_attr_put_u32(nlh, MAGNET_A_SESSION, id);
	return ctl_request(&req, NULL, NULL);
}

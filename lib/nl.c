// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink side of magnet's programs (see nl.h): requests and
 * replies, the kernel's errors with extended ack turned into one line of
 * text, the notify group, and the attribute tables that mirror the
 * kernel's policies (tests/host/nl-attrs checks them against the kernel's
 * source).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "nl.h"

/* The kernel sizes dump messages to the largest buffer we read with. */
#define REPLY_SIZE		32768
/* monitor: room for bursts of notifications (capped by rmem_max) */
#define MONITOR_RCVBUF		(1 << 20)
#define CAP_HINT		"needs CAP_NET_ADMIN or CAP_SYS_ADMIN"
#define MONITOR_CAP_HINT	"needs CAP_NET_ADMIN"

struct nl_ctx {
	struct mnl_socket *sock;
	unsigned int portid;
	unsigned int seq;
	uint16_t family;		/* 0 until resolved */
	uint32_t notify_group;		/* 0: the family has none */
	bool owned;			/* see nl_own_objects() */
	uint32_t session;		/* see nl_session_new(), 0: default */
	struct nl_error err;		/* the last failure */
	char reply[REPLY_SIZE] __attribute__((aligned(8)));
};

/* One request and its replies. */
struct exchange {
	struct nl_ctx *nl;
	const struct nlmsghdr *req;
	mnl_cb_t cb;
	void *data;
	int error;			/* errno the kernel answered with */
	char msg[256];			/* NLMSGERR_ATTR_MSG */
	int bad_attr;			/* offending attribute, or -1 */
	int bad_nest;			/* the nest it is in, or -1 */
	int missing_attr;		/* NLMSGERR_ATTR_MISS_TYPE, or -1 */
	int missing_nest;		/* the nest it is missing from, or -1 */
	const char *failed;		/* what went wrong on our side */
	int local_errno;
};

#define ATTR_NAME(a)	[MAGNET_A_##a] = "MAGNET_A_" #a
static const char *const magnet_attr_names[MAGNET_A_MAX + 1] = {
	ATTR_NAME(BUFFER_NAME), ATTR_NAME(BUFFER_SIZE), ATTR_NAME(BUFFER_MODE),
	ATTR_NAME(BUFFER_CPUS), ATTR_NAME(BUFFER_MAX_RECORD),
	ATTR_NAME(BUFFER_READER), ATTR_NAME(BUFFER_PROBES),
	ATTR_NAME(BUFFER_CPU), ATTR_NAME(PROBE_ID), ATTR_NAME(PROBE_NAME),
	ATTR_NAME(PROBE_KIND), ATTR_NAME(PROBE_TARGET),
	ATTR_NAME(PROBE_PREDEF), ATTR_NAME(PROBE_ARGS),
	ATTR_NAME(PROBE_ID_ARG), ATTR_NAME(PROBE_SNAPLEN),
	ATTR_NAME(PROBE_ENABLED), ATTR_NAME(PROBE_NOTIFY),
	ATTR_NAME(PROBE_OWNER), ATTR_NAME(PROBE_MISSED),
	ATTR_NAME(PROBE_STATS), ATTR_NAME(PROBE_DESC), ATTR_NAME(FILTER_ID),
	ATTR_NAME(FILTER_ACTION), ATTR_NAME(FILTER_CPUS),
	ATTR_NAME(FILTER_TGID), ATTR_NAME(FILTER_TID),
	ATTR_NAME(FILTER_ID_MIN), ATTR_NAME(FILTER_ID_MAX),
	ATTR_NAME(SAMPLE_EVERY), ATTR_NAME(SAMPLE_INTERVAL),
	ATTR_NAME(NOTIFY_RECORD), ATTR_NAME(NOTIFY_SENT),
	ATTR_NAME(NOTIFY_DROPPED), ATTR_NAME(NOTIFY_RATE),
	ATTR_NAME(FILTER_IDS), ATTR_NAME(FILTER_TYPE), ATTR_NAME(FILTER_CONFIG),
	ATTR_NAME(FILTER_STATS), ATTR_NAME(OWNED), ATTR_NAME(CATALOG_RESOLVE),
	ATTR_NAME(PROBE_TARGET_USED), ATTR_NAME(PROBE_DISPATCH),
	ATTR_NAME(SESSION), ATTR_NAME(SESSION_UID), ATTR_NAME(SESSION_PID),
	ATTR_NAME(SESSION_BUFFERS), ATTR_NAME(SESSION_PROBES),
	ATTR_NAME(LEDGER_ENABLED), ATTR_NAME(LEDGER_BY_TGID),
	ATTR_NAME(LEDGER_CPU), ATTR_NAME(LEDGER_ELAPSED),
	ATTR_NAME(LEDGER_CGROUP), ATTR_NAME(LEDGER_TGID),
	ATTR_NAME(LEDGER_KIND), ATTR_NAME(LEDGER_VECTOR),
	ATTR_NAME(LEDGER_NAME), ATTR_NAME(LEDGER_NS),
	ATTR_NAME(ACCT_PID), ATTR_NAME(ACCT_ENABLED), ATTR_NAME(ACCT_SINCE),
	ATTR_NAME(ACCT_THREADS), ATTR_NAME(ACCT_MISSED), ATTR_NAME(ACCT_NR),
	ATTR_NAME(ACCT_RESULT), ATTR_NAME(ACCT_ERRORS), ATTR_NAME(ACCT_MAX),
	ATTR_NAME(ACCT_HIST), ATTR_NAME(ACCT_EXITED), ATTR_NAME(PROBE_PERIOD),
	ATTR_NAME(PROBE_DEPTH),
};

#define STAT_NAME(a)	[MAGNET_STAT_##a] = "MAGNET_STAT_" #a
static const char *const stat_attr_names[MAGNET_STAT_MAX + 1] = {
	STAT_NAME(HITS), STAT_NAME(LOGGED), STAT_NAME(FILTERED),
	STAT_NAME(SAMPLED), STAT_NAME(LOST),
};

#define CPU_NAME(a)	[MAGNET_CPU_##a] = "MAGNET_CPU_" #a
static const char *const cpu_attr_names[MAGNET_CPU_MAX + 1] = {
	CPU_NAME(ID), CPU_NAME(PRODUCED), CPU_NAME(WRITTEN), CPU_NAME(READ),
	CPU_NAME(LOST), CPU_NAME(DROPPED), CPU_NAME(OVERWRITTEN),
	CPU_NAME(DISCARDED),
};

#define PACKET_NAME(a)	[MAGNET_PACKET_##a] = "MAGNET_PACKET_" #a
static const char *const packet_attr_names[MAGNET_PACKET_MAX + 1] = {
	PACKET_NAME(PROGRAM), PACKET_NAME(TEXT), PACKET_NAME(PAD),
	PACKET_NAME(UNDECIDED),
	PACKET_NAME(NATIVE), PACKET_NAME(FIELDS),
};

#define HEADER_NAME(a)	[MAGNET_HEADER_##a] = "MAGNET_HEADER_" #a
static const char *const header_attr_names[MAGNET_HEADER_MAX + 1] = {
	HEADER_NAME(PROTO), HEADER_NAME(SRC), HEADER_NAME(SRC_PREFIX),
	HEADER_NAME(DST), HEADER_NAME(DST_PREFIX), HEADER_NAME(HOST),
	HEADER_NAME(HOST_PREFIX), HEADER_NAME(SPORT), HEADER_NAME(DPORT),
	HEADER_NAME(PORT),
};

#define CORR_NAME(a)	[MAGNET_CORR_##a] = "MAGNET_CORR_" #a
static const char *const corr_attr_names[MAGNET_CORR_MAX + 1] = {
	CORR_NAME(END), CORR_NAME(VIA), CORR_NAME(THRESHOLD),
	CORR_NAME(WINDOW), CORR_NAME(MAX_OPEN), CORR_NAME(TAKEN),
	CORR_NAME(JOURNEYS), CORR_NAME(PASSED), CORR_NAME(EXPIRED),
	CORR_NAME(UNMATCHED), CORR_NAME(OVERFLOW), CORR_NAME(CUT),
	CORR_NAME(LOST),
};

static const enum mnl_attr_data_type magnet_attr_types[MAGNET_A_MAX + 1] = {
	[MAGNET_A_BUFFER_NAME]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_BUFFER_SIZE]		= MNL_TYPE_U64,
	[MAGNET_A_BUFFER_MODE]		= MNL_TYPE_U8,
	[MAGNET_A_BUFFER_CPUS]		= MNL_TYPE_U32,
	[MAGNET_A_BUFFER_MAX_RECORD]	= MNL_TYPE_U32,
	[MAGNET_A_BUFFER_READER]	= MNL_TYPE_FLAG,
	[MAGNET_A_BUFFER_PROBES]	= MNL_TYPE_U32,
	[MAGNET_A_BUFFER_CPU]		= MNL_TYPE_NESTED,
	[MAGNET_A_PROBE_ID]		= MNL_TYPE_U16,
	[MAGNET_A_PROBE_NAME]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_PROBE_KIND]		= MNL_TYPE_U8,
	[MAGNET_A_PROBE_TARGET]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_PROBE_PREDEF]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_PROBE_ARGS]		= MNL_TYPE_U8,
	[MAGNET_A_PROBE_ID_ARG]		= MNL_TYPE_U8,
	[MAGNET_A_PROBE_SNAPLEN]	= MNL_TYPE_U32,
	[MAGNET_A_PROBE_ENABLED]	= MNL_TYPE_U8,
	[MAGNET_A_PROBE_NOTIFY]		= MNL_TYPE_U8,
	[MAGNET_A_PROBE_OWNER]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_PROBE_MISSED]		= MNL_TYPE_U64,
	[MAGNET_A_PROBE_STATS]		= MNL_TYPE_NESTED,
	[MAGNET_A_PROBE_DESC]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_FILTER_ID]		= MNL_TYPE_U32,
	[MAGNET_A_FILTER_ACTION]	= MNL_TYPE_U8,
	[MAGNET_A_FILTER_CPUS]		= MNL_TYPE_BINARY,
	[MAGNET_A_FILTER_TGID]		= MNL_TYPE_U32,
	[MAGNET_A_FILTER_TID]		= MNL_TYPE_U32,
	[MAGNET_A_FILTER_ID_MIN]	= MNL_TYPE_U64,
	[MAGNET_A_FILTER_ID_MAX]	= MNL_TYPE_U64,
	[MAGNET_A_SAMPLE_EVERY]		= MNL_TYPE_U32,
	[MAGNET_A_SAMPLE_INTERVAL]	= MNL_TYPE_U64,
	[MAGNET_A_NOTIFY_RECORD]	= MNL_TYPE_BINARY,
	[MAGNET_A_NOTIFY_SENT]		= MNL_TYPE_U64,
	[MAGNET_A_NOTIFY_DROPPED]	= MNL_TYPE_U64,
	[MAGNET_A_NOTIFY_RATE]		= MNL_TYPE_U32,
	[MAGNET_A_FILTER_IDS]		= MNL_TYPE_U64,
	[MAGNET_A_FILTER_TYPE]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_FILTER_CONFIG]	= MNL_TYPE_NESTED,
	[MAGNET_A_FILTER_STATS]		= MNL_TYPE_NESTED,
	[MAGNET_A_OWNED]		= MNL_TYPE_FLAG,
	[MAGNET_A_CATALOG_RESOLVE]	= MNL_TYPE_FLAG,
	[MAGNET_A_PROBE_TARGET_USED]	= MNL_TYPE_NUL_STRING,
	[MAGNET_A_PROBE_DISPATCH]	= MNL_TYPE_U8,
	[MAGNET_A_PROBE_PERIOD]		= MNL_TYPE_U64,
	[MAGNET_A_PROBE_DEPTH]		= MNL_TYPE_U8,
	[MAGNET_A_SESSION]		= MNL_TYPE_U32,
	[MAGNET_A_SESSION_UID]		= MNL_TYPE_U32,
	[MAGNET_A_SESSION_PID]		= MNL_TYPE_U32,
	[MAGNET_A_SESSION_BUFFERS]	= MNL_TYPE_U32,
	[MAGNET_A_SESSION_PROBES]	= MNL_TYPE_U32,
	[MAGNET_A_LEDGER_ENABLED]	= MNL_TYPE_U8,
	[MAGNET_A_LEDGER_BY_TGID]	= MNL_TYPE_U8,
	[MAGNET_A_LEDGER_CPU]		= MNL_TYPE_U32,
	[MAGNET_A_LEDGER_ELAPSED]	= MNL_TYPE_U64,
	[MAGNET_A_LEDGER_CGROUP]	= MNL_TYPE_U64,
	[MAGNET_A_LEDGER_TGID]		= MNL_TYPE_U32,
	[MAGNET_A_LEDGER_KIND]		= MNL_TYPE_U8,
	[MAGNET_A_LEDGER_VECTOR]	= MNL_TYPE_U32,
	[MAGNET_A_LEDGER_NAME]		= MNL_TYPE_NUL_STRING,
	[MAGNET_A_LEDGER_NS]		= MNL_TYPE_U64,
	[MAGNET_A_ACCT_PID]		= MNL_TYPE_U32,
	[MAGNET_A_ACCT_ENABLED]		= MNL_TYPE_U8,
	[MAGNET_A_ACCT_SINCE]		= MNL_TYPE_U64,
	[MAGNET_A_ACCT_THREADS]		= MNL_TYPE_U32,
	[MAGNET_A_ACCT_MISSED]		= MNL_TYPE_U64,
	[MAGNET_A_ACCT_NR]		= MNL_TYPE_U32,
	[MAGNET_A_ACCT_RESULT]		= MNL_TYPE_BINARY,
	[MAGNET_A_ACCT_ERRORS]		= MNL_TYPE_U64,
	[MAGNET_A_ACCT_MAX]		= MNL_TYPE_U64,
	[MAGNET_A_ACCT_HIST]		= MNL_TYPE_BINARY,
	[MAGNET_A_ACCT_EXITED]		= MNL_TYPE_FLAG,
};

static const enum mnl_attr_data_type stat_attr_types[MAGNET_STAT_MAX + 1] = {
	[MAGNET_STAT_HITS]		= MNL_TYPE_U64,
	[MAGNET_STAT_LOGGED]		= MNL_TYPE_U64,
	[MAGNET_STAT_FILTERED]		= MNL_TYPE_U64,
	[MAGNET_STAT_SAMPLED]		= MNL_TYPE_U64,
	[MAGNET_STAT_LOST]		= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type cpu_attr_types[MAGNET_CPU_MAX + 1] = {
	[MAGNET_CPU_ID]			= MNL_TYPE_U32,
	[MAGNET_CPU_PRODUCED]		= MNL_TYPE_U64,
	[MAGNET_CPU_WRITTEN]		= MNL_TYPE_U64,
	[MAGNET_CPU_READ]		= MNL_TYPE_U64,
	[MAGNET_CPU_LOST]		= MNL_TYPE_U64,
	[MAGNET_CPU_DROPPED]		= MNL_TYPE_U64,
	[MAGNET_CPU_OVERWRITTEN]	= MNL_TYPE_U64,
	[MAGNET_CPU_DISCARDED]		= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type
packet_attr_types[MAGNET_PACKET_MAX + 1] = {
	[MAGNET_PACKET_PROGRAM]		= MNL_TYPE_BINARY,
	[MAGNET_PACKET_TEXT]		= MNL_TYPE_NUL_STRING,
	[MAGNET_PACKET_UNDECIDED]	= MNL_TYPE_U64,
	[MAGNET_PACKET_NATIVE]		= MNL_TYPE_U64,
	[MAGNET_PACKET_FIELDS]		= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type
header_attr_types[MAGNET_HEADER_MAX + 1] = {
	[MAGNET_HEADER_PROTO]		= MNL_TYPE_U8,
	[MAGNET_HEADER_SRC]		= MNL_TYPE_BINARY,
	[MAGNET_HEADER_SRC_PREFIX]	= MNL_TYPE_U8,
	[MAGNET_HEADER_DST]		= MNL_TYPE_BINARY,
	[MAGNET_HEADER_DST_PREFIX]	= MNL_TYPE_U8,
	[MAGNET_HEADER_HOST]		= MNL_TYPE_BINARY,
	[MAGNET_HEADER_HOST_PREFIX]	= MNL_TYPE_U8,
	[MAGNET_HEADER_SPORT]		= MNL_TYPE_U16,
	[MAGNET_HEADER_DPORT]		= MNL_TYPE_U16,
	[MAGNET_HEADER_PORT]		= MNL_TYPE_U16,
};

static const enum mnl_attr_data_type corr_attr_types[MAGNET_CORR_MAX + 1] = {
	[MAGNET_CORR_END]		= MNL_TYPE_U16,
	[MAGNET_CORR_VIA]		= MNL_TYPE_U16,
	[MAGNET_CORR_THRESHOLD]		= MNL_TYPE_U64,
	[MAGNET_CORR_WINDOW]		= MNL_TYPE_U64,
	[MAGNET_CORR_MAX_OPEN]		= MNL_TYPE_U32,
	[MAGNET_CORR_TAKEN]		= MNL_TYPE_U64,
	[MAGNET_CORR_JOURNEYS]		= MNL_TYPE_U64,
	[MAGNET_CORR_PASSED]		= MNL_TYPE_U64,
	[MAGNET_CORR_EXPIRED]		= MNL_TYPE_U64,
	[MAGNET_CORR_UNMATCHED]		= MNL_TYPE_U64,
	[MAGNET_CORR_OVERFLOW]		= MNL_TYPE_U64,
	[MAGNET_CORR_CUT]		= MNL_TYPE_U64,
	[MAGNET_CORR_LOST]		= MNL_TYPE_U64,
};

static const enum mnl_attr_data_type ctrl_attr_types[CTRL_ATTR_MAX + 1] = {
	[CTRL_ATTR_FAMILY_ID]		= MNL_TYPE_U16,
	[CTRL_ATTR_FAMILY_NAME]		= MNL_TYPE_NUL_STRING,
	[CTRL_ATTR_MCAST_GROUPS]	= MNL_TYPE_NESTED,
};

static const enum mnl_attr_data_type
mcast_attr_types[CTRL_ATTR_MCAST_GRP_MAX + 1] = {
	[CTRL_ATTR_MCAST_GRP_NAME]	= MNL_TYPE_NUL_STRING,
	[CTRL_ATTR_MCAST_GRP_ID]	= MNL_TYPE_U32,
};

/* --- attribute tables ----------------------------------------------------- */

struct attr_table {
	const struct nlattr **tb;
	const enum mnl_attr_data_type *types;
	unsigned int max;
};

static int attr_table_cb(const struct nlattr *attr, void *data)
{
	const struct attr_table *t = data;

	/* from a newer kernel: not ours to judge */
	if (mnl_attr_type_valid(attr, t->max) < 0)
		return MNL_CB_OK;
	if (mnl_attr_validate(attr, t->types[mnl_attr_get_type(attr)]) < 0)
		return MNL_CB_ERROR;
	t->tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

static int parse_genl(const struct nlmsghdr *nlh, const struct nlattr **tb,
		      const enum mnl_attr_data_type *types, unsigned int max)
{
	struct attr_table t = { tb, types, max };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct genlmsghdr)) {
		errno = EBADMSG;
		return -1;
	}
	return mnl_attr_parse(nlh, sizeof(struct genlmsghdr), attr_table_cb,
			      &t) < 0 ? -1 : 0;
}

static int parse_nest(const struct nlattr *nest, const struct nlattr **tb,
		      const enum mnl_attr_data_type *types, unsigned int max)
{
	struct attr_table t = { tb, types, max };

	memset(tb, 0, (max + 1) * sizeof(*tb));
	return mnl_attr_parse_nested(nest, attr_table_cb, &t) < 0 ? -1 : 0;
}

int nl_probe_id_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_ID])
		*(uint16_t *)data = mnl_attr_get_u16(tb[MAGNET_A_PROBE_ID]);
	return MNL_CB_OK;
}

uint64_t attr_uint(const struct nlattr *attr)
{
	if (!attr)
		return 0;
	switch (mnl_attr_get_payload_len(attr)) {
	case 1:
		return mnl_attr_get_u8(attr);
	case 2:
		return mnl_attr_get_u16(attr);
	case 4:
		return mnl_attr_get_u32(attr);
	default:
		return mnl_attr_get_u64(attr);
	}
}

int parse_magnet_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb)
{
	return parse_genl(nlh, tb, magnet_attr_types, MAGNET_A_MAX);
}

int parse_stat_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	return parse_nest(nest, tb, stat_attr_types, MAGNET_STAT_MAX);
}

int parse_cpu_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	return parse_nest(nest, tb, cpu_attr_types, MAGNET_CPU_MAX);
}

int parse_packet_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	return parse_nest(nest, tb, packet_attr_types, MAGNET_PACKET_MAX);
}

int parse_header_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	return parse_nest(nest, tb, header_attr_types, MAGNET_HEADER_MAX);
}

int parse_corr_attrs(const struct nlattr *nest, const struct nlattr **tb)
{
	return parse_nest(nest, tb, corr_attr_types, MAGNET_CORR_MAX);
}

/* --- errors and extended acks --------------------------------------------- */

/*
 * The attribute of our request that starts at @offset: its type, and in
 * *@nest the type of the top-level nest it is in (-1 if none).
 */
static int attr_at(const struct nlmsghdr *req, uint32_t offset, int *nest)
{
	const struct nlattr *attr, *inner;
	long start, end;

	*nest = -1;
	mnl_attr_for_each(attr, req, sizeof(struct genlmsghdr)) {
		start = (const char *)attr - (const char *)req;
		end = start + attr->nla_len;
		if (start == (long)offset)
			return mnl_attr_get_type(attr);
		/* the only nest in our requests */
		if ((long)offset <= start || (long)offset >= end ||
		    mnl_attr_get_type(attr) != MAGNET_A_FILTER_CONFIG)
			continue;
		mnl_attr_for_each_nested(inner, attr)
			if ((const char *)inner - (const char *)req ==
			    (long)offset) {
				*nest = mnl_attr_get_type(attr);
				return mnl_attr_get_type(inner);
			}
	}
	return -1;
}

static int extack_attr_cb(const struct nlattr *attr, void *data)
{
	struct exchange *ex = data;
	int nest;

	switch (mnl_attr_get_type(attr)) {
	case NLMSGERR_ATTR_MSG:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
			snprintf(ex->msg, sizeof(ex->msg), "%s",
				 mnl_attr_get_str(attr));
		break;
	case NLMSGERR_ATTR_OFFS:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			ex->bad_attr = attr_at(ex->req, mnl_attr_get_u32(attr),
					       &ex->bad_nest);
		break;
	case NLMSGERR_ATTR_MISS_TYPE:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			ex->missing_attr = mnl_attr_get_u32(attr);
		break;
	case NLMSGERR_ATTR_MISS_NEST:
		/* only top-level nests are ours to name */
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0) {
			ex->missing_nest = attr_at(ex->req,
						   mnl_attr_get_u32(attr),
						   &nest);
			if (nest >= 0)
				ex->missing_nest = -1;
		}
		break;
	}
	return MNL_CB_OK;
}

/* Note the kernel's error; its TLVs start @offset bytes into the payload. */
static int kernel_error(const struct nlmsghdr *nlh, int error, size_t offset,
			struct exchange *ex)
{
	ex->error = error < 0 ? -error : error;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    offset < mnl_nlmsg_get_payload_len(nlh))
		mnl_attr_parse(nlh, offset, extack_attr_cb, ex);
	errno = ex->error;
	return MNL_CB_ERROR;
}

static int error_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
	size_t offset = sizeof(*err);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*err)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	if (!err->error)
		return MNL_CB_STOP;
	/* the TLVs follow our request, unless it was capped to its header */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		offset += err->msg.nlmsg_len - sizeof(struct nlmsghdr);
	return kernel_error(nlh, err->error, offset, data);
}

/* A dump ends with NLMSG_DONE, whose payload is the dump's error code. */
static int done_cb(const struct nlmsghdr *nlh, void *data)
{
	int error;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(error))
		return MNL_CB_STOP;
	memcpy(&error, mnl_nlmsg_get_payload(nlh), sizeof(error));
	if (error >= 0)
		return MNL_CB_STOP;
	return kernel_error(nlh, error, sizeof(error), data);
}

static int noop_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

static mnl_cb_t control_cbs[NLMSG_MIN_TYPE] = {
	[NLMSG_NOOP]	= noop_cb,
	[NLMSG_ERROR]	= error_cb,
	[NLMSG_DONE]	= done_cb,
	[NLMSG_OVERRUN]	= noop_cb,
};

/* The FILTER_TYPE string of our request, or "". */
static const char *request_filter_type(const struct nlmsghdr *req)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, req, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(attr) == MAGNET_A_FILTER_TYPE)
			return mnl_attr_get_str(attr);
	return "";
}

/* The name of attribute @type, in top-level nest @nest unless -1. */
static const char *attr_name(const struct exchange *ex, int type, int nest)
{
	const char *space = "magnet";

	if (ex->req->nlmsg_type == GENL_ID_CTRL || type < 0)
		return NULL;
	if (nest == MAGNET_A_FILTER_CONFIG || nest == MAGNET_A_FILTER_STATS) {
		/* a filter type's nest: its attribute space bears its name */
		space = request_filter_type(ex->req);
	} else if (nest >= 0) {
		return NULL;
	}
	return nl_attr_name(space, type);
}

/* Append printf-style to @buf (@size bytes, always terminated). */
static void __attribute__((format(printf, 3, 4)))
append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* " (attribute X)" or " (attribute X in NEST)", if we know their names. */
static void append_attr(struct nl_error *e, const struct exchange *ex,
			const char *what, int type, int nest)
{
	const char *name = attr_name(ex, type, nest);

	if (!name)
		return;
	append(e->text, sizeof(e->text), " (%s %s", what, name);
	if (nest >= 0 && attr_name(ex, nest, -1))
		append(e->text, sizeof(e->text), " in %s",
		       attr_name(ex, nest, -1));
	append(e->text, sizeof(e->text), ")");
}

/* What an exchange that failed met, as the context's error. */
static void exchange_error(const struct exchange *ex)
{
	struct nl_error *e = &ex->nl->err;
	const char *type;

	memset(e, 0, sizeof(*e));
	if (!ex->error) {
		e->error = ex->local_errno ?: EPROTO;
		snprintf(e->text, sizeof(e->text), "%s", ex->failed);
		if (ex->local_errno)
			append(e->text, sizeof(e->text), ": %s",
			       strerror(ex->local_errno));
		return;
	}
	e->error = ex->error;
	e->kernel = true;
	snprintf(e->text, sizeof(e->text), "%s", strerror(ex->error));
	if (ex->msg[0])
		append(e->text, sizeof(e->text), ": %s", ex->msg);
	append_attr(e, ex, "attribute", ex->bad_attr, ex->bad_nest);
	append_attr(e, ex, "missing attribute", ex->missing_attr,
		    ex->missing_nest);
	if (ex->error == EPERM && !ex->msg[0])
		append(e->text, sizeof(e->text), " (" CAP_HINT ")");
	/* the type NAME is the module magnet_NAME's (linux/magnet.h) */
	type = request_filter_type(ex->req);
	if (ex->error == ENOENT && ex->bad_attr == MAGNET_A_FILTER_TYPE &&
	    ex->bad_nest < 0 && *type)
		snprintf(e->hint, sizeof(e->hint),
			 "filter type \"%s\" needs module magnet_%s loaded (modprobe magnet_%s)",
			 type, type, type);
}

int nl_fail(struct nl_ctx *nl, int error, const char *fmt, ...)
{
	va_list ap;

	memset(&nl->err, 0, sizeof(nl->err));
	nl->err.error = error ?: EINVAL;
	va_start(ap, fmt);
	vsnprintf(nl->err.text, sizeof(nl->err.text), fmt, ap);
	va_end(ap);
	return -1;
}

int nl_err_prefix(struct nl_ctx *nl, const char *fmt, ...)
{
	char text[sizeof(nl->err.text)];
	va_list ap;

	memcpy(text, nl->err.text, sizeof(text));
	va_start(ap, fmt);
	vsnprintf(nl->err.text, sizeof(nl->err.text), fmt, ap);
	va_end(ap);
	append(nl->err.text, sizeof(nl->err.text), ": %s", text);
	return -1;
}

int nl_set_err(struct nl_ctx *nl, const struct nl_error *err)
{
	nl->err = *err;
	return -1;
}

const struct nl_error *nl_err(const struct nl_ctx *nl)
{
	return &nl->err;
}

/* --- requests ------------------------------------------------------------- */

struct nl_ctx *nl_new(void)
{
	return calloc(1, sizeof(struct nl_ctx));
}

void nl_free(struct nl_ctx *nl)
{
	if (!nl)
		return;
	nl_close(nl);
	free(nl);
}

struct nlmsghdr *request_start(struct nl_ctx *nl, struct request *req,
			       uint8_t cmd, uint16_t flags)
{
	struct genlmsghdr *genl;

	if ((flags & NLM_F_DUMP) != NLM_F_DUMP)
		flags |= NLM_F_ACK;
	req->nlh = mnl_nlmsg_put_header(req->buf);
	req->nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	genl = mnl_nlmsg_put_extra_header(req->nlh, sizeof(*genl));
	genl->cmd = cmd;
	genl->version = MAGNET_GENL_VERSION;
	if (nl->owned && (cmd == MAGNET_CMD_BUFFER_NEW ||
			  cmd == MAGNET_CMD_PROBE_NEW))
		mnl_attr_put(req->nlh, MAGNET_A_OWNED, 0, NULL);
	/* (the commands that name buffers and probes: linux/magnet.h) */
	if (nl->session && cmd >= MAGNET_CMD_BUFFER_GET &&
	    cmd <= MAGNET_CMD_FILTER_NEW)
		mnl_attr_put_u32(req->nlh, MAGNET_A_SESSION, nl->session);
	return req->nlh;
}

static int session_new_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb) || !tb[MAGNET_A_SESSION])
		return MNL_CB_ERROR;
	*(uint32_t *)data = mnl_attr_get_u32(tb[MAGNET_A_SESSION]);
	return MNL_CB_OK;
}

int nl_session_new(struct nl_ctx *nl)
{
	struct request req;
	uint32_t id = 0;

	nl->session = 0;
	request_start(nl, &req, MAGNET_CMD_SESSION_NEW, 0);
	if (nl_request(nl, &req, session_new_cb, &id))
		return nl_err_prefix(nl, "a session of its own");
	if (!id)
		return nl_fail(nl, EPROTO, "no session id in the kernel's reply");
	nl->session = id;
	return 0;
}

uint32_t nl_session(const struct nl_ctx *nl)
{
	return nl->session;
}

int nl_data_path(const struct nl_ctx *nl, const char *debugfs,
		 const char *buffer, char *path, size_t size)
{
	int n = nl && nl->session ?
		snprintf(path, size, "%s/" MAGNET_DEBUGFS_DIR "/data/%u/%s",
			 debugfs, nl->session, buffer) :
		snprintf(path, size, "%s/" MAGNET_DEBUGFS_DIR "/data/%s",
			 debugfs, buffer);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

void nl_own_objects(struct nl_ctx *nl, bool owned)
{
	nl->owned = owned;
}

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct exchange *ex = data;
	int ret;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
		errno = EINTR;
		return MNL_CB_ERROR;
	}
	if (nlh->nlmsg_type != ex->req->nlmsg_type || !ex->cb)
		return MNL_CB_OK;
	ret = ex->cb(nlh, ex->data);
	if (ret == MNL_CB_ERROR && !ex->failed)
		ex->failed = "malformed reply from the kernel";
	return ret;
}

/* Send @nlh and run its replies through @ex until the ack or an error. */
static int exchange(struct nlmsghdr *nlh, struct exchange *ex)
{
	struct nl_ctx *nl = ex->nl;
	int ret = MNL_CB_OK;
	ssize_t n;

	ex->req = nlh;
	ex->bad_attr = ex->bad_nest = -1;
	ex->missing_attr = ex->missing_nest = -1;
	nlh->nlmsg_seq = ++nl->seq;
	if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0) {
		ex->failed = "sending the request";
		ex->local_errno = errno;
		return -1;
	}
	do {
		n = mnl_socket_recvfrom(nl->sock, nl->reply, sizeof(nl->reply));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ex->failed = "receiving the reply";
			ex->local_errno = errno;
			return -1;
		}
		ret = mnl_cb_run2(nl->reply, n, nlh->nlmsg_seq, nl->portid,
				  data_cb, ex, control_cbs,
				  MNL_ARRAY_SIZE(control_cbs));
	} while (n < 0 || ret > MNL_CB_STOP);
	if (ret < 0) {
		ex->local_errno = errno;
		/* libmnl, or data_cb(), found NLM_F_DUMP_INTR */
		if (errno == EINTR && !ex->failed) {
			ex->failed = "the objects changed during the dump; run the command again";
			ex->local_errno = 0;
		}
		if (!ex->failed)
			ex->failed = "unexpected netlink message";
		return -1;
	}
	return 0;
}

static int mcast_group_cb(struct nl_ctx *nl, const struct nlattr *group)
{
	const struct nlattr *tb[CTRL_ATTR_MCAST_GRP_MAX + 1];

	if (parse_nest(group, tb, mcast_attr_types, CTRL_ATTR_MCAST_GRP_MAX))
		return MNL_CB_ERROR;
	if (tb[CTRL_ATTR_MCAST_GRP_NAME] && tb[CTRL_ATTR_MCAST_GRP_ID] &&
	    !strcmp(mnl_attr_get_str(tb[CTRL_ATTR_MCAST_GRP_NAME]),
		    MAGNET_GENL_MCGRP_NOTIFY))
		nl->notify_group = mnl_attr_get_u32(tb[CTRL_ATTR_MCAST_GRP_ID]);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1];
	const struct nlattr *group;
	struct nl_ctx *nl = data;

	if (parse_genl(nlh, tb, ctrl_attr_types, CTRL_ATTR_MAX) ||
	    !tb[CTRL_ATTR_FAMILY_ID])
		return MNL_CB_ERROR;
	nl->family = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	if (tb[CTRL_ATTR_MCAST_GROUPS])
		mnl_attr_for_each_nested(group, tb[CTRL_ATTR_MCAST_GROUPS])
			if (mcast_group_cb(nl, group) != MNL_CB_OK)
				return MNL_CB_ERROR;
	return MNL_CB_OK;
}

static int resolve_family(struct nl_ctx *nl)
{
	struct exchange ex = { .nl = nl, .cb = family_cb, .data = nl };
	struct request req = {};
	struct genlmsghdr *genl;

	req.nlh = mnl_nlmsg_put_header(req.buf);
	req.nlh->nlmsg_type = GENL_ID_CTRL;
	req.nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	genl = mnl_nlmsg_put_extra_header(req.nlh, sizeof(*genl));
	genl->cmd = CTRL_CMD_GETFAMILY;
	genl->version = 1;
	mnl_attr_put_strz(req.nlh, CTRL_ATTR_FAMILY_NAME, MAGNET_GENL_NAME);
	if (exchange(req.nlh, &ex) == 0) {
		if (nl->family)
			return 0;
		ex.failed = "the kernel did not give the family's id";
	}
	if (ex.error == ENOENT)
		return nl_fail(nl, ENOENT, "the magnet kernel module is not loaded (no generic netlink family \""
			       MAGNET_GENL_NAME "\")");
	exchange_error(&ex);
	return -1;
}

static int nl_connect(struct nl_ctx *nl)
{
	int one = 1;

	if (nl->family)
		return 0;
	/* A socket whose family lookup failed is used again. */
	if (nl->sock)
		return resolve_family(nl);
	nl->sock = mnl_socket_open(NETLINK_GENERIC);
	if (!nl->sock || mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0) {
		int error = errno;

		if (nl->sock)
			mnl_socket_close(nl->sock);
		nl->sock = NULL;
		return nl_fail(nl, error, "generic netlink socket: %s",
			       strerror(error));
	}
	/* Kernels without them still work, only with terser errors. */
	mnl_socket_setsockopt(nl->sock, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl->sock, NETLINK_CAP_ACK, &one, sizeof(one));
	nl->portid = mnl_socket_get_portid(nl->sock);
	nl->seq = time(NULL);
	return resolve_family(nl);
}

int nl_request(struct nl_ctx *nl, struct request *req, mnl_cb_t cb,
	       void *data)
{
	struct exchange ex = { .nl = nl, .cb = cb, .data = data };

	if (nl_connect(nl))
		return -1;
	req->nlh->nlmsg_type = nl->family;
	if (exchange(req->nlh, &ex) == 0)
		return 0;
	exchange_error(&ex);
	return -1;
}

void nl_close(struct nl_ctx *nl)
{
	if (nl->sock)
		mnl_socket_close(nl->sock);
	nl->sock = NULL;
	nl->family = 0;
	nl->notify_group = 0;
}

int nl_fd(const struct nl_ctx *nl)
{
	return nl->sock ? mnl_socket_get_fd(nl->sock) : -1;
}

/* --- notifications -------------------------------------------------------- */

struct listener {
	struct nl_ctx *nl;
	mnl_cb_t cb;
	void *data;
};

static int notify_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	struct listener *l = data;

	if (nlh->nlmsg_type != l->nl->family ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*genl) ||
	    genl->cmd != MAGNET_CMD_NOTIFY)
		return MNL_CB_OK;
	return l->cb(nlh, l->data);
}

int nl_join_notify(struct nl_ctx *nl)
{
	int rcvbuf = MONITOR_RCVBUF;

	if (nl_connect(nl))
		return -1;
	if (!nl->notify_group)
		return nl_fail(nl, ENOENT, "the magnet module has no \""
			       MAGNET_GENL_MCGRP_NOTIFY "\" multicast group");
	if (mnl_socket_setsockopt(nl->sock, NETLINK_ADD_MEMBERSHIP,
				  &nl->notify_group,
				  sizeof(nl->notify_group))) {
		int error = errno;

		return nl_fail(nl, error, "joining the \"%s\" group: %s%s",
			       MAGNET_GENL_MCGRP_NOTIFY, strerror(error),
			       error == EPERM ? " (" MONITOR_CAP_HINT ")" : "");
	}
	setsockopt(mnl_socket_get_fd(nl->sock), SOL_SOCKET, SO_RCVBUF,
		   &rcvbuf, sizeof(rcvbuf));
	return 0;
}

int nl_recv_notify(struct nl_ctx *nl, mnl_cb_t cb, void *data)
{
	struct listener l = { nl, cb, data };
	ssize_t n;
	int ret;

	n = mnl_socket_recvfrom(nl->sock, nl->reply, sizeof(nl->reply));
	if (n < 0) {
		int error = errno;

		if (error == ENOBUFS)
			return NL_NOTIFY_LOST;
		if (error == EINTR || error == EAGAIN)
			return NL_NOTIFY_MORE;
		return nl_fail(nl, error, "receiving notifications: %s",
			       strerror(error));
	}
	ret = mnl_cb_run(nl->reply, n, 0, 0, notify_cb, &l);
	if (ret < 0) {
		int error = errno;

		return nl_fail(nl, error, "malformed notification: %s",
			       strerror(error));
	}
	return ret == MNL_CB_STOP ? NL_NOTIFY_STOP : NL_NOTIFY_MORE;
}

/* --- the attribute tables, by name ---------------------------------------- */

static const struct {
	const char *space;
	const char *const *names;
	const enum mnl_attr_data_type *types;
	unsigned int max;
} spaces[] = {
	{ "magnet", magnet_attr_names, magnet_attr_types, MAGNET_A_MAX },
	{ "stat", stat_attr_names, stat_attr_types, MAGNET_STAT_MAX },
	{ "cpu", cpu_attr_names, cpu_attr_types, MAGNET_CPU_MAX },
	{ "packet", packet_attr_names, packet_attr_types, MAGNET_PACKET_MAX },
	{ "header", header_attr_names, header_attr_types, MAGNET_HEADER_MAX },
	{ "correlate", corr_attr_names, corr_attr_types, MAGNET_CORR_MAX },
};

const char *nl_attr_name(const char *space, unsigned int type)
{
	unsigned int i;

	for (i = 0; i < MNL_ARRAY_SIZE(spaces); i++)
		if (!strcmp(spaces[i].space, space))
			return type <= spaces[i].max ? spaces[i].names[type] :
						       NULL;
	return NULL;
}

enum mnl_attr_data_type nl_attr_type(const char *space, unsigned int type,
				     unsigned int *max)
{
	unsigned int i;

	for (i = 0; i < MNL_ARRAY_SIZE(spaces); i++)
		if (!strcmp(spaces[i].space, space)) {
			if (max)
				*max = spaces[i].max;
			return type <= spaces[i].max ? spaces[i].types[type] :
						       MNL_TYPE_UNSPEC;
		}
	if (max)
		*max = 0;
	return MNL_TYPE_UNSPEC;
}

int nl_grow(void **p, size_t *alloc, size_t want, size_t size)
{
	size_t n = *alloc ? *alloc : 64;
	void *q;

	if (want <= *alloc)
		return 0;
	while (n < want)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -1;
	memset((char *)q + *alloc * size, 0, (n - *alloc) * size);
	*p = q;
	*alloc = n;
	return 0;
}

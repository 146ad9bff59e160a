// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-nltest: drives the "magnet" generic netlink family with requests
 * magnetctl would never send, for the VM test suites.
 *
 *   magnet-nltest badinput      every malformed request of the table below
 *                               fails with its errno and an extended-ack
 *                               explanation, and leaves buffers and probes
 *                               exactly as they were
 *   magnet-nltest unpriv        (run unprivileged) every change is refused
 *                               with EPERM, listing still works, the notify
 *                               group cannot be joined
 *   magnet-nltest churn N SYM   N cycles of adding and removing a kprobe on
 *                               SYM (enabled, on buffer "default")
 *   magnet-nltest faults        (fault-injection kernels) make the 1st, 2nd,
 *                               ... allocation of each kind of creating
 *                               request fail (/proc/thread-self/fail-nth):
 *                               each fails cleanly and changes nothing, or
 *                               succeeds anyway
 *
 * Prints "ok"/"FAIL" lines; exits 1 if anything failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

/* The request tables below leave trailing fields to their zero default. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/magnet.h>

static struct mnl_socket *nl;
static uint16_t family_id;
static uint32_t mcgrp_notify;
static unsigned int seq = 1;
static int failures;

/* Fault injection for the next request: fail its Nth fault point. */
static int inject_nth;
static bool injected;

/* --- plumbing ------------------------------------------------------------ */

struct reply {
	int err;		/* 0 or a positive errno */
	char msg[256];		/* extended ack message */
	bool bad_attr;		/* the ack points at an attribute */
	bool miss_attr;		/* the ack names a missing attribute */
	void (*on_msg)(const struct nlmsghdr *nlh, void *ctx);
	void *ctx;
};

static int data_cb(const struct nlmsghdr *nlh, void *data)
{
	struct reply *r = data;

	if (r->on_msg)
		r->on_msg(nlh, r->ctx);
	return MNL_CB_OK;
}

static void parse_ack(const struct nlmsghdr *nlh, struct reply *r)
{
	const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	unsigned int off = sizeof(*e);

	r->err = -e->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* Uncapped acks quote the request after its header. */
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - sizeof(e->msg);
	mnl_attr_for_each_payload((const void *)((const char *)e + off),
				  nlh->nlmsg_len - MNL_NLMSG_HDRLEN - off) {
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
			snprintf(r->msg, sizeof(r->msg), "%s",
				 mnl_attr_get_str(attr));
		else if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_OFFS)
			r->bad_attr = true;
		else if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MISS_TYPE)
			r->miss_attr = true;
	}
}

/*
 * /proc/thread-self/fail-nth, opened once: opening it between arming and
 * reading would itself pass fault points. Reading and writing it copy
 * to and from user space, which is a fault point too; see disarm_fault().
 */
static int fail_nth_fd = -1;

static void arm_fault(int nth)
{
	char num[16];
	int len = snprintf(num, sizeof(num), "%d", nth);

	/* The number is copied in before the countdown starts. */
	if (pwrite(fail_nth_fd, num, len, 0) != len) {
		perror("magnet-nltest: arming fail-nth");
		exit(2);
	}
}

/* Was the fault injected (during the request)? Leaves injection off. */
static bool disarm_fault(void)
{
	char num[16] = "";
	ssize_t n = pread(fail_nth_fd, num, sizeof(num) - 1, 0);

	/*
	 * EFAULT: the countdown ended on this read's own copy-out, so the
	 * request did not reach it. Otherwise the value is what was left
	 * when the request returned; 0 means the fault was injected.
	 */
	bool hit = n > 0 && atoi(num) == 0;

	/* May end the countdown on its copy-in; either way it ends. */
	if (pwrite(fail_nth_fd, "0", 1, 0) < 0 && errno != EFAULT) {
		perror("magnet-nltest: disarming fail-nth");
		exit(2);
	}
	return hit;
}

/* Send @nlh and read until its ack or the end of its dump. */
static void transact(struct nlmsghdr *nlh, struct reply *r)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int s = nlh->nlmsg_seq;
	int n;

	r->err = 0;
	r->msg[0] = '\0';
	r->bad_attr = r->miss_attr = false;
	if (inject_nth)
		arm_fault(inject_nth);
	n = mnl_socket_sendto(nl, nlh, nlh->nlmsg_len);
	/* The kernel handled the request inside sendto(): disarm now. */
	if (inject_nth)
		injected = disarm_fault();
	if (n < 0) {
		r->err = errno;
		return;
	}
	for (;;) {
		struct nlmsghdr *h;

		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0) {
			r->err = errno;
			return;
		}
		for (h = (struct nlmsghdr *)buf; mnl_nlmsg_ok(h, n);
		     h = mnl_nlmsg_next(h, &n)) {
			if (h->nlmsg_seq != s)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				parse_ack(h, r);
				return;
			}
			if (h->nlmsg_type == NLMSG_DONE)
				return;
			data_cb(h, r);
		}
	}
}

static struct nlmsghdr *genl_start(char *buf, uint16_t type, uint8_t cmd,
				   uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = seq++;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = MAGNET_GENL_VERSION;
	return nlh;
}

static int family_cb(const struct nlmsghdr *nlh, void *ctx)
{
	const struct nlattr *a, *grp, *ga;

	(void)ctx;
	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID)
			family_id = mnl_attr_get_u16(a);
		if (mnl_attr_get_type(a) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		mnl_attr_for_each_nested(grp, a) {
			uint32_t id = 0;
			const char *name = "";

			mnl_attr_for_each_nested(ga, grp) {
				if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_ID)
					id = mnl_attr_get_u32(ga);
				if (mnl_attr_get_type(ga) == CTRL_ATTR_MCAST_GRP_NAME)
					name = mnl_attr_get_str(ga);
			}
			if (!strcmp(name, MAGNET_GENL_MCGRP_NOTIFY))
				mcgrp_notify = id;
		}
	}
	return MNL_CB_OK;
}

static void ctrl_msg(const struct nlmsghdr *nlh, void *ctx)
{
	family_cb(nlh, ctx);
}

static void open_family(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct reply r = { .on_msg = ctrl_msg };
	int one = 1;

	nl = mnl_socket_open(NETLINK_GENERIC);
	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		perror("magnet-nltest: netlink socket");
		exit(2);
	}
	mnl_socket_setsockopt(nl, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = genl_start(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, MAGNET_GENL_NAME);
	transact(nlh, &r);
	if (r.err || !family_id) {
		fprintf(stderr, "magnet-nltest: no family %s: %s\n",
			MAGNET_GENL_NAME, strerror(r.err));
		exit(2);
	}
}

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf(ok ? "ok   " : "FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failures++;
}

/* --- the table of bad requests ---------------------------------------------- */

/* RAW: @num bytes of @str (strlen if 0); NEST .. NEND: a nested block. */
enum fmt { END, U8, U16, U32, U64, STR, RAW, FLAG, NEST, NEND };

struct tattr {
	uint16_t type;
	enum fmt fmt;
	uint64_t num;
	const char *str;
};

struct tcase {
	const char *what;
	uint8_t cmd;
	uint16_t flags;		/* beyond NLM_F_REQUEST | NLM_F_ACK */
	struct tattr a[10];
	int err;		/* expected errno */
	bool no_msg;		/* the core answers without a message */
};

#define LONGNAME "abcdefghijklmnopqrstuvwxyz0123456789"
#define A(t, f, n) { MAGNET_A_##t, f, n, NULL }
#define S(t, s) { MAGNET_A_##t, STR, 0, s }
#define PKT(t, f, n) { MAGNET_PACKET_##t, f, n, NULL }
#define CORR(t, f, n) { MAGNET_CORR_##t, f, n, NULL }
#define CONFIG { MAGNET_A_FILTER_CONFIG, NEST, 0, NULL }
#define ENDNEST { 0, NEND, 0, NULL }
#define RAWN(t, s, n) { t, RAW, n, s }
#define ID_UNKNOWN 0xfe00

static const struct tcase cases[] = {
	/* buffers */
	{ "buffer add: no attributes", MAGNET_CMD_BUFFER_NEW, 0, {}, EINVAL },
	{ "buffer add: no size", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1") }, EINVAL },
	{ "buffer add: no name", MAGNET_CMD_BUFFER_NEW, 0,
	  { A(BUFFER_SIZE, U64, 8192) }, EINVAL },
	{ "buffer add: size as u32", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U32, 8192) }, EINVAL },
	{ "buffer add: size below minimum", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 1024) }, ERANGE },
	{ "buffer add: size above maximum", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 1ULL << 31) }, ERANGE },
	{ "buffer add: size not a power of two", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 12288) }, EINVAL },
	{ "buffer add: beyond max_memory_mb", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 1ULL << 30) }, E2BIG },
	{ "buffer add: mode out of range", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192),
	    A(BUFFER_MODE, U8, 2) }, ERANGE },
	{ "buffer add: name too long", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, LONGNAME), A(BUFFER_SIZE, U64, 8192) }, EINVAL },
	{ "buffer add: empty name", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, ""), A(BUFFER_SIZE, U64, 8192) }, EINVAL },
	{ "buffer add: name with '/'", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "a/b"), A(BUFFER_SIZE, U64, 8192) }, EINVAL },
	{ "buffer add: name without NUL", MAGNET_CMD_BUFFER_NEW, 0,
	  { { MAGNET_A_BUFFER_NAME, RAW, 0, "abcd" },
	    A(BUFFER_SIZE, U64, 8192) }, EINVAL },
	{ "buffer add: name in use", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "default"), A(BUFFER_SIZE, U64, 8192) }, EEXIST },
	{ "buffer add: attribute of another command", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192),
	    A(PROBE_ID, U16, 1) }, EINVAL },
	{ "buffer add: unknown attribute", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192),
	    { 200, U32, 1, NULL } }, EINVAL },
	{ "buffer del: no name", MAGNET_CMD_BUFFER_DEL, 0, {}, EINVAL },
	{ "buffer del: unknown", MAGNET_CMD_BUFFER_DEL, 0,
	  { S(BUFFER_NAME, "nosuch") }, ENOENT },
	{ "buffer del: probes log into it", MAGNET_CMD_BUFFER_DEL, 0,
	  { S(BUFFER_NAME, "default") }, EBUSY },
	{ "buffer get: unknown", MAGNET_CMD_BUFFER_GET, 0,
	  { S(BUFFER_NAME, "nosuch") }, ENOENT },
	/* probes */
	{ "probe add: no attributes", MAGNET_CMD_PROBE_NEW, 0, {}, EINVAL },
	{ "probe add: name only", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1") }, EINVAL },
	{ "probe add: kind without target", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE) },
	  EINVAL },
	{ "probe add: kind external", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_EXTERNAL),
	    S(PROBE_TARGET, "vfs_read") }, ERANGE },
	{ "probe add: kind as u32", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U32, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read") }, EINVAL },
	{ "probe add: unknown symbol", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "magnet_no_such_symbol") }, ENOENT },
	{ "probe add: blacklisted symbol", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "kprobe_int3_handler") }, EINVAL },
	{ "probe add: offset not a number", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read+x1") }, EINVAL },
	{ "probe add: kretprobe with offset", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KRETPROBE),
	    S(PROBE_TARGET, "vfs_read+4") }, EINVAL },
	{ "probe add: unknown tracepoint", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_TRACEPOINT),
	    S(PROBE_TARGET, "no_such_tracepoint") }, ENOENT },
	{ "probe add: unknown predefined", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "no_such_probe") }, ENOENT },
	{ "probe add: predefined with a kind", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	    A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE) }, EINVAL },
	{ "probe add: predefined with args", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	    A(PROBE_ARGS, U8, 2) }, EINVAL },
	{ "probe add: 7 arguments", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read"), A(PROBE_ARGS, U8, 7) }, ERANGE },
	{ "probe add: 6 tracepoint arguments", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_TRACEPOINT),
	    S(PROBE_TARGET, "sched_switch"), A(PROBE_ARGS, U8, 6) }, ERANGE },
	{ "probe add: id argument not recorded", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read"), A(PROBE_ARGS, U8, 2),
	    A(PROBE_ID_ARG, U8, 3) }, ERANGE },
	{ "probe add: snaplen too large", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	    A(PROBE_SNAPLEN, U32, MAGNET_RECORD_MAX + 1) }, ERANGE },
	{ "probe add: enabled = 2", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	    A(PROBE_ENABLED, U8, 2) }, ERANGE },
	{ "probe add: name in use", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), S(PROBE_PREDEF, "sched_switch") },
	  EEXIST },
	{ "probe add: name with a space", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p 1"), S(PROBE_PREDEF, "sched_switch") }, EINVAL },
	{ "probe add: all-digit name", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "123"), S(PROBE_PREDEF, "sched_switch") }, EINVAL },
	{ "probe add: name too long", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, LONGNAME), S(PROBE_PREDEF, "sched_switch") },
	  EINVAL },
	{ "probe add: unknown buffer", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	    S(BUFFER_NAME, "nosuch") }, ENOENT },
	{ "probe add: target too long", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, LONGNAME LONGNAME LONGNAME LONGNAME) }, EINVAL },
	{ "probe del: nothing named", MAGNET_CMD_PROBE_DEL, 0, {}, EINVAL },
	{ "probe del: id 0", MAGNET_CMD_PROBE_DEL, 0,
	  { A(PROBE_ID, U16, 0) }, ERANGE },
	{ "probe del: id above the maximum", MAGNET_CMD_PROBE_DEL, 0,
	  { A(PROBE_ID, U16, 0xffff) }, ERANGE },
	{ "probe del: unknown id", MAGNET_CMD_PROBE_DEL, 0,
	  { A(PROBE_ID, U16, 0xfe00) }, ENOENT },
	{ "probe del: unknown name", MAGNET_CMD_PROBE_DEL, 0,
	  { S(PROBE_NAME, "nosuch") }, ENOENT },
	{ "probe set: unknown name", MAGNET_CMD_PROBE_SET, 0,
	  { S(PROBE_NAME, "nosuch"), A(PROBE_ENABLED, U8, 0) }, ENOENT },
	{ "probe set: enabled = 5", MAGNET_CMD_PROBE_SET, 0,
	  { S(PROBE_NAME, "nl_keep"), A(PROBE_ENABLED, U8, 5) }, ERANGE },
	{ "probe set: sample interval above an hour", MAGNET_CMD_PROBE_SET, 0,
	  { S(PROBE_NAME, "nl_keep"), A(PROBE_ENABLED, U8, 0),
	    A(SAMPLE_INTERVAL, U64, 3600000000001ULL) }, ERANGE },
	{ "probe set: sample every as u64", MAGNET_CMD_PROBE_SET, 0,
	  { S(PROBE_NAME, "nl_keep"), A(SAMPLE_EVERY, U64, 10) }, EINVAL },
	{ "probe set: attribute of another command", MAGNET_CMD_PROBE_SET, 0,
	  { S(PROBE_NAME, "nl_keep"), S(PROBE_TARGET, "vfs_read") }, EINVAL },
	{ "probe get: unknown id", MAGNET_CMD_PROBE_GET, 0,
	  { A(PROBE_ID, U16, 0xfe00) }, ENOENT },
	/* filters, statistics, framing */
	{ "filter add: no probe", MAGNET_CMD_FILTER_NEW, 0,
	  { A(FILTER_TID, U32, 1) }, EINVAL },
	{ "filter add: unknown probe", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nosuch"), A(FILTER_TID, U32, 1) }, ENOENT },
	{ "filter add: no predicate", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep") }, EINVAL },
	{ "filter add: action out of range", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_ACTION, U8, 2),
	    A(FILTER_TID, U32, 1) }, ERANGE },
	{ "filter add: empty CPU set", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"),
	    RAWN(MAGNET_A_FILTER_CPUS, "\0", 1) }, EINVAL },
	{ "filter add: CPU 64 that does not exist", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"),
	    RAWN(MAGNET_A_FILTER_CPUS, "\0\0\0\0\0\0\0\0\1", 9) }, EINVAL },
	{ "filter add: tgid as u16", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_TGID, U16, 1) }, EINVAL },
	{ "filter add: id range without its end", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_ID_MIN, U64, 1) }, EINVAL },
	{ "filter add: id range ends before it starts", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_ID_MIN, U64, 5),
	    A(FILTER_ID_MAX, U64, 4) }, EINVAL },
	{ "filter add: id set and id range", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_IDS, U64, 3),
	    A(FILTER_ID_MIN, U64, 1), A(FILTER_ID_MAX, U64, 4) }, EINVAL },
	{ "filter add: unknown filter type", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), S(FILTER_TYPE, "nosuch") }, ENOENT },
	{ "filter add: config without a type", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), A(FILTER_TID, U32, 1), CONFIG,
	    PKT(PROTO, U8, 17), ENDNEST }, EINVAL },
	{ "filter add: packet filter on a probe without packets",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), S(FILTER_TYPE, "packet"), CONFIG,
	    PKT(PROTO, U8, 17), ENDNEST }, EOPNOTSUPP },
	{ "filter add: packet filter without a predicate", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet") }, EINVAL },
	{ "filter add: packet address of 5 bytes", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_SRC, "\x7f\0\0\1\0", 5), ENDNEST }, EINVAL },
	{ "filter add: IPv4 prefix of 33 bits", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_DST, "\x7f\0\0\1", 4),
	    PKT(DST_PREFIX, U8, 33), ENDNEST }, EINVAL },
	{ "filter add: prefix without an address", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    PKT(SRC_PREFIX, U8, 8), ENDNEST }, EINVAL },
	{ "filter add: port as u32", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    PKT(DPORT, U32, 53), ENDNEST }, EINVAL },
	{ "filter add: unknown packet attribute", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    { 60, U16, 1, NULL }, ENDNEST }, EINVAL },
	{ "filter add: correlate without an end", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(THRESHOLD, U64, 1000), ENDNEST }, EINVAL },
	{ "filter add: correlate to an unknown end", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), ENDNEST }, ENOENT },
	{ "filter add: correlate as an include rule", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), A(FILTER_ACTION, U8, MAGNET_FILTER_INCLUDE),
	    S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), ENDNEST }, EINVAL },
	{ "filter add: correlate with a tgid too", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), A(FILTER_TGID, U32, 1),
	    S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), ENDNEST }, EINVAL },
	{ "filter add: correlate window below 1 ms", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), CORR(WINDOW, U64, 999999),
	    ENDNEST }, ERANGE },
	{ "filter add: correlate threshold beyond the window",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), CORR(WINDOW, U64, 10000000),
	    CORR(THRESHOLD, U64, 10000000), ENDNEST }, EINVAL },
	{ "filter add: correlate max-open 0", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "correlate"), CONFIG,
	    CORR(END, U16, ID_UNKNOWN), CORR(MAX_OPEN, U32, 0), ENDNEST },
	  ERANGE },
	{ "filter del: no id", MAGNET_CMD_FILTER_DEL, 0, {}, EINVAL },
	{ "filter del: id 0", MAGNET_CMD_FILTER_DEL, 0,
	  { A(FILTER_ID, U32, 0) }, ERANGE },
	{ "filter del: unknown id", MAGNET_CMD_FILTER_DEL, 0,
	  { A(FILTER_ID, U32, 999999) }, ENOENT },
	{ "stats: with an attribute", MAGNET_CMD_STATS_GET, NLM_F_DUMP,
	  { A(PROBE_ID, U16, 1) }, EINVAL },
	{ "stats: not as a dump", MAGNET_CMD_STATS_GET, 0, {}, EOPNOTSUPP,
	  true },
	{ "unknown command", 99, 0, {}, EOPNOTSUPP, true },
	{ "reserved header flag", MAGNET_CMD_BUFFER_NEW, NLM_F_CREATE,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192) }, EINVAL },
};

static struct nlmsghdr *build(char *buf, const struct tcase *c)
{
	struct nlmsghdr *nlh = genl_start(buf, family_id, c->cmd,
					  NLM_F_ACK | c->flags);
	const struct tattr *a;
	struct nlattr *nest = NULL;

	for (a = c->a; a < c->a + 10 && a->fmt != END; a++) {
		switch (a->fmt) {
		case U8:
			mnl_attr_put_u8(nlh, a->type, a->num);
			break;
		case U16:
			mnl_attr_put_u16(nlh, a->type, a->num);
			break;
		case U32:
			mnl_attr_put_u32(nlh, a->type, a->num);
			break;
		case U64:
			mnl_attr_put_u64(nlh, a->type, a->num);
			break;
		case STR:
			mnl_attr_put_strz(nlh, a->type, a->str);
			break;
		case RAW:
			mnl_attr_put(nlh, a->type,
				     a->num ? a->num : strlen(a->str), a->str);
			break;
		case NEST:
			nest = mnl_attr_nest_start(nlh, a->type);
			break;
		case NEND:
			mnl_attr_nest_end(nlh, nest);
			break;
		case FLAG:
			mnl_attr_put(nlh, a->type, 0, NULL);
			break;
		case END:
			break;
		}
	}
	return nlh;
}

/* Configuration (not counters) of every buffer and probe, as text. */
static void snap_msg(const struct nlmsghdr *nlh, void *ctx)
{
	char *out = ctx;
	const struct nlattr *a;
	size_t len = strlen(out);

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);

		if (t == MAGNET_A_PROBE_STATS || t == MAGNET_A_PROBE_MISSED ||
		    t == MAGNET_A_PAD || t == MAGNET_A_BUFFER_READER ||
		    t == MAGNET_A_FILTER_STATS)
			continue;
		len += snprintf(out + len, 65536 - len, "%d:", t);
		for (unsigned int i = 0; i < mnl_attr_get_payload_len(a); i++)
			len += snprintf(out + len, 65536 - len, "%02x",
					((uint8_t *)mnl_attr_get_payload(a))[i]);
		len += snprintf(out + len, 65536 - len, " ");
	}
	len += snprintf(out + len, 65536 - len, "\n");
}

static void snapshot(char *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = { .on_msg = snap_msg, .ctx = out };

	out[0] = '\0';
	transact(genl_start(buf, family_id, MAGNET_CMD_BUFFER_GET,
			    NLM_F_DUMP), &r);
	check(!r.err, "snapshot: buffer dump (%s)", strerror(r.err));
	transact(genl_start(buf, family_id, MAGNET_CMD_PROBE_GET,
			    NLM_F_DUMP), &r);
	check(!r.err, "snapshot: probe dump (%s)", strerror(r.err));
	transact(genl_start(buf, family_id, MAGNET_CMD_FILTER_GET,
			    NLM_F_DUMP), &r);
	check(!r.err, "snapshot: filter dump (%s)", strerror(r.err));
}

static int bad_input(void)
{
	static char before[65536], after[65536];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = {};
	size_t i;

	snapshot(before);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];

		transact(build(buf, c), &r);
		check(r.err == c->err &&
		      (c->no_msg || r.msg[0] || r.bad_attr || r.miss_attr),
		      "%s: %s (want %s)%s%s", c->what, strerror(r.err),
		      strerror(c->err), r.msg[0] ? ": " : "", r.msg);
	}
	snapshot(after);
	check(!strcmp(before, after),
	      "rejected requests changed nothing (%zu bytes of configuration)",
	      strlen(before));
	if (strcmp(before, after))
		printf("before:\n%safter:\n%s", before, after);
	return failures ? 1 : 0;
}

/* --- unprivileged ------------------------------------------------------------ */

static int unprivileged(void)
{
	static const struct tcase changes[] = {
		{ "buffer add", MAGNET_CMD_BUFFER_NEW, 0,
		  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192) } },
		{ "buffer del", MAGNET_CMD_BUFFER_DEL, 0,
		  { S(BUFFER_NAME, "default") } },
		{ "probe add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch") } },
		{ "probe del", MAGNET_CMD_PROBE_DEL, 0,
		  { S(PROBE_NAME, "nl_keep") } },
		{ "probe set", MAGNET_CMD_PROBE_SET, 0,
		  { S(PROBE_NAME, "nl_keep"), A(PROBE_ENABLED, U8, 0) } },
		{ "filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { A(PROBE_ID, U16, 1) } },
		{ "filter del", MAGNET_CMD_FILTER_DEL, 0,
		  { A(FILTER_ID, U32, 1) } },
	};
	static char before[65536], after[65536];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = {};
	unsigned int grp;
	size_t i;

	snapshot(before);
	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		transact(build(buf, &changes[i]), &r);
		check(r.err == EPERM && r.msg[0], "unprivileged %s: %s%s%s",
		      changes[i].what, strerror(r.err), r.msg[0] ? ": " : "",
		      r.msg);
	}
	snapshot(after);
	check(!strcmp(before, after) && strlen(before) > 0,
	      "unprivileged: listing works and nothing changed");
	grp = mcgrp_notify;
	check(grp && mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &grp,
					   sizeof(grp)) < 0 && errno == EPERM,
	      "unprivileged: joining the notify group refused");
	return failures ? 1 : 0;
}

/* --- fault injection ------------------------------------------------------- */

/* The PROBE_ID of a reply. */
static void new_id(const struct nlmsghdr *nlh, void *ctx)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == MAGNET_A_PROBE_ID)
			*(uint16_t *)ctx = mnl_attr_get_u16(a);
}

static void filter_id_msg(const struct nlmsghdr *nlh, void *ctx)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == MAGNET_A_FILTER_ID)
			*(uint32_t *)ctx = mnl_attr_get_u32(a);
}

/* The id of probe @name, 0 if there is none. */
static uint16_t probe_id_of(const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint16_t id = 0;
	struct reply r = { .on_msg = new_id, .ctx = &id };
	struct nlmsghdr *nlh;

	nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_GET, NLM_F_ACK);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, name);
	transact(nlh, &r);
	return r.err ? 0 : id;
}

/* The id of the newest filter rule of probe @probe, 0 if none. */
static uint32_t last_filter(const char *probe)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t id = 0;
	struct reply r = { .on_msg = filter_id_msg, .ctx = &id };
	struct nlmsghdr *nlh;

	nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_GET, NLM_F_DUMP);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
	transact(nlh, &r);
	return r.err ? 0 : id;
}

/* Remove what a creating request made (without injection): 0 or errno. */
static int undo(const struct tcase *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = {};
	struct nlmsghdr *del;

	if (c->cmd == MAGNET_CMD_FILTER_NEW) {
		/* The newest rule of the probe is the one made. */
		uint32_t id = last_filter(c->a[0].str);

		if (!id)
			return ENOENT;
		del = genl_start(buf, family_id, MAGNET_CMD_FILTER_DEL,
				 NLM_F_ACK);
		mnl_attr_put_u32(del, MAGNET_A_FILTER_ID, id);
		transact(del, &r);
		return r.err;
	}
	del = genl_start(buf, family_id,
			 c->cmd == MAGNET_CMD_BUFFER_NEW ? MAGNET_CMD_BUFFER_DEL :
							   MAGNET_CMD_PROBE_DEL,
			 NLM_F_ACK);
	mnl_attr_put_strz(del, c->a[0].type, c->a[0].str);
	transact(del, &r);
	return r.err;
}

/*
 * The probes are put on cold points (exec, exit, vfs_read while nothing
 * reads): each request patches kernel text, and under TCG a point that
 * another vCPU executes all the time (sched_switch) can livelock that
 * vCPU on a breakpoint already removed, hanging the text patcher's IPI.
 *
 * For each creating request: fail its 1st, 2nd, ... fault point (slab
 * allocations and the like) until it goes through without reaching the
 * injected one. A failed request must leave the configuration as it was;
 * one that succeeds despite the fault (a fallback took over) is undone.
 */
static int fault_sweep(void)
{
	static struct tcase creates[] = {
		{ "buffer add", MAGNET_CMD_BUFFER_NEW, 0,
		  { S(BUFFER_NAME, "fi_buf"), A(BUFFER_SIZE, U64, 65536),
		    A(BUFFER_MODE, U8, MAGNET_BUFFER_OVERWRITE) } },
		{ "kprobe add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "fi_kp"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
		    S(PROBE_TARGET, "vfs_read"), A(PROBE_ARGS, U8, 2) } },
		{ "kretprobe add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "fi_kr"),
		    A(PROBE_KIND, U8, MAGNET_PROBE_KRETPROBE),
		    S(PROBE_TARGET, "vfs_read") } },
		{ "tracepoint add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "fi_tp"),
		    A(PROBE_KIND, U8, MAGNET_PROBE_TRACEPOINT),
		    S(PROBE_TARGET, "sched_process_exec"),
		    A(PROBE_ARGS, U8, 2) } },
		{ "predefined probe add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "fi_pd"), S(PROBE_PREDEF, "process_exit"),
		    A(PROBE_NOTIFY, U8, 1) } },
		{ "filter rule add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), A(FILTER_TGID, U32, 1),
		    A(FILTER_TGID, U32, 2), A(FILTER_IDS, U64, 7),
		    RAWN(MAGNET_A_FILTER_CPUS, "\1", 1) } },
		{ "packet filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), S(FILTER_TYPE, "packet"), CONFIG,
		    PKT(PROTO, U8, 17), PKT(DPORT, U16, 5001), ENDNEST } },
		{ "correlating filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), S(FILTER_TYPE, "correlate"),
		    CONFIG, CORR(END, U16, 0), ENDNEST } },
	};
	static char before[65536], after[65536];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t i;

	/* The correlating rule ends at probe fi_tx, whose id is known now. */
	for (i = 0; i < sizeof(creates) / sizeof(creates[0]); i++)
		for (struct tattr *a = creates[i].a; a < creates[i].a + 10; a++)
			if (creates[i].cmd == MAGNET_CMD_FILTER_NEW &&
			    a->fmt == U16 && a->type == MAGNET_CORR_END)
				a->num = probe_id_of("fi_tx");
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fail_nth_fd < 0) {
		printf("skip fault injection: no /proc/thread-self/fail-nth (%s)\n",
		       strerror(errno));
		return 0;
	}
	snapshot(before);
	for (i = 0; i < sizeof(creates) / sizeof(creates[0]); i++) {
		const struct tcase *c = &creates[i];
		int nth, failed = 0, survived = 0, dirty = 0;
		bool done = false;

		for (nth = 1; nth <= 2000 && !done; nth++) {
			struct reply r = {};

			inject_nth = nth;
			transact(build(buf, c), &r);
			inject_nth = 0;
			if (r.err) {
				failed++;
				snapshot(after);
				/*
				 * ENOBUFS: the ack itself could not be
				 * allocated; the request may have gone
				 * through. Then undo it like a success.
				 */
				if (strcmp(before, after) && r.err == ENOBUFS) {
					undo(c);
					snapshot(after);
				}
				if (strcmp(before, after) && !dirty++)
					printf("after a failure at point %d (%s):\n%s",
					       nth, strerror(r.err), after);
				continue;
			}
			done = !injected;
			survived += injected;
			if (undo(c))
				dirty++;
		}
		check(done && !dirty,
		      "fault injection, %s: %d fault points failed it cleanly, %d were survived, %s",
		      c->what, failed, survived,
		      done ? "then it succeeded" : "never succeeded");
	}
	snapshot(after);
	check(!strcmp(before, after), "fault injection: configuration as before");
	return failures ? 1 : 0;
}

/* --- churn -------------------------------------------------------------------- */


static int churn(long n, const char *symbol)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct timespec t0, t1;
	long i, bad = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		uint16_t id = 0;
		struct reply r = { .on_msg = new_id, .ctx = &id };

		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_NEW,
				 NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, "churn");
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_KIND,
				i % 2 ? MAGNET_PROBE_KRETPROBE :
					MAGNET_PROBE_KPROBE);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_TARGET, symbol);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ARGS, 2);
		transact(nlh, &r);
		if (r.err || !id) {
			fprintf(stderr, "churn %ld: add: %s %s\n", i,
				strerror(r.err), r.msg);
			bad++;
			continue;
		}
		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_DEL,
				 NLM_F_ACK);
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
		transact(nlh, &r);
		if (r.err) {
			fprintf(stderr, "churn %ld: del: %s %s\n", i,
				strerror(r.err), r.msg);
			bad++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	check(!bad, "churn: %ld add/remove cycles on %s, %ld failed, %.1f ms each",
	      n, symbol, bad,
	      ((t1.tv_sec - t0.tv_sec) * 1e3 +
	       (t1.tv_nsec - t0.tv_nsec) / 1e6) / (n ? n : 1));
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: magnet-nltest badinput | unpriv | faults | churn N SYMBOL\n");
		return 2;
	}
	open_family();
	if (!strcmp(argv[1], "badinput"))
		return bad_input();
	if (!strcmp(argv[1], "unpriv"))
		return unprivileged();
	if (!strcmp(argv[1], "faults"))
		return fault_sweep();
	if (!strcmp(argv[1], "churn") && argc == 4)
		return churn(atol(argv[2]), argv[3]);
	fprintf(stderr, "magnet-nltest: unknown mode %s\n", argv[1]);
	return 2;
}

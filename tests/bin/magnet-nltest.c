// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-nltest: drives the "magnet" generic netlink family with requests
 * magnetctl would never send, for the VM test suites.
 *
 *   magnet-nltest badinput      every malformed request of the table below
 *                               fails with its errno and an extended-ack
 *                               explanation, and leaves buffers, probes,
 *                               filter rules and sessions exactly as they
 *                               were
 *   magnet-nltest unpriv        (run unprivileged) every change is refused
 *                               with EPERM, listing still works, the notify
 *                               group cannot be joined
 *   magnet-nltest churn N SYM   N cycles of adding and removing a kprobe on
 *                               SYM (enabled, on buffer "default")
 *   magnet-nltest fuzz N SEED PROBE BUFFER
 *                               N random and mutated requests (see fuzz()),
 *                               none of which may remove or change PROBE or
 *                               remove BUFFER (the load and the reader's)
 *   magnet-nltest probestats    every probe's statistics add up
 *   magnet-nltest owned         make owned and other objects (see owned())
 *   magnet-nltest sessions      two sockets, a session each: neither may
 *                               change the other's, names are per session,
 *                               a session ends with its socket (see
 *                               sessions())
 *   magnet-nltest session-hold SYM SIZE
 *                               make a session, in it a buffer "hold" of
 *                               SIZE bytes a CPU (N, NK or NM; overwrite
 *                               mode) and an enabled kprobe "hold" on SYM
 *                               logging into it, print the session's id,
 *                               then wait until killed (its session ends
 *                               with it): a session's cost, for the
 *                               benchmarks
 *   magnet-nltest faults        (fault-injection kernels) make the 1st, 2nd,
 *                               ... allocation of each kind of creating
 *                               request fail (/proc/thread-self/fail-nth):
 *                               each fails cleanly and changes nothing, or
 *                               succeeds anyway
 *
 * Prints the tests' one format (tests/harness.h); exits 1 if anything
 * failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>

/* The request tables below leave trailing fields to their zero default. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/magnet.h>

#include "harness.h"

static struct mnl_socket *nl;
static uint16_t family_id;
static uint32_t mcgrp_notify;
static unsigned int seq = 1;

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

/* A dump's NLMSG_DONE with error @err: its code and the kernel's message. */
static void parse_done(const struct nlmsghdr *nlh, int err, struct reply *r)
{
	const struct nlattr *attr;

	r->err = err;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	mnl_attr_for_each(attr, nlh, sizeof(int))
		if (mnl_attr_get_type(attr) == NLMSGERR_ATTR_MSG)
			snprintf(r->msg, sizeof(r->msg), "%s",
				 mnl_attr_get_str(attr));
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
			if (h->nlmsg_type == NLMSG_DONE) {
				/* its payload is the dump's error code */
				int *err = mnl_nlmsg_get_payload(h);

				if (mnl_nlmsg_get_payload_len(h) >= sizeof(*err) &&
				    *err < 0)
					parse_done(h, -*err, r);
				return;
			}
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

/* A check, in the harness's format (tests/harness.h). */
#define check harness_check

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
	const char *msg;	/* the message must hold this (NULL: any) */
};

#define LONGNAME "abcdefghijklmnopqrstuvwxyz0123456789"
#define A(t, f, n) { MAGNET_A_##t, f, n, NULL }
#define S(t, s) { MAGNET_A_##t, STR, 0, s }
#define HDR(t, f, n) { MAGNET_HEADER_##t, f, n, NULL }
#define CORR(t, f, n) { MAGNET_CORR_##t, f, n, NULL }
#define CONFIG { MAGNET_A_FILTER_CONFIG, NEST, 0, NULL }
#define ENDNEST { 0, NEND, 0, NULL }
#define RAWN(t, s, n) { t, RAW, n, s }
#define ID_UNKNOWN 0xfe00
/* A session that does not exist (ids are handed out from 1 upwards). */
#define SESSION_UNKNOWN 0xfffffff0
/* classic BPF: ret #262144 (struct sock_filter, little-endian) */
#define BPF_RET_ALL "\x06\0\0\0\0\0\x04\0"
/*
 * "ip proto 17" over the cooked header (struct sll2, 20 bytes):
 * ldb [29]; jeq #17 jt 0 jf 1; ret #262144; ret #0
 */
#define BPF_IP_PROTO_17 "\x30\0\0\0\x1d\0\0\0" "\x15\0\0\x01\x11\0\0\0" \
	BPF_RET_ALL "\x06\0\0\0\0\0\0\0"
/* one instruction more than a packet filter may have (ld #0 each) */
static const char zero_program[(MAGNET_PACKET_INSNS_MAX + 1) * 8];

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
	{ "probe add: dispatch 3", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read"), A(PROBE_DISPATCH, U8, 3) }, ERANGE },
	{ "probe add: dispatch on a tracepoint", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_TRACEPOINT),
	    S(PROBE_TARGET, "sched_switch"),
	    A(PROBE_DISPATCH, U8, MAGNET_DISPATCH_FTRACE) }, EINVAL },
	{ "probe add: dispatch on a kretprobe", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KRETPROBE),
	    S(PROBE_TARGET, "vfs_read"),
	    A(PROBE_DISPATCH, U8, MAGNET_DISPATCH_KPROBE) }, EINVAL },
	{ "probe add: dispatch on a predefined tracepoint", MAGNET_CMD_PROBE_NEW,
	  0, { S(PROBE_NAME, "p1"), S(PROBE_PREDEF, "sched_switch"),
	       A(PROBE_DISPATCH, U8, MAGNET_DISPATCH_FTRACE) }, EINVAL },
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
	    HDR(PROTO, U8, 17), ENDNEST }, EINVAL },
	{ "filter add: header filter on a probe without packets",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), S(FILTER_TYPE, "header"), CONFIG,
	    HDR(PROTO, U8, 17), ENDNEST }, EOPNOTSUPP },
	{ "filter add: header filter without a predicate", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header") }, EINVAL },
	{ "filter add: header address of 5 bytes", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header"), CONFIG,
	    RAWN(MAGNET_HEADER_SRC, "\x7f\0\0\1\0", 5), ENDNEST }, EINVAL },
	{ "filter add: IPv4 prefix of 33 bits", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header"), CONFIG,
	    RAWN(MAGNET_HEADER_DST, "\x7f\0\0\1", 4),
	    HDR(DST_PREFIX, U8, 33), ENDNEST }, EINVAL },
	{ "filter add: prefix without an address", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header"), CONFIG,
	    HDR(SRC_PREFIX, U8, 8), ENDNEST }, EINVAL },
	{ "filter add: port as u32", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header"), CONFIG,
	    HDR(DPORT, U32, 53), ENDNEST }, EINVAL },
	{ "filter add: unknown header attribute", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "header"), CONFIG,
	    { 60, U16, 1, NULL }, ENDNEST }, EINVAL },
	{ "filter add: packet (pcap) filter on a probe without packets",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_keep"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, BPF_RET_ALL, 8), ENDNEST },
	  EOPNOTSUPP },
	{ "filter add: packet filter without a program", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet") }, EINVAL },
	{ "filter add: packet program of 7 bytes", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, BPF_RET_ALL, 7), ENDNEST }, EINVAL },
	{ "filter add: packet program with an unknown opcode",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\xff\0\0\0\0\0\0\0" BPF_RET_ALL, 16),
	    ENDNEST }, EINVAL },
	{ "filter add: packet program jumping past its end",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\x05\0\0\0\x01\0\0\0" BPF_RET_ALL, 16),
	    ENDNEST }, EINVAL },
	{ "filter add: packet program not ending in a return",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\0\0\0\0\x01\0\0\0", 8), ENDNEST },
	  EINVAL },
	{ "filter add: packet program dividing by a constant zero",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\x34\0\0\0\0\0\0\0" BPF_RET_ALL, 16),
	    ENDNEST }, EINVAL },
	{ "filter add: packet program storing past M[15]",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\x02\0\0\0\x10\0\0\0" BPF_RET_ALL, 16),
	    ENDNEST }, EINVAL },
	{ "filter add: packet program with ancillary data (negative offset)",
	  MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, "\x28\0\0\0\0\xf0\xff\xff" BPF_RET_ALL, 16),
	    ENDNEST }, EINVAL },
	{ "filter add: packet program of 257 instructions", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, zero_program, sizeof(zero_program)),
	    ENDNEST }, ERANGE },
	{ "filter add: packet counter in a request", MAGNET_CMD_FILTER_NEW, 0,
	  { S(PROBE_NAME, "nl_rx"), S(FILTER_TYPE, "packet"), CONFIG,
	    RAWN(MAGNET_PACKET_PROGRAM, BPF_RET_ALL, 8),
	    { MAGNET_PACKET_UNDECIDED, U64, 1, NULL }, ENDNEST }, EINVAL },
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
	/* (the kernel's ids are ints: one past INT_MAX is no rule's) */
	{ "filter del: id past INT_MAX", MAGNET_CMD_FILTER_DEL, 0,
	  { A(FILTER_ID, U32, 0x80000000u) }, ENOENT },
	{ "stats: with an attribute", MAGNET_CMD_STATS_GET, NLM_F_DUMP,
	  { A(PROBE_ID, U16, 1) }, EINVAL },
	{ "stats: not as a dump", MAGNET_CMD_STATS_GET, 0, {}, EOPNOTSUPP,
	  true },
	/* sessions */
	{ "session add: an attribute", MAGNET_CMD_SESSION_NEW, 0,
	  { A(SESSION, U32, 1) }, EINVAL },
	{ "session del: no session named", MAGNET_CMD_SESSION_DEL, 0, {},
	  EINVAL },
	{ "session del: session 0", MAGNET_CMD_SESSION_DEL, 0,
	  { A(SESSION, U32, 0) }, ERANGE },
	{ "session del: session as u16", MAGNET_CMD_SESSION_DEL, 0,
	  { A(SESSION, U16, 1) }, EINVAL },
	{ "session del: unknown session", MAGNET_CMD_SESSION_DEL, 0,
	  { A(SESSION, U32, SESSION_UNKNOWN) }, ENOENT,
	  .msg = "no such session" },
	{ "session list: with an attribute", MAGNET_CMD_SESSION_GET, NLM_F_DUMP,
	  { A(SESSION, U32, 1) }, EINVAL },
	{ "session list: not as a dump", MAGNET_CMD_SESSION_GET, 0, {},
	  EOPNOTSUPP, true },
	/* the ledger (off: the module was loaded for this) */
	{ "ledger set: neither on nor off", MAGNET_CMD_LEDGER_SET, 0, {},
	  EINVAL },
	{ "ledger set: enabled 2", MAGNET_CMD_LEDGER_SET, 0,
	  { A(LEDGER_ENABLED, U8, 2) }, ERANGE },
	{ "ledger set: enabled as u32", MAGNET_CMD_LEDGER_SET, 0,
	  { A(LEDGER_ENABLED, U32, 1) }, EINVAL },
	{ "ledger set: by-tgid to turn it off", MAGNET_CMD_LEDGER_SET, 0,
	  { A(LEDGER_ENABLED, U8, 0), A(LEDGER_BY_TGID, U8, 1) }, EINVAL },
	{ "ledger set: owned to turn it off", MAGNET_CMD_LEDGER_SET, 0,
	  { A(LEDGER_ENABLED, U8, 0), { MAGNET_A_OWNED, FLAG, 0, NULL } },
	  EINVAL, .msg = "owned is for turning it on" },
	{ "ledger set: off while off", MAGNET_CMD_LEDGER_SET, 0,
	  { A(LEDGER_ENABLED, U8, 0) }, EALREADY,
	  .msg = "the ledger is off already" },
	{ "ledger get: while off", MAGNET_CMD_LEDGER_GET, NLM_F_DUMP, {},
	  ENODATA },
	{ "ledger get: with an attribute", MAGNET_CMD_LEDGER_GET, NLM_F_DUMP,
	  { A(LEDGER_CPU, U32, 0) }, EINVAL },
	{ "ledger get: not as a dump", MAGNET_CMD_LEDGER_GET, 0, {},
	  EOPNOTSUPP, true },
	{ "buffer add: session 0", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192),
	    A(SESSION, U32, 0) }, ERANGE },
	{ "buffer add: unknown session", MAGNET_CMD_BUFFER_NEW, 0,
	  { S(BUFFER_NAME, "b1"), A(BUFFER_SIZE, U64, 8192),
	    A(SESSION, U32, SESSION_UNKNOWN) }, ENOENT,
	  .msg = "no such session" },
	{ "buffer del: unknown session", MAGNET_CMD_BUFFER_DEL, 0,
	  { S(BUFFER_NAME, "default"), A(SESSION, U32, SESSION_UNKNOWN) },
	  ENOENT, .msg = "no such session" },
	{ "probe add: unknown session", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read"), A(SESSION, U32, SESSION_UNKNOWN) },
	  ENOENT, .msg = "no such session" },
	{ "probe add: session 0", MAGNET_CMD_PROBE_NEW, 0,
	  { S(PROBE_NAME, "p1"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
	    S(PROBE_TARGET, "vfs_read"), A(SESSION, U32, 0) }, ERANGE },
	{ "stats: with a session", MAGNET_CMD_STATS_GET, NLM_F_DUMP,
	  { A(SESSION, U32, 1) }, EINVAL },
	{ "filter del: with a session", MAGNET_CMD_FILTER_DEL, 0,
	  { A(FILTER_ID, U32, 999999), A(SESSION, U32, 1) }, EINVAL },
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

/* Configuration (not counters) of every buffer, probe, rule and session. */
#define SNAP_MAX	(1 << 20)

static void snap_msg(const struct nlmsghdr *nlh, void *ctx)
{
	char *out = ctx;
	const struct nlattr *a;
	size_t len = strlen(out);

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);

		if (t == MAGNET_A_PROBE_STATS || t == MAGNET_A_PROBE_MISSED ||
		    t == MAGNET_A_PAD || t == MAGNET_A_BUFFER_READER ||
		    t == MAGNET_A_FILTER_STATS || t == MAGNET_A_BUFFER_CPU ||
		    t == MAGNET_A_NOTIFY_SENT || t == MAGNET_A_NOTIFY_DROPPED)
			continue;
		if (len + 16 + 2 * mnl_attr_get_payload_len(a) >= SNAP_MAX)
			break;
		len += sprintf(out + len, "%d:", t);
		for (unsigned int i = 0; i < mnl_attr_get_payload_len(a); i++)
			len += sprintf(out + len, "%02x",
				       ((uint8_t *)mnl_attr_get_payload(a))[i]);
		len += sprintf(out + len, " ");
	}
	if (len + 2 < SNAP_MAX)
		strcpy(out + len, "\n");
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
	transact(genl_start(buf, family_id, MAGNET_CMD_SESSION_GET,
			    NLM_F_DUMP), &r);
	check(!r.err, "snapshot: session dump (%s)", strerror(r.err));
}

static int bad_input(void)
{
	static char before[SNAP_MAX], after[SNAP_MAX];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = {};
	size_t i;

	snapshot(before);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *c = &cases[i];

		transact(build(buf, c), &r);
		check(r.err == c->err &&
		      (c->no_msg || r.msg[0] || r.bad_attr || r.miss_attr) &&
		      (!c->msg || strstr(r.msg, c->msg)),
		      "%s: %s (want %s)%s%s", c->what, strerror(r.err),
		      strerror(c->err), r.msg[0] ? ": " : "", r.msg);
	}
	snapshot(after);
	check(!strcmp(before, after),
	      "rejected requests changed nothing (%zu bytes of configuration)",
	      strlen(before));
	if (strcmp(before, after))
		printf("before:\n%safter:\n%s", before, after);
	return harness_summary();
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
	static char before[SNAP_MAX], after[SNAP_MAX];
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
	/* Resolving the catalog registers kprobes: refused as a change. */
	transact(build(buf, &(const struct tcase){ "catalog resolve",
		MAGNET_CMD_CATALOG_GET, NLM_F_DUMP,
		{ { MAGNET_A_CATALOG_RESOLVE, FLAG, 0, NULL } } }), &r);
	check(r.err == EPERM && r.msg[0], "unprivileged catalog resolve: %s%s%s",
	      strerror(r.err), r.msg[0] ? ": " : "", r.msg);
	snapshot(after);
	check(!strcmp(before, after) && strlen(before) > 0,
	      "unprivileged: listing works and nothing changed");
	grp = mcgrp_notify;
	check(grp && mnl_socket_setsockopt(nl, NETLINK_ADD_MEMBERSHIP, &grp,
					   sizeof(grp)) < 0 && errno == EPERM,
	      "unprivileged: joining the notify group refused");
	return harness_summary();
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

/* A u16 or u32 attribute of a reply: its type, given; its value, found. */
struct num_attr {
	uint16_t type;
	uint32_t val;
};

static void num_attr_msg(const struct nlmsghdr *nlh, void *ctx)
{
	struct num_attr *want = ctx;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == want->type)
			want->val = mnl_attr_get_payload_len(a) == 2 ?
				    mnl_attr_get_u16(a) : mnl_attr_get_u32(a);
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
	struct num_attr id = { MAGNET_A_FILTER_ID, 0 };
	struct reply r = { .on_msg = num_attr_msg, .ctx = &id };
	struct nlmsghdr *nlh;

	nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_GET, NLM_F_DUMP);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
	transact(nlh, &r);
	return r.err ? 0 : id.val;
}

/* Remove what a creating request made (without injection): 0 or errno. */
static int undo(const struct tcase *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = {};
	struct nlmsghdr *del;

	if (c->cmd == MAGNET_CMD_PROBE_SET) {
		/* Sampling back off (the probe had none). */
		del = genl_start(buf, family_id, MAGNET_CMD_PROBE_SET,
				 NLM_F_ACK);
		mnl_attr_put_strz(del, c->a[0].type, c->a[0].str);
		mnl_attr_put_u32(del, MAGNET_A_SAMPLE_EVERY, 0);
		mnl_attr_put_u64(del, MAGNET_A_SAMPLE_INTERVAL, 0);
		transact(del, &r);
		return r.err;
	}
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
 * For each creating request (and the sampling change, which builds the
 * probe's gate): fail its 1st, 2nd, ... fault point (slab
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
		{ "header filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), S(FILTER_TYPE, "header"), CONFIG,
		    HDR(PROTO, U8, 17), HDR(DPORT, U16, 5001), ENDNEST } },
		{ "packet (expression) filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), S(FILTER_TYPE, "packet"), CONFIG,
		    RAWN(MAGNET_PACKET_PROGRAM, BPF_IP_PROTO_17,
			 sizeof(BPF_IP_PROTO_17) - 1),
		    { MAGNET_PACKET_TEXT, STR, 0, "ip proto 17" }, ENDNEST } },
		{ "correlating filter add", MAGNET_CMD_FILTER_NEW, 0,
		  { S(PROBE_NAME, "fi_rx"), S(FILTER_TYPE, "correlate"),
		    CONFIG, CORR(END, U16, 0), ENDNEST } },
		{ "sampling set", MAGNET_CMD_PROBE_SET, 0,
		  { S(PROBE_NAME, "fi_rx"), A(SAMPLE_EVERY, U32, 10),
		    A(SAMPLE_INTERVAL, U64, 1000000) } },
	};
	static char before[SNAP_MAX], after[SNAP_MAX];
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
	return harness_summary();
}

/* --- fuzzing ------------------------------------------------------------------ */

/*
 * Random and mutated requests. Each is built from a valid request of a
 * random kind (or from nothing), then mutated: bits flipped, bytes,
 * attribute lengths and types changed, attributes added, nested,
 * duplicated or removed, the command or version changed, the message cut
 * short. Every message keeps a consistent nlmsg_len, so each one gets
 * exactly one answer. Probes go on cold points only (see fault_sweep).
 *
 * The configuration must follow what succeeded: after an accepted
 * change, the listing changed by exactly one object of its kind (or none,
 * for a probe set); every FZ_CHECK_EVERY messages, the listing must be
 * what the accepted changes made it, so a rejected request changed
 * nothing. At the end, everything the run created is removed and the
 * listing must be what it was before.
 */
#define FZ_CHECK_EVERY	256
#define FZ_MSG_MAX	2048

static uint64_t fz_rng;

static uint32_t rnd(void)
{
	fz_rng ^= fz_rng << 13;
	fz_rng ^= fz_rng >> 7;
	fz_rng ^= fz_rng << 17;
	return fz_rng >> 16;
}

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/*
 * A classic BPF program for filter type "packet": mostly plausible ones
 * (loads at small offsets, ALU, short jumps, a return), which the kernel
 * takes and runs on the packets of the probes; sometimes random words,
 * which its checker must refuse cleanly.
 */
static void put_random_program(struct nlmsghdr *nlh)
{
	static const uint16_t codes[] = {
		0x28, 0x30, 0x20, 0x48, 0x50, 0x40, 0xb1, 0x80, 0x00, 0x01,
		0x60, 0x61, 0x02, 0x03, 0x04, 0x14, 0x24, 0x54, 0x44, 0x64,
		0x74, 0x84, 0xa4, 0x0c, 0x5c, 0x15, 0x25, 0x35, 0x45, 0x1d,
		0x05, 0x07, 0x87, 0x16, 0x06,
	};
	struct { uint16_t code; uint8_t jt, jf; uint32_t k; } f[16];
	unsigned int n = 1 + below(16), i;

	for (i = 0; i < n; i++) {
		if (below(8) == 0) {
			f[i].code = rnd();
			f[i].jt = rnd();
			f[i].jf = rnd();
			f[i].k = rnd();
			continue;
		}
		f[i].code = codes[below(sizeof(codes) / sizeof(codes[0]))];
		f[i].jt = below(4);
		f[i].jf = below(4);
		f[i].k = below(4) ? below(80) : rnd();
		if ((f[i].code & 0x07) == 0x02 || (f[i].code & 0x07) == 0x03 ||
		    f[i].code == 0x60 || f[i].code == 0x61)
			f[i].k = below(18);	/* M[], past it sometimes */
	}
	if (below(4))
		f[n - 1] = (typeof(f[0])){ .code = 0x06, .k = below(2) };
	mnl_attr_put(nlh, MAGNET_PACKET_PROGRAM, n * sizeof(f[0]), f);
}

static const char *pick(const char *const *v, size_t n)
{
	return v[below(n)];
}

#define PICK(v) pick(v, sizeof(v) / sizeof(v[0]))

/* Buffers the run makes and removes; its probes may also log into "default". */
static const char *const fz_buffers[] = { "fz_b1", "fz_b2", "fz_b3" };
static const char *const fz_probe_buffers[] = { "fz_b1", "fz_b2", "default" };
static const char *const fz_probes[] = { "fz_p1", "fz_p2", "fz_p3", "fz_p4" };
static const char *const fz_targets[] = {
	"vfs_fsync", "do_sys_openat2", "vfs_fsync+4", "vfs_fsync+0x1",
	"vfs_fsync+999999", "fz_no_such_symbol", "",
};
static const char *const fz_tracepoints[] = {
	"sched_process_exec", "sched_process_fork", "fz_no_such_tp",
};
static const char *const fz_predefs[] = {
	"process_exit", "netif_receive", "udp-send.udp", "fz_no_such_predef",
};

/* A valid-looking request of a random kind. */
static struct nlmsghdr *fz_valid(char *buf)
{
	const char *probe = PICK(fz_probes);
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	unsigned int i, n;

	switch (below(17)) {
	case 0:
		nlh = genl_start(buf, family_id, MAGNET_CMD_BUFFER_NEW, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, PICK(fz_buffers));
		mnl_attr_put_u64(nlh, MAGNET_A_BUFFER_SIZE, 4096ULL << below(6));
		if (below(2))
			mnl_attr_put_u8(nlh, MAGNET_A_BUFFER_MODE, below(2));
		if (below(4) == 0)
			mnl_attr_put(nlh, MAGNET_A_OWNED, 0, NULL);
		return nlh;
	case 1:
		nlh = genl_start(buf, family_id, MAGNET_CMD_BUFFER_DEL, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, PICK(fz_buffers));
		return nlh;
	case 2:
		if (below(2))
			return genl_start(buf, family_id, MAGNET_CMD_BUFFER_GET,
					  NLM_F_ACK | NLM_F_DUMP);
		nlh = genl_start(buf, family_id, MAGNET_CMD_BUFFER_GET, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, PICK(fz_buffers));
		return nlh;
	case 3:
	case 4:
	case 5:
	case 6:
		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_NEW, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		if (below(4) == 0) {
			mnl_attr_put_strz(nlh, MAGNET_A_PROBE_PREDEF, PICK(fz_predefs));
		} else {
			uint8_t kind = below(3);

			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_KIND, kind);
			mnl_attr_put_strz(nlh, MAGNET_A_PROBE_TARGET,
					  kind == MAGNET_PROBE_TRACEPOINT ?
					  PICK(fz_tracepoints) : PICK(fz_targets));
			if (below(2))
				mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ARGS, below(8));
			if (below(4) == 0)
				mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ID_ARG, below(4));
		}
		if (below(2))
			mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME,
					  PICK(fz_probe_buffers));
		if (below(3) == 0)
			mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN, below(70000));
		if (below(3) == 0)
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, below(3));
		if (below(3) == 0)
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_NOTIFY, below(3));
		if (below(4) == 0)
			mnl_attr_put(nlh, MAGNET_A_OWNED, 0, NULL);
		if (below(3) == 0)	/* 3 is out of range */
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_DISPATCH, below(4));
		return nlh;
	case 7:
		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_DEL, NLM_F_ACK);
		if (below(2))
			mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		else
			mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, 1 + below(12));
		return nlh;
	case 8:
	case 9:
		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_SET, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		if (below(2))
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, below(3));
		if (below(2))
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_NOTIFY, below(3));
		if (below(3) == 0)
			mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN, below(70000));
		if (below(3) == 0)
			mnl_attr_put_u32(nlh, MAGNET_A_SAMPLE_EVERY, below(20));
		if (below(3) == 0)
			mnl_attr_put_u64(nlh, MAGNET_A_SAMPLE_INTERVAL,
					 (uint64_t)rnd() * below(5000));
		return nlh;
	case 10:
	case 11:
		nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_NEW, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		if (below(2))
			mnl_attr_put_u8(nlh, MAGNET_A_FILTER_ACTION, below(3));
		for (i = 0, n = below(4); i < n; i++)
			mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TGID, below(400));
		if (below(3) == 0) {
			uint8_t cpus = below(4);

			mnl_attr_put(nlh, MAGNET_A_FILTER_CPUS, 1 + below(2), &cpus);
		}
		if (below(4) == 0)
			mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TID, below(400));
		if (below(4) == 0) {
			mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MIN, below(100));
			mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MAX, below(100));
		}
		for (i = 0, n = below(3) ? 0 : below(4); i < n; i++)
			mnl_attr_put_u64(nlh, MAGNET_A_FILTER_IDS, below(100));
		return nlh;
	case 12:
		nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_NEW, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		if (below(3) == 0) {
			mnl_attr_put_strz(nlh, MAGNET_A_FILTER_TYPE, "packet");
			nest = mnl_attr_nest_start(nlh, MAGNET_A_FILTER_CONFIG);
			put_random_program(nlh);
		} else if (below(2)) {
			mnl_attr_put_strz(nlh, MAGNET_A_FILTER_TYPE, "header");
			nest = mnl_attr_nest_start(nlh, MAGNET_A_FILTER_CONFIG);
			if (below(2))
				mnl_attr_put_u8(nlh, MAGNET_HEADER_PROTO, 17);
			if (below(2))
				mnl_attr_put_u16(nlh, MAGNET_HEADER_DPORT, below(6000));
			if (below(2)) {
				uint8_t a[16] = { 10, 9, 0, 1 };

				mnl_attr_put(nlh, MAGNET_HEADER_HOST,
					     below(2) ? 4 : 16, a);
				mnl_attr_put_u8(nlh, MAGNET_HEADER_HOST_PREFIX, below(140));
			}
		} else {
			mnl_attr_put_strz(nlh, MAGNET_A_FILTER_TYPE, "correlate");
			nest = mnl_attr_nest_start(nlh, MAGNET_A_FILTER_CONFIG);
			mnl_attr_put_u16(nlh, MAGNET_CORR_END, 1 + below(12));
			if (below(2))
				mnl_attr_put_u16(nlh, MAGNET_CORR_VIA, 1 + below(12));
			if (below(2))
				mnl_attr_put_u64(nlh, MAGNET_CORR_WINDOW,
						 (uint64_t)rnd() * below(100000));
			if (below(2))
				mnl_attr_put_u32(nlh, MAGNET_CORR_MAX_OPEN, below(10000));
		}
		mnl_attr_nest_end(nlh, nest);
		return nlh;
	case 13:
		nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_DEL, NLM_F_ACK);
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_ID, below(64));
		return nlh;
	case 14:
		nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_GET,
				 NLM_F_ACK | NLM_F_DUMP);
		if (below(2))
			mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
		return nlh;
	case 15:
		return genl_start(buf, family_id, MAGNET_CMD_STATS_GET, NLM_F_ACK);
	default:
		return genl_start(buf, family_id,
				  below(2) ? MAGNET_CMD_CATALOG_GET : MAGNET_CMD_PROBE_GET,
				  NLM_F_ACK | NLM_F_DUMP);
	}
}

/* Offsets of the attribute headers within [@off, @end), nested too. */
static unsigned int fz_attrs(const char *m, unsigned int off, unsigned int end,
			     unsigned int *at, unsigned int n, unsigned int max)
{
	while (off + 4 <= end && n < max) {
		const struct nlattr *a = (const void *)(m + off);

		if (a->nla_len < 4 || off + a->nla_len > end)
			break;
		at[n++] = off;
		if ((a->nla_type & NLA_F_NESTED) ||
		    a->nla_type == MAGNET_A_FILTER_CONFIG)
			n = fz_attrs(m, off + 4, off + a->nla_len, at, n, max);
		off += MNL_ALIGN(a->nla_len);
	}
	return n;
}

/*
 * An attribute of random type, length and bytes at @off, in at most
 * @room bytes; returns its aligned size.
 */
static unsigned int fz_random_attr(char *m, unsigned int off,
				   unsigned int room, int depth)
{
	struct nlattr *a = (void *)(m + off);
	unsigned int len = below(6) ? below(24) : below(300), i, inner;

	if (room < 8)
		return 0;
	a->nla_type = below(MAGNET_A_MAX + 4);
	if (depth < 3 && below(5) == 0) {
		a->nla_type |= NLA_F_NESTED;
		len = 0;
		for (i = 0, inner = below(4); i < inner; i++)
			len += fz_random_attr(m, off + 4 + len, room - 4 - len,
					      depth + 1);
	} else {
		if (len > room - 8)
			len = room - 8;
		for (i = 0; i < len; i++)
			m[off + 4 + i] = below(4) ? (char)rnd() :
					 "\0\377\177\200"[below(4)];
	}
	a->nla_len = 4 + len;
	return MNL_ALIGN(a->nla_len);
}

static void fz_mutate(struct nlmsghdr *nlh)
{
	char *m = (char *)nlh;
	unsigned int len = nlh->nlmsg_len, at[64], n, k, i, j;
	const unsigned int body = NLMSG_HDRLEN + GENL_HDRLEN;
	struct genlmsghdr *g = (void *)(m + NLMSG_HDRLEN);
	struct nlattr *a;

	n = fz_attrs(m, body, len, at, 0, 64);
	switch (below(10)) {
	case 0:		/* flip bits */
		for (k = 1 + below(4); k--;)
			if (len > NLMSG_HDRLEN)
				m[NLMSG_HDRLEN + below(len - NLMSG_HDRLEN)] ^= 1 << below(8);
		break;
	case 1:		/* an interesting byte */
		if (len > NLMSG_HDRLEN)
			m[NLMSG_HDRLEN + below(len - NLMSG_HDRLEN)] =
				"\0\1\377\177\200\040"[below(6)];
		break;
	case 2:		/* an attribute's length */
		if (n) {
			static const uint16_t lens[] = { 0, 1, 3, 4, 5, 8, 0xffff };

			a = (void *)(m + at[below(n)]);
			a->nla_len = below(2) ? lens[below(7)] :
				     a->nla_len + (int)below(9) - 4;
		}
		break;
	case 3:		/* an attribute's type */
		if (n) {
			a = (void *)(m + at[below(n)]);
			a->nla_type = below(4) ? below(MAGNET_A_MAX + 4) :
				      a->nla_type ^ (below(2) ? NLA_F_NESTED :
						     NLA_F_NET_BYTEORDER);
		}
		break;
	case 4:		/* cut short */
		len = NLMSG_HDRLEN + below(len - NLMSG_HDRLEN);
		break;
	case 5:		/* random attributes added */
		for (k = 1 + below(3); k--;)
			len += fz_random_attr(m, len, FZ_MSG_MAX - len, 0);
		break;
	case 6:		/* an attribute repeated */
		if (n) {
			a = (void *)(m + at[below(n)]);
			i = MNL_ALIGN(a->nla_len);
			for (k = 1 + below(3); k-- && len + i < FZ_MSG_MAX;) {
				memmove(m + len, a, i);
				len += i;
			}
		}
		break;
	case 7:		/* an attribute removed (its nest keeps its length) */
		if (n) {
			i = at[below(n)];
			a = (void *)(m + i);
			j = MNL_ALIGN(a->nla_len);
			if (i + j <= len) {
				memmove(m + i, m + i + j, len - i - j);
				len -= j;
			}
		}
		break;
	case 8:		/* another command */
		g->cmd = below(8) ? below(MAGNET_CMD_MAX + 4) : rnd();
		break;
	default:	/* another version, or flags */
		if (below(2))
			g->version = rnd();
		else
			nlh->nlmsg_flags ^= 1 << below(12);
		break;
	}
	nlh->nlmsg_len = len;
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
}

/* A message of random attributes, with a command of the family or not. */
static struct nlmsghdr *fz_random(char *buf)
{
	struct nlmsghdr *nlh = genl_start(buf, family_id,
					  below(MAGNET_CMD_MAX + 3),
					  NLM_F_ACK | (below(4) ? 0 : NLM_F_DUMP));
	unsigned int k;

	for (k = below(7); k--;)
		nlh->nlmsg_len += fz_random_attr(buf, nlh->nlmsg_len,
						 FZ_MSG_MAX - nlh->nlmsg_len, 0);
	return nlh;
}

/* The configuration, as text, and how many objects of each kind. */
struct fz_config {
	char text[SNAP_MAX];
	int buffers, probes, filters;
};

static void cfg_copy(struct fz_config *to, const struct fz_config *from)
{
	to->buffers = from->buffers;
	to->probes = from->probes;
	to->filters = from->filters;
	memcpy(to->text, from->text, strlen(from->text) + 1);
}

static int lines_of(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void fz_config(struct fz_config *c)
{
	static char part[SNAP_MAX];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	static const uint8_t cmds[] = { MAGNET_CMD_BUFFER_GET,
		MAGNET_CMD_PROBE_GET, MAGNET_CMD_FILTER_GET };
	int *counts[] = { &c->buffers, &c->probes, &c->filters };
	size_t i;

	c->text[0] = '\0';
	for (i = 0; i < 3; i++) {
		struct reply r = { .on_msg = snap_msg, .ctx = part };

		part[0] = '\0';
		transact(genl_start(buf, family_id, cmds[i], NLM_F_DUMP), &r);
		if (r.err)
			check(false, "fuzz: configuration dump %zu: %s", i,
			      strerror(r.err));
		*counts[i] = lines_of(part);
		if (strlen(c->text) + strlen(part) < sizeof(c->text))
			strcat(c->text, part);
	}
}

/*
 * Would @nlh change the protected probe @keep_id, or buffer @keep_buf, or
 * turn the ledger on or off? (That repatches the hottest paths of every
 * CPU at once, which TCG does not survive with two vCPUs running: the
 * ledger suite does it with CPU 1 offline; see docs/testing.md.)
 */
static bool fz_touches(const struct nlmsghdr *nlh, uint16_t keep_id,
		       const char *keep_name, const char *keep_buf)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	const char *m = (const char *)nlh;
	unsigned int at[64], n, i;

	if (g->cmd == MAGNET_CMD_LEDGER_SET)
		return true;
	if (g->cmd != MAGNET_CMD_PROBE_DEL && g->cmd != MAGNET_CMD_PROBE_SET &&
	    g->cmd != MAGNET_CMD_BUFFER_DEL)
		return false;
	n = fz_attrs(m, NLMSG_HDRLEN + GENL_HDRLEN, nlh->nlmsg_len, at, 0, 64);
	for (i = 0; i < n; i++) {
		const struct nlattr *a = (const void *)(m + at[i]);
		unsigned int plen = a->nla_len - 4;
		const char *p = (const char *)(a + 1);
		uint16_t t = a->nla_type & NLA_TYPE_MASK;

		if (t == MAGNET_A_PROBE_ID && plen >= 2 &&
		    *(const uint16_t *)p == keep_id)
			return true;
		if ((t == MAGNET_A_PROBE_NAME &&
		     !strncmp(p, keep_name, plen)) ||
		    (t == MAGNET_A_BUFFER_NAME && !strncmp(p, keep_buf, plen)))
			return true;
	}
	return false;
}

/* Every probe: hits = logged + filtered + sampled + lost (nothing firing). */
static void stats_msg(const struct nlmsghdr *nlh, void *ctx)
{
	const struct nlattr *a, *s;
	int *bad = ctx;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		uint64_t v[MAGNET_STAT_MAX + 1] = {};

		if (mnl_attr_get_type(a) != MAGNET_A_PROBE_STATS)
			continue;
		mnl_attr_for_each_nested(s, a)
			if (mnl_attr_get_type(s) <= MAGNET_STAT_MAX &&
			    mnl_attr_get_payload_len(s) == 8)
				v[mnl_attr_get_type(s)] = mnl_attr_get_u64(s);
		if (v[MAGNET_STAT_HITS] != v[MAGNET_STAT_LOGGED] +
		    v[MAGNET_STAT_FILTERED] + v[MAGNET_STAT_SAMPLED] +
		    v[MAGNET_STAT_LOST]) {
			printf("probe stats: hits %llu, logged %llu, filtered %llu, sampled %llu, lost %llu\n",
			       (unsigned long long)v[MAGNET_STAT_HITS],
			       (unsigned long long)v[MAGNET_STAT_LOGGED],
			       (unsigned long long)v[MAGNET_STAT_FILTERED],
			       (unsigned long long)v[MAGNET_STAT_SAMPLED],
			       (unsigned long long)v[MAGNET_STAT_LOST]);
			(*bad)++;
		}
	}
}

static int probe_stats_agree(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int bad = 0;
	struct reply r = { .on_msg = stats_msg, .ctx = &bad };

	transact(genl_start(buf, family_id, MAGNET_CMD_PROBE_GET, NLM_F_DUMP), &r);
	check(!r.err && !bad, "every probe: hits = logged + filtered + sampled + lost (%d disagree)",
	      bad);
	return harness_summary();
}

/* Ids (probes, filters) and names (buffers) of the configuration. */
struct fz_ids {
	uint32_t probe[256], filter[256];
	char buffer[64][MAGNET_NAME_LEN];
	int probes, filters, buffers;
};

static void ids_msg(const struct nlmsghdr *nlh, void *ctx)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct fz_ids *ids = ctx;
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr)) {
		int t = mnl_attr_get_type(a);

		if (g->cmd == MAGNET_CMD_FILTER_GET && t == MAGNET_A_FILTER_ID &&
		    ids->filters < 256)
			ids->filter[ids->filters++] = mnl_attr_get_u32(a);
		else if (g->cmd == MAGNET_CMD_PROBE_GET && t == MAGNET_A_PROBE_ID &&
			 ids->probes < 256)
			ids->probe[ids->probes++] = mnl_attr_get_u16(a);
		else if (g->cmd == MAGNET_CMD_BUFFER_GET &&
			 t == MAGNET_A_BUFFER_NAME && ids->buffers < 64)
			snprintf(ids->buffer[ids->buffers++], MAGNET_NAME_LEN,
				 "%s", mnl_attr_get_str(a));
	}
}

static void fz_ids(struct fz_ids *ids)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct reply r = { .on_msg = ids_msg, .ctx = ids };

	memset(ids, 0, sizeof(*ids));
	transact(genl_start(buf, family_id, MAGNET_CMD_FILTER_GET, NLM_F_DUMP), &r);
	transact(genl_start(buf, family_id, MAGNET_CMD_PROBE_GET, NLM_F_DUMP), &r);
	transact(genl_start(buf, family_id, MAGNET_CMD_BUFFER_GET, NLM_F_DUMP), &r);
}

static bool has_id(const uint32_t *v, int n, uint32_t id)
{
	while (n--)
		if (v[n] == id)
			return true;
	return false;
}

/* Remove what is not in @before: filters, probes, then buffers. */
static int fz_cleanup(const struct fz_ids *before)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct fz_ids now;
	struct nlmsghdr *nlh;
	struct reply r = {};
	int i, j, bad = 0;

	fz_ids(&now);
	for (i = 0; i < now.filters; i++) {
		if (has_id(before->filter, before->filters, now.filter[i]))
			continue;
		nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_DEL, NLM_F_ACK);
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_ID, now.filter[i]);
		transact(nlh, &r);
		/* Removing a probe's last... no: a rule goes with its probe. */
		bad += r.err && r.err != ENOENT;
	}
	for (i = 0; i < now.probes; i++) {
		if (has_id(before->probe, before->probes, now.probe[i]))
			continue;
		nlh = genl_start(buf, family_id, MAGNET_CMD_PROBE_DEL, NLM_F_ACK);
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, now.probe[i]);
		transact(nlh, &r);
		bad += !!r.err;
	}
	for (i = 0; i < now.buffers; i++) {
		bool old = false;

		for (j = 0; j < before->buffers; j++)
			old |= !strcmp(before->buffer[j], now.buffer[i]);
		if (old)
			continue;
		nlh = genl_start(buf, family_id, MAGNET_CMD_BUFFER_DEL, NLM_F_ACK);
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, now.buffer[i]);
		transact(nlh, &r);
		bad += !!r.err;
	}
	return bad;
}

static bool is_change(uint8_t cmd)
{
	return cmd == MAGNET_CMD_BUFFER_NEW || cmd == MAGNET_CMD_BUFFER_DEL ||
	       cmd == MAGNET_CMD_PROBE_NEW || cmd == MAGNET_CMD_PROBE_DEL ||
	       cmd == MAGNET_CMD_PROBE_SET || cmd == MAGNET_CMD_FILTER_NEW ||
	       cmd == MAGNET_CMD_FILTER_DEL;
}

/* Did the accepted change @cmd move the counts from @a to @b as it should? */
static bool change_agrees(uint8_t cmd, const struct fz_config *a,
			  const struct fz_config *b)
{
	switch (cmd) {
	case MAGNET_CMD_BUFFER_NEW:
		return b->buffers == a->buffers + 1 && b->probes == a->probes;
	case MAGNET_CMD_BUFFER_DEL:
		return b->buffers == a->buffers - 1 && b->probes == a->probes;
	case MAGNET_CMD_PROBE_NEW:
		return b->probes == a->probes + 1 && b->buffers == a->buffers &&
		       b->filters == a->filters;
	case MAGNET_CMD_PROBE_DEL:
		/* its rules go with it */
		return b->probes == a->probes - 1 && b->buffers == a->buffers &&
		       b->filters <= a->filters;
	case MAGNET_CMD_PROBE_SET:
		return b->probes == a->probes && b->buffers == a->buffers &&
		       b->filters == a->filters;
	case MAGNET_CMD_FILTER_NEW:
		return b->filters == a->filters + 1 && b->probes == a->probes;
	case MAGNET_CMD_FILTER_DEL:
		return b->filters == a->filters - 1 && b->probes == a->probes;
	}
	return false;
}

static int fuzz(long n, uint64_t seed, const char *keep_probe,
		const char *keep_buffer)
{
	static struct fz_config expect, now, before;
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(8)));
	long i, accepted = 0, rejected = 0, skipped = 0, silent = 0;
	long changes = 0, disagree = 0, drift = 0, since = 0;
	uint16_t keep_id = probe_id_of(keep_probe);
	struct fz_ids ids;
	struct timeval tv = { .tv_sec = 5 };
	struct timespec t0, t1;

	fz_rng = seed ? seed : 1;
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	check(keep_id != 0, "fuzz: probe %s (id %u) keeps firing throughout",
	      keep_probe, keep_id);
	fz_ids(&ids);
	fz_config(&before);
	cfg_copy(&expect, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		struct nlmsghdr *nlh;
		struct reply r = {};
		uint8_t cmd;

		memset(buf, 0, FZ_MSG_MAX);
		nlh = below(10) < 3 ? fz_random(buf) : fz_valid(buf);
		for (int k = below(4) ? 1 + below(3) : 0; k--;)
			fz_mutate(nlh);
		cmd = ((struct genlmsghdr *)mnl_nlmsg_get_payload(nlh))->cmd;
		if (nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN &&
		    fz_touches(nlh, keep_id, keep_probe, keep_buffer)) {
			skipped++;
			continue;
		}
		transact(nlh, &r);
		if (r.err == EAGAIN || r.err == EWOULDBLOCK) {
			if (!silent++)
				printf("message %ld (command %u, %u bytes) got no answer\n",
				       i, cmd, nlh->nlmsg_len);
			continue;
		}
		if (r.err) {
			rejected++;
		} else {
			accepted++;
			if (nlh->nlmsg_len >= NLMSG_HDRLEN + GENL_HDRLEN &&
			    is_change(cmd)) {
				changes++;
				fz_config(&now);
				if (!change_agrees(cmd, &expect, &now) && !disagree++)
					printf("message %ld: accepted command %u moved buffers %d->%d, probes %d->%d, filters %d->%d\n",
					       i, cmd, expect.buffers, now.buffers,
					       expect.probes, now.probes,
					       expect.filters, now.filters);
				cfg_copy(&expect, &now);
				since = 0;
				continue;
			}
		}
		if (++since >= FZ_CHECK_EVERY) {
			since = 0;
			fz_config(&now);
			if (strcmp(now.text, expect.text)) {
				if (!drift++)
					printf("the configuration changed without an accepted change, by message %ld or one of the %d before:\nexpected:\n%snow:\n%s",
					       i, FZ_CHECK_EVERY, expect.text, now.text);
				cfg_copy(&expect, &now);
			}
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fz_config(&now);
	drift += strcmp(now.text, expect.text) != 0;
	check(!silent, "fuzz: every message answered (%ld not)", silent);
	check(!disagree, "fuzz: %ld accepted changes, each moved the listing as it should (%ld did not)",
	      changes, disagree);
	check(!drift, "fuzz: rejected messages changed nothing (%ld windows changed)", drift);
	printf("fuzz: %ld messages in %.1f s (seed %llu): %ld accepted, %ld rejected, %ld not sent (would change %s or %s)\n",
	       n, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       (unsigned long long)seed, accepted, rejected, skipped,
	       keep_probe, keep_buffer);
	check(rejected > n / 4 && accepted > n / 100,
	      "fuzz: a mix of accepted (%ld) and rejected (%ld) requests", accepted, rejected);
	check(!fz_cleanup(&ids), "fuzz: everything it created removed");
	fz_config(&now);
	check(!strcmp(now.text, before.text),
	      "fuzz: configuration as before the run (%d buffers, %d probes, %d filters)",
	      now.buffers, now.probes, now.filters);
	if (strcmp(now.text, before.text))
		printf("before:\n%snow:\n%s", before.text, now.text);
	return harness_summary();
}

/* --- owned objects ------------------------------------------------------------- */

static void owned_msg(const struct nlmsghdr *nlh, void *ctx)
{
	const struct nlattr *a;

	mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(a) == MAGNET_A_OWNED)
			*(bool *)ctx = true;
}

/* Does the listing of buffer or probe @name say it is owned? */
static bool listed_owned(uint8_t cmd, uint16_t attr, const char *name)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	bool owned = false;
	struct reply r = { .on_msg = owned_msg, .ctx = &owned };
	struct nlmsghdr *nlh = genl_start(buf, family_id, cmd, NLM_F_ACK);

	mnl_attr_put_strz(nlh, attr, name);
	transact(nlh, &r);
	return !r.err && owned;
}

/*
 * Make, on this socket: buffer own_b and probe own_p (logging into it),
 * both owned; buffer own_k, owned, and probe keep_p logging into it, not
 * owned. The listing must say which are owned. When this program exits,
 * its socket closes: own_p and own_b go, own_k stays for keep_p (see
 * tests/suites/probes.sh).
 */
static int owned(void)
{
	static const struct tcase make[] = {
		{ "owned buffer", MAGNET_CMD_BUFFER_NEW, 0,
		  { S(BUFFER_NAME, "own_b"), A(BUFFER_SIZE, U64, 65536),
		    { MAGNET_A_OWNED, FLAG, 0, NULL } } },
		{ "owned probe", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "own_p"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
		    S(PROBE_TARGET, "__x64_sys_fsync"), S(BUFFER_NAME, "own_b"),
		    { MAGNET_A_OWNED, FLAG, 0, NULL } } },
		{ "owned buffer", MAGNET_CMD_BUFFER_NEW, 0,
		  { S(BUFFER_NAME, "own_k"), A(BUFFER_SIZE, U64, 65536),
		    { MAGNET_A_OWNED, FLAG, 0, NULL } } },
		{ "probe", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "keep_p"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
		    S(PROBE_TARGET, "__x64_sys_fdatasync"),
		    S(BUFFER_NAME, "own_k") } },
	};
	char buf[MNL_SOCKET_BUFFER_SIZE];
	size_t i;

	for (i = 0; i < sizeof(make) / sizeof(make[0]); i++) {
		struct reply r = {};

		transact(build(buf, &make[i]), &r);
		check(!r.err, "%s %s made (%s)", make[i].what, make[i].a[0].str,
		      strerror(r.err));
	}
	check(listed_owned(MAGNET_CMD_BUFFER_GET, MAGNET_A_BUFFER_NAME, "own_b") &&
	      listed_owned(MAGNET_CMD_BUFFER_GET, MAGNET_A_BUFFER_NAME, "own_k") &&
	      listed_owned(MAGNET_CMD_PROBE_GET, MAGNET_A_PROBE_NAME, "own_p"),
	      "the listing says own_b, own_k and own_p are owned");
	check(!listed_owned(MAGNET_CMD_PROBE_GET, MAGNET_A_PROBE_NAME, "keep_p"),
	      "and that keep_p is not");
	return harness_summary();
}

/* --- sessions ----------------------------------------------------------------- */

/* A new session of this socket: its id, or 0 (and why, on stderr). */
static uint32_t session_new(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct num_attr id = { MAGNET_A_SESSION, 0 };
	struct reply r = { .on_msg = num_attr_msg, .ctx = &id };

	transact(genl_start(buf, family_id, MAGNET_CMD_SESSION_NEW, NLM_F_ACK),
		 &r);
	if (r.err || !id.val) {
		fprintf(stderr, "magnet-nltest: session add: %s%s%s\n",
			strerror(r.err), r.msg[0] ? ": " : "", r.msg);
		return 0;
	}
	return id.val;
}

/*
 * Request @c on socket @s into @r: its errno, 0 on success. A num_attr
 * @want (or NULL) is looked for in the reply.
 */
static int request_on(struct mnl_socket *s, const struct tcase *c,
		      struct num_attr *want, struct reply *r)
{
	struct mnl_socket *was = nl;
	char buf[MNL_SOCKET_BUFFER_SIZE];

	*r = (struct reply){ .on_msg = want ? num_attr_msg : NULL, .ctx = want };
	nl = s;
	transact(build(buf, c), r);
	nl = was;
	return r->err;
}

/* @c, its MAGNET_A_SESSION set to @s. */
static struct tcase *in_session(struct tcase *c, uint32_t s)
{
	for (struct tattr *a = c->a; a < c->a + 10 && a->fmt != END; a++)
		if (a->type == MAGNET_A_SESSION)
			a->num = s;
	return c;
}

/* What the kernel says to a socket acting in another socket's session. */
#define OTHERS_SESSION "session of another socket"

/*
 * Check that request @c on socket @s ends in @err (0: succeeds), its ack
 * saying @msg (NULL: anything); a num_attr @want (or NULL) is looked for
 * in the reply.
 */
static void expect(struct mnl_socket *s, const struct tcase *c,
		   struct num_attr *want, int err, const char *msg,
		   const char *what)
{
	struct reply r;

	request_on(s, c, want, &r);
	check(r.err == err && (!msg || strstr(r.msg, msg)), "%s: %s%s%s", what,
	      strerror(r.err), r.msg[0] ? ": " : "", r.msg);
}

/*
 * Two sockets, each with a session of its own. Both are root's, so what
 * keeps the second out of the first's session is the session alone: it
 * may not make, change or remove anything there, however it names it
 * (EPERM). Names are per session: the same buffer and probe names are
 * made in both sessions and in the default one. Closing the second
 * socket ends its session and takes its objects, not the first's.
 */
static int sessions(void)
{
	struct tcase buffer = { "buffer add", MAGNET_CMD_BUFFER_NEW, 0,
		{ S(BUFFER_NAME, "ses_b"), A(BUFFER_SIZE, U64, 65536),
		  A(SESSION, U32, 0) } };
	struct tcase probe = { "probe add", MAGNET_CMD_PROBE_NEW, 0,
		{ S(PROBE_NAME, "ses_p"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
		  S(PROBE_TARGET, "__x64_sys_fsync"), S(BUFFER_NAME, "ses_b"),
		  A(SESSION, U32, 0) } };
	/* What the second socket tries on the first's objects. */
	struct tcase theirs[] = {
		{ "remove its probe by id", MAGNET_CMD_PROBE_DEL, 0,
		  { A(PROBE_ID, U16, 0) } },
		{ "disable its probe by id", MAGNET_CMD_PROBE_SET, 0,
		  { A(PROBE_ID, U16, 0), A(PROBE_ENABLED, U8, 0) } },
		{ "add a rule to its probe by id", MAGNET_CMD_FILTER_NEW, 0,
		  { A(PROBE_ID, U16, 0), A(FILTER_TGID, U32, 1) } },
		{ "remove its probe by name", MAGNET_CMD_PROBE_DEL, 0,
		  { S(PROBE_NAME, "ses_p"), A(SESSION, U32, 0) } },
		{ "remove its buffer", MAGNET_CMD_BUFFER_DEL, 0,
		  { S(BUFFER_NAME, "ses_b"), A(SESSION, U32, 0) } },
	};
	struct tcase plain = { "buffer add", MAGNET_CMD_BUFFER_NEW, 0,
		{ S(BUFFER_NAME, "ses_b"), A(BUFFER_SIZE, U64, 65536) } };
	struct tcase plain_del = { "buffer del", MAGNET_CMD_BUFFER_DEL, 0,
		{ S(BUFFER_NAME, "ses_b") } };
	struct tcase buffer_get = { "buffer get", MAGNET_CMD_BUFFER_GET, 0,
		{ S(BUFFER_NAME, "ses_b"), A(SESSION, U32, 0) } };
	struct tcase probe_get = { "probe get", MAGNET_CMD_PROBE_GET, 0,
		{ A(PROBE_ID, U16, 0) } };
	struct tcase end = { "session del", MAGNET_CMD_SESSION_DEL, 0,
		{ A(SESSION, U32, 0) } };
	struct num_attr id1 = { MAGNET_A_PROBE_ID, 0 };
	struct num_attr id2 = { MAGNET_A_PROBE_ID, 0 };
	struct num_attr listed = { MAGNET_A_SESSION, 0 };
	struct mnl_socket *one = nl, *two;
	char what[128];
	uint32_t s1, s2;
	size_t i;

	open_family();
	two = nl;
	nl = one;
	s1 = session_new();
	nl = two;
	s2 = session_new();
	nl = one;
	check(s1 && s2 && s1 != s2, "two sockets, a session each (%u, %u)",
	      s1, s2);
	if (!s1 || !s2)
		return harness_summary();

	expect(two, in_session(&buffer, s1), NULL, EPERM, OTHERS_SESSION,
	       "the second socket may not make a buffer in the first's session");
	expect(one, in_session(&buffer, s1), NULL, 0, NULL,
	       "the first makes buffer ses_b in its session");
	expect(two, in_session(&buffer, s2), NULL, 0, NULL,
	       "the second makes a buffer of the same name in its own");
	expect(one, &plain, NULL, 0, NULL, "... and in the default session");
	expect(two, in_session(&probe, s1), NULL, EPERM, OTHERS_SESSION,
	       "the second may not make a probe in the first's session");
	expect(one, in_session(&probe, s1), &id1, 0, NULL,
	       "the first makes probe ses_p in its session");
	expect(two, in_session(&probe, s2), &id2, 0, NULL,
	       "the second a probe of the same name in its own");
	check(id1.val && id2.val && id1.val != id2.val,
	      "... two probes ses_p, ids %u and %u", id1.val, id2.val);

	for (i = 0; i < sizeof(theirs) / sizeof(theirs[0]); i++) {
		if (theirs[i].a[0].type == MAGNET_A_PROBE_ID)
			theirs[i].a[0].num = id1.val;
		snprintf(what, sizeof(what),
			 "the second may not %s in the first's session",
			 theirs[i].what);
		expect(two, in_session(&theirs[i], s1), NULL, EPERM,
		       OTHERS_SESSION, what);
	}

	expect(one, in_session(&buffer_get, s1), &listed, 0, NULL,
	       "buffer ses_b of the first session listed");
	check(listed.val == s1, "... as of session %u (%u)", s1, listed.val);
	listed.val = 0;
	expect(one, in_session(&buffer_get, s2), &listed, 0, NULL,
	       "that of the second listed");
	check(listed.val == s2, "... as of session %u (%u)", s2, listed.val);
	expect(one, &plain_del, NULL, 0, NULL,
	       "the default session's ses_b removed");

	/* Closing a socket ends its session, and only its. */
	mnl_socket_close(two);
	expect(one, in_session(&buffer_get, s2), NULL, ENOENT, NULL,
	       "the second socket closed: its buffer is gone");
	probe_get.a[0].num = id2.val;
	expect(one, &probe_get, NULL, ENOENT, NULL, "... its probe");
	expect(one, in_session(&end, s2), NULL, ENOENT, NULL,
	       "... its session");
	probe_get.a[0].num = id1.val;
	expect(one, in_session(&buffer_get, s1), NULL, 0, NULL,
	       "the first session's buffer stays");
	expect(one, &probe_get, NULL, 0, NULL, "... and its probe");
	expect(one, in_session(&end, s1), NULL, 0, NULL,
	       "the first socket ends its session");
	expect(one, &buffer_get, NULL, ENOENT, NULL, "... its buffer goes");
	expect(one, &probe_get, NULL, ENOENT, NULL, "... and its probe");
	return harness_summary();
}

/*
 * A session that lasts until this program is killed: made on this
 * socket, with buffer "hold" of @size bytes a CPU (overwrite mode) and
 * an enabled kprobe "hold" on @sym logging into it. Prints the session's
 * id once all is in place (for the benchmarks: bench/scripts/session-cost.sh).
 */
static int session_hold(const char *sym, const char *size_arg)
{
	char *end;
	unsigned long long size = strtoull(size_arg, &end, 0);
	uint32_t s;
	struct reply r;

	if (!strcmp(end, "K") || !strcmp(end, "M"))
		size <<= *end == 'K' ? 10 : 20;
	else if (*end)
		size = 0;
	if (!size) {
		fprintf(stderr, "magnet-nltest: session-hold: bad size %s (bytes, or NK or NM)\n",
			size_arg);
		return 2;
	}
	s = session_new();
	if (!s)
		return 1;
	const struct tcase make[] = {
		{ "buffer add", MAGNET_CMD_BUFFER_NEW, 0,
		  { S(BUFFER_NAME, "hold"), A(BUFFER_SIZE, U64, size),
		    A(BUFFER_MODE, U8, MAGNET_BUFFER_OVERWRITE),
		    A(SESSION, U32, s) } },
		{ "probe add", MAGNET_CMD_PROBE_NEW, 0,
		  { S(PROBE_NAME, "hold"), A(PROBE_KIND, U8, MAGNET_PROBE_KPROBE),
		    S(PROBE_TARGET, sym), S(BUFFER_NAME, "hold"),
		    A(SESSION, U32, s) } },
	};
	for (size_t i = 0; i < sizeof(make) / sizeof(make[0]); i++) {
		if (request_on(nl, &make[i], NULL, &r)) {
			fprintf(stderr, "magnet-nltest: session-hold: %s: %s%s%s\n",
				make[i].what, strerror(r.err),
				r.msg[0] ? ": " : "", r.msg);
			return 1;
		}
	}
	printf("%u\n", s);
	fflush(stdout);
	for (;;)
		pause();
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
		/*
		 * The kernel's kprobes, aggregated on the load's kprobe, so
		 * that the function's call site is not repatched under load
		 * (which TCG does not survive; see tests/suites/dispatch.sh,
		 * which churns magnet's ftrace dispatch).
		 */
		if (!(i % 2))
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_DISPATCH,
					MAGNET_DISPATCH_KPROBE);
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
	return harness_summary();
}

/*
 * A packet rule of a program made by hand on @probe (include: its hits
 * pass where the program matches): each argument one instruction,
 * "CODE,JT,JF,K", or "N*CODE,JT,JF,K" for N of them. For programs no
 * compiler writes (the hardening issue's: a jump whose targets are
 * equal, 256 instructions, a load at X + k with X near 2^32).
 */
static int packet_program(const char *probe, int argc, char **argv)
{
	static struct { uint16_t code; uint8_t jt, jf; uint32_t k; }
		f[MAGNET_PACKET_INSNS_MAX];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned int n = 0, times, code, jt, jf, k;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	struct reply r = { 0 };
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		times = 1;
		if (strchr(a, '*'))
			times = strtoul(a, (char **)&a, 0), a++;
		if (sscanf(a, "%i,%i,%i,%i", &code, &jt, &jf, &k) != 4) {
			fprintf(stderr, "magnet-nltest: %s: not CODE,JT,JF,K\n", argv[i]);
			return 2;
		}
		while (times-- && n < MAGNET_PACKET_INSNS_MAX)
			f[n++] = (typeof(f[0])){ code, jt, jf, k };
	}
	nlh = genl_start(buf, family_id, MAGNET_CMD_FILTER_NEW, NLM_F_ACK);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe);
	mnl_attr_put_strz(nlh, MAGNET_A_FILTER_TYPE, "packet");
	nest = mnl_attr_nest_start(nlh, MAGNET_A_FILTER_CONFIG);
	mnl_attr_put(nlh, MAGNET_PACKET_PROGRAM, n * sizeof(f[0]), f);
	mnl_attr_nest_end(nlh, nest);
	transact(nlh, &r);
	if (r.err) {
		printf("%s: %u instructions refused: %s (%s)\n", probe, n,
		       strerror(r.err), r.msg);
		return 1;
	}
	printf("%s: a rule of %u instructions\n", probe, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: magnet-nltest badinput | unpriv | faults | churn N SYMBOL |\n"
			"       fuzz N SEED PROBE BUFFER | probestats | owned | sessions |\n"
			"       session-hold SYMBOL SIZE | program PROBE [N*]CODE,JT,JF,K...\n");
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
	if (!strcmp(argv[1], "fuzz") && argc == 6)
		return fuzz(atol(argv[2]), strtoull(argv[3], NULL, 0), argv[4],
			    argv[5]);
	if (!strcmp(argv[1], "probestats"))
		return probe_stats_agree();
	if (!strcmp(argv[1], "owned"))
		return owned();
	if (!strcmp(argv[1], "sessions"))
		return sessions();
	if (!strcmp(argv[1], "session-hold") && argc == 4)
		return session_hold(argv[2], argv[3]);
	if (!strcmp(argv[1], "program") && argc > 3)
		return packet_program(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "magnet-nltest: unknown mode %s\n", argv[1]);
	return 2;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The generic netlink side of every program that speaks to the module
 * (magnetctl, magnet-read, magnetd): a context holding one socket, the
 * "magnet" family, requests and their replies, the kernel's errors with
 * extended ack, and the notify group.
 *
 * Nothing here prints. A call that fails returns -1 and leaves in the
 * context what went wrong (nl_err()): the errno, whether the kernel
 * answered with it, and one line of text for the caller to print or log
 * as it prints or logs everything else.
 *
 * The family is resolved when the first request is sent, so that a
 * command line can be checked completely without the module.
 */
#ifndef MAGNET_NL_H
#define MAGNET_NL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/magnet.h>

/* Room for a request: a filter rule with full tgid and id sets fits. */
#define REQUEST_SIZE	8192

struct request {
	struct nlmsghdr *nlh;
	char buf[REQUEST_SIZE] __attribute__((aligned(8)));
};

/* What the last failed call of a context met. */
struct nl_error {
	int error;		/* its errno, never 0 after a failure */
	bool kernel;		/* the kernel answered the request with it */
	/*
	 * One line, no newline, no program name: e.g. "Invalid argument:
	 * unknown probe symbol (attribute MAGNET_A_PROBE_TARGET)", "the
	 * magnet kernel module is not loaded (...)".
	 */
	char text[512];
	/* A second line that says what to do, or "": e.g. a module to load. */
	char hint[512];
};

struct nl_ctx;

/* A context; no socket is opened until the first request. NULL: ENOMEM. */
struct nl_ctx *nl_new(void);

/* Close the socket (the objects it owns go with it) and free @nl. */
void nl_free(struct nl_ctx *nl);

/* Close the socket; the next request opens a new one. */
void nl_close(struct nl_ctx *nl);

/* What the last failed call met. */
const struct nl_error *nl_err(const struct nl_ctx *nl);

/*
 * Record a failure of the caller's own in @nl's error, printf-style, with
 * errno @error: for code that builds on these calls and reports through
 * the same context (probeset.c).
 */
int nl_fail(struct nl_ctx *nl, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The array *@p of *@alloc elements of @size bytes grown (doubled) to
 * hold @want, the new ones zeroed: for a dump's rows as they come. 0, or
 * -1 out of memory (*@p as it was).
 */
int nl_grow(void **p, size_t *alloc, size_t want, size_t size);

/* Make @err the context's error (e.g. one saved before). Returns -1. */
int nl_set_err(struct nl_ctx *nl, const struct nl_error *err);

/*
 * Put "PREFIX: " before the text of @nl's error, printf-style: what the
 * failed call was about (a probe's name, a buffer's). Returns -1.
 */
int nl_err_prefix(struct nl_ctx *nl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * From now on, the buffers and probes @nl makes belong to its socket
 * (MAGNET_A_OWNED): the kernel removes them when the socket closes, with
 * nl_close() or nl_free(), or when the process exits or is killed. For
 * programs that keep what they make only while they run (magnetd,
 * magnet-read -P); the socket must then stay open that long.
 */
void nl_own_objects(struct nl_ctx *nl, bool owned);

/*
 * Make a session (MAGNET_CMD_SESSION_NEW) and work in it from now on:
 * the buffers and probes @nl names are its own, so that they cannot clash
 * with anyone else's, and the kernel removes them and the session when
 * the socket closes (nl_close(), nl_free(), or the process's end). For
 * programs that capture for as long as they run (magnet-read -P). 0, or
 * -1 (nl_err()).
 */
int nl_session_new(struct nl_ctx *nl);

/* @nl's session, 0 for the default one. */
uint32_t nl_session(const struct nl_ctx *nl);

/*
 * The data file of buffer @buffer of @nl's session (@nl NULL: the default
 * session's), under debugfs mounted at @debugfs, in @path (@size bytes).
 * 0, or -1 if it does not fit.
 */
int nl_data_path(const struct nl_ctx *nl, const char *debugfs,
		 const char *buffer, char *path, size_t size);

/*
 * Start a MAGNET_CMD_* request in @req. Flags: NLM_F_DUMP for a dump;
 * otherwise NLM_F_ACK is added, so every request ends with the kernel's
 * ack or error. The family id is filled in when the request is sent.
 */
struct nlmsghdr *request_start(struct nl_ctx *nl, struct request *req,
			       uint8_t cmd, uint16_t flags);

/*
 * Send @req and hand each reply message to @cb (NULL: none expected) until
 * the ack, the end of the dump or an error. Connects to the family first
 * if need be. Returns 0, or -1 (nl_err()).
 */
int nl_request(struct nl_ctx *nl, struct request *req, mnl_cb_t cb,
	       void *data);

/*
 * Join the notify group, with a receive buffer for bursts. Returns 0, or
 * -1 (nl_err()).
 */
int nl_join_notify(struct nl_ctx *nl);

/* The socket's descriptor, to poll; -1 before the first request. */
int nl_fd(const struct nl_ctx *nl);

/* What nl_recv_notify() says, when it does not fail. */
enum nl_notify_result {
	NL_NOTIFY_STOP,		/* @cb returned MNL_CB_STOP */
	NL_NOTIFY_MORE,		/* go on waiting */
	NL_NOTIFY_LOST,		/* notifications were lost: the socket's
				 * receive buffer overran (ENOBUFS); the
				 * socket stays usable, go on */
};

/*
 * Receive what is waiting on a socket that joined the notify group and
 * hand each MAGNET_CMD_NOTIFY message to @cb. Returns an nl_notify_result
 * (NL_NOTIFY_MORE also when interrupted or nothing was there), or -1
 * (nl_err()).
 */
int nl_recv_notify(struct nl_ctx *nl, mnl_cb_t cb, void *data);

/*
 * Validate a magnet message's attributes (or a nest's) against the types
 * the header gives them and index them by type in @tb (MAGNET_A_MAX + 1,
 * MAGNET_STAT_MAX + 1, MAGNET_CPU_MAX + 1, MAGNET_PACKET_MAX + 1,
 * MAGNET_HEADER_MAX + 1 or MAGNET_CORR_MAX + 1 entries). Repeated attributes are all validated; @tb
 * holds the last of them. Attributes newer than this program are skipped.
 * Returns 0, or -1 with errno set.
 */
int parse_magnet_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb);
int parse_stat_attrs(const struct nlattr *nest, const struct nlattr **tb);
int parse_cpu_attrs(const struct nlattr *nest, const struct nlattr **tb);
/* A FILTER_CONFIG or FILTER_STATS nest of type "packet", "header" or
 * "correlate". */
int parse_packet_attrs(const struct nlattr *nest, const struct nlattr **tb);
int parse_header_attrs(const struct nlattr *nest, const struct nlattr **tb);
int parse_corr_attrs(const struct nlattr *nest, const struct nlattr **tb);

/*
 * A reply's probe id (MAGNET_A_PROBE_ID) into the uint16_t at @data, left
 * as it is when the reply has none: the callback of PROBE_NEW and
 * PROBE_GET requests that want only the id.
 */
int nl_probe_id_cb(const struct nlmsghdr *nlh, void *data);

/* An attribute's unsigned value, whatever its width; 0 for NULL. */
uint64_t attr_uint(const struct nlattr *attr);

/*
 * The attribute tables, for tests that hold them against the kernel's
 * policies: the name of attribute @type of @space ("magnet", "stat",
 * "cpu", "packet", "correlate"), NULL if it has none, and its libmnl type
 * (MNL_TYPE_UNSPEC if it has none). @max: the space's largest type.
 */
const char *nl_attr_name(const char *space, unsigned int type);
enum mnl_attr_data_type nl_attr_type(const char *space, unsigned int type,
				     unsigned int *max);

#endif /* MAGNET_NL_H */

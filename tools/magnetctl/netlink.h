/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetctl's generic netlink plumbing: the socket, the "magnet" family,
 * requests and their replies, kernel errors with extended ack, and
 * listening to the notify group.
 */
#ifndef MAGNETCTL_NETLINK_H
#define MAGNETCTL_NETLINK_H

#include <stdbool.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/magnet.h>

/*
 * The program's name, which starts every message printed here and in
 * probeset.c: "magnetctl" unless the program sets its own.
 */
extern const char *nl_progname;

/* Room for a request: a filter rule with full tgid and id sets fits. */
#define REQUEST_SIZE	8192

struct request {
	struct nlmsghdr *nlh;
	char buf[REQUEST_SIZE] __attribute__((aligned(8)));
};

/*
 * Start a MAGNET_CMD_* request in @req. Flags: NLM_F_DUMP for a dump;
 * otherwise NLM_F_ACK is added, so every request ends with the kernel's
 * ack or error. The family id is filled in when the request is sent.
 */
struct nlmsghdr *request_start(struct request *req, uint8_t cmd,
			       uint16_t flags);

/*
 * From now on, the buffers and probes this process makes belong to its
 * netlink socket (MAGNET_A_OWNED): the kernel removes them when the socket
 * closes, with nl_close() or when the process exits or is killed. For
 * programs that keep what they make only while they run (magnetd,
 * magnet-read -P); the socket must then stay open that long.
 */
void nl_own_objects(bool owned);

/*
 * Send @req and hand each reply message to @cb (NULL: none expected) until
 * the ack, the end of the dump or an error. Connects to the family first
 * if need be. Returns 0, or -1 once the error has been printed.
 */
int nl_request(struct request *req, mnl_cb_t cb, void *data);

/* An error the kernel answered a request with. */
struct nl_error {
	int error;			/* its errno; 0: none */
	char msg[256];			/* its extended ack message, or "" */
};

/*
 * As nl_request(), but an error the kernel answers with is not printed:
 * it is returned in @err for the caller to handle, or to print with
 * nl_print_error(). Failures on our side (no module, the socket, a
 * malformed reply) are printed as nl_request() does, with err->error 0.
 * Returns 0, or -1.
 */
int nl_request_quiet(struct request *req, mnl_cb_t cb, void *data,
		     struct nl_error *err);

/*
 * Print @err as one line: "PROGNAME: CONTEXT: strerror: message", without
 * "CONTEXT: " if @context is NULL.
 */
void nl_print_error(const char *context, const struct nl_error *err);

/*
 * Join the notify group and hand each MAGNET_CMD_NOTIFY message to @cb
 * until @cb returns MNL_CB_STOP or SIGINT/SIGTERM arrives. Returns 0, or
 * -1 once the error has been printed.
 */
int nl_listen(mnl_cb_t cb, void *data);

void nl_close(void);

/*
 * Validate a magnet message's attributes (or a nest's) against the types
 * the header gives them and index them by type in @tb (MAGNET_A_MAX + 1,
 * MAGNET_STAT_MAX + 1, MAGNET_CPU_MAX + 1, MAGNET_PACKET_MAX + 1 or
 * MAGNET_CORR_MAX + 1 entries). Repeated attributes are all validated; @tb
 * holds the last of them. Attributes newer than this program are skipped.
 * Returns 0, or -1 with errno set.
 */
int parse_magnet_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb);
int parse_stat_attrs(const struct nlattr *nest, const struct nlattr **tb);
int parse_cpu_attrs(const struct nlattr *nest, const struct nlattr **tb);
/* A FILTER_CONFIG or FILTER_STATS nest of type "packet" or "correlate". */
int parse_packet_attrs(const struct nlattr *nest, const struct nlattr **tb);
int parse_corr_attrs(const struct nlattr *nest, const struct nlattr **tb);

#endif /* MAGNETCTL_NETLINK_H */

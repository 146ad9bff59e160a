// SPDX-License-Identifier: GPL-2.0
/*
 * The probes -P adds for the length of a live capture: in a session of
 * magnet-read's own (MAGNET_CMD_SESSION_NEW), with its own buffer, so
 * that they clash with no one's (magnetd's, another capture's), owned by
 * magnet-read's netlink socket (so that they go with it, even if
 * magnet-read is killed), the expression made their filter rule where it
 * can run in the kernel, what that rule dropped counted, and removed at
 * exit whatever happens. -Z's change of user is here too: without the
 * privilege to remove them, the probes go with the socket; and the
 * moment as -Z's user, before the capture, in which the files are made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "magnet-read.h"
#include "nl.h"
#include "probeset.h"

static struct nl_ctx *nl;
static struct probeset probes;
static bool probes_added;

static void print_nl_error(void)
{
	fprintf(stderr, PROG ": %s\n", nl_err(nl)->text);
	if (nl_err(nl)->hint[0])
		fprintf(stderr, PROG ": %s\n", nl_err(nl)->hint);
}

static bool privileges_dropped;

void remove_probes(void)
{
	/*
	 * Without the privilege to remove them, the probes go when the
	 * socket that owns them closes, at exit.
	 */
	if (probes_added && !privileges_dropped) {
		probes_added = false;
		if (probeset_remove(nl, &probes))
			print_nl_error();
	}
}

/*
 * The expression as a filter rule of each probe (type "packet"), so that
 * what it rejects costs no record. NULL if it runs there; else why not
 * (the expression runs here anyway).
 */
static const char *kernel_filter(const struct options *o)
{
	static struct filter_rule r;	/* a few KiB */
	char *argv[] = { "packet", o->filter_text };
	const char *why = expr_kernel_why_not(o->filter);
	static struct parse_error e;

	if (o->no_kernel_filter)
		return "--no-kernel-filter";
	if (!why && o->trace_file)
		why = "--trace saves every record";
	filter_rule_init(&r);
	if (!why && filter_parse(&r, 2, argv, &e))
		why = e.text;
	if (!why && probeset_filter(nl, &probes, &r)) {
		print_nl_error();
		why = "the kernel refused it";
	}
	return why;
}

static unsigned long long kernel_filtered;
static bool kernel_filtering;
static const char *why_not_kernel;	/* the expression runs here only */
static unsigned int added, skipped;	/* probes, layers this kernel lacks */

/* Before the probes go: what their rules dropped. */
void count_kernel_filtered(void)
{
	uint64_t n;

	if (kernel_filtering && !probeset_filtered(nl, &probes, &n))
		kernel_filtered = n;
}

bool kernel_filtered_records(unsigned long long *n)
{
	*n = kernel_filtered;
	return kernel_filtering;
}

/* The per-CPU size of the buffer -P makes, from -B's KiB in all. */
static uint64_t buffer_size(const struct options *o)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t want, size = MAGNET_BUFFER_SIZE_MIN;

	if (!o->buffer_kib)
		return 1 << 20;		/* 1 MiB a CPU */
	want = ((uint64_t)o->buffer_kib << 10) / (cpus > 0 ? cpus : 1);
	while (size < want && size < MAGNET_BUFFER_SIZE_MAX)
		size <<= 1;
	return size;
}

int open_session(const struct options *o)
{
	struct request req;
	struct nlmsghdr *nlh;

	nl = nl_new();
	if (!nl) {
		fputs(PROG ": out of memory\n", stderr);
		return -1;
	}
	/* Gone with magnet-read, even if it is killed. */
	nl_own_objects(nl, true);
	if (nl_session_new(nl)) {
		print_nl_error();
		return -1;
	}
	nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_NEW, 0);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, o->buffer);
	mnl_attr_put_u64(nlh, MAGNET_A_BUFFER_SIZE, buffer_size(o));
	if (nl_request(nl, &req, NULL, NULL)) {
		nl_err_prefix(nl, "buffer %s", o->buffer);
		print_nl_error();
		return -1;
	}
	return 0;
}

static int buffer_probes_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	*(uint64_t *)data = attr_uint(tb[MAGNET_A_BUFFER_PROBES]);
	return MNL_CB_OK;
}

void hint_no_probes(const struct options *o)
{
	struct nl_ctx *q = nl_new();
	struct request req;
	struct nlmsghdr *nlh;
	uint64_t n = 1;

	if (!q)
		return;
	nlh = request_start(q, &req, MAGNET_CMD_BUFFER_GET, 0);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, o->buffer);
	/* (an error here is the open's to tell) */
	if (!nl_request(q, &req, buffer_probes_cb, &n) && !n)
		fprintf(stderr, PROG ": no probes log into buffer \"%s\": for packets add -P udp-send,udp-recv,tcp-send,tcp-recv (see magnet-read(1))\n",
			o->buffer);
	nl_free(q);
}

int data_path(const struct options *o, char *path, size_t size)
{
	return nl_data_path(nl, DEBUGFS, o->buffer, path, size);
}

int add_probes(const struct options *o)
{
	/* The probes' snap length: 0 (whole) beyond what a record holds. */
	uint32_t snaplen = o->snaplen >= MAGNET_RECORD_MAX ? 0 : o->snaplen;
	/* enabled once their filter is in place */
	bool enabled = !o->filter_text || o->no_kernel_filter;

	if (probeset_add(nl, o->probe_sets, o->buffer, snaplen, enabled,
			 &probes)) {
		print_nl_error();
		return -1;
	}
	probes_added = true;
	atexit(remove_probes);
	for (unsigned int i = 0; i < probes.count; i++) {
		const struct probeset_probe *p = &probes.probe[i];

		added += !p->error;
		skipped += p->error == ENOENT;
		if (p->error && p->error != ENOENT)
			fprintf(stderr, PROG ": probe %s not added: %s\n",
				p->name, strerror(p->error));
		else if (o->verbose && !p->error)
			fprintf(stderr, PROG ": probe %s on %s\n", p->name,
				p->target);
		else if (o->verbose)
			fprintf(stderr, PROG ": probe %s skipped: this kernel has no function for it\n",
				p->name);
	}
	if (o->filter_text) {
		why_not_kernel = kernel_filter(o);
		kernel_filtering = !why_not_kernel;
	}
	if (!enabled && probeset_enable(nl, &probes)) {
		print_nl_error();
		return -1;
	}
	return 0;
}

/*
 * The one line that says the capture has started, as tcpdump's
 * "listening on": the probe sets, how many probes, where the expression
 * runs. -v listed each probe before it.
 */
void probes_started(const struct options *o)
{
	fprintf(stderr, PROG ": capturing on %s (%u probe%s", o->probe_sets,
		added, added == 1 ? "" : "s");
	if (skipped)
		fprintf(stderr, ", %u layer%s skipped", skipped,
			skipped == 1 ? "" : "s");
	fputc(')', stderr);
	if (o->filter_text && why_not_kernel)
		fprintf(stderr, ", expression here only: %s", why_not_kernel);
	else if (o->filter_text)
		fputs(", expression in the kernel", stderr);
	fputc('\n', stderr);
}

/* Root's groups and effective group, while as_user() has @user's. */
static struct {
	bool on;
	gid_t egid;
	int ngroups;
	gid_t *groups;
} root_ids;

static int save_root_ids(void)
{
	root_ids.egid = getegid();
	root_ids.ngroups = getgroups(0, NULL);
	root_ids.groups = calloc(root_ids.ngroups + 1, sizeof(gid_t));
	if (root_ids.ngroups < 0 || !root_ids.groups ||
	    getgroups(root_ids.ngroups, root_ids.groups) < 0) {
		fprintf(stderr, PROG ": -Z: %s\n", strerror(errno));
		free(root_ids.groups);
		return -1;
	}
	root_ids.on = true;
	return 0;
}

/*
 * -Z, as root: take @user's groups, group and user, @for_good (real,
 * effective and saved ids) or for now (the effective ones, which
 * as_root() gives back). 1 if done, 0 if there is nothing to do (no -Z,
 * not root), -1 and a message if it cannot be done.
 */
static int become(const char *user, bool for_good)
{
	struct passwd *pw;

	if (!user || geteuid())
		return 0;
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		fprintf(stderr, PROG ": -Z: no such user \"%s\"%s%s\n", user,
			errno ? ": " : "", errno ? strerror(errno) : "");
		return -1;
	}
	if (!for_good && save_root_ids())
		return -1;
	/* the user last: it takes root's capabilities away */
	if (initgroups(pw->pw_name, pw->pw_gid) ||
	    (for_good ? setgid(pw->pw_gid) : setegid(pw->pw_gid)) ||
	    (for_good ? setuid(pw->pw_uid) : seteuid(pw->pw_uid))) {
		fprintf(stderr, PROG ": -Z: cannot %s %s: %s\n",
			for_good ? "become" : "act as", user, strerror(errno));
		return -1;
	}
	return 1;
}

/* -Z: run as @user from now on (as root only, as tcpdump does). */
int drop_privileges(const char *user)
{
	int done = become(user, true);

	if (done > 0)
		privileges_dropped = true;
	return done < 0 ? -1 : 0;
}

int as_user(const char *user)
{
	if (become(user, false) >= 0)
		return 0;
	as_root();
	return -1;
}

void as_root(void)
{
	if (!root_ids.on)
		return;
	/* the user first: it gives root's capabilities back */
	if (seteuid(0) || setegid(root_ids.egid) ||
	    setgroups(root_ids.ngroups, root_ids.groups)) {
		fprintf(stderr, PROG ": -Z: cannot act as root again: %s\n",
			strerror(errno));
		exit(1);
	}
	root_ids.on = false;
	free(root_ids.groups);
}

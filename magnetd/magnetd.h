/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetd: the daemon's state and the calls between its parts.
 *
 *   magnetd.c	options, logging, signals, the metrics tick, and the
 *		attach / detach / reload life cycle (including watching the
 *		module come and go)
 *   kernel.c	installing a configuration in the module and removing it
 *   reader.c	draining the module's buffers into the metrics
 *   server.c	the Unix socket: snapshots, subscriptions, pushes
 *   nofile.c	descriptors: RLIMIT_NOFILE against max-clients
 *   account.c	the ledger: read for clients and Prometheus, on and off
 *   acct.c	per-call costs of the processes magnetd.conf names: watched,
 *		read for Prometheus
 *   sampler.c	the ticks of cpu.sample probes, per process: apparent time
 *		and steal, for Prometheus
 *   export.c	spans posted live to an OpenTelemetry collector
 *   http.c	the HTTP endpoint for Prometheus (exposition.c: its formats;
 *		webconfig.c, webauth.c: its TLS and basic authentication)
 *   config.c	magnetd.conf
 *   metrics.c	the aggregation
 *
 * One thread, one libev loop; nothing blocks but the short netlink
 * requests of attach and detach, which the kernel answers at once.
 */
#ifndef MAGNETD_H
#define MAGNETD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ev.h>
#include <linux/magnet.h>

#include "acctwatch.h"
#include "config.h"
#include "ledger.h"
#include "metrics.h"

#define MAGNETD_VERSION	"0.2.0"

/* What magnetd made in the module, to remove it and nothing else. */
struct installed_probe {
	char name[MAGNET_NAME_LEN];
	uint16_t id;
};

struct installed {
	unsigned int nbuffers;
	char (*buffers)[MAGNET_NAME_LEN];	/* made by magnetd */
	unsigned int nprobes;
	struct installed_probe *probes;		/* probes and set layers */
};

struct reader;
struct samplers;
struct export;
struct webconfig;
struct account_paths;

struct daemon {
	struct ev_loop *loop;
	const char *config_file;
	struct config *cfg;
	struct metrics *metrics;
	struct server *server;
	struct http *http;	/* NULL: the endpoint is off */
	/* --web.config.file (NULL: the prometheus section's web-config) */
	const char *web_config_arg;
	struct webconfig *web;	/* in force (NULL: plain HTTP, no auth) */
	struct nl_ctx *nl;	/* its socket owns what magnetd installs */
	struct nl_ctx *ledger_nl;	/* the ledger's requests */
	bool ledger_ours;	/* magnetd turned the ledger on */
	struct account_paths *account_paths;	/* cgroup id -> path */
	uint32_t acct_pid[MAGNET_ACCT_WATCHES];	/* watched by magnetd */
	unsigned int nacct;
	unsigned int acct_ticks;	/* since the last look in /proc */
	bool acct_warned;		/* a watch refused, logged once */
	struct export *export;		/* spans posted (NULL: none) */
	struct samplers *samplers;	/* cpu.sample probes' sums */

	bool attached;		/* configuration installed, buffers read */
	bool released;		/* a client asked to let go of the module */
	struct installed inst;
	unsigned int nreaders;
	struct reader *readers;
	/* event id -> probe name, for subscriptions (NULL: not ours) */
	const char *event_name[MAGNET_EVENT_ID_MAX + 1];

	struct mnl_socket *ctrl;	/* nlctrl notifications */
	ev_io ctrl_watcher;
	ev_timer attach_timer;		/* attach again after a module load */
	ev_timer tick;
	ev_signal sig_hup, sig_term, sig_int;

	uint64_t start_ns;		/* CLOCK_MONOTONIC */
	uint64_t reloads, attaches, attach_failures;
	int exit_code;
};

/* Logging: "magnetd: " on stderr (journald reads the priority prefix). */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t now_ns(void);		/* CLOCK_MONOTONIC */

/*
 * magnetd.c: the life cycle. daemon_release() detaches until the module
 * is loaded again or daemon_attach() is called (server.c's "release" and
 * "attach"); daemon_reattach() detaches and attaches again a moment later
 * (a buffer vanished).
 */
void daemon_release(struct daemon *d);
int daemon_attach(struct daemon *d);
void daemon_reattach(struct daemon *d);

/*
 * kernel.c. kernel_install() installs @cfg: buffers, probe sets and probes
 * (disabled), filters and sampling, then enables the probes. On failure
 * it removes what it made, logs one line saying why and returns -1.
 * kernel_remove() removes what kernel_install() made.
 */
int kernel_install(struct daemon *d, const struct config *cfg);
void kernel_remove(struct daemon *d);

/*
 * reader.c. readers_open() opens the data file of every buffer @cfg's
 * probes log into and starts reading; readers_close() drains and closes
 * them. readers_flush() reads what waits below the watermarks (the tick).
 * Records reach the metrics and the server in timestamp order, HOLD_NS
 * after they were logged; readers_release() hands on those old enough
 * (all of them if @all).
 */
int readers_open(struct daemon *d, const struct config *cfg);
void readers_close(struct daemon *d);
void readers_flush(struct daemon *d);
void readers_release(struct daemon *d, bool all);

/*
 * account.c. The ledger, read: its rows summed over CPUs (lib/ledger.h;
 * by thread group too if the ledger keeps them), each row's cgroup as a
 * path under magnetd.conf's cgroup-root, cut to its cgroup-depth: "" for
 * no activity (cgroup 0), ACCOUNT_GONE for a cgroup removed before
 * magnetd first saw it. The paths stay valid until the next read.
 */
#define ACCOUNT_GONE	"(gone)"

struct account {
	struct ledger_snapshot s;
	const char **path;		/* s.rows[i]'s cgroup */
	uint64_t elapsed_ns;		/* s.elapsed summed */
};

/*
 * 0, or -1 with errno: ENODATA while the ledger is off (or the module is
 * not loaded), ENOMEM, or the kernel's. Free with account_release().
 */
int account_read(struct daemon *d, struct account *a);

static inline void account_release(struct account *a)
{
	ledger_free(&a->s);
	free(a->path);
	a->path = NULL;
}

/*
 * A row's VECTOR as text: a softirq's name ("net_rx"), a hardirq's
 * number, or "".
 */
static inline void account_vector(const struct ledger_row *r, char *buf,
				  size_t size)
{
	const char *name = r->kind == MAGNET_LEDGER_SOFTIRQ ?
			   ledger_softirq_name(r->vector) : NULL;

	if (name)
		snprintf(buf, size, "%s", name);
	else if (r->has_vector)
		snprintf(buf, size, "%u", r->vector);
	else if (size)
		buf[0] = '\0';
}

/*
 * account_apply(): the ledger on if magnetd.conf says so and it is off
 * (logged), or off if it says not and magnetd had turned it on.
 * account_stop(): off, if magnetd turned it on. account_module_gone():
 * the module was unloaded, and its ledger with it.
 */
void account_apply(struct daemon *d);
void account_stop(struct daemon *d);
void account_module_gone(struct daemon *d);
void account_free(struct daemon *d);
/* @path cut to its first @depth levels (0: kept whole). */
void account_cut_path(char *path, unsigned int depth);

/*
 * acct.c. acct_scan(): end magnetd's watches of processes that exited or
 * are no longer named, and watch the named ones not watched (every
 * rescan seconds through acct_tick(), and at attach). acct_stop(): end
 * magnetd's watches. acct_read(): every watch the kernel has, 0, or -1
 * (nl error of ledger_nl; ENOENT: none, or the module not loaded).
 */
void acct_scan(struct daemon *d);
void acct_tick(struct daemon *d);
void acct_stop(struct daemon *d);
void acct_module_gone(struct daemon *d);
int acct_read(struct daemon *d, struct acct_watches *ws);

/*
 * sampler.c. sampler_record(): a record read (those of no cpu.sample probe
 * of magnetd's are passed over). sampler_detach(): the probes are gone,
 * and with them each CPU's previous tick. sampler_sweep(): the sums of
 * probes @cfg no longer has, forgotten (a reload). samplers_count() and
 * samplers_view(): each probe's sums (@ss: a daemon's samplers, NULL
 * for none), in the order its ticks first came; a view stays valid until
 * the next record.
 */
#define SAMPLED_COMM_LEN	16

struct sampled_process {
	uint32_t tgid;
	char comm[SAMPLED_COMM_LEN];	/* when its first tick was read
					 * ("": gone by then)
					 */
	uint64_t apparent_ns;		/* the time its ticks covered */
	uint64_t steal_ns[2];		/* blank time charged: reported as
					 * steal by the kernel, and not
					 */
};

struct sampler_view {
	const char *event;		/* the probe's name */
	uint64_t period_ns, margin_ns;	/* the jitter margin in use */
	uint64_t ticks;
	uint64_t idle_ns;		/* the idle task's ticks: halted */
	uint64_t unattributed_ns[2];	/* blank time between two processes */
	uint64_t evicted;		/* processes dropped for room */
	size_t nprocs;
	const struct sampled_process *procs;	/* by tgid */
};

void sampler_record(struct daemon *d, const struct magnet_record *rec);
void sampler_detach(struct daemon *d);
void sampler_sweep(struct daemon *d, const struct config *cfg);
size_t samplers_count(const struct samplers *ss);
const struct sampler_view *samplers_view(const struct samplers *ss,
					 size_t i);
void sampler_free_all(struct daemon *d);

/* server.c */
struct server *server_new(struct daemon *d, const struct config_socket *cs);
void server_free(struct server *s);
/* A record read from a buffer: pushed to matching event subscriptions. */
void server_record(struct server *s, const struct magnet_record *rec);
/* The metrics tick: threshold subscriptions are evaluated. */
void server_tick(struct server *s);
/* magnetd's own metrics (magnetd.health ...), to @cb in a stable order. */
void server_foreach_own(const struct server *s, metrics_cb cb, void *ctx);
/* magnetd's own metrics, for snapshots. */
void server_metrics(const struct server *s, unsigned int *clients,
		    uint64_t *pushes_dropped, uint64_t *clients_dropped);

/*
 * nofile.c: make room for @cs's and @cp's max-clients clients and
 * magnetd's own descriptors (@nbuffers buffers read): raise the soft
 * RLIMIT_NOFILE, or, under a hard limit too low, lower the max-clients
 * (logged). -1 (logged) if not even one client would fit.
 */
int nofile_fit(unsigned int nbuffers, struct config_socket *cs,
		    struct config_prometheus *cp);

/*
 * http.c: the Prometheus endpoint of magnetd.conf's prometheus section,
 * or NULL (logged) if it cannot listen.
 */
struct http *http_new(struct daemon *d, const struct config_prometheus *cp);
void http_free(struct http *h);
/*
 * The web configuration @wc (NULL: none) in force for every later request;
 * -1 (logged, nothing changed) if it would turn TLS on or off.
 */
int http_web_update(struct http *h, struct webconfig *wc);

/*
 * export.c. export_apply(): spans posted as magnetd.conf's otlp section
 * says (at attach and reload: its child started, or started anew if the
 * capture changed); export_drop(): no url any more, what waits dropped;
 * export_stop(): at exit, what waits posted first. export_stats(): its
 * counters, NULL while there is no url.
 */
struct export_stats {
	uint64_t spans_sent, spans_dropped, spans_rejected;
	uint64_t requests_sent, requests_failed, requests_rejected;
	uint64_t queue_bytes, restarts;
	bool up;			/* the last POST taken */
};

void export_apply(struct daemon *d);
void export_drop(struct daemon *d);
void export_stop(struct daemon *d);
const struct export_stats *export_stats(const struct daemon *d);

#endif /* MAGNETD_H */

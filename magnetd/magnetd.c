// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd: the magnet daemon. Installs its configuration in the magnet
 * module, drains the module's buffers into metrics, and serves snapshots
 * and subscriptions on a Unix socket (see magnetd(8) and libmagnet.h).
 *
 * Life cycle. The daemon is "attached" while its configuration is
 * installed and its buffers are read. It detaches when a client asks it
 * to release the module (so that the module can be unloaded: an open data
 * file pins it), when a buffer vanishes, and at exit. It attaches at
 * start, on "attach", and whenever the module's generic netlink family
 * appears (the module was loaded), which the nlctrl notify group tells.
 * Metrics live across all of this, and across reloads: they are kept by
 * name, and only what a new configuration drops is forgotten.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include "magnetd.h"
#include "nl.h"
#include "webconfig.h"

#define DEFAULT_CONFIG	"/etc/magnet/magnetd.conf"
/* After the family appears, the module may still be setting up. */
#define ATTACH_DELAY_S	0.2
#define ATTACH_RETRY_S	2.0
#define ATTACH_RETRIES	5

static struct daemon daemon_state;
static bool journal;		/* stderr goes to journald */

/* --- logging ------------------------------------------------------------------- */

static void vlog(int prio, const char *fmt, va_list ap)
{
	if (journal)
		fprintf(stderr, "<%d>", prio);
	fputs("magnetd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

#define LOGGER(fn, prio)				\
void fn(const char *fmt, ...)				\
{							\
	va_list ap;					\
	va_start(ap, fmt);				\
	vlog(prio, fmt, ap);				\
	va_end(ap);					\
}
LOGGER(log_error, 3)
LOGGER(log_warn, 4)
LOGGER(log_info, 6)

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* systemd's readiness protocol, without libsystemd. */
static void notify_systemd(const char *state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = getenv("NOTIFY_SOCKET");
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    strlen(path) >= sizeof(sa.sun_path))
		return;
	strcpy(sa.sun_path, path);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
	       offsetof(struct sockaddr_un, sun_path) + strlen(path));
	close(fd);
}

/* --- metrics declared by the configuration -------------------------------------- */

/*
 * Declare @cfg's events (its probes, and the layers installed for its
 * sets) and latencies, and bind the events to the kernel ids the install
 * gave them. Metrics of names @cfg no longer has are forgotten.
 */
static void declare_metrics(struct daemon *d, const struct config *cfg)
{
	unsigned int i;

	memset(d->event_name, 0, sizeof(d->event_name));
	metrics_mark(d->metrics);
	for (i = 0; i < cfg->nprobes; i++)
		metrics_event(d->metrics, cfg->probes[i].name);
	for (i = 0; i < d->inst.nprobes; i++) {
		const struct installed_probe *p = &d->inst.probes[i];

		metrics_event(d->metrics, p->name);
		metrics_bind(d->metrics, p->name, p->id);
		d->event_name[p->id] = p->name;
	}
	for (i = 0; i < cfg->nlatencies; i++) {
		const struct config_latency *l = &cfg->latencies[i];

		if (metrics_latency(d->metrics, l->name, l->start, l->end,
				    l->key, l->timeout_ns, l->max_pending) &&
		    d->inst.nprobes)
			log_warn("latency %s: %s or %s is not installed in this kernel; not measured",
				 l->name, l->start, l->end);
	}
	metrics_sweep(d->metrics);
	sampler_sweep(d, cfg);
}

static void unbind_all(struct daemon *d)
{
	unsigned int i;

	for (i = 0; i < d->inst.nprobes; i++)
		metrics_bind(d->metrics, d->inst.probes[i].name, 0);
	memset(d->event_name, 0, sizeof(d->event_name));
	sampler_detach(d);
}

/* --- attach and detach -------------------------------------------------------- */

static bool family_present(struct daemon *d)
{
	struct request req;

	/* Any read-only request will do; it resolves the family first. */
	request_start(d->nl, &req, MAGNET_CMD_CATALOG_GET, NLM_F_DUMP);
	nl_close(d->nl);
	return nl_request(d->nl, &req, NULL, NULL) == 0;
}

static void detach(struct daemon *d)
{
	if (!d->attached)
		return;
	readers_close(d);	/* drains what is left */
	unbind_all(d);
	kernel_remove(d);
	d->attached = false;
	nl_close(d->nl);
}

int daemon_attach(struct daemon *d)
{
	d->released = false;
	if (d->attached)
		return 0;
	if (kernel_install(d, d->cfg))
		goto fail;
	declare_metrics(d, d->cfg);
	if (readers_open(d, d->cfg)) {
		unbind_all(d);
		kernel_remove(d);
		goto fail;
	}
	d->attached = true;
	d->attaches++;
	log_info("attached: %u probes, %u buffers read",
		 d->inst.nprobes, d->nreaders);
	account_apply(d);
	acct_scan(d);
	export_apply(d);
	return 0;
fail:
	d->attach_failures++;
	nl_close(d->nl);
	return -1;
}

void daemon_release(struct daemon *d)
{
	if (d->attached)
		log_info("releasing the module (attaching again when it is loaded again, or on \"attach\")");
	account_stop(d);
	acct_stop(d);
	detach(d);
	d->released = true;
}

static void on_attach_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;

	(void)loop;
	(void)revents;
	if (d->attached)
		return;
	if (daemon_attach(d) == 0)
		return;
	if (d->attach_failures % ATTACH_RETRIES) {
		w->repeat = ATTACH_RETRY_S;
		ev_timer_again(loop, w);
	} else {
		log_error("could not attach; waiting for the module to be loaded again, SIGHUP or \"attach\"");
	}
}

static void schedule_attach(struct daemon *d, double delay)
{
	ev_timer_stop(d->loop, &d->attach_timer);
	ev_timer_set(&d->attach_timer, delay, 0.);
	ev_timer_start(d->loop, &d->attach_timer);
}

void daemon_reattach(struct daemon *d)
{
	detach(d);
	schedule_attach(d, ATTACH_RETRY_S);
}

/* --- the module coming and going (nlctrl notifications) ----------------------------- */

static int ctrl_msg_cb(const struct nlmsghdr *nlh, void *data)
{
	struct daemon *d = data;
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	const char *name = NULL;

	if (nlh->nlmsg_type != GENL_ID_CTRL)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*genl))
		if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_NAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
			name = mnl_attr_get_str(a);
	if (!name || strcmp(name, MAGNET_GENL_NAME))
		return MNL_CB_OK;
	if (genl->cmd == CTRL_CMD_NEWFAMILY) {
		log_info("the magnet module was loaded");
		d->attach_failures = 0;
		schedule_attach(d, ATTACH_DELAY_S);
	} else if (genl->cmd == CTRL_CMD_DELFAMILY) {
		log_info("the magnet module was unloaded");
		ev_timer_stop(d->loop, &d->attach_timer);
		account_module_gone(d);
		acct_module_gone(d);
		if (d->attached) {	/* cannot happen while files are open */
			readers_close(d);
			unbind_all(d);
			free(d->inst.probes);
			free(d->inst.buffers);
			memset(&d->inst, 0, sizeof(d->inst));
			d->attached = false;
		}
		nl_close(d->nl);
	}
	return MNL_CB_OK;
}

static void on_ctrl(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = w->data;
	char buf[8192] __attribute__((aligned(8)));
	ssize_t n;

	(void)loop;
	(void)revents;
	n = mnl_socket_recvfrom(d->ctrl, buf, sizeof(buf));
	if (n < 0) {
		/* ENOBUFS: notifications lost; look for ourselves. */
		if (errno == ENOBUFS && !d->attached && !d->released &&
		    family_present(d))
			schedule_attach(d, ATTACH_DELAY_S);
		return;
	}
	mnl_cb_run(buf, n, 0, 0, ctrl_msg_cb, d);
}

/* Join nlctrl's "notify" group: its id is fixed (GENL_ID_CTRL's first). */
static int watch_module(struct daemon *d)
{
	unsigned int group = GENL_ID_CTRL;	/* nlctrl's notify group id */

	d->ctrl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!d->ctrl || mnl_socket_bind(d->ctrl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(d->ctrl, NETLINK_ADD_MEMBERSHIP, &group,
				  sizeof(group)) < 0) {
		log_error("watching for the module (nlctrl notify group): %s",
			  strerror(errno));
		return -1;
	}
	ev_io_init(&d->ctrl_watcher, on_ctrl, mnl_socket_get_fd(d->ctrl),
		   EV_READ);
	d->ctrl_watcher.data = d;
	ev_io_start(d->loop, &d->ctrl_watcher);
	return 0;
}

/* --- tick, reload, signals ---------------------------------------------------------- */

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = w->data;

	(void)loop;
	(void)revents;
	if (d->attached)
		readers_flush(d);
	metrics_tick(d->metrics, now_ns());
	server_tick(d->server);
	acct_tick(d);
}

static bool socket_changed(const struct config_socket *a,
			   const struct config_socket *b)
{
	return strcmp(a->path, b->path) || a->mode != b->mode ||
	       strcmp(a->group, b->group);
}

static bool prometheus_changed(const struct config_prometheus *a,
			       const struct config_prometheus *b)
{
	return a->enable != b->enable || strcmp(a->address, b->address) ||
	       a->port != b->port || a->max_clients != b->max_clients ||
	       a->timeout_s != b->timeout_s ||
	       a->request_timeout_s != b->request_timeout_s ||
	       a->per_cpu != b->per_cpu;
}

/*
 * The web configuration @cfg names, or the command line's (which wins):
 * 0 and *@wc (NULL: none), or -1 with the problems in @err.
 */
static int load_web(const struct daemon *d, const struct config *cfg,
		    struct webconfig **wc, char *err, size_t errlen)
{
	const char *file = d->web_config_arg ?: cfg->prometheus.web_config;

	*wc = NULL;
	if (!*file)
		return 0;
	*wc = webconfig_load(file, err, errlen);
	return *wc ? 0 : -1;
}

static void reload(struct daemon *d)
{
	char err[4096];
	struct config *cfg = config_load(d->config_file, err, sizeof(err));
	struct config *old = d->cfg;
	bool was_attached = d->attached;
	struct webconfig *web;

	d->reloads++;
	if (!cfg) {
		log_error("reload: %s has errors; keeping the running configuration:\n%s",
			  d->config_file, err);
		return;
	}
	if (load_web(d, cfg, &web, err, sizeof(err))) {
		log_error("reload: the web configuration has errors; keeping the running configuration:\n%s",
			  err);
		config_free(cfg);
		return;
	}
	/* both valid: the web configuration is in force from the next request */
	if (d->http && http_web_update(d->http, web)) {
		webconfig_put(web);
	} else {
		webconfig_put(d->web);
		d->web = web;
	}
	if (socket_changed(&old->socket, &cfg->socket))
		log_warn("reload: socket settings change only at restart");
	if (prometheus_changed(&old->prometheus, &cfg->prometheus))
		log_warn("reload: prometheus settings change only at restart");
	detach(d);
	d->cfg = cfg;
	/*
	 * Paths found anew only if cgroup-root or cgroup-depth changed: a
	 * cgroup removed since it was first seen would be "(gone)" and its
	 * series would go down, which Prometheus takes for a reset.
	 */
	if (strcmp(old->ledger.cgroup_root, cfg->ledger.cgroup_root) ||
	    old->ledger.cgroup_depth != cfg->ledger.cgroup_depth)
		account_free(d);
	ev_timer_set(&d->tick, cfg->metrics.interval_s,
		     cfg->metrics.interval_s);
	ev_timer_again(d->loop, &d->tick);
	if (!was_attached && (d->released || !family_present(d))) {
		declare_metrics(d, cfg);
		config_free(old);
		log_info("reload: %s loaded; it is installed when the module is",
			 d->config_file);
		return;
	}
	if (daemon_attach(d) == 0) {
		config_free(old);
		log_info("reload: %s installed", d->config_file);
		return;
	}
	log_error("reload: installing %s failed; going back to the previous configuration",
		  d->config_file);
	d->cfg = old;
	config_free(cfg);
	if (daemon_attach(d))
		log_error("reload: the previous configuration failed too; waiting for the module or SIGHUP");
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon *d = w->data;

	(void)revents;
	if (w->signum == SIGHUP) {
		log_info("SIGHUP: reloading %s", d->config_file);
		reload(d);
		return;
	}
	log_info("%s: stopping", strsignal(w->signum));
	ev_break(loop, EVBREAK_ALL);
}

/* --- main ---------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: magnetd [-c FILE] [--web.config.file=FILE] [-n] [-h] [-V]\n"
"\n"
"The magnet daemon: installs the probes, buffers, filters and sampling of\n"
"its configuration in the magnet kernel module, drains the buffers into\n"
"metrics (counts, rates, bytes, per-CPU and per-process breakdowns, latency\n"
"percentiles between events), and serves snapshots and subscriptions to\n"
"local clients (libmagnet, the Ganglia and Supermon plugins) on a Unix\n"
"socket, and to Prometheus over HTTP if enabled. It runs in the foreground\n"
"and logs to standard error.\n"
"\n"
"Options:\n"
"  -c, --config FILE  configuration file (default " DEFAULT_CONFIG ")\n"
"  --web.config.file=FILE\n"
"                     TLS and basic authentication of the Prometheus\n"
"                     endpoint, in the format of node_exporter's (wins over\n"
"                     the prometheus section's web-config; \"\" for none)\n"
"  -n, --check        check the configuration file (and the web\n"
"                     configuration's) and exit: 0 if valid, 1 with one\n"
"                     line per problem (FILE:LINE: ...)\n"
"  -h, --help         this help\n"
"  -V, --version      print the version and exit\n"
"\n"
"Signals: SIGHUP reloads the configuration and the web configuration (a\n"
"file with errors is refused and the running configuration stays; metrics\n"
"are kept); SIGTERM and SIGINT remove what magnetd installed and exit.\n"
"\n"
"If the module is not loaded, magnetd waits for it, and it installs its\n"
"configuration again whenever the module is loaded again. To unload the\n"
"module while magnetd runs, ask it to let go first:\n"
"  magnetctl daemon release && rmmod magnet\n"
"\n"
"Exit status: 0 after SIGTERM or SIGINT, 1 if the configuration is invalid\n"
"or cannot be installed at start, 2 for bad usage.\n"
"The configuration file's options: magnetd.conf(5); the daemon: magnetd(8).\n");
}

static int setup(struct daemon *d)
{
	struct metrics_limits lim = {
		.window_s = d->cfg->metrics.window_s,
		.top_tgids = d->cfg->metrics.top_tgids,
		.max_tgids = d->cfg->metrics.max_tgids,
		.max_cpus = 1024,
	};
	/* as the file says, or fewer clients if descriptors are short */
	struct config_socket cs = d->cfg->socket;
	struct config_prometheus cp = d->cfg->prometheus;

	d->metrics = metrics_new(&lim);
	if (!d->metrics) {
		log_error("out of memory");
		return -1;
	}
	declare_metrics(d, d->cfg);
	if (nofile_fit(d->cfg->nbuffers, &cs, &cp))
		return -1;
	/* The socket first: a second magnetd stops here, touching nothing. */
	d->server = server_new(d, &cs);
	if (!d->server)
		return -1;
	if (cp.enable) {
		d->http = http_new(d, &cp);
		if (!d->http)
			return -1;
	}
	if (watch_module(d))
		return -1;
	if (!family_present(d)) {
		log_warn("the magnet module is not loaded; waiting for it");
		return 0;
	}
	if (daemon_attach(d)) {
		log_error("refusing to start half-configured: %s could not be installed",
			  d->config_file);
		return -1;
	}
	return 0;
}

static void teardown(struct daemon *d)
{
	http_free(d->http);
	webconfig_put(d->web);
	server_free(d->server);
	export_stop(d);
	account_stop(d);
	acct_stop(d);
	detach(d);
	if (d->ctrl) {
		ev_io_stop(d->loop, &d->ctrl_watcher);
		mnl_socket_close(d->ctrl);
	}
	metrics_free(d->metrics);
	account_free(d);
	sampler_free_all(d);
	config_free(d->cfg);
	nl_free(d->ledger_nl);
	nl_free(d->nl);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "web.config.file", required_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct daemon *d = &daemon_state;
	bool check_only = false;
	char err[8192];
	int opt;

	d->config_file = DEFAULT_CONFIG;
	while ((opt = getopt_long(argc, argv, "c:nhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			d->config_file = optarg;
			break;
		case 'n':
			check_only = true;
			break;
		case 'W':
			d->web_config_arg = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("magnetd %s (protocol %d, record format %d)\n",
			       MAGNETD_VERSION, MAGNET_PROTO_VERSION,
			       MAGNET_FORMAT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "magnetd: unexpected argument \"%s\"\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	journal = getenv("JOURNAL_STREAM") != NULL;
	d->nl = nl_new();
	d->ledger_nl = nl_new();
	if (!d->nl || !d->ledger_nl) {
		fputs("magnetd: out of memory\n", stderr);
		return 1;
	}
	/*
	 * What magnetd installs belongs to its netlink socket: if it is
	 * killed, the kernel removes it, and a restart finds the names free.
	 */
	nl_own_objects(d->nl, true);
	d->cfg = config_load(d->config_file, err, sizeof(err));
	if (!d->cfg) {
		fputs(err, stderr);
		if (err[0] && err[strlen(err) - 1] != '\n')
			fputc('\n', stderr);
		fprintf(stderr, "magnetd: %s: invalid configuration; not starting\n",
			d->config_file);
		return 1;
	}
	if (load_web(d, d->cfg, &d->web, err, sizeof(err))) {
		fputs(err, stderr);
		fprintf(stderr, "magnetd: invalid web configuration; not starting\n");
		config_free(d->cfg);
		return 1;
	}
	if (check_only) {
		printf("%s: valid\n", d->config_file);
		if (d->web)
			printf("%s: valid\n", d->web->file);
		webconfig_put(d->web);
		config_free(d->cfg);
		return 0;
	}
	d->loop = ev_default_loop(EVFLAG_AUTO);
	d->start_ns = now_ns();
	ev_timer_init(&d->attach_timer, on_attach_timer, 0., 0.);
	d->attach_timer.data = d;
	ev_timer_init(&d->tick, on_tick, d->cfg->metrics.interval_s,
		      d->cfg->metrics.interval_s);
	d->tick.data = d;
	ev_timer_start(d->loop, &d->tick);
	ev_signal_init(&d->sig_hup, on_signal, SIGHUP);
	ev_signal_init(&d->sig_term, on_signal, SIGTERM);
	ev_signal_init(&d->sig_int, on_signal, SIGINT);
	d->sig_hup.data = d->sig_term.data = d->sig_int.data = d;
	ev_signal_start(d->loop, &d->sig_hup);
	ev_signal_start(d->loop, &d->sig_term);
	ev_signal_start(d->loop, &d->sig_int);
	signal(SIGPIPE, SIG_IGN);

	if (setup(d)) {
		teardown(d);
		return 1;
	}
	log_info("serving %s", d->cfg->socket.path);
	notify_systemd("READY=1");
	ev_run(d->loop, 0);
	notify_systemd("STOPPING=1");
	teardown(d);
	log_info("stopped");
	return 0;
}

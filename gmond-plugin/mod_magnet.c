// SPDX-License-Identifier: GPL-2.0
/*
 * modmagnet.so: magnet's metrics in Ganglia's gmond.
 *
 * gmond calls a module's handler from its main loop, so the handler must
 * never wait: it reads a cache. libmagnet's poller (a thread) refreshes
 * the cache from magnetd's snapshots (libmagnet) every Refresh seconds,
 * reconnecting as needed. The metric list is built once, at init, from
 * what magnetd reports then (gmond freezes the list after init, as with
 * monitor-core's mod_multicpu); magnet_health is always there, and says
 * 0 while magnetd cannot be reached. If magnetd is not running at init
 * (after waiting up to Wait seconds for it), the list holds magnet_health
 * only, and the log says so.
 *
 * Parameters (gmond.conf, module { param NAME { value = ... } }):
 *	Socket	magnetd's socket (default /run/magnetd.sock)
 *	Prefix	put before every metric name (default "magnet_")
 *	Match	only metrics whose magnetd name starts with one of these
 *		comma-separated prefixes (default: all)
 *	PerCPU	"yes": also each event's per-CPU counts, for every CPU the
 *		machine can have (default "no": they are many, and
 *		magnetctl shows them)
 *	Refresh	seconds between snapshots (default 5)
 *	Tmax	gmond's tmax of the metrics (default 60)
 *	Wait	seconds init waits for magnetd to answer (default 5)
 * A bad or unknown parameter fails the module's init, with a log line
 * saying which.
 *
 * Names: magnetd's "udp_send.p99" becomes "magnet_udp_send_p99", its own
 * "magnetd.health" "magnet_health" (dots and dashes to underscores: they
 * read well in ganglia-web and pass gmond's name rules).
 *
 * Types: every metric is a double (gmond has no 64-bit integer; doubles
 * are exact below 2^53), in GROUP "magnet". Counters have slope
 * "positive" (gmetad keeps them as RRD COUNTERs, so graphs show rates)
 * and format "%.0f" (rrdtool takes only integers for COUNTERs). A counter
 * never goes back: when magnetd restarts and its counts start again from
 * 0, the module adds what was counted before, so no graph shows a
 * spurious wrap. Gauges have slope "both" and format "%.10g"; they read
 * 0 while magnetd cannot be reached, and counters keep their last value.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <apr_strings.h>
#include <gm_metric.h>

#include "libmagnet.h"

#define DEFAULT_PREFIX	"magnet_"
#define DEFAULT_REFRESH	5
#define DEFAULT_TMAX	60
#define DEFAULT_WAIT	5
#define SNAP_TIMEOUT_MS	5000
#define HEALTH_NAME	"magnetd.health"

mmodule magnet_module;

struct exported {
	char magnetd_name[128];	/* as magnetd names it */
	bool counter;
	double value;		/* what gmond is told */
	double raw;		/* magnetd's value at the last snapshot */
	double base;		/* counted before magnetd's last restart */
};

static struct {
	char socket[108];
	char prefix[32];
	char match[512];
	bool per_cpu;
	unsigned int refresh, tmax, wait;

	unsigned int n, cap;		/* exported metrics, health first */
	struct exported *metric;
	bool healthy;			/* the last snapshot worked */
	bool logged_down;		/* said so once */
	pthread_mutex_t lock;
	struct magnet_poller *poller;	/* libmagnet's refresh thread */
} mm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* --- parameters ---------------------------------------------------------------- */

static bool number_param(const mmparam *p, unsigned int min, unsigned int max,
			 unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(p->value, &end, 10);
	if (errno || end == p->value || *end || v < min || v > max ||
	    p->value[0] == '-') {
		err_msg("[magnet] parameter %s = \"%s\": want a whole number from %u to %u",
			p->name, p->value, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool string_param(const mmparam *p, char *out, size_t size)
{
	if (strlen(p->value) >= size) {
		err_msg("[magnet] parameter %s = \"%s\": longer than %zu characters",
			p->name, p->value, size - 1);
		return false;
	}
	snprintf(out, size, "%s", p->value);
	return true;
}

static bool prefix_ok(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.' &&
		    *s != '-')
			return false;
	return true;
}

/* Read gmond.conf's params; false (logged) on a bad or unknown one. */
static bool read_params(void)
{
	const mmparam *p;
	int i;

	snprintf(mm.socket, sizeof(mm.socket), "%s", MAGNET_SOCKET_PATH);
	snprintf(mm.prefix, sizeof(mm.prefix), "%s", DEFAULT_PREFIX);
	mm.match[0] = 0;
	mm.per_cpu = false;
	mm.refresh = DEFAULT_REFRESH;
	mm.tmax = DEFAULT_TMAX;
	mm.wait = DEFAULT_WAIT;
	if (!magnet_module.module_params_list)
		return true;
	p = (const mmparam *)magnet_module.module_params_list->elts;
	for (i = 0; i < magnet_module.module_params_list->nelts; i++) {
		const char *name = p[i].name, *value = p[i].value;
		bool ok;

		if (!strcasecmp(name, "Socket")) {
			ok = string_param(&p[i], mm.socket, sizeof(mm.socket));
		} else if (!strcasecmp(name, "Prefix")) {
			ok = string_param(&p[i], mm.prefix, sizeof(mm.prefix));
			if (ok && !prefix_ok(mm.prefix)) {
				err_msg("[magnet] parameter Prefix = \"%s\": only letters, digits, '_', '.' and '-'",
					value);
				ok = false;
			}
		} else if (!strcasecmp(name, "Match")) {
			ok = string_param(&p[i], mm.match, sizeof(mm.match));
		} else if (!strcasecmp(name, "PerCPU")) {
			ok = !strcasecmp(value, "yes") || !strcasecmp(value, "no");
			mm.per_cpu = !strcasecmp(value, "yes");
			if (!ok)
				err_msg("[magnet] parameter PerCPU = \"%s\": want yes or no",
					value);
		} else if (!strcasecmp(name, "Refresh")) {
			ok = number_param(&p[i], 1, 3600, &mm.refresh);
		} else if (!strcasecmp(name, "Tmax")) {
			ok = number_param(&p[i], 1, 86400, &mm.tmax);
		} else if (!strcasecmp(name, "Wait")) {
			ok = number_param(&p[i], 0, 300, &mm.wait);
		} else {
			err_msg("[magnet] unknown parameter %s (known: Socket, Prefix, Match, PerCPU, Refresh, Tmax, Wait)",
				name);
			ok = false;
		}
		if (!ok)
			return false;
	}
	return true;
}

/* Does Match let @name through? */
static bool wanted(const char *name)
{
	char list[sizeof(mm.match)], *save = NULL, *tok;

	if (!mm.match[0] || !strcmp(name, HEALTH_NAME))
		return true;
	snprintf(list, sizeof(list), "%s", mm.match);
	for (tok = strtok_r(list, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save))
		if (!strncmp(name, tok, strlen(tok)))
			return true;
	return false;
}

/* "udp_send.p99" -> PREFIX "udp_send_p99"; "magnetd.health" -> PREFIX "health" */
static char *gmond_name(apr_pool_t *p, const char *name)
{
	char *out, *c;

	if (!strncmp(name, "magnetd.", 8))
		name += 8;
	out = apr_pstrcat(p, mm.prefix, name, NULL);

	for (c = out + strlen(mm.prefix); *c; c++)
		if (*c == '.' || *c == '-')
			*c = '_';
	return out;
}

/* --- the cache ------------------------------------------------------------------ */

/* Take @raw, magnetd's value of metric @e now, into the cache. */
static void take(struct exported *e, double raw)
{
	if (e->counter && raw < e->raw)
		e->base += e->raw;	/* magnetd started counting again */
	e->raw = raw;
	e->value = e->counter ? e->base + raw : raw;
}

/* A snapshot into the cache. */
static void take_snapshot(const struct magnet_snapshot *snap)
{
	const struct magnet_metric *m;
	unsigned int i;

	pthread_mutex_lock(&mm.lock);
	for (i = 0; i < mm.n; i++) {
		m = magnet_snapshot_find(snap, mm.metric[i].magnetd_name);
		/* A metric magnetd does not have (now) reads 0. */
		take(&mm.metric[i], m ? m->value : 0);
	}
	pthread_mutex_unlock(&mm.lock);
}

/*
 * gmond loads modules as root and then drops to its user (Debian's:
 * ganglia), so the refreshes connect as that user: name it when the
 * socket's mode and group keep it out.
 */
static void log_down(int err)
{
	struct passwd *pw = getpwuid(geteuid());

	if (err == EACCES)
		err_msg("[magnet] magnetd at %s cannot be reached (%s): its socket's mode and group (magnetd.conf) do not admit gmond's user %s; magnet_health reads 0 until it is back",
			mm.socket, strerror(err), pw ? pw->pw_name : "?");
	else
		err_msg("[magnet] magnetd at %s cannot be reached (%s); magnet_health reads 0 until it is back",
			mm.socket, strerror(err));
}

static void note_health(int err)
{
	bool ok = !err;
	unsigned int i;

	pthread_mutex_lock(&mm.lock);
	mm.healthy = ok;
	for (i = 0; !ok && i < mm.n; i++)
		if (!mm.metric[i].counter)
			mm.metric[i].value = 0;
	pthread_mutex_unlock(&mm.lock);
	if (!ok && !mm.logged_down) {
		log_down(err);
		mm.logged_down = true;
	} else if (ok && mm.logged_down) {
		err_msg("[magnet] magnetd at %s is back", mm.socket);
		mm.logged_down = false;
	}
}

/*
 * Each refresh, on libmagnet's poller thread. Its wait ends at once on
 * cleanup: gmond runs module cleanups while it destroys its memory pools,
 * with its TCP thread still polling (3.7.2 does not join it first), so
 * every millisecond cleanup takes is a window for that thread to touch
 * freed memory.
 */
static void on_poll(const struct magnet_snapshot *snap, int err, void *data)
{
	(void)data;
	if (snap)
		take_snapshot(snap);
	note_health(err);
}

/* --- the module ----------------------------------------------------------------- */

static bool add_metric(apr_array_header_t *list, apr_pool_t *p,
		       const char *name, bool counter, const char *units,
		       const char *desc)
{
	const Ganglia_25metric *have = (const Ganglia_25metric *)list->elts;
	char *gname = gmond_name(p, name);
	Ganglia_25metric *gm;
	struct exported *e;
	int i;

	for (i = 0; i < list->nelts; i++) {
		if (!strcmp(have[i].name, gname)) {
			err_msg("[magnet] %s and %s both become %s in gmond: %s left out",
				mm.metric[i].magnetd_name, name, gname, name);
			return true;
		}
	}
	if (mm.n == mm.cap) {
		unsigned int cap = mm.cap ? mm.cap * 2 : 64;

		e = realloc(mm.metric, cap * sizeof(*e));
		if (!e)
			return false;
		mm.metric = e;
		mm.cap = cap;
	}
	gm = apr_array_push(list);
	memset(gm, 0, sizeof(*gm));
	gm->name = gname;
	gm->tmax = mm.tmax;
	gm->type = GANGLIA_VALUE_DOUBLE;
	gm->units = apr_pstrdup(p, units);
	gm->slope = counter ? "positive" : "both";
	gm->fmt = counter ? "%.0f" : "%.10g";
	gm->msg_size = UDP_HEADER_SIZE + 16;
	gm->desc = apr_pstrdup(p, desc);
	MMETRIC_INIT_METADATA(gm, p);
	MMETRIC_ADD_METADATA(gm, MGROUP, "magnet");
	e = &mm.metric[mm.n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->magnetd_name, sizeof(e->magnetd_name), "%s", name);
	e->counter = counter;
	return true;
}

/* Every CPU's count of each event in @snap (events have a byte_rate). */
static bool add_per_cpu(apr_array_header_t *list, apr_pool_t *p,
			const struct magnet_snapshot *snap)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	char name[160], desc[200];
	unsigned int i;
	size_t len;
	long cpu;

	for (i = 0; i < snap->nmetrics; i++) {
		const char *n = snap->metrics[i].name;

		len = strlen(n);
		if (len < 10 || strcmp(n + len - 10, ".byte_rate"))
			continue;
		for (cpu = 0; cpu < cpus; cpu++) {
			snprintf(name, sizeof(name), "%.*s.cpu%ld.count",
				 (int)(len - 10), n, cpu);
			snprintf(desc, sizeof(desc),
				 "%.*s: records of CPU %ld since magnetd started",
				 (int)(len - 10), n, cpu);
			if (wanted(name) &&
			    !add_metric(list, p, name, true, "events", desc))
				return false;
		}
	}
	return true;
}

/* A snapshot from magnetd, trying for up to mm.wait seconds: 0, or why not. */
static int first_snapshot(struct magnet_snapshot *snap)
{
	struct magnet_client *c;
	unsigned int tries;
	int err;

	for (tries = 0; ; tries++) {
		c = magnet_connect(mm.socket);
		if (c && magnet_snapshot(c, snap, SNAP_TIMEOUT_MS) == 0) {
			magnet_close(c);
			return 0;
		}
		err = errno ? errno : EIO;
		magnet_close(c);
		if (tries >= mm.wait * 4)
			return err;
		nanosleep(&(struct timespec){ 0, 250000000 }, NULL);
	}
}

static int magnet_init(apr_pool_t *p)
{
	struct magnet_snapshot snap = { 0 };
	apr_array_header_t *list;
	bool have, ok = true;
	unsigned int i;
	int err;

	if (!read_params())
		return 1;
	err = first_snapshot(&snap);
	have = !err;
	list = apr_array_make(p, 64, sizeof(Ganglia_25metric));
	ok = add_metric(list, p, HEALTH_NAME, false, "bool",
			"1 while magnetd runs with its configuration installed in the magnet module, 0 otherwise");
	for (i = 0; ok && have && i < snap.nmetrics; i++) {
		const struct magnet_metric *m = &snap.metrics[i];

		if (!strcmp(m->name, HEALTH_NAME) || !wanted(m->name) ||
		    magnet_metric_per_cpu(m->name))
			continue;
		ok = add_metric(list, p, m->name, m->type == MAGNET_COUNTER,
				m->unit, m->description);
	}
	if (ok && have && mm.per_cpu)
		ok = add_per_cpu(list, p, &snap);
	if (!ok) {
		magnet_snapshot_free(&snap);
		err_msg("[magnet] out of memory building the metric list");
		return 1;
	}
	if (!have)
		err_msg("[magnet] magnetd at %s did not answer within %u s: only magnet_health is reported (restart gmond once magnetd runs to get the other metrics)",
			mm.socket, mm.wait);
	/* gmond reads the list until a zeroed entry. */
	memset(apr_array_push(list), 0, sizeof(Ganglia_25metric));
	magnet_module.metrics_info = (Ganglia_25metric *)list->elts;
	if (have)
		take_snapshot(&snap);
	magnet_snapshot_free(&snap);
	note_health(err);
	/*
	 * The first refresh a period from now: gmond drops to its user
	 * after init, and the poller's connection must be that user's.
	 */
	mm.poller = magnet_poller_start(mm.socket, mm.refresh * 1000,
					mm.refresh * 1000, SNAP_TIMEOUT_MS,
					on_poll, NULL);
	if (!mm.poller)
		err_msg("[magnet] cannot start the refresh thread (%s): values stay as at start",
			strerror(errno));
	return 0;
}

static void magnet_cleanup(void)
{
	magnet_poller_stop(mm.poller);
	mm.poller = NULL;
	free(mm.metric);
	mm.metric = NULL;
	mm.n = 0;
	mm.cap = 0;
}

static g_val_t magnet_handler(int idx)
{
	g_val_t v;

	pthread_mutex_lock(&mm.lock);
	v.d = idx >= 0 && (unsigned int)idx < mm.n ? mm.metric[idx].value : 0;
	if (idx == 0 && !mm.healthy)
		v.d = 0;
	pthread_mutex_unlock(&mm.lock);
	return v;
}

mmodule magnet_module = {
	STD_MMODULE_STUFF,
	magnet_init,
	magnet_cleanup,
	NULL,		/* built at init */
	magnet_handler,
};

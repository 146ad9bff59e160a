// SPDX-License-Identifier: GPL-2.0
/*
 * modmagnet.so: magnet's metrics in Ganglia's gmond.
 *
 * gmond calls a module's handler from its main loop, so the handler must
 * never wait: it reads a cache. A thread of the module's own refreshes
 * the cache from magnetd's snapshots (libmagnet) every Refresh seconds,
 * reconnecting as needed. The metric list is built once, at init, from
 * what magnetd reports then (gmond freezes the list after init, as with
 * monitor-core's mod_multicpu); magnet_health is always there, and says
 * 0 while magnetd cannot be reached. If magnetd is not running at init,
 * the list holds magnet_health only, and the log says so.
 *
 * Parameters (gmond.conf, module { param NAME { value = ... } }):
 *	Socket	magnetd's socket (default /run/magnetd.sock)
 *	Prefix	put before every metric name (default "magnet_")
 *	Match	only metrics whose magnetd name starts with one of these
 *		comma-separated prefixes (default: all)
 *	Refresh	seconds between snapshots (default 5)
 *	Tmax	gmond's tmax of the metrics (default 60)
 *
 * Names: magnetd's "udp_send.p99" becomes "magnet_udp_send_p99", its own
 * "magnetd.health" "magnet_health" (dots and dashes to underscores: they read well in ganglia-web and pass
 * gmond's name rules). Counters are doubles with slope "positive"
 * (gmetad keeps them as RRD COUNTERs, so graphs show rates); gauges are
 * doubles with slope "both". Every metric is in GROUP "magnet".
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <apr_strings.h>
#include <gm_metric.h>

#include "libmagnet.h"

#define DEFAULT_PREFIX	"magnet_"
#define DEFAULT_REFRESH	5
#define DEFAULT_TMAX	60
#define INIT_TIMEOUT_MS	2000
#define SNAP_TIMEOUT_MS	5000
#define HEALTH_NAME	"magnetd.health"

mmodule magnet_module;

struct exported {
	char magnetd_name[128];		/* as magnetd names it */
	double value;			/* cached */
};

static struct {
	char socket[108];
	char prefix[32];
	char match[512];
	unsigned int refresh, tmax;

	unsigned int n;			/* exported metrics, health first */
	struct exported *metric;
	bool healthy;			/* the last snapshot worked */
	bool logged_down;		/* said so once */
	pthread_mutex_t lock;
	pthread_t thread;
	bool thread_running;
	volatile bool stop;
} mm = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* --- parameters ---------------------------------------------------------------- */

static void read_params(void)
{
	const mmparam *p;
	int i;

	snprintf(mm.socket, sizeof(mm.socket), "%s", MAGNET_SOCKET_PATH);
	snprintf(mm.prefix, sizeof(mm.prefix), "%s", DEFAULT_PREFIX);
	mm.refresh = DEFAULT_REFRESH;
	mm.tmax = DEFAULT_TMAX;
	if (!magnet_module.module_params_list)
		return;
	p = (const mmparam *)magnet_module.module_params_list->elts;
	for (i = 0; i < magnet_module.module_params_list->nelts; i++) {
		if (!strcasecmp(p[i].name, "Socket"))
			snprintf(mm.socket, sizeof(mm.socket), "%s", p[i].value);
		else if (!strcasecmp(p[i].name, "Prefix"))
			snprintf(mm.prefix, sizeof(mm.prefix), "%s", p[i].value);
		else if (!strcasecmp(p[i].name, "Match"))
			snprintf(mm.match, sizeof(mm.match), "%s", p[i].value);
		else if (!strcasecmp(p[i].name, "Refresh") && atoi(p[i].value) > 0)
			mm.refresh = atoi(p[i].value);
		else if (!strcasecmp(p[i].name, "Tmax") && atoi(p[i].value) > 0)
			mm.tmax = atoi(p[i].value);
		else
			err_msg("[magnet] unknown or bad parameter %s = \"%s\" (Socket, Prefix, Match, Refresh, Tmax)",
				p[i].name, p[i].value);
	}
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

/* One snapshot into the cache; false if magnetd could not be asked. */
static bool refresh(struct magnet_client **c)
{
	struct magnet_snapshot snap;
	const struct magnet_metric *m;
	unsigned int i;

	if (!*c)
		*c = magnet_connect(mm.socket);
	if (!*c)
		return false;
	if (magnet_snapshot(*c, &snap, SNAP_TIMEOUT_MS)) {
		magnet_close(*c);
		*c = NULL;
		return false;
	}
	pthread_mutex_lock(&mm.lock);
	for (i = 0; i < mm.n; i++) {
		m = magnet_snapshot_find(&snap, mm.metric[i].magnetd_name);
		/* A metric magnetd no longer has (a reload) reads 0. */
		mm.metric[i].value = m ? m->value : 0;
	}
	pthread_mutex_unlock(&mm.lock);
	magnet_snapshot_free(&snap);
	return true;
}

static void note_health(bool ok)
{
	pthread_mutex_lock(&mm.lock);
	mm.healthy = ok;
	if (!ok)
		mm.metric[0].value = 0;
	pthread_mutex_unlock(&mm.lock);
	if (!ok && !mm.logged_down) {
		err_msg("[magnet] magnetd at %s cannot be reached; magnet_health reads 0 until it is back",
			mm.socket);
		mm.logged_down = true;
	} else if (ok && mm.logged_down) {
		err_msg("[magnet] magnetd at %s is back", mm.socket);
		mm.logged_down = false;
	}
}

static void *refresher(void *arg)
{
	struct magnet_client *c = NULL;
	unsigned int waited;

	(void)arg;
	while (!mm.stop) {
		note_health(refresh(&c));
		for (waited = 0; waited < mm.refresh * 10 && !mm.stop; waited++)
			nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	magnet_close(c);
	return NULL;
}

/* --- the module ----------------------------------------------------------------- */

static void add_metric(apr_array_header_t *list, apr_pool_t *p,
		       const char *name, bool counter, const char *units,
		       const char *desc)
{
	Ganglia_25metric *gm = apr_array_push(list);

	memset(gm, 0, sizeof(*gm));
	gm->name = gmond_name(p, name);
	gm->tmax = mm.tmax;
	gm->type = GANGLIA_VALUE_DOUBLE;
	gm->units = apr_pstrdup(p, units);
	gm->slope = counter ? "positive" : "both";
	gm->fmt = "%.6g";
	gm->msg_size = UDP_HEADER_SIZE + 16;
	gm->desc = apr_pstrdup(p, desc);
	MMETRIC_INIT_METADATA(gm, p);
	MMETRIC_ADD_METADATA(gm, MGROUP, "magnet");
	snprintf(mm.metric[mm.n].magnetd_name,
		 sizeof(mm.metric[mm.n].magnetd_name), "%s", name);
	mm.n++;
}

static int magnet_init(apr_pool_t *p)
{
	apr_array_header_t *list;
	struct magnet_client *c;
	struct magnet_snapshot snap = { 0 };
	bool have = false;
	unsigned int i;

	read_params();
	c = magnet_connect(mm.socket);
	if (c && magnet_snapshot(c, &snap, INIT_TIMEOUT_MS) == 0)
		have = true;
	magnet_close(c);
	mm.metric = calloc(1 + (have ? snap.nmetrics : 0), sizeof(*mm.metric));
	list = apr_array_make(p, 2, sizeof(Ganglia_25metric));
	if (!mm.metric || !list) {
		magnet_snapshot_free(&snap);
		return 1;
	}
	add_metric(list, p, HEALTH_NAME, false, "bool",
		   "1 while magnetd runs with its configuration installed in the magnet module, 0 otherwise");
	for (i = 0; have && i < snap.nmetrics; i++) {
		const struct magnet_metric *m = &snap.metrics[i];

		if (strcmp(m->name, HEALTH_NAME) && wanted(m->name))
			add_metric(list, p, m->name, m->type == MAGNET_COUNTER,
				   m->unit, m->description);
	}
	magnet_snapshot_free(&snap);
	if (!have)
		err_msg("[magnet] magnetd at %s not reachable at start: only magnet_health is reported (restart gmond once magnetd runs to get the other metrics)",
			mm.socket);
	/* gmond reads the list until a zeroed entry. */
	memset(apr_array_push(list), 0, sizeof(Ganglia_25metric));
	magnet_module.metrics_info = (Ganglia_25metric *)list->elts;
	if (have) {
		c = NULL;
		have = refresh(&c);
		magnet_close(c);
	}
	note_health(have);
	if (pthread_create(&mm.thread, NULL, refresher, NULL) == 0)
		mm.thread_running = true;
	return 0;
}

static void magnet_cleanup(void)
{
	mm.stop = true;
	if (mm.thread_running)
		pthread_join(mm.thread, NULL);
	free(mm.metric);
	mm.metric = NULL;
	mm.n = 0;
}

static g_val_t magnet_handler(int idx)
{
	g_val_t v;

	pthread_mutex_lock(&mm.lock);
	v.d = idx >= 0 && (unsigned int)idx < mm.n ? mm.metric[idx].value : 0;
	if (idx == 0)
		v.d = mm.healthy ? mm.metric[0].value : 0;
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

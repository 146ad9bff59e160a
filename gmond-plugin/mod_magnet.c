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
 *	Ledger	"yes" (default): the ledger's shares (below) when it is on at
 *		init; "no": never
 *	Cgroups	comma-separated cgroup paths ("/system.slice/x.service")
 *		whose share of the CPUs the ledger gives (default: none)
 * A bad or unknown parameter fails the module's init, with a log line
 * saying which.
 *
 * The ledger (magnetctl account, magnetd.conf's ledger section): as
 * gmond's own cpu_user, cpu_system ..., each a float percentage of the
 * CPUs' time (all CPUs together: 0 to 100) over the last refresh, from
 * two of magnetd's ledger snapshots (libmagnet) subtracted:
 * PREFIX "cpu_" KIND for every kind (user, system, kthread, work,
 * hardirq, softirq, idle, overflow), PREFIX "cpu_softirq_" VECTOR for
 * every softirq (net_rx ...), PREFIX "cpu_unattributed" (no cgroup, not
 * idle), and PREFIX "cpu_cgroup_" PATH for each of Cgroups (the cgroup
 * and every cgroup below it; its path's "/", "." and "-" as "_", "/"
 * itself as "root"). They read 0 until two snapshots were taken, and
 * while the ledger is off or magnetd cannot be reached.
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

/* Where a metric's value comes from. */
enum source {
	FROM_SNAPSHOT,		/* magnetd's metric magnetd_name */
	FROM_KIND,		/* the ledger: rows of kind key */
	FROM_SOFTIRQ,		/* rows of kind softirq, vector key */
	FROM_UNATTRIBUTED,	/* rows of no cgroup, not idle */
	FROM_CGROUP,		/* rows of cgroup key and those below it */
};

struct exported {
	char magnetd_name[128];	/* as magnetd names it */
	enum source from;
	char key[256];		/* FROM_KIND, _SOFTIRQ, _CGROUP: which */
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
	bool ledger;
	char cgroups[1024];
	bool has_ledger;			/* its metrics are listed */

	struct magnet_client *ledger_client;	/* the poller thread's */
	struct magnet_ledger ledger_before;	/* the last snapshot */
	bool have_before;

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

/* A list of cgroup paths: each starts with '/', none empty. */
static bool cgroups_ok(const char *list)
{
	char copy[sizeof(mm.cgroups)], *save = NULL, *tok;
	bool any = false;

	snprintf(copy, sizeof(copy), "%s", list);
	for (tok = strtok_r(copy, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		if (tok[0] != '/')
			return false;
		any = true;
	}
	return any || !*list;
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
	mm.ledger = true;
	mm.cgroups[0] = 0;
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
		} else if (!strcasecmp(name, "Ledger")) {
			ok = !strcasecmp(value, "yes") || !strcasecmp(value, "no");
			mm.ledger = !strcasecmp(value, "yes");
			if (!ok)
				err_msg("[magnet] parameter Ledger = \"%s\": want yes or no",
					value);
		} else if (!strcasecmp(name, "Cgroups")) {
			ok = string_param(&p[i], mm.cgroups, sizeof(mm.cgroups));
			if (ok && !cgroups_ok(mm.cgroups)) {
				err_msg("[magnet] parameter Cgroups = \"%s\": want cgroup paths, each starting with '/', separated by commas",
					value);
				ok = false;
			}
		} else {
			err_msg("[magnet] unknown parameter %s (known: Socket, Prefix, Match, PerCPU, Refresh, Tmax, Wait, Ledger, Cgroups)",
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
		if (mm.metric[i].from != FROM_SNAPSHOT)
			continue;
		m = magnet_snapshot_find(snap, mm.metric[i].magnetd_name);
		/* A metric magnetd does not have (now) reads 0. */
		take(&mm.metric[i], m ? m->value : 0);
	}
	pthread_mutex_unlock(&mm.lock);
}

/* --- the ledger's shares ---------------------------------------------------------- */

/* Does row @r count towards metric @e? */
static bool row_counts(const struct exported *e,
		       const struct magnet_ledger_row *r)
{
	size_t len;

	switch (e->from) {
	case FROM_KIND:
		return !strcmp(r->kind, e->key);
	case FROM_SOFTIRQ:
		return !strcmp(r->kind, "softirq") && !strcmp(r->vector, e->key);
	case FROM_UNATTRIBUTED:
		return !r->cgroup && strcmp(r->kind, "idle");
	case FROM_CGROUP:
		if (!r->cgroup)
			return false;
		if (!strcmp(e->key, "/"))
			return true;
		len = strlen(e->key);
		return !strncmp(r->path, e->key, len) &&
		       (r->path[len] == '\0' || r->path[len] == '/');
	default:
		return false;
	}
}

/* The time of @l's rows that count towards @e, ns. */
static double ledger_sum(const struct exported *e, const struct magnet_ledger *l)
{
	double ns = 0;
	unsigned int i;

	for (i = 0; i < l->nrows; i++)
		if (row_counts(e, &l->rows[i]))
			ns += l->rows[i].ns;
	return ns;
}

static double elapsed_sum(const struct magnet_ledger *l)
{
	double ns = 0;
	unsigned int i;

	for (i = 0; i < l->ncpus; i++)
		ns += l->elapsed_ns[i];
	return ns;
}

/*
 * The ledger's metrics: what their rows gained, of what the CPUs'
 * elapsed time gained, in @gained (two snapshots subtracted; NULL: 0,
 * nothing known).
 */
static void take_ledger(const struct magnet_ledger *gained)
{
	double elapsed = gained ? elapsed_sum(gained) : 0;
	unsigned int k;

	pthread_mutex_lock(&mm.lock);
	for (k = 0; k < mm.n; k++) {
		struct exported *e = &mm.metric[k];

		if (e->from == FROM_SNAPSHOT)
			continue;
		e->value = elapsed > 0 ?
			   100 * ledger_sum(e, gained) / elapsed : 0;
	}
	pthread_mutex_unlock(&mm.lock);
}

/* @l copied whole into @c: 0, or -1 (ENOMEM, @c empty). */
static int ledger_copy(struct magnet_ledger *c, const struct magnet_ledger *l)
{
	unsigned int i;

	*c = *l;
	c->nrows = 0;
	c->elapsed_ns = calloc(l->ncpus + 1, sizeof(*c->elapsed_ns));
	c->rows = calloc(l->nrows + 1, sizeof(*c->rows));
	if (!c->elapsed_ns || !c->rows)
		goto fail;
	memcpy(c->elapsed_ns, l->elapsed_ns, l->ncpus * sizeof(*c->elapsed_ns));
	for (i = 0; i < l->nrows; i++) {
		c->rows[i] = l->rows[i];
		c->rows[i].path = l->rows[i].path ? strdup(l->rows[i].path) : NULL;
		if (l->rows[i].path && !c->rows[i].path)
			goto fail;
		c->nrows++;
	}
	return 0;
fail:
	magnet_ledger_free(c);
	errno = ENOMEM;
	return -1;
}

/*
 * A refresh of the ledger's metrics, on the poller's thread: this
 * snapshot against the one before. The client is its own, made on this
 * thread (as gmond's user) and made again after a failure.
 */
static void refresh_ledger(void)
{
	struct magnet_ledger now, gained = { 0 };

	if (!mm.ledger_client)
		mm.ledger_client = magnet_connect(mm.socket);
	if (!mm.ledger_client ||
	    magnet_ledger_snapshot(mm.ledger_client, &now, SNAP_TIMEOUT_MS)) {
		if (errno != ENODATA) {	/* (off: the connection is fine) */
			magnet_close(mm.ledger_client);
			mm.ledger_client = NULL;
		}
		magnet_ledger_free(&mm.ledger_before);
		mm.have_before = false;
		take_ledger(NULL);
		return;
	}
	/*
	 * Row by row, matched on cgroup id, kind and the rest, not on the
	 * path a restarted magnetd may name differently ("(gone)"); each
	 * row's path is the latest. Counters that went back (ESTALE): the
	 * ledger was turned off and on; 0 until the next refresh.
	 */
	if (mm.have_before && !ledger_copy(&gained, &now) &&
	    !magnet_ledger_subtract(&gained, &mm.ledger_before))
		take_ledger(&gained);
	else
		take_ledger(NULL);
	magnet_ledger_free(&gained);
	magnet_ledger_free(&mm.ledger_before);
	mm.ledger_before = now;
	mm.have_before = true;
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
	if (mm.has_ledger)
		refresh_ledger();
}

/* --- the module ----------------------------------------------------------------- */

/*
 * Metric @gname of gmond's list @list, its value from @from (@name:
 * magnetd's metric, or what the log calls it; @key: which of the
 * ledger's).
 */
static bool add_entry(apr_array_header_t *list, apr_pool_t *p, char *gname,
		      const char *name, enum source from, const char *key,
		      bool counter, const char *units, const char *desc)
{
	const Ganglia_25metric *have = (const Ganglia_25metric *)list->elts;
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
	gm->fmt = counter ? "%.0f" : from == FROM_SNAPSHOT ? "%.10g" : "%.2f";
	gm->msg_size = UDP_HEADER_SIZE + 16;
	gm->desc = apr_pstrdup(p, desc);
	MMETRIC_INIT_METADATA(gm, p);
	MMETRIC_ADD_METADATA(gm, MGROUP, "magnet");
	e = &mm.metric[mm.n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->magnetd_name, sizeof(e->magnetd_name), "%s", name);
	e->from = from;
	snprintf(e->key, sizeof(e->key), "%s", key ? key : "");
	e->counter = counter;
	return true;
}

static bool add_metric(apr_array_header_t *list, apr_pool_t *p,
		       const char *name, bool counter, const char *units,
		       const char *desc)
{
	return add_entry(list, p, gmond_name(p, name), name, FROM_SNAPSHOT,
			 NULL, counter, units, desc);
}

/* PREFIX "cpu_cgroup_" @path: "/a.slice/b-c" -> "a_slice_b_c", "/" -> "root" */
static char *cgroup_name(apr_pool_t *p, const char *path)
{
	char *out = apr_pstrcat(p, mm.prefix, "cpu_cgroup_",
				strcmp(path, "/") ? path + 1 : "root", NULL);
	char *c;

	for (c = out + strlen(mm.prefix); *c; c++)
		if (!isalnum((unsigned char)*c))
			*c = '_';
	return out;
}

/* The ledger's shares: every kind, every softirq, Cgroups'. */
static bool add_ledger(apr_array_header_t *list, apr_pool_t *p)
{
	static const char *const kinds[] = {
		"user", "system", "kthread", "work", "hardirq", "softirq",
		"idle", "overflow",
	};
	static const char *const softirqs[] = {
		"hi", "timer", "net_tx", "net_rx", "block", "irq_poll",
		"tasklet", "sched", "hrtimer", "rcu",
	};
	char list_copy[sizeof(mm.cgroups)], *save = NULL, *tok;
	unsigned int i;
	bool ok = true;

	for (i = 0; ok && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ok = add_entry(list, p,
			       apr_pstrcat(p, mm.prefix, "cpu_", kinds[i], NULL),
			       kinds[i], FROM_KIND, kinds[i], false, "%",
			       apr_psprintf(p, "Percentage of the CPUs' time the ledger charged to kind %s",
					    kinds[i]));
	for (i = 0; ok && i < sizeof(softirqs) / sizeof(softirqs[0]); i++)
		ok = add_entry(list, p,
			       apr_pstrcat(p, mm.prefix, "cpu_softirq_",
					   softirqs[i], NULL),
			       softirqs[i], FROM_SOFTIRQ, softirqs[i], false,
			       "%",
			       apr_psprintf(p, "Percentage of the CPUs' time in softirq %s, by the ledger",
					    softirqs[i]));
	if (ok)
		ok = add_entry(list, p,
			       apr_pstrcat(p, mm.prefix, "cpu_unattributed", NULL),
			       "unattributed", FROM_UNATTRIBUTED, NULL, false,
			       "%",
			       "Percentage of the CPUs' time the ledger charged to no cgroup, idle apart (kernel threads, and interrupts and work items that served none)");
	snprintf(list_copy, sizeof(list_copy), "%s", mm.cgroups);
	for (tok = strtok_r(list_copy, ", ", &save); ok && tok;
	     tok = strtok_r(NULL, ", ", &save))
		ok = add_entry(list, p, cgroup_name(p, tok), tok, FROM_CGROUP,
			       tok, false, "%",
			       apr_psprintf(p, "Percentage of the CPUs' time the ledger charged to cgroup %s and those below it",
					    tok));
	return ok;
}

/* Is the ledger on, for magnetd at init? */
static bool ledger_on(void)
{
	struct magnet_client *c = magnet_connect(mm.socket);
	struct magnet_ledger l;
	bool on;

	on = c && !magnet_ledger_snapshot(c, &l, SNAP_TIMEOUT_MS);
	if (on)
		magnet_ledger_free(&l);
	else if (c)
		err_msg("[magnet] the ledger's metrics are left out: %s (restart gmond once it is on)",
			magnet_last_error(c));
	magnet_close(c);
	return on;
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
	mm.has_ledger = ok && have && mm.ledger && ledger_on();
	if (mm.has_ledger)
		ok = add_ledger(list, p);
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
	magnet_close(mm.ledger_client);
	mm.ledger_client = NULL;
	magnet_ledger_free(&mm.ledger_before);
	mm.have_before = false;
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

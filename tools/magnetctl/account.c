// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl account: the ledger, on, off and read (see magnetctl.h and
 * lib/ledger.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"
#include "magnetctl.h"
#include "print.h"

const char help_account[] =
"The ledger (every CPU nanosecond charged to a cgroup and a kind):\n"
"  magnetctl account on [by-tgid]\n"
"      Start it, with fresh counters; by-tgid keeps a row per thread\n"
"      group too. Off by default, and then it costs nothing.\n"
"  magnetctl account off\n"
"      Stop it and drop its counters.\n"
"  magnetctl account [show] [per-cpu] [top N] [-d SECONDS [-n COUNT]]\n"
"      [cgroup-root PATH]\n"
"      The rows summed over CPUs (per-cpu: a CPU column), the largest\n"
"      first: CGROUP (its path under cgroup-root, /sys/fs/cgroup by\n"
"      default; - for no activity), TGID with by-tgid, KIND (user, system,\n"
"      kthread, work, hardirq, softirq, idle, overflow), VECTOR (a softirq's\n"
"      or irq's), NAME (a work item's function, an x86 vector's name),\n"
"      SECONDS, SHARE of the CPUs' elapsed time. Then the elapsed time,\n"
"      what went to no activity but idle (unattributed), and the residue\n"
"      (elapsed less the rows: 0 but for what was charged while it was\n"
"      read). -d SECONDS: as top, every SECONDS what each row gained in\n"
"      them, COUNT times (default until interrupted). The charging rules\n"
"      are in magnetctl(8) and the uapi header.\n";

struct account_opts {
	bool per_cpu;
	size_t top;		/* 0: every row */
	double delay;		/* 0: once */
	long count;		/* 0: until interrupted */
	const char *root;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The cgroups of the rows a table shows, named in one walk of the tree. */
struct cgroup_names {
	uint64_t *ids;		/* increasing, each once, none 0 */
	char **paths;		/* paths[i]: ids[i]'s, NULL: gone */
	size_t n;
};

static void cgroup_names_free(struct cgroup_names *c)
{
	for (size_t i = 0; c->paths && i < c->n; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->ids);
	memset(c, 0, sizeof(*c));
}

/* The paths of the cgroups of @rows[0..@n). 0, or -1 out of memory. */
static int cgroup_names_find(const struct account_opts *o,
			     const struct ledger_row *rows, size_t n,
			     struct cgroup_names *c)
{
	size_t i, k = 0;

	c->n = 0;
	c->ids = malloc((n + 1) * sizeof(*c->ids));
	c->paths = NULL;
	if (!c->ids)
		return -1;
	for (i = 0; i < n; i++)
		if (rows[i].cgroup)
			c->ids[k++] = rows[i].cgroup;
	c->n = ledger_ids_unique(c->ids, k);
	c->paths = malloc((c->n + 1) * sizeof(*c->paths));
	if (!c->paths ||
	    ledger_cgroup_paths(o->root, c->ids, c->n, c->paths)) {
		cgroup_names_free(c);	/* (the paths all NULL) */
		return -1;
	}
	return 0;
}

static void cgroup_text(const struct cgroup_names *c, uint64_t id,
			char *buf, size_t size)
{
	const uint64_t *p;

	if (!id) {
		snprintf(buf, size, "-");
		return;
	}
	p = bsearch(&id, c->ids, c->n, sizeof(*c->ids), ledger_id_order);
	if (p && c->paths[p - c->ids])
		snprintf(buf, size, "%s", c->paths[p - c->ids]);
	else
		snprintf(buf, size, "(gone) %" PRIu64, id);
}

static void print_seconds(const char *key, uint64_t ns)
{
	char text[32];

	snprintf(text, sizeof(text), "%.3f", ns / 1e9);
	print_number(PRINT_TEXT, key, text);
	print_u64(PRINT_JSON, "ns", NULL, ns);
}

/* The table of @s's rows; 0, or -1 out of memory (nothing printed). */
static int print_account(const struct account_opts *o,
			 const struct ledger_snapshot *s)
{
	uint64_t elapsed = 0, charged = 0, unattributed = 0;
	struct cgroup_names names;
	bool by_tgid = false;
	char buf[4096], share[32];
	size_t i, n = s->count;

	for (uint32_t c = 0; c < s->cpus; c++)
		elapsed += s->elapsed[c];
	for (i = 0; i < s->count; i++) {
		const struct ledger_row *r = &s->rows[i];

		charged += r->ns;
		if (!r->cgroup && r->kind != MAGNET_LEDGER_IDLE)
			unattributed += r->ns;
		by_tgid |= r->tgid != 0;
	}
	if (o->top && o->top < n)
		n = o->top;
	if (cgroup_names_find(o, s->rows, n, &names)) {
		fprintf(stderr, "%s: out of memory\n", command);
		return -1;
	}
	print_open_object(NULL);
	print_open_array("rows");
	table_begin();
	for (i = 0; i < n; i++) {
		const struct ledger_row *r = &s->rows[i];
		const char *sirq = r->kind == MAGNET_LEDGER_SOFTIRQ ?
				   ledger_softirq_name(r->vector) : NULL;

		print_row_begin();
		if (o->per_cpu)
			print_u64(PRINT_ANY, "cpu", NULL, r->cpu);
		cgroup_text(&names, r->cgroup, buf, sizeof(buf));
		print_string(PRINT_ANY, "cgroup", NULL, buf);
		print_u64(PRINT_JSON, "cgroup_id", NULL, r->cgroup);
		if (by_tgid)
			print_u64(PRINT_ANY, "tgid", NULL, r->tgid);
		print_string(PRINT_ANY, "kind", NULL, ledger_kind_name(r->kind));
		if (sirq)
			print_string(PRINT_ANY, "vector", NULL, sirq);
		else if (r->has_vector) {
			snprintf(buf, sizeof(buf), "%" PRIu32, r->vector);
			print_string(PRINT_ANY, "vector", NULL, buf);
		} else {
			print_string(PRINT_ANY, "vector", NULL, NULL);
		}
		print_string(PRINT_ANY, "name", NULL, *r->name ? r->name : NULL);
		print_seconds("seconds", r->ns);
		snprintf(share, sizeof(share), "%.2f%%",
			 elapsed ? 100.0 * r->ns / elapsed : 0.0);
		print_string(PRINT_TEXT, "share", NULL, share);
		print_row_end();
	}
	table_end();
	cgroup_names_free(&names);
	print_close_array();
	print_u64(PRINT_JSON, "cpus", NULL, s->cpus);
	print_u64(PRINT_JSON, "elapsed_ns", NULL, elapsed);
	print_u64(PRINT_JSON, "unattributed_ns", NULL, unattributed);
	print_u64(PRINT_JSON, "charged_ns", NULL, charged);
	print_close_object();
	if (!print_is_json())
		printf("elapsed %.3f s on %u CPUs; unattributed %.3f s (%.2f%%); residue %" PRId64 " ns (%.4f%%)\n",
		       elapsed / 1e9, s->cpus, unattributed / 1e9,
		       elapsed ? 100.0 * unattributed / elapsed : 0.0,
		       (int64_t)(elapsed - charged),
		       elapsed ? 100.0 * ((double)elapsed - charged) / elapsed :
		       0.0);
	else
		putchar('\n');
	fflush(stdout);
	return 0;
}

/* @s's rows, less @before's if given, summed over CPUs unless per-cpu. */
static int shown(const struct account_opts *o, const struct ledger_snapshot *s,
		 const struct ledger_snapshot *before,
		 struct ledger_snapshot *out)
{
	out->rows = malloc((s->count + 1) * sizeof(*s->rows));
	out->elapsed = malloc((s->cpus + 1) * sizeof(*s->elapsed));
	if (!out->rows || !out->elapsed) {
		fprintf(stderr, "%s: out of memory\n", command);
		return -1;
	}
	memcpy(out->rows, s->rows, s->count * sizeof(*s->rows));
	memcpy(out->elapsed, s->elapsed, s->cpus * sizeof(*s->elapsed));
	out->count = out->alloc = s->count;
	out->cpus = s->cpus;
	if (before && ledger_subtract(out, before)) {
		fprintf(stderr, "%s: out of memory\n", command);
		return -1;
	}
	if (!o->per_cpu)
		ledger_sum_cpus(out);
	return 0;
}

double parse_seconds(const char *word)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(word, &end);
	if (errno || *end || !(v >= 0.01) || v > 86400)
		usage_error("%s: bad interval \"%s\": seconds, 0.01 to 86400",
			    command, word);
	return v;
}

static long parse_count(const char *word, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(word, &end, 10);
	if (errno || *end || v < 1)
		usage_error("%s: bad %s \"%s\": a number, 1 or more", command,
			    what, word);
	return v;
}

static int account_show(struct args *a)
{
	static const char root_default[] = LEDGER_ROOT_DEFAULT;
	struct account_opts o = { .root = root_default };
	struct ledger_snapshot now = { 0 }, before = { 0 }, view = { 0 }, tmp;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *w;
	int ret;

	while (more(a)) {
		w = next_word(a);
		if (!strcmp(w, "per-cpu"))
			o.per_cpu = true;
		else if (!strcmp(w, "top"))
			o.top = parse_count(take_value(a, w), "row count");
		else if (!strcmp(w, "-d"))
			o.delay = parse_seconds(take_value(a, w));
		else if (!strcmp(w, "-n"))
			o.count = parse_count(take_value(a, w), "count");
		else if (!strcmp(w, "cgroup-root"))
			o.root = take_value(a, w);
		else
			unknown_keyword(w);
	}
	if (o.count && !o.delay)
		usage_error("%s: -n counts refreshes: give -d SECONDS too",
			    command);
	/* (not the default: where no cgroup2 is mounted there, ids show) */
	if (o.root != root_default && ledger_root_check(o.root))
		usage_error("%s: cgroup-root %s: %s", command, o.root,
			    ledger_root_strerror(errno));
	if (!o.delay) {
		ret = ledger_read(nl, &now) ? print_nl_error() :
		      shown(&o, &now, NULL, &view);
		if (!ret)
			ret = print_account(&o, &view);
		ledger_free(&view);
		ledger_free(&now);
		return ret;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (ledger_read(nl, &before))
		return print_nl_error();
	ret = 0;
	for (long i = 0; !stop && (!o.count || i < o.count); i++) {
		struct timespec ts = {
			.tv_sec = (time_t)o.delay,
			.tv_nsec = (long)((o.delay - (time_t)o.delay) * 1e9),
		};

		while (nanosleep(&ts, &ts) && errno == EINTR && !stop)
			;
		if (stop)
			break;
		if (ledger_read(nl, &now)) {
			ret = print_nl_error();
			break;
		}
		ret = shown(&o, &now, &before, &view);
		if (ret)
			break;
		if (!print_is_json() && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		ret = print_account(&o, &view);
		ledger_free(&view);
		if (ret)
			break;
		/* this reading starts the next interval */
		tmp = before;
		before = now;
		now = tmp;
	}
	ledger_free(&view);
	ledger_free(&now);
	ledger_free(&before);
	return ret;
}

int account(struct args *a)
{
	const char *w = more(a) ? a->word[0] : "show";
	bool by_tgid = false;

	if (!strcmp(w, "on") || !strcmp(w, "off")) {
		next_word(a);
		if (!strcmp(w, "on") && more(a)) {
			const char *k = next_word(a);

			if (strcmp(k, "by-tgid"))
				unknown_keyword(k);
			by_tgid = true;
		}
		no_more_args(a);
		if (ledger_set(nl, !strcmp(w, "on"), by_tgid, false))
			return print_nl_error();
		return 0;
	}
	if (!strcmp(w, "show"))
		next_word(a);
	return account_show(a);
}

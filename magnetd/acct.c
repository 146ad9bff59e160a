// SPDX-License-Identifier: GPL-2.0
/*
 * Per-call costs of processes (MAGNET_CMD_ACCT_*) as magnetd serves
 * them: the processes magnetd.conf's acct section names are watched,
 * found by name in /proc at attach and every rescan seconds, and every
 * watch the kernel has is read at each scrape (exposition.c), through
 * lib/acctwatch.c.
 *
 * magnetd's watches are owned by its socket (MAGNET_A_OWNED), so the
 * kernel ends them should magnetd be killed; it ends them itself when it
 * lets go of the module, when a reload drops their name, and once their
 * process has exited (its series then go). A process watched by someone
 * else (magnetctl acct watch) is served, never ended.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetd.h"
#include "acctwatch.h"
#include "nl.h"

static bool wanted(const struct config_acct *ca, const char *comm)
{
	for (unsigned int i = 0; i < ca->nprocess; i++)
		if (!strcmp(ca->process[i], comm))
			return true;
	return false;
}

static int ours(const struct daemon *d, uint32_t pid)
{
	for (unsigned int i = 0; i < d->nacct; i++)
		if (d->acct_pid[i] == pid)
			return i;
	return -1;
}

static void forget(struct daemon *d, unsigned int i)
{
	d->acct_pid[i] = d->acct_pid[--d->nacct];
}

/* Stop watching our i-th, logged (@why: the reason). */
static void stop_one(struct daemon *d, unsigned int i, const char *why)
{
	uint32_t pid = d->acct_pid[i];

	/* ENOENT: it ended meanwhile (a module reload); nothing to do */
	if (acct_watch_set(d->ledger_nl, pid, false, false) &&
	    nl_err(d->ledger_nl)->error != ENOENT)
		log_error("acct: stopping the watch of %u: %s", pid,
			  nl_err(d->ledger_nl)->text);
	else
		log_info("acct: %u no longer watched (%s)", pid, why);
	forget(d, i);
}

/* Watch @pid, named @comm, if nobody does. */
static void start_one(struct daemon *d, uint32_t pid, const char *comm)
{
	const struct nl_error *e;

	if (d->nacct >= MAGNET_ACCT_WATCHES)
		return;
	if (!acct_watch_set(d->ledger_nl, pid, true, true)) {
		d->acct_pid[d->nacct++] = pid;
		log_info("acct: watching %u (%s)", pid, comm);
		return;
	}
	e = nl_err(d->ledger_nl);
	/* watched by someone else (served as it is), or gone already */
	if (e->kernel && (e->error == EALREADY || e->error == ESRCH))
		return;
	if (!d->acct_warned)
		log_error("acct: watching %u (%s): %s", pid, comm, e->text);
	d->acct_warned = true;
}

void acct_scan(struct daemon *d)
{
	const struct config_acct *ca = &d->cfg->acct;
	struct acct_watches ws = { 0 };
	char comm[ACCT_COMM_LEN];
	struct dirent *de;
	DIR *dir;

	if (!d->attached || d->released)
		return;
	/* ours that exited, or whose name the configuration dropped */
	if (d->nacct && !acct_watch_read(d->ledger_nl, 0, &ws)) {
		for (unsigned int i = d->nacct; i-- > 0;) {
			struct acct_watch *w = acct_watch_find(&ws, d->acct_pid[i]);

			if (!w)
				forget(d, i);	/* (ended by someone else) */
			else if (w->exited)
				stop_one(d, i, "it exited");
			else if (!wanted(ca, w->comm))
				stop_one(d, i, "not named in the acct section");
		}
	}
	acct_watches_free(&ws);
	if (!ca->nprocess)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	while ((de = readdir(dir)) && d->nacct < MAGNET_ACCT_WATCHES) {
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (!isdigit((unsigned char)de->d_name[0]) || *end ||
		    !pid || pid > UINT32_MAX || ours(d, pid) >= 0)
			continue;
		if (acct_comm(pid, comm, sizeof(comm)) && wanted(ca, comm))
			start_one(d, pid, comm);
	}
	closedir(dir);
}

void acct_tick(struct daemon *d)
{
	unsigned int every = d->cfg->acct.rescan_s / d->cfg->metrics.interval_s;

	if (!d->cfg->acct.nprocess && !d->nacct)
		return;
	if (++d->acct_ticks >= (every ? every : 1)) {
		d->acct_ticks = 0;
		acct_scan(d);
	}
}

void acct_stop(struct daemon *d)
{
	while (d->nacct)
		stop_one(d, d->nacct - 1, "magnetd let go of the module");
}

void acct_module_gone(struct daemon *d)
{
	/* the module's watches went with it */
	d->nacct = 0;
}

int acct_read(struct daemon *d, struct acct_watches *ws)
{
	if (acct_watch_read(d->ledger_nl, 0, ws)) {
		acct_watches_free(ws);
		return -1;
	}
	return 0;
}

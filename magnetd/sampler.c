// SPDX-License-Identifier: GPL-2.0
/*
 * The ticks of magnetd.conf's cpu.sample probes, summed per process with
 * lib/steal.c's rules (the same as magnet-read --profile's): the time
 * each tick found a process running (apparent time), the blank time
 * charged to it (reported as steal by the kernel, or not), what no
 * process can be charged with, and the idle task's time, which is never
 * steal. exposition.c serves them as Prometheus counters.
 *
 * A tick is judged against its CPU's previous tick of the same probe.
 * The jitter margin is the one magnet-read computes over a whole
 * capture, here over the last MARGIN_TICKS ticks, recomputed every
 * MARGIN_EVERY: four times the ticks' median distance from the period, a
 * tenth of the period at least. A process's name is read from
 * /proc/PID/comm when its first tick is read, and kept.
 *
 * Memory is bounded: at most metrics.max-tgids processes per probe; a
 * new one evicts the one of least apparent time, and its series go.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "magnetd.h"
#include "steal.h"

#define MARGIN_TICKS	1024
#define MARGIN_EVERY	128

struct cpu_slot {
	bool valid;
	struct steal_tick t;
};

struct sampler {
	char name[MAGNET_NAME_LEN];
	struct sampler_view v;
	struct sampled_process *procs;	/* by tgid */
	size_t cap;
	struct cpu_slot *cpu;
	unsigned int ncpus;
	uint64_t dev[MARGIN_TICKS];	/* |since - period| */
	unsigned int ndev, next_dev, since_margin;
};

struct samplers {
	struct sampler **s;
	unsigned int n;
};

static void update_margin(struct sampler *s)
{
	uint64_t tmp[MARGIN_TICKS];

	memcpy(tmp, s->dev, s->ndev * sizeof(*tmp));
	s->v.margin_ns = steal_margin_of(s->v.period_ns, tmp, s->ndev);
	s->since_margin = 0;
}

static void note_deviation(struct sampler *s, uint64_t since)
{
	s->dev[s->next_dev] = steal_deviation(since, s->v.period_ns);
	s->next_dev = (s->next_dev + 1) % MARGIN_TICKS;
	if (s->ndev < MARGIN_TICKS)
		s->ndev++;
	/* at first at every tick, until there are MARGIN_EVERY */
	if (++s->since_margin >= MARGIN_EVERY || s->ndev < MARGIN_EVERY)
		update_margin(s);
}

static void read_comm(uint32_t tgid, char comm[SAMPLED_COMM_LEN])
{
	char path[32];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, SAMPLED_COMM_LEN - 1);
		close(fd);
	}
	if (n < 0)
		n = 0;
	comm[n] = '\0';
	if (n && comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

/* @tgid's entry, made if new (evicting the least sampled); NULL: no memory */
static struct sampled_process *process(struct sampler *s, uint32_t tgid,
				       unsigned int max)
{
	size_t lo = 0, hi = s->v.nprocs, i;
	struct sampled_process *p;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->procs[mid].tgid == tgid)
			return &s->procs[mid];
		if (s->procs[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->v.nprocs >= max) {
		size_t least = 0;

		for (i = 1; i < s->v.nprocs; i++)
			if (s->procs[i].apparent_ns <
			    s->procs[least].apparent_ns)
				least = i;
		memmove(&s->procs[least], &s->procs[least + 1],
			(s->v.nprocs - least - 1) * sizeof(*s->procs));
		s->v.nprocs--;
		s->v.evicted++;
		if (least < lo)
			lo--;
	}
	if (s->v.nprocs == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;

		p = realloc(s->procs, cap * sizeof(*p));
		if (!p)
			return NULL;
		s->procs = p;
		s->cap = cap;
	}
	p = &s->procs[lo];
	memmove(p + 1, p, (s->v.nprocs - lo) * sizeof(*p));
	s->v.nprocs++;
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	read_comm(tgid, p->comm);
	s->v.procs = s->procs;
	return p;
}

static struct sampler *find(struct samplers *ss, const char *name, bool make)
{
	struct sampler **n, *s;
	unsigned int i;

	for (i = 0; i < ss->n; i++)
		if (!strcmp(ss->s[i]->name, name))
			return ss->s[i];
	if (!make)
		return NULL;
	s = calloc(1, sizeof(*s));
	n = realloc(ss->s, (ss->n + 1) * sizeof(*n));
	if (!s || !n) {
		free(s);
		if (n)
			ss->s = n;
		return NULL;
	}
	ss->s = n;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->v.event = s->name;
	ss->s[ss->n++] = s;
	return s;
}

static struct cpu_slot *cpu_slot(struct sampler *s, uint32_t cpu)
{
	struct cpu_slot *c;
	unsigned int n;

	if (cpu >= CPUS_MAX)
		return NULL;
	if (cpu >= s->ncpus) {
		n = cpu + 1 > 2 * s->ncpus ? cpu + 1 : 2 * s->ncpus;
		c = realloc(s->cpu, n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + s->ncpus, 0, (n - s->ncpus) * sizeof(*c));
		s->cpu = c;
		s->ncpus = n;
	}
	return &s->cpu[cpu];
}

void sampler_record(struct daemon *d, const struct magnet_record *rec)
{
	const struct magnet_sample *m = (const void *)rec->payload;
	const char *name;
	struct sampled_process *p = NULL;
	struct steal_gap g;
	struct steal_tick t;
	struct cpu_slot *c;
	struct sampler *s;

	if (!(rec->flags & MAGNET_RF_SAMPLE) || rec->event > MAGNET_EVENT_ID_MAX ||
	    rec->size < sizeof(*rec) + sizeof(*m))
		return;
	name = d->event_name[rec->event];
	if (!name)
		return;
	if (!d->samplers) {
		d->samplers = calloc(1, sizeof(*d->samplers));
		if (!d->samplers)
			return;
	}
	s = find(d->samplers, name, true);
	if (!s)
		return;
	t = (struct steal_tick){
		.tgid = rec->tgid, .tid = rec->tid, .flags = m->flags,
		.since = m->since, .steal = m->steal,
	};
	if (m->period != s->v.period_ns) {	/* a new probe, or the first */
		s->v.period_ns = m->period;
		s->ndev = s->next_dev = 0;
		s->v.margin_ns = steal_margin(m->period, 0);
	}
	if (!(t.flags & MAGNET_SAMPLE_F_FIRST))
		note_deviation(s, t.since);
	c = cpu_slot(s, rec->cpu);
	steal_judge(c && c->valid ? &c->t : NULL, &t, s->v.period_ns,
		    s->v.margin_ns, &g);
	s->v.ticks++;
	if (t.flags & MAGNET_SAMPLE_F_IDLE) {
		s->v.idle_ns += t.since;
	} else {
		p = process(s, t.tgid, d->cfg->metrics.max_tgids);
		if (p)
			p->apparent_ns += t.since;
	}
	if (g.blank && !g.idle) {
		uint64_t *to = g.process && p ? p->steal_ns :
					       s->v.unattributed_ns;

		to[0] += g.reported;
		to[1] += g.blank - g.reported;
	}
	if (c) {
		c->valid = true;
		c->t = t;
	}
}

void sampler_detach(struct daemon *d)
{
	unsigned int i;

	for (i = 0; d->samplers && i < d->samplers->n; i++)
		if (d->samplers->s[i]->cpu)
			memset(d->samplers->s[i]->cpu, 0,
			       d->samplers->s[i]->ncpus * sizeof(struct cpu_slot));
}

static void sampler_free(struct sampler *s)
{
	free(s->procs);
	free(s->cpu);
	free(s);
}

void sampler_sweep(struct daemon *d, const struct config *cfg)
{
	struct samplers *ss = d->samplers;
	unsigned int i, k, n = 0;

	for (i = 0; ss && i < ss->n; i++) {
		for (k = 0; k < cfg->nprobes; k++)
			if (!strcmp(cfg->probes[k].name, ss->s[i]->name))
				break;
		if (k < cfg->nprobes)
			ss->s[n++] = ss->s[i];
		else
			sampler_free(ss->s[i]);
	}
	if (ss)
		ss->n = n;
}

size_t samplers_count(const struct samplers *ss)
{
	return ss ? ss->n : 0;
}

const struct sampler_view *samplers_view(const struct samplers *ss, size_t i)
{
	return &ss->s[i]->v;
}

void sampler_free_all(struct daemon *d)
{
	unsigned int i;

	for (i = 0; d->samplers && i < d->samplers->n; i++)
		sampler_free(d->samplers->s[i]);
	if (d->samplers)
		free(d->samplers->s);
	free(d->samplers);
	d->samplers = NULL;
}

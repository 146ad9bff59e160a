// SPDX-License-Identifier: GPL-2.0
/*
 * --perfetto FILE: the packets' journeys as a timeline, in Chrome's JSON
 * trace-event format ("Trace Event Format", the JSON Object Format), which
 * Perfetto (ui.perfetto.dev), chrome://tracing and speedscope open.
 *
 * - One process, "magnet packet journeys"; one track (a "thread") per CPU,
 *   named "CPU N". Of several -r files (nodes.c), a process per node,
 *   named by its host, and a packet's flow goes from one to the other. A layer's slice ("X", complete event) lasts from its
 *   record to the next layer's, on the CPU its record was logged on, but
 *   for the last nanosecond: viewers add ts and dur as doubles, and a sum
 *   a rounding past the next slice's start nests that slice in this one
 *   (speedscope did); the last layer's is an instant of zero length.
 *   Its args: the packet, the
 *   layer's context, process and thread, device, microseconds since the
 *   layer before, and the packet's number.
 * - Viewers want the slices of one track nested, never overlapping; the
 *   layers of packets in flight together do overlap. So a CPU has lanes:
 *   "CPU N", "CPU N (2)", ...; a slice goes on the first lane of its CPU
 *   that is free from its start (each packet's slices in time order).
 * - A flow ("s" at the first layer, "f" at the last, bound to the slice
 *   that encloses it) per packet of more than one layer: the arrow from
 *   the send to the receive, across CPUs.
 * - Times: microseconds, with nanoseconds as decimals, since the first
 *   packet's first layer (small numbers keep a double's precision); the
 *   first's wall clock time is in otherData.origin_unix_ns.
 *
 * Written by hand: the format is a JSON array of small objects, and
 * json.c writes the strings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "magnet-read.h"

#define PID		1		/* + the node */
#define LANES_MAX	64		/* per CPU; beyond: the last lane */
#define NODE_CPUS	4096		/* lanes: node * NODE_CPUS + CPU */

struct lane {
	uint64_t free_from;		/* ns: the end of its last slice */
	bool named;
};

struct timeline {
	FILE *f;
	const char *path;
	bool started;			/* origin set */
	uint64_t origin;		/* ns, wall clock */
	unsigned long long packets;
	struct lane *lanes;		/* [cpu * LANES_MAX + lane] */
	unsigned int ncpus;
	const char *const *nodes;	/* several -r files: their names */
	unsigned int nnodes;
	bool named[NODES_MAX];		/* its process_name written */
};

void timeline_nodes(struct timeline *t, const char *const *names,
		    unsigned int n)
{
	t->nodes = names;
	t->nnodes = n;
}

/* The process of node @node's tracks, named once */
static int node_pid(struct timeline *t, unsigned int node)
{
	if (t->nnodes > 1 && node < t->nnodes && !t->named[node]) {
		fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"name\":\"process_name\",\"args\":{\"name\":",
			PID + node);
		json_string(t->f, t->nodes[node]);
		fputs("}}", t->f);
		t->named[node] = true;
	}
	return t->nnodes > 1 && node < t->nnodes ? PID + (int)node : PID;
}

struct timeline *timeline_create(const char *path)
{
	struct timeline *t = xcalloc(1, sizeof(*t));

	t->path = path;
	t->f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!t->f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		free(t);
		return NULL;
	}
	fprintf(t->f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		"{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"magnet packet journeys\"}}",
		PID);
	return t;
}

/* Microseconds since the origin, to the nanosecond. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

/*
 * The lane (a track id) of CPU @cpu of node @node (its process @pid) free
 * from @from, taken until @to.
 */
static unsigned int lane(struct timeline *t, unsigned int node, int pid,
			 unsigned int cpu, uint64_t from, uint64_t to)
{
	unsigned int name = cpu;
	struct lane *l;
	unsigned int i;

	if (t->nnodes > 1)
		cpu = node * NODE_CPUS + cpu % NODE_CPUS;

	if (cpu >= t->ncpus) {
		unsigned int n = cpu + 1;

		t->lanes = realloc(t->lanes, (size_t)n * LANES_MAX * sizeof(*l));
		if (!t->lanes) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		memset(t->lanes + (size_t)t->ncpus * LANES_MAX, 0,
		       (size_t)(n - t->ncpus) * LANES_MAX * sizeof(*l));
		t->ncpus = n;
	}
	l = t->lanes + (size_t)cpu * LANES_MAX;
	for (i = 0; i < LANES_MAX - 1 && l[i].named && l[i].free_from > from; i++)
		;
	if (!l[i].named) {
		/* track ids: CPU N's lanes N * LANES_MAX + i, sorted so */
		fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":\"CPU %u",
			pid, cpu * LANES_MAX + i, name);
		if (i)
			fprintf(t->f, " (%u)", i + 1);
		fprintf(t->f, "\"}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
			pid, cpu * LANES_MAX + i, cpu * LANES_MAX + i);
		l[i].named = true;
	}
	if (l[i].free_from < to)
		l[i].free_from = to;
	return cpu * LANES_MAX + i;
}

int timeline_packet(struct timeline *t, const struct journey *j,
		    int64_t offset)
{
	unsigned int tids[MAGNET_LAYER_COUNT];
	int pids[MAGNET_LAYER_COUNT];
	char *summary;
	uint64_t id;

	if (!j->nhops || j->bare)
		return 0;
	if (!t->started) {
		t->origin = j->hop[0].ts + offset;
		t->started = true;
	}
	id = ++t->packets;
	summary = packet_summary(j);
	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];
		uint64_t ts = h->ts + offset - t->origin;
		uint64_t end = i + 1 < j->nhops ? j->hop[i + 1].ts + offset - t->origin : ts;
		uint64_t dur = end > ts ? end - ts - 1 : 0;	/* see above */
		const char *ctx = context(h->rflags);

		if (h->ts + offset < t->origin)
			ts = end = 0;	/* before the first packet: clamp */
		pids[i] = node_pid(t, h->node);
		tids[i] = lane(t, h->node, pids[i], h->cpu, ts, end);
		fprintf(t->f, ",\n{\"ph\":\"X\",\"cat\":\"packet\",\"name\":");
		json_string(t->f, layer_name(h->layer, j->proto));
		fprintf(t->f, ",\"pid\":%d,\"tid\":%u,\"ts\":", pids[i], tids[i]);
		put_us(t->f, ts);
		fputs(",\"dur\":", t->f);
		put_us(t->f, dur);
		fputs(",\"args\":{\"packet\":", t->f);
		json_string(t->f, summary);
		fprintf(t->f, ",\"packet_id\":%llu,\"cpu\":%u,\"tgid\":%u,\"tid\":%u",
			(unsigned long long)id, h->cpu, h->tgid, h->tid);
		if (*ctx) {
			fputs(",\"context\":", t->f);
			json_string(t->f, ctx);
		}
		if (h->dev[0]) {
			fputs(",\"dev\":", t->f);
			json_string(t->f, h->dev);
		}
		if (i) {
			fputs(",\"delta_us\":", t->f);
			put_us(t->f, h->ts - j->hop[i - 1].ts);
		}
		fputs("}}", t->f);
	}
	if (j->nhops > 1) {
		const struct hop *a = &j->hop[0], *b = &j->hop[j->nhops - 1];
		uint64_t ta = a->ts + offset >= t->origin ? a->ts + offset - t->origin : 0;
		uint64_t tb = b->ts + offset >= t->origin ? b->ts + offset - t->origin : 0;

		fprintf(t->f, ",\n{\"ph\":\"s\",\"cat\":\"journey\",\"name\":\"journey\",\"id\":%llu,\"pid\":%d,\"tid\":%u,\"ts\":",
			(unsigned long long)id, pids[0], tids[0]);
		put_us(t->f, ta);
		fprintf(t->f, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"journey\",\"name\":\"journey\",\"id\":%llu,\"pid\":%d,\"tid\":%u,\"ts\":",
			(unsigned long long)id, pids[j->nhops - 1], tids[j->nhops - 1]);
		put_us(t->f, tb);
		fputc('}', t->f);
	}
	free(summary);
	if (ferror(t->f)) {
		fprintf(stderr, PROG ": %s: %s\n", t->path, strerror(errno));
		return -1;
	}
	return 1;
}

int timeline_close(struct timeline *t)
{
	int ret = 0;

	if (!t)
		return 0;
	fprintf(t->f, "\n],\"otherData\":{\"producer\":\"magnet-read " MAGNET_VERSION "\",\"packets\":%llu,\"origin_unix_ns\":\"%" PRIu64 "\"}}\n",
		t->packets, t->origin);
	if (fflush(t->f) || (t->f != stdout && fclose(t->f))) {
		fprintf(stderr, PROG ": %s: %s\n", t->path, strerror(errno));
		ret = -1;
	}
	free(t->lanes);
	free(t);
	return ret;
}

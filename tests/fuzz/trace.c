// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: a trace file, read as magnet-read -r reads one (input.c:
 * the header, records cut at any byte), its records merged by time and
 * assembled into packet journeys (journey.c), matched against a filter
 * expression (expr.c), and printed as text or JSON with the hop statistics
 * (output.c) and as pcapng (pcapng.c), all into /dev/null; the pcapng
 * written is then read back (pcapng.c's reader); block I/O journeys
 * (blockio.c) printed; application spans, packets and block I/O as spans
 * (spans.c), written as OTLP/JSON and Zipkin JSON (lib/otel.c). Or a
 * pcapng (or pcap) file, read as -r reads one: each packet a journey,
 * printed.
 *
 * Input: two bytes of options (below), then the file. The loop is
 * magnet-read.c's for a file: take what source_next() hands out, release
 * it in time order, show it, and at the end whatever is left.
 *
 * Or, with O_NODES, two nodes' trace files read as one (nodes.c: the
 * clocks estimated from the packets both saw, a packet sent by one and
 * received by the other one journey), as magnet-read -r A -r B: the
 * options, the first file's length (4 bytes, little-endian), the first
 * file, the second.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "magnet-read.h"
#include "otel.h"

/* options, first byte */
#define O_JSON		0x01
#define O_QUIET		0x02
#define O_HEX		0x04
#define O_FILTER	0x18	/* which of filters[] */
#define O_PCAPNG	0x20
#define O_SNAP64	0x40	/* -s 64 */
#define O_TIMEOUT1	0x80	/* --journey-timeout 1 */
/* second byte */
#define O_NAMES		0x01	/* not -n: names from /etc/hosts, /etc/services */
#define O_NODES		0x02	/* two nodes' files (above) */

static FILE *devnull;
static struct expr *filters[4];	/* [0]: none */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *exprs[] = {
		NULL,
		"udp or tcp port 5201",
		"not ip6 and (greater 100 or tcp[tcpflags] & tcp-ack != 0)",
		"inbound or ifindex 1 or src net 10.0.0.0/8 or ip[8] = 64",
	};
	static const uint32_t tgid = 1000;
	static const uint8_t cpus = 0x1;
	const struct expr_select sel[] = {
		{}, {}, { .tgids = &tgid, .ntgids = 1 },
		{ .cpus = &cpus, .cpus_len = 1 },
	};
	char err[256];

	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	for (int i = 1; i < 4; i++)
		if (expr_compile(exprs[i], &sel[i], &filters[i], err,
				 sizeof(err))) {
			fprintf(stderr, "fuzz-trace: \"%s\": %s\n", exprs[i], err);
			abort();
		}
	return 0;
}

struct run {
	struct options o;
	struct merge *merge;
	struct journeys *js;
	struct hops *hops;
	struct pcapng *pcap;
	struct spans *spans;
	int64_t offset;
};

static void show_packet(struct run *r, struct journey *j)
{
	struct sighting s[MAGNET_LAYER_COUNT];
	unsigned int n;
	char *comment;

	if (!expr_match_journey(r->o.filter, j))
		return;
	hops_add(r->hops, j);
	if (r->spans)
		spans_packet(r->spans, j);
	if (r->o.json)
		json_packet(devnull, j);
	else
		print_packet(devnull, j);
	if (!r->pcap)
		return;
	comment = journey_comment(j);
	s[0] = cooked_nowhere(j);
	n = cooked_sightings(j, s);
	pcapng_write(r->pcap, j, r->offset, comment, s, n ? n : 1);
	free(comment);
}

/* A pcapng (or pcap) file: every packet, printed (and matched). */
static void read_packets(struct run *r, FILE *f, const char *path,
			 const uint8_t *head, size_t n)
{
	struct pcapng_in *in = pcapng_open_read(f, path, head, n);
	struct journey *j;

	while (in && pcapng_read(in, &j) > 0) {
		show_packet(r, j);
		item_free(&j->item);
	}
	pcapng_close_read(in);
}

static void show(struct run *r, struct item *it)
{
	bool print = !r->o.quiet;

	switch (it->kind) {
	case ITEM_LOSS:
		if (print)
			(r->o.json ? json_loss : print_loss)(devnull, it->rec);
		break;
	case ITEM_RECORD:
		if (!expr_match_record(r->o.filter, it->rec))
			break;
		spans_record(r->spans, it->rec);
		if (is_span_record(it->rec))
			(r->o.json ? json_span : print_span)(devnull, it->rec);
		else if (print)
			(r->o.json ? json_record : print_record)(devnull, it->rec);
		break;
	case ITEM_PACKET:
		show_packet(r, item_journey(it));
		break;
	case ITEM_BLOCK:
		if (!expr_match_block(r->o.filter, item_blockio(it)))
			break;
		spans_block(r->spans, item_blockio(it));
		(r->o.json ? json_block : print_block)(devnull, item_blockio(it));
		break;
	}
}

static void emit(struct run *r)
{
	struct item *it;

	while ((it = journeys_next(r->js))) {
		show(r, it);
		item_free(it);
	}
}

static void release(struct run *r, uint64_t horizon)
{
	struct item *it;

	while ((it = merge_pop(r->merge, horizon, NULL))) {
		journeys_add(r->js, it);
		emit(r);
	}
}

static void take(struct run *r, const char *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct magnet_record *rec = (const void *)(data + off);
		struct item *it = item_new(rec);

		if (merge_add(r->merge, it->ts, it))
			abort();
		off += MAGNET_RECORD_LEN(rec->size);
	}
	release(r, merge_newest(r->merge));
}

/* A memfd holding @size bytes of @data, its /proc path in @path */
static int memfd_of(const uint8_t *data, size_t size, char path[64])
{
	int fd = memfd_create("trace", MFD_CLOEXEC);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, 64, "/proc/self/fd/%d", fd);
	return fd;
}

/* O_NODES: two files, one stream (magnet-read.c's read_nodes()) */
static void read_nodes(struct run *r, const uint8_t *data, size_t size)
{
	const char *files[2], *names[2];
	struct otel_out *otlp;
	char paths[2][64];
	struct nodes *ns;
	struct item *it;
	uint32_t first;
	int fds[2];

	if (size < 4)
		return;
	first = data[0] | data[1] << 8 | data[2] << 16 | (uint32_t)data[3] << 24;
	data += 4;
	size -= 4;
	if (first > size)
		first = size;
	fds[0] = memfd_of(data, first, paths[0]);
	fds[1] = memfd_of(data + first, size - first, paths[1]);
	files[0] = paths[0];
	files[1] = paths[1];
	r->o.read_files = files;
	r->o.nread_files = 2;
	ns = nodes_open(&r->o);
	if (ns) {
		for (unsigned int k = 0; k < 2; k++)
			names[k] = nodes_host(ns, k) ? nodes_host(ns, k) : files[k];
		output_init(&r->o, true, 0);
		output_nodes(names, 2);
		r->hops = hops_new();
		r->spans = spans_new(0, false);
		otlp = otel_new(devnull, OTEL_OTLP_JSON, NULL, "fuzz", NULL, 4);
		spans_output(r->spans, otlp);
		for (unsigned int k = 0; k < 2; k++)
			spans_node(r->spans, k, nodes_host(ns, k));
		while ((it = nodes_next(ns))) {
			show(r, it);
			item_free(it);
		}
		nodes_summary(ns, devnull, r->o.json);
		(r->o.json ? hops_json : hops_print)(r->hops, devnull);
		spans_end(r->spans);
		otel_close(otlp);
		spans_free(r->spans);
		hops_free(r->hops);
		output_nodes(NULL, 0);
	}
	nodes_close(ns);
	close(fds[0]);
	close(fds[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r = {};
	struct otel_out *otlp, *zipkin;
	struct source *src;
	const char *chunk;
	char path[64];
	uint8_t opt[2] = {}, head[4];
	char out_path[64];
	int fd, out = -1;
	size_t len, n;
	FILE *f;

	for (int i = 0; i < 2 && size; i++, size--)
		opt[i] = *data++;
	r.o = (struct options){
		.json = opt[0] & O_JSON, .quiet = opt[0] & O_QUIET,
		.hex = opt[0] & O_HEX, .numeric = !(opt[1] & O_NAMES),
		.filter = filters[(opt[0] & O_FILTER) >> 3],
		.snaplen = opt[0] & O_SNAP64 ? 64 : SNAPLEN_DEFAULT,
		.journey_timeout_ns = (opt[0] & O_TIMEOUT1 ? 1 : JOURNEY_TIMEOUT_MS) *
				      NSEC_PER_MSEC,
		.buffer = "default", .print = true,
	};

	if (opt[1] & O_NODES) {
		read_nodes(&r, data, size);
		return 0;
	}
	fd = memfd_of(data, size, path);
	f = fopen(path, "r");
	if (!f)
		abort();
	n = fread(head, 1, sizeof(head), f);
	if (pcapng_is(head, n)) {
		output_init(&r.o, true, 0);
		r.hops = hops_new();
		read_packets(&r, f, path, head, n);
		hops_free(r.hops);
		goto out;
	}
	src = source_open_file(f, path, head, n);
	if (!src)
		goto out;
	r.offset = source_have_offset(src) ? source_realtime_offset(src) : 0;
	output_init(&r.o, source_have_offset(src), r.offset);
	r.merge = merge_new(REORDER_WINDOW_NS);
	r.js = journeys_new(r.o.journey_timeout_ns, r.o.snaplen);
	r.hops = hops_new();
	r.spans = spans_new(r.offset, false);
	otlp = otel_new(devnull, OTEL_OTLP_JSON, source_host(src), "fuzz", NULL, 4);
	zipkin = otel_new(devnull, OTEL_ZIPKIN_JSON, source_host(src), "fuzz", NULL, 0);
	spans_output(r.spans, otlp);
	spans_output(r.spans, zipkin);
	if (opt[0] & O_PCAPNG) {
		out = memfd_create("pcapng", MFD_CLOEXEC);
		if (out < 0)
			abort();
		snprintf(out_path, sizeof(out_path), "/proc/self/fd/%d", out);
		r.pcap = pcapng_create(out_path, r.o.snaplen, false, NULL);
	}
	if (!r.merge || !r.js || !r.hops)
		abort();

	while (source_next(src, &chunk, &len, merge_count(r.merge) ||
			   journeys_pending(r.js)) == SOURCE_DATA)
		take(&r, chunk, len);
	release(&r, MERGE_ALL);
	journeys_end_all(r.js);
	emit(&r);
	(r.o.json ? hops_json : hops_print)(r.hops, devnull);
	spans_end(r.spans);
	otel_close(otlp);
	otel_close(zipkin);
	spans_free(r.spans);
	r.spans = NULL;

	pcapng_close(r.pcap);
	hops_free(r.hops);
	journeys_free(r.js);
	merge_free(r.merge);
	source_close(src);
	if (out >= 0) {
		/* the pcapng written, read back */
		FILE *back = fopen(out_path, "r");

		if (!back)
			abort();
		r.pcap = NULL;
		r.hops = hops_new();
		read_packets(&r, back, out_path, NULL, 0);
		hops_free(r.hops);
		close(out);
	}
out:
	close(fd);
	return 0;
}

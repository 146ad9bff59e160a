// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-read: read magnet's event records, print them (packets as
 * tcpdump would, with their journey through the network stack), save them
 * to a trace file or a pcapng file.
 *
 * This file: main() and its loop: records from the input merged in time
 * order, assembled into journeys, filtered, then shown and written;
 * signals, and the summary at the end. magnet-read.h lists the other parts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "magnet-read.h"
#include "otel.h"

static volatile sig_atomic_t stop;

/* The first signal ends the capture after a drain; the next, at once. */
static void on_signal(int sig)
{
	(void)sig;
	stop = stop + 1;
}

/* --- from records to output ---------------------------------------------------- */

struct state {
	const struct options *o;
	struct merge *merge;
	struct journeys *js;
	struct hops *hops;
	struct pcapng *pcap;
	struct timeline *timeline;	/* --perfetto */
	FILE *otlp_f, *zipkin_f;	/* --otlp, --zipkin */
	struct otel_out *otlp, *zipkin;
	uint64_t otlp_flushed;		/* CLOCK_MONOTONIC ns: the last line */
	struct spans *spans;		/* either */
	struct profile *profile;	/* --profile, --folded */
	FILE *folded_f;			/* --folded */
	struct nodes *nodes;		/* several -r files */
	int64_t offset;
	bool live, done, failed;
	bool save_only;		/* --trace alone: count, do not assemble */
	bool packets_in;	/* -r of a pcapng file: packets, not records */
	struct source *src;

	unsigned long long records, lost, shown;
	unsigned long long packet_records, packets, filtered, no_data;
	unsigned long long blockios;
};

static void count_shown(struct state *st)
{
	if (st->o->count && ++st->shown >= st->o->count)
		st->done = true;
}

static void show_packet(struct state *st, struct journey *j)
{
	const struct options *o = st->o;

	if (!expr_match_journey(o->filter, j)) {
		st->filtered++;
		return;
	}
	st->packets++;
	if (!(j->data_flags & MAGNET_PKT_DATA_NET) || !j->caplen)
		st->no_data++;
	hops_add(st->hops, j);
	if (o->print) {
		if (o->json)
			json_packet(stdout, j);
		else
			print_packet(stdout, j);
	}
	if (st->timeline && timeline_packet(st->timeline, j, st->offset) < 0)
		st->failed = st->done = true;
	if (st->spans)
		spans_packet(st->spans, j);
	if (st->pcap) {
		struct sighting s[MAGNET_LAYER_COUNT];
		unsigned int n = cooked_sightings(j, s), k = 0;
		char *comment = journey_comment(j);

		/* a packet of tcpdump's at each sighting the expression selects */
		if (!n)
			s[n++] = cooked_nowhere(j);
		for (unsigned int i = 0; i < n; i++)
			if (expr_match_sighting(o->filter, j, &s[i]))
				s[k++] = s[i];
		switch (pcapng_write(st->pcap, j, st->offset, comment, s, k)) {
		case -1:
			st->failed = st->done = true;
			break;
		case 2:		/* -G's -W files are written */
			st->done = true;
			break;
		}
		free(comment);
	}
	count_shown(st);
}

static void show(struct state *st, struct item *it)
{
	const struct options *o = st->o;
	bool print = o->print && !o->quiet;
	bool shown;

	switch (it->kind) {
	case ITEM_LOSS:
		if (print)
			(o->json ? json_loss : print_loss)(stdout, it->rec);
		if (st->pcap)
			pcapng_lost(st->pcap,
				    ((struct magnet_loss *)it->rec->payload)->lost);
		break;
	case ITEM_RECORD:
		shown = expr_match_record(o->filter, it->rec);
		/*
		 * An application's span is the context the kernel's spans
		 * hang from: the spans' builder takes it even where an
		 * expression (which selects packets) does not show it.
		 */
		if (st->spans && (shown || (is_span_record(it->rec) &&
					    expr_match_owner(o->filter, it->rec))))
			spans_record(st->spans, it->rec);
		if (!shown)
			break;
		if (st->profile && is_sample_record(it->rec) &&
		    profile_sample(st->profile, it->rec)) {
			fprintf(stderr, PROG ": out of memory for the profile\n");
			st->failed = st->done = true;
		}
		if (o->print && is_span_record(it->rec))
			(o->json ? json_span : print_span)(stdout, it->rec);
		else if (print && is_sample_record(it->rec))
			(o->json ? json_sample : print_sample)(stdout, it->rec);
		else if (print)
			(o->json ? json_record : print_record)(stdout, it->rec);
		count_shown(st);
		break;
	case ITEM_PACKET:
		show_packet(st, item_journey(it));
		break;
	case ITEM_BLOCK:
		if (!expr_match_block(o->filter, item_blockio(it)))
			break;
		st->blockios++;
		if (st->spans)
			spans_block(st->spans, item_blockio(it));
		if (o->print)
			(o->json ? json_block : print_block)(stdout,
							     item_blockio(it));
		count_shown(st);
		break;
	}
}

static void emit(struct state *st)
{
	struct item *it;

	while (!st->done && (it = journeys_next(st->js))) {
		show(st, it);
		item_free(it);
	}
}

/*
 * Hand on the records more than REORDER_WINDOW_NS older than @horizon (see
 * merge_pop), and than the time up to which every CPU's records are in.
 */
static void release(struct state *st, uint64_t horizon)
{
	uint64_t in = source_horizon(st->src);
	struct item *it;

	if (horizon != UINT64_MAX && in < horizon)
		horizon = in;
	while (!st->done && (it = merge_pop(st->merge, horizon, NULL))) {
		if (it->kind == ITEM_LOSS) {
			st->lost += ((struct magnet_loss *)it->rec->payload)->lost;
		} else {
			st->records++;
			st->packet_records += is_packet_record(it->rec);
		}
		journeys_add(st->js, it);
		emit(st);
	}
}

/*
 * --otlp, live: a request line at least every OTLP_FLUSH_NS (and whenever
 * the input goes quiet), not only when OTEL_BATCH_DEFAULT spans are in,
 * so that a reader of the file (or of a pipe) sees spans as they end.
 */
#define OTLP_FLUSH_NS	NSEC_PER_SEC

static void flush_spans(struct state *st, bool now)
{
	struct timespec ts;
	uint64_t t;

	if (!st->otlp || !st->live)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
	if (!now && t - st->otlp_flushed < OTLP_FLUSH_NS)
		return;
	st->otlp_flushed = t;
	if (otel_flush(st->otlp))
		st->failed = st->done = true;
}

static void take(struct state *st, const char *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct magnet_record *r = (const void *)(data + off);
		struct item *it = item_new(r);

		if (merge_add(st->merge, it->ts, it)) {
			fprintf(stderr, PROG ": out of memory\n");
			exit(1);
		}
		off += MAGNET_RECORD_LEN(r->size);
	}
	release(st, merge_newest(st->merge));
	flush_spans(st, false);
}

/*
 * Saving only: count what read() returned, records and loss, without
 * holding, reordering or assembling anything.
 */
static void count_only(struct state *st, const char *data, size_t len)
{
	for (size_t off = 0; off < len;) {
		const struct magnet_record *r = (const void *)(data + off);

		if (r->event == MAGNET_EVENT_LOSS &&
		    r->size >= sizeof(*r) + sizeof(struct magnet_loss))
			st->lost += ((const struct magnet_loss *)r->payload)->lost;
		else
			st->records++;
		off += MAGNET_RECORD_LEN(r->size);
	}
}

/*
 * Nothing came for a while: show what is held, end idle journeys. Live,
 * a record stays held until it is REORDER_WINDOW_NS old by the clock: a
 * record of another CPU stamped just before it may not be readable yet
 * (it was, under TCG on a debug kernel, and one packet's journey came
 * apart).
 */
static void idle(struct state *st)
{
	struct timespec now;
	uint64_t clock;

	if (!st->live) {
		release(st, MERGE_ALL);
		emit(st);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	clock = now.tv_sec * NSEC_PER_SEC + now.tv_nsec;
	release(st, clock > merge_newest(st->merge) ? clock : merge_newest(st->merge));
	clock -= REORDER_WINDOW_NS;
	if (clock > merge_newest(st->merge))
		journeys_expire(st->js, clock);
	emit(st);
	flush_spans(st, true);
}

static void finish(struct state *st)
{
	release(st, MERGE_ALL);
	journeys_end_all(st->js);
	emit(st);
}

static void summary(struct state *st)
{
	const struct options *o = st->o;
	unsigned long long kernel_filtered;

	if (o->json && o->print) {
		fputs("{\"type\":\"summary\",\"records\":", stdout);
		json_u64(stdout, st->records);
		fputs(",\"lost\":", stdout);
		json_u64(stdout, st->lost);
		fputs(",\"packets\":", stdout);
		json_u64(stdout, st->packets);
		fputs(",\"filtered\":", stdout);
		json_u64(stdout, st->filtered);
		fputs(",\"no_data\":", stdout);
		json_u64(stdout, st->no_data);
		fputs(",\"block_ios\":", stdout);
		json_u64(stdout, st->blockios);
		if (st->nodes)
			nodes_summary(st->nodes, stdout, true);
		printf(",\"hop_samples_max\":%u,\"hops\":", HOP_SAMPLES_MAX);
		hops_json(st->hops, stdout);
		printf("}\n");
	}
	fflush(stdout);
	if (!(o->json && o->print))
		hops_print(st->hops, stderr);
	if (!st->save_only &&
	    (st->packet_records || expr_selects(o->filter) || o->probe_sets ||
	     o->pcapng_file || o->perfetto_file))
		fprintf(stderr, PROG ": %llu packets captured, %llu filtered, %llu without packet data\n",
			st->packets, st->filtered, st->no_data);
	if (st->blockios)
		fprintf(stderr, PROG ": %llu block I/Os\n", st->blockios);
	if (st->nodes)
		nodes_summary(st->nodes, stderr, false);
	if (st->spans) {
		const struct spans_stats *ss = spans_stats(st->spans);

		fprintf(stderr, PROG ": %llu spans written, %llu of them still open at the end; %llu ends or events of no open span, %llu begins of one already open and %llu beyond the limits dropped; %llu traceparent headers not W3C's\n",
			ss->written, ss->incomplete, ss->unmatched_ends,
			ss->unmatched_begins, ss->dropped, ss->bad_traceparent);
	}
	if (kernel_filtered_records(&kernel_filtered))
		fprintf(stderr, PROG ": %llu records filtered in the kernel\n",
			kernel_filtered);
	if (expr_built(o->filter))
		fprintf(stderr, PROG ": the expression saw IP headers built from the records of %llu packets that kept no IP bytes (TTL, IP id, options, TCP window and payload read as zero there)\n",
			expr_built(o->filter));
	if (st->packets_in)
		fprintf(stderr, PROG ": %llu packets read\n", st->records);
	else
		fprintf(stderr, PROG ": %llu records, %llu lost\n", st->records,
			st->lost);
}

/*
 * Once all is in place, one line that says what is read, as tcpdump's
 * "listening on" and "reading from file": -P's probe sets, the buffer,
 * or the file.
 */
static void started(const struct options *o)
{
	if (o->probe_sets)
		probes_started(o);
	else if (o->read_file)
		fprintf(stderr, PROG ": reading from file %s\n", o->read_file);
	else
		fprintf(stderr, PROG ": reading buffer %s\n", o->buffer);
}

/*
 * -r of a pcapng file: its packets, one journey each, shown as a live
 * capture's are (the expression, -c, -w, the per-hop statistics).
 */
static int read_pcapng(struct state *st, struct pcapng_in *in)
{
	struct journey *j;
	int ret = 0;

	while (!stop && !st->done && (ret = pcapng_read(in, &j)) > 0) {
		st->records++;
		st->packet_records++;
		show_packet(st, j);
		item_free(&j->item);
	}
	fflush(stdout);
	if (pcapng_skipped(in))
		fprintf(stderr, PROG ": %llu packets of the file are not IP packets: skipped\n",
			pcapng_skipped(in));
	return stop || st->done ? 0 : ret;
}

/*
 * -r FILE: a trace file (a source of records) or a pcapng file (of
 * packets, *@pin); NULL and a message if it is neither.
 */
static struct source *open_file(const char *path, struct pcapng_in **pin)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	uint8_t head[4];
	size_t n;

	*pin = NULL;
	if (!f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return NULL;
	}
	n = fread(head, 1, sizeof(head), f);
	if (pcapng_is(head, n)) {
		*pin = pcapng_open_read(f, path, head, n);
		return NULL;
	}
	return source_open_file(f, path, head, n);
}

/*
 * The files written (--trace, -w, --perfetto), made before anything is
 * installed, so that one that cannot be made ends magnet-read before
 * then; with -Z, as its user, who writes them (tcpdump makes them once
 * it is that user: the same owner, the same permission checks). -1 and
 * a message if one cannot be made; the caller closes what was.
 */
static FILE *span_file(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f)
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
	return f;
}

/*
 * --otlp, --zipkin: once the input is open (its host and clock known),
 * the spans' writers.
 */
static void start_spans(struct state *st)
{
	const char *host = st->src ? source_host(st->src) : NULL;

	if (!st->otlp_f && !st->zipkin_f)
		return;
	st->spans = spans_new(st->offset, st->live);
	if (st->otlp_f) {
		st->otlp = otel_new(st->otlp_f, OTEL_OTLP_JSON, host, PROG,
				    MAGNET_VERSION, 0);
		spans_output(st->spans, st->otlp);
	}
	if (st->zipkin_f) {
		st->zipkin = otel_new(st->zipkin_f, OTEL_ZIPKIN_JSON, host,
				      PROG, MAGNET_VERSION, 0);
		spans_output(st->spans, st->zipkin);
	}
}

/* Close one span file: 0, or -1 (printed) */
static int close_span_file(FILE *f, const char *path)
{
	if (!f)
		return 0;
	if (fflush(f) || ferror(f) || (f != stdout && fclose(f))) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/*
 * End the profile: the report on standard output (--profile), the folded
 * stacks written (--folded); 0 or -1 (printed). @write: false after a
 * failure, when only the file is closed.
 */
static int end_profile(struct state *st, bool write)
{
	const struct options *o = st->o;
	int ret = 0;

	if (write && st->profile && o->profile &&
	    profile_report(st->profile, stdout, o->json)) {
		fprintf(stderr, PROG ": the profile: %s\n", strerror(errno));
		ret = -1;
	}
	if (write && st->profile && st->folded_f &&
	    profile_folded(st->profile, st->folded_f)) {
		fprintf(stderr, PROG ": %s: %s\n", o->folded_file, strerror(errno));
		ret = -1;
	}
	if (close_span_file(st->folded_f, o->folded_file))
		ret = -1;
	st->folded_f = NULL;
	profile_free(st->profile);
	st->profile = NULL;
	return ret;
}

/* End the spans: those still open written, the files closed; 0 or -1 */
static int end_spans(struct state *st)
{
	const struct options *o = st->o;
	int ret = 0;

	if (st->spans && spans_end(st->spans))
		ret = -1;
	if (otel_close(st->otlp) | otel_close(st->zipkin))
		ret = -1;
	st->otlp = st->zipkin = NULL;
	if (close_span_file(st->otlp_f, o->otlp_file) |
	    close_span_file(st->zipkin_f, o->zipkin_file))
		ret = -1;
	st->otlp_f = st->zipkin_f = NULL;
	return ret;
}

static int open_outputs(struct state *st, const struct options *o,
			struct trace_out **trace)
{
	int ret = -1;

	if (as_user(o->user))
		return -1;
	if (o->trace_file && !(*trace = trace_open(o->trace_file, o)))
		goto out;
	if (o->pcapng_file &&
	    !(st->pcap = pcapng_create(o->pcapng_file, o->snaplen,
				       !o->read_file, &o->rot)))
		goto out;
	if (st->pcap && o->packet_buffered)
		pcapng_flush_each(st->pcap);
	if (o->perfetto_file &&
	    !(st->timeline = timeline_create(o->perfetto_file)))
		goto out;
	if (o->otlp_file && !(st->otlp_f = span_file(o->otlp_file)))
		goto out;
	if (o->zipkin_file && !(st->zipkin_f = span_file(o->zipkin_file)))
		goto out;
	if (o->folded_file && !(st->folded_f = span_file(o->folded_file)))
		goto out;
	ret = 0;
out:
	as_root();
	/* (as root: the kernel's symbols, read now, have their addresses) */
	if (!ret && (o->profile || o->folded_file) &&
	    !(st->profile = profile_new(o->kallsyms))) {
		if (errno == ENOMEM)
			fprintf(stderr, PROG ": out of memory\n");
		else
			fprintf(stderr, PROG ": %s: %s\n", o->kallsyms,
				strerror(errno));
		ret = -1;
	}
	return ret;
}

/*
 * Several -r files, each a node's: one stream (nodes.c), shown as one
 * file's is. The exit status.
 */
static int read_nodes(struct state *st, const struct options *o)
{
	const char *names[NODES_MAX];
	struct trace_out *none = NULL;
	struct item *it;
	int ret = 0;

	if (open_outputs(st, o, &none) || drop_privileges(o->user))
		goto fail;
	st->nodes = nodes_open(o);
	if (!st->nodes)
		goto fail;
	for (unsigned int k = 0; k < o->nread_files; k++) {
		names[k] = nodes_host(st->nodes, k);
		if (!names[k])
			names[k] = o->read_files[k];
	}
	/* (the records' times are the first node's wall clock time) */
	output_init(o, true, 0);
	output_nodes(names, o->nread_files);
	if (st->timeline)
		timeline_nodes(st->timeline, names, o->nread_files);
	st->hops = hops_new();
	start_spans(st);
	for (unsigned int k = 0; st->spans && k < o->nread_files; k++)
		spans_node(st->spans, k, nodes_host(st->nodes, k));
	while (!stop && !st->done && (it = nodes_next(st->nodes))) {
		if (it->kind == ITEM_PACKET)
			st->packet_records++;
		show(st, it);
		item_free(it);
	}
	nodes_counts(st->nodes, &st->records, &st->lost);
	if (nodes_failed(st->nodes))
		st->failed = true;
	if (pcapng_close(st->pcap) | timeline_close(st->timeline) |
	    end_spans(st) | end_profile(st, !st->failed) || st->failed) {
		ret = 1;
	} else {
		summary(st);
	}
	spans_free(st->spans);
	nodes_close(st->nodes);
	return ret;
fail:
	pcapng_close(st->pcap);
	timeline_close(st->timeline);
	end_spans(st);
	end_profile(st, false);
	nodes_close(st->nodes);
	return 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct state st = {};
	struct trace_out *trace = NULL;
	struct source *src = NULL;
	struct options o;
	const char *data;
	char path[512], err[512];
	size_t len;
	bool end = false, draining = false;

	parse_args(argc, argv, &o);
	st.o = &o;
	/* No SA_RESTART: a read() waiting on an idle buffer must return. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);

	if (o.nread_files > 1)
		return read_nodes(&st, &o);
	if (o.read_file) {
		struct pcapng_in *in;

		src = open_file(o.read_file, &in);
		if (in) {
			int ret;

			if (o.trace_file) {
				fprintf(stderr, PROG ": %s is a pcapng file: it holds packets, not the records --trace saves\n",
					o.read_file);
				pcapng_close_read(in);
				return 2;
			}
			output_init(&o, true, 0);
			if (open_outputs(&st, &o, &trace) ||
			    drop_privileges(o.user)) {
				pcapng_close_read(in);
				pcapng_close(st.pcap);
				timeline_close(st.timeline);
				end_spans(&st);
				end_profile(&st, false);
				return 1;
			}
			st.hops = hops_new();
			st.packets_in = true;
			start_spans(&st);
			started(&o);
			ret = read_pcapng(&st, in);
			pcapng_close_read(in);
			if (pcapng_close(st.pcap) | timeline_close(st.timeline) |
			    end_spans(&st) | end_profile(&st, false) ||
			    ret < 0 || st.failed)
				return 1;
			summary(&st);
			spans_free(st.spans);
			return 0;
		}
		if (!src || open_outputs(&st, &o, &trace))
			goto fail;
	} else {
		/* What can be checked first, installing nothing. */
		if (check_devices(&o))
			return 1;
		if (control_check_format(err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			return 1;
		}
		if (open_outputs(&st, &o, &trace) ||
		    (o.probe_sets && open_session(&o)))
			goto fail;
		if (!o.probe_sets)
			hint_no_probes(&o);
		if (data_path(&o, path, sizeof(path))) {
			fprintf(stderr, PROG ": buffer name too long: %s\n",
				o.buffer);
			goto fail;
		}
		src = source_open_live(&o, path);
		if (!src)
			goto fail;
	}
	st.src = src;
	st.live = !o.read_file;
	st.offset = source_have_offset(src) ? source_realtime_offset(src) : 0;
	output_init(&o, source_have_offset(src), st.offset);
	if (o.probe_sets && add_probes(&o))
		goto fail;
	/* as tcpdump: once the capture is open */
	if (drop_privileges(o.user))
		goto fail;
	if (trace && trace_start(trace, src))
		goto fail;
	st.merge = merge_new(REORDER_WINDOW_NS);
	if (!st.merge) {
		fprintf(stderr, PROG ": out of memory\n");
		goto fail;
	}
	st.js = journeys_new(o.journey_timeout_ns, o.snaplen);
	st.hops = hops_new();
	st.save_only = save_only(&o);
	start_spans(&st);
	started(&o);

	while (stop < 2 && !st.done && !end) {
		bool pending;

		if (stop && !draining) {
			/* Nothing logged before the signal is left behind. */
			draining = true;
			if (!st.live || source_drain(src))
				break;
		}
		pending = merge_count(st.merge) || journeys_pending(st.js);

		switch (source_next(src, &data, &len, pending)) {
		case SOURCE_DATA:
			if (trace && trace_write(trace, data, len)) {
				st.failed = true;
				end = true;
				break;
			}
			if (st.save_only) {
				count_only(&st, data, len);
				break;
			}
			take(&st, data, len);
			if (st.live)
				fflush(stdout);
			break;
		case SOURCE_IDLE:
			idle(&st);
			fflush(stdout);
			break;
		case SOURCE_ERROR:
			st.failed = true;
			/* fall through */
		case SOURCE_END:
			end = true;
			break;
		}
	}
	if (!st.done)
		finish(&st);
	count_kernel_filtered();
	remove_probes();
	source_close(src);
	if (trace_close(trace) | pcapng_close(st.pcap) |
	    timeline_close(st.timeline) | end_spans(&st) |
	    end_profile(&st, !st.failed))
		st.failed = true;
	if (st.failed) {
		fflush(stdout);
		return 1;
	}
	summary(&st);
	spans_free(st.spans);
	return 0;
fail:
	remove_probes();
	source_close(src);
	trace_close(trace);
	pcapng_close(st.pcap);
	timeline_close(st.timeline);
	end_spans(&st);
	end_profile(&st, false);
	return 1;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet-read: what its parts share.
 *
 *   magnet-read.c  main() and its loop, the summary
 *   options.c      the command line, usage
 *   probes.c       the probes -P adds for the capture, -Z
 *   devices.c      the devices -i names and -D lists
 *   input.c        the live buffer, trace files, merging CPUs by time
 *   journey.c      packet journeys, output order, per-hop statistics
 *   blockio.c      block I/O journeys
 *   expr.c         the filter expression (libpcap's) and the selectors
 *   cooked.c       a packet as tcpdump -i any sees it (cooked header)
 *   output.c       text and JSON, names of hosts and ports
 *   pcapng.c       pcapng files
 *   perfetto.c     the timeline (--perfetto): Chrome's trace-event JSON
 *   spans.c        spans (--otlp, --zipkin): application and kernel spans
 *   nodes.c        several nodes' files (-r, -r): one clock, joined journeys
 *   profile.c      the sampler's profile (--profile, --folded): steal
 */
#ifndef MAGNET_READ_H
#define MAGNET_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/magnet.h>

#include "json.h"
#include "merge.h"
#include "names.h"
#include "words.h"

#define PROG		"magnet-read"
#ifndef MAGNET_VERSION		/* the Makefile's, but for test builds */
#define MAGNET_VERSION	"(test build)"
#endif
#define DEBUGFS		"/sys/kernel/debug"


/*
 * Bytes of a packet record's payload before its data: the data follow
 * the fields (sizeof() would count the struct's trailing padding too).
 */
#define PACKET_HDR	offsetof(struct magnet_packet, data)

#define NSEC_PER_SEC	((uint64_t)1000000000)
#define NSEC_PER_MSEC	((uint64_t)1000000)

#define SNAPLEN_DEFAULT		262144
#define SNAPLEN_SPANS		1024	/* live, --otlp or --zipkin alone */
#define JOURNEY_TIMEOUT_MS	200	/* idle time (stream time) ending a journey */
/* idle time (stream time) ending a block I/O's journey */
#define BLOCK_TIMEOUT_NS	(10 * NSEC_PER_SEC)
#define REORDER_WINDOW_NS	(50 * NSEC_PER_MSEC)
#define HOP_SAMPLES_MAX		(1U << 20) /* exact statistics up to this */

struct expr;
/* Does @e select anything less than everything? (expr.c) */
bool expr_selects(const struct expr *e);

/* tcpdump's -C, -G, -W, -z: files one after another (pcapng.c) */
struct rotation {
	uint64_t size;			/* -C: bytes; 0: none */
	unsigned int seconds;		/* -G; 0: none */
	unsigned int files;		/* -W; 0: no limit */
	const char *command;		/* -z: run on each file written */
};

struct options {
	const char *buffer;
	const char *trace_file;		/* --trace */
	const char *read_file;		/* -r, the first */
	const char **read_files;	/* -r, each given: several nodes' */
	unsigned int nread_files;
	const char *pcapng_file;	/* -w */
	const char *perfetto_file;	/* --perfetto */
	const char *otlp_file;		/* --otlp */
	const char *zipkin_file;	/* --zipkin */
	const char *folded_file;	/* --folded */
	bool profile;			/* --profile */
	const char *kallsyms;		/* --kallsyms */
	struct rotation rot;		/* -C, -G, -W, -z */
	const char *probe_sets;		/* -P */
	unsigned long buffer_kib;	/* -B: the size of the buffer -P makes */
	const char **interfaces;		/* -i, each given */
	unsigned int ninterfaces;
	uint32_t *tgids;		/* --tgid */
	unsigned int ntgids;
	uint8_t *cpus;			/* --cpu, NULL: every CPU */
	size_t cpus_len;
	const char *filter_file;	/* -F */
	const char *user;		/* -Z */
	unsigned long long count;	/* -c, 0 = no limit */
	long long size_wm, count_wm, timeout_ms; /* -1: not given */
	uint64_t journey_timeout_ns;
	uint32_t snaplen;		/* -s */
	bool nonblock, hex, quiet, numeric, json;
	bool link;			/* -e */
	unsigned int verbose;		/* -v, -vv */
	enum dump { DUMP_NONE, DUMP_HEX, DUMP_HEX_ASCII, DUMP_ASCII } dump;
	unsigned int tstamp;		/* -t...: 0 time of day, 1 none, 2 epoch
					 * seconds, 3 delta, 4 date, 5 since
					 * the first packet
					 */
	bool micro;			/* --time-stamp-precision=micro */
	bool packet_buffered;		/* -U */
	bool print;			/* print (not only -w / --trace) */
	bool no_map;			/* --no-map: read() the data file */
	bool no_kernel_filter;		/* --no-kernel-filter */
	struct expr *filter;		/* NULL: everything */
	char *filter_text;		/* the expression, NULL: none */
};

/*
 * --trace alone: the trace file holds the records as they are read, and
 * -r orders and assembles them later, so a capture that only saves does
 * none of that work (tcpdump -w does none either).
 */
static inline bool save_only(const struct options *o)
{
	return o->trace_file && !o->print && !o->pcapng_file &&
	       !o->perfetto_file && !o->otlp_file && !o->zipkin_file &&
	       !expr_selects(o->filter) && !o->count;
}

/*
 * What flows from the input to the output, in timestamp order: records
 * (the record follows the item in the same allocation), loss records,
 * and packets (an item inside a struct journey).
 */
enum item_kind { ITEM_RECORD, ITEM_LOSS, ITEM_PACKET, ITEM_BLOCK };

struct item {
	struct item *next;
	struct magnet_record *rec;	/* ITEM_RECORD, ITEM_LOSS */
	uint64_t ts;
	uint64_t seq;			/* arrival order: ties keep it */
	enum item_kind kind;
	int __pad;
};

/* One layer a packet passed, from its record. */
struct hop {
	uint64_t ts;
	uint32_t cpu, tgid, tid;
	uint32_t len, ifindex;
	uint16_t layer, rflags;		/* enum magnet_layer, MAGNET_RF_* */
	uint16_t pflags;		/* MAGNET_PKT_* */
	uint16_t node;			/* of several -r files: its file's index */
	uint32_t caplen;		/* bytes the record kept */
	uint64_t skb, sock;		/* the record's, for -vv */
	char dev[16];
};

struct journey {
	struct item item;		/* first: items and journeys convert */
	unsigned int nhops;
	struct hop hop[MAGNET_LAYER_COUNT];
	/* the packet, as its records tell it */
	uint8_t family, proto, tcp_flags;
	bool have_addrs, have_seq;
	bool addrs_from_skb;		/* addresses from packet headers */
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;		/* host order */
	uint32_t seq;
	/* the bytes kept: the best record's data (see journey.c) */
	uint8_t *data;
	uint32_t caplen;		/* bytes in data */
	uint32_t data_len;		/* that record's len */
	uint16_t data_flags;		/* MAGNET_PKT_DATA_* */
	uint16_t data_layer;
	int data_rank;
	/* assembly state, journey.c's */
	uint64_t skb, sock;
	uint64_t pend_ctx;		/* journey.c's ctx_of() */
	bool open, in_skb, pending, tcp_clone;
	/*
	 * A packet of a file without magnet's journey (another tool's): its
	 * one hop is where it was captured, not a layer magnet saw.
	 */
	bool bare;
	struct journey *skb_next, *pend_next, *prev, *next;
};

/* A record follows its item: the item keeps it 8-byte aligned. */
_Static_assert(sizeof(struct item) % MAGNET_RECORD_ALIGN == 0, "item size");

/*
 * The node a record was read from: of several -r files (nodes.c), the
 * file's index, which the reader keeps in its copy's __reserved field
 * (zero in what the kernel logs); 0 otherwise.
 */
static inline unsigned int record_node(const struct magnet_record *r)
{
	return r->__reserved;
}

static inline struct journey *item_journey(struct item *it)
{
	return (struct journey *)it;
}

/* One layer a block I/O passed, from its record (at complete, the last). */
struct block_hop {
	uint64_t ts;			/* 0: not passed */
	uint32_t cpu, tgid, tid;
	uint16_t rflags;		/* MAGNET_RF_* */
};

/* One block I/O, from its bio's submission to its request's completion. */
struct blockio {
	struct item item;		/* first: items and journeys convert */
	struct block_hop hop[MAGNET_BLOCK_COUNT]; /* by enum magnet_block_layer */
	uint64_t bio, rq, sector;
	uint32_t bytes;			/* the request's, else the bio's */
	uint32_t bio_bytes;		/* the bio's, 0 if not seen */
	uint32_t done_bytes;		/* completed */
	uint32_t major, minor;
	uint32_t tgid, tid;		/* of its first record: the submitter */
	uint32_t node;			/* of several -r files: its file's index */
	int32_t error;			/* the first completion's error */
	uint16_t flags;			/* MAGNET_BLK_* */
	uint8_t op;			/* enum magnet_block_op */
	uint8_t completions;		/* parts completed (saturating at 255) */
	unsigned int nlayers;		/* records joined */
	uint64_t last_ts;
	bool open, in_bio, in_rq;	/* blockio.c's */
	struct blockio *bio_next, *rq_next, *prev, *next;
};

static inline struct blockio *item_blockio(struct item *it)
{
	return (struct blockio *)it;
}

/* options.c */
/*
 * The command line into *@o: the options checked, the expression
 * compiled. Bad usage exits with status 2, a bad expression with 1; -h,
 * --version, -D and -d print and exit.
 */
void parse_args(int argc, char **argv, struct options *o);
/* "magnet-read: @why", a pointer to --help, exit status 2. */
void __attribute__((noreturn)) bad_usage(const char *why);

/* probes.c */
/*
 * -P, first: a session of magnet-read's own (gone with it), and in it the
 * buffer o->buffer (-B's size); -1 (and a message) if it cannot be made.
 */
int open_session(const struct options *o);
/* Without -P: say so if no probe logs into o->buffer (nothing to read). */
void hint_no_probes(const struct options *o);
/* o->buffer's data file, in the session if -P made one: 0, or -1. */
int data_path(const struct options *o, char *path, size_t size);
/*
 * -P: add the probe sets o->probe_sets logging into o->buffer until
 * magnet-read exits, with the expression as their kernel filter where it
 * can run there; -1 (and a message) if they could not be added.
 */
int add_probes(const struct options *o);
/*
 * After add_probes(): the one line that says the capture has started
 * (the sets, how many probes, where the expression runs).
 */
void probes_started(const struct options *o);
/*
 * Remove -P's probes now: nothing if there are none, or if -Z gave up the
 * privilege to (they go with the socket, at exit).
 */
void remove_probes(void);
/* Before remove_probes(): what the probes' filter rules dropped. */
void count_kernel_filtered(void);
/* Did the expression run in the kernel? *@n: the records it dropped there. */
bool kernel_filtered_records(unsigned long long *n);
/* -Z: run as @user from now on (as root only); -1 and a message: cannot. */
int drop_privileges(const char *user);
/*
 * -Z, as root, before the capture: act as @user (its effective user,
 * group and groups) until as_root(), so that the files made meanwhile
 * are @user's, and made where @user may make them. -1 and a message if
 * it cannot; nothing to do as another user, or without -Z.
 */
int as_user(const char *user);
void as_root(void);

/* devices.c */
/*
 * -D: print what -i can name: "any", then every device of every network
 * namespace, with its index, its namespace and its flags.
 */
void list_interfaces(void);
/* A live capture's -i: -1 (and a message) if one names no device anywhere. */
int check_devices(const struct options *o);

/* input.c */
struct source;
/* The live buffer, its data file at @path (data_path()): NULL and a message. */
struct source *source_open_live(const struct options *o, const char *path);
/* A trace file, open as @f, whose first @n bytes were read into @head. */
struct source *source_open_file(FILE *f, const char *path,
				const uint8_t *head, size_t n);
void source_close(struct source *s);
enum source_status { SOURCE_DATA, SOURCE_IDLE, SOURCE_END, SOURCE_ERROR };
/*
 * Wait for the next chunk of whole records (@pending: records are held
 * back, so report SOURCE_IDLE when nothing comes for a while instead of
 * waiting on).
 */
enum source_status source_next(struct source *s, const char **data,
			       size_t *len, bool pending);
/*
 * Live through the mapping, records come one CPU at a time: every record
 * stamped before the time returned has been handed out (but for a writer
 * that had not committed it yet, see mapped_horizon()). UINT64_MAX
 * otherwise: read() hands out every CPU's records in one go.
 */
uint64_t source_horizon(struct source *s);
/*
 * From now on, read only what is there, as -N does (the records logged
 * before now), then SOURCE_END. -1 (and a message) on an error.
 */
int source_drain(struct source *s);
bool source_have_offset(const struct source *s);
/* The capturing host's name: live, this one's; a file's, if it says; or NULL */
const char *source_host(const struct source *s);
int64_t source_realtime_offset(const struct source *s);
/* How far that may be off, ns (0 where a file does not say) */
uint64_t source_offset_error(const struct source *s);
/* Check a chunk: -1 (and a message) if it is not a record stream. */
int records_check(const char *data, size_t len, const char *what);

struct trace_out;
/*
 * A trace file, made before the capture starts (NULL and a message if it
 * cannot be); its header written by trace_start() once the input is open
 * (with @src's wall clock offset, or none where it has none).
 */
struct trace_out *trace_open(const char *path, const struct options *o);
int trace_start(struct trace_out *t, const struct source *src);
int trace_write(struct trace_out *t, const char *data, size_t len);
int trace_close(struct trace_out *t);

/* calloc(), exiting with a message when out of memory */
void *xcalloc(size_t n, size_t size);
/*
 * A record's item, the record copied after it (exits when out of memory).
 * The copy's __reserved holds the node it came from (record_node()).
 */
struct item *item_new(const struct magnet_record *r);

/* journey.c */
struct journeys;
struct journeys *journeys_new(uint64_t timeout_ns, uint32_t snaplen);
/* Free it and every item it still holds. */
void journeys_free(struct journeys *js);
/* Take a record released in timestamp order (and own it). */
void journeys_add(struct journeys *js, struct item *it);
/* Stream time has reached @now: journeys idle since before end. */
void journeys_expire(struct journeys *js, uint64_t now);
/* End every open journey (end of input). */
void journeys_end_all(struct journeys *js);
/* The next item to show, in order, or NULL until it is complete. */
struct item *journeys_next(struct journeys *js);
bool journeys_pending(const struct journeys *js);
void item_free(struct item *it);
bool is_packet_record(const struct magnet_record *r);

/* blockio.c, for journey.c */
struct blockios;
struct blockios *blockios_new(void);
void blockios_free(struct blockios *bs);
bool is_block_record(const struct magnet_record *r);
/* Join a block record's item (not owned): the new journey it starts, or NULL */
struct blockio *blockios_add(struct blockios *bs, struct item *it);
void blockios_expire(struct blockios *bs, uint64_t now);
void blockios_end_all(struct blockios *bs);
bool blockios_pending(const struct blockios *bs);
/* "read", "write", ...; NULL for an operation without a name here */
const char *block_op_name(unsigned int op);

struct hops;
struct hops *hops_new(void);
void hops_free(struct hops *h);
void hops_add(struct hops *h, const struct journey *j);
void hops_print(struct hops *h, FILE *f);
void hops_json(struct hops *h, FILE *f);

/* expr.c */
/* magnet's own selectors, given as options; ANDed with the expression. */
struct expr_select {
	const char *const *devs;	/* -i: a device passed; "any": all */
	unsigned int ndevs;
	const uint32_t *tgids;		/* --tgid: a record's process */
	unsigned int ntgids;
	const uint8_t *cpus;		/* --cpu: bitmap; NULL: every CPU */
	size_t cpus_len;
};
/*
 * Compile @text (tcpdump's language, pcap-filter(7); NULL or blank: none)
 * and the selectors @sel (whose arrays must outlive *@out) into *@out. A bad expression: -1, and libpcap's
 * message in @err.
 */
int expr_compile(const char *text, const struct expr_select *sel,
		 struct expr **out, char *err, size_t errlen);
void expr_free(struct expr *e);
bool expr_match_journey(struct expr *e, const struct journey *j);
struct sighting;
/*
 * Does @e select the journey as seen at @s (a device -i names, and the
 * expression)? The journey's own selectors (--tgid, --cpu) aside.
 */
bool expr_match_sighting(struct expr *e, const struct journey *j,
			 const struct sighting *s);
/* Is record @r selected (an expression or -i selects packets only)? */
bool expr_match_record(const struct expr *e, const struct magnet_record *r);
/* Is @r's thread selected by --tgid and --cpu, whatever the expression? */
bool expr_match_owner(const struct expr *e, const struct magnet_record *r);
/* A block I/O: no packet expression; its submitter's --tgid, any layer's --cpu */
bool expr_match_block(const struct expr *e, const struct blockio *b);
/* -d, -dd, -ddd: print the compiled program as tcpdump does. */
void expr_dump(const struct expr *e, int level);
/*
 * Can @e's expression run in the kernel on each layer of a packet alone
 * (filter type "packet") and select what it selects here? NULL if so,
 * else why not.
 */
const char *expr_kernel_why_not(const struct expr *e);
/* Packets the expression saw with headers built from their records. */
unsigned long long expr_built(const struct expr *e);

/* cooked.c */
#define COOKED_HDR_LEN		20	/* struct sll2_header */
#define COOKED_PACKET_MAX	262144	/* IP bytes at most */
/* Where tcpdump -i any would see a packet: a device, a direction. */
struct sighting {
	const char *dev;		/* "": none */
	uint32_t ifindex;
	bool out;
};
/* Is @layer (enum magnet_layer) on the send path? */
bool layer_sends(unsigned int layer);
/* The journey's sightings, one per device and direction, in layer order. */
unsigned int cooked_sightings(const struct journey *j, struct sighting *s);
/* A journey that met no device is seen once, on none (ifindex 0). */
struct sighting cooked_nowhere(const struct journey *j);
/* The cooked header (COOKED_HDR_LEN bytes) of @j as seen at @s. */
void cooked_header(uint8_t *b, const struct journey *j,
		   const struct sighting *s);
enum cooked_bytes { COOKED_NONE, COOKED_KEPT, COOKED_BUILT };
/*
 * The packet from its IP header into @ip (room for COOKED_PACKET_MAX
 * bytes): the bytes a record kept, or headers built from the records
 * (see cooked.c); @caplen bytes written, of a packet of @len.
 */
enum cooked_bytes cooked_packet(uint8_t *ip, const struct journey *j,
				uint32_t *caplen, uint32_t *len);

/* output.c */
void output_init(const struct options *o, bool have_offset, int64_t offset);
/* Of several -r files: each node's name (its host, else its file) */
void output_nodes(const char *const *names, unsigned int n);
void print_record(FILE *f, const struct magnet_record *r);
void print_loss(FILE *f, const struct magnet_record *r);
void print_packet(FILE *f, const struct journey *j);
void print_journey_lines(FILE *f, const struct journey *j, const char *indent);
/* The context a record was logged in: "softirq", "hardirq", "nmi" or "". */
const char *context(uint16_t rflags);
/* The packet's line, without time (malloc'ed; exits when out of memory). */
char *packet_summary(const struct journey *j);
/* The journey as pcapng.c's comment (malloc'ed; exits when out of memory). */
char *journey_comment(const struct journey *j);
void json_record(FILE *f, const struct magnet_record *r);
void json_loss(FILE *f, const struct magnet_record *r);
void json_packet(FILE *f, const struct journey *j);
void print_block(FILE *f, const struct blockio *b);
void json_block(FILE *f, const struct blockio *b);
/* An app.span record, whole (its lengths add up, not cut) */
bool is_span_record(const struct magnet_record *r);
void print_span(FILE *f, const struct magnet_record *r);
void json_span(FILE *f, const struct magnet_record *r);
/* A cpu.sample record, its stacks as far as the record holds them */
bool is_sample_record(const struct magnet_record *r);
void print_sample(FILE *f, const struct magnet_record *r);
void json_sample(FILE *f, const struct magnet_record *r);

/* The sampler's profile (profile.c): apparent, steal, compensated time */
struct profile;
/* @kallsyms: --kallsyms, or NULL */
struct profile *profile_new(const char *kallsyms);
/* A cpu.sample record (is_sample_record()); 0, or -1 (no memory) */
int profile_sample(struct profile *p, const struct magnet_record *r);
/* The report, text or JSON; folded stacks; 0 or -1 (errno) */
int profile_report(struct profile *p, FILE *f, bool json);
int profile_folded(struct profile *p, FILE *f);
void profile_free(struct profile *p);
/* Addresses named in /etc/hosts: up to @max of @name's, or -1. */
struct host_addr {
	uint8_t family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
};
int hosts_lookup(const char *name, struct host_addr *out, int max);

/* pcapng.c */
struct pcapng;
/*
 * @live: a capture on this system (its name goes in the file); @rot:
 * files one after another (NULL: one file).
 */
struct pcapng *pcapng_create(const char *path, uint32_t snaplen, bool live,
			     const struct rotation *rot);
/* -U: write each packet out as it comes, not when stdio's buffer fills. */
void pcapng_flush_each(struct pcapng *p);
/*
 * The journey @j at its sightings @s (@n of them: see cooked.c), each a
 * packet: 1 written, 0 no packet bytes to write, 2 -G's -W files are
 * written (the capture ends), -1 error (printed).
 */
int pcapng_write(struct pcapng *p, const struct journey *j, int64_t offset,
		 const char *comment, const struct sighting *s, unsigned int n);
/* @n records were lost: the next packet's drop count, the statistics. */
void pcapng_lost(struct pcapng *p, uint64_t n);
/* Write the statistics and close; -1 (printed) on an error. */
int pcapng_close(struct pcapng *p);

struct pcapng_in;
/* Do the first bytes of a file say pcapng (or pcap: read alike)? */
bool pcapng_is(const uint8_t *head, size_t len);
/*
 * Read pcapng from @f (taken over: closed by pcapng_close_read), whose
 * first @n bytes (at most 8) were read into @head.
 */
struct pcapng_in *pcapng_open_read(FILE *f, const char *path,
				   const uint8_t *head, size_t n);
/* The next packet as a journey (ts: Unix ns): 1, 0 at the end, -1 error. */
int pcapng_read(struct pcapng_in *r, struct journey **j);
/* Packets of link types that are not IP (skipped). */
unsigned long long pcapng_skipped(const struct pcapng_in *r);
void pcapng_close_read(struct pcapng_in *r);

/* perfetto.c */
struct timeline;
struct timeline *timeline_create(const char *path);
/* The journey @j: a slice per layer, a flow from the first to the last. */
int timeline_packet(struct timeline *t, const struct journey *j,
		    int64_t offset);
/* Of several -r files: a process per node, named @names[node] */
void timeline_nodes(struct timeline *t, const char *const *names,
		    unsigned int n);
/* End the file; -1 (printed) on an error. */
int timeline_close(struct timeline *t);

/* nodes.c */
#define NODES_MAX	16		/* -r files merged, at most */
#define NODES_MAX_TEXT	"16"
struct nodes;
/*
 * Several -r files, each a node's: their clocks estimated (said on
 * stderr) and the files opened to be read as one stream; NULL and a
 * message on an error.
 */
struct nodes *nodes_open(const struct options *o);
/*
 * The next item of all the files in time order, on the first file's wall
 * clock (the records' times are wall clock time: offset 0); a packet sent
 * by one node and received by another one journey. NULL at the end.
 */
struct item *nodes_next(struct nodes *ns);
/* The host a node's file names, or NULL */
const char *nodes_host(const struct nodes *ns, unsigned int node);
void nodes_counts(const struct nodes *ns, unsigned long long *records,
		  unsigned long long *lost);
bool nodes_failed(const struct nodes *ns);
/* Joined and lone packets, the clocks: text, or JSON summary fields */
void nodes_summary(const struct nodes *ns, FILE *f, bool json);
void nodes_close(struct nodes *ns);

/* spans.c */
struct spans;
struct otel_out;
struct spans_stats {
	unsigned long long written;	/* spans, each output */
	unsigned long long incomplete;	/* open at the end: written as they stood */
	unsigned long long unmatched_ends; /* ends and events of no open span */
	unsigned long long unmatched_begins; /* begins of one already open */
	unsigned long long dropped;	/* beyond the limits */
	unsigned long long bad_traceparent; /* headers not W3C's */
};
/* @offset: Unix time minus the records'; @live: /proc names processes */
struct spans *spans_new(int64_t offset, bool live);
/* Of several -r files: node @node's host.name */
void spans_node(struct spans *sp, unsigned int node, const char *host);
/* Write the spans to @out too (at most two: OTLP and Zipkin) */
void spans_output(struct spans *sp, struct otel_out *out);
/* Each record shown, in order (app.span's are joined into spans) */
void spans_record(struct spans *sp, const struct magnet_record *r);
void spans_packet(struct spans *sp, const struct journey *j);
void spans_block(struct spans *sp, const struct blockio *b);
/* The input ended: spans still open written; -1 if writing failed */
int spans_end(struct spans *sp);
const struct spans_stats *spans_stats(const struct spans *sp);
void spans_free(struct spans *sp);

#endif /* MAGNET_READ_H */

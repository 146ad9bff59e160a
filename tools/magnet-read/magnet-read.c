// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-read: read magnet's event records, print them, or save them to a
 * trace file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/magnet.h>

#define DEBUGFS		"/sys/kernel/debug"
#define TRACE_MAGIC	"MAGNETTR"

/*
 * A trace file: this header, then the records exactly as read() returned
 * them (each ALIGN(size, 8) bytes).
 */
struct trace_header {
	char magic[8];
	uint32_t format_version;	/* MAGNET_FORMAT_VERSION */
	uint32_t header_size;		/* sizeof(struct magnet_record) */
};

struct options {
	const char *buffer;
	const char *write_file;
	const char *read_file;
	unsigned long long count;	/* 0 = no limit */
	long long size_wm, count_wm, timeout_ms;
	bool nonblock, hex, quiet;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: magnet-read [OPTIONS]\n"
"\n"
"Read event records from a magnet buffer and print them, one line each, or\n"
"save them to a trace file. Reading consumes the records; a buffer has one\n"
"reader at a time.\n"
"\n"
"Options:\n"
"  -b, --buffer NAME     buffer to read (default: default); see\n"
"                        " DEBUGFS "/magnet/control/buffers\n"
"  -c, --count N         stop after N records (loss records not counted)\n"
"  -w, --write FILE      save the records to FILE instead of printing them\n"
"                        (\"-\" for standard output)\n"
"  -r, --read FILE       print the records of a trace file made with -w\n"
"  -N, --nonblock        read what was logged before it started, then exit\n"
"  -s, --size-wm BYTES   wake only when BYTES of records are waiting\n"
"  -n, --count-wm N      wake only when N records are waiting\n"
"  -t, --timeout MS      with -s or -n: wake after MS milliseconds anyway\n"
"  -x, --hex             print each payload as hex bytes\n"
"  -q, --quiet           print only the closing summary\n"
"  -h, --help            show this help\n"
"\n"
"Output: one line per record:\n"
"  SECONDS.NANOSECONDS cpu CPU ev EVENT [CONTEXT] TGID/TID id ID len BYTES\n"
"where the time is CLOCK_MONOTONIC and CONTEXT is softirq, hardirq or nmi\n"
"when the record was logged from one. Lost records show as\n"
"  SECONDS.NANOSECONDS cpu CPU LOST N records (TOTAL since the buffer was made)\n"
"at the place in the stream where they were lost.\n"
"\n"
"Exit status: 0 on success, 1 on an error, 2 on bad usage.\n"
"Needs root and the magnet module loaded (debugfs at " DEBUGFS ").\n");
}

static int parse_number(const char *s, long long *out, const char *what)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno || end == s || *end || *out < 0) {
		fprintf(stderr, "magnet-read: bad %s \"%s\": expected a number >= 0\n",
			what, s);
		return -1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option lopts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "write", required_argument, NULL, 'w' },
		{ "read", required_argument, NULL, 'r' },
		{ "nonblock", no_argument, NULL, 'N' },
		{ "size-wm", required_argument, NULL, 's' },
		{ "count-wm", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "hex", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	long long v;
	int opt;

	*o = (struct options){ .buffer = "default" };
	while ((opt = getopt_long(argc, argv, "b:c:w:r:Ns:n:t:xqh", lopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'b': o->buffer = optarg; break;
		case 'w': o->write_file = optarg; break;
		case 'r': o->read_file = optarg; break;
		case 'N': o->nonblock = true; break;
		case 'x': o->hex = true; break;
		case 'q': o->quiet = true; break;
		case 'c':
			if (parse_number(optarg, &v, "--count"))
				return -1;
			o->count = v;
			break;
		case 's':
			if (parse_number(optarg, &o->size_wm, "--size-wm"))
				return -1;
			break;
		case 'n':
			if (parse_number(optarg, &o->count_wm, "--count-wm"))
				return -1;
			break;
		case 't':
			if (parse_number(optarg, &o->timeout_ms, "--timeout"))
				return -1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'magnet-read --help'.\n");
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "magnet-read: unexpected argument \"%s\"\nTry 'magnet-read --help'.\n",
			argv[optind]);
		return -1;
	}
	if (o->read_file && o->write_file) {
		fprintf(stderr, "magnet-read: --read and --write do not go together\n");
		return -1;
	}
	return 0;
}

/* The module's record format must be the one we were built for. */
static int check_format(void)
{
	FILE *f = fopen(DEBUGFS "/magnet/control/format", "r");
	int version = -1, header = -1;
	char line[256];

	if (!f) {
		fprintf(stderr, "magnet-read: %s/magnet/control/format: %s (is the magnet module loaded and debugfs mounted? are you root?)\n",
			DEBUGFS, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "version: %d", &version);
		sscanf(line, "header_size: %d", &header);
	}
	fclose(f);
	if (version != MAGNET_FORMAT_VERSION ||
	    header != (int)sizeof(struct magnet_record)) {
		fprintf(stderr, "magnet-read: the module speaks record format %d (header %d bytes); this magnet-read speaks %d (%zu bytes): use the matching magnet-read\n",
			version, header, MAGNET_FORMAT_VERSION,
			sizeof(struct magnet_record));
		return -1;
	}
	return 0;
}

static int open_buffer(const struct options *o)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), DEBUGFS "/magnet/data/%s", o->buffer);
	fd = open(path, O_RDONLY | (o->nonblock ? O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == EBUSY)
			fprintf(stderr, "magnet-read: buffer \"%s\" already has a reader (one at a time)\n",
				o->buffer);
		else if (errno == ENOENT)
			fprintf(stderr, "magnet-read: no buffer \"%s\" (see %s/magnet/control/buffers)\n",
				o->buffer, DEBUGFS);
		else
			fprintf(stderr, "magnet-read: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (lseek(fd, o->size_wm, MAGNET_SEEK_SIZE_WM) < 0 ||
	    lseek(fd, o->count_wm, MAGNET_SEEK_COUNT_WM) < 0 ||
	    lseek(fd, o->timeout_ms * 1000, MAGNET_SEEK_TIMEOUT) < 0) {
		fprintf(stderr, "magnet-read: watermark or timeout out of range for buffer \"%s\": %s\n",
			o->buffer, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static const char *context(uint16_t flags)
{
	if (flags & MAGNET_RF_NMI)
		return " nmi";
	if (flags & MAGNET_RF_HARDIRQ)
		return " hardirq";
	if (flags & MAGNET_RF_SOFTIRQ)
		return " softirq";
	return "";
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Earliest timestamp among the whole records of a read() result. */
static uint64_t oldest_timestamp(const char *data, size_t n)
{
	uint64_t oldest = UINT64_MAX;
	size_t off = 0;

	while (n - off >= sizeof(struct magnet_record)) {
		const struct magnet_record *r = (const void *)(data + off);

		if (r->size < sizeof(*r))
			break;
		if (r->timestamp < oldest)
			oldest = r->timestamp;
		off += (r->size + MAGNET_RECORD_ALIGN - 1) &
		       ~(size_t)(MAGNET_RECORD_ALIGN - 1);
	}
	return oldest;
}

struct tally {
	unsigned long long records, lost;
};

static void print_one(const struct magnet_record *r, const struct options *o,
		      const char *indent);

/*
 * A journey (a correlating filter's record): its line, then the records
 * it holds, indented.
 */
static void print_journey(const struct magnet_record *r,
			  const struct options *o)
{
	const struct magnet_journey *j = (const void *)r->payload;
	size_t len = r->size - sizeof(*r), off = sizeof(*j);
	unsigned int i;

	if (len < sizeof(*j)) {
		printf(" (short journey)\n");
		return;
	}
	printf(" JOURNEY filter %u records %u duration %llu ns%s\n", j->filter,
	       j->records, (unsigned long long)j->duration_ns,
	       j->flags & MAGNET_JF_CUT ? " cut" : "");
	for (i = 0; i < j->records; i++) {
		const struct magnet_record *in = (const void *)(r->payload + off);

		if (off + sizeof(*in) > len || in->size < sizeof(*in) ||
		    off + in->size > len) {
			printf("    (journey record %u malformed)\n", i);
			return;
		}
		print_one(in, o, "    ");
		off += (in->size + MAGNET_RECORD_ALIGN - 1) &
		       ~(size_t)(MAGNET_RECORD_ALIGN - 1);
	}
}

static void print_one(const struct magnet_record *r, const struct options *o,
		      const char *indent)
{
	uint64_t ns = r->timestamp;

	printf("%s%" PRIu64 ".%09" PRIu64 " cpu %u ev %u%s %u/%u id %#" PRIx64 " len %zu",
	       indent, ns / 1000000000, ns % 1000000000, r->cpu, r->event,
	       context(r->flags), r->tgid, r->tid, (uint64_t)r->id,
	       r->size - sizeof(*r));
	if (r->event == MAGNET_EVENT_JOURNEY) {
		print_journey(r, o);
		return;
	}
	if (o->hex) {
		for (size_t i = 0; i < r->size - sizeof(*r); i++)
			printf("%s%02x", i % 16 ? " " : "\n    ", r->payload[i]);
	}
	putchar('\n');
}

static void print_record(const struct magnet_record *r, const struct options *o,
			 struct tally *t)
{
	uint64_t ns = r->timestamp;

	if (r->event == MAGNET_EVENT_LOSS) {
		const struct magnet_loss *l = (const void *)r->payload;

		t->lost += l->lost;
		if (!o->quiet)
			printf("%" PRIu64 ".%09" PRIu64 " cpu %u LOST %llu records (%llu since the buffer was made)\n",
			       ns / 1000000000, ns % 1000000000, r->cpu,
			       (unsigned long long)l->lost,
			       (unsigned long long)l->total);
		return;
	}
	t->records++;
	if (o->quiet)
		return;
	print_one(r, o, "");
}

/*
 * Hand each whole record of @data to print_record(); returns the bytes
 * used, or -1 if the data is not a record stream.
 */
static ssize_t walk(const char *data, size_t n, const struct options *o,
		    struct tally *t)
{
	size_t off = 0;

	while (n - off >= sizeof(struct magnet_record)) {
		const struct magnet_record *r = (const void *)(data + off);
		size_t len = (r->size + MAGNET_RECORD_ALIGN - 1) &
			     ~(size_t)(MAGNET_RECORD_ALIGN - 1);

		if (r->size < sizeof(*r) || r->size > MAGNET_RECORD_MAX)
			return -1;
		if (len > n - off)
			break;
		print_record(r, o, t);
		off += len;
		if (o->count && t->records >= o->count)
			break;
	}
	return off;
}

static int read_trace(const struct options *o, struct tally *t)
{
	static char buf[4 * MAGNET_RECORD_MAX] __attribute__((aligned(8)));
	FILE *f = strcmp(o->read_file, "-") ? fopen(o->read_file, "r") : stdin;
	struct trace_header h;
	size_t have = 0, n;
	ssize_t used;

	if (!f) {
		fprintf(stderr, "magnet-read: %s: %s\n", o->read_file, strerror(errno));
		return -1;
	}
	if (fread(&h, sizeof(h), 1, f) != 1 ||
	    memcmp(h.magic, TRACE_MAGIC, sizeof(h.magic))) {
		fprintf(stderr, "magnet-read: %s is not a magnet trace file\n", o->read_file);
		return -1;
	}
	if (h.format_version != MAGNET_FORMAT_VERSION ||
	    h.header_size != sizeof(struct magnet_record)) {
		fprintf(stderr, "magnet-read: %s has record format %u; this magnet-read reads %d\n",
			o->read_file, h.format_version, MAGNET_FORMAT_VERSION);
		return -1;
	}
	while (!stop && (n = fread(buf + have, 1, sizeof(buf) - have, f)) > 0) {
		have += n;
		used = walk(buf, have, o, t);
		if (used < 0) {
			fprintf(stderr, "magnet-read: %s: damaged record\n", o->read_file);
			return -1;
		}
		memmove(buf, buf + used, have - used);
		have -= used;
		if (o->count && t->records >= o->count)
			return 0;
	}
	if (have) {
		fprintf(stderr, "magnet-read: %s: ends inside a record\n", o->read_file);
		return -1;
	}
	return 0;
}

static int read_live(const struct options *o, struct tally *t)
{
	static char buf[16 * MAGNET_RECORD_MAX] __attribute__((aligned(8)));
	FILE *out = NULL;
	ssize_t n;
	uint64_t started;
	int fd;

	if (check_format())
		return -1;
	fd = open_buffer(o);
	if (fd < 0)
		return -1;
	if (o->write_file) {
		struct trace_header h = {
			.format_version = MAGNET_FORMAT_VERSION,
			.header_size = sizeof(struct magnet_record),
		};

		memcpy(h.magic, TRACE_MAGIC, sizeof(h.magic));
		out = strcmp(o->write_file, "-") ? fopen(o->write_file, "w") : stdout;
		if (!out || fwrite(&h, sizeof(h), 1, out) != 1) {
			fprintf(stderr, "magnet-read: %s: %s\n", o->write_file, strerror(errno));
			return -1;
		}
	}
	started = monotonic_ns();
	while (!stop) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && o->nonblock)
				break;
			fprintf(stderr, "magnet-read: reading buffer \"%s\": %s\n",
				o->buffer, strerror(errno));
			return -1;
		}
		if (n == 0) {
			fprintf(stderr, "magnet-read: buffer \"%s\" was removed\n", o->buffer);
			break;
		}
		if (out) {
			struct options counting = *o;

			counting.quiet = true;
			walk(buf, n, &counting, t);
			if (fwrite(buf, 1, n, out) != (size_t)n) {
				fprintf(stderr, "magnet-read: %s: %s\n", o->write_file,
					strerror(errno));
				return -1;
			}
		} else if (walk(buf, n, o, t) < 0) {
			fprintf(stderr, "magnet-read: damaged record from the module\n");
			return -1;
		}
		if (o->count && t->records >= o->count)
			break;
		/*
		 * -N reads what was logged before it started: events our own
		 * reads cause (a probe on read(), say) would never let the
		 * buffer run dry.
		 */
		if (o->nonblock && oldest_timestamp(buf, n) >= started)
			break;
	}
	if (out && fflush(out)) {
		fprintf(stderr, "magnet-read: %s: %s\n", o->write_file, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o;
	struct tally t = {};
	int ret;

	if (parse_args(argc, argv, &o))
		return 2;
	/* No SA_RESTART: a read() waiting on an idle buffer must return. */
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = o.read_file ? read_trace(&o, &t) : read_live(&o, &t);
	fflush(stdout);
	if (!ret)
		fprintf(stderr, "magnet-read: %llu records, %llu lost\n",
			t.records, t.lost);
	return ret ? 1 : 0;
}

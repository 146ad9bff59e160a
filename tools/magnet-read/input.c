// SPDX-License-Identifier: GPL-2.0
/*
 * Where records come from and go to: a buffer's data file in debugfs
 * (waited on with watermarks, so an idle or slow buffer costs no CPU, and
 * read where the kernel wrote the records, through the file's mapping,
 * or copied out with read()), trace files, and the merge that puts the
 * CPUs' records in timestamp order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "mapped.h"
#include "magnet-read.h"

/*
 * A trace file: this header, then the records exactly as read() returned
 * them (each MAGNET_RECORD_LEN(size) bytes). Version 1 (magnet-read before
 * packet journeys) had only the first four fields, with @size holding
 * sizeof(struct magnet_record) and @version the record format (1).
 */
#define TRACE_MAGIC	"MAGNETTR"
#define TRACE_VERSION	2

struct trace_header {
	char magic[8];			/* TRACE_MAGIC */
	uint32_t version;		/* TRACE_VERSION */
	uint32_t size;			/* bytes of this header */
	uint32_t record_format;		/* MAGNET_FORMAT_VERSION */
	uint32_t record_header_size;	/* sizeof(struct magnet_record) */
	int64_t realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC */
	uint32_t snaplen;		/* -s of the capture */
	uint32_t flags;			/* TRACE_F_* */
	char buffer[MAGNET_NAME_LEN];	/* the buffer read */
};

_Static_assert(sizeof(struct trace_header) == 72, "trace file header layout");
/*
 * Then, in a header of at least 136 bytes, the capturing host's name
 * (NUL-padded; for the host.name of --otlp's and --zipkin's spans); in
 * one of at least 144, how far realtime_offset_ns may be off (a uint64_t
 * of ns; see realtime_offset()). Readers skip what they do not know of a
 * longer header, so a file with them reads everywhere.
 */
#define TRACE_HOST_LEN	64
#define TRACE_HEADER_SIZE (sizeof(struct trace_header) + TRACE_HOST_LEN + 8)

#define TRACE_F_NO_OFFSET 0x1	/* realtime_offset_ns is not known */

#define V1_HEADER_SIZE	16
#define READ_SIZE	(16 * MAGNET_RECORD_MAX)
#define IDLE_POLL_MS	100	/* held records: idle after this long */
#define SIZE_WM_DEFAULT	(64 * 1024)
#define TIMEOUT_MS_DEFAULT 100
#define TRACE_DIRECT_MIN (16 * 1024)	/* chunks this big: write(), not stdio */

struct source {
	const char *name;		/* buffer or file, for messages */
	int fd;				/* live */
	FILE *file;			/* trace file */
	bool live, nonblock, done;
	uint64_t started;		/* -N: CLOCK_MONOTONIC at the start */
	long long size_wm, count_wm;	/* as set, to restore */
	long long timeout_ms;		/* the read timeout: 0 = none */
	bool have_offset;
	int64_t offset;
	uint64_t offset_error;		/* how far @offset may be off, ns */
	char host[TRACE_HOST_LEN + 1];	/* "": not known */
	struct mapped *map;		/* live, read through the mapping */
	size_t have, used;		/* file: bytes in buf, handed out */
	uint64_t file_pos;		/* file: offset of buf[0] */
	char *buf;
};

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few brackets
 * (monotonic, realtime, monotonic): a task preempted between two reads
 * of the clocks would have the offset off by as long as it waited (a
 * loaded virtual machine's vCPU waits milliseconds). *@error: half the
 * tightest bracket.
 */
#define OFFSET_TRIES	8
static int64_t realtime_offset(uint64_t *error)
{
	uint64_t best = UINT64_MAX;
	int64_t offset = 0;

	for (int i = 0; i < OFFSET_TRIES; i++) {
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
		uint64_t r = clock_ns(CLOCK_REALTIME);
		uint64_t m2 = clock_ns(CLOCK_MONOTONIC);

		if (m2 - m1 < best) {
			best = m2 - m1;
			offset = (int64_t)(r - (m1 + best / 2));
		}
	}
	*error = (best + 1) / 2;
	return offset;
}

static int set_attr(int fd, long long value, int whence)
{
	return lseek(fd, value, whence) < 0 ? -1 : 0;
}

struct source *source_open_live(const struct options *o, const char *path)
{
	struct source *s;
	int fd;

	fd = open(path, O_RDONLY | (o->nonblock ? O_NONBLOCK : 0));
	if (fd < 0) {
		if (errno == EBUSY)
			fprintf(stderr, PROG ": buffer \"%s\" is being read by another reader (it already has a reader; one at a time)\n",
				o->buffer);
		else if (errno == ENOENT)
			fprintf(stderr, PROG ": no buffer \"%s\" (see %s/magnet/control/buffers)\n",
				o->buffer, DEBUGFS);
		else
			fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->buf = aligned_alloc(8, READ_SIZE))) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	s->name = o->buffer;
	s->fd = fd;
	s->live = true;
	if (gethostname(s->host, TRACE_HOST_LEN))
		s->host[0] = 0;
	s->nonblock = o->nonblock;
	s->size_wm = o->size_wm >= 0 ? o->size_wm : 0;
	s->count_wm = o->count_wm >= 0 ? o->count_wm : 0;
	/*
	 * Through the mapping where the buffer has one (drop mode). It
	 * hands out one CPU's records at a time: source_horizon() says up
	 * to when every CPU's are in (keeping it costs a clock read per
	 * ring looked at, so only a reader that orders records asks).
	 */
	if (!o->no_map && !(s->map = mapped_open(fd)) && errno != EOPNOTSUPP) {
		fprintf(stderr, PROG ": mapping buffer \"%s\": %s\n", o->buffer,
			strerror(errno));
		source_close(s);
		return NULL;
	}
	/*
	 * Waiting for a buffer: by default wake for 64 KiB of records (at
	 * most a quarter of a CPU's ring, so nothing is lost waiting) or
	 * after 100 ms with what there is. A capture that only saves, from
	 * the mapping, wakes for a quarter of the ring: each wake-up costs
	 * the traced CPU a reader to schedule, and at 4000-byte records
	 * 64 KiB meant one every 16 records (bench/RESULTS.md, section 3).
	 * Not when copying with read() (overwrite mode, --no-map): copying
	 * a quarter of the ring at once let the writer overwrite more
	 * (measured with the cost benchmark's overwrite-mode readers: far
	 * more records lost than at 64 KiB). -N reads what there is.
	 */
	if (!o->nonblock && o->size_wm < 0) {
		unsigned long long size = control_ring_size(fd);

		s->size_wm = SIZE_WM_DEFAULT;
		if (size && ((s->map && save_only(o)) ||
			     size / 4 < (unsigned long long)s->size_wm))
			s->size_wm = size / 4;
	}
	s->timeout_ms = o->timeout_ms >= 0 ? o->timeout_ms :
			o->nonblock ? 0 : TIMEOUT_MS_DEFAULT;
	if (set_attr(fd, s->size_wm, MAGNET_SEEK_SIZE_WM) ||
	    set_attr(fd, s->count_wm, MAGNET_SEEK_COUNT_WM) ||
	    set_attr(fd, s->timeout_ms * 1000, MAGNET_SEEK_TIMEOUT)) {
		fprintf(stderr, PROG ": watermark or timeout out of range for buffer \"%s\": %s\n",
			o->buffer, strerror(errno));
		source_close(s);
		return NULL;
	}
	if (s->map && !save_only(o))
		mapped_horizon(s->map);
	s->have_offset = true;
	s->offset = realtime_offset(&s->offset_error);
	s->started = clock_ns(CLOCK_MONOTONIC);
	return s;
}

struct source *source_open_file(FILE *f, const char *path,
				const uint8_t *head, size_t n)
{
	char host[TRACE_HOST_LEN + 1] = "";
	struct trace_header h = {};
	uint64_t s_error = 0;
	struct source *s;
	size_t got, skip;

	memcpy(&h, head, n);
	got = n + fread((char *)&h + n, 1, V1_HEADER_SIZE - n, f);
	if (got != V1_HEADER_SIZE || memcmp(h.magic, TRACE_MAGIC, 8)) {
		fprintf(stderr, PROG ": %s is neither a magnet trace file nor a pcapng file\n",
			path);
		goto fail;
	}
	if (h.version == 1) {
		/* The old header: record format 1 with 40-byte headers. */
		if (h.size != sizeof(struct magnet_record)) {
			fprintf(stderr, PROG ": %s: version 1 trace file with %u-byte record headers; this magnet-read reads %zu\n",
				path, h.size, sizeof(struct magnet_record));
			goto fail;
		}
		h.record_format = 1;
		h.record_header_size = h.size;
	} else if (h.version == TRACE_VERSION) {
		if (h.size < sizeof(h) || h.size % 8 || h.size > 4096 ||
		    fread((char *)&h + V1_HEADER_SIZE, 1,
			  sizeof(h) - V1_HEADER_SIZE, f) !=
		    sizeof(h) - V1_HEADER_SIZE) {
			fprintf(stderr, PROG ": %s: damaged trace file header\n", path);
			goto fail;
		}
		skip = h.size - sizeof(h);
		if (skip >= TRACE_HOST_LEN) {
			if (fread(host, 1, TRACE_HOST_LEN, f) != TRACE_HOST_LEN) {
				fprintf(stderr, PROG ": %s: damaged trace file header\n", path);
				goto fail;
			}
			skip -= TRACE_HOST_LEN;
		}
		if (skip >= 8) {
			/* (a bound past a year is no bound: a damaged file) */
			if (fread(&s_error, 8, 1, f) != 1 ||
			    s_error > 366ULL * 86400 * NSEC_PER_SEC) {
				fprintf(stderr, PROG ": %s: damaged trace file header\n", path);
				goto fail;
			}
			skip -= 8;
		}
		for (; skip; skip--)
			if (fgetc(f) == EOF) {
				fprintf(stderr, PROG ": %s: damaged trace file header\n", path);
				goto fail;
			}
	} else {
		fprintf(stderr, PROG ": %s is a version %u trace file; this magnet-read reads versions 1 and %d\n",
			path, h.version, TRACE_VERSION);
		goto fail;
	}
	if (h.record_format != MAGNET_FORMAT_VERSION ||
	    h.record_header_size != sizeof(struct magnet_record)) {
		fprintf(stderr, PROG ": %s has record format %u; this magnet-read reads %d\n",
			path, h.record_format, MAGNET_FORMAT_VERSION);
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->buf = aligned_alloc(8, READ_SIZE))) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	s->name = path;
	s->file = f;
	/* (printable bytes only: it goes into JSON and messages) */
	for (size_t i = 0; i < TRACE_HOST_LEN && host[i] >= 0x21 && host[i] < 0x7f; i++)
		s->host[i] = host[i];
	s->fd = -1;
	s->have_offset = h.version >= 2 && !(h.flags & TRACE_F_NO_OFFSET);
	s->offset = h.realtime_offset_ns;
	s->offset_error = s_error;
	s->file_pos = h.version >= 2 ? h.size : V1_HEADER_SIZE;
	return s;
fail:
	if (f != stdin)
		fclose(f);
	return NULL;
}

void source_close(struct source *s)
{
	if (!s)
		return;
	mapped_close(s->map);
	if (s->fd >= 0)
		close(s->fd);
	if (s->file && s->file != stdin)
		fclose(s->file);
	free(s->buf);
	free(s);
}

int source_drain(struct source *s)
{
	int fl = fcntl(s->fd, F_GETFL);

	if (fl < 0 || fcntl(s->fd, F_SETFL, fl | O_NONBLOCK)) {
		fprintf(stderr, PROG ": buffer \"%s\": %s\n", s->name,
			strerror(errno));
		return -1;
	}
	s->nonblock = true;
	s->started = clock_ns(CLOCK_MONOTONIC);
	return 0;
}

uint64_t source_horizon(struct source *s)
{
	return s->map ? mapped_horizon(s->map) : UINT64_MAX;
}

const char *source_host(const struct source *s)
{
	return s->host[0] ? s->host : NULL;
}

bool source_have_offset(const struct source *s)
{
	return s->have_offset;
}

int64_t source_realtime_offset(const struct source *s)
{
	return s->offset;
}

uint64_t source_offset_error(const struct source *s)
{
	return s->offset_error;
}

/* Bytes of whole records at the start of @data; -1 at a bad record. */
static ssize_t whole_records(const char *data, size_t n, size_t *bad)
{
	size_t off = 0;

	while (n - off >= sizeof(struct magnet_record)) {
		const struct magnet_record *r = (const void *)(data + off);

		if (r->size < sizeof(*r) || r->size > MAGNET_RECORD_MAX) {
			*bad = off;
			return -1;
		}
		if (MAGNET_RECORD_LEN(r->size) > n - off)
			break;
		off += MAGNET_RECORD_LEN(r->size);
	}
	return off;
}

int records_check(const char *data, size_t len, const char *what)
{
	size_t bad = 0;
	ssize_t n = whole_records(data, len, &bad);

	if (n < 0 || (size_t)n != len) {
		fprintf(stderr, PROG ": damaged record from %s\n", what);
		return -1;
	}
	return 0;
}

/* Earliest timestamp among the whole records of a read() result. */
static uint64_t oldest_timestamp(const char *data, size_t n)
{
	uint64_t oldest = UINT64_MAX;
	size_t off = 0;

	while (n - off >= sizeof(struct magnet_record)) {
		const struct magnet_record *r = (const void *)(data + off);

		if (r->timestamp < oldest)
			oldest = r->timestamp;
		off += MAGNET_RECORD_LEN(r->size);
	}
	return oldest;
}

/*
 * What is waiting below the watermarks, without waiting: lower them for
 * one read. Returns bytes, 0 if there is nothing, -1 on an error.
 */
static ssize_t read_below_watermarks(struct source *s)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	ssize_t n = 0;

	if (set_attr(s->fd, 0, MAGNET_SEEK_SIZE_WM) ||
	    set_attr(s->fd, 0, MAGNET_SEEK_COUNT_WM))
		return -1;
	if (poll(&pfd, 1, 0) == 1)
		n = read(s->fd, s->buf, READ_SIZE);
	if (set_attr(s->fd, s->size_wm, MAGNET_SEEK_SIZE_WM) ||
	    set_attr(s->fd, s->count_wm, MAGNET_SEEK_COUNT_WM))
		return -1;
	return n;
}

/* @n bytes of records at @data from the module: checked, handed out. */
static enum source_status live_data(struct source *s, const char *data,
				    ssize_t n, const char **out, size_t *len)
{
	if (records_check(data, n, "the module"))
		return SOURCE_ERROR;
	/*
	 * -N reads what was logged before it started: events our own
	 * reads cause (a probe on read(), say) would never let the buffer
	 * run dry.
	 */
	if (s->nonblock && oldest_timestamp(data, n) >= s->started)
		s->done = true;
	*out = data;
	*len = n;
	return SOURCE_DATA;
}

static enum source_status live_failed(struct source *s)
{
	fprintf(stderr, PROG ": reading buffer \"%s\": %s\n", s->name,
		strerror(errno));
	return SOURCE_ERROR;
}

/*
 * As live_next(), through the mapping: a run of records in place, given
 * back to the kernel when the next is asked for. The watermarks work as
 * for read(): poll() waits for them.
 */
static enum source_status mapped_live_next(struct source *s,
					   const char **data, size_t *len,
					   bool pending)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	int r, wait = -1;
	ssize_t n;

	n = mapped_next(s->map, data, false);
	if (!n && s->nonblock) {
		/* -N: the losses not reported yet, then the end. */
		n = mapped_next(s->map, data, true);
		if (!n)
			return SOURCE_END;
	} else if (!n) {
		/* The read timeout, as a blocking read() has it; shorter
		 * while records are held.
		 */
		if (s->timeout_ms > 0)
			wait = s->timeout_ms > INT_MAX ? INT_MAX : s->timeout_ms;
		if (pending && (wait < 0 || wait > IDLE_POLL_MS))
			wait = IDLE_POLL_MS;
		r = poll(&pfd, 1, wait);
		if (r < 0 && errno != EINTR)
			goto fail;
		if (r < 0)
			return SOURCE_IDLE;
		/* Ready, or timed out: what there is, below the watermarks. */
		n = mapped_next(s->map, data, true);
		if (!n && (pfd.revents & POLLHUP)) {
			fprintf(stderr, PROG ": buffer \"%s\" was removed\n",
				s->name);
			return SOURCE_END;
		}
		if (!n)
			return SOURCE_IDLE;
	}
	if (n < 0)
		goto fail;
	return live_data(s, *data, n, data, len);
fail:
	return live_failed(s);
}

static enum source_status live_next(struct source *s, const char **data,
				    size_t *len, bool pending)
{
	ssize_t n;

	if (s->done)
		return SOURCE_END;
	if (s->map)
		return mapped_live_next(s, data, len, pending);
	if (pending && !s->nonblock) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		int r = poll(&pfd, 1, IDLE_POLL_MS);

		if (r < 0 && errno != EINTR)
			goto fail;
		if (r <= 0) {
			n = r < 0 ? 0 : read_below_watermarks(s);
			if (n < 0 && errno != EINTR)
				goto fail;
			if (n <= 0)
				return SOURCE_IDLE;
			goto got;
		}
	}
	n = read(s->fd, s->buf, READ_SIZE);
	if (n < 0) {
		if (errno == EINTR)
			return SOURCE_IDLE;
		if (errno == EAGAIN && s->nonblock)
			return SOURCE_END;
		goto fail;
	}
got:
	if (n == 0) {
		fprintf(stderr, PROG ": buffer \"%s\" was removed\n", s->name);
		return SOURCE_END;
	}
	return live_data(s, s->buf, n, data, len);
fail:
	return live_failed(s);
}

static enum source_status file_next(struct source *s, const char **data,
				    size_t *len)
{
	size_t bad = 0, n;
	ssize_t whole;

	/* Keep what was not handed out (a record cut by the last read). */
	memmove(s->buf, s->buf + s->used, s->have - s->used);
	s->have -= s->used;
	s->file_pos += s->used;
	s->used = 0;
	for (;;) {
		whole = whole_records(s->buf, s->have, &bad);
		if (whole < 0) {
			fprintf(stderr, PROG ": %s: damaged record at byte %llu\n",
				s->name, (unsigned long long)(s->file_pos + bad));
			return SOURCE_ERROR;
		}
		if (whole > 0 && (s->done || s->have == READ_SIZE ||
				  (size_t)whole == s->have))
			break;
		if (s->done) {
			if (!s->have)
				return SOURCE_END;
			fprintf(stderr, PROG ": %s: truncated: ends inside a record at byte %llu\n",
				s->name, (unsigned long long)s->file_pos);
			return SOURCE_ERROR;
		}
		n = fread(s->buf + s->have, 1, READ_SIZE - s->have, s->file);
		if (!n) {
			if (ferror(s->file)) {
				fprintf(stderr, PROG ": %s: %s\n", s->name,
					strerror(errno));
				return SOURCE_ERROR;
			}
			s->done = true;
		}
		s->have += n;
	}
	s->used = whole;
	*data = s->buf;
	*len = whole;
	return SOURCE_DATA;
}

enum source_status source_next(struct source *s, const char **data,
			       size_t *len, bool pending)
{
	return s->live ? live_next(s, data, len, pending) :
			 file_next(s, data, len);
}

/* --- trace files ---------------------------------------------------------- */

struct trace_out {
	FILE *f;
	const char *path;
	const char *buffer;
	uint32_t snaplen;
	bool flush;			/* -U */
};

struct trace_out *trace_open(const char *path, const struct options *o)
{
	struct trace_out *t = calloc(1, sizeof(*t));

	if (!t) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	t->path = path;
	t->buffer = o->buffer;
	t->snaplen = o->snaplen;
	t->flush = o->packet_buffered;
	t->f = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!t->f) {
		fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
		free(t);
		return NULL;
	}
	return t;
}

int trace_start(struct trace_out *t, const struct source *src)
{
	struct trace_header h = {
		.version = TRACE_VERSION,
		.size = TRACE_HEADER_SIZE,
		.record_format = MAGNET_FORMAT_VERSION,
		.record_header_size = sizeof(struct magnet_record),
		.realtime_offset_ns = src->have_offset ? src->offset : 0,
		.snaplen = t->snaplen,
		.flags = src->have_offset ? 0 : TRACE_F_NO_OFFSET,
	};

	memcpy(h.magic, TRACE_MAGIC, sizeof(h.magic));
	strncpy(h.buffer, t->buffer, sizeof(h.buffer) - 1);
	/*
	 * Then the host that captured the records (this one, live; a file's
	 * copy keeps the name the file gives, or none), NUL-padded, and the
	 * bound on the wall clock offset.
	 */
	if (fwrite(&h, sizeof(h), 1, t->f) != 1 ||
	    fwrite(src->host, TRACE_HOST_LEN, 1, t->f) != 1 ||
	    fwrite(&src->offset_error, 8, 1, t->f) != 1) {
		fprintf(stderr, PROG ": %s: %s\n", t->path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A large chunk (records in place in the mapping, or read() by the
 * buffer-full) goes to the file in one write(), without stdio's copy.
 */
int trace_write(struct trace_out *t, const char *data, size_t len)
{
	ssize_t n;

	if (len < TRACE_DIRECT_MIN) {
		if (fwrite(data, 1, len, t->f) != len ||
		    (t->flush && fflush(t->f)))
			goto fail;
		return 0;
	}
	if (fflush(t->f))
		goto fail;
	while (len) {
		n = write(fileno(t->f), data, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		data += n;
		len -= n;
	}
	return 0;
fail:
	fprintf(stderr, PROG ": %s: %s\n", t->path, strerror(errno));
	return -1;
}

int trace_close(struct trace_out *t)
{
	int ret = 0;

	if (!t)
		return 0;
	if (fflush(t->f) || (t->f != stdout && fclose(t->f))) {
		fprintf(stderr, PROG ": %s: %s\n", t->path, strerror(errno));
		ret = -1;
	}
	free(t);
	return ret;
}

/* --- items ---------------------------------------------------------------- */

struct item *item_new(const struct magnet_record *r)
{
	static uint64_t seq;
	struct item *it = malloc(sizeof(*it) + MAGNET_RECORD_LEN(r->size));

	if (!it) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	*it = (struct item){
		.rec = (void *)(it + 1),
		.ts = r->timestamp,
		.seq = seq++,
		.kind = r->event == MAGNET_EVENT_LOSS &&
			r->size >= sizeof(*r) + sizeof(struct magnet_loss) ?
			ITEM_LOSS : ITEM_RECORD,
	};
	memcpy(it->rec, r, r->size);
	it->rec->__reserved = 0;	/* record_node(): this node's */
	return it;
}

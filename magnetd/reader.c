// SPDX-License-Identifier: GPL-2.0
/*
 * Draining the module's buffers: one reader per buffer the configuration's
 * probes log into, each a non-blocking data file watched by the event
 * loop. The file turns readable only once the watermarks are met (see
 * MAGNET_SEEK_* in <linux/magnet.h>), so a quiet buffer costs nothing and
 * a busy one is read in large batches. What waits below the watermarks is
 * read by a flush every `timeout` ms. Drop-mode buffers are read through
 * their data file's mapping, the records handled where the kernel wrote
 * them (mapped.c); overwrite-mode ones with read(), the watermarks lowered
 * to zero for a flush's read and put back.
 *
 * A read hands over each CPU's records in order, but one CPU after the
 * other, so a record can come before an older one of another CPU (or of
 * another buffer). Latencies pair records across CPUs, so records are
 * held back for HOLD_NS and handed on in timestamp order: a record is
 * released once it is HOLD_NS old, by which time the records logged
 * before it on other CPUs have been read too (every drain reads every
 * CPU). At most HOLD_MAX bytes are held; beyond that the oldest go on
 * at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "magnetd.h"
#include "mapped.h"
#include "merge.h"
#include "record.h"

#define READ_SIZE	(256 * 1024)	/* >= MAGNET_RECORD_MAX */
/* Reads per wakeup before other watchers get their turn. */
#define READS_PER_WAKEUP 16
#define HOLD_NS		(20 * 1000000ULL)
#define HOLD_MAX	(16 << 20)

struct reader {
	struct daemon *d;
	char buffer[MAGNET_NAME_LEN];
	int fd;
	struct mapped *map;		/* NULL: read() (overwrite mode) */
	uint64_t size_wm, count_wm;
	ev_io io;
	ev_timer flush;
	uint64_t records, reads;
};

static unsigned char read_buf[READ_SIZE] __attribute__((aligned(8)));

/* Records held back for ordering (lib/merge.c): copies, and their bytes. */
static struct {
	struct merge *merge;
	size_t bytes;
} hold;

static void deliver(struct daemon *d, const struct magnet_record *rec)
{
	metrics_record(d->metrics, rec);
	sampler_record(d, rec);
	server_record(d->server, rec);
}

/*
 * Hand on, in timestamp order, the held records more than HOLD_NS older
 * than @horizon (all of them with MERGE_ALL), and older ones beyond
 * HOLD_MAX bytes.
 */
static void release(struct daemon *d, uint64_t horizon)
{
	struct magnet_record *rec;

	if (!hold.merge)
		return;
	while ((rec = merge_pop(hold.merge,
				hold.bytes > HOLD_MAX ? MERGE_ALL : horizon,
				NULL))) {
		hold.bytes -= rec->size;
		deliver(d, rec);
		free(rec);
	}
}

/* Hold a copy of @rec; false if out of memory. */
static bool hold_record(const struct magnet_record *rec)
{
	struct magnet_record *copy;

	if (!hold.merge && !(hold.merge = merge_new(HOLD_NS)))
		return false;
	copy = malloc(rec->size);
	if (!copy)
		return false;
	memcpy(copy, rec, rec->size);
	if (merge_add(hold.merge, rec->timestamp, copy)) {
		free(copy);
		return false;
	}
	hold.bytes += rec->size;
	return true;
}

void readers_release(struct daemon *d, bool all)
{
	uint64_t now = now_ns();

	release(d, all ? MERGE_ALL : now);
}

static int set_watermarks(struct reader *r, uint64_t size_wm,
			  uint64_t count_wm)
{
	if (lseek(r->fd, size_wm, MAGNET_SEEK_SIZE_WM) < 0 ||
	    lseek(r->fd, count_wm, MAGNET_SEEK_COUNT_WM) < 0)
		return -1;
	return 0;
}

/* Hand each whole record of @len bytes to the metrics and the server. */
static void dispatch(struct reader *r, const unsigned char *buf, size_t len)
{
	const struct magnet_record *rec;
	struct record_walk w;

	record_walk_init(&w, buf, len);
	while ((rec = record_next(&w))) {
		if (!hold_record(rec))
			deliver(r->d, rec);	/* out of order, not lost */
		r->records++;
	}
	/* The module returns whole records; anything else is a bug. */
	if (w.bad && len - w.off >= sizeof(uint32_t))
		log_error("buffer %s: malformed record (size %u at offset %zu of %zu); skipping the rest of the read",
			  r->buffer, ((const struct magnet_record *)(buf + w.off))->size,
			  w.off, len);
	else if (w.bad)
		log_error("buffer %s: %zu bytes after the last record, less than a record's size; skipping them",
			  r->buffer, len - w.off);
}

/* Has the buffer been removed? (Its data file then polls POLLHUP.) */
static bool buffer_removed(struct reader *r)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP);
}

/*
 * Through the mapping: each run of records is handled where the kernel
 * wrote it (dispatch() copies what it holds) and given back at once.
 */
static bool drain_mapped(struct reader *r, unsigned int max_reads,
			 bool readable)
{
	const char *data;
	ssize_t n = 0;

	/* At least a sweep of every ring: see HOLD_NS above. */
	while (max_reads ? max_reads-- : !mapped_swept(r->map)) {
		n = mapped_next(r->map, &data, readable);
		if (n <= 0)
			break;
		r->reads++;
		dispatch(r, (const void *)data, n);
	}
	if (n < 0 || mapped_consume(r->map))
		log_error("buffer %s: reading the mapping: %s", r->buffer,
			  strerror(errno));
	return !(n == 0 && readable && buffer_removed(r));
}

/* Read until the file has nothing for us; false once it reached its end. */
static bool drain(struct reader *r, unsigned int max_reads, bool readable)
{
	if (r->map)
		return drain_mapped(r, max_reads, readable);
	while (max_reads--) {
		ssize_t n = read(r->fd, read_buf, sizeof(read_buf));

		if (n > 0) {
			r->reads++;
			dispatch(r, read_buf, n);
			continue;
		}
		if (n == 0)
			return false;	/* the buffer was removed */
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			log_error("buffer %s: read: %s", r->buffer,
				  strerror(errno));
		break;
	}
	return true;
}

static void lost_buffer(struct reader *r)
{
	log_warn("buffer %s was removed behind magnetd's back; installing the configuration again",
		 r->buffer);
	ev_io_stop(r->d->loop, &r->io);
	ev_timer_stop(r->d->loop, &r->flush);
	daemon_reattach(r->d);	/* frees @r */
}

static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct reader *r = w->data;

	(void)loop;
	(void)revents;
	if (!drain(r, READS_PER_WAKEUP, true)) {
		lost_buffer(r);
		return;
	}
	readers_release(r->d, false);
}

static void flush_one(struct reader *r)
{
	/* The mapping shows every record: no watermarks to lower. */
	if (!r->map && set_watermarks(r, 0, 0))
		return;
	if (!drain(r, READS_PER_WAKEUP, true)) {
		lost_buffer(r);
		return;
	}
	if (!r->map)
		set_watermarks(r, r->size_wm, r->count_wm);
	readers_release(r->d, false);
}

static void on_flush(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	flush_one(w->data);
}

void readers_flush(struct daemon *d)
{
	unsigned int i;

	for (i = 0; i < d->nreaders; i++)
		flush_one(&d->readers[i]);
}

static const struct config_buffer *find_buffer(const struct config *cfg,
					       const char *name)
{
	unsigned int i;

	for (i = 0; i < cfg->nbuffers; i++)
		if (!strcmp(cfg->buffers[i].name, name))
			return &cfg->buffers[i];
	return NULL;
}

/* Add @name to the buffers to read, once. */
static void want(char (*names)[MAGNET_NAME_LEN], unsigned int *n,
		 const char *name)
{
	unsigned int i;

	if (!name[0])
		name = "default";
	for (i = 0; i < *n; i++)
		if (!strcmp(names[i], name))
			return;
	snprintf(names[(*n)++], MAGNET_NAME_LEN, "%s", name);
}

static int reader_open(struct daemon *d, struct reader *r, const char *name,
		       const struct config_buffer *b)
{
	char path[256];
	uint64_t size;

	memset(r, 0, sizeof(*r));
	r->d = d;
	r->fd = -1;
	snprintf(r->buffer, sizeof(r->buffer), "%s", name);
	/* Defaults for buffers magnetd did not make ("default"). */
	r->size_wm = b ? b->size_wm : 65536;
	r->count_wm = b ? b->count_wm : 0;
	snprintf(path, sizeof(path), MAGNET_DEBUGFS "/magnet/data/%s", name);
	r->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (r->fd < 0) {
		if (errno == EBUSY)
			log_error("buffer %s is being read by another process (one reader at a time; is magnet-read running on it?)",
				  name);
		else
			log_error("%s: %s", path, strerror(errno));
		return -1;
	}
	size = control_ring_size(r->fd);
	if (size && r->size_wm > size / 2)
		r->size_wm = size / 2;
	if (set_watermarks(r, r->size_wm, r->count_wm)) {
		log_error("buffer %s: setting watermarks %llu bytes, %llu records: %s",
			  name, (unsigned long long)r->size_wm,
			  (unsigned long long)r->count_wm, strerror(errno));
		close(r->fd);
		return -1;
	}
	r->map = mapped_open(r->fd);
	if (!r->map && errno != EOPNOTSUPP) {
		log_error("buffer %s: mapping its data file: %s", name,
			  strerror(errno));
		close(r->fd);
		return -1;
	}
	ev_io_init(&r->io, on_readable, r->fd, EV_READ);
	r->io.data = r;
	ev_io_start(d->loop, &r->io);
	ev_timer_init(&r->flush, on_flush, 0.,
		      (b ? b->timeout_us : 100000) / 1e6);
	r->flush.data = r;
	if (r->flush.repeat > 0)
		ev_timer_again(d->loop, &r->flush);
	return 0;
}

int readers_open(struct daemon *d, const struct config *cfg)
{
	char (*names)[MAGNET_NAME_LEN];
	unsigned int i, n = 0;

	char err[512];

	if (control_check_format(err, sizeof(err))) {
		log_error("%s", err);
		return -1;
	}
	names = calloc(cfg->nsets + cfg->nprobes + 1, sizeof(*names));
	if (!names)
		return -1;
	for (i = 0; i < cfg->nsets; i++)
		want(names, &n, cfg->sets[i].buffer);
	for (i = 0; i < cfg->nprobes; i++)
		want(names, &n, cfg->probes[i].buffer);
	d->readers = calloc(n ? n : 1, sizeof(*d->readers));
	if (!d->readers) {
		free(names);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (reader_open(d, &d->readers[i], names[i],
				find_buffer(cfg, names[i]))) {
			free(names);
			readers_close(d);
			return -1;
		}
		d->nreaders++;
	}
	free(names);
	return 0;
}

void readers_close(struct daemon *d)
{
	unsigned int i;

	for (i = 0; i < d->nreaders; i++) {
		struct reader *r = &d->readers[i];

		ev_io_stop(d->loop, &r->io);
		ev_timer_stop(d->loop, &r->flush);
		if (r->map || !set_watermarks(r, 0, 0))
			drain(r, READS_PER_WAKEUP, true);
		mapped_close(r->map);
		close(r->fd);
	}
	readers_release(d, true);
	merge_free(hold.merge);
	memset(&hold, 0, sizeof(hold));
	free(d->readers);
	d->readers = NULL;
	d->nreaders = 0;
}

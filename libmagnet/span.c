// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmagnet: application spans (libmagnet.h; the kernel's side is
 * MAGNET_SPAN_DEVICE in <linux/magnet.h>, "Application spans").
 *
 * Each thread keeps its open spans (a stack of span ids under one trace
 * id) and, from magnet_span_adopt(), the remote parent its next root
 * span is to have. A begin, an end or an event is one write() of a
 * struct magnet_span to the device, opened once per process; the kernel
 * checks it and logs it into the buffers of every app.span probe. Spans
 * are kept whether or not the module is loaded, so that an application
 * runs the same without it: only a caller's mistake is an error.
 *
 * Ids are W3C Trace Context's, random: each thread draws from its own
 * xorshift128+ generator, seeded from getrandom(), so that making an id
 * is no system call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"

#define SERVICE_NAME	"service.name"

struct span_thread {
	uint8_t trace_id[16];
	uint8_t stack[MAGNET_SPAN_DEPTH][8];	/* open spans, innermost last */
	unsigned int depth;
	uint8_t adopted_trace[16];		/* magnet_span_adopt()'s */
	uint8_t adopted_parent[8];
	bool adopted;
	bool seeded;
	uint64_t rng[2];
};

static __thread struct span_thread span_self;
static int span_fd = -1;
static pthread_once_t span_once = PTHREAD_ONCE_INIT;

static void span_open(void)
{
	span_fd = open(MAGNET_SPAN_DEVICE, O_WRONLY | O_CLOEXEC);
}

int magnet_span_fd(void)
{
	pthread_once(&span_once, span_open);
	if (span_fd < 0)
		errno = ENOENT;
	return span_fd;
}

/* --- ids ------------------------------------------------------------------ */

static uint64_t span_random(struct span_thread *t)
{
	uint64_t s1 = t->rng[0];
	const uint64_t s0 = t->rng[1];

	if (!t->seeded) {
		if (getrandom(t->rng, sizeof(t->rng), GRND_NONBLOCK) !=
		    sizeof(t->rng)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			t->rng[0] = (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)gettid();
			t->rng[1] = (uint64_t)ts.tv_sec ^ (uintptr_t)t;
		}
		if (!t->rng[0] && !t->rng[1])
			t->rng[1] = 1;
		t->seeded = true;
		s1 = t->rng[0];
	}
	t->rng[0] = s0;
	s1 ^= s1 << 23;
	t->rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
	return t->rng[1] + s0;
}

/* Random bytes, never all zero (an all-zero id is invalid). */
static void span_id_new(struct span_thread *t, uint8_t *id, size_t len)
{
	do {
		for (size_t i = 0; i < len; i += 8) {
			uint64_t r = span_random(t);

			memcpy(id + i, &r, len - i < 8 ? len - i : 8);
		}
	} while (!memcmp(id, (const uint8_t[16]){ 0 }, len));
}

/* --- the write ----------------------------------------------------------- */

/*
 * One record: @type of the span @id, @name (may be NULL for an end),
 * @attrs "key=value" strings up to a NULL. Lengths are checked here, the
 * rest by the kernel (whose error is returned).
 */
static int span_write(const struct span_thread *t, uint8_t type,
		      uint8_t flags, const uint8_t *id, const uint8_t *parent,
		      const char *name, const char *const attrs[], bool root)
{
	union {
		struct magnet_span sp;
		uint8_t bytes[MAGNET_SPAN_MAX];
	} u;
	size_t name_len = name ? strlen(name) : 0, off;
	ssize_t n;
	int fd;

	if (name_len > MAGNET_SPAN_NAME_MAX)
		return errno = EINVAL, -1;
	memset(&u.sp, 0, sizeof(u.sp));
	u.sp.type = type;
	u.sp.flags = flags;
	u.sp.name_len = name_len;
	memcpy(u.sp.trace_id, t->trace_id, sizeof(u.sp.trace_id));
	memcpy(u.sp.span_id, id, sizeof(u.sp.span_id));
	if (parent)
		memcpy(u.sp.parent_id, parent, sizeof(u.sp.parent_id));
	if (name_len)
		memcpy(u.sp.data, name, name_len);
	off = sizeof(u.sp) + name_len;
	for (size_t i = 0; attrs && attrs[i]; i++) {
		size_t len = strlen(attrs[i]) + 1;

		if (!strchr(attrs[i], '=') || attrs[i][0] == '=')
			return errno = EINVAL, -1;
		if (off + len > sizeof(u.bytes))
			return errno = EMSGSIZE, -1;
		if (!strncmp(attrs[i], SERVICE_NAME "=", sizeof(SERVICE_NAME)))
			root = false;	/* the caller's own */
		memcpy(u.bytes + off, attrs[i], len);
		off += len;
	}
	/*
	 * A thread's root span says which program it is (OpenTelemetry's
	 * service.name, which a reader gives its kernel spans too), when it
	 * fits.
	 */
	if (root) {
		int len = snprintf((char *)u.bytes + off, sizeof(u.bytes) - off,
				   SERVICE_NAME "=%s", program_invocation_short_name);

		if (len > 0 && off + len + 1 <= sizeof(u.bytes))
			off += len + 1;
	}
	u.sp.attrs_len = off - sizeof(u.sp) - name_len;
	fd = magnet_span_fd();
	if (fd < 0)
		return 0;	/* not loaded: kept, not logged */
	n = write(fd, u.bytes, off);
	if (n < 0)
		return -1;
	return 0;
}

/* --- the API ------------------------------------------------------------- */

int magnet_span_begin(const char *name, const char *const attrs[])
{
	struct span_thread *t = &span_self;
	const uint8_t *parent = NULL;
	uint8_t flags = 0, id[8];

	if (!name || !*name)
		return errno = EINVAL, -1;
	if (t->depth == MAGNET_SPAN_DEPTH)
		return errno = ENOSPC, -1;
	if (t->depth) {
		parent = t->stack[t->depth - 1];
	} else if (t->adopted) {
		memcpy(t->trace_id, t->adopted_trace, sizeof(t->trace_id));
		parent = t->adopted_parent;
		flags = MAGNET_SPAN_F_REMOTE;
	} else {
		span_id_new(t, t->trace_id, sizeof(t->trace_id));
	}
	span_id_new(t, id, sizeof(id));
	if (span_write(t, MAGNET_SPAN_BEGIN, flags, id, parent, name, attrs,
		       !t->depth))
		return -1;
	memcpy(t->stack[t->depth++], id, sizeof(id));
	if (t->depth == 1)
		t->adopted = false;	/* one root span per adoption */
	return 0;
}

int magnet_span_end(const char *const attrs[])
{
	struct span_thread *t = &span_self;

	if (!t->depth)
		return errno = EINVAL, -1;
	if (span_write(t, MAGNET_SPAN_END, 0, t->stack[t->depth - 1], NULL,
		       NULL, attrs, false))
		return -1;
	t->depth--;
	return 0;
}

int magnet_span_event(const char *name, const char *const attrs[])
{
	struct span_thread *t = &span_self;

	if (!name || !*name || !t->depth)
		return errno = EINVAL, -1;
	return span_write(t, MAGNET_SPAN_EVENT, 0, t->stack[t->depth - 1],
			  NULL, name, attrs, false);
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
}

int magnet_span_traceparent(char buf[MAGNET_TRACEPARENT_LEN + 1])
{
	const struct span_thread *t = &span_self;
	const uint8_t *trace, *span;

	if (t->depth) {
		trace = t->trace_id;
		span = t->stack[t->depth - 1];
	} else if (t->adopted) {
		trace = t->adopted_trace;
		span = t->adopted_parent;
	} else {
		return errno = ESRCH, -1;
	}
	memcpy(buf, "00-", 3);
	hex(buf + 3, trace, 16);
	buf[35] = '-';
	hex(buf + 36, span, 8);
	memcpy(buf + 52, "-01", 4);	/* sampled, and the NUL */
	return 0;
}

static int unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < 2 * n; i++) {
		int v;

		if (s[i] >= '0' && s[i] <= '9')
			v = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			v = s[i] - 'a' + 10;
		else
			return -1;
		if (i % 2)
			out[i / 2] |= v;
		else
			out[i / 2] = v << 4;
	}
	return 0;
}

int magnet_span_parse_traceparent(const char *s, uint8_t trace_id[16],
				  uint8_t parent_id[8])
{
	uint8_t version, flags;

	/* version-traceid-parentid-flags, lower-case hex (W3C, level 1) */
	if (!s || strnlen(s, MAGNET_TRACEPARENT_LEN + 1) < MAGNET_TRACEPARENT_LEN ||
	    s[2] != '-' || s[35] != '-' || s[52] != '-' ||
	    unhex(s, &version, 1) || version == 0xff ||
	    unhex(s + 3, trace_id, 16) || unhex(s + 36, parent_id, 8) ||
	    unhex(s + 53, &flags, 1))
		return errno = EINVAL, -1;
	/* version 00 is exactly this; a later one may go on after a '-' */
	if (s[55] && (version == 0 || s[55] != '-'))
		return errno = EINVAL, -1;
	if (!memcmp(trace_id, (const uint8_t[16]){ 0 }, 16) ||
	    !memcmp(parent_id, (const uint8_t[8]){ 0 }, 8))
		return errno = EINVAL, -1;
	return 0;
}

int magnet_span_adopt(const char *traceparent)
{
	struct span_thread *t = &span_self;
	uint8_t trace[16], parent[8];

	if (magnet_span_parse_traceparent(traceparent, trace, parent))
		return -1;
	memcpy(t->adopted_trace, trace, sizeof(trace));
	memcpy(t->adopted_parent, parent, sizeof(parent));
	t->adopted = true;
	return 0;
}

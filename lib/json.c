// SPDX-License-Identifier: GPL-2.0
/*
 * JSON values (see json.h). Written here rather than taken from a JSON
 * library: the tools stream records as they come, one value at a time,
 * and need only these two rules, not a document model.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

size_t utf8_length(const unsigned char *s)
{
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	for (i = 1; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates and code points above U+10FFFF */
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
		return 0;
	return len;
}

/* Where escape() puts its pieces: a stdio stream's or a buffer's */
typedef void (*json_sink)(void *to, const char *p, size_t n);

static void escape(const char *str, json_sink put, void *to)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *run;
	char u[8];
	size_t len;

	put(to, "\"", 1);
	while (*s) {
		/* what needs no escape goes out in one piece */
		for (run = s; *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\'; s++)
			;
		if (s > run)
			put(to, (const char *)run, s - run);
		if (!*s)
			break;
		switch (*s) {
		case '"':  put(to, "\\\"", 2); break;
		case '\\': put(to, "\\\\", 2); break;
		case '\b': put(to, "\\b", 2); break;
		case '\f': put(to, "\\f", 2); break;
		case '\n': put(to, "\\n", 2); break;
		case '\r': put(to, "\\r", 2); break;
		case '\t': put(to, "\\t", 2); break;
		default:
			if (*s < 0x20) {
				snprintf(u, sizeof(u), "\\u%04x", *s);
				put(to, u, 6);
				break;
			}
			len = utf8_length(s);
			if (!len) {
				put(to, "\\ufffd", 6);
				break;
			}
			put(to, (const char *)s, len);
			s += len - 1;
		}
		s++;
	}
	put(to, "\"", 1);
}

static void to_file(void *to, const char *p, size_t n)
{
	fwrite(p, 1, n, to);
}

static void to_buf(void *to, const char *p, size_t n)
{
	jbuf_put(to, p, n);
}

void json_string(FILE *f, const char *s)
{
	escape(s, to_file, f);
}

void json_u64(FILE *f, uint64_t v)
{
	fprintf(f, v > JSON_SAFE_INT_MAX ? "\"%" PRIu64 "\"" : "%" PRIu64, v);
}

void json_s64(FILE *f, int64_t v)
{
	uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;

	fprintf(f, mag > JSON_SAFE_INT_MAX ? "\"%" PRId64 "\"" : "%" PRId64, v);
}

/* --- a buffer ------------------------------------------------------------------ */

void jbuf_grow(struct jbuf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	while (cap - b->len < n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		fputs("out of memory\n", stderr);
		exit(1);
	}
	b->p = p;
	b->cap = cap;
}

void jbuf_put(struct jbuf *b, const void *p, size_t n)
{
	if (b->cap - b->len < n)
		jbuf_grow(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void jbuf_string(struct jbuf *b, const char *s)
{
	escape(s, to_buf, b);
}

void jbuf_uint(struct jbuf *b, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do {
		d[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	jbuf_put(b, d + i, sizeof(d) - i);
}

void jbuf_int(struct jbuf *b, int64_t v)
{
	if (v < 0) {
		jbuf_putc(b, '-');
		jbuf_uint(b, -(uint64_t)v);
	} else {
		jbuf_uint(b, v);
	}
}

void jbuf_hex(struct jbuf *b, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	if (b->cap - b->len < 2 * n)
		jbuf_grow(b, 2 * n);
	for (size_t i = 0; i < n; i++) {
		b->p[b->len++] = hex[p[i] >> 4];
		b->p[b->len++] = hex[p[i] & 15];
	}
}

void jbuf_free(struct jbuf *b)
{
	free(b->p);
	*b = (struct jbuf){ 0 };
}

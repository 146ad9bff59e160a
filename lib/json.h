/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON's values as every magnet tool writes them (magnetctl -j,
 * magnet-read --json): one implementation of the two rules a reader of
 * our JSON can rely on.
 *
 * Strings: valid UTF-8 passes through as it is (a process or device name
 * in any script stays readable); each byte that is not part of a valid
 * UTF-8 sequence becomes U+FFFD; '"', '\\' and control characters are
 * escaped.
 *
 * Integers: a JSON number up to 2^53 (9007199254740992); above it, a
 * string of its decimal digits ("18446744073709551615"). Most JSON tools
 * read numbers into doubles (jq 1.6, JavaScript), which keep every
 * integer up to 2^53 and round those above, so an id or a nanosecond
 * time above it is quoted to keep every digit; tools that read big
 * integers exactly (Python) read either form.
 */
#ifndef MAGNET_JSON_H
#define MAGNET_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define JSON_SAFE_INT_MAX	(1ULL << 53)

void json_string(FILE *f, const char *s);
/*
 * The length of the valid UTF-8 sequence at @s (1 to 4), 0 if there is
 * none (a bad or truncated sequence, an overlong form, a surrogate, a
 * code point above U+10FFFF): the strings' rule, which magnetd's
 * Prometheus label values follow too.
 */
size_t utf8_length(const unsigned char *s);
void json_u64(FILE *f, uint64_t v);
void json_s64(FILE *f, int64_t v);

/*
 * A buffer that grows, for JSON built in memory and written at once (the
 * span writers, otel.c: a stdio call per piece costs more than the piece).
 * Zeroed to start; each function exits when out of memory.
 */
struct jbuf {
	char *p;
	size_t len, cap;
};

void jbuf_grow(struct jbuf *b, size_t n);	/* room for @n more bytes */
void jbuf_put(struct jbuf *b, const void *p, size_t n);
void jbuf_string(struct jbuf *b, const char *s);	/* as json_string() */
void jbuf_uint(struct jbuf *b, uint64_t v);	/* decimal digits, unquoted */
void jbuf_int(struct jbuf *b, int64_t v);
void jbuf_hex(struct jbuf *b, const uint8_t *p, size_t n);	/* lower case */
void jbuf_free(struct jbuf *b);

static inline void jbuf_putc(struct jbuf *b, char c)
{
	if (b->len == b->cap)
		jbuf_grow(b, 1);
	b->p[b->len++] = c;
}

static inline void jbuf_puts(struct jbuf *b, const char *s)
{
	jbuf_put(b, s, strlen(s));
}

#endif /* MAGNET_JSON_H */

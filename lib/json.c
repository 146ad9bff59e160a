// SPDX-License-Identifier: GPL-2.0
/*
 * JSON values (see json.h). Written here rather than taken from a JSON
 * library: the tools stream records as they come, one value at a time,
 * and need only these two rules, not a document model.
 */
#include <inttypes.h>

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

void json_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	const unsigned char *run;
	size_t len;

	fputc('"', f);
	while (*s) {
		/* what needs no escape goes out in one piece */
		for (run = s; *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\'; s++)
			;
		if (s > run)
			fwrite(run, 1, s - run, f);
		if (!*s)
			break;
		switch (*s) {
		case '"':  fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			len = utf8_length(s);
			if (!len) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(s, 1, len, f);
			s += len - 1;
		}
		s++;
	}
	fputc('"', f);
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

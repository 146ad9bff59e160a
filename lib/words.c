// SPDX-License-Identifier: GPL-2.0
/*
 * Values shared by command lines and configuration files (see words.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/magnet.h>

#include "words.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int parse_fail(struct parse_error *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
	return -1;
}

int word_uint(const char *s, uint64_t min, uint64_t max, const char *what,
	      uint64_t *value, struct parse_error *e)
{
	uint64_t v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || v < min || v > max)
		return parse_fail(e, "bad %s \"%s\": expected a number from %" PRIu64
				  " to %" PRIu64, what, s, min, max);
	*value = v;
	return 0;
}

int word_name(const char *name, const char *what, struct parse_error *e)
{
	size_t len = strlen(name), i;
	bool bad = len == 0 || len >= MAGNET_NAME_LEN;

	for (i = 0; i < len && !bad; i++)
		bad = name[i] == '/' || isspace((unsigned char)name[i]);
	if (bad)
		return parse_fail(e, "bad %s \"%s\": 1 to %d bytes, no '/' or white space",
				  what, name, MAGNET_NAME_LEN - 1);
	return 0;
}

int word_probe_ref(const char *ref, uint16_t *id, struct parse_error *e)
{
	uint64_t v;

	*id = 0;
	if (*ref && !ref[strspn(ref, "0123456789")]) {
		if (word_uint(ref, 1, MAGNET_EVENT_ID_MAX, "probe id", &v, e))
			return -1;
		*id = v;
		return 0;
	}
	return word_name(ref, "probe name", e);
}

bool word_record_id(const char *s, uint64_t *value)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	const char *valid = hex ? "0123456789abcdefABCDEF" : "0123456789";

	errno = 0;
	*value = strtoull(digits, NULL, hex ? 16 : 10);
	return *digits && !digits[strspn(digits, valid)] && !errno;
}

int word_duration(const char *s, const char *what, uint64_t *out,
		  struct parse_error *e)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};
	uint64_t whole, frac = 0, scale = 1, ns;
	const char *p;
	char *end;
	size_t i, digits;

	errno = 0;
	whole = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || errno)
		goto bad;
	if (*end == '.') {
		p = end + 1;
		digits = strspn(p, "0123456789");
		if (!digits)
			goto bad;
		end = (char *)p + digits;
		while (digits && p[digits - 1] == '0')
			digits--;
		/* below a nanosecond whatever the unit */
		if (digits > 9)
			goto too_fine;
		for (i = 0; i < digits; i++) {
			frac = frac * 10 + (p[i] - '0');
			scale *= 10;
		}
	}
	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (frac * units[i].ns % scale)
			goto too_fine;
		ns = frac * units[i].ns / scale;
		if (whole > (UINT64_MAX - ns) / units[i].ns)
			goto bad;
		*out = whole * units[i].ns + ns;
		return 0;
	}
bad:
	return parse_fail(e, "bad %s \"%s\": expected a number with an optional unit ns, us, ms or s, e.g. 250us or 1.5ms",
			  what, s);
too_fine:
	return parse_fail(e, "bad %s \"%s\": not a whole number of nanoseconds",
			  what, s);
}

int word_cpu_list(const char *s, uint8_t *map, size_t *len,
		  struct parse_error *e)
{
	unsigned long first, last, cpu;
	uint8_t tmp[CPUS_MAX / 8] = { 0 };
	const char *p = s;
	size_t n = 0;
	char *end;

	for (;;) {
		if (!isdigit((unsigned char)*p))
			break;
		errno = 0;
		first = last = strtoul(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (!isdigit((unsigned char)*p))
				break;
			last = strtoul(p, &end, 10);
		}
		if (errno || first > last || last >= CPUS_MAX)
			break;
		for (cpu = first; cpu <= last; cpu++)
			tmp[cpu / 8] |= 1U << (cpu % 8);
		if (last / 8 + 1 > n)
			n = last / 8 + 1;
		if (!*end) {
			memcpy(map, tmp, sizeof(tmp));
			*len = n;
			return 0;
		}
		if (*end != ',')
			break;
		p = end + 1;
	}
	return parse_fail(e, "bad CPU list \"%s\": expected CPUs and ascending ranges below %d, e.g. 0-3,6",
			  s, CPUS_MAX);
}

void format_duration(uint64_t ns, char buf[32])
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, 32, "%" PRIu64 "%s", ns / units[i].ns,
				 units[i].unit);
			return;
		}
	snprintf(buf, 32, "%" PRIu64 "%s", ns, ns ? "ns" : "");
}

void format_double(double v, char buf[32])
{
	int prec;

	if (isnan(v)) {
		snprintf(buf, 32, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(buf, 32, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v > -0x1p53 && v < 0x1p53 && v == (double)(int64_t)v) {
		snprintf(buf, 32, "%.0f", v);
		return;
	}
	/*
	 * %g drops trailing zeros, so the first precision that reads back
	 * is the shortest form; 17 digits always do.
	 */
	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, 32, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, 32, "%.17g", v);
}

char *format_cpu_list(const uint8_t *map, size_t len)
{
	size_t cpu, first, bits = len * 8;
	bool comma = false;
	char *list = NULL;
	size_t size;
	FILE *f = open_memstream(&list, &size);

	if (!f)
		return NULL;
	for (cpu = 0; cpu < bits; cpu++) {
		if (!cpu_in_map(map, cpu))
			continue;
		first = cpu;
		while (cpu + 1 < bits && cpu_in_map(map, cpu + 1))
			cpu++;
		fprintf(f, "%s%zu", comma ? "," : "", first);
		if (cpu > first)
			fprintf(f, "-%zu", cpu);
		comma = true;
	}
	if (fclose(f)) {
		free(list);
		return NULL;
	}
	return list;
}

static const struct {
	const char *name;
	uint8_t number;
} ip_protocols[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "dccp", 33 },
	{ "icmp6", 58 }, { "sctp", 132 }, { "udplite", 136 },
};

const char *ip_protocol_name(uint8_t number)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ip_protocols); i++)
		if (ip_protocols[i].number == number)
			return ip_protocols[i].name;
	return NULL;
}

int ip_protocol_number(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ip_protocols); i++)
		if (!strcmp(ip_protocols[i].name, name))
			return ip_protocols[i].number;
	return -1;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values that command lines and configuration files share, parsed and
 * printed one way for every tool: numbers, record ids, durations, CPU
 * lists. A value that does not parse leaves one line in a struct
 * parse_error (without the program's name or the command: the caller
 * puts those in front) and changes nothing else.
 */
#ifndef MAGNET_WORDS_H
#define MAGNET_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPUS_MAX	8192	/* the largest CONFIG_NR_CPUS */

struct parse_error {
	char text[256];
};

/* Set @e's text, printf-style. Returns -1. */
int parse_fail(struct parse_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A decimal number from @min to @max; @what names it in the message. */
int word_uint(const char *s, uint64_t min, uint64_t max, const char *what,
	      uint64_t *value, struct parse_error *e);

/* A buffer's or probe's name: 1 to MAGNET_NAME_LEN - 1 bytes, no '/' or
 * white space. @what names it in the message.
 */
int word_name(const char *name, const char *what, struct parse_error *e);

/*
 * A probe given by number or by name ("12", "sw"): *@id its number, 0 for
 * a name (checked as word_name() does).
 */
int word_probe_ref(const char *ref, uint16_t *id, struct parse_error *e);

/* A record id: decimal or 0x hex (ids are often addresses). */
bool word_record_id(const char *s, uint64_t *value);

/*
 * Nanoseconds, from a number with an optional unit ns, us, ms or s:
 * "250us", "1.5ms", "10" (ns). The result must be a whole number of
 * nanoseconds.
 */
int word_duration(const char *s, const char *what, uint64_t *ns,
		  struct parse_error *e);

/*
 * "0-3,6" into a bitmap of CPUS_MAX bits (bit N in byte N / 8); *@len
 * gets the bytes up to the highest CPU.
 */
int word_cpu_list(const char *s, uint8_t *map, size_t *len,
		  struct parse_error *e);

static inline bool cpu_in_map(const uint8_t *map, size_t cpu)
{
	return map[cpu / 8] & (1U << (cpu % 8));
}

/* Nanoseconds as "1s", "1500us", "250ns": the largest exact unit. */
void format_duration(uint64_t ns, char buf[32]);

/*
 * A double in the fewest significant digits that read back as the same
 * double (Go's strconv 'g' -1, as Prometheus's clients print): "0.1",
 * "7.23188e-05", "1e+300"; a whole number below 2^53 in plain digits
 * ("1048576"); "NaN", "+Inf", "-Inf". In the C locale's notation, which
 * magnet's programs keep. Values computed by one correctly rounded
 * operation from exact ones (ns / 1e9) print without float noise; a
 * second rounding (ns / n / 1e9) can add some.
 */
void format_double(double v, char buf[32]);

/* A CPU bitmap of @len bytes as "0-3,6"; NULL: out of memory. Free it. */
char *format_cpu_list(const uint8_t *map, size_t len);

/* The IP protocols known by name: "tcp" for 6; NULL for others. */
const char *ip_protocol_name(uint8_t number);
/* -1 if @name is none of them. */
int ip_protocol_number(const char *name);

#endif /* MAGNET_WORDS_H */

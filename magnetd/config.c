// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd's configuration file (format in config.h), read with libconfuse.
 *
 * A file is checked in passes, all reporting through report() so that one
 * load lists every problem it can find, in the order of its lines:
 *
 *  - scan_text(): what libconfuse 3.3 gets wrong (line numbers after
 *    comments, comments in lists, a missing "}" at the end of the file).
 *  - libconfuse: syntax, option and section names, integers, duplicate
 *    section titles. It stops at the first such error.
 *  - the validators and value parsers of the options table: one value at
 *    a time (ranges, enum words, names). They report and let the parse
 *    go on.
 *  - while converting the parsed tree into struct config: what spans
 *    options or sections (watermarks within the buffer, predef or kind
 *    and target, buffers and events that must exist).
 *
 * libconfuse keeps no line numbers for the values it has parsed, so the
 * validators note where each option was set and a hidden option notes
 * where each section starts (struct note); the last pass reports those.
 */
#define _GNU_SOURCE		/* asprintf() */
#include <errno.h>
#include <arpa/inet.h>
#include <grp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <confuse.h>

#include "config.h"
#include "ledger.h"
#include "libmagnet.h"		/* MAGNET_SOCKET_PATH */
#include "names.h"

/* Ranges the module leaves to us, or that only the daemon has. */
#define RECORD_HEADER		((long)sizeof(struct magnet_record))
#define SIZE_WM_DEFAULT		65536L
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define FIELD_SIZE(t, f)	sizeof(((t *)0)->f)
#define PATH_SIZE		FIELD_SIZE(struct config_socket, path)
#define GROUP_SIZE		FIELD_SIZE(struct config_socket, group)
#define CLIENTS_MAX		65536L
#define HTTP_CLIENTS_MAX	1024L
#define HTTP_TIMEOUT_MAX_S	3600L
#define CLIENT_QUEUE_MIN	4096L
#define CLIENT_QUEUE_MAX	(1L << 30)
#define WINDOW_MAX_S		3600L
#define TGIDS_TRACKED_MAX	65536L
#define BUFFER_TIMEOUT_MAX_MS	((long)(MAGNET_TIMEOUT_MAX_US / 1000))
#define LATENCY_TIMEOUT_MAX_MS	3600000L	/* an hour */
#define PENDING_MAX		(1L << 20)
#define FILE_MAX		(16L << 20)	/* bytes of configuration */

/* --- probe sets ----------------------------------------------------------- */

bool config_set_known(const char *set)
{
	return set && probe_set_find(set, strlen(set));
}

/* --- errors and line numbers ------------------------------------------- */

struct note {
	const cfg_t *sec;
	const char *opt;	/* NULL: where the section starts */
	int line;
};

/* One problem, "FILE:LINE: ...", listed in the order of LINE at the end. */
struct message {
	int line;
	unsigned int seq;	/* found after the messages before it */
	char *text;
};

struct loader {
	const char *file;
	struct message *msgs;
	unsigned int errors, msgs_size;
	bool oom;
	struct note *notes;
	size_t nnotes, notes_size;
	/* while parsing: the probe being read and its filter's number */
	const char *probe;
	unsigned int filter;
};

/*
 * The load under way. libconfuse's callbacks take no pointer of ours, and
 * its scanner is global anyway: one load at a time.
 */
static struct loader *loading;

static void vreport(struct loader *ld, int line, const char *ctx,
		    const char *fmt, va_list ap)
{
	char msg[512], where[16] = "";
	struct message *m;
	unsigned int size;
	int n;

	if (ld->errors == ld->msgs_size) {
		size = ld->msgs_size ? 2 * ld->msgs_size : 16;
		m = realloc(ld->msgs, size * sizeof(*m));
		if (!m) {
			ld->oom = true;
			return;
		}
		ld->msgs = m;
		ld->msgs_size = size;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line > 0)
		snprintf(where, sizeof(where), "%d:", line);
	m = &ld->msgs[ld->errors];
	n = asprintf(&m->text, "%s:%s %s%s%s", ld->file, where,
		     ctx ? ctx : "", ctx ? ": " : "", msg);
	if (n < 0) {
		ld->oom = true;
		return;
	}
	m->line = line;
	m->seq = ld->errors++;
}

static void __attribute__((format(printf, 4, 5)))
report(struct loader *ld, int line, const char *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(ld, line, ctx, fmt, ap);
	va_end(ap);
}

/* "buffer 'net'", "probe 'p': filter 2" (the one being parsed), ... */
static const char *section_ctx(const struct loader *ld, const cfg_t *sec,
			       char *buf, size_t size)
{
	if (!sec || !sec->name || !strcmp(sec->name, "root"))
		return NULL;
	if (!strcmp(sec->name, "filter"))
		snprintf(buf, size, "probe '%s': filter %u",
			 ld->probe ? ld->probe : "", ld->filter);
	else if (sec->title)
		snprintf(buf, size, "%s '%s'", sec->name, sec->title);
	else
		snprintf(buf, size, "%s", sec->name);
	return buf;
}

/* libconfuse's messages (cfg_set_error_function), at its current line. */
static void confuse_error(cfg_t *sec, const char *fmt, va_list ap)
{
	struct loader *ld = loading;
	char ctx[128];

	if (ld)
		vreport(ld, sec ? sec->line : 0,
			section_ctx(ld, sec, ctx, sizeof(ctx)), fmt, ap);
}

/* A value's problem, from a validator: at the line being parsed. */
static void __attribute__((format(printf, 2, 3)))
parse_error(cfg_t *sec, const char *fmt, ...)
{
	struct loader *ld = loading;
	char ctx[128];
	va_list ap;

	if (!ld)
		return;
	va_start(ap, fmt);
	vreport(ld, sec->line, section_ctx(ld, sec, ctx, sizeof(ctx)), fmt,
		ap);
	va_end(ap);
}

static void note(struct loader *ld, const cfg_t *sec, const char *opt)
{
	struct note *grown;
	size_t size;

	if (!ld)
		return;
	if (ld->nnotes == ld->notes_size) {
		size = ld->notes_size ? 2 * ld->notes_size : 256;
		grown = realloc(ld->notes, size * sizeof(*grown));
		if (!grown) {
			ld->oom = true;
			return;
		}
		ld->notes = grown;
		ld->notes_size = size;
	}
	ld->notes[ld->nnotes++] = (struct note){ sec, opt, sec->line };
}

/* Where @opt of @sec was last set (@opt NULL: where @sec starts), or 0. */
static int noted_line(const struct loader *ld, const cfg_t *sec,
		      const char *opt)
{
	const struct note *n;
	size_t i = ld->nnotes;

	while (i--) {
		n = &ld->notes[i];
		if (n->sec == sec && (opt ? n->opt && !strcmp(n->opt, opt) :
					    !n->opt))
			return n->line;
	}
	return 0;
}

/* Where @opt was set, or where its section starts if it was not. */
static int opt_line(const struct loader *ld, const cfg_t *sec,
		    const char *opt)
{
	return noted_line(ld, sec, opt) ?: noted_line(ld, sec, NULL);
}

/* Two options in conflict: the conflict shows where the later was set. */
static int conflict_line(const struct loader *ld, const cfg_t *sec,
			 const char *a, const char *b)
{
	int la = noted_line(ld, sec, a), lb = noted_line(ld, sec, b);

	return (la > lb ? la : lb) ?: noted_line(ld, sec, NULL);
}

/* --- value checks ------------------------------------------------------- */

/* ASCII letters and digits whatever the locale, and "._-" */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

/*
 * A name as the module accepts it, more strictly: 1..31 bytes of letters,
 * digits and "._-", not all digits (tools take a number for an id), not
 * "." or ".." (buffers are files in debugfs). NULL if fine, else why not.
 */
static const char *name_problem(const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < len; i++)
		if (!name_char(name[i]))
			break;
	if (!len || len >= MAGNET_NAME_LEN || i < len)
		return "1-31 letters, digits, '.', '_' or '-'";
	if (!name[strspn(name, "0123456789")])
		return "not all digits";
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return "not . or ..";
	return NULL;
}

static bool check_name(struct loader *ld, int line, const char *ctx,
		       const char *what, const char *name)
{
	const char *why = name_problem(name);

	if (why)
		report(ld, line, ctx, "bad %s '%s' (%s)", what, name, why);
	return !why;
}

static bool buffer_size_valid(long size)
{
	return size >= (long)MAGNET_BUFFER_SIZE_MIN &&
	       size <= (long)MAGNET_BUFFER_SIZE_MAX && !(size & (size - 1));
}

/* An octal permission mode, "0660", at most 0777; -1 if not one. */
static long parse_mode(const char *s)
{
	char *end;
	long mode;

	if (!*s || s[strspn(s, "01234567")])
		return -1;
	errno = 0;
	mode = strtol(s, &end, 8);
	return errno || mode > 0777 ? -1 : mode;
}

/* --- validators (validcb) and value parsers (parsecb) ------------------- */

/*
 * Each validator notes where its option was set, checks the one value,
 * reports a problem and returns 0 all the same: the parse goes on, to
 * find the file's other problems.
 */
static int v_note(cfg_t *sec, cfg_opt_t *opt)
{
	note(loading, sec, opt->name);
	return 0;
}

static int check_range(cfg_t *sec, cfg_opt_t *opt, long min, long max)
{
	long v = cfg_opt_getnint(opt, 0);

	note(loading, sec, opt->name);
	if (v < min || v > max)
		parse_error(sec, "%s %ld out of range %ld..%ld", opt->name, v,
			    min, max);
	return 0;
}

#define DEFINE_RANGE(fn, min, max)				\
static int fn(cfg_t *sec, cfg_opt_t *opt)			\
{								\
	return check_range(sec, opt, (long)(min), (long)(max));	\
}

DEFINE_RANGE(v_max_clients, 1, CLIENTS_MAX)
DEFINE_RANGE(v_client_queue, CLIENT_QUEUE_MIN, CLIENT_QUEUE_MAX)
DEFINE_RANGE(v_interval, 1, WINDOW_MAX_S)
DEFINE_RANGE(v_window, 1, WINDOW_MAX_S)
DEFINE_RANGE(v_top_tgids, 0, TGIDS_TRACKED_MAX)
DEFINE_RANGE(v_max_tgids, 1, TGIDS_TRACKED_MAX)
DEFINE_RANGE(v_size_wm, 0, MAGNET_BUFFER_SIZE_MAX)
DEFINE_RANGE(v_count_wm, 0, MAGNET_BUFFER_SIZE_MAX / RECORD_HEADER)
DEFINE_RANGE(v_buffer_timeout, 0, BUFFER_TIMEOUT_MAX_MS)
DEFINE_RANGE(v_snaplen, 0, MAGNET_RECORD_MAX)
DEFINE_RANGE(v_args, 0, MAGNET_PROBE_ARGS_MAX)
DEFINE_RANGE(v_id_arg, 0, MAGNET_PROBE_ARGS_MAX)
DEFINE_RANGE(v_sample_every, 0, UINT32_MAX)
DEFINE_RANGE(v_sample_interval, 0, MAGNET_SAMPLE_INTERVAL_MAX)
DEFINE_RANGE(v_tid, 0, UINT32_MAX)
DEFINE_RANGE(v_depth, 0, MAGNET_SAMPLE_DEPTH_MAX)

/* cpu.sample's period: 0 (the module's default) or within its range */
static int v_period(cfg_t *sec, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, 0);

	if (v)
		return check_range(sec, opt, MAGNET_SAMPLE_PERIOD_MIN,
				   MAGNET_SAMPLE_PERIOD_MAX);
	note(loading, sec, opt->name);
	return 0;
}
DEFINE_RANGE(v_latency_timeout, 1, LATENCY_TIMEOUT_MAX_MS)
DEFINE_RANGE(v_max_pending, 1, PENDING_MAX)
DEFINE_RANGE(v_http_port, 1, 65535)
DEFINE_RANGE(v_http_clients, 1, HTTP_CLIENTS_MAX)
DEFINE_RANGE(v_http_timeout, 1, HTTP_TIMEOUT_MAX_S)
DEFINE_RANGE(v_cgroup_depth, 0, LEDGER_DEPTH_MAX)
DEFINE_RANGE(v_otlp_queue, OTLP_QUEUE_MIN, OTLP_QUEUE_MAX)
DEFINE_RANGE(v_otlp_timeout, 1, OTLP_TIMEOUT_MAX_S)

/* A collector's URL: "" (none), or http:// or https:// and a host */
static int v_otlp_url(cfg_t *sec, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	size_t len = strlen(v);

	note(loading, sec, opt->name);
	if (!len)
		return 0;
	if (len >= OTLP_URL_LEN)
		parse_error(sec, "url is %zu bytes long, at most %d", len,
			    OTLP_URL_LEN - 1);
	else if ((strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) ||
		 !v[strcspn(v, ":") + 3] || v[strcspn(v, ":") + 3] == '/' ||
		 strpbrk(v, " \t\n\"\\"))
		parse_error(sec, "url \"%s\": http:// or https://, a host, then the path (OTLP/HTTP's is /v1/traces)",
			    v);
	return 0;
}

/* magnet-read -P's sets: known ones, comma-separated */
static int v_otlp_sets(cfg_t *sec, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	char set[64];

	note(loading, sec, opt->name);
	if (!*v || strlen(v) >= sizeof(((struct config_otlp *)0)->sets)) {
		parse_error(sec, "probe-sets: 1 to %zu bytes",
			    sizeof(((struct config_otlp *)0)->sets) - 1);
		return 0;
	}
	for (const char *p = v; *p; p += *p == ',') {
		size_t n = strcspn(p, ",");

		snprintf(set, sizeof(set), "%.*s", (int)(n < sizeof(set) ? n : sizeof(set) - 1), p);
		if (!config_set_known(set))
			parse_error(sec, "probe-sets: no set \"%s\" (magnetctl probe sets lists them)",
				    set);
		p += n;
	}
	return 0;
}

static int v_otlp_str(cfg_t *sec, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	size_t max = !strcmp(opt->name, "program") ?
		     sizeof(((struct config_otlp *)0)->program) :
		     sizeof(((struct config_otlp *)0)->expression);

	note(loading, sec, opt->name);
	if (strlen(v) >= max)
		parse_error(sec, "%s is %zu bytes long, at most %zu", opt->name,
			    strlen(v), max - 1);
	else if (!strcmp(opt->name, "program") && !*v)
		parse_error(sec, "program is empty");
	return 0;
}

/* Histogram buckets per doubling: a divisor of METRICS_LE_PER_DOUBLING. */
static int v_buckets(cfg_t *sec, cfg_opt_t *opt)
{
	long v = cfg_opt_getnint(opt, 0);

	note(loading, sec, opt->name);
	if (v < 1 || v > METRICS_LE_PER_DOUBLING ||
	    METRICS_LE_PER_DOUBLING % v)
		parse_error(sec, "%s %ld: 1, 2, 4 or 8", opt->name, v);
	return 0;
}

/* The web configuration's file name; read by webconfig.c, not here. */
static int v_web_config(cfg_t *sec, cfg_opt_t *opt)
{
	size_t len = strlen(cfg_opt_getnstr(opt, 0));

	note(loading, sec, opt->name);
	if (len >= FIELD_SIZE(struct config_prometheus, web_config))
		parse_error(sec, "web-config is %zu bytes long, at most %zu",
			    len, FIELD_SIZE(struct config_prometheus,
					    web_config) - 1);
	return 0;
}

/* A numeric IPv4 or IPv6 address: the endpoint binds to it, resolves nothing. */
static int v_address(cfg_t *sec, cfg_opt_t *opt)
{
	const char *a = cfg_opt_getnstr(opt, 0);
	unsigned char buf[sizeof(struct in6_addr)];

	note(loading, sec, opt->name);
	if (strlen(a) >= FIELD_SIZE(struct config_prometheus, address) ||
	    (inet_pton(AF_INET, a, buf) != 1 &&
	     inet_pton(AF_INET6, a, buf) != 1))
		parse_error(sec, "address '%s' is not a numeric IPv4 or IPv6 address",
			    a);
	return 0;
}

static int v_buffer_size(cfg_t *sec, cfg_opt_t *opt)
{
	long size = cfg_opt_getnint(opt, 0);

	note(loading, sec, opt->name);
	if (size < (long)MAGNET_BUFFER_SIZE_MIN ||
	    size > (long)MAGNET_BUFFER_SIZE_MAX)
		parse_error(sec, "size %ld out of range %llu..%llu", size,
			    MAGNET_BUFFER_SIZE_MIN, MAGNET_BUFFER_SIZE_MAX);
	else if (!buffer_size_valid(size))
		parse_error(sec, "size %ld is not a power of two", size);
	return 0;
}

DEFINE_RANGE(v_rescan, 1, ACCT_RESCAN_MAX_S)

/* acct's process list: names as the kernel keeps them (comm), few. */
static int v_processes(cfg_t *sec, cfg_opt_t *opt)
{
	unsigned int i, n = cfg_opt_size(opt);

	note(loading, sec, opt->name);
	if (n > MAGNET_ACCT_WATCHES)
		parse_error(sec, "%s: %u names, more than the %u processes the kernel watches at once",
			    opt->name, n, MAGNET_ACCT_WATCHES);
	for (i = 0; i < n; i++) {
		const char *name = cfg_opt_getnstr(opt, i);
		size_t len = strlen(name);

		if (!len || len >= ACCT_COMM_LEN || strchr(name, '/'))
			parse_error(sec, "%s: bad name '%s' (a process's name: 1 to %u characters, as /proc/PID/comm has it)",
				    opt->name, name, ACCT_COMM_LEN - 1);
	}
	return 0;
}

/* A string option naming a buffer, an event or a catalog entry. */
static int v_name(cfg_t *sec, cfg_opt_t *opt)
{
	const char *name = cfg_opt_getnstr(opt, 0);
	const char *why = name_problem(name);

	note(loading, sec, opt->name);
	if (why)
		parse_error(sec, "%s: bad name '%s' (%s)", opt->name, name,
			    why);
	return 0;
}

static int v_target(cfg_t *sec, cfg_opt_t *opt)
{
	const char *target = cfg_opt_getnstr(opt, 0);
	size_t len = strlen(target);

	note(loading, sec, opt->name);
	if (!len || len >= MAGNET_TARGET_LEN || strpbrk(target, " \t\n"))
		parse_error(sec, "bad target '%s' (1-%d bytes, no white space)",
			    target, MAGNET_TARGET_LEN - 1);
	return 0;
}

static int v_path(cfg_t *sec, cfg_opt_t *opt)
{
	size_t len = strlen(cfg_opt_getnstr(opt, 0));

	note(loading, sec, opt->name);
	if (!len)
		parse_error(sec, "path is empty");
	else if (len >= PATH_SIZE)
		parse_error(sec, "path is %zu bytes long, at most %zu", len,
			    PATH_SIZE - 1);
	return 0;
}

/*
 * The cgroup2 mount: an absolute path that fits config_ledger's, and one
 * in a cgroup2 file system, as magnetctl account's cgroup-root (else
 * every cgroup would show as gone). The default is not checked: where
 * no cgroup2 is mounted there, the cgroups show by id.
 */
static int v_cgroup_root(cfg_t *sec, cfg_opt_t *opt)
{
	const char *v = cfg_opt_getnstr(opt, 0);
	size_t len = strlen(v);

	note(loading, sec, opt->name);
	if (v[0] != '/')
		parse_error(sec, "cgroup-root \"%s\": an absolute path (where cgroup2 is mounted)",
			    v);
	else if (len >= sizeof(((struct config_ledger *)0)->cgroup_root))
		parse_error(sec, "cgroup-root is %zu bytes long, at most %zu",
			    len,
			    sizeof(((struct config_ledger *)0)->cgroup_root) - 1);
	else if (strcmp(v, LEDGER_ROOT_DEFAULT) && ledger_root_check(v))
		parse_error(sec, "cgroup-root \"%s\": %s", v,
			    ledger_root_strerror(errno));
	return 0;
}

static int v_mode(cfg_t *sec, cfg_opt_t *opt)
{
	const char *mode = cfg_opt_getnstr(opt, 0);

	note(loading, sec, opt->name);
	if (parse_mode(mode) < 0)
		parse_error(sec, "mode '%s' is not an octal mode (0000..0777)",
			    mode);
	return 0;
}

/* A group that does not exist fails at --check, not at the socket's chown. */
static int v_group(cfg_t *sec, cfg_opt_t *opt)
{
	const char *group = cfg_opt_getnstr(opt, 0);
	size_t len = strlen(group);

	note(loading, sec, opt->name);
	if (len >= GROUP_SIZE)
		parse_error(sec, "group is %zu bytes long, at most %zu", len,
			    GROUP_SIZE - 1);
	else if (len && !getgrnam(group))
		parse_error(sec, "group \"%s\": no such group", group);
	return 0;
}

/*
 * libconfuse records no line for where a section starts (a section's own
 * cfg_t.line ends at its closing brace). Sections that may need one have
 * a hidden list option, SECTION_START below, whose default libconfuse
 * parses as it creates the section, right after its "{": this validator
 * runs then (twice: after the value, after the list's "}") and notes the
 * line. A value written in the file is refused as the unknown option it
 * is meant to be.
 */
static int v_section_start(cfg_t *sec, cfg_opt_t *opt)
{
	struct loader *ld = loading;
	const struct note *last;

	if (!ld)
		return 0;
	last = ld->nnotes ? &ld->notes[ld->nnotes - 1] : NULL;
	if (last && last->sec == sec) {
		/* the default's "}"; else the option is in the file */
		if (last->opt && !strcmp(last->opt, opt->name))
			return 0;	/* reported at its first value */
		if (last->opt || cfg_opt_size(opt) != 1 ||
		    cfg_opt_getnint(opt, 0)) {
			parse_error(sec, "no such option '%s'", opt->name);
			note(ld, sec, opt->name);
		}
		return 0;
	}
	note(ld, sec, NULL);
	if (!strcmp(sec->name, "probe")) {
		ld->probe = sec->title;
		ld->filter = 0;
	} else if (!strcmp(sec->name, "filter")) {
		ld->filter++;
	}
	return 0;
}

static const char *const buffer_modes[] = {
	[MAGNET_BUFFER_DROP] = "drop",
	[MAGNET_BUFFER_OVERWRITE] = "overwrite",
	NULL
};

static const char *const probe_kinds[] = {
	[MAGNET_PROBE_KPROBE] = "kprobe",
	[MAGNET_PROBE_KRETPROBE] = "kretprobe",
	[MAGNET_PROBE_TRACEPOINT] = "tracepoint",
	NULL
};

static const char *const metrics_keys[] = {
	[METRICS_KEY_ID] = "id",
	[METRICS_KEY_SOCK] = "sock",
	[METRICS_KEY_SKB] = "skb",
	NULL
};

static const char *const filter_actions[] = {
	[MAGNET_FILTER_INCLUDE] = "include",
	[MAGNET_FILTER_EXCLUDE] = "exclude",
	NULL
};

/* A word of @words into its index; a wrong word is reported, taken as 0. */
static int parse_enum(cfg_t *sec, cfg_opt_t *opt, const char *value,
		      long *result, const char *const *words)
{
	char expected[64] = "";
	long i;

	for (i = 0; words[i]; i++) {
		if (!strcmp(value, words[i])) {
			*result = i;
			return 0;
		}
		snprintf(expected + strlen(expected),
			 sizeof(expected) - strlen(expected), "%s%s",
			 i ? (words[i + 1] ? ", " : " or ") : "", words[i]);
	}
	parse_error(sec, "%s '%s': expected %s", opt->name, value, expected);
	*result = 0;
	return 0;
}

static int p_buffer_mode(cfg_t *sec, cfg_opt_t *opt, const char *value,
			 void *result)
{
	return parse_enum(sec, opt, value, result, buffer_modes);
}

static int p_kind(cfg_t *sec, cfg_opt_t *opt, const char *value,
		  void *result)
{
	return parse_enum(sec, opt, value, result, probe_kinds);
}

static int p_key(cfg_t *sec, cfg_opt_t *opt, const char *value, void *result)
{
	return parse_enum(sec, opt, value, result, metrics_keys);
}

static int p_action(cfg_t *sec, cfg_opt_t *opt, const char *value,
		    void *result)
{
	return parse_enum(sec, opt, value, result, filter_actions);
}

/*
 * A 64-bit id (kernel addresses pass LONG_MAX, where libconfuse's own
 * integers stop), kept in the option's long: read back as uint64_t.
 */
static int p_u64(cfg_t *sec, cfg_opt_t *opt, const char *value, void *result)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(value, &end, 0);
	if (*value < '0' || *value > '9' || *end || errno) {
		/* as libconfuse does for its integers: the parse stops */
		parse_error(sec, "%s '%s': not an integer of 0..%llu",
			    opt->name, value, (unsigned long long)UINT64_MAX);
		return -1;
	}
	*(long *)result = (long)v;
	return 0;
}

/* --- the options table --------------------------------------------------- */

#define OPT_INT(n, d, check) \
	{ .name = (n), .type = CFGT_INT, .def.number = (d), .validcb = (check) }
#define OPT_STR(n, d, check) \
	{ .name = (n), .type = CFGT_STR, .def.string = (d), .validcb = (check) }
#define OPT_ENUM(n, d, parse) \
	{ .name = (n), .type = CFGT_INT, .def.number = (d), \
	  .parsecb = (parse), .validcb = v_note }
/* no default: whether the option was given is part of the meaning */
#define OPT_INT_GIVEN(n, parse) \
	{ .name = (n), .type = CFGT_INT, .flags = CFGF_NODEFAULT, \
	  .parsecb = (parse), .validcb = v_note }
#define OPT_STR_GIVEN(n, check) \
	{ .name = (n), .type = CFGT_STR, .flags = CFGF_NODEFAULT, \
	  .validcb = (check) }
#define OPT_LIST(n) \
	{ .name = (n), .type = CFGT_INT, .flags = CFGF_LIST, .validcb = v_note }
#define OPT_SECTION(n, opts, f) \
	{ .name = (n), .type = CFGT_SEC, .flags = (f), .subopts = (opts) }
#define SECTION_START \
	{ .name = "(start)", .type = CFGT_INT, .flags = CFGF_LIST, \
	  .def.parsed = "{0}", .validcb = v_section_start }
#define NAMED	(CFGF_MULTI | CFGF_TITLE | CFGF_NO_TITLE_DUPES)

/* The file's grammar, and the defaults config.h documents. */
static cfg_opt_t socket_opts[] = {
	OPT_STR("path", MAGNET_SOCKET_PATH, v_path),
	OPT_STR("mode", "0660", v_mode),
	OPT_STR("group", "", v_group),
	OPT_INT("max-clients", 64, v_max_clients),
	OPT_INT("client-queue", 262144, v_client_queue),
	CFG_END()
};

static cfg_opt_t prometheus_opts[] = {
	{ .name = "enable", .type = CFGT_BOOL, .def.boolean = cfg_false,
	  .validcb = v_note },
	OPT_STR("address", "127.0.0.1", v_address),
	OPT_INT("port", MAGNETD_HTTP_PORT, v_http_port),
	OPT_INT("max-clients", 8, v_http_clients),
	OPT_INT("timeout", 10, v_http_timeout),
	OPT_INT("request-timeout", 10, v_http_timeout),
	{ .name = "per-cpu", .type = CFGT_BOOL, .def.boolean = cfg_false,
	  .validcb = v_note },
	OPT_INT("buckets-per-doubling", 4, v_buckets),
	OPT_STR("web-config", "", v_web_config),
	CFG_END()
};

static cfg_opt_t ledger_opts[] = {
	{ .name = "enable", .type = CFGT_BOOL, .def.boolean = cfg_false,
	  .validcb = v_note },
	OPT_STR("cgroup-root", LEDGER_ROOT_DEFAULT, v_cgroup_root),
	OPT_INT("cgroup-depth", 0, v_cgroup_depth),
	CFG_END()
};

static cfg_opt_t acct_opts[] = {
	{ .name = "process", .type = CFGT_STR, .flags = CFGF_LIST,
	  .def.parsed = "{}", .validcb = v_processes },
	OPT_INT("rescan", 10, v_rescan),
	CFG_END()
};

static cfg_opt_t otlp_opts[] = {
	OPT_STR("url", "", v_otlp_url),
	OPT_STR("probe-sets", "app,tcp-send,tcp-recv,udp-send,udp-recv,blk-io",
		v_otlp_sets),
	OPT_STR("expression", "", v_otlp_str),
	OPT_STR("program", "magnet-read", v_otlp_str),
	OPT_INT("queue", 4194304, v_otlp_queue),
	OPT_INT("timeout", 10, v_otlp_timeout),
	CFG_END()
};

static cfg_opt_t metrics_opts[] = {
	OPT_INT("interval", 1, v_interval),
	OPT_INT("window", 10, v_window),
	OPT_INT("top-tgids", 5, v_top_tgids),
	OPT_INT("max-tgids", 1024, v_max_tgids),
	CFG_END()
};

static cfg_opt_t buffer_opts[] = {
	SECTION_START,
	OPT_INT("size", 262144, v_buffer_size),
	OPT_ENUM("mode", MAGNET_BUFFER_DROP, p_buffer_mode),
	/* default: SIZE_WM_DEFAULT, or a quarter of a smaller buffer */
	{ .name = "size-watermark", .type = CFGT_INT, .flags = CFGF_NODEFAULT,
	  .validcb = v_size_wm },
	OPT_INT("count-watermark", 0, v_count_wm),
	OPT_INT("timeout", 100, v_buffer_timeout),
	CFG_END()
};

static cfg_opt_t probe_set_opts[] = {
	SECTION_START,
	OPT_STR("buffer", "default", v_name),
	OPT_INT("snaplen", 0, v_snaplen),
	CFG_END()
};

static cfg_opt_t filter_opts[] = {
	SECTION_START,
	OPT_ENUM("action", MAGNET_FILTER_INCLUDE, p_action),
	OPT_LIST("cpus"),
	OPT_LIST("tgids"),
	OPT_INT("tid", 0, v_tid),
	OPT_INT_GIVEN("id-min", p_u64),
	OPT_INT_GIVEN("id-max", p_u64),
	OPT_STR_GIVEN("rule", v_note),
	CFG_END()
};

static cfg_opt_t probe_opts[] = {
	SECTION_START,
	OPT_STR_GIVEN("predef", v_name),
	OPT_INT_GIVEN("kind", p_kind),
	OPT_STR_GIVEN("target", v_target),
	OPT_INT("args", 0, v_args),
	OPT_INT("id-arg", 0, v_id_arg),
	OPT_STR("buffer", "default", v_name),
	OPT_INT("snaplen", 0, v_snaplen),
	OPT_INT("sample-every", 0, v_sample_every),
	OPT_INT("sample-interval", 0, v_sample_interval),
	OPT_INT("period", 0, v_period),
	OPT_INT("depth", MAGNET_SAMPLE_DEPTH_DEFAULT, v_depth),
	OPT_SECTION("filter", filter_opts, CFGF_MULTI),
	CFG_END()
};

static cfg_opt_t latency_opts[] = {
	SECTION_START,
	OPT_STR_GIVEN("start", v_name),
	OPT_STR_GIVEN("end", v_name),
	OPT_ENUM("key", METRICS_KEY_ID, p_key),
	OPT_INT("timeout", 1000, v_latency_timeout),
	OPT_INT("max-pending", 4096, v_max_pending),
	CFG_END()
};

static cfg_opt_t root_opts[] = {
	OPT_SECTION("socket", socket_opts, CFGF_NONE),
	OPT_SECTION("metrics", metrics_opts, CFGF_NONE),
	OPT_SECTION("prometheus", prometheus_opts, CFGF_NONE),
	OPT_SECTION("ledger", ledger_opts, CFGF_NONE),
	OPT_SECTION("acct", acct_opts, CFGF_NONE),
	OPT_SECTION("otlp", otlp_opts, CFGF_NONE),
	OPT_SECTION("buffer", buffer_opts, NAMED),
	OPT_SECTION("probe-set", probe_set_opts, NAMED),
	OPT_SECTION("probe", probe_opts, NAMED),
	OPT_SECTION("latency", latency_opts, NAMED),
	CFG_END()
};

/* --- reading the file ---------------------------------------------------- */

/*
 * "${VAR}" at @i, which libconfuse's scanner replaces by the environment
 * variable (in a double-quoted string, or where a token starts): the
 * index of its "}", or @i if there is none.
 */
static size_t skip_var(const char *text, size_t len, size_t i,
		       bool in_string)
{
	const char *end;

	if (i + 1 >= len || text[i] != '$' || text[i + 1] != '{')
		return i;
	if (!in_string && i && !strchr(" \t\r\n={}()+,*\"'", text[i - 1]))
		return i;
	end = memchr(text + i + 2, '}', len - i - 2);
	return end ? (size_t)(end - text) : i;
}

#define BRACES_MAX	16	/* nesting whose lines are remembered */

/*
 * Make @text fit for libconfuse 3.3, or report why it is not. Its scanner
 * counts each "#" or "//" comment as three lines and each C comment as a
 * line more than it spans, so every line number after the first comment
 * would be wrong, and it refuses a comment inside a list: the comments
 * are blanked out here, newlines kept. It also takes the end of the file
 * for the end of an open C comment or section: those, and strings left
 * open, are reported here at the line that opened them. Strings and
 * "${VAR}" are skipped as its scanner skips them. Returns 0 or -1.
 */
static int scan_text(struct loader *ld, char *text, size_t len)
{
	enum { TEXT, DQUOTE, SQUOTE, LINE_COMMENT, C_COMMENT } state = TEXT;
	int line = 1, opened = 0, depth = 0, brace[BRACES_MAX];
	size_t i;
	char c, next;

	for (i = 0; i < len; i++) {
		c = text[i];
		next = i + 1 < len ? text[i + 1] : '\0';
		if (!c) {
			report(ld, line, NULL, "NUL byte in the text");
			return -1;
		}
		line += c == '\n';
		switch (state) {
		case TEXT:
			if (c == '"' || c == '\'') {
				state = c == '"' ? DQUOTE : SQUOTE;
				opened = line;
			} else if (c == '$') {
				i = skip_var(text, len, i, false);
			} else if (c == '{') {
				if (depth < BRACES_MAX)
					brace[depth] = line;
				depth++;
			} else if (c == '}' && depth) {
				depth--;	/* (libconfuse reports extras) */
			} else if (c == '#' || (c == '/' && next == '/')) {
				state = LINE_COMMENT;
				text[i] = ' ';
			} else if (c == '/' && next == '*') {
				state = C_COMMENT;
				opened = line;
				text[i++] = ' ';
				text[i] = ' ';
			}
			break;
		case DQUOTE:
		case SQUOTE:
			if (c == '\\' && next) {
				line += next == '\n';
				i++;
			} else if (c == '$' && state == DQUOTE) {
				i = skip_var(text, len, i, true);
			} else if (c == (state == DQUOTE ? '"' : '\'')) {
				state = TEXT;
			}
			break;
		case LINE_COMMENT:
			if (c == '\n')
				state = TEXT;
			else
				text[i] = ' ';
			break;
		case C_COMMENT:
			if (c == '*' && next == '/') {
				text[i++] = ' ';
				text[i] = ' ';
				state = TEXT;
			} else if (c != '\n') {
				text[i] = ' ';
			}
			break;
		}
	}
	if (state == DQUOTE || state == SQUOTE || state == C_COMMENT) {
		report(ld, opened, NULL, "%s is not closed",
		       state == C_COMMENT ? "this comment" : "this string");
		return -1;
	}
	if (depth) {
		report(ld, brace[(depth < BRACES_MAX ? depth : BRACES_MAX) - 1],
		       NULL, "this '{' is not closed (missing '}')");
		return -1;
	}
	return 0;
}

/* The whole file, NUL-terminated, in *@text (@len bytes); -1 if not. */
static int read_file(struct loader *ld, char **text, size_t *len)
{
	size_t size = 4096, n = 0;
	struct stat st;
	char *buf = NULL, *grown;
	FILE *f;
	int err = 0;

	f = fopen(ld->file, "re");
	if (!f) {
		report(ld, 0, NULL, "cannot open: %s", strerror(errno));
		return -1;
	}
	/* a directory would make libconfuse's scanner exit the process */
	if (fstat(fileno(f), &st)) {
		err = errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = EISDIR;
		goto out;
	}
	for (;;) {
		if (!buf || n + 1 >= size) {
			if (buf)
				size *= 2;
			grown = size <= FILE_MAX ? realloc(buf, size) : NULL;
			if (!grown) {
				err = size <= FILE_MAX ? ENOMEM : EFBIG;
				goto out;
			}
			buf = grown;
		}
		n += fread(buf + n, 1, size - n - 1, f);
		if (ferror(f)) {
			err = errno ?: EIO;
			goto out;
		}
		if (feof(f))
			break;
	}
	buf[n] = '\0';
out:
	fclose(f);
	if (err) {
		report(ld, 0, NULL, "cannot read: %s", strerror(err));
		free(buf);
		return -1;
	}
	*text = buf;
	*len = n;
	return 0;
}

/*
 * Parse the file into a libconfuse tree. NULL if that failed (reported);
 * else the tree, whose values the validators may still have reported.
 */
static cfg_t *parse_file(struct loader *ld)
{
	cfg_t *root = NULL;
	char *text;
	size_t len;
	FILE *mem;
	int ret = CFG_SUCCESS;

	if (read_file(ld, &text, &len))
		return NULL;
	if (scan_text(ld, text, len))
		goto out;
	root = cfg_init(root_opts, CFGF_NONE);
	if (!root) {
		ld->oom = true;
		goto out;
	}
	cfg_set_error_function(root, confuse_error);
	if (len) {	/* an empty file is all defaults */
		mem = fmemopen(text, len, "r");
		if (!mem) {
			ld->oom = true;
			cfg_free(root);
			root = NULL;
			goto out;
		}
		ret = cfg_parse_fp(root, mem);
		fclose(mem);
	}
	if (ret != CFG_SUCCESS) {
		/* libconfuse has said why, except when out of memory */
		if (!ld->errors)
			ld->oom = true;
		cfg_free(root);
		root = NULL;
	}
out:
	free(text);
	return root;
}

/* --- the tree into struct config ---------------------------------------- */

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

static void copy_str(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", str_or_empty(src));
}

static void *alloc_array(struct loader *ld, size_t n, size_t size)
{
	void *p;

	if (!n)
		return NULL;
	p = calloc(n, size);
	if (!p)
		ld->oom = true;
	return p;
}

static bool in_range(long v, long min, long max)
{
	return v >= min && v <= max;
}

static void build_socket(cfg_t *sec, struct config_socket *s)
{
	copy_str(s->path, sizeof(s->path), cfg_getstr(sec, "path"));
	s->mode = (mode_t)parse_mode(cfg_getstr(sec, "mode"));
	copy_str(s->group, sizeof(s->group), cfg_getstr(sec, "group"));
	s->max_clients = cfg_getint(sec, "max-clients");
	s->client_queue = cfg_getint(sec, "client-queue");
}

/* A relative web-config is taken from the directory of @file. */
static void build_web_config(struct loader *ld, cfg_t *sec,
			     struct config_prometheus *p)
{
	const char *name = str_or_empty(cfg_getstr(sec, "web-config"));
	const char *slash = strrchr(ld->file, '/');
	int n;

	if (!*name || name[0] == '/' || !slash) {
		copy_str(p->web_config, sizeof(p->web_config), name);
		return;
	}
	n = snprintf(p->web_config, sizeof(p->web_config), "%.*s/%s",
		     (int)(slash - ld->file), ld->file, name);
	if (n < 0 || (size_t)n >= sizeof(p->web_config))
		report(ld, opt_line(ld, sec, "web-config"), "prometheus",
		       "web-config %s in %.*s is more than %zu bytes long",
		       name, (int)(slash - ld->file), ld->file,
		       sizeof(p->web_config) - 1);
}

static void build_prometheus(cfg_t *sec, struct config_prometheus *p)
{
	p->enable = cfg_getbool(sec, "enable");
	copy_str(p->address, sizeof(p->address), cfg_getstr(sec, "address"));
	p->port = cfg_getint(sec, "port");
	p->max_clients = cfg_getint(sec, "max-clients");
	p->timeout_s = cfg_getint(sec, "timeout");
	p->request_timeout_s = cfg_getint(sec, "request-timeout");
	p->per_cpu = cfg_getbool(sec, "per-cpu");
	p->buckets = cfg_getint(sec, "buckets-per-doubling");
}

static void build_ledger(cfg_t *sec, struct config_ledger *l)
{
	l->enable = cfg_getbool(sec, "enable");
	copy_str(l->cgroup_root, sizeof(l->cgroup_root),
		 cfg_getstr(sec, "cgroup-root"));
	l->cgroup_depth = cfg_getint(sec, "cgroup-depth");
}

static void build_acct(cfg_t *sec, struct config_acct *a)
{
	unsigned int i, n = cfg_size(sec, "process");

	a->nprocess = 0;
	for (i = 0; i < n && i < MAGNET_ACCT_WATCHES; i++)
		copy_str(a->process[a->nprocess++], ACCT_COMM_LEN,
			 cfg_getnstr(sec, "process", i));
	a->rescan_s = cfg_getint(sec, "rescan");
}

static void build_otlp(cfg_t *sec, struct config_otlp *o)
{
	copy_str(o->url, sizeof(o->url), cfg_getstr(sec, "url"));
	copy_str(o->sets, sizeof(o->sets), cfg_getstr(sec, "probe-sets"));
	copy_str(o->expression, sizeof(o->expression),
		 cfg_getstr(sec, "expression"));
	copy_str(o->program, sizeof(o->program), cfg_getstr(sec, "program"));
	o->queue = cfg_getint(sec, "queue");
	o->timeout_s = cfg_getint(sec, "timeout");
}

static void build_metrics(struct loader *ld, cfg_t *sec,
			  struct config_metrics *m)
{
	long interval = cfg_getint(sec, "interval");
	long window = cfg_getint(sec, "window");
	long top = cfg_getint(sec, "top-tgids");
	long max = cfg_getint(sec, "max-tgids");

	if (in_range(interval, 1, WINDOW_MAX_S) && window < interval &&
	    window >= 1)
		report(ld, conflict_line(ld, sec, "window", "interval"),
		       "metrics", "window %ld is shorter than interval %ld",
		       window, interval);
	if (in_range(max, 1, TGIDS_TRACKED_MAX) && top > max)
		report(ld, conflict_line(ld, sec, "top-tgids", "max-tgids"),
		       "metrics", "top-tgids %ld exceeds max-tgids %ld", top,
		       max);
	m->interval_s = interval;
	m->window_s = window;
	m->top_tgids = top;
	m->max_tgids = max;
}

static void build_buffer(struct loader *ld, cfg_t *sec,
			 struct config_buffer *b)
{
	const char *name = cfg_title(sec);
	long size = cfg_getint(sec, "size");
	long size_wm = cfg_getint(sec, "size-watermark");
	long count_wm = cfg_getint(sec, "count-watermark");
	char ctx[64];

	snprintf(ctx, sizeof(ctx), "buffer '%s'", name);
	check_name(ld, noted_line(ld, sec, NULL), ctx, "name", name);
	if (!cfg_size(sec, "size-watermark"))
		size_wm = size / 4 < SIZE_WM_DEFAULT ? size / 4 :
						       SIZE_WM_DEFAULT;
	if (buffer_size_valid(size) && size_wm > size)
		report(ld, conflict_line(ld, sec, "size-watermark", "size"),
		       ctx, "size-watermark %ld exceeds size %ld", size_wm,
		       size);
	if (buffer_size_valid(size) && count_wm > size / RECORD_HEADER)
		report(ld, conflict_line(ld, sec, "count-watermark", "size"),
		       ctx, "count-watermark %ld exceeds size / %ld = %ld",
		       count_wm, RECORD_HEADER, size / RECORD_HEADER);
	copy_str(b->name, sizeof(b->name), name);
	b->size = size;
	b->mode = cfg_getint(sec, "mode");
	b->size_wm = size_wm;
	b->count_wm = count_wm;
	b->timeout_us = (uint64_t)cfg_getint(sec, "timeout") * 1000;
}

static void build_set(struct loader *ld, cfg_t *sec,
		      struct config_probeset *s)
{
	const char *set = cfg_title(sec);
	char known[64] = "";
	size_t i;

	if (!config_set_known(set)) {
		for (i = 0; probe_sets[i].name; i++)
			snprintf(known + strlen(known),
				 sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", probe_sets[i].name);
		report(ld, noted_line(ld, sec, NULL), NULL,
		       "no probe set '%s' (known: %s)", set, known);
	}
	copy_str(s->set, sizeof(s->set), set);
	copy_str(s->buffer, sizeof(s->buffer), cfg_getstr(sec, "buffer"));
	s->snaplen = cfg_getint(sec, "snaplen");
}

/* Predefined, or kind and target; arguments only for the latter. */
static void check_probe_kind(struct loader *ld, cfg_t *sec, const char *ctx)
{
	bool predef = cfg_size(sec, "predef"), kind = cfg_size(sec, "kind");
	bool target = cfg_size(sec, "target");
	long args = cfg_getint(sec, "args"), id_arg = cfg_getint(sec, "id-arg");
	long max_args = MAGNET_PROBE_ARGS_MAX;

	if (predef && (kind || target))
		report(ld, conflict_line(ld, sec, kind ? "kind" : "target",
					 "predef"),
		       ctx, "predef excludes kind and target");
	else if (!predef && !kind && !target)
		report(ld, noted_line(ld, sec, NULL), ctx,
		       "needs predef, or kind and target");
	else if (!predef && !target)
		report(ld, opt_line(ld, sec, "kind"), ctx,
		       "kind needs a target");
	else if (!predef && !kind)
		report(ld, opt_line(ld, sec, "target"), ctx,
		       "target needs a kind");

	if ((cfg_getint(sec, "period") ||
	     cfg_getint(sec, "depth") != MAGNET_SAMPLE_DEPTH_DEFAULT) &&
	    (!predef || strcmp(cfg_getstr(sec, "predef"), SAMPLE_PREDEF)))
		report(ld, opt_line(ld, sec, cfg_getint(sec, "period") ?
					     "period" : "depth"),
		       ctx, "period and depth are for a probe of predef \"%s\" only",
		       SAMPLE_PREDEF);
	if (predef && (args || id_arg)) {
		report(ld, conflict_line(ld, sec, args ? "args" : "id-arg",
					 "predef"),
		       ctx, "args and id-arg are not for predef probes");
		return;
	}
	if (kind && cfg_getint(sec, "kind") == MAGNET_PROBE_TRACEPOINT)
		max_args = MAGNET_TRACEPOINT_ARGS_MAX;
	if (max_args < MAGNET_PROBE_ARGS_MAX && args > max_args &&
	    args <= MAGNET_PROBE_ARGS_MAX)
		report(ld, conflict_line(ld, sec, "args", "kind"), ctx,
		       "a tracepoint records at most %ld args, not %ld",
		       max_args, args);
	if (in_range(args, 0, max_args) && id_arg > args &&
	    id_arg <= MAGNET_PROBE_ARGS_MAX)
		report(ld, conflict_line(ld, sec, "id-arg", "args"), ctx,
		       "id-arg %ld exceeds args %ld", id_arg, args);
}

static void build_cpus(struct loader *ld, cfg_t *sec, const char *ctx,
		       struct filter_rule *r)
{
	unsigned int i, n = cfg_size(sec, "cpus");
	long cpu;

	for (i = 0; i < n; i++) {
		cpu = cfg_getnint(sec, "cpus", i);
		if (!in_range(cpu, 0, CPUS_MAX - 1)) {
			report(ld, opt_line(ld, sec, "cpus"), ctx,
			       "cpu %ld out of range 0..%d", cpu, CPUS_MAX - 1);
			continue;
		}
		r->cpus[cpu / 8] |= 1U << (cpu % 8);
		if ((size_t)cpu / 8 + 1 > r->cpus_len)
			r->cpus_len = cpu / 8 + 1;
	}
	if (n)
		r->given |= 1ULL << MAGNET_A_FILTER_CPUS;
}

static void build_tgids(struct loader *ld, cfg_t *sec, const char *ctx,
			struct filter_rule *r)
{
	unsigned int i, n = cfg_size(sec, "tgids");
	long tgid;

	if (n > MAGNET_FILTER_SET_MAX) {
		report(ld, opt_line(ld, sec, "tgids"), ctx,
		       "%u tgids, at most %d", n, MAGNET_FILTER_SET_MAX);
		n = MAGNET_FILTER_SET_MAX;
	}
	for (i = 0; i < n; i++) {
		tgid = cfg_getnint(sec, "tgids", i);
		if (!in_range(tgid, 0, UINT32_MAX))
			report(ld, opt_line(ld, sec, "tgids"), ctx,
			       "tgid %ld out of range 0..%lu", tgid,
			       (unsigned long)UINT32_MAX);
		r->tgid[i] = tgid;
	}
	r->tgids = n;
}

static void build_id_range(struct loader *ld, cfg_t *sec, const char *ctx,
			   struct filter_rule *r)
{
	bool min = cfg_size(sec, "id-min"), max = cfg_size(sec, "id-max");

	if (min != max) {
		report(ld, opt_line(ld, sec, min ? "id-min" : "id-max"), ctx,
		       "%s needs %s (an id range has both)",
		       min ? "id-min" : "id-max", min ? "id-max" : "id-min");
		return;
	}
	if (!min)
		return;
	r->given |= 1ULL << MAGNET_A_FILTER_ID_MIN;
	r->id_min = (uint64_t)cfg_getint(sec, "id-min");
	r->id_max = (uint64_t)cfg_getint(sec, "id-max");
	if (r->id_min > r->id_max)
		report(ld, conflict_line(ld, sec, "id-min", "id-max"), ctx,
		       "id-min %llu exceeds id-max %llu",
		       (unsigned long long)r->id_min,
		       (unsigned long long)r->id_max);
}

/* A rule's words, as magnetctl filter add takes them, into @r. */
static void build_rule_words(struct loader *ld, cfg_t *sec, const char *ctx,
			     struct filter_rule *r)
{
	char *copy = strdup(cfg_getstr(sec, "rule")), *save = NULL, *w;
	char *words[256];
	struct parse_error e;
	int n = 0;

	if (!copy) {
		report(ld, opt_line(ld, sec, "rule"), ctx, "out of memory");
		return;
	}
	for (w = strtok_r(copy, " \t", &save); w && n < 256;
	     w = strtok_r(NULL, " \t", &save))
		words[n++] = w;
	if (w)
		report(ld, opt_line(ld, sec, "rule"), ctx,
		       "rule: more than 256 words");
	else if (filter_parse(r, n, words, &e))
		report(ld, opt_line(ld, sec, "rule"), ctx, "rule: %s", e.text);
	free(copy);
}

static void build_filter(struct loader *ld, cfg_t *sec, const char *probe,
			 unsigned int index, struct filter_rule *r)
{
	unsigned int errors = ld->errors;
	struct parse_error e;
	bool rule = cfg_size(sec, "rule");
	char ctx[96];

	snprintf(ctx, sizeof(ctx), "probe '%s': filter %u", probe, index + 1);
	filter_rule_init(r);
	if (noted_line(ld, sec, "action")) {
		r->action = cfg_getint(sec, "action");
		r->given |= 1ULL << MAGNET_A_FILTER_ACTION;
	}
	build_cpus(ld, sec, ctx, r);
	build_tgids(ld, sec, ctx, r);
	r->tid = cfg_getint(sec, "tid");
	if (r->tid)
		r->given |= 1ULL << MAGNET_A_FILTER_TID;
	build_id_range(ld, sec, ctx, r);
	if (rule)
		build_rule_words(ld, sec, ctx, r);
	/* given but wrong counts as given: it is reported already */
	if (!rule && !cfg_size(sec, "cpus") && !cfg_size(sec, "tgids") &&
	    !r->tid && !cfg_size(sec, "id-min") && !cfg_size(sec, "id-max"))
		report(ld, noted_line(ld, sec, NULL), ctx,
		       "no predicate: give cpus, tgids, tid, id-min and id-max, or a rule");
	else if (ld->errors == errors && filter_check(r, probe, &e))
		report(ld, opt_line(ld, sec, rule ? "rule" : NULL), ctx, "%s",
		       e.text);
}

static void build_filters(struct loader *ld, cfg_t *sec,
			  struct config_probe *p)
{
	unsigned int i, n = cfg_size(sec, "filter");

	if (n > CONFIG_FILTER_MAX)
		report(ld, noted_line(ld, cfg_getnsec(sec, "filter",
						      CONFIG_FILTER_MAX), NULL),
		       NULL, "probe '%s': more than %d filters", p->name,
		       CONFIG_FILTER_MAX);
	p->filters = alloc_array(ld, n, sizeof(*p->filters));
	if (!p->filters)
		return;
	p->nfilters = n;
	for (i = 0; i < n; i++)
		build_filter(ld, cfg_getnsec(sec, "filter", i), p->name, i,
			     &p->filters[i]);
}

static void build_probe(struct loader *ld, cfg_t *sec,
			struct config_probe *p)
{
	const char *name = cfg_title(sec);
	const struct probe_set *set = probe_set_of_layer(name);
	int line = noted_line(ld, sec, NULL);
	char ctx[64];

	snprintf(ctx, sizeof(ctx), "probe '%s'", name);
	check_name(ld, line, ctx, "name", name);
	if (set)
		report(ld, line, ctx,
		       "name is reserved for a layer of probe-set %s",
		       set->name);
	check_probe_kind(ld, sec, ctx);
	copy_str(p->name, sizeof(p->name), name);
	copy_str(p->predef, sizeof(p->predef), cfg_getstr(sec, "predef"));
	p->kind = cfg_getint(sec, "kind");
	copy_str(p->target, sizeof(p->target), cfg_getstr(sec, "target"));
	p->args = cfg_getint(sec, "args");
	p->id_arg = cfg_getint(sec, "id-arg");
	copy_str(p->buffer, sizeof(p->buffer), cfg_getstr(sec, "buffer"));
	p->snaplen = cfg_getint(sec, "snaplen");
	p->sample_every = cfg_getint(sec, "sample-every");
	p->sample_interval_ns = cfg_getint(sec, "sample-interval");
	p->period_ns = cfg_getint(sec, "period");
	p->depth = cfg_getint(sec, "depth");
	build_filters(ld, sec, p);
}

static void build_latency(struct loader *ld, cfg_t *sec,
			  struct config_latency *l)
{
	const char *name = cfg_title(sec);
	const char *start = cfg_getstr(sec, "start");
	const char *end = cfg_getstr(sec, "end");
	char ctx[64];

	snprintf(ctx, sizeof(ctx), "latency '%s'", name);
	check_name(ld, noted_line(ld, sec, NULL), ctx, "name", name);
	if (!start || !end)
		report(ld, noted_line(ld, sec, NULL), ctx, "needs %s",
		       start ? "end" : end ? "start" : "start and end");
	else if (!strcmp(start, end))
		report(ld, conflict_line(ld, sec, "start", "end"), ctx,
		       "start and end are the same event '%s'", start);
	copy_str(l->name, sizeof(l->name), name);
	copy_str(l->start, sizeof(l->start), start);
	copy_str(l->end, sizeof(l->end), end);
	l->key = cfg_getint(sec, "key");
	l->timeout_ns = (uint64_t)cfg_getint(sec, "timeout") * 1000000;
	l->max_pending = cfg_getint(sec, "max-pending");
}

/* --- references between sections --------------------------------------- */

static bool buffer_known(const struct config *cfg, const char *name)
{
	unsigned int i;

	if (!strcmp(name, "default"))	/* the module's own */
		return true;
	for (i = 0; i < cfg->nbuffers; i++)
		if (!strcmp(cfg->buffers[i].name, name))
			return true;
	return false;
}

/* A configured probe, or a layer of a configured probe set. */
static bool event_known(const struct config *cfg, const char *name)
{
	const struct probe_set *set = probe_set_of_layer(name);
	unsigned int i;

	for (i = 0; i < cfg->nprobes; i++)
		if (!strcmp(cfg->probes[i].name, name))
			return true;
	for (i = 0; set && i < cfg->nsets; i++)
		if (!strcmp(cfg->sets[i].set, set->name))
			return true;
	return false;
}

static void check_buffer_ref(struct loader *ld, const struct config *cfg,
			     cfg_t *sec, const char *buffer)
{
	char ctx[96];

	if (buffer_known(cfg, buffer) || name_problem(buffer))
		return;		/* (a bad name is reported already) */
	report(ld, opt_line(ld, sec, "buffer"),
	       section_ctx(ld, sec, ctx, sizeof(ctx)),
	       "buffer '%s' is not declared (no buffer %s {} section)",
	       buffer, buffer);
}

static void check_event_ref(struct loader *ld, const struct config *cfg,
			    cfg_t *sec, const char *opt, const char *event)
{
	const struct probe_set *set = probe_set_of_layer(event);
	char ctx[96];

	if (!*event || event_known(cfg, event) || name_problem(event))
		return;
	if (set)
		report(ld, opt_line(ld, sec, opt),
		       section_ctx(ld, sec, ctx, sizeof(ctx)),
		       "%s '%s' needs probe-set %s", opt, event, set->name);
	else
		report(ld, opt_line(ld, sec, opt),
		       section_ctx(ld, sec, ctx, sizeof(ctx)),
		       "%s '%s' is not a configured probe or probe-set layer",
		       opt, event);
}

struct filter_refs {
	struct loader *ld;
	const struct config *cfg;
	cfg_t *sec;
};

/* A probe a filter rule names (a correlate rule's end, via). */
static void check_filter_ref(const char *word, const char *probe, void *data)
{
	const struct filter_refs *fr = data;
	struct parse_error e;
	uint64_t id;

	/* a probe given by number is the kernel's business */
	if (!word_uint(probe, 1, MAGNET_EVENT_ID_MAX, word, &id, &e))
		return;
	check_event_ref(fr->ld, fr->cfg, fr->sec, "rule", probe);
}

static void check_references(struct loader *ld, cfg_t *root,
			     const struct config *cfg)
{
	const struct config_latency *l;
	unsigned int i;
	cfg_t *sec;
	char ctx[96];

	for (i = 0; i < cfg->nsets; i++)
		check_buffer_ref(ld, cfg, cfg_getnsec(root, "probe-set", i),
				 cfg->sets[i].buffer);
	for (i = 0; i < cfg->nprobes; i++) {
		const struct config_probe *p = &cfg->probes[i];

		sec = cfg_getnsec(root, "probe", i);
		check_buffer_ref(ld, cfg, sec, p->buffer);
		for (unsigned int f = 0; f < p->nfilters; f++) {
			struct filter_refs fr = {
				ld, cfg, cfg_getnsec(sec, "filter", f),
			};

			if (p->filters[f].type && p->filters[f].type->refs)
				p->filters[f].type->refs(&p->filters[f],
							 check_filter_ref, &fr);
		}
	}
	for (i = 0; i < cfg->nlatencies; i++) {
		l = &cfg->latencies[i];
		sec = cfg_getnsec(root, "latency", i);
		check_event_ref(ld, cfg, sec, "start", l->start);
		check_event_ref(ld, cfg, sec, "end", l->end);
		/* "NAME.count" would be both the event's and the latency's */
		if (event_known(cfg, l->name))
			report(ld, noted_line(ld, sec, NULL),
			       section_ctx(ld, sec, ctx, sizeof(ctx)),
			       "name in use by an event (metrics would clash)");
	}
}

/* --- loading ------------------------------------------------------------ */

static int message_cmp(const void *a, const void *b)
{
	const struct message *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Append @line and a newline to @err; false once it is full (cut there). */
static bool append_line(char *err, size_t errlen, size_t *used,
			const char *line)
{
	size_t room = errlen - *used;
	int n = snprintf(err + *used, room, "%s\n", line);

	if (n >= 0 && (size_t)n < room) {
		*used += n;
		return true;
	}
	/* what fits, still ending in a newline */
	*used = errlen - 1;
	if (errlen > 1)
		err[errlen - 2] = '\n';
	return false;
}

/* The messages into @err, in the order of their lines, and free them. */
static void write_messages(struct loader *ld, char *err, size_t errlen)
{
	bool room = err && errlen;
	size_t used = 0;
	unsigned int i;
	char *oom;

	if (room)
		*err = '\0';
	/* a valid file has none, and no array: qsort() takes no NULL */
	if (ld->errors)
		qsort(ld->msgs, ld->errors, sizeof(*ld->msgs), message_cmp);
	for (i = 0; i < ld->errors; i++) {
		if (room)
			room = append_line(err, errlen, &used,
					   ld->msgs[i].text);
		free(ld->msgs[i].text);
	}
	free(ld->msgs);
	if (ld->oom && room && asprintf(&oom, "%s: out of memory",
					ld->file) >= 0) {
		append_line(err, errlen, &used, oom);
		free(oom);
	}
}

/* The arrays of @cfg, one element per section of the file. */
static int alloc_config(struct loader *ld, cfg_t *root, struct config *cfg)
{
	cfg->nbuffers = cfg_size(root, "buffer");
	cfg->nsets = cfg_size(root, "probe-set");
	cfg->nprobes = cfg_size(root, "probe");
	cfg->nlatencies = cfg_size(root, "latency");
	cfg->buffers = alloc_array(ld, cfg->nbuffers, sizeof(*cfg->buffers));
	cfg->sets = alloc_array(ld, cfg->nsets, sizeof(*cfg->sets));
	cfg->probes = alloc_array(ld, cfg->nprobes, sizeof(*cfg->probes));
	cfg->latencies = alloc_array(ld, cfg->nlatencies,
				     sizeof(*cfg->latencies));
	if (ld->oom) {
		/* nothing built yet: config_free() must not walk probes */
		cfg->nprobes = 0;
		return -1;
	}
	return 0;
}

static struct config *build_config(struct loader *ld, cfg_t *root)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	unsigned int i;

	if (!cfg) {
		ld->oom = true;
		return NULL;
	}
	copy_str(cfg->file, sizeof(cfg->file), ld->file);
	if (alloc_config(ld, root, cfg))
		return cfg;
	build_socket(cfg_getsec(root, "socket"), &cfg->socket);
	build_metrics(ld, cfg_getsec(root, "metrics"), &cfg->metrics);
	build_prometheus(cfg_getsec(root, "prometheus"), &cfg->prometheus);
	build_ledger(cfg_getsec(root, "ledger"), &cfg->ledger);
	build_acct(cfg_getsec(root, "acct"), &cfg->acct);
	build_otlp(cfg_getsec(root, "otlp"), &cfg->otlp);
	build_web_config(ld, cfg_getsec(root, "prometheus"), &cfg->prometheus);
	for (i = 0; i < cfg->nbuffers; i++)
		build_buffer(ld, cfg_getnsec(root, "buffer", i),
			     &cfg->buffers[i]);
	for (i = 0; i < cfg->nsets; i++)
		build_set(ld, cfg_getnsec(root, "probe-set", i), &cfg->sets[i]);
	for (i = 0; i < cfg->nprobes; i++)
		build_probe(ld, cfg_getnsec(root, "probe", i), &cfg->probes[i]);
	for (i = 0; i < cfg->nlatencies; i++)
		build_latency(ld, cfg_getnsec(root, "latency", i),
			      &cfg->latencies[i]);
	check_references(ld, root, cfg);
	return cfg;
}

struct config *config_load(const char *file, char *err, size_t errlen)
{
	struct loader ld = { .file = file };
	struct config *cfg = NULL;
	cfg_t *root;

	loading = &ld;
	root = parse_file(&ld);
	if (root)
		cfg = build_config(&ld, root);
	loading = NULL;
	cfg_free(root);
	free(ld.notes);

	write_messages(&ld, err, errlen);
	if (ld.errors || ld.oom) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

void config_free(struct config *cfg)
{
	unsigned int i;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nprobes; i++)
		free(cfg->probes[i].filters);
	free(cfg->buffers);
	free(cfg->sets);
	free(cfg->probes);
	free(cfg->latencies);
	free(cfg);
}

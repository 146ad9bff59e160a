// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl: manage magnet's buffers, probes and filter rules over generic
 * netlink, print its statistics and follow its notifications.
 *
 * Every command line is checked completely before the first request goes
 * out, so usage errors are reported the same with or without the module.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netlink.h"
#include "print.h"

#define MAGNETCTL_VERSION	"0.1.0"
#define EXIT_USAGE		2
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define CPUS_MAX		8192	/* the largest CONFIG_NR_CPUS */
#define TGIDS_MAX		512	/* a rule fits in one request */

/* --- help ----------------------------------------------------------------- */

static const char help_intro[] =
"Usage: magnetctl [OPTIONS] OBJECT [COMMAND [ARGUMENTS]]\n"
"       magnetctl [OPTIONS] OBJECT help\n"
"\n"
"Control magnet, the kernel event sensor, through its generic netlink\n"
"family \"magnet\": buffers that hold event records, probes that log them,\n"
"filter rules, statistics and live notifications. Requests that change\n"
"something need CAP_NET_ADMIN or CAP_SYS_ADMIN, monitor CAP_NET_ADMIN;\n"
"listing is open to everyone.\n"
"\n"
"Options (before OBJECT):\n"
"  -j, --json      print JSON instead of text\n"
"  -p, --pretty    with -j, indent the JSON over several lines\n"
"  -h, --help      print this help and exit\n"
"  -V, --version   print the version and exit\n"
"\n"
"OBJECT is buffer, probe, filter, stats or monitor. Without a COMMAND,\n"
"buffer, probe and filter list their objects. PROBE is a probe's name, or\n"
"its id when it is all digits. Lists print a header line and aligned\n"
"columns; with -j they print the same fields, and a few more, as a JSON\n"
"array of objects whose keys are the headers in lower case.\n";

static const char help_buffer[] =
"Buffers (per-CPU rings of event records, read with magnet-read(1)):\n"
"  magnetctl buffer add NAME size SIZE [mode drop|overwrite]\n"
"      Create buffer NAME with SIZE bytes per CPU, a power of two from 4K\n"
"      to 1G. When a CPU's ring is full, mode drop (the default) drops new\n"
"      records and mode overwrite evicts the oldest ones.\n"
"  magnetctl buffer del NAME\n"
"      Remove buffer NAME; refused while probes log into it. Its reader\n"
"      gets the records left, then end of file.\n"
"  magnetctl buffer list\n"
"  magnetctl buffer show [NAME]\n"
"      List the buffers, or buffer NAME: NAME, SIZE (bytes per CPU), MODE,\n"
"      CPUS (rings, one per possible CPU), MAX_RECORD (largest record in\n"
"      bytes), READER (busy while a reader is attached, else free) and\n"
"      PROBES (probes logging into it).\n";

static const char help_probe[] =
"Probes (event sources that log records into a buffer):\n"
"  magnetctl probe add NAME PREDEF [OPTIONS]\n"
"  magnetctl probe add NAME kprobe|kretprobe|tracepoint TARGET\n"
"                      [args N] [id-arg N] [OPTIONS]\n"
"      Add probe NAME and print its id. PREDEF is a predefined probe (see\n"
"      probe catalog), e.g. sched_switch. Otherwise the probe is generic:\n"
"      a kprobe's TARGET is SYMBOL or SYMBOL+OFFSET (decimal or 0x hex), a\n"
"      kretprobe's a SYMBOL, a tracepoint's the tracepoint's name, e.g.\n"
"      sched_switch. A generic probe records its first N arguments (args:\n"
"      0 to 6, for tracepoints 0 to 5; default 0), a kretprobe also the\n"
"      return value and the time spent in the call. id-arg N makes\n"
"      argument N (1-based, at most args) the record id (default 0: id 0).\n"
"      OPTIONS:\n"
"        buffer B    log into buffer B (default: default)\n"
"        snaplen N   keep at most N bytes of payload (0, the default: all;\n"
"                    at most 65536)\n"
"        notify      multicast every hit (see monitor)\n"
"        disabled    add the probe disabled\n"
"  magnetctl probe del PROBE\n"
"      Remove a probe. Events other modules registered cannot be removed.\n"
"  magnetctl probe enable PROBE\n"
"  magnetctl probe disable PROBE\n"
"  magnetctl probe set PROBE [notify on|off] [snaplen N] [sample-every N]\n"
"                      [sample-interval DURATION]\n"
"      Change a probe. sample-every N keeps one event in N that passed the\n"
"      filters (0 or 1: all); sample-interval keeps at most one event per\n"
"      DURATION (0: no limit).\n"
"  magnetctl probe list\n"
"  magnetctl probe show [PROBE]\n"
"      List the probes, or one: ID, NAME, KIND, TARGET (predef:NAME for a\n"
"      predefined probe), OWNER (module that registered the event), BUFFER,\n"
"      ARGS, SNAPLEN, ENABLED, NOTIFY, HITS (times it fired while\n"
"      enabled), LOGGED (records written) and LOST (records the buffer\n"
"      refused).\n"
"  magnetctl probe catalog\n"
"      List the predefined probes: NAME, KIND, TARGET, DESCRIPTION.\n";

static const char help_filter[] =
"Filter rules (which hits of a probe are logged):\n"
"  magnetctl filter add PROBE [include|exclude] [cpus LIST] [tgid N]...\n"
"                       [tid N] [id MIN[-MAX]]\n"
"      Add a rule to PROBE and print its id. With include rules (the\n"
"      default action) the probe keeps only records that match one of\n"
"      them; records matching an exclude rule are dropped. A rule matches\n"
"      records logged on a CPU in LIST, by one of the thread groups given\n"
"      (tgid, up to 512 times), by thread tid, with a record id from MIN to\n"
"      MAX inclusive (MIN alone: exactly MIN). What is not given matches\n"
"      any record.\n"
"  magnetctl filter del ID\n"
"      Remove rule ID.\n"
"  magnetctl filter list [PROBE]\n"
"  magnetctl filter show [PROBE]\n"
"      List the rules, or PROBE's: ID, PROBE (its id), ACTION, CPUS, TGID,\n"
"      TID, ID_MIN, ID_MAX.\n";

static const char help_stats[] =
"Statistics:\n"
"  magnetctl stats\n"
"      Per probe: ID, NAME, HITS (times it fired while enabled), LOGGED\n"
"      (records written), FILTERED (hits a rule rejected), SAMPLED (hits\n"
"      sampling skipped), LOST (records the buffer refused), MISSED (hits\n"
"      the kprobe machinery could not deliver). Per buffer and CPU, in\n"
"      records: BUFFER, CPU, PRODUCED (WRITTEN + DROPPED), WRITTEN, READ,\n"
"      LOST (DROPPED + OVERWRITTEN), DROPPED (ring full), OVERWRITTEN\n"
"      (evicted unread), DISCARDED (consumed but not delivered). Then the\n"
"      notifications sent and dropped, and the rate limit per second.\n";

static const char help_monitor[] =
"Notifications:\n"
"  magnetctl monitor [count N]\n"
"      Print one line per hit of the probes marked notify, until SIGINT or\n"
"      SIGTERM (exit status 0) or, with count, N notifications:\n"
"        SECONDS.NANOSECONDS cpu C tgid T tid T probe NAME(ID) id 0xID\n"
"            size BYTES flags 0xF payload HEX\n"
"      The time is CLOCK_MONOTONIC, size the whole record's (header and\n"
"      payload), HEX the first payload bytes (at most 64). With -j every\n"
"      line is one JSON object; -p is ignored.\n";

static const char help_values[] =
"Values:\n"
"  NAME      1 to 31 bytes, no '/' or white space\n"
"  N         a decimal number; MIN and MAX may also be 0x hex\n"
"  SIZE      bytes, with an optional suffix K, M or G (powers of 1024)\n"
"  DURATION  a number with an optional unit ns (the default), us, ms or s\n"
"  LIST      CPU numbers and ranges, e.g. 0-3,6\n"
"\n"
"Exit status: 0 on success, 1 if a request failed or the magnet module is\n"
"not loaded, 2 on a usage error.\n"
"\n"
"Examples:\n"
"  magnetctl buffer add net size 4M mode overwrite\n"
"  magnetctl probe add sw sched_switch buffer net\n"
"  magnetctl probe add open kprobe do_sys_openat2 args 3 id-arg 1\n"
"  magnetctl probe set sw sample-interval 10ms\n"
"  magnetctl filter add sw cpus 0-3,6 tgid 1234\n"
"  magnetctl -j -p stats\n"
"  magnetctl -j monitor count 10\n";

struct object {
	const char *name;
	const char *help;
};

static const struct object objects[] = {
	{ "buffer", help_buffer },
	{ "probe", help_probe },
	{ "filter", help_filter },
	{ "stats", help_stats },
	{ "monitor", help_monitor },
};

static void print_help(void)
{
	size_t i;

	fputs(help_intro, stdout);
	for (i = 0; i < ARRAY_SIZE(objects); i++)
		printf("\n%s", objects[i].help);
	printf("\n%s", help_values);
}

static void print_object_help(const struct object *obj)
{
	printf("%s\nSee 'magnetctl --help' for the options and values.\n",
	       obj->help);
}

/* --- command line --------------------------------------------------------- */

/* The command being run, e.g. "probe add", for messages. */
static char command[32];

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("magnetctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'magnetctl --help'.\n", stderr);
	exit(EXIT_USAGE);
}

struct args {
	int count;
	char **word;
};

static bool more(const struct args *a)
{
	return a->count > 0;
}

static const char *next_word(struct args *a)
{
	a->count--;
	return *a->word++;
}

/* Positional argument @what, which must be there. */
static const char *take_arg(struct args *a, const char *what)
{
	if (!more(a))
		usage_error("%s: missing %s", command, what);
	return next_word(a);
}

/* The value after keyword @key. */
static const char *take_value(struct args *a, const char *key)
{
	if (!more(a))
		usage_error("%s: missing value after \"%s\"", command, key);
	return next_word(a);
}

static void no_more_args(const struct args *a)
{
	if (more(a))
		usage_error("%s: unexpected argument \"%s\"", command,
			    a->word[0]);
}

static void __attribute__((noreturn)) unknown_keyword(const char *word)
{
	usage_error("%s: unknown keyword \"%s\"", command, word);
}

static bool request_has(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(attr) == type)
			return true;
	return false;
}

/* Refuse a keyword given twice rather than let one of the values win. */
static void refuse_repeat(const struct nlmsghdr *nlh, uint16_t type,
			  const char *key)
{
	if (request_has(nlh, type))
		usage_error("%s: \"%s\" given twice", command, key);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A decimal number from @min to @max; @what names it in messages. */
static uint64_t parse_uint(const char *s, uint64_t min, uint64_t max,
			   const char *what)
{
	uint64_t value;
	char *end;

	errno = 0;
	value = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || value < min ||
	    value > max)
		usage_error("%s: bad %s \"%s\": expected a number from %" PRIu64
			    " to %" PRIu64, command, what, s, min, max);
	return value;
}

/* A record id: decimal or 0x hex, as ids are often addresses. */
static uint64_t parse_record_id(const char *s, const char *all)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	const char *valid = hex ? "0123456789abcdefABCDEF" : "0123456789";
	uint64_t value;

	errno = 0;
	value = strtoull(digits, NULL, hex ? 16 : 10);
	if (!*digits || digits[strspn(digits, valid)] || errno)
		usage_error("%s: bad id range \"%s\": expected MIN or MIN-MAX, decimal or 0x hex",
			    command, all);
	return value;
}

static bool parse_on_off(const char *s, const char *key)
{
	if (!strcmp(s, "on"))
		return true;
	if (strcmp(s, "off"))
		usage_error("%s: bad value \"%s\" for \"%s\": expected on or off",
			    command, s, key);
	return false;
}

/* Bytes per CPU: a power of two, with an optional K, M or G suffix. */
static uint64_t parse_size(const char *s)
{
	unsigned int shift = 0;
	uint64_t value;
	char *end;

	errno = 0;
	value = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (!isdigit((unsigned char)*s) || *end || errno ||
	    value > UINT64_MAX >> shift)
		usage_error("%s: bad size \"%s\": expected bytes with an optional K, M or G suffix",
			    command, s);
	value <<= shift;
	if (value < MAGNET_BUFFER_SIZE_MIN || value > MAGNET_BUFFER_SIZE_MAX ||
	    (value & (value - 1)))
		usage_error("%s: bad size \"%s\": must be a power of two from 4K to 1G",
			    command, s);
	return value;
}

/* Nanoseconds, from a number with an optional unit. */
static uint64_t parse_duration(const char *s)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};
	uint64_t value;
	char *end;
	size_t i;

	errno = 0;
	value = strtoull(s, &end, 10);
	if (isdigit((unsigned char)*s) && !errno)
		for (i = 0; i < ARRAY_SIZE(units); i++)
			if (!strcmp(end, units[i].unit) &&
			    value <= UINT64_MAX / units[i].ns)
				return value * units[i].ns;
	usage_error("%s: bad duration \"%s\": expected a number with an optional unit ns, us, ms or s",
		    command, s);
}

/* "0-3,6" into a bitmap (bit N in byte N / 8); returns its length. */
static size_t parse_cpu_list(const char *s, uint8_t *map)
{
	unsigned long first, last, cpu;
	const char *p = s;
	size_t len = 0;
	char *end;

	memset(map, 0, CPUS_MAX / 8);
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
			map[cpu / 8] |= 1U << (cpu % 8);
		if (last / 8 + 1 > len)
			len = last / 8 + 1;
		if (!*end)
			return len;
		if (*end != ',')
			break;
		p = end + 1;
	}
	usage_error("%s: bad CPU list \"%s\": expected CPUs and ascending ranges below %d, e.g. 0-3,6",
		    command, s, CPUS_MAX);
}

static void check_name(const char *name, const char *what)
{
	size_t len = strlen(name), i;
	bool bad = len == 0 || len >= MAGNET_NAME_LEN;

	for (i = 0; i < len && !bad; i++)
		bad = name[i] == '/' || isspace((unsigned char)name[i]);
	if (bad)
		usage_error("%s: bad %s \"%s\": 1 to %d bytes, no '/' or white space",
			    command, what, name, MAGNET_NAME_LEN - 1);
}

/* A PROBE argument: its id if all digits (0 for a name, checked). */
static uint16_t check_probe_ref(const char *ref)
{
	if (all_digits(ref))
		return parse_uint(ref, 1, MAGNET_EVENT_ID_MAX, "probe id");
	check_name(ref, "probe name");
	return 0;
}

static void put_probe_ref(struct nlmsghdr *nlh, const char *ref)
{
	uint16_t id = check_probe_ref(ref);

	if (id)
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	else
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, ref);
}

/* --- values in replies ---------------------------------------------------- */

static const char *const buffer_modes[] = {
	[MAGNET_BUFFER_DROP]		= "drop",
	[MAGNET_BUFFER_OVERWRITE]	= "overwrite",
};

static const char *const probe_kinds[] = {
	[MAGNET_PROBE_KPROBE]		= "kprobe",
	[MAGNET_PROBE_KRETPROBE]	= "kretprobe",
	[MAGNET_PROBE_TRACEPOINT]	= "tracepoint",
	[MAGNET_PROBE_EXTERNAL]		= "external",
};

static const char *const filter_actions[] = {
	[MAGNET_FILTER_INCLUDE]		= "include",
	[MAGNET_FILTER_EXCLUDE]		= "exclude",
};

static const char *const probe_stat_names[MAGNET_STAT_MAX + 1] = {
	[MAGNET_STAT_HITS]		= "hits",
	[MAGNET_STAT_LOGGED]		= "logged",
	[MAGNET_STAT_FILTERED]		= "filtered",
	[MAGNET_STAT_SAMPLED]		= "sampled",
	[MAGNET_STAT_LOST]		= "lost",
};

static const char *const cpu_stat_names[MAGNET_CPU_MAX + 1] = {
	[MAGNET_CPU_PRODUCED]		= "produced",
	[MAGNET_CPU_WRITTEN]		= "written",
	[MAGNET_CPU_READ]		= "read",
	[MAGNET_CPU_LOST]		= "lost",
	[MAGNET_CPU_DROPPED]		= "dropped",
	[MAGNET_CPU_OVERWRITTEN]	= "overwritten",
	[MAGNET_CPU_DISCARDED]		= "discarded",
};

static int word_index(const char *const *words, size_t count, const char *s)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (words[i] && !strcmp(words[i], s))
			return i;
	return -1;
}

/* An unsigned attribute of any width (validated already); 0 if absent. */
static uint64_t attr_uint(const struct nlattr *attr)
{
	if (!attr)
		return 0;
	switch (mnl_attr_get_payload_len(attr)) {
	case 1:
		return mnl_attr_get_u8(attr);
	case 2:
		return mnl_attr_get_u16(attr);
	case 4:
		return mnl_attr_get_u32(attr);
	default:
		return mnl_attr_get_u64(attr);
	}
}

static const char *attr_str(const struct nlattr *attr)
{
	return attr ? mnl_attr_get_str(attr) : NULL;
}

/* The name of an enum value, or its number if it is newer than us. */
static const char *value_name(const char *const *names, size_t count,
			      const struct nlattr *attr, char buf[24])
{
	uint64_t value = attr_uint(attr);

	if (!attr)
		return NULL;
	if (value < count && names[value])
		return names[value];
	snprintf(buf, 24, "%" PRIu64, value);
	return buf;
}

#define VALUE_NAME(names, attr, buf) \
	value_name(names, ARRAY_SIZE(names), attr, buf)

static void out_of_memory(void)
{
	fputs("magnetctl: out of memory\n", stderr);
	exit(1);
}

/* "4K", "1M", "1G" when exact, else bytes. */
static void format_size(uint64_t bytes, char buf[32])
{
	static const char suffix[] = "GMK";
	int i;

	for (i = 0; i < 3; i++) {
		unsigned int shift = 30 - 10 * i;

		if (bytes && !(bytes & ((1ULL << shift) - 1))) {
			snprintf(buf, 32, "%" PRIu64 "%c", bytes >> shift,
				 suffix[i]);
			return;
		}
	}
	snprintf(buf, 32, "%" PRIu64, bytes);
}

static bool cpu_in_map(const uint8_t *map, size_t cpu)
{
	return map[cpu / 8] & (1U << (cpu % 8));
}

/* A CPU bitmap as "0-3,6"; the caller frees the string. */
static char *format_cpu_list(const uint8_t *map, size_t len)
{
	size_t cpu, first, bits = len * 8;
	bool comma = false;
	char *list = NULL;
	size_t size;
	FILE *f = open_memstream(&list, &size);

	if (!f)
		out_of_memory();
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
	if (fclose(f))
		out_of_memory();
	return list;
}

/* --- buffer --------------------------------------------------------------- */

static int buffer_add(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_BUFFER_NEW, 0);
	const char *name = take_arg(a, "NAME"), *key, *value;
	int mode;

	check_name(name, "buffer name");
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	while (more(a)) {
		key = next_word(a);
		if (!strcmp(key, "size")) {
			refuse_repeat(nlh, MAGNET_A_BUFFER_SIZE, key);
			mnl_attr_put_u64(nlh, MAGNET_A_BUFFER_SIZE,
					 parse_size(take_value(a, key)));
		} else if (!strcmp(key, "mode")) {
			refuse_repeat(nlh, MAGNET_A_BUFFER_MODE, key);
			value = take_value(a, key);
			mode = word_index(buffer_modes,
					  ARRAY_SIZE(buffer_modes), value);
			if (mode < 0)
				usage_error("%s: bad mode \"%s\": expected drop or overwrite",
					    command, value);
			mnl_attr_put_u8(nlh, MAGNET_A_BUFFER_MODE, mode);
		} else {
			unknown_keyword(key);
		}
	}
	if (!request_has(nlh, MAGNET_A_BUFFER_SIZE))
		usage_error("%s: missing \"size SIZE\"", command);
	return nl_request(&req, NULL, NULL);
}

static int buffer_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_BUFFER_DEL, 0);
	const char *name = take_arg(a, "NAME");

	check_name(name, "buffer name");
	no_more_args(a);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	return nl_request(&req, NULL, NULL);
}

static int buffer_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	char mode[24], size[32];
	uint64_t bytes;

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	bytes = attr_uint(tb[MAGNET_A_BUFFER_SIZE]);
	format_size(bytes, size);
	print_row_begin();
	print_string(PRINT_ANY, "name", NULL,
		     attr_str(tb[MAGNET_A_BUFFER_NAME]));
	print_u64(PRINT_JSON, "size", NULL, bytes);
	print_string(PRINT_TEXT, "size", NULL, size);
	print_string(PRINT_ANY, "mode", NULL,
		     VALUE_NAME(buffer_modes, tb[MAGNET_A_BUFFER_MODE], mode));
	print_u64(PRINT_ANY, "cpus", NULL, attr_uint(tb[MAGNET_A_BUFFER_CPUS]));
	print_u64(PRINT_ANY, "max_record", NULL,
		  attr_uint(tb[MAGNET_A_BUFFER_MAX_RECORD]));
	print_string(PRINT_ANY, "reader", NULL,
		     tb[MAGNET_A_BUFFER_READER] ? "busy" : "free");
	print_u64(PRINT_ANY, "probes", NULL,
		  attr_uint(tb[MAGNET_A_BUFFER_PROBES]));
	print_row_end();
	return MNL_CB_OK;
}

struct lister {
	mnl_cb_t row_cb;
	bool started;
};

static void list_start(struct lister *l)
{
	if (l->started)
		return;
	print_open_array(NULL);
	table_begin();
	l->started = true;
}

static int list_row_cb(const struct nlmsghdr *nlh, void *data)
{
	struct lister *l = data;

	list_start(l);
	return l->row_cb(nlh, NULL);
}

/*
 * Print @req's replies with @row_cb as a table (text) or an array (JSON).
 * The output starts with the first reply, so that a request refused at
 * once prints nothing but the error.
 */
static int list(struct request *req, mnl_cb_t row_cb)
{
	struct lister l = { .row_cb = row_cb };
	int ret = nl_request(req, list_row_cb, &l);

	if (!ret)
		list_start(&l);
	if (l.started) {
		table_end();
		print_close_array();
	}
	return ret;
}

static int buffer_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!more(a)) {
		request_start(&req, MAGNET_CMD_BUFFER_GET, NLM_F_DUMP);
	} else {
		nlh = request_start(&req, MAGNET_CMD_BUFFER_GET, 0);
		check_name(a->word[0], "buffer name");
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, next_word(a));
		no_more_args(a);
	}
	return list(&req, buffer_row_cb);
}

/* --- probe ---------------------------------------------------------------- */

/* The generic kinds one can add, by keyword; -1 for a predefined probe. */
static int generic_kind(const char *word)
{
	return word_index(probe_kinds, MAGNET_PROBE_TRACEPOINT + 1, word);
}

static void put_probe_option(struct nlmsghdr *nlh, struct args *a,
			     const char *key, int kind)
{
	const char *value;

	if (!strcmp(key, "buffer")) {
		refuse_repeat(nlh, MAGNET_A_BUFFER_NAME, key);
		value = take_value(a, key);
		check_name(value, "buffer name");
		mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, value);
	} else if (!strcmp(key, "snaplen")) {
		refuse_repeat(nlh, MAGNET_A_PROBE_SNAPLEN, key);
		mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN,
				 parse_uint(take_value(a, key), 0,
					    MAGNET_RECORD_MAX, "snaplen"));
	} else if (!strcmp(key, "notify")) {
		refuse_repeat(nlh, MAGNET_A_PROBE_NOTIFY, key);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_NOTIFY, 1);
	} else if (!strcmp(key, "disabled")) {
		refuse_repeat(nlh, MAGNET_A_PROBE_ENABLED, key);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, 0);
	} else if (!strcmp(key, "args") || !strcmp(key, "id-arg")) {
		bool args = !strcmp(key, "args");
		int max = kind == MAGNET_PROBE_TRACEPOINT ?
			  MAGNET_TRACEPOINT_ARGS_MAX : MAGNET_PROBE_ARGS_MAX;
		uint16_t type = args ? MAGNET_A_PROBE_ARGS :
				       MAGNET_A_PROBE_ID_ARG;

		if (kind < 0)
			usage_error("%s: \"%s\" is for kprobe, kretprobe and tracepoint probes only",
				    command, key);
		refuse_repeat(nlh, type, key);
		mnl_attr_put_u8(nlh, type, parse_uint(take_value(a, key), 0,
						      max, key));
	} else {
		unknown_keyword(key);
	}
}

/* id-arg names one of the arguments recorded. */
static void check_id_arg(const struct nlmsghdr *nlh)
{
	uint64_t args = 0, id_arg = 0;
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) == MAGNET_A_PROBE_ARGS)
			args = mnl_attr_get_u8(attr);
		if (mnl_attr_get_type(attr) == MAGNET_A_PROBE_ID_ARG)
			id_arg = mnl_attr_get_u8(attr);
	}
	if (id_arg > args)
		usage_error("%s: id-arg %" PRIu64 " is not among the %" PRIu64
			    " argument(s) recorded (args)", command, id_arg,
			    args);
}

struct new_probe {
	const char *name;
	uint64_t id;
	bool have_id;
};

static int probe_new_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct new_probe *p = data;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_ID]) {
		p->id = attr_uint(tb[MAGNET_A_PROBE_ID]);
		p->have_id = true;
	}
	return MNL_CB_OK;
}

static int probe_add(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_PROBE_NEW, 0);
	struct new_probe probe = { .name = take_arg(a, "NAME") };
	const char *what, *target;
	int kind;

	check_name(probe.name, "probe name");
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, probe.name);
	what = take_arg(a, "PREDEF, kprobe, kretprobe or tracepoint");
	kind = generic_kind(what);
	if (kind < 0) {
		check_name(what, "predefined probe");
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_PREDEF, what);
	} else {
		target = take_arg(a, "TARGET");
		if (!*target || strlen(target) >= MAGNET_TARGET_LEN)
			usage_error("%s: bad target \"%s\": 1 to %d bytes",
				    command, target, MAGNET_TARGET_LEN - 1);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_KIND, kind);
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_TARGET, target);
	}
	while (more(a))
		put_probe_option(nlh, a, next_word(a), kind);
	check_id_arg(nlh);
	if (nl_request(&req, probe_new_cb, &probe))
		return -1;
	print_open_object(NULL);
	print_string(PRINT_ANY, "name", "added probe %s", probe.name);
	if (probe.have_id)
		print_u64(PRINT_ANY, "id", " id %" PRIu64, probe.id);
	print_string(PRINT_TEXT, NULL, "%s", "\n");
	print_close_object();
	return 0;
}

/* probe del/enable/disable PROBE */
static int probe_simple(struct args *a, uint8_t cmd, int enable)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, cmd, 0);

	put_probe_ref(nlh, take_arg(a, "PROBE"));
	no_more_args(a);
	if (enable >= 0)
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, enable);
	return nl_request(&req, NULL, NULL);
}

static int probe_del(struct args *a)
{
	return probe_simple(a, MAGNET_CMD_PROBE_DEL, -1);
}

static int probe_enable(struct args *a)
{
	return probe_simple(a, MAGNET_CMD_PROBE_SET, 1);
}

static int probe_disable(struct args *a)
{
	return probe_simple(a, MAGNET_CMD_PROBE_SET, 0);
}

static int probe_set(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_PROBE_SET, 0);
	const char *key;

	put_probe_ref(nlh, take_arg(a, "PROBE"));
	if (!more(a))
		usage_error("%s: nothing to set (notify, snaplen, sample-every or sample-interval)",
			    command);
	while (more(a)) {
		key = next_word(a);
		if (!strcmp(key, "notify")) {
			refuse_repeat(nlh, MAGNET_A_PROBE_NOTIFY, key);
			mnl_attr_put_u8(nlh, MAGNET_A_PROBE_NOTIFY,
					parse_on_off(take_value(a, key), key));
		} else if (!strcmp(key, "snaplen")) {
			refuse_repeat(nlh, MAGNET_A_PROBE_SNAPLEN, key);
			mnl_attr_put_u32(nlh, MAGNET_A_PROBE_SNAPLEN,
					 parse_uint(take_value(a, key), 0,
						    MAGNET_RECORD_MAX, key));
		} else if (!strcmp(key, "sample-every")) {
			refuse_repeat(nlh, MAGNET_A_SAMPLE_EVERY, key);
			mnl_attr_put_u32(nlh, MAGNET_A_SAMPLE_EVERY,
					 parse_uint(take_value(a, key), 0,
						    UINT32_MAX, key));
		} else if (!strcmp(key, "sample-interval")) {
			refuse_repeat(nlh, MAGNET_A_SAMPLE_INTERVAL, key);
			mnl_attr_put_u64(nlh, MAGNET_A_SAMPLE_INTERVAL,
					 parse_duration(take_value(a, key)));
		} else {
			unknown_keyword(key);
		}
	}
	return nl_request(&req, NULL, NULL);
}

/* TARGET column: predef:NAME for a predefined probe. */
static const char *text_target(const struct nlattr **tb, char *buf,
			       size_t size)
{
	if (!tb[MAGNET_A_PROBE_PREDEF])
		return attr_str(tb[MAGNET_A_PROBE_TARGET]);
	snprintf(buf, size, "predef:%s", attr_str(tb[MAGNET_A_PROBE_PREDEF]));
	return buf;
}

/* Text has room for hits, logged and lost only. */
static void print_probe_stats(const struct nlattr **st)
{
	bool json_only;
	int i;

	for (i = MAGNET_STAT_HITS; i <= MAGNET_STAT_MAX; i++) {
		json_only = i == MAGNET_STAT_FILTERED ||
			    i == MAGNET_STAT_SAMPLED;
		print_u64(json_only ? PRINT_JSON : PRINT_ANY,
			  probe_stat_names[i], NULL, attr_uint(st[i]));
	}
}

static int probe_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct nlattr *st[MAGNET_STAT_MAX + 1] = { NULL };
	char kind[24], target[MAGNET_NAME_LEN + 16];

	(void)data;
	if (parse_magnet_attrs(nlh, tb) || (tb[MAGNET_A_PROBE_STATS] &&
	    parse_stat_attrs(tb[MAGNET_A_PROBE_STATS], st)))
		return MNL_CB_ERROR;
	print_row_begin();
	print_u64(PRINT_ANY, "id", NULL, attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_ANY, "name", NULL,
		     attr_str(tb[MAGNET_A_PROBE_NAME]));
	print_string(PRINT_ANY, "kind", NULL,
		     VALUE_NAME(probe_kinds, tb[MAGNET_A_PROBE_KIND], kind));
	print_string(PRINT_JSON, "target", NULL,
		     attr_str(tb[MAGNET_A_PROBE_TARGET]));
	print_string(PRINT_JSON, "predef", NULL,
		     attr_str(tb[MAGNET_A_PROBE_PREDEF]));
	print_string(PRINT_TEXT, "target", NULL,
		     text_target(tb, target, sizeof(target)));
	print_string(PRINT_ANY, "owner", NULL,
		     attr_str(tb[MAGNET_A_PROBE_OWNER]));
	print_string(PRINT_ANY, "buffer", NULL,
		     attr_str(tb[MAGNET_A_BUFFER_NAME]));
	print_u64(PRINT_ANY, "args", NULL, attr_uint(tb[MAGNET_A_PROBE_ARGS]));
	print_u64(PRINT_JSON, "id_arg", NULL,
		  attr_uint(tb[MAGNET_A_PROBE_ID_ARG]));
	print_u64(PRINT_ANY, "snaplen", NULL,
		  attr_uint(tb[MAGNET_A_PROBE_SNAPLEN]));
	print_bool(PRINT_ANY, "enabled", NULL,
		   attr_uint(tb[MAGNET_A_PROBE_ENABLED]));
	print_bool(PRINT_ANY, "notify", NULL,
		   attr_uint(tb[MAGNET_A_PROBE_NOTIFY]));
	print_probe_stats(st);
	print_u64(PRINT_JSON, "missed", NULL,
		  attr_uint(tb[MAGNET_A_PROBE_MISSED]));
	print_row_end();
	return MNL_CB_OK;
}

static int probe_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!more(a)) {
		request_start(&req, MAGNET_CMD_PROBE_GET, NLM_F_DUMP);
	} else {
		nlh = request_start(&req, MAGNET_CMD_PROBE_GET, 0);
		put_probe_ref(nlh, next_word(a));
		no_more_args(a);
	}
	return list(&req, probe_row_cb);
}

static int catalog_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	char kind[24];

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	print_row_begin();
	print_string(PRINT_ANY, "name", NULL,
		     attr_str(tb[MAGNET_A_PROBE_PREDEF]));
	print_string(PRINT_ANY, "kind", NULL,
		     VALUE_NAME(probe_kinds, tb[MAGNET_A_PROBE_KIND], kind));
	print_string(PRINT_ANY, "target", NULL,
		     attr_str(tb[MAGNET_A_PROBE_TARGET]));
	print_string(PRINT_ANY, "description", NULL,
		     attr_str(tb[MAGNET_A_PROBE_DESC]));
	print_row_end();
	return MNL_CB_OK;
}

static int probe_catalog(struct args *a)
{
	struct request req;

	no_more_args(a);
	request_start(&req, MAGNET_CMD_CATALOG_GET, NLM_F_DUMP);
	return list(&req, catalog_row_cb);
}

/* --- filter --------------------------------------------------------------- */

static int probe_id_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_ID])
		*(uint16_t *)data = mnl_attr_get_u16(tb[MAGNET_A_PROBE_ID]);
	return MNL_CB_OK;
}

/* Filters take a PROBE_ID: look a name up. Returns 0 after an error. */
static uint16_t resolve_probe_id(const char *ref)
{
	uint16_t id = check_probe_ref(ref);
	struct request req;
	struct nlmsghdr *nlh;

	if (id)
		return id;
	nlh = request_start(&req, MAGNET_CMD_PROBE_GET, 0);
	mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, ref);
	if (nl_request(&req, probe_id_cb, &id))
		return 0;
	if (!id)
		fprintf(stderr, "magnetctl: no id for probe \"%s\" in the kernel's reply\n",
			ref);
	return id;
}

static void put_id_range(struct nlmsghdr *nlh, const char *range)
{
	const char *dash = strchr(range, '-');
	size_t min_len = dash ? (size_t)(dash - range) : strlen(range);
	char *min = strndup(range, min_len);
	uint64_t first, last;

	if (!min)
		out_of_memory();
	first = parse_record_id(min, range);
	last = dash ? parse_record_id(dash + 1, range) : first;
	free(min);
	if (first > last)
		usage_error("%s: bad id range \"%s\": MIN is above MAX",
			    command, range);
	mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MIN, first);
	mnl_attr_put_u64(nlh, MAGNET_A_FILTER_ID_MAX, last);
}

static void put_filter_condition(struct nlmsghdr *nlh, struct args *a,
				 const char *key, unsigned int *tgids)
{
	static uint8_t cpus[CPUS_MAX / 8];
	int action = word_index(filter_actions, ARRAY_SIZE(filter_actions),
				key);

	if (action >= 0) {
		refuse_repeat(nlh, MAGNET_A_FILTER_ACTION, "include|exclude");
		mnl_attr_put_u8(nlh, MAGNET_A_FILTER_ACTION, action);
	} else if (!strcmp(key, "cpus")) {
		refuse_repeat(nlh, MAGNET_A_FILTER_CPUS, key);
		mnl_attr_put(nlh, MAGNET_A_FILTER_CPUS,
			     parse_cpu_list(take_value(a, key), cpus), cpus);
	} else if (!strcmp(key, "tgid")) {
		if (++*tgids > TGIDS_MAX)
			usage_error("%s: more than %d tgids", command,
				    TGIDS_MAX);
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TGID,
				 parse_uint(take_value(a, key), 0, UINT32_MAX,
					    key));
	} else if (!strcmp(key, "tid")) {
		refuse_repeat(nlh, MAGNET_A_FILTER_TID, key);
		mnl_attr_put_u32(nlh, MAGNET_A_FILTER_TID,
				 parse_uint(take_value(a, key), 0, UINT32_MAX,
					    key));
	} else if (!strcmp(key, "id")) {
		refuse_repeat(nlh, MAGNET_A_FILTER_ID_MIN, key);
		put_id_range(nlh, take_value(a, key));
	} else {
		unknown_keyword(key);
	}
}

static int filter_new_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_FILTER_ID])
		*(int64_t *)data = mnl_attr_get_u32(tb[MAGNET_A_FILTER_ID]);
	return MNL_CB_OK;
}

static int filter_add(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_FILTER_NEW, 0);
	const char *probe = take_arg(a, "PROBE");
	unsigned int tgids = 0;
	int64_t rule = -1;
	uint16_t id;

	check_probe_ref(probe);
	while (more(a))
		put_filter_condition(nlh, a, next_word(a), &tgids);
	if (!request_has(nlh, MAGNET_A_FILTER_ACTION))
		mnl_attr_put_u8(nlh, MAGNET_A_FILTER_ACTION,
				MAGNET_FILTER_INCLUDE);
	id = resolve_probe_id(probe);
	if (!id)
		return -1;
	mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	if (nl_request(&req, filter_new_cb, &rule))
		return -1;
	print_open_object(NULL);
	if (rule >= 0)
		print_u64(PRINT_ANY, "id", "added filter id %" PRIu64 "\n",
			  rule);
	else
		print_string(PRINT_TEXT, NULL, "%s", "added filter\n");
	print_close_object();
	return 0;
}

static int filter_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_FILTER_DEL, 0);

	mnl_attr_put_u32(nlh, MAGNET_A_FILTER_ID,
			 parse_uint(take_arg(a, "ID"), 0, UINT32_MAX,
				    "filter id"));
	no_more_args(a);
	return nl_request(&req, NULL, NULL);
}

static void print_filter_tgids(const struct nlmsghdr *nlh)
{
	const struct nlattr *attr;
	bool comma = false;
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		out_of_memory();
	print_open_array("tgid");
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) != MAGNET_A_FILTER_TGID)
			continue;
		print_u64(PRINT_JSON, NULL, NULL, mnl_attr_get_u32(attr));
		fprintf(f, "%s%u", comma ? "," : "", mnl_attr_get_u32(attr));
		comma = true;
	}
	print_close_array();
	if (fclose(f))
		out_of_memory();
	print_string(PRINT_TEXT, "tgid", NULL, *text ? text : NULL);
	free(text);
}

static void print_optional_u64(const char *key, const char *fmt,
			       const struct nlattr *attr)
{
	if (attr)
		print_u64(PRINT_ANY, key, fmt, attr_uint(attr));
	else
		print_string(PRINT_ANY, key, NULL, NULL);
}

static int filter_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct nlattr *cpus;
	char action[24], *list = NULL;

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	cpus = tb[MAGNET_A_FILTER_CPUS];
	if (cpus)
		list = format_cpu_list(mnl_attr_get_payload(cpus),
				       mnl_attr_get_payload_len(cpus));
	print_row_begin();
	print_u64(PRINT_ANY, "id", NULL, attr_uint(tb[MAGNET_A_FILTER_ID]));
	print_u64(PRINT_ANY, "probe", NULL, attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_JSON, "probe_name", NULL,
		     attr_str(tb[MAGNET_A_PROBE_NAME]));
	print_string(PRINT_ANY, "action", NULL,
		     VALUE_NAME(filter_actions, tb[MAGNET_A_FILTER_ACTION],
				action));
	print_string(PRINT_ANY, "cpus", NULL, list && *list ? list : NULL);
	print_filter_tgids(nlh);
	print_optional_u64("tid", NULL, tb[MAGNET_A_FILTER_TID]);
	print_optional_u64("id_min", "0x%" PRIx64, tb[MAGNET_A_FILTER_ID_MIN]);
	print_optional_u64("id_max", "0x%" PRIx64, tb[MAGNET_A_FILTER_ID_MAX]);
	print_row_end();
	free(list);
	return MNL_CB_OK;
}

static int filter_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(&req, MAGNET_CMD_FILTER_GET,
					     NLM_F_DUMP);
	const char *probe = NULL;
	uint16_t id;

	if (more(a)) {
		probe = next_word(a);
		check_probe_ref(probe);
	}
	no_more_args(a);
	if (probe) {
		id = resolve_probe_id(probe);
		if (!id)
			return -1;
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	}
	return list(&req, filter_row_cb);
}

/* --- stats ---------------------------------------------------------------- */

/*
 * The dump's messages are collected first, so that the output has one
 * section each for probes, buffers and notifications whatever their order.
 */
struct probe_stats {
	uint64_t id;
	char name[MAGNET_NAME_LEN];
	uint64_t value[MAGNET_STAT_MAX + 1];	/* by MAGNET_STAT_* */
	uint64_t missed;
};

struct buffer_stats {
	char name[MAGNET_NAME_LEN];
	uint64_t (*cpu)[MAGNET_CPU_MAX + 1];	/* by MAGNET_CPU_* */
	size_t cpus;
};

struct stats {
	struct probe_stats *probe;
	size_t probes;
	struct buffer_stats *buffer;
	size_t buffers;
	bool have_notify;
	uint64_t sent, dropped, rate;
};

/* Room for one more zeroed element at the end of @array. */
static void *append(void *array, size_t *count, size_t size)
{
	char *grown = realloc(array, (*count + 1) * size);

	if (!grown)
		out_of_memory();
	memset(grown + *count * size, 0, size);
	(*count)++;
	return grown;
}

static int stats_add_probe(struct stats *s, const struct nlattr **tb)
{
	const struct nlattr *st[MAGNET_STAT_MAX + 1] = { NULL };
	struct probe_stats *p;
	int i;

	if (tb[MAGNET_A_PROBE_STATS] &&
	    parse_stat_attrs(tb[MAGNET_A_PROBE_STATS], st))
		return MNL_CB_ERROR;
	s->probe = append(s->probe, &s->probes, sizeof(*s->probe));
	p = &s->probe[s->probes - 1];
	p->id = attr_uint(tb[MAGNET_A_PROBE_ID]);
	if (tb[MAGNET_A_PROBE_NAME])
		snprintf(p->name, sizeof(p->name), "%s",
			 attr_str(tb[MAGNET_A_PROBE_NAME]));
	for (i = MAGNET_STAT_HITS; i <= MAGNET_STAT_MAX; i++)
		p->value[i] = attr_uint(st[i]);
	p->missed = attr_uint(tb[MAGNET_A_PROBE_MISSED]);
	return MNL_CB_OK;
}

static int stats_add_buffer(struct stats *s, const struct nlmsghdr *nlh,
			    const struct nlattr **tb)
{
	const struct nlattr *ct[MAGNET_CPU_MAX + 1];
	const struct nlattr *attr;
	struct buffer_stats *b;
	int i;

	s->buffer = append(s->buffer, &s->buffers, sizeof(*s->buffer));
	b = &s->buffer[s->buffers - 1];
	snprintf(b->name, sizeof(b->name), "%s",
		 attr_str(tb[MAGNET_A_BUFFER_NAME]));
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) != MAGNET_A_BUFFER_CPU)
			continue;
		if (parse_cpu_attrs(attr, ct))
			return MNL_CB_ERROR;
		b->cpu = append(b->cpu, &b->cpus, sizeof(*b->cpu));
		for (i = MAGNET_CPU_ID; i <= MAGNET_CPU_MAX; i++)
			b->cpu[b->cpus - 1][i] = attr_uint(ct[i]);
	}
	return MNL_CB_OK;
}

static int stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct stats *s = data;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (tb[MAGNET_A_PROBE_ID] || tb[MAGNET_A_PROBE_STATS])
		return stats_add_probe(s, tb);
	if (tb[MAGNET_A_BUFFER_NAME])
		return stats_add_buffer(s, nlh, tb);
	if (tb[MAGNET_A_NOTIFY_SENT] || tb[MAGNET_A_NOTIFY_DROPPED] ||
	    tb[MAGNET_A_NOTIFY_RATE]) {
		s->have_notify = true;
		s->sent = attr_uint(tb[MAGNET_A_NOTIFY_SENT]);
		s->dropped = attr_uint(tb[MAGNET_A_NOTIFY_DROPPED]);
		s->rate = attr_uint(tb[MAGNET_A_NOTIFY_RATE]);
	}
	return MNL_CB_OK;
}

static void print_stats_probes(const struct stats *s)
{
	const struct probe_stats *p;
	int i;

	print_open_array("probes");
	table_begin();
	for (p = s->probe; p < s->probe + s->probes; p++) {
		print_row_begin();
		print_u64(PRINT_ANY, "id", NULL, p->id);
		print_string(PRINT_ANY, "name", NULL, p->name);
		for (i = MAGNET_STAT_HITS; i <= MAGNET_STAT_MAX; i++)
			print_u64(PRINT_ANY, probe_stat_names[i], NULL,
				  p->value[i]);
		print_u64(PRINT_ANY, "missed", NULL, p->missed);
		print_row_end();
	}
	table_end();
	print_close_array();
}

static void print_stats_buffers(const struct stats *s)
{
	const struct buffer_stats *b;
	size_t cpu;
	int i;

	print_open_array("buffers");
	table_begin();
	for (b = s->buffer; b < s->buffer + s->buffers; b++) {
		print_open_object(NULL);
		print_string(PRINT_JSON, "name", NULL, b->name);
		print_open_array("cpus");
		for (cpu = 0; cpu < b->cpus; cpu++) {
			print_row_begin();
			print_string(PRINT_TEXT, "buffer", NULL, b->name);
			print_u64(PRINT_ANY, "cpu", NULL,
				  b->cpu[cpu][MAGNET_CPU_ID]);
			for (i = MAGNET_CPU_PRODUCED; i <= MAGNET_CPU_MAX; i++)
				print_u64(PRINT_ANY, cpu_stat_names[i], NULL,
					  b->cpu[cpu][i]);
			print_row_end();
		}
		print_close_array();
		print_close_object();
	}
	table_end();
	print_close_array();
}

static void print_stats(const struct stats *s)
{
	bool text = !print_is_json();

	print_open_object(NULL);
	print_stats_probes(s);
	if (text && s->probes && (s->buffers || s->have_notify))
		putchar('\n');
	print_stats_buffers(s);
	if (text && s->buffers && s->have_notify)
		putchar('\n');
	if (s->have_notify) {
		print_open_object("notify");
		print_u64(PRINT_ANY, "sent", "notify: sent %" PRIu64, s->sent);
		print_u64(PRINT_ANY, "dropped", " dropped %" PRIu64,
			  s->dropped);
		print_u64(PRINT_ANY, "rate", " rate %" PRIu64 "/s\n", s->rate);
		print_close_object();
	}
	print_close_object();
}

static void free_stats(struct stats *s)
{
	size_t i;

	for (i = 0; i < s->buffers; i++)
		free(s->buffer[i].cpu);
	free(s->buffer);
	free(s->probe);
}

static int stats_show(struct args *a)
{
	struct stats stats = { 0 };
	struct request req;
	int ret;

	no_more_args(a);
	request_start(&req, MAGNET_CMD_STATS_GET, NLM_F_DUMP);
	ret = nl_request(&req, stats_cb, &stats);
	if (!ret)
		print_stats(&stats);
	free_stats(&stats);
	return ret;
}

/* --- monitor -------------------------------------------------------------- */

struct monitor {
	uint64_t left;		/* notifications to print; 0: no limit */
};

static void hex_string(const uint8_t *data, size_t len, char *hex)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", data[i]);
	hex[2 * len] = '\0';
}

static int notify_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	char hex[2 * MAGNET_NOTIFY_PREFIX_MAX + 1], time[48];
	struct monitor *m = data;
	struct magnet_record r;
	const uint8_t *record;
	size_t prefix;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (!tb[MAGNET_A_NOTIFY_RECORD] ||
	    mnl_attr_get_payload_len(tb[MAGNET_A_NOTIFY_RECORD]) < sizeof(r)) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	record = mnl_attr_get_payload(tb[MAGNET_A_NOTIFY_RECORD]);
	memcpy(&r, record, sizeof(r));
	prefix = mnl_attr_get_payload_len(tb[MAGNET_A_NOTIFY_RECORD]) -
		 sizeof(r);
	if (prefix > MAGNET_NOTIFY_PREFIX_MAX)
		prefix = MAGNET_NOTIFY_PREFIX_MAX;
	hex_string(record + sizeof(r), prefix, hex);
	snprintf(time, sizeof(time), "%" PRIu64 ".%09" PRIu64,
		 (uint64_t)r.timestamp / 1000000000,
		 (uint64_t)r.timestamp % 1000000000);

	print_open_object(NULL);
	print_u64(PRINT_JSON, "timestamp", NULL, r.timestamp);
	print_string(PRINT_TEXT, "timestamp", "%s", time);
	print_u64(PRINT_ANY, "cpu", " cpu %" PRIu64, r.cpu);
	print_u64(PRINT_ANY, "tgid", " tgid %" PRIu64, r.tgid);
	print_u64(PRINT_ANY, "tid", " tid %" PRIu64, r.tid);
	print_u64(PRINT_JSON, "event", NULL, r.event);
	print_string(PRINT_ANY, "probe", " probe %s",
		     attr_str(tb[MAGNET_A_PROBE_NAME]));
	print_u64(PRINT_TEXT, "event", "(%" PRIu64 ")", tb[MAGNET_A_PROBE_ID] ?
		  attr_uint(tb[MAGNET_A_PROBE_ID]) : r.event);
	print_u64(PRINT_ANY, "id", " id 0x%" PRIx64, r.id);
	print_u64(PRINT_ANY, "size", " size %" PRIu64, r.size);
	print_u64(PRINT_ANY, "flags", " flags 0x%" PRIx64, r.flags);
	print_string(PRINT_JSON, "payload", NULL, hex);
	print_string(PRINT_TEXT, "payload", " payload %s\n",
		     prefix ? hex : "-");
	print_close_object();
	fflush(stdout);
	if (m->left && !--m->left)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static int monitor(struct args *a)
{
	struct monitor m = { 0 };
	const char *key;

	while (more(a)) {
		key = next_word(a);
		if (strcmp(key, "count"))
			unknown_keyword(key);
		if (m.left)
			usage_error("%s: \"count\" given twice", command);
		m.left = parse_uint(take_value(a, key), 1, UINT64_MAX, key);
	}
	/* one object per line, whatever -p says */
	print_init(print_is_json(), false);
	return nl_listen(notify_cb, &m);
}

/* --- main ----------------------------------------------------------------- */

struct command {
	const char *object;
	const char *name;	/* NULL: the object is the command */
	int (*run)(struct args *a);
};

static const struct command commands[] = {
	{ "buffer", "add", buffer_add },
	{ "buffer", "del", buffer_del },
	{ "buffer", "list", buffer_list },
	{ "buffer", "show", buffer_list },
	{ "probe", "add", probe_add },
	{ "probe", "del", probe_del },
	{ "probe", "enable", probe_enable },
	{ "probe", "disable", probe_disable },
	{ "probe", "set", probe_set },
	{ "probe", "list", probe_list },
	{ "probe", "show", probe_list },
	{ "probe", "catalog", probe_catalog },
	{ "filter", "add", filter_add },
	{ "filter", "del", filter_del },
	{ "filter", "list", filter_list },
	{ "filter", "show", filter_list },
	{ "stats", NULL, stats_show },
	{ "monitor", NULL, monitor },
};

static const struct command *find_command(const char *object,
					  const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].object, object) &&
		    (!commands[i].name || !strcmp(commands[i].name, name)))
			return &commands[i];
	return NULL;
}

static int run(struct args *a)
{
	const struct object *obj = NULL;
	const struct command *cmd;
	const char *name;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(objects); i++)
		if (!strcmp(objects[i].name, a->word[0]))
			obj = &objects[i];
	if (!obj)
		usage_error("unknown object \"%s\" (expected buffer, probe, filter, stats or monitor)",
			    a->word[0]);
	next_word(a);
	if (more(a) && !strcmp(a->word[0], "help")) {
		print_object_help(obj);
		return 0;
	}
	/* objects with commands list without one */
	name = more(a) ? a->word[0] : "list";
	cmd = find_command(obj->name, name);
	if (!cmd)
		usage_error("unknown %s command \"%s\"", obj->name, name);
	if (cmd->name) {
		if (more(a))
			next_word(a);
		snprintf(command, sizeof(command), "%s %s", obj->name,
			 cmd->name);
	} else {
		snprintf(command, sizeof(command), "%s", obj->name);
	}
	return cmd->run(a);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	bool json = false, pretty = false;
	struct args a;
	int opt, ret;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+jphV", options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'p':
			pretty = true;
			break;
		case 'h':
			print_help();
			return 0;
		case 'V':
			puts("magnetctl " MAGNETCTL_VERSION);
			return 0;
		default:
			if (optopt)
				usage_error("unknown option '-%c'", optopt);
			usage_error("unknown option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("missing OBJECT (buffer, probe, filter, stats or monitor)");
	if (!strcmp(argv[optind], "help")) {
		print_help();
		return 0;
	}
	print_init(json, pretty);
	a = (struct args){ argc - optind, argv + optind };
	ret = run(&a);
	nl_close();
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "magnetctl: writing the output: %s\n",
			strerror(errno));
		return 1;
	}
	return ret ? 1 : 0;
}

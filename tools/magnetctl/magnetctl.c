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
#include <poll.h>
#include <signal.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "daemon.h"
#include "filter.h"
#include "nl.h"
#include "print.h"
#include "probeset.h"
#include "words.h"

#define MAGNETCTL_VERSION	"0.1.0"
#define EXIT_USAGE		2
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

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
"OBJECT is buffer, probe, filter, stats, monitor or daemon. Without a\n"
"COMMAND, buffer, probe and filter list their objects. PROBE is a probe's\n"
"name, or its id when it is all digits. Lists print a header line and aligned\n"
"columns (filter list: one line per rule); with -j they print the same\n"
"fields, and a few more, as a JSON array of objects whose keys are the\n"
"headers in lower case.\n";

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
"        dispatch D  kprobes only, how the handler is called: auto (the\n"
"                    default) is ftrace at a function's entry (no offset)\n"
"                    where ftrace can hook it, else kprobe; kprobe is the\n"
"                    kernel's kprobe; ftrace is magnet's own ftrace_ops on\n"
"                    the function (cheaper per hit, the same records), an\n"
"                    error where it cannot be\n"
"  magnetctl probe del PROBE\n"
"      Remove a probe. Events other modules registered cannot be removed.\n"
"  magnetctl probe enable PROBE\n"
"  magnetctl probe disable PROBE\n"
"  magnetctl probe set PROBE [notify on|off] [snaplen N]\n"
"                      [sample [every N] [interval DURATION]]\n"
"      Change a probe. Sampling thins out the hits that passed the filter\n"
"      rules: sample every N keeps one in N of each CPU's hits (its first,\n"
"      N+1th, ...; 0 or 1: all), sample interval keeps at most one per\n"
"      DURATION across CPUs (0: no limit; at most 1 hour). The hits left\n"
"      out count as sampled.\n"
"  magnetctl probe list\n"
"  magnetctl probe show [PROBE]\n"
"      List the probes, or one: ID, NAME, KIND, DISPATCH (a kprobe's: kprobe\n"
"      or ftrace, see dispatch), TARGET (predef:NAME for a\n"
"      predefined probe), OWNER (module that registered the event), BUFFER,\n"
"      ARGS, SNAPLEN, ENABLED, NOTIFY, HITS (times it fired while\n"
"      enabled), LOGGED (records written), LOST (records the buffer\n"
"      refused) and SAMPLE (sampling in force, e.g. every 10 interval 1ms).\n"
"  magnetctl probe catalog\n"
"      List the predefined probes: NAME, KIND, TARGET, USES, DESCRIPTION.\n"
"      A TARGET A|B means the first of A and B the running kernel has;\n"
"      USES is the one it has (each function is tried with a disabled\n"
"      kprobe), or \"not in this kernel\"; with CAP_NET_ADMIN or\n"
"      CAP_SYS_ADMIN only, without them the column is left out.\n"
"\n"
"Probe sets (packet probes along the network stack, one per layer):\n"
"  magnetctl probe add-set SET[,SET...] [buffer B] [snaplen N] [disabled]\n"
"      Add every layer of each SET (udp-send, tcp-send, udp-recv, tcp-recv;\n"
"      see probe sets) as a probe named SET.LAYER, and print one line per\n"
"      layer: NAME, ID and TARGET, the function the probe went on, or\n"
"      \"skipped: not in this kernel\" for a layer the running kernel has\n"
"      none of the functions of. If any other layer fails, the probes just\n"
"      added are removed again. snaplen N keeps at most N bytes of each\n"
"      packet after its struct magnet_packet (0, the default: the whole\n"
"      packet, as far as the buffer's largest record allows; at most\n"
"      65536). buffer and disabled as for probe add.\n"
"  magnetctl probe del-set SET[,SET...]\n"
"      Remove the probes named SET.LAYER of each SET, whoever added them,\n"
"      and print how many.\n"
"  magnetctl probe sets\n"
"      List the probe sets and their layers from the catalog: SET, LAYER,\n"
"      KIND, TARGET, USES (what the running kernel uses, as for probe\n"
"      catalog), DESCRIPTION.\n";

static const char help_filter[] =
"Filter rules (which hits of a probe are logged):\n"
"  magnetctl filter add PROBE [include|exclude] [cpu LIST] [tgid TGIDS]\n"
"                       [tid N] [id IDS | id MIN-MAX] [packet PACKET...]\n"
"                       [correlate CORRELATE...]\n"
"      Add a rule to PROBE and print its id. A rule matches a hit when all\n"
"      it gives match (AND): the CPU is in LIST, the process in TGIDS (tgid\n"
"      may be repeated, 256 in all), the thread is N, the record id is in\n"
"      IDS (up to 256) or from MIN to MAX, and the filter type agrees. A\n"
"      hit that matches an exclude rule is dropped; if PROBE has include\n"
"      rules (include is the default), a hit that matches none of them is\n"
"      dropped too (OR across rules). A rule needs one predicate at least.\n"
"      packet (needs module magnet_pktfilter; for probes netif_receive,\n"
"      net_start_xmit, skb_free and tcp_send) matches the IPv4 or IPv6\n"
"      packet; PACKET is any of:\n"
"        proto tcp|udp|icmp|icmp6|sctp|udplite|dccp|N   IP protocol\n"
"        src ADDR[/LEN]  dst ADDR[/LEN]  host ADDR[/LEN] (source or dest.)\n"
"        sport N  dport N  port N (source or destination port)\n"
"      correlate (needs module magnet_correlate) groups by record id the\n"
"      records of PROBE (the start), of the end probe and of via probes\n"
"      into journeys, and logs each journey that lasts at least the\n"
"      threshold as one journey record into PROBE's buffer. The records it\n"
"      takes count as filtered. Its rule is an exclude rule (the default\n"
"      here) without other predicates. CORRELATE is any of:\n"
"        end PROBE           the probe that closes a journey (required)\n"
"        via PROBE           a probe whose records join it (up to 8 times)\n"
"        threshold DURATION  log journeys this long or longer (default 0)\n"
"        window DURATION     a journey open this long expires (1ms to 1\n"
"                            hour, default 1s)\n"
"        max-open N          journeys open at once (default 4096)\n"
"  magnetctl filter del ID\n"
"      Remove rule ID.\n"
"  magnetctl filter list [PROBE]\n"
"  magnetctl filter show [PROBE]\n"
"      List the rules, or PROBE's, one line each: the rule's id, then its\n"
"      probe, action and predicates as filter add takes them, then the\n"
"      filter type's counters (correlate: taken, journeys closed, passed\n"
"      (logged), expired, unmatched, overflow, cut, lost).\n";

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

static const char help_daemon[] =
"magnetd, the daemon (over its Unix socket; \"socket PATH\" at the end\n"
"of any of these, or MAGNETD_SOCKET, names another than /run/magnetd.sock):\n"
"  magnetctl daemon snapshot\n"
"      Print every metric magnetd derives (NAME TYPE UNIT VALUE), then the\n"
"      busiest processes of each event (EVENT RANK TGID COUNT COMM). With\n"
"      -j: {\"time_ns\", \"metrics\": [...], \"top\": [...]}.\n"
"  magnetctl daemon watch event EVENT [tgid N] [cpu N] [id N] [count N]\n"
"  magnetctl daemon watch threshold METRIC OP VALUE [count N]\n"
"      Subscribe and print each pushed message on one line (-j: one JSON\n"
"      object per line) until SIGINT or SIGTERM, or N events or alerts:\n"
"        event SUB EVENT ts NS cpu C tgid T tid T id ID size BYTES\n"
"        alert SUB METRIC VALUE fired|cleared\n"
"        lost N       (messages magnetd dropped: this reader was too slow)\n"
"      OP is >, >=, < or <=; VALUE may end in ns, us, ms, s, k, M or G.\n"
"  magnetctl daemon release\n"
"      Ask magnetd to remove what it installed and close the module's\n"
"      files, so that the module can be unloaded; it installs its\n"
"      configuration again when the module is loaded again.\n"
"  magnetctl daemon attach\n"
"      Ask magnetd to install its configuration again now.\n";

static const char help_values[] =
"Values:\n"
"  NAME      1 to 31 bytes, no '/' or white space\n"
"  N         a decimal number\n"
"  SIZE      bytes, with an optional suffix K, M or G (powers of 1024)\n"
"  SET       a probe set's name, e.g. udp-send (see probe sets)\n"
"  DURATION  a number with an optional unit ns (the default), us, ms or s,\n"
"            e.g. 250us or 1.5ms\n"
"  LIST      CPU numbers and ranges, e.g. 0-3,6\n"
"  TGIDS     process ids separated by commas, e.g. 1234,5678\n"
"  IDS       record ids separated by commas; ids, MIN and MAX are decimal\n"
"            or 0x hex\n"
"  ADDR      an IPv4 or IPv6 address; with /LEN only its first LEN bits\n"
"            are compared\n"
"\n"
"Exit status: 0 on success, 1 if a request failed or the magnet module is\n"
"not loaded, 2 on a usage error.\n"
"\n"
"Examples:\n"
"  magnetctl buffer add net size 4M mode overwrite\n"
"  magnetctl probe add sw sched_switch buffer net\n"
"  magnetctl probe add open kprobe do_sys_openat2 args 3 id-arg 1\n"
"  magnetctl probe add-set udp-send,udp-recv snaplen 128\n"
"  magnetctl probe set sw sample interval 10ms\n"
"  magnetctl probe set sw sample every 100\n"
"  magnetctl filter add sw cpu 0-3,6 tgid 1234\n"
"  magnetctl filter add rx packet proto udp dport 5001\n"
"  magnetctl filter add tx correlate end rx threshold 1ms\n"
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
	{ "daemon", help_daemon },
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

/* --- requests ------------------------------------------------------------ */

/* The netlink context of this run. */
static struct nl_ctx *nl;

/* Print what the last failed call met; returns -1. */
static int print_nl_error(void)
{
	const struct nl_error *e = nl_err(nl);

	fprintf(stderr, "magnetctl: %s\n", e->text);
	if (e->hint[0])
		fprintf(stderr, "magnetctl: %s\n", e->hint);
	return -1;
}

/* nl_request(), its failure printed. */
static int ctl_request(struct request *req, mnl_cb_t cb, void *data)
{
	if (nl_request(nl, req, cb, data))
		return print_nl_error();
	return 0;
}

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

/* A decimal number from @min to @max; @what names it in messages. */
static uint64_t parse_uint(const char *s, uint64_t min, uint64_t max,
			   const char *what)
{
	struct parse_error e;
	uint64_t value;

	if (word_uint(s, min, max, what, &value, &e))
		usage_error("%s: %s", command, e.text);
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

/*
 * Nanoseconds, from a number with an optional unit: "250us", "1.5ms",
 * "10" (ns). The result must be a whole number of nanoseconds.
 */
static uint64_t parse_duration(const char *s, const char *what)
{
	struct parse_error e;
	uint64_t ns;

	if (word_duration(s, what, &ns, &e))
		usage_error("%s: %s", command, e.text);
	return ns;
}

static void check_name(const char *name, const char *what)
{
	struct parse_error e;

	if (word_name(name, what, &e))
		usage_error("%s: %s", command, e.text);
}

/* A PROBE argument: its id if all digits (0 for a name, checked). */
static uint16_t check_probe_ref(const char *ref)
{
	struct parse_error e;
	uint16_t id;

	if (word_probe_ref(ref, &id, &e))
		usage_error("%s: %s", command, e.text);
	return id;
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

static const char *const probe_dispatches[] = {
	[MAGNET_DISPATCH_AUTO]		= "auto",
	[MAGNET_DISPATCH_KPROBE]	= "kprobe",
	[MAGNET_DISPATCH_FTRACE]	= "ftrace",
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


/* A CPU bitmap as "0-3,6"; the caller frees the string. */
static char *cpu_list_text(const uint8_t *map, size_t len)
{
	char *list = format_cpu_list(map, len);

	if (!list)
		out_of_memory();
	return list;
}

/* --- buffer --------------------------------------------------------------- */

static int buffer_add(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_NEW, 0);
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
	return ctl_request(&req, NULL, NULL);
}

static int buffer_del(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_DEL, 0);
	const char *name = take_arg(a, "NAME");

	check_name(name, "buffer name");
	no_more_args(a);
	mnl_attr_put_strz(nlh, MAGNET_A_BUFFER_NAME, name);
	return ctl_request(&req, NULL, NULL);
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
	bool table;		/* text: aligned columns under a header */
	bool started;
};

static void list_start(struct lister *l)
{
	if (l->started)
		return;
	print_open_array(NULL);
	if (l->table)
		table_begin();
	l->started = true;
}

static int list_row_cb(const struct nlmsghdr *nlh, void *data)
{
	struct lister *l = data;

	list_start(l);
	return l->row_cb(nlh, NULL);
}

static int list_run(struct request *req, struct lister *l)
{
	int ret = ctl_request(req, list_row_cb, l);

	if (!ret)
		list_start(l);
	if (l->started) {
		table_end();
		print_close_array();
	}
	return ret;
}

/*
 * Print @req's replies with @row_cb as a table (text) or an array (JSON).
 * The output starts with the first reply, so that a request refused at
 * once prints nothing but the error.
 */
static int list(struct request *req, mnl_cb_t row_cb)
{
	struct lister l = { .row_cb = row_cb, .table = true };

	return list_run(req, &l);
}

/* The same, but @row_cb prints whole lines of text itself. */
static int list_lines(struct request *req, mnl_cb_t row_cb)
{
	struct lister l = { .row_cb = row_cb };

	return list_run(req, &l);
}

static int buffer_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!more(a)) {
		request_start(nl, &req, MAGNET_CMD_BUFFER_GET, NLM_F_DUMP);
	} else {
		nlh = request_start(nl, &req, MAGNET_CMD_BUFFER_GET, 0);
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
	} else if (!strcmp(key, "dispatch")) {
		int d;

		if (kind >= 0 && kind != MAGNET_PROBE_KPROBE)
			usage_error("%s: \"dispatch\" is for kprobes only",
				    command);
		refuse_repeat(nlh, MAGNET_A_PROBE_DISPATCH, key);
		value = take_value(a, key);
		d = word_index(probe_dispatches, MAGNET_DISPATCH_FTRACE + 1,
			       value);
		if (d < 0)
			usage_error("%s: dispatch is auto, kprobe or ftrace, not \"%s\"",
				    command, value);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_DISPATCH, d);
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
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_NEW, 0);
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
	if (ctl_request(&req, probe_new_cb, &probe))
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
	struct nlmsghdr *nlh = request_start(nl, &req, cmd, 0);

	put_probe_ref(nlh, take_arg(a, "PROBE"));
	no_more_args(a);
	if (enable >= 0)
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_ENABLED, enable);
	return ctl_request(&req, NULL, NULL);
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

static void put_sample_every(struct nlmsghdr *nlh, const char *key,
			     const char *value)
{
	refuse_repeat(nlh, MAGNET_A_SAMPLE_EVERY, key);
	mnl_attr_put_u32(nlh, MAGNET_A_SAMPLE_EVERY,
			 parse_uint(value, 0, UINT32_MAX, key));
}

static void put_sample_interval(struct nlmsghdr *nlh, const char *key,
				const char *value)
{
	uint64_t ns;

	refuse_repeat(nlh, MAGNET_A_SAMPLE_INTERVAL, key);
	ns = parse_duration(value, key);
	if (ns > MAGNET_SAMPLE_INTERVAL_MAX)
		usage_error("%s: bad %s \"%s\": at most an hour (3600s)",
			    command, key, value);
	mnl_attr_put_u64(nlh, MAGNET_A_SAMPLE_INTERVAL, ns);
}

/* sample [every N] [interval DURATION], at least one of them */
static void put_sample(struct nlmsghdr *nlh, struct args *a)
{
	const char *key;
	bool any = false;

	while (more(a) && (!strcmp(a->word[0], "every") ||
			   !strcmp(a->word[0], "interval"))) {
		key = next_word(a);
		if (!strcmp(key, "every"))
			put_sample_every(nlh, "sample every",
					 take_value(a, key));
		else
			put_sample_interval(nlh, "sample interval",
					    take_value(a, key));
		any = true;
	}
	if (!any)
		usage_error("%s: expected \"every N\" or \"interval DURATION\" after \"sample\"",
			    command);
}

static int probe_set(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_PROBE_SET, 0);
	const char *key;

	put_probe_ref(nlh, take_arg(a, "PROBE"));
	if (!more(a))
		usage_error("%s: nothing to set (notify, snaplen or sample)",
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
		} else if (!strcmp(key, "sample")) {
			put_sample(nlh, a);
		} else if (!strcmp(key, "sample-every")) {
			/* the spelling of magnetctl 0.1.0 */
			put_sample_every(nlh, key, take_value(a, key));
		} else if (!strcmp(key, "sample-interval")) {
			put_sample_interval(nlh, key, take_value(a, key));
		} else {
			unknown_keyword(key);
		}
	}
	return ctl_request(&req, NULL, NULL);
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

/*
 * JSON: sample_every and sample_interval_ns, 0 when off. Text: a SAMPLE
 * column, "every N interval DURATION" with the parts in force, or "-".
 */
static void print_probe_sampling(const struct nlattr **tb)
{
	uint64_t every = attr_uint(tb[MAGNET_A_SAMPLE_EVERY]);
	uint64_t interval = attr_uint(tb[MAGNET_A_SAMPLE_INTERVAL]);
	char text[80] = "", duration[32];

	print_u64(PRINT_JSON, "sample_every", NULL, every);
	print_u64(PRINT_JSON, "sample_interval_ns", NULL, interval);
	if (every > 1)
		snprintf(text, sizeof(text), "every %" PRIu64, every);
	if (interval) {
		format_duration(interval, duration);
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 "%sinterval %s", *text ? " " : "", duration);
	}
	print_string(PRINT_TEXT, "sample", NULL, *text ? text : NULL);
}

static int probe_row_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct nlattr *st[MAGNET_STAT_MAX + 1] = { NULL };
	char kind[24], dispatch[24], target[MAGNET_NAME_LEN + 16];

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
	print_string(PRINT_ANY, "dispatch", NULL,
		     tb[MAGNET_A_PROBE_DISPATCH] ?
		     VALUE_NAME(probe_dispatches, tb[MAGNET_A_PROBE_DISPATCH],
				dispatch) : NULL);
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
	print_probe_sampling(tb);
	print_row_end();
	return MNL_CB_OK;
}

static int probe_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh;

	if (!more(a)) {
		request_start(nl, &req, MAGNET_CMD_PROBE_GET, NLM_F_DUMP);
	} else {
		nlh = request_start(nl, &req, MAGNET_CMD_PROBE_GET, 0);
		put_probe_ref(nlh, next_word(a));
		no_more_args(a);
	}
	return list(&req, probe_row_cb);
}

/*
 * A catalog entry's target: as the kernel gives it, "A|B" for the first
 * of A and B the running kernel has; JSON also has the alternatives as
 * an array, "targets".
 */
static void print_catalog_targets(const char *target)
{
	const char *p = target, *end;
	char name[MAGNET_TARGET_LEN];

	print_string(PRINT_ANY, "target", NULL, target);
	if (!target || !print_is_json())
		return;
	print_open_array("targets");
	for (;;) {
		end = strchrnul(p, '|');
		snprintf(name, sizeof(name), "%.*s", (int)(end - p), p);
		if (*name)
			print_string(PRINT_JSON, NULL, NULL, name);
		if (!*end)
			break;
		p = end + 1;
	}
	print_close_array();
}

/*
 * The kernel says what it uses for each catalog entry only to callers who
 * may change magnet (it tries each function with a kprobe): CAP_NET_ADMIN
 * or CAP_SYS_ADMIN in effect. Others get the catalog without it.
 */
static bool may_resolve(void)
{
	static int may = -1;
	unsigned long long caps = 0;
	char line[256];
	FILE *f;

	if (may >= 0)
		return may;
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	if (f)
		fclose(f);
	may = !!(caps & (1ULL << 12 | 1ULL << 21));	/* NET_ADMIN, SYS_ADMIN */
	return may;
}

/* A catalog request, resolving the targets if we may. */
static void catalog_request(struct request *req)
{
	struct nlmsghdr *nlh = request_start(nl, req, MAGNET_CMD_CATALOG_GET,
					     NLM_F_DUMP);

	if (may_resolve())
		mnl_attr_put(nlh, MAGNET_A_CATALOG_RESOLVE, 0, NULL);
}

/*
 * The target, then what the running kernel uses for it ("uses"; in JSON
 * absent, in text "not in this kernel", if it has none), when the kernel
 * was asked (the column is left out otherwise).
 */
static void print_catalog_target(const char *target, const char *used)
{
	print_catalog_targets(target);
	if (!may_resolve())
		return;
	print_string(PRINT_JSON, "uses", NULL, used);
	print_string(PRINT_TEXT, "uses", NULL,
		     used ? used : "not in this kernel");
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
	print_catalog_target(attr_str(tb[MAGNET_A_PROBE_TARGET]),
			     attr_str(tb[MAGNET_A_PROBE_TARGET_USED]));
	print_string(PRINT_ANY, "description", NULL,
		     attr_str(tb[MAGNET_A_PROBE_DESC]));
	print_row_end();
	return MNL_CB_OK;
}

static int probe_catalog(struct args *a)
{
	struct request req;

	no_more_args(a);
	catalog_request(&req);
	return list(&req, catalog_row_cb);
}

/* --- probe sets ----------------------------------------------------------- */

/*
 * The length of @name's set, the part before its first '.' ("udp-send" of
 * "udp-send.ip"), or 0 if it is no set's entry; as in probeset.c.
 */
static size_t set_name_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot && dot != name && dot[1] ? (size_t)(dot - name) : 0;
}

/* SET[,SET...]: set names, each a valid name without '.'. */
static void check_set_list(const char *sets)
{
	char name[MAGNET_NAME_LEN];
	const char *p = sets, *end;
	size_t len;

	for (;;) {
		end = strchrnul(p, ',');
		len = end - p;
		if (!len)
			usage_error("%s: bad probe set list \"%s\": expected set names separated by commas, e.g. udp-send,udp-recv",
				    command, sets);
		if (len >= MAGNET_NAME_LEN)
			usage_error("%s: bad probe set \"%.*s\": 1 to %d bytes",
				    command, (int)len, p, MAGNET_NAME_LEN - 1);
		memcpy(name, p, len);
		name[len] = '\0';
		check_name(name, "probe set");
		if (strchr(name, '.'))
			usage_error("%s: bad probe set \"%s\": a set's name has no '.' (to add one layer: magnetctl probe add NAME %s)",
				    command, name, name);
		if (!*end)
			return;
		p = end + 1;
	}
}

static void print_probeset(const struct probeset *ps)
{
	const struct probeset_probe *p;

	print_open_array(NULL);
	table_begin();
	for (p = ps->probe; p < ps->probe + ps->count; p++) {
		print_row_begin();
		print_string(PRINT_ANY, "name", NULL, p->name);
		if (p->error) {
			print_string(PRINT_JSON, "status", NULL, "skipped");
			print_string(PRINT_TEXT, "id", NULL, NULL);
			print_string(PRINT_TEXT, "target", NULL,
				     "skipped: not in this kernel");
			/* the functions looked for */
			print_string(PRINT_JSON, "candidates", NULL,
				     p->target);
		} else {
			print_string(PRINT_JSON, "status", NULL, "added");
			print_u64(PRINT_ANY, "id", NULL, p->id);
			print_string(PRINT_ANY, "target", NULL, p->target);
		}
		print_row_end();
	}
	table_end();
	print_close_array();
}

static int probe_add_set(struct args *a)
{
	const char *sets = take_arg(a, "SET[,SET...]");
	const char *key, *buffer = NULL;
	bool have_snaplen = false, disabled = false;
	uint32_t snaplen = 0;
	struct probeset ps;

	check_set_list(sets);
	while (more(a)) {
		key = next_word(a);
		if (!strcmp(key, "buffer")) {
			if (buffer)
				usage_error("%s: \"%s\" given twice", command,
					    key);
			buffer = take_value(a, key);
			check_name(buffer, "buffer name");
		} else if (!strcmp(key, "snaplen")) {
			if (have_snaplen)
				usage_error("%s: \"%s\" given twice", command,
					    key);
			snaplen = parse_uint(take_value(a, key), 0,
					     MAGNET_RECORD_MAX, key);
			have_snaplen = true;
		} else if (!strcmp(key, "disabled")) {
			if (disabled)
				usage_error("%s: \"%s\" given twice", command,
					    key);
			disabled = true;
		} else {
			unknown_keyword(key);
		}
	}
	if (probeset_add(nl, sets, buffer, snaplen, !disabled, &ps))
		return print_nl_error();
	print_probeset(&ps);
	return 0;
}

static int probe_del_set(struct args *a)
{
	const char *sets = take_arg(a, "SET[,SET...]");
	int removed;

	check_set_list(sets);
	no_more_args(a);
	removed = probeset_del(nl, sets);
	if (removed < 0)
		return print_nl_error();
	print_open_object(NULL);
	print_u64(PRINT_ANY, "removed", "removed %" PRIu64, removed);
	print_string(PRINT_TEXT, NULL, " %s\n",
		     removed == 1 ? "probe" : "probes");
	print_close_object();
	return 0;
}

/* A catalog entry of a set, kept until the whole catalog is in. */
struct set_entry {
	char *name, *target, *used, *desc;
	int kind;			/* enum magnet_probe_kind, -1: none */
};

struct set_catalog {
	struct set_entry *entry;
	size_t count;
};

static char *copy_str(const struct nlattr *attr)
{
	char *copy;

	if (!attr)
		return NULL;
	copy = strdup(mnl_attr_get_str(attr));
	if (!copy)
		out_of_memory();
	return copy;
}

static int set_entry_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	struct set_catalog *c = data;
	struct set_entry *e;

	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	if (!tb[MAGNET_A_PROBE_PREDEF] ||
	    !set_name_len(attr_str(tb[MAGNET_A_PROBE_PREDEF])))
		return MNL_CB_OK;
	c->entry = append(c->entry, &c->count, sizeof(*c->entry));
	e = &c->entry[c->count - 1];
	e->name = copy_str(tb[MAGNET_A_PROBE_PREDEF]);
	e->target = copy_str(tb[MAGNET_A_PROBE_TARGET]);
	e->used = copy_str(tb[MAGNET_A_PROBE_TARGET_USED]);
	e->desc = copy_str(tb[MAGNET_A_PROBE_DESC]);
	e->kind = tb[MAGNET_A_PROBE_KIND] ?
		  (int)attr_uint(tb[MAGNET_A_PROBE_KIND]) : -1;
	return MNL_CB_OK;
}

static void print_set_entry(const struct set_entry *e)
{
	size_t len = set_name_len(e->name);
	char set[MAGNET_NAME_LEN], kind[24];
	const char *kind_name = NULL;

	snprintf(set, sizeof(set), "%.*s", (int)len, e->name);
	if (e->kind >= 0 && (size_t)e->kind < ARRAY_SIZE(probe_kinds) &&
	    probe_kinds[e->kind])
		kind_name = probe_kinds[e->kind];
	else if (e->kind >= 0) {
		snprintf(kind, sizeof(kind), "%d", e->kind);	/* newer */
		kind_name = kind;
	}
	print_row_begin();
	print_string(PRINT_ANY, "set", NULL, set);
	print_string(PRINT_ANY, "layer", NULL, e->name + len + 1);
	print_string(PRINT_JSON, "name", NULL, e->name);
	print_string(PRINT_ANY, "kind", NULL, kind_name);
	print_catalog_target(e->target, e->used);
	print_string(PRINT_ANY, "description", NULL, e->desc);
	print_row_end();
}

/* Set by set, in the order the catalog first names them. */
static void print_sets(const struct set_catalog *c)
{
	size_t i, j, len;

	print_open_array(NULL);
	table_begin();
	for (i = 0; i < c->count; i++) {
		len = set_name_len(c->entry[i].name);
		for (j = 0; j < i; j++)
			if (set_name_len(c->entry[j].name) == len &&
			    !strncmp(c->entry[j].name, c->entry[i].name, len))
				break;
		if (j < i)
			continue;	/* printed with its set */
		for (j = i; j < c->count; j++)
			if (set_name_len(c->entry[j].name) == len &&
			    !strncmp(c->entry[j].name, c->entry[i].name, len))
				print_set_entry(&c->entry[j]);
	}
	table_end();
	print_close_array();
}

static int probe_sets(struct args *a)
{
	struct set_catalog c = { 0 };
	struct request req;
	size_t i;
	int ret;

	no_more_args(a);
	catalog_request(&req);
	ret = ctl_request(&req, set_entry_cb, &c);
	if (!ret)
		print_sets(&c);
	for (i = 0; i < c.count; i++) {
		free(c.entry[i].name);
		free(c.entry[i].target);
		free(c.entry[i].used);
		free(c.entry[i].desc);
	}
	free(c.entry);
	return ret;
}

/* --- filter --------------------------------------------------------------- */

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
	static struct filter_rule r;	/* a few KiB */
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_NEW, 0);
	const char *probe = take_arg(a, "PROBE");
	struct parse_error e;
	int64_t rule = -1;

	check_probe_ref(probe);
	filter_rule_init(&r);
	if (filter_parse(&r, a->count, a->word, &e) ||
	    filter_check(&r, probe, &e))
		usage_error("%s: %s", command, e.text);
	a->count = 0;
	put_probe_ref(nlh, probe);
	if (filter_encode(nl, &r, nlh))
		return print_nl_error();
	if (ctl_request(&req, filter_new_cb, &rule))
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
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_DEL, 0);

	mnl_attr_put_u32(nlh, MAGNET_A_FILTER_ID,
			 parse_uint(take_arg(a, "ID"), 1, UINT32_MAX,
				    "filter id"));
	no_more_args(a);
	return ctl_request(&req, NULL, NULL);
}

/*
 * filter list: one line per rule in text, in filter add's syntax after
 * the rule's id ("3 sw include cpu 0-3 tgid 1234"), then the filter
 * type's counters; with -j an array of objects.
 */

/* In text, a keyword of filter add's: " WORD". */
static void print_filter_set(const struct nlmsghdr *nlh, uint16_t type,
			     const char *key, const char *word, bool hex)
{
	const struct nlattr *attr;
	bool any = false;
	char *text = NULL;
	uint64_t value;
	size_t size;
	FILE *f;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		any |= mnl_attr_get_type(attr) == type;
	if (!any)
		return;
	f = open_memstream(&text, &size);
	if (!f)
		out_of_memory();
	print_open_array(key);
	any = false;
	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr)) {
		if (mnl_attr_get_type(attr) != type)
			continue;
		value = attr_uint(attr);
		print_u64(PRINT_JSON, NULL, NULL, value);
		fprintf(f, hex ? "%s0x%" PRIx64 : "%s%" PRIu64,
			any ? "," : "", value);
		any = true;
	}
	print_close_array();
	if (fclose(f))
		out_of_memory();
	print_word(word);
	print_word(text);
	free(text);
}

static void print_filter_cpus(const struct nlattr *attr)
{
	const uint8_t *map = mnl_attr_get_payload(attr);
	size_t len = mnl_attr_get_payload_len(attr), cpu;
	char *list = cpu_list_text(map, len);

	print_open_array("cpus");
	for (cpu = 0; cpu < len * 8; cpu++)
		if (cpu_in_map(map, cpu))
			print_u64(PRINT_JSON, NULL, NULL, cpu);
	print_close_array();
	print_word("cpu");
	print_string(PRINT_TEXT, NULL, " %s", *list ? list : NULL);
	free(list);
}

/* An id range as given; text fills in a missing end. */
static void print_filter_id_range(const struct nlattr **tb)
{
	const struct nlattr *min = tb[MAGNET_A_FILTER_ID_MIN];
	const struct nlattr *max = tb[MAGNET_A_FILTER_ID_MAX];

	if (!min && !max)
		return;
	if (min)
		print_u64(PRINT_JSON, "id_min", NULL, attr_uint(min));
	if (max)
		print_u64(PRINT_JSON, "id_max", NULL, attr_uint(max));
	print_word("id");
	print_u64(PRINT_TEXT, NULL, " 0x%" PRIx64, attr_uint(min));
	print_u64(PRINT_TEXT, NULL, "-0x%" PRIx64,
		  max ? attr_uint(max) : UINT64_MAX);
}

static int filter_line_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MAGNET_A_MAX + 1];
	const struct filter_type *known = NULL;
	const char *name, *type;
	char action[24];

	(void)data;
	if (parse_magnet_attrs(nlh, tb))
		return MNL_CB_ERROR;
	name = attr_str(tb[MAGNET_A_PROBE_NAME]);
	type = attr_str(tb[MAGNET_A_FILTER_TYPE]);
	print_open_object(NULL);
	print_u64(PRINT_ANY, "id", "%" PRIu64,
		  attr_uint(tb[MAGNET_A_FILTER_ID]));
	if (tb[MAGNET_A_PROBE_ID])
		print_u64(PRINT_JSON, "probe_id", NULL,
			  attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_JSON, "probe", NULL, name);
	if (name || !tb[MAGNET_A_PROBE_ID])
		print_string(PRINT_TEXT, NULL, " %s", name);
	else
		print_u64(PRINT_TEXT, NULL, " %" PRIu64,
			  attr_uint(tb[MAGNET_A_PROBE_ID]));
	print_string(PRINT_ANY, "action", " %s",
		     VALUE_NAME(filter_actions, tb[MAGNET_A_FILTER_ACTION],
				action));
	if (tb[MAGNET_A_FILTER_CPUS])
		print_filter_cpus(tb[MAGNET_A_FILTER_CPUS]);
	print_filter_set(nlh, MAGNET_A_FILTER_TGID, "tgids", "tgid", false);
	if (tb[MAGNET_A_FILTER_TID]) {
		print_word("tid");
		print_u64(PRINT_ANY, "tid", " %" PRIu64,
			  attr_uint(tb[MAGNET_A_FILTER_TID]));
	}
	print_filter_set(nlh, MAGNET_A_FILTER_IDS, "ids", "id", true);
	print_filter_id_range(tb);
	if (type) {
		known = filter_type_find(type);
		print_string(PRINT_JSON, "type", NULL, type);
		if (known)
			print_word(type);
		else
			print_string(PRINT_TEXT, NULL, " type %s", type);
	}
	/* a type newer than us: its name, not its nests */
	if (known && known->print(tb[MAGNET_A_FILTER_CONFIG],
				  tb[MAGNET_A_FILTER_STATS]))
		return MNL_CB_ERROR;
	print_string(PRINT_TEXT, NULL, "%s", "\n");
	print_close_object();
	return MNL_CB_OK;
}

static int filter_list(struct args *a)
{
	struct request req;
	struct nlmsghdr *nlh = request_start(nl, &req, MAGNET_CMD_FILTER_GET,
					     NLM_F_DUMP);

	if (more(a))
		put_probe_ref(nlh, next_word(a));
	no_more_args(a);
	return list_lines(&req, filter_line_cb);
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
	request_start(nl, &req, MAGNET_CMD_STATS_GET, NLM_F_DUMP);
	ret = ctl_request(&req, stats_cb, &stats);
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

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/*
 * Print notifications until @m's count or SIGINT/SIGTERM. The signals are
 * blocked except while waiting, so none goes unnoticed.
 */
static int listen_notify(struct monitor *m)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	struct pollfd pfd = { .events = POLLIN };
	sigset_t block, wait_mask;
	int ret;

	if (nl_join_notify(nl))
		return print_nl_error();
	pfd.fd = nl_fd(nl);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop_signal) {
		if (ppoll(&pfd, 1, NULL, &wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "magnetctl: poll: %s\n",
				strerror(errno));
			return -1;
		}
		ret = nl_recv_notify(nl, notify_cb, m);
		if (ret < 0)
			return print_nl_error();
		if (ret == NL_NOTIFY_LOST)
			fputs("magnetctl: warning: notifications lost, the socket's receive buffer overran (ENOBUFS)\n",
			      stderr);
		if (ret == NL_NOTIFY_STOP)
			break;
	}
	return 0;
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
	return listen_notify(&m);
}

/* --- daemon -------------------------------------------------------------- */

/* magnetd's commands have their own parsing (daemon.c). */
static int daemon_run(struct args *a)
{
	int ret;

	if (!more(a))
		usage_error("daemon: missing COMMAND (snapshot, watch, release or attach)");
	ret = daemon_command(a->word[0], a->count - 1, a->word + 1);
	if (ret == EXIT_USAGE)
		exit(EXIT_USAGE);
	return ret;
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
	{ "probe", "add-set", probe_add_set },
	{ "probe", "del-set", probe_del_set },
	{ "probe", "sets", probe_sets },
	{ "filter", "add", filter_add },
	{ "filter", "del", filter_del },
	{ "filter", "list", filter_list },
	{ "filter", "show", filter_list },
	{ "stats", NULL, stats_show },
	{ "monitor", NULL, monitor },
	{ "daemon", NULL, daemon_run },
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
		usage_error("unknown object \"%s\" (expected buffer, probe, filter, stats, monitor or daemon)",
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
		usage_error("missing OBJECT (buffer, probe, filter, stats, monitor or daemon)");
	if (!strcmp(argv[optind], "help")) {
		print_help();
		return 0;
	}
	print_init(json, pretty);
	a = (struct args){ argc - optind, argv + optind };
	nl = nl_new();
	if (!nl) {
		fputs("magnetctl: out of memory\n", stderr);
		return 1;
	}
	ret = run(&a);
	nl_free(nl);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "magnetctl: writing the output: %s\n",
			strerror(errno));
		return 1;
	}
	return ret ? 1 : 0;
}

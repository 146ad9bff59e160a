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

#include "daemon.h"
#include "magnetctl.h"
#include "nl.h"
#include "print.h"
#include "words.h"


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
"  magnetctl filter add rx packet udp dst port 5001\n"
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
	{ "session", help_session },
	{ "account", help_account },
	{ "acct", help_acct },
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
char command[32];

void __attribute__((noreturn, format(printf, 1, 2)))
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

/* --- requests ------------------------------------------------------------ */

/* The netlink context of this run. */
struct nl_ctx *nl;

/* Print what the last failed call met; returns -1. */
int print_nl_error(void)
{
	const struct nl_error *e = nl_err(nl);

	fprintf(stderr, "magnetctl: %s\n", e->text);
	if (e->hint[0])
		fprintf(stderr, "magnetctl: %s\n", e->hint);
	return -1;
}

/* nl_request(), its failure printed. */
int ctl_request(struct request *req, mnl_cb_t cb, void *data)
{
	if (nl_request(nl, req, cb, data))
		return print_nl_error();
	return 0;
}

bool more(const struct args *a)
{
	return a->count > 0;
}

const char *next_word(struct args *a)
{
	a->count--;
	return *a->word++;
}

/* Positional argument @what, which must be there. */
const char *take_arg(struct args *a, const char *what)
{
	if (!more(a))
		usage_error("%s: missing %s", command, what);
	return next_word(a);
}

/* The value after keyword @key. */
const char *take_value(struct args *a, const char *key)
{
	if (!more(a))
		usage_error("%s: missing value after \"%s\"", command, key);
	return next_word(a);
}

void no_more_args(const struct args *a)
{
	if (more(a))
		usage_error("%s: unexpected argument \"%s\"", command,
			    a->word[0]);
}

void __attribute__((noreturn)) unknown_keyword(const char *word)
{
	usage_error("%s: unknown keyword \"%s\"", command, word);
}

bool request_has(const struct nlmsghdr *nlh, uint16_t type)
{
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(struct genlmsghdr))
		if (mnl_attr_get_type(attr) == type)
			return true;
	return false;
}

/* Refuse a keyword given twice rather than let one of the values win. */
void refuse_repeat(const struct nlmsghdr *nlh, uint16_t type,
			  const char *key)
{
	if (request_has(nlh, type))
		usage_error("%s: \"%s\" given twice", command, key);
}

/* A decimal number from @min to @max; @what names it in messages. */
uint64_t parse_uint(const char *s, uint64_t min, uint64_t max,
			   const char *what)
{
	struct parse_error e;
	uint64_t value;

	if (word_uint(s, min, max, what, &value, &e))
		usage_error("%s: %s", command, e.text);
	return value;
}


bool parse_on_off(const char *s, const char *key)
{
	if (!strcmp(s, "on"))
		return true;
	if (strcmp(s, "off"))
		usage_error("%s: bad value \"%s\" for \"%s\": expected on or off",
			    command, s, key);
	return false;
}

/* Bytes per CPU: a power of two, with an optional K, M or G suffix. */
uint64_t parse_size(const char *s)
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
uint64_t parse_duration(const char *s, const char *what)
{
	struct parse_error e;
	uint64_t ns;

	if (word_duration(s, what, &ns, &e))
		usage_error("%s: %s", command, e.text);
	return ns;
}

void check_name(const char *name, const char *what)
{
	struct parse_error e;

	if (word_name(name, what, &e))
		usage_error("%s: %s", command, e.text);
}

/* A PROBE argument: its id if all digits (0 for a name, checked). */
uint16_t check_probe_ref(const char *ref)
{
	struct parse_error e;
	uint16_t id;

	if (word_probe_ref(ref, &id, &e))
		usage_error("%s: %s", command, e.text);
	return id;
}

void put_probe_ref(struct nlmsghdr *nlh, const char *ref)
{
	uint16_t id = check_probe_ref(ref);

	if (id)
		mnl_attr_put_u16(nlh, MAGNET_A_PROBE_ID, id);
	else
		mnl_attr_put_strz(nlh, MAGNET_A_PROBE_NAME, ref);
}

/* --- values in replies ---------------------------------------------------- */

const char *const buffer_modes[MAGNET_BUFFER_OVERWRITE + 1] = {
	[MAGNET_BUFFER_DROP]		= "drop",
	[MAGNET_BUFFER_OVERWRITE]	= "overwrite",
};

const char *const probe_kinds[MAGNET_PROBE_SAMPLE + 1] = {
	[MAGNET_PROBE_KPROBE]		= "kprobe",
	[MAGNET_PROBE_KRETPROBE]	= "kretprobe",
	[MAGNET_PROBE_TRACEPOINT]	= "tracepoint",
	[MAGNET_PROBE_EXTERNAL]		= "external",
	[MAGNET_PROBE_USER]		= "user",
	[MAGNET_PROBE_SAMPLE]		= "sample",
};

const char *const probe_dispatches[MAGNET_DISPATCH_FTRACE + 1] = {
	[MAGNET_DISPATCH_AUTO]		= "auto",
	[MAGNET_DISPATCH_KPROBE]	= "kprobe",
	[MAGNET_DISPATCH_FTRACE]	= "ftrace",
};

const char *const filter_actions[MAGNET_FILTER_EXCLUDE + 1] = {
	[MAGNET_FILTER_INCLUDE]		= "include",
	[MAGNET_FILTER_EXCLUDE]		= "exclude",
};

const char *const probe_stat_names[MAGNET_STAT_MAX + 1] = {
	[MAGNET_STAT_HITS]		= "hits",
	[MAGNET_STAT_LOGGED]		= "logged",
	[MAGNET_STAT_FILTERED]		= "filtered",
	[MAGNET_STAT_SAMPLED]		= "sampled",
	[MAGNET_STAT_LOST]		= "lost",
};

const char *const cpu_stat_names[MAGNET_CPU_MAX + 1] = {
	[MAGNET_CPU_PRODUCED]		= "produced",
	[MAGNET_CPU_WRITTEN]		= "written",
	[MAGNET_CPU_READ]		= "read",
	[MAGNET_CPU_LOST]		= "lost",
	[MAGNET_CPU_DROPPED]		= "dropped",
	[MAGNET_CPU_OVERWRITTEN]	= "overwritten",
	[MAGNET_CPU_DISCARDED]		= "discarded",
};

int word_index(const char *const *words, size_t count, const char *s)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (words[i] && !strcmp(words[i], s))
			return i;
	return -1;
}


const char *attr_str(const struct nlattr *attr)
{
	return attr ? mnl_attr_get_str(attr) : NULL;
}

/* The name of an enum value, or its number if it is newer than us. */
const char *value_name(const char *const *names, size_t count,
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

void out_of_memory(void)
{
	fputs("magnetctl: out of memory\n", stderr);
	exit(1);
}

/* Room for one more zeroed element at the end of @array. */
void *append(void *array, size_t *count, size_t size)
{
	char *grown = realloc(array, (*count + 1) * size);

	if (!grown)
		out_of_memory();
	memset(grown + *count * size, 0, size);
	(*count)++;
	return grown;
}


/* "4K", "1M", "1G" when exact, else bytes. */
void format_size(uint64_t bytes, char buf[32])
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
char *cpu_list_text(const uint8_t *map, size_t len)
{
	char *list = format_cpu_list(map, len);

	if (!list)
		out_of_memory();
	return list;
}

/* --- lists --------------------------------------------------------------- */

void list_start(struct lister *l)
{
	if (l->started)
		return;
	print_open_array(NULL);
	if (l->table)
		table_begin();
	l->started = true;
}

int list_row_cb(const struct nlmsghdr *nlh, void *data)
{
	struct lister *l = data;

	list_start(l);
	return l->row_cb(nlh, NULL);
}

int list_run(struct request *req, struct lister *l)
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
int list(struct request *req, mnl_cb_t row_cb)
{
	struct lister l = { .row_cb = row_cb, .table = true };

	return list_run(req, &l);
}

/* The same, but @row_cb prints whole lines of text itself. */
int list_lines(struct request *req, mnl_cb_t row_cb)
{
	struct lister l = { .row_cb = row_cb };

	return list_run(req, &l);
}

/* --- daemon -------------------------------------------------------------- */

const char help_daemon[] =
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


/* magnetd's commands have their own parsing (daemon.c). */
int daemon_run(struct args *a)
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
	{ "probe", "sets", probe_list_sets },
	{ "filter", "add", filter_add },
	{ "filter", "del", filter_del },
	{ "filter", "list", filter_list },
	{ "filter", "show", filter_list },
	{ "stats", NULL, stats_show },
	{ "monitor", NULL, monitor },
	{ "daemon", NULL, daemon_run },
	{ "session", "list", session_list },
	{ "session", "show", session_list },
	{ "session", "del", session_del },
	{ "account", NULL, account },
	{ "acct", NULL, acct_show },
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

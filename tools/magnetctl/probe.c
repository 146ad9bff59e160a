// SPDX-License-Identifier: GPL-2.0
/*
 * magnetctl probe: add, del, enable, disable, set, list, catalog, and
 * the packet probe sets: add-set, del-set, sets (see magnetctl.h).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "magnetctl.h"
#include "print.h"
#include "probeset.h"

const char help_probe[] =
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
"        period DURATION  cpu.sample only, the time between its ticks on\n"
"                    each CPU: 100us to 1s (default 1ms, 1 kHz)\n"
"        depth N     cpu.sample only, frames of each stack (kernel, user):\n"
"                    0 to 64 (default 32)\n"
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
"Probe sets (packet probes along the network stack, block probes along\n"
"the block layer, one per layer; app: applications' spans; cpu: the\n"
"sampler, cpu.sample):\n"
"  magnetctl probe add-set SET[,SET...] [buffer B] [snaplen N] [disabled]\n"
"      Add every layer of each SET (udp-send, tcp-send, udp-recv, tcp-recv,\n"
"      blk-io, app, cpu; see probe sets) as a probe named SET.LAYER, and print\n"
"      one line per layer: NAME, ID and TARGET, the function the probe went on, or\n"
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
	} else if (!strcmp(key, "period")) {
		if (kind >= 0)
			usage_error("%s: \"period\" is for cpu.sample only",
				    command);
		refuse_repeat(nlh, MAGNET_A_PROBE_PERIOD, key);
		mnl_attr_put_u64(nlh, MAGNET_A_PROBE_PERIOD,
				 parse_duration(take_value(a, key), "period"));
	} else if (!strcmp(key, "depth")) {
		if (kind >= 0)
			usage_error("%s: \"depth\" is for cpu.sample only",
				    command);
		refuse_repeat(nlh, MAGNET_A_PROBE_DEPTH, key);
		mnl_attr_put_u8(nlh, MAGNET_A_PROBE_DEPTH,
				parse_uint(take_value(a, key), 0,
					   MAGNET_SAMPLE_DEPTH_MAX, key));
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

int probe_add(struct args *a)
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

int probe_del(struct args *a)
{
	return probe_simple(a, MAGNET_CMD_PROBE_DEL, -1);
}

int probe_enable(struct args *a)
{
	return probe_simple(a, MAGNET_CMD_PROBE_SET, 1);
}

int probe_disable(struct args *a)
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

int probe_set(struct args *a)
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
	if (tb[MAGNET_A_PROBE_PERIOD]) {
		print_u64(PRINT_JSON, "period_ns", NULL,
			  attr_uint(tb[MAGNET_A_PROBE_PERIOD]));
		print_u64(PRINT_JSON, "depth", NULL,
			  attr_uint(tb[MAGNET_A_PROBE_DEPTH]));
	}
	print_u64(PRINT_ANY, "session", NULL, attr_uint(tb[MAGNET_A_SESSION]));
	print_row_end();
	return MNL_CB_OK;
}

int probe_list(struct args *a)
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

int probe_catalog(struct args *a)
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

int probe_add_set(struct args *a)
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

int probe_del_set(struct args *a)
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

int probe_list_sets(struct args *a)
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

// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of magnetd's configuration loader (magnetd/config.c):
 * the shipped conf/magnetd.conf, a file using every option, the
 * defaults, and the errors with their "FILE:LINE:" and wording.
 *
 * Usage: config-unit TOPDIR (the source tree, for conf/magnetd.conf).
 * Prints "ok - what" or "not ok - what" per check (tests/harness.h), then
 * "N passed, M failed"; exits 1 if any failed. Test files go to a
 * temporary directory, removed at exit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "harness.h"

#define ERR_SIZE	8192
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/config-unit.XXXXXX";
static char err[ERR_SIZE];

/* A check, in the harness's format (tests/harness.h). */
#define check harness_check

/* The error text, as comments, after a failed check. */
static void show_err(void)
{
	const char *p = err, *nl;

	while (*p) {
		nl = strchrnul(p, '\n');
		printf("#   %.*s\n", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

static void remove_tmpdir(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(tmpdir);

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir,
				 d->d_name);
			unlink(path);
		}
	closedir(dir);
	rmdir(tmpdir);
}

/* Write @len bytes of @text to file @name of the test directory. */
static const char *write_conf_len(const char *name, const char *text,
				  size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(2);
	}
	return path;
}

static const char *write_conf(const char *name, const char *text)
{
	return write_conf_len(name, text, strlen(text));
}

static struct config *load(const char *name, const char *text)
{
	return config_load(write_conf(name, text), err, sizeof(err));
}

/* A line of err that starts with "PATH:LINE: " (LINE 0: "PATH: "). */
static const char *err_line_at(const char *path, int line)
{
	char prefix[PATH_MAX + 32];
	const char *p = err;
	size_t len;

	if (line)
		snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	else
		snprintf(prefix, sizeof(prefix), "%s: ", path);
	len = strlen(prefix);
	for (; *p; p = strchrnul(p, '\n'), p += !!*p)
		if (!strncmp(p, prefix, len))
			return p;
	return NULL;
}

/* Does the line at @p contain @phrase? */
static bool line_has(const char *p, const char *phrase)
{
	const char *hit = p ? strstr(p, phrase) : NULL;

	return hit && !memchr(p, '\n', hit - p);
}

static unsigned int err_lines(void)
{
	unsigned int n = 0;
	const char *p;

	for (p = err; *p; p++)
		n += *p == '\n';
	return n;
}

/*
 * @text must be refused, with a message at @line (0: no line) that says
 * @phrase.
 */
static void expect_error_len(const char *what, const char *text, size_t len,
			     int line, const char *phrase)
{
	const char *path = write_conf_len("error.conf", text, len);
	struct config *cfg = config_load(path, err, sizeof(err));
	const char *at = err_line_at(path, line);

	if (!check(!cfg && line_has(at, phrase), "%s: line %d says \"%s\"",
		   what, line, phrase))
		show_err();
	config_free(cfg);
}

static void expect_error(const char *what, const char *text, int line,
			 const char *phrase)
{
	expect_error_len(what, text, strlen(text), line, phrase);
}

/* --- the shipped configuration ------------------------------------------- */

static void test_shipped(const char *top)
{
	const struct config_latency *l;
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/conf/magnetd.conf", top);
	cfg = config_load(path, err, sizeof(err));
	if (!check(cfg, "shipped magnetd.conf loads")) {
		show_err();
		return;
	}
	check(!strcmp(cfg->file, path) || strlen(path) >= sizeof(cfg->file),
	      "shipped: file name kept");
	check(!strcmp(cfg->socket.path, "/run/magnetd.sock") &&
	      cfg->socket.mode == 0660 && !cfg->socket.group[0] &&
	      cfg->socket.max_clients == 64 &&
	      cfg->socket.client_queue == 262144,
	      "shipped: socket /run/magnetd.sock 0660, 64 clients, 256 KiB");
	check(cfg->metrics.interval_s == 1 && cfg->metrics.window_s == 10 &&
	      cfg->metrics.top_tgids == 5 && cfg->metrics.max_tgids == 1024,
	      "shipped: metrics defaults");

	b = cfg->buffers;
	check(cfg->nbuffers == 1 && !strcmp(b[0].name, "net") &&
	      b[0].size == 1048576 && b[0].mode == MAGNET_BUFFER_DROP &&
	      b[0].size_wm == 65536 && b[0].count_wm == 0 &&
	      b[0].timeout_us == 100000,
	      "shipped: buffer net, 1 MiB per CPU, drop");

	check(cfg->nsets == 2 && !strcmp(cfg->sets[0].set, "udp-send") &&
	      !strcmp(cfg->sets[1].set, "udp-recv") &&
	      !strcmp(cfg->sets[0].buffer, "net") &&
	      !strcmp(cfg->sets[1].buffer, "net") &&
	      cfg->sets[0].snaplen == 64 && cfg->sets[1].snaplen == 64,
	      "shipped: probe-sets udp-send, udp-recv into net, snaplen 64");

	p = cfg->probes;
	check(cfg->nprobes == 1 && !strcmp(p[0].name, "process_exit") &&
	      !strcmp(p[0].predef, "process_exit") && !p[0].target[0] &&
	      !strcmp(p[0].buffer, "default") && !p[0].args &&
	      !p[0].id_arg && !p[0].snaplen && !p[0].sample_every &&
	      !p[0].sample_interval_ns && !p[0].nfilters,
	      "shipped: probe process_exit into default");

	l = cfg->latencies;
	check(cfg->nlatencies == 2 && !strcmp(l[0].name, "udp_send") &&
	      !strcmp(l[0].start, "udp-send.socket") &&
	      !strcmp(l[0].end, "udp-send.dev-xmit") &&
	      l[0].key == METRICS_KEY_SOCK &&
	      l[0].timeout_ns == 1000000000 && l[0].max_pending == 4096,
	      "shipped: latency udp_send, socket to dev-xmit by sock");
	check(cfg->nlatencies == 2 && !strcmp(l[1].name, "udp_recv") &&
	      !strcmp(l[1].start, "udp-recv.dev-recv") &&
	      !strcmp(l[1].end, "udp-recv.app") &&
	      l[1].key == METRICS_KEY_SKB &&
	      l[1].timeout_ns == 1000000000 && l[1].max_pending == 4096,
	      "shipped: latency udp_recv, dev-recv to app by skb");
	config_free(cfg);
}

/* --- every option ---------------------------------------------------------- */

static const char full_conf[] =
	"# every option, with comments of every kind in between\n"
	"socket {\n"
	"\tpath = \"/tmp/m.sock\"\t// where\n"
	"\tmode = \"0600\"\n"
	"\tgroup = root\n"
	"\tmax-clients = 8\n"
	"\tclient-queue = 0x10000\n"
	"}\n"
	"/* a C comment\n"
	"   over two lines */\n"
	"metrics {\n"
	"\tinterval = 2\n"
	"\twindow = 60\n"
	"\ttop-tgids = 3\n"
	"\tmax-tgids = 100\n"
	"}\n"
	"buffer big {\n"
	"\tsize = 4194304\n"
	"\tmode = overwrite\n"
	"\tsize-watermark = 8192\n"
	"\tcount-watermark = 10\n"
	"\ttimeout = 250\n"
	"}\n"
	"buffer 'tiny' { size = 4096 }\n"
	"probe-set tcp-send { buffer = big  snaplen = 128 }\n"
	"probe-set tcp-recv {}\n"
	"probe rd {\n"
	"\tkind = kretprobe\n"
	"\ttarget = \"vfs_read\"\n"
	"\targs = 3\n"
	"\tid-arg = 2\n"
	"\tbuffer = tiny\n"
	"\tsnaplen = 256\n"
	"\tsample-every = 10\n"
	"\tsample-interval = 1000000\n"
	"\tfilter {\n"
	"\t\taction = exclude\n"
	"\t\tcpus = {0, 9, # a comment inside a list\n"
	"\t\t\t255}\n"
	"\t\ttgids = {1, 4294967295}\n"
	"\t\ttid = 42\n"
	"\t\tid-min = 0xffff888000000000\n"
	"\t\tid-max = 18446744073709551615\n"
	"\t}\n"
	"\tfilter { tid = 7 }\n"
	"}\n"
	"probe sw { kind = tracepoint  target = sched_switch  args = 5 }\n"
	"probe kp { kind = kprobe  target = \"tcp_sendmsg+0x10\" }\n"
	"probe ex { predef = \"process_exit\"  buffer = default }\n"
	"latency tx {\n"
	"\tstart = \"tcp-send.socket\"\n"
	"\tend = \"tcp-send.dev-xmit\"\n"
	"\tkey = sock\n"
	"\ttimeout = 5\n"
	"\tmax-pending = 16\n"
	"}\n"
	"latency rx { start = tcp-recv.dev-recv  end = tcp-recv.tcp6  key = skb }\n"
	"latency rd2 { start = rd  end = sw  key = id }\n";

static void test_full(void)
{
	static const uint8_t cpus[32] = { [0] = 0x01, [1] = 0x02, [31] = 0x80 };
	const struct config_latency *l;
	const struct filter_rule *f;
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg = load("full.conf", full_conf);

	if (!check(cfg, "full: every option loads")) {
		show_err();
		return;
	}
	check(!strcmp(cfg->socket.path, "/tmp/m.sock") &&
	      cfg->socket.mode == 0600 &&
	      !strcmp(cfg->socket.group, "root") &&
	      cfg->socket.max_clients == 8 &&
	      cfg->socket.client_queue == 0x10000, "full: socket");
	check(cfg->metrics.interval_s == 2 && cfg->metrics.window_s == 60 &&
	      cfg->metrics.top_tgids == 3 && cfg->metrics.max_tgids == 100,
	      "full: metrics");

	b = cfg->buffers;
	check(cfg->nbuffers == 2 && !strcmp(b[0].name, "big") &&
	      b[0].size == 4194304 && b[0].mode == MAGNET_BUFFER_OVERWRITE &&
	      b[0].size_wm == 8192 && b[0].count_wm == 10 &&
	      b[0].timeout_us == 250000, "full: buffer big");
	check(cfg->nbuffers == 2 && !strcmp(b[1].name, "tiny") &&
	      b[1].size == 4096 && b[1].mode == MAGNET_BUFFER_DROP &&
	      b[1].size_wm == 1024 && b[1].count_wm == 0 &&
	      b[1].timeout_us == 100000,
	      "full: buffer tiny, size-watermark defaults to a quarter");

	check(cfg->nsets == 2 && !strcmp(cfg->sets[0].set, "tcp-send") &&
	      !strcmp(cfg->sets[0].buffer, "big") &&
	      cfg->sets[0].snaplen == 128 &&
	      !strcmp(cfg->sets[1].set, "tcp-recv") &&
	      !strcmp(cfg->sets[1].buffer, "default") &&
	      cfg->sets[1].snaplen == 0, "full: probe-sets");

	p = cfg->probes;
	if (!check(cfg->nprobes == 4, "full: 4 probes"))
		goto out;
	check(!strcmp(p[0].name, "rd") && !p[0].predef[0] &&
	      p[0].kind == MAGNET_PROBE_KRETPROBE &&
	      !strcmp(p[0].target, "vfs_read") && p[0].args == 3 &&
	      p[0].id_arg == 2 && !strcmp(p[0].buffer, "tiny") &&
	      p[0].snaplen == 256 && p[0].sample_every == 10 &&
	      p[0].sample_interval_ns == 1000000 && p[0].nfilters == 2,
	      "full: probe rd");
	f = p[0].filters;
	check(p[0].nfilters == 2 && f[0].action == MAGNET_FILTER_EXCLUDE &&
	      f[0].cpus_len == 32 && !memcmp(f[0].cpus, cpus, sizeof(cpus)) &&
	      f[0].tgids == 2 && f[0].tgid[0] == 1 &&
	      f[0].tgid[1] == 4294967295u && f[0].tid == 42 &&
	      (f[0].given & (1ULL << MAGNET_A_FILTER_ID_MIN)) &&
	      f[0].id_min == 0xffff888000000000ull &&
	      f[0].id_max == UINT64_MAX && !f[0].type,
	      "full: filter 1, every predicate");
	/* no action given: include, as the kernel's default */
	check(p[0].nfilters == 2 && f[1].action < 0 && !f[1].cpus_len &&
	      !f[1].tgids && f[1].tid == 7 &&
	      (f[1].given & (1ULL << MAGNET_A_FILTER_TID)) &&
	      !(f[1].given & (1ULL << MAGNET_A_FILTER_ID_MIN)),
	      "full: filter 2, tid only");
	check(!strcmp(p[1].name, "sw") &&
	      p[1].kind == MAGNET_PROBE_TRACEPOINT &&
	      !strcmp(p[1].target, "sched_switch") && p[1].args == 5 &&
	      !strcmp(p[1].buffer, "default") && !p[1].nfilters &&
	      !p[1].filters, "full: probe sw, tracepoint");
	check(!strcmp(p[2].name, "kp") && p[2].kind == MAGNET_PROBE_KPROBE &&
	      !strcmp(p[2].target, "tcp_sendmsg+0x10"),
	      "full: probe kp, kprobe at an offset");
	check(!strcmp(p[3].name, "ex") &&
	      !strcmp(p[3].predef, "process_exit") && !p[3].target[0],
	      "full: probe ex, predefined");

	l = cfg->latencies;
	if (!check(cfg->nlatencies == 3, "full: 3 latencies"))
		goto out;
	check(!strcmp(l[0].name, "tx") &&
	      !strcmp(l[0].start, "tcp-send.socket") &&
	      !strcmp(l[0].end, "tcp-send.dev-xmit") &&
	      l[0].key == METRICS_KEY_SOCK && l[0].timeout_ns == 5000000 &&
	      l[0].max_pending == 16, "full: latency tx");
	check(!strcmp(l[1].start, "tcp-recv.dev-recv") &&
	      !strcmp(l[1].end, "tcp-recv.tcp6") &&
	      l[1].key == METRICS_KEY_SKB && l[1].timeout_ns == 1000000000 &&
	      l[1].max_pending == 4096, "full: latency rx, defaults");
	check(!strcmp(l[2].start, "rd") && !strcmp(l[2].end, "sw") &&
	      l[2].key == METRICS_KEY_ID, "full: latency rd2, between probes");
out:
	config_free(cfg);
}

/* --- defaults -------------------------------------------------------------- */

static void test_defaults(void)
{
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg;

	cfg = load("empty.conf", "");
	if (check(cfg, "defaults: an empty file loads")) {
		check(!strcmp(cfg->socket.path, "/run/magnetd.sock") &&
		      cfg->socket.mode == 0660 && !cfg->socket.group[0] &&
		      cfg->socket.max_clients == 64 &&
		      cfg->socket.client_queue == 262144,
		      "defaults: socket");
		check(cfg->metrics.interval_s == 1 &&
		      cfg->metrics.window_s == 10 &&
		      cfg->metrics.top_tgids == 5 &&
		      cfg->metrics.max_tgids == 1024, "defaults: metrics");
		check(!cfg->prometheus.enable &&
		      !strcmp(cfg->prometheus.address, "127.0.0.1") &&
		      cfg->prometheus.port == 9737 &&
		      cfg->prometheus.max_clients == 8 &&
		      cfg->prometheus.timeout_s == 10 &&
		      cfg->prometheus.request_timeout_s == 10 &&
		      !cfg->prometheus.per_cpu &&
		      !cfg->prometheus.web_config[0],
		      "defaults: prometheus off, 127.0.0.1:9737, 8 clients, 10 s, 10 s, "
		      "no web configuration");
		check(!cfg->nbuffers && !cfg->nsets && !cfg->nprobes &&
		      !cfg->nlatencies && !cfg->buffers && !cfg->probes,
		      "defaults: nothing installed, no \"default\" buffer listed");
	}
	config_free(cfg);

	cfg = load("minimal.conf",
		   "buffer b {}\n"
		   "probe p { predef = sched_switch }\n"
		   "probe g { kind = kprobe\n target = f }\n"
		   "latency l { start = p\n end = g }\n"
		   "probe-set udp-recv {}\n");
	if (!check(cfg, "defaults: minimal sections load")) {
		show_err();
		return;
	}
	b = cfg->buffers;
	check(cfg->nbuffers == 1 && b[0].size == 262144 &&
	      b[0].mode == MAGNET_BUFFER_DROP && b[0].size_wm == 65536 &&
	      b[0].count_wm == 0 && b[0].timeout_us == 100000,
	      "defaults: buffer 256 KiB, drop, 64 KiB watermark, 100 ms");
	p = cfg->probes;
	check(cfg->nprobes == 2 && !strcmp(p[0].buffer, "default") &&
	      !p[0].args && !p[0].id_arg && !p[0].snaplen &&
	      !p[0].sample_every && !p[0].sample_interval_ns &&
	      !p[0].nfilters && !p[0].target[0],
	      "defaults: probe into \"default\", all kept");
	check(cfg->nprobes == 2 && p[1].kind == MAGNET_PROBE_KPROBE &&
	      !p[1].predef[0], "defaults: generic probe");
	check(cfg->nlatencies == 1 && cfg->latencies[0].key == METRICS_KEY_ID &&
	      cfg->latencies[0].timeout_ns == 1000000000 &&
	      cfg->latencies[0].max_pending == 4096,
	      "defaults: latency by id, 1 s, 4096 pending");
	check(cfg->nsets == 1 && !strcmp(cfg->sets[0].buffer, "default") &&
	      !cfg->sets[0].snaplen, "defaults: probe-set into \"default\"");
	config_free(cfg);

	cfg = load("default.conf",
		   "buffer default { size = 8192 timeout = 0 }\n"
		   "probe p { predef = x  buffer = default }\n");
	check(cfg && cfg->nbuffers == 1 &&
	      !strcmp(cfg->buffers[0].name, "default") &&
	      cfg->buffers[0].size_wm == 2048 && !cfg->buffers[0].timeout_us,
	      "defaults: buffer default may be declared");
	config_free(cfg);
}

/* --- errors ---------------------------------------------------------------- */

static void test_syntax_errors(void)
{
	static const char nul[] = "socket {\n}\n\0\n";

	expect_error("syntax", "socket {\n\tpath =\n}\n", 3,
		     "unexpected token '}'");
	expect_error("syntax after comments",
		     "# one\n// two\n/* three\n four */\nmetrics {\n"
		     "\tinterval 5\n}\n", 6, "missing equal sign");
	expect_error("extra brace", "socket {\n}\n}\n", 3,
		     "unexpected closing brace");
	expect_error("missing brace", "metrics {\n\tinterval = 2\n"
		     "buffer b {\n}\n", 1, "'{' is not closed");
	expect_error("open string", "socket {\n\tpath = \"/x\n}\n", 2,
		     "string is not closed");
	expect_error("open comment", "socket {\n}\n\n/* open\n", 4,
		     "comment is not closed");
	expect_error("section without title", "\nbuffer {}\n", 2,
		     "missing title");
	expect_error("not an integer", "\n\nbuffer b {\n\tsize = 1M\n}\n", 4,
		     "invalid integer value for option 'size'");
	expect_error("id not an integer",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tid-min = 1\n\t\tid-max = -1\n\t}\n}\n", 5,
		     "not an integer");
	expect_error_len("NUL byte", nul, sizeof(nul) - 1, 3, "NUL byte");
}

/* web-config: a file name, relative to magnetd.conf's directory */
static void test_web_config(void)
{
	char want[PATH_MAX + 16], text[400];
	struct config *cfg;

	cfg = load("web.conf", "prometheus {\n\tweb-config = \"web.yml\"\n}\n");
	snprintf(want, sizeof(want), "%s/web.yml", tmpdir);
	check(cfg && !strcmp(cfg->prometheus.web_config, want),
	      "prometheus: a relative web-config is taken from magnetd.conf's "
	      "directory");
	config_free(cfg);
	cfg = load("web.conf", "prometheus {\n\tweb-config = \"/etc/w.yml\"\n}\n");
	check(cfg && !strcmp(cfg->prometheus.web_config, "/etc/w.yml"),
	      "prometheus: an absolute web-config as it is");
	config_free(cfg);
	snprintf(text, sizeof(text), "prometheus {\n\tweb-config = \"/%0300d\"\n}\n",
		 0);
	expect_error("prometheus: web-config too long", text, 2,
		     "web-config is 301 bytes long, at most 255");
	snprintf(text, sizeof(text), "prometheus {\n\tweb-config = \"%0250d\"\n}\n",
		 0);
	expect_error("prometheus: web-config too long with the directory",
		     text, 2, "is more than 255 bytes long");
}

static void test_prometheus(void)
{
	struct config *cfg;

	cfg = load("prom.conf", "prometheus {\n\tenable = true\n"
		   "\taddress = \"::\"\n\tport = 9100\n\tmax-clients = 2\n"
		   "\ttimeout = 30\n\trequest-timeout = 60\n"
		   "\tper-cpu = yes\n}\n");
	check(cfg && cfg->prometheus.enable &&
	      !strcmp(cfg->prometheus.address, "::") &&
	      cfg->prometheus.port == 9100 &&
	      cfg->prometheus.max_clients == 2 &&
	      cfg->prometheus.timeout_s == 30 &&
	      cfg->prometheus.request_timeout_s == 60 &&
	      cfg->prometheus.per_cpu,
	      "prometheus: every option read (an IPv6 address)");
	config_free(cfg);
	expect_error("prometheus: a host name", "prometheus {\n"
		     "\taddress = \"localhost\"\n}\n", 2,
		     "address 'localhost' is not a numeric IPv4 or IPv6 address");
	expect_error("prometheus: port 0", "prometheus {\n\tport = 0\n}\n", 2,
		     "port 0 out of range 1..65535");
	expect_error("prometheus: port 65536",
		     "\nprometheus {\n\tport = 65536\n}\n", 3,
		     "port 65536 out of range 1..65535");
	expect_error("prometheus: no clients",
		     "prometheus {\n\tmax-clients = 0\n}\n", 2,
		     "max-clients 0 out of range 1..1024");
	expect_error("prometheus: no time for a request",
		     "prometheus {\n\trequest-timeout = 0\n}\n", 2,
		     "request-timeout 0 out of range 1..3600");
	expect_error("prometheus: request-timeout over an hour",
		     "prometheus {\n\trequest-timeout = 3601\n}\n", 2,
		     "request-timeout 3601 out of range 1..3600");
	expect_error("prometheus: enable is a boolean",
		     "prometheus {\n\tenable = maybe\n}\n", 2, "enable");
	test_web_config();
}

static void test_unknown(void)
{
	expect_error("unknown option", "# x\nsocket {\n\tpaht = \"/x\"\n}\n",
		     3, "socket: no such option 'paht'");
	expect_error("unknown section", "\n\n\nbufer b {}\n", 4,
		     "no such option 'bufer'");
	expect_error("unknown option in a filter",
		     "probe p { predef = x\n\tfilter {\n\t\tpid = 4\n\t}\n}\n",
		     3, "probe 'p': filter 1: no such option 'pid'");
	expect_error("hidden option is unknown too",
		     "buffer b {\n\t\"(start)\" = {3}\n}\n", 2,
		     "no such option '(start)'");
	expect_error("include() is not supported",
		     "include(\"/etc/passwd\")\n", 1, "no such option 'include'");
	expect_error("duplicate buffer", "buffer b {}\n# again\nbuffer b {}\n",
		     3, "duplicate title 'b'");
	expect_error("duplicate probe-set",
		     "probe-set udp-send {}\nprobe-set udp-send {}\n", 2,
		     "duplicate title 'udp-send'");
}

static void test_names(void)
{
	expect_error("name all digits", "buffer 123 {}\n", 1,
		     "buffer '123': bad name '123' (not all digits)");
	expect_error("name with a space", "\nprobe \"a b\" { predef = x }\n",
		     2, "bad name 'a b'");
	expect_error("name with a slash", "latency a/b { start = x end = y }\n",
		     1, "bad name 'a/b'");
	expect_error("name of 32 bytes",
		     "buffer abcdefghijklmnopqrstuvwxyz012345 {}\n", 1,
		     "bad name");
	expect_error("name ..", "buffer .. {}\n", 1, "bad name '..'");
	expect_error("empty name", "buffer \"\" {}\n", 1, "bad name ''");
	expect_error("buffer reference", "probe p {\n\tpredef = x\n"
		     "\tbuffer = \"a:b\"\n}\n", 3, "buffer: bad name 'a:b'");
	check(config_set_known("udp-send") && config_set_known("tcp-recv") &&
	      !config_set_known("udp") && !config_set_known("udp-send.ip") &&
	      !config_set_known(""), "config_set_known() knows the four sets");
}

static void test_socket_metrics(void)
{
	char conf[512];

	expect_error("empty path", "socket {\n\tpath = \"\"\n}\n", 2,
		     "path is empty");
	snprintf(conf, sizeof(conf), "socket {\n\tpath = \"/%0107d\"\n}\n", 0);
	expect_error("path of 108 bytes", conf, 2, "at most 107");
	snprintf(conf, sizeof(conf), "socket {\n\tpath = \"/%0106d\"\n}\n", 0);
	{
		struct config *cfg = load("path.conf", conf);

		check(cfg && strlen(cfg->socket.path) == 107,
		      "path of 107 bytes is fine");
		config_free(cfg);
	}
	expect_error("mode not octal", "socket {\n\tmode = \"0968\"\n}\n", 2,
		     "mode '0968' is not an octal mode");
	expect_error("mode too big", "socket {\n\tmode = 01000\n}\n", 2,
		     "not an octal mode");
	expect_error("mode a word", "socket {\n\tmode = rw\n}\n", 2,
		     "not an octal mode");
	snprintf(conf, sizeof(conf), "socket {\n\tgroup = g%063d\n}\n", 0);
	expect_error("group of 64 bytes", conf, 2, "at most 63");
	expect_error("a group that does not exist",
		     "socket {\n\tgroup = no-such-group-here\n}\n", 2,
		     "group \"no-such-group-here\": no such group");
	expect_error("max-clients 0", "socket {\n\tmax-clients = 0\n}\n", 2,
		     "max-clients 0 out of range");
	expect_error("client-queue below 4096",
		     "socket {\n\tclient-queue = 4095\n}\n", 2,
		     "client-queue 4095 out of range 4096..");
	expect_error("interval 0", "metrics {\n\tinterval = 0\n}\n", 2,
		     "interval 0 out of range 1..3600");
	expect_error("window over an hour", "metrics {\n\twindow = 3601\n}\n",
		     2, "window 3601 out of range");
	expect_error("window below interval",
		     "metrics {\n\twindow = 5\n\tinterval = 6\n}\n", 3,
		     "window 5 is shorter than interval 6");
	expect_error("top-tgids above max-tgids",
		     "metrics {\n\ttop-tgids = 20\n\tmax-tgids = 10\n}\n", 3,
		     "top-tgids 20 exceeds max-tgids 10");
}

static void test_buffers(void)
{
	expect_error("size not a power of two",
		     "buffer b {\n\tsize = 12288\n}\n", 2,
		     "size 12288 is not a power of two");
	expect_error("size too small", "buffer b {\n\tsize = 2048\n}\n", 2,
		     "size 2048 out of range 4096..1073741824");
	expect_error("size too large", "buffer b {\n\tsize = 0x80000000\n}\n",
		     2, "size 2147483648 out of range");
	expect_error("bad mode", "buffer b {\n\tmode = wrap\n}\n", 2,
		     "mode 'wrap': expected drop or overwrite");
	expect_error("size-watermark above size",
		     "buffer b {\n\tsize = 8192\n\tsize-watermark = 16384\n}\n",
		     3, "size-watermark 16384 exceeds size 8192");
	expect_error("count-watermark above size / 40",
		     "buffer b {\n\tcount-watermark = 103\n\tsize = 4096\n}\n", 3,
		     "count-watermark 103 exceeds size / 40 = 102");
	expect_error("timeout above an hour",
		     "buffer b {\n\ttimeout = 3600001\n}\n", 2,
		     "timeout 3600001 out of range 0..3600000");
	expect_error("probe into an undeclared buffer",
		     "buffer a {}\nprobe p {\n\tpredef = x\n\tbuffer = b\n}\n", 4,
		     "probe 'p': buffer 'b' is not declared");
	expect_error("set into an undeclared buffer",
		     "probe-set udp-send {\n\tbuffer = net\n}\n", 2,
		     "buffer 'net' is not declared");
}

static void test_probes(void)
{
	expect_error("no predef, no kind", "probe p {\n\tsnaplen = 4\n}\n", 1,
		     "needs predef, or kind and target");
	expect_error("predef and kind",
		     "probe p {\n\tpredef = x\n\tkind = kprobe\n}\n", 3,
		     "predef excludes kind and target");
	expect_error("kind without target",
		     "probe p {\n\tkind = kprobe\n}\n", 2, "kind needs a target");
	expect_error("target without kind", "probe p {\n\ttarget = f\n}\n", 2,
		     "target needs a kind");
	expect_error("bad kind", "probe p {\n\tkind = uprobe\n\ttarget = f\n}\n",
		     2, "kind 'uprobe': expected kprobe, kretprobe or tracepoint");
	expect_error("target with a space",
		     "probe p {\n\tkind = kprobe\n\ttarget = \"a b\"\n}\n", 3,
		     "bad target 'a b'");
	expect_error("7 args", "probe p {\n\tkind = kprobe\n\ttarget = f\n"
		     "\targs = 7\n}\n", 4, "args 7 out of range 0..6");
	expect_error("tracepoint with 6 args",
		     "probe p {\n\tkind = tracepoint\n\ttarget = t\n"
		     "\targs = 6\n}\n", 4, "a tracepoint records at most 5 args");
	expect_error("id-arg above args", "probe p {\n\tkind = kprobe\n"
		     "\ttarget = f\n\targs = 1\n\tid-arg = 2\n}\n", 5,
		     "id-arg 2 exceeds args 1");
	expect_error("args on a predef", "probe p {\n\tpredef = x\n"
		     "\targs = 1\n}\n", 3, "not for predef probes");
	expect_error("snaplen above 65536",
		     "probe p {\n\tpredef = x\n\tsnaplen = 65537\n}\n", 3,
		     "snaplen 65537 out of range 0..65536");
	expect_error("sample-every above u32",
		     "probe p {\n\tpredef = x\n\tsample-every = 4294967296\n}\n",
		     3, "sample-every 4294967296 out of range");
	expect_error("sample-interval above an hour",
		     "probe p {\n\tpredef = x\n"
		     "\tsample-interval = 3600000000001\n}\n", 3,
		     "sample-interval 3600000000001 out of range");
	expect_error("unknown probe set", "\nprobe-set udp {}\n", 2,
		     "no probe set 'udp' (known: udp-send, tcp-send, udp-recv, tcp-recv)");
	expect_error("probe named as a set layer",
		     "probe udp-send.ip {\n\tpredef = x\n}\n", 1,
		     "probe 'udp-send.ip': name is reserved for a layer of probe-set udp-send");
}

static void test_filters(void)
{
	char *conf, *p;
	int i;

	expect_error("filter without predicate",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\taction = include\n"
		     "\t}\n}\n", 3, "probe 'p': filter 1: no predicate");
	expect_error("tid 0 is no predicate",
		     "probe p {\n\tpredef = x\n\tfilter { tgids = {1} }\n"
		     "\tfilter { tid = 0 }\n}\n", 4, "filter 2: no predicate");
	expect_error("id-min without id-max",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\tid-min = 4\n"
		     "\t}\n}\n", 4, "id-min needs id-max");
	expect_error("id-min above id-max",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\tid-min = 4\n"
		     "\t\tid-max = 3\n\t}\n}\n", 5, "id-min 4 exceeds id-max 3");
	expect_error("cpu 8192", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tcpus = {1, 8192}\n\t}\n}\n", 4,
		     "cpu 8192 out of range 0..8191");
	expect_error("bad action", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 1\n\t\taction = drop\n\t}\n}\n", 5,
		     "filter 1: action 'drop': expected include or exclude");
	expect_error("tid above u32", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 4294967296\n\t}\n}\n", 4, "tid 4294967296 out of range");

	/* the rule's words: magnetctl filter add's */
	expect_error("rule: unknown word", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"header proto udp colour red\"\n\t}\n}\n", 4,
		     "filter 1: rule: unknown keyword \"colour\"");
	expect_error("rule: a type's word without the type",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"dport 53\"\n\t}\n}\n", 4,
		     "rule: \"dport\" goes after \"header\"");
	expect_error("rule: bad value", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"header src 10.0.0.300\"\n\t}\n}\n", 4,
		     "rule: bad address \"10.0.0.300\" after \"src\"");
	expect_error("rule: a bad expression (libpcap's message)",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"packet udp port\"\n\t}\n}\n", 4,
		     "rule: packet: can't parse filter expression: syntax error");
	expect_error("rule: the old packet words, with the way to say them now",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"packet proto udp dport 53\"\n\t}\n}\n", 4,
		     "the rule in these words is \"header proto udp dport 53\"");
	expect_error("rule: tid both ways", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 3\n\t\trule = \"tid 4\"\n\t}\n}\n", 5,
		     "rule: \"tid\" given twice");
	expect_error("rule: correlate ends where it starts",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end p\"\n\t}\n}\n", 4,
		     "the end probe \"p\" is the start probe");
	expect_error("rule: correlate is exclude",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\taction = include\n\t\trule = \"correlate end q\"\n\t}\n}\n", 5,
		     "a correlate rule is an exclude rule");
	expect_error("rule: an id range both ways",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tid-min = 1\n\t\tid-max = 5\n\t\trule = \"id 7,8\"\n\t}\n}\n", 6,
		     "rule: \"id\" given twice");
	expect_error("rule: correlate names a probe magnetd does not have",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end nosuch\"\n\t}\n}\n", 4,
		     "rule 'nosuch' is not a configured probe or probe-set layer");
	expect_error("rule: correlate names a layer of a set not configured",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end tcp-recv.app\"\n\t}\n}\n", 4,
		     "rule 'tcp-recv.app' needs probe-set tcp-recv");
	expect_error("rule: a value missing", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"id\"\n\t}\n}\n", 4,
		     "missing value after \"id\"");

	/* 257 tgids on line 3 */
	conf = malloc(8192);
	p = conf + sprintf(conf, "probe p {\n\tpredef = x\n\tfilter { tgids = {1");
	for (i = 2; i <= MAGNET_FILTER_SET_MAX + 1; i++)
		p += sprintf(p, ", %d", i);
	strcpy(p, "} }\n}\n");
	expect_error("257 tgids", conf, 3, "257 tgids, at most 256");

	/* 65 filters, one a line from line 2: the 65th on line 66 */
	p = conf + sprintf(conf, "probe p { predef = x\n");
	for (i = 0; i <= CONFIG_FILTER_MAX; i++)
		p += sprintf(p, "\tfilter { tid = %d }\n", i + 1);
	strcpy(p, "}\n");
	expect_error("65 filters", conf, 66, "more than 64 filters");
	free(conf);
}

/* Every filter the kernel has, from the rule's words. */
static void test_filter_rules(void)
{
	static const char conf[] =
		"probe-set udp-send {}\n"
		"probe p {\n"
		"\tpredef = x\n"
		"\tfilter { rule = \"exclude header proto udp dst 10.1.0.0/16 dport 53\" }\n"
		"\tfilter { rule = \"id 0x10,0x20,30 cpu 0-3,4095\" }\n"
		"\tfilter { rule = \"correlate end udp-send.dev-xmit via udp-send.ip threshold 1.5ms window 2s max-open 9\" }\n"
		"\tfilter { action = exclude  tgids = {7}  rule = \"tgid 8,9 cpu 8191\" }\n"
		"\tfilter { rule = \"cpu 1 packet udp dst port 53 and (ip[8] < 10 or ip6)\" }\n"
		"}\n";
	struct config *cfg = load("rules.conf", conf);
	const struct filter_rule *f;

	if (!check(cfg && cfg->nprobes == 1 && cfg->probes[0].nfilters == 5,
		   "rules: five filters from words"))
		return;
	f = cfg->probes[0].filters;
	check(f[0].action == MAGNET_FILTER_EXCLUDE && f[0].type &&
	      !strcmp(f[0].type->name, "header") && !f[0].cpus_len,
	      "rules: header, with its action");
	check(f[4].action < 0 && f[4].type &&
	      !strcmp(f[4].type->name, "packet") && f[4].cpus_len &&
	      !strcmp((const char *)f[4].state,
		      "udp dst port 53 and (ip[8] < 10 or ip6)"),
	      "rules: packet, every word after it the expression");
	check(f[1].action < 0 && !f[1].type && f[1].ids == 3 &&
	      f[1].id[0] == 0x10 && f[1].id[1] == 0x20 && f[1].id[2] == 30 &&
	      f[1].cpus_len == 4095 / 8 + 1 && (f[1].cpus[0] & 0x0f) == 0x0f &&
	      cpu_in_map(f[1].cpus, 4095) && !cpu_in_map(f[1].cpus, 4),
	      "rules: an id set and CPUs beyond 255");
	check(f[2].type && !strcmp(f[2].type->name, "correlate") &&
	      f[2].action < 0 && f[2].type->default_action ==
	      MAGNET_FILTER_EXCLUDE, "rules: correlate, exclude by default");
	check(f[3].action == MAGNET_FILTER_EXCLUDE && f[3].tgids == 3 &&
	      f[3].tgid[0] == 7 && f[3].tgid[1] == 8 && f[3].tgid[2] == 9 &&
	      f[3].cpus_len == 1024 && cpu_in_map(f[3].cpus, 8191),
	      "rules: options and words add up");
	config_free(cfg);
}

static void test_latencies(void)
{
	expect_error("start is end", "probe p { predef = x }\nlatency l {\n"
		     "\tstart = p\n\tend = p\n}\n", 4,
		     "start and end are the same event 'p'");
	expect_error("start unknown", "probe p { predef = x }\nlatency l {\n"
		     "\tstart = q\n\tend = p\n}\n", 3,
		     "latency 'l': start 'q' is not a configured probe or probe-set layer");
	expect_error("layer of a set not configured",
		     "probe-set udp-send {}\nlatency l {\n\tstart = udp-send.socket\n"
		     "\tend = udp-recv.app\n}\n", 4,
		     "end 'udp-recv.app' needs probe-set udp-recv");
	expect_error("no such layer",
		     "probe-set udp-send {}\nlatency l {\n\tstart = udp-send.socket\n"
		     "\tend = udp-send.tcp\n}\n", 4,
		     "end 'udp-send.tcp' is not a configured probe or probe-set layer");
	expect_error("missing end", "probe p { predef = x }\n\nlatency l {\n"
		     "\tstart = p\n}\n", 3, "latency 'l': needs end");
	expect_error("bad key", "probe p { predef = x }\nprobe q { predef = y }\n"
		     "latency l {\n\tstart = p\n\tend = q\n\tkey = pid\n}\n", 6,
		     "key 'pid': expected id, sock or skb");
	expect_error("timeout 0", "latency l {\n\ttimeout = 0\n}\n", 2,
		     "timeout 0 out of range 1..3600000");
	expect_error("max-pending 0", "latency l {\n\tmax-pending = 0\n}\n", 2,
		     "max-pending 0 out of range");
	expect_error("latency named as an event",
		     "probe p { predef = x }\nprobe q { predef = y }\n"
		     "latency p {\n\tstart = p\n\tend = q\n}\n", 3,
		     "latency 'p': name in use by an event");
}

/* Independent errors of every pass, all reported, in the file's order. */
static void test_many_errors(void)
{
	static const char conf[] =
		"socket {\n"				/* 1 */
		"\tmode = 999\n"			/* 2 */
		"}\n"					/* 3 */
		"buffer b {\n"				/* 4 */
		"\tsize = 1000\n"			/* 5 */
		"}\n"					/* 6 */
		"probe p {\n"				/* 7 */
		"\tbuffer = c\n"			/* 8 */
		"}\n"					/* 9 */
		"latency l {\n"				/* 10 */
		"\tstart = p\n"				/* 11 */
		"\tend = p\n"				/* 12 */
		"\tkey = sideways\n"			/* 13 */
		"}\n";					/* 14 */
	static const int lines[] = { 2, 5, 7, 8, 12, 13 };
	const char *path = write_conf("many.conf", conf), *at, *prev = err;
	struct config *cfg = config_load(path, err, sizeof(err));
	bool in_order = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		at = err_line_at(path, lines[i]);
		in_order = in_order && at && at >= prev;
		prev = at ? at : prev;
	}
	if (!check(!cfg && err_lines() == 6 && in_order,
		   "six errors of all passes, all reported, in line order"))
		show_err();
	config_free(cfg);
}

static void test_files(void)
{
	static const char missing[] =
		"/nonexistent/magnetd.conf: cannot open: No such file or directory\n";
	const char *path;
	char small[48];
	struct config *cfg;

	snprintf(err, sizeof(err), "junk");
	cfg = config_load("/nonexistent/magnetd.conf", err, sizeof(err));
	check(!cfg && !strcmp(err, missing),
	      "missing file: \"FILE: cannot open: No such file or directory\"");
	cfg = config_load(tmpdir, err, sizeof(err));
	check(!cfg && err_line_at(tmpdir, 0) &&
	      strstr(err, "cannot read: Is a directory"),
	      "a directory is refused");

	path = write_conf("trunc.conf",
			  "buffer 1 {}\nbuffer 2 {}\nbuffer 3 {}\n");
	memset(small, 'x', sizeof(small));
	cfg = config_load(path, small, 40);
	check(!cfg && strlen(small) == 39 && small[38] == '\n' &&
	      small[40] == 'x', "a small err buffer is cut safely");
	cfg = config_load(path, NULL, 0);
	check(!cfg, "no err buffer: still refused");
	cfg = config_load(path, small, 1);
	check(!cfg && !small[0], "a one-byte err buffer is left empty");

	/* the scanner carries nothing from a failed load to the next */
	expect_error("open string before a good load", "socket { path = \"x\n",
		     1, "string is not closed");
	cfg = load("good.conf", "socket {\n\tpath = /good\n}\n");
	check(cfg && !strcmp(cfg->socket.path, "/good"),
	      "a good file loads after failed ones");
	config_free(cfg);
	config_free(NULL);
	check(true, "config_free(NULL)");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s TOPDIR\n", argv[0]);
		return 2;
	}
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	atexit(remove_tmpdir);

	test_shipped(argv[1]);
	test_full();
	test_defaults();
	test_syntax_errors();
	test_unknown();
	test_prometheus();
	test_names();
	test_socket_metrics();
	test_buffers();
	test_probes();
	test_filters();
	test_filter_rules();
	test_latencies();
	test_many_errors();
	test_files();

	return harness_summary();
}

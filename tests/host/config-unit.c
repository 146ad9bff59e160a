// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of magnetd's configuration loader (magnetd/config.c):
 * the shipped conf/magnetd.conf, a file using every option, the
 * defaults, and the errors with their "FILE:LINE:" and wording.
 *
 * Tests on tests/harness.h, each with FIXTURE(config): a temporary
 * directory for its files, removed after it, and the loader's error
 * text. The shipped file is found under SRCDIR, the source tree.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
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

#ifndef SRCDIR
#define SRCDIR		"."
#endif

FIXTURE(config) {
	char dir[32];
	char err[ERR_SIZE];
};

FIXTURE_SETUP(config)
{
	strcpy(self->dir, "/tmp/config-unit.XXXXXX");
	ASSERT_TRUE(mkdtemp(self->dir)) TH_LOG("mkdtemp: %s", strerror(errno));
}

FIXTURE_TEARDOWN(config)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir = opendir(self->dir);

	if (!dir)
		return;
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", self->dir,
				 d->d_name);
			unlink(path);
		}
	closedir(dir);
	rmdir(self->dir);
}

/* The error text, as comments, after a failed check. */
static void show_err(const FIXTURE_DATA(config) *self)
{
	const char *p = self->err, *nl;

	while (*p) {
		nl = strchrnul(p, '\n');
		TH_LOG("%.*s", (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/* Write @len bytes of @text to file @name of the test directory. */
static const char *write_conf_len(struct harness_test *_t,
				  FIXTURE_DATA(config) *self,
				  const char *name, const char *text,
				  size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", self->dir, name);
	f = fopen(path, "w");
	ASSERT_TRUE(f) TH_LOG("%s: %s", path, strerror(errno));
	ASSERT_EQ(fwrite(text, 1, len, f), len);
	ASSERT_EQ(fclose(f), 0);
	return path;
}

static const char *write_conf(struct harness_test *_t,
			      FIXTURE_DATA(config) *self,
			      const char *name, const char *text)
{
	return write_conf_len(_t, self, name, text, strlen(text));
}

static struct config *load(struct harness_test *_t, FIXTURE_DATA(config) *self,
			   const char *name, const char *text)
{
	return config_load(write_conf(_t, self, name, text), self->err,
			   sizeof(self->err));
}

/* A line of err that starts with "PATH:LINE: " (LINE 0: "PATH: "). */
static const char *err_line_at(const FIXTURE_DATA(config) *self,
			       const char *path, int line)
{
	char prefix[PATH_MAX + 32];
	const char *p = self->err;
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

static unsigned int err_lines(const FIXTURE_DATA(config) *self)
{
	unsigned int n = 0;
	const char *p;

	for (p = self->err; *p; p++)
		n += *p == '\n';
	return n;
}

/*
 * @text must be refused, with a message at @line (0: no line) that says
 * @phrase.
 */
static void expect_error_len(struct harness_test *_t,
			     FIXTURE_DATA(config) *self, const char *what,
			     const char *text, size_t len, int line,
			     const char *phrase)
{
	const char *path = write_conf_len(_t, self, "error.conf", text, len);
	struct config *cfg = config_load(path, self->err, sizeof(self->err));
	const char *at = err_line_at(self, path, line);

	EXPECT_FALSE(cfg) TH_LOG("%s: loaded", what);
	EXPECT_TRUE(line_has(at, phrase)) {
		TH_LOG("%s: line %d does not say \"%s\":", what, line, phrase);
		show_err(self);
	}
	config_free(cfg);
}

static void expect_error(struct harness_test *_t, FIXTURE_DATA(config) *self,
			 const char *what, const char *text, int line,
			 const char *phrase)
{
	expect_error_len(_t, self, what, text, strlen(text), line, phrase);
}

/* --- what a file's sections come to ---------------------------------------- */

/* The socket and metrics sections of a file that has none. */
static const struct config_socket default_socket = {
	.path = "/run/magnetd.sock", .mode = 0660, .max_clients = 64,
	.client_queue = 262144,
};
static const struct config_metrics default_metrics = {
	.interval_s = 1, .window_s = 10, .top_tgids = 5, .max_tgids = 1024,
};

static void expect_socket(struct harness_test *_t,
			  const struct config_socket *got,
			  const struct config_socket *want)
{
	EXPECT_STREQ(got->path, want->path);
	EXPECT_EQ(got->mode, want->mode);
	EXPECT_STREQ(got->group, want->group);
	EXPECT_EQ(got->max_clients, want->max_clients);
	EXPECT_EQ(got->client_queue, want->client_queue);
}

static void expect_metrics(struct harness_test *_t,
			   const struct config_metrics *got,
			   const struct config_metrics *want)
{
	EXPECT_EQ(got->interval_s, want->interval_s);
	EXPECT_EQ(got->window_s, want->window_s);
	EXPECT_EQ(got->top_tgids, want->top_tgids);
	EXPECT_EQ(got->max_tgids, want->max_tgids);
}

static void expect_buffer(struct harness_test *_t,
			  const struct config_buffer *got,
			  const struct config_buffer *want)
{
	EXPECT_STREQ(got->name, want->name);
	EXPECT_EQ(got->size, want->size) TH_LOG("buffer %s", want->name);
	EXPECT_EQ(got->mode, want->mode) TH_LOG("buffer %s", want->name);
	EXPECT_EQ(got->size_wm, want->size_wm) TH_LOG("buffer %s", want->name);
	EXPECT_EQ(got->count_wm, want->count_wm) TH_LOG("buffer %s", want->name);
	EXPECT_EQ(got->timeout_us, want->timeout_us)
		TH_LOG("buffer %s", want->name);
}

static void expect_latency(struct harness_test *_t,
			   const struct config_latency *got,
			   const struct config_latency *want)
{
	EXPECT_STREQ(got->name, want->name);
	EXPECT_STREQ(got->start, want->start) TH_LOG("latency %s", want->name);
	EXPECT_STREQ(got->end, want->end) TH_LOG("latency %s", want->name);
	EXPECT_EQ(got->key, want->key) TH_LOG("latency %s", want->name);
	EXPECT_EQ(got->timeout_ns, want->timeout_ns)
		TH_LOG("latency %s", want->name);
	EXPECT_EQ(got->max_pending, want->max_pending)
		TH_LOG("latency %s", want->name);
}

/* A probe with none of its options given: into "default", nothing else. */
static void expect_probe_defaults(struct harness_test *_t,
				  const struct config_probe *got)
{
	EXPECT_STREQ(got->buffer, "default") TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->args, 0) TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->id_arg, 0) TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->snaplen, 0) TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->sample_every, 0) TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->sample_interval_ns, 0) TH_LOG("probe %s", got->name);
	EXPECT_EQ(got->nfilters, 0) TH_LOG("probe %s", got->name);
}

/* --- the shipped configuration ------------------------------------------- */

TEST_F(config, shipped_file_as_documented)
{
	const char *path = SRCDIR "/conf/magnetd.conf";
	const struct config_latency *l;
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg;

	cfg = config_load(path, self->err, sizeof(self->err));
	ASSERT_TRUE(cfg) show_err(self);
	/* the file name kept */
	EXPECT_TRUE(!strcmp(cfg->file, path) || strlen(path) >= sizeof(cfg->file));
	/* socket /run/magnetd.sock 0660, 64 clients, 256 KiB; the metrics' defaults */
	expect_socket(_t, &cfg->socket, &default_socket);
	expect_metrics(_t, &cfg->metrics, &default_metrics);

	/* buffer net, 1 MiB per CPU, drop */
	b = cfg->buffers;
	ASSERT_EQ(cfg->nbuffers, 1);
	expect_buffer(_t, &b[0], &(struct config_buffer){
		.name = "net", .size = 1048576, .mode = MAGNET_BUFFER_DROP,
		.size_wm = 65536, .count_wm = 0, .timeout_us = 100000 });

	/* probe-sets udp-send, udp-recv into net, snaplen 64 */
	ASSERT_EQ(cfg->nsets, 2);
	EXPECT_STREQ(cfg->sets[0].set, "udp-send");
	EXPECT_STREQ(cfg->sets[1].set, "udp-recv");
	EXPECT_STREQ(cfg->sets[0].buffer, "net");
	EXPECT_STREQ(cfg->sets[1].buffer, "net");
	EXPECT_EQ(cfg->sets[0].snaplen, 64);
	EXPECT_EQ(cfg->sets[1].snaplen, 64);

	/* probe process_exit into default */
	p = cfg->probes;
	ASSERT_EQ(cfg->nprobes, 1);
	EXPECT_STREQ(p[0].name, "process_exit");
	EXPECT_STREQ(p[0].predef, "process_exit");
	EXPECT_STREQ(p[0].target, "");
	expect_probe_defaults(_t, &p[0]);

	/* latencies udp_send, socket to dev-xmit by sock; udp_recv, dev-recv to app by skb */
	l = cfg->latencies;
	ASSERT_EQ(cfg->nlatencies, 2);
	expect_latency(_t, &l[0], &(struct config_latency){
		.name = "udp_send", .start = "udp-send.socket",
		.end = "udp-send.dev-xmit", .key = METRICS_KEY_SOCK,
		.timeout_ns = 1000000000, .max_pending = 4096 });
	expect_latency(_t, &l[1], &(struct config_latency){
		.name = "udp_recv", .start = "udp-recv.dev-recv",
		.end = "udp-recv.app", .key = METRICS_KEY_SKB,
		.timeout_ns = 1000000000, .max_pending = 4096 });
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

TEST_F(config, every_option_read)
{
	static const uint8_t cpus[32] = { [0] = 0x01, [1] = 0x02, [31] = 0x80 };
	const struct config_latency *l;
	const struct filter_rule *f;
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg = load(_t, self, "full.conf", full_conf);

	ASSERT_TRUE(cfg) show_err(self);
	expect_socket(_t, &cfg->socket, &(struct config_socket){
		.path = "/tmp/m.sock", .mode = 0600, .group = "root",
		.max_clients = 8, .client_queue = 0x10000 });
	expect_metrics(_t, &cfg->metrics, &(struct config_metrics){
		.interval_s = 2, .window_s = 60, .top_tgids = 3,
		.max_tgids = 100 });

	/* buffers big, and tiny: its size-watermark defaults to a quarter */
	b = cfg->buffers;
	ASSERT_EQ(cfg->nbuffers, 2);
	expect_buffer(_t, &b[0], &(struct config_buffer){
		.name = "big", .size = 4194304, .mode = MAGNET_BUFFER_OVERWRITE,
		.size_wm = 8192, .count_wm = 10, .timeout_us = 250000 });
	expect_buffer(_t, &b[1], &(struct config_buffer){
		.name = "tiny", .size = 4096, .mode = MAGNET_BUFFER_DROP,
		.size_wm = 1024, .count_wm = 0, .timeout_us = 100000 });

	/* probe-sets */
	ASSERT_EQ(cfg->nsets, 2);
	EXPECT_STREQ(cfg->sets[0].set, "tcp-send");
	EXPECT_STREQ(cfg->sets[0].buffer, "big");
	EXPECT_EQ(cfg->sets[0].snaplen, 128);
	EXPECT_STREQ(cfg->sets[1].set, "tcp-recv");
	EXPECT_STREQ(cfg->sets[1].buffer, "default");
	EXPECT_EQ(cfg->sets[1].snaplen, 0);

	/* 4 probes */
	p = cfg->probes;
	ASSERT_EQ(cfg->nprobes, 4);
	/* probe rd */
	EXPECT_STREQ(p[0].name, "rd");
	EXPECT_STREQ(p[0].predef, "");
	EXPECT_EQ(p[0].kind, MAGNET_PROBE_KRETPROBE);
	EXPECT_STREQ(p[0].target, "vfs_read");
	EXPECT_EQ(p[0].args, 3);
	EXPECT_EQ(p[0].id_arg, 2);
	EXPECT_STREQ(p[0].buffer, "tiny");
	EXPECT_EQ(p[0].snaplen, 256);
	EXPECT_EQ(p[0].sample_every, 10);
	EXPECT_EQ(p[0].sample_interval_ns, 1000000);
	ASSERT_EQ(p[0].nfilters, 2);
	/* filter 1, every predicate */
	f = p[0].filters;
	EXPECT_EQ(f[0].action, MAGNET_FILTER_EXCLUDE);
	EXPECT_EQ(f[0].cpus_len, 32);
	EXPECT_EQ(memcmp(f[0].cpus, cpus, sizeof(cpus)), 0);
	EXPECT_EQ(f[0].tgids, 2);
	EXPECT_EQ(f[0].tgid[0], 1);
	EXPECT_EQ(f[0].tgid[1], 4294967295u);
	EXPECT_EQ(f[0].tid, 42);
	EXPECT_TRUE(f[0].given & (1ULL << MAGNET_A_FILTER_ID_MIN));
	EXPECT_EQ(f[0].id_min, 0xffff888000000000ull);
	EXPECT_EQ(f[0].id_max, UINT64_MAX);
	EXPECT_FALSE(f[0].type);
	/* filter 2, tid only; no action given: include, as the kernel's default */
	EXPECT_LT(f[1].action, 0);
	EXPECT_EQ(f[1].cpus_len, 0);
	EXPECT_EQ(f[1].tgids, 0);
	EXPECT_EQ(f[1].tid, 7);
	EXPECT_TRUE(f[1].given & (1ULL << MAGNET_A_FILTER_TID));
	EXPECT_FALSE(f[1].given & (1ULL << MAGNET_A_FILTER_ID_MIN));
	/* probe sw, tracepoint */
	EXPECT_STREQ(p[1].name, "sw");
	EXPECT_EQ(p[1].kind, MAGNET_PROBE_TRACEPOINT);
	EXPECT_STREQ(p[1].target, "sched_switch");
	EXPECT_EQ(p[1].args, 5);
	EXPECT_STREQ(p[1].buffer, "default");
	EXPECT_EQ(p[1].nfilters, 0);
	EXPECT_FALSE(p[1].filters);
	/* probe kp, kprobe at an offset */
	EXPECT_STREQ(p[2].name, "kp");
	EXPECT_EQ(p[2].kind, MAGNET_PROBE_KPROBE);
	EXPECT_STREQ(p[2].target, "tcp_sendmsg+0x10");
	/* probe ex, predefined */
	EXPECT_STREQ(p[3].name, "ex");
	EXPECT_STREQ(p[3].predef, "process_exit");
	EXPECT_STREQ(p[3].target, "");

	/* 3 latencies: tx; rx, the defaults; rd2, between probes */
	l = cfg->latencies;
	ASSERT_EQ(cfg->nlatencies, 3);
	expect_latency(_t, &l[0], &(struct config_latency){
		.name = "tx", .start = "tcp-send.socket",
		.end = "tcp-send.dev-xmit", .key = METRICS_KEY_SOCK,
		.timeout_ns = 5000000, .max_pending = 16 });
	expect_latency(_t, &l[1], &(struct config_latency){
		.name = "rx", .start = "tcp-recv.dev-recv",
		.end = "tcp-recv.tcp6", .key = METRICS_KEY_SKB,
		.timeout_ns = 1000000000, .max_pending = 4096 });
	expect_latency(_t, &l[2], &(struct config_latency){
		.name = "rd2", .start = "rd", .end = "sw", .key = METRICS_KEY_ID,
		.timeout_ns = 1000000000, .max_pending = 4096 });
	config_free(cfg);
}

/* --- defaults -------------------------------------------------------------- */

TEST_F(config, defaults_of_an_empty_file)
{
	struct config *cfg = load(_t, self, "empty.conf", "");

	ASSERT_TRUE(cfg) show_err(self);
	expect_socket(_t, &cfg->socket, &default_socket);
	expect_metrics(_t, &cfg->metrics, &default_metrics);
	/*
	 * prometheus off, 127.0.0.1:9737, 8 clients, 10 s, 10 s, 4 buckets
	 * per doubling, no web configuration
	 */
	EXPECT_FALSE(cfg->prometheus.enable);
	EXPECT_STREQ(cfg->prometheus.address, "127.0.0.1");
	EXPECT_EQ(cfg->prometheus.port, 9737);
	EXPECT_EQ(cfg->prometheus.max_clients, 8);
	EXPECT_EQ(cfg->prometheus.timeout_s, 10);
	EXPECT_EQ(cfg->prometheus.request_timeout_s, 10);
	EXPECT_FALSE(cfg->prometheus.per_cpu);
	EXPECT_EQ(cfg->prometheus.buckets, 4);
	EXPECT_STREQ(cfg->prometheus.web_config, "");
	/* nothing installed, no "default" buffer listed */
	EXPECT_EQ(cfg->nbuffers, 0);
	EXPECT_EQ(cfg->nsets, 0);
	EXPECT_EQ(cfg->nprobes, 0);
	EXPECT_EQ(cfg->nlatencies, 0);
	EXPECT_FALSE(cfg->buffers);
	EXPECT_FALSE(cfg->probes);
	config_free(cfg);
}

TEST_F(config, defaults_of_minimal_sections)
{
	const struct config_probe *p;
	const struct config_buffer *b;
	struct config *cfg;

	cfg = load(_t, self, "minimal.conf",
		   "buffer b {}\n"
		   "probe p { predef = sched_switch }\n"
		   "probe g { kind = kprobe\n target = f }\n"
		   "latency l { start = p\n end = g }\n"
		   "probe-set udp-recv {}\n");
	ASSERT_TRUE(cfg) show_err(self);
	/* buffer: 256 KiB, drop, 64 KiB watermark, 100 ms */
	b = cfg->buffers;
	ASSERT_EQ(cfg->nbuffers, 1);
	expect_buffer(_t, &b[0], &(struct config_buffer){
		.name = "b", .size = 262144, .mode = MAGNET_BUFFER_DROP,
		.size_wm = 65536, .count_wm = 0, .timeout_us = 100000 });
	/* probe: into "default", all kept */
	p = cfg->probes;
	ASSERT_EQ(cfg->nprobes, 2);
	expect_probe_defaults(_t, &p[0]);
	EXPECT_STREQ(p[0].target, "");
	/* a generic probe */
	EXPECT_EQ(p[1].kind, MAGNET_PROBE_KPROBE);
	EXPECT_STREQ(p[1].predef, "");
	/* latency: by id, 1 s, 4096 pending */
	ASSERT_EQ(cfg->nlatencies, 1);
	expect_latency(_t, &cfg->latencies[0], &(struct config_latency){
		.name = "l", .start = "p", .end = "g", .key = METRICS_KEY_ID,
		.timeout_ns = 1000000000, .max_pending = 4096 });
	/* probe-set: into "default" */
	ASSERT_EQ(cfg->nsets, 1);
	EXPECT_STREQ(cfg->sets[0].buffer, "default");
	EXPECT_EQ(cfg->sets[0].snaplen, 0);
	config_free(cfg);
}

TEST_F(config, buffer_default_may_be_declared)
{
	struct config *cfg;

	cfg = load(_t, self, "default.conf",
		   "buffer default { size = 8192 timeout = 0 }\n"
		   "probe p { predef = x  buffer = default }\n");
	ASSERT_TRUE(cfg) show_err(self);
	ASSERT_EQ(cfg->nbuffers, 1);
	expect_buffer(_t, &cfg->buffers[0], &(struct config_buffer){
		.name = "default", .size = 8192, .mode = MAGNET_BUFFER_DROP,
		.size_wm = 2048, .count_wm = 0, .timeout_us = 0 });
	config_free(cfg);
}

/* --- errors ---------------------------------------------------------------- */

TEST_F(config, syntax_errors_refused)
{
	static const char nul[] = "socket {\n}\n\0\n";

	expect_error(_t, self, "syntax", "socket {\n\tpath =\n}\n", 3,
		     "unexpected token '}'");
	expect_error(_t, self, "syntax after comments",
		     "# one\n// two\n/* three\n four */\nmetrics {\n"
		     "\tinterval 5\n}\n", 6, "missing equal sign");
	expect_error(_t, self, "extra brace", "socket {\n}\n}\n", 3,
		     "unexpected closing brace");
	expect_error(_t, self, "missing brace", "metrics {\n\tinterval = 2\n"
		     "buffer b {\n}\n", 1, "'{' is not closed");
	expect_error(_t, self, "open string", "socket {\n\tpath = \"/x\n}\n", 2,
		     "string is not closed");
	expect_error(_t, self, "open comment", "socket {\n}\n\n/* open\n", 4,
		     "comment is not closed");
	expect_error(_t, self, "section without title", "\nbuffer {}\n", 2,
		     "missing title");
	expect_error(_t, self, "not an integer", "\n\nbuffer b {\n\tsize = 1M\n}\n", 4,
		     "invalid integer value for option 'size'");
	expect_error(_t, self, "id not an integer",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tid-min = 1\n\t\tid-max = -1\n\t}\n}\n", 5,
		     "not an integer");
	expect_error_len(_t, self, "NUL byte", nul, sizeof(nul) - 1, 3, "NUL byte");
}

/* web-config: a file name, relative to magnetd.conf's directory */
TEST_F(config, web_config_relative_to_the_file)
{
	char want[PATH_MAX + 16], text[400];
	struct config *cfg;

	/* a relative web-config is taken from magnetd.conf's directory */
	cfg = load(_t, self, "web.conf",
		   "prometheus {\n\tweb-config = \"web.yml\"\n}\n");
	snprintf(want, sizeof(want), "%s/web.yml", self->dir);
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_STREQ(cfg->prometheus.web_config, want);
	config_free(cfg);
	/* an absolute one as it is */
	cfg = load(_t, self, "web.conf",
		   "prometheus {\n\tweb-config = \"/etc/w.yml\"\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_STREQ(cfg->prometheus.web_config, "/etc/w.yml");
	config_free(cfg);
	snprintf(text, sizeof(text), "prometheus {\n\tweb-config = \"/%0300d\"\n}\n",
		 0);
	expect_error(_t, self, "prometheus: web-config too long", text, 2,
		     "web-config is 301 bytes long, at most 255");
	snprintf(text, sizeof(text), "prometheus {\n\tweb-config = \"%0250d\"\n}\n",
		 0);
	expect_error(_t, self, "prometheus: web-config too long with the directory",
		     text, 2, "is more than 255 bytes long");
}

TEST_F(config, sampler_period_and_depth)
{
	struct config *cfg;

	cfg = load(_t, self, "sample.conf", "probe ticks {\n"
		   "\tpredef = \"cpu.sample\"\n\tperiod = 2000000\n"
		   "\tdepth = 0\n}\nprobe plain {\n\tpredef = \"cpu.sample\"\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_EQ(cfg->probes[0].period_ns, 2000000);
	EXPECT_EQ(cfg->probes[0].depth, 0);
	/* the module's: 0 for its period (1 ms), 32 frames */
	EXPECT_EQ(cfg->probes[1].period_ns, 0);
	EXPECT_EQ(cfg->probes[1].depth, MAGNET_SAMPLE_DEPTH_DEFAULT);
	config_free(cfg);
	expect_error(_t, self, "sampler: a period below the kernel timer's",
		     "probe t {\n\tpredef = \"cpu.sample\"\n"
		     "\tperiod = 50000\n}\n", 3,
		     "period 50000 out of range 100000..1000000000");
	expect_error(_t, self, "sampler: a negative period",
		     "probe t {\n\tpredef = \"cpu.sample\"\n"
		     "\tperiod = -1\n}\n", 3, "period -1 out of range");
	expect_error(_t, self, "sampler: depth 65",
		     "probe t {\n\tpredef = \"cpu.sample\"\n"
		     "\tdepth = 65\n}\n", 3, "depth 65 out of range 0..64");
	expect_error(_t, self, "sampler: a period on another probe",
		     "probe t {\n\tpredef = \"sched_switch\"\n"
		     "\tperiod = 1000000\n}\n", 3,
		     "period and depth are for a probe of predef \"cpu.sample\" only");
	expect_error(_t, self, "sampler: a depth on a kprobe",
		     "probe t {\n\tkind = kprobe\n\ttarget = \"vfs_read\"\n"
		     "\tdepth = 4\n}\n", 4,
		     "period and depth are for a probe of predef \"cpu.sample\" only");
}

TEST_F(config, prometheus_options_read_and_checked)
{
	static const int bad_buckets[] = { 3, 16, 0, -4 };
	char text[128], want[64];
	struct config *cfg;
	unsigned int i;

	/* every option read (an IPv6 address) */
	cfg = load(_t, self, "prom.conf", "prometheus {\n\tenable = true\n"
		   "\taddress = \"::\"\n\tport = 9100\n\tmax-clients = 2\n"
		   "\ttimeout = 30\n\trequest-timeout = 60\n"
		   "\tper-cpu = yes\n\tbuckets-per-doubling = 8\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_TRUE(cfg->prometheus.enable);
	EXPECT_STREQ(cfg->prometheus.address, "::");
	EXPECT_EQ(cfg->prometheus.port, 9100);
	EXPECT_EQ(cfg->prometheus.max_clients, 2);
	EXPECT_EQ(cfg->prometheus.timeout_s, 30);
	EXPECT_EQ(cfg->prometheus.request_timeout_s, 60);
	EXPECT_TRUE(cfg->prometheus.per_cpu);
	EXPECT_EQ(cfg->prometheus.buckets, 8);
	config_free(cfg);
	expect_error(_t, self, "prometheus: a host name", "prometheus {\n"
		     "\taddress = \"localhost\"\n}\n", 2,
		     "address 'localhost' is not a numeric IPv4 or IPv6 address");
	expect_error(_t, self, "prometheus: port 0", "prometheus {\n\tport = 0\n}\n", 2,
		     "port 0 out of range 1..65535");
	expect_error(_t, self, "prometheus: port 65536",
		     "\nprometheus {\n\tport = 65536\n}\n", 3,
		     "port 65536 out of range 1..65535");
	expect_error(_t, self, "prometheus: no clients",
		     "prometheus {\n\tmax-clients = 0\n}\n", 2,
		     "max-clients 0 out of range 1..1024");
	expect_error(_t, self, "prometheus: no time for a request",
		     "prometheus {\n\trequest-timeout = 0\n}\n", 2,
		     "request-timeout 0 out of range 1..3600");
	expect_error(_t, self, "prometheus: request-timeout over an hour",
		     "prometheus {\n\trequest-timeout = 3601\n}\n", 2,
		     "request-timeout 3601 out of range 1..3600");
	/* not a divisor of metrics.h's 8 per doubling */
	for (i = 0; i < ARRAY_SIZE(bad_buckets); i++) {
		snprintf(text, sizeof(text),
			 "prometheus {\n\tbuckets-per-doubling = %d\n}\n",
			 bad_buckets[i]);
		snprintf(want, sizeof(want),
			 "buckets-per-doubling %d: 1, 2, 4 or 8", bad_buckets[i]);
		expect_error(_t, self, want, text, 2, want);
	}
	expect_error(_t, self, "prometheus: enable is a boolean",
		     "prometheus {\n\tenable = maybe\n}\n", 2, "enable");
}

TEST_F(config, ledger_options_read_and_checked)
{
	char line[512], dir[256] = "", type[64], text[512];
	struct config *cfg;
	FILE *f;

	/* the defaults: magnetd leaves the ledger alone, whole paths */
	cfg = load(_t, self, "empty.conf", "");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_FALSE(cfg->ledger.enable);
	EXPECT_STREQ(cfg->ledger.cgroup_root, "/sys/fs/cgroup");
	EXPECT_EQ(cfg->ledger.cgroup_depth, 0);
	config_free(cfg);
	/* as the shipped file says */
	cfg = config_load(SRCDIR "/conf/magnetd.conf", self->err,
			  sizeof(self->err));
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_FALSE(cfg->ledger.enable);
	EXPECT_STREQ(cfg->ledger.cgroup_root, "/sys/fs/cgroup");
	EXPECT_EQ(cfg->ledger.cgroup_depth, 0);
	config_free(cfg);
	/* a root given: where this machine has cgroup2 mounted, if it has */
	f = fopen("/proc/mounts", "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", dir, type) == 2 &&
		    !strcmp(type, "cgroup2"))
			break;
		else
			dir[0] = 0;
	fclose(f);
	if (dir[0]) {
		snprintf(text, sizeof(text), "ledger {\n\tenable = true\n"
			 "\tcgroup-root = \"%s/\"\n\tcgroup-depth = 2\n}\n",
			 dir);
		cfg = load(_t, self, "ledger.conf", text);
		ASSERT_TRUE(cfg) show_err(self);
		EXPECT_TRUE(cfg->ledger.enable);
		EXPECT_EQ(strlen(cfg->ledger.cgroup_root), strlen(dir) + 1);
		EXPECT_EQ(cfg->ledger.cgroup_depth, 2);
		config_free(cfg);
	} else {
		TH_LOG("no cgroup2 mounted here: a root given not tried");
	}
	/* one where cgroup2 is not, or nothing is: refused, said why */
	expect_error(_t, self, "ledger: a root not a cgroup2 mount",
		     "ledger {\n\tcgroup-root = \"/proc\"\n}\n", 2,
		     "cgroup-root \"/proc\": not a cgroup2 file system");
	expect_error(_t, self, "ledger: a root not there",
		     "ledger {\n\tcgroup-root = \"/nonexistent/cg\"\n}\n", 2,
		     "cgroup-root \"/nonexistent/cg\": No such file or directory");
	expect_error(_t, self, "ledger: enable is a boolean",
		     "ledger {\n\tenable = maybe\n}\n", 2, "enable");
	expect_error(_t, self, "ledger: depth 65",
		     "ledger {\n\tcgroup-depth = 65\n}\n", 2,
		     "cgroup-depth 65 out of range 0..64");
	expect_error(_t, self, "ledger: a relative root",
		     "ledger {\n\tcgroup-root = \"sys/fs/cgroup\"\n}\n", 2,
		     "cgroup-root \"sys/fs/cgroup\": an absolute path");
	expect_error(_t, self, "ledger: an unknown option",
		     "ledger {\n\ton = true\n}\n", 2, "on");
}

TEST_F(config, acct_options_read_and_checked)
{
	struct config *cfg;

	/* the defaults: no process watched, a look every 10 s */
	cfg = load(_t, self, "empty.conf", "");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_EQ(cfg->acct.nprocess, 0);
	EXPECT_EQ(cfg->acct.rescan_s, 10);
	config_free(cfg);
	cfg = config_load(SRCDIR "/conf/magnetd.conf", self->err,
			  sizeof(self->err));
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_EQ(cfg->acct.nprocess, 0);
	config_free(cfg);
	cfg = load(_t, self, "acct.conf", "acct {\n\tprocess = { \"lighttpd\", "
		   "\"postgres\" }\n\trescan = 2\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_EQ(cfg->acct.nprocess, 2);
	EXPECT_STREQ(cfg->acct.process[0], "lighttpd");
	EXPECT_STREQ(cfg->acct.process[1], "postgres");
	EXPECT_EQ(cfg->acct.rescan_s, 2);
	config_free(cfg);
	expect_error(_t, self, "acct: a name longer than comm's 15",
		     "acct {\n\tprocess = { \"a-name-of-16-chr\" }\n}\n", 2,
		     "bad name 'a-name-of-16-chr'");
	expect_error(_t, self, "acct: an empty name",
		     "acct {\n\tprocess = { \"\" }\n}\n", 2, "bad name ''");
	expect_error(_t, self, "acct: nine names",
		     "acct {\n\tprocess = { \"a\", \"b\", \"c\", \"d\", \"e\", "
		     "\"f\", \"g\", \"h\", \"i\" }\n}\n", 2,
		     "9 names, more than the 8 processes");
	expect_error(_t, self, "acct: rescan 0",
		     "acct {\n\trescan = 0\n}\n", 2,
		     "rescan 0 out of range 1..3600");
}

TEST_F(config, otlp_options_read_and_checked)
{
	struct config *cfg;

	/* the defaults: no url (nothing posted), the sets of spans */
	cfg = load(_t, self, "empty.conf", "");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_STREQ(cfg->otlp.url, "");
	EXPECT_STREQ(cfg->otlp.sets, "app,tcp-send,tcp-recv,udp-send,udp-recv,blk-io");
	EXPECT_STREQ(cfg->otlp.program, "magnet-read");
	EXPECT_EQ(cfg->otlp.queue, 4194304);
	EXPECT_EQ(cfg->otlp.timeout_s, 10);
	config_free(cfg);
	cfg = load(_t, self, "otlp.conf", "otlp {\n\turl = \"http://collector:4318/v1/traces\"\n"
		   "\tprobe-sets = \"app,blk-io\"\n\texpression = \"tcp port 80\"\n"
		   "\tqueue = 65536\n\ttimeout = 3\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_STREQ(cfg->otlp.url, "http://collector:4318/v1/traces");
	EXPECT_STREQ(cfg->otlp.sets, "app,blk-io");
	EXPECT_STREQ(cfg->otlp.expression, "tcp port 80");
	EXPECT_EQ(cfg->otlp.queue, 65536);
	EXPECT_EQ(cfg->otlp.timeout_s, 3);
	config_free(cfg);
	expect_error(_t, self, "otlp: a url of another scheme",
		     "otlp {\n\turl = \"ftp://collector/v1/traces\"\n}\n", 2,
		     "http:// or https://");
	expect_error(_t, self, "otlp: a url without a host",
		     "otlp {\n\turl = \"http:///v1/traces\"\n}\n", 2,
		     "http:// or https://");
	expect_error(_t, self, "otlp: an unknown set",
		     "otlp {\n\tprobe-sets = \"app,disk\"\n}\n", 2,
		     "no set \"disk\"");
	expect_error(_t, self, "otlp: a queue too small",
		     "otlp {\n\tqueue = 1024\n}\n", 2,
		     "queue 1024 out of range 65536..1073741824");
	expect_error(_t, self, "otlp: timeout 0",
		     "otlp {\n\ttimeout = 0\n}\n", 2, "timeout 0 out of range 1..300");
}

TEST_F(config, unknown_options_and_duplicates_refused)
{
	expect_error(_t, self, "unknown option", "# x\nsocket {\n\tpaht = \"/x\"\n}\n",
		     3, "socket: no such option 'paht'");
	expect_error(_t, self, "unknown section", "\n\n\nbufer b {}\n", 4,
		     "no such option 'bufer'");
	expect_error(_t, self, "unknown option in a filter",
		     "probe p { predef = x\n\tfilter {\n\t\tpid = 4\n\t}\n}\n",
		     3, "probe 'p': filter 1: no such option 'pid'");
	expect_error(_t, self, "hidden option is unknown too",
		     "buffer b {\n\t\"(start)\" = {3}\n}\n", 2,
		     "no such option '(start)'");
	expect_error(_t, self, "include() is not supported",
		     "include(\"/etc/passwd\")\n", 1, "no such option 'include'");
	expect_error(_t, self, "duplicate buffer", "buffer b {}\n# again\nbuffer b {}\n",
		     3, "duplicate title 'b'");
	expect_error(_t, self, "duplicate probe-set",
		     "probe-set udp-send {}\nprobe-set udp-send {}\n", 2,
		     "duplicate title 'udp-send'");
}

TEST_F(config, bad_names_refused)
{
	expect_error(_t, self, "name all digits", "buffer 123 {}\n", 1,
		     "buffer '123': bad name '123' (not all digits)");
	expect_error(_t, self, "name with a space", "\nprobe \"a b\" { predef = x }\n",
		     2, "bad name 'a b'");
	expect_error(_t, self, "name with a slash", "latency a/b { start = x end = y }\n",
		     1, "bad name 'a/b'");
	expect_error(_t, self, "name of 32 bytes",
		     "buffer abcdefghijklmnopqrstuvwxyz012345 {}\n", 1,
		     "bad name");
	expect_error(_t, self, "name ..", "buffer .. {}\n", 1, "bad name '..'");
	expect_error(_t, self, "empty name", "buffer \"\" {}\n", 1, "bad name ''");
	expect_error(_t, self, "buffer reference", "probe p {\n\tpredef = x\n"
		     "\tbuffer = \"a:b\"\n}\n", 3, "buffer: bad name 'a:b'");
	/* config_set_known() knows the four sets */
	EXPECT_TRUE(config_set_known("udp-send"));
	EXPECT_TRUE(config_set_known("tcp-recv"));
	EXPECT_FALSE(config_set_known("udp"));
	EXPECT_FALSE(config_set_known("udp-send.ip"));
	EXPECT_FALSE(config_set_known(""));
}

TEST_F(config, socket_and_metrics_limits)
{
	char conf[512];

	expect_error(_t, self, "empty path", "socket {\n\tpath = \"\"\n}\n", 2,
		     "path is empty");
	snprintf(conf, sizeof(conf), "socket {\n\tpath = \"/%0107d\"\n}\n", 0);
	expect_error(_t, self, "path of 108 bytes", conf, 2, "at most 107");
	snprintf(conf, sizeof(conf), "socket {\n\tpath = \"/%0106d\"\n}\n", 0);
	{
		struct config *cfg = load(_t, self, "path.conf", conf);

		/* a path of 107 bytes is fine */
		ASSERT_TRUE(cfg) show_err(self);
		EXPECT_EQ(strlen(cfg->socket.path), 107);
		config_free(cfg);
	}
	expect_error(_t, self, "mode not octal", "socket {\n\tmode = \"0968\"\n}\n", 2,
		     "mode '0968' is not an octal mode");
	expect_error(_t, self, "mode too big", "socket {\n\tmode = 01000\n}\n", 2,
		     "not an octal mode");
	expect_error(_t, self, "mode a word", "socket {\n\tmode = rw\n}\n", 2,
		     "not an octal mode");
	snprintf(conf, sizeof(conf), "socket {\n\tgroup = g%063d\n}\n", 0);
	expect_error(_t, self, "group of 64 bytes", conf, 2, "at most 63");
	expect_error(_t, self, "a group that does not exist",
		     "socket {\n\tgroup = no-such-group-here\n}\n", 2,
		     "group \"no-such-group-here\": no such group");
	expect_error(_t, self, "max-clients 0", "socket {\n\tmax-clients = 0\n}\n", 2,
		     "max-clients 0 out of range");
	expect_error(_t, self, "client-queue below 4096",
		     "socket {\n\tclient-queue = 4095\n}\n", 2,
		     "client-queue 4095 out of range 4096..");
	expect_error(_t, self, "interval 0", "metrics {\n\tinterval = 0\n}\n", 2,
		     "interval 0 out of range 1..3600");
	expect_error(_t, self, "window over an hour", "metrics {\n\twindow = 3601\n}\n",
		     2, "window 3601 out of range");
	expect_error(_t, self, "window below interval",
		     "metrics {\n\twindow = 5\n\tinterval = 6\n}\n", 3,
		     "window 5 is shorter than interval 6");
	expect_error(_t, self, "top-tgids above max-tgids",
		     "metrics {\n\ttop-tgids = 20\n\tmax-tgids = 10\n}\n", 3,
		     "top-tgids 20 exceeds max-tgids 10");
}

TEST_F(config, bad_buffers_refused)
{
	expect_error(_t, self, "size not a power of two",
		     "buffer b {\n\tsize = 12288\n}\n", 2,
		     "size 12288 is not a power of two");
	expect_error(_t, self, "size too small", "buffer b {\n\tsize = 2048\n}\n", 2,
		     "size 2048 out of range 4096..1073741824");
	expect_error(_t, self, "size too large", "buffer b {\n\tsize = 0x80000000\n}\n",
		     2, "size 2147483648 out of range");
	expect_error(_t, self, "bad mode", "buffer b {\n\tmode = wrap\n}\n", 2,
		     "mode 'wrap': expected drop or overwrite");
	expect_error(_t, self, "size-watermark above size",
		     "buffer b {\n\tsize = 8192\n\tsize-watermark = 16384\n}\n",
		     3, "size-watermark 16384 exceeds size 8192");
	expect_error(_t, self, "count-watermark above size / 40",
		     "buffer b {\n\tcount-watermark = 103\n\tsize = 4096\n}\n", 3,
		     "count-watermark 103 exceeds size / 40 = 102");
	expect_error(_t, self, "timeout above an hour",
		     "buffer b {\n\ttimeout = 3600001\n}\n", 2,
		     "timeout 3600001 out of range 0..3600000");
	expect_error(_t, self, "probe into an undeclared buffer",
		     "buffer a {}\nprobe p {\n\tpredef = x\n\tbuffer = b\n}\n", 4,
		     "probe 'p': buffer 'b' is not declared");
	expect_error(_t, self, "set into an undeclared buffer",
		     "probe-set udp-send {\n\tbuffer = net\n}\n", 2,
		     "buffer 'net' is not declared");
}

TEST_F(config, bad_probes_refused)
{
	expect_error(_t, self, "no predef, no kind", "probe p {\n\tsnaplen = 4\n}\n", 1,
		     "needs predef, or kind and target");
	expect_error(_t, self, "predef and kind",
		     "probe p {\n\tpredef = x\n\tkind = kprobe\n}\n", 3,
		     "predef excludes kind and target");
	expect_error(_t, self, "kind without target",
		     "probe p {\n\tkind = kprobe\n}\n", 2, "kind needs a target");
	expect_error(_t, self, "target without kind", "probe p {\n\ttarget = f\n}\n", 2,
		     "target needs a kind");
	expect_error(_t, self, "bad kind", "probe p {\n\tkind = uprobe\n\ttarget = f\n}\n",
		     2, "kind 'uprobe': expected kprobe, kretprobe or tracepoint");
	expect_error(_t, self, "target with a space",
		     "probe p {\n\tkind = kprobe\n\ttarget = \"a b\"\n}\n", 3,
		     "bad target 'a b'");
	expect_error(_t, self, "7 args", "probe p {\n\tkind = kprobe\n\ttarget = f\n"
		     "\targs = 7\n}\n", 4, "args 7 out of range 0..6");
	expect_error(_t, self, "tracepoint with 6 args",
		     "probe p {\n\tkind = tracepoint\n\ttarget = t\n"
		     "\targs = 6\n}\n", 4, "a tracepoint records at most 5 args");
	expect_error(_t, self, "id-arg above args", "probe p {\n\tkind = kprobe\n"
		     "\ttarget = f\n\targs = 1\n\tid-arg = 2\n}\n", 5,
		     "id-arg 2 exceeds args 1");
	expect_error(_t, self, "args on a predef", "probe p {\n\tpredef = x\n"
		     "\targs = 1\n}\n", 3, "not for predef probes");
	expect_error(_t, self, "snaplen above 65536",
		     "probe p {\n\tpredef = x\n\tsnaplen = 65537\n}\n", 3,
		     "snaplen 65537 out of range 0..65536");
	expect_error(_t, self, "sample-every above u32",
		     "probe p {\n\tpredef = x\n\tsample-every = 4294967296\n}\n",
		     3, "sample-every 4294967296 out of range");
	expect_error(_t, self, "sample-interval above an hour",
		     "probe p {\n\tpredef = x\n"
		     "\tsample-interval = 3600000000001\n}\n", 3,
		     "sample-interval 3600000000001 out of range");
	expect_error(_t, self, "unknown probe set", "\nprobe-set udp {}\n", 2,
		     "no probe set 'udp' (known: udp-send, tcp-send, udp-recv, tcp-recv, blk-io, app, cpu)");
	expect_error(_t, self, "probe named as a set layer",
		     "probe udp-send.ip {\n\tpredef = x\n}\n", 1,
		     "probe 'udp-send.ip': name is reserved for a layer of probe-set udp-send");
}

TEST_F(config, bad_filters_refused)
{
	char *conf, *p;
	int i;

	expect_error(_t, self, "filter without predicate",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\taction = include\n"
		     "\t}\n}\n", 3, "probe 'p': filter 1: no predicate");
	expect_error(_t, self, "tid 0 is no predicate",
		     "probe p {\n\tpredef = x\n\tfilter { tgids = {1} }\n"
		     "\tfilter { tid = 0 }\n}\n", 4, "filter 2: no predicate");
	expect_error(_t, self, "id-min without id-max",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\tid-min = 4\n"
		     "\t}\n}\n", 4, "id-min needs id-max");
	expect_error(_t, self, "id-min above id-max",
		     "probe p {\n\tpredef = x\n\tfilter {\n\t\tid-min = 4\n"
		     "\t\tid-max = 3\n\t}\n}\n", 5, "id-min 4 exceeds id-max 3");
	expect_error(_t, self, "cpu 8192", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tcpus = {1, 8192}\n\t}\n}\n", 4,
		     "cpu 8192 out of range 0..8191");
	expect_error(_t, self, "bad action", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 1\n\t\taction = drop\n\t}\n}\n", 5,
		     "filter 1: action 'drop': expected include or exclude");
	expect_error(_t, self, "tid above u32", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 4294967296\n\t}\n}\n", 4, "tid 4294967296 out of range");

	/* the rule's words: magnetctl filter add's */
	expect_error(_t, self, "rule: unknown word", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"header proto udp colour red\"\n\t}\n}\n", 4,
		     "filter 1: rule: unknown keyword \"colour\"");
	expect_error(_t, self, "rule: a type's word without the type",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"dport 53\"\n\t}\n}\n", 4,
		     "rule: \"dport\" goes after \"header\"");
	expect_error(_t, self, "rule: bad value", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"header src 10.0.0.300\"\n\t}\n}\n", 4,
		     "rule: bad address \"10.0.0.300\" after \"src\"");
	expect_error(_t, self, "rule: a bad expression (libpcap's message)",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"packet udp port\"\n\t}\n}\n", 4,
		     "rule: packet: can't parse filter expression: syntax error");
	expect_error(_t, self, "rule: the old packet words, with the way to say them now",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"packet proto udp dport 53\"\n\t}\n}\n", 4,
		     "the rule in these words is \"header proto udp dport 53\"");
	expect_error(_t, self, "rule: tid both ways", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\ttid = 3\n\t\trule = \"tid 4\"\n\t}\n}\n", 5,
		     "rule: \"tid\" given twice");
	expect_error(_t, self, "rule: correlate ends where it starts",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end p\"\n\t}\n}\n", 4,
		     "the end probe \"p\" is the start probe");
	expect_error(_t, self, "rule: correlate is exclude",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\taction = include\n\t\trule = \"correlate end q\"\n\t}\n}\n", 5,
		     "a correlate rule is an exclude rule");
	expect_error(_t, self, "rule: an id range both ways",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\tid-min = 1\n\t\tid-max = 5\n\t\trule = \"id 7,8\"\n\t}\n}\n", 6,
		     "rule: \"id\" given twice");
	expect_error(_t, self, "rule: correlate names a probe magnetd does not have",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end nosuch\"\n\t}\n}\n", 4,
		     "rule 'nosuch' is not a configured probe or probe-set layer");
	expect_error(_t, self, "rule: correlate names a layer of a set not configured",
		     "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"correlate end tcp-recv.app\"\n\t}\n}\n", 4,
		     "rule 'tcp-recv.app' needs probe-set tcp-recv");
	expect_error(_t, self, "rule: a value missing", "probe p {\n\tpredef = x\n\tfilter {\n"
		     "\t\trule = \"id\"\n\t}\n}\n", 4,
		     "missing value after \"id\"");

	/* 257 tgids on line 3 */
	conf = malloc(8192);
	p = conf + sprintf(conf, "probe p {\n\tpredef = x\n\tfilter { tgids = {1");
	for (i = 2; i <= MAGNET_FILTER_SET_MAX + 1; i++)
		p += sprintf(p, ", %d", i);
	strcpy(p, "} }\n}\n");
	expect_error(_t, self, "257 tgids", conf, 3, "257 tgids, at most 256");

	/* 65 filters, one a line from line 2: the 65th on line 66 */
	p = conf + sprintf(conf, "probe p { predef = x\n");
	for (i = 0; i <= CONFIG_FILTER_MAX; i++)
		p += sprintf(p, "\tfilter { tid = %d }\n", i + 1);
	strcpy(p, "}\n");
	expect_error(_t, self, "65 filters", conf, 66, "more than 64 filters");
	free(conf);
}

/* Every filter the kernel has, from the rule's words. */
TEST_F(config, filter_rules_from_words)
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
	struct config *cfg = load(_t, self, "rules.conf", conf);
	const struct filter_rule *f;

	/* five filters from words */
	ASSERT_TRUE(cfg) show_err(self);
	ASSERT_EQ(cfg->nprobes, 1);
	ASSERT_EQ(cfg->probes[0].nfilters, 5);
	f = cfg->probes[0].filters;
	/* header, with its action */
	EXPECT_EQ(f[0].action, MAGNET_FILTER_EXCLUDE);
	ASSERT_TRUE(f[0].type);
	EXPECT_STREQ(f[0].type->name, "header");
	EXPECT_EQ(f[0].cpus_len, 0);
	/* packet, every word after it the expression */
	EXPECT_LT(f[4].action, 0);
	ASSERT_TRUE(f[4].type);
	EXPECT_STREQ(f[4].type->name, "packet");
	EXPECT_NE(f[4].cpus_len, 0);
	EXPECT_STREQ((const char *)f[4].state,
		     "udp dst port 53 and (ip[8] < 10 or ip6)");
	/* an id set and CPUs beyond 255 */
	EXPECT_LT(f[1].action, 0);
	EXPECT_FALSE(f[1].type);
	EXPECT_EQ(f[1].ids, 3);
	EXPECT_EQ(f[1].id[0], 0x10);
	EXPECT_EQ(f[1].id[1], 0x20);
	EXPECT_EQ(f[1].id[2], 30);
	EXPECT_EQ(f[1].cpus_len, 4095 / 8 + 1);
	EXPECT_EQ(f[1].cpus[0] & 0x0f, 0x0f);
	EXPECT_TRUE(cpu_in_map(f[1].cpus, 4095));
	EXPECT_FALSE(cpu_in_map(f[1].cpus, 4));
	/* correlate, exclude by default */
	ASSERT_TRUE(f[2].type);
	EXPECT_STREQ(f[2].type->name, "correlate");
	EXPECT_LT(f[2].action, 0);
	EXPECT_EQ(f[2].type->default_action, MAGNET_FILTER_EXCLUDE);
	/* options and words add up */
	EXPECT_EQ(f[3].action, MAGNET_FILTER_EXCLUDE);
	EXPECT_EQ(f[3].tgids, 3);
	EXPECT_EQ(f[3].tgid[0], 7);
	EXPECT_EQ(f[3].tgid[1], 8);
	EXPECT_EQ(f[3].tgid[2], 9);
	EXPECT_EQ(f[3].cpus_len, 1024);
	EXPECT_TRUE(cpu_in_map(f[3].cpus, 8191));
	config_free(cfg);
}

TEST_F(config, bad_latencies_refused)
{
	expect_error(_t, self, "start is end", "probe p { predef = x }\nlatency l {\n"
		     "\tstart = p\n\tend = p\n}\n", 4,
		     "start and end are the same event 'p'");
	expect_error(_t, self, "start unknown", "probe p { predef = x }\nlatency l {\n"
		     "\tstart = q\n\tend = p\n}\n", 3,
		     "latency 'l': start 'q' is not a configured probe or probe-set layer");
	expect_error(_t, self, "layer of a set not configured",
		     "probe-set udp-send {}\nlatency l {\n\tstart = udp-send.socket\n"
		     "\tend = udp-recv.app\n}\n", 4,
		     "end 'udp-recv.app' needs probe-set udp-recv");
	expect_error(_t, self, "no such layer",
		     "probe-set udp-send {}\nlatency l {\n\tstart = udp-send.socket\n"
		     "\tend = udp-send.tcp\n}\n", 4,
		     "end 'udp-send.tcp' is not a configured probe or probe-set layer");
	expect_error(_t, self, "missing end", "probe p { predef = x }\n\nlatency l {\n"
		     "\tstart = p\n}\n", 3, "latency 'l': needs end");
	expect_error(_t, self, "bad key", "probe p { predef = x }\nprobe q { predef = y }\n"
		     "latency l {\n\tstart = p\n\tend = q\n\tkey = pid\n}\n", 6,
		     "key 'pid': expected id, sock or skb");
	expect_error(_t, self, "timeout 0", "latency l {\n\ttimeout = 0\n}\n", 2,
		     "timeout 0 out of range 1..3600000");
	expect_error(_t, self, "max-pending 0", "latency l {\n\tmax-pending = 0\n}\n", 2,
		     "max-pending 0 out of range");
	expect_error(_t, self, "latency named as an event",
		     "probe p { predef = x }\nprobe q { predef = y }\n"
		     "latency p {\n\tstart = p\n\tend = q\n}\n", 3,
		     "latency 'p': name in use by an event");
}

/* Independent errors of every pass, all reported, in the file's order. */
TEST_F(config, every_error_reported_in_line_order)
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
	const char *path = write_conf(_t, self, "many.conf", conf), *at;
	struct config *cfg = config_load(path, self->err, sizeof(self->err));
	const char *prev = self->err;
	bool in_order = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		at = err_line_at(self, path, lines[i]);
		in_order = in_order && at && at >= prev;
		prev = at ? at : prev;
	}
	/* six errors of all passes, all reported, in line order */
	EXPECT_FALSE(cfg);
	EXPECT_EQ(err_lines(self), 6) show_err(self);
	EXPECT_TRUE(in_order) show_err(self);
	config_free(cfg);
}

TEST_F(config, unreadable_files_and_small_error_buffers)
{
	static const char missing[] =
		"/nonexistent/magnetd.conf: cannot open: No such file or directory\n";
	const char *path;
	char small[48];
	struct config *cfg;

	/* a missing file: "FILE: cannot open: No such file or directory" */
	snprintf(self->err, sizeof(self->err), "junk");
	cfg = config_load("/nonexistent/magnetd.conf", self->err,
			  sizeof(self->err));
	EXPECT_FALSE(cfg);
	EXPECT_STREQ(self->err, missing);
	/* a directory is refused */
	cfg = config_load(self->dir, self->err, sizeof(self->err));
	EXPECT_FALSE(cfg);
	EXPECT_TRUE(err_line_at(self, self->dir, 0)) show_err(self);
	EXPECT_TRUE(strstr(self->err, "cannot read: Is a directory"))
		show_err(self);

	/* a small err buffer is cut safely */
	path = write_conf(_t, self, "trunc.conf",
			  "buffer 1 {}\nbuffer 2 {}\nbuffer 3 {}\n");
	memset(small, 'x', sizeof(small));
	cfg = config_load(path, small, 40);
	EXPECT_FALSE(cfg);
	EXPECT_EQ(strlen(small), 39);
	EXPECT_EQ(small[38], '\n');
	EXPECT_EQ(small[40], 'x');
	/* no err buffer: still refused */
	cfg = config_load(path, NULL, 0);
	EXPECT_FALSE(cfg);
	/* a one-byte err buffer is left empty */
	cfg = config_load(path, small, 1);
	EXPECT_FALSE(cfg);
	EXPECT_EQ(small[0], '\0');

	/* the scanner carries nothing from a failed load to the next */
	expect_error(_t, self, "open string before a good load",
		     "socket { path = \"x\n", 1, "string is not closed");
	cfg = load(_t, self, "good.conf", "socket {\n\tpath = /good\n}\n");
	ASSERT_TRUE(cfg) show_err(self);
	EXPECT_STREQ(cfg->socket.path, "/good");
	config_free(cfg);
	config_free(NULL);
}

TEST_MAIN

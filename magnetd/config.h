/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetd's configuration (conf/magnetd.conf, libconfuse syntax): what the
 * daemon installs in the module, what it derives from the records, and
 * where it serves clients. config_load() reads and checks a whole file;
 * the daemon runs nothing of a file that fails (at start it refuses to
 * start, on a reload it keeps the configuration it had).
 *
 *	socket {
 *		path = "/run/magnetd.sock"	# Unix socket for clients
 *		mode = "0660"			# its permissions (octal)
 *		group = ""			# its group ("" = the daemon's)
 *		max-clients = 64
 *		client-queue = 262144		# bytes of pushes per client
 *	}
 *	prometheus {				# the HTTP endpoint (http.c)
 *		enable = false
 *		address = "127.0.0.1"		# numeric IPv4 or IPv6
 *		port = 9737
 *		max-clients = 8			# connections at once
 *		timeout = 10			# s a connection may idle
 *		request-timeout = 10		# s a request may take, answer
 *					#  included (from the connection's
 *					#  opening or previous answer)
 *		per-cpu = false			# per-CPU event counters
 *		buckets-per-doubling = 4	# 1, 2, 4 or 8 (histograms)
 *		web-config = ""			# TLS, basic auth (webconfig.h);
 *	}					#  relative: to this file's dir
 *	ledger {				# the kernel's ledger (account.c)
 *		enable = false			# turn it on (off again at exit)
 *		cgroup-root = "/sys/fs/cgroup"	# the cgroup2 mount
 *		cgroup-depth = 0		# paths cut to this many levels
 *	}					#  (0: whole)
 *	otlp {					# spans posted live (export.c)
 *		url = ""			# the collector's OTLP/HTTP traces
 *					#  endpoint ("" = none), e.g.
 *					#  http://host:4318/v1/traces
 *		probe-sets = "app,tcp-send,tcp-recv,udp-send,udp-recv,blk-io"
 *		expression = ""			# magnet-read's (pcap-filter(7))
 *		program = "magnet-read"		# what captures them
 *		queue = 4194304			# bytes held while it is away
 *		timeout = 10			# s a POST may take
 *	}
 *	acct {					# per-call costs (acct.c)
 *		process = {}			# names (comm) of processes to
 *					#  watch: each system call summed
 *		rescan = 10			# s between looks for them
 *	}
 *	metrics {
 *		interval = 1			# s between ticks (thresholds)
 *		window = 10			# s covered by rates, percentiles
 *		top-tgids = 5			# "top" lines per event
 *		max-tgids = 1024		# thread groups tracked per event
 *	}
 *	buffer NAME {				# any number
 *		size = 262144			# bytes per CPU, a power of two
 *		mode = drop			# or overwrite
 *		size-watermark = 65536		# read at this many bytes (default:
 *					#  size / 4, at most 65536) ...
 *		count-watermark = 0		# ... or records wait (0 = off)
 *		timeout = 100			# ms: read anyway after this long
 *	}
 *	probe-set SET {				# udp-send, tcp-send, udp-recv,
 *		buffer = NAME			# tcp-recv, blk-io: a probe a layer,
 *		snaplen = 0			# named "SET.LAYER"
 *	}
 *	probe NAME {				# any number
 *		predef = "sched_switch"		# a catalog entry, or:
 *		kind = kprobe			# kprobe, kretprobe, tracepoint
 *		target = "vfs_read"
 *		args = 0			# arguments recorded
 *		id-arg = 0			# argument used as the record id
 *		buffer = NAME
 *		snaplen = 0
 *		sample-every = 0		# keep 1 hit in N (0, 1 = all)
 *		sample-interval = 0		# ns: at most one hit per interval
 *		period = 0			# predef "cpu.sample" only: ns
 *					#  between ticks (0: 1 ms) ...
 *		depth = 32			# ... frames of each stack kept
 *		filter {			# any number, in order
 *			action = include	# or exclude
 *			cpus = {0, 1}
 *			tgids = {1234}
 *			tid = 0			# 0 = any
 *			id-min = 0		# id range (both, or neither)
 *			id-max = 0
 *			rule = "packet udp"	# magnetctl filter
 *		}				# add's words
 *	}
 *	latency NAME {				# any number
 *		start = "udp-send.socket"	# event names: probes, or
 *		end = "udp-send.dev-xmit"	# "SET.LAYER" of a probe-set
 *		key = sock			# id, sock or skb
 *		timeout = 1000			# ms a start waits for its end
 *		max-pending = 4096		# starts waiting at once
 *	}
 */
#ifndef MAGNETD_CONFIG_H
#define MAGNETD_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/magnet.h>

#include "filter.h"
#include "metrics.h"

#define CONFIG_FILTER_MAX	MAGNET_FILTER_RULES_MAX
/* The sampler's catalog entry: period and depth are its alone. */
#define SAMPLE_PREDEF		"cpu.sample"

struct config_socket {
	char path[108];			/* sun_path */
	mode_t mode;
	char group[64];			/* "" = the daemon's */
	unsigned int max_clients;
	size_t client_queue;
};

#define MAGNETD_HTTP_PORT	9737

struct config_prometheus {
	bool enable;
	char address[64];		/* numeric */
	unsigned int port;
	unsigned int max_clients;
	unsigned int timeout_s;		/* silent this long: closed */
	unsigned int request_timeout_s;	/* a request, whole answer included */
	bool per_cpu;
	unsigned int buckets;		/* histogram buckets per doubling */
	char web_config[256];		/* "": none */
};

struct config_metrics {
	unsigned int interval_s;
	unsigned int window_s;
	unsigned int top_tgids;
	unsigned int max_tgids;
};

#define LEDGER_DEPTH_MAX	64

struct config_ledger {
	bool enable;			/* turn it on */
	char cgroup_root[256];		/* the cgroup2 mount */
	unsigned int cgroup_depth;	/* 0: whole paths */
};

#define ACCT_COMM_LEN		16	/* a process's name and its NUL */
#define ACCT_RESCAN_MAX_S	3600

struct config_acct {
	unsigned int nprocess;
	char process[MAGNET_ACCT_WATCHES][ACCT_COMM_LEN];	/* comm */
	unsigned int rescan_s;		/* between looks in /proc */
};

#define OTLP_URL_LEN		512
#define OTLP_QUEUE_MIN		65536		/* bytes */
#define OTLP_QUEUE_MAX		(1U << 30)
#define OTLP_TIMEOUT_MAX_S	300

/* Spans posted to a collector (export.c); off while @url is "" */
struct config_otlp {
	char url[OTLP_URL_LEN];		/* http:// or https:// */
	char sets[256];			/* magnet-read -P's probe sets */
	char expression[1024];		/* its expression ("" none) */
	char program[256];		/* magnet-read */
	uint64_t queue;			/* bytes of requests held, at most */
	unsigned int timeout_s;		/* a POST, at most */
};

struct config_buffer {
	char name[MAGNET_NAME_LEN];
	uint64_t size;
	uint8_t mode;			/* enum magnet_buffer_mode */
	uint64_t size_wm;
	uint64_t count_wm;
	uint64_t timeout_us;
};

struct config_probeset {
	char set[MAGNET_NAME_LEN];
	char buffer[MAGNET_NAME_LEN];
	uint32_t snaplen;
};


struct config_probe {
	char name[MAGNET_NAME_LEN];
	char predef[MAGNET_NAME_LEN];	/* "" = kind and target */
	uint8_t kind;			/* enum magnet_probe_kind */
	char target[MAGNET_TARGET_LEN];
	uint8_t args;
	uint8_t id_arg;
	char buffer[MAGNET_NAME_LEN];
	uint32_t snaplen;
	uint32_t sample_every;
	uint64_t sample_interval_ns;
	uint64_t period_ns;		/* cpu.sample: 0, the module's */
	uint8_t depth;			/* cpu.sample */
	unsigned int nfilters;
	struct filter_rule *filters;	/* lib/filter.h */
};

struct config_latency {
	char name[MAGNET_NAME_LEN];
	char start[MAGNET_NAME_LEN];
	char end[MAGNET_NAME_LEN];
	enum metrics_key key;
	uint64_t timeout_ns;
	uint32_t max_pending;
};

struct config {
	char file[256];
	struct config_socket socket;
	struct config_metrics metrics;
	struct config_prometheus prometheus;
	struct config_ledger ledger;
	struct config_acct acct;
	struct config_otlp otlp;
	unsigned int nbuffers, nsets, nprobes, nlatencies;
	struct config_buffer *buffers;
	struct config_probeset *sets;
	struct config_probe *probes;
	struct config_latency *latencies;
};

/*
 * Read and check @file into a new configuration. On error returns NULL
 * after writing one message per problem to @err (up to @errlen bytes,
 * lines "FILE:LINE: what is wrong"; LINE is omitted where libconfuse does
 * not know it). Checks beyond the syntax: names as the module accepts
 * them (1..31 bytes of letters, digits and "._-", not all digits), unique
 * names per kind, buffers named by probes and sets exist (or are
 * "default"), sizes powers of two in the module's range, watermarks
 * within the buffer, a probe has predef or kind + target, a latency's
 * start and end are probes or layers of a configured set ("SET.LAYER"),
 * known set names, values in the uapi's ranges.
 */
struct config *config_load(const char *file, char *err, size_t errlen);
void config_free(struct config *cfg);

/* The probe-set layers a set has, as listed in <linux/magnet.h>. */
bool config_set_known(const char *set);

#endif /* MAGNETD_CONFIG_H */

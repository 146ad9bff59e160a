// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-read's command line: the options (tcpdump's where they mean
 * something for packets seen by probes in the network stack, and
 * magnet's own) parsed and checked into struct options, the expression
 * read and compiled, and the usage. tcpdump's options that mean nothing
 * here are refused, each with why. Bad usage exits with status 2, a bad
 * expression with 1 (as tcpdump's); -h, --version, -D and -d print and
 * exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "magnet-read.h"
#include "pcapfilter.h"

/* --version, and the first lines of the usage, as tcpdump's. */
static void version(FILE *f)
{
	fprintf(f, "magnet-read version %s\n%s\n", MAGNET_VERSION,
		pcap_lib_version());
}

/*
 * The options in brief, as tcpdump's usage gives them; magnet-read(1)
 * says what each does (the manual is the reference: what this leaves
 * out, it has).
 */
static void usage(FILE *f)
{
	version(f);
	fputs("Usage: magnet-read [-AdDehjlnNqStUvxX] [ -b buffer ] [ -B buffer_size ]\n"
	      "\t\t[ -c count ]"
	      " [ -C file_size ] [ -F file ] [ -G seconds ] [ -i interface ]\n"
	      "\t\t[ -P probe_sets ] [ -r file ] [ -s snaplen ] [ -w file ]\n"
	      "\t\t[ -W filecount ] [ -z postrotate-command ] [ -Z user ]\n"
	      "\t\t[ --tgid pid[,pid...] ] [ --cpu list ] [ --trace file ]\n"
	      "\t\t[ --perfetto file ] [ --otlp file ] [ --zipkin file ]\n"
	      "\t\t[ --profile ] [ --folded file ] [ --kallsyms file ]\n"
	      "\t\t[ --print ] [ --journey-timeout ms ]\n"
	      "\t\t[ --size-wm bytes ] [ --count-wm count ] [ --timeout ms ]\n"
	      "\t\t[ --no-kernel-filter ] [ --no-map ]\n"
	      "\t\t[ --time-stamp-precision micro|nano ] [ --version ]\n"
	      "\t\t[ expression ]\n"
	      "See magnet-read(1) for what each does, the expression (pcap-filter(7))\n"
	      "and the output.\n", f);
}

static int is_stdout(const char *file)
{
	return file && !strcmp(file, "-");
}

void bad_usage(const char *why)
{
	fprintf(stderr, PROG ": %s\nTry 'magnet-read --help'.\n", why);
	exit(2);
}

static long long number(const char *s, const char *what, long long max)
{
	long long v;
	char *end;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno || end == s || *end || v < 0 || v > max) {
		fprintf(stderr, PROG ": bad %s \"%s\": expected a number from 0 to %lld\n",
			what, s, max);
		exit(2);
	}
	return v;
}

/* -C: millions of bytes, or KiB, MiB, GiB with k, m, g (as tcpdump's). */
static uint64_t file_size(const char *s)
{
	unsigned long long v;
	uint64_t unit = 1000000;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'k' || *end == 'K')
		unit = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		unit = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		unit = 1024 * 1024 * 1024, end++;
	if (errno || end == s || *end || *s == '-' || !v ||
	    v > UINT64_MAX / unit) {
		fprintf(stderr, PROG ": bad -C \"%s\": expected a size of at least 1: millions of bytes, or with k, m or g KiB, MiB or GiB\nTry 'magnet-read --help'.\n",
			s);
		exit(2);
	}
	return v * unit;
}

enum { OPT_PRINT = 256, OPT_TRACE, OPT_PERFETTO, OPT_JOURNEY_TIMEOUT, OPT_SIZE_WM,
       OPT_COUNT_WM, OPT_TIMEOUT, OPT_NO_MAP, OPT_TGID, OPT_CPU,
       OPT_VERSION, OPT_PRECISION, OPT_NO_KERNEL_FILTER,
       OPT_OTLP, OPT_ZIPKIN, OPT_PROFILE, OPT_FOLDED, OPT_KALLSYMS };

/*
 * tcpdump's options magnet-read does not honour: refused, with why,
 * never silently ignored.
 */
static const struct {
	char opt;
	bool arg;			/* it takes one */
	const char *why;
} refused[] = {
	{ 'p', false, "-p: there is no promiscuous mode to turn off: magnet's probes see the packets this host's kernel sends and receives, and only those" },
	{ 'I', false, "-I: there is no monitor mode: magnet's probes are in the network stack, not in a wireless driver" },
	{ 'y', true, "-y: one link type only: packets look like tcpdump -i any's (LINUX_SLL2)" },
	{ 'L', false, "-L: one link type only: packets look like tcpdump -i any's (LINUX_SLL2)" },
	{ 'K', false, "-K: checksums are not verified: tcpdump -r on the -w file does that" },
	{ 'E', true, "-E: IPsec is not decrypted" },
	{ 'M', true, "-M: TCP-MD5 signatures are not checked" },
	{ 'T', true, "-T: packets are decoded as UDP and TCP only" },
	{ 'O', false, "-O: the expression is always optimised by libpcap" },
	{ 'H', false, "-H: 802.11s headers are not kept" },
	{ 'J', true, "-J: magnet's timestamps are CLOCK_MONOTONIC with the wall clock's offset; there is no other type" },
	{ 'm', true, "-m: SMI MIB modules are not loaded" },
	{ 'u', false, "-u: NFS handles are not decoded" },
	{ 'Y', false, "-Y: no BPF parser debugging" },
	{ 'Q', true, "-Q: choose a direction in the expression (inbound, outbound)" },
};

#define NREFUSED	(sizeof(refused) / sizeof(refused[0]))

/* --tgid N[,N...], added to those given before. */
static void add_tgids(struct options *o, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;
	struct parse_error e;
	uint64_t v;

	if (!copy)
		bad_usage("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (word_uint(tok, 1, UINT32_MAX, "process id", &v, &e)) {
			fprintf(stderr, PROG ": bad --tgid \"%s\": %s\nTry 'magnet-read --help'.\n",
				list, e.text);
			exit(2);
		}
		o->tgids = realloc(o->tgids, (o->ntgids + 1) * sizeof(uint32_t));
		if (!o->tgids)
			bad_usage("out of memory");
		o->tgids[o->ntgids++] = v;
	}
	if (!o->ntgids)
		bad_usage("bad --tgid: expected process ids, as 1234 or 1234,5678");
	free(copy);
}

/* The expression: the words after the options, joined, or -F's file. */
static char *filter_text(const struct options *o, int argc, char **argv)
{
	size_t len = 1;
	char *text;

	if (o->filter_file) {
		FILE *f;
		size_t n;

		if (argc)
			bad_usage("an expression given both with -F and on the command line");
		f = fopen(o->filter_file, "r");
		if (!f) {
			fprintf(stderr, PROG ": %s: %s\n", o->filter_file,
				strerror(errno));
			exit(1);
		}
		text = NULL;
		if (getdelim(&text, &n, 0, f) < 0 && ferror(f)) {
			fprintf(stderr, PROG ": %s: %s\n", o->filter_file,
				strerror(errno));
			exit(1);
		}
		fclose(f);
		return text;
	}
	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = calloc(1, len);
	if (!text)
		bad_usage("out of memory");
	for (int i = 0; i < argc; i++) {
		if (i)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	return text;
}

static void compile_filter(struct options *o, int argc, char **argv)
{
	struct expr_select sel = {
		.devs = o->interfaces, .ndevs = o->ninterfaces,
		.tgids = o->tgids, .ntgids = o->ntgids,
		.cpus = o->cpus, .cpus_len = o->cpus_len,
	};
	char *text = filter_text(o, argc, argv);
	char err[PCAP_ERRBUF_SIZE + 64];

	/* libpcap's message alone, and status 1: as tcpdump says it */
	if (expr_compile(text, &sel, &o->filter, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\n", err);
		exit(1);
	}
	if (pcapfilter_blank(text))
		free(text);
	else
		o->filter_text = text;
}

void parse_args(int argc, char **argv, struct options *o)
{
	static const struct option lopts[] = {
		{ "buffer", required_argument, NULL, 'b' },
		{ "buffer-size", required_argument, NULL, 'B' },
		{ "count", required_argument, NULL, 'c' },
		{ "write", required_argument, NULL, 'w' },
		{ "read", required_argument, NULL, 'r' },
		{ "nonblock", no_argument, NULL, 'N' },
		{ "probes", required_argument, NULL, 'P' },
		{ "interface", required_argument, NULL, 'i' },
		{ "tgid", required_argument, NULL, OPT_TGID },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "filter-file", required_argument, NULL, 'F' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "time-stamp-precision", required_argument, NULL, OPT_PRECISION },
		{ "list-interfaces", no_argument, NULL, 'D' },
		{ "snaplen", required_argument, NULL, 's' },
		{ "numeric", no_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "hex", no_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "print", no_argument, NULL, OPT_PRINT },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "perfetto", required_argument, NULL, OPT_PERFETTO },
		{ "otlp", required_argument, NULL, OPT_OTLP },
		{ "zipkin", required_argument, NULL, OPT_ZIPKIN },
		{ "profile", no_argument, NULL, OPT_PROFILE },
		{ "folded", required_argument, NULL, OPT_FOLDED },
		{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
		{ "journey-timeout", required_argument, NULL, OPT_JOURNEY_TIMEOUT },
		{ "size-wm", required_argument, NULL, OPT_SIZE_WM },
		{ "count-wm", required_argument, NULL, OPT_COUNT_WM },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "no-map", no_argument, NULL, OPT_NO_MAP },
		{ "relinquish-privileges", required_argument, NULL, 'Z' },
		{ "no-kernel-filter", no_argument, NULL,
		  OPT_NO_KERNEL_FILTER },
		{}
	};
	/* magnet-read's own short options, then the refused ones */
	char optstring[128] = "b:B:c:w:r:NP:i:s:nqxjhF:XAtlUDSdZ:vC:G:W:z:e";
	size_t len = strlen(optstring);
	bool print = false, snap_given = false;
	int dump_level = 0;
	int opt;

	*o = (struct options){
		.buffer = "default", .size_wm = -1, .count_wm = -1,
		.timeout_ms = -1, .snaplen = SNAPLEN_DEFAULT,
		.journey_timeout_ns = JOURNEY_TIMEOUT_MS * NSEC_PER_MSEC,
	};
	for (size_t k = 0; k < NREFUSED; k++) {
		optstring[len++] = refused[k].opt;
		if (refused[k].arg)
			optstring[len++] = ':';
	}
	optstring[len] = 0;
	while ((opt = getopt_long(argc, argv, optstring, lopts, NULL)) != -1) {
		switch (opt) {
		case 'b': o->buffer = optarg; break;
		case 'B':
			/* KiB, as tcpdump's; at most MAGNET_BUFFER_SIZE_MAX a CPU */
			o->buffer_kib = number(optarg, "-B",
					       MAGNET_BUFFER_SIZE_MAX >> 10);
			if (!o->buffer_kib)
				bad_usage("bad -B 0: the buffer's size in KiB, at least 4");
			break;
		case 'w': o->pcapng_file = optarg; break;
		case 'r':
			o->read_files = realloc(o->read_files,
						(o->nread_files + 1) * sizeof(*o->read_files));
			if (!o->read_files) {
				fprintf(stderr, PROG ": out of memory\n");
				exit(1);
			}
			o->read_files[o->nread_files++] = optarg;
			if (!o->read_file)
				o->read_file = optarg;
			break;
		case 'N': o->nonblock = true; break;
		case OPT_NO_MAP: o->no_map = true; break;
		case OPT_NO_KERNEL_FILTER: o->no_kernel_filter = true; break;
		case 'P': o->probe_sets = optarg; break;
		case 'i':
			o->interfaces = realloc(o->interfaces,
						(o->ninterfaces + 1) * sizeof(char *));
			if (!o->interfaces)
				bad_usage("out of memory");
			o->interfaces[o->ninterfaces++] = optarg;
			break;
		case OPT_TGID:
			add_tgids(o, optarg);
			break;
		case OPT_CPU: {
			struct parse_error e;

			free(o->cpus);
			o->cpus = calloc(1, CPUS_MAX / 8);
			if (!o->cpus)
				bad_usage("out of memory");
			if (word_cpu_list(optarg, o->cpus, &o->cpus_len, &e)) {
				fprintf(stderr, PROG ": bad --cpu \"%s\": %s\nTry 'magnet-read --help'.\n",
					optarg, e.text);
				exit(2);
			}
			break;
		}
		case 'F': o->filter_file = optarg; break;
		case 'n': o->numeric = true; break;
		case 'q': o->quiet = true; break;
		case 'x':
			o->hex = true;
			o->dump = DUMP_HEX;
			break;
		case 'X':
			o->hex = true;
			o->dump = DUMP_HEX_ASCII;
			break;
		case 'A': o->dump = DUMP_ASCII; break;
		case 't':
			if (++o->tstamp > 5)
				bad_usage("-t: at most -ttttt");
			break;
		case OPT_PRECISION:
			if (!strcmp(optarg, "micro") || !strcmp(optarg, "microseconds"))
				o->micro = true;
			else if (!strcmp(optarg, "nano") || !strcmp(optarg, "nanoseconds"))
				o->micro = false;
			else
				bad_usage("--time-stamp-precision: micro or nano");
			break;
		case 'l': setvbuf(stdout, NULL, _IOLBF, 0); break;
		case 'Z': o->user = optarg; break;
		case 'v':
			/* -vvv and more: as -vv (tcpdump takes them) */
			if (o->verbose < 2)
				o->verbose++;
			break;
		case 'U': o->packet_buffered = true; break;
		case 'D': list_interfaces(); exit(0);
		case 'S': break;	/* sequence numbers are absolute anyway */
		case 'd': dump_level++; break;
		case OPT_VERSION:
			version(stdout);
			exit(0);
		case 'j': o->json = true; break;
		case OPT_PRINT: print = true; break;
		case OPT_TRACE: o->trace_file = optarg; break;
		case OPT_PERFETTO: o->perfetto_file = optarg; break;
		case OPT_OTLP: o->otlp_file = optarg; break;
		case OPT_ZIPKIN: o->zipkin_file = optarg; break;
		case OPT_PROFILE: o->profile = true; break;
		case OPT_FOLDED: o->folded_file = optarg; break;
		case OPT_KALLSYMS: o->kallsyms = optarg; break;
		case 'c':
			o->count = number(optarg, "--count", LLONG_MAX);
			break;
		case 'C': o->rot.size = file_size(optarg); break;
		case 'G':
			o->rot.seconds = number(optarg, "-G", INT_MAX);
			if (!o->rot.seconds)
				bad_usage("bad -G 0: at least 1 second");
			break;
		case 'W':
			o->rot.files = number(optarg, "-W", INT_MAX);
			if (!o->rot.files)
				bad_usage("bad -W 0: at least 1 file");
			break;
		case 'z': o->rot.command = optarg; break;
		case 'e': o->link = true; break;
		case 's':
			snap_given = true;
			o->snaplen = number(optarg, "--snaplen", SNAPLEN_DEFAULT);
			if (!o->snaplen)
				o->snaplen = SNAPLEN_DEFAULT;
			break;
		case OPT_JOURNEY_TIMEOUT:
			o->journey_timeout_ns = number(optarg, "--journey-timeout",
						       3600000) * NSEC_PER_MSEC;
			if (!o->journey_timeout_ns)
				bad_usage("bad --journey-timeout 0: at least 1 ms");
			break;
		case OPT_SIZE_WM:
			o->size_wm = number(optarg, "--size-wm", LLONG_MAX);
			break;
		case OPT_COUNT_WM:
			o->count_wm = number(optarg, "--count-wm", LLONG_MAX);
			break;
		case OPT_TIMEOUT:
			o->timeout_ms = number(optarg, "--timeout",
					       MAGNET_TIMEOUT_MAX_US / 1000);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?':	/* getopt_long() said which and why */
			usage(stderr);
			exit(2);
		default:
			for (size_t k = 0; k < NREFUSED; k++)
				if (refused[k].opt == opt)
					bad_usage(refused[k].why);
			usage(stderr);
			exit(2);
		}
	}
	if (o->nread_files > 1) {
		for (unsigned int i = 0; i < o->nread_files; i++)
			if (!strcmp(o->read_files[i], "-"))
				bad_usage("-r -: standard input is one node's file; several -r read files");
		if (o->trace_file || o->pcapng_file)
			bad_usage("several -r: the nodes' records merge, with no one trace or pcapng file to save them in (-w, --trace)");
		if (o->nread_files > NODES_MAX)
			bad_usage("several -r: " NODES_MAX_TEXT " files at most");
	}
	if (o->read_file && o->probe_sets)
		bad_usage("-P adds probes for a live capture: not with --read");
	if (o->buffer_kib && !o->probe_sets)
		bad_usage("-B sizes the buffer -P makes; other buffers are sized when made (magnetctl buffer add NAME size BYTES)");
	if (o->read_file && o->nonblock)
		bad_usage("--nonblock is for a live capture: not with --read");
	if ((o->rot.size || o->rot.seconds || o->rot.files || o->rot.command) &&
	    (!o->pcapng_file || !strcmp(o->pcapng_file, "-")))
		bad_usage("-C, -G, -W and -z rotate the -w file: give -w FILE (not standard output)");
	if ((o->rot.files || o->rot.command) && !o->rot.size && !o->rot.seconds)
		bad_usage("-W and -z go with -C or -G");
	if (o->trace_file && o->pcapng_file && !strcmp(o->trace_file, "-") &&
	    !strcmp(o->pcapng_file, "-"))
		bad_usage("-w - and --trace - both want standard output");
	if (is_stdout(o->perfetto_file) + is_stdout(o->pcapng_file) +
	    is_stdout(o->trace_file) + is_stdout(o->otlp_file) +
	    is_stdout(o->zipkin_file) + is_stdout(o->folded_file) +
	    o->profile > 1)
		bad_usage("-w, --trace, --perfetto, --otlp, --zipkin, --folded and --profile cannot share standard output");
	if (o->kallsyms && !o->profile && !o->folded_file)
		bad_usage("--kallsyms names kernel functions for --profile and --folded: give one");
	o->print = print || (!o->trace_file && !o->pcapng_file &&
			     !o->perfetto_file && !o->otlp_file &&
			     !o->zipkin_file && !o->profile && !o->folded_file);
	if (o->print && (is_stdout(o->perfetto_file) || is_stdout(o->trace_file) ||
			 is_stdout(o->pcapng_file) || is_stdout(o->otlp_file) ||
			 is_stdout(o->zipkin_file) || is_stdout(o->folded_file) ||
			 o->profile))
		bad_usage("standard output carries the file written: --print does not go with it");
	/*
	 * Spans alone, live: of a packet's bytes they read the headers and a
	 * traceparent near the start; copying whole packets at every layer
	 * would be most of what tracing costs.
	 */
	if (!snap_given && !o->print && !o->trace_file && !o->pcapng_file &&
	    !o->perfetto_file && !o->nread_files &&
	    (o->otlp_file || o->zipkin_file))
		o->snaplen = SNAPLEN_SPANS;
	compile_filter(o, argc - optind, argv + optind);
	if (dump_level) {
		expr_dump(o->filter, dump_level);
		exit(0);
	}
}

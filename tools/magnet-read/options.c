// SPDX-License-Identifier: GPL-2.0
/*
 * magnet-read's command line: the options (tcpdump's where they mean
 * something for packets seen by probes in the network stack, and
 * magnet's own) parsed and checked into struct options, the expression
 * read and compiled, and the usage. tcpdump's options that mean nothing
 * here are refused, each with why. Bad usage exits with status 2; -h,
 * --version, -D and -d print and exit.
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

static void usage(FILE *f)
{
	fprintf(f,
"Usage: magnet-read [OPTIONS] [EXPRESSION]\n"
"\n"
"Read event records from a magnet buffer and print them, or save them to a\n"
"pcapng file or a trace file. Records of the packet probes (see magnetctl\n"
"probe add-set, or -P) are assembled into one journey per packet and\n"
"printed as tcpdump prints packets, with the layers each packet passed\n"
"under it. Reading consumes the records; a buffer has one reader at a time.\n"
"\n"
"Options:\n"
"  -b, --buffer NAME     buffer to read (default: default); see\n"
"                        " DEBUGFS "/magnet/control/buffers\n"
"  -c, --count N         stop after N packets or records shown (those the\n"
"                        expression lets through; loss records not counted)\n"
"  -w, --write FILE      write the packets the expression selects to pcapng\n"
"                        FILE (\"-\": standard output) instead of printing,\n"
"                        for tcpdump -r, tshark and Wireshark: as tcpdump -i\n"
"                        any saves them (link type LINUX_SLL2, one interface\n"
"                        per device, each packet once on each device and\n"
"                        direction it passed), nanosecond times, the journey\n"
"                        as each packet's comment (wireshark/magnet.lua makes\n"
"                        fields of it), records lost as drop counts; packets\n"
"                        without bytes from the IP header are left out\n"
"                        (counted)\n"
"  -C SIZE               before a packet, if the -w file is past SIZE\n"
"                        (millions of bytes; with k, m, g: KiB, MiB, GiB)\n"
"                        start the next: FILE, FILE1, FILE2, ... (tcpdump's)\n"
"  -G SECONDS            before a packet, if the -w file was started SECONDS\n"
"                        ago, start the next, named by strftime(FILE)\n"
"  -W N                  with -C: N files, FILE0..., round and round; with\n"
"                        -G: end after N files\n"
"  -z COMMAND            with -C or -G: run COMMAND FILE on each file written\n"
"      --perfetto FILE   write the journeys of the packets the expression\n"
"                        selects as a timeline to FILE (\"-\": standard\n"
"                        output), in Chrome's trace-event JSON, which\n"
"                        ui.perfetto.dev, chrome://tracing and speedscope\n"
"                        open: a track per CPU, a slice per layer (until the\n"
"                        next), an arrow from each packet's first layer to\n"
"                        its last; instead of printing, as -w\n"
"      --trace FILE      save every record read, unfiltered, to magnet trace\n"
"                        FILE (\"-\": standard output); alone (no --print,\n"
"                        -w, -c or expression) it only saves and counts\n"
"                        records, the cheapest way to capture: -r assembles\n"
"                        the packets later\n"
"  -r, --read FILE       read FILE (\"-\": standard input) instead of a\n"
"                        buffer: a trace file (--trace's; version 1 files\n"
"                        have no wall clock: times print as CLOCK_MONOTONIC\n"
"                        seconds), or a pcapng or pcap file (-w's, with the\n"
"                        journeys; tcpdump's, one packet each time it was\n"
"                        seen; pcap not on standard input)\n"
"      --print           with -w, --trace or --perfetto: print as well\n"
"  -N, --nonblock        read what was logged before it started, then exit\n"
"  -P, --probes SETS     add the packet probe sets SETS (comma-separated:\n"
"                        udp-send, udp-recv, tcp-send, tcp-recv) logging into\n"
"                        the buffer for the length of the capture; lists on\n"
"                        standard error the function each layer went on\n"
"  -i, --interface DEV   only packets that passed device DEV at some layer\n"
"                        (repeat for several: any of them; \"any\": every\n"
"                        device, as if not given); -w writes them as seen\n"
"                        there; live, DEV must be a device of some network\n"
"                        namespace (magnet sees them all)\n"
"      --tgid N[,N...]   only packets a layer of which ran in process N, and\n"
"                        other records of process N (tcpdump has no such\n"
"                        option: magnet knows each layer's process)\n"
"      --cpu LIST        only packets a layer of which ran on a CPU of LIST\n"
"                        (\"0-3,6\"), and other records of those CPUs\n"
"  -F, --filter-file FILE  read the expression from FILE (not with an\n"
"                        expression on the command line)\n"
"  -s, --snaplen BYTES   bytes of each packet kept for -x and -w (from the\n"
"                        IP header; -w's frames have the 20-byte cooked\n"
"                        header in front), and\n"
"                        with -P asked of the probes (default and 0: 262144,\n"
"                        whole packets)\n"
"  -n, --numeric         print addresses and ports as numbers (otherwise\n"
"                        names from /etc/hosts and /etc/services; never DNS)\n"
"  -q, --quiet           one line per packet, no journey; other records and\n"
"                        losses are only counted\n"
"  -x, --hex             print each packet's kept bytes, or each record's\n"
"                        payload, as hex (-xx: the same: no link-level\n"
"                        header is kept)\n"
"  -X                    the packet's bytes as hex and ASCII (-XX: the same)\n"
"  -A                    the packet's bytes as ASCII\n"
"  -t                    no time on packet lines; -tt seconds since the\n"
"                        epoch; -ttt since the packet before; -tttt with\n"
"                        the date; -ttttt since the first packet\n"
"      --time-stamp-precision micro|nano  digits of packet times (default\n"
"                        nano: magnet's records are stamped in ns)\n"
"  -l                    line-buffered standard output\n"
"  -U                    write each packet (or chunk of records) to the -w\n"
"                        or --trace file as it comes\n"
"  -Z, --relinquish-privileges USER  once the buffer (or -r's file) is\n"
"                        open and -P's probes are in place, run as USER\n"
"                        and USER's groups; -w and --trace files are\n"
"                        made after, as USER (as root only; tcpdump's -Z)\n"
"  -D, --list-interfaces list the devices -i can name, then exit\n"
"  -d                    print the expression's compiled program (-dd as C,\n"
"                        -ddd as decimal), then exit\n"
"  -S                    absolute TCP sequence numbers (always)\n"
"  -e                    the link level on each packet line, as tcpdump -i\n"
"                        any -e prints it in place of \"IP\": each device and\n"
"                        direction the packet was seen at, with its index,\n"
"                        the ethertype and the frame's length (no link-layer\n"
"                        address is kept)\n"
"  -v                    the IP header's fields on each packet line, as\n"
"                        tcpdump -v prints them (from the bytes kept; else\n"
"                        the protocol and length); -vv also each layer's\n"
"                        skb and socket, length and bytes kept\n"
"      --version         print magnet-read's and libpcap's versions\n"
"  -j, --json            print JSON lines instead of text\n"
"      --journey-timeout MS  a journey no record joined for MS milliseconds\n"
"                        of stream time has ended (default %d)\n"
"      --size-wm BYTES   wake only when BYTES of records are waiting\n"
"                        (default 64 KiB, at most a quarter of a CPU's ring;\n"
"                        with --trace alone from the mapping: a quarter of the\n"
"                        ring; with -N: 0)\n"
"      --count-wm N      wake only when N records are waiting (default 0)\n"
"      --timeout MS      wake after MS milliseconds anyway, with what there\n"
"                        is (default 100; with -N: 0)\n"
"      --no-kernel-filter  with -P: run the expression here only (by\n"
"                        default it runs in the kernel too, on each layer,\n"
"                        so that packets it rejects are not logged at all;\n"
"                        not with --trace, which saves every record, or an\n"
"                        expression that asks about devices or direction)\n"
"      --no-map          copy the records out with read() instead of\n"
"                        reading them where the kernel wrote them (a\n"
"                        drop-mode buffer's mapping, the default;\n"
"                        overwrite-mode buffers are always read with\n"
"                        read())\n"
"  -h, --help            show this help\n"
"tcpdump's -p -I -B -y -L -K -E -M -T -O -H -J -m -u -Y -Q\n"
"are refused, each with why; -b, -N and -j mean other things\n"
"here (see above, and DIFFERENCES FROM TCPDUMP in the manual).\n"
"\n"
"Expression: tcpdump's filter language, pcap-filter(7), all words after\n"
"the options joined (or -F FILE), compiled and run by libpcap:\n"
"  udp port 5001   tcp[tcpflags] & tcp-syn != 0   ip6 and dst net 2001:db8::/32\n"
"  greater 1000   ip[8] = 64   portrange 5000-5100   not (host 10.0.0.1 or icmp)\n"
"A packet looks to it as it does to tcpdump -i any (link type LINUX_SLL2):\n"
"a cooked header (device index, direction: inbound, outbound and ifindex\n"
"work) in front of the IP bytes its records kept, and its IP length; it is\n"
"shown if the expression selects it on any device it passed (with -i:\n"
"any of those given), as tcpdump -i any sees it once on each. Of a\n"
"packet whose records kept no IP bytes (-s 0 at the probes, or only the\n"
"application's data), the expression sees IP and UDP/TCP headers built\n"
"from its records: addresses, ports, protocol, length, TCP flags and\n"
"sequence number; anything else (TTL, IP id, options, TCP window and\n"
"acknowledgement, payload) reads as zero, and the summary counts them.\n"
"Records that are not a packet's never match an expression; --tgid and\n"
"--cpu select them by their own process and CPU. Loss records are always\n"
"shown. A bad expression: libpcap's message, exit status 2.\n"
"\n"
"Output, text:\n"
"  a packet, as tcpdump prints it, time of its first record (wall clock):\n"
"    HH:MM:SS.NNNNNNNNN IP SRC.PORT > DST.PORT: UDP, length BYTES\n"
"    HH:MM:SS.NNNNNNNNN IP6 SRC.PORT > DST.PORT: Flags [P.], seq A:B, ack N,\n"
"        win N, length BYTES\n"
"  (sequence numbers absolute, as tcpdump -S prints them)\n"
"  then one line per layer it passed: the layer (socket, udp/tcp, ip,\n"
"  dev-queue, dev-xmit, dev-recv, ip, udp/tcp, sock-queue, app), its time,\n"
"  microseconds since the layer before, CPU, context, TGID/TID and device:\n"
"    LAYER HH:MM:SS.NNNNNNNNN +MICROSECONDS us cpu CPU [CONTEXT] TGID/TID [DEV]\n"
"  any other record, one line:\n"
"    SECONDS.NANOSECONDS cpu CPU ev EVENT [CONTEXT] TGID/TID id ID len BYTES\n"
"  where the time is CLOCK_MONOTONIC and CONTEXT is softirq, hardirq or nmi\n"
"  when the record was logged from one. Lost records show as\n"
"    SECONDS.NANOSECONDS cpu CPU LOST N records (TOTAL since the buffer was made)\n"
"  at the place in the stream where they were lost. Records of all CPUs are\n"
"  shown in timestamp order (held back up to 50 ms of stream time); a\n"
"  journey ends at the app layer, after --journey-timeout without a record,\n"
"  or at the end; packets are shown in order of their first record.\n"
"Output, JSON (-j): one object per line: {\"type\":\"packet\",...,\"journey\":\n"
"  [{\"layer\",\"ts\",\"delta_ns\",\"cpu\",\"tgid\",\"tid\",\"dev\",...}]},\n"
"  {\"type\":\"record\",...}, {\"type\":\"loss\",...}, and at the end\n"
"  {\"type\":\"summary\",...} with the latency per hop.\n"
"At the end, on standard error (unless -j): for each pair of consecutive\n"
"layers seen, count, min, median, p99 and max of the time between them in\n"
"microseconds (exact up to %u samples per hop, then from a uniform\n"
"sample of that many); then\n"
"  magnet-read: P packets captured, F filtered, D without packet data\n"
"  magnet-read: N records, M lost\n"
"(the first line when there were packets, an expression, -i, -P or\n"
"-w; of a pcapng file, \"N packets read\" instead of records). SIGINT or\n"
"SIGTERM ends the capture: the records logged until\n"
"then are read too, then shown (a second signal: at once).\n"
"\n"
"Trace files (--trace) hold a header (format version 2: the wall clock\n"
"offset, the snap length, the buffer) and the records exactly as read; -r\n"
"shows them as they were shown live: --trace F --print EXPR and -r F EXPR\n"
"print the same. -r of -w's pcapng file shows its packets and journeys\n"
"as they were shown live (but for the records that were not packets').\n"
"\n"
"Examples:\n"
"  magnet-read -P udp-send,udp-recv -n udp port 5001\n"
"  magnet-read -P tcp-send,tcp-recv -i eth0 -c 10 -q\n"
"  magnet-read -P udp-send,udp-recv -w out.pcapng udp; tshark -r out.pcapng\n"
"  magnet-read --trace trace.mtr --print -n   then: magnet-read -r trace.mtr -n\n"
"  magnet-read -r trace.mtr -w out.pcapng\n"
"  magnet-read -N -q                       drain the buffer, count only\n"
"\n"
"Exit status: 0 on success, 1 on an error, 2 on bad usage (a bad option\n"
"or expression). Needs root and the magnet module loaded (debugfs at\n"
DEBUGFS "), except with -r.\n", JOURNEY_TIMEOUT_MS, HOP_SAMPLES_MAX);
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
       OPT_VERSION, OPT_PRECISION, OPT_NO_KERNEL_FILTER };

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
	{ 'B', true, "-B: magnet's buffers are sized when made (magnetctl buffer add NAME size BYTES), not by the reader" },
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

	if (expr_compile(text, &sel, &o->filter, err, sizeof(err))) {
		fprintf(stderr, PROG ": bad filter expression: %s\n", err);
		exit(2);
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
	char optstring[128] = "b:c:w:r:NP:i:s:nqxjhF:XAtlUDSdZ:vC:G:W:z:e";
	size_t len = strlen(optstring);
	bool print = false;
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
		case 'w': o->pcapng_file = optarg; break;
		case 'r': o->read_file = optarg; break;
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
			if (++o->verbose > 2)
				bad_usage("-v: at most -vv");
			break;
		case 'U': o->packet_buffered = true; break;
		case 'D': list_interfaces(); exit(0);
		case 'S': break;	/* sequence numbers are absolute anyway */
		case 'd': dump_level++; break;
		case OPT_VERSION:
			printf("magnet-read version %s\n%s\n", MAGNET_VERSION,
			       pcap_lib_version());
			exit(0);
		case 'j': o->json = true; break;
		case OPT_PRINT: print = true; break;
		case OPT_TRACE: o->trace_file = optarg; break;
		case OPT_PERFETTO: o->perfetto_file = optarg; break;
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
		case '?':
			fprintf(stderr, "Try 'magnet-read --help'.\n");
			exit(2);
		default:
			for (size_t k = 0; k < NREFUSED; k++)
				if (refused[k].opt == opt)
					bad_usage(refused[k].why);
			fprintf(stderr, "Try 'magnet-read --help'.\n");
			exit(2);
		}
	}
	if (o->read_file && o->probe_sets)
		bad_usage("-P adds probes for a live capture: not with --read");
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
	if ((o->perfetto_file && !strcmp(o->perfetto_file, "-")) +
	    (o->pcapng_file && !strcmp(o->pcapng_file, "-")) +
	    (o->trace_file && !strcmp(o->trace_file, "-")) > 1)
		bad_usage("-w, --trace and --perfetto cannot share standard output");
	o->print = print || (!o->trace_file && !o->pcapng_file &&
			     !o->perfetto_file);
	if (o->print && ((o->perfetto_file && !strcmp(o->perfetto_file, "-")) ||
			 (o->trace_file && !strcmp(o->trace_file, "-")) ||
			 (o->pcapng_file && !strcmp(o->pcapng_file, "-"))))
		bad_usage("standard output carries the file written: --print does not go with it");
	compile_filter(o, argc - optind, argv + optind);
	if (dump_level) {
		expr_dump(o->filter, dump_level);
		exit(0);
	}
}

// SPDX-License-Identifier: GPL-2.0
/*
 * pcapng files: written by -w, read by -r. See the pcapng specification
 * (draft-ietf-opsawg-pcapng).
 *
 * Written: what tcpdump -i any would have saved, and the journey.
 * - Link type LINUX_SLL2 (276), nanosecond timestamps: each packet behind
 *   the cooked header cooked.c builds (protocol, interface index,
 *   direction), so that tcpdump and Wireshark tell devices and
 *   directions apart.
 * - One Interface Description Block per device the packets passed (its
 *   name in if_name, "device NAME, ifindex N" in if_description), made
 *   before the first packet that passes it, with those of every device
 *   of that packet's journey; packets that passed no device (a capture
 *   of the socket layers only) are on an interface named "any", ifindex
 *   0.
 * - One Enhanced Packet Block per sighting, as tcpdump -i any sees a
 *   packet once on each device it passes (cooked.c): over a veth pair,
 *   once going out of one end, once coming in at the other. Each has its
 *   direction (epb_flags inbound or outbound) and the packet's whole
 *   journey as its comment (below).
 * - Losses: the records magnet's buffer lost since the packet before, as
 *   the next packet's epb_dropcount; at the end an Interface Statistics
 *   Block on each interface: its packets (isb_ifrecv) and every record
 *   the capture lost (isb_osdrop: losses are the buffer's, of no one
 *   device), its first and last packet's times.
 * - Only packets whose records kept bytes from the IP header on are
 *   written (headers built from the records would be made-up bytes in a
 *   file others read); the rest are counted in the summary.
 *
 * The journey comment, one line per layer, as magnet-read prints it but
 * with times as Unix seconds (so that it reads the same in any time zone):
 *   LAYER SECONDS.NANOSECONDS +MICROSECONDS us cpu CPU [CONTEXT] TGID/TID [DEV]
 * e.g. "dev-xmit 1795583629.123466789 +9.000 us cpu 0 softirq 1234/1234 va".
 * The Wireshark dissector (wireshark/magnet.lua) and the reader below
 * parse it.
 *
 * Read: pcapng files of magnet-read and of other tools (tcpdump, tshark,
 * dumpcap), little- or big-endian: each packet, of link type LINUX_SLL2,
 * LINUX_SLL, Ethernet or raw IP, becomes a journey (its layers from
 * magnet's comment if it has one), printed, filtered and saved as a live
 * capture's are. The sightings of one journey (consecutive packets with
 * the same comment and bytes) are one journey again. libpcap reads
 * pcapng too, but does not hand out a packet's comment or flags, which
 * hold the journey: hence a reader here. pcap files (tcpdump -w's) have
 * neither: libpcap reads them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "magnet-read.h"

#define BT_SHB		0x0a0d0d0a
#define BT_IDB		0x00000001
#define BT_PB		0x00000002	/* obsolete Packet Block */
#define BT_SPB		0x00000003
#define BT_ISB		0x00000005
#define BT_EPB		0x00000006
#define BYTE_ORDER_MAGIC 0x1a2b3c4d
#define LINKTYPE_ETHERNET	1
#define LINKTYPE_RAW		101
#define LINKTYPE_LINUX_SLL	113
#define LINKTYPE_IPV4		228
#define LINKTYPE_IPV6		229
#define LINKTYPE_LINUX_SLL2	276
#define OPT_END		0
#define OPT_COMMENT	1
#define SHB_OS		3
#define SHB_USERAPPL	4
#define IF_NAME		2
#define IF_DESCRIPTION	3
#define IF_TSRESOL	9
#define EPB_FLAGS	2
#define EPB_DROPCOUNT	4
#define EPB_INBOUND	0x1
#define EPB_OUTBOUND	0x2
#define ISB_STARTTIME	2
#define ISB_ENDTIME	3
#define ISB_IFRECV	4
#define ISB_OSDROP	7
#define BLOCK_MAX	(16 << 20)	/* a block read is at most this */

/* --- writing -------------------------------------------------------------------- */

struct pcapng_if {
	char name[16];
	uint32_t ifindex;
	uint64_t packets, first, last;
};

/* A -z command running, and the file it was given. */
struct zjob {
	pid_t pid;
	char *name;
};

struct pcapng {
	FILE *f;
	const char *path;		/* of the file open, for messages */
	const char *pattern;		/* -w's */
	char name[PATH_MAX];		/* of the file open */
	struct rotation rot;
	unsigned int count;		/* -C's files (wraps at -W) */
	unsigned int timed;		/* -G's files */
	time_t opened;			/* when the file open was */
	uint32_t snaplen;
	bool live;
	bool flush;			/* -U: each packet written at once */
	struct pcapng_if *ifs;
	unsigned int nifs;
	uint64_t lost_since, lost;	/* records lost: since the last packet, all */
	uint8_t *pkt;			/* cooked header + packet */
	struct zjob *jobs;		/* -z's commands not yet ended */
	unsigned int njobs;
	/* the block being built */
	uint8_t *buf;
	size_t len, size;
};

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	return d;
}

static void put(struct pcapng *p, const void *data, size_t len)
{
	size_t pad = (4 - len % 4) % 4;

	if (p->len + len + pad > p->size) {
		p->size = (p->len + len + pad) * 2 + 256;
		p->buf = xrealloc(p->buf, p->size);
	}
	memcpy(p->buf + p->len, data, len);
	memset(p->buf + p->len + len, 0, pad);
	p->len += len + pad;
}

static void put32(struct pcapng *p, uint32_t v)
{
	put(p, &v, 4);
}

static void put_option(struct pcapng *p, uint16_t code, const void *data,
		       size_t len)
{
	uint16_t h[2] = { code, len };

	put(p, h, 4);
	if (len)
		put(p, data, len);
}

static void put_option64(struct pcapng *p, uint16_t code, uint64_t v)
{
	put_option(p, code, &v, sizeof(v));
}

/* A timestamp in nanoseconds as an option: high word, low word. */
static void put_option_ts(struct pcapng *p, uint16_t code, uint64_t ts)
{
	uint32_t v[2] = { ts >> 32, (uint32_t)ts };

	put_option(p, code, v, sizeof(v));
}

/* Start a block: type, and room for its length. */
static void block_start(struct pcapng *p, uint32_t type)
{
	p->len = 0;
	put32(p, type);
	put32(p, 0);
}

static int block_end(struct pcapng *p)
{
	uint32_t total = p->len + 4;

	put32(p, total);
	memcpy(p->buf + 4, &total, 4);
	if (fwrite(p->buf, 1, p->len, p->f) != p->len) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The interface of device @dev ("": none), its block written when new. */
static int interface(struct pcapng *p, const char *dev, uint32_t ifindex)
{
	static const char none[] = "packets that passed no device (magnet's layers above the devices)";
	uint16_t linktype[2] = { LINKTYPE_LINUX_SLL2, 0 };
	uint8_t tsresol = 9;	/* nanoseconds */
	const char *name = *dev ? dev : "any";
	char desc[80];
	unsigned int i;

	for (i = 0; i < p->nifs; i++)
		if (!strcmp(p->ifs[i].name, name) && p->ifs[i].ifindex == ifindex)
			return i;
	p->ifs = xrealloc(p->ifs, (p->nifs + 1) * sizeof(*p->ifs));
	memset(&p->ifs[i], 0, sizeof(p->ifs[i]));
	snprintf(p->ifs[i].name, sizeof(p->ifs[i].name), "%s", name);
	p->ifs[i].ifindex = ifindex;
	p->nifs++;
	if (*dev)
		snprintf(desc, sizeof(desc), "device %s, ifindex %u", dev, ifindex);
	block_start(p, BT_IDB);
	put(p, linktype, sizeof(linktype));
	put32(p, p->snaplen > UINT32_MAX - COOKED_HDR_LEN ? UINT32_MAX :
		 p->snaplen + COOKED_HDR_LEN);
	put_option(p, IF_NAME, name, strlen(name));
	put_option(p, IF_DESCRIPTION, *dev ? desc : none,
		   strlen(*dev ? desc : none));
	put_option(p, IF_TSRESOL, &tsresol, 1);
	put_option(p, OPT_END, NULL, 0);
	return block_end(p) ? -1 : (int)i;
}

/* Start a file: @p->name, its section header; no interface yet. */
static void zjob_forget(struct pcapng *p, unsigned int i)
{
	free(p->jobs[i].name);
	p->jobs[i] = p->jobs[--p->njobs];
}

/*
 * -z's commands: those that ended are forgotten; one given the file
 * about to be written (-W's names come round again) is waited for, so
 * the file is not cut under the command still reading it; with every,
 * all are (magnet-read ends after them).
 */
static void zjobs_reap(struct pcapng *p, bool every)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
		for (unsigned int i = 0; i < p->njobs; i++)
			if (p->jobs[i].pid == pid) {
				zjob_forget(p, i);
				break;
			}
	for (unsigned int i = 0; i < p->njobs;)
		if (every || !strcmp(p->jobs[i].name, p->name)) {
			waitpid(p->jobs[i].pid, NULL, 0);
			zjob_forget(p, i);
		} else {
			i++;
		}
}

static int file_open(struct pcapng *p)
{
	static const char appl[] = "magnet-read " MAGNET_VERSION;
	uint16_t version[2] = { 1, 0 };
	int64_t section_len = -1;
	struct utsname u;
	char os[sizeof(u.sysname) + sizeof(u.release) + 1];

	zjobs_reap(p, false);
	p->f = strcmp(p->name, "-") ? fopen(p->name, "w") : stdout;
	if (!p->f) {
		fprintf(stderr, PROG ": %s: %s\n", p->name, strerror(errno));
		return -1;
	}
	p->path = p->name;
	p->nifs = 0;
	p->lost = 0;
	p->opened = time(NULL);
	block_start(p, BT_SHB);
	put32(p, BYTE_ORDER_MAGIC);
	put(p, version, sizeof(version));
	put(p, &section_len, sizeof(section_len));
	if (p->live && !uname(&u)) {	/* the system captured on */
		snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
		put_option(p, SHB_OS, os, strlen(os));
	}
	put_option(p, SHB_USERAPPL, appl, strlen(appl));
	put_option(p, OPT_END, NULL, 0);
	return block_end(p);
}

/*
 * The name of the next file, as tcpdump makes it: with -G, the name
 * through strftime() at the time the file starts; with -C, a count
 * after it (from the second file on; with -W from the first, padded
 * to the digits of -W's largest).
 */
static int file_name(struct pcapng *p, unsigned int count)
{
	char base[PATH_MAX];
	time_t now = time(NULL);
	struct tm tm;
	int digits = 0;

	if (p->rot.seconds && localtime_r(&now, &tm)) {
		if (!strftime(base, sizeof(base), p->pattern, &tm) && *p->pattern) {
			fprintf(stderr, PROG ": %s: the file name is too long\n",
				p->pattern);
			return -1;
		}
	} else {
		snprintf(base, sizeof(base), "%s", p->pattern);
	}
	for (unsigned int w = p->rot.files ? p->rot.files - 1 : 0; w; w /= 10)
		digits++;
	if ((count || digits) && snprintf(p->name, sizeof(p->name), "%s%0*u",
					  base, digits, count) >= (int)sizeof(p->name)) {
		fprintf(stderr, PROG ": %s: too many files or the name is too long\n",
			base);
		return -1;
	}
	if (!count && !digits)
		snprintf(p->name, sizeof(p->name), "%s", base);
	return 0;
}

struct pcapng *pcapng_create(const char *path, uint32_t snaplen, bool live,
			     const struct rotation *rot)
{
	struct pcapng *p = calloc(1, sizeof(*p));

	if (!p || !(p->pkt = malloc(COOKED_HDR_LEN + COOKED_PACKET_MAX))) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	p->pattern = path;
	p->snaplen = snaplen;
	p->live = live;
	if (rot)
		p->rot = *rot;
	if (file_name(p, 0) || file_open(p)) {
		pcapng_close(p);
		return NULL;
	}
	return p;
}

void pcapng_lost(struct pcapng *p, uint64_t n)
{
	p->lost_since += n;
	p->lost += n;
}

static int packet(struct pcapng *p, const struct journey *j,
		  const struct sighting *s, uint64_t ts, uint32_t caplen,
		  uint32_t len, const char *comment)
{
	uint32_t flags = s->out ? EPB_OUTBOUND : EPB_INBOUND;
	int i = interface(p, s->dev, s->ifindex);

	if (i < 0)
		return -1;
	cooked_header(p->pkt, j, s);
	block_start(p, BT_EPB);
	put32(p, i);
	put32(p, ts >> 32);
	put32(p, (uint32_t)ts);
	put32(p, COOKED_HDR_LEN + caplen);
	put32(p, COOKED_HDR_LEN + len);
	put(p, p->pkt, COOKED_HDR_LEN + caplen);
	put_option(p, EPB_FLAGS, &flags, sizeof(flags));
	if (p->lost_since)
		put_option64(p, EPB_DROPCOUNT, p->lost_since);
	if (comment && *comment)
		put_option(p, OPT_COMMENT, comment,
			   strnlen(comment, 65535 - 3));
	put_option(p, OPT_END, NULL, 0);
	if (block_end(p))
		return -1;
	p->lost_since = 0;
	if (!p->ifs[i].packets++)
		p->ifs[i].first = ts;
	p->ifs[i].last = ts;
	return 0;
}

static int rotate(struct pcapng *p);

int pcapng_write(struct pcapng *p, const struct journey *j, int64_t offset,
		 const char *comment, const struct sighting *s, unsigned int n)
{
	uint64_t ts = j->item.ts + offset;
	uint32_t caplen, len;

	if (cooked_packet(p->pkt + COOKED_HDR_LEN, j, &caplen, &len) != COOKED_KEPT)
		return 0;
	if (n) {
		int r = rotate(p);

		if (r)
			return r < 0 ? -1 : 2;
	}
	if (caplen > p->snaplen)
		caplen = p->snaplen;
	/* every device of the journey described before its first sighting */
	for (unsigned int i = 0; i < n; i++)
		if (interface(p, s[i].dev, s[i].ifindex) < 0)
			return -1;
	for (unsigned int i = 0; i < n; i++) {
		/* each at the time it was seen there */
		uint64_t t = ts;

		for (unsigned int k = 0; k < j->nhops; k++)
			if (!strcmp(j->hop[k].dev, s[i].dev) &&
			    layer_sends(j->hop[k].layer) == s[i].out) {
				t = j->hop[k].ts + offset;
				break;
			}
		if (packet(p, j, &s[i], t, caplen, len, comment))
			return -1;
	}
	if (p->flush && fflush(p->f)) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		return -1;
	}
	return 1;
}

void pcapng_flush_each(struct pcapng *p)
{
	p->flush = true;
}

static int statistics(struct pcapng *p)
{
	for (unsigned int i = 0; i < p->nifs; i++) {
		const struct pcapng_if *in = &p->ifs[i];
		static const char why[] = "isb_osdrop: records magnet's buffer lost during the capture, of every device";

		block_start(p, BT_ISB);
		put32(p, i);
		put32(p, in->last >> 32);
		put32(p, (uint32_t)in->last);
		if (in->packets) {
			put_option_ts(p, ISB_STARTTIME, in->first);
			put_option_ts(p, ISB_ENDTIME, in->last);
		}
		put_option64(p, ISB_IFRECV, in->packets);
		put_option64(p, ISB_OSDROP, p->lost);
		put_option(p, OPT_COMMENT, why, strlen(why));
		put_option(p, OPT_END, NULL, 0);
		if (block_end(p))
			return -1;
	}
	return 0;
}

/* End the file open: its statistics, then -z's command on it. */
static int file_close(struct pcapng *p)
{
	int ret = 0;

	if (!p->f)
		return 0;
	if (statistics(p))
		ret = -1;
	if (fflush(p->f) || (p->f != stdout && fclose(p->f))) {
		fprintf(stderr, PROG ": %s: %s\n", p->path, strerror(errno));
		ret = -1;
	}
	p->f = NULL;
	if (p->rot.command) {
		char *argv[] = { (char *)p->rot.command, p->name, NULL };
		pid_t pid;
		int err = posix_spawnp(&pid, p->rot.command, NULL, NULL, argv,
				       environ);

		if (err) {
			fprintf(stderr, PROG ": -z %s: %s\n", p->rot.command,
				strerror(err));
		} else {
			p->jobs = xrealloc(p->jobs, (p->njobs + 1) * sizeof(*p->jobs));
			p->jobs[p->njobs].pid = pid;
			p->jobs[p->njobs].name = xstrdup(p->name);
			p->njobs++;
		}
	}
	return ret;
}

/*
 * Before a packet: the next file if -C's size or -G's time is reached.
 * 1: -G's -W files are done (the capture ends, as tcpdump's does).
 */
static int rotate(struct pcapng *p)
{
	bool timed = p->rot.seconds &&
		     time(NULL) - p->opened >= (time_t)p->rot.seconds;
	bool sized = p->rot.size && p->f != stdout &&
		     (uint64_t)ftello(p->f) > p->rot.size;

	if (!timed && !sized)
		return 0;
	if (file_close(p))
		return -1;
	if (timed) {
		if (p->rot.files && ++p->timed >= p->rot.files)
			return 1;
		p->count = 0;
	} else if (++p->count == p->rot.files && p->rot.files) {
		p->count = 0;	/* -W: round again, over the first */
	}
	return file_name(p, p->count) || file_open(p) ? -1 : 0;
}

int pcapng_close(struct pcapng *p)
{
	int ret = 0;

	if (!p)
		return 0;
	ret = file_close(p);
	zjobs_reap(p, true);	/* -z's commands end before magnet-read does */
	free(p->jobs);
	free(p->ifs);
	free(p->pkt);
	free(p->buf);
	free(p);
	return ret;
}

/* --- reading -------------------------------------------------------------------- */

struct pcapng_in_if {
	uint16_t linktype;
	uint64_t unit;			/* ns per timestamp unit, 0: finer */
	uint64_t per_ns;		/* units per ns when finer than 1 ns */
	char name[16];
	uint32_t ifindex;		/* from magnet-read's if_description */
	bool have_ifindex;
};

struct pcapng_in {
	FILE *f;
	const char *path;
	uint8_t head[8];		/* read already, not handed out */
	size_t headlen, headpos;
	bool swap;
	struct pcapng_in_if *ifs;
	unsigned int nifs;
	uint8_t *buf;
	size_t size;
	/* the journey last handed out, to join the sightings of one */
	char *last_comment;
	uint8_t *last_data;
	uint32_t last_caplen;
	unsigned long long skipped;	/* packets of link types not read */
	pcap_t *pcap;			/* a pcap file: libpcap reads it */
	uint64_t pcap_unit;		/* its times' fraction: ns per unit */
};

static uint16_t rd16(const struct pcapng_in *r, const uint8_t *b)
{
	uint16_t v;

	memcpy(&v, b, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(const struct pcapng_in *r, const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
	return r->swap ? __builtin_bswap32(v) : v;
}

bool pcapng_is(const uint8_t *head, size_t len)
{
	static const uint32_t magic[] = {
		BT_SHB,
		0xa1b2c3d4, 0xd4c3b2a1,	/* pcap, microseconds */
		0xa1b23c4d, 0x4d3cb2a1,	/* pcap, nanoseconds */
	};
	uint32_t m;

	if (len < 4)
		return false;
	memcpy(&m, head, 4);
	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (m == magic[i])
			return true;
	return false;
}

void pcapng_close_read(struct pcapng_in *r);

/*
 * A pcap file: libpcap reads it, from its start: the file is opened
 * again (standard input cannot be read twice).
 */
static struct pcapng_in *open_pcap(struct pcapng_in *r, FILE *f)
{
	char err[PCAP_ERRBUF_SIZE];
	FILE *again;

	if (f == stdin) {
		fprintf(stderr, PROG ": a pcap file on standard input: give its name (pcapng files can come on standard input)\n");
		goto fail;
	}
	fclose(f);
	r->f = NULL;
	again = fopen(r->path, "r");
	if (!again) {
		fprintf(stderr, PROG ": %s: %s\n", r->path, strerror(errno));
		goto fail;
	}
	r->pcap = pcap_fopen_offline_with_tstamp_precision(again,
							   PCAP_TSTAMP_PRECISION_NANO, err);
	if (!r->pcap) {
		fclose(again);
		fprintf(stderr, PROG ": %s: %s\n", r->path, err);
		goto fail;
	}
	r->pcap_unit = 1;	/* libpcap hands out ns in tv_usec as asked */
	r->ifs = xrealloc(NULL, sizeof(*r->ifs));
	memset(r->ifs, 0, sizeof(*r->ifs));
	r->ifs[0].linktype = pcap_datalink(r->pcap) == DLT_RAW ? LINKTYPE_RAW :
			     pcap_datalink(r->pcap);
	r->nifs = 1;
	return r;
fail:
	pcapng_close_read(r);
	return NULL;
}

struct pcapng_in *pcapng_open_read(FILE *f, const char *path,
				   const uint8_t *head, size_t n)
{
	struct pcapng_in *r = calloc(1, sizeof(*r));

	if (!r || n > sizeof(r->head)) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	r->f = f;
	r->path = path;
	if (n)
		memcpy(r->head, head, n);
	if (n < 4)	/* the first 4 bytes say which kind of file */
		n += fread(r->head + n, 1, 4 - n, f);
	r->headlen = n;
	if (n == 4 && memcmp(r->head, "\x0a\x0d\x0d\x0a", 4) &&
	    pcapng_is(r->head, n))
		return open_pcap(r, f);
	return r;
}

/* fread() from the file, after what was read already. */
static size_t rd(struct pcapng_in *r, void *buf, size_t n)
{
	size_t k = r->headlen - r->headpos;

	if (k > n)
		k = n;
	memcpy(buf, r->head + r->headpos, k);
	r->headpos += k;
	return k + (n > k ? fread((uint8_t *)buf + k, 1, n - k, r->f) : 0);
}

void pcapng_close_read(struct pcapng_in *r)
{
	if (!r)
		return;
	if (r->f && r->f != stdin)
		fclose(r->f);
	if (r->pcap)
		pcap_close(r->pcap);
	free(r->ifs);
	free(r->buf);
	free(r->last_comment);
	free(r->last_data);
	free(r);
}

unsigned long long pcapng_skipped(const struct pcapng_in *r)
{
	return r ? r->skipped : 0;
}

static int bad(const struct pcapng_in *r, const char *why)
{
	fprintf(stderr, PROG ": %s: not a pcapng file magnet-read can read: %s\n",
		r->path, why);
	return -1;
}

/* The next block, whole, in r->buf: its type and length, 0 at the end. */
static int next_block(struct pcapng_in *r, uint32_t *type, uint32_t *len)
{
	uint8_t head[12];
	size_t n = rd(r, head, 8);

	if (n == 0 && feof(r->f))
		return 0;
	if (n != 8)
		return bad(r, ferror(r->f) ? strerror(errno) : "it ends inside a block");
	memcpy(type, head, 4);
	if (*type == BT_SHB) {
		uint32_t magic;

		if (rd(r, head + 8, 4) != 4)
			return bad(r, "it ends inside a block");
		memcpy(&magic, head + 8, 4);
		if (magic == BYTE_ORDER_MAGIC)
			r->swap = false;
		else if (magic == __builtin_bswap32(BYTE_ORDER_MAGIC))
			r->swap = true;
		else
			return bad(r, "a section header without the byte-order magic");
		/* a new section: its interfaces are new */
		r->nifs = 0;
	} else {
		*type = rd32(r, head);
	}
	*len = rd32(r, head + 4);
	if (*len < 12 || *len % 4 || *len > BLOCK_MAX)
		return bad(r, "a block of a length no block has");
	if (*len > r->size) {
		r->size = *len;
		r->buf = xrealloc(r->buf, r->size);
	}
	n = *type == BT_SHB ? 12 : 8;
	memcpy(r->buf, head, n);
	if (rd(r, r->buf + n, *len - n) != *len - n)
		return bad(r, "it ends inside a block");
	if (rd32(r, r->buf + *len - 4) != *len)
		return bad(r, "a block whose two lengths differ");
	return 1;
}

/* Options from @b to @end: call @fn on each. -1 if they overrun. */
static int options(struct pcapng_in *r, const uint8_t *b, const uint8_t *end,
		   void (*fn)(struct pcapng_in *r, uint16_t code,
			      const uint8_t *v, uint16_t len, void *arg),
		   void *arg)
{
	while (b + 4 <= end) {
		uint16_t code = rd16(r, b), len = rd16(r, b + 2);

		if (code == OPT_END)
			return 0;
		if ((size_t)(end - b - 4) < len)
			return -1;
		fn(r, code, b + 4, len, arg);
		b += 4 + ((len + 3) & ~3u);
	}
	return 0;
}

static void if_option(struct pcapng_in *r, uint16_t code, const uint8_t *v,
		      uint16_t len, void *arg)
{
	struct pcapng_in_if *in = arg;

	(void)r;
	if (code == IF_NAME) {
		size_t n = len < sizeof(in->name) - 1 ? len : sizeof(in->name) - 1;

		memcpy(in->name, v, n);
		in->name[strnlen(in->name, n)] = 0;
	} else if (code == IF_DESCRIPTION && len < 80) {
		char desc[80], dev[16];

		memcpy(desc, v, len);
		desc[len] = 0;
		in->have_ifindex = sscanf(desc, "device %15[^,], ifindex %u",
					  dev, &in->ifindex) == 2;
	} else if (code == IF_TSRESOL && len >= 1) {
		uint8_t e = v[0] & 0x7f;
		uint64_t units = 1;	/* per second */
		bool two = v[0] & 0x80;

		if ((two && e > 60) || (!two && e > 18))
			return;
		for (uint8_t i = 0; i < e; i++)
			units *= two ? 2 : 10;
		in->unit = units <= NSEC_PER_SEC ? NSEC_PER_SEC / units : 0;
		in->per_ns = units > NSEC_PER_SEC ? units / NSEC_PER_SEC : 0;
	}
}

struct epb_opts {
	const uint8_t *comment;
	uint16_t comment_len;
	uint32_t flags;
	bool have_flags;
};

static void epb_option(struct pcapng_in *r, uint16_t code, const uint8_t *v,
		       uint16_t len, void *arg)
{
	struct epb_opts *o = arg;

	if (code == OPT_COMMENT && !o->comment) {
		o->comment = v;
		o->comment_len = len;
	} else if (code == EPB_FLAGS && len == 4) {
		o->flags = rd32(r, v);
		o->have_flags = true;
	}
}

static unsigned int layer_by_name(const char *name, unsigned int after)
{
	for (unsigned int l = after; l < MAGNET_LAYER_COUNT; l++)
		if (!strcmp(layer_name(l, IPPROTO_TCP), name) ||
		    !strcmp(layer_name(l, IPPROTO_UDP), name) ||
		    !strcmp(layer_name(l, 0), name))
			return l;
	return MAGNET_LAYER_COUNT;
}

/*
 * The journey's layers from magnet's comment; false if it is not one
 * (another tool's comment, or none).
 */
static bool parse_journey(struct journey *j, const char *c)
{
	unsigned int after = MAGNET_LAYER_SOCKET, n = 0;
	const char *line = c;

	while (line && *line && n < MAGNET_LAYER_COUNT) {
		struct hop *h = &j->hop[n];
		char layer[16], ctx[16];
		unsigned long long sec, nsec;
		double delta;
		int used = 0;

		memset(h, 0, sizeof(*h));
		if (sscanf(line, "%15s %llu.%9llu +%lf us cpu %u %n", layer, &sec,
			   &nsec, &delta, &h->cpu, &used) < 5 || !used)
			return false;
		h->layer = layer_by_name(layer, after);
		if (h->layer >= MAGNET_LAYER_COUNT)
			return false;
		after = h->layer;
		h->ts = sec * NSEC_PER_SEC + nsec;
		line += used;
		if (sscanf(line, "%u/%u%n", &h->tgid, &h->tid, &used) == 2) {
			line += used;
		} else if (sscanf(line, "%15s %u/%u%n", ctx, &h->tgid, &h->tid,
				  &used) == 3) {
			h->rflags = !strcmp(ctx, "softirq") ? MAGNET_RF_SOFTIRQ :
				    !strcmp(ctx, "hardirq") ? MAGNET_RF_HARDIRQ :
				    !strcmp(ctx, "nmi") ? MAGNET_RF_NMI : 0;
			line += used;
		} else {
			return false;
		}
		if (*line == ' ' && sscanf(line + 1, "%15[^ \n]", h->dev) != 1)
			h->dev[0] = 0;
		n++;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	j->nhops = n;
	return n > 0;
}

/* Addresses, ports, protocol of the IP packet in j->data. */
static void parse_ip(struct journey *j)
{
	const uint8_t *d = j->data, *t;
	uint32_t n = j->caplen;

	if (n >= 20 && d[0] >> 4 == 4) {
		j->family = AF_INET;
		j->proto = d[9];
		memcpy(j->saddr, d + 12, 4);
		memcpy(j->daddr, d + 16, 4);
		t = d + (d[0] & 0xf) * 4;
		if ((d[6] & 0x1f) || d[7])	/* a later fragment */
			t = d + n;
	} else if (n >= 40 && d[0] >> 4 == 6) {
		j->family = AF_INET6;
		j->proto = d[6];
		memcpy(j->saddr, d + 8, 16);
		memcpy(j->daddr, d + 24, 16);
		t = d + 40;
	} else {
		return;
	}
	j->have_addrs = true;
	j->addrs_from_skb = true;
	if ((j->proto == IPPROTO_UDP || j->proto == IPPROTO_TCP) &&
	    t + 4 <= d + n) {
		j->sport = t[0] << 8 | t[1];
		j->dport = t[2] << 8 | t[3];
	}
	if (j->proto == IPPROTO_TCP && t + 14 <= d + n) {
		j->seq = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 | t[7];
		j->tcp_flags = t[13];
		j->have_seq = true;
	}
}

/* Bytes of link-layer header before the IP packet; -1: not IP. */
static int link_header(const struct pcapng_in_if *in, const uint8_t *d,
		       uint32_t caplen, uint32_t *ifindex, int *dir)
{
	switch (in->linktype) {
	case LINKTYPE_RAW:
	case LINKTYPE_IPV4:
	case LINKTYPE_IPV6:
		return 0;
	case LINKTYPE_LINUX_SLL2:
		if (caplen < 20)
			return -1;
		*ifindex = (uint32_t)d[4] << 24 | d[5] << 16 | d[6] << 8 | d[7];
		*dir = d[10] == 4 ? 1 : d[10] <= 3 ? 0 : -1;
		return (d[0] << 8 | d[1]) == 0x0800 || (d[0] << 8 | d[1]) == 0x86dd ? 20 : -1;
	case LINKTYPE_LINUX_SLL:
		if (caplen < 16)
			return -1;
		*dir = (d[0] << 8 | d[1]) == 4 ? 1 : 0;
		return (d[14] << 8 | d[15]) == 0x0800 || (d[14] << 8 | d[15]) == 0x86dd ? 16 : -1;
	case LINKTYPE_ETHERNET: {
		uint32_t off = 12;

		while (off + 2 <= caplen &&
		       ((d[off] << 8 | d[off + 1]) == 0x8100 ||
			(d[off] << 8 | d[off + 1]) == 0x88a8))
			off += 4;	/* VLAN tags */
		if (off + 2 > caplen)
			return -1;
		return (d[off] << 8 | d[off + 1]) == 0x0800 ||
		       (d[off] << 8 | d[off + 1]) == 0x86dd ? (int)off + 2 : -1;
	}
	default:
		return -1;
	}
}

static bool same_as_last(struct pcapng_in *r, const struct epb_opts *o,
			 const uint8_t *data, uint32_t caplen)
{
	return o->comment && r->last_comment && r->last_data &&
	       strlen(r->last_comment) == o->comment_len &&
	       !memcmp(r->last_comment, o->comment, o->comment_len) &&
	       r->last_caplen == caplen && !memcmp(r->last_data, data, caplen);
}

static void remember(struct pcapng_in *r, const struct epb_opts *o,
		     const uint8_t *data, uint32_t caplen)
{
	free(r->last_comment);
	free(r->last_data);
	r->last_comment = o->comment ? strndup((const char *)o->comment,
					       o->comment_len) : NULL;
	r->last_data = malloc(caplen ? caplen : 1);
	if (!r->last_data || (o->comment && !r->last_comment)) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	memcpy(r->last_data, data, caplen);
	r->last_caplen = caplen;
}

/*
 * The index of device @dev, as magnet-read described it when it wrote the
 * file (the interfaces before a journey's first packet include all of
 * its devices); 0 when unknown, or when two devices bear the name.
 */
static uint32_t described_ifindex(const struct pcapng_in *r, const char *dev)
{
	uint32_t found = 0;

	for (unsigned int i = 0; i < r->nifs; i++) {
		if (!r->ifs[i].have_ifindex || strcmp(r->ifs[i].name, dev))
			continue;
		if (found && found != r->ifs[i].ifindex)
			return 0;
		found = r->ifs[i].ifindex;
	}
	return found;
}

/* A packet as a journey: 1, or 0 if it is not one. */
static int packet_journey(struct pcapng_in *r, const struct pcapng_in_if *in,
			  uint64_t ts, const uint8_t *data, uint32_t caplen,
			  uint32_t origlen, const struct epb_opts *o,
			  struct journey **out)
{
	uint32_t ifindex = 0;
	struct journey *j;
	int hdr, dir = -1;
	char *comment;

	hdr = link_header(in, data, caplen, &ifindex, &dir);
	if (hdr < 0) {
		r->skipped++;
		return 0;
	}
	if (same_as_last(r, o, data + hdr, caplen - hdr))
		return 0;	/* another sighting of the same journey */
	remember(r, o, data + hdr, caplen - hdr);
	j = calloc(1, sizeof(*j));
	if (!j || !(j->data = malloc(caplen - hdr + 1))) {
		fprintf(stderr, PROG ": out of memory\n");
		exit(1);
	}
	j->item.kind = ITEM_PACKET;
	j->item.ts = ts;
	memcpy(j->data, data + hdr, caplen - hdr);
	j->caplen = caplen - hdr;
	j->data_len = origlen > (uint32_t)hdr ? origlen - hdr : j->caplen;
	j->data_flags = MAGNET_PKT_DATA_NET;
	parse_ip(j);
	if (o->have_flags && (o->flags & 3))
		dir = (o->flags & 3) == EPB_OUTBOUND;
	comment = r->last_comment;
	if (!comment || !parse_journey(j, comment)) {
		/* one sighting: this device, this direction */
		struct hop *h = &j->hop[0];

		memset(h, 0, sizeof(*h));
		h->layer = dir == 1 ? MAGNET_LAYER_DEV_XMIT : MAGNET_LAYER_DEV_RECV;
		h->ts = j->item.ts;
		h->len = j->data_len;
		h->ifindex = ifindex;
		if (strcmp(in->name, "any"))
			snprintf(h->dev, sizeof(h->dev), "%s", in->name);
		j->nhops = 1;
		j->bare = true;
	}
	for (unsigned int i = 0; i < j->nhops; i++) {
		if (!strcmp(j->hop[i].dev, in->name))
			j->hop[i].ifindex = ifindex;
		else if (j->hop[i].dev[0])
			j->hop[i].ifindex = described_ifindex(r, j->hop[i].dev);
		if (j->hop[i].layer >= MAGNET_LAYER_IP_SEND &&
		    j->hop[i].layer <= MAGNET_LAYER_PROTO_RECV && !j->hop[i].len)
			j->hop[i].len = j->data_len;
	}
	j->data_layer = j->hop[0].layer;
	j->item.ts = j->hop[0].ts;
	*out = j;
	return 1;
}

/* An Enhanced Packet Block as a journey: 1, or 0 if it is not one. */
static int epb_journey(struct pcapng_in *r, uint32_t len, struct journey **out)
{
	const uint8_t *b = r->buf, *end = r->buf + len - 4, *data;
	struct epb_opts o = {};
	struct pcapng_in_if *in;
	uint32_t id, caplen, origlen;
	uint64_t ts;

	if (len < 32)
		return bad(r, "an enhanced packet block too short");
	id = rd32(r, b + 8);
	ts = (uint64_t)rd32(r, b + 12) << 32 | rd32(r, b + 16);
	caplen = rd32(r, b + 20);
	origlen = rd32(r, b + 24);
	data = b + 28;
	if (id >= r->nifs)
		return bad(r, "a packet on an interface not described");
	if (caplen > (size_t)(end - data))
		return bad(r, "a packet longer than its block");
	in = &r->ifs[id];
	if (options(r, data + ((caplen + 3) & ~3u), end, epb_option, &o))
		return bad(r, "a packet's options overrun its block");
	ts = in->unit ? ts * in->unit : ts / in->per_ns;
	return packet_journey(r, in, ts, data, caplen, origlen, &o, out);
}

/* A packet of a pcap file, through libpcap. */
static int pcap_journey(struct pcapng_in *r, struct journey **out)
{
	static const struct epb_opts none;
	struct pcap_pkthdr *h;
	const u_char *data;
	int ret;

	while ((ret = pcap_next_ex(r->pcap, &h, &data)) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * NSEC_PER_SEC +
			      (uint64_t)h->ts.tv_usec * r->pcap_unit;

		if (packet_journey(r, &r->ifs[0], ts, data, h->caplen, h->len,
				   &none, out))
			return 1;
	}
	if (ret == PCAP_ERROR) {
		fprintf(stderr, PROG ": %s: %s\n", r->path, pcap_geterr(r->pcap));
		return -1;
	}
	return 0;
}

int pcapng_read(struct pcapng_in *r, struct journey **out)
{
	uint32_t type, len;
	int ret;

	*out = NULL;
	if (r->pcap)
		return pcap_journey(r, out);
	while ((ret = next_block(r, &type, &len)) > 0) {
		switch (type) {
		case BT_SHB:
			if (len < 28 || rd16(r, r->buf + 12) != 1)
				return bad(r, "a section of a version other than 1");
			break;
		case BT_IDB: {
			struct pcapng_in_if in = { .unit = 1000 };

			if (len < 20)
				return bad(r, "an interface block too short");
			in.linktype = rd16(r, r->buf + 8);
			if (options(r, r->buf + 16, r->buf + len - 4, if_option, &in))
				return bad(r, "an interface's options overrun its block");
			r->ifs = xrealloc(r->ifs, (r->nifs + 1) * sizeof(*r->ifs));
			r->ifs[r->nifs++] = in;
			break;
		}
		case BT_EPB:
			ret = epb_journey(r, len, out);
			if (ret)
				return ret;
			break;
		case BT_PB:
		case BT_SPB:
			r->skipped++;
			break;
		default:
			break;	/* statistics, name resolution, others' own */
		}
	}
	return ret;
}

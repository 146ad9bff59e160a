// SPDX-License-Identifier: GPL-2.0
/*
 * Printing: records and losses as magnet-read always printed them,
 * packets as tcpdump does with their journey under them, and the same as
 * JSON lines. Names of hosts come from /etc/hosts and of ports from
 * /etc/services only: never a DNS query, so printing never waits.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "magnet-read.h"

static struct {
	bool numeric, hex, quiet, have_offset, micro, link;
	unsigned int verbose;
	enum dump dump;
	unsigned int tstamp;
	int64_t offset;
	bool have_first;
	uint64_t first, prev;		/* packets' times, for -ttt, -ttttt */
	const char *const *nodes;	/* several -r files: each one's name */
	unsigned int nnodes;
} out;

void output_init(const struct options *o, bool have_offset, int64_t offset)
{
	out.numeric = o->numeric;
	out.hex = o->hex;
	out.dump = o->dump;
	out.quiet = o->quiet;
	out.link = o->link;
	out.verbose = o->verbose;
	out.tstamp = o->tstamp;
	out.micro = o->micro;
	out.have_offset = have_offset;
	out.offset = offset;
}

void output_nodes(const char *const *names, unsigned int n)
{
	out.nodes = names;
	out.nnodes = n;
}

/* " @NAME": the node a layer was seen on, of several -r files */
static void put_node(FILE *f, unsigned int node)
{
	if (out.nnodes > 1 && node < out.nnodes)
		fprintf(f, " @%s", out.nodes[node]);
}

/* --- names ------------------------------------------------------------------ */

struct host_entry {
	struct host_addr a;
	char *name;
};

static struct host_entry *hosts;
static int nhosts = -1;

static void load_hosts(void)
{
	FILE *f = fopen("/etc/hosts", "r");
	char line[1024], *save, *tok;
	struct host_addr a;

	nhosts = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "#\n")] = 0;
		tok = strtok_r(line, " \t", &save);
		if (!tok)
			continue;
		memset(&a, 0, sizeof(a));
		if (inet_pton(AF_INET, tok, a.addr) == 1)
			a.family = AF_INET;
		else if (inet_pton(AF_INET6, tok, a.addr) == 1)
			a.family = AF_INET6;
		else
			continue;
		while ((tok = strtok_r(NULL, " \t", &save))) {
			struct host_entry *h = realloc(hosts, (nhosts + 1) *
						       sizeof(*hosts));

			if (!h)
				break;
			hosts = h;
			hosts[nhosts].a = a;
			hosts[nhosts++].name = strdup(tok);
		}
	}
	fclose(f);
}

int hosts_lookup(const char *name, struct host_addr *addrs, int max)
{
	int n = 0;

	if (nhosts < 0)
		load_hosts();
	for (int i = 0; i < nhosts && n < max; i++)
		if (!strcasecmp(hosts[i].name, name))
			addrs[n++] = hosts[i].a;
	return n;
}

static const char *host_name(uint8_t family, const uint8_t *addr)
{
	if (nhosts < 0)
		load_hosts();
	for (int i = 0; i < nhosts; i++)
		if (hosts[i].a.family == family &&
		    !memcmp(hosts[i].a.addr, addr, family == AF_INET ? 4 : 16))
			return hosts[i].name;
	return NULL;
}

static const char *fmt_addr(char *buf, size_t size, uint8_t family,
			    const uint8_t *addr, bool numeric)
{
	const char *name = numeric ? NULL : host_name(family, addr);

	if (name)
		return name;
	if (family != AF_INET && family != AF_INET6)
		return "?";
	return inet_ntop(family, addr, buf, size) ? buf : "?";
}

/*
 * Each port's service name, tcpdump's way: read from the services
 * database once, whole (getservbyport() reads it through for every port
 * asked for: 50000 instructions a new ephemeral port).
 */
static const char *fmt_port(char *buf, size_t size, uint16_t port,
			    uint8_t proto)
{
	static char *names[2][65536];
	static bool read;
	int p = proto == IPPROTO_TCP;

	if (!out.numeric && (proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
		if (!read) {
			struct servent *se;
			int q;

			read = true;
			setservent(0);
			while ((se = getservent())) {
				if (!strcmp(se->s_proto, "tcp"))
					q = 1;
				else if (!strcmp(se->s_proto, "udp"))
					q = 0;
				else
					continue;
				/* (the first entry of a port, as getservbyport()'s) */
				if (!names[q][ntohs(se->s_port)])
					names[q][ntohs(se->s_port)] = strdup(se->s_name);
			}
			endservent();
		}
		if (names[p][port])
			return names[p][port];
	}
	snprintf(buf, size, "%u", port);
	return buf;
}

/* --- times ------------------------------------------------------------------ */

/*
 * The wall clock time of CLOCK_MONOTONIC time @mono, in nanoseconds since
 * the epoch (negative before it); false if the wall clock is not known.
 * In 128 bits: a trace file's offset is whatever its header says, and a
 * record's timestamp any 64-bit value, so the sum may not fit in 64.
 */
static bool wall_ns(uint64_t mono, __int128 *wall)
{
	if (!out.have_offset)
		return false;
	*wall = (__int128)mono + out.offset;
	return true;
}

/*
 * @mono as whole seconds and nanoseconds of the wall clock, or of
 * CLOCK_MONOTONIC if the wall clock is not known (then false). The
 * seconds are floored, so the nanoseconds are never negative: half a
 * second before the epoch is -1 and 500000000.
 */
static bool split_time(uint64_t mono, __int128 *sec, uint64_t *nsec)
{
	__int128 wall, ns;

	if (!wall_ns(mono, &wall)) {
		*sec = mono / NSEC_PER_SEC;
		*nsec = mono % NSEC_PER_SEC;
		return false;
	}
	*sec = wall / (__int128)NSEC_PER_SEC;
	ns = wall % (__int128)NSEC_PER_SEC;
	if (ns < 0) {
		ns += NSEC_PER_SEC;
		(*sec)--;
	}
	*nsec = (uint64_t)ns;
	return true;
}

/* The fraction of a second, to the precision asked: 9 digits or 6. */
static void put_frac(char *buf, size_t size, uint64_t nsec, bool micro)
{
	if (micro)
		snprintf(buf, size, ".%06u", (unsigned int)(nsec / 1000));
	else
		snprintf(buf, size, ".%09u", (unsigned int)nsec);
}

/*
 * The time of day "HH:MM:SS.FFFFFFFFF" (with @date, "YYYY-MM-DD " first;
 * with @micro, 6 digits), or CLOCK_MONOTONIC seconds if the wall clock is
 * not known.
 */
static const char *fmt_clock(char *buf, size_t size, uint64_t mono,
			     bool date, bool micro)
{
	char frac[16];
	__int128 sec;
	uint64_t nsec;
	struct tm tm;
	time_t t;
	bool known = split_time(mono, &sec, &nsec);

	/* |sec| < 2^65 / 10^9: a time_t, in a year localtime_r() takes */
	t = (time_t)sec;
	if (known && localtime_r(&t, &tm) &&
	    strftime(buf, size > sizeof(frac) ? size - sizeof(frac) : 0,
		     date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm)) {
		put_frac(frac, sizeof(frac), nsec, micro);
		strcat(buf, frac);
		return buf;
	}
	put_frac(frac, sizeof(frac), mono % NSEC_PER_SEC, micro);
	snprintf(buf, size, "%" PRIu64 "%s", mono / NSEC_PER_SEC, frac);
	return buf;
}

/* Wall clock "HH:MM:SS.NNNNNNNNN", or CLOCK_MONOTONIC seconds if unknown. */
static const char *fmt_time(char *buf, size_t size, uint64_t mono)
{
	return fmt_clock(buf, size, mono, false, false);
}

/* A duration as -ttt and -ttttt print it: "HH:MM:SS.FFFFFFFFF". */
static void fmt_delta(char *buf, size_t size, uint64_t ns)
{
	uint64_t s = ns / NSEC_PER_SEC;
	char frac[16];

	put_frac(frac, sizeof(frac), ns % NSEC_PER_SEC, out.micro);
	snprintf(buf, size, "%02" PRIu64 ":%02u:%02u%s", s / 3600,
		 (unsigned int)(s / 60 % 60), (unsigned int)(s % 60), frac);
}

/*
 * A packet's time as tcpdump's -t options ask (-tt epoch seconds, -ttt
 * since the packet before, -tttt with the date, -ttttt since the first),
 * followed by a space; "" with -t. Without the wall clock (a version 1
 * trace file), CLOCK_MONOTONIC seconds where a time of day would go.
 */
static const char *packet_time(char *buf, size_t size, uint64_t mono)
{
	__int128 sec;
	uint64_t nsec;
	char frac[16];

	if (!out.have_first) {
		out.first = out.prev = mono;
		out.have_first = true;
	}
	switch (out.tstamp) {
	case 1:
		buf[0] = 0;
		return buf;
	case 2:
		split_time(mono, &sec, &nsec);
		put_frac(frac, sizeof(frac), nsec, out.micro);
		snprintf(buf, size - 1, "%lld%s", (long long)sec, frac);
		break;
	case 3:
		fmt_delta(buf, size - 1, mono >= out.prev ? mono - out.prev : 0);
		out.prev = mono;
		break;
	case 5:
		fmt_delta(buf, size - 1, mono >= out.first ? mono - out.first : 0);
		break;
	default:
		fmt_clock(buf, size - 1, mono, out.tstamp == 4, out.micro);
		break;
	}
	strcat(buf, " ");
	return buf;
}

const char *context(uint16_t flags)
{
	if (flags & MAGNET_RF_NMI)
		return "nmi";
	if (flags & MAGNET_RF_HARDIRQ)
		return "hardirq";
	if (flags & MAGNET_RF_SOFTIRQ)
		return "softirq";
	return "";
}

/* --- records ------------------------------------------------------------------ */

static void print_one(FILE *f, const struct magnet_record *r,
		      const char *indent);

/*
 * A journey (a correlating filter's record): its line, then the records
 * it holds, indented.
 */
static void print_corr_journey(FILE *f, const struct magnet_record *r)
{
	const struct magnet_journey *j = (const void *)r->payload;
	size_t len = r->size - sizeof(*r), off = sizeof(*j);
	unsigned int i;

	if (len < sizeof(*j)) {
		fprintf(f, " (short journey)\n");
		return;
	}
	fprintf(f, " JOURNEY filter %u records %u duration %llu ns%s\n",
		j->filter, j->records, (unsigned long long)j->duration_ns,
		j->flags & MAGNET_JF_CUT ? " cut" : "");
	for (i = 0; i < j->records; i++) {
		const struct magnet_record *in = (const void *)(r->payload + off);

		if (off + sizeof(*in) > len || in->size < sizeof(*in) ||
		    off + in->size > len) {
			fprintf(f, "    (journey record %u malformed)\n", i);
			return;
		}
		print_one(f, in, "    ");
		off += MAGNET_RECORD_LEN(in->size);
	}
}

static void print_one(FILE *f, const struct magnet_record *r,
		      const char *indent)
{
	uint64_t ns = r->timestamp;
	const char *ctx = context(r->flags);

	fprintf(f, "%s%" PRIu64 ".%09" PRIu64 " cpu %u ev %u%s%s %u/%u id %#" PRIx64 " len %zu",
		indent, ns / NSEC_PER_SEC, ns % NSEC_PER_SEC, r->cpu, r->event,
		*ctx ? " " : "", ctx, r->tgid, r->tid, (uint64_t)r->id,
		r->size - sizeof(*r));
	if (r->event == MAGNET_EVENT_JOURNEY) {
		print_corr_journey(f, r);
		return;
	}
	if (out.hex) {
		for (size_t i = 0; i < r->size - sizeof(*r); i++)
			fprintf(f, "%s%02x", i % 16 ? " " : "\n    ", r->payload[i]);
	}
	fputc('\n', f);
}

void print_record(FILE *f, const struct magnet_record *r)
{
	print_one(f, r, "");
}

void print_loss(FILE *f, const struct magnet_record *r)
{
	const struct magnet_loss *l = (const void *)r->payload;
	uint64_t ns = r->timestamp;

	fprintf(f, "%" PRIu64 ".%09" PRIu64 " cpu %u LOST %llu records (%llu since the buffer was made)\n",
		ns / NSEC_PER_SEC, ns % NSEC_PER_SEC, r->cpu,
		(unsigned long long)l->lost, (unsigned long long)l->total);
}

/* --- packets ------------------------------------------------------------------ */

/* What the records and the bytes kept tell of a packet. */
struct facts {
	int64_t payload;		/* transport payload bytes, -1 unknown */
	int64_t ip_len;			/* -1 unknown */
	bool have_tcp;			/* ack and win known */
	uint32_t ack;
	uint16_t win;
	uint8_t tcp_flags;
};

static uint16_t be16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static void packet_facts(const struct journey *j, struct facts *fa)
{
	int64_t user_len = -1, seg_len = -1, iph = j->family == AF_INET6 ? 40 : 20;
	int64_t thl = j->proto == IPPROTO_UDP ? 8 : -1;
	bool ip_from_data = false;
	const uint8_t *t = NULL;
	size_t tavail = 0;

	*fa = (struct facts){ .payload = -1, .ip_len = -1,
			      .tcp_flags = j->tcp_flags };
	/* Lengths the layers give: the application's, tcp's, IP's. */
	for (unsigned int i = 0; i < j->nhops; i++) {
		const struct hop *h = &j->hop[i];

		if (h->layer == MAGNET_LAYER_SOCKET || h->layer == MAGNET_LAYER_APP ||
		    (h->layer == MAGNET_LAYER_PROTO_SEND && j->proto != IPPROTO_TCP)) {
			if (user_len < 0)
				user_len = h->len;
		} else if (h->layer == MAGNET_LAYER_PROTO_SEND) {
			if (seg_len < 0)
				seg_len = h->len;
		} else if (fa->ip_len < 0) {
			fa->ip_len = h->len;
		}
	}
	/* The headers, where bytes were kept. */
	if ((j->data_flags & MAGNET_PKT_DATA_NET) && j->caplen >= 20) {
		const uint8_t *d = j->data;

		if (d[0] >> 4 == 4) {
			iph = (d[0] & 15) * 4;
			fa->ip_len = be16(d + 2);
			ip_from_data = true;
		} else if (d[0] >> 4 == 6 && j->caplen >= 40) {
			iph = 40;
			fa->ip_len = be16(d + 4) + 40;
			ip_from_data = true;
		}
		/* (IPv6 extension headers: the transport header unknown) */
		if (iph < j->caplen && (d[0] >> 4 == 4 || d[6] == j->proto)) {
			t = j->data + iph;
			tavail = j->caplen - iph;
		}
	} else if (j->data_flags & MAGNET_PKT_DATA_TRANSPORT) {
		t = j->data;
		tavail = j->caplen;
	}
	if (j->proto == IPPROTO_TCP && t && tavail >= 20) {
		thl = (t[12] >> 4) * 4;
		fa->ack = be32(t + 8);
		fa->win = be16(t + 14);
		fa->have_tcp = true;
		if (!fa->tcp_flags)
			fa->tcp_flags = t[13];
	}
	if (thl < 0)
		thl = 20;	/* a TCP header without options */
	if (ip_from_data)
		fa->payload = fa->ip_len - iph - thl;
	else if (j->proto == IPPROTO_UDP && user_len >= 0)
		fa->payload = user_len;
	else if (j->proto == IPPROTO_TCP && seg_len >= 0)
		fa->payload = seg_len - thl;
	else if (fa->ip_len >= 0)
		fa->payload = fa->ip_len - iph - thl;
	else
		fa->payload = user_len;
	if (fa->payload < 0 && (fa->ip_len >= 0 || seg_len >= 0 || user_len >= 0))
		fa->payload = 0;
}

static void tcp_flag_string(char *buf, uint8_t flags)
{
	static const struct { uint8_t bit; char c; } names[] = {
		{ 0x01, 'F' }, { 0x02, 'S' }, { 0x04, 'R' }, { 0x08, 'P' },
		{ 0x20, 'U' }, { 0x40, 'E' }, { 0x80, 'W' }, { 0x10, '.' },
	};
	char *p = buf;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (flags & names[i].bit)
			*p++ = names[i].c;
	*p = 0;
	if (!flags)
		strcpy(buf, "none");
}

static void print_endpoint(FILE *f, const struct journey *j, bool src)
{
	char abuf[INET6_ADDRSTRLEN], pbuf[8];

	if (!j->have_addrs) {
		fputc('?', f);
		return;
	}
	fprintf(f, "%s.%s",
		fmt_addr(abuf, sizeof(abuf), j->family,
			 src ? j->saddr : j->daddr, out.numeric),
		fmt_port(pbuf, sizeof(pbuf), src ? j->sport : j->dport,
			 j->proto));
}

static void print_tcp(FILE *f, const struct journey *j,
		      const struct facts *fa)
{
	const char *sep = "";
	char flags[16];

	if (out.quiet) {
		fprintf(f, "tcp %lld", (long long)(fa->payload > 0 ? fa->payload : 0));
		return;
	}
	if (fa->tcp_flags || fa->have_tcp) {
		tcp_flag_string(flags, fa->tcp_flags);
		fprintf(f, "Flags [%s]", flags);
		sep = ", ";
	}
	if (j->have_seq) {
		if (fa->payload > 0)
			fprintf(f, "%sseq %u:%u", sep, j->seq,
				(uint32_t)(j->seq + fa->payload));
		else if ((fa->tcp_flags & 0x07) || !(fa->tcp_flags & 0x10))
			fprintf(f, "%sseq %u", sep, j->seq);
		sep = ", ";
	}
	if (fa->have_tcp && (fa->tcp_flags & 0x10)) {
		fprintf(f, "%sack %u", sep, fa->ack);
		sep = ", ";
	}
	if (fa->have_tcp) {
		fprintf(f, "%swin %u", sep, fa->win);
		sep = ", ";
	}
	if (fa->payload >= 0)
		fprintf(f, "%slength %lld", sep, (long long)fa->payload);
}

static void hex_dump(FILE *f, const uint8_t *d, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 2) {
		if (!(i % 16))
			fprintf(f, "%s\t0x%04x: ", i ? "\n" : "", i);
		if (i + 1 < len)
			fprintf(f, " %02x%02x", d[i], d[i + 1]);
		else
			fprintf(f, " %02x", d[i]);
	}
	if (len)
		fputc('\n', f);
}

/* -X: hex and ASCII, 16 bytes a line, as tcpdump prints them. */
static void hex_ascii_dump(FILE *f, const uint8_t *d, uint32_t len)
{
	for (uint32_t i = 0; i < len; i += 16) {
		uint32_t n = len - i < 16 ? len - i : 16, k;
		int col = fprintf(f, "\t0x%04x: ", i);

		for (k = 0; k < n; k += 2)
			col += k + 1 < n ? fprintf(f, " %02x%02x", d[i + k], d[i + k + 1]) :
					   fprintf(f, " %02x", d[i + k]);
		fprintf(f, "%*s", 51 - col > 0 ? 51 - col : 1, "");
		for (k = 0; k < n; k++)
			fputc(d[i + k] >= 0x20 && d[i + k] < 0x7f ? d[i + k] : '.', f);
		fputc('\n', f);
	}
}

/* -A: the bytes as ASCII, as tcpdump prints them. */
static void ascii_dump(FILE *f, const uint8_t *d, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		fputc(d[i] == '\n' || d[i] == '\t' || d[i] == '\r' ||
		      (d[i] >= 0x20 && d[i] < 0x7f) ? d[i] : '.', f);
	if (len)
		fputc('\n', f);
}

/* -vv: what a layer's record says of the packet, after its line. */
static void print_hop_detail(FILE *f, const struct hop *h, const char *indent)
{
	static const struct { uint16_t bit; const char *name; } kept[] = {
		{ MAGNET_PKT_DATA_NET, "from the IP header" },
		{ MAGNET_PKT_DATA_TRANSPORT, "from the transport header" },
		{ MAGNET_PKT_DATA_USER, "of the application's data" },
	};
	const char *what = "";

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (h->pflags & kept[i].bit)
			what = kept[i].name;
	fprintf(f, "%s    skb 0x%" PRIx64 " sock 0x%" PRIx64 " len %u kept %u%s%s%s%s\n",
		indent, h->skb, h->sock, h->len, h->caplen, *what ? " " : "",
		what, h->rflags & MAGNET_RF_TRUNCATED ? " (cut)" : "",
		h->pflags & MAGNET_PKT_FAULT ? " (not resident)" : "");
}

/*
 * A journey, a line per layer; @epoch: times as Unix seconds (the pcapng
 * comment), else as packet lines print the time of day.
 */
static void journey_lines(FILE *f, const struct journey *j, const char *indent,
			  bool epoch, bool detail)
{
	char tbuf[40], dbuf[32];

	for (unsigned int i = 0; i < j->nhops && !j->bare; i++) {
		const struct hop *h = &j->hop[i];
		uint64_t d = i ? h->ts - j->hop[i - 1].ts : 0;
		const char *ctx = context(h->rflags);

		snprintf(dbuf, sizeof(dbuf), "+%" PRIu64 ".%03" PRIu64,
			 d / 1000, d % 1000);
		if (epoch) {
			__int128 sec;
			uint64_t nsec;

			split_time(h->ts, &sec, &nsec);
			snprintf(tbuf, sizeof(tbuf), "%lld.%09u", (long long)sec,
				 (unsigned int)nsec);
		} else {
			fmt_time(tbuf, sizeof(tbuf), h->ts);
		}
		fprintf(f, "%s%-10s %s %10s us cpu %u%s%s %u/%u%s%s", indent,
			layer_name(h->layer, j->proto), tbuf, dbuf, h->cpu,
			*ctx ? " " : "", ctx, h->tgid, h->tid,
			h->dev[0] ? " " : "", h->dev);
		put_node(f, h->node);
		fputc('\n', f);
		if (detail)
			print_hop_detail(f, h, indent);
	}
}

void print_journey_lines(FILE *f, const struct journey *j, const char *indent)
{
	journey_lines(f, j, indent, false, out.verbose >= 2);
}

char *journey_comment(const struct journey *j)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f) {
		fputs(PROG ": out of memory\n", stderr);
		exit(1);
	}
	journey_lines(f, j, "", true, false);
	if (fclose(f)) {
		fputs(PROG ": out of memory\n", stderr);
		exit(1);
	}
	if (size && text[size - 1] == '\n')
		text[size - 1] = 0;
	return text;
}

static const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP: return "TCP";
	case IPPROTO_UDP: return "UDP";
	case IPPROTO_ICMP: return "ICMP";
	case IPPROTO_ICMPV6: return "ICMP6";
	default: return "unknown";
	}
}

/*
 * -v: the IP header, as tcpdump -v prints it, from the bytes kept; where
 * none were, what the records say (protocol and length). IPv4's goes on
 * a line of its own, with the addresses on the next, as tcpdump's does.
 */
static void print_ip_verbose(FILE *f, const struct journey *j,
			     const struct facts *fa)
{
	const uint8_t *d = j->data;
	bool bytes = (j->data_flags & MAGNET_PKT_DATA_NET) && j->caplen >= 20;
	static const char *const fl[] = { "", "[MF]", "[DF]", "[DF+MF]" };

	if (j->family == AF_INET6) {
		if (bytes && j->caplen >= 40 && d[0] >> 4 == 6) {
			uint32_t flow = (d[1] & 0x0f) << 16 | d[2] << 8 | d[3];

			if (flow)
				fprintf(f, "(flowlabel 0x%05x, ", flow);
			else
				fputc('(', f);
			fprintf(f, "hlim %u, next-header %s (%u) payload length: %u) ",
				d[7], proto_name(d[6]), d[6], be16(d + 4));
		} else if (fa->ip_len >= 0) {
			fprintf(f, "(next-header %s (%u) payload length: %lld) ",
				proto_name(j->proto), j->proto,
				(long long)fa->ip_len - 40);
		}
		return;
	}
	if (bytes && d[0] >> 4 == 4) {
		uint16_t frag = be16(d + 6);

		fprintf(f, "(tos 0x%x, ttl %u, id %u, offset %u, flags %s, proto %s (%u), length %u)\n    ",
			d[1], d[8], be16(d + 4), (frag & 0x1fff) * 8,
			(frag & 0x6000) == 0 && !(frag & 0x8000) ?
			"[none]" : fl[(frag >> 13) & 3], proto_name(d[9]),
			d[9], be16(d + 2));
	} else if (fa->ip_len >= 0) {
		fprintf(f, "(proto %s (%u), length %lld)\n    ",
			proto_name(j->proto), j->proto, (long long)fa->ip_len);
	}
}

/*
 * -e: what tcpdump -i any -e prints of the cooked header in place of
 * "IP": each device and direction the packet was seen at, with its index
 * (no link-layer address is kept), the protocol and the frame's length.
 */
static void print_link(FILE *f, const struct journey *j,
		       const struct facts *fa)
{
	struct sighting s[MAGNET_LAYER_COUNT];
	unsigned int n = cooked_sightings(j, s);

	if (!n)
		s[n++] = cooked_nowhere(j);
	for (unsigned int i = 0; i < n; i++)
		fprintf(f, "%s%s%s%s ifindex %u", i ? ", " : "", s[i].dev,
			*s[i].dev ? " " : "", s[i].out ? "Out" : "In", s[i].ifindex);
	if (out.quiet) {	/* as tcpdump -q -e: no more */
		fputc(' ', f);
		return;
	}
	fprintf(f, " ethertype %s, ", j->family == AF_INET6 ?
		"IPv6 (0x86dd)" : "IPv4 (0x0800)");
	if (fa->ip_len >= 0)
		fprintf(f, "length %lld: ", (long long)fa->ip_len + COOKED_HDR_LEN);
}

/* The packet's line after its time: "IP SRC > DST: UDP, length N". */
static void packet_line(FILE *f, const struct journey *j,
			const struct facts *fa, bool verbose, bool link)
{
	if (link)
		print_link(f, j, fa);
	else
		fputs(j->family == AF_INET6 ? "IP6 " : "IP ", f);
	if (verbose)
		print_ip_verbose(f, j, fa);
	print_endpoint(f, j, true);
	fputs(" > ", f);
	print_endpoint(f, j, false);
	fputs(": ", f);
	if (j->proto == IPPROTO_TCP)
		print_tcp(f, j, fa);
	else if (j->proto == IPPROTO_UDP && fa->payload >= 0)
		fprintf(f, "UDP, length %lld", (long long)fa->payload);
	else if (j->proto == IPPROTO_UDP)
		fputs("UDP", f);
	else
		fprintf(f, "proto %u", j->proto);
}

char *packet_summary(const struct journey *j)
{
	/* one stream for every packet: opening one costs more than the line */
	static FILE *f;
	static char *text;
	static size_t size;
	struct facts fa;
	char *line;

	if (!f)
		f = open_memstream(&text, &size);
	if (!f || fseeko(f, 0, SEEK_SET)) {
		fputs(PROG ": out of memory\n", stderr);
		exit(1);
	}
	packet_facts(j, &fa);
	packet_line(f, j, &fa, false, false);
	/* (a memory stream's flush puts its NUL at the position) */
	if (fflush(f) || !(line = strndup(text, size))) {
		fputs(PROG ": out of memory\n", stderr);
		exit(1);
	}
	return line;
}

void print_packet(FILE *f, const struct journey *j)
{
	struct facts fa;
	char tbuf[64];

	packet_facts(j, &fa);
	fputs(packet_time(tbuf, sizeof(tbuf), j->item.ts), f);
	packet_line(f, j, &fa, out.verbose, out.link);
	fputc('\n', f);
	if (!out.quiet)
		print_journey_lines(f, j, "    ");
	if (out.dump == DUMP_HEX)
		hex_dump(f, j->data, j->caplen);
	else if (out.dump == DUMP_HEX_ASCII)
		hex_ascii_dump(f, j->data, j->caplen);
	else if (out.dump == DUMP_ASCII)
		ascii_dump(f, j->data, j->caplen);
}

/* --- block I/O ------------------------------------------------------------------- */

static void block_flag_names(FILE *f, uint16_t flags, bool json)
{
	static const struct { uint16_t bit; const char *name; } names[] = {
		{ MAGNET_BLK_SYNC, "sync" },
		{ MAGNET_BLK_FUA, "fua" },
		{ MAGNET_BLK_PREFLUSH, "preflush" },
		{ MAGNET_BLK_META, "meta" },
	};
	bool first = true;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].bit))
			continue;
		if (json)
			fprintf(f, "%s\"%s\"", first ? "" : ",", names[i].name);
		else
			fprintf(f, "%s%s", first ? " [" : ",", names[i].name);
		first = false;
	}
	if (!json && !first)
		fputc(']', f);
}

/*
 * "TIME BLOCK MAJ:MIN OP BYTES bytes at SECTOR [flags] by TGID/TID: then
 * each later layer and its time since the layer before", then with -v
 * or not -q a line per layer, as a packet's journey.
 */
void print_block(FILE *f, const struct blockio *b)
{
	const struct block_hop *prev = NULL;
	const char *op = block_op_name(b->op);
	char tbuf[64], dbuf[32];

	fputs(packet_time(tbuf, sizeof(tbuf), b->item.ts), f);
	fprintf(f, "BLOCK %u:%u ", b->major, b->minor);
	if (op)
		fputs(op, f);
	else
		fprintf(f, "op %u", b->op);
	fprintf(f, " %u bytes at %" PRIu64, b->bytes, b->sector);
	block_flag_names(f, b->flags, false);
	fprintf(f, " by %u/%u:", b->tgid, b->tid);
	for (unsigned int l = MAGNET_BLOCK_BIO; l < MAGNET_BLOCK_COUNT; l++) {
		const struct block_hop *h = &b->hop[l];

		if (!h->ts)
			continue;
		if (prev)
			fprintf(f, " %s +%" PRIu64 ".%03" PRIu64 " us",
				block_layer_name(l), (h->ts - prev->ts) / 1000,
				(h->ts - prev->ts) % 1000);
		else
			fprintf(f, " %s", block_layer_name(l));
		prev = h;
	}
	if (b->error)
		fprintf(f, ", error %d", b->error);
	if (!b->rq)
		fputs(", no request (merged into another's, or not seen)", f);
	else if (b->done_bytes < b->bytes)
		fprintf(f, ", %u of %u bytes completed", b->done_bytes, b->bytes);
	fputc('\n', f);
	if (out.quiet)
		return;
	prev = NULL;
	for (unsigned int l = MAGNET_BLOCK_BIO; l < MAGNET_BLOCK_COUNT; l++) {
		const struct block_hop *h = &b->hop[l];
		uint64_t d;
		const char *ctx;

		if (!h->ts)
			continue;
		d = prev ? h->ts - prev->ts : 0;
		ctx = context(h->rflags);
		snprintf(dbuf, sizeof(dbuf), "+%" PRIu64 ".%03" PRIu64,
			 d / 1000, d % 1000);
		fmt_time(tbuf, sizeof(tbuf), h->ts);
		fprintf(f, "    %-10s %s %10s us cpu %u%s%s %u/%u\n",
			block_layer_name(l), tbuf, dbuf, h->cpu,
			*ctx ? " " : "", ctx, h->tgid, h->tid);
		prev = h;
	}
}

/* --- application spans ------------------------------------------------------------ */

/*
 * The kernel checks what it logs, but a file's records can be anything:
 * whole, a name without a NUL, attributes each ended by one (so that
 * the last value is a string within the record).
 */
bool is_span_record(const struct magnet_record *r)
{
	const struct magnet_span *sp = (const void *)r->payload;

	return r->event != MAGNET_EVENT_LOSS && (r->flags & MAGNET_RF_SPAN) &&
	       !(r->flags & MAGNET_RF_TRUNCATED) &&
	       r->size >= sizeof(*r) + sizeof(*sp) &&
	       r->size == sizeof(*r) + sizeof(*sp) + sp->name_len + sp->attrs_len &&
	       !memchr(sp->data, 0, sp->name_len) &&
	       (!sp->attrs_len || !sp->data[sp->name_len + sp->attrs_len - 1]);
}

static const char *span_type_name(uint8_t type)
{
	switch (type) {
	case MAGNET_SPAN_BEGIN:
		return "begin";
	case MAGNET_SPAN_END:
		return "end";
	case MAGNET_SPAN_EVENT:
		return "event";
	default:
		return "?";
	}
}

static void put_hex(FILE *f, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", b[i]);
}

/* The attributes, "key=value\0"...: each to @each(f, key, klen, value). */
static void span_attrs(FILE *f, const struct magnet_span *sp,
		       void (*each)(FILE *, const char *, size_t, const char *,
				    bool))
{
	const char *a = (const char *)sp->data + sp->name_len;
	const char *end = a + sp->attrs_len;
	bool first = true;

	while (a < end) {
		size_t len = strnlen(a, end - a);
		const char *eq = memchr(a, '=', len);

		if (eq)
			each(f, a, eq - a, eq + 1, first);
		first = false;
		a += len + 1;
	}
}

static void text_attr(FILE *f, const char *key, size_t klen, const char *value,
		      bool first)
{
	(void)first;
	fprintf(f, " %.*s=%s", (int)klen, key, value);
}

/*
 * "TIME SPAN begin NAME trace T span S [parent P [remote]] by TGID/TID
 * key=value..."
 */
void print_span(FILE *f, const struct magnet_record *r)
{
	const struct magnet_span *sp = (const void *)r->payload;
	char tbuf[64];

	fputs(packet_time(tbuf, sizeof(tbuf), r->timestamp), f);
	fprintf(f, "SPAN %s", span_type_name(sp->type));
	if (sp->name_len)
		fprintf(f, " %.*s", (int)sp->name_len, (const char *)sp->data);
	fputs(" trace ", f);
	put_hex(f, sp->trace_id, sizeof(sp->trace_id));
	fputs(" span ", f);
	put_hex(f, sp->span_id, sizeof(sp->span_id));
	if (sp->type == MAGNET_SPAN_BEGIN &&
	    memcmp(sp->parent_id, (const uint8_t[8]){ 0 }, 8)) {
		fputs(" parent ", f);
		put_hex(f, sp->parent_id, sizeof(sp->parent_id));
		if (sp->flags & MAGNET_SPAN_F_REMOTE)
			fputs(" remote", f);
	}
	fprintf(f, " by %u/%u", r->tgid, r->tid);
	span_attrs(f, sp, text_attr);
	fputc('\n', f);
}

/* --- samples ------------------------------------------------------------------- */

bool is_sample_record(const struct magnet_record *r)
{
	return r->event != MAGNET_EVENT_LOSS && (r->flags & MAGNET_RF_SAMPLE) &&
	       r->size >= sizeof(*r) + sizeof(struct magnet_sample);
}

/* Frames the record holds: its depths, less what the snap length cut. */
static unsigned int sample_frames(const struct magnet_record *r,
				  unsigned int *kernel, unsigned int *user)
{
	const struct magnet_sample *s = (const void *)r->payload;
	size_t held = (r->size - sizeof(*r) - sizeof(*s)) / sizeof(uint64_t);

	*kernel = s->kernel_depth < held ? s->kernel_depth : held;
	held -= *kernel;
	*user = s->user_depth < held ? s->user_depth : held;
	return *kernel + *user;
}

static const struct {
	uint32_t flag;
	const char *name;
} sample_flags[] = {
	{ MAGNET_SAMPLE_F_USER, "user" },
	{ MAGNET_SAMPLE_F_IDLE, "idle" },
	{ MAGNET_SAMPLE_F_SOFTIRQ, "softirq" },
	{ MAGNET_SAMPLE_F_KTHREAD, "kthread" },
	{ MAGNET_SAMPLE_F_FIRST, "first" },
};

/*
 * "TIME SAMPLE cpu C TGID/TID ip IP [user IP] FLAGS... since NS steal NS
 * kernel [A B ...] user [A B ...]"
 */
void print_sample(FILE *f, const struct magnet_record *r)
{
	const struct magnet_sample *s = (const void *)r->payload;
	unsigned int k, u, i;
	char tbuf[64];

	sample_frames(r, &k, &u);
	fputs(packet_time(tbuf, sizeof(tbuf), r->timestamp), f);
	fprintf(f, "SAMPLE cpu %u %u/%u ip %#" PRIx64, r->cpu, r->tgid, r->tid,
		(uint64_t)s->ip);
	if (s->user_ip && s->user_ip != s->ip)
		fprintf(f, " user-ip %#" PRIx64, (uint64_t)s->user_ip);
	for (i = 0; i < sizeof(sample_flags) / sizeof(sample_flags[0]); i++)
		if (s->flags & sample_flags[i].flag)
			fprintf(f, " %s", sample_flags[i].name);
	fprintf(f, " since %" PRIu64 " steal %" PRIu64, (uint64_t)s->since,
		(uint64_t)s->steal);
	if (k) {
		fputs(" kernel", f);
		for (i = 0; i < k; i++)
			fprintf(f, " %#" PRIx64, (uint64_t)s->stack[i]);
	}
	if (u) {
		fputs(" user", f);
		for (i = 0; i < u; i++)
			fprintf(f, " %#" PRIx64, (uint64_t)s->stack[k + i]);
	}
	fputc('\n', f);
}

/* --- JSON ----------------------------------------------------------------------- */

static void json_hex(FILE *f, const char *key, const uint8_t *d, size_t len)
{
	fprintf(f, ",\"%s\":\"", key);
	for (size_t i = 0; i < len; i++)
		fprintf(f, "%02x", d[i]);
	fputc('"', f);
}

/*
 * "ts" (CLOCK_MONOTONIC), and "time_ns" (the wall clock, negative before
 * the epoch) when it is known and fits a signed 64-bit count of
 * nanoseconds (the years 1677 to 2262); otherwise "time_ns" is left out.
 */
static void json_time(FILE *f, uint64_t mono)
{
	__int128 wall;

	fputs("\"ts\":", f);
	json_u64(f, mono);
	if (wall_ns(mono, &wall) && wall >= INT64_MIN && wall <= INT64_MAX) {
		fputs(",\"time_ns\":", f);
		json_s64(f, (int64_t)wall);
	}
}

static void json_context(FILE *f, uint16_t flags)
{
	const char *ctx = context(flags);

	fprintf(f, ",\"context\":\"%s\"", *ctx ? ctx : "task");
}

static void json_one(FILE *f, const struct magnet_record *r)
{
	size_t len = r->size - sizeof(*r);

	fputs("{\"type\":\"record\",", f);
	json_time(f, r->timestamp);
	fprintf(f, ",\"cpu\":%u,\"event\":%u", r->cpu, r->event);
	json_context(f, r->flags);
	fprintf(f, ",\"tgid\":%u,\"tid\":%u,\"id\":\"%#" PRIx64 "\",\"len\":%zu",
		r->tgid, r->tid, (uint64_t)r->id, len);
	if (r->event == MAGNET_EVENT_JOURNEY && len >= sizeof(struct magnet_journey)) {
		const struct magnet_journey *j = (const void *)r->payload;
		size_t off = sizeof(*j);

		fprintf(f, ",\"filter\":%u,\"duration_ns\":", j->filter);
		json_u64(f, j->duration_ns);
		fprintf(f, ",\"cut\":%s,\"records\":[",
			j->flags & MAGNET_JF_CUT ? "true" : "false");
		for (unsigned int i = 0; i < j->records; i++) {
			const struct magnet_record *in = (const void *)(r->payload + off);

			if (off + sizeof(*in) > len || in->size < sizeof(*in) ||
			    off + in->size > len)
				break;
			if (i)
				fputc(',', f);
			json_one(f, in);
			off += MAGNET_RECORD_LEN(in->size);
		}
		fputc(']', f);
	} else if (out.hex) {
		json_hex(f, "payload", r->payload, len);
	}
	fputc('}', f);
}

void json_record(FILE *f, const struct magnet_record *r)
{
	json_one(f, r);
	fputc('\n', f);
}

void json_loss(FILE *f, const struct magnet_record *r)
{
	const struct magnet_loss *l = (const void *)r->payload;

	fputs("{\"type\":\"loss\",", f);
	json_time(f, r->timestamp);
	fprintf(f, ",\"cpu\":%u,\"lost\":", r->cpu);
	json_u64(f, l->lost);
	fputs(",\"total\":", f);
	json_u64(f, l->total);
	fprintf(f, ",\"synthetic\":%s}\n",
		r->flags & MAGNET_RF_SYNTHETIC ? "true" : "false");
}

void json_packet(FILE *f, const struct journey *j)
{
	char abuf[INET6_ADDRSTRLEN], flags[16];
	struct facts fa;

	packet_facts(j, &fa);
	fputs("{\"type\":\"packet\",", f);
	json_time(f, j->item.ts);
	if (j->family == AF_INET || j->family == AF_INET6)
		fprintf(f, ",\"family\":\"%s\"", j->family == AF_INET ? "ip" : "ip6");
	else
		fprintf(f, ",\"family\":%u", j->family);
	if (j->proto == IPPROTO_UDP || j->proto == IPPROTO_TCP)
		fprintf(f, ",\"proto\":\"%s\"", j->proto == IPPROTO_UDP ? "udp" : "tcp");
	else
		fprintf(f, ",\"proto\":%u", j->proto);
	if (j->have_addrs) {
		fprintf(f, ",\"src\":\"%s\"", fmt_addr(abuf, sizeof(abuf),
						       j->family, j->saddr, true));
		fprintf(f, ",\"sport\":%u", j->sport);
		fprintf(f, ",\"dst\":\"%s\"", fmt_addr(abuf, sizeof(abuf),
						       j->family, j->daddr, true));
		fprintf(f, ",\"dport\":%u", j->dport);
	}
	if (fa.payload >= 0)
		fprintf(f, ",\"length\":%lld", (long long)fa.payload);
	if (fa.ip_len >= 0)
		fprintf(f, ",\"ip_len\":%lld", (long long)fa.ip_len);
	if (j->proto == IPPROTO_TCP) {
		if (j->have_seq)
			fprintf(f, ",\"seq\":%u", j->seq);
		if (fa.have_tcp)
			fprintf(f, ",\"ack\":%u,\"win\":%u", fa.ack, fa.win);
		tcp_flag_string(flags, fa.tcp_flags);
		fprintf(f, ",\"tcp_flags\":\"%s\"", flags);
	}
	fprintf(f, ",\"caplen\":%u", j->caplen);
	if (out.hex)
		json_hex(f, "data", j->data, j->caplen);
	if (j->bare && j->hop[0].dev[0]) {
		fputs(",\"dev\":", f);
		json_string(f, j->hop[0].dev);
	}
	if (!out.quiet && !j->bare) {
		fputs(",\"journey\":[", f);
		for (unsigned int i = 0; i < j->nhops; i++) {
			const struct hop *h = &j->hop[i];

			fprintf(f, "%s{\"layer\":\"%s\",", i ? "," : "",
				layer_name(h->layer, j->proto));
			json_time(f, h->ts);
			fputs(",\"delta_ns\":", f);
			json_u64(f, i ? h->ts - j->hop[i - 1].ts : 0);
			fprintf(f, ",\"cpu\":%u", h->cpu);
			json_context(f, h->rflags);
			fprintf(f, ",\"tgid\":%u,\"tid\":%u,\"len\":%u,\"dev\":",
				h->tgid, h->tid, h->len);
			if (h->dev[0])
				json_string(f, h->dev);
			else
				fputs("null", f);
			if (out.nnodes > 1 && h->node < out.nnodes) {
				fputs(",\"node\":", f);
				json_string(f, out.nodes[h->node]);
			}
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputs("}\n", f);
}

void json_block(FILE *f, const struct blockio *b)
{
	const struct block_hop *prev = NULL;
	const char *op = block_op_name(b->op);
	bool first = true;

	fputs("{\"type\":\"block\",", f);
	json_time(f, b->item.ts);
	fprintf(f, ",\"major\":%u,\"minor\":%u,\"op\":", b->major, b->minor);
	if (op)
		fprintf(f, "\"%s\"", op);
	else
		fprintf(f, "%u", b->op);
	fputs(",\"sector\":", f);
	json_u64(f, b->sector);
	fprintf(f, ",\"bytes\":%u,\"completed_bytes\":%u,\"completions\":%u,\"flags\":[",
		b->bytes, b->done_bytes, b->completions);
	block_flag_names(f, b->flags, true);
	fprintf(f, "],\"error\":%d,\"tgid\":%u,\"tid\":%u,\"request\":%s",
		b->error, b->tgid, b->tid, b->rq ? "true" : "false");
	fputs(",\"journey\":[", f);
	for (unsigned int l = MAGNET_BLOCK_BIO; l < MAGNET_BLOCK_COUNT; l++) {
		const struct block_hop *h = &b->hop[l];

		if (!h->ts)
			continue;
		fprintf(f, "%s{\"layer\":\"%s\",", first ? "" : ",",
			block_layer_name(l));
		json_time(f, h->ts);
		fputs(",\"delta_ns\":", f);
		json_u64(f, prev ? h->ts - prev->ts : 0);
		fprintf(f, ",\"cpu\":%u", h->cpu);
		json_context(f, h->rflags);
		fprintf(f, ",\"tgid\":%u,\"tid\":%u}", h->tgid, h->tid);
		prev = h;
		first = false;
	}
	fputs("]}\n", f);
}

static void json_attr(FILE *f, const char *key, size_t klen, const char *value,
		      bool first)
{
	char k[MAGNET_SPAN_MAX];

	snprintf(k, sizeof(k), "%.*s", (int)klen, key);
	if (!first)
		fputc(',', f);
	json_string(f, k);
	fputc(':', f);
	json_string(f, value);
}

static void json_hex_id(FILE *f, const char *key, const uint8_t *b, size_t n)
{
	fprintf(f, ",\"%s\":\"", key);
	put_hex(f, b, n);
	fputc('"', f);
}

static void json_addrs(FILE *f, const char *key, const __u64 *a,
		       unsigned int n)
{
	unsigned int i;

	fprintf(f, ",\"%s\":[", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\"%#" PRIx64 "\"", i ? "," : "", (uint64_t)a[i]);
	fputc(']', f);
}

void json_sample(FILE *f, const struct magnet_record *r)
{
	const struct magnet_sample *s = (const void *)r->payload;
	const char *sep = "";
	unsigned int k, u, i;

	sample_frames(r, &k, &u);
	fputs("{\"type\":\"sample\",", f);
	json_time(f, r->timestamp);
	fprintf(f, ",\"cpu\":%u,\"tgid\":%u,\"tid\":%u,\"ip\":\"%#" PRIx64
		"\",\"user_ip\":\"%#" PRIx64 "\",\"since_ns\":", r->cpu, r->tgid,
		r->tid, (uint64_t)s->ip, (uint64_t)s->user_ip);
	json_u64(f, s->since);
	fputs(",\"steal_ns\":", f);
	json_u64(f, s->steal);
	fputs(",\"period_ns\":", f);
	json_u64(f, s->period);
	fputs(",\"flags\":[", f);
	for (i = 0; i < sizeof(sample_flags) / sizeof(sample_flags[0]); i++)
		if (s->flags & sample_flags[i].flag) {
			fprintf(f, "%s\"%s\"", sep, sample_flags[i].name);
			sep = ",";
		}
	fputc(']', f);
	fprintf(f, ",\"kernel_depth\":%u,\"user_depth\":%u", s->kernel_depth,
		s->user_depth);
	json_addrs(f, "kernel_stack", s->stack, k);
	json_addrs(f, "user_stack", s->stack + k, u);
	fputs("}\n", f);
}

void json_span(FILE *f, const struct magnet_record *r)
{
	const struct magnet_span *sp = (const void *)r->payload;
	char name[MAGNET_SPAN_NAME_MAX + 1];

	fputs("{\"type\":\"span\",", f);
	json_time(f, r->timestamp);
	fprintf(f, ",\"span_type\":\"%s\",\"name\":", span_type_name(sp->type));
	snprintf(name, sizeof(name), "%.*s", (int)sp->name_len,
		 (const char *)sp->data);
	if (sp->name_len)
		json_string(f, name);
	else
		fputs("null", f);
	json_hex_id(f, "trace_id", sp->trace_id, sizeof(sp->trace_id));
	json_hex_id(f, "span_id", sp->span_id, sizeof(sp->span_id));
	if (sp->type == MAGNET_SPAN_BEGIN &&
	    memcmp(sp->parent_id, (const uint8_t[8]){ 0 }, 8))
		json_hex_id(f, "parent_id", sp->parent_id, sizeof(sp->parent_id));
	fprintf(f, ",\"remote\":%s,\"cpu\":%u,\"tgid\":%u,\"tid\":%u,\"attributes\":{",
		sp->flags & MAGNET_SPAN_F_REMOTE ? "true" : "false", r->cpu,
		r->tgid, r->tid);
	span_attrs(f, sp, json_attr);
	fputs("}}\n", f);
}

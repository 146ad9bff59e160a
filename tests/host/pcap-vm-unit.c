// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's classic BPF interpreter for the packet filter
 * (filters/pcap_vm.c), built from its own source in user space
 * (tests/host/kshim/ stands in for the kernel headers it uses), against
 * libpcap's own interpreter: for tcpdump expressions of every kind,
 * compiled by libpcap as magnetctl compiles them, on random packets
 * behind a cooked header, it must answer what pcap_offline_filter()
 * answers:
 *   - on the packet in linear memory (an skb's: the fast path);
 *   - on the same bytes split between headers built by the probe and
 *     the rest (a send call's view: built, then the application's bytes);
 *   - with random bits marked unknown (holding zeros or anything: they
 *     read as zero):
 *     then undecided, or the true answer, never the wrong one;
 * that the programs pcap_vm_native_ok() lets the kernel's BPF run on a
 * send call's built headers answer there as pcap_vm does, always decided;
 * that the copies pcap_vm_ihl5() writes for IPv4 headers without options
 * answer as the program does on every such packet (and not on one with
 * options: the kernel runs them on the first only);
 * and programs pcap_vm_check() refuses are checked too.
 *
 * Tests on tests/harness.h; those on random packets and records share
 * FIXTURE(pcap_vm): the generator seeded (PCAP_VM_SEED=N in the
 * environment, or 12345), the packets per expression (PCAP_VM_PACKETS=N,
 * or 3000), the templates of both send calls' headers and the analysis'
 * state.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pcap-host.h"
#include "pcap_vm.h"
#include "pcapfilter.h"

static const char *const expressions[] = {
	"", "udp", "tcp", "ip", "ip6", "icmp", "udp port 5001", "tcp port 80",
	"udp dst port 53 or tcp src port 5201", "portrange 5000-5100",
	"host 10.9.0.2", "src net 10.9.0.0/24", "dst host fd09::2",
	"net fd09::/64 and tcp", "not host 10.9.0.1", "proto 17",
	"greater 200", "less 100", "len > 300",
	"ip[8] = 64", "ip[2:2] > 100", "ip[0] & 0xf = 5", "ip[6:2] & 0x1fff = 0",
	"ip[6] & 0x40 != 0", "ip6[6] = 17", "udp[4:2] = 40", "udp[8:2] = 0x3030",
	"tcp[tcpflags] & tcp-syn != 0",
	"tcp[tcpflags] & (tcp-syn|tcp-ack) = tcp-syn",
	"tcp[((tcp[12:1] & 0xf0) >> 2):1] != 0", "tcp[12] & 0xf0 > 0x50",
	"icmp[icmptype] = icmp-echo", "inbound", "outbound", "ifindex 3",
	"inbound and udp port 5001", "(udp and port 5001) or (tcp and port 80)",
	"udp && !(dst port 5001 || dst port 5002)",
	"ip[2:2] - ((ip[0] & 0xf) << 2) > 100", "ip[9] * 2 = 34",
	"ip[8] / 2 = 32", "ip[8] % 7 = 1", "ip[8] ^ 0xff = 191",
	"ip[8] | 1 = 65", "-ip[8] < 0", "ip[1] >> 2 = 0",
	"ip[12:4] - ip[16:4] > 0", "udp[3] & 0x08 != 0", "ip[17] = 9 and ip[19] > 1",
	"ip6[8:2] = 0xfd09 and ip6[40] = 0x13", "udp[4] = 0",
};

FIXTURE(pcap_vm) {
	unsigned int npackets;
	struct magnet_pkt_template t[2][MAGNET_BUILT_UNKNOWNS];
	struct pcap_astate *st;
};

FIXTURE_SETUP(pcap_vm)
{
	const char *seed = getenv("PCAP_VM_SEED");
	const char *packets = getenv("PCAP_VM_PACKETS");

	rng = seed ? strtoull(seed, NULL, 0) : 12345;
	self->npackets = packets ? atoi(packets) : 3000;
	for (unsigned int u = 0; u < MAGNET_BUILT_UNKNOWNS; u++) {
		make_template(&self->t[0][u], 0, u);
		make_template(&self->t[1][u], 1, u);
	}
	self->st = calloc(MAGNET_PACKET_INSNS_MAX, pcap_vm_astate_size());
	ASSERT_TRUE(self->st);
}

FIXTURE_TEARDOWN(pcap_vm)
{
	free(self->st);
}

static u32 pick(const u32 *set, unsigned int n)
{
	return set[rnd() % n];
}

/* A random packet behind a cooked header, its length in *@len. */
static unsigned int make_packet(u8 *b, unsigned int *len)
{
	static const u32 ports[] = { 53, 80, 5001, 5002, 5201, 6000, 40000 };
	static const u32 v4[] = { 0x0a090001, 0x0a090002, 0x7f000001,
				  0xc0a80101 };
	unsigned int ip = 20, n, l4, payload = rnd() % 3 ? rnd() % 400 : 0;
	int v6 = rnd() % 3 == 0;
	u8 proto = (u8[]){ 17, 6, 6, 17, 1, 58, 47 }[rnd() % 7];
	u32 a;

	memset(b, 0, 2048);
	b[0] = v6 ? 0x86 : 0x08;
	b[1] = v6 ? 0xdd : 0x00;
	b[7] = rnd() % 5;		/* ifindex */
	b[9] = rnd() % 2 ? 1 : 0x04;	/* ether, loopback */
	b[10] = rnd() % 3 ? 0 : 4;	/* host, outgoing */
	l4 = ip + (v6 ? 40 : 20);
	if (v6) {
		b[ip] = 0x60;
		b[ip + 6] = proto;
		b[ip + 7] = 64;
		memcpy(b + ip + 8, "\xfd\x09\0\0\0\0\0\0\0\0\0\0\0\0\0", 15);
		b[ip + 23] = 1 + rnd() % 2;
		memcpy(b + ip + 24, b + ip + 8, 15);
		b[ip + 39] = 1 + rnd() % 2;
	} else {
		b[ip] = 0x45;
		b[ip + 1] = rnd() % 4 ? 0 : 0x10;
		b[ip + 6] = rnd() % 4 ? 0x40 : rnd() % 2 ? 0x20 : 0;
		b[ip + 7] = rnd() % 8 ? 0 : rnd();
		b[ip + 8] = rnd() % 3 ? 64 : rnd();
		b[ip + 9] = proto;
		a = htonl(pick(v4, 4));
		memcpy(b + ip + 12, &a, 4);
		a = htonl(pick(v4, 4));
		memcpy(b + ip + 16, &a, 4);
	}
	n = l4;
	if (proto == 17 || proto == 6) {
		u16 sp = htons(pick(ports, 7)), dp = htons(pick(ports, 7));

		memcpy(b + l4, &sp, 2);
		memcpy(b + l4 + 2, &dp, 2);
		if (proto == 6) {
			b[l4 + 12] = (rnd() % 3 ? 5 : 8) << 4;
			b[l4 + 13] = rnd() % 64;
			n += (b[l4 + 12] >> 4) * 4;
		} else {
			n += 8;
		}
	} else if (proto == 1 || proto == 58) {
		b[l4] = rnd() % 2 ? 8 : 0;
		n += 8;
	}
	for (unsigned int i = 0; i < payload && n < 2048; i++)
		b[n++] = rnd() % 4 ? '0' + rnd() % 10 : rnd();
	if (proto == 17) {
		u16 ul = htons(n - l4);

		memcpy(b + l4 + 4, &ul, 2);
	}
	if (v6) {
		b[ip + 4] = (n - l4) >> 8;
		b[ip + 5] = n - l4;
	} else {
		b[ip + 2] = (n - ip) >> 8;
		b[ip + 3] = n - ip;
	}
	*len = n;
	return n;
}

/* Each expression, as pcap_vm runs it every way, against libpcap. */
TEST_F(pcap_vm, expressions_answer_as_libpcap)
{
	unsigned int nexpr = sizeof(expressions) / sizeof(expressions[0]);
	unsigned int npackets = self->npackets;
	unsigned long undecided = 0, decided = 0;
	static u8 pkt[2048];

	for (unsigned int e = 0; e < nexpr; e++) {
		struct bpf_program prog;
		struct pcap_op ops[MAGNET_PACKET_INSNS_MAX];
		char err[PCAP_ERRBUF_SIZE];
		unsigned int at, bad[3] = { 0 };
		const struct sock_filter *f;
		const char *why;
		int ret;

		ret = pcapfilter_compile(expressions[e], &prog, err, sizeof(err));
		EXPECT_EQ(ret, 0) TH_LOG("'%s': %s", expressions[e], err);
		if (ret)
			continue;
		f = (const struct sock_filter *)prog.bf_insns;
		why = pcap_vm_check(f, prog.bf_len, &at);
		/* taken */
		EXPECT_FALSE(why)
			TH_LOG("'%s': %u instructions: %s", expressions[e],
			       prog.bf_len, why);
		EXPECT_LE(prog.bf_len, MAGNET_PACKET_INSNS_MAX)
			TH_LOG("'%s'", expressions[e]);
		if (why || prog.bf_len > MAGNET_PACKET_INSNS_MAX) {
			pcap_freecode(&prog);
			continue;
		}
		pcap_vm_decode(f, prog.bf_len, ops);
		for (unsigned int p = 0; p < npackets; p++) {
			struct pcap_pkthdr h = { 0 };
			struct magnet_pkt_view v;
			unsigned int len;
			int want, got;

			make_packet(pkt, &len);
			h.caplen = h.len = len;
			want = pcap_offline_filter(&prog, &h, pkt) != 0;

			make_view(&v, pkt, len, 0);
			got = pcap_vm_run(f, ops, &v);
			bad[0] += got != (want ? PCAP_MATCH : PCAP_REJECT);

			make_view(&v, pkt, len, 1 + rnd() % 64);
			got = pcap_vm_run(f, ops, &v);
			bad[1] += got != (want ? PCAP_MATCH : PCAP_REJECT);

			/* unknown bits, zeroed as a probe builds them */
			make_view(&v, pkt, len, 64);
			for (unsigned int i = 0, n = rnd() % 4; i < n; i++) {
				unsigned int at2 = rnd() % v.nbuilt;
				u8 m = rnd() % 2 ? 0xff : 1u << (rnd() % 8);

				/* (whatever the built bytes hold there) */
				v.unknown[at2] |= m;
				v.built[at2] = (v.built[at2] & ~m) |
					       (rnd() % 2 ? rnd() & m : 0);
			}
			if (rnd() % 4 == 0)
				v.ifindex_known = false;
			if (rnd() % 4 == 0)
				v.len_known = false;
			got = pcap_vm_run(f, ops, &v);
			if (got == PCAP_UNDECIDED)
				undecided++;
			else
				decided++;
			bad[2] += got != PCAP_UNDECIDED &&
				  got != (want ? PCAP_MATCH : PCAP_REJECT);
		}
		/*
		 * it answers as libpcap on the packet in memory, built, and
		 * with unknown bits (undecided, or the true answer)
		 */
		EXPECT_EQ(bad[0], 0) TH_LOG("'%s' in memory", expressions[e]);
		EXPECT_EQ(bad[1], 0) TH_LOG("'%s' built", expressions[e]);
		EXPECT_EQ(bad[2], 0) TH_LOG("'%s' with unknown bits", expressions[e]);
		pcap_freecode(&prog);
	}
	/* unknown bits leave most answers decided */
	TH_LOG("with unknown bits: %lu decided (each the true answer), %lu undecided",
	       decided, undecided);
	EXPECT_GT(decided, undecided);
}

/*
 * Programs written again for a shape of send call (pcap_vm_specialize()),
 * run on the record's fields, must answer what pcap_vm answers on the
 * headers built from the same record, on random records (their
 * addresses and ports random, or values the expressions ask about).
 */
TEST_F(pcap_vm, specialized_programs_answer_as_pcap_vm)
{
	struct magnet_pkt_template (*t)[MAGNET_BUILT_UNKNOWNS] = self->t;
	struct pcap_astate *st = self->st;
	static const char *const steps[][2] = {
		{ "udp dst port 5001", "4" },		/* a read, a comparison, two returns */
		{ "udp port 53", "6" },
		{ "udp[3] & 0x08 != 0", "4" },		/* a byte of the port */
		{ "udp[0:4] = 0x13891389", "-" },	/* both ports in one load: not */
	};
	unsigned int nexpr = sizeof(expressions) / sizeof(expressions[0]);
	unsigned int ok = 0, bad = 0, nsteps = 0, ninsns = 0;
	struct pcap_sent *sp = malloc(sizeof(*sp) + MAGNET_PACKET_INSNS_MAX *
				      sizeof(sp->op[0]));

	for (unsigned int e = 0; e < nexpr; e++) {
		struct bpf_program prog;
		struct pcap_op ops[MAGNET_PACKET_INSNS_MAX];
		char err[PCAP_ERRBUF_SIZE];
		const struct sock_filter *f;

		if (pcapfilter_compile(expressions[e], &prog, err, sizeof(err)))
			continue;
		f = (const struct sock_filter *)prog.bf_insns;
		pcap_vm_decode(f, prog.bf_len, ops);
		for (int tn = 0; tn < 2 * MAGNET_BUILT_UNKNOWNS; tn++) {
			const struct magnet_pkt_template *tp =
				&t[tn / MAGNET_BUILT_UNKNOWNS][tn % MAGNET_BUILT_UNKNOWNS];

			if (!pcap_vm_specialize(f, prog.bf_len, tp, st, sp))
				continue;
			ok++;
			nsteps += sp->len;
			ninsns += prog.bf_len;
			for (unsigned int n = 0; n < 2000; n++) {
				struct magnet_packet pk;
				struct magnet_pkt_view v;
				struct magnet_sent s;
				int want;

				make_sent(tp, &pk, &s, &v);
				/* (a source the template does not know: not there) */
				if (tn % MAGNET_BUILT_UNKNOWNS & MAGNET_BUILT_SADDR_UNKNOWN)
					memset(pk.saddr, 0, sizeof(pk.saddr));
				if (tn % MAGNET_BUILT_UNKNOWNS & MAGNET_BUILT_SPORT_UNKNOWN)
					pk.sport = 0;
				want = pcap_vm_run(f, ops, &v);
				bad += want == PCAP_UNDECIDED ||
				       pcap_vm_run_sent(sp, &s) != (want == PCAP_MATCH);
			}
		}
		pcap_freecode(&prog);
	}
	/*
	 * written again for a send call's shape: more than 10 programs, in
	 * fewer than half their instructions; on 2000 records each, run on
	 * the fields, they answer as pcap_vm on the headers built
	 */
	TH_LOG("%u programs, %u steps for their %u instructions", ok, nsteps,
	       ninsns);
	EXPECT_EQ(bad, 0);
	EXPECT_GT(ok, 10);
	EXPECT_LT(2 * nsteps, ninsns);
	for (unsigned int i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct bpf_program prog;
		char err[PCAP_ERRBUF_SIZE];
		unsigned int n = 0, len = 0;
		bool got = false;

		if (!pcapfilter_compile(steps[i][0], &prog, err, sizeof(err))) {
			got = pcap_vm_specialize((const struct sock_filter *)prog.bf_insns,
						 prog.bf_len, &t[0][0], st, sp);
			n = got ? sp->len : 0;
			len = prog.bf_len;
			pcap_freecode(&prog);
		}
		/* for IPv4 UDP: in so many steps, or not (a load of two fields) */
		if (steps[i][1][0] == '-') {
			EXPECT_FALSE(got) TH_LOG("'%s'", steps[i][0]);
		} else {
			EXPECT_TRUE(got) TH_LOG("'%s'", steps[i][0]);
			EXPECT_EQ(n, atoi(steps[i][1]))
				TH_LOG("'%s': of its %u instructions", steps[i][0], len);
		}
	}
	free(sp);
}

/*
 * What pcap_vm_native_ok() lets the kernel's BPF run on built headers
 * must answer what pcap_vm answers there, decided: on random hits of the
 * template (its known bits random where they are not the same in every
 * hit, its unknown bits anything), pcap_vm decides, and libpcap on the
 * headers with those bits zero (what the kernel's BPF reads) agrees.
 */
TEST_F(pcap_vm, native_ok_programs_answer_as_pcap_vm_on_built_headers)
{
	unsigned int nexpr = sizeof(expressions) / sizeof(expressions[0]);
	struct magnet_pkt_template (*t)[MAGNET_BUILT_UNKNOWNS] = self->t;
	struct pcap_astate *st = self->st;
	unsigned int ok = 0, bad = 0, undecided = 0;
	static u8 pkt[SLL2_LEN + MAGNET_PKT_VIEW_BUILT];

	for (unsigned int e = 0; e < nexpr; e++) {
		struct bpf_program prog;
		struct pcap_op ops[MAGNET_PACKET_INSNS_MAX];
		char err[PCAP_ERRBUF_SIZE];
		const struct sock_filter *f;

		if (pcapfilter_compile(expressions[e], &prog, err, sizeof(err)))
			continue;
		f = (const struct sock_filter *)prog.bf_insns;
		pcap_vm_decode(f, prog.bf_len, ops);
		for (int tn = 0; tn < 2 * MAGNET_BUILT_UNKNOWNS; tn++) {
			const struct magnet_pkt_template *tp =
				&t[tn / MAGNET_BUILT_UNKNOWNS][tn % MAGNET_BUILT_UNKNOWNS];

			if (!pcap_vm_native_ok(f, prog.bf_len, tp, st))
				continue;
			ok++;
			for (unsigned int n = 0; n < 2000; n++) {
				struct pcap_pkthdr h = { 0 };
				struct magnet_pkt_view v;
				int want, got;

				memset(&v, 0, sizeof(v));
				memset(pkt, 0, sizeof(pkt));
				pkt[0] = tp->protocol >> 8;
				pkt[1] = tp->protocol;
				v.protocol = tp->protocol;
				v.nbuilt = tp->nbuilt;
				v.len = tp->nbuilt + rnd() % 100;
				v.len_known = true;
				for (unsigned int i = 0; i < tp->nbuilt; i++) {
					u8 r = rnd() % 3 ? rnd() : (u8[]){ 0, 1, 5, 17, 53, 80, 0x13, 0x89 }[rnd() % 8];

					v.built[i] = (tp->val[i] & tp->konst[i]) |
						     (r & ~tp->konst[i]);
					v.unknown[i] = ~tp->known[i];
					pkt[SLL2_LEN + i] = v.built[i] & tp->known[i];
				}
				h.caplen = h.len = SLL2_LEN + tp->nbuilt;
				want = pcap_offline_filter(&prog, &h, pkt) != 0;
				got = pcap_vm_run(f, ops, &v);
				undecided += got == PCAP_UNDECIDED;
				bad += got != (want ? PCAP_MATCH : PCAP_REJECT);
			}
		}
		pcap_freecode(&prog);
	}
	/*
	 * more than 10 programs the kernel's BPF may run on built headers;
	 * on 2000 hits each, pcap_vm decided all and libpcap agreed
	 */
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(undecided, 0);
	EXPECT_GT(ok, 10);
}

/* Which programs pcap_vm_native_ok() lets the kernel's BPF run, which not. */
TEST_F(pcap_vm, native_ok_takes_header_reads_only)
{
	static const char *const must[][2] = {
		{ "udp dst port 5001", "4 unconnected" },
		{ "(udp dst port 5001 or tcp dst port 5001 or udp port 53) and not net 192.168.0.0/16", "4" },
		{ "tcp port 80", "6" },
		{ "host fd09::2 and tcp", "6" },
		{ "udp[4:2] = 40", "4" },
	};
	static const char *const mustnot[][2] = {
		{ "ip[8] = 64", "4" },		/* the TTL */
		{ "greater 200", "4" },		/* tcpdump's length */
		{ "udp[8:2] = 0x3030", "4" },	/* the application's bytes */
		{ "ip6[7] = 64", "6" },		/* the hop limit */
		{ "ip6[4:2] > 100", "6" },	/* TCP's length is not known */
		{ "src host 10.9.0.1", "4 unconnected" },
		{ "udp src port 6000", "4 unbound" },
	};
	struct magnet_pkt_template (*t)[MAGNET_BUILT_UNKNOWNS] = self->t;
	struct pcap_astate *st = self->st;

	for (unsigned int i = 0; i < 7; i++) {
		for (int yes = 0; yes < 2; yes++) {
			const char *const *c;
			struct bpf_program prog;
			char err[PCAP_ERRBUF_SIZE];
			unsigned int u;
			bool got = false;

			if (i >= (yes ? 5 : 7))
				continue;
			c = yes ? must[i] : mustnot[i];
			u = strstr(c[1], "unconnected") ? MAGNET_BUILT_SADDR_UNKNOWN :
			    strstr(c[1], "unbound") ? MAGNET_BUILT_SPORT_UNKNOWN : 0;
			if (!pcapfilter_compile(c[0], &prog, err, sizeof(err))) {
				got = pcap_vm_native_ok((const struct sock_filter *)prog.bf_insns,
							prog.bf_len, &t[c[1][0] == '6'][u], st);
				pcap_freecode(&prog);
			}
			EXPECT_EQ(got, yes)
				TH_LOG("built headers, IPv%s: '%s' should %s", c[1],
				       c[0], yes ? "run in the kernel's BPF" :
				       "stay with pcap_vm");
		}
	}
}

/*
 * An IPv6 packet behind a cooked header whose chain has @next extension
 * headers (hop-by-hop, destination options, routing, fragment, in a
 * random order and of random lengths; not AH, whose length libpcap's
 * loop takes as the offset of the next header instead of adding it, so
 * that it may never end) before the transport's (@last,
 * or one of TCP, UDP and ICMPv6); its length in *@len.
 */
static void make_chain(u8 *b, unsigned int *len, unsigned int next, u8 last)
{
	static const u8 ext[] = { 0, 60, 43, 44 };
	unsigned int at = SLL2_LEN + 40, n;
	u8 *nh = b + SLL2_LEN + 6;

	memset(b, 0, 2048);
	b[0] = 0x86;
	b[1] = 0xdd;
	b[SLL2_LEN] = 0x60;
	b[SLL2_LEN + 7] = 64;
	for (unsigned int i = 0; i < next; i++) {
		u8 type = ext[rnd() % sizeof(ext)];

		*nh = type;
		nh = b + at;
		if (type == 44) {		/* fragment: 8 bytes */
			b[at + 1] = 0;		/* reserved (libpcap: a length) */
			n = 8;
		} else {			/* (len + 1) * 8 */
			b[at + 1] = rnd() % 4;
			n = (b[at + 1] + 1) * 8;
		}
		at += n;
	}
	*nh = last ? last : (u8[]){ 6, 17, 58 }[rnd() % 3];
	n = at + 20;
	b[SLL2_LEN + 4] = (n - SLL2_LEN - 40) >> 8;
	b[SLL2_LEN + 5] = n - SLL2_LEN - 40;
	*len = n;
}

/*
 * protochain, unrolled by pcapfilter_compile() (lib/pcapfilter.c): no
 * jump backwards, taken by the kernel's checker, and the answer of
 * libpcap's own loop on chains of up to PCAPFILTER_TRIPS - 1 extension
 * headers (pcap_vm's on the same packets too); no match on a longer
 * chain, and an end on headers that lead back to themselves, where
 * libpcap's loop runs forever.
 */
TEST_F(pcap_vm, protochain_unrolled_answers_as_libpcap_loop)
{
	unsigned int npackets = self->npackets;
	static const char *const exprs[] = {
		"ip6 protochain 6", "ip6 protochain 17 or udp port 53",
		"protochain 58 and ip6",
	};
	static u8 pkt[2048];
	pcap_t *dead = pcap_open_dead(DLT_LINUX_SLL2, PCAPFILTER_SNAPLEN);

	for (unsigned int e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
		struct bpf_program loop, prog;
		struct pcap_op ops[MAGNET_PACKET_INSNS_MAX];
		char err[PCAP_ERRBUF_SIZE];
		unsigned int at = 0, back = 0, bad = 0, matched = 0, len;
		const struct sock_filter *f;
		const char *why;
		bool kernel;

		ASSERT_EQ(pcap_compile(dead, &loop, exprs[e], 1,
				       PCAP_NETMASK_UNKNOWN), 0)
			TH_LOG("'%s': %s", exprs[e], pcap_geterr(dead));
		ASSERT_EQ(pcapfilter_compile(exprs[e], &prog, err, sizeof(err)), 0)
			TH_LOG("'%s': %s", exprs[e], err);
		for (unsigned int i = 0; i < prog.bf_len; i++)
			back += prog.bf_insns[i].code == (BPF_JMP | BPF_JA) &&
				(int32_t)prog.bf_insns[i].k < 0;
		f = (const struct sock_filter *)prog.bf_insns;
		why = pcap_vm_check(f, prog.bf_len, &at);
		/* (both of the last one's loops, IPv4's and IPv6's: too long for a rule) */
		kernel = prog.bf_len <= MAGNET_PACKET_INSNS_MAX;
		/*
		 * unrolled: no jump backwards, the kernel's checker takes it,
		 * short enough for a rule but for the last
		 */
		TH_LOG("'%s' unrolled: %u instructions (libpcap's loop: %u)",
		       exprs[e], prog.bf_len, loop.bf_len);
		EXPECT_EQ(back, 0);
		EXPECT_FALSE(why) TH_LOG("%s", why);
		EXPECT_EQ(kernel, e < 2);
		if (kernel)
			pcap_vm_decode(f, prog.bf_len, ops);
		for (unsigned int p = 0; p < npackets; p++) {
			struct pcap_pkthdr h = { 0 };
			struct magnet_pkt_view v;
			int want;

			make_chain(pkt, &len, rnd() % PCAPFILTER_TRIPS, 0);
			h.caplen = h.len = len;
			want = pcap_offline_filter(&loop, &h, pkt) != 0;
			matched += want;
			bad += (pcap_offline_filter(&prog, &h, pkt) != 0) != want;
			if (!kernel)
				continue;
			make_view(&v, pkt, len, 0);
			bad += pcap_vm_run(f, ops, &v) !=
			       (want ? PCAP_MATCH : PCAP_REJECT);
		}
		/*
		 * it answers as libpcap's loop on chains of 0 to
		 * PCAPFILTER_TRIPS - 1 extension headers, some matched
		 */
		EXPECT_EQ(bad, 0) TH_LOG("'%s', of %u chains", exprs[e], npackets);
		EXPECT_GT(matched, 0) TH_LOG("'%s'", exprs[e]);
		pcap_freecode(&loop);
		pcap_freecode(&prog);
	}

	/* the bound, and headers that lead back: libpcap's loop never ends */
	{
		struct bpf_program prog;
		struct pcap_pkthdr h = { 0 };
		char err[PCAP_ERRBUF_SIZE];
		unsigned int len;
		int longer, looping;

		ASSERT_EQ(pcapfilter_compile("ip6 protochain 6", &prog, err,
					     sizeof(err)), 0) TH_LOG("%s", err);
		/* TCP after PCAPFILTER_TRIPS headers: libpcap's loop says yes */
		make_chain(pkt, &len, PCAPFILTER_TRIPS, 6);
		h.caplen = h.len = len;
		longer = pcap_offline_filter(&prog, &h, pkt);
		/* an AH at offset 40 that names AH next, its length 8: (8+2)*4 = 40 */
		memset(pkt, 0, 2048);
		pkt[0] = 0x86;
		pkt[1] = 0xdd;
		pkt[SLL2_LEN] = 0x60;
		pkt[SLL2_LEN + 6] = 51;
		pkt[SLL2_LEN + 40] = 51;
		pkt[SLL2_LEN + 41] = 8;
		h.caplen = h.len = SLL2_LEN + 40 + 40;
		looping = pcap_offline_filter(&prog, &h, pkt);
		/*
		 * a chain of PCAPFILTER_TRIPS extension headers does not match
		 * (the bound); an AH that leads back to itself ends, unmatched
		 */
		EXPECT_FALSE(longer);
		EXPECT_FALSE(looping);
		pcap_freecode(&prog);
	}
	pcap_close(dead);
}

/*
 * pcap_vm_ihl5()'s copies, on random IPv4 packets (headers without
 * options), answer as the program, by libpcap's interpreter; and their
 * loads past the header are at constant offsets: none at X + k is left
 * in "udp dst port 5001", whose X is the header's length; one is in
 * "tcp[((tcp[12:1] & 0xf0) >> 2):1] != 0", whose X is computed.
 * On a header with options some answer differently: not theirs to run.
 */
TEST_F(pcap_vm, ihl5_copies_answer_as_the_program)
{
	unsigned int npackets = self->npackets;
	static const struct { const char *expr; bool ind_left; } shapes[] = {
		{ "udp dst port 5001", false },
		{ "tcp[tcpflags] & tcp-syn != 0", false },
		{ "tcp[((tcp[12:1] & 0xf0) >> 2):1] != 0", true },
	};
	unsigned int nexpr = sizeof(expressions) / sizeof(expressions[0]);
	unsigned int changed = 0, bad = 0, ipv4 = 0, differ = 0;
	static s64 x[MAGNET_PACKET_INSNS_MAX];
	static u8 pkt[2048], opt[2048];

	for (unsigned int e = 0; e < nexpr; e++) {
		struct bpf_program prog, copy;
		char err[PCAP_ERRBUF_SIZE];

		if (pcapfilter_compile(expressions[e], &prog, err, sizeof(err)))
			continue;
		copy = prog;
		copy.bf_insns = malloc(prog.bf_len * sizeof(*prog.bf_insns));
		memcpy(copy.bf_insns, prog.bf_insns,
		       prog.bf_len * sizeof(*prog.bf_insns));
		if (!pcap_vm_ihl5((struct sock_filter *)copy.bf_insns,
				  copy.bf_len, x))
			goto next;
		changed++;
		for (unsigned int p = 0; p < npackets; p++) {
			struct pcap_pkthdr h = { 0 };
			unsigned int len;

			make_packet(pkt, &len);
			if (pkt[0] != 0x08 || pkt[1] != 0x00)
				continue;	/* (the copies are IPv4's) */
			ipv4++;
			h.caplen = h.len = len;
			bad += !pcap_offline_filter(&prog, &h, pkt) !=
			       !pcap_offline_filter(&copy, &h, pkt);
			/* the same packet with 4 bytes of options (NOPs) */
			memcpy(opt, pkt, SLL2_LEN + 20);
			memset(opt + SLL2_LEN + 20, 1, 4);
			memcpy(opt + SLL2_LEN + 24, pkt + SLL2_LEN + 20,
			       len - SLL2_LEN - 20);
			opt[SLL2_LEN] = 0x46;
			opt[SLL2_LEN + 2] = (len + 4 - SLL2_LEN) >> 8;
			opt[SLL2_LEN + 3] = len + 4 - SLL2_LEN;
			h.caplen = h.len = len + 4;
			differ += !pcap_offline_filter(&prog, &h, opt) !=
				  !pcap_offline_filter(&copy, &h, opt);
		}
next:
		free(copy.bf_insns);
		pcap_freecode(&prog);
	}
	/*
	 * written again for IPv4 headers without options: more than 10
	 * programs; on IPv4 packets they answer as libpcap on the program
	 */
	EXPECT_EQ(bad, 0) TH_LOG("of %u programs on %u IPv4 packets", changed,
				 ipv4);
	EXPECT_GT(changed, 10);
	EXPECT_GT(ipv4, 0);
	/*
	 * and on the same packets with options, not always: the kernel runs
	 * them on headers without
	 */
	EXPECT_GT(differ, 0);
	for (unsigned int i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct bpf_program prog;
		char err[PCAP_ERRBUF_SIZE];
		unsigned int ind = 0, msh = 0;
		bool got = false;

		if (!pcapfilter_compile(shapes[i].expr, &prog, err, sizeof(err))) {
			struct sock_filter *f = (struct sock_filter *)prog.bf_insns;

			got = pcap_vm_ihl5(f, prog.bf_len, x);
			for (unsigned int k = 0; k < prog.bf_len; k++) {
				ind += BPF_CLASS(f[k].code) == BPF_LD &&
				       BPF_MODE(f[k].code) == BPF_IND;
				msh += f[k].code == (BPF_LDX | BPF_B | BPF_MSH);
			}
			pcap_freecode(&prog);
		}
		/*
		 * written again: no load of the header's length left, loads at
		 * X + k only where X is computed
		 */
		EXPECT_TRUE(got) TH_LOG("'%s'", shapes[i].expr);
		EXPECT_EQ(msh, 0) TH_LOG("'%s'", shapes[i].expr);
		EXPECT_EQ(!ind, !shapes[i].ind_left)
			TH_LOG("'%s': %u loads at X + k", shapes[i].expr, ind);
	}
}

/*
 * Programs made by hand that once broke the kernel (hardening issue):
 *   - a conditional jump whose two targets are equal, decided false by
 *     the template: the analysis took the rest of the program as never
 *     reached, and the rewrite jumped to a step that did not exist;
 *   - 255 loads and a return: 256 steps, which a u8 length wrapped to 0.
 * Written again for every shape, each must answer as pcap_vm on random
 * records of it; in the kernel (pcapfilter suite) they are added as
 * rules on the debug kernel.
 */
TEST_F(pcap_vm, hand_made_programs_that_broke_the_rewrite)
{
	static struct sock_filter loads[MAGNET_PACKET_INSNS_MAX];
	const struct sock_filter equal[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffff),
	};
	struct magnet_pkt_template (*t)[MAGNET_BUILT_UNKNOWNS] = self->t;
	struct pcap_astate *st = self->st;
	struct pcap_sent *sp = malloc(sizeof(*sp) + MAGNET_PACKET_INSNS_MAX *
				      sizeof(sp->op[0]));
	struct {
		const char *what;
		const struct sock_filter *f;
		unsigned int len;
	} progs[] = {
		{ "a jump whose targets are equal", equal, 2 },
		{ "255 loads of the destination port and ret a", loads,
		  MAGNET_PACKET_INSNS_MAX },
	};

	for (unsigned int i = 0; i + 1 < MAGNET_PACKET_INSNS_MAX; i++)
		loads[i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS,
							SLL2_LEN + 22);
	loads[MAGNET_PACKET_INSNS_MAX - 1] =
		(struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
	for (unsigned int i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct pcap_op ops[MAGNET_PACKET_INSNS_MAX];
		unsigned int at, shapes = 0, bad = 0, steps = 0;

		/* taken by the check */
		ASSERT_FALSE(pcap_vm_check(progs[i].f, progs[i].len, &at))
			TH_LOG("%s", progs[i].what);
		pcap_vm_decode(progs[i].f, progs[i].len, ops);
		for (int tn = 0; tn < 2 * MAGNET_BUILT_UNKNOWNS; tn++) {
			const struct magnet_pkt_template *tp =
				&t[tn / MAGNET_BUILT_UNKNOWNS][tn % MAGNET_BUILT_UNKNOWNS];

			if (!pcap_vm_specialize(progs[i].f, progs[i].len, tp, st, sp))
				continue;
			shapes++;
			steps += sp->len;
			for (unsigned int n = 0; n < 500; n++) {
				struct magnet_packet pk;
				struct magnet_pkt_view v;
				struct magnet_sent s;
				int want;

				make_sent(tp, &pk, &s, &v);
				want = pcap_vm_run(progs[i].f, ops, &v);
				bad += want == PCAP_UNDECIDED ||
				       pcap_vm_run_sent(sp, &s) != (want == PCAP_MATCH);
			}
		}
		/* written again for some shapes, on 500 records each it answers as pcap_vm */
		EXPECT_GT(shapes, 0) TH_LOG("%s", progs[i].what);
		EXPECT_EQ(bad, 0) TH_LOG("%s: %u shapes, %u steps in all",
					 progs[i].what, shapes, steps);
	}
	free(sp);
}

/*
 * pcap_vm_native_safe(): the programs the kernel's translation answers
 * differently from libpcap have no copies for it (a shift by X that can
 * reach 32: the kernel's takes X's low five bits; a load whose X + k can
 * pass 2^20: the kernel's reads the network header below it, or wraps),
 * and every expression of the list that reads neither the length nor the
 * cooked header keeps them.
 */
TEST(pcap_vm_native_safe_only_where_the_kernel_agrees)
{
	static const struct { const char *expr; bool safe; } exprs[] = {
		{ "udp[8] << udp[9] = 0", false },
		{ "udp[8] >> udp[9] = 0", false },
		{ "udp[8] << (udp[9] & 31) = 0", true },
		{ "udp[8] >> (udp[9] % 32) = 0", true },
		{ "udp[8] << 31 = 0", true },
		{ "ip[udp[8] * 65536] = 1", false },
		{ "tcp[((tcp[12:1] & 0xf0) >> 2):1] != 0", true },
		{ "ip[2:2] - ((ip[0] & 0xf) << 2) > 100", true },
	};
	const struct sock_filter far[] = {	/* ldx #0xfff00014; ldb [x+20] */
		BPF_STMT(BPF_LDX | BPF_IMM, 0xfff00014),
		BPF_STMT(BPF_LD | BPF_B | BPF_IND, SLL2_LEN),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter wraps[] = {	/* X + k past 2^32 */
		BPF_STMT(BPF_LDX | BPF_IMM, 0xfffffff0),
		BPF_STMT(BPF_LD | BPF_B | BPF_IND, SLL2_LEN + 0x24),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	const struct sock_filter abs_far[] = {	/* ldb [2^20 + 40] */
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, SLL2_LEN + 0x100028),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	unsigned int nexpr = sizeof(expressions) / sizeof(expressions[0]);
	struct pcap_range *st = calloc(MAGNET_PACKET_INSNS_MAX,
				       pcap_vm_range_size());
	unsigned int eligible = 0, kept = 0;

	for (unsigned int e = 0; e < nexpr + sizeof(exprs) / sizeof(exprs[0]); e++) {
		const char *text = e < nexpr ? expressions[e] : exprs[e - nexpr].expr;
		struct bpf_program prog;
		char err[PCAP_ERRBUF_SIZE];
		const struct sock_filter *f;
		bool plain = true, safe;

		if (pcapfilter_compile(text, &prog, err, sizeof(err)))
			continue;
		f = (const struct sock_filter *)prog.bf_insns;
		/* what native_prog() takes: no length, no cooked header but its protocol */
		for (unsigned int i = 0; i < prog.bf_len; i++) {
			u16 c = f[i].code;

			if ((BPF_CLASS(c) == BPF_LD || BPF_CLASS(c) == BPF_LDX) &&
			    (BPF_MODE(c) == BPF_LEN ||
			     (BPF_MODE(c) != BPF_IMM && BPF_MODE(c) != BPF_MEM &&
			      f[i].k < SLL2_LEN &&
			      !(c == (BPF_LD | BPF_H | BPF_ABS) && !f[i].k))))
				plain = false;
		}
		safe = pcap_vm_native_safe(f, prog.bf_len, st);
		if (e < nexpr) {
			eligible += plain;
			kept += plain && safe;
		} else {
			EXPECT_EQ(safe, exprs[e - nexpr].safe)
				TH_LOG("'%s': copies for the kernel's BPF %s", text,
				       safe ? "made" : "none");
		}
		pcap_freecode(&prog);
	}
	/*
	 * every one of the expressions that read neither the length nor the
	 * cooked header keeps them (more than 30)
	 */
	EXPECT_GT(eligible, 30);
	EXPECT_EQ(kept, eligible);
	/* none for ldx #0xfff00014; ldb [x+20]: the kernel's reads below the network header */
	EXPECT_FALSE(pcap_vm_native_safe(far, 3, st));
	/* none for ldx #0xfffffff0; ldb [x+56]: X + k wraps */
	EXPECT_FALSE(pcap_vm_native_safe(wraps, 3, st));
	/* none for ldb [2^20 + 40]: SKF_NET_OFF + it is a load at 40 */
	EXPECT_FALSE(pcap_vm_native_safe(abs_far, 2, st));
	free(st);
}

/* pcap_vm_check() refuses @f at instruction @want_at. */
static void refused(struct harness_test *_t, const char *what,
		    const struct sock_filter *f, unsigned int len,
		    unsigned int want_at)
{
	unsigned int at = ~0U;
	const char *why = pcap_vm_check(f, len, &at);

	EXPECT_TRUE(why) TH_LOG("%s: taken", what);
	EXPECT_EQ(at, want_at) TH_LOG("%s: %s", what, why ? why : "taken");
}

/* What the check refuses, as the kernel's own checker would. */
TEST(pcap_vm_check_refuses_libpcap_protochain_loop)
{
	pcap_t *dead = pcap_open_dead(DLT_LINUX_SLL2, PCAPFILTER_SNAPLEN);
	struct bpf_program prog;
	unsigned int at = 0;
	const char *why;

	/* libpcap's own program, not unrolled: a jump backwards */
	ASSERT_EQ(pcap_compile(dead, &prog, "ip6 protochain 6", 1,
			       PCAP_NETMASK_UNKNOWN), 0)
		TH_LOG("%s", pcap_geterr(dead));
	why = pcap_vm_check((const struct sock_filter *)prog.bf_insns,
			    prog.bf_len, &at);
	pcap_freecode(&prog);
	pcap_close(dead);
	ASSERT_TRUE(why);
	EXPECT_TRUE(strstr(why, "backwards")) TH_LOG("at %u: %s", at, why);
}

TEST(pcap_vm_check_refuses_bad_programs)
{
	refused(_t, "unknown opcode",
		(struct sock_filter[]){ { 0xff, 0, 0, 0 }, BPF_STMT(BPF_RET | BPF_K, 1) },
		2, 0);
	refused(_t, "jump past the end",
		(struct sock_filter[]){ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 5),
					BPF_STMT(BPF_RET | BPF_K, 1) }, 2, 0);
	refused(_t, "no return at the end",
		(struct sock_filter[]){ BPF_STMT(BPF_RET | BPF_K, 1),
					BPF_STMT(BPF_LD | BPF_IMM, 1) }, 2, 1);
	refused(_t, "division by a constant zero",
		(struct sock_filter[]){ BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
					BPF_STMT(BPF_RET | BPF_K, 1) }, 2, 0);
	refused(_t, "scratch memory past M[15]",
		(struct sock_filter[]){ BPF_STMT(BPF_ST, 16),
					BPF_STMT(BPF_RET | BPF_K, 1) }, 2, 0);
	refused(_t, "ancillary data",
		(struct sock_filter[]){ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF),
					BPF_STMT(BPF_RET | BPF_K, 1) }, 2, 0);
	refused(_t, "a shift by 32",
		(struct sock_filter[]){ BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 32),
					BPF_STMT(BPF_RET | BPF_A, 0) }, 2, 0);
}

TEST_MAIN

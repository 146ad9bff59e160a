/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Classic BPF programs and packets made from a stream of bytes, for the
 * differential tests of the packet filter: the fuzz target
 * (tests/fuzz/pcapvm.c, its input the bytes) and the test in the VM
 * (tests/bin/pcap-diff.c, random bytes). The programs are made to reach
 * what libpcap's rarely do: loads at X + k with X large or wrapping,
 * shifts by X, jumps whose two targets are equal, scratch memory, the
 * cooked header, offsets near 2^20 and 2^31; mostly they pass the
 * check. The packets are IPv4 with and without options, IPv6, UDP and
 * TCP, and bytes of any kind, behind a LINUX_SLL2 cooked header.
 *
 * And what libpcap's interpreter answers: pcap_gen_libpcap() runs
 * bpf_filter() on the program with its scratch memory stored to first
 * (libpcap leaves it uninitialised; magnet's reads zero there, and the
 * kernel refuses a program that reads a word before storing it).
 */
#ifndef MAGNET_PCAP_GEN_H
#define MAGNET_PCAP_GEN_H

#include <linux/filter.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <string.h>

#define PCAP_GEN_SLL2		20
#define PCAP_GEN_INSNS		48	/* at most, per program */
#define PCAP_GEN_PACKET		400	/* bytes, at most, cooked header included */

struct pcap_gen {
	const uint8_t *p;	/* the bytes, or NULL: @next's */
	size_t n;
	uint32_t (*next)(void);
};

static inline uint32_t gen8(struct pcap_gen *g)
{
	if (!g->p)
		return g->next() & 0xff;
	if (!g->n)
		return 0;
	g->n--;
	return *g->p++;
}

static inline uint32_t gen32(struct pcap_gen *g)
{
	uint32_t v = gen8(g) << 24;

	v |= gen8(g) << 16;
	v |= gen8(g) << 8;
	return v | gen8(g);
}

/* Values where the semantics of loads and shifts change. */
static const uint32_t pcap_gen_edges[] = {
	0, 1, 4, 20, 31, 32, 33, 60, 0xff, 0xffff, 0xfffff, 0x100000,
	0x100014, 0x7fffffff, 0x80000000, 0xfff00000, 0xfff00014,
	0xfffffff0, 0xffffffff,
};

static inline uint32_t gen_edge(struct pcap_gen *g)
{
	return pcap_gen_edges[gen8(g) % (sizeof(pcap_gen_edges) /
					 sizeof(pcap_gen_edges[0]))];
}

/* An offset to load at: mostly in the packet, some in the cooked header, some at an edge. */
static inline uint32_t gen_off(struct pcap_gen *g)
{
	uint32_t b = gen8(g);

	if (b < 200)
		return PCAP_GEN_SLL2 + gen8(g) % 64;
	if (b < 215)
		return gen8(g) % PCAP_GEN_SLL2;
	return b < 235 ? PCAP_GEN_SLL2 + gen_edge(g) : gen_edge(g);
}

/* An operand: small, a shift's, any, or an edge. */
static inline uint32_t gen_val(struct pcap_gen *g)
{
	uint32_t b = gen8(g);

	if (b < 140)
		return gen8(g);
	if (b < 190)
		return gen8(g) % 40;
	return b < 215 ? gen32(g) : gen_edge(g);
}

/* A program of up to @max instructions into @f; its length. */
static inline unsigned int pcap_gen_program(struct pcap_gen *g,
					    struct sock_filter *f,
					    unsigned int max)
{
	static const uint16_t sizes[] = { BPF_W, BPF_H, BPF_B };
	static const uint16_t alu[] = { BPF_ADD, BPF_SUB, BPF_MUL, BPF_DIV,
					BPF_MOD, BPF_AND, BPF_OR, BPF_XOR,
					BPF_LSH, BPF_RSH, BPF_NEG };
	static const uint16_t jmp[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };
	unsigned int len = 2 + gen8(g) % (max - 1), i;

	for (i = 0; i + 1 < len; i++) {
		unsigned int left = len - i - 1, c = gen8(g) % 21;
		struct sock_filter *p = &f[i];

		*p = (struct sock_filter){ 0 };
		switch (c) {
		case 0: case 1: case 2: case 3:
			p->code = BPF_LD | sizes[gen8(g) % 3] | BPF_ABS;
			p->k = gen_off(g);
			break;
		case 4: case 5:
			p->code = BPF_LD | sizes[gen8(g) % 3] | BPF_IND;
			p->k = gen_off(g);
			break;
		case 6:
			p->code = BPF_LDX | BPF_B | BPF_MSH;
			p->k = gen_off(g);
			break;
		case 7:
		case 8:
			p->code = (c == 7 ? BPF_LD : BPF_LDX) | BPF_IMM;
			p->k = gen_val(g);
			break;
		case 9: case 10: case 11:
			p->code = BPF_ALU | alu[gen8(g) % 11] |
				  (c == 11 ? BPF_X : BPF_K);
			p->k = gen_val(g);
			break;
		case 12:
			p->code = BPF_MISC | (gen8(g) % 2 ? BPF_TAX : BPF_TXA);
			break;
		case 13:
			p->code = gen8(g) % 2 ? BPF_ST : BPF_STX;
			p->k = gen8(g) % 16;
			break;
		case 14:
			p->code = (gen8(g) % 2 ? BPF_LD : BPF_LDX) | BPF_MEM;
			p->k = gen8(g) % 16;
			break;
		case 15: case 16: case 17:
			p->code = BPF_JMP | jmp[gen8(g) % 4] |
				  (gen8(g) % 4 ? BPF_K : BPF_X);
			p->k = gen_val(g);
			p->jt = gen8(g) % left;
			/* (equal targets: one way, whatever the test says) */
			p->jf = gen8(g) % 4 ? gen8(g) % left : p->jt;
			break;
		case 18:
			p->code = BPF_JMP | BPF_JA;
			p->k = gen8(g) % left;
			break;
		case 19:
			p->code = BPF_RET | (gen8(g) % 2 ? BPF_A : BPF_K);
			p->k = gen8(g) % 2 ? 0 : 0x40000;
			break;
		default:
			p->code = (gen8(g) % 2 ? BPF_LD : BPF_LDX) | BPF_W | BPF_LEN;
			break;
		}
	}
	f[i] = (struct sock_filter)BPF_STMT(BPF_RET | (gen8(g) % 2 ? BPF_A : BPF_K),
					    0x40000);
	return len;
}

/* A packet behind a cooked header into @b; its length, cooked header included. */
static inline unsigned int pcap_gen_packet(struct pcap_gen *g, uint8_t *b)
{
	static const uint16_t ports[] = { 53, 80, 4244, 5001, 5201, 6000 };
	unsigned int kind = gen8(g) % 5, ip = PCAP_GEN_SLL2, hl, l4, n, i;
	uint16_t sp, dp;
	uint8_t proto = gen8(g) % 3 ? 17 : 6;

	memset(b, 0, PCAP_GEN_PACKET);
	b[7] = 1;			/* ifindex */
	b[9] = 4;			/* ARPHRD_LOOPBACK's low byte */
	b[8] = 3;
	b[10] = gen8(g) % 2 ? 0 : 4;	/* host, outgoing */
	if (kind == 2) {		/* IPv6 */
		b[0] = 0x86;
		b[1] = 0xdd;
		b[ip] = 0x60;
		b[ip + 6] = proto;
		b[ip + 7] = 64;
		b[ip + 8] = 0xfd;
		b[ip + 9] = 0x09;
		b[ip + 23] = 1 + gen8(g) % 2;
		b[ip + 24] = 0xfd;
		b[ip + 25] = 0x09;
		b[ip + 39] = 1 + gen8(g) % 2;
		hl = 40;
	} else {			/* IPv4, with options (kind 1) or not */
		b[0] = 0x08;
		hl = kind == 1 ? 24 + 4 * (gen8(g) % 10) : 20;
		b[ip] = 0x40 | hl / 4;
		b[ip + 6] = gen8(g) % 4 ? 0x40 : 0;
		b[ip + 8] = 64;
		b[ip + 9] = proto;
		b[ip + 12] = 10;
		b[ip + 13] = 9;
		b[ip + 15] = 1 + gen8(g) % 2;
		b[ip + 16] = 10;
		b[ip + 17] = 9;
		b[ip + 19] = 1 + gen8(g) % 2;
		for (i = 20; i < hl; i++)
			b[ip + i] = 1;	/* NOPs */
	}
	l4 = ip + hl;
	sp = ports[gen8(g) % 6];
	dp = ports[gen8(g) % 6];
	b[l4] = sp >> 8;
	b[l4 + 1] = sp;
	b[l4 + 2] = dp >> 8;
	b[l4 + 3] = dp;
	if (proto == 6) {
		b[l4 + 12] = (gen8(g) % 3 ? 5 : 8) << 4;
		b[l4 + 13] = gen8(g) % 64;
	}
	n = l4 + (proto == 6 ? 4 * (b[l4 + 12] >> 4) : 8) + gen8(g) % 96;
	for (i = l4 + (proto == 6 ? 20 : 8); i < n; i++)
		b[i] = gen8(g);
	if (kind == 4) {		/* anything at all, from the header on */
		for (i = ip + 1; i < n; i++)
			b[i] = gen8(g);
		n = ip + 1 + gen8(g) % (n - ip);
	}
	if (proto == 17) {
		b[l4 + 4] = (n - l4) >> 8;
		b[l4 + 5] = n - l4;
	}
	if (kind == 2) {
		b[ip + 4] = (n - l4) >> 8;
		b[ip + 5] = n - l4;
	} else if (kind != 4) {
		b[ip + 2] = (n - ip) >> 8;
		b[ip + 3] = n - ip;
	}
	return n;
}

/*
 * Can @f read the cooked header's link-layer address (bytes 11 to 19),
 * which magnet's probes do not know? Then magnet's interpreter may leave
 * a hit undecided (filters/pcap_vm.c), and rightly; nowhere else.
 */
static inline int pcap_gen_reads_address(const struct sock_filter *f,
					 unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i++) {
		uint16_t c = f[i].code;
		uint32_t size = BPF_SIZE(c) == BPF_W ? 4 : BPF_SIZE(c) == BPF_H ? 2 : 1;

		if (BPF_CLASS(c) != BPF_LD && BPF_CLASS(c) != BPF_LDX)
			continue;
		if (BPF_MODE(c) == BPF_IND)
			return 1;
		if ((BPF_MODE(c) == BPF_ABS || BPF_MODE(c) == BPF_MSH) &&
		    f[i].k < PCAP_GEN_SLL2 && f[i].k + size > 11)
			return 1;
	}
	return 0;
}

/* libpcap's answer: the program, its scratch memory stored to first. */
static inline unsigned int pcap_gen_libpcap(const struct sock_filter *f,
					    unsigned int len,
					    const uint8_t *pkt,
					    unsigned int plen)
{
	struct sock_filter g[17 + 256];
	unsigned int i;

	g[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM, 0);
	for (i = 0; i < 16; i++)
		g[1 + i] = (struct sock_filter)BPF_STMT(BPF_ST, i);
	memcpy(g + 17, f, len * sizeof(*f));
	return bpf_filter((const struct bpf_insn *)g, pkt, plen, plen);
}

#endif

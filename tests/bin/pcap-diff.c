// SPDX-License-Identifier: GPL-2.0
/*
 * pcap-diff: every way the packet filter runs a program, in the kernel,
 * against libpcap's interpreter (bpf_filter()), on random programs and
 * packets. The kernel side is the test module magnet_pcapdiff
 * (tests/kmod/pcapdiff.c): the interpreter, and each copy for the
 * kernel's own BPF (at the network header, from skb->data, past an
 * Ethernet header; for IPv4 without options, their twins), on real
 * sk_buffs. Programs come from tests/host/pcap-gen.h (made to reach
 * edges libpcap's compiler does not) and from tcpdump expressions
 * compiled by libpcap, as magnetctl compiles them, with random operands;
 * first, the programs made by hand that once broke the kernel or answered
 * differently from libpcap.
 *
 *	pcap-diff PROGRAMS PACKETS [SEED]
 *
 * Prints, per way, how many program x packet pairs it answered, and each
 * difference (the program, the packet, both answers; the first 20);
 * exits 1 if there was any, 2 if the module's file is missing. The one
 * answer that is not libpcap's and is right: the interpreter's
 * "undecided" for a program that reads the cooked header's link-layer
 * address, which magnet's probes do not know (counted apart).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcap-gen.h"
#include "pcapfilter.h"

#define FILE_PATH	"/sys/kernel/debug/magnet_pcapdiff"
#define COPIES		3	/* NATIVE_NET, NATIVE_DATA, NATIVE_ETH */

static const char *const copy_name[COPIES] = {
	"native at the network header", "native from skb->data",
	"native past an Ethernet header",
};

static uint64_t rng;

static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return rng >> 33;
}

/* tcpdump expressions, %u an operand: shifts by X, X + k, the usual */
static const char *const shapes[] = {
	"udp[8] << udp[9] = %u", "udp[8] >> udp[9] = %u",
	"udp[8] << (udp[9] & 31) = %u", "ip[%u] & 0xf > 5",
	"udp[%u:2] = 0x3030", "udp port %u", "udp src port %u",
	"tcp[((tcp[12:1] & 0xf0) >> 2):1] = %u", "ip[%u] = 1",
	"udp portrange 5000-%u", "ip[2:2] - ((ip[0] & 0xf) << 2) > %u",
	"tcp[tcpflags] & %u != 0", "ip6[%u] = 6", "ip[8] %% %u = 1",
	"udp[ip[0] & %u] = 0", "ip[udp[8] * 65536 + %u] = 1",
	"len > %u", "ip[0] & 0xf = 5 and udp[%u] > 1",
};

#define PROG(...) { (const struct sock_filter[]){ __VA_ARGS__ },		\
		    sizeof((const struct sock_filter[]){ __VA_ARGS__ }) /	\
		    sizeof(struct sock_filter) }
static const struct { const struct sock_filter *f; unsigned int len; } fixed[] = {
	/* X + k at SKF_NET_OFF + 0x28: the kernel read the network header */
	PROG(BPF_STMT(BPF_LDX | BPF_IMM, 0xfff00014),
	     BPF_STMT(BPF_LD | BPF_B | BPF_IND, 20), BPF_STMT(BPF_RET | BPF_A, 0)),
	/* X + k past 2^32 */
	PROG(BPF_STMT(BPF_LDX | BPF_IMM, 0xfffffff0),
	     BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0x24), BPF_STMT(BPF_RET | BPF_A, 0)),
	/* an offset of 2^20 + 40 */
	PROG(BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20 + 0x100028),
	     BPF_STMT(BPF_RET | BPF_A, 0)),
	/* udp[8] << udp[9] = 0, as libpcap compiles it for IPv4 */
	PROG(BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x800, 0, 10),
	     BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 29),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, 8),
	     BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 20),
	     BPF_STMT(BPF_LD | BPF_B | BPF_IND, 29),
	     BPF_STMT(BPF_ST, 0),
	     BPF_STMT(BPF_LD | BPF_B | BPF_IND, 28),
	     BPF_STMT(BPF_LDX | BPF_MEM, 0),
	     BPF_STMT(BPF_ALU | BPF_LSH | BPF_X, 0),
	     BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
	     BPF_STMT(BPF_RET | BPF_K, 0x40000),
	     BPF_STMT(BPF_RET | BPF_K, 0)),
	/* a jump whose two targets are equal */
	PROG(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 0),
	     BPF_STMT(BPF_RET | BPF_K, 0xffff)),
};

static unsigned long pairs[2 + 2 * COPIES], wrong[1 + COPIES], undecided,
	progs_native, progs_ihl5, progs_refused, progs, differ;

static void show(const char *what, const struct sock_filter *f,
		 unsigned int len, const uint8_t *pkt, unsigned int plen,
		 int want, int got)
{
	unsigned int i;

	if (differ++ >= 20)
		return;
	printf("# DIFFERS: %s answered %d, libpcap %d\n#  program:", what,
	       got, want);
	for (i = 0; i < len; i++)
		printf(" {0x%02x,%u,%u,0x%x}", f[i].code, f[i].jt, f[i].jf,
		       f[i].k);
	printf("\n#  packet:");
	for (i = 0; i < plen; i++)
		printf("%02x", pkt[i]);
	printf("\n");
}

/* One program on @npkt packets: the module's answers against libpcap's. */
static int one(int fd, const struct sock_filter *f, unsigned int len,
	       unsigned int npkt, struct pcap_gen *g)
{
	static uint8_t req[8 + 256 * 8 + 256 * (2 + PCAP_GEN_PACKET)];
	static uint8_t pkts[256][PCAP_GEN_PACKET];
	static unsigned int plens[256];
	uint8_t ans[1 + 2 * 256];
	uint32_t hdr[2] = { len, npkt };
	size_t n = 8 + len * sizeof(*f);
	unsigned int i, c;
	ssize_t got;

	memcpy(req, hdr, 8);
	memcpy(req + 8, f, len * sizeof(*f));
	for (i = 0; i < npkt; i++) {
		uint16_t l = plens[i] = pcap_gen_packet(g, pkts[i]);

		memcpy(req + n, &l, 2);
		memcpy(req + n + 2, pkts[i], l);
		n += 2 + l;
	}
	if (pwrite(fd, req, n, 0) != (ssize_t)n) {
		fprintf(stderr, "pcap-diff: write: %s\n", strerror(errno));
		return -1;
	}
	got = pread(fd, ans, sizeof(ans), 0);
	if (got < 1) {
		fprintf(stderr, "pcap-diff: read: %s\n", got ? strerror(errno) : "nothing");
		return -1;
	}
	progs++;
	if (ans[0] & 1) {
		progs_refused++;
		return 0;
	}
	if (got != 1 + 2 * (ssize_t)npkt) {
		fprintf(stderr, "pcap-diff: %zd bytes of answers for %u packets\n", got, npkt);
		return -1;
	}
	progs_native += !!(ans[0] & 2);
	progs_ihl5 += !!(ans[0] & 4);
	for (i = 0; i < npkt; i++) {
		int want = pcap_gen_libpcap(f, len, pkts[i], plens[i]) != 0;
		uint8_t a = ans[1 + 2 * i], b = ans[2 + 2 * i];
		int v = a & 3;

		pairs[0]++;
		if (v == 2 && pcap_gen_reads_address(f, len)) {
			undecided++;
		} else if (v != want) {
			wrong[0]++;
			show(v == 2 ? "the interpreter (undecided)" : "the interpreter",
			     f, len, pkts[i], plens[i], want, v);
		}
		for (c = 0; c < COPIES; c++) {
			int m = !!(a & (1 << (3 + 2 * c)));

			if (!(a & (1 << (2 + 2 * c))))
				continue;
			pairs[1 + c + (b & (1 << c) ? COPIES : 0)]++;
			if (m != want) {
				wrong[1 + c]++;
				show(copy_name[c], f, len, pkts[i], plens[i], want, m);
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int nprogs, npkt, i;
	struct pcap_gen g = { .next = rnd };
	struct sock_filter f[256];
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: pcap-diff PROGRAMS PACKETS [SEED]\n");
		return 2;
	}
	nprogs = atoi(argv[1]);
	npkt = atoi(argv[2]);
	rng = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	if (npkt > 256) {
		fprintf(stderr, "pcap-diff: at most 256 packets a program\n");
		return 2;
	}
	fd = open(FILE_PATH, O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "pcap-diff: %s: %s (is magnet_pcapdiff loaded?)\n",
			FILE_PATH, strerror(errno));
		return 2;
	}
	/* first the programs that once broke the kernel or disagreed with libpcap */
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (one(fd, fixed[i].f, fixed[i].len, npkt, &g))
			return 2;
	for (unsigned int j = 0; j + 1 < 256; j++)
		f[j] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 42);
	f[255] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_A, 0);
	if (one(fd, f, 256, npkt, &g))
		return 2;
	for (i = 0; i < nprogs; i++) {
		unsigned int len;

		if (i % 4 == 3) {	/* a tcpdump expression */
			char text[128], err[PCAP_ERRBUF_SIZE];
			struct bpf_program prog;

			snprintf(text, sizeof(text),
				 shapes[rnd() % (sizeof(shapes) / sizeof(shapes[0]))],
				 rnd() % 4 ? rnd() % 64 : rnd());
			if (pcapfilter_compile(text, &prog, err, sizeof(err)) ||
			    prog.bf_len > 256) {
				i--;
				continue;
			}
			len = prog.bf_len;
			memcpy(f, prog.bf_insns, len * sizeof(*f));
			pcap_freecode(&prog);
		} else {
			len = pcap_gen_program(&g, f, PCAP_GEN_INSNS);
		}
		if (one(fd, f, len, npkt, &g))
			return 2;
	}
	printf("# %lu programs: %lu refused by the check, %lu with copies for the kernel's BPF (%lu with copies for IPv4 headers without options)\n",
	       progs, progs_refused, progs_native, progs_ihl5);
	printf("# program x packet pairs: the interpreter %lu (%lu wrong; %lu undecided, by a read of the link-layer address)",
	       pairs[0], wrong[0], undecided);
	for (i = 0; i < COPIES; i++)
		printf("; %s %lu (its IHL-5 twin %lu; %lu wrong)", copy_name[i],
		       pairs[1 + i], pairs[1 + COPIES + i], wrong[1 + i]);
	printf("\n# differences from libpcap: %lu\n", differ);
	return differ ? 1 : 0;
}

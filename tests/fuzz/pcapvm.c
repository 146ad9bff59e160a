// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the packet filter's kernel code (filters/pcap_vm.c, built
 * with tests/host/kshim/): the check, the interpreter, the analyses and
 * the rewrites, on programs no compiler writes. The input is a program
 * and a packet, made by tests/host/pcap-gen.h from its bytes. For a
 * program the check accepts:
 *   - the interpreter answers what libpcap's bpf_filter() answers on the
 *     packet in memory (or undecided, for a program that reads the
 *     cooked header's link-layer address);
 *   - pcap_vm_ihl5()'s copy answers as the program, by libpcap, on an
 *     IPv4 packet without options;
 *   - pcap_vm_native_safe() ends, and pcap_vm_native_ok() and
 *     pcap_vm_specialize() on each shape of send call (the core's
 *     templates, as tests/host/pcap-host.h makes them): where the
 *     program is written again, its steps are in order and inside it
 *     (pcap_vm_run_sent() ends), and on random records of that shape it
 *     answers what pcap_vm answers on the headers built, decided; where
 *     the kernel's BPF may run it on built headers, libpcap there
 *     answers what pcap_vm decides.
 * Any sanitizer finding (a read past the states, as the kernel's KASAN
 * found) or a hang (a step that jumps back) fails.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pcap-gen.h"
#include "pcap-host.h"
#include "pcap_vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "pcapvm: %s\n", what);
	abort();
}

/* Steps in order, each inside the program: pcap_vm_run_sent() ends. */
static void check_steps(const struct pcap_sent *sp)
{
	for (unsigned int i = 0; i < sp->len; i++) {
		const struct pcap_sop *op = &sp->op[i];

		if (BPF_CLASS(op->code) == BPF_RET)
			continue;
		if (op->jt <= i || op->jt >= sp->len ||
		    (BPF_CLASS(op->code) == BPF_JMP &&
		     (op->jf <= i || op->jf >= sp->len)))
			fail("a step that jumps back or out");
	}
	if (!sp->len || sp->start >= sp->len)
		fail("no first step");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pcap_astate *st;
	static struct pcap_range *rs;
	static struct pcap_sent *sp;
	static struct magnet_pkt_template t[2][MAGNET_BUILT_UNKNOWNS];
	struct pcap_gen g = { .p = data, .n = size };
	struct sock_filter f[PCAP_GEN_INSNS], copy[PCAP_GEN_INSNS];
	struct pcap_op ops[PCAP_GEN_INSNS];
	static uint8_t pkt[PCAP_GEN_PACKET];
	struct magnet_pkt_view v;
	unsigned int len, plen, at;
	s64 x[PCAP_GEN_INSNS];
	int want, got;

	if (!st) {
		st = calloc(PCAP_GEN_INSNS, pcap_vm_astate_size());
		rs = calloc(PCAP_GEN_INSNS, pcap_vm_range_size());
		sp = malloc(sizeof(*sp) + PCAP_GEN_INSNS * sizeof(sp->op[0]));
		for (unsigned int u = 0; u < MAGNET_BUILT_UNKNOWNS; u++) {
			make_template(&t[0][u], 0, u);
			make_template(&t[1][u], 1, u);
		}
	}
	len = pcap_gen_program(&g, f, PCAP_GEN_INSNS);
	if (pcap_vm_check(f, len, &at))
		return 0;
	rng = len;
	for (size_t i = 0; i < size; i++)
		rng = rng * 31 + data[i];

	/* the interpreter against libpcap */
	plen = pcap_gen_packet(&g, pkt);
	pcap_vm_decode(f, len, ops);
	make_view(&v, pkt, plen, 0);
	want = pcap_gen_libpcap(f, len, pkt, plen) != 0;
	got = pcap_vm_run(f, ops, &v);
	if (got == PCAP_UNDECIDED ? !pcap_gen_reads_address(f, len) :
	    got != (want ? PCAP_MATCH : PCAP_REJECT))
		fail("the interpreter answers differently from libpcap");

	/* the copy for IPv4 headers without options */
	memcpy(copy, f, len * sizeof(*f));
	if (pcap_vm_ihl5(copy, len, x) && pkt[0] == 0x08 &&
	    pkt[SLL2_LEN] == 0x45 &&
	    (pcap_gen_libpcap(copy, len, pkt, plen) != 0) != want)
		fail("the IHL-5 copy answers differently from the program");

	pcap_vm_native_safe(f, len, rs);

	/* each shape of send call */
	for (int tn = 0; tn < 2 * MAGNET_BUILT_UNKNOWNS; tn++) {
		const struct magnet_pkt_template *tp =
			&t[tn / MAGNET_BUILT_UNKNOWNS][tn % MAGNET_BUILT_UNKNOWNS];
		bool special = pcap_vm_specialize(f, len, tp, st, sp);
		bool native = pcap_vm_native_ok(f, len, tp, st);

		if (special)
			check_steps(sp);
		if (!special && !native)
			continue;
		for (unsigned int n = 0; n < 8; n++) {
			static uint8_t b[SLL2_LEN + MAGNET_PKT_VIEW_BUILT];
			struct magnet_packet pk;
			struct magnet_sent s;

			make_sent(tp, &pk, &s, &v);
			if (tn % MAGNET_BUILT_UNKNOWNS & MAGNET_BUILT_SADDR_UNKNOWN)
				memset(pk.saddr, 0, sizeof(pk.saddr));
			if (tn % MAGNET_BUILT_UNKNOWNS & MAGNET_BUILT_SPORT_UNKNOWN)
				pk.sport = 0;
			got = pcap_vm_run(f, ops, &v);
			if (got == PCAP_UNDECIDED)
				fail("written again or native, but pcap_vm is undecided");
			if (special &&
			    pcap_vm_run_sent(sp, &s) != (got == PCAP_MATCH))
				fail("written again, it answers differently from pcap_vm");
			if (native) {
				/* what the kernel's BPF reads: the headers as built */
				memset(b, 0, SLL2_LEN);
				b[0] = tp->protocol >> 8;
				b[1] = tp->protocol;
				memcpy(b + SLL2_LEN, v.built, v.nbuilt);
				if ((pcap_gen_libpcap(f, len, b, SLL2_LEN + v.nbuilt) != 0) !=
				    (got == PCAP_MATCH))
					fail("native on built headers, libpcap answers differently from pcap_vm");
			}
		}
	}
	return 0;
}

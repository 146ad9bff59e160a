// SPDX-License-Identifier: GPL-2.0
/*
 * A program written again for IPv4 headers without options
 * (pcap_vm_ihl5()): the header's length loaded is 20, and its loads at
 * X + k made loads at a constant offset, which the kernel's BPF makes
 * inline (pcap_native.c runs that copy where the header has no options).
 */
#include "pcap_vm.h"

#define X_UNSEEN	(-2LL)	/* no path reaches the instruction (yet) */
#define X_UNKNOWN	(-1LL)

static void x_merge(s64 *x, unsigned int to, unsigned int len, s64 v)
{
	if (to >= len)		/* (a checked program's jumps land inside it) */
		return;
	if (x[to] == X_UNSEEN)
		x[to] = v;
	else if (x[to] != v)
		x[to] = X_UNKNOWN;
}

/*
 * libpcap reads a field past the IPv4 header with "ldxb 4*([20]&0xf)"
 * (X = the header's length), then a load at X + k, which the kernel's
 * translation to eBPF makes a helper call whatever X is; a load at a
 * constant offset past the data pointer it makes inline. Where the
 * packet's header has no options, X is 20: the program written again
 * for that (the header's length loaded is 20, and every load at X + k
 * where X is the same constant on every path to it is a load at k + X)
 * answers as @f on every such packet. Changes @f; does the copy differ?
 * @x: room, one per instruction.
 */
bool pcap_vm_ihl5(struct sock_filter *f, unsigned int len, s64 *x)
{
	bool changed = false;
	unsigned int i;
	s64 v;

	for (i = 0; i < len; i++)
		x[i] = X_UNSEEN;
	if (len)
		x[0] = 0;		/* X starts at zero */
	for (i = 0; i < len; i++) {
		struct sock_filter *p = &f[i];

		v = x[i];
		if (v == X_UNSEEN)
			continue;	/* not reached */
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			if (BPF_MODE(p->code) == BPF_IND && v >= 0 &&
			    (u64)p->k + v <= 0x7fffffff) {
				p->code = BPF_LD | BPF_SIZE(p->code) | BPF_ABS;
				p->k += v;
				changed = true;
			}
			break;
		case BPF_LDX:
			if (p->code == (BPF_LDX | BPF_B | BPF_MSH) &&
			    p->k == SLL2_LEN) {
				*p = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_IMM, 20);
				changed = true;
			}
			v = p->code == (BPF_LDX | BPF_IMM) ? (s64)p->k : X_UNKNOWN;
			break;
		case BPF_MISC:
			if (BPF_MISCOP(p->code) == BPF_TAX)
				v = X_UNKNOWN;
			break;
		case BPF_RET:
			continue;
		case BPF_JMP:
			if (BPF_OP(p->code) == BPF_JA) {
				x_merge(x, i + 1 + p->k, len, v);
			} else {
				x_merge(x, i + 1 + p->jt, len, v);
				x_merge(x, i + 1 + p->jf, len, v);
			}
			continue;
		default:	/* ALU, ST, STX: X as it was */
			break;
		}
		x_merge(x, i + 1, len, v);
	}
	return changed;
}

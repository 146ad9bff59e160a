// SPDX-License-Identifier: GPL-2.0
/*
 * Which programs the kernel's BPF answers as libpcap does
 * (pcap_vm_native_safe()): a bound on every value a program can hold,
 * so that no shift by X reaches 32 and no load passes PCAP_NATIVE_REACH.
 */
#include <linux/string.h>

#include "pcap_vm.h"

/*
 * The kernel's translation of classic BPF differs from libpcap's
 * interpreter (bpf_filter()) in two places a program can reach:
 *   - a shift by X of 32 or more: libpcap gives 0, the kernel's 32-bit
 *     shift takes X's low five bits;
 *   - a load at X + k, its sum taken as a signed int: libpcap refuses a
 *     load whose X + k passes the packet's end or 2^32, the kernel
 *     loads at any sum in [SKF_LL_OFF, 0) from the link or network
 *     header (bpf_internal_load_pointer_neg_helper()), and at a sum
 *     that wrapped past 2^32 from the packet's start. The copies
 *     native_prog() writes move each offset (by SKF_NET_OFF,
 *     -SLL2_LEN, +ETH_HLEN), so an offset of 2^20 or more past the
 *     cooked header lands where libpcap would not load.
 * pcap_vm_native_safe() finds, once per program, an upper bound of A, X
 * and each scratch word at each instruction (one forward pass: every
 * jump is forward), and accepts the program only if no shift by X can
 * reach 32 and no load's offset can reach PCAP_NATIVE_REACH past the
 * cooked header. On every packet the kernel holds in linear memory
 * (shorter than that), such a program then loads where libpcap loads,
 * or past the packet's end where both give 0.
 */
struct pcap_range {
	bool reached;
	u32 a, x, m[MEM_WORDS];
};

size_t pcap_vm_range_size(void)
{
	return sizeof(struct pcap_range);
}

static u32 rsat(u64 v)
{
	return v > U32_MAX ? U32_MAX : v;
}

/* The largest value with no bit above @v's highest: an OR's, an XOR's. */
static u32 rfill(u32 v)
{
	return v ? (u32)(BIT_ULL(fls(v)) - 1) : 0;
}

static void rmerge(struct pcap_range *d, const struct pcap_range *s)
{
	unsigned int i;

	if (!d->reached) {
		*d = *s;
		return;
	}
	d->a = max(d->a, s->a);
	d->x = max(d->x, s->x);
	for (i = 0; i < MEM_WORDS; i++)
		d->m[i] = max(d->m[i], s->m[i]);
}

/* Does a load of @size at @k (+ X's bound @x) stay below the reach? */
static bool rreach(u64 k, u64 x, u32 size)
{
	return k + x + size <= (u64)SLL2_LEN + PCAP_NATIVE_REACH;
}

/*
 * A's bound after A op B (B: the constant, or X's bound @b); false: a
 * shift by X may reach 32.
 */
static bool ralu(u16 op, bool by_x, u32 *a, u32 b)
{
	switch (op) {
	case BPF_ADD:
		*a = rsat((u64)*a + b);
		break;
	case BPF_SUB:		/* it may wrap */
		*a = b ? U32_MAX : *a;
		break;
	case BPF_NEG:
		*a = *a ? U32_MAX : 0;
		break;
	case BPF_MUL:
		*a = rsat((u64)*a * b);
		break;
	case BPF_DIV:		/* by X = 0: both give 0 */
		*a = by_x || !b ? *a : *a / b;
		break;
	case BPF_MOD:
		*a = b ? min(*a, b - 1) : *a;
		break;
	case BPF_AND:
		*a = min(*a, b);
		break;
	case BPF_OR:
	case BPF_XOR:
		*a = rfill(max(*a, b));
		break;
	case BPF_LSH:		/* (by X: by at most its bound) */
		if (b >= 32)
			return false;
		*a = rsat((u64)*a << b);
		break;
	case BPF_RSH:
		if (b >= 32)
			return false;
		*a = by_x ? *a : *a >> b;
		break;
	}
	return true;
}

/**
 * pcap_vm_native_safe - does the kernel's BPF answer a program as libpcap?
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 * @st:		room for @len states (pcap_vm_range_size() each), any contents
 *
 * See above. Any context (the caller's memory only).
 * Return: true if the kernel's translation of @f, or of a copy of it
 * with its offsets moved as native_prog() moves them, answers what
 * libpcap's interpreter answers on every packet shorter than
 * PCAP_NATIVE_REACH.
 */
bool pcap_vm_native_safe(const struct sock_filter *f, unsigned int len,
			 struct pcap_range *st)
{
	unsigned int i, j, n, next[2];

	for (i = 0; i < len; i++)
		st[i].reached = false;
	/*
	 * A and X start at zero; a scratch word read before it is stored
	 * to is refused by the kernel's checker, and may be anything.
	 */
	memset(&st[0], 0, sizeof(st[0]));
	for (j = 0; j < MEM_WORDS; j++)
		st[0].m[j] = U32_MAX;
	st[0].reached = true;

	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		u32 size = bpf_size_to_bytes(BPF_SIZE(p->code));
		struct pcap_range s;

		if (!st[i].reached)
			continue;
		s = st[i];
		n = 1;
		next[0] = i + 1;
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			switch (BPF_MODE(p->code)) {
			case BPF_ABS:
			case BPF_IND:
				if (!rreach(p->k, BPF_MODE(p->code) == BPF_IND ?
						  s.x : 0, size))
					return false;
				s.a = size == 4 ? U32_MAX : BIT(8 * size) - 1;
				break;
			case BPF_IMM:
				s.a = p->k;
				break;
			case BPF_MEM:
				s.a = s.m[p->k];
				break;
			default:	/* LEN */
				s.a = U32_MAX;
				break;
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(p->code)) {
			case BPF_MSH:
				if (!rreach(p->k, 0, 1))
					return false;
				s.x = 4 * 0xf;
				break;
			case BPF_IMM:
				s.x = p->k;
				break;
			case BPF_MEM:
				s.x = s.m[p->k];
				break;
			default:	/* LEN */
				s.x = U32_MAX;
				break;
			}
			break;
		case BPF_ST:
			s.m[p->k] = s.a;
			break;
		case BPF_STX:
			s.m[p->k] = s.x;
			break;
		case BPF_ALU:
			if (!ralu(BPF_OP(p->code), BPF_SRC(p->code) == BPF_X,
				  &s.a, BPF_SRC(p->code) == BPF_X ? s.x : p->k))
				return false;
			break;
		case BPF_MISC:
			if (BPF_MISCOP(p->code) == BPF_TAX)
				s.x = s.a;
			else
				s.a = s.x;
			break;
		case BPF_RET:
			n = 0;
			break;
		default:	/* BPF_JMP */
			if (BPF_OP(p->code) == BPF_JA) {
				next[0] = i + 1 + p->k;
			} else {
				next[0] = i + 1 + p->jt;
				next[1] = i + 1 + p->jf;
				n = 2;
			}
		}
		for (j = 0; j < n; j++)
			rmerge(&st[next[j]], &s);
	}
	return true;
}

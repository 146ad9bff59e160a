// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_pcap: filter type "packet" -- tcpdump's filter language in the
 * kernel. User space compiles the expression with libpcap for
 * LINKTYPE_LINUX_SLL2, as tcpdump -i any does, and gives the classic BPF
 * program here; it runs on each hit's packet before any buffer space is
 * taken, so a packet it rejects costs no record and no copy.
 *
 *   magnetctl filter add udp-send.ip packet udp port 5001
 *
 * What the program sees is the packet as tcpdump -i any would see it: a
 * cooked header (protocol, device index and type, direction) built here,
 * then the packet from its network header as the core's
 * magnet_packet_view() shows it, wherever the layer holds it (an skb whose
 * data is at the link, network or transport header; headers built from a
 * socket at a send call).
 *
 * Why an interpreter here, and not the kernel's: the kernel runs classic
 * BPF (bpf_prog_create()) on skb->data of a real skb only, while magnet's
 * layers hold the packet at different offsets from skb->data, before any
 * skb exists at a send call, and behind a cooked header that no skb
 * holds. The kernel's checker (bpf_check_classic()) is not exported; the
 * checks below are its rules.
 *
 * What the interpreter adds is one thing: it knows which bits the probe
 * does not know. A send call knows a packet's addresses and ports, not its
 * TTL or IP id. Each value carries a mask of its unknown bits (a load
 * marks them; ALU operations carry them as far as they can reach); a
 * branch or return that depends on them leaves the hit undecided, and an
 * undecided hit goes on (the rule matches if it includes, not if it
 * excludes). Bits that are known decide alone: an IPv4 fragment offset of
 * zero is known at a send call, its flags are not, and "ip[6:2] & 0x1fff
 * = 0" (in every "udp port N") is decided.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "compat.h"

#define SLL2_LEN	20	/* LINKTYPE_LINUX_SLL2's header */
#define MEM_WORDS	16	/* BPF_MEMWORDS */

enum verdict { REJECT, MATCH, UNDECIDED };

struct pcap_rule {
	bool undecided_match;		/* an include rule */
	u64 __percpu *undecided;
	char *text;			/* or NULL */
	unsigned int len;
	struct sock_filter insns[];
};

/* Byte @i of the cooked header, and in *@unk the bits not known. */
static u8 sll2_byte(const struct magnet_pkt_view *v, u32 i, u8 *unk)
{
	*unk = 0;
	switch (i) {
	case 0:
		return v->protocol >> 8;
	case 1:
		return v->protocol;
	case 4 ... 7:
		if (!v->ifindex_known) {
			*unk = 0xff;
			return 0;
		}
		return v->ifindex >> (8 * (7 - i));
	case 8 ... 9:
		if (!v->ifindex_known) {
			*unk = 0xff;
			return 0;
		}
		return v->hatype >> (8 * (9 - i));
	case 10:
		return v->pkttype;
	case 11 ... 19:
		*unk = 0xff;	/* the link-layer address: not kept */
		return 0;
	default:
		return 0;	/* reserved */
	}
}

/* A load of @size bytes at @k of what the program sees. */
static int load(const struct magnet_pkt_view *v, u32 k, u32 size, u32 *val,
		u32 *unk)
{
	u32 i;
	u8 u;

	if (k >= SLL2_LEN)
		return magnet_pkt_view_load(v, k - SLL2_LEN, size, val, unk);
	*val = 0;
	*unk = 0;
	for (i = 0; i < size; i++) {
		if (k + i < SLL2_LEN) {
			*val = *val << 8 | sll2_byte(v, k + i, &u);
			*unk = *unk << 8 | u;
		} else {
			u32 b, bu;

			if (magnet_pkt_view_load(v, k + i - SLL2_LEN, 1, &b,
						 &bu))
				return -ERANGE;
			*val = *val << 8 | b;
			*unk = *unk << 8 | bu;
		}
	}
	return 0;
}

/* The bits at and above the lowest unknown one: what a carry can reach. */
static u32 carry_taint(u32 unk)
{
	return unk ? ~((unk & -unk) - 1) : 0;
}

/* The outcome of a comparison: 1 true, 0 false, -1 unknown. */
static int cmp(u16 op, u32 a, u32 au, u32 b, u32 bu)
{
	u32 amax = a | au, bmax = b | bu;

	switch (op) {
	case BPF_JEQ:
		if ((a ^ b) & ~(au | bu))
			return 0;
		return au | bu ? -1 : 1;
	case BPF_JGT:
		if (a > bmax)
			return 1;
		if (amax <= b)
			return 0;
		return -1;
	case BPF_JGE:
		if (a >= bmax)
			return 1;
		if (amax < b)
			return 0;
		return -1;
	default: /* BPF_JSET */
		if (a & b)
			return 1;
		if (amax & bmax)
			return -1;
		return 0;
	}
}

/* An ALU operation on A (with its unknown bits) and an operand. */
static int alu(u16 op, u32 *a, u32 *au, u32 b, u32 bu)
{
	switch (op) {
	case BPF_ADD:
		*a += b;
		*au = carry_taint(*au | bu);
		break;
	case BPF_SUB:
		*a -= b;
		*au = carry_taint(*au | bu);
		break;
	case BPF_MUL:
		*a *= b;
		*au = *au | bu ? ~0U : 0;
		break;
	case BPF_DIV:
	case BPF_MOD:
		if (bu)
			return -1;
		if (!b)
			return 0;	/* the program rejects the packet */
		*a = op == BPF_DIV ? *a / b : *a % b;
		*au = *au ? ~0U : 0;
		break;
	case BPF_AND:
		*au = (*au & (b | bu)) | (bu & (*a | *au));
		*a &= b;
		break;
	case BPF_OR:
		*au = (*au & ~b) | (bu & ~*a);
		*a |= b;
		break;
	case BPF_XOR:
		*a ^= b;
		*au |= bu;
		break;
	case BPF_LSH:
	case BPF_RSH:
		if (bu)
			return -1;
		if (b >= 32) {
			*a = 0;
			*au = 0;
		} else if (op == BPF_LSH) {
			*a <<= b;
			*au <<= b;
		} else {
			*a >>= b;
			*au >>= b;
		}
		break;
	case BPF_NEG:
		*a = -*a;
		*au = carry_taint(*au);
		break;
	}
	/* unknown bits read as zero, everywhere */
	*a &= ~*au;
	return 1;
}

static int run(const struct pcap_rule *r, const struct magnet_pkt_view *v)
{
	u32 a = 0, au = 0, x = 0, xu = 0, k, val, unk;
	/* read only once stored: not zeroed (see pcap_match()) */
	u32 mem[MEM_WORDS] __uninitialized, memu[MEM_WORDS] __uninitialized;
	u16 mset = 0;
	const struct sock_filter *pc = r->insns;
	int ret;

	for (;; pc++) {
		k = pc->k;
		switch (pc->code) {
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			if (load(v, k, bpf_size_to_bytes(BPF_SIZE(pc->code)), &a, &au))
				return REJECT;
			break;
		case BPF_LD | BPF_W | BPF_IND:
		case BPF_LD | BPF_H | BPF_IND:
		case BPF_LD | BPF_B | BPF_IND:
			if (xu)
				return UNDECIDED;
			if (k > U32_MAX - x ||
			    load(v, x + k, bpf_size_to_bytes(BPF_SIZE(pc->code)), &a, &au))
				return REJECT;
			break;
		case BPF_LDX | BPF_B | BPF_MSH:
			if (load(v, k, 1, &val, &unk))
				return REJECT;
			x = (val & 0xf) << 2;
			xu = (unk & 0xf) << 2;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = SLL2_LEN + v->len;
			au = v->len_known ? 0 : ~0U;
			a &= ~au;
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = SLL2_LEN + v->len;
			xu = v->len_known ? 0 : ~0U;
			x &= ~xu;
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			au = 0;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			xu = 0;
			break;
		case BPF_LD | BPF_MEM:
			a = mset & BIT(k) ? mem[k] : 0;
			au = mset & BIT(k) ? memu[k] : 0;
			break;
		case BPF_LDX | BPF_MEM:
			x = mset & BIT(k) ? mem[k] : 0;
			xu = mset & BIT(k) ? memu[k] : 0;
			break;
		case BPF_ST:
			mem[k] = a;
			memu[k] = au;
			mset |= BIT(k);
			break;
		case BPF_STX:
			mem[k] = x;
			memu[k] = xu;
			mset |= BIT(k);
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			xu = au;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			au = xu;
			break;
		case BPF_RET | BPF_K:
			return k ? MATCH : REJECT;
		case BPF_RET | BPF_A:
			if (a)
				return MATCH;
			return au ? UNDECIDED : REJECT;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		default:
			if (BPF_CLASS(pc->code) == BPF_ALU) {
				ret = BPF_SRC(pc->code) == BPF_X ?
				      alu(BPF_OP(pc->code), &a, &au, x, xu) :
				      alu(BPF_OP(pc->code), &a, &au, k, 0);
				if (ret <= 0)
					return ret ? UNDECIDED : REJECT;
				break;
			}
			/* BPF_JMP, conditional: checked at creation */
			ret = BPF_SRC(pc->code) == BPF_X ?
			      cmp(BPF_OP(pc->code), a, au, x, xu) :
			      cmp(BPF_OP(pc->code), a, au, k, 0);
			if (ret < 0)
				return UNDECIDED;
			pc += ret ? pc->jt : pc->jf;
		}
	}
}

/*
 * The fast path, for a packet in an skb's linear data (most layers): no
 * unknown bits anywhere it reads, so no masks to carry. A load it cannot
 * answer that way (paged data, a cooked header byte not known) gives up,
 * and run() starts again.
 */
#define BAIL	(-1)

static __always_inline int fast_load(const struct magnet_pkt_view *v,
				     const u8 *hdr, u32 hdr_known, u32 k,
				     u32 size, u32 *val)
{
	const u8 *p;

	if (k >= SLL2_LEN) {
		k -= SLL2_LEN;
		if (k < v->nlinear && size <= v->nlinear - k)
			p = v->linear + k;
		else if (k >= v->avail || size > v->avail - k)
			return REJECT;
		else
			return BAIL;
	} else {
		if (k + size > SLL2_LEN ||
		    ((~hdr_known >> k) & (BIT(size) - 1)))
			return BAIL;
		p = hdr + k;
	}
	*val = size == 4 ? get_unaligned_be32(p) :
	       size == 2 ? get_unaligned_be16(p) : *p;
	return MATCH;
}

static int run_fast(const struct pcap_rule *r, const struct magnet_pkt_view *v)
{
	const struct sock_filter *pc = r->insns;
	u32 a = 0, x = 0, k, mem[MEM_WORDS] __uninitialized;
	u32 hdr_known = BIT(0) | BIT(1) | BIT(2) | BIT(3) | BIT(10);
	u16 mset = 0;
	u8 hdr[SLL2_LEN] __uninitialized;
	int ret;

	put_unaligned_be16(v->protocol, hdr);
	hdr[2] = 0;
	hdr[3] = 0;
	hdr[10] = v->pkttype;
	if (v->ifindex_known) {
		put_unaligned_be32(v->ifindex, hdr + 4);
		put_unaligned_be16(v->hatype, hdr + 8);
		hdr_known |= GENMASK(9, 4);
	}
	for (;; pc++) {
		k = pc->k;
		switch (pc->code) {
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			ret = fast_load(v, hdr, hdr_known, k,
					bpf_size_to_bytes(BPF_SIZE(pc->code)), &a);
			if (ret != MATCH)
				return ret;
			break;
		case BPF_LD | BPF_W | BPF_IND:
		case BPF_LD | BPF_H | BPF_IND:
		case BPF_LD | BPF_B | BPF_IND:
			if (k > U32_MAX - x)
				return REJECT;
			ret = fast_load(v, hdr, hdr_known, x + k,
					bpf_size_to_bytes(BPF_SIZE(pc->code)), &a);
			if (ret != MATCH)
				return ret;
			break;
		case BPF_LDX | BPF_B | BPF_MSH:
			ret = fast_load(v, hdr, hdr_known, k, 1, &x);
			if (ret != MATCH)
				return ret;
			x = (x & 0xf) << 2;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			a = SLL2_LEN + v->len;
			break;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = SLL2_LEN + v->len;
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
			a = mset & BIT(k) ? mem[k] : 0;
			break;
		case BPF_LDX | BPF_MEM:
			x = mset & BIT(k) ? mem[k] : 0;
			break;
		case BPF_ST:
			mem[k] = a;
			mset |= BIT(k);
			break;
		case BPF_STX:
			mem[k] = x;
			mset |= BIT(k);
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_RET | BPF_K:
			return k ? MATCH : REJECT;
		case BPF_RET | BPF_A:
			return a ? MATCH : REJECT;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == k ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += a == x ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > k ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += a > x ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= k ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += a >= x ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += a & k ? pc->jt : pc->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_X:
			pc += a & x ? pc->jt : pc->jf;
			break;
		default: {
			/* BPF_ALU: its own operand, known */
			u32 au = 0;

			if (alu(BPF_OP(pc->code), &a, &au,
				BPF_SRC(pc->code) == BPF_X ? x : k, 0) <= 0)
				return REJECT;
		}
		}
	}
}

static bool pcap_match(void *state, const struct magnet_hit *hit)
{
	struct pcap_rule *r = state;
	/*
	 * Filled by magnet_packet_view() as far as it is read. Not zeroed
	 * first, as kernels built with INIT_STACK_ALL_ZERO (Debian's) would:
	 * that is a rep stos on every hit, which costs more than the rest.
	 */
	struct magnet_pkt_view v __uninitialized;
	int ret;

	if (!magnet_packet_view(hit, &v))
		return false;
	ret = v.linear && !v.nbuilt ? run_fast(r, &v) : BAIL;
	if (ret == BAIL)
		ret = run(r, &v);
	switch (ret) {
	case MATCH:
		return true;
	case REJECT:
		return false;
	default:
		this_cpu_inc(*r->undecided);
		return r->undecided_match;
	}
}

/* --- the program's check, as the kernel's bpf_check_classic() ------------- */

static bool code_known(u16 code)
{
	switch (code) {
	case BPF_ALU | BPF_ADD | BPF_K:
	case BPF_ALU | BPF_ADD | BPF_X:
	case BPF_ALU | BPF_SUB | BPF_K:
	case BPF_ALU | BPF_SUB | BPF_X:
	case BPF_ALU | BPF_MUL | BPF_K:
	case BPF_ALU | BPF_MUL | BPF_X:
	case BPF_ALU | BPF_DIV | BPF_K:
	case BPF_ALU | BPF_DIV | BPF_X:
	case BPF_ALU | BPF_MOD | BPF_K:
	case BPF_ALU | BPF_MOD | BPF_X:
	case BPF_ALU | BPF_AND | BPF_K:
	case BPF_ALU | BPF_AND | BPF_X:
	case BPF_ALU | BPF_OR | BPF_K:
	case BPF_ALU | BPF_OR | BPF_X:
	case BPF_ALU | BPF_XOR | BPF_K:
	case BPF_ALU | BPF_XOR | BPF_X:
	case BPF_ALU | BPF_LSH | BPF_K:
	case BPF_ALU | BPF_LSH | BPF_X:
	case BPF_ALU | BPF_RSH | BPF_K:
	case BPF_ALU | BPF_RSH | BPF_X:
	case BPF_ALU | BPF_NEG:
	case BPF_LD | BPF_W | BPF_ABS:
	case BPF_LD | BPF_H | BPF_ABS:
	case BPF_LD | BPF_B | BPF_ABS:
	case BPF_LD | BPF_W | BPF_IND:
	case BPF_LD | BPF_H | BPF_IND:
	case BPF_LD | BPF_B | BPF_IND:
	case BPF_LD | BPF_W | BPF_LEN:
	case BPF_LD | BPF_IMM:
	case BPF_LD | BPF_MEM:
	case BPF_LDX | BPF_W | BPF_LEN:
	case BPF_LDX | BPF_B | BPF_MSH:
	case BPF_LDX | BPF_IMM:
	case BPF_LDX | BPF_MEM:
	case BPF_ST:
	case BPF_STX:
	case BPF_MISC | BPF_TAX:
	case BPF_MISC | BPF_TXA:
	case BPF_RET | BPF_K:
	case BPF_RET | BPF_A:
	case BPF_JMP | BPF_JA:
	case BPF_JMP | BPF_JEQ | BPF_K:
	case BPF_JMP | BPF_JEQ | BPF_X:
	case BPF_JMP | BPF_JGE | BPF_K:
	case BPF_JMP | BPF_JGE | BPF_X:
	case BPF_JMP | BPF_JGT | BPF_K:
	case BPF_JMP | BPF_JGT | BPF_X:
	case BPF_JMP | BPF_JSET | BPF_K:
	case BPF_JMP | BPF_JSET | BPF_X:
		return true;
	default:
		return false;
	}
}

/* 0, or -EINVAL with the instruction at fault in @extack. */
static int check(const struct sock_filter *f, unsigned int len,
		 const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	/* 6.1: the message's room (magnet_extack_fmt()), under the lock */
	static char msg[MAGNET_EXTACK_LEN];
	const char *why = NULL;
	unsigned int i, left;

	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];

		left = len - i - 1;	/* instructions after this one */
		if (!code_known(p->code)) {
			why = "unknown opcode";
			break;
		}
		switch (p->code) {
		case BPF_ALU | BPF_DIV | BPF_K:
		case BPF_ALU | BPF_MOD | BPF_K:
			if (!p->k)
				why = "division by zero";
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_K:
			if (p->k >= 32)
				why = "shift by 32 or more";
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (p->k >= MEM_WORDS)
				why = "scratch memory past M[15]";
			break;
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
		case BPF_LDX | BPF_B | BPF_MSH:
			if ((s32)p->k < 0)
				why = "a negative offset (the kernel's ancillary data: not here)";
			break;
		case BPF_JMP | BPF_JA:
			if (p->k >= left)
				why = "jump past the end";
			break;
		default:
			if (BPF_CLASS(p->code) == BPF_JMP &&
			    (p->jt >= left || p->jf >= left))
				why = "jump past the end";
		}
		if (why)
			break;
	}
	if (!why && BPF_CLASS(f[len - 1].code) != BPF_RET) {
		i = len - 1;
		why = "the last instruction is not a return";
	}
	if (!why)
		return 0;
	magnet_extack_fmt(extack, attr, msg,
			  "classic BPF program refused: instruction %u: %s",
			  i, why);
	return -EINVAL;
}

static const struct nla_policy pcap_policy[MAGNET_PACKET_MAX + 1] = {
	[MAGNET_PACKET_PROGRAM] = { .type = NLA_BINARY,
		.len = MAGNET_PACKET_INSNS_MAX * sizeof(struct sock_filter) },
	[MAGNET_PACKET_TEXT] = { .type = NLA_NUL_STRING,
				 .len = MAGNET_PACKET_TEXT_MAX - 1 },
	[MAGNET_PACKET_UNDECIDED] = { .type = NLA_REJECT },
};

static void pcap_destroy(void *state)
{
	struct pcap_rule *r = state;

	free_percpu(r->undecided);
	kfree(r->text);
	kfree(r);
}

static void *pcap_create(struct magnet_filter_ctx *ctx, struct nlattr **tb,
			 struct netlink_ext_ack *extack)
{
	struct nlattr *prog = tb[MAGNET_PACKET_PROGRAM];
	struct pcap_rule *r;
	unsigned int len;
	int err;

	switch (magnet_event_object_type(ctx->event)) {
	case MAGNET_OBJECT_PACKET:
	case MAGNET_OBJECT_SKB:
	case MAGNET_OBJECT_SKB_RX:
	case MAGNET_OBJECT_SOCK:
		break;
	default:
		NL_SET_ERR_MSG(extack,
			       "the packet filter needs a probe whose hits concern a packet or socket (a packet probe, netif_receive, net_start_xmit, skb_free, tcp_send)");
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!prog) {
		NL_SET_ERR_MSG(extack,
			       "the packet filter needs its program (PACKET_PROGRAM)");
		return ERR_PTR(-EINVAL);
	}
	len = nla_len(prog) / sizeof(struct sock_filter);
	if (!len || nla_len(prog) % sizeof(struct sock_filter)) {
		NL_SET_ERR_MSG_ATTR(extack, prog,
				    "a program is a whole number of struct sock_filter, at least one");
		return ERR_PTR(-EINVAL);
	}
	err = check(nla_data(prog), len, prog, extack);
	if (err)
		return ERR_PTR(err);

	r = kzalloc(struct_size(r, insns, len), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->undecided = alloc_percpu(u64);
	if (tb[MAGNET_PACKET_TEXT])
		r->text = nla_strdup(tb[MAGNET_PACKET_TEXT], GFP_KERNEL);
	if (!r->undecided || (tb[MAGNET_PACKET_TEXT] && !r->text)) {
		pcap_destroy(r);
		return ERR_PTR(-ENOMEM);
	}
	r->len = len;
	memcpy(r->insns, nla_data(prog), nla_len(prog));
	r->undecided_match = ctx->action == MAGNET_FILTER_INCLUDE;
	return r;
}

static int pcap_fill_config(struct sk_buff *msg, void *state)
{
	const struct pcap_rule *r = state;

	if (nla_put(msg, MAGNET_PACKET_PROGRAM,
		    r->len * sizeof(struct sock_filter), r->insns) ||
	    (r->text && nla_put_string(msg, MAGNET_PACKET_TEXT, r->text)))
		return -EMSGSIZE;
	return 0;
}

static int pcap_fill_stats(struct sk_buff *msg, void *state)
{
	const struct pcap_rule *r = state;
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*per_cpu_ptr(r->undecided, cpu));
	return nla_put_u64_64bit(msg, MAGNET_PACKET_UNDECIDED, sum,
				 MAGNET_PACKET_PAD);
}

static struct magnet_filter_type pcap_type = {
	.name = "packet",
	.policy = pcap_policy,
	.maxattr = MAGNET_PACKET_MAX,
	.create = pcap_create,
	.match = pcap_match,
	.fill_config = pcap_fill_config,
	.fill_stats = pcap_fill_stats,
	.destroy = pcap_destroy,
};

static int __init pcap_init(void)
{
	return magnet_filter_type_register(&pcap_type);
}

static void __exit pcap_exit(void)
{
	magnet_filter_type_unregister(&pcap_type);
}

module_init(pcap_init);
module_exit(pcap_exit);

MODULE_DESCRIPTION("magnet filter type \"packet\": tcpdump's filter language, compiled by libpcap, in the kernel");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");

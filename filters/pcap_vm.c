// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_pcap's classic BPF interpreter: the program libpcap compiled, on
 * a packet as tcpdump -i any would see it (a cooked header, built here,
 * in front of the packet as the core's struct magnet_pkt_view shows it).
 * Kernel code; tests/host/pcap-vm.c also builds it in user space (with
 * tests/host/kshim/) and holds its answers against libpcap's own
 * interpreter on random packets.
 *
 * Why an interpreter here, and not the kernel's: the kernel runs classic
 * BPF (bpf_prog_create()) on skb->data of a real skb only, while magnet's
 * layers hold the packet at different offsets from skb->data, before any
 * skb exists at a send call, and behind a cooked header that no skb
 * holds. The kernel's checker (bpf_check_classic()) is not exported;
 * pcap_vm_check() applies its rules.
 *
 * What it adds is one thing: it knows which bits the probe does not know.
 * A send call knows a packet's addresses and ports, not its TTL or IP id.
 * Each value carries a mask of its unknown bits (a load marks them; ALU
 * operations carry them as far as they can reach); a branch or return
 * that depends on them leaves the hit undecided. Bits that are known
 * decide alone: an IPv4 fragment offset of zero is known at a send call,
 * its flags are not, and "ip[6:2] & 0x1fff = 0" (in every "udp port N")
 * is decided.
 */
#include <linux/string.h>

#include "pcap_vm.h"

#define REJECT		PCAP_REJECT
#define MATCH		PCAP_MATCH
#define UNDECIDED	PCAP_UNDECIDED

/* Big-endian bytes; the packet's headers are not aligned. */
static __always_inline u32 be16(const u8 *p)
{
	return p[0] << 8 | p[1];
}

static __always_inline u32 be32(const u8 *p)
{
	return (u32)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static __always_inline void put_be16(u32 v, u8 *p)
{
	p[0] = v >> 8;
	p[1] = v;
}

static __always_inline void put_be32(u32 v, u8 *p)
{
	put_be16(v >> 16, p);
	put_be16(v, p + 2);
}

/* The cooked header the program sees, built once per hit. */
struct sll2 {
	u8 b[SLL2_LEN];
	u32 unknown;	/* bit i: byte i is not known */
};

static void sll2_fill(struct sll2 *h, const struct magnet_pkt_view *v)
{
	put_be16(v->protocol, h->b);
	h->b[2] = 0;
	h->b[3] = 0;
	h->b[10] = v->pkttype;
	h->unknown = GENMASK(SLL2_LEN - 1, 11);
	if (v->ifindex_known) {
		put_be32(v->ifindex, h->b + 4);
		put_be16(v->hatype, h->b + 8);
	} else {
		h->unknown |= GENMASK(9, 4);
	}
}

/* A load of @size bytes at @k of what the program sees. */
static int load(const struct magnet_pkt_view *v, const struct sll2 *h, u32 k,
		u32 size, u32 *val, u32 *unk)
{
	u32 i;
	u8 u;

	if (k >= SLL2_LEN) {
		if (magnet_pkt_view_load(v, k - SLL2_LEN, size, val, unk))
			return -ERANGE;
		*val &= ~*unk;	/* unknown bits read as zero */
		return 0;
	}
	*val = 0;
	*unk = 0;
	for (i = 0; i < size; i++) {
		if (k + i < SLL2_LEN) {
			u = h->unknown & BIT(k + i) ? 0xff : 0;
			*val = *val << 8 | (u ? 0 : h->b[k + i]);
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
	*val &= ~*unk;
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

static int run(const struct sock_filter *insns,
	       const struct magnet_pkt_view *v, const struct sll2 *h)
{
	u32 a = 0, au = 0, x = 0, xu = 0, k, val, unk;
	/* read only once stored: not zeroed (see pcap_match()) */
	u32 mem[MEM_WORDS] __uninitialized, memu[MEM_WORDS] __uninitialized;
	u16 mset = 0;
	const struct sock_filter *pc = insns;
	int ret;

	for (;; pc++) {
		k = pc->k;
		switch (pc->code) {
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			if (load(v, h, k, bpf_size_to_bytes(BPF_SIZE(pc->code)), &a, &au))
				return REJECT;
			break;
		case BPF_LD | BPF_W | BPF_IND:
		case BPF_LD | BPF_H | BPF_IND:
		case BPF_LD | BPF_B | BPF_IND:
			if (xu)
				return UNDECIDED;
			if (k > U32_MAX - x ||
			    load(v, h, x + k, bpf_size_to_bytes(BPF_SIZE(pc->code)), &a, &au))
				return REJECT;
			break;
		case BPF_LDX | BPF_B | BPF_MSH:
			if (load(v, h, k, 1, &val, &unk))
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
 * The fast path. At creation the program is decoded into struct op: a
 * dense opcode, and a load fused with the conditional jump after it (the
 * most of what libpcap emits: "ldh [12]; jeq #0x800"), so that a hit
 * costs about one dispatch per test. The jump keeps its own slot, for
 * jumps that land on it. Values carry only the unknown bits of their
 * loads: anything that would have to carry them further (an ALU
 * operation, a store, a comparison they decide) gives up, and run()
 * starts again with the full masks. Most hits never give up: a packet in
 * an skb has no unknown bits, and a send call's ports, addresses and
 * fragment offset are known.
 */
#define BAIL	(-1)

static __always_inline u32 get_be(const u8 *p, u32 size)
{
	return size == 4 ? be32(p) :
	       size == 2 ? be16(p) : *p;
}

/* MATCH (loaded), REJECT (past the end) or BAIL. */
static __always_inline int fast_load(const struct magnet_pkt_view *v,
				     const struct sll2 *h, u32 k, u32 size,
				     u32 *val, u32 *unk)
{
	if (k >= SLL2_LEN) {
		k -= SLL2_LEN;
		if (k < v->nbuilt && size <= v->nbuilt - k) {
			*unk = get_be(v->unknown + k, size);
			/* unknown bits read as zero, whatever was built */
			*val = get_be(v->built + k, size) & ~*unk;
			return MATCH;
		}
		*unk = 0;
		if (k < v->nlinear && size <= v->nlinear - k) {
			*val = get_be(v->linear + k, size);
			return MATCH;
		}
		if (magnet_pkt_view_load(v, k, size, val, unk))
			return REJECT;
		*val &= ~*unk;
		return MATCH;
	}
	if (k + size > SLL2_LEN || ((h->unknown >> k) & (BIT(size) - 1)))
		return BAIL;
	*val = get_be(h->b + k, size);
	*unk = 0;
	return MATCH;
}

/* A fused or plain conditional jump: 1 taken, 0 not, BAIL undecided. */
static __always_inline int fast_cond(u8 op, u32 a, u32 au, u32 k)
{
	if (au)
		return cmp(op == OP_JEQ || op == OP_LD_JEQ ? BPF_JEQ :
			   op == OP_JGT || op == OP_LD_JGT ? BPF_JGT :
			   op == OP_JGE || op == OP_LD_JGE ? BPF_JGE : BPF_JSET,
			   a, au, k, 0);
	switch (op) {
	case OP_JEQ:
	case OP_LD_JEQ:
		return a == k;
	case OP_JGT:
	case OP_LD_JGT:
		return a > k;
	case OP_JGE:
	case OP_LD_JGE:
		return a >= k;
	default:
		return !!(a & k);
	}
}

static int run_fast(const struct pcap_op *ops,
		    const struct magnet_pkt_view *v, const struct sll2 *h)
{
	const struct pcap_op *pc = ops;
	u32 a = 0, au = 0, x = 0, unk;
	bool fused;
	int ret;

	for (;;) {
		switch (pc->op) {
		case OP_LD:
			ret = fast_load(v, h, pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			pc++;
			break;
		/* a load and its jump: A's unknown bits go the long way */
		case OP_LD_JEQ:
			ret = fast_load(v, h, pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			if (au)
				goto unknown;
			pc += 2 + (a == pc->cmp ? pc->jt : pc->jf);
			break;
		case OP_LD_JGT:
			ret = fast_load(v, h, pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			if (au)
				goto unknown;
			pc += 2 + (a > pc->cmp ? pc->jt : pc->jf);
			break;
		case OP_LD_JGE:
			ret = fast_load(v, h, pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			if (au)
				goto unknown;
			pc += 2 + (a >= pc->cmp ? pc->jt : pc->jf);
			break;
		case OP_LD_JSET:
			ret = fast_load(v, h, pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			if (au)
				goto unknown;
			pc += 2 + (a & pc->cmp ? pc->jt : pc->jf);
			break;
		case OP_LD_IND:
			if (pc->k > U32_MAX - x)
				return REJECT;
			ret = fast_load(v, h, x + pc->k, pc->size, &a, &au);
			if (ret != MATCH)
				return ret;
			pc++;
			break;
		case OP_LDX_MSH:
			ret = fast_load(v, h, pc->k, 1, &x, &unk);
			if (ret != MATCH)
				return ret;
			if (unk & 0xf)
				return BAIL;
			x = (x & 0xf) << 2;
			pc++;
			break;
		case OP_LD_LEN:
			if (!v->len_known)
				return BAIL;
			a = SLL2_LEN + v->len;
			au = 0;
			pc++;
			break;
		case OP_JEQ:
			if (au)
				goto unknown;
			pc += 1 + (a == pc->k ? pc->jt : pc->jf);
			break;
		case OP_JGT:
			if (au)
				goto unknown;
			pc += 1 + (a > pc->k ? pc->jt : pc->jf);
			break;
		case OP_JGE:
			if (au)
				goto unknown;
			pc += 1 + (a >= pc->k ? pc->jt : pc->jf);
			break;
		case OP_JSET:
			if (au)
				goto unknown;
			pc += 1 + (a & pc->k ? pc->jt : pc->jf);
			break;
		case OP_JA:
			pc += 1 + pc->k;
			break;
		case OP_RET_K:
			return pc->k ? MATCH : REJECT;
		case OP_RET_A:
			if (a)
				return MATCH;
			return au ? BAIL : REJECT;
		default:
			return BAIL;
		}
		continue;
unknown:
		/* a jump whose A has unknown bits */
		fused = pc->op >= OP_LD_JEQ && pc->op <= OP_LD_JSET;
		ret = fast_cond(pc->op, a, au, fused ? pc->cmp : pc->k);
		if (ret < 0)
			return BAIL;
		pc += (fused ? 2 : 1) + (ret ? pc->jt : pc->jf);
	}
}

/* The fast path's form of @f (see struct pcap_op). */
void pcap_vm_decode(const struct sock_filter *f, unsigned int len,
		    struct pcap_op *ops)
{
	unsigned int i;

	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		struct pcap_op *o = &ops[i];
		u16 next = i + 1 < len ? f[i + 1].code : 0;

		o->k = p->k;
		o->jt = p->jt;
		o->jf = p->jf;
		o->size = BPF_CLASS(p->code) == BPF_LD ?
			  bpf_size_to_bytes(BPF_SIZE(p->code)) : 0;
		o->cmp = 0;
		switch (p->code) {
		case BPF_LD | BPF_W | BPF_ABS:
		case BPF_LD | BPF_H | BPF_ABS:
		case BPF_LD | BPF_B | BPF_ABS:
			o->op = OP_LD;
			switch (next) {
			case BPF_JMP | BPF_JEQ | BPF_K:
				o->op = OP_LD_JEQ;
				break;
			case BPF_JMP | BPF_JGT | BPF_K:
				o->op = OP_LD_JGT;
				break;
			case BPF_JMP | BPF_JGE | BPF_K:
				o->op = OP_LD_JGE;
				break;
			case BPF_JMP | BPF_JSET | BPF_K:
				o->op = OP_LD_JSET;
				break;
			}
			if (o->op != OP_LD) {
				o->cmp = f[i + 1].k;
				o->jt = f[i + 1].jt;
				o->jf = f[i + 1].jf;
			}
			break;
		case BPF_LD | BPF_W | BPF_IND:
		case BPF_LD | BPF_H | BPF_IND:
		case BPF_LD | BPF_B | BPF_IND:
			o->op = OP_LD_IND;
			break;
		case BPF_LDX | BPF_B | BPF_MSH:
			o->op = OP_LDX_MSH;
			break;
		case BPF_LD | BPF_W | BPF_LEN:
			o->op = OP_LD_LEN;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			o->op = OP_JEQ;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			o->op = OP_JGT;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			o->op = OP_JGE;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			o->op = OP_JSET;
			break;
		case BPF_JMP | BPF_JA:
			o->op = OP_JA;
			break;
		case BPF_RET | BPF_K:
			o->op = OP_RET_K;
			break;
		case BPF_RET | BPF_A:
			o->op = OP_RET_A;
			break;
		default:
			o->op = OP_SLOW;
		}
	}
}

/**
 * pcap_vm_run - run a checked program on a packet's view
 * @insns:	the program (pcap_vm_check() took it)
 * @ops:	its pcap_vm_decode() form
 * @v:		the packet
 *
 * Any context. Return: PCAP_MATCH, PCAP_REJECT, or PCAP_UNDECIDED when
 * the answer depends on bits the probe does not know.
 */
enum pcap_verdict pcap_vm_run(const struct sock_filter *insns,
			      const struct pcap_op *ops,
			      const struct magnet_pkt_view *v)
{
	struct sll2 h __uninitialized;
	int ret;

	sll2_fill(&h, v);
	ret = run_fast(ops, v, &h);
	return ret == BAIL ? run(insns, v, &h) : ret;
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

/**
 * pcap_vm_check - is a program one pcap_vm_run() can run?
 * @f:		the program
 * @len:	its instructions, at least one
 * @at:		the instruction at fault, if it is not
 *
 * Return: NULL, or why not.
 */
const char *pcap_vm_check(const struct sock_filter *f, unsigned int len,
			  unsigned int *at)
{
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
				why = "a negative offset (ancillary data)";
			break;
		case BPF_JMP | BPF_JA:
			if ((s32)p->k < 0)
				why = "a jump backwards (protochain's loop)";
			else if (p->k >= left)
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
	*at = i;
	return why;
}

/* --- which programs the kernel's BPF may run on built headers ------------- */

/*
 * At a send call there is no packet yet: the probe builds the headers
 * from the socket and the call (the core's view_build()), and some of
 * their bits it does not know. pcap_vm runs such hits, since it tracks
 * those bits. pcap_vm_native_ok() finds, once per program, the programs
 * whose answer can never depend on them: it runs the program over a
 * template of the headers (struct magnet_pkt_template: the bits the same
 * in every hit, the bits known in every hit, the rest), following both
 * ways of every branch it cannot decide from the bits that are always the
 * same. If no path reads a byte past the headers, tests an unknown bit,
 * or loads at an offset that is not the same in every hit, then the
 * kernel's BPF, run on the headers with their unknown bits zero, answers
 * what pcap_vm would, and the caller may run it there.
 */

/*
 * A value as the template says it: @val in the @konst bits, the same in
 * every hit; known in the @known bits (a superset); the rest unknown.
 */
struct aval {
	u32 val, konst, known;
};

struct pcap_astate {
	bool reached;
	struct aval a, x, m[MEM_WORDS];
};

size_t pcap_vm_astate_size(void)
{
	return sizeof(struct pcap_astate);
}

static struct aval akonst(u32 v)
{
	return (struct aval){ .val = v, .konst = ~0U, .known = ~0U };
}

static bool afull(const struct aval *v)
{
	return v->known == ~0U;
}

static bool akonst_all(const struct aval *v)
{
	return v->konst == ~0U;
}

static void amerge(struct aval *d, const struct aval *s)
{
	d->known &= s->known;
	d->konst &= s->konst & ~(d->val ^ s->val);
	d->val &= d->konst;
}

static void astate_merge(struct pcap_astate *d, const struct pcap_astate *s)
{
	unsigned int i;

	if (!d->reached) {
		*d = *s;
		return;
	}
	amerge(&d->a, &s->a);
	amerge(&d->x, &s->x);
	for (i = 0; i < MEM_WORDS; i++)
		amerge(&d->m[i], &s->m[i]);
}

/* @size bytes at @k of the cooked header and headers; false: past them. */
static bool aload(const struct magnet_pkt_template *t, u64 k, u32 size,
		  struct aval *v)
{
	u32 i;

	if (k + size > (u64)SLL2_LEN + t->nbuilt)
		return false;
	*v = (struct aval){};
	for (i = 0; i < size; i++) {
		u32 at = k + i, val, konst, known;

		if (at < 2) {		/* the protocol, a constant */
			val = at ? t->protocol & 0xff : t->protocol >> 8;
			konst = 0xff;
			known = 0xff;
		} else if (at < SLL2_LEN) {	/* not the kernel BPF's */
			val = 0;
			konst = 0;
			known = 0;
		} else {
			val = t->val[at - SLL2_LEN];
			konst = t->konst[at - SLL2_LEN];
			known = t->known[at - SLL2_LEN];
		}
		v->val = v->val << 8 | (val & konst);
		v->konst = v->konst << 8 | konst;
		v->known = v->known << 8 | known;
	}
	if (size < 4) {		/* the bits above a byte or half word: zero */
		v->konst |= ~0U << (8 * size);
		v->known |= ~0U << (8 * size);
	}
	return true;
}

/* A = A op B; false where the answer might not be the kernel BPF's. */
static bool aalu(u16 op, struct aval *a, const struct aval *b)
{
	u32 s;

	if (akonst_all(a) && (op == BPF_NEG || akonst_all(b))) {
		u32 r = a->val;

		switch (op) {
		case BPF_ADD:
			r += b->val;
			break;
		case BPF_SUB:
			r -= b->val;
			break;
		case BPF_MUL:
			r *= b->val;
			break;
		case BPF_DIV:
		case BPF_MOD:
			if (!b->val)
				return false;
			r = op == BPF_DIV ? r / b->val : r % b->val;
			break;
		case BPF_AND:
			r &= b->val;
			break;
		case BPF_OR:
			r |= b->val;
			break;
		case BPF_XOR:
			r ^= b->val;
			break;
		case BPF_LSH:
		case BPF_RSH:
			if (b->val >= 32)
				return false;
			r = op == BPF_LSH ? r << b->val : r >> b->val;
			break;
		case BPF_NEG:
			r = -r;
			break;
		}
		*a = akonst(r);
		return true;
	}
	if (akonst_all(b)) {
		switch (op) {
		case BPF_AND:	/* the bits it clears are zero, always */
			a->val &= b->val;
			a->konst |= ~b->val;
			a->known |= ~b->val;
			return true;
		case BPF_OR:
			a->val |= b->val;
			a->konst |= b->val;
			a->known |= b->val;
			return true;
		case BPF_XOR:
			a->val = (a->val ^ b->val) & a->konst;
			return true;
		case BPF_LSH:
		case BPF_RSH:
			s = b->val;
			if (s >= 32)
				return false;
			if (op == BPF_LSH) {
				a->val <<= s;
				a->konst = a->konst << s | (BIT(s) - 1);
				a->known = a->known << s | (BIT(s) - 1);
			} else {
				a->val >>= s;
				a->konst = a->konst >> s | ~(~0U >> s);
				a->known = a->known >> s | ~(~0U >> s);
			}
			return true;
		case BPF_DIV:
		case BPF_MOD:
			if (!b->val)
				return false;
			break;
		}
	} else if (op == BPF_DIV || op == BPF_MOD || op == BPF_LSH ||
		   op == BPF_RSH) {
		return false;	/* by zero, or by 32 or more: not the same */
	}
	/* known from known operands, the same only where computed above */
	a->known = afull(a) && (op == BPF_NEG || afull(b)) ? ~0U : 0;
	a->konst = 0;
	a->val = 0;
	return true;
}

/*
 * The ways a conditional jump at @i can go, into @next (up to two);
 * false where it tests a bit that is not known.
 */
static bool ajump(const struct sock_filter *p, unsigned int i,
		  const struct aval *a, const struct aval *b,
		  unsigned int *next, unsigned int *n)
{
	unsigned int t = i + 1 + p->jt, f = i + 1 + p->jf;
	int out = -1;

	if (BPF_OP(p->code) == BPF_JSET && akonst_all(b)) {
		if (b->val & ~a->known)
			return false;
		if (a->val & a->konst & b->val)
			out = 1;
		else if (!(b->val & ~a->konst))
			out = 0;
	} else {
		if (!afull(a) || !afull(b))
			return false;
		if (akonst_all(a) && akonst_all(b)) {
			switch (BPF_OP(p->code)) {
			case BPF_JEQ:
				out = a->val == b->val;
				break;
			case BPF_JGT:
				out = a->val > b->val;
				break;
			case BPF_JGE:
				out = a->val >= b->val;
				break;
			default:
				out = !!(a->val & b->val);
				break;
			}
		}
	}
	*n = 0;
	if (out != 0)
		next[(*n)++] = t;
	if (out != 1 && f != t)
		next[(*n)++] = f;
	return true;
}

/**
 * pcap_vm_native_ok - may the kernel's BPF run a program on built headers?
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 * @t:		the headers a send call builds, as one shape of them is
 *		in every hit (the core's magnet_packet_template())
 * @st:		room for @len states, any contents
 *
 * See above. Any context (the caller's memory only).
 * Return: true if, on every hit of that shape, the program reads only
 * known bits of the headers, at offsets that do not change.
 */
bool pcap_vm_native_ok(const struct sock_filter *f, unsigned int len,
		       const struct magnet_pkt_template *t,
		       struct pcap_astate *st)
{
	unsigned int i, j, n, next[2];

	for (i = 0; i < len; i++)
		st[i].reached = false;
	/* A, X and the scratch memory start at zero */
	memset(&st[0], 0, sizeof(st[0]));
	st[0].a = akonst(0);
	st[0].x = akonst(0);
	for (j = 0; j < MEM_WORDS; j++)
		st[0].m[j] = akonst(0);
	st[0].reached = true;

	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		u32 size = bpf_size_to_bytes(BPF_SIZE(p->code));
		struct pcap_astate s;
		struct aval b;

		if (!st[i].reached)
			continue;
		s = st[i];
		n = 1;
		next[0] = i + 1;
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			switch (BPF_MODE(p->code)) {
			case BPF_ABS:
				if (!aload(t, p->k, size, &s.a))
					return false;
				break;
			case BPF_IND:
				if (!akonst_all(&s.x) ||
				    !aload(t, (u64)s.x.val + p->k, size, &s.a))
					return false;
				break;
			case BPF_IMM:
				s.a = akonst(p->k);
				break;
			case BPF_MEM:
				s.a = s.m[p->k];
				break;
			default:	/* LEN: tcpdump's, not the kernel BPF's */
				return false;
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(p->code)) {
			case BPF_MSH:
				if (!aload(t, p->k, 1, &b) || (b.konst & 0xf) != 0xf)
					return false;
				s.x = akonst(4 * (b.val & 0xf));
				break;
			case BPF_IMM:
				s.x = akonst(p->k);
				break;
			case BPF_MEM:
				s.x = s.m[p->k];
				break;
			default:
				return false;
			}
			break;
		case BPF_ST:
			s.m[p->k] = s.a;
			break;
		case BPF_STX:
			s.m[p->k] = s.x;
			break;
		case BPF_ALU:
			b = BPF_SRC(p->code) == BPF_X ? s.x : akonst(p->k);
			if (!aalu(BPF_OP(p->code), &s.a, &b))
				return false;
			break;
		case BPF_MISC:
			if (BPF_MISCOP(p->code) == BPF_TAX)
				s.x = s.a;
			else
				s.a = s.x;
			break;
		case BPF_RET:
			if (BPF_RVAL(p->code) == BPF_A && !afull(&s.a))
				return false;
			n = 0;
			break;
		default:	/* BPF_JMP */
			if (BPF_OP(p->code) == BPF_JA) {
				next[0] = i + 1 + p->k;
				break;
			}
			b = BPF_SRC(p->code) == BPF_X ? s.x : akonst(p->k);
			if (!ajump(p, i, &s.a, &b, next, &n))
				return false;
		}
		for (j = 0; j < n; j++)
			astate_merge(&st[next[j]], &s);
	}
	return true;
}

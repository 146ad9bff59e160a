// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_pcap's classic BPF interpreter: the program libpcap compiled, on
 * a packet as tcpdump -i any would see it (a cooked header, built here,
 * in front of the packet as the core's struct magnet_pkt_view shows it).
 * Kernel code; tests/host/pcap-vm-unit.c also builds it in user space
 * (with tests/host/kshim/) and holds its answers against libpcap's own
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
	int step;		/* pcap_vm_specialize()'s */
	/* sdead()'s, of the step of this number */
	bool dead;
	u8 live;
	u16 fwd, num;
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
	/* both ways to one place: one successor, whichever way it goes */
	if (out != 1 && !(*n && f == t))
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

/*
 * --- a send call's program, specialized to the shape of its headers -------
 *
 * Where pcap_vm_native_ok() accepts a program on a template, its answer on
 * every hit of that shape is the kernel BPF's on the built headers with
 * their unknown bits zero. pcap_vm_specialize() goes one step further and
 * needs no headers built: from the states of that same analysis it writes
 * the program again, for that shape only,
 *   - a load of bits the same in every hit (the version, the protocol,
 *     IPv4's fragment offset) or not known (read as zero) becomes the
 *     constant it always is there;
 *   - a load of bytes of one field that changes from hit to hit (an
 *     address word, a port, a length: MAGNET_SENT_*) becomes a read of
 *     that field from the probe's record (magnet_sent_field()),
 *     shifted and masked to those bytes;
 *   - a jump the template decides, and an instruction no hit reaches,
 *     goes; jumps to it go where it would have gone.
 * What is left of "udp dst port 5001" on a UDP send call's headers is the
 * destination port's read and one comparison. A load of bytes of more
 * than one field is not written again (the caller then builds the
 * headers for the kernel's BPF).
 */

static void sdead(struct pcap_sent *sp, struct pcap_astate *st);

/*
 * What pcap_vm_run_sent() relies on to end and to stay inside @sp: each
 * step's next (both of a conditional jump's) is a later step, and a
 * return is reached. A program the analysis got wrong is not run.
 */
static bool sordered(const struct pcap_sent *sp)
{
	unsigned int i;

	if (!sp->len || sp->start >= sp->len)
		return false;
	for (i = 0; i < sp->len; i++) {
		const struct pcap_sop *op = &sp->op[i];

		if (BPF_CLASS(op->code) == BPF_RET)
			continue;
		if (op->jt <= i || op->jt >= sp->len)
			return false;
		if (BPF_CLASS(op->code) == BPF_JMP &&
		    (op->jf <= i || op->jf >= sp->len))
			return false;
	}
	return true;
}

/* Why a byte's bits vary from hit to hit: its field, or none. */
static bool sbyte(const struct magnet_pkt_template *t, u32 at, u8 *konst,
		  u8 *field)
{
	u32 j = at - SLL2_LEN;

	*field = MAGNET_SENT_NONE;
	if (at < 2) {		/* the protocol */
		*konst = at ? t->protocol & 0xff : t->protocol >> 8;
		return true;
	}
	if (at < SLL2_LEN)	/* not in the kernel BPF's program */
		return false;
	*konst = t->val[j] & t->konst[j];
	if (t->known[j] & ~t->konst[j]) {
		if (t->known[j] != 0xff || t->konst[j] || !t->field[j])
			return false;	/* part of a byte */
		*field = t->field[j];
	}
	return true;
}

/*
 * A load of @size bytes at @k, as one step: a constant, or bytes of one
 * field (all of it, or some).
 */
static bool sload(const struct magnet_pkt_template *t, u64 k, u32 size,
		  struct pcap_sop *op)
{
	u8 konst, field, f = MAGNET_SENT_NONE;
	u32 val = 0, i, last;

	if (k + size > (u64)SLL2_LEN + t->nbuilt)
		return false;
	for (i = 0; i < size; i++) {
		if (!sbyte(t, k + i, &konst, &field))
			return false;
		if (i && field != f)
			return false;	/* two fields, or part of one */
		f = field;
		val = val << 8 | konst;
	}
	if (f == MAGNET_SENT_NONE) {
		*op = (struct pcap_sop){ .code = BPF_LD | BPF_IMM, .k = val };
		return true;
	}
	/* the field's bytes after the load's: the shift */
	for (last = k + size; last < SLL2_LEN + (u32)t->nbuilt; last++)
		if (!sbyte(t, last, &konst, &field) || field != f)
			break;
	*op = (struct pcap_sop){ .code = PCAP_SOP_FIELD, .k = f,
				 .shift = 8 * (last - k - size),
				 .mask = size == 4 ? ~0U : BIT(8 * size) - 1 };
	return true;
}

/*
 * Where instruction @i (reached, its state in @st) always goes without
 * doing anything (a jump, or one the template decides): there; or -1.
 */
static int sjump_only(const struct sock_filter *f, unsigned int i,
		      const struct pcap_astate *st)
{
	unsigned int next[2], n;
	struct aval b;

	if (BPF_CLASS(f[i].code) != BPF_JMP)
		return -1;
	if (BPF_OP(f[i].code) == BPF_JA)
		return i + 1 + f[i].k;
	b = BPF_SRC(f[i].code) == BPF_X ? st->x : akonst(f[i].k);
	if (!ajump(&f[i], i, &st->a, &b, next, &n) || n != 1)
		return -1;
	return next[0];
}

/**
 * pcap_vm_specialize - a program for one shape of a send call's headers
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 * @t:		the shape's template (magnet_packet_template())
 * @st:		room for @len states, any contents
 * @sp:		the program written again (its op[] has room for @len)
 *
 * See above. Any context (the caller's memory only).
 * Return: true if @sp may run every hit of that shape
 * (pcap_vm_run_sent()) and answers there what pcap_vm would.
 */
bool pcap_vm_specialize(const struct sock_filter *f, unsigned int len,
			const struct magnet_pkt_template *t,
			struct pcap_astate *st, struct pcap_sent *sp)
{
	unsigned int i, n = 0;
	int j;

	if (!pcap_vm_native_ok(f, len, t, st))
		return false;
	/* each step's number, where the instruction is one */
	for (i = 0; i < len; i++) {
		st[i].step = -1;
		if (st[i].reached && sjump_only(f, i, &st[i]) < 0)
			st[i].step = n++;
	}
	/* a jump to an instruction that is not a step: where it goes */
	for (i = len; i-- > 0;) {
		if (!st[i].reached || st[i].step >= 0)
			continue;
		j = sjump_only(f, i, &st[i]);
		st[i].step = st[j].step;
	}
	sp->start = st[0].step;
	sp->mem = false;
	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		struct pcap_sop *op;
		struct aval a, b;

		if (!st[i].reached || sjump_only(f, i, &st[i]) >= 0)
			continue;
		op = &sp->op[st[i].step];
		*op = (struct pcap_sop){ .code = p->code, .k = p->k };
		if (i + 1 < len)
			op->jt = st[i + 1].step;
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			switch (BPF_MODE(p->code)) {
			case BPF_ABS:
			case BPF_IND:
				if (!sload(t, (u64)p->k + (BPF_MODE(p->code) == BPF_IND ?
							   st[i].x.val : 0),
					   bpf_size_to_bytes(BPF_SIZE(p->code)), op))
					return false;
				op->jt = st[i + 1].step;
				break;
			case BPF_MEM:
				if (akonst_all(&st[i].m[p->k]))
					*op = (struct pcap_sop){ .code = BPF_LD | BPF_IMM,
						.k = st[i].m[p->k].val, .jt = st[i + 1].step };
				else
					sp->mem = true;
				break;
			}
			break;
		case BPF_LDX:
			if (BPF_MODE(p->code) == BPF_MSH) {
				/* (a constant: pcap_vm_native_ok() says so) */
				aload(t, p->k, 1, &b);
				op->code = BPF_LDX | BPF_IMM;
				op->k = 4 * (b.val & 0xf);
			} else if (BPF_MODE(p->code) == BPF_MEM &&
				   akonst_all(&st[i].m[p->k])) {
				op->code = BPF_LDX | BPF_IMM;
				op->k = st[i].m[p->k].val;
			} else if (BPF_MODE(p->code) == BPF_MEM) {
				sp->mem = true;
			}
			break;
		case BPF_ST:
		case BPF_STX:
			sp->mem = true;
			break;
		case BPF_ALU:
			a = st[i].a;
			b = BPF_SRC(p->code) == BPF_X ? st[i].x : akonst(p->k);
			if (aalu(BPF_OP(p->code), &a, &b) && akonst_all(&a)) {
				op->code = BPF_LD | BPF_IMM;
				op->k = a.val;
			}
			break;
		case BPF_JMP:
			op->jt = st[i + 1 + p->jt].step;
			op->jf = st[i + 1 + p->jf].step;
			break;
		}
	}
	sp->len = n;
	if (!sordered(sp))
		return false;
	sdead(sp, st);
	return sordered(sp);
}

/* Which of A and X (bits 0 and 1) step @op reads, and which it writes. */
static void suse(const struct pcap_sop *op, unsigned int *reads,
		 unsigned int *writes)
{
	unsigned int x = BPF_SRC(op->code) == BPF_X ? 2 : 0;

	*reads = 0;
	*writes = 0;
	switch (BPF_CLASS(op->code)) {
	case BPF_LD:
		*writes = 1;
		break;
	case BPF_LDX:
		*writes = 2;
		break;
	case BPF_ST:
		*reads = 1;
		break;
	case BPF_STX:
		*reads = 2;
		break;
	case BPF_ALU:
		*reads = 1 | (BPF_OP(op->code) == BPF_NEG ? 0 : x);
		*writes = 1;
		break;
	case BPF_JMP:
		*reads = 1 | x;
		break;
	case BPF_RET:
		*reads = BPF_RVAL(op->code) == BPF_A ? 1 : 0;
		break;
	default:	/* BPF_MISC */
		*reads = BPF_MISCOP(op->code) == BPF_TAX ? 1 : 2;
		*writes = BPF_MISCOP(op->code) == BPF_TAX ? 2 : 1;
		break;
	}
}

/*
 * Drop the steps whose value no later step reads (the constants that
 * stood for loads of a decided test, say), and close up the rest. In
 * @st[i], of step i: is it dead; A and X live before it (bits 0 and 1);
 * where a jump to it goes; its new number.
 */
static void sdead(struct pcap_sent *sp, struct pcap_astate *st)
{
	unsigned int i, n = 0, reads, writes;

	for (i = sp->len; i-- > 0;) {
		struct pcap_sop *op = &sp->op[i];
		unsigned int out = 0;

		suse(op, &reads, &writes);
		if (BPF_CLASS(op->code) == BPF_JMP)
			out = st[op->jt].live | st[op->jf].live;
		else if (BPF_CLASS(op->code) != BPF_RET)
			out = st[op->jt].live;
		/* (the scratch memory's stores are kept) */
		st[i].dead = writes && !(out & writes);
		st[i].live = st[i].dead ? out : (out & ~writes) | reads;
		st[i].fwd = st[i].dead ? st[op->jt].fwd : i;
	}
	for (i = 0; i < sp->len; i++)
		if (!st[i].dead)
			st[i].num = n++;
	sp->start = st[st[sp->start].fwd].num;
	for (i = 0, n = 0; i < sp->len; i++) {
		struct pcap_sop op = sp->op[i];

		if (st[i].dead)
			continue;
		if (BPF_CLASS(op.code) != BPF_RET)
			op.jt = st[st[op.jt].fwd].num;
		if (BPF_CLASS(op.code) == BPF_JMP)
			op.jf = st[st[op.jf].fwd].num;
		sp->op[n++] = op;
	}
	sp->len = n;
}

/* --- a copy for IPv4 headers without options ------------------------------ */

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

/* --- which programs the kernel's BPF answers as libpcap ------------------- */

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

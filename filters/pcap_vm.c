// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_packet's classic BPF interpreter: the program libpcap compiled,
 * run (pcap_vm_run(): decoded by pcap_vm_decode() into fused steps, and
 * the steps it cannot run fast by run()) on a packet as tcpdump -i any
 * would see it (a cooked header, built here, in front of the packet as
 * the core's struct magnet_pkt_view shows it).
 * Kernel code; tests/host/pcap-vm-unit.c also builds it in user space
 * (with tests/host/kshim/) and holds its answers against libpcap's own
 * interpreter on random packets.
 *
 * Why an interpreter here, and not the kernel's: the kernel runs classic
 * BPF (bpf_prog_create()) on skb->data of a real skb only, while magnet's
 * layers hold the packet at different offsets from skb->data, before any
 * skb exists at a send call, and behind a cooked header that no skb
 * holds. The kernel's checker (bpf_check_classic()) is not exported;
 * pcap_vm_check() applies its rules (pcap_check.c).
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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet_packet's classic BPF programs: their check (pcap_check.c), their
 * decoded form and their run on a packet's view (pcap_vm.c), the copies
 * written for the kernel's BPF (pcap_ihl5.c), the bounds that say where
 * the kernel's BPF answers as libpcap (pcap_bounds.c), and programs run
 * over a send call's header template (pcap_template.c).
 */
#ifndef _MAGNET_PCAP_VM_H
#define _MAGNET_PCAP_VM_H

#include <linux/filter.h>
#include <linux/string.h>
#include <linux/magnet.h>

#define SLL2_LEN	20	/* LINKTYPE_LINUX_SLL2's header */
#define MEM_WORDS	16	/* BPF_MEMWORDS */

enum pcap_verdict { PCAP_REJECT, PCAP_MATCH, PCAP_UNDECIDED };

enum pcap_fast_op {
	OP_LD,		/* A = packet[k], size bytes */
	OP_LD_JEQ,	/* ... then the jump of the next slot */
	OP_LD_JGT,
	OP_LD_JGE,
	OP_LD_JSET,
	OP_LD_IND,	/* A = packet[X + k] */
	OP_LDX_MSH,
	OP_LD_LEN,	/* A = the length tcpdump's len is */
	OP_JEQ,
	OP_JGT,
	OP_JGE,
	OP_JSET,
	OP_JA,
	OP_RET_K,
	OP_RET_A,
	OP_SLOW,	/* anything else: run() */
};

struct pcap_op {
	u8 op;
	u8 size;
	u8 jt, jf;
	u32 k;
	u32 cmp;	/* a fused jump's constant */
};

const char *pcap_vm_check(const struct sock_filter *f, unsigned int len,
			  unsigned int *at);
void pcap_vm_decode(const struct sock_filter *f, unsigned int len,
		    struct pcap_op *ops);
enum pcap_verdict pcap_vm_run(const struct sock_filter *insns,
			      const struct pcap_op *ops,
			      const struct magnet_pkt_view *v);

/* @f written again for IPv4 headers without options: pcap_ihl5.c */
bool pcap_vm_ihl5(struct sock_filter *f, unsigned int len, s64 *x);

/*
 * Does the kernel's BPF answer @f as libpcap does (pcap_bounds.c)? Offsets
 * from the cooked header's end below PCAP_NATIVE_REACH: see there.
 */
#define PCAP_NATIVE_REACH	0xfffff
struct pcap_range;	/* pcap_vm_native_safe()'s room, one per instruction */
size_t pcap_vm_range_size(void);
bool pcap_vm_native_safe(const struct sock_filter *f, unsigned int len,
			 struct pcap_range *st);

struct pcap_astate;	/* pcap_vm_native_ok()'s room, one per instruction */
size_t pcap_vm_astate_size(void);
bool pcap_vm_native_ok(const struct sock_filter *f, unsigned int len,
		       const struct magnet_pkt_template *t,
		       struct pcap_astate *st);

/*
 * A program written again for one shape of a send call's headers
 * (pcap_vm_specialize()): steps in cBPF's codes, but for
 * PCAP_SOP_FIELD (A = the field @k, MAGNET_SENT_*, of the record,
 * shifted right by @shift and masked with @mask: a load of some of its
 * bytes); each step's next is @jt (a conditional jump's: @jt or @jf),
 * always a later one.
 */
#define PCAP_SOP_FIELD	(BPF_LD | BPF_W | BPF_ABS)

struct pcap_sop {
	u16 code;
	u16 jt, jf;	/* (MAGNET_PACKET_INSNS_MAX steps: not a u8) */
	u8 shift;
	u32 k;
	u32 mask;
};

struct pcap_sent {
	u16 start;	/* the first step */
	u16 len;	/* (up to MAGNET_PACKET_INSNS_MAX: not a u8) */
	bool mem;	/* it uses the scratch memory */
	struct pcap_sop op[];
};

bool pcap_vm_specialize(const struct sock_filter *f, unsigned int len,
			const struct magnet_pkt_template *t,
			struct pcap_astate *st, struct pcap_sent *sp);
/*
 * Run @sp (pcap_vm_specialize()'s) on @s: does it match? Any context.
 * Inline: it is the whole of a send call's filtering, a few steps.
 */
static __always_inline bool pcap_vm_run_sent(const struct pcap_sent *sp,
					     const struct magnet_sent *s)
{
	/*
	 * Zeroed where the program uses it; not on every hit, as kernels
	 * built with INIT_STACK_ALL_ZERO (Debian's) would (a rep stos).
	 */
	u32 m[MEM_WORDS] __uninitialized;
	u32 a = 0, x = 0, b;
	unsigned int i = sp->start;

	if (sp->mem)
		memset(m, 0, sizeof(m));
	for (;;) {
		const struct pcap_sop *op = &sp->op[i];

		i = op->jt;	/* (steps are in order: it ends) */
		b = BPF_SRC(op->code) == BPF_X ? x : op->k;
		switch (op->code) {
		case PCAP_SOP_FIELD:
			a = magnet_sent_field(s, op->k) >> op->shift & op->mask;
			break;
		case BPF_LD | BPF_IMM:
			a = op->k;
			break;
		case BPF_LDX | BPF_IMM:
			x = op->k;
			break;
		case BPF_LD | BPF_MEM:
			a = m[op->k];
			break;
		case BPF_LDX | BPF_MEM:
			x = m[op->k];
			break;
		case BPF_ST:
			m[op->k] = a;
			break;
		case BPF_STX:
			m[op->k] = x;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_RET | BPF_K:
			return op->k;
		case BPF_RET | BPF_A:
			return a;
		/* (no division by zero, no shift by 32 or more: the analysis) */
		case BPF_ALU | BPF_ADD | BPF_K:
		case BPF_ALU | BPF_ADD | BPF_X:
			a += b;
			break;
		case BPF_ALU | BPF_SUB | BPF_K:
		case BPF_ALU | BPF_SUB | BPF_X:
			a -= b;
			break;
		case BPF_ALU | BPF_MUL | BPF_K:
		case BPF_ALU | BPF_MUL | BPF_X:
			a *= b;
			break;
		case BPF_ALU | BPF_DIV | BPF_K:
		case BPF_ALU | BPF_DIV | BPF_X:
			a /= b;
			break;
		case BPF_ALU | BPF_MOD | BPF_K:
		case BPF_ALU | BPF_MOD | BPF_X:
			a %= b;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
		case BPF_ALU | BPF_AND | BPF_X:
			a &= b;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
		case BPF_ALU | BPF_OR | BPF_X:
			a |= b;
			break;
		case BPF_ALU | BPF_XOR | BPF_K:
		case BPF_ALU | BPF_XOR | BPF_X:
			a ^= b;
			break;
		case BPF_ALU | BPF_LSH | BPF_K:
		case BPF_ALU | BPF_LSH | BPF_X:
			a <<= b;
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
		case BPF_ALU | BPF_RSH | BPF_X:
			a >>= b;
			break;
		case BPF_ALU | BPF_NEG:
			a = -a;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_X:
			i = a == b ? op->jt : op->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_X:
			i = a > b ? op->jt : op->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_X:
			i = a >= b ? op->jt : op->jf;
			break;
		default:	/* BPF_JSET */
			i = a & b ? op->jt : op->jf;
			break;
		}
	}
}

#endif /* _MAGNET_PCAP_VM_H */

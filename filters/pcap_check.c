// SPDX-License-Identifier: GPL-2.0
/*
 * The packet filter's check of a program, as the kernel's
 * bpf_check_classic() does it (which is not exported): which programs
 * pcap_vm_run() may run. magnet_packet checks each program it is given.
 */
#include "pcap_vm.h"

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

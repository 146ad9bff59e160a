// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_packet's copies of a program for the kernel's own BPF: where a
 * layer holds a real, linear sk_buff whose packet starts at its network
 * header, bpf_prog_create() translates the program to eBPF and JITs it
 * where the kernel JITs, and it runs there instead of pcap_vm.
 *
 * Each copy reads the packet from its network header on, the cooked
 * header's protocol a constant: one for IPv4, one for IPv6, each with its
 * loads at SKF_NET_OFF (NATIVE_NET: any skb), from skb->data (NATIVE_DATA:
 * for layers whose data starts at the network header), and ETH_HLEN past
 * it (NATIVE_ETH: an Ethernet device's transmit); the translation makes
 * the last two inline loads, where loads below the data pointer are helper
 * calls. For IPv4 each has a twin for headers without options, which
 * nearly all are (pcap_vm_ihl5()): the header's length is 20 there, so a
 * load past it ("udp port 5001"'s) is at a constant offset and inline
 * too, where the translation makes a load at X + k a helper call.
 *
 * There every byte is known, so the kernel's answer must be libpcap's,
 * and pcap_vm's. A program that reads the length (ld len: tcpdump's, not
 * the sk_buff's) or the cooked header other than its protocol has no
 * copies; nor has one the kernel's translation would answer differently
 * (a shift by X that can reach 32, a load whose offset can reach past
 * 2^20: pcap_vm_native_safe()), nor one the kernel's checker refuses.
 * Then pcap_vm runs every hit.
 */
#include <linux/slab.h>

#include "pcap_native.h"
#include "pcap_vm.h"

/*
 * The copy of @f for an sk_buff whose packet is @proto's (ETH_P_IP or
 * ETH_P_IPV6), its loads starting where @copy says; NULL where it cannot
 * run there (see the top of the file).
 */
static struct bpf_prog *native_prog(const struct sock_filter *f,
				    unsigned int len, u16 proto,
				    unsigned int copy)
{
	struct sock_fprog_kern fp = { .len = len };
	struct bpf_prog *prog = NULL;
	struct sock_filter *g;
	unsigned int i;

	g = kmemdup(f, len * sizeof(*f), GFP_KERNEL);
	if (!g)
		return NULL;
	for (i = 0; i < len; i++) {
		u16 code = g[i].code;

		if (BPF_CLASS(code) != BPF_LD && BPF_CLASS(code) != BPF_LDX)
			continue;
		switch (BPF_MODE(code)) {
		case BPF_ABS:
			if (code == (BPF_LD | BPF_H | BPF_ABS) && g[i].k == 0) {
				/* the cooked header's protocol */
				g[i] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_IMM,
								    proto);
				continue;
			}
			fallthrough;
		case BPF_IND:
		case BPF_MSH:
			/* (pcap_vm_native_safe() bounds them above) */
			if (g[i].k < SLL2_LEN ||
			    g[i].k - SLL2_LEN > PCAP_NATIVE_REACH)
				goto out;
			if (copy == NATIVE_NET)
				g[i].k = (u32)(SKF_NET_OFF + (int)(g[i].k - SLL2_LEN));
			else
				g[i].k = g[i].k - SLL2_LEN +
					 (copy == NATIVE_ETH ? ETH_HLEN : 0);
			break;
		case BPF_LEN:
			goto out;
		default:	/* IMM, MEM */
			break;
		}
	}
	fp.filter = g;
	if (bpf_prog_create(&prog, &fp))
		prog = NULL;
out:
	kfree(g);
	return prog;
}

/* Does the kernel's translation answer @f as libpcap? */
static bool native_safe(const struct sock_filter *f, unsigned int len)
{
	struct pcap_range *st;
	bool ok;

	st = kvcalloc(len, pcap_vm_range_size(), GFP_KERNEL);
	if (!st)
		return false;
	ok = pcap_vm_native_safe(f, len, st);
	kvfree(st);
	return ok;
}

static void drop_ihl5(struct pcap_native *n)
{
	unsigned int i;

	for (i = 0; i < NATIVE_COPIES; i++) {
		if (n->ip5[i])
			bpf_prog_destroy(n->ip5[i]);
		n->ip5[i] = NULL;
	}
}

/*
 * The copies for IPv4 headers without options, all three, where the
 * program written again for them (pcap_vm_ihl5()) differs; or none.
 */
static void make_ihl5(struct pcap_native *n, const struct sock_filter *f,
		      unsigned int len)
{
	struct sock_filter *g;
	unsigned int i;
	s64 *x;

	g = kmemdup(f, len * sizeof(*g), GFP_KERNEL);
	x = kmalloc_array(len, sizeof(*x), GFP_KERNEL);
	if (g && x && pcap_vm_ihl5(g, len, x) && native_safe(g, len)) {
		for (i = 0; i < NATIVE_COPIES; i++) {
			n->ip5[i] = native_prog(g, len, ETH_P_IP, i);
			if (!n->ip5[i]) {
				drop_ihl5(n);
				break;
			}
		}
	}
	kfree(x);
	kfree(g);
}

/**
 * pcap_native_free - destroy the copies pcap_native_make() made
 * @n:	its copies (none is fine)
 */
void pcap_native_free(struct pcap_native *n)
{
	unsigned int i;

	for (i = 0; i < NATIVE_COPIES; i++) {
		if (n->ip[i])
			bpf_prog_destroy(n->ip[i]);
		if (n->ip6[i])
			bpf_prog_destroy(n->ip6[i]);
		n->ip[i] = NULL;
		n->ip6[i] = NULL;
	}
	drop_ihl5(n);
}

/**
 * pcap_native_make - the copies of a program for the kernel's BPF
 * @n:		where they go (zeroed)
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 *
 * Process context. A failure is no error: pcap_vm runs the program.
 * Return: true if it made them (all of them; the IPv4 copies for headers
 * without options where they differ), false if none.
 */
bool pcap_native_make(struct pcap_native *n, const struct sock_filter *f,
		      unsigned int len)
{
	unsigned int i;

	if (!native_safe(f, len))
		return false;
	for (i = 0; i < NATIVE_COPIES; i++) {
		n->ip[i] = native_prog(f, len, ETH_P_IP, i);
		n->ip6[i] = native_prog(f, len, ETH_P_IPV6, i);
		if (!n->ip[i] || !n->ip6[i]) {
			pcap_native_free(n);
			return false;
		}
	}
	make_ihl5(n, f, len);
	return true;
}

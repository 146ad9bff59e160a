/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet_packet's copies of a program for the kernel's own BPF
 * (pcap_native.c): which programs may have them, making them, and which
 * one runs a packet.
 */
#ifndef _MAGNET_PCAP_NATIVE_H
#define _MAGNET_PCAP_NATIVE_H

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/magnet.h>
#include <linux/skbuff.h>

/* Where a copy's loads start (the cooked header is not there). */
enum {
	NATIVE_NET,	/* the network header (loads at SKF_NET_OFF) */
	NATIVE_DATA,	/* skb->data, which is at the network header */
	NATIVE_ETH,	/* skb->data, ETH_HLEN before the network header */
	NATIVE_COPIES
};

/*
 * All of them, or none (@ip[0] NULL): a program for IPv4 and one for
 * IPv6 (the cooked header's protocol a constant in each), per start;
 * and for an IPv4 header without options, @ip written again
 * (pcap_vm_ihl5()), or none where it would not differ.
 */
struct pcap_native {
	struct bpf_prog *ip[NATIVE_COPIES], *ip6[NATIVE_COPIES];
	struct bpf_prog *ip5[NATIVE_COPIES];
};

bool pcap_native_make(struct pcap_native *n, const struct sock_filter *f,
		      unsigned int len);
void pcap_native_free(struct pcap_native *n);

/*
 * The copy that runs @skb, whose packet is @proto's, from its network
 * header on, all in its linear data (the caller checked); or NULL.
 */
static __always_inline const struct bpf_prog *
pcap_native_pick(const struct pcap_native *n, const struct sk_buff *skb,
		 u16 proto)
{
	const u8 *nh = skb_network_header(skb);
	int off = skb_network_offset(skb);
	unsigned int c = !off ? NATIVE_DATA :
			 off == ETH_HLEN ? NATIVE_ETH : NATIVE_NET;

	if (proto == ETH_P_IPV6)
		return n->ip6[c];
	if (proto != ETH_P_IP)
		return NULL;
	/* the byte the program reads the header's length from */
	return n->ip5[c] && nh < skb_tail_pointer(skb) && (*nh & 0xf) == 5 ?
	       n->ip5[c] : n->ip[c];
}

/*
 * The copy whose loads are from skb->data, on a send call's headers built
 * into @v: an sk_buff of this stack whose data, network header and tail
 * are the headers'. pcap_vm_native_ok() found that the program loads
 * nothing past them; were it to (a load at a negative offset, below the
 * data), the kernel's helper finds it outside head..tail and the program
 * answers 0, and a load at the link layer finds no link header.
 */
static __always_inline bool pcap_native_run_built(const struct pcap_native *n,
						  bool ip6,
						  struct magnet_pkt_view *v)
{
	struct sk_buff skb __uninitialized;

	skb.head = v->built;
	skb.data = v->built;
	skb.len = v->nbuilt;
	skb.data_len = 0;
	skb_set_tail_pointer(&skb, v->nbuilt);
	skb_reset_network_header(&skb);
	skb_unset_mac_header(&skb);
	return bpf_prog_run(ip6 ? n->ip6[NATIVE_DATA] : n->ip[NATIVE_DATA],
			    &skb);
}

#endif /* _MAGNET_PCAP_NATIVE_H */

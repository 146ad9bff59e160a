// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_pcapdiff: every way the packet filter can run a program, on
 * packets a test gives, so that user space (tests/bin/pcap-diff.c) can
 * hold each against libpcap's bpf_filter(). Built from the filter's own
 * sources (filters/pcap_vm.c, filters/pcap_native.c: the same check,
 * analysis and copies as magnet_packet's rules, and the kernel's own
 * bpf_prog_create() and bpf_prog_run()).
 *
 * A write() to /sys/kernel/debug/magnet_pcapdiff is one request:
 *   u32 len, u32 npackets, struct sock_filter insns[len], then each
 *   packet as u16 length and its bytes: the cooked header (LINUX_SLL2,
 *   20 bytes) and the packet from its network header on.
 * The next read() gives the answers: one byte for the program
 * (PD_REFUSED, PD_NATIVE, PD_IHL5), then two per packet: the interpreter's
 * verdict (PD_VERDICT: 0 reject, 1 match, 2 undecided) and, for each
 * copy for the kernel's BPF, whether it ran and matched (PD_RAN(c),
 * PD_MATCH(c)); then which of them was the IPv4 copy for headers without
 * options (PD_IHL5_RAN(c)).
 *
 * Each copy runs on a real sk_buff as the layers hold it: data at the
 * network header (NATIVE_DATA), at an Ethernet header before it
 * (NATIVE_ETH), and past it, at the transport header (NATIVE_NET);
 * pcap_native_pick() chooses, as pcap_match() does. The interpreter runs
 * on the view magnet_packet_view() would fill for the first.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pcap_native.h"
#include "pcap_vm.h"

#define PD_REFUSED	BIT(0)
#define PD_NATIVE	BIT(1)
#define PD_IHL5		BIT(2)
#define PD_VERDICT	0x3
#define PD_RAN(c)	BIT(2 + 2 * (c))
#define PD_MATCH(c)	BIT(3 + 2 * (c))
#define PD_IHL5_RAN(c)	BIT(c)

#define PD_PACKETS_MAX	256
#define PD_PACKET_MAX	2048

static struct dentry *file;
static DEFINE_MUTEX(lock);
static u8 *answer;
static size_t answer_len;

/* The packet at @b (@len, cooked header first) in an skb for copy @c. */
static struct sk_buff *make_skb(const u8 *b, unsigned int len, unsigned int c)
{
	unsigned int n = len - SLL2_LEN;
	struct sk_buff *skb = alloc_skb(64 + ETH_HLEN + n, GFP_KERNEL);
	u16 proto = get_unaligned_be16(b);

	if (!skb)
		return NULL;
	skb_reserve(skb, 64);
	skb->protocol = htons(proto);
	if (c == NATIVE_ETH) {
		struct ethhdr *eth = skb_put_zero(skb, ETH_HLEN);

		eth->h_proto = htons(proto);
		skb_reset_mac_header(skb);
	}
	skb_set_network_header(skb, skb->len);
	skb_put_data(skb, b + SLL2_LEN, n);
	if (c == NATIVE_NET) {
		/* data at the transport header, as the UDP layer holds it */
		skb_pull(skb, min(n, proto == ETH_P_IPV6 ? 40U : 20U));
		skb_reset_transport_header(skb);
	}
	return skb;
}

/* The interpreter on the view of @skb's packet (data at its network header). */
static u8 interpret(const struct sock_filter *f, const struct pcap_op *ops,
		    const u8 *b, const struct sk_buff *skb)
{
	struct magnet_pkt_view v = {
		.protocol = get_unaligned_be16(b),
		.ifindex_known = true,
		.ifindex = get_unaligned_be32(b + 4),
		.hatype = get_unaligned_be16(b + 8),
		.pkttype = b[10],
		.len_known = true,
		.len = skb->len,
		.skb = skb,
		.avail = skb->len,
		.linear = skb->data,
		.nlinear = skb_headlen(skb),
	};

	return pcap_vm_run(f, ops, &v);
}

static int run(const u8 *req, size_t len, u8 *out)
{
	u32 n = get_unaligned((const u32 *)req), npkt = get_unaligned((const u32 *)req + 1);
	const struct sock_filter *f = (const void *)(req + 8);
	struct pcap_native native = {};
	struct pcap_op *ops;
	const u8 *p, *end = req + len;
	unsigned int at, i, c;

	if (!n || n > MAGNET_PACKET_INSNS_MAX || npkt > PD_PACKETS_MAX ||
	    8 + n * sizeof(*f) > len)
		return -EINVAL;
	out[0] = 0;
	answer_len = 1;
	if (pcap_vm_check(f, n, &at)) {
		out[0] = PD_REFUSED;
		return 0;
	}
	ops = kcalloc(n, sizeof(*ops), GFP_KERNEL);
	if (!ops)
		return -ENOMEM;
	pcap_vm_decode(f, n, ops);
	if (pcap_native_make(&native, f, n))
		out[0] |= PD_NATIVE | (native.ip5[0] ? PD_IHL5 : 0);
	p = req + 8 + n * sizeof(*f);
	for (i = 0; i < npkt; i++) {
		u8 *o = out + 1 + 2 * i;
		unsigned int plen;

		if (end - p < 2)
			break;
		plen = get_unaligned((const u16 *)p);
		p += 2;
		if (plen <= SLL2_LEN || plen > PD_PACKET_MAX || end - p < plen)
			break;
		o[0] = 0;
		o[1] = 0;
		for (c = 0; c < NATIVE_COPIES; c++) {
			const struct bpf_prog *prog = NULL;
			struct sk_buff *skb = make_skb(p, plen, c);

			if (!skb)
				break;
			if (c == NATIVE_DATA)
				o[0] |= interpret(f, ops, p, skb);
			if (native.ip[0])
				prog = pcap_native_pick(&native, skb,
							ntohs(skb->protocol));
			if (prog) {
				o[0] |= PD_RAN(c);
				preempt_disable();
				if (bpf_prog_run(prog, skb))
					o[0] |= PD_MATCH(c);
				preempt_enable();
				if (prog == native.ip5[c])
					o[1] |= PD_IHL5_RAN(c);
			}
			kfree_skb(skb);
		}
		if (c < NATIVE_COPIES)
			break;
		p += plen;
	}
	pcap_native_free(&native);
	kfree(ops);
	if (i < npkt)
		return -EINVAL;
	answer_len = 1 + 2 * npkt;
	return 0;
}

static ssize_t pd_write(struct file *filp, const char __user *ubuf,
			size_t len, loff_t *ppos)
{
	u8 *req;
	int err;

	if (len < 8 || len > 8 + MAGNET_PACKET_INSNS_MAX * 8 +
		      PD_PACKETS_MAX * (2 + PD_PACKET_MAX))
		return -EINVAL;
	req = vmemdup_user(ubuf, len);
	if (IS_ERR(req))
		return PTR_ERR(req);
	mutex_lock(&lock);
	err = run(req, len, answer);
	if (err)
		answer_len = 0;
	mutex_unlock(&lock);
	kvfree(req);
	return err ? err : len;
}

static ssize_t pd_read(struct file *filp, char __user *ubuf, size_t len,
		       loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, answer, answer_len);
	mutex_unlock(&lock);
	return ret;
}

static const struct file_operations pd_fops = {
	.owner = THIS_MODULE,
	.write = pd_write,
	.read = pd_read,
	.llseek = default_llseek,
};

static int __init pd_init(void)
{
	answer = kmalloc(1 + 2 * PD_PACKETS_MAX, GFP_KERNEL);
	if (!answer)
		return -ENOMEM;
	file = debugfs_create_file("magnet_pcapdiff", 0600, NULL, NULL,
				   &pd_fops);
	return 0;
}

static void __exit pd_exit(void)
{
	debugfs_remove(file);
	kfree(answer);
}

module_init(pd_init);
module_exit(pd_exit);

MODULE_DESCRIPTION("magnet tests: the packet filter's every way of running a program, against libpcap");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");

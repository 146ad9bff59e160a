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
 * The interpreter is pcap_vm.c. A hit whose answer depends on what the
 * probe does not know (the TTL at a send call, say) is undecided, and an
 * undecided hit goes on: the rule matches if it includes, not if it
 * excludes, and the hit is counted (PACKET_UNDECIDED).
 *
 * Where the layer holds a real, linear sk_buff whose packet starts at its
 * network header, the kernel's own BPF runs the program instead: at
 * creation it is rewritten to read the packet from the network header
 * (loads at SKF_NET_OFF) with the cooked header's protocol a constant,
 * one copy for IPv4 and one for IPv6, and bpf_prog_create() translates
 * each to eBPF and JIT-compiles it where the kernel JITs (and a copy of
 * each with its loads from skb->data, for layers whose data starts at
 * the network header, and one for layers whose data starts ETH_HLEN
 * before it, as an Ethernet device's transmit does: the translation
 * makes those loads inline, where loads below the data pointer are
 * helper calls). There every byte is known, so its answer is pcap_vm's.
 * For IPv4 each copy has a twin for headers without options, which
 * nearly all are (pcap_vm_ihl5()): the header's length is 20 there, so
 * a load past it ("udp port 5001"'s) is at a constant offset and inline
 * too, where the translation makes a load at X + k a helper call.
 * A program that reads the length (ld len: tcpdump's, not the sk_buff's)
 * or the cooked header
 * other than its protocol stays with pcap_vm; so do hits with user bytes
 * or paged data (the kernel's loads below the data pointer read linear
 * data only). Such a hit is found through magnet_packet_skb(), before any
 * view of the packet is built, so the program runs on the skb with no
 * work of magnet's in front of it.
 *
 * At a send call there is no skb: the probe builds the headers, and does
 * not know some of their bits. There too the kernel's BPF runs the
 * program (the copy whose loads are from skb->data, on an sk_buff of the
 * stack whose data are the headers) where pcap_vm_native_ok() found, at
 * creation, that on the headers of that shape (IPv4 or IPv6; a UDP send
 * call's, or TCP's) it reads only bits known in every hit and nothing
 * past them ("udp dst port 5001" does; "ip[8] = 64", the TTL, does not),
 * the source's address and port known or not as in the hit (an
 * unconnected socket's address is not). Its answer is then pcap_vm's.
 *
 * Cheaper still, and first: such a program is written again at creation
 * for each shape of send call (pcap_vm_specialize()): what the shape
 * decides is gone, and what is left reads the record's fields
 * (magnet_packet_sent(), magnet_sent_field()), with no headers built and
 * no call into the JIT; "udp dst port 5001" becomes a read of the port
 * and a comparison. Only a program that loads bytes of two fields in
 * one load (both ports as one word) is run on the built headers instead.
 * Hits run on the fields are counted (PACKET_FIELDS); hits the kernel's
 * BPF ran, on an skb or on built headers, too (PACKET_NATIVE).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "compat.h"
#include "pcap_vm.h"

/* The copies of a program for the kernel's BPF: where its loads start. */
enum { NATIVE_NET, NATIVE_DATA, NATIVE_ETH, NATIVE_COPIES };

struct pcap_rule {
	bool undecided_match;		/* an include rule */
	u64 __percpu *undecided;
	u64 __percpu *native;		/* hits the kernel's BPF ran */
	u64 __percpu *fields;		/* hits run on a send call's fields */
	/*
	 * The kernel's, or NULL: pcap_vm. [NATIVE_NET]: loads from the
	 * network header (SKF_NET_OFF); [NATIVE_DATA]: from skb->data, for
	 * an skb whose data starts at its network header; [NATIVE_ETH]:
	 * from ETH_HLEN past skb->data, for one whose data starts at an
	 * Ethernet header (both: inline loads, no helper calls).
	 */
	struct bpf_prog *ip[NATIVE_COPIES], *ip6[NATIVE_COPIES];
	/*
	 * For an IPv4 header without options, the copies of @ip written
	 * again (pcap_vm_ihl5()), its loads past the header inline too; or
	 * none (the program has no such loads): @ip.
	 */
	struct bpf_prog *ip5[NATIVE_COPIES];
	/*
	 * [IPv6][shape - 1][what of the source is not known]: the program
	 * written again for a send call's headers of that shape, to run on
	 * the record's fields (pcap_vm_specialize()), or NULL; if not, may
	 * the kernel's BPF ([1]) run it on the headers built
	 * (pcap_vm_native_ok())? @any_built: one of them.
	 */
	struct pcap_sent *sent[2][2][MAGNET_BUILT_UNKNOWNS];
	bool built[2][2][MAGNET_BUILT_UNKNOWNS];
	bool any_built;
	bool sends;			/* the last hit decided was a send call's */
	char *text;			/* or NULL */
	struct pcap_op *ops;		/* pcap_vm_decode()'s form */
	unsigned int len;
	struct sock_filter insns[];
};

/*
 * The kernel's BPF on a send call's built headers: an sk_buff of this
 * stack whose data are the headers. The translated program reads no
 * other field of it (data, len, data_len), and pcap_vm_native_ok() has
 * found that it loads nothing past the headers.
 */
static bool run_built(const struct bpf_prog *prog, struct magnet_pkt_view *v)
{
	struct sk_buff skb __uninitialized;

	skb.data = v->built;
	skb.len = v->nbuilt;
	skb.data_len = 0;
	return bpf_prog_run(prog, &skb);
}

/*
 * A send call's hit, where the program can run without the interpreter:
 * on the record's fields, or in the kernel's BPF on the headers built
 * (into @v). Its answer, or -1.
 */
static __always_inline int run_sent(struct pcap_rule *r,
				    const struct magnet_hit *hit,
				    struct magnet_pkt_view *v)
{
	/* (filled for a socket's hit only, where it is used) */
	struct magnet_packet room __uninitialized;
	enum magnet_built_shape shape;
	const struct pcap_sent *sp;
	struct magnet_sent s;
	unsigned int unk;
	bool ip6;

	shape = magnet_packet_sent(hit, &room, &s, &unk);
	if (shape == MAGNET_BUILT_NONE)
		return -1;
	ip6 = s.iphlen == sizeof(struct ipv6hdr);
	sp = r->sent[ip6][shape - 1][unk];
	if (sp) {
		this_cpu_inc(*r->fields);
		return pcap_vm_run_sent(sp, &s);
	}
	if (r->built[ip6][shape - 1][unk] && magnet_packet_built(hit, v, &unk)) {
		this_cpu_inc(*r->native);
		return run_built(ip6 ? r->ip6[NATIVE_DATA] : r->ip[NATIVE_DATA], v);
	}
	return -1;
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
	const struct sk_buff *skb;
	u16 proto;
	int ret;

	/* Without the interpreter first: neither needs a view of the packet. */
	if (r->ip[0]) {
		/*
		 * A probe's hits are all send calls, or none are: where the
		 * last one decided was, try that first.
		 */
		if (READ_ONCE(r->sends)) {
			ret = run_sent(r, hit, &v);
			if (ret >= 0)
				return ret;
		}
		skb = magnet_packet_skb(hit, &proto);
		if (skb && !skb_is_nonlinear(skb) &&
		    (proto == ETH_P_IP || proto == ETH_P_IPV6)) {
			const u8 *nh = skb_network_header(skb);
			int off = skb_network_offset(skb);
			unsigned int c = !off ? NATIVE_DATA :
					 off == ETH_HLEN ? NATIVE_ETH : NATIVE_NET;
			const struct bpf_prog *prog = r->ip6[c];

			if (proto == ETH_P_IP) {
				/* the byte the program reads the length from */
				prog = r->ip5[c] && nh < skb_tail_pointer(skb) &&
				       (*nh & 0xf) == 5 ? r->ip5[c] : r->ip[c];
			}
			this_cpu_inc(*r->native);
			return bpf_prog_run(prog, (void *)skb);
		}
		if (r->any_built && !READ_ONCE(r->sends)) {
			ret = run_sent(r, hit, &v);
			if (ret >= 0) {
				WRITE_ONCE(r->sends, true);
				return ret;
			}
		}
	}
	if (!magnet_packet_view(hit, &v))
		return false;
	switch (pcap_vm_run(r->insns, r->ops, &v)) {
	case PCAP_MATCH:
		return true;
	case PCAP_REJECT:
		return false;
	default:
		this_cpu_inc(*r->undecided);
		return r->undecided_match;
	}
}

/* 0, or -EINVAL with the instruction at fault in @extack. */
static int check(const struct sock_filter *f, unsigned int len,
		 const struct nlattr *attr, struct netlink_ext_ack *extack)
{
	/* 6.1: the message's room (magnet_extack_fmt()), under the lock */
	static char msg[MAGNET_EXTACK_LEN];
	const char *why;
	unsigned int at;

	why = pcap_vm_check(f, len, &at);
	if (!why)
		return 0;
	magnet_extack_fmt(extack, attr, msg,
			  "program refused at instruction %u: %s",
			  at, why);
	return -EINVAL;
}

static const struct nla_policy pcap_policy[MAGNET_PACKET_MAX + 1] = {
	[MAGNET_PACKET_PROGRAM] = { .type = NLA_BINARY,
		.len = MAGNET_PACKET_INSNS_MAX * sizeof(struct sock_filter) },
	[MAGNET_PACKET_TEXT] = { .type = NLA_NUL_STRING,
				 .len = MAGNET_PACKET_TEXT_MAX - 1 },
	[MAGNET_PACKET_UNDECIDED] = { .type = NLA_REJECT },
	[MAGNET_PACKET_NATIVE] = { .type = NLA_REJECT },
	[MAGNET_PACKET_FIELDS] = { .type = NLA_REJECT },
};

/*
 * The program for the kernel's BPF on an sk_buff whose packet is @proto
 * (ETH_P_IP or ETH_P_IPV6), its loads from the network header (@copy
 * NATIVE_NET), or from skb->data, which the caller has at the network
 * header (NATIVE_DATA) or ETH_HLEN before it (NATIVE_ETH): the kernel's
 * translation makes those inline loads. NULL where it cannot run there
 * (see the top of the file).
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
			if (g[i].k < SLL2_LEN || g[i].k > INT_MAX)
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

/* No copies for IPv4 headers without options: @ip runs them. */
static void drop_ihl5(struct pcap_rule *r)
{
	unsigned int i;

	for (i = 0; i < NATIVE_COPIES; i++) {
		if (r->ip5[i])
			bpf_prog_destroy(r->ip5[i]);
		r->ip5[i] = NULL;
	}
}

/*
 * The copies for IPv4 headers without options, all three, where the
 * program written again for them (pcap_vm_ihl5()) differs; or none.
 */
static void make_ihl5(struct pcap_rule *r)
{
	struct sock_filter *g;
	unsigned int i;
	s64 *x;

	g = kmemdup(r->insns, r->len * sizeof(*g), GFP_KERNEL);
	x = kmalloc_array(r->len, sizeof(*x), GFP_KERNEL);
	if (g && x && pcap_vm_ihl5(g, r->len, x)) {
		for (i = 0; i < NATIVE_COPIES; i++) {
			r->ip5[i] = native_prog(g, r->len, ETH_P_IP, i);
			if (!r->ip5[i]) {
				drop_ihl5(r);
				break;
			}
		}
	}
	kfree(x);
	kfree(g);
}

/* No program for the kernel's BPF: pcap_vm runs every hit. */
static void drop_native(struct pcap_rule *r)
{
	unsigned int i;

	for (i = 0; i < NATIVE_COPIES; i++) {
		if (r->ip[i])
			bpf_prog_destroy(r->ip[i]);
		if (r->ip6[i])
			bpf_prog_destroy(r->ip6[i]);
		r->ip[i] = NULL;
		r->ip6[i] = NULL;
	}
	drop_ihl5(r);
}

static void pcap_destroy(void *state)
{
	struct pcap_rule *r = state;
	unsigned int i;

	for (i = 0; i < sizeof(r->sent) / sizeof(r->sent[0][0][0]); i++)
		kfree((&r->sent[0][0][0])[i]);
	drop_native(r);
	free_percpu(r->native);
	free_percpu(r->fields);
	free_percpu(r->undecided);
	kfree(r->ops);
	kfree(r->text);
	kfree(r);
}

/*
 * How the program may run on each shape of a send call's headers: written
 * again for it, on the record's fields; or in the kernel's BPF on the
 * headers built; or neither (pcap_vm, on the view).
 */
static void find_built(struct pcap_rule *r)
{
	struct magnet_pkt_template t;
	struct pcap_sent **sp, *room;
	struct pcap_astate *st;
	unsigned int ip6, shape, unk;

	st = kvcalloc(r->len, pcap_vm_astate_size(), GFP_KERNEL);
	room = kmalloc(struct_size(room, op, r->len), GFP_KERNEL);
	if (!st || !room)
		goto out;	/* pcap_vm runs them */
	for (ip6 = 0; ip6 < 2; ip6++) {
		for (shape = MAGNET_BUILT_UDP; shape <= MAGNET_BUILT_TCP; shape++) {
			for (unk = 0; unk < MAGNET_BUILT_UNKNOWNS; unk++) {
				magnet_packet_template(ip6, shape, unk, &t);
				sp = &r->sent[ip6][shape - 1][unk];
				if (pcap_vm_specialize(r->insns, r->len, &t, st, room))
					*sp = kmemdup(room, struct_size(room, op, room->len),
						      GFP_KERNEL);
				r->built[ip6][shape - 1][unk] =
					!*sp && pcap_vm_native_ok(r->insns, r->len, &t, st);
				r->any_built |= *sp || r->built[ip6][shape - 1][unk];
			}
		}
	}
out:
	kfree(room);
	kvfree(st);
}

static void *pcap_create(struct magnet_filter_ctx *ctx, struct nlattr **tb,
			 struct netlink_ext_ack *extack)
{
	struct nlattr *prog = tb[MAGNET_PACKET_PROGRAM];
	struct pcap_rule *r;
	unsigned int len, i;
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
	r->native = alloc_percpu(u64);
	r->fields = alloc_percpu(u64);
	r->ops = kcalloc(len, sizeof(*r->ops), GFP_KERNEL);
	if (tb[MAGNET_PACKET_TEXT])
		r->text = nla_strdup(tb[MAGNET_PACKET_TEXT], GFP_KERNEL);
	if (!r->undecided || !r->native || !r->fields || !r->ops ||
	    (tb[MAGNET_PACKET_TEXT] && !r->text)) {
		pcap_destroy(r);
		return ERR_PTR(-ENOMEM);
	}
	r->len = len;
	memcpy(r->insns, nla_data(prog), nla_len(prog));
	pcap_vm_decode(r->insns, len, r->ops);
	r->undecided_match = ctx->action == MAGNET_FILTER_INCLUDE;
	/* all six, or none (a failure here is no error: pcap_vm runs it) */
	for (i = 0; i < NATIVE_COPIES; i++) {
		r->ip[i] = native_prog(r->insns, len, ETH_P_IP, i);
		r->ip6[i] = native_prog(r->insns, len, ETH_P_IPV6, i);
		if (!r->ip[i] || !r->ip6[i])
			break;
	}
	if (i < NATIVE_COPIES) {
		drop_native(r);
	} else {
		make_ihl5(r);
		find_built(r);
	}
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

static u64 sum(u64 __percpu *counter)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += READ_ONCE(*per_cpu_ptr(counter, cpu));
	return n;
}

static int pcap_fill_stats(struct sk_buff *msg, void *state)
{
	const struct pcap_rule *r = state;

	if (nla_put_u64_64bit(msg, MAGNET_PACKET_UNDECIDED, sum(r->undecided),
			      MAGNET_PACKET_PAD) ||
	    (r->ip[0] && (nla_put_u64_64bit(msg, MAGNET_PACKET_NATIVE,
					     sum(r->native), MAGNET_PACKET_PAD) ||
			   nla_put_u64_64bit(msg, MAGNET_PACKET_FIELDS,
					     sum(r->fields), MAGNET_PACKET_PAD))))
		return -EMSGSIZE;
	return 0;
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

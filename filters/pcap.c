// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_packet: filter type "packet" -- tcpdump's filter language in the
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
 * network header, the kernel's own BPF runs a copy of the program
 * instead (pcap_native.c: which programs may, and which copy). Such a
 * hit is found through magnet_packet_skb(), before any view of the
 * packet is built, so the program runs on the skb with no work of
 * magnet's in front of it; hits with user bytes or paged data stay with
 * pcap_vm (the kernel's loads below the data pointer read linear data
 * only).
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
#include "pcap_native.h"
#include "pcap_vm.h"

struct pcap_rule {
	bool undecided_match;		/* an include rule */
	u64 __percpu *undecided;
	u64 __percpu *native_hits;	/* hits the kernel's BPF ran */
	u64 __percpu *fields;		/* hits run on a send call's fields */
	struct pcap_native native;	/* the kernel's copies, or none */
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
		this_cpu_inc(*r->native_hits);
		return pcap_native_run_built(&r->native, ip6, v);
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
	if (r->native.ip[0]) {
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
		if (skb && !skb_is_nonlinear(skb)) {
			const struct bpf_prog *prog;

			prog = pcap_native_pick(&r->native, skb, proto);
			if (prog) {
				this_cpu_inc(*r->native_hits);
				return bpf_prog_run(prog, (void *)skb);
			}
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

static void pcap_destroy(void *state)
{
	struct pcap_rule *r = state;
	unsigned int i;

	for (i = 0; i < sizeof(r->sent) / sizeof(r->sent[0][0][0]); i++)
		kfree((&r->sent[0][0][0])[i]);
	pcap_native_free(&r->native);
	free_percpu(r->native_hits);
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
	r->native_hits = alloc_percpu(u64);
	r->fields = alloc_percpu(u64);
	r->ops = kcalloc(len, sizeof(*r->ops), GFP_KERNEL);
	if (tb[MAGNET_PACKET_TEXT])
		r->text = nla_strdup(tb[MAGNET_PACKET_TEXT], GFP_KERNEL);
	if (!r->undecided || !r->native_hits || !r->fields || !r->ops ||
	    (tb[MAGNET_PACKET_TEXT] && !r->text)) {
		pcap_destroy(r);
		return ERR_PTR(-ENOMEM);
	}
	r->len = len;
	memcpy(r->insns, nla_data(prog), nla_len(prog));
	pcap_vm_decode(r->insns, len, r->ops);
	r->undecided_match = ctx->action == MAGNET_FILTER_INCLUDE;
	/* (a failure here is no error: pcap_vm runs it) */
	if (pcap_native_make(&r->native, r->insns, len))
		find_built(r);
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
	    (r->native.ip[0] && (nla_put_u64_64bit(msg, MAGNET_PACKET_NATIVE,
					     sum(r->native_hits), MAGNET_PACKET_PAD) ||
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
/* the module's name before it was named after its filter type */
MODULE_ALIAS("magnet_pcap");

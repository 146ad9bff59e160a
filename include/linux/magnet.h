/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: in-kernel API for modules that log into magnet's buffers or read
 * from them. The record format is in <uapi/linux/magnet.h>.
 */
#ifndef _LINUX_MAGNET_H
#define _LINUX_MAGNET_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>
#include <uapi/linux/magnet.h>
#ifdef __KERNEL__
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/string.h>
#endif

struct magnet_buffer;
struct magnet_reader;

/* Buffer behaviour when a CPU's ring is full. */
enum magnet_full_mode {
	MAGNET_FULL_DROP,	/* drop the new record, count it (default) */
	MAGNET_FULL_OVERWRITE,	/* evict the oldest records (flight recorder) */
};

struct magnet_buffer *magnet_buffer_get(const char *name);
void magnet_buffer_put(struct magnet_buffer *buf);

struct magnet_record *magnet_reserve(struct magnet_buffer *buf, u16 event,
				     u64 id, u32 payload_size);
void magnet_commit(struct magnet_buffer *buf, struct magnet_record *rec);
int magnet_log(struct magnet_buffer *buf, u16 event, u64 id,
	       const void *payload, u32 payload_size);

/**
 * typedef magnet_consume_fn - receives one record from magnet_reader_consume()
 * @rec:	the record; valid only during the call
 * @ctx:	the caller's context pointer
 *
 * Return: 0 to go on, a positive value to stop after this record, or a
 * negative errno to stop and make magnet_reader_consume() return it. The
 * record counts as read in every case.
 */
typedef int (*magnet_consume_fn)(const struct magnet_record *rec, void *ctx);

struct magnet_reader *magnet_reader_open(struct magnet_buffer *buf);
void magnet_reader_close(struct magnet_reader *reader);
long magnet_reader_consume(struct magnet_reader *reader, long max_records,
			   magnet_consume_fn fn, void *ctx);

/*
 * Events of other modules. A module registers an event by name, gets an
 * event id, and logs records with magnet_event_log(). Its events are listed,
 * enabled, disabled, filtered and counted like magnet's own probes
 * (kind MAGNET_PROBE_EXTERNAL). See kmod/sample/ for an example.
 */
struct magnet_event;

/**
 * struct magnet_event_ops - optional hooks of a module's event
 * @enable:	the event was enabled: start producing (e.g. arm a hook).
 *		A negative errno refuses, and the event stays disabled.
 * @disable:	the event was disabled: stop producing. Records logged
 *		while disabled are ignored anyway.
 *
 * Called in process context, serialised with each other and with
 * registration; they must not register or unregister events.
 */
struct magnet_event_ops {
	int (*enable)(struct magnet_event *ev);
	void (*disable)(struct magnet_event *ev);
};

struct magnet_event *__magnet_event_register(struct module *owner,
					     const char *name,
					     const char *buffer,
					     const struct magnet_event_ops *ops,
					     void *priv);
/**
 * magnet_event_register - register an event of the calling module
 * @name:	unique event name, 1..MAGNET_NAME_LEN-1 bytes, no '/' or spaces
 * @buffer:	name of the buffer its records go to (e.g. "default")
 * @ops:	hooks, or NULL
 * @priv:	the module's pointer, see magnet_event_priv()
 *
 * The event starts disabled; an administrator enables it (magnetctl probe
 * enable NAME). Unregister it before the module unloads.
 *
 * Return: the event, or ERR_PTR(-EINVAL) (bad name), -EEXIST (name in
 * use), -ENOENT (no such buffer), -ENOSPC (no event id left), -ENOMEM.
 */
#define magnet_event_register(name, buffer, ops, priv) \
	__magnet_event_register(THIS_MODULE, name, buffer, ops, priv)
void magnet_event_unregister(struct magnet_event *ev);
u16 magnet_event_id(const struct magnet_event *ev);
void *magnet_event_priv(const struct magnet_event *ev);
int magnet_event_log(struct magnet_event *ev, u64 id, const void *payload,
		     u32 payload_size);

int magnet_event_log_object(struct magnet_event *ev, u64 id,
			    const void *payload, u32 payload_size,
			    const void *object);

/*
 * What an event's hits are about, for filter modules: the @object of
 * struct magnet_hit. An event's type is fixed when it is created.
 */
enum magnet_object_type {
	MAGNET_OBJECT_NONE,
	MAGNET_OBJECT_SKB,	/* struct sk_buff *, network header set */
	/* struct sk_buff * being received: skb->data is at the network header */
	MAGNET_OBJECT_SKB_RX,
	MAGNET_OBJECT_SOCK,	/* struct sock * */
	/*
	 * A packet probe's hit (the probe sets' layers): opaque; its payload
	 * is the struct magnet_packet the record will hold, and
	 * magnet_packet_view() shows its bytes.
	 */
	MAGNET_OBJECT_PACKET,
};

enum magnet_object_type magnet_event_object_type(const struct magnet_event *ev);
void magnet_event_set_object_type(struct magnet_event *ev,
				  enum magnet_object_type type);
const char *magnet_event_name(const struct magnet_event *ev);
struct magnet_buffer *magnet_event_buffer(const struct magnet_event *ev);

/*
 * A packet's or a socket's addresses, ports and protocol, as a packet
 * probe's record (struct magnet_packet) shows them; for filter modules.
 * Any context; false if it is not IPv4 or IPv6. @off: the IP header's
 * offset from skb->data.
 */
struct sk_buff;
struct sock;
bool magnet_packet_parse_ip(const struct sk_buff *skb, int off,
			    struct magnet_packet *pk);
bool magnet_packet_parse_sock(const struct sock *sk, struct magnet_packet *pk);

struct magnet_hit;

#define MAGNET_PKT_VIEW_BUILT	64	/* room for built headers: IPv6 + TCP */

/**
 * struct magnet_pkt_view - a hit's packet as tcpdump -i any would see it
 * @protocol:	what its network header is, ETH_P_* in host order
 * @hatype:	the device's type (ARPHRD_*); 0 where the hit has no device
 * @pkttype:	PACKET_HOST, PACKET_BROADCAST, ... PACKET_OUTGOING
 * @ifindex_known: false where the hit has no device (yet, or any more):
 *		then @ifindex (0) is not the packet's
 * @len_known:	false where the packet's length is not known yet (a TCP
 *		send call: the segments are cut later)
 * @nbuilt:	headers built from what the probe knows, where it holds no
 *		IP header (the send calls, a TCP segment before IP): @built,
 *		and in @unknown the bits of each byte the probe does not
 *		know (TTL, IP id, checksums, ...: they read as zero)
 * @ifindex:	the device's index
 * @len:	the packet's length from its network header
 * @skb:	the packet's bytes after @built: @skb's from @off (from
 *		skb->data, may be negative) on, @avail of them; or NULL
 * @ubuf:	or the application's bytes at a UDP send call, @avail of
 *		them, read with copy_from_user_nofault()
 * @linear:	where no headers are built: the first @nlinear bytes of the
 *		packet, in the skb's linear data (a fast path for readers);
 *		NULL if there are none
 */
struct magnet_pkt_view {
	u16 protocol;
	u16 hatype;
	u8 pkttype;
	bool ifindex_known;
	bool len_known;
	u8 nbuilt;
	u32 ifindex;
	u32 len;
	const struct sk_buff *skb;
	int off;
	u32 avail;
	const void __user *ubuf;
	const u8 *linear;
	u32 nlinear;
	union {
		u8 built[MAGNET_PKT_VIEW_BUILT];
		u64 built_w[MAGNET_PKT_VIEW_BUILT / 8];
	};
	union {
		u8 unknown[MAGNET_PKT_VIEW_BUILT];
		u64 unknown_w[MAGNET_PKT_VIEW_BUILT / 8];
	};
};

/*
 * Fill @v from a hit of an event whose object type is SKB, SKB_RX, SOCK or
 * PACKET (@v->built and @v->unknown only up to @v->nbuilt). Any context.
 * Return: false if the hit shows no packet (no object; a socket or packet
 * probe's that is not IPv4 or IPv6).
 */
bool magnet_packet_view(const struct magnet_hit *hit,
			struct magnet_pkt_view *v);

/*
 * The fast way for filters that can read an sk_buff: where a hit's packet
 * is an skb's from its network header on, with every byte there (no
 * headers built, no application bytes), that skb, and in @protocol its
 * ETH_P_* (host order), as magnet_packet_view() would say. NULL
 * otherwise: then only magnet_packet_view() shows the packet. It tells
 * nothing of the device or direction. Any context.
 */
const struct sk_buff *magnet_packet_skb(const struct magnet_hit *hit,
					u16 *protocol);

/*
 * A send call's packet, where the kernel's BPF is to run on it: the
 * headers the probe builds (magnet_packet_view()'s @built) come in two
 * shapes, a UDP send call's (IP and UDP headers, the length known) and a
 * TCP send call's or socket's (IP and TCP headers, the length not).
 */
enum magnet_built_shape {
	MAGNET_BUILT_NONE,
	MAGNET_BUILT_UDP,
	MAGNET_BUILT_TCP,
};

/**
 * struct magnet_pkt_template - what every hit of one shape builds
 * @protocol:	ETH_P_IP or ETH_P_IPV6
 * @nbuilt:	bytes built
 * @val:	the bytes, in their @konst bits
 * @konst:	bits the same in every hit (IP version, protocol, ...)
 * @known:	bits known in every hit (a superset of @konst: addresses,
 *		ports, a UDP length); the rest are not known (TTL, ...)
 * @field:	of each byte, the field of struct magnet_sent it is built
 *		from (MAGNET_SENT_*), or MAGNET_SENT_NONE
 */
struct magnet_pkt_template {
	u16 protocol;
	u8 nbuilt;
	u8 val[MAGNET_PKT_VIEW_BUILT];
	u8 konst[MAGNET_PKT_VIEW_BUILT];
	u8 known[MAGNET_PKT_VIEW_BUILT];
	u8 field[MAGNET_PKT_VIEW_BUILT];
};

/*
 * The fields of a send call's headers that change from hit to hit, each a
 * big-endian half word (2 bytes) or word (4) of the built headers, as
 * magnet_sent_field() reads them from the record without building the
 * headers: IPv4's total length or IPv6's payload length; the source and
 * destination addresses (IPv4's one word, IPv6's four); the ports; UDP's
 * length.
 */
enum magnet_sent_field {
	MAGNET_SENT_NONE,
	MAGNET_SENT_IPLEN,
	MAGNET_SENT_SADDR,	/* + the word: 0 to 3 */
	MAGNET_SENT_DADDR = MAGNET_SENT_SADDR + 4,
	MAGNET_SENT_SPORT = MAGNET_SENT_DADDR + 4,
	MAGNET_SENT_DPORT,
	MAGNET_SENT_UDPLEN,
};

/**
 * struct magnet_sent - a send call's packet, its headers not built
 * @pk:		what the probe parsed (family, protocol, addresses, ports)
 * @len:	the IP packet's length where it is known (a UDP send call's)
 * @iphlen:	the IP header's (20 or 40)
 */
struct magnet_sent {
	const struct magnet_packet *pk;
	u32 len;
	u32 iphlen;
};

static inline u32 magnet_sent_be16(const void *v)
{
	const u8 *p = v;

	return (u32)p[0] << 8 | p[1];
}

static inline u32 magnet_sent_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

/*
 * Field @f (MAGNET_SENT_*) of @s, in host order: what the built headers
 * hold there (magnet_packet_built()). Any context.
 */
static __always_inline u32 magnet_sent_field(const struct magnet_sent *s,
					     unsigned int f)
{
	const struct magnet_packet *pk = s->pk;

	switch (f) {
	case MAGNET_SENT_SPORT:
		return magnet_sent_be16(&pk->sport);
	case MAGNET_SENT_DPORT:
		return magnet_sent_be16(&pk->dport);
	case MAGNET_SENT_IPLEN:	/* IPv6's counts no IP header */
		return (s->iphlen == 40 ? s->len - 40 : s->len) & 0xffff;
	case MAGNET_SENT_UDPLEN:
		return (s->len - s->iphlen) & 0xffff;
	default:
		if (f >= MAGNET_SENT_DADDR)
			return magnet_sent_be32(pk->daddr + 4 * (f - MAGNET_SENT_DADDR));
		return magnet_sent_be32(pk->saddr + 4 * (f - MAGNET_SENT_SADDR));
	}
}

/*
 * What a send call may not know yet of its packet's source: an
 * unconnected socket's address (the route chooses it later), an unbound
 * socket's port (chosen in the call).
 */
#define MAGNET_BUILT_SADDR_UNKNOWN	BIT(0)
#define MAGNET_BUILT_SPORT_UNKNOWN	BIT(1)
#define MAGNET_BUILT_UNKNOWNS		4	/* combinations of the two */

/*
 * The template of a shape's headers (IPv4, or IPv6), with the source's
 * fields in @unknown (MAGNET_BUILT_*_UNKNOWN) not known. Any context.
 */
void magnet_packet_template(bool ipv6, enum magnet_built_shape shape,
			    unsigned int unknown,
			    struct magnet_pkt_template *t);

/*
 * Where a hit is a send call's (a packet probe's, or a socket's) of one
 * of the shapes, its destination known: its headers built into
 * @v->built (and @v->nbuilt, @v->protocol), the bits it does not know
 * zero, unmarked (@v->unknown is not written), in the template's layout,
 * and in @unknown which of the source's fields are not known. Return:
 * the shape, or MAGNET_BUILT_NONE (@v and @unknown then undefined). Any
 * context.
 */
enum magnet_built_shape magnet_packet_built(const struct magnet_hit *hit,
					    struct magnet_pkt_view *v,
					    unsigned int *unknown);

#ifdef __KERNEL__
/*
 * A send call's address of zero (@len bytes): not chosen yet (an unbound
 * socket's source is picked by the route). Unknown, not zero.
 */
static __always_inline bool magnet_addr_unset(const u8 *addr, unsigned int len)
{
	u32 w[4];

	memcpy(w, addr, 4);
	if (len == 4)
		return !w[0];
	memcpy(w + 1, addr + 4, 12);
	return !(w[0] | w[1] | w[2] | w[3]);
}

/* A send call's IP length: UDP's one datagram; 0 for TCP (cut later). */
static __always_inline u32 magnet_sent_len(const struct magnet_packet *pk)
{
	if (pk->proto != IPPROTO_UDP)
		return 0;
	return (pk->family == AF_INET6 ? 40 : 20) + 8 + pk->len;
}

/*
 * The shape of the headers a send call's @pk builds (view_build() in the
 * core): where the destination is known (not zero) and the transport
 * header is built; in @unknown what of the source is not, in @s the
 * fields (@pk's length is known only for UDP).
 */
static __always_inline enum magnet_built_shape
magnet_sent_shape(const struct magnet_packet *pk, struct magnet_sent *s,
		  unsigned int *unknown)
{
	unsigned int alen = pk->family == AF_INET6 ? 16 : 4;

	if (!(pk->flags & MAGNET_PKT_ADDRS) || !pk->dport ||
	    magnet_addr_unset(pk->daddr, alen))
		return MAGNET_BUILT_NONE;
	*unknown = (magnet_addr_unset(pk->saddr, alen) ? MAGNET_BUILT_SADDR_UNKNOWN : 0) |
		   (pk->sport ? 0 : MAGNET_BUILT_SPORT_UNKNOWN);
	s->pk = pk;
	s->len = magnet_sent_len(pk);
	s->iphlen = alen == 16 ? 40 : 20;
	switch (pk->proto) {
	case IPPROTO_UDP:
		return MAGNET_BUILT_UDP;
	case IPPROTO_TCP:
		return MAGNET_BUILT_TCP;
	default:
		return MAGNET_BUILT_NONE;
	}
}

#endif /* __KERNEL__ */

/*
 * A big-endian word, half word or byte (@size 4, 2, 1) at @off (from the
 * network header) of @v's packet, in host order, into @val; into @unk the
 * bits of it the probe does not know (they read as zero). Any context.
 * Return: 0, or -ERANGE past the packet's end or where it cannot be read.
 */
int magnet_pkt_view_load(const struct magnet_pkt_view *v, u32 off, u32 size,
			 u32 *val, u32 *unk);

/*
 * Filter modules: predicate types for filter rules (see "Filtering and
 * sampling" in <uapi/linux/magnet.h>). filters/ in the source has two.
 */

/**
 * struct magnet_hit - one hit of an event, as a filter sees it
 * @event:	the event
 * @event_id:	its id
 * @cpu, @tgid, @tid: what the record header will say
 * @id:		the abstract id
 * @payload:	the payload, already cut to the event's snap length
 * @payload_size: its bytes
 * @object:	what the hit is about (see magnet_event_object_type()), or
 *		NULL; valid only during the call
 */
struct magnet_hit {
	struct magnet_event *event;
	u16 event_id;
	u32 cpu;
	u32 tgid;
	u32 tid;
	u64 id;
	const void *payload;
	u32 payload_size;
	const void *object;
};

#ifdef __KERNEL__
/* magnet_packet_sent()'s for a socket's hit (the core parses it). */
enum magnet_built_shape magnet_sock_sent(const struct magnet_hit *hit,
					 struct magnet_packet *room,
					 struct magnet_sent *s,
					 unsigned int *unknown);

/*
 * The same hits as magnet_packet_built()'s, their headers not built: in
 * @s what they would be built from (its @pk may point at @room, which
 * the caller keeps while it reads @s), and in @unknown which of the
 * source's fields are not known. Return: the shape, or MAGNET_BUILT_NONE
 * (@s and @unknown then undefined). Any context. Inline: a packet
 * probe's send call is read from the hit's payload (its record) with no
 * call into the core.
 */
static __always_inline enum magnet_built_shape
magnet_packet_sent(const struct magnet_hit *hit, struct magnet_packet *room,
		   struct magnet_sent *s, unsigned int *unknown)
{
	const struct magnet_packet *pk = hit->payload;

	if (!hit->object)
		return MAGNET_BUILT_NONE;
	if (magnet_event_object_type(hit->event) != MAGNET_OBJECT_PACKET)
		return magnet_sock_sent(hit, room, s, unknown);
	/* a send call's: neither the IP nor the TCP header is there */
	if (pk->flags & (MAGNET_PKT_DATA_NET | MAGNET_PKT_DATA_TRANSPORT))
		return MAGNET_BUILT_NONE;
	return magnet_sent_shape(pk, s, unknown);
}
#endif /* __KERNEL__ */

struct magnet_filter_rule;

/**
 * struct magnet_filter_ctx - a rule being made, for a type's create()
 * @rule:	the rule (for magnet_filter_attach())
 * @id:		its FILTER_ID
 * @event:	the event it is made on
 * @action:	the rule's action, MAGNET_FILTER_INCLUDE or _EXCLUDE
 * @config:	the FILTER_CONFIG nest as received (for repeated attributes),
 *		or NULL
 */
struct magnet_filter_ctx {
	struct magnet_filter_rule *rule;
	u32 id;
	struct magnet_event *event;
	u8 action;
	const struct nlattr *config;
};

struct nlattr;
struct netlink_ext_ack;
struct nla_policy;
struct sk_buff;

/* The type takes the records it matches (its rules are exclude rules). */
#define MAGNET_FILTER_TAKES	BIT(0)

/**
 * struct magnet_filter_type - a predicate that filter rules can use
 * @name:	what FILTER_TYPE says, unique
 * @policy:	attribute policy of its FILTER_CONFIG nest
 * @maxattr:	highest attribute in @policy
 * @flags:	MAGNET_FILTER_*
 * @create:	make the state of a new rule from its configuration (@tb,
 *		parsed with @policy; entries may be NULL). May call
 *		magnet_filter_attach(). Process context, under magnet's
 *		configuration lock: must not register events or types.
 *		Return the state or an ERR_PTR, with a message in @extack.
 * @match:	does the hit match? Probe context (any, NMI included), under
 *		RCU: no sleeping, no locks that a hit could already hold.
 * @fill_config: put the configuration into a FILTER_CONFIG nest (optional)
 * @fill_stats: put counters into a FILTER_STATS nest (optional)
 * @destroy:	free the state; called once no hit can be in @match.
 */
struct magnet_filter_type {
	const char *name;
	const struct nla_policy *policy;
	unsigned int maxattr;
	unsigned int flags;
	void *(*create)(struct magnet_filter_ctx *ctx, struct nlattr **tb,
			struct netlink_ext_ack *extack);
	bool (*match)(void *state, const struct magnet_hit *hit);
	int (*fill_config)(struct sk_buff *msg, void *state);
	int (*fill_stats)(struct sk_buff *msg, void *state);
	void (*destroy)(void *state);
	struct list_head node;	/* magnet's */
};

int magnet_filter_type_register(struct magnet_filter_type *type);
void magnet_filter_type_unregister(struct magnet_filter_type *type);
int magnet_filter_attach(struct magnet_filter_ctx *ctx, u16 event_id,
			 struct netlink_ext_ack *extack);

/*
 * A buffer of the caller's own, listed nowhere (e.g. a filter's staging
 * area): magnet_reserve()/magnet_log() write it, magnet_reader_open() reads
 * it, magnet_buffer_put() frees it.
 */
struct magnet_buffer *magnet_buffer_alloc(const char *name,
					  unsigned long ring_size,
					  enum magnet_full_mode mode);

#endif /* _LINUX_MAGNET_H */

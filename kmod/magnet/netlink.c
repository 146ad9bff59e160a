// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: the generic netlink family "magnet", the control plane.
 *
 * The messages, attributes and their ranges are documented in
 * <uapi/linux/magnet.h>. Each command has its own strict policy, so the
 * netlink core rejects unknown, mistyped and out-of-range attributes
 * before a handler runs; handlers check what a policy cannot express
 * (required attributes, combinations, powers of two) and say what was
 * wrong in the extended ack. Handlers validate everything before they
 * change anything.
 *
 * The family is not parallel_ops: the generic netlink mutex serialises
 * requests. magnet_events_lock and magnet_buffers_lock are still taken,
 * because other modules register events and readers open files outside
 * of it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "compat.h"
#include "magnet.h"

/* genl_ops.internal_flags: the command changes something. */
#define MAGNET_NL_ADMIN		BIT(0)

enum magnet_mcgrp {
	MAGNET_MCGRP_NOTIFY_IDX,
};

static struct genl_family magnet_family;

/* --- policies ------------------------------------------------------------- */

static struct netlink_range_validation buffer_size_range = {
	.min = MAGNET_BUFFER_SIZE_MIN,
	.max = MAGNET_BUFFER_SIZE_MAX,
};

static struct netlink_range_validation event_id_range = {
	.min = 1,
	.max = MAGNET_EVENT_ID_MAX,
};

static struct netlink_range_validation snaplen_range = {
	.max = MAGNET_RECORD_MAX,
};

static struct netlink_range_validation sample_interval_range = {
	.max = MAGNET_SAMPLE_INTERVAL_MAX,
};

#define POL_BUFFER_NAME	{ .type = NLA_NUL_STRING, .len = MAGNET_NAME_LEN - 1 }
#define POL_PROBE_ID	NLA_POLICY_FULL_RANGE(NLA_U16, &event_id_range)
#define POL_PROBE_NAME	{ .type = NLA_NUL_STRING, .len = MAGNET_NAME_LEN - 1 }
#define POL_FLAG_U8	NLA_POLICY_MAX(NLA_U8, 1)
#define POL_SNAPLEN	NLA_POLICY_FULL_RANGE(NLA_U32, &snaplen_range)
#define POL_SESSION	NLA_POLICY_MIN(NLA_U32, 1)

static const struct nla_policy buffer_get_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_BUFFER_NAME] = POL_BUFFER_NAME,
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy buffer_new_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_BUFFER_NAME] = POL_BUFFER_NAME,
	[MAGNET_A_BUFFER_SIZE] = NLA_POLICY_FULL_RANGE(NLA_U64,
						       &buffer_size_range),
	[MAGNET_A_BUFFER_MODE] = NLA_POLICY_MAX(NLA_U8,
						MAGNET_BUFFER_OVERWRITE),
	[MAGNET_A_OWNED] = { .type = NLA_FLAG },
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy probe_get_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_ID] = POL_PROBE_ID,
	[MAGNET_A_PROBE_NAME] = POL_PROBE_NAME,
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy probe_new_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_NAME] = POL_PROBE_NAME,
	[MAGNET_A_PROBE_KIND] = NLA_POLICY_MAX(NLA_U8,
					       MAGNET_PROBE_TRACEPOINT),
	[MAGNET_A_PROBE_TARGET] = { .type = NLA_NUL_STRING,
				    .len = MAGNET_TARGET_LEN - 1 },
	[MAGNET_A_PROBE_PREDEF] = { .type = NLA_NUL_STRING,
				    .len = MAGNET_NAME_LEN - 1 },
	[MAGNET_A_BUFFER_NAME] = POL_BUFFER_NAME,
	[MAGNET_A_PROBE_ARGS] = NLA_POLICY_MAX(NLA_U8, MAGNET_PROBE_ARGS_MAX),
	[MAGNET_A_PROBE_ID_ARG] = NLA_POLICY_MAX(NLA_U8,
						 MAGNET_PROBE_ARGS_MAX),
	[MAGNET_A_PROBE_SNAPLEN] = POL_SNAPLEN,
	[MAGNET_A_PROBE_ENABLED] = POL_FLAG_U8,
	[MAGNET_A_PROBE_NOTIFY] = POL_FLAG_U8,
	[MAGNET_A_OWNED] = { .type = NLA_FLAG },
	[MAGNET_A_PROBE_DISPATCH] = NLA_POLICY_MAX(NLA_U8,
						   MAGNET_DISPATCH_FTRACE),
	[MAGNET_A_SESSION] = POL_SESSION,
	[MAGNET_A_PROBE_PERIOD] = { .type = NLA_U64 },
	[MAGNET_A_PROBE_DEPTH] = { .type = NLA_U8 },
};

static const struct nla_policy probe_set_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_ID] = POL_PROBE_ID,
	[MAGNET_A_PROBE_NAME] = POL_PROBE_NAME,
	[MAGNET_A_PROBE_ENABLED] = POL_FLAG_U8,
	[MAGNET_A_PROBE_NOTIFY] = POL_FLAG_U8,
	[MAGNET_A_PROBE_SNAPLEN] = POL_SNAPLEN,
	[MAGNET_A_SAMPLE_EVERY] = { .type = NLA_U32 },
	[MAGNET_A_SAMPLE_INTERVAL] = NLA_POLICY_FULL_RANGE(NLA_U64,
							   &sample_interval_range),
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy filter_get_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_ID] = POL_PROBE_ID,
	[MAGNET_A_PROBE_NAME] = POL_PROBE_NAME,
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy filter_new_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_PROBE_ID] = POL_PROBE_ID,
	[MAGNET_A_PROBE_NAME] = POL_PROBE_NAME,
	[MAGNET_A_FILTER_ACTION] = NLA_POLICY_MAX(NLA_U8,
						  MAGNET_FILTER_EXCLUDE),
	[MAGNET_A_FILTER_CPUS] = { .type = NLA_BINARY,
				   .len = NR_CPUS / BITS_PER_BYTE + 1 },
	[MAGNET_A_FILTER_TGID] = { .type = NLA_U32 },
	[MAGNET_A_FILTER_TID] = { .type = NLA_U32 },
	[MAGNET_A_FILTER_ID_MIN] = { .type = NLA_U64 },
	[MAGNET_A_FILTER_ID_MAX] = { .type = NLA_U64 },
	[MAGNET_A_FILTER_IDS] = { .type = NLA_U64 },
	[MAGNET_A_FILTER_TYPE] = { .type = NLA_NUL_STRING,
				   .len = MAGNET_NAME_LEN - 1 },
	/* Validated by the filter type's own policy. */
	[MAGNET_A_FILTER_CONFIG] = { .type = NLA_NESTED },
	[MAGNET_A_SESSION] = POL_SESSION,
};

static const struct nla_policy filter_del_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_FILTER_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* Commands that take no attributes. */
static const struct nla_policy no_attr_policy[MAGNET_A_MAX + 1] = {
};

static const struct nla_policy catalog_get_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_CATALOG_RESOLVE] = { .type = NLA_FLAG },
};

static const struct nla_policy ledger_set_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_LEDGER_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[MAGNET_A_LEDGER_BY_TGID] = NLA_POLICY_MAX(NLA_U8, 1),
	[MAGNET_A_OWNED] = { .type = NLA_FLAG },
};

static const struct nla_policy acct_get_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_ACCT_PID] = NLA_POLICY_MIN(NLA_U32, 1),
};

static const struct nla_policy acct_set_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_ACCT_PID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MAGNET_A_ACCT_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[MAGNET_A_OWNED] = { .type = NLA_FLAG },
};

static const struct nla_policy session_del_policy[MAGNET_A_MAX + 1] = {
	[MAGNET_A_SESSION] = POL_SESSION,
};

/* --- helpers ----------------------------------------------------------------- */

/* Is attribute @type present? If not, say so (@msg, a literal). */
#define need_attr(info, type, msg) ({					\
	struct genl_info *__info = (info);				\
	bool __present = !!__info->attrs[type];				\
									\
	if (!__present) {						\
		NL_SET_ERR_MSG(__info->extack, msg);			\
		NL_SET_ERR_ATTR_MISS(__info->extack, NULL, type);	\
	}								\
	__present;							\
})

/* MAGNET_A_OWNED: the requesting socket, which the object will belong to. */
static u32 owner_of(struct genl_info *info)
{
	return nla_get_flag(info->attrs[MAGNET_A_OWNED]) ? info->snd_portid : 0;
}

/* The session a request's names are in: MAGNET_A_SESSION, or 0. */
static u32 session_of(struct nlattr **attrs)
{
	return attrs[MAGNET_A_SESSION] ? nla_get_u32(attrs[MAGNET_A_SESSION]) : 0;
}

/*
 * May the requesting socket make, change or remove objects of session
 * @session? Says why not in the extended ack.
 */
static int may_change(struct genl_info *info, u32 session)
{
	int err = magnet_session_check(session, info->snd_portid);

	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGNET_A_SESSION],
				    "no such session");
	else if (err == -EPERM)
		NL_SET_ERR_MSG(info->extack,
			       "that is in a session of another socket (magnetctl session list)");
	return err;
}

/* Where a new object of the request belongs: its session's, or its own. */
static u32 new_owner(struct genl_info *info)
{
	return session_of(info->attrs) ? info->snd_portid : owner_of(info);
}

/* An object's MAGNET_A_SESSION in replies: absent for the default. */
static int put_session(struct sk_buff *skb, u32 session)
{
	return session ? nla_put_u32(skb, MAGNET_A_SESSION, session) : 0;
}

/*
 * The probe a request names by MAGNET_A_PROBE_ID (any session's) or
 * MAGNET_A_PROBE_NAME (in the request's session).
 */
static struct magnet_event *probe_lookup(struct genl_info *info)
{
	struct nlattr *id = info->attrs[MAGNET_A_PROBE_ID];
	struct nlattr *name = info->attrs[MAGNET_A_PROBE_NAME];
	struct magnet_event *ev;

	lockdep_assert_held(&magnet_events_lock);
	if (!id && !name) {
		NL_SET_ERR_MSG(info->extack,
			       "name the probe: MAGNET_A_PROBE_ID or MAGNET_A_PROBE_NAME");
		NL_SET_ERR_ATTR_MISS(info->extack, NULL, MAGNET_A_PROBE_ID);
		return ERR_PTR(-EINVAL);
	}
	ev = magnet_event_find(id ? nla_get_u16(id) : 0,
			       session_of(info->attrs),
			       name ? nla_data(name) : NULL);
	if (!ev || (id && name && strcmp(ev->name, nla_data(name)))) {
		NL_SET_ERR_MSG_ATTR(info->extack, id ?: name,
				    "no probe with this id or name");
		return ERR_PTR(-ENOENT);
	}
	return ev;
}

/* --- buffers ----------------------------------------------------------------- */

static int fill_buffer(struct sk_buff *skb, struct magnet_buffer *buf,
		       u32 portid, u32 seq, int flags)
{
	void *hdr = genlmsg_put(skb, portid, seq, &magnet_family, flags,
				MAGNET_CMD_BUFFER_GET);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_A_BUFFER_NAME, buf->name) ||
	    nla_put_u64_64bit(skb, MAGNET_A_BUFFER_SIZE, buf->ring_size,
			      MAGNET_A_PAD) ||
	    nla_put_u8(skb, MAGNET_A_BUFFER_MODE,
		       buf->mode == MAGNET_FULL_OVERWRITE ?
		       MAGNET_BUFFER_OVERWRITE : MAGNET_BUFFER_DROP) ||
	    nla_put_u32(skb, MAGNET_A_BUFFER_CPUS, num_possible_cpus()) ||
	    nla_put_u32(skb, MAGNET_A_BUFFER_MAX_RECORD, buf->max_record) ||
	    nla_put_u32(skb, MAGNET_A_BUFFER_PROBES, buf->events) ||
	    (test_bit(0, &buf->reader_busy) &&
	     nla_put_flag(skb, MAGNET_A_BUFFER_READER)) ||
	    (buf->owner_portid && nla_put_flag(skb, MAGNET_A_OWNED)) ||
	    put_session(skb, buf->session)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* The @idx-th listed buffer, under magnet_buffers_lock. */
static struct magnet_buffer *buffer_at(long idx)
{
	struct magnet_buffer *buf;

	lockdep_assert_held(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node)
		if (!idx--)
			return buf;
	return NULL;
}

static int buffer_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct magnet_buffer *buf;
	int err = 0;

	mutex_lock(&magnet_buffers_lock);
	while ((buf = buffer_at(cb->args[0]))) {
		err = fill_buffer(skb, buf, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			break;
		cb->args[0]++;
	}
	mutex_unlock(&magnet_buffers_lock);
	/* A full skb ends this part of the dump; the next part goes on. */
	return err == -EMSGSIZE && skb->len ? skb->len : err ?: skb->len;
}

static int buffer_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct magnet_buffer *buf;
	struct sk_buff *msg;
	int err = -ENOENT;

	if (!need_attr(info, MAGNET_A_BUFFER_NAME,
		       "name the buffer (or ask for a dump)"))
		return -EINVAL;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node) {
		if (buf->session == session_of(info->attrs) &&
		    !strcmp(buf->name,
			    nla_data(info->attrs[MAGNET_A_BUFFER_NAME]))) {
			err = fill_buffer(msg, buf, info->snd_portid,
					  info->snd_seq, 0);
			break;
		}
	}
	mutex_unlock(&magnet_buffers_lock);
	if (err) {
		if (err == -ENOENT)
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[MAGNET_A_BUFFER_NAME],
					    "no buffer of that name");
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int buffer_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *name = info->attrs[MAGNET_A_BUFFER_NAME];
	struct nlattr *mode = info->attrs[MAGNET_A_BUFFER_MODE];
	u64 size;
	int err;

	if (!need_attr(info, MAGNET_A_BUFFER_NAME, "a buffer needs a name") ||
	    !need_attr(info, MAGNET_A_BUFFER_SIZE,
		       "a buffer needs a size (bytes per CPU)"))
		return -EINVAL;
	if (!magnet_name_valid(nla_data(name))) {
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "a name has 1-31 characters, not all digits, no '/' or white space");
		return -EINVAL;
	}
	size = nla_get_u64(info->attrs[MAGNET_A_BUFFER_SIZE]);
	if (!magnet_buffer_size_valid(size)) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[MAGNET_A_BUFFER_SIZE],
				    "the size must be a power of two");
		return -EINVAL;
	}
	err = may_change(info, session_of(info->attrs));
	if (err)
		return err;
	err = magnet_buffer_create(nla_data(name), size,
				   mode && nla_get_u8(mode) ==
				   MAGNET_BUFFER_OVERWRITE ?
				   MAGNET_FULL_OVERWRITE : MAGNET_FULL_DROP,
				   new_owner(info), session_of(info->attrs));
	if (err == -EEXIST)
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "a buffer of that name exists");
	else if (err == -ENOSPC)
		NL_SET_ERR_MSG(info->extack,
			       "the session has max_session_buffers buffers (a module parameter)");
	else if (err == -E2BIG)
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[MAGNET_A_BUFFER_SIZE],
				    "all buffers together would exceed the module's max_memory_mb");
	else if (err)
		NL_SET_ERR_MSG(info->extack, "cannot create the buffer");
	return err;
}

static int buffer_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *name = info->attrs[MAGNET_A_BUFFER_NAME];
	int err;

	if (!need_attr(info, MAGNET_A_BUFFER_NAME, "name the buffer"))
		return -EINVAL;
	err = may_change(info, session_of(info->attrs));
	if (err)
		return err;
	err = magnet_buffer_remove(session_of(info->attrs), nla_data(name));
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "no buffer of that name");
	else if (err == -EBUSY)
		NL_SET_ERR_MSG_ATTR(info->extack, name,
				    "probes log into this buffer: remove them first");
	return err;
}

/* --- probes ------------------------------------------------------------------ */

static int put_probe_stats(struct sk_buff *skb, struct magnet_event *ev)
{
	struct magnet_event_totals s;
	struct nlattr *nest;

	magnet_event_stats_sum(ev, &s);
	nest = nla_nest_start(skb, MAGNET_A_PROBE_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, MAGNET_STAT_HITS, s.hits,
			      MAGNET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_STAT_LOGGED, s.logged,
			      MAGNET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_STAT_FILTERED, s.filtered,
			      MAGNET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_STAT_SAMPLED, s.sampled,
			      MAGNET_STAT_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_STAT_LOST, s.lost,
			      MAGNET_STAT_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* A probe's description; @full adds its configuration to the counters. */
static int fill_probe(struct sk_buff *skb, struct magnet_event *ev, u8 cmd,
		      bool full, u32 portid, u32 seq, int flags)
{
	const struct magnet_predef *predef = magnet_probe_predef(ev);
	const char *target = magnet_probe_target(ev);
	void *hdr = genlmsg_put(skb, portid, seq, &magnet_family, flags, cmd);
	int dispatch = magnet_probe_dispatch(ev);
	u8 nargs, id_arg, depth;
	u64 period;

	if (!hdr)
		return -EMSGSIZE;
	magnet_probe_args(ev, &nargs, &id_arg);
	if (nla_put_u16(skb, MAGNET_A_PROBE_ID, ev->id) ||
	    nla_put_string(skb, MAGNET_A_PROBE_NAME, ev->name) ||
	    nla_put_u64_64bit(skb, MAGNET_A_PROBE_MISSED,
			      magnet_probe_missed(ev), MAGNET_A_PAD) ||
	    put_probe_stats(skb, ev))
		goto cancel;
	if (full &&
	    (nla_put_u8(skb, MAGNET_A_PROBE_KIND, ev->kind) ||
	     (target && nla_put_string(skb, MAGNET_A_PROBE_TARGET, target)) ||
	     (predef &&
	      nla_put_string(skb, MAGNET_A_PROBE_PREDEF, predef->name)) ||
	     nla_put_string(skb, MAGNET_A_PROBE_OWNER,
			    ev->owner ? module_name(ev->owner) : "kernel") ||
	     nla_put_string(skb, MAGNET_A_BUFFER_NAME, ev->buf->name) ||
	     nla_put_u8(skb, MAGNET_A_PROBE_ARGS, nargs) ||
	     nla_put_u8(skb, MAGNET_A_PROBE_ID_ARG, id_arg) ||
	     nla_put_u32(skb, MAGNET_A_PROBE_SNAPLEN, ev->snaplen) ||
	     nla_put_u8(skb, MAGNET_A_PROBE_ENABLED, ev->enabled) ||
	     nla_put_u8(skb, MAGNET_A_PROBE_NOTIFY, ev->notify) ||
	     nla_put_u32(skb, MAGNET_A_SAMPLE_EVERY, ev->sample_every) ||
	     nla_put_u64_64bit(skb, MAGNET_A_SAMPLE_INTERVAL,
			       ev->sample_interval, MAGNET_A_PAD) ||
	     (ev->owner_portid && nla_put_flag(skb, MAGNET_A_OWNED)) ||
	     put_session(skb, ev->session) ||
	     (dispatch >= 0 &&
	      nla_put_u8(skb, MAGNET_A_PROBE_DISPATCH, dispatch)) ||
	     (magnet_probe_sampler(ev, &period, &depth) &&
	      (nla_put_u64_64bit(skb, MAGNET_A_PROBE_PERIOD, period,
				 MAGNET_A_PAD) ||
	       nla_put_u8(skb, MAGNET_A_PROBE_DEPTH, depth)))))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* Dump probes from id cb->args[0] on; @full as for fill_probe(). */
static int dump_probes(struct sk_buff *skb, struct netlink_callback *cb,
		       u8 cmd, bool full, long *cursor)
{
	struct magnet_event *ev;
	u16 id = max(*cursor, 1L);
	int err = 0;

	mutex_lock(&magnet_events_lock);
	while (id <= MAGNET_EVENT_ID_MAX && (ev = magnet_event_next(&id))) {
		err = fill_probe(skb, ev, cmd, full,
				 NETLINK_CB(cb->skb).portid,
				 cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (err)
			break;
		*cursor = ++id;
	}
	if (!err)
		*cursor = MAGNET_EVENT_ID_MAX + 1;
	mutex_unlock(&magnet_events_lock);
	return err;
}

static int probe_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	int err = dump_probes(skb, cb, MAGNET_CMD_PROBE_GET, true,
			      &cb->args[0]);

	return err == -EMSGSIZE && skb->len ? skb->len : err ?: skb->len;
}

static int reply_probe(struct genl_info *info, struct magnet_event *ev, u8 cmd)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	int err;

	if (!msg)
		return -ENOMEM;
	err = fill_probe(msg, ev, cmd, true, info->snd_portid, info->snd_seq,
			 0);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return genlmsg_reply(msg, info);
}

static int probe_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct magnet_event *ev;
	int err;

	mutex_lock(&magnet_events_lock);
	ev = probe_lookup(info);
	err = IS_ERR(ev) ? PTR_ERR(ev) :
			   reply_probe(info, ev, MAGNET_CMD_PROBE_GET);
	mutex_unlock(&magnet_events_lock);
	return err;
}

static int probe_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct magnet_probe_spec spec = {
		.buffer = "default",
		.enabled = true,
		.period = MAGNET_SAMPLE_PERIOD_DEFAULT,
		.depth = MAGNET_SAMPLE_DEPTH_DEFAULT,
	};
	struct magnet_event *ev;
	int err;

	if (!need_attr(info, MAGNET_A_PROBE_NAME, "a probe needs a name"))
		return -EINVAL;
	spec.name = nla_data(a[MAGNET_A_PROBE_NAME]);
	if (!magnet_name_valid(spec.name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, a[MAGNET_A_PROBE_NAME],
				    "a name has 1-31 characters, not all digits, no '/' or white space");
		return -EINVAL;
	}
	if (a[MAGNET_A_PROBE_PREDEF]) {
		if (a[MAGNET_A_PROBE_KIND] || a[MAGNET_A_PROBE_TARGET]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[MAGNET_A_PROBE_KIND] ?:
					    a[MAGNET_A_PROBE_TARGET],
					    "a predefined probe has its own kind and target");
			return -EINVAL;
		}
		spec.predef = nla_data(a[MAGNET_A_PROBE_PREDEF]);
	} else {
		if (!need_attr(info, MAGNET_A_PROBE_KIND,
			       "give a predefined probe or a kind and a target") ||
		    !need_attr(info, MAGNET_A_PROBE_TARGET,
			       "give the symbol or tracepoint to probe"))
			return -EINVAL;
		spec.kind = nla_get_u8(a[MAGNET_A_PROBE_KIND]);
		spec.target = nla_data(a[MAGNET_A_PROBE_TARGET]);
	}
	if (a[MAGNET_A_BUFFER_NAME])
		spec.buffer = nla_data(a[MAGNET_A_BUFFER_NAME]);
	if (a[MAGNET_A_PROBE_ARGS])
		spec.nargs = nla_get_u8(a[MAGNET_A_PROBE_ARGS]);
	if (a[MAGNET_A_PROBE_ID_ARG])
		spec.id_arg = nla_get_u8(a[MAGNET_A_PROBE_ID_ARG]);
	if (a[MAGNET_A_PROBE_SNAPLEN])
		spec.snaplen = nla_get_u32(a[MAGNET_A_PROBE_SNAPLEN]);
	if (a[MAGNET_A_PROBE_ENABLED])
		spec.enabled = nla_get_u8(a[MAGNET_A_PROBE_ENABLED]);
	if (a[MAGNET_A_PROBE_NOTIFY])
		spec.notify = nla_get_u8(a[MAGNET_A_PROBE_NOTIFY]);
	if (a[MAGNET_A_PROBE_DISPATCH])
		spec.dispatch = nla_get_u8(a[MAGNET_A_PROBE_DISPATCH]);
	if (a[MAGNET_A_PROBE_PERIOD])
		spec.period = nla_get_u64(a[MAGNET_A_PROBE_PERIOD]);
	if (a[MAGNET_A_PROBE_DEPTH])
		spec.depth = nla_get_u8(a[MAGNET_A_PROBE_DEPTH]);
	spec.sampler = a[MAGNET_A_PROBE_PERIOD] || a[MAGNET_A_PROBE_DEPTH];
	spec.session = session_of(a);
	spec.owner_portid = new_owner(info);
	err = may_change(info, spec.session);
	if (err)
		return err;

	mutex_lock(&magnet_events_lock);
	ev = magnet_probe_create(&spec, info->extack);
	if (IS_ERR(ev)) {
		err = PTR_ERR(ev);
	} else {
		err = reply_probe(info, ev, MAGNET_CMD_PROBE_NEW);
		/* No reply, no probe: the caller cannot know its id. */
		if (err)
			magnet_probe_destroy(ev);
	}
	mutex_unlock(&magnet_events_lock);
	return err;
}

static int probe_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct magnet_event *ev;
	int err = 0;

	mutex_lock(&magnet_events_lock);
	ev = probe_lookup(info);
	if (IS_ERR(ev)) {
		err = PTR_ERR(ev);
	} else if (may_change(info, ev->session)) {
		err = -EPERM;
	} else if (ev->kind == MAGNET_PROBE_EXTERNAL) {
		NL_SET_ERR_MSG(info->extack,
			       "this event belongs to another module: it goes when that module unregisters it");
		err = -EPERM;
	} else {
		magnet_probe_destroy(ev);
	}
	mutex_unlock(&magnet_events_lock);
	return err;
}

static int probe_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	bool sampling = a[MAGNET_A_SAMPLE_EVERY] || a[MAGNET_A_SAMPLE_INTERVAL];
	struct magnet_gate *gate = NULL;
	struct magnet_event *ev;
	u32 every = 0;
	u64 interval = 0;
	int err = 0;

	mutex_lock(&magnet_events_lock);
	ev = probe_lookup(info);
	if (IS_ERR(ev)) {
		err = PTR_ERR(ev);
		goto out;
	}
	err = may_change(info, ev->session);
	if (err)
		goto out;
	/* The changes that can fail go first, undone if the next one fails. */
	if (sampling) {
		every = a[MAGNET_A_SAMPLE_EVERY] ?
			nla_get_u32(a[MAGNET_A_SAMPLE_EVERY]) : ev->sample_every;
		interval = a[MAGNET_A_SAMPLE_INTERVAL] ?
			   nla_get_u64(a[MAGNET_A_SAMPLE_INTERVAL]) :
			   ev->sample_interval;
		gate = magnet_sampling_prepare(ev, every, interval);
		if (IS_ERR(gate)) {
			err = PTR_ERR(gate);
			goto out;
		}
	}
	if (a[MAGNET_A_PROBE_ENABLED]) {
		err = magnet_event_set_enabled(ev,
					       nla_get_u8(a[MAGNET_A_PROBE_ENABLED]));
		if (err) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    a[MAGNET_A_PROBE_ENABLED],
					    "the probe could not be enabled");
			kfree(gate);	/* never published */
			goto out;
		}
	}
	if (a[MAGNET_A_PROBE_NOTIFY])
		WRITE_ONCE(ev->notify, nla_get_u8(a[MAGNET_A_PROBE_NOTIFY]));
	if (a[MAGNET_A_PROBE_SNAPLEN])
		WRITE_ONCE(ev->snaplen, nla_get_u32(a[MAGNET_A_PROBE_SNAPLEN]));
	if (sampling)
		magnet_sampling_set(ev, gate, every, interval);
out:
	mutex_unlock(&magnet_events_lock);
	return err;
}

/* --- filters ------------------------------------------------------------------ */

static int fill_filter(struct sk_buff *skb, struct magnet_filter_rule *r,
		       u8 cmd, u32 portid, u32 seq, int flags)
{
	struct magnet_event *ev = magnet_filter_event(r);
	void *hdr = genlmsg_put(skb, portid, seq, &magnet_family, flags, cmd);

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u16(skb, MAGNET_A_PROBE_ID, ev->id) ||
	    nla_put_string(skb, MAGNET_A_PROBE_NAME, ev->name) ||
	    put_session(skb, ev->session) ||
	    magnet_filter_fill(skb, r)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Rules from id cb->args[0] on, those of one probe if the request names one. */
static int filter_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct nlattr **attrs = magnet_genl_dump_attrs(cb);
	struct nlattr *pid = attrs[MAGNET_A_PROBE_ID];
	struct nlattr *pname = attrs[MAGNET_A_PROBE_NAME];
	struct magnet_filter_rule *r;
	u32 id = max(cb->args[0], 1L);
	int err = 0;

	mutex_lock(&magnet_events_lock);
	if (!cb->args[0] && (pid || pname) &&
	    !magnet_event_find(pid ? nla_get_u16(pid) : 0, session_of(attrs),
			       pname ? nla_data(pname) : NULL)) {
		NL_SET_ERR_MSG_ATTR(cb->extack, pid ?: pname,
				    "no probe with this id or name");
		err = -ENOENT;
		goto out;
	}
	while ((r = magnet_filter_next(&id))) {
		struct magnet_event *ev = magnet_filter_event(r);

		if ((!pid || ev->id == nla_get_u16(pid)) &&
		    (!pname || (ev->session == session_of(attrs) &&
				!strcmp(ev->name, nla_data(pname))))) {
			err = fill_filter(skb, r, MAGNET_CMD_FILTER_GET,
					  NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI);
			if (err)
				break;
		}
		cb->args[0] = ++id;
	}
out:
	mutex_unlock(&magnet_events_lock);
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static int filter_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct magnet_event *ev;
	struct sk_buff *msg;
	void *hdr;
	int id;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&magnet_events_lock);
	ev = probe_lookup(info);
	if (IS_ERR(ev)) {
		id = PTR_ERR(ev);
		goto fail;
	}
	id = may_change(info, ev->session);
	if (id)
		goto fail;
	id = magnet_filter_new(ev, info);
	if (id < 0)
		goto fail;
	hdr = genlmsg_put_reply(msg, info, &magnet_family, 0,
				MAGNET_CMD_FILTER_NEW);
	if (!hdr || nla_put_u32(msg, MAGNET_A_FILTER_ID, id)) {
		/* No reply, no rule: the caller could not remove it. */
		magnet_filter_del(id);
		id = -EMSGSIZE;
		goto fail;
	}
	mutex_unlock(&magnet_events_lock);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

fail:
	mutex_unlock(&magnet_events_lock);
	nlmsg_free(msg);
	return id;
}

static int filter_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	struct magnet_filter_rule *r;
	u32 id;

	if (!need_attr(info, MAGNET_A_FILTER_ID, "name the rule: MAGNET_A_FILTER_ID"))
		return -EINVAL;
	id = nla_get_u32(info->attrs[MAGNET_A_FILTER_ID]);
	mutex_lock(&magnet_events_lock);
	/* (rule ids are below INT_MAX: an idr's, which warns beyond it) */
	r = id <= INT_MAX ? magnet_filter_next(&id) : NULL;
	if (r && id == nla_get_u32(info->attrs[MAGNET_A_FILTER_ID])) {
		err = may_change(info, magnet_filter_event(r)->session);
		if (!err)
			err = magnet_filter_del(id);
	} else {
		err = -ENOENT;
	}
	mutex_unlock(&magnet_events_lock);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGNET_A_FILTER_ID],
				    "no filter rule with this id");
	return err;
}

/* --- statistics ------------------------------------------------------------- */

static int put_cpu_stats(struct sk_buff *skb, struct magnet_ring *ring)
{
	struct nlattr *nest = nla_nest_start(skb, MAGNET_A_BUFFER_CPU);

	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, MAGNET_CPU_ID, ring->cpu) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_PRODUCED,
			      magnet_ring_produced(ring), MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_WRITTEN,
			      local_read(&ring->written), MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_READ, READ_ONCE(ring->read),
			      MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_LOST, magnet_ring_lost(ring),
			      MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_DROPPED,
			      local_read(&ring->dropped), MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_OVERWRITTEN,
			      local_read(&ring->overwritten), MAGNET_CPU_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_CPU_DISCARDED,
			      READ_ONCE(ring->discarded), MAGNET_CPU_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_buffer_stats(struct sk_buff *skb, struct magnet_buffer *buf,
			     u32 portid, u32 seq)
{
	void *hdr = genlmsg_put(skb, portid, seq, &magnet_family, NLM_F_MULTI,
				MAGNET_CMD_STATS_GET);
	unsigned int cpu;

	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, MAGNET_A_BUFFER_NAME, buf->name))
		goto cancel;
	for_each_possible_cpu(cpu)
		if (put_cpu_stats(skb, buf->rings[cpu]))
			goto cancel;
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int fill_notify_stats(struct sk_buff *skb, u32 portid, u32 seq)
{
	void *hdr = genlmsg_put(skb, portid, seq, &magnet_family, NLM_F_MULTI,
				MAGNET_CMD_STATS_GET);
	u64 sent, dropped;
	u32 rate;

	if (!hdr)
		return -EMSGSIZE;
	magnet_notify_counters(&sent, &dropped, &rate);
	if (nla_put_u64_64bit(skb, MAGNET_A_NOTIFY_SENT, sent, MAGNET_A_PAD) ||
	    nla_put_u64_64bit(skb, MAGNET_A_NOTIFY_DROPPED, dropped,
			      MAGNET_A_PAD) ||
	    nla_put_u32(skb, MAGNET_A_NOTIFY_RATE, rate)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: phase (probes, buffers, notify, done); [1]: cursor. */
enum { STATS_PROBES, STATS_BUFFERS, STATS_NOTIFY, STATS_DONE };

static int stats_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 portid = NETLINK_CB(cb->skb).portid;
	u32 seq = cb->nlh->nlmsg_seq;
	struct magnet_buffer *buf;
	int err = 0;

	if (cb->args[0] == STATS_PROBES) {
		err = dump_probes(skb, cb, MAGNET_CMD_STATS_GET, false,
				  &cb->args[1]);
		if (err)
			goto out;
		cb->args[0] = STATS_BUFFERS;
		cb->args[1] = 0;
	}
	if (cb->args[0] == STATS_BUFFERS) {
		mutex_lock(&magnet_buffers_lock);
		while ((buf = buffer_at(cb->args[1]))) {
			err = fill_buffer_stats(skb, buf, portid, seq);
			if (err)
				break;
			cb->args[1]++;
		}
		mutex_unlock(&magnet_buffers_lock);
		if (err)
			goto out;
		cb->args[0] = STATS_NOTIFY;
	}
	if (cb->args[0] == STATS_NOTIFY) {
		err = fill_notify_stats(skb, portid, seq);
		if (err)
			goto out;
		cb->args[0] = STATS_DONE;
	}
out:
	return err == -EMSGSIZE && skb->len ? skb->len : err ?: skb->len;
}

/* --- catalog ------------------------------------------------------------------ */

/*
 * The catalog; with CATALOG_RESOLVE, each entry with what this kernel
 * uses for it (an entry that did not fit in one message is resolved again
 * for the next).
 */
static int catalog_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	bool resolve = magnet_genl_dump_attrs(cb)[MAGNET_A_CATALOG_RESOLVE];
	const struct magnet_predef *p;
	char used[MAGNET_TARGET_LEN];
	bool have;
	void *hdr;

	/* Resolving registers kprobes: not for everyone, as changes. */
	if (resolve && !netlink_capable(cb->skb, CAP_NET_ADMIN) &&
	    !netlink_capable(cb->skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(cb->extack,
			       "resolving the catalog's targets needs CAP_NET_ADMIN or CAP_SYS_ADMIN");
		return -EPERM;
	}
	for (; (p = magnet_predef_at(cb->args[0])); cb->args[0]++) {
		have = resolve && !magnet_predef_resolve(p, used);
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &magnet_family,
				  NLM_F_MULTI, MAGNET_CMD_CATALOG_GET);
		if (!hdr)
			break;
		if (nla_put_string(skb, MAGNET_A_PROBE_PREDEF, p->name) ||
		    nla_put_u8(skb, MAGNET_A_PROBE_KIND, p->kind) ||
		    nla_put_string(skb, MAGNET_A_PROBE_TARGET, p->target) ||
		    nla_put_string(skb, MAGNET_A_PROBE_DESC, p->desc) ||
		    (have &&
		     nla_put_string(skb, MAGNET_A_PROBE_TARGET_USED, used))) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	return skb->len;
}

/* --- notifications ------------------------------------------------------------ */

/**
 * magnet_notify_send - multicast one notification
 * @rec:	the record's header and the start of its payload
 * @len:	bytes at @rec
 *
 * Process context. Return: 0, -ESRCH if nobody listens, or another
 * negative errno if the message was not delivered to every listener.
 */
int magnet_notify_send(const struct magnet_record *rec, u32 len)
{
	struct magnet_event *ev;
	struct sk_buff *msg;
	void *hdr;

	if (!genl_has_listeners(&magnet_family, &init_net,
				MAGNET_MCGRP_NOTIFY_IDX))
		return -ESRCH;
	msg = genlmsg_new(nla_total_size(sizeof(u16)) +	/* PROBE_ID */
			  nla_total_size(MAGNET_NAME_LEN) +	/* PROBE_NAME */
			  nla_total_size(len),			/* NOTIFY_RECORD */
			  GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put(msg, 0, 0, &magnet_family, 0, MAGNET_CMD_NOTIFY);
	if (!hdr)
		goto nospace;
	if (nla_put_u16(msg, MAGNET_A_PROBE_ID, rec->event) ||
	    nla_put(msg, MAGNET_A_NOTIFY_RECORD, len, rec))
		goto nospace;
	mutex_lock(&magnet_events_lock);
	ev = magnet_event_find(rec->event, 0, NULL);
	if (ev && nla_put_string(msg, MAGNET_A_PROBE_NAME, ev->name)) {
		mutex_unlock(&magnet_events_lock);
		goto nospace;
	}
	mutex_unlock(&magnet_events_lock);
	genlmsg_end(msg, hdr);
	return genlmsg_multicast(&magnet_family, msg, 0,
				 MAGNET_MCGRP_NOTIFY_IDX, GFP_KERNEL);

nospace:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/* --- sessions ----------------------------------------------------------------- */

/* What session @session has: buffers, probes. */
static void session_counts(u32 session, u32 *buffers, u32 *probes)
{
	mutex_lock(&magnet_buffers_lock);
	*buffers = magnet_buffers_in_session(session);
	mutex_unlock(&magnet_buffers_lock);
	mutex_lock(&magnet_events_lock);
	*probes = magnet_events_in_session(session);
	mutex_unlock(&magnet_events_lock);
}

static int session_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct magnet_session_info si;
	u32 buffers, probes;
	void *hdr;

	while (magnet_session_at(cb->args[0], &si)) {
		session_counts(si.id, &buffers, &probes);
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &magnet_family,
				  NLM_F_MULTI, MAGNET_CMD_SESSION_GET);
		if (!hdr)
			break;
		if (nla_put_u32(skb, MAGNET_A_SESSION, si.id) ||
		    nla_put_u32(skb, MAGNET_A_SESSION_UID, si.uid) ||
		    nla_put_u32(skb, MAGNET_A_SESSION_PID, si.tgid) ||
		    nla_put_u32(skb, MAGNET_A_SESSION_BUFFERS, buffers) ||
		    nla_put_u32(skb, MAGNET_A_SESSION_PROBES, probes)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0]++;
	}
	return skb->len;
}

static int session_new_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	void *hdr;
	u32 id;
	int err;

	if (!msg)
		return -ENOMEM;
	err = magnet_session_new(info->snd_portid, &id);
	if (err) {
		if (err == -EUSERS)
			NL_SET_ERR_MSG(info->extack,
				       "this user has max_sessions sessions (a module parameter)");
		nlmsg_free(msg);
		return err;
	}
	hdr = genlmsg_put_reply(msg, info, &magnet_family, 0,
				MAGNET_CMD_SESSION_NEW);
	if (!hdr || nla_put_u32(msg, MAGNET_A_SESSION, id)) {
		/* No reply, no session: the caller could not use it. */
		magnet_session_del(id, info->snd_portid, false);
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int session_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	if (!need_attr(info, MAGNET_A_SESSION, "name the session"))
		return -EINVAL;
	err = magnet_session_del(session_of(info->attrs), info->snd_portid,
				 netlink_capable(skb, CAP_SYS_ADMIN));
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGNET_A_SESSION],
				    "no such session");
	else if (err == -EPERM)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MAGNET_A_SESSION],
				    "the session belongs to another socket (ending it needs CAP_SYS_ADMIN)");
	return err;
}

/* --- the ledger --------------------------------------------------------------- */

static int ledger_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return magnet_ledger_dump(skb, cb, &magnet_family);
}

static int ledger_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *by_tgid = info->attrs[MAGNET_A_LEDGER_BY_TGID];
	struct nlattr *owned = info->attrs[MAGNET_A_OWNED];
	bool on;

	if (!need_attr(info, MAGNET_A_LEDGER_ENABLED, "say on (1) or off (0)"))
		return -EINVAL;
	on = nla_get_u8(info->attrs[MAGNET_A_LEDGER_ENABLED]);
	if (by_tgid && !on) {
		NL_SET_ERR_MSG_ATTR(info->extack, by_tgid,
				    "rows per thread group are for turning it on");
		return -EINVAL;
	}
	if (owned && !on) {
		NL_SET_ERR_MSG_ATTR(info->extack, owned,
				    "owned is for turning it on");
		return -EINVAL;
	}
	return magnet_ledger_set(on, by_tgid && nla_get_u8(by_tgid),
				 owned ? info->snd_portid : 0, info->extack);
}

/* --- per-call accounting of a process ---------------------------------------- */

/* (pre_doit is not called for a dump: its check is here) */
static int acct_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	if (!netlink_capable(cb->skb, CAP_NET_ADMIN) &&
	    !netlink_capable(cb->skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(cb->extack,
			       "reading a process's system calls needs CAP_NET_ADMIN or CAP_SYS_ADMIN");
		return -EPERM;
	}
	return magnet_acct_watch_dump(skb, cb, &magnet_family);
}

static int acct_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *owned = info->attrs[MAGNET_A_OWNED];
	bool on;

	if (!need_attr(info, MAGNET_A_ACCT_PID, "say which process (its pid)") ||
	    !need_attr(info, MAGNET_A_ACCT_ENABLED,
		       "say watch (1) or stop (0)"))
		return -EINVAL;
	on = nla_get_u8(info->attrs[MAGNET_A_ACCT_ENABLED]);
	if (owned && !on) {
		NL_SET_ERR_MSG_ATTR(info->extack, owned,
				    "owned is for starting a watch");
		return -EINVAL;
	}
	return magnet_acct_watch_set(nla_get_u32(info->attrs[MAGNET_A_ACCT_PID]),
				     on, owned ? info->snd_portid : 0,
				     info->extack);
}

/* --- family ------------------------------------------------------------------- */

static int magnet_pre_doit(const struct magnet_genl_pre_doit_ops *ops,
			   struct sk_buff *skb, struct genl_info *info)
{
	if ((ops->internal_flags & MAGNET_NL_ADMIN) &&
	    !netlink_capable(skb, CAP_NET_ADMIN) &&
	    !netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack,
			       "changing magnet needs CAP_NET_ADMIN or CAP_SYS_ADMIN");
		return -EPERM;
	}
	return 0;
}

#define OP_POLICY(p)	.policy = p, .maxattr = MAGNET_A_MAX

static const struct genl_ops magnet_ops[] = {
	{ .cmd = MAGNET_CMD_BUFFER_GET, .doit = buffer_get_doit,
	  .dumpit = buffer_get_dumpit, OP_POLICY(buffer_get_policy) },
	{ .cmd = MAGNET_CMD_BUFFER_NEW, .doit = buffer_new_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(buffer_new_policy) },
	{ .cmd = MAGNET_CMD_BUFFER_DEL, .doit = buffer_del_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(buffer_get_policy) },
	{ .cmd = MAGNET_CMD_PROBE_GET, .doit = probe_get_doit,
	  .dumpit = probe_get_dumpit, OP_POLICY(probe_get_policy) },
	{ .cmd = MAGNET_CMD_PROBE_NEW, .doit = probe_new_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(probe_new_policy) },
	{ .cmd = MAGNET_CMD_PROBE_DEL, .doit = probe_del_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(probe_get_policy) },
	{ .cmd = MAGNET_CMD_PROBE_SET, .doit = probe_set_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(probe_set_policy) },
	{ .cmd = MAGNET_CMD_FILTER_GET, .dumpit = filter_get_dumpit,
	  OP_POLICY(filter_get_policy) },
	{ .cmd = MAGNET_CMD_FILTER_NEW, .doit = filter_new_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(filter_new_policy) },
	{ .cmd = MAGNET_CMD_FILTER_DEL, .doit = filter_del_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(filter_del_policy) },
	{ .cmd = MAGNET_CMD_STATS_GET, .dumpit = stats_get_dumpit,
	  OP_POLICY(no_attr_policy) },
	{ .cmd = MAGNET_CMD_CATALOG_GET, .dumpit = catalog_get_dumpit,
	  OP_POLICY(catalog_get_policy) },
	{ .cmd = MAGNET_CMD_SESSION_GET, .dumpit = session_get_dumpit,
	  OP_POLICY(no_attr_policy) },
	{ .cmd = MAGNET_CMD_SESSION_NEW, .doit = session_new_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(no_attr_policy) },
	{ .cmd = MAGNET_CMD_SESSION_DEL, .doit = session_del_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(session_del_policy) },
	{ .cmd = MAGNET_CMD_LEDGER_GET, .dumpit = ledger_get_dumpit,
	  .done = magnet_ledger_dump_done, OP_POLICY(no_attr_policy) },
	{ .cmd = MAGNET_CMD_LEDGER_SET, .doit = ledger_set_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(ledger_set_policy) },
	{ .cmd = MAGNET_CMD_ACCT_GET, .dumpit = acct_get_dumpit,
	  .done = magnet_acct_watch_dump_done, OP_POLICY(acct_get_policy) },
	{ .cmd = MAGNET_CMD_ACCT_SET, .doit = acct_set_doit,
	  .internal_flags = MAGNET_NL_ADMIN, OP_POLICY(acct_set_policy) },
};

static const struct genl_multicast_group magnet_mcgrps[] = {
	[MAGNET_MCGRP_NOTIFY_IDX] = {
		.name = MAGNET_GENL_MCGRP_NOTIFY,
		/* Records carry kernel addresses: privileged listeners only. */
		.flags = GENL_MCAST_CAP_NET_ADMIN,
	},
};

static struct genl_family magnet_family __ro_after_init = {
	.name = MAGNET_GENL_NAME,
	.version = MAGNET_GENL_VERSION,
	.maxattr = MAGNET_A_MAX,
	.netnsok = false,		/* the initial namespace only */
	.module = THIS_MODULE,
	.pre_doit = magnet_pre_doit,
	.ops = magnet_ops,
	.n_ops = ARRAY_SIZE(magnet_ops),
	.resv_start_op = MAGNET_CMD_UNSPEC + 1,	/* strict from the first */
	.mcgrps = magnet_mcgrps,
	.n_mcgrps = ARRAY_SIZE(magnet_mcgrps),
};

/*
 * A netlink socket closed (its process exited, or was killed): remove
 * what it owned, probes first, then the buffers they logged into; turn
 * off a ledger it owned.
 */
static int magnet_socket_closed(struct notifier_block *nb,
				unsigned long state, void *ptr)
{
	struct netlink_notify *n = ptr;

	if (state != NETLINK_URELEASE || n->protocol != NETLINK_GENERIC ||
	    !n->portid || !net_eq(n->net, &init_net))
		return NOTIFY_DONE;
	magnet_probes_release(n->portid, 0);
	magnet_buffers_release(n->portid, 0);
	magnet_sessions_release(n->portid);
	magnet_ledger_release(n->portid);
	magnet_acct_release(n->portid);
	return NOTIFY_DONE;
}

static struct notifier_block magnet_socket_notifier = {
	.notifier_call = magnet_socket_closed,
};

int magnet_netlink_init(void)
{
	int err = netlink_register_notifier(&magnet_socket_notifier);

	if (err)
		return err;
	err = genl_register_family(&magnet_family);
	if (err)
		netlink_unregister_notifier(&magnet_socket_notifier);
	return err;
}

void magnet_netlink_exit(void)
{
	genl_unregister_family(&magnet_family);
	netlink_unregister_notifier(&magnet_socket_notifier);
}

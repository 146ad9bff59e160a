// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: sessions, independent users of the same probe points
 * (MAGNET_CMD_SESSION_*). A session is a namespace of buffer and probe
 * names that belongs to one netlink socket: what a capture, a daemon or
 * any other client makes in its own session cannot clash with what the
 * others make, and goes when its socket closes. The objects themselves
 * carry their session's id (buffer->session, event->session) and its
 * socket as their owner (owner_portid), so the release of a closed
 * socket's objects (magnet_probes_release(), magnet_buffers_release())
 * covers them; this file keeps the list of sessions, their limits and
 * who may act in them. Session 0, the default, is not listed: it always
 * exists and belongs to no one.
 *
 * Module parameters:
 *   max_sessions=N		sessions one user may have at once
 *   max_session_buffers=N	buffers in one session
 *   max_session_probes=N	probes in one session
 *
 * Locking: magnet_sessions_lock guards the list. Requests are serialised
 * by generic netlink (the family has no parallel_ops); a socket's release
 * and SESSION_DEL both remove a session's objects first and the session
 * last, each under the objects' own locks, so they may race harmlessly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "magnet.h"

static unsigned int max_sessions = 16;
module_param(max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions,
		 "Sessions one user may have at once (default 16)");

static unsigned int max_session_buffers = 8;
module_param(max_session_buffers, uint, 0644);
MODULE_PARM_DESC(max_session_buffers,
		 "Buffers in one session (default 8)");

static unsigned int max_session_probes = 256;
module_param(max_session_probes, uint, 0644);
MODULE_PARM_DESC(max_session_probes,
		 "Probes in one session (default 256)");

struct magnet_session {
	u32 id;
	u32 portid;		/* the netlink socket it belongs to */
	kuid_t uid;
	pid_t tgid;
	struct list_head node;
};

static DEFINE_MUTEX(magnet_sessions_lock);
static LIST_HEAD(magnet_sessions);
static u32 magnet_session_last;

static struct magnet_session *session_find(u32 id)
{
	struct magnet_session *s;

	lockdep_assert_held(&magnet_sessions_lock);
	list_for_each_entry(s, &magnet_sessions, node)
		if (s->id == id)
			return s;
	return NULL;
}

/**
 * magnet_session_new - make a session for netlink socket @portid
 * @portid:	the socket it belongs to
 * @id:		its id, on success
 *
 * Its data directory is made here too. Return: 0, -EUSERS (the current
 * user has max_sessions) or -ENOMEM.
 */
int magnet_session_new(u32 portid, u32 *id)
{
	kuid_t uid = current_euid();
	struct magnet_session *s, *new;
	unsigned int mine = 0;
	int err;

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	mutex_lock(&magnet_sessions_lock);
	list_for_each_entry(s, &magnet_sessions, node)
		mine += uid_eq(s->uid, uid);
	if (mine >= READ_ONCE(max_sessions)) {
		err = -EUSERS;
		goto fail;
	}
	/* The next id not in use (ids are not reused soon: 2^32 of them). */
	do {
		if (!++magnet_session_last)
			magnet_session_last = 1;
	} while (session_find(magnet_session_last));
	new->id = magnet_session_last;
	new->portid = portid;
	new->uid = uid;
	new->tgid = task_tgid_nr(current);
	err = magnet_fs_add_session(new->id, uid);
	if (err)
		goto fail;
	list_add_tail(&new->node, &magnet_sessions);
	mutex_unlock(&magnet_sessions_lock);
	*id = new->id;
	return 0;

fail:
	mutex_unlock(&magnet_sessions_lock);
	kfree(new);
	return err;
}

/* Remove session @s's objects, then @s. */
static void session_end(struct magnet_session *s)
{
	magnet_probes_release(0, s->id);
	magnet_buffers_release(0, s->id);
	magnet_fs_remove_session(s->id);
	kfree(s);
}

/**
 * magnet_session_del - end session @id at the request of socket @portid
 * @id:		the session
 * @portid:	the requesting socket
 * @admin:	it has CAP_SYS_ADMIN, and may end anyone's session
 *
 * Return: 0, -ENOENT or -EPERM.
 */
int magnet_session_del(u32 id, u32 portid, bool admin)
{
	struct magnet_session *s;

	mutex_lock(&magnet_sessions_lock);
	s = session_find(id);
	if (s && (s->portid == portid || admin))
		list_del(&s->node);
	mutex_unlock(&magnet_sessions_lock);
	if (!s)
		return -ENOENT;
	if (s->portid != portid && !admin)
		return -EPERM;
	session_end(s);
	return 0;
}

/* Socket @portid closed: end its sessions (after its objects went). */
void magnet_sessions_release(u32 portid)
{
	struct magnet_session *s, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&magnet_sessions_lock);
	list_for_each_entry_safe(s, tmp, &magnet_sessions, node)
		if (s->portid == portid)
			list_move(&s->node, &gone);
	mutex_unlock(&magnet_sessions_lock);
	list_for_each_entry_safe(s, tmp, &gone, node)
		session_end(s);
}

/**
 * magnet_session_check - may socket @portid make or change objects in @id?
 * @id:		a session, 0 for the default one (anyone with the
 *		capability the request needs)
 * @portid:	the requesting socket
 *
 * Return: 0, -ENOENT (no such session) or -EPERM (another socket's).
 */
int magnet_session_check(u32 id, u32 portid)
{
	struct magnet_session *s;
	int err = 0;

	if (!id)
		return 0;
	mutex_lock(&magnet_sessions_lock);
	s = session_find(id);
	if (!s)
		err = -ENOENT;
	else if (s->portid != portid)
		err = -EPERM;
	mutex_unlock(&magnet_sessions_lock);
	return err;
}

unsigned int magnet_session_max_buffers(void)
{
	return READ_ONCE(max_session_buffers);
}

unsigned int magnet_session_max_probes(void)
{
	return READ_ONCE(max_session_probes);
}

/**
 * magnet_session_at - the @idx-th listed session, for a dump
 * @idx:	its position in the list
 * @info:	filled in: id, uid (in the initial user namespace), tgid
 *
 * Return: false once past the end.
 */
bool magnet_session_at(long idx, struct magnet_session_info *info)
{
	struct magnet_session *s;
	bool found = false;

	mutex_lock(&magnet_sessions_lock);
	list_for_each_entry(s, &magnet_sessions, node) {
		if (idx--)
			continue;
		info->id = s->id;
		info->uid = from_kuid_munged(&init_user_ns, s->uid);
		info->tgid = s->tgid;
		found = true;
		break;
	}
	mutex_unlock(&magnet_sessions_lock);
	return found;
}

/*
 * At module exit, after the probes and buffers went: forget the sessions
 * of sockets still open (their directories go with magnet's own).
 */
void magnet_sessions_exit(void)
{
	struct magnet_session *s, *tmp;

	mutex_lock(&magnet_sessions_lock);
	list_for_each_entry_safe(s, tmp, &magnet_sessions, node) {
		list_del(&s->node);
		kfree(s);
	}
	mutex_unlock(&magnet_sessions_lock);
}

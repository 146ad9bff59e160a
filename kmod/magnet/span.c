// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: application spans, written to MAGNET_SPAN_DEVICE and logged by
 * every probe of the catalog's app.span ("Application spans" in the uapi
 * header).
 *
 * A write is checked whole before anything is logged, so that a reader
 * can trust what a span record says about its own lengths; it is copied
 * onto the stack (MAGNET_SPAN_MAX bytes at most) and logged to each
 * attached probe under RCU-sched, as a probe context would be. The
 * device keeps nothing between writes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/uaccess.h>

#include "magnet.h"

static LIST_HEAD(span_users);
static DEFINE_MUTEX(span_lock);		/* span_users' writers */

void magnet_span_attach(struct magnet_span_user *u, struct magnet_event *ev)
{
	mutex_lock(&span_lock);
	if (!u->attached) {
		u->ev = ev;
		list_add_tail_rcu(&u->node, &span_users);
		u->attached = true;
	}
	mutex_unlock(&span_lock);
}

/* Detach @u and wait until no write logs into it. Process context. */
void magnet_span_detach(struct magnet_span_user *u)
{
	bool was;

	mutex_lock(&span_lock);
	was = u->attached;
	if (was)
		list_del_rcu(&u->node);
	u->attached = false;
	mutex_unlock(&span_lock);
	if (was)
		synchronize_rcu();
}

static bool all_zero(const u8 *b, size_t n)
{
	return !memchr_inv(b, 0, n);
}

/* Text of a name or value: no control bytes (UTF-8 passes). */
static bool span_text(const u8 *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] == 0x7f)
			return false;
	return true;
}

/* "key=value\0"...: keys of [A-Za-z0-9._-]+, values of text. */
static bool span_attrs(const u8 *b, size_t n)
{
	while (n) {
		const u8 *end = memchr(b, 0, n);
		const u8 *eq;
		size_t len, i;

		if (!end)
			return false;
		len = end - b;
		eq = memchr(b, '=', len);
		if (!eq || eq == b)
			return false;
		for (i = 0; i < eq - b; i++)
			if (!isalnum(b[i]) && b[i] != '.' && b[i] != '_' &&
			    b[i] != '-')
				return false;
		if (!span_text(eq + 1, end - eq - 1))
			return false;
		b = end + 1;
		n -= len + 1;
	}
	return true;
}

static int span_check(const struct magnet_span *sp, size_t len)
{
	if (sp->type < MAGNET_SPAN_BEGIN || sp->type > MAGNET_SPAN_EVENT ||
	    (sp->flags & ~MAGNET_SPAN_FLAGS) || sp->__reserved)
		return -EINVAL;
	if (sizeof(*sp) + sp->name_len + sp->attrs_len != len ||
	    sp->name_len > MAGNET_SPAN_NAME_MAX)
		return -EINVAL;
	if (all_zero(sp->trace_id, sizeof(sp->trace_id)) ||
	    all_zero(sp->span_id, sizeof(sp->span_id)))
		return -EINVAL;
	if (sp->type != MAGNET_SPAN_END && !sp->name_len)
		return -EINVAL;
	if ((sp->flags & MAGNET_SPAN_F_REMOTE) &&
	    (sp->type != MAGNET_SPAN_BEGIN ||
	     all_zero(sp->parent_id, sizeof(sp->parent_id))))
		return -EINVAL;
	if (!span_text(sp->data, sp->name_len) ||
	    !span_attrs(sp->data + sp->name_len, sp->attrs_len))
		return -EINVAL;
	return 0;
}

static ssize_t span_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *pos)
{
	u64 buf[MAGNET_SPAN_MAX / sizeof(u64)];
	const struct magnet_span *sp = (const void *)buf;
	struct magnet_span_user *u;
	enum magnet_admit admit;
	int err;
	u64 id;

	if (len > MAGNET_SPAN_MAX)
		return -EMSGSIZE;
	if (len < sizeof(*sp))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	err = span_check(sp, len);
	if (err)
		return err;
	/* (the id is 8-byte aligned in buf: offset 16) */
	id = be64_to_cpup((const __be64 *)sp->span_id);
	rcu_read_lock_sched();
	list_for_each_entry_rcu(u, &span_users, node) {
		admit = magnet_event_admit(u->ev);
		if (admit != MAGNET_ADMIT_NO)
			magnet_event_log_flagged(u->ev, admit, id, buf, len,
						 NULL, MAGNET_RF_SPAN);
	}
	rcu_read_unlock_sched();
	return len;
}

static int span_open(struct inode *inode, struct file *file)
{
	/* write only: there is nothing to read */
	if (file->f_mode & FMODE_READ)
		return -EINVAL;
	return nonseekable_open(inode, file);
}

static const struct file_operations span_fops = {
	.owner = THIS_MODULE,
	.open = span_open,
	.write = span_write,
};

static struct miscdevice span_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "magnet-span",
	.fops = &span_fops,
	.mode = 0666,
};

int magnet_span_init(void)
{
	return misc_register(&span_dev);
}

void magnet_span_exit(void)
{
	misc_deregister(&span_dev);
}

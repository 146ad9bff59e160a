// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: function-entry probes through magnet's own ftrace_ops.
 *
 * A kprobe at a function's entry is, on kernels with KPROBES_ON_FTRACE,
 * placed on the function's ftrace call site anyway: every hit goes through
 * ftrace's register-saving trampoline (a full pt_regs, flags included) and
 * kprobes' handler, which looks the kprobe up in a hash and calls ours
 * indirectly. Here magnet registers an ftrace_ops of its own instead, one
 * per probed function, shared by every magnet hook there (probes, and
 * per-call accounting's entry-only hooks, acct.c):
 *
 * - no FTRACE_OPS_FL_SAVE_REGS: the callback gets ftrace_regs, in which
 *   the argument registers, the stack pointer and the instruction pointer
 *   are saved, and nothing else;
 * - no FTRACE_OPS_FL_RECURSION and no FTRACE_OPS_FL_RCU: the callback
 *   protects itself from recursion (ftrace_test_recursion_trylock(), which
 *   also disables preemption) and checks that RCU is watching, so that
 *   when it is a function's only ops, ftrace calls it straight from the
 *   function's own trampoline, with nothing in between;
 * - the callback walks the function's hooks, an RCU list, and calls
 *   probe.c or acct.c for each directly, as its @to says: an indirect
 *   call would go through a retpoline on Debian's kernels.
 *
 * Hits that cannot be taken (recursion on this CPU, or a function that
 * runs where RCU does not watch, such as parts of the idle loop) are
 * counted as missed, as kprobes counts its own.
 *
 * Lifetime, under fentry_lock (taken inside magnet_events_lock and
 * acct.c's acct_lock, never around them): enabling a probe attaches it
 * to its function's ops (registered when the first hook attaches);
 * disabling detaches it. The last one out unregisters the ops, which
 * waits until no CPU runs its callback (ftrace waits for every task for an ops in a
 * module's memory), and frees it. Otherwise a detach waits an RCU grace
 * period, after which no callback still walks the probe.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/trace_recursion.h>

#include "compat.h"
#include "magnet.h"

/*
 * struct magnet_fentry - magnet's ftrace_ops on one function
 * @ops:	registered while @users is not empty
 * @ip:		the function's ftrace call site
 * @users:	the probes attached, RCU list of magnet_fentry_user
 * @node:	in fentries
 * @missed:	hits not delivered to the probes
 */
struct magnet_fentry {
	struct ftrace_ops ops;
	unsigned long ip;
	struct list_head users;
	struct list_head node;
	atomic_long_t missed;
};

/* Every function magnet's hooks are on. */
static LIST_HEAD(fentries);
static DEFINE_MUTEX(fentry_lock);

static void notrace fentry_func(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op,
				struct ftrace_regs *fregs)
{
	struct magnet_fentry *fe = container_of(op, struct magnet_fentry, ops);
	struct magnet_fentry_user *u;
	struct pt_regs *regs;
	int bit;

	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (unlikely(bit < 0)) {
		atomic_long_inc(&fe->missed);
		return;
	}
	if (likely(rcu_is_watching())) {
		regs = magnet_fregs_args(fregs);
		list_for_each_entry_rcu(u, &fe->users, node) {
			if (u->to == MAGNET_FENTRY_ACCT)
				magnet_acct_fentry_hit(u, regs);
			else
				magnet_probe_fentry_hit(u, regs);
		}
	} else {
		atomic_long_inc(&fe->missed);
	}
	ftrace_test_recursion_unlock(bit);
}

static struct magnet_fentry *fentry_find(unsigned long ip)
{
	struct magnet_fentry *fe;

	list_for_each_entry(fe, &fentries, node)
		if (fe->ip == ip)
			return fe;
	return NULL;
}

/**
 * magnet_fentry_site - where a registered kprobe is, if fentry.c can hook it
 * @kp:		a registered kprobe (enabled or not)
 *
 * Return: its address, the function's ftrace call site, if kprobes put it
 * there (a function's entry, no offset); otherwise 0.
 */
unsigned long magnet_fentry_site(const struct kprobe *kp)
{
	if (kp->offset || !(kp->flags & KPROBE_FLAG_FTRACE))
		return 0;
	return (unsigned long)kp->addr;
}

/**
 * magnet_fentry_attach - call @u's function (@u->to) with @u on every
 *	entry of a function
 * @u:		the hook, @to set, not attached
 * @ip:		the function's ftrace call site (a kprobe's address there)
 *
 * Sleeps.
 * Return: 0, -ENOMEM, or ftrace's error (-EINVAL: no ftrace call site at
 * @ip; -EBUSY: a function another ftrace user holds exclusively).
 */
int magnet_fentry_attach(struct magnet_fentry_user *u, unsigned long ip)
{
	struct magnet_fentry *fe;
	int err;

	mutex_lock(&fentry_lock);
	fe = fentry_find(ip);
	if (fe) {
		u->fe = fe;
		u->missed_start = atomic_long_read(&fe->missed);
		list_add_tail_rcu(&u->node, &fe->users);
		mutex_unlock(&fentry_lock);
		return 0;
	}
	err = -ENOMEM;
	fe = kzalloc(sizeof(*fe), GFP_KERNEL);
	if (!fe)
		goto out;
	fe->ip = ip;
	fe->ops.func = fentry_func;
	INIT_LIST_HEAD(&fe->users);
	err = ftrace_set_filter_ip(&fe->ops, ip, 0, 0);
	if (err)
		goto free;
	/* In the list before the first hit can come. */
	u->fe = fe;
	u->missed_start = 0;
	list_add_tail_rcu(&u->node, &fe->users);
	err = register_ftrace_function(&fe->ops);
	if (err) {
		u->fe = NULL;
		goto free_filter;
	}
	list_add(&fe->node, &fentries);
	mutex_unlock(&fentry_lock);
	return 0;

free_filter:
	ftrace_free_filter(&fe->ops);
free:
	kfree(fe);
out:
	mutex_unlock(&fentry_lock);
	return err;
}

/**
 * magnet_fentry_detach - stop calling @u's function with @u
 * @u:		an attached hook
 *
 * Returns once no CPU runs @u's function with @u any more. Sleeps.
 */
void magnet_fentry_detach(struct magnet_fentry_user *u)
{
	struct magnet_fentry *fe;

	mutex_lock(&fentry_lock);
	fe = u->fe;
	u->missed += atomic_long_read(&fe->missed) - u->missed_start;
	list_del_rcu(&u->node);
	u->fe = NULL;
	if (!list_empty(&fe->users)) {
		mutex_unlock(&fentry_lock);
		synchronize_rcu();
		return;
	}
	/* Waits for every callback, then frees ftrace's trampoline for it. */
	unregister_ftrace_function(&fe->ops);
	ftrace_free_filter(&fe->ops);
	list_del(&fe->node);
	mutex_unlock(&fentry_lock);
	kfree(fe);
}

/* Hits @u missed, attached or not. */
u64 magnet_fentry_missed(const struct magnet_fentry_user *u)
{
	u64 n;

	mutex_lock(&fentry_lock);
	n = u->missed;
	if (u->fe)
		n += atomic_long_read(&u->fe->missed) - u->missed_start;
	mutex_unlock(&fentry_lock);
	return n;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: Monitoring Apparatus for General kerNel-Event Tracing.
 *
 * Module parameters:
 *   buffers=name:size[:drop|:overwrite][,...]
 *		buffers to create at load; size is bytes per CPU, a power of
 *		two, with an optional K, M or G suffix. A buffer named
 *		"default" (256K, drop) is added unless listed.
 *   max_memory_mb=N
 *		bound on the memory all buffers together may take.
 *   notify_rate=N
 *		most notifications multicast per second (notify.c).
 *   max_sessions, max_session_buffers, max_session_probes
 *		limits of sessions (session.c).
 *   max_acct_threads=N
 *		most threads with a per-call accounting handle (acct.c).
 *   acct_boundaries=FUNCTION:SUBSYSTEM,...
 *		per-call accounting's boundaries added to the shipped (acct.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>

#include "magnet.h"

static char *buffers = "default:256K";
module_param(buffers, charp, 0444);
MODULE_PARM_DESC(buffers,
		 "Buffers to create: name:bytes_per_cpu[:drop|:overwrite],... (default \"default:256K\")");

static unsigned long max_memory_mb = 64;
module_param(max_memory_mb, ulong, 0444);
MODULE_PARM_DESC(max_memory_mb,
		 "Most memory all buffers together may use, MiB (default 64)");

static int __init magnet_init(void)
{
	int err;

	if (!max_memory_mb || max_memory_mb > (ULONG_MAX >> 20)) {
		pr_err("max_memory_mb=%lu is out of range\n", max_memory_mb);
		return -EINVAL;
	}
	err = magnet_fs_init();
	if (err) {
		pr_err("cannot create debugfs files: %d\n", err);
		return err;
	}
	magnet_memory_limit = max_memory_mb << 20;
	err = magnet_buffers_from_param(buffers);
	if (err)
		goto fail_buffers;
	err = magnet_notify_init();
	if (err)
		goto fail_notify;
	err = magnet_sample_init();
	if (err) {
		pr_err("cannot set up sampling's CPU hotplug state: %d\n", err);
		goto fail_sample;
	}
	err = magnet_netlink_init();
	if (err) {
		pr_err("cannot register the generic netlink family: %d\n", err);
		goto fail_netlink;
	}
	err = magnet_acct_init();
	if (err) {
		pr_err("cannot register the accounting device: %d\n", err);
		goto fail_acct;
	}
	err = magnet_span_init();
	if (err) {
		pr_err("cannot register the span device: %d\n", err);
		goto fail_span;
	}
	pr_info("loaded, record format %d\n", MAGNET_FORMAT_VERSION);
	return 0;

fail_span:
	magnet_acct_exit();
fail_acct:
	magnet_netlink_exit();
fail_netlink:
	magnet_sample_exit();
fail_sample:
	magnet_notify_exit();
fail_notify:
	magnet_buffers_destroy_all();
fail_buffers:
	magnet_fs_exit();
	return err;
}

static void __exit magnet_exit(void)
{
	magnet_netlink_exit();		/* no more requests: no new watch */
	magnet_acct_exit();		/* no handle is open: no hooks */
	magnet_span_exit();		/* no writer is in */
	magnet_probes_destroy_all();	/* no more hits */
	magnet_sample_exit();		/* no sampling probe is left */
	magnet_ledger_exit();
	magnet_notify_exit();
	magnet_buffers_destroy_all();
	magnet_sessions_exit();
	magnet_fs_exit();
}

module_init(magnet_init);
module_exit(magnet_exit);

MODULE_DESCRIPTION("magnet: high-fidelity kernel event sensor");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");

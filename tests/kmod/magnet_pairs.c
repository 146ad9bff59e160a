// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_pairs: journeys of known length, for the correlating filter's
 * tests. Registers events "pair_begin", "pair_via" and "pair_end" (enable
 * them to use them) and, for each write of "N SLOW DELAY_MS" to
 * /sys/kernel/debug/magnet_pairs/run, logs N journeys with abstract ids
 * 1..N: begin, via, end. Every SLOW-th journey (0: none) sleeps DELAY_MS
 * between via and end; the others log all three back to back with
 * preemption off. The payload is the journey's number (u64).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/uaccess.h>

static char *buffer = "default";
module_param(buffer, charp, 0444);
MODULE_PARM_DESC(buffer, "magnet buffer the events log into");

static struct magnet_event *begin_ev, *via_ev, *end_ev;
static struct dentry *dir;

static void log_one(struct magnet_event *ev, u64 i)
{
	magnet_event_log(ev, i, &i, sizeof(i));
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t len, loff_t *ppos)
{
	unsigned int n, slow, delay_ms;
	char buf[64];
	u64 i;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%u %u %u", &n, &slow, &delay_ms) != 3)
		return -EINVAL;
	for (i = 1; i <= n; i++) {
		if (slow && i % slow == 0) {
			log_one(begin_ev, i);
			log_one(via_ev, i);
			msleep(delay_ms);
			log_one(end_ev, i);
		} else {
			preempt_disable();
			log_one(begin_ev, i);
			log_one(via_ev, i);
			log_one(end_ev, i);
			preempt_enable();
		}
		cond_resched();
	}
	return len;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
	.llseek = noop_llseek,
};

static int __init pairs_init(void)
{
	begin_ev = magnet_event_register("pair_begin", buffer, NULL, NULL);
	if (IS_ERR(begin_ev))
		return PTR_ERR(begin_ev);
	via_ev = magnet_event_register("pair_via", buffer, NULL, NULL);
	if (IS_ERR(via_ev)) {
		magnet_event_unregister(begin_ev);
		return PTR_ERR(via_ev);
	}
	end_ev = magnet_event_register("pair_end", buffer, NULL, NULL);
	if (IS_ERR(end_ev)) {
		magnet_event_unregister(via_ev);
		magnet_event_unregister(begin_ev);
		return PTR_ERR(end_ev);
	}
	dir = debugfs_create_dir("magnet_pairs", NULL);
	debugfs_create_file("run", 0200, dir, NULL, &run_fops);
	return 0;
}

static void __exit pairs_exit(void)
{
	debugfs_remove(dir);
	magnet_event_unregister(end_ev);
	magnet_event_unregister(via_ev);
	magnet_event_unregister(begin_ev);
}

module_init(pairs_init);
module_exit(pairs_exit);

MODULE_DESCRIPTION("magnet test: journeys of known length");
MODULE_LICENSE("GPL");

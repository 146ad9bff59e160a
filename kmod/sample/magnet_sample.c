// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_sample: how another kernel module logs into magnet.
 *
 * It registers one event, "sample_hello", at load and unregisters it at
 * unload. Writing a number N to /sys/kernel/debug/magnet_sample/fire logs
 * N records of struct sample_hello, with record ids 1..N; they are kept
 * only while an administrator has the event enabled:
 *
 *	insmod magnet_sample.ko
 *	magnetctl probe enable sample_hello
 *	echo 3 > /sys/kernel/debug/magnet_sample/fire
 *	magnet-read -c 3 /sys/kernel/debug/magnet/data/default
 *
 * The enable and disable hooks are where a real module would arm and
 * disarm whatever produces its events; here they count their calls
 * (/sys/kernel/debug/magnet_sample/hooks).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/magnet.h>

static char *buffer = "default";
module_param(buffer, charp, 0444);
MODULE_PARM_DESC(buffer, "magnet buffer the event logs into (default \"default\")");

/* The event's payload. */
struct sample_hello {
	u64 seq;
	char text[8];
};

static struct magnet_event *hello;
static struct dentry *dir;
static atomic_t enables, disables;

static int hello_enable(struct magnet_event *ev)
{
	atomic_inc(&enables);
	return 0;
}

static void hello_disable(struct magnet_event *ev)
{
	atomic_inc(&disables);
}

static const struct magnet_event_ops hello_ops = {
	.enable = hello_enable,
	.disable = hello_disable,
};

static ssize_t fire_write(struct file *file, const char __user *ubuf,
			  size_t len, loff_t *ppos)
{
	struct sample_hello rec = { .text = "hello" };
	unsigned int n;
	int err;

	err = kstrtouint_from_user(ubuf, len, 0, &n);
	if (err)
		return err;
	for (rec.seq = 1; rec.seq <= n; rec.seq++)
		magnet_event_log(hello, rec.seq, &rec, sizeof(rec));
	return len;
}

static const struct file_operations fire_fops = {
	.owner = THIS_MODULE,
	.write = fire_write,
	.llseek = noop_llseek,
};

static int hooks_show(struct seq_file *m, void *v)
{
	seq_printf(m, "id %u enables %d disables %d\n", magnet_event_id(hello),
		   atomic_read(&enables), atomic_read(&disables));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hooks);

static int __init sample_init(void)
{
	hello = magnet_event_register("sample_hello", buffer, &hello_ops,
				      NULL);
	if (IS_ERR(hello)) {
		pr_err("cannot register event sample_hello: %pe\n", hello);
		return PTR_ERR(hello);
	}
	dir = debugfs_create_dir("magnet_sample", NULL);
	debugfs_create_file("fire", 0200, dir, NULL, &fire_fops);
	debugfs_create_file("hooks", 0444, dir, NULL, &hooks_fops);
	return 0;
}

static void __exit sample_exit(void)
{
	/* No more writes to "fire" can start, and none is under way. */
	debugfs_remove(dir);
	magnet_event_unregister(hello);
}

module_init(sample_init);
module_exit(sample_exit);

MODULE_DESCRIPTION("magnet sample: a module that registers an event");
MODULE_AUTHOR("magnet developers");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_bench: cost of logging one event, magnet against the kernel's own
 * ftrace ring buffer, measured side by side in the same boot.
 *
 *   echo "n=200000 size=32 buffer=bench" > /sys/kernel/debug/magnet_bench/run
 *   cat /sys/kernel/debug/magnet_bench/result
 *
 * Each method logs n events of size payload bytes on one CPU, in batches
 * of 1000 with preemption off; the best of 5 rounds is kept, in ns per
 * event:
 *   baseline	copy the payload to a scratch area (what a handler does
 *		anyway), no logging
 *   magnet	magnet_reserve() + copy + magnet_commit() into the named
 *		buffer (make it an overwrite buffer: steady state, no reader)
 *   ftrace	ring_buffer_lock_reserve() + copy + ring_buffer_unlock_commit()
 *		into a ring buffer of the same size in overwrite mode
 *
 * It also places probes for the per-call benchmarks (bench/scripts/cost.sh):
 * empty_kprobe (a kprobe that does nothing: the floor of any kprobe-based
 * sensor), empty_ftrace (an ftrace_ops callback that does nothing, without
 * saved registers: the floor of any sensor at a function's entry; or one
 * that takes only the recursion lock and the RCU check; or one that also
 * reads the clock a record's timestamp comes from), empty_tracepoint (a
 * handler on a tracepoint that does nothing: the floor of any
 * tracepoint-based sensor) and
 * log_kprobe (a kprobe logging a record of a chosen size
 * through a magnet event of this module, "bench_log").
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/ftrace.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/ring_buffer.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_clock.h>
#include <linux/trace_recursion.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

#include "../../kmod/magnet/compat.h"

#define BATCH	1000
#define ROUNDS	5

enum { M_BASELINE, M_MAGNET, M_FTRACE, NR_METHODS };
static const char * const method_names[NR_METHODS] = {
	"baseline", "magnet", "ftrace",
};

static DEFINE_MUTEX(bench_lock);	/* one run at a time, result */
static u64 best_ns[NR_METHODS];		/* ns per 1000 events */
static unsigned int run_n, run_size;
static char run_buffer[32];
static u8 payload[4096], scratch[4096];

static u64 bench_batch(int method, struct magnet_buffer *mb,
		       struct trace_buffer *tb)
{
	struct ring_buffer_event *ev;
	struct magnet_record *rec;
	u64 t0, t1;
	int i;

	preempt_disable();
	t0 = ktime_get_mono_fast_ns();
	for (i = 0; i < BATCH; i++) {
		switch (method) {
		case M_BASELINE:
			memcpy(scratch, payload, run_size);
			barrier();
			break;
		case M_MAGNET:
			rec = magnet_reserve(mb, 1, i, run_size);
			if (!IS_ERR(rec)) {
				memcpy(rec->payload, payload, run_size);
				magnet_commit(mb, rec);
			}
			break;
		case M_FTRACE:
			ev = ring_buffer_lock_reserve(tb, run_size);
			if (ev) {
				memcpy(ring_buffer_event_data(ev), payload,
				       run_size);
				magnet_ring_buffer_commit(tb, ev);
			}
			break;
		}
	}
	t1 = ktime_get_mono_fast_ns();
	preempt_enable();
	cond_resched();
	return t1 - t0;
}

static int bench_run(void)
{
	struct magnet_buffer *mb;
	struct trace_buffer *tb;
	int m, r, b, err = 0;

	mb = magnet_buffer_get(run_buffer);
	if (!mb)
		return -ENOENT;
	tb = ring_buffer_alloc(256 * 1024, RB_FL_OVERWRITE);
	if (!tb) {
		magnet_buffer_put(mb);
		return -ENOMEM;
	}
	for (m = 0; m < NR_METHODS; m++) {
		best_ns[m] = U64_MAX;
		for (r = 0; r < ROUNDS; r++) {
			u64 total = 0;

			for (b = 0; b < run_n / BATCH; b++)
				total += bench_batch(m, mb, tb);
			best_ns[m] = min(best_ns[m], total / (run_n / BATCH));
		}
	}
	ring_buffer_free(tb);
	magnet_buffer_put(mb);
	return err;
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	char *cmd, *tok, *cursor;
	int err = 0;

	if (count > 256)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	mutex_lock(&bench_lock);
	run_n = 100000;
	run_size = 32;
	strscpy(run_buffer, "default", sizeof(run_buffer));
	cursor = cmd;
	while (!err && (tok = strsep(&cursor, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		if (!strncmp(tok, "n=", 2))
			err = kstrtouint(tok + 2, 0, &run_n);
		else if (!strncmp(tok, "size=", 5))
			err = kstrtouint(tok + 5, 0, &run_size);
		else if (!strncmp(tok, "buffer=", 7))
			err = strscpy(run_buffer, tok + 7,
				      sizeof(run_buffer)) < 0;
		else
			err = -EINVAL;
	}
	if (!err && (run_n < BATCH || run_size > sizeof(payload)))
		err = -EINVAL;
	if (!err)
		err = bench_run();
	mutex_unlock(&bench_lock);
	kfree(cmd);
	return err ? (err > 0 ? -EINVAL : err) : count;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
};

static int result_show(struct seq_file *m, void *v)
{
	int i;

	mutex_lock(&bench_lock);
	seq_printf(m, "# %u events of %u payload bytes, best of %d rounds\n",
		   run_n, run_size, ROUNDS);
	for (i = 0; i < NR_METHODS; i++)
		seq_printf(m, "%s %llu.%03llu ns/event\n", method_names[i],
			   best_ns[i] / BATCH, best_ns[i] % BATCH);
	mutex_unlock(&bench_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

/* A line written to one of our files, into @buf, without trailing blanks. */
static int read_line(char *buf, size_t size, const char __user *ubuf,
		     size_t len)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strim(buf);
	return 0;
}

/*
 * The floor of any kprobe-based sensor: a kprobe whose handler does
 * nothing. Write a symbol to /sys/kernel/debug/magnet_bench/empty_kprobe
 * to place it there, "-" to remove it.
 */
static struct kprobe empty_kp;
static bool empty_kp_on;

static int empty_handler(struct kprobe *kp, struct pt_regs *regs)
{
	return 0;
}

static ssize_t empty_kprobe_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	static char symbol[KSYM_NAME_LEN];
	int err = 0;

	mutex_lock(&bench_lock);
	err = read_line(symbol, sizeof(symbol), ubuf, len);
	if (err)
		goto out;
	if (empty_kp_on) {
		unregister_kprobe(&empty_kp);
		empty_kp_on = false;
	}
	if (strcmp(symbol, "-")) {
		memset(&empty_kp, 0, sizeof(empty_kp));
		empty_kp.symbol_name = symbol;
		empty_kp.pre_handler = empty_handler;
		err = register_kprobe(&empty_kp);
		empty_kp_on = !err;
	}
out:
	mutex_unlock(&bench_lock);
	return err ?: len;
}

static const struct file_operations empty_kprobe_fops = {
	.owner = THIS_MODULE,
	.write = empty_kprobe_write,
};

/*
 * The floor of any tracepoint-based sensor: a handler that does nothing
 * on a tracepoint. Write its name to
 * /sys/kernel/debug/magnet_bench/empty_tracepoint ("sys_enter") to place
 * it, "-" to remove it.
 */
static struct tracepoint *empty_tp;

struct tp_lookup {
	const char *name;
	struct tracepoint *tp;
};

static void tp_match(struct tracepoint *tp, void *priv)
{
	struct tp_lookup *l = priv;

	if (!strcmp(tp->name, l->name))
		l->tp = tp;
}

static void empty_tp_handler(void *data, struct pt_regs *regs, long id)
{
}

static void empty_tracepoint_remove(void)
{
	if (empty_tp) {
		tracepoint_probe_unregister(empty_tp, empty_tp_handler, NULL);
		tracepoint_synchronize_unregister();
		empty_tp = NULL;
	}
}

static ssize_t empty_tracepoint_write(struct file *file,
				      const char __user *ubuf, size_t len,
				      loff_t *ppos)
{
	static char name[64];
	struct tp_lookup l = { .name = name };
	int err;

	mutex_lock(&bench_lock);
	err = read_line(name, sizeof(name), ubuf, len);
	if (err)
		goto out;
	empty_tracepoint_remove();
	if (!strcmp(name, "-"))
		goto out;
	for_each_kernel_tracepoint(tp_match, &l);
	if (!l.tp) {
		err = -ENOENT;
		goto out;
	}
	err = tracepoint_probe_register(l.tp, empty_tp_handler, NULL);
	if (!err)
		empty_tp = l.tp;
out:
	mutex_unlock(&bench_lock);
	return err ?: len;
}

static const struct file_operations empty_tracepoint_fops = {
	.owner = THIS_MODULE,
	.write = empty_tracepoint_write,
};

/*
 * The floor at a function's entry: an ftrace_ops of its own on the
 * function, whose callback does nothing. No FTRACE_OPS_FL_SAVE_REGS (the
 * callback gets ftrace_regs, not a full pt_regs) and no
 * FTRACE_OPS_FL_RECURSION (it cannot recurse), so when it is the only
 * ops there ftrace calls it straight from the function's trampoline.
 * Write a symbol to /sys/kernel/debug/magnet_bench/empty_ftrace to place
 * it, "SYMBOL guarded" for a callback that only takes the guards every
 * real one needs (ftrace's recursion lock, and RCU watching), "SYMBOL
 * clocked" for one that also reads the clock magnet's records are
 * stamped with (ktime_get_mono_fast_ns()), "SYMBOL local-clocked" for one
 * that reads ftrace's default trace clock instead (trace_clock_local()),
 * "-" to remove it.
 */
static void empty_ftrace_func(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static void guarded_ftrace_func(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op,
				struct ftrace_regs *fregs)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	if (rcu_is_watching())
		barrier();	/* a callback would do its work here */
	ftrace_test_recursion_unlock(bit);
}

static DEFINE_PER_CPU(u64, clocked_last);

static void clocked_ftrace_func(unsigned long ip, unsigned long parent_ip,
				struct ftrace_ops *op,
				struct ftrace_regs *fregs)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	if (rcu_is_watching())
		this_cpu_write(clocked_last, ktime_get_mono_fast_ns());
	ftrace_test_recursion_unlock(bit);
}

/*
 * The same with ftrace's default trace clock. Each clock is read directly,
 * not through a pointer the two callbacks could share: an indirect call
 * would add its own cost to what is measured.
 */
static void local_clocked_ftrace_func(unsigned long ip,
				      unsigned long parent_ip,
				      struct ftrace_ops *op,
				      struct ftrace_regs *fregs)
{
	int bit = ftrace_test_recursion_trylock(ip, parent_ip);

	if (bit < 0)
		return;
	if (rcu_is_watching())
		this_cpu_write(clocked_last, trace_clock_local());
	ftrace_test_recursion_unlock(bit);
}

/* A new ops each time: one whose filter was freed cannot be used again. */
static struct ftrace_ops *empty_ops;

static void empty_ftrace_remove(void)
{
	if (empty_ops) {
		unregister_ftrace_function(empty_ops);
		ftrace_free_filter(empty_ops);
		kfree(empty_ops);
		empty_ops = NULL;
	}
}

static ssize_t empty_ftrace_write(struct file *file, const char __user *ubuf,
				  size_t len, loff_t *ppos)
{
	static char symbol[KSYM_NAME_LEN + 16];
	struct ftrace_ops *ops;
	ftrace_func_t func = empty_ftrace_func;
	char *mode;
	struct kprobe kp;
	unsigned long ip;
	int err = 0;

	mutex_lock(&bench_lock);
	err = read_line(symbol, sizeof(symbol), ubuf, len);
	if (err)
		goto out;
	empty_ftrace_remove();
	if (!strcmp(symbol, "-"))
		goto out;
	mode = strchr(symbol, ' ');
	if (mode) {
		*mode++ = '\0';
		mode = strim(mode);
		if (!strcmp(mode, "guarded")) {
			func = guarded_ftrace_func;
		} else if (!strcmp(mode, "clocked")) {
			func = clocked_ftrace_func;
		} else if (!strcmp(mode, "local-clocked")) {
			func = local_clocked_ftrace_func;
		} else {
			err = -EINVAL;
			goto out;
		}
	}
	/*
	 * The function's ftrace call site, found as magnet finds it: by a
	 * disabled kprobe on the symbol (ftrace may know the function by an
	 * alias, e.g. __do_sys_getppid for __x64_sys_getppid).
	 */
	memset(&kp, 0, sizeof(kp));
	kp.symbol_name = symbol;
	kp.flags = KPROBE_FLAG_DISABLED;
	err = register_kprobe(&kp);
	if (err)
		goto out;
	ip = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	ops = kzalloc(sizeof(*ops), GFP_KERNEL);
	if (!ops) {
		err = -ENOMEM;
		goto out;
	}
	ops->func = func;
	/* reset: the filter holds this one function, nothing else */
	err = ftrace_set_filter_ip(ops, ip, 0, 1);
	if (!err)
		err = register_ftrace_function(ops);
	if (err) {
		ftrace_free_filter(ops);
		kfree(ops);
	} else {
		empty_ops = ops;
	}
out:
	mutex_unlock(&bench_lock);
	return err ?: len;
}

static const struct file_operations empty_ftrace_fops = {
	.owner = THIS_MODULE,
	.write = empty_ftrace_write,
};

/*
 * A kprobe that logs @size payload bytes through magnet event "bench_log"
 * (in buffer "default"; enable it with magnetctl) on every hit. Write "SYMBOL
 * SIZE" to /sys/kernel/debug/magnet_bench/log_kprobe to place it, "-" to
 * remove it.
 */
static struct kprobe log_kp;
static struct magnet_event *log_ev;
static u32 log_size;

static int log_handler(struct kprobe *kp, struct pt_regs *regs)
{
	magnet_event_log(log_ev, 0, payload, log_size);
	return 0;
}

static void log_kprobe_remove(void)
{
	if (log_ev) {
		unregister_kprobe(&log_kp);
		magnet_event_unregister(log_ev);
		log_ev = NULL;
	}
}

static ssize_t log_kprobe_write(struct file *file, const char __user *ubuf,
				size_t len, loff_t *ppos)
{
	static char line[KSYM_NAME_LEN + 16], symbol[KSYM_NAME_LEN];
	unsigned int size;
	int err = 0;

	mutex_lock(&bench_lock);
	err = read_line(line, sizeof(line), ubuf, len);
	if (err)
		goto out;
	log_kprobe_remove();
	if (!strcmp(line, "-"))
		goto out;
	if (sscanf(line, "%127s %u", symbol, &size) != 2 ||
	    size > sizeof(payload)) {
		err = -EINVAL;
		goto out;
	}
	log_size = size;
	log_ev = magnet_event_register("bench_log", "default", NULL, NULL);
	if (IS_ERR(log_ev)) {
		err = PTR_ERR(log_ev);
		log_ev = NULL;
		goto out;
	}
	memset(&log_kp, 0, sizeof(log_kp));
	log_kp.symbol_name = symbol;
	log_kp.pre_handler = log_handler;
	err = register_kprobe(&log_kp);
	if (err) {
		magnet_event_unregister(log_ev);
		log_ev = NULL;
	}
out:
	mutex_unlock(&bench_lock);
	return err ?: len;
}

static const struct file_operations log_kprobe_fops = {
	.owner = THIS_MODULE,
	.write = log_kprobe_write,
};

static struct dentry *bench_dir;

static int __init bench_init(void)
{
	bench_dir = debugfs_create_dir("magnet_bench", NULL);
	debugfs_create_file("run", 0200, bench_dir, NULL, &run_fops);
	debugfs_create_file("result", 0400, bench_dir, NULL, &result_fops);
	debugfs_create_file("empty_kprobe", 0200, bench_dir, NULL,
			    &empty_kprobe_fops);
	debugfs_create_file("empty_ftrace", 0200, bench_dir, NULL,
			    &empty_ftrace_fops);
	debugfs_create_file("empty_tracepoint", 0200, bench_dir, NULL,
			    &empty_tracepoint_fops);
	debugfs_create_file("log_kprobe", 0200, bench_dir, NULL,
			    &log_kprobe_fops);
	return 0;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	if (empty_kp_on)
		unregister_kprobe(&empty_kp);
	empty_ftrace_remove();
	empty_tracepoint_remove();
	log_kprobe_remove();
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_DESCRIPTION("magnet benchmark: cost per logged event");
MODULE_LICENSE("GPL");

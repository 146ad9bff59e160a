// SPDX-License-Identifier: GPL-2.0
/*
 * magnet_stress: test-only module that writes known record sequences into
 * a magnet buffer through the in-kernel API, from task, softirq, hardirq
 * and NMI context on every CPU at once, and optionally consumes them with
 * a kernel-space reader.
 *
 * Control: /sys/kernel/debug/magnet_stress/
 *   run	write "key=value ..." to run once; the write returns when the
 *		run is over. Keys:
 *		  buffer=NAME     (default "default")
 *		  ms=N            run time in milliseconds (default 1000)
 *		  min=N max=N     payload bytes, >= 32 (default 32..256)
 *		  ctx=LIST        task,softirq,hardirq,nmi (default all)
 *		  period_us=N     interrupt period (default 200)
 *		  burst=N         records per interrupt (default 4)
 *		  task_sleep_us=N task pause after each burst (default 0)
 *		  kreader=0|1     consume with the kernel API (default 0)
 *		  events=N        stop each context after N attempts per CPU
 *   result	per-CPU, per-context attempts and successes of the last run,
 *		the task-context thread ids, how many writes interrupted
 *		another write on the same CPU (nested), and the kernel
 *		reader's findings.
 *
 * Record payload (struct stress_payload): see tests/bin/stress_format.h,
 * which the user-space checker shares.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/magnet.h>
#include <linux/module.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "../bin/stress_format.h"

struct stress_params {
	char buffer[32];
	unsigned int ms, min, max, ctx_mask, period_us, burst;
	unsigned int task_sleep_us;
	unsigned long events;
	bool kreader;
};

struct stress_cpu {
	unsigned long attempts[STRESS_NR_CTX];
	unsigned long ok[STRESS_NR_CTX];
	struct hrtimer timer;
	struct tasklet_struct tasklet;
	struct task_struct *thread;
	pid_t tid;
	bool nmi_pending;
	unsigned int depth;	/* writes in progress on this CPU */
	unsigned long nested;	/* writes that interrupted another write */
};

static DEFINE_PER_CPU(struct stress_cpu, stress_cpus);
static DEFINE_MUTEX(stress_lock);	/* one run at a time */
static struct stress_params params;
static struct magnet_buffer *stress_buf;
static bool stress_stop;
static bool nmi_registered;

/* Kernel-space reader findings. */
static struct {
	unsigned long records, lost, errors;
	u64 last_seq[NR_CPUS > 64 ? 64 : NR_CPUS][STRESS_NR_CTX];
	char first_error[128];
} kr;

static void stress_write(unsigned int ctx)
{
	struct stress_cpu *sc = this_cpu_ptr(&stress_cpus);
	unsigned int cpu = smp_processor_id();
	struct stress_payload *p;
	struct magnet_record *rec;
	unsigned long seq;
	u32 len;

	if (READ_ONCE(stress_stop) ||
	    (params.events && sc->attempts[ctx] >= params.events))
		return;
	seq = sc->attempts[ctx]++;
	len = stress_len(params.min, params.max, cpu, ctx, seq);
	/* Interrupts on this CPU nest strictly: depth is back when they return. */
	if (sc->depth++)
		sc->nested++;
	rec = magnet_reserve(stress_buf, STRESS_EVENT_BASE + ctx,
			     stress_id(cpu, ctx, seq), len);
	if (!IS_ERR(rec)) {
		p = (struct stress_payload *)rec->payload;
		p->magic = STRESS_MAGIC;
		p->ctx = ctx;
		p->cpu = cpu;
		p->len = len;
		p->seq = seq;
		stress_fill(p);
		magnet_commit(stress_buf, rec);
		sc->ok[ctx]++;
	}
	sc->depth--;
}

static void stress_burst(unsigned int ctx)
{
	unsigned int i;

	if (!(params.ctx_mask & BIT(ctx)))
		return;
	for (i = 0; i < params.burst; i++)
		stress_write(ctx);
}

static int stress_nmi(unsigned int type, struct pt_regs *regs)
{
	struct stress_cpu *sc = this_cpu_ptr(&stress_cpus);

	if (!READ_ONCE(sc->nmi_pending))
		return NMI_DONE;
	WRITE_ONCE(sc->nmi_pending, false);
	stress_burst(STRESS_CTX_NMI);
	return NMI_HANDLED;
}

static void stress_tasklet(struct tasklet_struct *t)
{
	stress_burst(STRESS_CTX_SOFTIRQ);
}

static enum hrtimer_restart stress_timer(struct hrtimer *timer)
{
	struct stress_cpu *sc = this_cpu_ptr(&stress_cpus);

	if (READ_ONCE(stress_stop))
		return HRTIMER_NORESTART;
	stress_burst(STRESS_CTX_HARDIRQ);
	if (params.ctx_mask & BIT(STRESS_CTX_SOFTIRQ))
		tasklet_schedule(&sc->tasklet);
	if ((params.ctx_mask & BIT(STRESS_CTX_NMI)) && nmi_registered &&
	    !READ_ONCE(sc->nmi_pending)) {
		WRITE_ONCE(sc->nmi_pending, true);
		apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
	}
	hrtimer_forward_now(timer, ns_to_ktime(params.period_us * 1000ULL));
	return HRTIMER_RESTART;
}

static int stress_thread(void *arg)
{
	struct stress_cpu *sc = this_cpu_ptr(&stress_cpus);
	bool task = params.ctx_mask & BIT(STRESS_CTX_TASK);
	unsigned int n = 0;

	sc->tid = current->pid;
	hrtimer_start(&sc->timer, ns_to_ktime(params.period_us * 1000ULL),
		      HRTIMER_MODE_REL_PINNED_HARD);
	while (!kthread_should_stop()) {
		if (task && !READ_ONCE(stress_stop)) {
			stress_write(STRESS_CTX_TASK);
			if (params.task_sleep_us && ++n % params.burst == 0)
				usleep_range(params.task_sleep_us,
					     params.task_sleep_us + 10);
			else
				cond_resched();
		} else {
			set_current_state(TASK_INTERRUPTIBLE);
			if (!kthread_should_stop())
				schedule_timeout(HZ / 10);
			__set_current_state(TASK_RUNNING);
		}
	}
	hrtimer_cancel(&sc->timer);
	tasklet_kill(&sc->tasklet);
	return 0;
}

static void kr_fail(const char *fmt, unsigned long a, unsigned long b)
{
	if (!kr.errors++)
		snprintf(kr.first_error, sizeof(kr.first_error), fmt, a, b);
}

static int kr_check(const struct magnet_record *rec, void *ctx)
{
	const struct stress_payload *p = (const void *)rec->payload;
	unsigned int c;

	if (rec->event == MAGNET_EVENT_LOSS) {
		kr.lost += ((const struct magnet_loss *)rec->payload)->lost;
		return 0;
	}
	kr.records++;
	c = rec->event - STRESS_EVENT_BASE;
	if (c >= STRESS_NR_CTX || rec->cpu >= ARRAY_SIZE(kr.last_seq)) {
		kr_fail("bad event %lu cpu %lu", rec->event, rec->cpu);
		return 0;
	}
	if (stress_check(p, rec->size - sizeof(*rec), rec->cpu, c))
		kr_fail("bad payload cpu %lu seq %lu", rec->cpu, p->seq);
	else if (p->seq + 1 <= kr.last_seq[rec->cpu][c])
		kr_fail("seq went back on cpu %lu to %lu", rec->cpu, p->seq);
	kr.last_seq[rec->cpu][c] = p->seq + 1;
	return 0;
}

static int kreader_thread(void *arg)
{
	struct magnet_reader *reader = arg;

	while (!kthread_should_stop()) {
		if (magnet_reader_consume(reader, 4096, kr_check, NULL) <= 0)
			usleep_range(200, 400);
	}
	/* writers are stopped: drain */
	while (magnet_reader_consume(reader, 4096, kr_check, NULL) > 0)
		;
	return 0;
}

static int parse_ctx(char *list, unsigned int *mask)
{
	static const char * const names[STRESS_NR_CTX] = STRESS_CTX_NAMES;
	char *name;
	int i;

	*mask = 0;
	while ((name = strsep(&list, ",")) != NULL) {
		for (i = 0; i < STRESS_NR_CTX; i++)
			if (!strcmp(name, names[i]))
				break;
		if (i == STRESS_NR_CTX)
			return -EINVAL;
		*mask |= BIT(i);
	}
	return 0;
}

static int parse_params(char *cmd, struct stress_params *p)
{
	char *tok;
	int err = 0;

	*p = (struct stress_params){
		.buffer = "default", .ms = 1000, .min = 32, .max = 256,
		.ctx_mask = BIT(STRESS_NR_CTX) - 1, .period_us = 200,
		.burst = 4,
	};
	while (!err && (tok = strsep(&cmd, " \t\n")) != NULL) {
		char *val;

		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(tok, "buffer"))
			err = strscpy(p->buffer, val, sizeof(p->buffer)) < 0;
		else if (!strcmp(tok, "ms"))
			err = kstrtouint(val, 0, &p->ms);
		else if (!strcmp(tok, "min"))
			err = kstrtouint(val, 0, &p->min);
		else if (!strcmp(tok, "max"))
			err = kstrtouint(val, 0, &p->max);
		else if (!strcmp(tok, "ctx"))
			err = parse_ctx(val, &p->ctx_mask);
		else if (!strcmp(tok, "period_us"))
			err = kstrtouint(val, 0, &p->period_us);
		else if (!strcmp(tok, "burst"))
			err = kstrtouint(val, 0, &p->burst);
		else if (!strcmp(tok, "task_sleep_us"))
			err = kstrtouint(val, 0, &p->task_sleep_us);
		else if (!strcmp(tok, "events"))
			err = kstrtoul(val, 0, &p->events);
		else if (!strcmp(tok, "kreader"))
			err = kstrtobool(val, &p->kreader);
		else
			return -EINVAL;
	}
	if (err || p->min < sizeof(struct stress_payload) || p->max < p->min ||
	    !p->burst || p->period_us < 10 || !p->ms)
		return -EINVAL;
	return 0;
}

static int stress_run(void)
{
	struct task_struct *kreader = NULL;
	struct magnet_reader *reader = NULL;
	unsigned int cpu;
	int err = 0;

	stress_buf = magnet_buffer_get(params.buffer);
	if (!stress_buf)
		return -ENOENT;
	memset(&kr, 0, sizeof(kr));
	if (params.kreader) {
		reader = magnet_reader_open(stress_buf);
		if (IS_ERR(reader)) {
			err = PTR_ERR(reader);
			goto out_put;
		}
		kreader = kthread_run(kreader_thread, reader, "magnet_kreader");
		if (IS_ERR(kreader)) {
			err = PTR_ERR(kreader);
			goto out_close;
		}
	}

	WRITE_ONCE(stress_stop, false);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);

		memset(sc->attempts, 0, sizeof(sc->attempts));
		memset(sc->ok, 0, sizeof(sc->ok));
		sc->nested = 0;
		sc->nmi_pending = false;
		hrtimer_init(&sc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		sc->timer.function = stress_timer;
		tasklet_setup(&sc->tasklet, stress_tasklet);
		sc->thread = kthread_create_on_cpu(stress_thread, NULL, cpu,
						   "magnet_stress/%u");
		if (IS_ERR(sc->thread))
			sc->thread = NULL;
		else
			wake_up_process(sc->thread);
	}
	msleep(params.ms);
	WRITE_ONCE(stress_stop, true);
	for_each_online_cpu(cpu) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);

		if (sc->thread)
			kthread_stop(sc->thread);
		else
			err = -ENOMEM;
		sc->thread = NULL;
	}
	cpus_read_unlock();
	/* let a self-NMI raised by a last timer tick land */
	msleep(20);
	if (kreader)
		kthread_stop(kreader);
out_close:
	if (!IS_ERR_OR_NULL(reader))
		magnet_reader_close(reader);
out_put:
	magnet_buffer_put(stress_buf);
	stress_buf = NULL;
	return err;
}

static ssize_t run_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	char *cmd;
	int err;

	if (count > 512)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, count);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	mutex_lock(&stress_lock);
	err = parse_params(cmd, &params);
	if (!err)
		err = stress_run();
	mutex_unlock(&stress_lock);
	kfree(cmd);
	return err ? err : count;
}

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
};

static int result_show(struct seq_file *m, void *v)
{
	static const char * const names[STRESS_NR_CTX] = STRESS_CTX_NAMES;
	unsigned int cpu, c;

	mutex_lock(&stress_lock);
	seq_puts(m, "# cpu ctx attempts ok tid\n");
	for_each_online_cpu(cpu) {
		struct stress_cpu *sc = per_cpu_ptr(&stress_cpus, cpu);

		for (c = 0; c < STRESS_NR_CTX; c++)
			seq_printf(m, "%u %s %lu %lu %d\n", cpu, names[c],
				   sc->attempts[c], sc->ok[c], sc->tid);
		seq_printf(m, "nested %u %lu\n", cpu, sc->nested);
	}
	seq_printf(m, "kreader records %lu lost %lu errors %lu %s\n",
		   kr.records, kr.lost, kr.errors, kr.first_error);
	mutex_unlock(&stress_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(result);

static struct dentry *stress_dir;

static int __init stress_init(void)
{
	int err;

	err = register_nmi_handler(NMI_LOCAL, stress_nmi, 0, "magnet_stress");
	nmi_registered = !err;
	if (err)
		pr_info("no NMI handler (%d): NMI context not tested\n", err);
	stress_dir = debugfs_create_dir("magnet_stress", NULL);
	debugfs_create_file("run", 0200, stress_dir, NULL, &run_fops);
	debugfs_create_file("result", 0400, stress_dir, NULL, &result_fops);
	return 0;
}

static void __exit stress_exit(void)
{
	debugfs_remove_recursive(stress_dir);
	if (nmi_registered)
		unregister_nmi_handler(NMI_LOCAL, "magnet_stress");
}

module_init(stress_init);
module_exit(stress_exit);
MODULE_DESCRIPTION("magnet test: known record sequences from every context");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: sampling, the cpu.sample probes' timers ("Sampling" in the uapi
 * header).
 *
 * Each attached probe has a hard-interrupt hrtimer pinned to every online
 * CPU, started and stopped on that CPU by a multi-instance CPU hotplug
 * state: attaching adds the probe's instance (its timers start on every
 * online CPU), detaching removes it (they are cancelled, and no tick runs
 * once it returns); a CPU going offline cancels its timer before it goes,
 * and one coming online starts a timer whose first tick says so
 * (MAGNET_SAMPLE_F_FIRST), so that hotplug never reads as lost time.
 *
 * A tick builds its record in its CPU's own area (struct
 * magnet_sample_cpu), not on the interrupt stack: two stacks of
 * MAGNET_SAMPLE_DEPTH_MAX frames are a kilobyte. Only the tick of that
 * CPU's timer writes there, and ticks of one timer never nest.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>
#include <asm/unwind.h>

#include "magnet.h"

/**
 * struct magnet_sample_cpu - a sampling probe's timer on one CPU
 * @timer:	the timer, pinned to the CPU
 * @u:		its probe
 * @prev:	when its previous tick ran (the records' clock), 0: none
 *		since the CPU came online or the probe was attached
 * @steal:	the CPU's accounted steal time then
 * @buf:	the record being built: struct magnet_sample and its stack
 */
struct magnet_sample_cpu {
	struct hrtimer timer;
	struct magnet_sample_user *u;
	u64 prev;
	u64 steal;
	u64 buf[sizeof(struct magnet_sample) / sizeof(u64) +
		2 * MAGNET_SAMPLE_DEPTH_MAX];
};

static enum cpuhp_state sample_hp_state;

/* The interrupted kernel's return addresses, innermost first. */
static unsigned int kernel_stack(struct pt_regs *regs, u64 *stack,
				 unsigned int depth)
{
	struct unwind_state state;
	unsigned int n = 0;
	bool first = true;
	unsigned long addr;

	for (unwind_start(&state, current, regs, NULL);
	     !unwind_done(&state) && n < depth; unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		/* the unwinder starts at the interrupted address itself */
		if (first && addr == instruction_pointer(regs)) {
			first = false;
			continue;
		}
		first = false;
		stack[n++] = addr;
	}
	return n;
}

/*
 * The task's user stack by its frame pointers: each frame's saved frame
 * pointer, then its return address. Code built without them leaves
 * anything in the register: a read that faults, an address that is not
 * a caller's frame (above this one), or a zero ends the walk.
 */
static unsigned int user_stack(struct pt_regs *uregs, u64 *stack,
			       unsigned int depth)
{
	unsigned long fp = frame_pointer(uregs);
	unsigned long frame[2];
	unsigned int n = 0;

	while (n < depth && fp && IS_ALIGNED(fp, sizeof(long))) {
		if (copy_from_user_nofault(frame, (const void __user *)fp,
					   sizeof(frame)) || !frame[1])
			break;
		stack[n++] = frame[1];
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return n;
}

static noinline void sample_log(struct magnet_sample_cpu *c,
				enum magnet_admit admit, u64 now, u64 steal)
{
	struct magnet_sample *s = (struct magnet_sample *)c->buf;
	struct pt_regs *regs = get_irq_regs();
	struct magnet_sample_user *u = c->u;
	struct task_struct *tsk = current;
	struct pt_regs *uregs = NULL;
	unsigned int n = 0;
	u32 flags = 0;

	memset(s, 0, sizeof(*s));
	if (c->prev) {
		s->since = now - c->prev;
		s->steal = steal - c->steal;
	} else {
		flags |= MAGNET_SAMPLE_F_FIRST;
	}
	s->period = u->period;
	if (is_idle_task(tsk))
		flags |= MAGNET_SAMPLE_F_IDLE;
	if (tsk->flags & PF_KTHREAD)
		flags |= MAGNET_SAMPLE_F_KTHREAD;
	else if (tsk->mm)
		uregs = task_pt_regs(tsk);
	if (in_serving_softirq())
		flags |= MAGNET_SAMPLE_F_SOFTIRQ;
	if (regs) {
		s->ip = instruction_pointer(regs);
		if (user_mode(regs)) {
			flags |= MAGNET_SAMPLE_F_USER;
			uregs = regs;
		} else if (u->depth) {
			n = kernel_stack(regs, s->stack, u->depth);
		}
	}
	s->kernel_depth = n;
	if (uregs) {
		s->user_ip = instruction_pointer(uregs);
		if (u->depth)
			s->user_depth = user_stack(uregs, s->stack + n,
						   u->depth);
	}
	s->flags = flags;
	n += s->user_depth;
	magnet_event_log_flagged(u->ev, admit, s->ip, s,
				 sizeof(*s) + n * sizeof(u64), NULL,
				 MAGNET_RF_SAMPLE);
}

static enum hrtimer_restart sample_tick(struct hrtimer *t)
{
	struct magnet_sample_cpu *c = container_of(t, struct magnet_sample_cpu,
						   timer);
	u64 steal = kcpustat_this_cpu->cpustat[CPUTIME_STEAL];
	u64 now = ktime_get_mono_fast_ns();
	enum magnet_admit admit;

	hrtimer_forward_now(t, ns_to_ktime(c->u->period));
	admit = magnet_event_admit(c->u->ev);
	if (admit != MAGNET_ADMIT_NO)
		sample_log(c, admit, now, steal);
	c->prev = now;
	c->steal = steal;
	return HRTIMER_RESTART;
}

/* Hotplug callbacks: run on @cpu itself (an AP state), in its thread. */
static int sample_cpu_online(unsigned int cpu, struct hlist_node *node)
{
	struct magnet_sample_user *u = hlist_entry(node,
						   struct magnet_sample_user,
						   node);
	struct magnet_sample_cpu *c = per_cpu_ptr(u->cpu, cpu);

	c->prev = 0;
	hrtimer_start(&c->timer, ns_to_ktime(u->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

static int sample_cpu_offline(unsigned int cpu, struct hlist_node *node)
{
	struct magnet_sample_user *u = hlist_entry(node,
						   struct magnet_sample_user,
						   node);

	hrtimer_cancel(&per_cpu_ptr(u->cpu, cpu)->timer);
	return 0;
}

/**
 * magnet_sample_attach - start a sampling probe's timers
 * @u:		the probe's sampler (@period and @depth set)
 * @ev:		the probe's event
 *
 * Process context. Return: 0 (also if attached already), or -ENOMEM.
 */
int magnet_sample_attach(struct magnet_sample_user *u, struct magnet_event *ev)
{
	struct magnet_sample_cpu *c;
	unsigned int cpu;
	int err;

	if (u->cpu)
		return 0;
	u->ev = ev;
	u->cpu = alloc_percpu(struct magnet_sample_cpu);
	if (!u->cpu)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		c = per_cpu_ptr(u->cpu, cpu);
		hrtimer_init(&c->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = sample_tick;
		c->u = u;
	}
	err = cpuhp_state_add_instance(sample_hp_state, &u->node);
	if (err) {
		free_percpu(u->cpu);
		u->cpu = NULL;
	}
	return err;
}

/* Stop them: no tick runs once it returns. Process context. */
void magnet_sample_detach(struct magnet_sample_user *u)
{
	if (!u->cpu)
		return;
	cpuhp_state_remove_instance(sample_hp_state, &u->node);
	free_percpu(u->cpu);
	u->cpu = NULL;
}

int magnet_sample_init(void)
{
	int err = cpuhp_setup_state_multi(CPUHP_AP_ONLINE_DYN, "magnet/sample",
					  sample_cpu_online,
					  sample_cpu_offline);

	if (err < 0)
		return err;
	sample_hp_state = err;
	return 0;
}

/* After every probe is gone. */
void magnet_sample_exit(void)
{
	cpuhp_remove_multi_state(sample_hp_state);
}

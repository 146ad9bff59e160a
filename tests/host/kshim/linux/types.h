/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's <linux/types.h>, as much as kmod/magnet/rules.c and the
 * headers it includes use, for building them in user space (rules-unit).
 */
#ifndef _KSHIM_TYPES_H
#define _KSHIM_TYPES_H
#include_next <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;

#define __user

struct list_head {
	struct list_head *next, *prev;
};

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
};
#endif

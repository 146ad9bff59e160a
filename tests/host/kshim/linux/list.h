/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's <linux/list.h>: struct list_head is in types.h here. */
#include <linux/types.h>

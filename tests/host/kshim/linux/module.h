/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's <linux/module.h>, for user-space builds (see types.h). */
struct module;
#define THIS_MODULE	((struct module *)0)

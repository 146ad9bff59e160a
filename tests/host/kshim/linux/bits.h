/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's <linux/bits.h>, for user-space builds (see types.h). */
#ifndef _KSHIM_BITS_H
#define _KSHIM_BITS_H
#define BIT(n)		(1UL << (n))
#define BITS_PER_LONG	(8 * (int)sizeof(long))
#endif

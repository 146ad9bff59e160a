/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's <linux/bitops.h>, for user-space builds (see types.h). */
#ifndef _KSHIM_BITOPS_H
#define _KSHIM_BITOPS_H
#include <linux/bits.h>
#include <linux/types.h>

static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return (addr[nr / BITS_PER_LONG] >> (nr % BITS_PER_LONG)) & 1;
}
#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's <linux/filter.h>, as much as filters/pcap_vm.c uses, for
 * user-space builds (see types.h): the uapi part (struct sock_filter, the
 * BPF_* codes), bpf_size_to_bytes(), and the helpers it takes from
 * <linux/minmax.h> and <linux/bitops.h>.
 */
#ifndef _KSHIM_FILTER_H
#define _KSHIM_FILTER_H
#include_next <linux/filter.h>
#include <errno.h>
#include <limits.h>

#define bpf_size_to_bytes(s) \
	((s) == BPF_W ? 4 : (s) == BPF_H ? 2 : (s) == BPF_B ? 1 : -1)
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#define __uninitialized
#define U32_MAX			((u32)~0U)
#define GENMASK(h, l)		((~0U >> (31 - (h))) & (~0U << (l)))
#define BIT_ULL(n)		(1ULL << (n))
#define min(a, b)		((a) < (b) ? (a) : (b))
#define max(a, b)		((a) > (b) ? (a) : (b))
#define fls(x)			((x) ? 32 - __builtin_clz(x) : 0)
#endif

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Payload of the records magnet_stress writes, shared by the module and the
 * user-space checker so both compute the same sizes and checksums.
 */
#ifndef _MAGNET_STRESS_FORMAT_H
#define _MAGNET_STRESS_FORMAT_H

#include <linux/types.h>

#define STRESS_MAGIC		0x6d61676eU	/* "magn" */
#define STRESS_EVENT_BASE	100		/* event id = base + context */

enum {
	STRESS_CTX_TASK,
	STRESS_CTX_SOFTIRQ,
	STRESS_CTX_HARDIRQ,
	STRESS_CTX_NMI,
	STRESS_NR_CTX
};

#define STRESS_CTX_NAMES { "task", "softirq", "hardirq", "nmi" }

/*
 * @seq counts attempts per (cpu, context), dropped ones included, so a gap
 * in the sequence a reader sees is exactly the records lost there.
 */
struct stress_payload {
	__u32 magic;
	__u16 ctx;
	__u16 __pad;
	__u32 cpu;
	__u32 len;		/* payload bytes, this struct included */
	__u64 seq;
	__u32 csum;		/* FNV-1a of data[] */
	__u32 __pad2;
	__u8 data[];
};

static inline __u64 stress_id(__u32 cpu, __u32 ctx, __u64 seq)
{
	return ((__u64)cpu << 48) | ((__u64)ctx << 40) | seq;
}

static inline __u32 stress_mix(__u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* Payload size of record @seq: spread over [min, max], deterministic. */
static inline __u32 stress_len(__u32 min, __u32 max, __u32 cpu, __u32 ctx,
			       __u64 seq)
{
	__u32 h = stress_mix((__u32)seq * 4 + ctx + (cpu << 24));

	return min + h % (max - min + 1);
}

static inline __u8 stress_byte(const struct stress_payload *p, __u32 i)
{
	return (__u8)(p->seq * 131 + i * 7 + p->cpu * 13 + p->ctx);
}

static inline __u32 stress_csum(const struct stress_payload *p)
{
	__u32 n = p->len - sizeof(*p), i, h = 2166136261U;

	for (i = 0; i < n; i++)
		h = (h ^ p->data[i]) * 16777619U;
	return h;
}

static inline void stress_fill(struct stress_payload *p)
{
	__u32 n = p->len - sizeof(*p), i;

	p->__pad = 0;
	p->__pad2 = 0;
	for (i = 0; i < n; i++)
		p->data[i] = stress_byte(p, i);
	p->csum = stress_csum(p);
}

/* 0 if @p is a whole, uncorrupted payload of @len bytes from (cpu, ctx). */
static inline int stress_check(const struct stress_payload *p, __u32 len,
			       __u32 cpu, __u32 ctx)
{
	__u32 n, i;

	if (len < sizeof(*p) || p->magic != STRESS_MAGIC || p->len != len ||
	    p->cpu != cpu || p->ctx != ctx)
		return -1;
	n = len - sizeof(*p);
	for (i = 0; i < n; i++)
		if (p->data[i] != stress_byte(p, i))
			return -1;
	return p->csum == stress_csum(p) ? 0 : -1;
}

#endif /* _MAGNET_STRESS_FORMAT_H */

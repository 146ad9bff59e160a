/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: the kernel interfaces that differ between the kernels magnet
 * supports, Linux 6.1 to 6.12 (tested on Debian's 6.1 and 6.12).
 *
 * Each difference is one wrapper here, named after what it does, with the
 * kernel release and the change that made it. The rest of the module calls
 * the wrapper and never tests a kernel version itself. kmod/kernels.mk
 * refuses other kernels before anything is compiled; the check below is
 * its backstop for builds that bypass Kbuild's files.
 *
 * Differences that are not about C interfaces (a function a probe set
 * hooks that is inlined or renamed on one kernel, a tracepoint whose
 * arguments changed) are settled at run time by what the running kernel
 * has, in packet.c's and probe.c's catalogs; they are listed there.
 */
#ifndef _MAGNET_COMPAT_H
#define _MAGNET_COMPAT_H

#include <linux/ftrace.h>
#include <linux/mm.h>
#include <linux/ring_buffer.h>
#include <linux/uio.h>
#include <linux/version.h>
#include <net/genetlink.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0) || \
	LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
#error "magnet builds on Linux 6.1 to 6.12 only"
#endif

/*
 * 6.12, "move asm/unaligned.h to linux/unaligned.h": get_unaligned_be32()
 * and the rest moved header.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * After 6.1, "netlink: add support for formatted extack messages": an
 * extended ack's message may be formatted, into the extack's own buffer.
 * On 6.1 the message is a pointer only: it is formatted into @buf, of
 * MAGNET_EXTACK_LEN bytes, which must stay valid until the reply is sent
 * (a static one, under magnet's configuration lock).
 */
#define MAGNET_EXTACK_LEN	80

static inline __printf(4, 5)
void magnet_extack_fmt(struct netlink_ext_ack *extack,
		       const struct nlattr *attr, char *buf,
		       const char *fmt, ...)
{
	va_list args;

	if (!extack)
		return;
#ifdef NL_SET_ERR_MSG_ATTR_FMT
	buf = extack->_msg_buf;
	BUILD_BUG_ON(sizeof(extack->_msg_buf) < MAGNET_EXTACK_LEN);
#endif
	va_start(args, fmt);
	vsnprintf(buf, MAGNET_EXTACK_LEN, fmt, args);
	va_end(args);
	extack->_msg = buf;
	extack->bad_attr = attr;
}

/*
 * 6.2, "genetlink: use split ops in pre_doit/post_doit": a family's
 * pre_doit gets the operation as a struct genl_split_ops. Used as
 * "const struct magnet_genl_pre_doit_ops *".
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define magnet_genl_pre_doit_ops genl_split_ops
#else
#define magnet_genl_pre_doit_ops genl_ops
#endif

/*
 * 6.3, "mm: introduce vma->vm_flags wrapper functions": vma->vm_flags is
 * read-only, and vm_flags_set() sets flags (taking the VMA's write lock).
 */
static inline void magnet_vm_flags_set(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void magnet_vm_flags_clear(struct vm_area_struct *vma,
					 vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * 6.6, "genetlink: add struct genl_info to struct genl_dumpit_info": a
 * dump's parsed request attributes moved from genl_dumpit_info->attrs to
 * genl_dumpit_info->info.attrs.
 */
static inline struct nlattr **magnet_genl_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	return genl_dumpit_info(cb)->info.attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * 6.4, "iov_iter: rename iov to __iov" (with the iter_iov() accessor):
 * the current segment of an ITER_IOVEC is read through iter_iov().
 */
static inline const struct iovec *magnet_iter_iov(const struct iov_iter *it)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return iter_iov(it);
#else
	return it->iov;
#endif
}

/*
 * 6.2, "ring-buffer: Remove the unused event parameter of
 * ring_buffer_unlock_commit()": the kernel's ring buffer commits without
 * being handed the event. Used by the benchmark module that compares
 * magnet with it (bench/kmod).
 */
static inline void magnet_ring_buffer_commit(struct trace_buffer *buffer,
					     struct ring_buffer_event *event)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	ring_buffer_unlock_commit(buffer);
#else
	ring_buffer_unlock_commit(buffer, event);
#endif
}

/*
 * 6.13, "ftrace: Make ftrace_regs abstract from direct use" (also in 6.12
 * from its stable updates, hence the test for the accessor rather than
 * the version): struct ftrace_regs is opaque and the registers saved at a
 * function's entry are reached through arch_ftrace_regs(). Before, x86's
 * struct ftrace_regs held them as a pt_regs member.
 *
 * Returns that pt_regs: without FTRACE_OPS_FL_SAVE_REGS only the argument
 * registers, the stack and instruction pointers and the return value
 * register are filled in, enough for regs_get_kernel_argument().
 */
static __always_inline struct pt_regs *
magnet_fregs_args(struct ftrace_regs *fregs)
{
#ifdef arch_ftrace_regs
	return &arch_ftrace_regs(fregs)->regs;
#else
	return &fregs->regs;
#endif
}

#endif /* _MAGNET_COMPAT_H */

/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * magnet: event records and read attributes shared by the magnet kernel
 * module and every user-space reader.
 *
 * Versioning: MAGNET_FORMAT_VERSION changes whenever the layout or meaning
 * of anything below changes. Fields are only ever added by using reserved
 * space or by growing the header; a reader must compare the version it was
 * built with against the one the module reports in
 * /sys/kernel/debug/magnet/control/format (line "version: N") and refuse to
 * parse a stream of another version.
 */
#ifndef _UAPI_LINUX_MAGNET_H
#define _UAPI_LINUX_MAGNET_H

#include <linux/types.h>

#define MAGNET_FORMAT_VERSION	1

/*
 * Files, below the debugfs mount point (usually /sys/kernel/debug), all
 * root-only:
 *
 * magnet/data/<buffer>
 *	The buffer's records as a byte stream of whole records (see struct
 *	magnet_record), drawn from every CPU's ring and consumed by read().
 *	One reader at a time: a second open() fails with EBUSY, as does an
 *	open while a kernel-space reader is attached. Opened read-only.
 *	lseek() sets read attributes (MAGNET_SEEK_*, below). read() fails
 *	with EMSGSIZE if the next record does not fit in the buffer given
 *	(MAGNET_RECORD_MAX always does) and returns 0 once the buffer has
 *	been removed and drained.
 *
 * magnet/control/buffers	(text, not consumed by reading)
 *	"# name bytes_per_cpu mode cpus max_record reader", then one line per
 *	buffer: mode is "drop" or "overwrite", reader "busy" or "free".
 *
 * magnet/control/stats	(text, not consumed by reading)
 *	"# buffer cpu produced written read lost dropped overwritten discarded",
 *	then one line per buffer and possible CPU, counting records since the
 *	buffer was created: produced = written + dropped (every record a
 *	writer tried to log); lost = dropped + overwritten; discarded =
 *	consumed but not delivered (the reader's buffer faulted, overwrite
 *	mode only). Once the reader has drained the buffer,
 *	produced = read + lost + discarded.
 *
 * magnet/control/format	(text, not consumed by reading)
 *	"version: N" (MAGNET_FORMAT_VERSION), "header_size: N", then
 *	"field: TYPE NAME; offset: N; size: N" per header field and the
 *	other constants of this header.
 */
#define MAGNET_DEBUGFS_DIR	"magnet"

/*
 * struct magnet_record - the fixed header of every record
 * @size:	bytes of header plus payload, without alignment padding.
 *		The next record starts ALIGN(@size, MAGNET_RECORD_ALIGN) bytes
 *		after this one, both in the kernel's buffers and in the byte
 *		stream read() returns.
 * @event:	event id, 1..MAGNET_EVENT_ID_MAX, or MAGNET_EVENT_LOSS.
 * @flags:	MAGNET_RF_* bits.
 * @cpu:	CPU that logged the record.
 * @tgid:	thread group (process) id of the current task, in the initial
 *		PID namespace. In interrupt context this is the interrupted
 *		task (see MAGNET_RF_HARDIRQ and friends); 0 for the idle task.
 * @tid:	thread id of the current task, same rules as @tgid.
 * @__reserved:	zero.
 * @id:		abstract id chosen by the event, e.g. the address of the
 *		socket or packet it concerns; 0 when the event has none.
 * @timestamp:	nanoseconds of CLOCK_MONOTONIC when the record was reserved.
 *		One clock for all CPUs, so streams from several CPUs can be
 *		merged by this field. Within one CPU's records, timestamps
 *		never decrease in stream order.
 * @payload:	@size - sizeof(struct magnet_record) bytes of event data.
 *
 * Every record starts on a MAGNET_RECORD_ALIGN boundary. Padding bytes
 * after the payload are zero.
 */
struct magnet_record {
	__u32 size;
	__u16 event;
	__u16 flags;
	__u32 cpu;
	__u32 tgid;
	__u32 tid;
	__u32 __reserved;
	__u64 id;
	__u64 timestamp;
	__u8 payload[];
};

#define MAGNET_RECORD_ALIGN	8
/* Largest record (header + payload) any buffer accepts, in bytes. A buffer
 * also refuses records larger than a quarter of its per-CPU size; its limit
 * is listed in control/buffers. A reader whose read() buffer is at least
 * this large can always receive the next record.
 */
#define MAGNET_RECORD_MAX	65536

/* Event ids. 0 is never used. */
#define MAGNET_EVENT_ID_MAX	0xfeff	/* highest id an event can have */
#define MAGNET_EVENT_LOSS	0xfffe	/* payload: struct magnet_loss */

/* Record flags: the context the record was logged from (none = task). */
#define MAGNET_RF_SOFTIRQ	(1U << 0)
#define MAGNET_RF_HARDIRQ	(1U << 1)
#define MAGNET_RF_NMI		(1U << 2)
/* The payload was cut to the event's snap length. */
#define MAGNET_RF_TRUNCATED	(1U << 3)
/* Loss record made by the reading side (the loss was found when the
 * reader drained the CPU's buffer) rather than logged in the stream by a
 * writer. The numbers mean the same either way.
 */
#define MAGNET_RF_SYNTHETIC	(1U << 4)

/*
 * struct magnet_loss - payload of a MAGNET_EVENT_LOSS record
 * @lost:	records of this CPU (the header's @cpu) lost since the previous
 *		loss record of that CPU: dropped because the buffer was full,
 *		overwritten before they were read (overwrite mode), or refused
 *		because writers nested too deeply.
 * @total:	records of this CPU lost since the buffer was created.
 *
 * The loss record stands in the stream where the loss happened: the lost
 * records were logged after the record before it and before the record
 * after it (of the same CPU). The sum of @lost over a stream equals the
 * "lost" counter of control/stats once the buffer is drained.
 */
struct magnet_loss {
	__u64 lost;
	__u64 total;
};

/*
 * Read attributes of a data file (/sys/kernel/debug/magnet/data/<buffer>),
 * set with lseek(fd, value, whence), as setsockopt() sets a socket's. The
 * VFS only passes whence values up to SEEK_MAX (4) to a file, so magnet's
 * codes take the places of SEEK_END, SEEK_DATA and SEEK_HOLE, which have no
 * meaning on a stream. On success lseek() returns 0. A value out of range
 * fails with EINVAL and changes nothing. SEEK_SET and SEEK_CUR with offset
 * 0 do nothing and return 0 (so stdio's position queries are harmless);
 * with any other offset they fail with ESPIPE. The attributes belong to the
 * open file and start at 0 (off) on every open.
 *
 * A blocking read() waits until at least one whole record is available and
 * both watermarks are met, then returns as many whole records as fit in its
 * buffer. poll(), select(), epoll and SIGIO report the file readable on the
 * same condition. An O_NONBLOCK read() fails with EAGAIN until then.
 *
 * MAGNET_SEEK_TIMEOUT bounds the wait of a blocking read(): once it expires
 * the read returns what there is, even below the watermarks (still waiting
 * for at least one record). It does not change poll readiness.
 */
#define MAGNET_SEEK_TIMEOUT	2	/* microseconds, 0 = wait for the watermarks,
					 * at most MAGNET_TIMEOUT_MAX_US
					 */
#define MAGNET_SEEK_SIZE_WM	3	/* bytes, 0 = off, at most the per-CPU
					 * size of the buffer
					 */
#define MAGNET_SEEK_COUNT_WM	4	/* records, 0 = off, at most the per-CPU
					 * size of the buffer divided by
					 * sizeof(struct magnet_record)
					 */

#define MAGNET_TIMEOUT_MAX_US	3600000000LL	/* one hour */

#endif /* _UAPI_LINUX_MAGNET_H */

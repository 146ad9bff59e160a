/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnet: the module's internal interfaces.
 */
#ifndef _MAGNET_INTERNAL_H
#define _MAGNET_INTERNAL_H

#include <linux/bits.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/magnet.h>
#include <asm/local.h>

#if BITS_PER_LONG != 64
#error "magnet's ring positions are 64-bit; 32-bit kernels are not supported"
#endif

/* Writers nested deeper than this on one CPU are refused (and counted). */
#define MAGNET_MAX_NESTING	8

#define MAGNET_RING_MIN		4096UL		/* per-CPU bytes */
#define MAGNET_RING_MAX		BIT(30)
#define MAGNET_NAME_MAX		32		/* buffer name, with its NUL */

/* Event id of the padding that fills the end of a ring; never read out. */
#define MAGNET_EVENT_PAD	0xffff

/*
 * struct magnet_ring - one CPU's circular buffer
 *
 * Positions (head, commit, tail) count bytes since the ring was created
 * and never wrap (64 bits); the offset in @data is position & @mask.
 *
 * Writer side, touched only by code running on @cpu with preemption
 * disabled, possibly nested (task < softirq < hardirq < NMI):
 * @head:	end of the space reserved so far.
 * @nesting:	writers currently between reserve and commit on this CPU.
 * @commit:	end of the published bytes: everything below it is whole,
 *		committed records. Only the outermost writer advances it.
 * @written:	records reserved and committed.
 * (Records produced = @written + @dropped, see magnet_ring_produced().)
 * @dropped:	records refused: ring full or writers nested too deep.
 * @overwritten: records evicted unread (overwrite mode).
 * @lost_logged: loss total last written into the stream by a writer.
 *
 * Wake-up thresholds, written by the reading side, read by writers:
 * @wake_pos:	queue @wake_work once @commit reaches this position.
 * @wake_written: ... or once @written reaches this count.
 *
 * Reading side (the buffer's single reader, any CPU):
 * @tail:	start of the oldest unread record. In overwrite mode writers
 *		on @cpu move it too, so it is only ever advanced by cmpxchg.
 * @read:	records consumed by the reader.
 * @discarded:	records consumed but not delivered (reader fault).
 * @lost_seen:	loss total already reported to the reader.
 * @last_ts:	timestamp of the last record the reader got.
 */
struct magnet_ring {
	local_t head;
	local_t nesting;
	local_t written;
	local_t dropped;
	local_t overwritten;
	unsigned long commit;
	unsigned long lost_logged;

	unsigned long wake_pos ____cacheline_aligned_in_smp;
	unsigned long wake_written;

	atomic_long_t tail ____cacheline_aligned_in_smp;
	unsigned long read;
	unsigned long discarded;
	unsigned long lost_seen;
	u64 last_ts;

	struct irq_work wake_work;
	struct magnet_buffer *buf;
	unsigned long mask;
	unsigned int cpu;
	void *data;
};

/* The read attributes and wake-up condition of a buffer's reader. */
struct magnet_watermarks {
	unsigned long bytes;
	unsigned long records;
};

/*
 * struct magnet_buffer - a named set of per-CPU rings
 * @rings:	per-CPU ring pointers, indexed by CPU number.
 * @ring_size:	bytes per CPU, a power of two.
 * @max_record:	largest record (header + payload) accepted, bytes.
 * @wake:	the reader's current wake-up condition, used by the
 *		irq_work that decides whether to wake it.
 * @reader_busy: bit 0 set while a reader (file or kernel) is attached.
 * @dead:	set once the buffer is being destroyed; readers get EOF.
 */
struct magnet_buffer {
	struct magnet_ring **rings;
	unsigned long ring_size;
	u32 max_record;
	enum magnet_full_mode mode;
	char name[MAGNET_NAME_MAX];

	struct magnet_watermarks wake;
	wait_queue_head_t wait;
	struct fasync_struct *fasync;
	unsigned long reader_busy;
	bool dead;

	struct kref ref;
	struct list_head node;
	struct dentry *data_file;
};

/*
 * struct magnet_reader - the one reader attached to a buffer
 * @lock:	serialises reads by threads sharing the reader.
 * @next_cpu:	CPU whose ring the next read starts with (fairness).
 * @bounce:	copy of a record taken before consuming it (overwrite mode).
 */
struct magnet_reader {
	struct magnet_buffer *buf;
	struct mutex lock;	/* see above */
	unsigned int next_cpu;
	struct magnet_watermarks wm;
	u64 timeout_us;
	void *bounce;
};

/*
 * struct magnet_sink - where magnet_read_records() delivers records
 * @room:	bytes the sink can still take; records are charged
 *		ALIGN(size, MAGNET_RECORD_ALIGN).
 * @records:	records the sink took (its @deliver counts them).
 * @deliver:	takes one record; returns 0, > 0 to stop after it, or a
 *		negative errno (the record is then counted as discarded).
 */
struct magnet_sink {
	unsigned long room;
	long records;
	int (*deliver)(struct magnet_sink *sink,
		       const struct magnet_record *rec);
};

/* ring.c */
struct magnet_ring *magnet_ring_create(struct magnet_buffer *buf,
				       unsigned int cpu);
void magnet_ring_destroy(struct magnet_ring *ring);
int magnet_ring_read(struct magnet_reader *reader, struct magnet_ring *ring,
		     struct magnet_sink *sink);
void magnet_ring_available(struct magnet_ring *ring, unsigned long *bytes,
			   unsigned long *records);
unsigned long magnet_ring_produced(struct magnet_ring *ring);
unsigned long magnet_ring_lost(struct magnet_ring *ring);

/* buffer.c */
extern struct mutex magnet_buffers_lock;
extern struct list_head magnet_buffers;
void magnet_buffer_destroy(struct magnet_buffer *buf);
void magnet_buffers_destroy_all(void);
int magnet_buffers_from_param(const char *spec, unsigned long memory_limit);
bool magnet_buffer_ready(struct magnet_buffer *buf,
			 const struct magnet_watermarks *wm);
bool magnet_buffer_wait_prepare(struct magnet_buffer *buf,
				const struct magnet_watermarks *wm);
void magnet_buffer_wake_work(struct irq_work *work);
int magnet_reader_attach(struct magnet_buffer *buf,
			 struct magnet_reader *reader);
void magnet_reader_detach(struct magnet_reader *reader);
long magnet_read_records(struct magnet_reader *reader,
			 struct magnet_sink *sink);

/* fs.c */
int magnet_fs_init(void);
void magnet_fs_exit(void);
int magnet_fs_add_buffer(struct magnet_buffer *buf);
void magnet_fs_remove_buffer(struct magnet_buffer *buf);

#endif /* _MAGNET_INTERNAL_H */

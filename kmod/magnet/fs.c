// SPDX-License-Identifier: GPL-2.0
/*
 * magnet: files in debugfs.
 *
 *   magnet/data/<buffer>	the buffer's records, consumed by read(), or
 *				mapped (mmap) and given back by ioctl
 *   magnet/control/buffers	buffers, sizes and modes
 *   magnet/control/stats	per-CPU produced / written / read / lost
 *   magnet/control/format	the record format, for readers to check
 *
 * Data files are created with debugfs_create_file_unsafe(): debugfs's
 * protective proxy would hide read_iter (io_uring) and fasync (SIGIO). The
 * lifetime of what an open file points to is ours to manage instead: the
 * open file holds a reference on its buffer (so a buffer destroyed while a
 * file is open stays in memory and reads return EOF), and the open proxy
 * takes a reference on this module (so rmmod is refused while a data file
 * is open).
 */

#include <linux/debugfs.h>
#include <linux/error-injection.h>
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "magnet.h"

static struct dentry *magnet_dir, *data_dir;

static void reader_watermarks(struct magnet_reader *reader,
			      struct magnet_watermarks *wm)
{
	wm->bytes = READ_ONCE(reader->wm.bytes);
	wm->records = READ_ONCE(reader->wm.records);
}

/*
 * The read attributes changed or SIGIO was just enabled: have pollers and
 * blocked readers look again, and signal a SIGIO owner if the file is
 * readable now.
 */
static void data_conditions_changed(struct magnet_reader *reader)
{
	struct magnet_buffer *buf = reader->buf;
	struct magnet_watermarks wm;

	reader_watermarks(reader, &wm);
	wake_up_interruptible_poll(&buf->wait, EPOLLIN | EPOLLRDNORM);
	if (READ_ONCE(buf->fasync) && magnet_buffer_wait_prepare(buf, &wm))
		kill_fasync(&buf->fasync, SIGIO, POLL_IN);
}

static int data_open(struct inode *inode, struct file *file)
{
	struct magnet_buffer *buf = inode->i_private;
	struct magnet_reader *reader;
	int err;

	if (!(file->f_mode & FMODE_READ) || (file->f_mode & FMODE_WRITE))
		return -EINVAL;
	reader = kmalloc(sizeof(*reader), GFP_KERNEL);
	if (!reader)
		return -ENOMEM;
	err = magnet_reader_attach(buf, reader);
	if (err) {
		kfree(reader);
		return err;
	}
	file->private_data = reader;
	/*
	 * A stream, like stream_open(), but keeping FMODE_LSEEK for the read
	 * attributes. Without this the VFS would take f_pos_lock around
	 * read() and lseek() (debugfs files are regular files), and a thread
	 * changing a watermark would block behind a thread blocked in read.
	 * No FMODE_NOWAIT: io_uring would then insist on filling a regular
	 * file's whole buffer; without it, its workers read like read() does.
	 */
	file->f_mode &= ~(FMODE_ATOMIC_POS | FMODE_PREAD | FMODE_PWRITE);
	file->f_mode |= FMODE_STREAM;
	return 0;
}

static int data_release(struct inode *inode, struct file *file)
{
	struct magnet_reader *reader = file->private_data;

	fasync_helper(-1, file, 0, &reader->buf->fasync);
	magnet_reader_detach(reader);
	kfree(reader);
	return 0;
}

struct iter_sink {
	struct magnet_sink sink;
	struct iov_iter *to;
	size_t bytes;
};

static int iter_deliver(struct magnet_sink *sink,
			const struct magnet_record *rec)
{
	struct iter_sink *is = container_of(sink, struct iter_sink, sink);
	size_t len = ALIGN(rec->size, MAGNET_RECORD_ALIGN);

	if (copy_to_iter(rec, len, is->to) != len)
		return -EFAULT;
	is->bytes += len;
	sink->records++;
	return 0;
}

/*
 * Arm the wake-up for the reader's current watermarks; true if they are
 * met or the buffer is gone.
 */
static bool data_wait_done(struct magnet_reader *reader)
{
	struct magnet_watermarks wm;

	reader_watermarks(reader, &wm);
	return magnet_buffer_wait_prepare(reader->buf, &wm) ||
	       READ_ONCE(reader->buf->dead);
}

/*
 * Wait until the reader's watermarks are met, or until the read timeout
 * expires and there is at least one record. Returns 0 or -ERESTARTSYS.
 */
static int data_wait(struct magnet_reader *reader)
{
	static const struct magnet_watermarks one = { .records = 1 };
	struct magnet_buffer *buf = reader->buf;
	u64 timeout_us = READ_ONCE(reader->timeout_us);
	long ret;

	if (!timeout_us)
		return wait_event_interruptible(buf->wait,
						data_wait_done(reader));
	ret = wait_event_interruptible_timeout(buf->wait,
					       data_wait_done(reader),
					       usecs_to_jiffies(timeout_us));
	if (ret)
		return ret < 0 ? ret : 0;
	return wait_event_interruptible(buf->wait,
					magnet_buffer_wait_prepare(buf, &one) ||
					READ_ONCE(buf->dead));
}

static ssize_t data_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct magnet_reader *reader = file->private_data;
	struct magnet_buffer *buf = reader->buf;
	bool nowait = (file->f_flags & O_NONBLOCK) ||
		      (iocb->ki_flags & IOCB_NOWAIT);
	struct iter_sink is = { .to = to, .sink.deliver = iter_deliver };
	struct magnet_watermarks wm;
	long n;

	if (!iov_iter_count(to))
		return 0;
	if (nowait) {
		if (!mutex_trylock(&reader->lock))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&reader->lock)) {
		return -ERESTARTSYS;
	}

	reader_watermarks(reader, &wm);
	for (;;) {
		if (!magnet_buffer_ready(buf, &wm) && !READ_ONCE(buf->dead)) {
			n = -EAGAIN;
			if (nowait)
				break;
			n = data_wait(reader);
			if (n)
				break;
			/* after a timeout, take whatever is there */
			wm.bytes = 0;
			wm.records = 1;
		}
		is.sink.room = iov_iter_count(to);
		n = magnet_read_records(reader, &is.sink);
		if (n || READ_ONCE(buf->dead))
			break;
		/* counted but not yet published: a nested writer is busy */
		cond_resched();
	}
	mutex_unlock(&reader->lock);

	/* SIGIO owner: the next arrival that meets the watermarks signals. */
	if (READ_ONCE(buf->fasync)) {
		reader_watermarks(reader, &wm);
		magnet_buffer_wait_prepare(buf, &wm);
	}
	if (n == -ENOSPC)
		return -EMSGSIZE;	/* the next record needs a larger buffer */
	return n < 0 ? n : is.bytes;
}

static __poll_t data_poll(struct file *file, poll_table *wait)
{
	struct magnet_reader *reader = file->private_data;
	struct magnet_buffer *buf = reader->buf;
	struct magnet_watermarks wm;
	__poll_t mask = 0;

	poll_wait(file, &buf->wait, wait);
	reader_watermarks(reader, &wm);
	if (magnet_buffer_wait_prepare(buf, &wm))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(buf->dead))
		mask |= EPOLLHUP;
	return mask;
}

static int data_fasync(int fd, struct file *file, int on)
{
	struct magnet_reader *reader = file->private_data;
	int ret;

	ret = fasync_helper(fd, file, on, &reader->buf->fasync);
	if (ret > 0 && on)
		data_conditions_changed(reader);
	return ret;
}

/* Read attributes: see MAGNET_SEEK_* in the uapi header. */
static loff_t data_llseek(struct file *file, loff_t value, int whence)
{
	struct magnet_reader *reader = file->private_data;
	unsigned long ring_size = reader->buf->ring_size;

	switch (whence) {
	case SEEK_SET:
	case SEEK_CUR:
		return value ? -ESPIPE : 0;
	case MAGNET_SEEK_TIMEOUT:
		if (value < 0 || value > MAGNET_TIMEOUT_MAX_US)
			return -EINVAL;
		WRITE_ONCE(reader->timeout_us, value);
		return 0;
	case MAGNET_SEEK_SIZE_WM:
		if (value < 0 || value > ring_size)
			return -EINVAL;
		WRITE_ONCE(reader->wm.bytes, value);
		break;
	case MAGNET_SEEK_COUNT_WM:
		if (value < 0 ||
		    value > ring_size / sizeof(struct magnet_record))
			return -EINVAL;
		WRITE_ONCE(reader->wm.records, value);
		break;
	default:
		return -EINVAL;
	}
	data_conditions_changed(reader);
	return 0;
}

/* --- the mapping (MAGNET_IOC_MAP_INFO in the uapi header) --------------- */

/* Slot @slot of the mapping is the ring of the @slot-th possible CPU. */
static struct magnet_ring *slot_ring(struct magnet_buffer *buf, u64 slot)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (!slot--)
			return buf->rings[cpu];
	return NULL;
}

static void map_info(struct magnet_buffer *buf, struct magnet_map_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->slots = num_possible_cpus();
	mi->pub_size = PAGE_SIZE;
	mi->ring_size = buf->ring_size;
	mi->slot_size = PAGE_SIZE + buf->ring_size;
	mi->map_size = mi->slots * mi->slot_size;
	mi->max_record = buf->max_record;
}

/* A page of the mapping: a ring's public page or one of its ring's. */
static vm_fault_t data_fault(struct vm_fault *vmf)
{
	struct magnet_reader *reader = vmf->vma->vm_file->private_data;
	struct magnet_buffer *buf = reader->buf;
	u64 slot_size = PAGE_SIZE + buf->ring_size;
	u64 off = (u64)vmf->pgoff << PAGE_SHIFT;
	struct magnet_ring *ring = slot_ring(buf, div64_u64(off, slot_size));
	struct page *page;

	if (!ring)
		return VM_FAULT_SIGBUS;
	page = vmalloc_to_page((void *)ring->pub + off % slot_size);
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct data_vm_ops = {
	.fault = data_fault,
};

/*
 * Read-only and shared: writers' pages seen as they write them. The open
 * file, which the mapping holds, holds the buffer and so its rings.
 */
static int data_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct magnet_reader *reader = file->private_data;
	struct magnet_buffer *buf = reader->buf;
	struct magnet_map_info mi;

	if (buf->mode != MAGNET_FULL_DROP)
		return -EOPNOTSUPP;
	map_info(buf, &mi);
	/* A read-only file's shared mapping has VM_MAYSHARE, not VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE) || (vma->vm_flags & VM_WRITE) ||
	    vma->vm_pgoff || vma->vm_end - vma->vm_start > mi.map_size)
		return -EINVAL;
	magnet_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &data_vm_ops;
	return 0;
}

static long data_consume(struct magnet_reader *reader,
			 struct magnet_consume __user *arg)
{
	struct magnet_buffer *buf = reader->buf;
	struct magnet_watermarks wm;
	struct magnet_consume c;
	struct magnet_ring *ring;
	int err;

	/*
	 * The answer must reach the caller, or nothing is consumed: an
	 * argument it cannot write is refused before anything moves (the
	 * bytes written back are the ones read).
	 */
	if (copy_from_user(&c, arg, sizeof(c)) ||
	    copy_to_user(arg, &c, sizeof(c)))
		return -EFAULT;
	ring = slot_ring(buf, c.slot);
	if (c.flags || !ring)
		return -EINVAL;
	if (buf->mode != MAGNET_FULL_DROP)
		return -EOPNOTSUPP;
	if (mutex_lock_interruptible(&reader->lock))
		return -ERESTARTSYS;
	err = magnet_ring_consume(ring, c.pos, &c);
	if (!err && copy_to_user(arg, &c, sizeof(c))) {
		/*
		 * Unmapped since (another thread's): the records are gone,
		 * but the losses stay to be reported by the next call.
		 */
		if (c.lost)
			WRITE_ONCE(ring->pub->lost_seen, c.lost_total - c.lost);
		err = -EFAULT;
	}
	mutex_unlock(&reader->lock);
	if (err && err != -EFAULT)
		return err;
	/* SIGIO owner: as after a read(). */
	if (READ_ONCE(buf->fasync)) {
		reader_watermarks(reader, &wm);
		magnet_buffer_wait_prepare(buf, &wm);
	}
	return err;
}

static long data_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct magnet_reader *reader = file->private_data;
	struct magnet_map_info mi;

	switch (cmd) {
	case MAGNET_IOC_MAP_INFO:
		map_info(reader->buf, &mi);
		return copy_to_user((void __user *)arg, &mi, sizeof(mi)) ?
		       -EFAULT : 0;
	case MAGNET_IOC_CONSUME:
		return data_consume(reader, (void __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations data_fops = {
	.owner		= THIS_MODULE,
	.open		= data_open,
	.release	= data_release,
	.read_iter	= data_read_iter,
	.poll		= data_poll,
	.fasync		= data_fasync,
	.llseek		= data_llseek,
	.mmap		= data_mmap,
	.unlocked_ioctl	= data_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

/* A session's buffers are in data/<session>/. */
static struct dentry *session_dir(u32 id)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", id);
	return debugfs_lookup(name, data_dir);
}

int magnet_fs_add_buffer(struct magnet_buffer *buf)
{
	struct dentry *dir = buf->session ? session_dir(buf->session) : NULL;
	struct dentry *d;

	if (buf->session && IS_ERR_OR_NULL(dir))
		return -ENOENT;
	d = debugfs_create_file_unsafe(buf->name, 0400, dir ?: data_dir, buf,
				       &data_fops);
	/* A session's data is its owner's (and root's), as its directory. */
	if (dir && !IS_ERR(d))
		d_inode(d)->i_uid = d_inode(dir)->i_uid;
	dput(dir);
	if (IS_ERR(d))
		return PTR_ERR(d);
	buf->data_file = d;
	return 0;
}

ALLOW_ERROR_INJECTION(magnet_fs_add_buffer, ERRNO);

void magnet_fs_remove_buffer(struct magnet_buffer *buf)
{
	debugfs_remove(buf->data_file);
	buf->data_file = NULL;
}

/*
 * data/<id>/, for session @id's buffers: its owner @uid's, mode 0700, so
 * that other users see that the session exists and nothing of its data.
 * (debugfs makes directories 0755 root's; the new inode is not in use.)
 */
int magnet_fs_add_session(u32 id, kuid_t uid)
{
	char name[16];
	struct dentry *d;

	snprintf(name, sizeof(name), "%u", id);
	d = debugfs_create_dir(name, data_dir);
	if (IS_ERR(d))
		return PTR_ERR(d);
	d_inode(d)->i_uid = uid;
	d_inode(d)->i_mode = S_IFDIR | 0700;
	return 0;
}

void magnet_fs_remove_session(u32 id)
{
	struct dentry *d = session_dir(id);

	if (!IS_ERR_OR_NULL(d)) {
		debugfs_remove(d);
		dput(d);
	}
}

static const char *mode_name(enum magnet_full_mode mode)
{
	return mode == MAGNET_FULL_OVERWRITE ? "overwrite" : "drop";
}

static int buffers_show(struct seq_file *m, void *v)
{
	struct magnet_buffer *buf;

	seq_puts(m, "# name bytes_per_cpu mode cpus max_record reader\n");
	mutex_lock(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node)
		seq_printf(m, "%s %lu %s %u %u %s\n", buf->name,
			   buf->ring_size, mode_name(buf->mode),
			   num_possible_cpus(), buf->max_record,
			   test_bit(0, &buf->reader_busy) ? "busy" : "free");
	mutex_unlock(&magnet_buffers_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(buffers);

static int stats_show(struct seq_file *m, void *v)
{
	struct magnet_buffer *buf;
	struct magnet_ring *ring;
	unsigned int cpu;

	seq_puts(m, "# buffer cpu produced written read lost dropped overwritten discarded\n");
	mutex_lock(&magnet_buffers_lock);
	list_for_each_entry(buf, &magnet_buffers, node) {
		for_each_possible_cpu(cpu) {
			ring = buf->rings[cpu];
			seq_printf(m, "%s %u %lu %ld %lu %lu %ld %ld %lu\n",
				   buf->name, cpu,
				   magnet_ring_produced(ring),
				   local_read(&ring->written),
				   READ_ONCE(ring->read),
				   magnet_ring_lost(ring),
				   local_read(&ring->dropped),
				   local_read(&ring->overwritten),
				   READ_ONCE(ring->discarded));
		}
	}
	mutex_unlock(&magnet_buffers_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

static const struct {
	const char *type, *name;
	size_t offset, size;
} format_fields[] = {
	{ "u32", "size", offsetof(struct magnet_record, size), 4 },
	{ "u16", "event", offsetof(struct magnet_record, event), 2 },
	{ "u16", "flags", offsetof(struct magnet_record, flags), 2 },
	{ "u32", "cpu", offsetof(struct magnet_record, cpu), 4 },
	{ "u32", "tgid", offsetof(struct magnet_record, tgid), 4 },
	{ "u32", "tid", offsetof(struct magnet_record, tid), 4 },
	{ "u32", "__reserved", offsetof(struct magnet_record, __reserved), 4 },
	{ "u64", "id", offsetof(struct magnet_record, id), 8 },
	{ "u64", "timestamp", offsetof(struct magnet_record, timestamp), 8 },
};

static int format_show(struct seq_file *m, void *v)
{
	unsigned int i;

	seq_printf(m, "version: %d\n", MAGNET_FORMAT_VERSION);
	seq_printf(m, "header_size: %zu\n", sizeof(struct magnet_record));
	seq_printf(m, "record_align: %d\n", MAGNET_RECORD_ALIGN);
	seq_printf(m, "record_max: %d\n", MAGNET_RECORD_MAX);
	seq_puts(m, "byte_order: little-endian\n");
	seq_puts(m, "clock: CLOCK_MONOTONIC ns\n");
	for (i = 0; i < ARRAY_SIZE(format_fields); i++)
		seq_printf(m, "field: %s %s; offset: %zu; size: %zu\n",
			   format_fields[i].type, format_fields[i].name,
			   format_fields[i].offset, format_fields[i].size);
	seq_printf(m, "event: loss %u; payload: u64 lost, u64 total\n",
		   MAGNET_EVENT_LOSS);
	seq_printf(m, "event_id_max: %u\n", MAGNET_EVENT_ID_MAX);
	seq_printf(m, "flags: softirq=%#x hardirq=%#x nmi=%#x truncated=%#x synthetic=%#x\n",
		   MAGNET_RF_SOFTIRQ, MAGNET_RF_HARDIRQ, MAGNET_RF_NMI,
		   MAGNET_RF_TRUNCATED, MAGNET_RF_SYNTHETIC);
	seq_printf(m, "seek: timeout=%d size_wm=%d count_wm=%d\n",
		   MAGNET_SEEK_TIMEOUT, MAGNET_SEEK_SIZE_WM,
		   MAGNET_SEEK_COUNT_WM);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(format);

int magnet_fs_init(void)
{
	struct dentry *control;

	magnet_dir = debugfs_create_dir(MAGNET_DEBUGFS_DIR, NULL);
	if (IS_ERR(magnet_dir))
		return PTR_ERR(magnet_dir);
	data_dir = debugfs_create_dir("data", magnet_dir);
	control = debugfs_create_dir("control", magnet_dir);
	debugfs_create_file("buffers", 0400, control, NULL, &buffers_fops);
	debugfs_create_file("stats", 0400, control, NULL, &stats_fops);
	debugfs_create_file("format", 0444, control, NULL, &format_fops);
	if (IS_ERR(data_dir) || IS_ERR(control)) {
		debugfs_remove_recursive(magnet_dir);
		return -ENOMEM;
	}
	return 0;
}

void magnet_fs_exit(void)
{
	debugfs_remove_recursive(magnet_dir);
}

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

#include <linux/ioctl.h>
#include <linux/types.h>

#define MAGNET_FORMAT_VERSION	1

/*
 * Files, below the debugfs mount point (usually /sys/kernel/debug),
 * root-only but for a session's (its owner's too) and the format (anyone's):
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
 * magnet/data/<session>/<buffer>
 *	The same, for a buffer of session <session> (a number; see
 *	MAGNET_CMD_SESSION_NEW). The directory (mode 0700) and its files
 *	belong to the user who made the session; they go with it.
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
 * magnet/control/format	(text, not consumed by reading; mode 0444)
 *	"version: N" (MAGNET_FORMAT_VERSION), "header_size: N", then
 *	"field: TYPE NAME; offset: N; size: N" per header field and the
 *	other constants of this header.
 */
#define MAGNET_DEBUGFS_DIR	"magnet"

/*
 * struct magnet_record - the fixed header of every record
 * @size:	bytes of header plus payload, without alignment padding.
 *		The next record starts MAGNET_RECORD_LEN(@size) bytes after
 *		this one, both in the kernel's buffers and in the byte stream
 *		read() returns.
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
/* Bytes from a record of @size to the next: @size rounded up to the
 * alignment.
 */
#define MAGNET_RECORD_LEN(size) \
	(((__u64)(size) + MAGNET_RECORD_ALIGN - 1) & \
	 ~(__u64)(MAGNET_RECORD_ALIGN - 1))
/* Largest record (header + payload) any buffer accepts, in bytes. A buffer
 * also refuses records larger than a quarter of its per-CPU size; its limit
 * is listed in control/buffers. A reader whose read() buffer is at least
 * this large can always receive the next record.
 */
#define MAGNET_RECORD_MAX	65536

/* Event ids. 0 is never used. */
#define MAGNET_EVENT_ID_MAX	0xfeff	/* highest id an event can have */
#define MAGNET_EVENT_LOSS	0xfffe	/* payload: struct magnet_loss */
/* A mapped ring's padding at its end: skip @size bytes (no payload read). */
#define MAGNET_EVENT_PAD	0xffff
/* MAGNET_EVENT_JOURNEY (0xfffd, below): records grouped by a correlating
 * filter; payload struct magnet_journey.
 */

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
/* The payload is a struct magnet_packet (a packet probe's record). */
#define MAGNET_RF_PACKET	(1U << 5)
/* The payload is a struct magnet_block (a block probe's record). */
#define MAGNET_RF_BLOCK		(1U << 6)
/* The payload is a struct magnet_span (an app.span probe's record). */
#define MAGNET_RF_SPAN		(1U << 7)
/* The payload is a struct magnet_sample (a cpu.sample probe's record). */
#define MAGNET_RF_SAMPLE	(1U << 8)

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

/*
 * Reading a data file through a mapping, without copies (drop-mode
 * buffers; an overwrite-mode buffer refuses mmap() with EOPNOTSUPP, and is
 * read with read()).
 *
 * MAGNET_IOC_MAP_INFO fills a struct magnet_map_info. mmap(NULL,
 * info.map_size, PROT_READ, MAP_SHARED, fd, 0) then maps every CPU's ring
 * read-only: slot i (0 <= i < info.slots) starts at i * info.slot_size with
 * a struct magnet_ring_pub page (info.pub_size bytes), and its ring of
 * info.ring_size bytes follows. Positions count bytes since the ring was
 * created and never wrap; the byte at position p is at ring offset
 * p % ring_size, and a record never runs past the end of the ring (the
 * space left there is skipped by a record of event MAGNET_EVENT_PAD, whose
 * @size says how much; readers skip it). A writable or private mapping, an
 * offset other than 0 or a size above info.map_size fail with EINVAL (or
 * EACCES for PROT_WRITE, as for any read-only file).
 *
 * The records of slot i are those from pub->tail up to pub->commit: load
 * @commit with acquire semantics (__atomic_load_n(..., __ATOMIC_ACQUIRE)),
 * then read the records below it. They stay put until the reader gives
 * them back with MAGNET_IOC_CONSUME: the kernel, never the reader, moves
 * @tail, after checking that the new tail is a record boundary between the
 * old one and @commit, counting the records as read() would, so the
 * statistics, the watermarks and poll() work as they do for read().
 * read() and the mapping may be mixed: both consume the same records.
 *
 * Losses, as read() reports them: a MAGNET_EVENT_LOSS record in a ring
 * has @total set and @lost 0; its @lost is @total less the @total of the
 * CPU's previous loss (pub->lost_seen before the first). Losses after the
 * last record of a drained ring come back from MAGNET_IOC_CONSUME, to be
 * reported with a loss record of flag MAGNET_RF_SYNTHETIC: consume up to
 * @commit (or to @tail, consuming nothing) to ask.
 */
struct magnet_map_info {
	__u32 slots;		/* rings: the machine's possible CPUs */
	__u32 pub_size;		/* bytes of a slot's struct magnet_ring_pub page */
	__u64 ring_size;	/* bytes of a slot's ring */
	__u64 slot_size;	/* pub_size + ring_size */
	__u64 map_size;		/* slots * slot_size */
	__u32 max_record;	/* largest record, in bytes */
	__u32 __reserved;
};

/*
 * struct magnet_ring_pub - the page before each mapped ring (read-only)
 * @commit:	end of the published records: every byte below it belongs to
 *		a whole record. Written by the CPU's writers.
 * @cpu:	the CPU whose ring this is.
 * @tail:	start of the oldest record not consumed yet. Moved by the
 *		kernel on read() and MAGNET_IOC_CONSUME.
 * @lost_seen:	the loss total (struct magnet_loss @total) the reading side
 *		last reported for this CPU.
 * The fields are apart so that writers and the reading side do not share
 * a cache line.
 */
struct magnet_ring_pub {
	__u64 commit;
	__u32 cpu;
	__u32 __reserved0;
	__u64 __pad0[6];
	__u64 tail;
	__u64 lost_seen;
	__u64 __pad1[6];
};

/*
 * struct magnet_consume - argument of MAGNET_IOC_CONSUME
 * @slot:	in: the slot (struct magnet_map_info) whose records to consume
 * @flags:	in: 0
 * @pos:	in: the new tail: pub->tail, or the end of a record at or
 *		below pub->commit
 * @records:	out: event records consumed (loss and padding not counted)
 * @lost:	out: records lost after the last record of the now drained
 *		ring, not reported before (0: none); report them with a loss
 *		record of @lost, @lost_total, stamped @timestamp
 * @lost_total: out: the CPU's loss total, when @lost is not 0
 * @timestamp:	out: the timestamp of the last record consumed on this CPU
 * A @slot that does not exist, a @pos outside [tail, commit] or inside a
 * record, or @flags not 0 fail with EINVAL and change nothing; so does an
 * argument the caller cannot write (EFAULT). Only if it stops being
 * writable during the call (another thread unmaps it) are the records
 * consumed with EFAULT; a drained ring's @lost is then kept for the next
 * call to report.
 */
struct magnet_consume {
	__u32 slot;
	__u32 flags;
	__u64 pos;
	__u64 records;
	__u64 lost;
	__u64 lost_total;
	__u64 timestamp;
};

#define MAGNET_IOC_MAGIC	0xb6
#define MAGNET_IOC_MAP_INFO	_IOR(MAGNET_IOC_MAGIC, 1, struct magnet_map_info)
#define MAGNET_IOC_CONSUME	_IOWR(MAGNET_IOC_MAGIC, 2, struct magnet_consume)

/*
 * Probe payloads.
 *
 * A generic kprobe records the first MAGNET_A_PROBE_ARGS argument registers
 * of the probed function (the calling convention's integer arguments, in
 * order), a generic kretprobe records its return value, the time spent in
 * the call and the arguments it was entered with, and a generic tracepoint
 * probe records the first MAGNET_A_PROBE_ARGS arguments the tracepoint
 * passes (at most MAGNET_TRACEPOINT_ARGS_MAX), as the 64-bit registers
 * that carry them: pointers as addresses; for arguments narrower than 64
 * bits (int, bool) only the low bits are defined. Asking for more
 * arguments than the tracepoint has gives unspecified values in the extra
 * slots. Only tracepoints of the kernel proper can be probed, not those of
 * modules. Payloads are cut to the probe's snap length, and to the
 * buffer's largest record (MAGNET_RF_TRUNCATED).
 */
#define MAGNET_PROBE_ARGS_MAX		6
#define MAGNET_TRACEPOINT_ARGS_MAX	5

/* A generic kprobe or tracepoint probe's payload is __u64 args[N]. */

struct magnet_ret_payload {
	__s64 retval;		/* the function's return value */
	__u64 duration_ns;	/* entry to return, CLOCK_MONOTONIC */
	__u64 args[];		/* MAGNET_A_PROBE_ARGS values, taken at entry */
};

/*
 * Payloads of the predefined probes (MAGNET_A_PROBE_PREDEF; the catalog,
 * MAGNET_CMD_CATALOG_GET, names them with their kind and target). Pids are
 * in the initial PID namespace. Names are NUL-padded.
 */
#define MAGNET_COMM_LEN	16

/* "sched_switch" (tracepoint sched_switch); record id: next task's pid */
struct magnet_sched_switch {
	__u32 prev_pid;
	__u32 prev_tgid;
	__u32 next_pid;
	__u32 next_tgid;
	__u32 prev_state;	/* the kernel's task state bits, 0 = runnable */
	__u32 preempt;		/* 1 if prev was preempted */
	char prev_comm[MAGNET_COMM_LEN];
	char next_comm[MAGNET_COMM_LEN];
};

/* "process_fork" (tracepoint sched_process_fork); record id: child pid */
struct magnet_process_fork {
	__u32 parent_pid;
	__u32 parent_tgid;
	__u32 child_pid;
	__u32 child_tgid;
	char comm[MAGNET_COMM_LEN];
};

/* "process_exit" (tracepoint sched_process_exit); record id: pid */
struct magnet_process_exit {
	__u32 pid;
	__u32 tgid;
	__s32 exit_code;	/* as wait() would report it */
	__u32 __reserved;
	char comm[MAGNET_COMM_LEN];
};

/* "syscall_enter" (tracepoint sys_enter); record id: syscall number */
struct magnet_syscall_enter {
	__s64 nr;
	__u64 args[6];
};

/* "syscall_exit" (tracepoint sys_exit); record id: syscall number */
struct magnet_syscall_exit {
	__s64 nr;
	__s64 ret;
};

/*
 * "netif_receive" (tracepoint netif_receive_skb), "net_start_xmit"
 * (tracepoint net_dev_start_xmit: about to be handed to the driver),
 * "net_xmit" (tracepoint net_dev_xmit: the driver's verdict), "skb_free"
 * (tracepoint kfree_skb; consumed packets are not recorded, only drops);
 * record id: the packet (sk_buff) address. All but net_xmit (where the
 * packet may already be gone) can be filtered by the "packet" filter.
 */
struct magnet_skb {
	__u32 len;		/* bytes of the packet */
	__u32 ifindex;		/* device, 0 if none */
	__u16 protocol;		/* ethertype, host byte order */
	__u16 __reserved;
	__s32 result;		/* net_xmit: driver's return code; skb_free:
				 * the drop reason, the running kernel's
				 * enum skb_drop_reason: its numbers differ
				 * between kernel releases (6.1 and 6.12 do),
				 * the kfree_skb tracepoint's format file
				 * (tracefs events/skb/kfree_skb/format)
				 * names them
				 */
	__u64 location;		/* skb_free: address of the dropping code */
};

/* "tcp_send" (kprobe tcp_sendmsg); record id: the socket address */
struct magnet_tcp_send {
	__u64 size;		/* bytes the caller asked to send */
};

/*
 * Packet probes: following packets through the network stack.
 *
 * The catalog's entries named "SET.LAYER" are the layers of four probe
 * sets, each layer a point on the path of a packet (enum magnet_layer):
 *
 *   udp-send  socket, udp, ip, dev-queue, dev-xmit
 *   tcp-send  socket, tcp, ip, dev-queue, dev-xmit
 *   udp-recv  dev-recv, ip, udp, sock-queue, app
 *   tcp-recv  dev-recv, ip, tcp, sock-queue, app
 *
 * Adding a set is adding each of its entries as a probe (magnetctl probe
 * add-set does that). An entry's target (MAGNET_A_PROBE_TARGET in the
 * catalog) may list several functions separated by '|': the probe goes on
 * the first one the running kernel has, and the probe's own
 * MAGNET_A_PROBE_TARGET then names the one used. Kernels differ: a layer
 * may have no function at all in some kernel, and its PROBE_NEW fails
 * with -ENOENT. Protocol-specific layers (udp, tcp, ip) have an IPv6
 * entry of their own ("udp-send.udp6", "tcp-recv.ip6", ...) where IPv6
 * takes another function; the layers shared by both families (socket,
 * dev-*, sock-queue, app) log both. Each entry logs only packets of its
 * set's protocol (UDP or TCP) over IPv4 or IPv6; other traffic passing
 * the same point is ignored before anything is counted.
 *
 * Every record's payload is a struct magnet_packet followed by @caplen
 * bytes of data; its record id is the packet's skb address, or the
 * socket's address where there is no packet yet (the send call).
 * A probe's snap length (MAGNET_A_PROBE_SNAPLEN) counts those data bytes
 * for packet probes, not the whole payload: 0 keeps the whole packet, up
 * to what the buffer's largest record allows.
 *
 * Following a packet: from the IP layer down and up (and, on loopback or a
 * veth pair, across to the receiving socket) one packet keeps its @skb.
 * The send call and the protocol layer above IP have @sock but no @skb
 * (udp) or a clone of the segment (tcp: the segment is cloned before IP);
 * the first record with an @skb of the same @sock that follows in the same
 * context continues the journey: in a task, the same thread (which may
 * have moved to another CPU in between); in an interrupt, the same CPU.
 * TCP segments also carry @seq. A TCP segment that the receiver merges
 * into the one queued before it ends its journey at sock-queue; the
 * application's copy (app) then shows the merged skb.
 */
enum magnet_layer {
	MAGNET_LAYER_NONE,
	MAGNET_LAYER_SOCKET,	/* the application's send call, socket level */
	MAGNET_LAYER_PROTO_SEND,/* UDP send call / TCP segment built */
	MAGNET_LAYER_IP_SEND,	/* IP output (ip_output, ip6_output) */
	MAGNET_LAYER_DEV_QUEUE,	/* queued to a device (tracepoint net_dev_queue) */
	MAGNET_LAYER_DEV_XMIT,	/* handed to the driver (net_dev_start_xmit) */
	MAGNET_LAYER_DEV_RECV,	/* received by the stack (netif_receive_skb) */
	MAGNET_LAYER_IP_RECV,	/* IP input (ip_rcv) */
	MAGNET_LAYER_PROTO_RECV,/* UDP / TCP input */
	MAGNET_LAYER_SOCK_QUEUE,/* put on the socket's receive queue */
	MAGNET_LAYER_APP,	/* taken by the application's receive call
				 * (udp: return of __skb_recv_udp; tcp:
				 * tracepoint skb_copy_datagram_iovec)
				 */
	MAGNET_LAYER_COUNT
};

/* struct magnet_packet.flags */
#define MAGNET_PKT_DATA_NET	0x0001	/* data: the packet from its IP header */
#define MAGNET_PKT_DATA_TRANSPORT 0x0002 /* data: from the TCP/UDP header */
#define MAGNET_PKT_DATA_USER	0x0004	/* data: the application's bytes */
#define MAGNET_PKT_FAULT	0x0008	/* user bytes not resident: not read
					 * (probe context never faults)
					 */
#define MAGNET_PKT_ADDRS	0x0010	/* addresses and ports are known */

/**
 * struct magnet_packet - payload of a packet probe's record
 * @skb:	address of the packet (struct sk_buff), 0 at the send call
 * @sock:	address of its socket (struct sock), 0 if not known there
 * @len:	bytes of the IP packet; at the send call and udp send, the
 *		bytes the application asked to send; at tcp send, the
 *		segment's bytes from its TCP header; at app, the bytes
 *		copied (tcp) or the datagram's IP length (udp)
 * @seq:	TCP: sequence number of the segment's first byte, else 0
 * @ifindex:	the device the packet is on (received on, at the receive
 *		layers up to udp/tcp), 0 if none or not known there
 * @layer:	enum magnet_layer
 * @caplen:	bytes of data after this struct
 * @family:	AF_INET or AF_INET6
 * @proto:	IPPROTO_UDP or IPPROTO_TCP
 * @tcp_flags:	TCP header flags (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08,
 *		ACK 0x10, ...), 0 where the header is not known
 * @__reserved:	zero
 * @flags:	MAGNET_PKT_*
 * @sport:	source port, network byte order
 * @dport:	destination port, network byte order
 * @saddr:	source address (IPv4: the first 4 bytes), network byte order
 * @daddr:	destination address
 * @dev:	the device's name, NUL-padded; empty if none
 * @__reserved3: zero
 * @data:	@caplen bytes: the packet from its IP header
 *		(MAGNET_PKT_DATA_NET), the segment from its TCP header (tcp
 *		send, MAGNET_PKT_DATA_TRANSPORT), or the application's data
 *		(MAGNET_PKT_DATA_USER)
 */
struct magnet_packet {
	__u64 skb;
	__u64 sock;
	__u32 len;
	__u32 seq;
	__u32 ifindex;
	__u16 layer;
	__u16 caplen;
	__u8 family;
	__u8 proto;
	__u8 tcp_flags;
	__u8 __reserved;
	__u16 flags;
	__be16 sport;
	__be16 dport;
	__u16 __reserved2;
	__u8 saddr[16];
	__u8 daddr[16];
	char dev[16];
	__u32 __reserved3;
	__u8 data[];
};

/*
 * Block probes: following block I/O from its submission to its completion.
 *
 * The catalog's entries "blk-io.LAYER" are the layers of probe set
 * blk-io, each a tracepoint of the block layer (enum magnet_block_layer):
 *
 *   blk-io.bio       block_bio_queue: a bio submitted to a device
 *   blk-io.queue     block_rq_insert: a request put on a queue (a
 *		      scheduler's, or the dispatch list); a request that
 *		      goes straight to the driver has no queue record
 *   blk-io.issue     block_rq_issue: the request handed to the driver
 *   blk-io.complete  block_rq_complete: the driver completed @bytes of it
 *		      (a request may complete in parts, one record each)
 *
 * Every record's payload is a struct magnet_block, its header carries
 * MAGNET_RF_BLOCK, and its record id is the bio's address at the bio
 * layer and the request's at the others. Following one I/O: a request's
 * records carry its first bio (@bio), the bio whose submission made the
 * request; a bio merged into a request made earlier has no records after
 * its bio layer (its bytes are in that request's). The thread and process
 * of the header are those that submitted the bio at the bio layer, and
 * whoever ran the layer after it (a completion is mostly an interrupt's).
 * Requests without a bio (a driver's own, a flush) have @bio 0.
 */
enum magnet_block_layer {
	MAGNET_BLOCK_NONE,
	MAGNET_BLOCK_BIO,	/* submitted (block_bio_queue) */
	MAGNET_BLOCK_QUEUE,	/* queued (block_rq_insert) */
	MAGNET_BLOCK_ISSUE,	/* to the driver (block_rq_issue) */
	MAGNET_BLOCK_COMPLETE,	/* completed (block_rq_complete) */
	MAGNET_BLOCK_COUNT
};

/* struct magnet_block.flags: the request's, from its REQ_* flags */
#define MAGNET_BLK_SYNC		0x0001	/* REQ_SYNC */
#define MAGNET_BLK_FUA		0x0002	/* REQ_FUA: written through */
#define MAGNET_BLK_PREFLUSH	0x0004	/* REQ_PREFLUSH: cache flushed first */
#define MAGNET_BLK_META		0x0008	/* REQ_META: file system metadata */

/* struct magnet_block.op: the kernel's REQ_OP_* (the same on 6.1, 6.12) */
enum magnet_block_op {
	MAGNET_BLK_READ = 0,
	MAGNET_BLK_WRITE = 1,
	MAGNET_BLK_FLUSH = 2,
	MAGNET_BLK_DISCARD = 3,
	MAGNET_BLK_SECURE_ERASE = 5,
	MAGNET_BLK_WRITE_ZEROES = 9,
};

/**
 * struct magnet_block - payload of a block probe's record
 * @bio:	the bio (bio layer), or the request's first bio; 0 if none
 * @rq:		the request, 0 at the bio layer
 * @sector:	first sector (512 bytes) on the device
 * @bytes:	bytes of the bio or request; at complete, the bytes this
 *		completion covers
 * @major:	the device's major number
 * @minor:	and minor (the disk's, as /proc/partitions lists it; a
 *		partition's I/O is its disk's, sectors from the disk's start)
 * @layer:	enum magnet_block_layer
 * @op:		enum magnet_block_op (other values: other REQ_OP_*)
 * @flags:	MAGNET_BLK_*
 * @error:	complete: 0 or a negative errno
 */
struct magnet_block {
	__u64 bio;
	__u64 rq;
	__u64 sector;
	__u32 bytes;
	__u32 major;
	__u32 minor;
	__u8 layer;
	__u8 op;
	__u16 flags;
	__s32 error;
	__u32 __reserved;
};

/*
 * Application spans: an application's own spans, in the record stream
 * beside the kernel's records, with the thread that made them.
 *
 * The catalog's entry "app.span" (probe set "app", kind MAGNET_PROBE_USER)
 * is a probe like any other (buffer, filters, sessions), whose hits are
 * the writes to MAGNET_SPAN_DEVICE, a character device anyone may open
 * for writing. One write() is one struct magnet_span followed by its
 * name and attributes; every app.span probe logs it as one record, its
 * payload the same bytes, its header the writing thread's, its record id
 * the span id (as a big-endian number). A write returns its length when
 * it is well formed, whether or not a probe took it (tracing off costs a
 * system call and the check), and fails, logging nothing, with EINVAL
 * for a bad type, flags or reserved bytes, lengths that do not add up to
 * the write's, a zero trace or span id, a begin or event without a name,
 * a name or attribute with a byte below 0x20 or 0x7f, or attributes
 * that are not "key=value" strings each ending in a NUL with a key of
 * letters, digits and "._-"; with EMSGSIZE beyond MAGNET_SPAN_MAX bytes;
 * EFAULT. Reading and seeking are not supported.
 *
 * The kernel keeps no span state: a begin and its end are two records of
 * one span id, and which of a thread's kernel records fall inside a span
 * is for the reader to say (magnet-read: those of the span's thread
 * between its begin and its end). Ids are W3C Trace Context's (and
 * OpenTelemetry's): a 16-byte trace id and 8-byte span ids, all-zero
 * invalid; libmagnet makes them and keeps each thread's open spans.
 */
#define MAGNET_SPAN_DEVICE	"/dev/magnet-span"
#define MAGNET_SPAN_MAX		512	/* bytes of one write, at most */
#define MAGNET_SPAN_NAME_MAX	128	/* bytes of a name, at most */

enum magnet_span_type {
	MAGNET_SPAN_BEGIN = 1,	/* the span starts: its name, attributes */
	MAGNET_SPAN_END,	/* it ends: attributes to add (name optional) */
	MAGNET_SPAN_EVENT,	/* a named event in it, with attributes */
};

/**
 * struct magnet_span - a span's begin, end or event, as written and logged
 * @type:	enum magnet_span_type
 * @flags:	MAGNET_SPAN_F_* (below)
 * @name_len:	bytes of the name, at @data, without a NUL
 * @attrs_len:	bytes of the attributes after the name: "key=value\0"...
 * @__reserved:	0
 * @trace_id:	the trace's id
 * @span_id:	the span's id (an event's: the span it is in)
 * @parent_id:	begin: the parent span's id, all zero for a root span
 *		(whose parent, if any, is in another process or node: see
 *		MAGNET_SPAN_F_REMOTE)
 * @data:	the name, then the attributes
 */
struct magnet_span {
	__u8 type;
	__u8 flags;
	__u16 name_len;
	__u16 attrs_len;
	__u16 __reserved;
	__u8 trace_id[16];
	__u8 span_id[8];
	__u8 parent_id[8];
	__u8 data[];
};

/* struct magnet_span.flags: begin: @parent_id is another process's span */
#define MAGNET_SPAN_F_REMOTE	0x01
#define MAGNET_SPAN_FLAGS	MAGNET_SPAN_F_REMOTE	/* every flag known */

/*
 * Sampling: what each CPU was running, on a timer.
 *
 * The catalog's entry "cpu.sample" (probe set "cpu", kind
 * MAGNET_PROBE_SAMPLE) is a probe whose hits are the ticks of a timer of
 * its own on every online CPU, every MAGNET_A_PROBE_PERIOD nanoseconds
 * (default MAGNET_SAMPLE_PERIOD_DEFAULT, 1 kHz as perf record's -F 1000),
 * while it is enabled. Each tick logs one record, from hard interrupt
 * context, whose header is the interrupted task's (tid 0 and tgid 0 for a
 * CPU's idle task: a halted CPU) and whose id is the interrupted
 * instruction's address, so that filter rules can pick a CPU, a process
 * or an address range as for any probe; its payload is a struct
 * magnet_sample, and its header has MAGNET_RF_SAMPLE.
 *
 * Each probe keeps, per CPU, when its previous tick there logged or was
 * filtered (@since) and the CPU's steal time then (@steal): a CPU taken
 * offline and brought back starts again (MAGNET_SAMPLE_F_FIRST), so
 * hotplug is never mistaken for lost time. A tick that finds more than
 * one period gone (the timer overran: the CPU did not run, or ran with
 * interrupts off) logs one record, whose @since says how long it was.
 *
 * @steal is what the kernel has accounted as the CPU's steal time (the
 * hypervisor's steal clock, /proc/stat's steal), which it updates at its
 * own scheduler ticks: it lags the blank time it explains by up to a tick
 * (CONFIG_HZ), and is 0 where the hypervisor reports none.
 *
 * Stacks, up to MAGNET_A_PROBE_DEPTH frames each (default
 * MAGNET_SAMPLE_DEPTH_DEFAULT, at most MAGNET_SAMPLE_DEPTH_MAX): the
 * kernel's, unwound by the kernel's unwinder when the tick interrupted the
 * kernel; the task's user stack, by its frame pointers, where it has them
 * (a word read that faults ends it). The snap length cuts the record as
 * for any probe: stacks then lose their outermost frames, and the depths
 * stay what was unwound (the reader counts what the record holds).
 */
#define MAGNET_SAMPLE_PERIOD_DEFAULT	1000000ULL	/* ns: 1 kHz */
#define MAGNET_SAMPLE_PERIOD_MIN	100000ULL	/* ns: 10 kHz at most */
#define MAGNET_SAMPLE_PERIOD_MAX	1000000000ULL	/* ns: 1 Hz at least */
#define MAGNET_SAMPLE_DEPTH_DEFAULT	32
#define MAGNET_SAMPLE_DEPTH_MAX		64

/**
 * struct magnet_sample - one tick of a sampling probe (cpu.sample)
 * @since:	ns since this probe's previous tick on this CPU (the
 *		records' clock), 0 with MAGNET_SAMPLE_F_FIRST
 * @steal:	ns of steal time the kernel accounted to this CPU since
 *		then (see above), 0 with MAGNET_SAMPLE_F_FIRST
 * @ip:		the interrupted instruction: in the kernel, or in user space
 *		with MAGNET_SAMPLE_F_USER
 * @user_ip:	the task's user-mode instruction pointer (where it entered
 *		the kernel, or @ip), 0 for a kernel thread
 * @flags:	MAGNET_SAMPLE_F_*
 * @kernel_depth: kernel frames in @stack, innermost (the caller of
 *		@ip's function) first
 * @user_depth:	user frames after them, innermost (the caller of
 *		@user_ip's function) first
 * @period:	the probe's period, ns
 * @stack:	return addresses
 */
struct magnet_sample {
	__u64 since;
	__u64 steal;
	__u64 ip;
	__u64 user_ip;
	__u32 flags;
	__u16 kernel_depth;
	__u16 user_depth;
	__u64 period;
	__u64 stack[];
};

#define MAGNET_SAMPLE_F_USER	0x01	/* interrupted in user mode */
#define MAGNET_SAMPLE_F_IDLE	0x02	/* the CPU's idle task ran: halted */
#define MAGNET_SAMPLE_F_SOFTIRQ	0x04	/* interrupted serving a softirq */
#define MAGNET_SAMPLE_F_KTHREAD	0x08	/* a kernel thread */
#define MAGNET_SAMPLE_F_FIRST	0x10	/* the CPU's first tick: no @since */

/*
 * Generic netlink family MAGNET_GENL_NAME: the control plane.
 *
 * Conventions (as in the kernel's own families): the request and its reply
 * use the same command; a request that changes something (BUFFER_NEW/DEL,
 * PROBE_NEW/DEL/SET, FILTER_NEW/DEL) needs CAP_NET_ADMIN or CAP_SYS_ADMIN
 * and is answered with an ack (request NLM_F_ACK) or with an error whose
 * extended ack (NETLINK_EXT_ACK) says what was wrong and, where it applies,
 * points at the offending attribute. A rejected request changes nothing.
 * Every command has its own strict attribute policy: unknown attributes,
 * wrong types and lengths, and values out of the ranges below are
 * rejected. The family exists only in the initial network namespace.
 *
 * Requests that only read (the GET commands) are open to everyone.
 *
 * Multicast group MAGNET_GENL_MCGRP_NOTIFY (subscribing needs
 * CAP_NET_ADMIN: records carry kernel addresses) carries MAGNET_CMD_NOTIFY messages: one
 * per hit of a probe marked notify (MAGNET_A_PROBE_NOTIFY). They are sent
 * from a work item, never from probe context, at most
 * MAGNET_A_NOTIFY_RATE per second (module parameter notify_rate); hits
 * beyond that, or that find the notification queue full, are counted as
 * dropped (MAGNET_A_NOTIFY_DROPPED in MAGNET_CMD_STATS_GET).
 */
#define MAGNET_GENL_NAME		"magnet"
#define MAGNET_GENL_VERSION		1
#define MAGNET_GENL_MCGRP_NOTIFY	"notify"

enum magnet_cmd {
	MAGNET_CMD_UNSPEC,
	/*
	 * Buffers. GET: with BUFFER_NAME one buffer, as a dump all of them;
	 * reply: BUFFER_NAME, BUFFER_SIZE, BUFFER_MODE, BUFFER_CPUS,
	 * BUFFER_MAX_RECORD, BUFFER_READER (flag) and BUFFER_PROBES.
	 * NEW: BUFFER_NAME, BUFFER_SIZE, optional BUFFER_MODE (default drop).
	 * The buffer's data file appears in debugfs. -EEXIST for a name in
	 * use, -E2BIG beyond the module's max_memory_mb.
	 * DEL: BUFFER_NAME. -EBUSY while probes log into it; its reader gets
	 * what is left, then end of file.
	 */
	MAGNET_CMD_BUFFER_GET,
	MAGNET_CMD_BUFFER_NEW,
	MAGNET_CMD_BUFFER_DEL,
	/*
	 * Probes (every event, including those other kernel modules register,
	 * kind MAGNET_PROBE_EXTERNAL). GET: with PROBE_ID or PROBE_NAME one
	 * probe, as a dump all of them; reply: PROBE_ID, PROBE_NAME,
	 * PROBE_KIND, PROBE_TARGET, PROBE_PREDEF (if predefined), PROBE_OWNER
	 * (module, external events), BUFFER_NAME, PROBE_ARGS, PROBE_ID_ARG,
	 * PROBE_SNAPLEN, PROBE_ENABLED, PROBE_NOTIFY, PROBE_MISSED,
	 * PROBE_STATS, SAMPLE_EVERY, SAMPLE_INTERVAL and, for kprobes,
	 * PROBE_DISPATCH.
	 * NEW: PROBE_NAME and either PROBE_PREDEF or PROBE_KIND + PROBE_TARGET;
	 * optional BUFFER_NAME (default "default"), PROBE_ARGS, PROBE_ID_ARG,
	 * PROBE_SNAPLEN, PROBE_ENABLED (default 1), PROBE_NOTIFY (default 0),
	 * PROBE_DISPATCH (kprobes, default AUTO).
	 * The reply (a PROBE_NEW message) carries the new PROBE_ID.
	 * -ENOENT: no such symbol or tracepoint; -EINVAL with a message: kprobes
	 * refuses the address (blacklisted, not at an instruction boundary);
	 * -EEXIST: name in use; -ENOSPC: no event id left.
	 * DEL: PROBE_ID or PROBE_NAME. External events cannot be removed
	 * (-EPERM): their module does so.
	 * SET: PROBE_ID or PROBE_NAME, then any of PROBE_ENABLED, PROBE_NOTIFY,
	 * PROBE_SNAPLEN, SAMPLE_EVERY, SAMPLE_INTERVAL.
	 */
	MAGNET_CMD_PROBE_GET,
	MAGNET_CMD_PROBE_NEW,
	MAGNET_CMD_PROBE_DEL,
	MAGNET_CMD_PROBE_SET,
	/*
	 * Filter rules on an event's records; see "Filtering and sampling"
	 * below. GET: dump, optionally restricted to PROBE_ID or PROBE_NAME;
	 * one message per rule: FILTER_ID, PROBE_ID, PROBE_NAME,
	 * FILTER_ACTION, the rule's predicates (sets sorted, addresses cut
	 * to their prefix, defaults filled in), FILTER_TYPE, FILTER_CONFIG
	 * and FILTER_STATS (module rules).
	 * NEW: PROBE_ID or PROBE_NAME, optional FILTER_ACTION (default
	 * include; exclude for "correlate"), then at least one predicate: FILTER_CPUS, FILTER_TGID,
	 * FILTER_TID, FILTER_IDS or FILTER_ID_MIN + FILTER_ID_MAX, and/or
	 * FILTER_TYPE with its FILTER_CONFIG. The reply (a FILTER_NEW
	 * message) carries the new FILTER_ID. -ENOENT: no such probe or
	 * filter type; -ENOSPC: MAGNET_FILTER_RULES_MAX rules on the event;
	 * -EINVAL with a message for a bad predicate; -EOPNOTSUPP: the
	 * filter type does not apply to that event.
	 * DEL: FILTER_ID.
	 */
	MAGNET_CMD_FILTER_GET,
	MAGNET_CMD_FILTER_NEW,
	MAGNET_CMD_FILTER_DEL,
	/*
	 * Statistics, as a dump: one message per probe (PROBE_ID, PROBE_NAME,
	 * PROBE_STATS, PROBE_MISSED), one per buffer (BUFFER_NAME and one
	 * BUFFER_CPU nest per possible CPU), then one with the NOTIFY_*
	 * counters.
	 */
	MAGNET_CMD_STATS_GET,
	/* Multicast only: PROBE_ID, PROBE_NAME, NOTIFY_RECORD. */
	MAGNET_CMD_NOTIFY,
	/*
	 * The predefined probes, as a dump: PROBE_PREDEF, PROBE_KIND,
	 * PROBE_TARGET, PROBE_DESC; with CATALOG_RESOLVE in the request,
	 * also PROBE_TARGET_USED.
	 */
	MAGNET_CMD_CATALOG_GET,
	/*
	 * Sessions: independent users of the same probe points. Each has its
	 * own namespace of buffer and probe names, so that two captures and
	 * a daemon may each add a probe "udp-send.socket" and each get every
	 * record of its own. Objects made outside any session are in the
	 * default session, 0, which always exists.
	 * NEW: no attributes. The session belongs to the requesting netlink
	 * socket and goes, with everything in it, when that socket closes
	 * (its process exits or is killed) or on SESSION_DEL. The reply (a
	 * SESSION_NEW message) carries its SESSION id. -EUSERS: the user
	 * already has the module's max_sessions sessions.
	 * A request that carries SESSION names buffers and probes inside it:
	 * BUFFER_NEW/DEL/GET, PROBE_NEW/DEL/SET/GET (a probe's BUFFER_NAME
	 * too: a probe logs only into a buffer of its own session),
	 * FILTER_NEW/GET. Only the socket a session belongs to may make,
	 * change or remove what is in it (-EPERM, whether it names the object
	 * by name or by id); anyone may list it. -ENOENT: no such session;
	 * -ENOSPC: the session has the module's max_session_buffers buffers
	 * or max_session_probes probes already. Replies and dumps carry
	 * SESSION for an object of a session other than 0; dumps list every
	 * session's objects.
	 * GET: as a dump, every session but 0: SESSION, SESSION_UID,
	 * SESSION_PID, SESSION_BUFFERS, SESSION_PROBES.
	 * DEL: SESSION; by the socket it belongs to, or with CAP_SYS_ADMIN.
	 */
	MAGNET_CMD_SESSION_GET,
	MAGNET_CMD_SESSION_NEW,
	MAGNET_CMD_SESSION_DEL,
	/*
	 * The ledger: every CPU nanosecond, charged to an activity (a cgroup
	 * v2, and with LEDGER_BY_TGID its thread group) and a kind (enum
	 * magnet_ledger_kind), in per-CPU counters, not as records. Off by
	 * default, and then it costs nothing: no handler is attached.
	 * How time is cut: each CPU's time runs from one boundary to the next
	 * (a context switch, a hardirq handler's or softirq's entry and exit,
	 * a work item's start and end) and the span up to a boundary goes to
	 * what ran on the CPU until then. So on each CPU the rows add up to
	 * LEDGER_ELAPSED exactly: the time from the first boundary the CPU
	 * saw to the last, less the time it was offline (from its going
	 * down to its first boundary back); nothing is sampled. A softirq's
	 * entry charges the task it interrupts nothing yet: that span goes
	 * with the task's next (at its next boundary outside the softirq:
	 * a switch, an interrupt, a work item's start or end), and into
	 * ELAPSED then. A task's own
	 * time is split into USER and SYSTEM in the proportion the kernel's
	 * tick sampling gives the task over its life (utime:stime, as
	 * /proc/PID/stat).
	 * Charging rules, and what they cannot know:
	 * - a task's time to its cgroup (LEDGER_CGROUP: the cgroup's id,
	 *   its directory's inode number in the cgroup2 file system);
	 * - idle (the idle task) and kernel threads outside work items to
	 *   no activity (CGROUP 0), kinds IDLE and KTHREAD (with BY_TGID, a
	 *   kernel thread's rows carry its pid as TGID);
	 * - a work item (WORK), LEDGER_NAME its function, to the activity
	 *   that queued it: a task's cgroup, or the owner of the packet,
	 *   request or work item being handled when it was queued; an item
	 *   queued from a timer or an interrupt outside those, to no
	 *   activity. Writeback's items (wb_workfn) go, from each pass and
	 *   each inode on, to the cgroup writeback records as the owner of
	 *   the pages it writes (the memory controller's cgroup of the
	 *   inode's bdi_writeback; the root cgroup unless the memory and io
	 *   controllers are on, and the file system writes back per
	 *   cgroup). With BY_TGID, an item's rows carry its queuer's thread
	 *   group (a task's, or the item's it was queued from; none from
	 *   an interrupt, nor for writeback). Queued items are remembered
	 *   machine-wide in 512 slots by their address: one queued while
	 *   another holds its slot takes it, and the other runs for no
	 *   activity. More than 8 items
	 *   under way on one CPU run as unnamed work (NAME absent), or as
	 *   KTHREAD until an interrupt's end;
	 * - hardirq handlers (HARDIRQ, LEDGER_VECTOR the irq number; on x86
	 *   also the local timer and IPIs, NAME the vector's name) and
	 *   softirqs (SOFTIRQ, VECTOR the softirq number: 0 HI, 1 TIMER,
	 *   2 NET_TX, 3 NET_RX, 4 BLOCK, 5 IRQ_POLL, 6 TASKLET, 7 SCHED,
	 *   8 HRTIMER, 9 RCU) to no activity, but for packets, block
	 *   requests and the hardirqs that lead to them:
	 * - in a NET_RX softirq, a packet's time (from its netif_receive_skb
	 *   to the next packet's or to the end of the softirq; hardirqs
	 *   apart) to the cgroup of the socket it reaches
	 *   (sk_filter_trim_cap(): TCP, UDP, raw; netlink sockets, which
	 *   pass there too, are not owners); a packet no local socket takes
	 *   to no activity, NAME saying what befell it: "dropped" (freed as
	 *   a drop, kfree_skb), else "forwarded" (sent on while the softirq
	 *   had it), else "kernel" (the kernel's own: ARP, ICMP, neighbour
	 *   discovery). The softirq's time before its first packet (the
	 *   driver's poll) is the first packet's, after its last the
	 *   last's; a softirq with no packet, to no activity, NAME absent.
	 *   A packet delivered to several sockets (multicast, raw sockets)
	 *   is split at each delivery after the first: the time since goes
	 *   to the socket before. A driver that hands its packets over in
	 *   lists (GRO's batches) starts every packet of a list before the
	 *   protocols see any: each start but the last's goes to no
	 *   activity as "kernel", then each delivery cuts the list's time
	 *   from the one before, the first taking the time up to it;
	 * - in a NET_TX softirq, a packet's time (from net_dev_start_xmit
	 *   to the next's or the softirq's end; before the first, the
	 *   first's) to the cgroup of the socket that sent it (skb->sk), if
	 *   any;
	 * - in a hardirq or softirq, a block request's completion (from its
	 *   block_rq_complete to the next request's, or to the end of the
	 *   level) to the cgroup that submitted it (the io controller's
	 *   cgroup of its first bio: for writeback, the pages' owner's);
	 *   what the handler does before its first request, to the first.
	 *   A completion in the submitter's own task is that task's time;
	 * - a hardirq that raises NET_RX or BLOCK (a NIC's, a disk's: the
	 *   softirq is pending at its end and was not at its start) waits
	 *   for that softirq on its CPU: its time outside requests is split
	 *   among the cgroups that softirq charges, in proportion to their
	 *   time in it (from the hardirq's end, if it came while that
	 *   softirq ran; four at most; the rest, and what no activity had,
	 *   to no activity; two hardirqs at most wait on a CPU for one
	 *   softirq, a third goes to no activity at once). It cannot know
	 *   whether a later packet or request was the hardirq's or
	 *   another's.
	 * A socket's cgroup is the one its creator was in when it was made.
	 * Interrupt entry and exit code outside the handlers' tracepoints
	 * goes to what it interrupted. On PREEMPT_RT, interrupt handlers run
	 * in threads (KTHREAD), and a softirq's task preempted keeps its
	 * softirq for when it runs again.
	 * A row whose key finds no place among 16 of its CPU's
	 * MAGNET_LEDGER_ROWS rows goes to one row of kind OVERFLOW, so
	 * nothing is lost.
	 * SET: LEDGER_ENABLED 1 turns it on, with fresh counters (-EALREADY
	 * if on: turn it off first), LEDGER_BY_TGID 1 for a row per thread
	 * group, OWNED for it to go off when the asking socket closes (a
	 * daemon killed does not leave it on); LEDGER_ENABLED 0 turns it off
	 * and drops the counters (-EALREADY if off).
	 * GET: a dump, -ENODATA while off. For each CPU, a message with
	 * LEDGER_CPU, LEDGER_ELAPSED, then one per row: LEDGER_CPU,
	 * LEDGER_CGROUP, LEDGER_KIND, LEDGER_NS, and as they apply
	 * LEDGER_TGID, LEDGER_VECTOR, LEDGER_NAME. A CPU's ELAPSED and rows
	 * are one instant's (copied on that CPU, interrupts off): its rows
	 * never run ahead of its ELAPSED, and lag it only by the time an
	 * interrupt level keeps for its item (charged when the item is done)
	 * or a hardirq's waiting for its softirq. CPUs are copied one after
	 * another, each when the dump reaches it. -EAGAIN: the ledger was
	 * turned off and on while a dump was under way.
	 */
	MAGNET_CMD_LEDGER_GET,
	MAGNET_CMD_LEDGER_SET,

	/*
	 * Per-call accounting of a whole process, watched (the same
	 * accounting as MAGNET_ACCT_DEVICE's, below, without the process's
	 * doing): every system call of every thread of a thread group is
	 * accounted and summed per system call, with a histogram of its
	 * wall time. At most MAGNET_ACCT_WATCHES processes are watched at
	 * once; a watch holds MAGNET_ACCT_WATCH_THREADS threads at once (a
	 * thread beyond makes ACCT_MISSED count its calls) and
	 * MAGNET_ACCT_WATCH_ROWS system calls (the calls of others sum in
	 * one row of ACCT_NR MAGNET_ACCT_NR_OTHER). A thread with a handle
	 * of its own has its unarmed calls in the watch too, and its armed
	 * ones both there and in its slot (split among its arm's
	 * subsystems). Deferred parts count in the row of the call that
	 * made them, as they come in, until the watch ends; a thread's
	 * parts still under way when it exits are dropped. Both commands
	 * need CAP_NET_ADMIN or CAP_SYS_ADMIN.
	 * SET: ACCT_PID (a thread group, in the asker's pid namespace) and
	 * ACCT_ENABLED 1 starts a watch with fresh counters (-EALREADY if
	 * that process is watched, -ESRCH if it does not exist, -ENOSPC if
	 * MAGNET_ACCT_WATCHES are), OWNED for it to end when the asking
	 * socket closes; ACCT_ENABLED 0 ends it (-ENOENT if not watched).
	 * A watch outlives its process (ACCT_EXITED), with its rows, until
	 * it is ended.
	 * GET: a dump, of every watch or of ACCT_PID's (-ENOENT if not
	 * watched). For each watch a message with ACCT_PID, ACCT_SINCE,
	 * ACCT_THREADS and ACCT_MISSED, then one per system call it saw:
	 * ACCT_PID, ACCT_NR, ACCT_RESULT, ACCT_ERRORS, ACCT_MAX and
	 * ACCT_HIST. A watch's rows are one instant's.
	 */
	MAGNET_CMD_ACCT_GET,
	MAGNET_CMD_ACCT_SET,

	__MAGNET_CMD_MAX,
	MAGNET_CMD_MAX = __MAGNET_CMD_MAX - 1
};

enum magnet_attr {
	MAGNET_A_UNSPEC,
	MAGNET_A_PAD,
	MAGNET_A_BUFFER_NAME,	/* string, 1..MAGNET_NAME_LEN-1 bytes, no '/'
				 * or white space, not all digits
				 */
	MAGNET_A_BUFFER_SIZE,	/* u64, bytes per CPU: a power of two,
				 * MAGNET_BUFFER_SIZE_MIN..MAGNET_BUFFER_SIZE_MAX
				 */
	MAGNET_A_BUFFER_MODE,	/* u8, enum magnet_buffer_mode */
	MAGNET_A_BUFFER_CPUS,	/* u32, rings (possible CPUs); reply only */
	MAGNET_A_BUFFER_MAX_RECORD, /* u32, bytes; reply only */
	MAGNET_A_BUFFER_READER,	/* flag: a reader is attached; reply only */
	MAGNET_A_BUFFER_PROBES,	/* u32, probes logging into it; reply only */
	MAGNET_A_BUFFER_CPU,	/* nest, enum magnet_cpu_attr; reply only,
				 * repeated once per possible CPU
				 */

	MAGNET_A_PROBE_ID,	/* u16, event id, 1..MAGNET_EVENT_ID_MAX */
	MAGNET_A_PROBE_NAME,	/* string, 1..MAGNET_NAME_LEN-1 bytes, no '/'
				 * or white space, not all digits
				 */
	MAGNET_A_PROBE_KIND,	/* u8, enum magnet_probe_kind */
	MAGNET_A_PROBE_TARGET,	/* string, < MAGNET_TARGET_LEN bytes: kprobe
				 * "symbol" or "symbol+offset" (offset in
				 * decimal or 0x hex), kretprobe "symbol",
				 * tracepoint its name (e.g. "sched_switch")
				 */
	MAGNET_A_PROBE_PREDEF,	/* string, a name from the catalog */
	MAGNET_A_PROBE_ARGS,	/* u8, arguments recorded by a generic probe,
				 * 0..MAGNET_PROBE_ARGS_MAX
				 * (MAGNET_TRACEPOINT_ARGS_MAX for tracepoints);
				 * default 0
				 */
	MAGNET_A_PROBE_ID_ARG,	/* u8, generic probes: the record's id is
				 * argument N (1-based, at most the number
				 * recorded); 0 = id 0 (default)
				 */
	MAGNET_A_PROBE_SNAPLEN,	/* u32, bytes of payload kept, 0 = all
				 * (default); at most MAGNET_RECORD_MAX
				 */
	MAGNET_A_PROBE_ENABLED,	/* u8, 0 or 1 */
	MAGNET_A_PROBE_NOTIFY,	/* u8, 0 or 1: multicast each hit */
	MAGNET_A_PROBE_OWNER,	/* string, module that registered the
				 * event ("magnet" for probes); reply only
				 */
	MAGNET_A_PROBE_MISSED,	/* u64, hits the kernel's kprobe, kretprobe
				 * or ftrace machinery could not deliver
				 * (kretprobe instances exhausted, recursion,
				 * see enum magnet_probe_dispatch); reply only
				 */
	MAGNET_A_PROBE_STATS,	/* nest, enum magnet_stat_attr; reply only */
	MAGNET_A_PROBE_DESC,	/* string, what a predefined probe records;
				 * reply only
				 */

	MAGNET_A_FILTER_ID,	/* u32, rule id, 1.. */
	MAGNET_A_FILTER_ACTION,	/* u8, enum magnet_filter_action */
	MAGNET_A_FILTER_CPUS,	/* binary, CPU set: bit N (of byte N / 8,
				 * least significant first) is CPU N; at
				 * least one CPU, only CPUs that exist
				 */
	MAGNET_A_FILTER_TGID,	/* u32, repeated, at most
				 * MAGNET_FILTER_SET_MAX: set of thread
				 * group (process) ids
				 */
	MAGNET_A_FILTER_TID,	/* u32: thread id */
	MAGNET_A_FILTER_ID_MIN,	/* u64, abstract id range, inclusive; with
				 * FILTER_ID_MAX, min <= max, not with
				 * FILTER_IDS
				 */
	MAGNET_A_FILTER_ID_MAX,	/* u64 */
	MAGNET_A_SAMPLE_EVERY,	/* u32, keep 1 event in N of each CPU's
				 * after filtering, 0 or 1 = all (default)
				 */
	MAGNET_A_SAMPLE_INTERVAL, /* u64, nanoseconds, at most
				   * MAGNET_SAMPLE_INTERVAL_MAX: keep at most
				   * one event per interval, 0 = off (default)
				   */

	MAGNET_A_NOTIFY_RECORD,	/* binary: struct magnet_record header (its
				 * size field is the whole record's) and the
				 * first bytes of the payload, at most
				 * MAGNET_NOTIFY_PREFIX_MAX
				 */
	MAGNET_A_NOTIFY_SENT,	/* u64, notifications multicast */
	MAGNET_A_NOTIFY_DROPPED, /* u64, notify hits not sent (rate limit,
				  * queue full, a subscriber's socket full)
				  */
	MAGNET_A_NOTIFY_RATE,	/* u32, notifications per second allowed */

	MAGNET_A_FILTER_IDS,	/* u64, repeated: set of abstract ids */
	MAGNET_A_FILTER_TYPE,	/* string, < MAGNET_NAME_LEN bytes: a filter
				 * module's predicate ("packet", "header",
				 * "correlate")
				 */
	MAGNET_A_FILTER_CONFIG,	/* nest: the filter type's own attributes
				 * (enum magnet_packet_attr, enum
				 * magnet_header_attr, enum
				 * magnet_correlate_attr)
				 */
	MAGNET_A_FILTER_STATS,	/* nest: the filter type's counters; reply
				 * only
				 */
	MAGNET_A_OWNED,		/* flag, BUFFER_NEW and PROBE_NEW: the object
				 * belongs to the netlink socket that asked
				 * for it and is removed when that socket
				 * closes, e.g. when its process exits or is
				 * killed (a buffer only once no probe logs
				 * into it). In replies: the object is owned.
				 * LEDGER_SET turning it on: the ledger goes
				 * off when that socket closes (unless turned
				 * off and on since).
				 */
	MAGNET_A_CATALOG_RESOLVE, /* flag, CATALOG_GET: also say what the
				   * running kernel uses for each entry
				   * (PROBE_TARGET_USED). Slower: each function
				   * is tried with a disabled kprobe, so it
				   * needs CAP_NET_ADMIN or CAP_SYS_ADMIN
				   * (EPERM)
				   */
	MAGNET_A_PROBE_TARGET_USED, /* string, CATALOG_GET reply with
				     * CATALOG_RESOLVE: the tracepoint, or the
				     * first function of PROBE_TARGET's list,
				     * that a probe of the entry uses on the
				     * running kernel; absent if it has none
				     */
	MAGNET_A_PROBE_DISPATCH, /* u8, enum magnet_probe_dispatch, kprobes
				  * only: PROBE_NEW, how to call the handler
				  * (default AUTO); PROBE_GET reply, how it is
				  * called (KPROBE or FTRACE)
				  */
	MAGNET_A_SESSION,	/* u32, a session's id (MAGNET_CMD_SESSION_NEW),
				 * >= 1; absent: the default session, 0
				 */
	MAGNET_A_SESSION_UID,	/* u32, SESSION_GET: the user who made it */
	MAGNET_A_SESSION_PID,	/* u32, SESSION_GET: the process that made it
				 * (its thread group, initial namespace)
				 */
	MAGNET_A_SESSION_BUFFERS, /* u32, SESSION_GET: buffers in it */
	MAGNET_A_SESSION_PROBES, /* u32, SESSION_GET: probes in it */
	MAGNET_A_LEDGER_ENABLED, /* u8, LEDGER_SET: 1 on, 0 off */
	MAGNET_A_LEDGER_BY_TGID, /* u8, LEDGER_SET: 1, a row per thread group */
	MAGNET_A_LEDGER_CPU,	/* u32, LEDGER_GET */
	MAGNET_A_LEDGER_ELAPSED, /* u64 ns, LEDGER_GET: the CPU's first to
				  * last boundary
				  */
	MAGNET_A_LEDGER_CGROUP,	/* u64, LEDGER_GET: the activity's cgroup id,
				 * 0 for no activity
				 */
	MAGNET_A_LEDGER_TGID,	/* u32, LEDGER_GET with BY_TGID: the thread
				 * group (initial namespace)
				 */
	MAGNET_A_LEDGER_KIND,	/* u8, LEDGER_GET: enum magnet_ledger_kind */
	MAGNET_A_LEDGER_VECTOR,	/* u32, LEDGER_GET: the softirq or irq */
	MAGNET_A_LEDGER_NAME,	/* string, LEDGER_GET: a work item's function,
				 * an interrupt vector's name, what befell
				 * received packets no socket took
				 */
	MAGNET_A_LEDGER_NS,	/* u64, LEDGER_GET: nanoseconds charged */
	MAGNET_A_ACCT_PID,	/* u32, ACCT_SET and ACCT_GET: the watched
				 * thread group, in the asker's pid namespace
				 */
	MAGNET_A_ACCT_ENABLED,	/* u8, ACCT_SET: 1 watch, 0 stop */
	MAGNET_A_ACCT_SINCE,	/* u64 ns, ACCT_GET: the watch's age */
	MAGNET_A_ACCT_THREADS,	/* u32, ACCT_GET: threads it accounts now */
	MAGNET_A_ACCT_MISSED,	/* u64, ACCT_GET: calls of threads beyond
				 * MAGNET_ACCT_WATCH_THREADS, not accounted
				 */
	MAGNET_A_ACCT_NR,	/* u32, ACCT_GET: the system call's number,
				 * as the process's architecture numbers it,
				 * or MAGNET_ACCT_NR_OTHER
				 */
	MAGNET_A_ACCT_RESULT,	/* binary, ACCT_GET: struct
				 * magnet_acct_result, the system call's
				 * calls summed (seq and gen 0, state
				 * MAGNET_ACCT_S_DONE; last_nr and last_ret
				 * the last call's); a longer one may come
				 */
	MAGNET_A_ACCT_ERRORS,	/* u64, ACCT_GET: calls that returned an
				 * error (-4095 to -1)
				 */
	MAGNET_A_ACCT_MAX,	/* u64 ns, ACCT_GET: the longest wall time */
	MAGNET_A_ACCT_HIST,	/* binary, ACCT_GET: __u64 counts of calls by
				 * wall time, MAGNET_ACCT_HIST of them: bucket
				 * 0 below 1024 ns, bucket i (1 to
				 * MAGNET_ACCT_HIST - 2) from 2^(i+9) ns to
				 * below 2^(i+10), the last from 2^(i+9) up
				 */
	MAGNET_A_ACCT_EXITED,	/* flag, ACCT_GET: the process has exited
				 * (the watch keeps its rows until ended)
				 */
	MAGNET_A_PROBE_PERIOD,	/* u64 ns, PROBE_NEW of cpu.sample: the
				 * timer's period, MAGNET_SAMPLE_PERIOD_MIN
				 * to _MAX (default _DEFAULT); PROBE_GET
				 * reply: a sampling probe's
				 */
	MAGNET_A_PROBE_DEPTH,	/* u8, PROBE_NEW of cpu.sample: frames of
				 * each stack, 0 (none) to
				 * MAGNET_SAMPLE_DEPTH_MAX (default _DEFAULT);
				 * PROBE_GET reply: a sampling probe's
				 */

	__MAGNET_A_MAX,
	MAGNET_A_MAX = __MAGNET_A_MAX - 1
};

/* What a ledger row's time was spent on (MAGNET_CMD_LEDGER_GET). */
enum magnet_ledger_kind {
	MAGNET_LEDGER_UNSPEC,
	MAGNET_LEDGER_USER,	/* a task, in user mode */
	MAGNET_LEDGER_SYSTEM,	/* a task, in the kernel on its own behalf */
	MAGNET_LEDGER_KTHREAD,	/* a kernel thread, outside work items */
	MAGNET_LEDGER_WORK,	/* a workqueue's work item */
	MAGNET_LEDGER_HARDIRQ,	/* an interrupt handler */
	MAGNET_LEDGER_SOFTIRQ,	/* a softirq (VECTOR) */
	MAGNET_LEDGER_IDLE,	/* the idle task */
	MAGNET_LEDGER_OVERFLOW,	/* rows that found the CPU's table full */
	__MAGNET_LEDGER_KIND_MAX
};

/* Rows in each CPU's table of the ledger. */
#define MAGNET_LEDGER_ROWS	1024

/*
 * Statistics of one probe, counting hits since it was added (all u64).
 * Every hit ends as exactly one of logged, filtered, sampled or lost:
 * hits = logged + filtered + sampled + lost (while hits are under way,
 * logged may run ahead of what reached the buffer by those in flight).
 */
enum magnet_stat_attr {
	MAGNET_STAT_UNSPEC,
	MAGNET_STAT_PAD,
	MAGNET_STAT_HITS,	/* times the probe fired while enabled */
	MAGNET_STAT_LOGGED,	/* records written into the buffer */
	MAGNET_STAT_FILTERED,	/* hits a filter rule rejected */
	MAGNET_STAT_SAMPLED,	/* hits sampling skipped */
	MAGNET_STAT_LOST,	/* hits whose record the buffer refused
				 * (full, or writers nested too deeply)
				 */
	__MAGNET_STAT_MAX,
	MAGNET_STAT_MAX = __MAGNET_STAT_MAX - 1
};

/*
 * Statistics of one CPU's ring of a buffer (all u64 but CPU), as in
 * control/stats (see the top of this header for their relations).
 */
enum magnet_cpu_attr {
	MAGNET_CPU_UNSPEC,
	MAGNET_CPU_PAD,
	MAGNET_CPU_ID,		/* u32 */
	MAGNET_CPU_PRODUCED,
	MAGNET_CPU_WRITTEN,
	MAGNET_CPU_READ,
	MAGNET_CPU_LOST,
	MAGNET_CPU_DROPPED,
	MAGNET_CPU_OVERWRITTEN,
	MAGNET_CPU_DISCARDED,
	__MAGNET_CPU_MAX,
	MAGNET_CPU_MAX = __MAGNET_CPU_MAX - 1
};

enum magnet_buffer_mode {
	MAGNET_BUFFER_DROP,	/* a full ring drops new records */
	MAGNET_BUFFER_OVERWRITE, /* a full ring evicts its oldest records */
};

enum magnet_probe_kind {
	MAGNET_PROBE_KPROBE,
	MAGNET_PROBE_KRETPROBE,
	MAGNET_PROBE_TRACEPOINT,
	MAGNET_PROBE_EXTERNAL,	/* registered by another module; reply only */
	MAGNET_PROBE_USER,	/* records applications write: the catalog's
				 * "app.span" only (see "Application spans")
				 */
	MAGNET_PROBE_SAMPLE,	/* a timer's ticks on every CPU: the
				 * catalog's "cpu.sample" only (see
				 * "Sampling")
				 */
};

/*
 * How a kprobe's handler is called (MAGNET_A_PROBE_DISPATCH). A kprobe at
 * a function's entry (no offset) on a function that has an ftrace call
 * site is, by default, not a kernel kprobe at all: magnet registers an
 * ftrace_ops of its own on the function, shared by its probes there,
 * whose callback reads the argument registers and logs. That skips the
 * full register save and kprobes' lookup, and records exactly what the
 * kprobe would (same payload, same hits). A kernel kprobe is still
 * registered there, disabled, to resolve and vet the address (it shows as
 * [DISABLED] in the kernel's kprobes/list); the function shows in
 * tracing/enabled_functions while the probe is enabled. Hits ftrace
 * cannot hand to magnet (recursion on a CPU, a function that runs where
 * RCU does not watch, such as parts of the idle loop) are counted in
 * MAGNET_A_PROBE_MISSED.
 * Every other kprobe (an offset, a function without an ftrace call site)
 * and every kretprobe goes through kprobes.
 */
enum magnet_probe_dispatch {
	MAGNET_DISPATCH_AUTO,	/* request only: FTRACE where it can be,
				 * else KPROBE (the default)
				 */
	MAGNET_DISPATCH_KPROBE,	/* the kernel's kprobe */
	MAGNET_DISPATCH_FTRACE,	/* magnet's ftrace_ops; requested where it
				 * cannot be: EOPNOTSUPP with a message
				 */
};

/*
 * Filtering and sampling
 *
 * Each event has an ordered list of rules (at most MAGNET_FILTER_RULES_MAX).
 * A rule matches a hit when every predicate it has matches (AND): the
 * record header's CPU in FILTER_CPUS, its tgid in the FILTER_TGID set, its
 * tid equal to FILTER_TID, its abstract id in the FILTER_IDS set or the
 * FILTER_ID_MIN..FILTER_ID_MAX range, and a filter module's predicate
 * (FILTER_TYPE) saying yes. A hit is dropped if an exclude rule matches it,
 * or if the event has include rules and none matches it (OR across
 * rules); otherwise it goes on. Rules are evaluated in probe context,
 * before buffer space is reserved, without taking a lock; a change
 * replaces the event's whole rule list at once, so a hit sees either the
 * old list or the new one. Rules on the CPU, tgid and tid are tested
 * before the probe builds its payload: a hit they drop costs little.
 *
 * Then sampling (PROBE_SET SAMPLE_EVERY, SAMPLE_INTERVAL): of the hits
 * that passed the rules, keep one in N of each CPU's hits (exactly: that
 * CPU's 1st, N+1th, ...; counted per CPU, so that sampling costs no
 * shared write), and at most one per interval across all CPUs (the first
 * hit at least an interval after the last one kept). Setting either
 * restarts the counts. Dropped hits count as filtered or sampled in the
 * event's statistics.
 *
 * Filter modules (filters/ in the source) add predicate types, each
 * type NAME by the module magnet_NAME (user space names the module to
 * load from the type's name):
 *
 * "packet" (module magnet_packet), on events that concern a packet or a
 * socket (the packet probes; netif_receive, net_start_xmit, skb_free,
 * tcp_send): runs a classic BPF program, as libpcap compiles tcpdump's
 * filter language for LINKTYPE_LINUX_SLL2, on the packet as tcpdump -i
 * any would see it: a cooked header (the protocol; the device's index
 * and type where the hit has a device; the direction: PACKET_OUTGOING on
 * the send path, the packet's own type on the receive path) in front of
 * the packet from its network header, with its length. Where the probe
 * holds no IP header (the send calls, a TCP segment before IP, tcp_send),
 * the headers are built from what it knows (addresses, ports, protocol,
 * lengths, TCP flags and sequence; at a UDP send call, the application's
 * bytes as the datagram's payload). A program whose answer depends on
 * anything the probe does not know (TTL, IP id, the device before there
 * is one, a TCP send call's length or payload, ...) is undecided for
 * that hit: the hit goes on as if the rule did not match an exclude
 * rule and matched an include rule, and is counted in PACKET_UNDECIDED.
 * A load past the packet's end makes the program reject the hit, as it
 * does in tcpdump. Configured by enum magnet_packet_attr.
 *
 * "header" (module magnet_header), on the same events: matches the
 * IPv4 or IPv6 packet's protocol, addresses and ports, fixed fields of
 * the rule (enum magnet_header_attr in FILTER_CONFIG).
 *
 * "correlate" (module magnet_correlate): takes the records of a start
 * event, an end event and optional events in between, groups them by
 * abstract id into journeys in a kernel thread, and logs each journey
 * whose time from start to end reaches a threshold as one
 * MAGNET_EVENT_JOURNEY record (struct magnet_journey) in the start
 * event's buffer. The records it takes count as filtered in their
 * events' statistics. Its rule is an exclude rule and must be the only
 * predicate of its rule. Configured by enum magnet_correlate_attr.
 */
enum magnet_filter_action {
	MAGNET_FILTER_INCLUDE,	/* keep only records matching some rule */
	MAGNET_FILTER_EXCLUDE,	/* drop records matching the rule */
};

#define MAGNET_FILTER_RULES_MAX		64	/* rules per event */
#define MAGNET_FILTER_SET_MAX		256	/* tgids, or ids, in one rule */
#define MAGNET_SAMPLE_INTERVAL_MAX	3600000000000ULL /* an hour, ns */

/*
 * FILTER_CONFIG of type "packet", and its FILTER_STATS (reply only). The
 * program is checked as the kernel checks classic BPF: known opcodes,
 * jumps forward and within it, scratch memory M[0..15] only, no division
 * by a constant zero, a return last; a bad one is refused with the index
 * of the instruction at fault. It runs without loops, so it ends.
 */
enum magnet_packet_attr {
	MAGNET_PACKET_UNSPEC,
	MAGNET_PACKET_PROGRAM,	/* binary: struct sock_filter[]
				 * (<linux/filter.h>), 1 ..
				 * MAGNET_PACKET_INSNS_MAX instructions, host
				 * order; required. A nonzero return matches
				 */
	MAGNET_PACKET_TEXT,	/* string, < MAGNET_PACKET_TEXT_MAX bytes: the
				 * expression the program was compiled from,
				 * kept only to be listed
				 */
	MAGNET_PACKET_PAD,
	/* counters, reply only (u64) */
	MAGNET_PACKET_UNDECIDED, /* hits let through undecided (above) */
	MAGNET_PACKET_NATIVE,	/* hits the kernel's own BPF ran (the program
				 * translated to eBPF, JIT-compiled where the
				 * kernel JITs): a linear sk_buff whose packet
				 * starts at its network header, or a send
				 * call's headers built from its socket where
				 * the program reads only their known bits
				 * and FIELDS cannot; only when the program
				 * can run there (it does not read "len" nor
				 * the cooked header but for its protocol)
				 */
	MAGNET_PACKET_FIELDS,	/* send calls decided by the program written
				 * again for their shape (IPv4 or IPv6, UDP or
				 * TCP) on the record's fields, without
				 * headers built: where it reads only their
				 * known bits, each load within one field
				 */
	__MAGNET_PACKET_MAX,
	MAGNET_PACKET_MAX = __MAGNET_PACKET_MAX - 1
};

#define MAGNET_PACKET_INSNS_MAX		256	/* a rule is listed in one message */
#define MAGNET_PACKET_TEXT_MAX		512

/* FILTER_CONFIG of type "header". All optional; at least one. */
enum magnet_header_attr {
	MAGNET_HEADER_UNSPEC,
	MAGNET_HEADER_PROTO,	/* u8, IP protocol (6 TCP, 17 UDP, 1 ICMP,
				 * 58 ICMPv6, ...)
				 */
	MAGNET_HEADER_SRC,	/* binary, 4 (IPv4) or 16 (IPv6) bytes, network
				 * order: source address
				 */
	MAGNET_HEADER_SRC_PREFIX, /* u8, bits of SRC compared (default all) */
	MAGNET_HEADER_DST,	/* binary: destination address */
	MAGNET_HEADER_DST_PREFIX, /* u8 */
	MAGNET_HEADER_HOST,	/* binary: source or destination address */
	MAGNET_HEADER_HOST_PREFIX, /* u8 */
	MAGNET_HEADER_SPORT,	/* u16, source port (TCP, UDP, SCTP, UDP-Lite,
				 * DCCP)
				 */
	MAGNET_HEADER_DPORT,	/* u16, destination port */
	MAGNET_HEADER_PORT,	/* u16, source or destination port */
	__MAGNET_HEADER_MAX,
	MAGNET_HEADER_MAX = __MAGNET_HEADER_MAX - 1
};

/*
 * FILTER_CONFIG of type "correlate" (the rule is made on the start
 * event), and its FILTER_STATS (reply only). A journey opens at a
 * start record and closes at the next end record with the same abstract
 * id; records of VIA events with that id in between join it (at most
 * MAGNET_JOURNEY_RECORDS_MAX records in all, later ones are counted in
 * CORR_CUT and left out).
 */
enum magnet_correlate_attr {
	MAGNET_CORR_UNSPEC,
	MAGNET_CORR_PAD,
	MAGNET_CORR_END,	/* u16, end event id (required, not the start) */
	MAGNET_CORR_VIA,	/* u16, repeated (at most MAGNET_CORR_VIA_MAX):
				 * events between
				 */
	MAGNET_CORR_THRESHOLD,	/* u64, ns: pass journeys at least this long
				 * (default 0: every journey that closes)
				 */
	MAGNET_CORR_WINDOW,	/* u64, ns, MAGNET_CORR_WINDOW_MIN ..
				 * MAGNET_CORR_WINDOW_MAX: a journey still
				 * open this long after its start expires
				 * (default 1 s)
				 */
	MAGNET_CORR_MAX_OPEN,	/* u32, 1 .. MAGNET_CORR_MAX_OPEN_MAX: journeys
				 * open at once
				 * (default 4096); a start beyond that is
				 * counted in CORR_OVERFLOW
				 */
	/* counters, reply only (u64) */
	MAGNET_CORR_TAKEN,	/* records taken from the events */
	MAGNET_CORR_JOURNEYS,	/* journeys closed by their end record */
	MAGNET_CORR_PASSED,	/* ... of which logged (slow enough) */
	MAGNET_CORR_EXPIRED,	/* journeys that never closed */
	MAGNET_CORR_UNMATCHED,	/* end or via records with no open journey */
	MAGNET_CORR_OVERFLOW,	/* starts refused: MAX_OPEN journeys open */
	MAGNET_CORR_CUT,	/* records beyond a journey's limit */
	MAGNET_CORR_LOST,	/* records the filter could not queue or
				 * journeys it could not log (buffer full)
				 */
	__MAGNET_CORR_MAX,
	MAGNET_CORR_MAX = __MAGNET_CORR_MAX - 1
};

#define MAGNET_CORR_VIA_MAX		8
#define MAGNET_CORR_WINDOW_MIN		1000000ULL		/* 1 ms */
#define MAGNET_CORR_WINDOW_MAX		3600000000000ULL	/* 1 hour */
#define MAGNET_CORR_MAX_OPEN_MAX	65536

/*
 * Payload of a MAGNET_EVENT_JOURNEY record (its header: the journey's
 * abstract id, and the CPU, thread and time of the filter's kernel thread
 * when it logged the journey). After it come @records whole records as they were
 * taken (struct magnet_record with their own event ids and timestamps,
 * each at a MAGNET_RECORD_ALIGN boundary), start first, end last.
 */
struct magnet_journey {
	__u32 filter;		/* FILTER_ID of the correlating rule */
	__u16 records;
	__u16 flags;		/* MAGNET_JF_* */
	__u64 duration_ns;	/* end record's timestamp - start's */
};

#define MAGNET_EVENT_JOURNEY		0xfffd
#define MAGNET_JOURNEY_RECORDS_MAX	16
#define MAGNET_JF_CUT		(1U << 0)	/* records were left out */

#define MAGNET_NAME_LEN			32	/* names, with their NUL */
#define MAGNET_TARGET_LEN		128	/* probe targets, with NUL */
#define MAGNET_BUFFER_SIZE_MIN		4096ULL
#define MAGNET_BUFFER_SIZE_MAX		(1ULL << 30)
#define MAGNET_NOTIFY_PREFIX_MAX	64	/* payload bytes notified */

/*
 * Per-call accounting: what one system call of a thread cost.
 *
 * A thread opens MAGNET_ACCT_DEVICE (a character device, mode 0666): the
 * open file is that thread's handle, and only its own calls are ever
 * accounted through it (a second open by the same thread fails with
 * EBUSY; more than the module's max_acct_threads handles at once, with
 * ENOSPC). It maps two areas of the file, both MAP_SHARED:
 *
 *   offset 0, MAGNET_ACCT_CTL_SIZE bytes, read and write: struct
 *	magnet_acct_ctl, where the thread arms accounting with one store.
 *   offset MAGNET_ACCT_CTL_SIZE, MAGNET_ACCT_AREA_SIZE bytes, read only
 *	(PROT_WRITE fails with EACCES, and so does an mprotect() that
 *	asks for it): struct magnet_acct_area, the results, written by the
 *	kernel only.
 *
 * Neither mapping is inherited by a child (fork() leaves them out), and
 * the handle stays its opener's: a child that inherits the file cannot
 * arm anything through it. Any other offset or size fails with EINVAL.
 * The file has no read or write; poll() reports it readable when a
 * deferred part of a call came in (below).
 *
 * Arming: the thread stores a control word (below) in ctl.arm. At the
 * entry of each of its system calls the kernel reads the word; if it has a
 * count, that call is accounted, and the kernel takes one from the count
 * (with a compare-and-exchange, so a store the thread makes meanwhile
 * wins) unless it is MAGNET_ACCT_UNTIL_STOP, which lasts until the thread
 * stores 0. A word with bits the kernel does not know (a token of
 * MAGNET_ACCT_TOKENS or more, unknown flags or subsystems) is refused
 * whole: the kernel stores 0 in ctl.arm, the word in area.refused and
 * EINVAL in area.error, and accounts nothing.
 *
 *   bits  0-15	count: calls to account (0: none; 1..0xfffe; or
 *		MAGNET_ACCT_UNTIL_STOP)
 *   bits 16-23	token: the result slot the calls are summed into,
 *		0..MAGNET_ACCT_TOKENS-1
 *   bits 24-31	flags: MAGNET_ACCT_SUM adds to the slot's results; without
 *		it, the first call of an arm (a new generation) starts the
 *		slot from zero
 *   bits 32-47	subsystems: a mask of 1 << enum magnet_acct_subsys to split
 *		CPU time among; time in the others goes to
 *		MAGNET_ACCT_SUBSYS_OTHER
 *   bits 48-63	generation: changed by the thread at each arm, so that the
 *		kernel tells a new arm from the rest of an old one
 *
 * Reading: a slot is published with a sequence count: the kernel makes
 * seq odd, writes the slot, and makes it even (smp_wmb() between, pairing
 * with the reader's acquire of seq and its smp_rmb() before reading seq
 * again); a reader copies the slot and retries while seq was odd or
 * changed. The kernel writes a slot at an accounted call's entry (a new
 * arm's first, without MAGNET_ACCT_SUM: zeroed), at its return, and as
 * its deferred parts come in.
 *
 * What a call reports (struct magnet_acct_result; times in ns, on the
 * CLOCK_MONOTONIC clock's scale):
 * - wall_ns: from the call's entry to its return.
 * - cpu_ns: time on a CPU for the call, interrupts excluded; split by the
 *   subsystem it was in (subsys_ns[], which adds up to cpu_ns): a
 *   subsystem is entered by a call of one of its boundary functions and
 *   left by its return (the innermost one wins). The module's list of
 *   boundaries is in kmod/magnet/acct.c and libmagnet(3), with those its
 *   acct_boundaries parameter adds (FUNCTION:SUBSYSTEM,..., the names of
 *   MAGNET_ACCT_SUBSYS_NAMES); a function a kernel lacks (inlined,
 *   renamed) is left out of it.
 * - runq_ns: waiting for a CPU, runnable (preempted, or woken and not
 *   yet running).
 * - blocked_ns[]: asleep, from going to sleep to being woken, by how it
 *   slept (enum magnet_acct_block).
 * - hardirq_ns, softirq_ns: interrupt handlers and softirqs that ran on
 *   the thread's CPU while it was on it in the call: time taken from the
 *   call, charged to whatever the interrupts served (the ledger), and not
 *   in cpu_ns. wall_ns = cpu_ns + runq_ns + blocked_ns[] + hardirq_ns +
 *   softirq_ns, up to the few ns the entry and exit hooks take.
 * - minflt, majflt: page faults; vcsw, ivcsw: context switches, voluntary
 *   and not (the thread's own counters, taken at entry and exit).
 * - sock_tx_bytes, sock_rx_bytes: bytes the socket layer took or gave
 *   (sock_sendmsg() and sock_recvmsg() returns).
 * - blk_read_bytes: bytes read from block devices for the call;
 *   blk_write_bytes: bytes of page cache the call dirtied, which
 *   writeback will write (the thread's I/O accounting).
 * - tcp_retrans: TCP segments retransmitted in the call's context.
 *
 * Deferred work is linked to the call through what both touch, followed
 * from the call to its end, and added to the slot as it comes in, even
 * after the call returned:
 * - a packet the call hands to the device queue (__dev_queue_xmit()),
 *   until the device has sent it (net_dev_xmit) or it is freed unsent:
 *   dev_tx_bytes, and async_tx_ns, the driver's transmit when it runs
 *   after the call returned (from the qdisc, in a softirq or another
 *   call). TCP's later transmissions of the call's data (when the window
 *   opens, retransmissions) are not followed.
 * - the pages of a file a write() dirtied (its inode; blk_write_bytes of
 *   them), until that many bytes of the inode's pages are written by
 *   completed block requests, whoever submitted them (the flusher, an
 *   fsync): async_blk_bytes, and async_blk_ns, each request's time from
 *   its start to its completion in proportion to the bytes it wrote for
 *   the call. A request that writes pages dirtied by several calls is
 *   split among them in proportion to what each has yet to be written.
 * - the receive processing of the data the call read, which ran before
 *   it (or while it waited): each packet's NET_RX time, from its start
 *   (netif_receive_skb) to the next packet's or the softirq's end, its
 *   interrupts apart, as the ledger charges it, added to the pending
 *   processing of the TCP or UDP socket it was delivered to with a
 *   payload (its time up to the delivery then, before a reader can be
 *   woken for it; the rest, its queueing and what it sends back, as it
 *   ends: a read that comes first leaves that to the next); a call whose
 *   sock_recvmsg() returns n bytes (not peeking, not the error queue)
 *   takes n / pending of it: async_rx_bytes (at most n) and async_rx_ns.
 *   Known at the call's return, it is never pending. A socket's pending
 *   is kept in a table of 1024 places by socket (its address and inode
 *   number: a socket made where a closed one was takes none of that
 *   one's): one that takes the place of another, or is
 *   MAGNET_ACCT_ASYNC_AGE_NS old, is dropped.
 * async_pending counts the parts not in yet (0 once all are); each that
 * comes in adds one to area.completions and makes the file readable for
 * poll() (once per poll that returned it). A part not followed to its
 * end (the module's table of MAGNET_ACCT_ASYNC_MAX parts full, a part
 * MAGNET_ACCT_ASYNC_AGE_NS old evicted for a new one, the handle closed)
 * counts in async_lost instead. A new arm without MAGNET_ACCT_SUM starts
 * the slot from zero at its first call's entry; parts of calls before
 * it are then dropped as they come in (with it, they count on).
 */
#define MAGNET_ACCT_ASYNC_MAX		1024
#define MAGNET_ACCT_WATCHES		8	/* processes watched at once */
#define MAGNET_ACCT_WATCH_THREADS	256	/* threads of one at once */
#define MAGNET_ACCT_WATCH_ROWS		64	/* system calls of one */
#define MAGNET_ACCT_NR_OTHER		0xffffffffU
#define MAGNET_ACCT_HIST		24	/* 1 us to 4 s, by powers of 2 */
#define MAGNET_ACCT_ASYNC_AGE_NS	30000000000ULL
#define MAGNET_ACCT_DEVICE	"/dev/magnet-acct"
#define MAGNET_ACCT_CTL_SIZE	4096
#define MAGNET_ACCT_AREA_SIZE	8192
#define MAGNET_ACCT_TOKENS	15
#define MAGNET_ACCT_UNTIL_STOP	0xffff
#define MAGNET_ACCT_SUM		(1U << 0)	/* flag: add to the slot */
#define MAGNET_ACCT_FLAGS	MAGNET_ACCT_SUM	/* every flag known */

#define MAGNET_ACCT_WORD(count, token, flags, mask, gen)		\
	((__u64)(count) | ((__u64)(token) << 16) |			\
	 ((__u64)(flags) << 24) | ((__u64)(mask) << 32) |		\
	 ((__u64)(gen) << 48))
#define MAGNET_ACCT_COUNT(w)	((__u32)((w) & 0xffff))
#define MAGNET_ACCT_TOKEN(w)	((__u32)(((w) >> 16) & 0xff))
#define MAGNET_ACCT_FLAG(w)	((__u32)(((w) >> 24) & 0xff))
#define MAGNET_ACCT_MASK(w)	((__u32)(((w) >> 32) & 0xffff))
#define MAGNET_ACCT_GEN(w)	((__u32)((w) >> 48))

/* The subsystems a call's CPU time is split among (subsys_ns[]). */
enum magnet_acct_subsys {
	MAGNET_ACCT_SUBSYS_OTHER,	/* in no listed subsystem: the call's
					 * own code, and subsystems not asked
					 */
	MAGNET_ACCT_SUBSYS_SOCKET,	/* socket layer */
	MAGNET_ACCT_SUBSYS_TCP,
	MAGNET_ACCT_SUBSYS_UDP,
	MAGNET_ACCT_SUBSYS_IP,		/* IPv4 and IPv6 output and input */
	MAGNET_ACCT_SUBSYS_DEVQ,	/* the device queue: qdisc, driver */
	MAGNET_ACCT_SUBSYS_VFS,
	MAGNET_ACCT_SUBSYS_FS,		/* file systems */
	MAGNET_ACCT_SUBSYS_PAGECACHE,
	MAGNET_ACCT_SUBSYS_BLOCK,
	MAGNET_ACCT_SUBSYS_MM,		/* memory management, page faults */
	MAGNET_ACCT_SUBSYS_PIPE,	/* pipes */
	__MAGNET_ACCT_SUBSYS_MAX
};

/*
 * Their names, in the enum's order: libmagnet's, magnetctl's, and those
 * the module's acct_boundaries parameter takes.
 */
#define MAGNET_ACCT_SUBSYS_NAMES					\
	"other", "socket", "tcp", "udp", "ip", "devq", "vfs", "fs",	\
	"pagecache", "block", "mm", "pipe"

#define MAGNET_ACCT_SUBSYS_SLOTS	16	/* subsys_ns[]'s room */
#define MAGNET_ACCT_SUBSYS_ALL	((1U << __MAGNET_ACCT_SUBSYS_MAX) - 2)

/* How a call slept (blocked_ns[]), from its state as it left the CPU. */
enum magnet_acct_block {
	MAGNET_ACCT_BLOCK_IO,		/* uninterruptible, waiting for I/O */
	MAGNET_ACCT_BLOCK_LOCK,		/* uninterruptible otherwise: mostly
					 * locks (mutexes, rwsems, page locks)
					 */
	MAGNET_ACCT_BLOCK_WAIT,		/* interruptible: waiting for an
					 * event (data, a timer, a futex)
					 */
	__MAGNET_ACCT_BLOCK_MAX
};

/* state of a result slot */
#define MAGNET_ACCT_S_DONE	(1U << 0)	/* an accounted call returned */

struct magnet_acct_ctl {
	__u64 arm;		/* the control word, written by the thread */
};

struct magnet_acct_result {
	__u32 seq;		/* sequence count: odd while written */
	__u32 state;		/* MAGNET_ACCT_S_* */
	__u32 calls;		/* accounted calls summed here */
	__u16 gen;		/* generation of the arm that wrote last */
	__u16 last_nr;		/* the last call's number (its syscall) */
	__s64 last_ret;		/* and its return value */
	__u64 wall_ns;
	__u64 cpu_ns;
	__u64 runq_ns;
	__u64 blocked_ns[__MAGNET_ACCT_BLOCK_MAX];
	__u64 hardirq_ns;
	__u64 softirq_ns;
	__u64 subsys_ns[MAGNET_ACCT_SUBSYS_SLOTS];
	__u64 minflt;
	__u64 majflt;
	__u64 vcsw;
	__u64 ivcsw;
	__u64 sock_tx_bytes;
	__u64 sock_rx_bytes;
	__u64 blk_read_bytes;
	__u64 blk_write_bytes;
	__u64 tcp_retrans;
	/* deferred work, linked to the call by what it shares with it */
	__u32 async_pending;	/* parts not in yet: 0, all are */
	__u32 async_lost;	/* parts not followed to their end */
	__u64 dev_tx_bytes;	/* bytes the device sent for the call */
	__u64 async_tx_ns;	/* device transmits after the call returned */
	__u64 async_blk_bytes;	/* bytes of its dirty pages written */
	__u64 async_blk_ns;	/* their share of their requests' time */
	__u64 async_rx_bytes;	/* bytes read whose receive processing */
	__u64 async_rx_ns;	/* ran before the call: its share */
	__u64 reserved[21];	/* zero; room for what comes */
};

struct magnet_acct_area {
	__u32 version;		/* MAGNET_FORMAT_VERSION */
	__u32 tokens;		/* MAGNET_ACCT_TOKENS */
	__u32 result_size;	/* sizeof(struct magnet_acct_result) */
	__s32 error;		/* 0, or why the last refused word was */
	__u64 refused;		/* the last control word refused */
	__u32 tid;		/* the handle's thread, in its pid namespace */
	__u32 completions;	/* deferred parts that came in, ever */
	__u64 reserved[60];
	struct magnet_acct_result slot[MAGNET_ACCT_TOKENS];
};

#endif /* _UAPI_LINUX_MAGNET_H */

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmagnet: talking to magnetd, the magnet daemon, from an application.
 *
 * This header is the contract between magnetd and its clients: the wire
 * protocol below is what magnetd speaks on its Unix socket, and the
 * functions after it speak it for C programs. Build with
 * `pkg-config --cflags --libs libmagnet`.
 *
 * Wire protocol, version MAGNET_PROTO_VERSION
 * ------------------------------------------
 * A client connects to magnetd's Unix stream socket (MAGNET_SOCKET_PATH
 * unless configured otherwise). Both sides send lines of text, each ending
 * in "\n" and at most MAGNET_LINE_MAX bytes long with it. Words are
 * separated by one space. Names (of events, latencies and metrics) are
 * made of letters, digits and "._-" only.
 *
 * On connecting, the daemon sends one line:
 *
 *	magnetd PROTO VERSION
 *
 * PROTO is the protocol version (a client refuses another), VERSION the
 * daemon's release. Then the client sends requests, one per line, and the
 * daemon answers each in order:
 *
 *	snapshot
 *		"snapshot TIME COUNT", then COUNT lines, then "end". TIME is
 *		the wall-clock time (CLOCK_REALTIME, ns) of the snapshot. Each
 *		line is one of
 *		  "metric NAME TYPE UNIT VALUE DESCRIPTION..."
 *		  "top EVENT RANK TGID COUNT COMM"
 *		and a client skips lines of kinds it does not know. TYPE is
 *		"counter" (a total since the daemon started; it never goes
 *		down, not even across a reload or a module reload) or "gauge".
 *		UNIT is one word ("events", "events/s", "bytes", "bytes/s",
 *		"ns", "records", "messages", "clients", "s", "bool", ...).
 *		VALUE is a decimal number in the fewest digits that read
 *		back exactly: an integer, a fraction or the exponent form
 *		("7.2e-05"). DESCRIPTION
 *		is the rest of the line. "top" lines rank an event's busiest
 *		thread groups over the metrics window (RANK 1 is the busiest;
 *		COMM is "-" if unknown). The metrics are listed in the
 *		README and in magnetd(8).
 *
 *	ledger
 *		The kernel's ledger (magnetctl(8) account): "ledger off"
 *		while it is off (or the module is not loaded); else
 *		"ledger TIME COUNT", then COUNT lines, then "end", as a
 *		snapshot's. Each line is one of
 *		  "cpu CPU ELAPSED"
 *		  "row NS CGROUP TGID KIND VECTOR NAME PATH"
 *		and a client skips lines of kinds it does not know. A cpu
 *		line: the time in ns CPU has been online since the ledger was
 *		turned on, which its rows add up to. A row: NS nanoseconds
 *		of CPU time charged, summed over CPUs, to CGROUP (the cgroup's
 *		id, its directory's inode number in the cgroup2 tree; 0 for no
 *		activity: idle, kernel threads, and interrupts and work items
 *		that served none), TGID (0 unless the ledger keeps thread
 *		groups), and KIND (user,
 *		system, kthread, work, hardirq, softirq, idle, overflow);
 *		VECTOR is a softirq's name ("net_rx") or a hardirq's number,
 *		NAME a work item's function or an x86 vector's name
 *		("local_timer"), PATH the cgroup's path under magnetd's
 *		cgroup-root ("/system.slice/ssh.service"; cut to its
 *		cgroup-depth), or "(gone)" for a cgroup removed before
 *		magnetd first saw it. VECTOR, NAME and PATH are "-" when
 *		there is none, and have every byte outside '!'..'~' and every
 *		'\' written as \xHH. The counters start at 0 when the ledger
 *		is turned on, and only grow until it is turned off.
 *
 *	subscribe event EVENT [tgid N] [cpu N] [id N]
 *		"ok SUB": from now on, every record of EVENT (a probe name
 *		from the configuration, e.g. "udp-send.socket") that matches
 *		the optional conditions is pushed as
 *		  "event SUB EVENT TIMESTAMP CPU TGID TID ID SIZE"
 *		with the record header's fields (<linux/magnet.h>): TIMESTAMP
 *		in CLOCK_MONOTONIC ns, ID the abstract id in decimal, SIZE the
 *		record's bytes.
 *
 *	subscribe threshold METRIC OP VALUE
 *		"ok SUB": OP is one of > >= < <=; VALUE a number, optionally
 *		followed by a unit suffix: ns, us, ms, s (times, converted to
 *		ns) or k, M, G (x 1e3, 1e6, 1e9). The condition "METRIC OP
 *		VALUE" is evaluated on every metrics tick; when it becomes
 *		true the daemon pushes
 *		  "alert SUB METRIC VALUE fired"
 *		and when it becomes false again
 *		  "alert SUB METRIC VALUE cleared"
 *		with the metric's value at that tick. A condition already true
 *		at the first tick after subscribing fires then. METRIC need not
 *		exist yet (a latency with no samples); it is false until it
 *		does.
 *
 *	unsubscribe SUB
 *		"ok". Pushes for SUB stop.
 *
 *	release
 *		"ok": the daemon removes what it installed in the module and
 *		closes the module's files, so that the module can be unloaded;
 *		it installs its configuration again as soon as the module is
 *		loaded again (or on "attach"). Its metrics are kept. Only for
 *		clients running as root or as the daemon's user.
 *
 *	attach
 *		"ok": end a release now (same privilege).
 *
 * A request the daemon cannot honour is answered "error MESSAGE" (the rest
 * of the line says why); the connection stays usable. A line longer than
 * MAGNET_LINE_MAX closes the connection.
 *
 * Pushes ("event", "alert") arrive between replies, never inside a
 * multi-line reply. The daemon never waits for a client: pushes are
 * queued up to the client's queue limit (magnetd.conf, socket
 * client-queue) and beyond it dropped and counted. Once the client has
 * read its queue down, it receives
 *
 *	lost N
 *
 * (N pushes dropped since the previous "lost" line), before any further
 * push; so every push is either delivered or counted in a "lost" line.
 * Replies are never dropped and always come whole, however large (a
 * snapshot may be larger than the queue limit), but a client that sends
 * a request while more than four times the queue limit of earlier output
 * is still unread is disconnected instead of answered.
 */
#ifndef LIBMAGNET_H
#define LIBMAGNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/magnet.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MAGNET_PROTO_VERSION	1
#define MAGNET_SOCKET_PATH	"/run/magnetd.sock"
#define MAGNET_LINE_MAX		4096

/*
 * The largest snapshot a client takes: lines of its body (its COUNT), and
 * bytes of the whole reply, "snapshot" to "end" with their newlines. Far
 * beyond what a magnetd serves (a thousand probes on a thousand CPUs are
 * about 1.1 million lines, 45 MB); a reply that passes either fails the
 * call with EMSGSIZE, so a peer that misbehaves cannot make the client
 * grow its memory without end.
 */
#define MAGNET_SNAPSHOT_LINES_MAX	(1U << 20)
#define MAGNET_SNAPSHOT_BYTES_MAX	(64U << 20)

/* Metric types, as "metric" lines name them. */
enum magnet_metric_type {
	MAGNET_COUNTER,		/* "counter": grows, total since start */
	MAGNET_GAUGE,		/* "gauge": a value now */
};

struct magnet_metric {
	char name[128];
	enum magnet_metric_type type;
	char unit[16];
	double value;		/* exact for integers below 2^53 */
	char description[160];
};

struct magnet_top {
	char event[128];
	unsigned int rank;	/* 1 = busiest */
	uint32_t tgid;
	uint64_t count;
	char comm[16];
};

struct magnet_snapshot {
	uint64_t time_ns;	/* CLOCK_REALTIME */
	unsigned int nmetrics;
	struct magnet_metric *metrics;
	unsigned int ntops;
	struct magnet_top *tops;
};

/* A message the daemon pushed. */
enum magnet_message_kind {
	MAGNET_MSG_EVENT,
	MAGNET_MSG_ALERT,
	MAGNET_MSG_LOST,
};

struct magnet_message {
	enum magnet_message_kind kind;
	unsigned int sub;		/* subscription (event, alert) */
	union {
		struct {
			char name[128];
			uint64_t timestamp;	/* CLOCK_MONOTONIC ns */
			uint32_t cpu;
			uint32_t tgid;
			uint32_t tid;
			uint64_t id;
			uint32_t size;
		} event;
		struct {
			char metric[128];
			double value;
			bool fired;		/* false: cleared */
		} alert;
		struct {
			uint64_t count;		/* pushes dropped */
		} lost;
	};
};

/*
 * Threads: clients share nothing and the library keeps no global state,
 * so a program may run one client per thread without locking. A client
 * itself is not thread-safe: one thread at a time may call functions on
 * it, magnet_fd() and magnet_last_error() included (the client's next
 * failure rewrites the latter's string); to share one, hold a lock around
 * each call and the use of what it returned. magnet_snapshot_find(),
 * magnet_metric_per_cpu(), magnet_snapshot_free(), magnet_ledger_free()
 * and magnet_ledger_subtract() touch only their arguments. No
 * process-wide state changes: numbers go through a "C"
 * locale object of the client's own (uselocale() on the calling thread,
 * during a call), and a daemon gone away is EPIPE, never SIGPIPE. A
 * poller (below) runs a thread and a client of its own.
 */
struct magnet_client;

/*
 * Connect to magnetd at @path (NULL: MAGNET_SOCKET_PATH) and check its
 * greeting. Returns a client, or NULL with errno set: ENOENT or
 * ECONNREFUSED (no daemon), EPROTO (not magnetd, or another protocol
 * version), or a socket error.
 */
struct magnet_client *magnet_connect(const char *path);

/* Close the connection and free the client. NULL is allowed. */
void magnet_close(struct magnet_client *c);

/*
 * The connection's file descriptor, for poll() or an event loop: readable
 * when a pushed message may be waiting (then call magnet_receive() with
 * timeout 0 until it returns 0). Pushes that arrived while a call waited
 * for its reply are already read from the socket and do not make it
 * readable: drain with magnet_receive(c, &msg, 0) after each request too.
 */
int magnet_fd(const struct magnet_client *c);

/*
 * Take a snapshot of every metric into @snap (free it with
 * magnet_snapshot_free()). Messages pushed meanwhile are kept for
 * magnet_receive(). @timeout_ms bounds the wait (-1: no bound). Returns 0,
 * or -1 with errno set (ETIMEDOUT, EPIPE when the daemon went away,
 * EPROTO for a malformed reply, EMSGSIZE for one of more than
 * MAGNET_SNAPSHOT_LINES_MAX lines or MAGNET_SNAPSHOT_BYTES_MAX bytes,
 * EREMOTEIO when the daemon answered with an error; magnet_last_error()
 * says more after the last two). After EPROTO or EMSGSIZE the connection
 * is unusable: close it.
 */
int magnet_snapshot(struct magnet_client *c, struct magnet_snapshot *snap,
		    int timeout_ms);
void magnet_snapshot_free(struct magnet_snapshot *snap);

/*
 * Is @name one of an event's per-CPU counts ("EVENT.cpuN.count")? Monitors
 * that cannot take one metric per CPU leave these out.
 */
bool magnet_metric_per_cpu(const char *name);

/* The metric named @name in @snap, or NULL. */
const struct magnet_metric *magnet_snapshot_find(const struct magnet_snapshot *snap,
						 const char *name);

/*
 * The kernel's ledger, as magnetd reads it ("ledger" above): every CPU
 * nanosecond since the ledger was turned on, charged to a cgroup and a
 * kind, summed over CPUs. Two snapshots taken a while apart, less one
 * another (magnet_ledger_subtract()), say where the CPUs' time went in
 * between.
 */
struct magnet_ledger_row {
	uint64_t ns;		/* charged, summed over CPUs */
	uint64_t cgroup;	/* the cgroup's id; 0: no activity */
	char *path;		/* under the cgroup2 mount; "" for no
				 * activity, "(gone)" for a cgroup
				 * removed before magnetd saw it
				 */
	uint32_t tgid;		/* 0 unless by thread group */
	char kind[16];		/* "user", "system", "softirq", ... */
	char vector[16];	/* "net_rx", a hardirq's number, or "" */
	char name[128];		/* a work item's function, "" */
};

struct magnet_ledger {
	uint64_t time_ns;	/* CLOCK_REALTIME */
	unsigned int ncpus;
	uint64_t *elapsed_ns;	/* [ncpus]: each CPU's time online since
				 * the ledger was turned on (0: none)
				 */
	unsigned int nrows;
	struct magnet_ledger_row *rows;
};

/*
 * Take a snapshot of the ledger into @ledger (free it with
 * magnet_ledger_free()). Returns 0, or -1 with errno set: ENODATA while
 * the ledger is off (or the module is not loaded), EOPNOTSUPP from a
 * magnetd that does not serve it, or as magnet_snapshot().
 */
int magnet_ledger_snapshot(struct magnet_client *c,
			   struct magnet_ledger *ledger, int timeout_ms);
void magnet_ledger_free(struct magnet_ledger *ledger);

/*
 * @now less @before, row by row (rows match on cgroup, tgid, kind,
 * vector and name) and CPU by CPU, into @now. Returns 0, or -1 with
 * errno ESTALE if a counter of @now is below @before's (the ledger was
 * turned off and on in between: @now is left as it was), ENOMEM (@now
 * as it was too), or EINVAL. The rows of @now keep their order.
 */
int magnet_ledger_subtract(struct magnet_ledger *now,
			   const struct magnet_ledger *before);

/*
 * Subscribe to the records of event @event; @tgid, @cpu and @id narrow it
 * down when non-negative. Returns the subscription number (> 0), or -1
 * with errno set (EREMOTEIO: the daemon refused, magnet_last_error() says
 * why).
 */
int magnet_subscribe_event(struct magnet_client *c, const char *event,
			   int64_t tgid, int64_t cpu, int64_t id);

/*
 * Subscribe to the condition "@metric @op @value" (@op: ">", ">=", "<",
 * "<="; @value in the metric's unit). Returns the subscription number
 * (> 0), or -1 with errno set.
 */
int magnet_subscribe_threshold(struct magnet_client *c, const char *metric,
			       const char *op, double value);

int magnet_unsubscribe(struct magnet_client *c, int sub);

/*
 * Send a raw request line (without its newline) and return the reply's
 * first line in @reply (@len bytes). For requests the functions above do
 * not cover ("release", "attach"). Returns 0, or -1 with errno set
 * (EREMOTEIO: the reply was "error ..."; EMSGSIZE: a snapshot of more
 * than MAGNET_SNAPSHOT_LINES_MAX lines).
 */
int magnet_request(struct magnet_client *c, const char *line, char *reply,
		   size_t len);

/*
 * Receive the next pushed message into @msg, waiting up to @timeout_ms
 * (0: do not wait, -1: no bound). Returns 1 with a message, 0 if none came
 * in time, or -1 with errno set (EPIPE: the daemon went away).
 */
int magnet_receive(struct magnet_client *c, struct magnet_message *msg,
		   int timeout_ms);

/*
 * What went wrong in the last call on @c that failed: the daemon's
 * message after EREMOTEIO (an "error" reply), the library's own
 * otherwise (the bad argument after EINVAL, what did not come in time
 * after ETIMEDOUT, the daemon gone after EPIPE, the line not understood
 * after EPROTO, what was too large after EMSGSIZE, out of memory, a
 * socket error). Once the connection is unusable, later calls fail with
 * the same errno and the message that says why stays. Kept until another
 * call on @c fails (magnet_receive() returning 0 is no failure); "" if
 * none has. After magnet_connect() fails, or with a NULL client, errno
 * says it all.
 */
const char *magnet_last_error(const struct magnet_client *c);

/*
 * A poller: a thread of its own that takes a snapshot of magnetd after
 * @first_ms and then every @interval_ms, connecting again whenever it has
 * to (at start, after magnetd went away or restarted), as a monitor's
 * data source does. A program that starts as root and then drops
 * privileges (gmond) gives a @first_ms past the drop, so that the first
 * connection is made with the credentials it runs with from then on.
 * After each attempt it calls @cb with the snapshot, or with NULL and the
 * errno of why magnetd could not be asked (ENOENT, ECONNREFUSED, EACCES,
 * ETIMEDOUT, EPIPE, EPROTO, ...); @snap is freed when @cb returns. @cb
 * runs on the poller's thread. @timeout_ms bounds each snapshot.
 */
typedef void (*magnet_poll_cb)(const struct magnet_snapshot *snap, int err,
			       void *data);

struct magnet_poller;

/*
 * Start a poller of magnetd at @path (NULL: MAGNET_SOCKET_PATH). Returns
 * it, or NULL with errno set.
 */
struct magnet_poller *magnet_poller_start(const char *path,
					  unsigned int first_ms,
					  unsigned int interval_ms,
					  int timeout_ms, magnet_poll_cb cb,
					  void *data);

/*
 * Stop the poller: a wait between snapshots ends at once, a snapshot under
 * way within its timeout (a poller started with @timeout_ms -1 may wait
 * for magnetd that long); then its thread is joined, the connection
 * closed and @p freed. NULL is allowed. Not from @cb: the thread would
 * wait for itself.
 */
void magnet_poller_stop(struct magnet_poller *p);


/*
 * Per-call accounting: what one of this thread's system calls cost,
 * measured by the kernel module (no magnetd involved). The results are
 * struct magnet_acct_result of <linux/magnet.h>, which says what each
 * field means; libmagnet(3) shows a whole program.
 *
 * A handle is the calling thread's, and only its own calls are accounted
 * through it. Arming (magnet_acct_next(), _start(), _stop()) is one store
 * into memory shared with the kernel, and reading is a copy from it: no
 * system call, so none is accounted by mistake. The token names one of
 * MAGNET_ACCT_TOKENS result slots the calls are summed into.
 */
struct magnet_acct;

/*
 * Open the calling thread's handle. Returns it, or NULL with errno set:
 * ENOENT (the module is not loaded), EBUSY (this thread has one),
 * ENOSPC (the module's max_acct_threads handles are open), EACCES.
 */
struct magnet_acct *magnet_acct_open(void);

/*
 * The calling thread's handle, opened at its first use and closed when
 * the thread exits; NULL with errno set as magnet_acct_open().
 */
struct magnet_acct *magnet_acct_self(void);

/* Close a handle (not one of magnet_acct_self()'s). NULL is allowed. */
void magnet_acct_close(struct magnet_acct *a);

/*
 * Account the thread's next @calls system calls (1..MAGNET_ACCT_COUNT_MAX)
 * into slot @token, splitting their CPU time among the subsystems of
 * @subsys (a mask of 1 << enum magnet_acct_subsys;
 * MAGNET_ACCT_SUBSYS_ALL for all). @flags: MAGNET_ACCT_SUM adds to what
 * the slot holds; without it the first of these calls starts the slot
 * from zero. An arm replaces the one before. Returns 0, or -1 with errno
 * EPERM (@a is another thread's, or its process's parent's, after fork())
 * or EINVAL (a bad count, token, mask or flag, or @a NULL).
 */
#define MAGNET_ACCT_COUNT_MAX	(MAGNET_ACCT_UNTIL_STOP - 1)
int magnet_acct_next(struct magnet_acct *a, unsigned int calls,
		     unsigned int token, unsigned int subsys,
		     unsigned int flags);

/* Account every call from now until magnet_acct_stop(); as _next(). */
int magnet_acct_start(struct magnet_acct *a, unsigned int token,
		      unsigned int subsys, unsigned int flags);

/* Account no more calls. Returns 0, or -1 with errno EPERM or EINVAL. */
int magnet_acct_stop(struct magnet_acct *a);

/*
 * Copy slot @token's results into @r, consistently (retrying while the
 * kernel writes it). From any thread of the handle's process. Returns 0,
 * or -1 with errno EINVAL, EPERM (after fork()), or EPROTO (the kernel
 * refused the last control word: a raw store with unknown bits;
 * magnet_acct_refused() tells it).
 */
int magnet_acct_read(const struct magnet_acct *a, unsigned int token,
		     struct magnet_acct_result *r);

/*
 * Wait until every deferred part of slot @token's calls is in (its
 * async_pending is 0: the packets they handed to the device sent, the
 * file pages they dirtied written), at most @timeout_ms (-1: no bound),
 * and copy the slot into @r. Returns 0, or -1 with errno ETIMEDOUT (@r
 * holds what came in so far: incomplete), EINTR, or as _read().
 */
int magnet_acct_wait(const struct magnet_acct *a, unsigned int token,
		     struct magnet_acct_result *r, int timeout_ms);

/*
 * The handle's file descriptor, for poll() or an event loop: readable
 * when a deferred part of a call came in since it last was (then read the
 * slots). Not to be closed.
 */
int magnet_acct_fd(const struct magnet_acct *a);

/* The last control word the kernel refused, or 0. */
uint64_t magnet_acct_refused(const struct magnet_acct *a);

/*
 * Names: of a subsystem ("socket", "tcp", ..., "other") and of a way to
 * block ("io", "lock", "wait"); NULL for an unknown number.
 */
const char *magnet_acct_subsys_name(unsigned int subsys);
const char *magnet_acct_block_name(unsigned int how);

/*
 * Spans: an application's own spans in magnet's record stream, beside
 * the kernel's records ("Application spans" in <linux/magnet.h>), for
 * magnet-read to make one trace of the application's spans and what the
 * kernel did for them in between (its system calls, the packets and
 * block I/O they started) and to write it out for tracing systems.
 *
 * Each thread has its open spans, innermost last: magnet_span_begin()
 * opens one inside the innermost (or a root span, in a new trace, or in
 * the trace magnet_span_adopt() took), magnet_span_end() ends the
 * innermost. Each call is one write() to MAGNET_SPAN_DEVICE, logged by
 * every app.span probe (magnet-read -P app, magnetctl probe add-set app)
 * and by none while there is none. Spans are kept the same whether or
 * not the module is loaded, and calls fail only for the caller's
 * mistakes.
 *
 * Attributes are "key=value" strings in an array ended by NULL (or a NULL
 * array): keys of letters, digits and "._-", values of text without
 * control characters; a span's name likewise, at most
 * MAGNET_SPAN_NAME_MAX bytes. A call's name and attributes take at most
 * MAGNET_SPAN_MAX bytes with a 40-byte header.
 */
#define MAGNET_SPAN_DEPTH	32	/* a thread's open spans, at most */
#define MAGNET_TRACEPARENT_LEN	55	/* "00-" trace "-" span "-01" */

/*
 * Begin a span named @name. Returns 0, or -1 with errno EINVAL (no name,
 * or the kernel found the name or an attribute malformed), EMSGSIZE (too
 * long), ENOSPC (MAGNET_SPAN_DEPTH spans are open); the span is not
 * opened then.
 */
int magnet_span_begin(const char *name, const char *const attrs[]);

/* End the innermost span, adding @attrs. -1 with EINVAL if none is open. */
int magnet_span_end(const char *const attrs[]);

/* An event named @name in the innermost span. -1 with EINVAL if none. */
int magnet_span_event(const char *name, const char *const attrs[]);

/*
 * The W3C traceparent of the innermost span (of the adopted parent while
 * none is open), to send on with a request: "00-TRACE-SPAN-01" and a NUL.
 * -1 with ESRCH if there is neither.
 */
int magnet_span_traceparent(char buf[MAGNET_TRACEPARENT_LEN + 1]);

/*
 * Take a request's W3C traceparent: the thread's next root span joins its
 * trace, a child of its span. -1 with EINVAL if @traceparent is
 * malformed (nothing changes then).
 */
int magnet_span_adopt(const char *traceparent);

/* Parse a W3C traceparent into its ids; -1 with EINVAL if malformed. */
int magnet_span_parse_traceparent(const char *traceparent,
				  uint8_t trace_id[16], uint8_t parent_id[8]);

/* The span device's descriptor, or -1 with ENOENT (no module loaded). */
int magnet_span_fd(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBMAGNET_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A data file read through its mapping (MAGNET_IOC_MAP_INFO and
 * MAGNET_IOC_CONSUME in <linux/magnet.h>), as magnetd and magnet-read
 * read drop-mode buffers: the records are handed out where the kernel
 * wrote them, without a copy, in runs of whole records, as read() would
 * return them: CPU after CPU, padding left out, loss records with their
 * @lost.
 */
#ifndef MAGNET_MAPPED_H
#define MAGNET_MAPPED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mapped;

/*
 * Map the data file open at @fd. Returns NULL with errno set if it cannot
 * be (EOPNOTSUPP: an overwrite-mode buffer, read it with read(); ENOTTY:
 * a module without the mapping).
 */
struct mapped *mapped_open(int fd);

/*
 * The next run of whole records: its bytes, 0 if there is none now, -1
 * with errno set on an error. *@data stays valid until the next call,
 * which gives the run back to the kernel (consumes it). @readable: poll()
 * just said the file is readable; with no record in any ring, the kernel
 * is then asked for the losses it has not reported yet (a ring whose
 * writers only dropped).
 */
ssize_t mapped_next(struct mapped *m, const char **data, bool readable);

/*
 * True once every ring has been looked at since the last time it said so:
 * the runs handed out since then hold every CPU's records up to then, so
 * a reader that puts records in timestamp order may release what it holds
 * (a run holds one CPU's records; read() held every CPU's).
 */
bool mapped_swept(struct mapped *m);

/*
 * Every record stamped (CLOCK_MONOTONIC) before the time returned has
 * been handed out, but for those whose writer had reserved it and not yet
 * committed it when its ring was looked at: for each ring, the time of
 * the last look that found it drained, or the last record handed out
 * since. 0 until every ring has been looked at, once asked: the first
 * call starts the keeping (a clock read per look), so a reader that puts
 * records in order calls it once before its first mapped_next().
 */
uint64_t mapped_horizon(struct mapped *m);

/* Give back the last run (done by mapped_next() and mapped_close() too). */
int mapped_consume(struct mapped *m);

/* Give back the last run and unmap (the file stays open). */
void mapped_close(struct mapped *m);

#endif /* MAGNET_MAPPED_H */

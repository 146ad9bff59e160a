/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's debugfs control files, as the programs that read its data
 * files need them (magnet-read, magnetd): the record format, and the size
 * of a buffer.
 */
#ifndef MAGNET_CONTROL_H
#define MAGNET_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define MAGNET_DEBUGFS	"/sys/kernel/debug"

/*
 * Check that the module's record format (control/format) is the one this
 * program was built for. Returns 0, or -1 with one line saying why in
 * @err (@len bytes, no newline).
 */
int control_check_format(char *err, size_t len);

/* Bytes per CPU of @buffer (control/buffers), 0 if there is no such buffer. */
uint64_t control_buffer_size(const char *buffer);

#endif /* MAGNET_CONTROL_H */

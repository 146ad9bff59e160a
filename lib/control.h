/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the programs that read the module's data files need to know before
 * they read (magnet-read, magnetd): the record format (control/format),
 * and the size of an open data file's rings.
 */
#ifndef MAGNET_CONTROL_H
#define MAGNET_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define MAGNET_DEBUGFS	"/sys/kernel/debug"

/*
 * Check that the module's record format (control/format) is the one this
 * program was built for. Returns 0, or -1 with one line saying why in
 * @err (@len bytes, no newline): the module not loaded, debugfs not
 * mounted, no right to read it, or another format.
 */
int control_check_format(char *err, size_t len);

/*
 * Bytes per CPU of the buffer whose data file is open at @fd
 * (MAGNET_IOC_MAP_INFO), 0 if the module does not say.
 */
uint64_t control_ring_size(int fd);

#endif /* MAGNET_CONTROL_H */

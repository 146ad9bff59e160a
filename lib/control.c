// SPDX-License-Identifier: GPL-2.0
/*
 * What readers need to know before they read (see control.h and the top
 * of <linux/magnet.h>).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/magnet.h>

#include "control.h"

#define MAGNET_SYSFS	"/sys/module/magnet"
#define FORMAT_FILE	MAGNET_DEBUGFS "/magnet/control/format"

/*
 * The format file could not be opened (errno @e): which of what it
 * needs is missing. The module loaded (its directory in sysfs), debugfs
 * mounted where the file is (statfs() there says debugfs, not the sysfs
 * directory under it), then the right to open it; each can be seen
 * without root.
 */
static void why_not_open(char *err, size_t len, int e)
{
	struct statfs fs;
	bool mounted = !statfs(MAGNET_DEBUGFS, &fs) &&
		       fs.f_type == DEBUGFS_MAGIC;
	bool loaded = !access(MAGNET_SYSFS, F_OK);

	if (!loaded && !mounted)
		snprintf(err, len, "the magnet module is not loaded (no %s: modprobe magnet), and debugfs is not mounted at %s (mount -t debugfs none %s)",
			 MAGNET_SYSFS, MAGNET_DEBUGFS, MAGNET_DEBUGFS);
	else if (!loaded)
		snprintf(err, len, "the magnet module is not loaded (no %s: modprobe magnet)",
			 MAGNET_SYSFS);
	else if (!mounted)
		snprintf(err, len, "debugfs is not mounted at %s, where the magnet module's files are (mount -t debugfs none %s)",
			 MAGNET_DEBUGFS, MAGNET_DEBUGFS);
	else if (e == EACCES)
		snprintf(err, len, "%s: %s (are you root? debugfs lets only root in)",
			 FORMAT_FILE, strerror(e));
	else
		snprintf(err, len, "%s: %s", FORMAT_FILE, strerror(e));
}

int control_check_format(char *err, size_t len)
{
	FILE *f = fopen(FORMAT_FILE, "r");
	int version = -1, header = -1;
	char line[256];

	if (!f) {
		why_not_open(err, len, errno);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "version: %d", &version);
		sscanf(line, "header_size: %d", &header);
	}
	fclose(f);
	if (version != MAGNET_FORMAT_VERSION ||
	    header != (int)sizeof(struct magnet_record)) {
		snprintf(err, len, "the module speaks record format %d (header %d bytes); this program speaks %d (%zu bytes): use the matching release",
			 version, header, MAGNET_FORMAT_VERSION,
			 sizeof(struct magnet_record));
		return -1;
	}
	return 0;
}

uint64_t control_ring_size(int fd)
{
	struct magnet_map_info mi;

	if (ioctl(fd, MAGNET_IOC_MAP_INFO, &mi))
		return 0;
	return mi.ring_size;
}

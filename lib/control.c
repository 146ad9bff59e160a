// SPDX-License-Identifier: GPL-2.0
/*
 * What readers need to know before they read (see control.h and the top
 * of <linux/magnet.h>).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/magnet.h>

#include "control.h"

int control_check_format(char *err, size_t len)
{
	FILE *f = fopen(MAGNET_DEBUGFS "/magnet/control/format", "r");
	int version = -1, header = -1;
	char line[256];

	if (!f) {
		snprintf(err, len, "%s/magnet/control/format: %s (is the magnet module loaded and debugfs mounted? are you root?)",
			 MAGNET_DEBUGFS, strerror(errno));
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

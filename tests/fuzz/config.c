// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: magnetd's configuration (magnetd/config.c over
 * libconfuse): the input is the text of magnetd.conf, loaded from a
 * memory file as magnetd -n would load it. A file is either refused with
 * messages or loaded, never both.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[65536];
	struct config *cfg;
	char path[64];
	int fd;

	fd = memfd_create("magnetd.conf", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = 'x';
	cfg = config_load(path, err, sizeof(err));
	if (cfg ? err[0] != '\0' : err[0] == '\0')
		abort();	/* loaded with messages, or refused without */
	config_free(cfg);
	close(fd);
	return 0;
}

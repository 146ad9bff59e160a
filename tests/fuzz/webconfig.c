// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: magnetd's web configuration (magnetd/webconfig.c over
 * libyaml and GnuTLS): the input is the text of a --web.config.file,
 * loaded from a memory file as magnetd -n would load it. A file is either
 * refused with messages or loaded, never both. (File names in it are
 * taken from /proc/self/fd: what they name is read as PEM and refused.)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "webconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char err[65536];
	struct webconfig *wc;
	char path[64];
	int fd;

	fd = memfd_create("web.yml", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err[0] = 'x';
	wc = webconfig_load(path, err, sizeof(err));
	if (wc ? err[0] != '\0' : err[0] == '\0')
		abort();	/* loaded with messages, or refused without */
	webconfig_put(wc);
	close(fd);
	return 0;
}

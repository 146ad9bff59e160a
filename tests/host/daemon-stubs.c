// SPDX-License-Identifier: GPL-2.0
/*
 * The rest of magnetd, stubbed, for programs that run its server (server.c)
 * and metrics (metrics.c) on the host without a kernel: server-unit and the
 * request fuzz target. Each brings its own log_error/warn/info.
 */
#include <time.h>

#include "magnetd.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void readers_flush(struct daemon *d)
{
	(void)d;
}

void daemon_release(struct daemon *d)
{
	d->released = true;
}

int daemon_attach(struct daemon *d)
{
	d->released = false;
	return 0;
}

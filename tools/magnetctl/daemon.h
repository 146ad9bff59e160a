/* SPDX-License-Identifier: GPL-2.0 */
/*
 * magnetctl daemon COMMAND [ARGUMENTS] [socket PATH]: magnetd's snapshots
 * and subscriptions, and releasing or attaching the module, through
 * libmagnet (see daemon.c).
 */
#ifndef MAGNETCTL_DAEMON_H
#define MAGNETCTL_DAEMON_H

/* Run @cmd with @argc words after it; returns the exit status. */
int daemon_command(const char *cmd, int argc, char **argv);

#endif /* MAGNETCTL_DAEMON_H */

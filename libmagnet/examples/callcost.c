// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * magnet-callcost: what did that call cost? Writes a file (or sends or
 * receives UDP datagrams), accounting each call through libmagnet, and
 * prints where each call's time went: on a CPU by kernel subsystem,
 * waiting for one, blocked, taken by interrupts; and the kernel's work
 * for it outside it: the receive processing of the data it read.
 *
 *	magnet-callcost [-n CALLS] [-s BYTES] [-f FILE | -u PORT | -r PORT]
 *
 * Build: cc callcost.c $(pkg-config --cflags --libs libmagnet)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmagnet.h>

/* (the uapi header's __u64 is unsigned long long) */
#define U(x) ((unsigned long long)(x))

static void print(const char *what, const struct magnet_acct_result *r)
{
	unsigned int i;

	printf("%s: %llu ns wall, %llu on a CPU", what,
	       U(r->wall_ns), U(r->cpu_ns));
	for (i = 0; i < __MAGNET_ACCT_SUBSYS_MAX; i++)
		if (r->subsys_ns[i])
			printf(" (%s %llu)", magnet_acct_subsys_name(i),
			       U(r->subsys_ns[i]));
	printf(", %llu waiting for one", U(r->runq_ns));
	for (i = 0; i < __MAGNET_ACCT_BLOCK_MAX; i++)
		if (r->blocked_ns[i])
			printf(", %llu blocked (%s)", U(r->blocked_ns[i]),
			       magnet_acct_block_name(i));
	printf(", %llu taken by interrupts", U(r->hardirq_ns + r->softirq_ns));
	if (r->sock_tx_bytes || r->sock_rx_bytes)
		printf("; socket %llu B out, %llu B in",
		       U(r->sock_tx_bytes), U(r->sock_rx_bytes));
	if (r->async_rx_bytes)
		printf("; %llu ns receiving its %llu B before it",
		       U(r->async_rx_ns), U(r->async_rx_bytes));
	if (r->blk_write_bytes || r->blk_read_bytes)
		printf("; %llu B dirtied, %llu B read from disk",
		       U(r->blk_write_bytes), U(r->blk_read_bytes));
	printf("; %llu faults, %llu switches\n",
	       U(r->minflt + r->majflt), U(r->vcsw + r->ivcsw));
}

static void usage(FILE *to)
{
	fputs("usage: magnet-callcost [-n CALLS] [-s BYTES] [-f FILE | -u PORT | -r PORT]\n"
	      "Make CALLS write()s of BYTES to FILE (default ./callcost.out,\n"
	      "then an fsync()), or sendto()s of BYTES to UDP PORT on\n"
	      "127.0.0.1, or recv()s of up to BYTES on UDP PORT of 127.0.0.1\n"
	      "(bound first: \"listening\" on standard error when it is), and\n"
	      "print what each call cost (libmagnet(3)).\n",
	      to);
}

int main(int argc, char **argv)
{
	const char *file = "callcost.out";
	struct sockaddr_in to = { .sin_family = AF_INET };
	unsigned long calls = 3, size = 65536, i;
	struct magnet_acct_result r;
	struct magnet_acct *a;
	int c, fd, port = 0, rport = 0;
	char *buf, *end;

	while ((c = getopt(argc, argv, "n:s:f:u:r:h")) != -1) {
		switch (c) {
		case 'n':
			calls = strtoul(optarg, &end, 10);
			if (*end || !calls || calls > 1000) {
				fprintf(stderr, "magnet-callcost: -n %s: 1 to 1000 calls\n", optarg);
				return 2;
			}
			break;
		case 's':
			size = strtoul(optarg, &end, 10);
			if (*end || !size || size > (64UL << 20)) {
				fprintf(stderr, "magnet-callcost: -s %s: 1 byte to 64 MiB\n", optarg);
				return 2;
			}
			break;
		case 'f':
			file = optarg;
			break;
		case 'u':
		case 'r':
			port = atoi(optarg);
			if (port <= 0 || port > 65535) {
				fprintf(stderr, "magnet-callcost: -%c %s: a port, 1 to 65535\n",
					c, optarg);
				return 2;
			}
			if (c == 'r')
				rport = port;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	a = magnet_acct_open();
	if (!a) {
		fprintf(stderr, "magnet-callcost: %s: %s%s\n", MAGNET_ACCT_DEVICE,
			strerror(errno), errno == ENOENT ?
			" (is the magnet module loaded?)" : "");
		return 1;
	}
	buf = calloc(1, size);
	if (port) {
		to.sin_port = htons(port);
		to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (rport && fd >= 0 &&
		    bind(fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
			fprintf(stderr, "magnet-callcost: port %d: %s\n", port,
				strerror(errno));
			return 1;
		}
		if (rport)
			fputs("listening\n", stderr);
	} else {
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	}
	if (!buf || fd < 0) {
		fprintf(stderr, "magnet-callcost: %s: %s\n", port ? "socket" : file,
			strerror(errno));
		return 1;
	}
	for (i = 0; i < calls; i++) {
		ssize_t n;

		/* one store: the next call, every subsystem, into slot 0 */
		magnet_acct_next(a, 1, 0, MAGNET_ACCT_SUBSYS_ALL, 0);
		if (rport)
			n = recv(fd, buf, size, 0);
		else if (port)
			n = sendto(fd, buf, size, 0, (struct sockaddr *)&to,
				   sizeof(to));
		else
			n = write(fd, buf, size);
		if (n < 0) {
			perror("magnet-callcost");
			return 1;
		}
		magnet_acct_read(a, 0, &r);	/* no system call */
		print(rport ? "recv" : port ? "sendto" : "write", &r);
	}
	if (!port) {
		magnet_acct_next(a, 1, 0, MAGNET_ACCT_SUBSYS_ALL, 0);
		fsync(fd);
		magnet_acct_read(a, 0, &r);
		print("fsync", &r);
	}
	close(fd);
	magnet_acct_close(a);
	free(buf);
	return 0;
}

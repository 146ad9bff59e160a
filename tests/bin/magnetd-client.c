// SPDX-License-Identifier: GPL-2.0
/*
 * magnetd-client: raw clients of magnetd's socket for the magnetd suite,
 * speaking the protocol by hand (not through libmagnet) to do what a
 * well-behaved client would not.
 *
 *   magnetd-client raw SOCKET LINE...
 *	Send each LINE (with "\n"; "@long" sends 5000 bytes without a
 *	newline, "@binary" 64 bytes of junk and a newline), then print
 *	whatever comes back until the daemon is quiet for 1 s or closes
 *	the connection ("closed" is printed then).
 *
 *   magnetd-client stall SOCKET EVENT GOFILE
 *	Subscribe to EVENT with a small receive buffer, then read nothing
 *	until GOFILE exists; then read everything until quiet for 2 s and
 *	print "events N lost L losslines K" (L: the sum of "lost" lines).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("magnetd-client: connect");
		exit(1);
	}
	return fd;
}

/* Read what comes within @quiet_ms of the last byte; -1 once closed. */
static ssize_t read_some(int fd, char *buf, size_t len, int quiet_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, quiet_ms) <= 0)
		return 0;
	n = read(fd, buf, len);
	return n <= 0 ? -1 : n;
}

static int raw(const char *path, int argc, char **argv)
{
	int fd = connect_to(path), i;
	char buf[65536];
	ssize_t n;

	for (i = 0; i < argc; i++) {
		char line[6000];
		size_t len;

		if (!strcmp(argv[i], "@long")) {
			memset(line, 'x', 5000);
			len = 5000;
		} else if (!strcmp(argv[i], "@binary")) {
			/* junk, but no newline inside: one bad request */
			for (len = 0; len < 64; len++)
				line[len] = (char)(len * 37 + 1) == '\n' ?
					    1 : (char)(len * 37 + 1);
			line[len++] = '\n';
		} else {
			len = snprintf(line, sizeof(line), "%s\n", argv[i]);
		}
		if (send(fd, line, len, MSG_NOSIGNAL) < 0)
			break;
	}
	while ((n = read_some(fd, buf, sizeof(buf), 1000)) > 0)
		fwrite(buf, 1, n, stdout);
	if (n < 0)
		puts("closed");
	close(fd);
	return 0;
}

static int stall(const char *path, const char *event, const char *go)
{
	int fd, rcvbuf = 4096;
	unsigned long long events = 0, lost = 0, losslines = 0;
	char buf[65536], line[4096];
	size_t llen = 0;
	ssize_t n, i;

	fd = connect_to(path);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	n = snprintf(line, sizeof(line), "subscribe event %s\n", event);
	if (send(fd, line, n, MSG_NOSIGNAL) != n)
		return 1;
	while (access(go, F_OK))
		usleep(100000);
	while ((n = read_some(fd, buf, sizeof(buf), 2000)) > 0)
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (llen < sizeof(line) - 1)
					line[llen++] = buf[i];
				continue;
			}
			line[llen] = '\0';
			llen = 0;
			if (!strncmp(line, "event ", 6)) {
				events++;
			} else if (!strncmp(line, "lost ", 5)) {
				lost += strtoull(line + 5, NULL, 10);
				losslines++;
			}
		}
	printf("events %llu lost %llu losslines %llu\n", events, lost,
	       losslines);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "raw"))
		return raw(argv[2], argc - 3, argv + 3);
	if (argc == 5 && !strcmp(argv[1], "stall"))
		return stall(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: magnetd-client raw SOCKET LINE... | stall SOCKET EVENT GOFILE\n");
	return 2;
}

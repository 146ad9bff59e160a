// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * magnet-acct-shim.so: Resourceful's experiment without changing the
 * server. Loaded with LD_PRELOAD, it accounts every accept, receive and
 * send on a socket through libmagnet, as an application that asked for
 * its calls' costs would: arm the next call (one store), make it, read
 * its result (a copy), and add it to the thread's totals. Other file
 * descriptors' reads and writes pass through untouched: the shim knows the
 * sockets by the calls that made them (accept, accept4, socket).
 *
 * MAGNET_ACCT_SUBSYS (a number, default every subsystem) is the mask of
 * subsystems to split the calls' CPU time among; 0 asks for no split.
 * At exit, with MAGNET_ACCT_REPORT set, it prints the calls accounted and
 * their summed wall and CPU time to standard error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "libmagnet.h"

#define FDS 65536

static unsigned char is_sock[FDS];
static unsigned int mask = MAGNET_ACCT_SUBSYS_ALL;
static unsigned long long calls, wall, cpu, failed;

static void __attribute__((constructor)) shim_init(void)
{
	const char *m = getenv("MAGNET_ACCT_SUBSYS");

	if (m)
		mask = strtoul(m, NULL, 0);
}

static void __attribute__((destructor)) shim_report(void)
{
	if (getenv("MAGNET_ACCT_REPORT"))
		fprintf(stderr, "magnet-acct-shim: %llu calls accounted, %llu ns wall, %llu ns CPU, %llu not\n",
			__atomic_load_n(&calls, __ATOMIC_RELAXED),
			__atomic_load_n(&wall, __ATOMIC_RELAXED),
			__atomic_load_n(&cpu, __ATOMIC_RELAXED),
			__atomic_load_n(&failed, __ATOMIC_RELAXED));
}

static struct magnet_acct *arm(void)
{
	struct magnet_acct *a = magnet_acct_self();

	if (!a || magnet_acct_next(a, 1, 0, mask, 0)) {
		__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return a;
}

static void take(struct magnet_acct *a)
{
	struct magnet_acct_result r;

	if (!a || magnet_acct_read(a, 0, &r))
		return;
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&wall, r.wall_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cpu, r.cpu_ns, __ATOMIC_RELAXED);
}

static bool sock(int fd)
{
	return fd >= 0 && fd < FDS && is_sock[fd];
}

static void mark(int fd, unsigned char on)
{
	if (fd >= 0 && fd < FDS)
		is_sock[fd] = on;
}

#define REAL(name) \
	static __typeof__(name) *real; \
	if (!real) \
		real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* The call, accounted: ret = real(args...) between arm() and take(). */
#define ACCOUNTED(call) ({ \
	struct magnet_acct *a_ = arm(); \
	__typeof__(call) r_ = (call); \
	take(a_); \
	r_; })

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	int r;

	REAL(accept);
	r = ACCOUNTED(real(fd, addr, len));
	mark(r, 1);
	return r;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int r;

	REAL(accept4);
	r = ACCOUNTED(real(fd, addr, len, flags));
	mark(r, 1);
	return r;
}

int socket(int domain, int type, int protocol)
{
	int r;

	REAL(socket);
	r = real(domain, type, protocol);
	mark(r, 1);
	return r;
}

int close(int fd)
{
	REAL(close);
	mark(fd, 0);
	return real(fd);
}

ssize_t read(int fd, void *buf, size_t len)
{
	REAL(read);
	return sock(fd) ? ACCOUNTED(real(fd, buf, len)) : real(fd, buf, len);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	REAL(recv);
	return ACCOUNTED(real(fd, buf, len, flags));
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags,
		 struct sockaddr *addr, socklen_t *alen)
{
	REAL(recvfrom);
	return ACCOUNTED(real(fd, buf, len, flags, addr, alen));
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	REAL(recvmsg);
	return ACCOUNTED(real(fd, msg, flags));
}

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(write);
	return sock(fd) ? ACCOUNTED(real(fd, buf, len)) : real(fd, buf, len);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	REAL(writev);
	return sock(fd) ? ACCOUNTED(real(fd, iov, n)) : real(fd, iov, n);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	REAL(send);
	return ACCOUNTED(real(fd, buf, len, flags));
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *addr, socklen_t alen)
{
	REAL(sendto);
	return ACCOUNTED(real(fd, buf, len, flags, addr, alen));
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	REAL(sendmsg);
	return ACCOUNTED(real(fd, msg, flags));
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	REAL(sendfile);
	return sock(out) ? ACCOUNTED(real(out, in, off, count)) :
			   real(out, in, off, count);
}

ssize_t sendfile64(int out, int in, off64_t *off, size_t count)
{
	REAL(sendfile64);
	return sock(out) ? ACCOUNTED(real(out, in, off, count)) :
			   real(out, in, off, count);
}

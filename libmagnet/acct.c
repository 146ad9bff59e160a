// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmagnet: per-call accounting (libmagnet.h; the kernel's side is
 * MAGNET_ACCT_DEVICE in <linux/magnet.h>).
 *
 * A handle maps the thread's control page (read-write) and its results
 * (read-only). Arming stores one word; whether the caller may is decided
 * without a system call: the handle must be the calling thread's
 * (acct_self, thread-local) and of this process (acct_forks, which the
 * fork handler moves on in the child, whose copy of the mappings the
 * kernel leaves out).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libmagnet.h"

struct magnet_acct {
	int fd;
	unsigned long forks;		/* acct_forks at open */
	bool self;			/* magnet_acct_self()'s */
	uint16_t gen;			/* of the last arm */
	volatile struct magnet_acct_ctl *ctl;
	const volatile struct magnet_acct_area *area;
};

static __thread struct magnet_acct *acct_self;
static unsigned long acct_forks;
static pthread_once_t acct_once = PTHREAD_ONCE_INIT;
static pthread_key_t acct_key;

static void acct_forked(void)
{
	__atomic_add_fetch(&acct_forks, 1, __ATOMIC_RELAXED);
	acct_self = NULL;
}

static void acct_thread_exit(void *arg)
{
	struct magnet_acct *a = arg;

	a->self = false;
	magnet_acct_close(a);
}

static void acct_setup(void)
{
	pthread_atfork(NULL, NULL, acct_forked);
	pthread_key_create(&acct_key, acct_thread_exit);
}

static bool acct_here(const struct magnet_acct *a)
{
	return __atomic_load_n(&acct_forks, __ATOMIC_RELAXED) == a->forks;
}

struct magnet_acct *magnet_acct_open(void)
{
	struct magnet_acct *a;
	void *ctl, *area;
	int err;

	pthread_once(&acct_once, acct_setup);
	if (acct_self) {
		errno = EBUSY;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->fd = open(MAGNET_ACCT_DEVICE, O_RDWR | O_CLOEXEC);
	if (a->fd < 0)
		goto fail;
	ctl = mmap(NULL, MAGNET_ACCT_CTL_SIZE, PROT_READ | PROT_WRITE,
		   MAP_SHARED, a->fd, 0);
	if (ctl == MAP_FAILED)
		goto fail_fd;
	area = mmap(NULL, MAGNET_ACCT_AREA_SIZE, PROT_READ, MAP_SHARED, a->fd,
		    MAGNET_ACCT_CTL_SIZE);
	if (area == MAP_FAILED) {
		err = errno;
		munmap(ctl, MAGNET_ACCT_CTL_SIZE);
		errno = err;
		goto fail_fd;
	}
	a->ctl = ctl;
	a->area = area;
	if (a->area->version != MAGNET_FORMAT_VERSION ||
	    a->area->result_size != sizeof(struct magnet_acct_result)) {
		magnet_acct_close(a);
		errno = EPROTO;
		return NULL;
	}
	a->forks = __atomic_load_n(&acct_forks, __ATOMIC_RELAXED);
	acct_self = a;
	return a;

fail_fd:
	err = errno;
	close(a->fd);
	errno = err;
fail:
	err = errno;
	free(a);
	errno = err;
	return NULL;
}

struct magnet_acct *magnet_acct_self(void)
{
	struct magnet_acct *a = acct_self;

	if (a)
		return a;
	a = magnet_acct_open();
	if (!a)
		return NULL;
	a->self = true;
	if (pthread_setspecific(acct_key, a)) {
		a->self = false;
		magnet_acct_close(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

void magnet_acct_close(struct magnet_acct *a)
{
	int err = errno;

	if (!a || a->self)
		return;
	if (acct_self == a)
		acct_self = NULL;
	/* (after fork() the child has no such mappings: munmap() is harmless) */
	munmap((void *)a->ctl, MAGNET_ACCT_CTL_SIZE);
	munmap((void *)a->area, MAGNET_ACCT_AREA_SIZE);
	close(a->fd);
	free(a);
	errno = err;
}

static int acct_arm(struct magnet_acct *a, unsigned int count,
		    unsigned int token, unsigned int subsys,
		    unsigned int flags)
{
	if (!a || token >= MAGNET_ACCT_TOKENS ||
	    (subsys & ~MAGNET_ACCT_SUBSYS_ALL) || (flags & ~MAGNET_ACCT_FLAGS)) {
		errno = EINVAL;
		return -1;
	}
	if (a != acct_self || !acct_here(a)) {
		errno = EPERM;
		return -1;
	}
	a->gen++;
	/* one store: the kernel reads it at the next call's entry */
	__atomic_store_n(&a->ctl->arm,
			 MAGNET_ACCT_WORD(count, token, flags, subsys, a->gen),
			 __ATOMIC_RELAXED);
	return 0;
}

int magnet_acct_next(struct magnet_acct *a, unsigned int calls,
		     unsigned int token, unsigned int subsys,
		     unsigned int flags)
{
	if (!calls || calls > MAGNET_ACCT_COUNT_MAX) {
		errno = EINVAL;
		return -1;
	}
	return acct_arm(a, calls, token, subsys, flags);
}

int magnet_acct_start(struct magnet_acct *a, unsigned int token,
		      unsigned int subsys, unsigned int flags)
{
	return acct_arm(a, MAGNET_ACCT_UNTIL_STOP, token, subsys, flags);
}

int magnet_acct_stop(struct magnet_acct *a)
{
	if (!a) {
		errno = EINVAL;
		return -1;
	}
	if (a != acct_self || !acct_here(a)) {
		errno = EPERM;
		return -1;
	}
	__atomic_store_n(&a->ctl->arm, 0, __ATOMIC_RELAXED);
	return 0;
}

int magnet_acct_read(const struct magnet_acct *a, unsigned int token,
		     struct magnet_acct_result *r)
{
	const volatile struct magnet_acct_result *s;
	uint32_t seq;

	if (!a || !r || token >= MAGNET_ACCT_TOKENS) {
		errno = EINVAL;
		return -1;
	}
	if (!acct_here(a)) {
		errno = EPERM;
		return -1;
	}
	if (a->area->error) {
		errno = EPROTO;
		return -1;
	}
	s = &a->area->slot[token];
	for (;;) {
		/* pairs with the kernel's smp_wmb()s in publish() */
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			continue;
		memcpy(r, (const void *)s, sizeof(*r));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq)
			return 0;
	}
}

static int64_t ns_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Each poll() is bounded (ACCT_WAIT_SLICE_MS): a part that came in
 * without waking this file (the kernel wakes a bounded number of handles
 * per event) is found at the next look.
 */
#define ACCT_WAIT_SLICE_MS	100

int magnet_acct_wait(const struct magnet_acct *a, unsigned int token,
		     struct magnet_acct_result *r, int timeout_ms)
{
	/* (in ns: a deadline in whole ms came up to 1 ms early) */
	int64_t end = timeout_ms >= 0 ? ns_now() + timeout_ms * 1000000LL : 0;
	struct pollfd pfd;

	if (!a) {
		errno = EINVAL;
		return -1;
	}
	pfd.fd = a->fd;
	pfd.events = POLLIN;
	for (;;) {
		int64_t left = ACCT_WAIT_SLICE_MS;

		if (magnet_acct_read(a, token, r))
			return -1;
		if (!r->async_pending)
			return 0;
		if (timeout_ms >= 0) {
			left = end - ns_now();
			if (left <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			/* (rounded up: poll() waits whole ms) */
			left = (left + 999999) / 1000000;
			if (left > ACCT_WAIT_SLICE_MS)
				left = ACCT_WAIT_SLICE_MS;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno == EINTR)
			return -1;
	}
}

int magnet_acct_fd(const struct magnet_acct *a)
{
	if (!a) {
		errno = EINVAL;
		return -1;
	}
	return a->fd;
}

uint64_t magnet_acct_refused(const struct magnet_acct *a)
{
	return a && acct_here(a) ? a->area->refused : 0;
}

static const char *const subsys_names[] = { MAGNET_ACCT_SUBSYS_NAMES };
_Static_assert(sizeof(subsys_names) / sizeof(subsys_names[0]) ==
	       __MAGNET_ACCT_SUBSYS_MAX, "a name for each subsystem");

static const char *const block_names[] = {
	[MAGNET_ACCT_BLOCK_IO] = "io",
	[MAGNET_ACCT_BLOCK_LOCK] = "lock",
	[MAGNET_ACCT_BLOCK_WAIT] = "wait",
};

const char *magnet_acct_subsys_name(unsigned int subsys)
{
	return subsys < __MAGNET_ACCT_SUBSYS_MAX ? subsys_names[subsys] : NULL;
}

const char *magnet_acct_block_name(unsigned int how)
{
	return how < __MAGNET_ACCT_BLOCK_MAX ? block_names[how] : NULL;
}

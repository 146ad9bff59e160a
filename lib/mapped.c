// SPDX-License-Identifier: GPL-2.0
/*
 * A data file read through its mapping (see mapped.h and the mapping's
 * rules in <linux/magnet.h>).
 *
 * Written here rather than taken from a library: the ring layout is
 * magnet's own. What the kernel's other mapped rings' libraries (libbpf's
 * ring_buffer, perf's) do is what this does, for magnet's layout: read the
 * writers' position with acquire semantics, hand the records out in
 * place, give them back once used. The kernel checks every position it is
 * given back, so a mistake here cannot corrupt a ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include <linux/magnet.h>

#include "mapped.h"

/*
 * Runs in a row from one ring cut short (at its end, at a loss record)
 * before the others get their turn: a sweep finishes each ring's records
 * as they were when it got to it, unless writers outrun the reader.
 */
#define STAY_MAX 8

struct loss_record {
	struct magnet_record hdr;
	struct magnet_loss loss;
};

struct mapped {
	int fd;
	struct magnet_map_info mi;
	char *base;
	unsigned int next_slot;		/* where the next look starts */
	unsigned int looked;		/* rings looked at, this sweep */
	bool more;			/* the last run stopped short */
	unsigned int stay;		/* runs in a row from one ring */
	bool pending;			/* a run is out: give it back */
	unsigned int pend_slot;
	uint64_t pend_end;
	bool have_loss;			/* @loss is to be handed out */
	struct loss_record loss;
	bool timed;			/* keep @done (mapped_horizon()) */
	uint64_t *done;			/* per ring: handed out up to then */
};

static struct magnet_ring_pub *pub(struct mapped *m, unsigned int slot)
{
	return (void *)(m->base + slot * m->mi.slot_size);
}

static const char *ring(struct mapped *m, unsigned int slot)
{
	return m->base + slot * m->mi.slot_size + m->mi.pub_size;
}

struct mapped *mapped_open(int fd)
{
	struct mapped *m = calloc(1, sizeof(*m));
	int err;

	if (!m)
		return NULL;
	m->fd = fd;
	if (ioctl(fd, MAGNET_IOC_MAP_INFO, &m->mi))
		goto fail;
	m->done = calloc(m->mi.slots, sizeof(*m->done));
	if (!m->done)
		goto fail;
	/*
	 * Every page mapped now (as a packet socket's ring is), not at the
	 * first touch of each while records flow.
	 */
	m->base = mmap(NULL, m->mi.map_size, PROT_READ,
		       MAP_SHARED | MAP_POPULATE, fd, 0);
	if (m->base == MAP_FAILED)
		goto fail;
	return m;
fail:
	err = errno;
	free(m->done);
	free(m);
	errno = err;
	return NULL;
}

/* Give back a ring's records up to @pos; a loss the kernel reports is kept. */
static int give_back(struct mapped *m, unsigned int slot, uint64_t pos)
{
	struct magnet_consume c = { .slot = slot, .pos = pos };

	if (ioctl(m->fd, MAGNET_IOC_CONSUME, &c))
		return -1;
	if (c.lost) {
		memset(&m->loss, 0, sizeof(m->loss));
		m->loss.hdr.size = sizeof(m->loss);
		m->loss.hdr.event = MAGNET_EVENT_LOSS;
		m->loss.hdr.flags = MAGNET_RF_SYNTHETIC;
		m->loss.hdr.cpu = pub(m, slot)->cpu;
		m->loss.hdr.timestamp = c.timestamp;
		m->loss.loss.lost = c.lost;
		m->loss.loss.total = c.lost_total;
		m->have_loss = true;
	}
	return 0;
}

int mapped_consume(struct mapped *m)
{
	if (!m->pending)
		return 0;
	m->pending = false;
	return give_back(m, m->pend_slot, m->pend_end);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Ring @slot has been handed out up to records stamped @ts. */
static void done_to(struct mapped *m, unsigned int slot, uint64_t ts)
{
	if (ts > m->done[slot])
		m->done[slot] = ts;
}

static ssize_t hand_out(struct mapped *m, unsigned int slot, uint64_t end,
			const void *data, uint64_t len, const char **out)
{
	m->pending = true;
	m->pend_slot = slot;
	m->pend_end = end;
	*out = data;
	return len;
}

/*
 * The records of @slot from its tail: padding and loss records already
 * reported are skipped, a loss record goes out alone (with its @lost),
 * other records in one run up to the writers' position or the ring's end.
 */
static ssize_t ring_run(struct mapped *m, unsigned int slot, const char **out)
{
	struct magnet_ring_pub *p = pub(m, slot);
	/* Taken before the writers' position: records stamped before it
	 * are at or below that position, or not yet committed there. */
	uint64_t now = m->timed ? monotonic_ns() : 0;
	uint64_t tail = __atomic_load_n(&p->tail, __ATOMIC_RELAXED);
	/* Pairs with smp_store_release() in the kernel's ring_publish(). */
	uint64_t commit = __atomic_load_n(&p->commit, __ATOMIC_ACQUIRE);
	uint64_t mask = m->mi.ring_size - 1, pos = tail, start, len;
	uint64_t last_ts = 0;
	const char *r = ring(m, slot);
	const struct magnet_record *rec;

	for (; pos < commit; pos += len) {
		rec = (const void *)(r + (pos & mask));
		len = MAGNET_RECORD_LEN(rec->size);
		if (len < sizeof(uint64_t) || (pos & mask) + len > m->mi.ring_size) {
			errno = EIO;
			return -1;
		}
		if (rec->event == MAGNET_EVENT_PAD)
			continue;
		if (rec->event == MAGNET_EVENT_LOSS) {
			const struct magnet_loss *l = (const void *)rec->payload;
			uint64_t seen = __atomic_load_n(&p->lost_seen,
							__ATOMIC_RELAXED);

			if (l->total <= seen)
				continue;	/* reported: read() skips it too */
			memcpy(&m->loss, rec, sizeof(m->loss));
			m->loss.loss.lost = l->total - seen;
			m->more = pos + len < commit;
			done_to(m, slot, m->more ? rec->timestamp : now);
			return hand_out(m, slot, pos + len, &m->loss,
					sizeof(m->loss), out);
		}
		break;
	}
	if (pos == commit) {
		/* Only padding or old losses: give them back now. */
		if (pos != tail && give_back(m, slot, pos))
			return -1;
		done_to(m, slot, now);
		return 0;
	}
	start = pos;
	for (; pos < commit; pos += len) {
		rec = (const void *)(r + (pos & mask));
		len = MAGNET_RECORD_LEN(rec->size);
		if (rec->event == MAGNET_EVENT_PAD || rec->event == MAGNET_EVENT_LOSS ||
		    (pos != start && !(pos & mask)))
			break;
		if (len < sizeof(*rec) || (pos & mask) + len > m->mi.ring_size) {
			errno = EIO;
			return -1;
		}
		last_ts = rec->timestamp;
	}
	m->more = pos < commit;	/* cut at the ring's end or a loss */
	done_to(m, slot, m->more ? last_ts : now);
	return hand_out(m, slot, pos, r + (start & mask), pos - start, out);
}

ssize_t mapped_next(struct mapped *m, const char **data, bool readable)
{
	unsigned int i, slot;
	ssize_t n;

	if (mapped_consume(m))
		return -1;
	for (i = 0; !m->have_loss && i < m->mi.slots; i++) {
		slot = (m->next_slot + i) % m->mi.slots;
		n = ring_run(m, slot, data);
		if (n > 0 && m->more && m->stay < STAY_MAX) {
			/* The rest of this ring's records next. */
			m->stay++;
			m->next_slot = slot;
			return n;
		}
		m->stay = 0;
		m->looked++;
		if (n) {
			m->next_slot = (slot + 1) % m->mi.slots;
			return n;
		}
	}
	/* Losses after the last record of a ring, found only by asking. */
	for (i = 0; readable && !m->have_loss && i < m->mi.slots; i++) {
		struct magnet_ring_pub *p = pub(m, i);

		if (give_back(m, i, __atomic_load_n(&p->tail, __ATOMIC_RELAXED)))
			return -1;
	}
	if (m->have_loss) {
		m->have_loss = false;
		*data = (const char *)&m->loss;
		return sizeof(m->loss);
	}
	return 0;
}

uint64_t mapped_horizon(struct mapped *m)
{
	uint64_t h = UINT64_MAX;
	unsigned int i;

	m->timed = true;
	for (i = 0; i < m->mi.slots; i++)
		if (m->done[i] < h)
			h = m->done[i];
	return h;
}

bool mapped_swept(struct mapped *m)
{
	if (m->looked < m->mi.slots)
		return false;
	m->looked = 0;
	return true;
}

void mapped_close(struct mapped *m)
{
	if (!m)
		return;
	mapped_consume(m);
	munmap(m->base, m->mi.map_size);
	free(m->done);
	free(m);
}

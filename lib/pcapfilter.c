// SPDX-License-Identifier: GPL-2.0
/*
 * pcap-filter(7) expressions through libpcap (see pcapfilter.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapfilter.h"

bool pcapfilter_blank(const char *s)
{
	for (; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

/*
 * protochain's loop, unrolled.
 *
 * libpcap compiles "protochain" into a loop: a jump backwards (a BPF_JA
 * whose k, taken as signed, is negative) over the code that steps from one
 * IPv6 or IPv4 header to the next. Its own interpreter then runs for as
 * long as the headers lead it, which on headers that lead back to
 * themselves is forever (an AH header whose length brings the offset back
 * to where it was: libpcap's code sets the offset from the AH header's
 * length instead of adding it); and the kernel refuses a jump backwards.
 * So the program is rewritten here, once, before either runs it: the
 * region from the first instruction a backward jump reaches to the last
 * backward jump is laid out PCAPFILTER_TRIPS times; a jump backwards goes
 * forwards to the next copy instead, and from the last copy to "ret #0".
 * A chain of more than PCAPFILTER_TRIPS headers then does not match,
 * where libpcap's would go on; a chain no longer than that gets
 * libpcap's answer. Conditional jumps have 8-bit offsets, so one that
 * the copies put out of reach jumps to a BPF_JA next to it ("relaxed").
 * No library does this: libpcap's own answer is its configure option
 * --disable-protochain.
 */
#define INSNS_MAX	4096	/* the kernel's BPF_MAXINSNS */

struct unode {
	struct bpf_insn in;
	int jt, jf;		/* node ids (a BPF_JA's in jt), or -1 */
};

static bool is_jump(uint16_t code)
{
	return BPF_CLASS(code) == BPF_JMP;
}

static bool is_ja(uint16_t code)
{
	return code == (BPF_JMP | BPF_JA);
}

static bool is_back(const struct bpf_insn *in)
{
	return is_ja(in->code) && (int32_t)in->k < 0;
}

struct layout {
	unsigned int n, lo, hi, width;	/* region [lo, hi], a copy's width */
	bool fall;			/* a copy ends in a jump to hi + 1 */
};

/* Node ids, in their first order: prefix, the copies, suffix, ret #0. */
static int id_copy(const struct layout *l, unsigned int c, unsigned int i)
{
	return l->lo + c * l->width + (i - l->lo);
}

static int id_after(const struct layout *l, unsigned int i)
{
	return l->lo + PCAPFILTER_TRIPS * l->width + (i - l->hi - 1);
}

static int id_ret0(const struct layout *l)
{
	return id_after(l, l->n);
}

/* Where a jump of old instruction @i in copy @c (-1: before the region) to @t lands. */
static int target(const struct layout *l, int c, unsigned int i, unsigned int t)
{
	if (t < l->lo)
		return t;
	if (t > l->hi)
		return id_after(l, t);
	if (t <= i)	/* backwards: the next trip */
		return c + 1 < PCAPFILTER_TRIPS ? id_copy(l, c + 1, t) : id_ret0(l);
	return id_copy(l, c < 0 ? 0 : c, t);
}

static void place(struct unode *nodes, int id, const struct bpf_insn *in,
		  const struct layout *l, int c, unsigned int i)
{
	struct unode *u = &nodes[id];

	u->in = *in;
	u->jt = u->jf = -1;
	if (is_ja(in->code)) {
		u->jt = target(l, c, i, i + 1 + (int32_t)in->k);
	} else if (is_jump(in->code)) {
		u->jt = target(l, c, i, i + 1 + in->jt);
		u->jf = target(l, c, i, i + 1 + in->jf);
	}
}

static int unroll(struct bpf_program *prog, char *err, size_t errlen)
{
	const struct bpf_insn *f = prog->bf_insns;
	struct layout l = { .n = prog->bf_len, .lo = prog->bf_len };
	unsigned int i, c, nn, cap, norder;
	struct unode *nodes = NULL;
	int *order = NULL, *pos = NULL, *next = NULL, ret = -1;
	struct bpf_insn *out = NULL;
	bool changed;

	for (i = 0; i < l.n; i++) {
		int64_t t = (int64_t)i + 1 + (int32_t)f[i].k;

		if (!is_back(&f[i]))
			continue;
		if (t < 0) {
			snprintf(err, errlen, "instruction %u jumps before the program", i);
			return -1;
		}
		if (t < l.lo)
			l.lo = t;
		l.hi = i;
	}
	if (l.lo == l.n)
		return 0;	/* no loop */
	l.fall = BPF_CLASS(f[l.hi].code) != BPF_JMP &&
		 BPF_CLASS(f[l.hi].code) != BPF_RET;
	l.width = l.hi - l.lo + 1 + l.fall;
	nn = id_ret0(&l) + 1;
	/* room for two trampolines per conditional jump */
	cap = 3 * nn;
	nodes = calloc(cap, sizeof(*nodes));
	order = calloc(cap, sizeof(*order));
	next = calloc(cap, sizeof(*next));
	pos = calloc(cap, sizeof(*pos));
	if (!nodes || !order || !next || !pos) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < l.lo; i++)
		place(nodes, i, &f[i], &l, -1, i);
	for (c = 0; c < PCAPFILTER_TRIPS; c++) {
		for (i = l.lo; i <= l.hi; i++)
			place(nodes, id_copy(&l, c, i), &f[i], &l, c, i);
		if (l.fall)
			place(nodes, id_copy(&l, c, l.hi + 1),
			      &(struct bpf_insn)BPF_STMT(BPF_JMP | BPF_JA, 0),
			      &l, c, l.hi);	/* to hi + 1, past the region */
	}
	for (i = l.hi + 1; i < l.n; i++)
		place(nodes, id_after(&l, i), &f[i], &l, PCAPFILTER_TRIPS, i);
	place(nodes, id_ret0(&l), &(struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, 0),
	      &l, PCAPFILTER_TRIPS, l.n);
	for (i = 0; i < nn; i++)
		order[i] = i;
	norder = nn;

	/* relax: a conditional jump out of reach goes through a BPF_JA */
	do {
		unsigned int m = 0;

		changed = false;
		for (i = 0; i < norder; i++)
			pos[order[i]] = i;
		for (i = 0; i < norder; i++) {
			struct unode *u = &nodes[order[i]];
			int *far[2] = { &u->jt, &u->jf };

			next[m++] = order[i];
			if (!is_jump(u->in.code) || is_ja(u->in.code))
				continue;
			for (c = 0; c < 2; c++) {
				if (pos[*far[c]] - (int)i - 1 <= 255)
					continue;
				if (nn == cap) {
					snprintf(err, errlen, "protochain: too many jumps to unroll");
					goto out;
				}
				nodes[nn].in = (struct bpf_insn)BPF_STMT(BPF_JMP | BPF_JA, 0);
				nodes[nn].jt = *far[c];
				nodes[nn].jf = -1;
				*far[c] = nn;
				next[m++] = nn++;
				changed = true;
			}
		}
		memcpy(order, next, m * sizeof(*order));
		norder = m;
	} while (changed);

	if (norder > INSNS_MAX) {
		snprintf(err, errlen,
			 "protochain: unrolled %d times, the program would have %u instructions, more than BPF's %d",
			 PCAPFILTER_TRIPS, norder, INSNS_MAX);
		goto out;
	}
	out = malloc(norder * sizeof(*out));
	if (!out) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < norder; i++)
		pos[order[i]] = i;
	for (i = 0; i < norder; i++) {
		const struct unode *u = &nodes[order[i]];

		out[i] = u->in;
		if (is_ja(u->in.code)) {
			out[i].k = pos[u->jt] - i - 1;
		} else if (is_jump(u->in.code)) {
			out[i].jt = pos[u->jt] - i - 1;
			out[i].jf = pos[u->jf] - i - 1;
		}
	}
	free(prog->bf_insns);	/* pcap_freecode()'s free() */
	prog->bf_insns = out;
	prog->bf_len = norder;
	ret = 0;
out:
	free(nodes);
	free(order);
	free(next);
	free(pos);
	return ret;
}

int pcapfilter_compile(const char *text, struct bpf_program *prog, char *err,
		       size_t errlen)
{
	pcap_t *p = pcap_open_dead(DLT_LINUX_SLL2, PCAPFILTER_SNAPLEN);

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (pcap_compile(p, prog, pcapfilter_blank(text) ? "" : text, 1,
			 PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "%s", pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_close(p);
	if (unroll(prog, err, errlen)) {
		pcap_freecode(prog);
		return -1;
	}
	return 0;
}

bool pcapfilter_reads_device(const struct bpf_program *prog)
{
	for (unsigned int i = 0; i < prog->bf_len; i++) {
		const struct bpf_insn *in = &prog->bf_insns[i];
		unsigned int size;

		switch (BPF_CLASS(in->code)) {
		case BPF_LD:
		case BPF_LDX:
			break;
		default:
			continue;
		}
		/*
		 * An indirect load adds X, an offset into the packet (its IP
		 * header's length): libpcap's own k is past the cooked
		 * header then.
		 */
		if (BPF_MODE(in->code) != BPF_ABS &&
		    BPF_MODE(in->code) != BPF_MSH &&
		    BPF_MODE(in->code) != BPF_IND)
			continue;
		size = BPF_SIZE(in->code) == BPF_W ? 4 :
		       BPF_SIZE(in->code) == BPF_H ? 2 : 1;
		/* bytes 0 and 1 are the protocol */
		if (in->k < PCAPFILTER_SLL2_LEN && in->k + size > 2)
			return true;
	}
	return false;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Programs run over a send call's header template (struct
 * magnet_pkt_template): pcap_vm_native_ok() says whether the kernel's BPF
 * may run one on built headers; pcap_vm_specialize() writes it again for
 * one shape of a send call's headers, into the few steps that
 * pcap_vm_run_sent() runs on the call's record.
 */
#include <linux/string.h>

#include "pcap_vm.h"

/*
 * At a send call there is no packet yet: the probe builds the headers
 * from the socket and the call (the core's view_build()), and some of
 * their bits it does not know. pcap_vm runs such hits, since it tracks
 * those bits. pcap_vm_native_ok() finds, once per program, the programs
 * whose answer can never depend on them: it runs the program over a
 * template of the headers (struct magnet_pkt_template: the bits the same
 * in every hit, the bits known in every hit, the rest), following both
 * ways of every branch it cannot decide from the bits that are always the
 * same. If no path reads a byte past the headers, tests an unknown bit,
 * or loads at an offset that is not the same in every hit, then the
 * kernel's BPF, run on the headers with their unknown bits zero, answers
 * what pcap_vm would, and the caller may run it there.
 */

/*
 * A value as the template says it: @val in the @konst bits, the same in
 * every hit; known in the @known bits (a superset); the rest unknown.
 */
struct aval {
	u32 val, konst, known;
};

struct pcap_astate {
	bool reached;
	int step;		/* pcap_vm_specialize()'s */
	/* sdead()'s, of the step of this number */
	bool dead;
	u8 live;
	u16 fwd, num;
	struct aval a, x, m[MEM_WORDS];
};

size_t pcap_vm_astate_size(void)
{
	return sizeof(struct pcap_astate);
}

static struct aval akonst(u32 v)
{
	return (struct aval){ .val = v, .konst = ~0U, .known = ~0U };
}

static bool afull(const struct aval *v)
{
	return v->known == ~0U;
}

static bool akonst_all(const struct aval *v)
{
	return v->konst == ~0U;
}

static void amerge(struct aval *d, const struct aval *s)
{
	d->known &= s->known;
	d->konst &= s->konst & ~(d->val ^ s->val);
	d->val &= d->konst;
}

static void astate_merge(struct pcap_astate *d, const struct pcap_astate *s)
{
	unsigned int i;

	if (!d->reached) {
		*d = *s;
		return;
	}
	amerge(&d->a, &s->a);
	amerge(&d->x, &s->x);
	for (i = 0; i < MEM_WORDS; i++)
		amerge(&d->m[i], &s->m[i]);
}

/* @size bytes at @k of the cooked header and headers; false: past them. */
static bool aload(const struct magnet_pkt_template *t, u64 k, u32 size,
		  struct aval *v)
{
	u32 i;

	if (k + size > (u64)SLL2_LEN + t->nbuilt)
		return false;
	*v = (struct aval){};
	for (i = 0; i < size; i++) {
		u32 at = k + i, val, konst, known;

		if (at < 2) {		/* the protocol, a constant */
			val = at ? t->protocol & 0xff : t->protocol >> 8;
			konst = 0xff;
			known = 0xff;
		} else if (at < SLL2_LEN) {	/* not the kernel BPF's */
			val = 0;
			konst = 0;
			known = 0;
		} else {
			val = t->val[at - SLL2_LEN];
			konst = t->konst[at - SLL2_LEN];
			known = t->known[at - SLL2_LEN];
		}
		v->val = v->val << 8 | (val & konst);
		v->konst = v->konst << 8 | konst;
		v->known = v->known << 8 | known;
	}
	if (size < 4) {		/* the bits above a byte or half word: zero */
		v->konst |= ~0U << (8 * size);
		v->known |= ~0U << (8 * size);
	}
	return true;
}

/* A = A op B; false where the answer might not be the kernel BPF's. */
static bool aalu(u16 op, struct aval *a, const struct aval *b)
{
	u32 s;

	if (akonst_all(a) && (op == BPF_NEG || akonst_all(b))) {
		u32 r = a->val;

		switch (op) {
		case BPF_ADD:
			r += b->val;
			break;
		case BPF_SUB:
			r -= b->val;
			break;
		case BPF_MUL:
			r *= b->val;
			break;
		case BPF_DIV:
		case BPF_MOD:
			if (!b->val)
				return false;
			r = op == BPF_DIV ? r / b->val : r % b->val;
			break;
		case BPF_AND:
			r &= b->val;
			break;
		case BPF_OR:
			r |= b->val;
			break;
		case BPF_XOR:
			r ^= b->val;
			break;
		case BPF_LSH:
		case BPF_RSH:
			if (b->val >= 32)
				return false;
			r = op == BPF_LSH ? r << b->val : r >> b->val;
			break;
		case BPF_NEG:
			r = -r;
			break;
		}
		*a = akonst(r);
		return true;
	}
	if (akonst_all(b)) {
		switch (op) {
		case BPF_AND:	/* the bits it clears are zero, always */
			a->val &= b->val;
			a->konst |= ~b->val;
			a->known |= ~b->val;
			return true;
		case BPF_OR:
			a->val |= b->val;
			a->konst |= b->val;
			a->known |= b->val;
			return true;
		case BPF_XOR:
			a->val = (a->val ^ b->val) & a->konst;
			return true;
		case BPF_LSH:
		case BPF_RSH:
			s = b->val;
			if (s >= 32)
				return false;
			if (op == BPF_LSH) {
				a->val <<= s;
				a->konst = a->konst << s | (BIT(s) - 1);
				a->known = a->known << s | (BIT(s) - 1);
			} else {
				a->val >>= s;
				a->konst = a->konst >> s | ~(~0U >> s);
				a->known = a->known >> s | ~(~0U >> s);
			}
			return true;
		case BPF_DIV:
		case BPF_MOD:
			if (!b->val)
				return false;
			break;
		}
	} else if (op == BPF_DIV || op == BPF_MOD || op == BPF_LSH ||
		   op == BPF_RSH) {
		return false;	/* by zero, or by 32 or more: not the same */
	}
	/* known from known operands, the same only where computed above */
	a->known = afull(a) && (op == BPF_NEG || afull(b)) ? ~0U : 0;
	a->konst = 0;
	a->val = 0;
	return true;
}

/*
 * The ways a conditional jump at @i can go, into @next (up to two);
 * false where it tests a bit that is not known.
 */
static bool ajump(const struct sock_filter *p, unsigned int i,
		  const struct aval *a, const struct aval *b,
		  unsigned int *next, unsigned int *n)
{
	unsigned int t = i + 1 + p->jt, f = i + 1 + p->jf;
	int out = -1;

	if (BPF_OP(p->code) == BPF_JSET && akonst_all(b)) {
		if (b->val & ~a->known)
			return false;
		if (a->val & a->konst & b->val)
			out = 1;
		else if (!(b->val & ~a->konst))
			out = 0;
	} else {
		if (!afull(a) || !afull(b))
			return false;
		if (akonst_all(a) && akonst_all(b)) {
			switch (BPF_OP(p->code)) {
			case BPF_JEQ:
				out = a->val == b->val;
				break;
			case BPF_JGT:
				out = a->val > b->val;
				break;
			case BPF_JGE:
				out = a->val >= b->val;
				break;
			default:
				out = !!(a->val & b->val);
				break;
			}
		}
	}
	*n = 0;
	if (out != 0)
		next[(*n)++] = t;
	/* both ways to one place: one successor, whichever way it goes */
	if (out != 1 && !(*n && f == t))
		next[(*n)++] = f;
	return true;
}

/**
 * pcap_vm_native_ok - may the kernel's BPF run a program on built headers?
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 * @t:		the headers a send call builds, as one shape of them is
 *		in every hit (the core's magnet_packet_template())
 * @st:		room for @len states, any contents
 *
 * See above. Any context (the caller's memory only).
 * Return: true if, on every hit of that shape, the program reads only
 * known bits of the headers, at offsets that do not change.
 */
bool pcap_vm_native_ok(const struct sock_filter *f, unsigned int len,
		       const struct magnet_pkt_template *t,
		       struct pcap_astate *st)
{
	unsigned int i, j, n, next[2];

	for (i = 0; i < len; i++)
		st[i].reached = false;
	/* A, X and the scratch memory start at zero */
	memset(&st[0], 0, sizeof(st[0]));
	st[0].a = akonst(0);
	st[0].x = akonst(0);
	for (j = 0; j < MEM_WORDS; j++)
		st[0].m[j] = akonst(0);
	st[0].reached = true;

	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		u32 size = bpf_size_to_bytes(BPF_SIZE(p->code));
		struct pcap_astate s;
		struct aval b;

		if (!st[i].reached)
			continue;
		s = st[i];
		n = 1;
		next[0] = i + 1;
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			switch (BPF_MODE(p->code)) {
			case BPF_ABS:
				if (!aload(t, p->k, size, &s.a))
					return false;
				break;
			case BPF_IND:
				if (!akonst_all(&s.x) ||
				    !aload(t, (u64)s.x.val + p->k, size, &s.a))
					return false;
				break;
			case BPF_IMM:
				s.a = akonst(p->k);
				break;
			case BPF_MEM:
				s.a = s.m[p->k];
				break;
			default:	/* LEN: tcpdump's, not the kernel BPF's */
				return false;
			}
			break;
		case BPF_LDX:
			switch (BPF_MODE(p->code)) {
			case BPF_MSH:
				if (!aload(t, p->k, 1, &b) || (b.konst & 0xf) != 0xf)
					return false;
				s.x = akonst(4 * (b.val & 0xf));
				break;
			case BPF_IMM:
				s.x = akonst(p->k);
				break;
			case BPF_MEM:
				s.x = s.m[p->k];
				break;
			default:
				return false;
			}
			break;
		case BPF_ST:
			s.m[p->k] = s.a;
			break;
		case BPF_STX:
			s.m[p->k] = s.x;
			break;
		case BPF_ALU:
			b = BPF_SRC(p->code) == BPF_X ? s.x : akonst(p->k);
			if (!aalu(BPF_OP(p->code), &s.a, &b))
				return false;
			break;
		case BPF_MISC:
			if (BPF_MISCOP(p->code) == BPF_TAX)
				s.x = s.a;
			else
				s.a = s.x;
			break;
		case BPF_RET:
			if (BPF_RVAL(p->code) == BPF_A && !afull(&s.a))
				return false;
			n = 0;
			break;
		default:	/* BPF_JMP */
			if (BPF_OP(p->code) == BPF_JA) {
				next[0] = i + 1 + p->k;
				break;
			}
			b = BPF_SRC(p->code) == BPF_X ? s.x : akonst(p->k);
			if (!ajump(p, i, &s.a, &b, next, &n))
				return false;
		}
		for (j = 0; j < n; j++)
			astate_merge(&st[next[j]], &s);
	}
	return true;
}

/*
 * --- a send call's program, specialized to the shape of its headers -------
 *
 * Where pcap_vm_native_ok() accepts a program on a template, its answer on
 * every hit of that shape is the kernel BPF's on the built headers with
 * their unknown bits zero. pcap_vm_specialize() goes one step further and
 * needs no headers built: from the states of that same analysis it writes
 * the program again, for that shape only,
 *   - a load of bits the same in every hit (the version, the protocol,
 *     IPv4's fragment offset) or not known (read as zero) becomes the
 *     constant it always is there;
 *   - a load of bytes of one field that changes from hit to hit (an
 *     address word, a port, a length: MAGNET_SENT_*) becomes a read of
 *     that field from the probe's record (magnet_sent_field()),
 *     shifted and masked to those bytes;
 *   - a jump the template decides, and an instruction no hit reaches,
 *     goes; jumps to it go where it would have gone.
 * What is left of "udp dst port 5001" on a UDP send call's headers is the
 * destination port's read and one comparison. A load of bytes of more
 * than one field is not written again (the caller then builds the
 * headers for the kernel's BPF).
 */

static void sdead(struct pcap_sent *sp, struct pcap_astate *st);

/*
 * What pcap_vm_run_sent() relies on to end and to stay inside @sp: each
 * step's next (both of a conditional jump's) is a later step, and a
 * return is reached. A program the analysis got wrong is not run.
 */
static bool sordered(const struct pcap_sent *sp)
{
	unsigned int i;

	if (!sp->len || sp->start >= sp->len)
		return false;
	for (i = 0; i < sp->len; i++) {
		const struct pcap_sop *op = &sp->op[i];

		if (BPF_CLASS(op->code) == BPF_RET)
			continue;
		if (op->jt <= i || op->jt >= sp->len)
			return false;
		if (BPF_CLASS(op->code) == BPF_JMP &&
		    (op->jf <= i || op->jf >= sp->len))
			return false;
	}
	return true;
}

/* Why a byte's bits vary from hit to hit: its field, or none. */
static bool sbyte(const struct magnet_pkt_template *t, u32 at, u8 *konst,
		  u8 *field)
{
	u32 j = at - SLL2_LEN;

	*field = MAGNET_SENT_NONE;
	if (at < 2) {		/* the protocol */
		*konst = at ? t->protocol & 0xff : t->protocol >> 8;
		return true;
	}
	if (at < SLL2_LEN)	/* not in the kernel BPF's program */
		return false;
	*konst = t->val[j] & t->konst[j];
	if (t->known[j] & ~t->konst[j]) {
		if (t->known[j] != 0xff || t->konst[j] || !t->field[j])
			return false;	/* part of a byte */
		*field = t->field[j];
	}
	return true;
}

/*
 * A load of @size bytes at @k, as one step: a constant, or bytes of one
 * field (all of it, or some).
 */
static bool sload(const struct magnet_pkt_template *t, u64 k, u32 size,
		  struct pcap_sop *op)
{
	u8 konst, field, f = MAGNET_SENT_NONE;
	u32 val = 0, i, last;

	if (k + size > (u64)SLL2_LEN + t->nbuilt)
		return false;
	for (i = 0; i < size; i++) {
		if (!sbyte(t, k + i, &konst, &field))
			return false;
		if (i && field != f)
			return false;	/* two fields, or part of one */
		f = field;
		val = val << 8 | konst;
	}
	if (f == MAGNET_SENT_NONE) {
		*op = (struct pcap_sop){ .code = BPF_LD | BPF_IMM, .k = val };
		return true;
	}
	/* the field's bytes after the load's: the shift */
	for (last = k + size; last < SLL2_LEN + (u32)t->nbuilt; last++)
		if (!sbyte(t, last, &konst, &field) || field != f)
			break;
	*op = (struct pcap_sop){ .code = PCAP_SOP_FIELD, .k = f,
				 .shift = 8 * (last - k - size),
				 .mask = size == 4 ? ~0U : BIT(8 * size) - 1 };
	return true;
}

/*
 * Where instruction @i (reached, its state in @st) always goes without
 * doing anything (a jump, or one the template decides): there; or -1.
 */
static int sjump_only(const struct sock_filter *f, unsigned int i,
		      const struct pcap_astate *st)
{
	unsigned int next[2], n;
	struct aval b;

	if (BPF_CLASS(f[i].code) != BPF_JMP)
		return -1;
	if (BPF_OP(f[i].code) == BPF_JA)
		return i + 1 + f[i].k;
	b = BPF_SRC(f[i].code) == BPF_X ? st->x : akonst(f[i].k);
	if (!ajump(&f[i], i, &st->a, &b, next, &n) || n != 1)
		return -1;
	return next[0];
}

/**
 * pcap_vm_specialize - a program for one shape of a send call's headers
 * @f:		a program pcap_vm_check() accepts
 * @len:	its instructions
 * @t:		the shape's template (magnet_packet_template())
 * @st:		room for @len states, any contents
 * @sp:		the program written again (its op[] has room for @len)
 *
 * See above. Any context (the caller's memory only).
 * Return: true if @sp may run every hit of that shape
 * (pcap_vm_run_sent()) and answers there what pcap_vm would.
 */
bool pcap_vm_specialize(const struct sock_filter *f, unsigned int len,
			const struct magnet_pkt_template *t,
			struct pcap_astate *st, struct pcap_sent *sp)
{
	unsigned int i, n = 0;
	int j;

	if (!pcap_vm_native_ok(f, len, t, st))
		return false;
	/* each step's number, where the instruction is one */
	for (i = 0; i < len; i++) {
		st[i].step = -1;
		if (st[i].reached && sjump_only(f, i, &st[i]) < 0)
			st[i].step = n++;
	}
	/* a jump to an instruction that is not a step: where it goes */
	for (i = len; i-- > 0;) {
		if (!st[i].reached || st[i].step >= 0)
			continue;
		j = sjump_only(f, i, &st[i]);
		st[i].step = st[j].step;
	}
	sp->start = st[0].step;
	sp->mem = false;
	for (i = 0; i < len; i++) {
		const struct sock_filter *p = &f[i];
		struct pcap_sop *op;
		struct aval a, b;

		if (!st[i].reached || sjump_only(f, i, &st[i]) >= 0)
			continue;
		op = &sp->op[st[i].step];
		*op = (struct pcap_sop){ .code = p->code, .k = p->k };
		if (i + 1 < len)
			op->jt = st[i + 1].step;
		switch (BPF_CLASS(p->code)) {
		case BPF_LD:
			switch (BPF_MODE(p->code)) {
			case BPF_ABS:
			case BPF_IND:
				if (!sload(t, (u64)p->k + (BPF_MODE(p->code) == BPF_IND ?
							   st[i].x.val : 0),
					   bpf_size_to_bytes(BPF_SIZE(p->code)), op))
					return false;
				op->jt = st[i + 1].step;
				break;
			case BPF_MEM:
				if (akonst_all(&st[i].m[p->k]))
					*op = (struct pcap_sop){ .code = BPF_LD | BPF_IMM,
						.k = st[i].m[p->k].val, .jt = st[i + 1].step };
				else
					sp->mem = true;
				break;
			}
			break;
		case BPF_LDX:
			if (BPF_MODE(p->code) == BPF_MSH) {
				/* (a constant: pcap_vm_native_ok() says so) */
				aload(t, p->k, 1, &b);
				op->code = BPF_LDX | BPF_IMM;
				op->k = 4 * (b.val & 0xf);
			} else if (BPF_MODE(p->code) == BPF_MEM &&
				   akonst_all(&st[i].m[p->k])) {
				op->code = BPF_LDX | BPF_IMM;
				op->k = st[i].m[p->k].val;
			} else if (BPF_MODE(p->code) == BPF_MEM) {
				sp->mem = true;
			}
			break;
		case BPF_ST:
		case BPF_STX:
			sp->mem = true;
			break;
		case BPF_ALU:
			a = st[i].a;
			b = BPF_SRC(p->code) == BPF_X ? st[i].x : akonst(p->k);
			if (aalu(BPF_OP(p->code), &a, &b) && akonst_all(&a)) {
				op->code = BPF_LD | BPF_IMM;
				op->k = a.val;
			}
			break;
		case BPF_JMP:
			op->jt = st[i + 1 + p->jt].step;
			op->jf = st[i + 1 + p->jf].step;
			break;
		}
	}
	sp->len = n;
	if (!sordered(sp))
		return false;
	sdead(sp, st);
	return sordered(sp);
}

/* Which of A and X (bits 0 and 1) step @op reads, and which it writes. */
static void suse(const struct pcap_sop *op, unsigned int *reads,
		 unsigned int *writes)
{
	unsigned int x = BPF_SRC(op->code) == BPF_X ? 2 : 0;

	*reads = 0;
	*writes = 0;
	switch (BPF_CLASS(op->code)) {
	case BPF_LD:
		*writes = 1;
		break;
	case BPF_LDX:
		*writes = 2;
		break;
	case BPF_ST:
		*reads = 1;
		break;
	case BPF_STX:
		*reads = 2;
		break;
	case BPF_ALU:
		*reads = 1 | (BPF_OP(op->code) == BPF_NEG ? 0 : x);
		*writes = 1;
		break;
	case BPF_JMP:
		*reads = 1 | x;
		break;
	case BPF_RET:
		*reads = BPF_RVAL(op->code) == BPF_A ? 1 : 0;
		break;
	default:	/* BPF_MISC */
		*reads = BPF_MISCOP(op->code) == BPF_TAX ? 1 : 2;
		*writes = BPF_MISCOP(op->code) == BPF_TAX ? 2 : 1;
		break;
	}
}

/*
 * Drop the steps whose value no later step reads (the constants that
 * stood for loads of a decided test, say), and close up the rest. In
 * @st[i], of step i: is it dead; A and X live before it (bits 0 and 1);
 * where a jump to it goes; its new number.
 */
static void sdead(struct pcap_sent *sp, struct pcap_astate *st)
{
	unsigned int i, n = 0, reads, writes;

	for (i = sp->len; i-- > 0;) {
		struct pcap_sop *op = &sp->op[i];
		unsigned int out = 0;

		suse(op, &reads, &writes);
		if (BPF_CLASS(op->code) == BPF_JMP)
			out = st[op->jt].live | st[op->jf].live;
		else if (BPF_CLASS(op->code) != BPF_RET)
			out = st[op->jt].live;
		/* (the scratch memory's stores are kept) */
		st[i].dead = writes && !(out & writes);
		st[i].live = st[i].dead ? out : (out & ~writes) | reads;
		st[i].fwd = st[i].dead ? st[op->jt].fwd : i;
	}
	for (i = 0; i < sp->len; i++)
		if (!st[i].dead)
			st[i].num = n++;
	sp->start = st[st[sp->start].fwd].num;
	for (i = 0, n = 0; i < sp->len; i++) {
		struct pcap_sop op = sp->op[i];

		if (st[i].dead)
			continue;
		if (BPF_CLASS(op.code) != BPF_RET)
			op.jt = st[st[op.jt].fwd].num;
		if (BPF_CLASS(op.code) == BPF_JMP)
			op.jf = st[st[op.jf].fwd].num;
		sp->op[n++] = op;
	}
	sp->len = n;
}

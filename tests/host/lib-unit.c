// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of lib/, the code every tool shares: what the tools print
 * depends on it, so each rule is held to here, on its edges.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "json.h"
#include "ledger.h"
#include "merge.h"
#include "record.h"
#include "words.h"

/* What @write printed, as a string the test frees. */
#define PRINTED(write) ({						\
		char *_buf = NULL;					\
		size_t _len = 0;					\
		FILE *_f = open_memstream(&_buf, &_len);		\
		ASSERT_TRUE(_f != NULL);				\
		write;							\
		fclose(_f);						\
		_buf;							\
	})

static void expect_printed(struct harness_test *_t, char *got,
			   const char *want)
{
	EXPECT_STREQ(got, want);
	free(got);
}

/* --- JSON ---------------------------------------------------------------- */

TEST(json_string_ascii_and_escapes)
{
	expect_printed(_t, PRINTED(json_string(_f, "plain")), "\"plain\"");
	expect_printed(_t, PRINTED(json_string(_f, "a\"b\\c")),
		       "\"a\\\"b\\\\c\"");
	expect_printed(_t, PRINTED(json_string(_f, "\b\f\n\r\t")),
		       "\"\\b\\f\\n\\r\\t\"");
	expect_printed(_t, PRINTED(json_string(_f, "\x01\x1f")),
		       "\"\\u0001\\u001f\"");
	/* DEL is not a control character in JSON */
	expect_printed(_t, PRINTED(json_string(_f, "\x7f")), "\"\x7f\"");
	expect_printed(_t, PRINTED(json_string(_f, "")), "\"\"");
}

TEST(json_string_passes_utf8)
{
	/* 2, 3 and 4 byte sequences: a process named in Greek, CJK, emoji */
	const char *names[] = { "\xce\xb1\xce\xb2", "\xe6\x97\xa5\xe6\x9c\xac",
				"\xf0\x9f\x93\xa6", "caf\xc3\xa9" };
	char want[64];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(want, sizeof(want), "\"%s\"", names[i]);
		expect_printed(_t, PRINTED(json_string(_f, names[i])), want);
	}
}

TEST(json_string_replaces_invalid_bytes)
{
	/* a lone byte >= 0x80, a truncated sequence, an overlong '/', a
	 * UTF-16 surrogate, a code point above U+10FFFF, 0xff
	 */
	expect_printed(_t, PRINTED(json_string(_f, "a\x80" "b")),
		       "\"a\\ufffdb\"");
	expect_printed(_t, PRINTED(json_string(_f, "\xe6\x97")),
		       "\"\\ufffd\\ufffd\"");
	expect_printed(_t, PRINTED(json_string(_f, "\xc0\xaf")),
		       "\"\\ufffd\\ufffd\"");
	expect_printed(_t, PRINTED(json_string(_f, "\xed\xa0\x80")),
		       "\"\\ufffd\\ufffd\\ufffd\"");
	expect_printed(_t, PRINTED(json_string(_f, "\xf4\x90\x80\x80")),
		       "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	expect_printed(_t, PRINTED(json_string(_f, "x\xff")), "\"x\\ufffd\"");
}

TEST(json_integers_keep_every_digit)
{
	expect_printed(_t, PRINTED(json_u64(_f, 0)), "0");
	expect_printed(_t, PRINTED(json_u64(_f, 9007199254740992ULL)),
		       "9007199254740992");
	expect_printed(_t, PRINTED(json_u64(_f, 9007199254740993ULL)),
		       "\"9007199254740993\"");
	expect_printed(_t, PRINTED(json_u64(_f, UINT64_MAX)),
		       "\"18446744073709551615\"");
	expect_printed(_t, PRINTED(json_s64(_f, -9007199254740992LL)),
		       "-9007199254740992");
	expect_printed(_t, PRINTED(json_s64(_f, -9007199254740993LL)),
		       "\"-9007199254740993\"");
	expect_printed(_t, PRINTED(json_s64(_f, INT64_MIN)),
		       "\"-9223372036854775808\"");
	expect_printed(_t, PRINTED(json_s64(_f, 1704204123000040000LL)),
		       "\"1704204123000040000\"");
}

/* A buffer's bytes, as a string the test frees */
static char *taken(struct jbuf *b)
{
	char *s = strndup(b->p ? b->p : "", b->len);

	jbuf_free(b);
	return s;
}

TEST(jbuf_writes_what_json_string_prints)
{
	const char *strs[] = { "plain", "a\"b\\c", "\b\f\n\r\t\x01\x1f", "\x7f",
			       "", "caf\xc3\xa9 \xf0\x9f\x93\xa6", "a\x80" "b",
			       "\xe6\x97", "\xed\xa0\x80", "x\xff" };
	struct jbuf b = { 0 };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		jbuf_string(&b, strs[i]);
		expect_printed(_t, taken(&b), PRINTED(json_string(_f, strs[i])));
	}
	/* grown past its first 4096 bytes, nothing lost */
	for (int i = 0; i < 1000; i++)
		jbuf_puts(&b, "0123456789");
	EXPECT_EQ(b.len, 10000);
	EXPECT_TRUE(b.p[9999] == '9' && b.p[4096] == '6');
	jbuf_free(&b);
}

TEST(jbuf_integers_and_hex)
{
	const uint8_t id[] = { 0x00, 0x0f, 0xa0, 0xff };
	struct jbuf b = { 0 };

	jbuf_uint(&b, 0);
	jbuf_putc(&b, ' ');
	jbuf_uint(&b, UINT64_MAX);
	jbuf_putc(&b, ' ');
	jbuf_int(&b, INT64_MIN);
	jbuf_putc(&b, ' ');
	jbuf_int(&b, -1);
	jbuf_putc(&b, ' ');
	jbuf_hex(&b, id, sizeof(id));
	expect_printed(_t, taken(&b),
		       "0 18446744073709551615 -9223372036854775808 -1 000fa0ff");
}

/* --- numbers ------------------------------------------------------------- */

static void expect_double(struct harness_test *_t, double v, const char *want)
{
	char buf[32];

	format_double(v, buf);
	EXPECT_STREQ(buf, want);
}

/* The fewest digits that read back, whole numbers plain, Prometheus's
 * spellings of the values that are no numbers.
 */
TEST(words_format_double_shortest)
{
	expect_double(_t, 0, "0");
	expect_double(_t, 200, "200");
	expect_double(_t, -3, "-3");
	expect_double(_t, 9007199254740991.0, "9007199254740991");
	expect_double(_t, 0x1p53, "9007199254740992");
	expect_double(_t, 0x1p54, "18014398509481984");
	expect_double(_t, 1e21, "1e+21");
	expect_double(_t, 1e300, "1e+300");
	expect_double(_t, 0.1, "0.1");
	expect_double(_t, 2.5, "2.5");
	expect_double(_t, 1.0 / 3, "0.3333333333333333");
	expect_double(_t, 256 / 1e9, "2.56e-07");
	expect_double(_t, 17179869184 / 1e9, "17.179869184");
	expect_double(_t, 72318 / 1e9, "7.2318e-05");
	/* a double rounding's noise is the value's own: printed as it is */
	expect_double(_t, 723188.0 / 10 / 1e9, "7.231880000000001e-05");
	expect_double(_t, 723188.0 / 1e10, "7.23188e-05");
	expect_double(_t, 5e-324, "5e-324");
	expect_double(_t, 1.7976931348623157e308, "1.7976931348623157e+308");
	expect_double(_t, 0.0 / 0.0, "NaN");
	expect_double(_t, 1 / 0.0, "+Inf");
	expect_double(_t, -1 / 0.0, "-Inf");
}

/* Random doubles of every magnitude read back the same, and one digit
 * fewer would not (the form is the shortest).
 */
TEST(words_format_double_reads_back)
{
	uint64_t x = 88172645463325252ULL, bits;
	unsigned int i, bad = 0, longer = 0;
	char buf[32], shorter[400];
	double v;

	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bits = x & ~(0x7ffULL << 52);
		bits |= (uint64_t)(1023 - 60 + x % 120) << 52;
		memcpy(&v, &bits, sizeof(v));
		format_double(v, buf);
		if (strtod(buf, NULL) != v)
			bad++;
		if (v != (double)(int64_t)v || v >= 0x1p53) {
			const char *p = buf;
			int digits = 0;

			/* significant digits: from the first that is not 0 */
			while (*p == '-' || *p == '0' || *p == '.')
				p++;
			for (; *p && *p != 'e'; p++)
				digits += *p >= '0' && *p <= '9';
			snprintf(shorter, sizeof(shorter), "%.*g",
				 digits > 1 ? digits - 1 : 1, v);
			if (digits > 1 && strtod(shorter, NULL) == v)
				longer++;
		}
	}
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(longer, 0);
}

/* --- records ------------------------------------------------------------- */

/* Records of payload @sizes[i] bytes, back to back, in @buf; their bytes. */
static size_t make_records(unsigned char *buf, const unsigned int *sizes,
			   unsigned int n)
{
	size_t off = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct magnet_record *r = (void *)(buf + off);

		memset(r, 0, MAGNET_RECORD_LEN(sizeof(*r) + sizes[i]));
		r->size = sizeof(*r) + sizes[i];
		r->event = i + 1;
		r->timestamp = 1000 + i;
		off += MAGNET_RECORD_LEN(r->size);
	}
	return off;
}

TEST(record_len_rule)
{
	EXPECT_EQ(MAGNET_RECORD_LEN(40), 40);
	EXPECT_EQ(MAGNET_RECORD_LEN(41), 48);
	EXPECT_EQ(MAGNET_RECORD_LEN(47), 48);
	EXPECT_EQ(MAGNET_RECORD_LEN(48), 48);
	EXPECT_EQ(MAGNET_RECORD_LEN(0xfffffff9u), 0x100000000ULL);
}

TEST(record_walk_whole_records)
{
	static const unsigned int sizes[] = { 0, 1, 7, 8, 13, 256 };
	unsigned char buf[1024] __attribute__((aligned(8)));
	size_t len = make_records(buf, sizes, 6);
	const struct magnet_record *r;
	struct record_walk w;
	unsigned int n = 0;

	record_walk_init(&w, buf, len);
	while ((r = record_next(&w))) {
		EXPECT_EQ(r->event, n + 1);
		EXPECT_EQ(r->size, sizeof(*r) + sizes[n]);
		n++;
	}
	EXPECT_EQ(n, 6);
	EXPECT_FALSE(w.bad);
	EXPECT_EQ(w.off, len);
	/* nothing at all is no record, and not bad */
	record_walk_init(&w, buf, 0);
	EXPECT_TRUE(record_next(&w) == NULL);
	EXPECT_FALSE(w.bad);
}

TEST(record_walk_stops_at_truncated_input)
{
	/* records of 48, 53 (+3 padding) and 64 bytes: they end at 48, 101
	 * (104 with its padding) and 168
	 */
	static const unsigned int sizes[] = { 8, 13, 24 };
	unsigned char buf[512] __attribute__((aligned(8)));
	size_t len = make_records(buf, sizes, 3), cut;
	unsigned int n, want_n;
	struct record_walk w;
	bool want_bad;

	ASSERT_EQ(len, 168);
	for (cut = 1; cut < len; cut++) {
		record_walk_init(&w, buf, cut);
		for (n = 0; record_next(&w); n++)
			;
		want_n = cut >= 168 ? 3 : cut >= 101 ? 2 : cut >= 48 ? 1 : 0;
		/* whole records, the last without its padding, are fine */
		want_bad = !(cut == 48 || (cut >= 101 && cut <= 104));
		EXPECT_EQ(n, want_n);
		EXPECT_EQ(w.bad, want_bad);
	}
}

TEST(record_walk_refuses_bad_sizes)
{
	unsigned char buf[256] __attribute__((aligned(8)));
	struct magnet_record *r = (void *)buf;
	struct record_walk w;

	memset(buf, 0, sizeof(buf));
	r->size = sizeof(*r) - 1;		/* shorter than its header */
	record_walk_init(&w, buf, sizeof(buf));
	EXPECT_TRUE(record_next(&w) == NULL);
	EXPECT_TRUE(w.bad);
	EXPECT_EQ(w.off, 0);
	r->size = sizeof(buf) + 8;		/* past the end */
	record_walk_init(&w, buf, sizeof(buf));
	EXPECT_TRUE(record_next(&w) == NULL);
	EXPECT_TRUE(w.bad);
	r->size = 0;				/* a zero size never loops */
	record_walk_init(&w, buf, sizeof(buf));
	EXPECT_TRUE(record_next(&w) == NULL);
	EXPECT_TRUE(w.bad);
}

/* --- the ledger ---------------------------------------------------------- */

/* Row @k of a small key space: 4 CPUs, 3 cgroups, 2 tgids, 8 kinds, ... */
static struct ledger_row key_row(unsigned int k, uint64_t ns)
{
	static const char *const names[] = { "", "a", "ab" };
	static const uint64_t cgroups[] = { 0, 7, 1ULL << 40 };
	struct ledger_row r = { .ns = ns };

	r.cpu = k % 4, k /= 4;
	r.cgroup = cgroups[k % 3], k /= 3;
	r.tgid = k % 2 ? 100 : 0, k /= 2;
	r.kind = k % 8, k /= 8;
	r.has_vector = k % 2, k /= 2;
	r.vector = k % 3, k /= 3;
	snprintf(r.name, sizeof(r.name), "%s", names[k % 3]);
	return r;
}

#define KEY_ROWS	(4 * 3 * 2 * 8 * 2 * 3 * 3)

static bool same_key(const struct ledger_row *a, const struct ledger_row *b)
{
	return a->cpu == b->cpu && a->cgroup == b->cgroup &&
	       a->tgid == b->tgid && a->kind == b->kind &&
	       a->has_vector == b->has_vector && a->vector == b->vector &&
	       !strcmp(a->name, b->name);
}

/* The key order ledger.h promises for equal times: field by field. */
static int key_order(const struct ledger_row *a, const struct ledger_row *b)
{
	const uint64_t x[] = { a->cpu, a->cgroup, a->tgid, a->kind,
			       a->has_vector, a->vector };
	const uint64_t y[] = { b->cpu, b->cgroup, b->tgid, b->kind,
			       b->has_vector, b->vector };

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return strcmp(a->name, b->name);
}

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A snapshot of @n rows, owning copies of @rows and @elapsed. */
static struct ledger_snapshot snapshot_of(const struct ledger_row *rows,
					  size_t n, const uint64_t *elapsed,
					  uint32_t cpus)
{
	struct ledger_snapshot s = { .count = n, .alloc = n, .cpus = cpus };

	s.rows = malloc((n + 1) * sizeof(*rows));
	s.elapsed = malloc((cpus + 1) * sizeof(*elapsed));
	memcpy(s.rows, rows, n * sizeof(*rows));
	memcpy(s.elapsed, elapsed, cpus * sizeof(*elapsed));
	return s;
}

TEST(ledger_subtract_by_key_in_any_order)
{
	struct ledger_row b[] = {
		key_row(5, 100), key_row(0, 10), key_row(77, 1000),
		key_row(1234, 7), key_row(6000, 50),
	};
	/*
	 * @before's rows in another order; one on CPU 1 where @before's is
	 * on CPU 0; one @before lacks
	 */
	struct ledger_row n[] = {
		key_row(6000, 80), key_row(1234, 9), key_row(6001, 33),
		key_row(0, 15), key_row(77, 1500), key_row(5, 130),
		key_row(99, 44),
	};
	/* key_row(0)'s twins, each but in one field of the key */
	struct ledger_row t[] = {
		key_row(0, 4), key_row(0, 4), key_row(0, 4), key_row(0, 4),
	};
	uint64_t be[] = { 1000, 2000 }, ne[] = { 1500, 2600, 800 };
	struct ledger_snapshot before = snapshot_of(b, 5, be, 2);
	struct ledger_snapshot now = snapshot_of(n, 7, ne, 3);

	ASSERT_EQ(ledger_subtract(&now, &before), 0);
	ASSERT_EQ(now.count, 7);
	for (size_t i = 0; i < 7; i++)		/* @now's order kept */
		EXPECT_TRUE(same_key(&now.rows[i], &n[i])) TH_LOG("row %zu", i);
	EXPECT_EQ(now.rows[0].ns, 30);
	EXPECT_EQ(now.rows[1].ns, 2);
	EXPECT_EQ(now.rows[2].ns, 33);		/* CPU 1's: new */
	EXPECT_EQ(now.rows[3].ns, 5);
	EXPECT_EQ(now.rows[4].ns, 500);
	EXPECT_EQ(now.rows[5].ns, 30);
	EXPECT_EQ(now.rows[6].ns, 44);		/* not in @before: whole */
	EXPECT_EQ(now.elapsed[0], 500);
	EXPECT_EQ(now.elapsed[1], 600);
	EXPECT_EQ(now.elapsed[2], 800);		/* a CPU @before lacks */
	ledger_free(&now);

	/* each field of the key counts, the name's whole string too */
	t[0].cgroup = 8;
	snprintf(t[1].name, sizeof(t[1].name), "x");
	t[2].vector = 2;
	t[3].has_vector = !t[3].has_vector;
	now = snapshot_of(t, 4, ne, 0);
	ASSERT_EQ(ledger_subtract(&now, &before), 0);
	for (size_t i = 0; i < 4; i++)
		EXPECT_EQ(now.rows[i].ns, 4) TH_LOG("row %zu", i);
	ledger_free(&now);

	/* nothing before: nothing taken */
	ledger_free(&before);
	now = snapshot_of(n, 7, ne, 3);
	ASSERT_EQ(ledger_subtract(&now, &before), 0);
	for (size_t i = 0; i < 7; i++)
		EXPECT_EQ(now.rows[i].ns, n[i].ns);
	ledger_free(&now);
}

TEST(ledger_sum_cpus_folds_and_orders)
{
	struct ledger_row r[] = {
		key_row(8, 50),			/* cgroup 1 << 40 */
		key_row(0, 10), key_row(1, 20), key_row(2, 30), key_row(3, 40),
		key_row(4, 25), key_row(6, 25),	/* cgroup 7, CPUs 0 and 2 */
		key_row(13, 5), key_row(12, 5),	/* CPU 1 before CPU 0 */
	};
	uint64_t e[] = { 1, 2, 3, 4 };
	struct ledger_snapshot s = snapshot_of(r, 9, e, 4);
	/* equal times by key: cgroup 7 before cgroup 1 << 40 */
	struct ledger_row want[] = {
		key_row(0, 100), key_row(4, 50), key_row(8, 50),
		key_row(12, 10),
	};

	ledger_sum_cpus(&s);
	ASSERT_EQ(s.count, 4);
	for (size_t i = 0; i < 4; i++) {
		EXPECT_TRUE(same_key(&s.rows[i], &want[i])) TH_LOG("row %zu", i);
		EXPECT_EQ(s.rows[i].ns, want[i].ns) TH_LOG("row %zu", i);
	}
	/* the CPUs' elapsed times are left alone */
	EXPECT_EQ(s.cpus, 4);
	EXPECT_EQ(s.elapsed[3], 4);
	ledger_free(&s);
}

/*
 * Against a pairwise search, on random snapshots of about 1700 rows (a
 * quarter of the key space each): the same differences, row by row; the
 * same sums, in order of time and then of key.
 */
TEST(ledger_subtract_and_sum_match_pairwise)
{
	static struct ledger_row b[KEY_ROWS], n[KEY_ROWS], ref[KEY_ROWS];
	uint64_t x = 88172645463325252ULL, e[4] = { 0 };

	for (int round = 0; round < 50; round++) {
		struct ledger_snapshot before, now;
		size_t nb = 0, nn = 0, nref = 0;

		for (unsigned int k = 0; k < KEY_ROWS; k++) {
			uint64_t ns = next_random(&x) % 1000;

			if (next_random(&x) % 4 == 0)
				b[nb++] = key_row(k, ns);
			if (next_random(&x) % 4 == 0)
				n[nn++] = key_row(k, ns + 1000);
		}
		/* shuffled, each in its own way */
		for (size_t i = nb; i > 1; i--) {
			size_t j = next_random(&x) % i;
			struct ledger_row t = b[i - 1];

			b[i - 1] = b[j], b[j] = t;
		}
		for (size_t i = nn; i > 1; i--) {
			size_t j = next_random(&x) % i;
			struct ledger_row t = n[i - 1];

			n[i - 1] = n[j], n[j] = t;
		}
		before = snapshot_of(b, nb, e, 4);
		now = snapshot_of(n, nn, e, 4);
		ASSERT_EQ(ledger_subtract(&now, &before), 0);
		for (size_t i = 0; i < nn; i++) {
			uint64_t want = n[i].ns;

			for (size_t j = 0; j < nb; j++)
				if (same_key(&n[i], &b[j])) {
					want -= b[j].ns;
					break;
				}
			ASSERT_TRUE(same_key(&now.rows[i], &n[i]));
			ASSERT_EQ(now.rows[i].ns, want) TH_LOG("round %d row %zu",
							      round, i);
		}

		/* the sum over CPUs, pairwise: a row per key, CPU 0 */
		for (size_t i = 0; i < nn; i++) {
			struct ledger_row r = now.rows[i];
			size_t j;

			r.cpu = 0;
			for (j = 0; j < nref && !same_key(&ref[j], &r); j++)
				;
			if (j < nref)
				ref[j].ns += r.ns;
			else
				ref[nref++] = r;
		}
		ledger_sum_cpus(&now);
		ASSERT_EQ(now.count, nref);
		for (size_t i = 0; i < nref; i++) {
			size_t j;

			for (j = 0; j < nref && !same_key(&ref[j], &now.rows[i]); j++)
				;
			ASSERT_LT(j, nref);
			EXPECT_EQ(now.rows[i].ns, ref[j].ns);
			if (i)
				ASSERT_TRUE(now.rows[i - 1].ns > now.rows[i].ns ||
					    (now.rows[i - 1].ns == now.rows[i].ns &&
					     key_order(&now.rows[i - 1],
						       &now.rows[i]) < 0))
					TH_LOG("round %d row %zu", round, i);
		}
		ledger_free(&now);
		ledger_free(&before);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A made-up tree of directories under /tmp, as a cgroup2 mount's. */
static const char *const tree_dirs[] = {
	"", "/a", "/a/b", "/a/b/c", "/a/bb", "/d", "/d/e f",
};
#define TREE_DIRS	(sizeof(tree_dirs) / sizeof(tree_dirs[0]))

FIXTURE(ledger_tree) {
	char root[32];
	uint64_t ino[TREE_DIRS];	/* tree_dirs[i]'s inode number */
	uint64_t file;			/* /a/file's */
};

FIXTURE_SETUP(ledger_tree)
{
	char path[256];
	struct stat st;
	FILE *f;

	snprintf(self->root, sizeof(self->root), "/tmp/magnet-ledger-XXXXXX");
	ASSERT_TRUE(mkdtemp(self->root) != NULL);
	for (size_t i = 0; i < TREE_DIRS; i++) {
		snprintf(path, sizeof(path), "%s%s", self->root, tree_dirs[i]);
		ASSERT_TRUE(i == 0 || mkdir(path, 0755) == 0) TH_LOG("%s", path);
		ASSERT_EQ(stat(path, &st), 0);
		self->ino[i] = st.st_ino;
	}
	snprintf(path, sizeof(path), "%s/a/file", self->root);
	f = fopen(path, "w");
	ASSERT_TRUE(f != NULL);
	fclose(f);
	ASSERT_EQ(stat(path, &st), 0);
	self->file = st.st_ino;
}

FIXTURE_TEARDOWN(ledger_tree)
{
	char path[256];

	if (!self->root[0])
		return;
	snprintf(path, sizeof(path), "%s/a/file", self->root);
	unlink(path);
	for (size_t i = TREE_DIRS; i-- > 0;) {
		snprintf(path, sizeof(path), "%s%s", self->root, tree_dirs[i]);
		rmdir(path);
	}
}

/*
 * The tree's directories found by their inode numbers, as cgroups by
 * their ids, in one call: "/" for the root, "/a/b" below it; NULL for a
 * number no directory has (a file's included).
 */
TEST_F(ledger_tree, cgroup_paths_in_one_walk)
{
	enum { N = TREE_DIRS + 2 };
	uint64_t ids[N];
	const char *want[N];
	char *paths[N], path[256];
	size_t i, j;

	/* in increasing order, as ledger.h asks */
	memcpy(ids, self->ino, sizeof(self->ino));
	ids[TREE_DIRS] = self->file;
	ids[TREE_DIRS + 1] = UINT64_MAX - 1;	/* no such inode */
	qsort(ids, N, sizeof(*ids), cmp_u64);
	for (i = 0; i < N; i++) {
		for (j = 0; j < TREE_DIRS && self->ino[j] != ids[i]; j++)
			;
		want[i] = j == 0 ? "/" : j < TREE_DIRS ? tree_dirs[j] : NULL;
	}
	ASSERT_EQ(ledger_cgroup_paths(self->root, ids, N, paths), 0);
	for (i = 0; i < N; i++) {
		if (want[i])
			EXPECT_TRUE(paths[i] && !strcmp(paths[i], want[i]))
				TH_LOG("%s: %s", want[i],
				       paths[i] ? paths[i] : "NULL");
		else
			EXPECT_TRUE(paths[i] == NULL)
				TH_LOG("%" PRIu64 ": %s", ids[i], paths[i]);
		free(paths[i]);
	}

	/* a root written with a trailing '/'; one id */
	snprintf(path, sizeof(path), "%s/", self->root);
	ASSERT_EQ(ledger_cgroup_paths(path, &self->ino[3], 1, paths), 0);
	EXPECT_TRUE(paths[0] && !strcmp(paths[0], "/a/b/c"));
	free(paths[0]);
	ASSERT_EQ(ledger_cgroup_paths(self->root, ids, 0, paths), 0);

	/* a root that is not there: every cgroup gone */
	snprintf(path, sizeof(path), "%s/none", self->root);
	paths[0] = path;
	ASSERT_EQ(ledger_cgroup_paths(path, &self->ino[1], 1, paths), 0);
	EXPECT_TRUE(paths[0] == NULL);
}

/*
 * A cgroup-root is checked to be in a cgroup2 file system: the fixture's
 * tree is not (a directory under /tmp), nor is a path that is not there;
 * a cgroup2 mount of this machine's, if it has one, is.
 */
TEST_F(ledger_tree, cgroup_root_is_checked)
{
	char line[512], dir[256], type[64], path[256];
	FILE *f;

	errno = 0;
	EXPECT_EQ(ledger_root_check(self->root), -1);
	EXPECT_EQ(errno, EMEDIUMTYPE);
	snprintf(path, sizeof(path), "%s/none", self->root);
	errno = 0;
	EXPECT_EQ(ledger_root_check(path), -1);
	EXPECT_EQ(errno, ENOENT);
	f = fopen("/proc/mounts", "r");
	ASSERT_TRUE(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", dir, type) == 2 &&
		    !strcmp(type, "cgroup2")) {
			EXPECT_EQ(ledger_root_check(dir), 0) TH_LOG("%s", dir);
			break;
		}
	fclose(f);
}

/* --- the merge ----------------------------------------------------------- */

TEST(merge_orders_by_time_then_arrival)
{
	/* two CPUs' streams, interleaved by chunks, with equal stamps */
	static const uint64_t ts[] = { 10, 20, 30, 15, 25, 20, 35, 5 };
	static int tag[8];
	struct merge *m = merge_new(0);
	uint64_t t, last = 0;
	int *p, prev_tag = -1;
	unsigned int n = 0;

	ASSERT_TRUE(m != NULL);
	for (int i = 0; i < 8; i++) {
		tag[i] = i;
		ASSERT_EQ(merge_add(m, ts[i], &tag[i]), 0);
	}
	EXPECT_EQ(merge_count(m), 8);
	EXPECT_EQ(merge_newest(m), 35);
	while ((p = merge_pop(m, MERGE_ALL, &t))) {
		EXPECT_EQ(t, ts[*p]);
		EXPECT_GE(t, last);
		/* equal timestamps: the one added first comes first */
		if (t == last)
			EXPECT_GT(*p, prev_tag);
		last = t;
		prev_tag = *p;
		n++;
	}
	EXPECT_EQ(n, 8);
	EXPECT_EQ(merge_count(m), 0);
	merge_free(m);
}

TEST(merge_holds_records_for_the_window)
{
	struct merge *m = merge_new(50);
	int a, b, c;
	uint64_t t;

	ASSERT_TRUE(m != NULL);
	merge_add(m, 1000, &a);
	merge_add(m, 1040, &b);
	merge_add(m, 1100, &c);
	/* held until more than the window older than the horizon */
	EXPECT_TRUE(merge_pop(m, 1050, NULL) == NULL);
	EXPECT_TRUE(merge_pop(m, 1051, &t) == &a);
	EXPECT_EQ(t, 1000);
	EXPECT_TRUE(merge_pop(m, 1051, NULL) == NULL);
	EXPECT_TRUE(merge_pop(m, 1091, NULL) == &b);
	/* a horizon inside the first window holds everything */
	EXPECT_TRUE(merge_pop(m, 40, NULL) == NULL);
	EXPECT_TRUE(merge_pop(m, MERGE_ALL, NULL) == &c);
	EXPECT_TRUE(merge_pop(m, MERGE_ALL, NULL) == NULL);
	merge_free(m);
}

TEST(merge_many_records_in_order)
{
	struct merge *m = merge_new(1000);
	uint64_t t, last = 0;
	unsigned int cpu, i, n = 0;
	void *p;

	ASSERT_TRUE(m != NULL);
	/* 4 CPUs, each in order, added a chunk of 100 at a time */
	for (i = 0; i < 25000; i += 100)
		for (cpu = 0; cpu < 4; cpu++)
			for (unsigned int k = i; k < i + 100; k++)
				ASSERT_EQ(merge_add(m, 7 * k + cpu * 3,
					(void *)(uintptr_t)(4 * k + cpu + 1)), 0);
	while ((p = merge_pop(m, MERGE_ALL, &t))) {
		EXPECT_GE(t, last);
		last = t;
		n++;
	}
	EXPECT_EQ(n, 100000);
	merge_free(m);
}

TEST_MAIN

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test harness of magnet's C test programs, after the kernel's
 * kselftest_harness.h: tests declared with TEST() or, sharing a set-up
 * and tear-down, FIXTURE()/FIXTURE_SETUP()/FIXTURE_TEARDOWN()/TEST_F();
 * ASSERT_*() ends a test at the first failure, EXPECT_*() records it and
 * goes on, and a statement after either runs only when it fails
 * (EXPECT_EQ(n, 3) TH_LOG("in %s", name);); SKIP() ends a test as
 * skipped when a precondition is missing. Each test runs in a child
 * process of its own, so a crash or an exit fails that test alone, and
 * leaks nothing into the next; one still running after HARNESS_TIMEOUT
 * seconds is stopped and fails. Every C host test program
 * (tests/host/NAME-unit.c) is a TEST_MAIN program of such tests
 * (docs/testing.md: their names, make check-host T=NAME).
 *
 * Programs that run one scenario and check as they go (the VM's test
 * programs, which the suites run with arguments) use harness_check()
 * instead, and harness_summary() at the end.
 *
 * The one format every test of the project prints, the suites' shell
 * checks (tests/lib.sh) and the Python ones included, and that the rig
 * and run_c() add up (TAP's lines, without numbers or a plan):
 *	ok - NAME
 *	not ok - NAME: WHY
 *	#   diagnostics, e.g. file.c:42: EXPECT_EQ(a, b): 3 vs 4
 *	ok - NAME # SKIP WHY
 *	N passed, M failed
 * (a skipped test counts as neither). The program exits 0 when nothing
 * failed, 1 otherwise. With arguments, a TEST_MAIN program runs only the
 * tests whose names contain one of them; with -l first, it lists those
 * names instead of running them.
 *
 *	#include "harness.h"
 *	TEST(adds) { EXPECT_EQ(1 + 1, 2); }
 *	TEST_MAIN
 */
#ifndef MAGNET_TEST_HARNESS_H
#define MAGNET_TEST_HARNESS_H

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HARNESS_TESTS_MAX	512
#define HARNESS_EXIT_SKIP	77
#ifndef HARNESS_TIMEOUT
#define HARNESS_TIMEOUT		300	/* seconds a test may run */
#endif

struct harness_test {
	const char *name;
	void (*run)(struct harness_test *t);
	int failed;		/* checks failed so far (in the child) */
	/* the fixture's tear-down, once its set-up has finished */
	void (*teardown)(struct harness_test *t, void *self);
	void *self;
};

static struct harness_test *harness_tests[HARNESS_TESTS_MAX];
static unsigned int harness_count;
static unsigned int harness_passed, harness_failed, harness_skipped;

/* --- the format ----------------------------------------------------------- */

/* One result line; @why (printf-style) only for a failure. */
static inline bool __attribute__((format(printf, 3, 4)))
harness_result(bool ok, const char *name, const char *why, ...)
{
	va_list ap;

	if (ok) {
		harness_passed++;
		printf("ok - %s\n", name);
	} else {
		harness_failed++;
		printf("not ok - %s", name);
		if (why) {
			fputs(": ", stdout);
			va_start(ap, why);
			vprintf(why, ap);
			va_end(ap);
		}
		putchar('\n');
	}
	fflush(stdout);
	return ok;
}

static inline void harness_skip(const char *name, const char *why)
{
	harness_skipped++;
	printf("ok - %s # SKIP %s\n", name, why);
	fflush(stdout);
}

/*
 * A check of a scenario: "ok - NAME" or "not ok - NAME", NAME
 * printf-style. Returns @cond.
 */
static inline bool __attribute__((format(printf, 2, 3)))
harness_check(bool cond, const char *fmt, ...)
{
	char name[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	return harness_result(cond, name, NULL);
}

/* The summary line; the exit status: 0 if nothing failed, else 1. */
static inline int harness_summary(void)
{
	if (harness_skipped)
		printf("# %u skipped\n", harness_skipped);
	printf("%u passed, %u failed\n", harness_passed, harness_failed);
	fflush(stdout);
	return harness_failed ? 1 : 0;
}

static inline void harness_register(struct harness_test *t)
{
	if (harness_count == HARNESS_TESTS_MAX) {
		fprintf(stderr, "harness: more than %d tests\n",
			HARNESS_TESTS_MAX);
		exit(2);
	}
	harness_tests[harness_count++] = t;
}

static inline void harness_vlog(const char *fmt, va_list ap)
{
	fputs("#   ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

/* A failed check: "#   file:line: what" on stdout (the TAP stream). */
static inline void __attribute__((format(printf, 3, 4)))
harness_note(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("#   %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* TH_LOG("printf-style"): a comment line in the test's output. */
#define TH_LOG(...)	harness_log(__VA_ARGS__)
static inline void __attribute__((format(printf, 1, 2)))
harness_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	harness_vlog(fmt, ap);
	va_end(ap);
}

/* --- tests and fixtures --------------------------------------------------- */

#define TEST(test)							\
	static void harness_fn_##test(struct harness_test *_t);	\
	static struct harness_test harness_t_##test = {			\
		.name = #test, .run = harness_fn_##test };		\
	static void __attribute__((constructor))			\
	harness_reg_##test(void)					\
	{								\
		harness_register(&harness_t_##test);			\
	}								\
	static void harness_fn_##test(struct harness_test *_t __attribute__((unused)))

/*
 * Fixtures: FIXTURE(f) { members }; FIXTURE_SETUP(f) and
 * FIXTURE_TEARDOWN(f) get `self` (a FIXTURE_DATA(f) *, zeroed before the
 * set-up); TEST_F(f, name), the test f_name, runs between them. The
 * tear-down runs once the set-up has finished, however the test ends.
 */
#define FIXTURE(f)		struct harness_fixture_##f
#define FIXTURE_DATA(f)		struct harness_fixture_##f
#define FIXTURE_SETUP(f)						\
	static void harness_setup_##f(					\
		struct harness_test *_t __attribute__((unused)),	\
		FIXTURE_DATA(f) *self __attribute__((unused)))
#define FIXTURE_TEARDOWN(f)						\
	static void harness_teardown_##f(struct harness_test *_t,	\
					 FIXTURE_DATA(f) *self);	\
	static void harness_teardown_any_##f(struct harness_test *_t,	\
					     void *self)		\
	{								\
		harness_teardown_##f(_t, self);				\
	}								\
	static void harness_teardown_##f(				\
		struct harness_test *_t __attribute__((unused)),	\
		FIXTURE_DATA(f) *self __attribute__((unused)))
#define TEST_F(f, name)							\
	static void harness_body_##f##_##name(struct harness_test *_t,	\
					      FIXTURE_DATA(f) *self);	\
	TEST(f##_##name)						\
	{								\
		FIXTURE_DATA(f) self;					\
									\
		memset(&self, 0, sizeof(self));				\
		harness_setup_##f(_t, &self);				\
		_t->teardown = harness_teardown_any_##f;		\
		_t->self = &self;					\
		harness_body_##f##_##name(_t, &self);			\
		_t->teardown = NULL;					\
		harness_teardown_##f(_t, &self);			\
	}								\
	static void harness_body_##f##_##name(				\
		struct harness_test *_t __attribute__((unused)),	\
		FIXTURE_DATA(f) *self __attribute__((unused)))

/* Leave the test with exit status @code, after the fixture's tear-down. */
static inline void __attribute__((noreturn))
harness_exit(struct harness_test *t, int code)
{
	void (*teardown)(struct harness_test *t, void *self) = t->teardown;

	t->teardown = NULL;	/* (an ASSERT failing in it ends it) */
	if (teardown)
		teardown(t, t->self);
	fflush(stdout);
	exit(code);
}

/* End the test as skipped: SKIP("no %s here", what). */
#define SKIP(...)	harness_skipping(_t, __VA_ARGS__)
static inline void __attribute__((noreturn, format(printf, 2, 3)))
harness_skipping(struct harness_test *t, const char *fmt, ...)
{
	va_list ap;

	fputs("#   skipped: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	harness_exit(t, HARNESS_EXIT_SKIP);
}

/* --- checks --------------------------------------------------------------- */

/*
 * Each check is one statement, an if without braces and its else
 * included, and may be followed by a statement that runs only when it
 * fails (before an ASSERT ends the test):
 *	ASSERT_EQ(n, 3) TH_LOG("%s: %d records", path, n);
 * EXPECT_EQ() and the other comparisons compare floating operands as
 * double, any other as intmax_t.
 */
enum harness_op { HARNESS_EQ, HARNESS_NE, HARNESS_LT, HARNESS_LE,
		  HARNESS_GT, HARNESS_GE };

#define HARNESS_HOLDS(a, op, b)						\
	((op) == HARNESS_EQ ? (a) == (b) : (op) == HARNESS_NE ? (a) != (b) : \
	 (op) == HARNESS_LT ? (a) < (b) : (op) == HARNESS_LE ? (a) <= (b) : \
	 (op) == HARNESS_GT ? (a) > (b) : (a) >= (b))

static inline bool harness_cmp_int(intmax_t a, intmax_t b, enum harness_op op,
				   const char *file, int line,
				   const char *check)
{
	if (HARNESS_HOLDS(a, op, b))
		return true;
	harness_note(file, line, "%s: %jd vs %jd", check, a, b);
	return false;
}

/* @v in the fewest digits that read back as it. */
static inline const char *harness_double(char *buf, size_t len, double v)
{
	for (int digits = 6; digits < 17; digits++) {
		snprintf(buf, len, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, len, "%.17g", v);
	return buf;
}

static inline bool harness_cmp_double(double a, double b, enum harness_op op,
				      const char *file, int line,
				      const char *check)
{
	char va[32], vb[32];

	if (HARNESS_HOLDS(a, op, b))
		return true;
	harness_note(file, line, "%s: %s vs %s", check,
		     harness_double(va, sizeof(va), a),
		     harness_double(vb, sizeof(vb), b));
	return false;
}

static inline bool harness_true(bool c, const char *file, int line,
				const char *check)
{
	if (!c)
		harness_note(file, line, "%s", check);
	return c;
}

static inline bool harness_streq(const char *a, const char *b,
				 const char *file, int line, const char *check)
{
	if (a && b && !strcmp(a, b))
		return true;
	harness_note(file, line, "%s: \"%s\" vs \"%s\"", check,
		     a ? a : "(null)", b ? b : "(null)");
	return false;
}

static inline int harness_failing(struct harness_test *t)
{
	t->failed++;
	return 1;
}

static inline int harness_after(struct harness_test *t, bool stop)
{
	if (stop)
		harness_exit(t, 1);
	return 0;
}

/* (one for, and no if: an else after the check is the surrounding if's) */
#define HARNESS_CHECK(stop, ok)						\
	for (int _once = !(ok) && harness_failing(_t); _once;		\
	     _once = harness_after(_t, stop))

#define HARNESS_FLOATING(x)						\
	_Generic((x), float: 1, double: 1, long double: 1, default: 0)
#define HARNESS_AS_DOUBLE(x)						\
	_Generic((x), float: (x), double: (x), long double: (x),	\
		 unsigned long: (x), unsigned long long: (x),		\
		 default: (intmax_t)(x))

#define HARNESS_CMP(stop, a, op, b, check)				\
	HARNESS_CHECK(stop, HARNESS_FLOATING(a) || HARNESS_FLOATING(b) ? \
		harness_cmp_double(HARNESS_AS_DOUBLE(a), HARNESS_AS_DOUBLE(b), \
				   op, __FILE__, __LINE__, check) :	\
		harness_cmp_int((intmax_t)(a), (intmax_t)(b), op,	\
				__FILE__, __LINE__, check))

#define EXPECT_EQ(a, b)	HARNESS_CMP(false, a, HARNESS_EQ, b, "EXPECT_EQ(" #a ", " #b ")")
#define EXPECT_NE(a, b)	HARNESS_CMP(false, a, HARNESS_NE, b, "EXPECT_NE(" #a ", " #b ")")
#define EXPECT_LT(a, b)	HARNESS_CMP(false, a, HARNESS_LT, b, "EXPECT_LT(" #a ", " #b ")")
#define EXPECT_LE(a, b)	HARNESS_CMP(false, a, HARNESS_LE, b, "EXPECT_LE(" #a ", " #b ")")
#define EXPECT_GT(a, b)	HARNESS_CMP(false, a, HARNESS_GT, b, "EXPECT_GT(" #a ", " #b ")")
#define EXPECT_GE(a, b)	HARNESS_CMP(false, a, HARNESS_GE, b, "EXPECT_GE(" #a ", " #b ")")
#define ASSERT_EQ(a, b)	HARNESS_CMP(true, a, HARNESS_EQ, b, "ASSERT_EQ(" #a ", " #b ")")
#define ASSERT_NE(a, b)	HARNESS_CMP(true, a, HARNESS_NE, b, "ASSERT_NE(" #a ", " #b ")")
#define ASSERT_LT(a, b)	HARNESS_CMP(true, a, HARNESS_LT, b, "ASSERT_LT(" #a ", " #b ")")
#define ASSERT_LE(a, b)	HARNESS_CMP(true, a, HARNESS_LE, b, "ASSERT_LE(" #a ", " #b ")")
#define ASSERT_GT(a, b)	HARNESS_CMP(true, a, HARNESS_GT, b, "ASSERT_GT(" #a ", " #b ")")
#define ASSERT_GE(a, b)	HARNESS_CMP(true, a, HARNESS_GE, b, "ASSERT_GE(" #a ", " #b ")")

#define EXPECT_TRUE(c)							\
	HARNESS_CHECK(false, harness_true(!!(c), __FILE__, __LINE__,	\
					  "EXPECT_TRUE(" #c ")"))
#define ASSERT_TRUE(c)							\
	HARNESS_CHECK(true, harness_true(!!(c), __FILE__, __LINE__,	\
					 "ASSERT_TRUE(" #c ")"))
#define EXPECT_FALSE(c)							\
	HARNESS_CHECK(false, harness_true(!(c), __FILE__, __LINE__,	\
					  "EXPECT_FALSE(" #c ")"))
#define ASSERT_FALSE(c)							\
	HARNESS_CHECK(true, harness_true(!(c), __FILE__, __LINE__,	\
					 "ASSERT_FALSE(" #c ")"))

#define EXPECT_STREQ(a, b)						\
	HARNESS_CHECK(false, harness_streq(a, b, __FILE__, __LINE__,	\
					   "EXPECT_STREQ(" #a ", " #b ")"))
#define ASSERT_STREQ(a, b)						\
	HARNESS_CHECK(true, harness_streq(a, b, __FILE__, __LINE__,	\
					  "ASSERT_STREQ(" #a ", " #b ")"))

/* --- running them --------------------------------------------------------- */

static inline bool harness_selected(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return true;
	return false;
}

/* Run the tests the arguments select, each in a child; -l: list them. */
static inline int harness_main(int argc, char **argv)
{
	bool list = argc > 1 && !strcmp(argv[1], "-l");
	unsigned int i;
	int status;
	pid_t pid;

	if (list) {
		argc--;
		argv++;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < harness_count; i++) {
		struct harness_test *t = harness_tests[i];

		if (!harness_selected(t->name, argc, argv))
			continue;
		if (list) {
			printf("%s\n", t->name);
			continue;
		}
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("harness: fork");
			return 1;
		}
		if (!pid) {
			alarm(HARNESS_TIMEOUT);
			t->run(t);
			fflush(stdout);
			_exit(t->failed ? 1 : 0);
		}
		while (waitpid(pid, &status, 0) < 0)
			;
		if (WIFEXITED(status) &&
		    WEXITSTATUS(status) == HARNESS_EXIT_SKIP)
			harness_skip(t->name, "see above");
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			harness_result(false, t->name, "still running after %d s",
				       HARNESS_TIMEOUT);
		else if (WIFSIGNALED(status))
			harness_result(false, t->name, "killed by signal %d (%s)",
				       WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
		else
			harness_result(WIFEXITED(status) &&
				       !WEXITSTATUS(status), t->name, NULL);
	}
	return list ? 0 : harness_summary();
}

#define TEST_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		return harness_main(argc, argv);			\
	}

#endif /* MAGNET_TEST_HARNESS_H */

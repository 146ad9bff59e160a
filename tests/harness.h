/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test harness of magnet's C test programs, after the kernel's
 * kselftest_harness.h: tests declared with TEST() or, sharing a set-up
 * and tear-down, FIXTURE()/FIXTURE_SETUP()/FIXTURE_TEARDOWN()/TEST_F();
 * ASSERT_*() ends a test at the first failure, EXPECT_*() records it and
 * goes on; SKIP() ends it as skipped when a precondition is missing. Each
 * test runs in a child process of its own, so a crash or an exit fails
 * that test alone, and leaks nothing into the next.
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
 * tests whose names contain one of them.
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

struct harness_test {
	const char *name;
	void (*run)(struct harness_test *t);
	int failed;		/* EXPECT failures so far (in the child) */
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

#define TEST(name)							\
	static void harness_fn_##name(struct harness_test *_t);	\
	static struct harness_test harness_t_##name = {			\
		#name, harness_fn_##name, 0 };				\
	static void __attribute__((constructor))			\
	harness_reg_##name(void)					\
	{								\
		harness_register(&harness_t_##name);			\
	}								\
	static void harness_fn_##name(struct harness_test *_t __attribute__((unused)))

/* Fixtures: FIXTURE(f) { members }; FIXTURE_SETUP(f) and
 * FIXTURE_TEARDOWN(f) get `self`; TEST_F(f, name) runs between them.
 */
#define FIXTURE(f)	struct harness_fixture_##f
#define FIXTURE_SETUP(f)						\
	static void harness_setup_##f(struct harness_test *_t,		\
				      struct harness_fixture_##f *self)
#define FIXTURE_TEARDOWN(f)						\
	static void harness_teardown_##f(struct harness_test *_t,	\
					 struct harness_fixture_##f *self)
#define TEST_F(f, name)							\
	static void harness_body_##f##_##name(struct harness_test *_t,	\
					struct harness_fixture_##f *self); \
	TEST(f##_##name)						\
	{								\
		struct harness_fixture_##f self;			\
		memset(&self, 0, sizeof(self));				\
		harness_setup_##f(_t, &self);				\
		harness_body_##f##_##name(_t, &self);			\
		harness_teardown_##f(_t, &self);			\
	}								\
	static void harness_body_##f##_##name(struct harness_test *_t,	\
					struct harness_fixture_##f *self)

#define HARNESS_FAIL(stop, ...) do {					\
		harness_note(__FILE__, __LINE__, __VA_ARGS__);		\
		_t->failed++;						\
		if (stop)						\
			exit(1);					\
	} while (0)

#define HARNESS_CMP(stop, a, op, b, name) do {				\
		intmax_t _a = (intmax_t)(a), _b = (intmax_t)(b);	\
		if (!(_a op _b))					\
			HARNESS_FAIL(stop, "%s(%s, %s): %jd vs %jd",	\
				     name, #a, #b, _a, _b);		\
	} while (0)

#define EXPECT_EQ(a, b)	HARNESS_CMP(false, a, ==, b, "EXPECT_EQ")
#define EXPECT_NE(a, b)	HARNESS_CMP(false, a, !=, b, "EXPECT_NE")
#define EXPECT_LT(a, b)	HARNESS_CMP(false, a, <, b, "EXPECT_LT")
#define EXPECT_LE(a, b)	HARNESS_CMP(false, a, <=, b, "EXPECT_LE")
#define EXPECT_GT(a, b)	HARNESS_CMP(false, a, >, b, "EXPECT_GT")
#define EXPECT_GE(a, b)	HARNESS_CMP(false, a, >=, b, "EXPECT_GE")
#define ASSERT_EQ(a, b)	HARNESS_CMP(true, a, ==, b, "ASSERT_EQ")
#define ASSERT_NE(a, b)	HARNESS_CMP(true, a, !=, b, "ASSERT_NE")
#define ASSERT_LT(a, b)	HARNESS_CMP(true, a, <, b, "ASSERT_LT")
#define ASSERT_LE(a, b)	HARNESS_CMP(true, a, <=, b, "ASSERT_LE")
#define ASSERT_GT(a, b)	HARNESS_CMP(true, a, >, b, "ASSERT_GT")
#define ASSERT_GE(a, b)	HARNESS_CMP(true, a, >=, b, "ASSERT_GE")

#define EXPECT_TRUE(c) do {						\
		if (!(c))						\
			HARNESS_FAIL(false, "EXPECT_TRUE(%s)", #c);	\
	} while (0)
#define ASSERT_TRUE(c) do {						\
		if (!(c))						\
			HARNESS_FAIL(true, "ASSERT_TRUE(%s)", #c);	\
	} while (0)
#define EXPECT_FALSE(c)	EXPECT_TRUE(!(c))
#define ASSERT_FALSE(c)	ASSERT_TRUE(!(c))

#define HARNESS_STR(stop, a, b, name) do {				\
		const char *_a = (a), *_b = (b);			\
		if (!_a || !_b || strcmp(_a, _b))			\
			HARNESS_FAIL(stop, "%s(%s, %s): \"%s\" vs \"%s\"", \
				     name, #a, #b, _a ? _a : "(null)",	\
				     _b ? _b : "(null)");		\
	} while (0)
#define EXPECT_STREQ(a, b)	HARNESS_STR(false, a, b, "EXPECT_STREQ")
#define ASSERT_STREQ(a, b)	HARNESS_STR(true, a, b, "ASSERT_STREQ")

/* End the test as skipped: SKIP("no %s here", what). */
#define SKIP(...) do {							\
		printf("#   skipped: ");				\
		printf(__VA_ARGS__);					\
		putchar('\n');						\
		fflush(stdout);						\
		exit(HARNESS_EXIT_SKIP);				\
	} while (0)

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

static inline int harness_main(int argc, char **argv)
{
	unsigned int i;
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < harness_count; i++) {
		struct harness_test *t = harness_tests[i];

		if (!harness_selected(t->name, argc, argv))
			continue;
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("harness: fork");
			return 1;
		}
		if (!pid) {
			t->run(t);
			fflush(stdout);
			_exit(t->failed ? 1 : 0);
		}
		while (waitpid(pid, &status, 0) < 0)
			;
		if (WIFEXITED(status) &&
		    WEXITSTATUS(status) == HARNESS_EXIT_SKIP)
			harness_skip(t->name, "see above");
		else if (WIFSIGNALED(status))
			harness_result(false, t->name, "killed by signal %d (%s)",
				       WTERMSIG(status),
				       strsignal(WTERMSIG(status)));
		else
			harness_result(WIFEXITED(status) &&
				       !WEXITSTATUS(status), t->name, NULL);
	}
	return harness_summary();
}

#define TEST_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		return harness_main(argc, argv);			\
	}

#endif /* MAGNET_TEST_HARNESS_H */

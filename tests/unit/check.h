/*
 * check.h - the host-only unit tests' harness, TAP output with named cases.
 *
 * A test program is a list of cases:
 *
 *     TEST(parses_sizes) { CHECK(parse_size("4k") == 4096, "4k"); }
 *     TEST_MAIN()
 *
 * Every CHECK is one TAP test point, "ok N - case: what" or "not ok N - case:
 * what" with the file and line; SKIP(why) is "ok N - case # SKIP why" and
 * ends the case. The plan "1..N" comes last. `prog --run=NAME` (or a prefix,
 * or several --run) runs only those cases; `prog --list` names them. The
 * exit status is 1 when a check failed, 0 otherwise. tests/run reads this.
 */
#ifndef CRASHLAB_TESTS_UNIT_CHECK_H
#define CRASHLAB_TESTS_UNIT_CHECK_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

static struct test_case test_cases[256];
static int test_ncases, test_points, test_failed;
static const char *test_current = "";
static jmp_buf test_skip_jmp;

static inline void test_register(const char *name, void (*fn)(void))
{
	if (test_ncases < (int)(sizeof(test_cases) / sizeof(test_cases[0])))
		test_cases[test_ncases++] = (struct test_case){ name, fn };
}

#define TEST(name)                                                                       \
	static void test_##name(void);                                                   \
	__attribute__((constructor)) static void test_register_##name(void)              \
	{                                                                                \
		test_register(#name, test_##name);                                       \
	}                                                                                \
	static void test_##name(void)

#define CHECK(cond, ...)                                                                      \
	do {                                                                                  \
		int check_ok_ = !!(cond);                                                     \
		test_points++;                                                                \
		if (!check_ok_)                                                               \
			test_failed++;                                                        \
		printf("%sok %d - %s: ", check_ok_ ? "" : "not ", test_points, test_current); \
		printf(__VA_ARGS__);                                                          \
		if (!check_ok_)                                                               \
			printf(" (%s:%d)", __FILE__, __LINE__);                               \
		printf("\n");                                                                 \
		fflush(stdout);                                                               \
	} while (0)

/* The case cannot run here (a prerequisite is truly absent): one skip point, the case ends. */
#define SKIP(...)                                                              \
	do {                                                                   \
		test_points++;                                                 \
		printf("ok %d - %s # SKIP ", test_points, test_current);       \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		fflush(stdout);                                                \
		longjmp(test_skip_jmp, 1);                                     \
	} while (0)

static inline int test_selected(const char *name, int argc, char **argv)
{
	int any = 0;
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "--run=", 6))
			continue;
		any = 1;
		if (!strncmp(name, argv[i] + 6, strlen(argv[i] + 6)))
			return 1;
	}
	return !any;
}

static inline int test_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--list")) {
			for (int k = 0; k < test_ncases; k++)
				printf("%s\n", test_cases[k].name);
			return 0;
		}
		if (strncmp(argv[i], "--run=", 6)) {
			fprintf(stderr, "usage: %s [--list] [--run=CASE]...\n", argv[0]);
			return 2;
		}
	}
	int ran = 0;
	for (int k = 0; k < test_ncases; k++) {
		if (!test_selected(test_cases[k].name, argc, argv))
			continue;
		test_current = test_cases[k].name;
		printf("# case %s\n", test_current);
		ran++;
		if (!setjmp(test_skip_jmp))
			test_cases[k].fn();
	}
	if (!ran && argc > 1) {
		fprintf(stderr, "%s: no case matches\n", argv[0]);
		return 2;
	}
	printf("1..%d\n", test_points);
	return test_failed ? 1 : 0;
}

#define TEST_MAIN()                              \
	int main(int argc, char **argv)          \
	{                                        \
		return test_main(argc, argv);    \
	}

#endif

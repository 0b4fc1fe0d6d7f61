/*
 * check.h - the host-only unit tests' tiny harness. Each tests/unit/test-*.c
 * is one program; CHECK prints "ok - ..." or "not ok - ..." (read by
 * tests/run), and check_done() returns the exit status.
 */
#ifndef CRASHLAB_CHECK_H
#define CRASHLAB_CHECK_H

#include <stdio.h>

static int check_failed, check_passed;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		if (cond) {                                                     \
			check_passed++;                                         \
			printf("ok - ");                                        \
		} else {                                                        \
			check_failed++;                                         \
			printf("not ok - %s:%d: ", __FILE__, __LINE__);         \
		}                                                               \
		printf(__VA_ARGS__);                                            \
		printf("\n");                                                   \
		fflush(stdout);                                                 \
	} while (0)

static inline int check_done(void)
{
	return check_failed ? 1 : 0;
}

#endif

/* fuzz.h - shared by the libFuzzer targets in tests/fuzz/: each target
 * feeds its input to one parser of the host tool and checks what the
 * parser promises (round trips, bounds), aborting on a broken promise so
 * the fuzzer keeps the input as a crash. */
#ifndef CRASHLAB_TESTS_FUZZ_H
#define CRASHLAB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, ...)                                                                     \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: broken promise: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                               \
			fputc('\n', stderr);                                                        \
			abort();                                                                    \
		}                                                                                  \
	} while (0)

/* The input as a NUL-terminated string (malloc'd; embedded NULs stay). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif

/*
 * util.h - the small helpers every layer uses, host and guest agent alike
 * (libc only): allocation that cannot fail, a growable string and argv,
 * growable arrays, whole-fd I/O, sizes, hex and percent-decoding, the
 * 64-bit FNV-1a hash, a monotonic clock.
 *
 * Allocation failure is not an error a caller handles: x*alloc print
 * "out of memory" and exit 70, as git's xmalloc does.
 */
#ifndef CRASHLAB_CORE_UTIL_H
#define CRASHLAB_CORE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t n);   /* n bytes and a NUL after them */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);
/* A byte count in words: "64 KiB", "1 MiB" when whole, else "100 bytes". */
void fmt_bytes(uint64_t n, char *buf, size_t len);

/*
 * Growable arrays: ALLOC_GROW(arr, nr, alloc) makes room for nr elements in
 * arr (capacity alloc, both lvalues), growing by half again or to nr.
 *     ALLOC_GROW(v, n + 1, cap); v[n++] = x;
 */
#define ALLOC_GROW(arr, nr, alloc)                                                          \
	do {                                                                                \
		if ((size_t)(nr) > (size_t)(alloc)) {                                       \
			size_t alloc_grow_n_ = (size_t)(alloc) < 8 ? 16 : (size_t)(alloc) * 3 / 2; \
			if (alloc_grow_n_ < (size_t)(nr))                                   \
				alloc_grow_n_ = (size_t)(nr);                               \
			(arr) = xrealloc((arr), alloc_grow_n_ * sizeof(*(arr)));            \
			(alloc) = alloc_grow_n_;                                            \
		}                                                                           \
	} while (0)
/* Append x to arr (count nr, capacity alloc). */
#define ARRAY_PUSH(arr, nr, alloc, x)                \
	do {                                         \
		ALLOC_GROW(arr, (nr) + 1, alloc);    \
		(arr)[(nr)++] = (x);                 \
	} while (0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Growable NUL-terminated buffer. */
struct sbuf {
	char *buf;
	size_t len, cap;
};
#define SBUF_INIT { NULL, 0, 0 }
void sbuf_add(struct sbuf *sb, const void *data, size_t n);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_reset(struct sbuf *sb);
void sbuf_free(struct sbuf *sb);
char *sbuf_detach(struct sbuf *sb);

/* NULL-terminated argv vector. */
struct strvec {
	char **v;
	size_t n, cap;
};
#define STRVEC_INIT { NULL, 0, 0 }
void strvec_push(struct strvec *sv, const char *s);
/* Push every string up to the terminating NULL. */
void strvec_pushl(struct strvec *sv, ...) __attribute__((sentinel));
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_free(struct strvec *sv);
bool strvec_has(const struct strvec *sv, const char *s);
/* Sort the strings bytewise (strcmp). */
void strvec_sort(struct strvec *sv);
/* Shell-quoted one-line rendering, for "rerun by hand" messages. */
char *strvec_join_quoted(const struct strvec *sv);
/* Split a string on spaces as a shell does for plain words: '...' and "..."
 * quote, a backslash outside quotes takes the next character as it is; so
 * it reads back what strvec_join_quoted wrote. */
void strvec_split(struct strvec *sv, const char *s);

/* mkdir -p: -1 and errno (ENOTDIR when path exists and is no directory). */
int mkdir_p(const char *path, mode_t mode);
bool is_dir(const char *path);

/* Whole-fd and whole-file I/O: -1 and errno on failure (retries EINTR and short writes). */
int write_all(int fd, const void *data, size_t n);
/* pwrite all n bytes at off (a write of 0 bytes is ENOSPC). */
int pwrite_all(int fd, const void *data, size_t n, uint64_t off);
/* Are the n bytes at p all zero? */
bool mem_is_zero(const void *p, size_t n);
int read_fd(int fd, struct sbuf *out);
int read_file(const char *path, struct sbuf *out);

/* Parse a size with optional K/M/G suffix (binary). -1 on bad input. */
long long parse_size(const char *s);
/* Monotonic clock in seconds. */
double now_s(void);

/* The value of one hex digit, or -1. */
int hexval(int c);
/* Append s[0..n) to out with every %XX decoded (a malformed %XX stays as is). */
void pct_decode(struct sbuf *out, const char *s, size_t n);
/* 64-bit FNV-1a. */
uint64_t fnv1a64(const void *data, size_t len);

/* Length of the valid UTF-8 sequence of 2 to 4 bytes at s (at most n), or 0. */
size_t utf8_len(const unsigned char *s, size_t n);

/*
 * Bytes that may come from a guest or a stored run, made safe for a
 * terminal: the one escaper every view and message uses. Valid UTF-8 stays
 * as it is; control bytes, invalid bytes, C1 controls and the invisible
 * bidirectional overrides become escapes (\n \t \r \0, \xNN for a byte,
 * \u202e for a code point), so no byte sequence the terminal would act on
 * passes. A name's form (flags 0) escapes '\' too, so it reads back
 * exactly; SBUF_ESC_QUOTED puts it in double quotes with '"' escaped.
 * Prose (a message, a reason) keeps its '\' with SBUF_ESC_PROSE, and
 * multi-line text (fsck output, a console) its newlines and tabs with
 * SBUF_ESC_LINES, a carriage return before a newline dropped;
 * SBUF_ESC_TEXT is both.
 */
enum { SBUF_ESC_QUOTED = 1, SBUF_ESC_PROSE = 2, SBUF_ESC_LINES = 4, SBUF_ESC_TEXT = 6 };
void sbuf_add_escaped(struct sbuf *sb, const void *data, size_t n, unsigned flags);

/* The nearest of the NULL-terminated words to word (Damerau-Levenshtein
 * distance at most 2, or a prefix), for "did you mean ...?"; NULL if none. */
const char *nearest_word(const char *word, const char *const *words);

#endif

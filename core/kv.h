/*
 * kv.h - "key=value\n" text: the format of the guest protocol's requests
 * and replies (SESSION, RESULT, CHECK, STATE headers) and of small cache
 * files. A blank line ends the header: what follows is a body.
 * libc only.
 */
#ifndef CRASHLAB_CORE_KV_H
#define CRASHLAB_CORE_KV_H

#include <stddef.h>

/* The value of key (malloc'd), or NULL when the header has no such line. */
char *kv_get(const char *text, size_t len, const char *key);
/* The value of key as a number (strtod), or dflt. */
double kv_num(const char *text, size_t len, const char *key, double dflt);
/* The value of key as a whole decimal integer in [lo, hi] (an optional
 * '-' then digits, nothing else): 1 with *out set, 0 when the key is absent,
 * -1 when its value is not such a number. Unlike kv_num, a hostile value
 * ("1e300", "-96") can never reach a conversion to an integer type. */
int kv_int(const char *text, size_t len, const char *key, long long lo, long long hi, long long *out);
/* The same for an unsigned 64-bit value (digits only, no sign). */
int kv_u64(const char *text, size_t len, const char *key, unsigned long long *out);
/* The value of key as a finite real number in [lo, hi] (strtod, the whole
 * value): 1 with *out set, 0 when absent, -1 otherwise ("nan", "inf",
 * "1e999", "2x" are refused). */
int kv_real(const char *text, size_t len, const char *key, double lo, double hi, double *out);
/* Where the body starts (just after the blank line), or NULL when there is none. */
const char *kv_body(const char *text, size_t len);

#endif

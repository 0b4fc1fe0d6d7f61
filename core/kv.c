/* kv.c - see kv.h. */
#include "core/kv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

char *kv_get(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		if (le == p)
			break; /* the blank line ends the header */
		if ((size_t)(le - p) > klen && !strncmp(p, key, klen) && p[klen] == '=')
			return xmemdup(p + klen + 1, (size_t)(le - p) - klen - 1);
		p = le + 1;
	}
	return NULL;
}

double kv_num(const char *text, size_t len, const char *key, double dflt)
{
	char *v = kv_get(text, len, key);
	char *end = NULL;
	double d = v ? strtod(v, &end) : dflt;
	if (v && end == v)
		d = dflt;
	free(v);
	return d;
}

int kv_int(const char *text, size_t len, const char *key, long long lo, long long hi, long long *out)
{
	char *v = kv_get(text, len, key);
	if (!v)
		return 0;
	const char *p = v + (v[0] == '-');
	int ok = *p != '\0';
	for (const char *q = p; ok && *q; q++)
		ok = *q >= '0' && *q <= '9';
	long long n = 0;
	if (ok) {
		errno = 0;
		char *end;
		n = strtoll(v, &end, 10);
		ok = !errno && !*end && n >= lo && n <= hi;
	}
	free(v);
	if (!ok)
		return -1;
	*out = n;
	return 1;
}

int kv_u64(const char *text, size_t len, const char *key, unsigned long long *out)
{
	char *v = kv_get(text, len, key);
	if (!v)
		return 0;
	int ok = *v != '\0';
	for (const char *q = v; ok && *q; q++)
		ok = *q >= '0' && *q <= '9';
	unsigned long long n = 0;
	if (ok) {
		errno = 0;
		n = strtoull(v, NULL, 10);
		ok = !errno;
	}
	free(v);
	if (!ok)
		return -1;
	*out = n;
	return 1;
}

int kv_real(const char *text, size_t len, const char *key, double lo, double hi, double *out)
{
	char *v = kv_get(text, len, key);
	if (!v)
		return 0;
	char *end = v;
	double d = *v && !isspace((unsigned char)*v) ? strtod(v, &end) : 0;
	int ok = end != v && !*end && isfinite(d) && d >= lo && d <= hi;
	free(v);
	if (!ok)
		return -1;
	*out = d;
	return 1;
}

const char *kv_body(const char *text, size_t len)
{
	if (len && text[0] == '\n')
		return text + 1;
	for (size_t i = 0; i + 1 < len; i++)
		if (text[i] == '\n' && text[i + 1] == '\n')
			return text + i + 2;
	return NULL;
}

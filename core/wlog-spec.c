/*
 * wlog-spec.c - crash-state specs (wlog.h): parse, normalize, format. The
 * text form names exactly the entries a state applies, so a state is
 * rebuilt from its text alone.
 */
#include "core/wlog.h"
#include "core/wlog-priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


void wlog_spec_free(struct wlog_spec *s)
{
	free(s->add);
	free(s->torn);
	memset(s, 0, sizeof(*s));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_tear(const void *a, const void *b)
{
	const struct wlog_tear *x = a, *y = b;
	if (x->entry != y->entry)
		return x->entry < y->entry ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int wlog_spec_applies(const struct wlog_spec *s, uint64_t i)
{
	if (i < s->prefix)
		return 1;
	size_t lo = 0, hi = s->nadd;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->add[mid] == i)
			return 1;
		if (s->add[mid] < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int wlog_spec_normalize(struct wlog_spec *s, struct errbuf *eb)
{
	if (s->nadd) {
		int sorted = 1; /* as ranges in order give them: no sort needed */
		for (size_t i = 1; i < s->nadd && sorted; i++)
			sorted = s->add[i - 1] <= s->add[i];
		if (!sorted)
			qsort(s->add, s->nadd, sizeof(*s->add), cmp_u64);
		size_t k = 1;
		for (size_t i = 1; i < s->nadd; i++)
			if (s->add[i] != s->add[k - 1])
				s->add[k++] = s->add[i];
		s->nadd = k;
		if (s->add[0] < s->prefix) {
			wlog_seterr(eb, "add index %llu is below prefix %llu", (unsigned long long)s->add[0],
			       (unsigned long long)s->prefix);
			return -1;
		}
	}
	if (s->ntorn) {
		qsort(s->torn, s->ntorn, sizeof(*s->torn), cmp_tear);
		size_t k = 0;
		for (size_t i = 0; i < s->ntorn; i++) {
			struct wlog_tear t = s->torn[i];
			if (t.count == 0)
				continue;
			if (k && s->torn[k - 1].entry == t.entry &&
			    t.start <= s->torn[k - 1].start + s->torn[k - 1].count) {
				struct wlog_tear *p = &s->torn[k - 1];
				uint64_t end = t.start + t.count;
				if (end > p->start + p->count)
					p->count = end - p->start;
				continue;
			}
			s->torn[k++] = t;
		}
		s->ntorn = k;
		for (size_t i = 0; i < s->ntorn; i++) {
			if (s->torn[i].entry < s->prefix || !wlog_spec_applies(s, s->torn[i].entry)) {
				wlog_seterr(eb, "torn entry %llu is not in add", (unsigned long long)s->torn[i].entry);
				return -1;
			}
		}
	}
	return 0;
}

/* A cursor over spec text. */
struct scan {
	const char *p;
	struct errbuf *e;
};

static int scan_num(struct scan *sc, uint64_t *v, const char *what)
{
	const char *p = sc->p;
	if (*p < '0' || *p > '9') {
		int n = 0;
		while (p[n] && p[n] != ' ' && p[n] != '\t' && n < 24)
			n++;
		if (n)
			wlog_seterr(sc->e, "expected a number in %s at '%.*s'", what, n, p);
		else
			wlog_seterr(sc->e, "expected a number in %s", what);
		return -1;
	}
	uint64_t x = 0;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10) {
			wlog_seterr(sc->e, "number too large in %s", what);
			return -1;
		}
		x = x * 10 + d;
		p++;
	}
	*v = x;
	sc->p = p;
	return 0;
}

/* NUM or NUM-NUM (inclusive). */
static int scan_range(struct scan *sc, uint64_t *a, uint64_t *b, const char *what)
{
	if (scan_num(sc, a, what) < 0)
		return -1;
	*b = *a;
	if (*sc->p == '-') {
		sc->p++;
		if (scan_num(sc, b, what) < 0)
			return -1;
		if (*b < *a) {
			wlog_seterr(sc->e, "reversed range %llu-%llu in %s", (unsigned long long)*a,
			       (unsigned long long)*b, what);
			return -1;
		}
	}
	return 0;
}

static int at_end_of_token(const char *p)
{
	return !*p || *p == ' ' || *p == '\t' || *p == '\n';
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 16;
	while (n < need)
		n *= 2;
	void *p = realloc(*arr, n * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = n;
	return 0;
}

/* Add ranges expand to at most this many indices: an epoch of 4 million
 * unflushed writes is far beyond any recording (16 GiB of 4 KiB writes
 * between two flushes), and sorting more costs seconds. */
#define MAX_RANGE_EXPAND (1u << 22)

static int parse_add(struct scan *sc, struct wlog_spec *s, size_t *cap)
{
	for (;;) {
		uint64_t a, b;
		if (scan_range(sc, &a, &b, "add") < 0)
			return -1;
		if (b - a >= MAX_RANGE_EXPAND || s->nadd + (b - a + 1) > MAX_RANGE_EXPAND) {
			wlog_seterr(sc->e, "add list too long");
			return -1;
		}
		if (grow((void **)&s->add, cap, s->nadd + (size_t)(b - a + 1), sizeof(*s->add)) < 0) {
			wlog_seterr(sc->e, "out of memory");
			return -1;
		}
		for (uint64_t x = a;; x++) {
			s->add[s->nadd++] = x;
			if (x == b)
				break;
		}
		if (*sc->p != ',')
			break;
		sc->p++;
	}
	if (!at_end_of_token(sc->p)) {
		wlog_seterr(sc->e, "unexpected '%c' in add", *sc->p);
		return -1;
	}
	return 0;
}

static int parse_torn(struct scan *sc, struct wlog_spec *s, size_t *cap)
{
	for (;;) {
		uint64_t entry;
		if (scan_num(sc, &entry, "torn") < 0)
			return -1;
		if (*sc->p != ':') {
			wlog_seterr(sc->e, "expected ':' after torn entry %llu", (unsigned long long)entry);
			return -1;
		}
		sc->p++;
		for (;;) {
			uint64_t a, b;
			if (scan_range(sc, &a, &b, "torn") < 0)
				return -1;
			if (b == UINT64_MAX) {
				wlog_seterr(sc->e, "number too large in torn");
				return -1;
			}
			if (grow((void **)&s->torn, cap, s->ntorn + 1, sizeof(*s->torn)) < 0) {
				wlog_seterr(sc->e, "out of memory");
				return -1;
			}
			s->torn[s->ntorn++] = (struct wlog_tear){ entry, a, b - a + 1 };
			if (*sc->p != '+')
				break;
			sc->p++;
		}
		if (*sc->p != ',')
			break;
		sc->p++;
	}
	if (!at_end_of_token(sc->p)) {
		wlog_seterr(sc->e, "unexpected '%c' in torn", *sc->p);
		return -1;
	}
	return 0;
}

int wlog_spec_parse(const char *text, struct wlog_spec *s, struct errbuf *eb)
{
	memset(s, 0, sizeof(*s));
	struct scan sc = { text, eb };
	int have_prefix = 0, have_add = 0, have_torn = 0;
	size_t addcap = 0, torncap = 0;
	for (;;) {
		while (*sc.p == ' ' || *sc.p == '\t' || *sc.p == '\n')
			sc.p++;
		if (!*sc.p)
			break;
		const char *key = sc.p;
		size_t klen = 0;
		while (key[klen] && key[klen] != '=' && !at_end_of_token(key + klen))
			klen++;
		if (key[klen] != '=') {
			wlog_seterr(eb, "expected key=value at '%.*s'", (int)(klen > 24 ? 24 : klen), key);
			goto fail;
		}
		sc.p = key + klen + 1;
		if (klen == 6 && !memcmp(key, "prefix", 6)) {
			if (have_prefix++) {
				wlog_seterr(eb, "'prefix' given twice");
				goto fail;
			}
			if (scan_num(&sc, &s->prefix, "prefix") < 0)
				goto fail;
			if (!at_end_of_token(sc.p)) {
				wlog_seterr(eb, "unexpected '%c' in prefix", *sc.p);
				goto fail;
			}
		} else if (klen == 3 && !memcmp(key, "add", 3)) {
			if (have_add++) {
				wlog_seterr(eb, "'add' given twice");
				goto fail;
			}
			if (parse_add(&sc, s, &addcap) < 0)
				goto fail;
		} else if (klen == 4 && !memcmp(key, "torn", 4)) {
			if (have_torn++) {
				wlog_seterr(eb, "'torn' given twice");
				goto fail;
			}
			if (parse_torn(&sc, s, &torncap) < 0)
				goto fail;
		} else {
			wlog_seterr(eb, "unknown key '%.*s'", (int)(klen > 24 ? 24 : klen), key);
			goto fail;
		}
	}
	if (!have_prefix) {
		wlog_seterr(eb, "missing 'prefix='");
		goto fail;
	}
	if (wlog_spec_normalize(s, eb) < 0)
		goto fail;
	return 0;
fail:
	wlog_spec_free(s);
	return -1;
}

/* snprintf-like appender. */
struct out {
	char *buf;
	size_t size, len;
};

static void out_add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_add(struct out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *dst = o->len < o->size ? o->buf + o->len : NULL;
	size_t room = o->len < o->size ? o->size - o->len : 0;
	int n = vsnprintf(dst, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void out_range(struct out *o, uint64_t a, uint64_t b)
{
	if (a == b)
		out_add(o, "%llu", (unsigned long long)a);
	else
		out_add(o, "%llu-%llu", (unsigned long long)a, (unsigned long long)b);
}

int wlog_spec_format(const struct wlog_spec *s, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	if (buf && size)
		buf[0] = 0;
	out_add(&o, "prefix=%llu", (unsigned long long)s->prefix);
	for (size_t i = 0; i < s->nadd;) {
		size_t j = i;
		while (j + 1 < s->nadd && s->add[j + 1] == s->add[j] + 1)
			j++;
		out_add(&o, i ? "," : " add=");
		out_range(&o, s->add[i], s->add[j]);
		i = j + 1;
	}
	for (size_t i = 0; i < s->ntorn; i++) {
		const struct wlog_tear *t = &s->torn[i];
		if (i == 0 || s->torn[i - 1].entry != t->entry)
			out_add(&o, "%s%llu:", i ? "," : " torn=", (unsigned long long)t->entry);
		else
			out_add(&o, "+");
		out_range(&o, t->start, t->start + t->count - 1);
	}
	return o.len > INT32_MAX ? INT32_MAX : (int)o.len;
}


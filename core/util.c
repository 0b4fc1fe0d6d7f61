/* util.c - see util.h. */
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Noreturn void oom(size_t n)
{
	fprintf(stderr, "crashlab: fatal: out of memory allocating %zu bytes\n", n);
	exit(EXIT_SOFTWARE);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	return xmemdup(s, strnlen(s, n));
}

void fmt_bytes(uint64_t n, char *buf, size_t len)
{
	if (n >= 1024 * 1024 && n % (1024 * 1024) == 0)
		snprintf(buf, len, "%" PRIu64 " MiB", n / (1024 * 1024));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 " KiB", n / 1024);
	else
		snprintf(buf, len, "%" PRIu64 " byte%s", n, n == 1 ? "" : "s");
}

void *xmemdup(const void *p, size_t n)
{
	char *r = xmalloc(n + 1);
	if (n)
		memcpy(r, p, n);
	r[n] = '\0';
	return r;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *p;
	if (vasprintf(&p, fmt, ap) < 0)
		oom(strlen(fmt));
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 256;
		while (cap < sb->len + n + 1)
			cap *= 2;
		sb->buf = xrealloc(sb->buf, cap);
		sb->cap = cap;
	}
	if (n)
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	sbuf_adds(sb, p);
	free(p);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sbuf_free(struct sbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

char *sbuf_detach(struct sbuf *sb)
{
	if (!sb->buf)
		sbuf_add(sb, "", 0);
	char *p = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void strvec_push(struct strvec *sv, const char *s)
{
	ALLOC_GROW(sv->v, sv->n + 2, sv->cap);
	sv->v[sv->n++] = xstrdup(s);
	sv->v[sv->n] = NULL;
}

void strvec_pushl(struct strvec *sv, ...)
{
	va_list ap;
	va_start(ap, sv);
	for (const char *s; (s = va_arg(ap, const char *));)
		strvec_push(sv, s);
	va_end(ap);
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *p = xvasprintf(fmt, ap);
	va_end(ap);
	strvec_push(sv, p);
	free(p);
}

void strvec_free(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

bool strvec_has(const struct strvec *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (!strcmp(sv->v[i], s))
			return true;
	return false;
}

char *strvec_join_quoted(const struct strvec *sv)
{
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; i < sv->n; i++) {
		const char *a = sv->v[i];
		if (i)
			sbuf_adds(&sb, " ");
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+/.,:@%") == strlen(a)) {
			sbuf_adds(&sb, a);
			continue;
		}
		sbuf_adds(&sb, "'");
		for (; *a; a++) {
			if (*a == '\'')
				sbuf_adds(&sb, "'\\''");
			else
				sbuf_add(&sb, a, 1);
		}
		sbuf_adds(&sb, "'");
	}
	return sbuf_detach(&sb);
}

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strvec_sort(struct strvec *sv)
{
	if (sv->n)
		qsort(sv->v, sv->n, sizeof(*sv->v), strp_cmp);
}

void strvec_split(struct strvec *sv, const char *s)
{
	struct sbuf word = SBUF_INIT;
	bool have = false;
	char q = 0;
	for (; *s; s++) {
		if (q) {
			if (*s == q)
				q = 0;
			else
				sbuf_add(&word, s, 1);
		} else if (*s == '\'' || *s == '"') {
			q = *s;
			have = true;
		} else if (*s == '\\' && s[1]) {
			sbuf_add(&word, ++s, 1);
			have = true;
		} else if (*s == ' ' || *s == '\t') {
			if (have) {
				strvec_push(sv, word.buf ? word.buf : "");
				sbuf_reset(&word);
				have = false;
			}
		} else {
			sbuf_add(&word, s, 1);
			have = true;
		}
	}
	if (have)
		strvec_push(sv, word.buf ? word.buf : "");
	sbuf_free(&word);
}

int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) { /* a non-blocking fd: wait until it takes more */
				struct pollfd pf = { fd, POLLOUT, 0 };
				poll(&pf, 1, 100);
				continue;
			}
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int pwrite_all(int fd, const void *data, size_t n, uint64_t off)
{
	const char *p = data;
	while (n) {
		ssize_t w = pwrite(fd, p, n, (off_t)off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (w == 0) {
			errno = ENOSPC;
			return -1;
		}
		p += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

bool mem_is_zero(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

int read_fd(int fd, struct sbuf *out)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		sbuf_add(out, buf, (size_t)n);
	}
	if (!out->buf)
		sbuf_add(out, "", 0);
	return 0;
}

int read_file(const char *path, struct sbuf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = read_fd(fd, out);
	int e = errno;
	close(fd);
	errno = e;
	return r;
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long parse_size(const char *s)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: return -1;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	if (v > (unsigned long long)LLONG_MAX >> shift)
		return -1;
	return (long long)(v << shift);
}

int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void pct_decode(struct sbuf *out, const char *s, size_t n)
{
	sbuf_add(out, "", 0);
	for (size_t i = 0; i < n; i++) {
		int h, l;
		if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 && (l = hexval(s[i + 2])) >= 0) {
			unsigned char c = (unsigned char)(h * 16 + l);
			sbuf_add(out, &c, 1);
			i += 2;
		} else {
			sbuf_add(out, &s[i], 1);
		}
	}
}

uint64_t fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent swaps). */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t d[65][65];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *nearest_word(const char *word, const char *const *words)
{
	const char *best = NULL;
	size_t best_d = 3;
	size_t wl = strlen(word);
	for (size_t i = 0; words[i]; i++) {
		size_t d = edit_distance(word, words[i]);
		if (wl >= 2 && !strncmp(words[i], word, wl) && d > 1)
			d = 2; /* a prefix: "sh" -> "show" */
		if (d < best_d && d < strlen(words[i])) {
			best_d = d;
			best = words[i];
		}
	}
	return best;
}

size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (n == 0)
		return 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* The code point of a valid sequence of len bytes. */
static uint32_t utf8_cp(const unsigned char *s, size_t len)
{
	uint32_t cp = s[0] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
	for (size_t i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* C1 controls, and the marks and overrides that reorder or hide text. */
static bool invisible_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

void sbuf_add_escaped(struct sbuf *sb, const void *data, size_t n, unsigned flags)
{
	const unsigned char *s = data;
	bool quoted = flags & SBUF_ESC_QUOTED, prose = flags & SBUF_ESC_PROSE, lines = flags & SBUF_ESC_LINES;
	if (quoted)
		sbuf_add(sb, "\"", 1);
	if (!sb->buf)
		sbuf_add(sb, "", 0);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c >= 0x80) {
			size_t l = utf8_len(s + i, n - i);
			if (!l) {
				sbuf_addf(sb, "\\x%02x", c);
			} else if (invisible_control(utf8_cp(s + i, l))) {
				sbuf_addf(sb, "\\u%04x", (unsigned)utf8_cp(s + i, l));
				i += l - 1;
			} else {
				sbuf_add(sb, s + i, l);
				i += l - 1;
			}
		} else if ((c == '\n' || c == '\t') && lines) {
			sbuf_add(sb, &c, 1);
		} else if (c == '\r' && lines && i + 1 < n && s[i + 1] == '\n') {
			/* a serial console's line end */
		} else if (c == '\n') {
			sbuf_adds(sb, "\\n");
		} else if (c == '\t') {
			sbuf_adds(sb, "\\t");
		} else if (c == '\r') {
			sbuf_adds(sb, "\\r");
		} else if (c == '\0' && !(i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7')) {
			sbuf_adds(sb, "\\0");
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addf(sb, "\\x%02x", c);
		} else if ((c == '\\' && !prose) || (quoted && c == '"')) {
			sbuf_addf(sb, "\\%c", c);
		} else {
			sbuf_add(sb, &c, 1);
		}
	}
	if (quoted)
		sbuf_add(sb, "\"", 1);
}

bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	int r = mkdir(p, mode);
	int e = errno;
	free(p);
	if (r < 0 && e != EEXIST) {
		errno = e;
		return -1;
	}
	if (r < 0 && !is_dir(path)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

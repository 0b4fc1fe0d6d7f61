/*
 * wlog.c - read a dm-log-writes format write log and rebuild crash states
 * from it. libc only (linked into the static guest agent).
 *
 * Method. The log is the sequence of requests that reached the virtual
 * disk, in the order the block driver completed them: writes (with their
 * data), discards, flushes and, in logs made by Linux, marks. The disk after
 * a power cut is the base image plus some of those requests applied in log
 * order; which ones is a "spec" (see wlog.h). Everything a flush follows was
 * on stable storage when the flush completed; writes after the last flush
 * before the cut were only in the volatile cache, so any subset of them may
 * have reached the media, and a multi-sector write may have reached it in
 * part (torn, at 512-byte sector granularity).
 *
 * The superblock's nr_entries is rewritten by QEMU at each flush (and every
 * log-super-update-interval entries), so it vouches for a prefix of the log:
 * those entries are complete or the log is corrupt, and an error there is
 * fatal. Beyond it is the tail that QEMU appended until it was killed: the
 * tail is read while entries are valid and complete; the first invalid,
 * truncated or all-zero header (unwritten or padded space) ends the log.
 *
 * wlog_open reads only the 32-byte headers, through a small read window, and
 * skips over the data, so a scan of a log of hundreds of MiB costs a few
 * syscalls per entry. wlog_apply copies each applied write with one pread
 * and one pwrite (per 8 MiB) through one reused buffer.
 */
#include "core/wlog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_MAX (8u << 20)    /* largest single pread/pwrite of wlog_apply */
#define WINDOW 32768            /* read window of the header scan */

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void setwhy(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setwhy(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

/* Every failure here is a log or spec that is not what it must be: 65. */
static void seterr(struct errbuf *eb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(struct errbuf *eb, const char *fmt, ...)
{
	if (!eb)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(eb->msg, sizeof(eb->msg), fmt, ap);
	va_end(ap);
	eb->code = EXIT_DATAERR;
}

/* pread exactly n bytes; a short file is EIO. */
static int pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	unsigned char *p = buf;
	while (n) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

static int pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	const unsigned char *p = buf;
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

/* Bytes readable at offset 0..size of fd; works for block devices too. */
static int file_size(int fd, uint64_t *size)
{
	off_t end = lseek(fd, 0, SEEK_END);
	if (end >= 0) {
		*size = (uint64_t)end;
		return 0;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	*size = (uint64_t)st.st_size;
	return 0;
}

int wlog_read_committed(int fd, uint64_t *nr_entries)
{
	unsigned char b[28];
	size_t got = 0;
	while (got < sizeof(b)) {
		ssize_t r = pread(fd, b + got, sizeof(b) - got, (off_t)got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (all_zero(b, got)) {
		/* QEMU writes the superblock at the first flush; until then it is a hole. */
		*nr_entries = 0;
		return 0;
	}
	if (got < sizeof(b) || get64(b) != WLOG_MAGIC || get64(b + 8) != WLOG_VERSION) {
		errno = EINVAL;
		return -1;
	}
	*nr_entries = get64(b + 16);
	return 0;
}

/* A window over the log, so consecutive small entries cost one read. */
struct window {
	unsigned char buf[WINDOW];
	uint64_t off;
	size_t len;
};

/* Copy the n bytes at off (which the caller knows exist) into out. */
static int window_get(struct window *w, int fd, uint64_t off, void *out, size_t n, uint64_t size)
{
	if (off < w->off || off + n > w->off + w->len) {
		uint64_t want = size - off < WINDOW ? size - off : WINDOW;
		if (pread_full(fd, w->buf, (size_t)want, off) < 0)
			return -1;
		w->off = off;
		w->len = (size_t)want;
	}
	memcpy(out, w->buf + (off - w->off), n);
	return 0;
}

/* Validate one header; the bytes the entry takes after its header sector go
 * to *extra, the offset of its data relative to the header to *data_rel.
 * Returns 0, or -1 with the reason in why. */
static int check_entry(uint32_t S, const struct wlog_entry *e, uint64_t *extra, uint64_t *data_rel,
		       char *why, size_t whylen)
{
	const uint64_t lim = (uint64_t)INT64_MAX;
	*extra = 0;
	*data_rel = S;
	if ((e->flags & ~(uint64_t)WLOG_FLAGS_KNOWN) ||
	    (e->flags & (WLOG_MARK | WLOG_DISCARD)) == (WLOG_MARK | WLOG_DISCARD)) {
		setwhy(why, whylen, "invalid flags 0x%llx", (unsigned long long)e->flags);
		return -1;
	}
	if (e->flags & WLOG_MARK) {
		if (e->nr_sectors) {
			setwhy(why, whylen, "mark with %llu sectors", (unsigned long long)e->nr_sectors);
			return -1;
		}
		if (e->data_len <= (uint64_t)S - WLOG_HDR) {
			*data_rel = WLOG_HDR; /* the label shares the header sector */
			return 0;
		}
		if (e->data_len > lim / 2) {
			setwhy(why, whylen, "invalid mark length %llu", (unsigned long long)e->data_len);
			return -1;
		}
		*extra = (e->data_len + S - 1) / S * S;
		return 0;
	}
	if (e->flags == 0 && e->nr_sectors == 0) {
		setwhy(why, whylen, "empty write");
		return -1;
	}
	if (e->sector > lim / S || e->nr_sectors > lim / S - e->sector) {
		setwhy(why, whylen, "sectors %llu+%llu beyond any disk", (unsigned long long)e->sector,
		       (unsigned long long)e->nr_sectors);
		return -1;
	}
	if (!(e->flags & WLOG_DISCARD))
		*extra = e->nr_sectors * S;
	return 0;
}

int wlog_open(struct wlog *l, int fd, struct errbuf *eb)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	uint64_t size;
	if (file_size(fd, &size) < 0) {
		seterr(eb, "cannot read the log: %s", strerror(errno));
		return -1;
	}
	l->file_size = size;
	unsigned char sb[28];
	if (size < sizeof(sb)) {
		seterr(eb, "file too short for a superblock (%llu bytes)", (unsigned long long)size);
		return -1;
	}
	if (pread_full(fd, sb, sizeof(sb), 0) < 0) {
		seterr(eb, "cannot read the log: %s", strerror(errno));
		return -1;
	}
	if (all_zero(sb, sizeof(sb))) {
		l->nosuper = 1;
		l->sectorsize = 512; /* QEMU's default log-sector-size */
	} else {
		uint64_t magic = get64(sb), version = get64(sb + 8);
		uint32_t S = get32(sb + 24);
		if (magic != WLOG_MAGIC) {
			seterr(eb, "bad magic 0x%llx", (unsigned long long)magic);
			return -1;
		}
		if (version != WLOG_VERSION) {
			seterr(eb, "unsupported version %llu", (unsigned long long)version);
			return -1;
		}
		if (S < 512 || S >= WLOG_MAX_SECTORSIZE || (S & (S - 1))) {
			seterr(eb, "invalid sector size %u", S);
			return -1;
		}
		l->sectorsize = S;
		l->committed = get64(sb + 16);
	}
	const uint32_t S = l->sectorsize;
	if (size < S) {
		seterr(eb, "file too short for a superblock (%llu bytes, sector size %u)",
		       (unsigned long long)size, S);
		return -1;
	}

	struct window *w = malloc(sizeof(*w));
	if (!w) {
		seterr(eb, "out of memory");
		return -1;
	}
	w->off = 0;
	w->len = 0;
	uint64_t pos = S;
	char why[120];
	for (;;) {
		size_t i = l->n;
		int vouched = i < l->committed;
		uint64_t avail = size - pos;
		if (avail == 0) {
			if (vouched) {
				seterr(eb, "entry %zu at byte %llu: missing (the superblock counts %llu entries)",
				       i, (unsigned long long)pos, (unsigned long long)l->committed);
				goto fail;
			}
			break;
		}
		struct wlog_entry e = { 0 };
		uint64_t extra = 0, data_rel = S, needs = S;
		int bad = 0, empty = 0;
		why[0] = 0;
		if (avail >= WLOG_HDR) {
			unsigned char h[WLOG_HDR];
			if (window_get(w, fd, pos, h, sizeof(h), size) < 0) {
				seterr(eb, "cannot read the log at byte %llu: %s", (unsigned long long)pos,
				       strerror(errno));
				goto fail;
			}
			empty = all_zero(h, sizeof(h));
			e.sector = get64(h);
			e.nr_sectors = get64(h + 8);
			e.flags = get64(h + 16);
			e.data_len = get64(h + 24);
			if (empty) {
				snprintf(why, sizeof(why), "empty header (all zeros)");
				bad = 1;
			} else if (check_entry(S, &e, &extra, &data_rel, why, sizeof(why)) < 0) {
				bad = 1;
			} else {
				needs = S + extra;
			}
		}
		if (!bad && avail < needs) {
			snprintf(why, sizeof(why), "truncated (needs %llu bytes, file ends after %llu)",
				 (unsigned long long)needs, (unsigned long long)avail);
			bad = 1;
		}
		if (bad) {
			if (vouched) {
				seterr(eb, "entry %zu at byte %llu: %s", i, (unsigned long long)pos, why);
				goto fail;
			}
			/* Zeros after the last entry are unwritten space, not a lost entry. */
			if (!empty) {
				l->dropped = 1;
				l->dropped_at = pos;
				snprintf(l->dropped_why, sizeof(l->dropped_why), "entry %zu at byte %llu: %s", i,
					 (unsigned long long)pos, why);
			}
			break;
		}
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 1024;
			struct wlog_entry *ne = realloc(l->e, cap * sizeof(*ne));
			if (!ne) {
				seterr(eb, "out of memory");
				goto fail;
			}
			l->e = ne;
			l->cap = cap;
		}
		e.offset = pos + data_rel;
		l->e[l->n++] = e;
		pos += needs;
	}
	free(w);
	return 0;
fail:
	free(w);
	wlog_close(l);
	return -1;
}

void wlog_close(struct wlog *l)
{
	free(l->e);
	l->e = NULL;
	l->n = l->cap = 0;
}

uint64_t wlog_data_size(const struct wlog *l, size_t i)
{
	const struct wlog_entry *e = &l->e[i];
	if (e->flags & WLOG_MARK)
		return e->data_len;
	if (e->flags & WLOG_DISCARD)
		return 0;
	return e->nr_sectors * l->sectorsize;
}

int wlog_read_data(const struct wlog *l, size_t i, void *buf)
{
	if (i >= l->n) {
		errno = EINVAL;
		return -1;
	}
	uint64_t n = wlog_data_size(l, i);
	unsigned char *p = buf;
	for (uint64_t done = 0; done < n;) {
		size_t chunk = n - done > COPY_MAX ? COPY_MAX : (size_t)(n - done);
		if (pread_full(l->fd, p + done, chunk, l->e[i].offset + done) < 0)
			return -1;
		done += chunk;
	}
	return 0;
}

void wlog_count(const struct wlog *l, size_t from, size_t to, struct wlog_counts *c)
{
	memset(c, 0, sizeof(*c));
	if (to > l->n)
		to = l->n;
	for (size_t i = from; i < to; i++) {
		const struct wlog_entry *e = &l->e[i];
		c->entries++;
		if (wlog_is_flush(e))
			c->flushes++;
		if (wlog_is_mark(e))
			c->marks++;
		if (e->flags & WLOG_FUA)
			c->fua++;
		if (wlog_is_write(e)) {
			c->writes++;
			c->bytes_written += e->nr_sectors * l->sectorsize;
		}
		if (wlog_is_discard(e)) {
			c->discards++;
			c->bytes_discarded += e->nr_sectors * l->sectorsize;
		}
	}
}

size_t wlog_flush_index(const struct wlog *l, size_t *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (!wlog_is_flush(&l->e[i]))
			continue;
		if (out && k < max)
			out[k] = i;
		k++;
	}
	return k;
}

/* ---- specs ---- */

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
		qsort(s->add, s->nadd, sizeof(*s->add), cmp_u64);
		size_t k = 1;
		for (size_t i = 1; i < s->nadd; i++)
			if (s->add[i] != s->add[k - 1])
				s->add[k++] = s->add[i];
		s->nadd = k;
		if (s->add[0] < s->prefix) {
			seterr(eb, "add index %llu is below prefix %llu", (unsigned long long)s->add[0],
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
				seterr(eb, "torn entry %llu is not in add", (unsigned long long)s->torn[i].entry);
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
			seterr(sc->e, "expected a number in %s at '%.*s'", what, n, p);
		else
			seterr(sc->e, "expected a number in %s", what);
		return -1;
	}
	uint64_t x = 0;
	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');
		if (x > (UINT64_MAX - d) / 10) {
			seterr(sc->e, "number too large in %s", what);
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
			seterr(sc->e, "reversed range %llu-%llu in %s", (unsigned long long)*a,
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

#define MAX_RANGE_EXPAND (1u << 24)  /* add ranges expand to at most this many indices */

static int parse_add(struct scan *sc, struct wlog_spec *s, size_t *cap)
{
	for (;;) {
		uint64_t a, b;
		if (scan_range(sc, &a, &b, "add") < 0)
			return -1;
		if (b - a >= MAX_RANGE_EXPAND || s->nadd + (b - a + 1) > MAX_RANGE_EXPAND) {
			seterr(sc->e, "add list too long");
			return -1;
		}
		if (grow((void **)&s->add, cap, s->nadd + (size_t)(b - a + 1), sizeof(*s->add)) < 0) {
			seterr(sc->e, "out of memory");
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
		seterr(sc->e, "unexpected '%c' in add", *sc->p);
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
			seterr(sc->e, "expected ':' after torn entry %llu", (unsigned long long)entry);
			return -1;
		}
		sc->p++;
		for (;;) {
			uint64_t a, b;
			if (scan_range(sc, &a, &b, "torn") < 0)
				return -1;
			if (b == UINT64_MAX) {
				seterr(sc->e, "number too large in torn");
				return -1;
			}
			if (grow((void **)&s->torn, cap, s->ntorn + 1, sizeof(*s->torn)) < 0) {
				seterr(sc->e, "out of memory");
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
		seterr(sc->e, "unexpected '%c' in torn", *sc->p);
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
			seterr(eb, "expected key=value at '%.*s'", (int)(klen > 24 ? 24 : klen), key);
			goto fail;
		}
		sc.p = key + klen + 1;
		if (klen == 6 && !memcmp(key, "prefix", 6)) {
			if (have_prefix++) {
				seterr(eb, "'prefix' given twice");
				goto fail;
			}
			if (scan_num(&sc, &s->prefix, "prefix") < 0)
				goto fail;
			if (!at_end_of_token(sc.p)) {
				seterr(eb, "unexpected '%c' in prefix", *sc.p);
				goto fail;
			}
		} else if (klen == 3 && !memcmp(key, "add", 3)) {
			if (have_add++) {
				seterr(eb, "'add' given twice");
				goto fail;
			}
			if (parse_add(&sc, s, &addcap) < 0)
				goto fail;
		} else if (klen == 4 && !memcmp(key, "torn", 4)) {
			if (have_torn++) {
				seterr(eb, "'torn' given twice");
				goto fail;
			}
			if (parse_torn(&sc, s, &torncap) < 0)
				goto fail;
		} else {
			seterr(eb, "unknown key '%.*s'", (int)(klen > 24 ? 24 : klen), key);
			goto fail;
		}
	}
	if (!have_prefix) {
		seterr(eb, "missing 'prefix='");
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

/* ---- replay ---- */

struct copier {
	const struct wlog *l;
	int dev_fd;
	unsigned char *buf;
	size_t cap;
	unsigned char *zeros;
	size_t zcap;
	uint64_t written;
	struct errbuf *e;
};

static int copy_range(struct copier *c, size_t i, uint64_t logoff, uint64_t devoff, uint64_t len)
{
	size_t want = len > COPY_MAX ? COPY_MAX : (size_t)len;
	if (want > c->cap) {
		unsigned char *nb = realloc(c->buf, want);
		if (!nb) {
			seterr(c->e, "out of memory");
			return -1;
		}
		c->buf = nb;
		c->cap = want;
	}
	for (uint64_t done = 0; done < len;) {
		size_t chunk = len - done > COPY_MAX ? COPY_MAX : (size_t)(len - done);
		if (pread_full(c->l->fd, c->buf, chunk, logoff + done) < 0) {
			seterr(c->e, "cannot read entry %zu from the log: %s", i, strerror(errno));
			return -1;
		}
		if (pwrite_full(c->dev_fd, c->buf, chunk, devoff + done) < 0) {
			seterr(c->e, "cannot write entry %zu at byte %llu: %s", i,
			       (unsigned long long)(devoff + done), strerror(errno));
			return -1;
		}
		done += chunk;
		c->written += chunk;
	}
	return 0;
}

static int zero_range(struct copier *c, size_t i, uint64_t devoff, uint64_t len)
{
	const size_t zmax = 1u << 20;
	size_t want = len > zmax ? zmax : (size_t)len;
	if (want > c->zcap) {
		free(c->zeros);
		c->zeros = calloc(1, want);
		c->zcap = c->zeros ? want : 0;
		if (!c->zeros) {
			seterr(c->e, "out of memory");
			return -1;
		}
	}
	for (uint64_t done = 0; done < len;) {
		size_t chunk = len - done > c->zcap ? c->zcap : (size_t)(len - done);
		if (pwrite_full(c->dev_fd, c->zeros, chunk, devoff + done) < 0) {
			seterr(c->e, "cannot write entry %zu at byte %llu: %s", i,
			       (unsigned long long)(devoff + done), strerror(errno));
			return -1;
		}
		done += chunk;
		c->written += chunk;
	}
	return 0;
}

/* Check s against l before anything is written. */
static int check_spec(const struct wlog *l, const struct wlog_spec *s, struct errbuf *eb)
{
	if (s->prefix > l->n) {
		seterr(eb, "prefix %llu beyond the log's %zu entries", (unsigned long long)s->prefix, l->n);
		return -1;
	}
	for (size_t j = 0; j < s->nadd; j++) {
		if (s->add[j] >= l->n) {
			seterr(eb, "entry %llu beyond the log's %zu entries", (unsigned long long)s->add[j],
			       l->n);
			return -1;
		}
		if (s->add[j] < s->prefix || (j && s->add[j] <= s->add[j - 1])) {
			seterr(eb, "add index %llu out of order", (unsigned long long)s->add[j]);
			return -1;
		}
	}
	for (size_t j = 0; j < s->ntorn; j++) {
		const struct wlog_tear *t = &s->torn[j];
		if (t->entry < s->prefix || !wlog_spec_applies(s, t->entry)) {
			seterr(eb, "torn entry %llu is not in add", (unsigned long long)t->entry);
			return -1;
		}
		if (j && (t->entry < s->torn[j - 1].entry ||
			  (t->entry == s->torn[j - 1].entry &&
			   t->start < s->torn[j - 1].start + s->torn[j - 1].count))) {
			seterr(eb, "torn sectors of entry %llu out of order", (unsigned long long)t->entry);
			return -1;
		}
		const struct wlog_entry *e = &l->e[t->entry];
		if (!wlog_is_write(e)) {
			seterr(eb, "entry %llu is not a write and cannot be torn", (unsigned long long)t->entry);
			return -1;
		}
		uint64_t m = e->nr_sectors * l->sectorsize / WLOG_SECTOR;
		if (t->count == 0 || t->start >= m || t->count > m - t->start) {
			seterr(eb, "torn sectors %llu-%llu of entry %llu beyond its %llu sectors",
			       (unsigned long long)t->start, (unsigned long long)(t->start + t->count - 1),
			       (unsigned long long)t->entry, (unsigned long long)m);
			return -1;
		}
	}
	return 0;
}

static int apply_one(struct copier *c, size_t i, const struct wlog_tear *torn, size_t ntorn)
{
	const struct wlog_entry *e = &c->l->e[i];
	const uint64_t S = c->l->sectorsize;
	if (wlog_is_discard(e))
		return zero_range(c, i, e->sector * S, e->nr_sectors * S);
	if (!wlog_is_write(e))
		return 0;
	if (!ntorn)
		return copy_range(c, i, e->offset, e->sector * S, e->nr_sectors * S);
	for (size_t k = 0; k < ntorn; k++) {
		uint64_t off = torn[k].start * WLOG_SECTOR, len = torn[k].count * WLOG_SECTOR;
		if (copy_range(c, i, e->offset + off, e->sector * S + off, len) < 0)
			return -1;
	}
	return 0;
}

int wlog_apply(const struct wlog *l, const struct wlog_spec *s, int dev_fd, uint64_t *bytes_written,
	       struct errbuf *eb)
{
	if (bytes_written)
		*bytes_written = 0;
	if (check_spec(l, s, eb) < 0)
		return -1;
	struct copier c = { .l = l, .dev_fd = dev_fd, .e = eb };
	int rc = 0;
	for (uint64_t i = 0; i < s->prefix && rc == 0; i++)
		rc = apply_one(&c, (size_t)i, NULL, 0);
	size_t t = 0;
	for (size_t j = 0; j < s->nadd && rc == 0; j++) {
		uint64_t i = s->add[j];
		while (t < s->ntorn && s->torn[t].entry < i)
			t++;
		size_t t0 = t;
		while (t < s->ntorn && s->torn[t].entry == i)
			t++;
		rc = apply_one(&c, (size_t)i, s->torn + t0, t - t0);
	}
	free(c.buf);
	free(c.zeros);
	if (bytes_written)
		*bytes_written = c.written;
	return rc;
}

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
 * This file reads the log; wlog-spec.c reads and writes state specs, and
 * wlog-apply.c rebuilds a state from the log and a spec.
 *
 * wlog_open reads only the 32-byte headers, through a small read window, and
 * skips over the data, so a scan of a log of hundreds of MiB costs a few
 * syscalls per entry. wlog_apply copies each applied write with one pread
 * and one pwrite (per 8 MiB) through one reused buffer.
 */
#include "core/wlog.h"
#include "core/wlog-priv.h"
#include "core/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void setwhy(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void setwhy(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

/* Every failure here is a log or spec that is not what it must be: 65. */
void wlog_seterr(struct errbuf *eb, const char *fmt, ...)
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
int wlog_pread_full(int fd, void *buf, size_t n, uint64_t off)
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

int wlog_read_super(int fd, uint64_t *nr_entries, uint32_t *sectorsize)
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
	*nr_entries = 0;
	if (sectorsize)
		*sectorsize = 0;
	if (mem_is_zero(b, got))
		return 0; /* QEMU writes the superblock at the first flush; until then it is a hole. */
	if (got < sizeof(b) || get64(b) != WLOG_MAGIC || get64(b + 8) != WLOG_VERSION) {
		errno = EINVAL;
		return -1;
	}
	*nr_entries = get64(b + 16);
	if (sectorsize)
		*sectorsize = get32(b + 24);
	return 0;
}

int wlog_read_committed(int fd, uint64_t *nr_entries)
{
	return wlog_read_super(fd, nr_entries, NULL);
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
		if (wlog_pread_full(fd, w->buf, (size_t)want, off) < 0)
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

int wlog_follow(int fd, struct wlog_follow *f)
{
	if (!f->sectorsize) {
		uint64_t n;
		uint32_t S;
		if (wlog_read_super(fd, &n, &S) < 0)
			return -1;
		if (!S)
			return 0; /* no flush logged yet */
		if (S < 512 || S >= WLOG_MAX_SECTORSIZE || (S & (S - 1))) {
			errno = EINVAL;
			return -1;
		}
		f->sectorsize = S;
		f->pos = S;
	}
	const uint32_t S = f->sectorsize;
	uint64_t size;
	if (file_size(fd, &size) < 0)
		return -1;
	while (f->pos <= size && size - f->pos >= WLOG_HDR) {
		unsigned char h[WLOG_HDR];
		if (wlog_pread_full(fd, h, sizeof(h), f->pos) < 0)
			return -1;
		if (mem_is_zero(h, sizeof(h)))
			break; /* not written yet */
		struct wlog_entry e = { .sector = get64(h), .nr_sectors = get64(h + 8), .flags = get64(h + 16),
					.data_len = get64(h + 24) };
		uint64_t extra, data_rel;
		char why[120];
		/* An invalid header is one being written: read it again next time. */
		if (check_entry(S, &e, &extra, &data_rel, why, sizeof(why)) < 0 || size - f->pos < S + extra)
			break;
		f->pos += S + extra;
		f->entries++;
		if (wlog_is_flush(&e))
			f->flushed = f->entries;
	}
	return 0;
}

int wlog_slice(int fd, const struct wlog_follow *from, const struct wlog_follow *to, uint64_t committed,
	       uint64_t shift, uint64_t limit, int out, struct errbuf *eb)
{
	uint32_t S = to->sectorsize;
	uint64_t pos = from->sectorsize ? from->pos : S, n = to->entries - from->entries;
	if (!S || (from->sectorsize && from->sectorsize != S) || to->entries < from->entries ||
	    (from->sectorsize && to->pos < from->pos)) {
		wlog_seterr(eb, "cannot cut the log: its positions do not follow each other");
		return -1;
	}
	if (committed > n)
		committed = n;
	unsigned char *buf = calloc(1, COPY_MAX > S ? COPY_MAX : S);
	if (!buf) {
		wlog_seterr(eb, "cannot cut the log: out of memory");
		return -1;
	}
	int r = -1;
	/* the superblock, as QEMU writes it: magic, version, count, S */
	unsigned char *p = buf;
	for (int i = 0; i < 8; i++) {
		p[i] = (unsigned char)(WLOG_MAGIC >> (8 * i));
		p[8 + i] = (unsigned char)((uint64_t)WLOG_VERSION >> (8 * i));
		p[16 + i] = (unsigned char)(committed >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		p[24 + i] = (unsigned char)(S >> (8 * i));
	uint64_t opos = 0;
	if (pwrite_all(out, buf, S, opos) < 0)
		goto io;
	opos += S;
	for (uint64_t k = 0; k < n; k++) {
		if (wlog_pread_full(fd, buf, S, pos) < 0)
			goto io;
		struct wlog_entry e = { .sector = get64(buf), .nr_sectors = get64(buf + 8), .flags = get64(buf + 16),
					.data_len = get64(buf + 24) };
		uint64_t extra, data_rel;
		char why[120];
		if (check_entry(S, &e, &extra, &data_rel, why, sizeof(why)) < 0) {
			wlog_seterr(eb, "cannot cut the log: entry %llu at byte %llu: %s",
				    (unsigned long long)(from->entries + k), (unsigned long long)pos, why);
			goto out;
		}
		if (wlog_changes_disk(&e)) {
			if (e.sector < shift || e.sector - shift > limit || e.nr_sectors > limit - (e.sector - shift)) {
				wlog_seterr(eb, "cannot cut the log: entry %llu writes sectors %llu+%llu, outside the "
					    "region %llu+%llu", (unsigned long long)(from->entries + k),
					    (unsigned long long)e.sector, (unsigned long long)e.nr_sectors,
					    (unsigned long long)shift, (unsigned long long)limit);
				goto out;
			}
			e.sector -= shift;
			for (int i = 0; i < 8; i++)
				buf[i] = (unsigned char)(e.sector >> (8 * i));
		}
		if (pwrite_all(out, buf, S, opos) < 0)
			goto io;
		pos += S;
		opos += S;
		for (uint64_t left = extra; left;) {
			size_t c = left > COPY_MAX ? COPY_MAX : (size_t)left;
			if (wlog_pread_full(fd, buf, c, pos) < 0 || pwrite_all(out, buf, c, opos) < 0)
				goto io;
			pos += c;
			opos += c;
			left -= c;
		}
	}
	if (pos != to->pos) {
		wlog_seterr(eb, "cannot cut the log: its entries end at byte %llu, not %llu", (unsigned long long)pos,
			    (unsigned long long)to->pos);
		goto out;
	}
	r = 0;
	goto out;
io:
	wlog_seterr(eb, "cannot cut the log: %s", strerror(errno));
	eb->code = exit_for_errno(errno);
out:
	free(buf);
	return r;
}

int wlog_open(struct wlog *l, int fd, struct errbuf *eb)
{
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	uint64_t size;
	if (file_size(fd, &size) < 0) {
		wlog_seterr(eb, "cannot read the log: %s", strerror(errno));
		return -1;
	}
	l->file_size = size;
	unsigned char sb[28];
	if (size < sizeof(sb)) {
		wlog_seterr(eb, "file too short for a superblock (%llu bytes)", (unsigned long long)size);
		return -1;
	}
	if (wlog_pread_full(fd, sb, sizeof(sb), 0) < 0) {
		wlog_seterr(eb, "cannot read the log: %s", strerror(errno));
		return -1;
	}
	if (mem_is_zero(sb, sizeof(sb))) {
		l->nosuper = 1;
		l->sectorsize = 512; /* QEMU's default log-sector-size */
	} else {
		uint64_t magic = get64(sb), version = get64(sb + 8);
		uint32_t S = get32(sb + 24);
		if (magic != WLOG_MAGIC) {
			wlog_seterr(eb, "bad magic 0x%llx", (unsigned long long)magic);
			return -1;
		}
		if (version != WLOG_VERSION) {
			wlog_seterr(eb, "unsupported version %llu", (unsigned long long)version);
			return -1;
		}
		if (S < 512 || S >= WLOG_MAX_SECTORSIZE || (S & (S - 1))) {
			wlog_seterr(eb, "invalid sector size %u", S);
			return -1;
		}
		l->sectorsize = S;
		l->committed = get64(sb + 16);
	}
	const uint32_t S = l->sectorsize;
	if (size < S) {
		wlog_seterr(eb, "file too short for a superblock (%llu bytes, sector size %u)",
		       (unsigned long long)size, S);
		return -1;
	}

	struct window *w = malloc(sizeof(*w));
	if (!w) {
		wlog_seterr(eb, "out of memory");
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
				wlog_seterr(eb, "entry %zu at byte %llu: missing (the superblock counts %llu entries)",
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
				wlog_seterr(eb, "cannot read the log at byte %llu: %s", (unsigned long long)pos,
				       strerror(errno));
				goto fail;
			}
			empty = mem_is_zero(h, sizeof(h));
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
				wlog_seterr(eb, "entry %zu at byte %llu: %s", i, (unsigned long long)pos, why);
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
				wlog_seterr(eb, "out of memory");
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
		if (wlog_pread_full(l->fd, p + done, chunk, l->e[i].offset + done) < 0)
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


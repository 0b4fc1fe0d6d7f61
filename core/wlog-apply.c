/*
 * wlog-apply.c - rebuild a crash state on a device: the base image plus the
 * entries a spec applies, in log order, torn writes in part; each applied
 * write is one pread and one pwrite (per COPY_MAX) through one buffer.
 */
#include "core/wlog.h"
#include "core/wlog-priv.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

/* Write one chunk of an entry at devoff. */
static int put(struct copier *c, size_t i, const void *buf, size_t chunk, uint64_t devoff)
{
	if (pwrite_all(c->dev_fd, buf, chunk, devoff) < 0) {
		wlog_seterr(c->e, "cannot write entry %zu at byte %llu: %s", i, (unsigned long long)devoff, strerror(errno));
		return -1;
	}
	c->written += chunk;
	return 0;
}

static int copy_range(struct copier *c, size_t i, uint64_t logoff, uint64_t devoff, uint64_t len)
{
	size_t want = len > COPY_MAX ? COPY_MAX : (size_t)len;
	if (want > c->cap) {
		unsigned char *nb = realloc(c->buf, want);
		if (!nb) {
			wlog_seterr(c->e, "out of memory");
			return -1;
		}
		c->buf = nb;
		c->cap = want;
	}
	for (uint64_t done = 0; done < len;) {
		size_t chunk = len - done > COPY_MAX ? COPY_MAX : (size_t)(len - done);
		if (wlog_pread_full(c->l->fd, c->buf, chunk, logoff + done) < 0) {
			wlog_seterr(c->e, "cannot read entry %zu from the log: %s", i, strerror(errno));
			return -1;
		}
		if (put(c, i, c->buf, chunk, devoff + done) < 0)
			return -1;
		done += chunk;
	}
	return 0;
}

static int zero_range(struct copier *c, size_t i, uint64_t devoff, uint64_t len)
{
	/* A discard replays as zeros. Let the kernel zero the range when it can
	 * (a block device: ZERO_RANGE, written as write-zeroes or by the block
	 * layer; a regular file: a hole reads as zeros), else write zeros. */
	if (fallocate(c->dev_fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, (off_t)devoff, (off_t)len) == 0 ||
	    fallocate(c->dev_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)devoff, (off_t)len) == 0) {
		c->written += len;
		return 0;
	}
	const size_t zmax = 1u << 20;
	size_t want = len > zmax ? zmax : (size_t)len;
	if (want > c->zcap) {
		free(c->zeros);
		c->zeros = calloc(1, want);
		c->zcap = c->zeros ? want : 0;
		if (!c->zeros) {
			wlog_seterr(c->e, "out of memory");
			return -1;
		}
	}
	for (uint64_t done = 0; done < len;) {
		size_t chunk = len - done > c->zcap ? c->zcap : (size_t)(len - done);
		if (put(c, i, c->zeros, chunk, devoff + done) < 0)
			return -1;
		done += chunk;
	}
	return 0;
}

/* Does every entry s applies lie on the device (dev_size bytes)? A log
 * entry beyond the end of the disk it was recorded from is corrupt, and
 * replaying it would write without bound. */
static int check_extents(const struct wlog *l, const struct wlog_spec *s, uint64_t dev_size, struct errbuf *eb)
{
	const uint64_t S = l->sectorsize;
	for (size_t i = 0; i < l->n; i++) {
		const struct wlog_entry *e = &l->e[i];
		if (!wlog_changes_disk(e) || !wlog_spec_applies(s, i))
			continue;
		/* wlog_open bounds sector + nr_sectors by INT64_MAX / S */
		uint64_t a = e->sector * S, b = (e->sector + e->nr_sectors) * S;
		if (b > dev_size) {
			wlog_seterr(eb, "entry %zu %s bytes %llu-%llu, beyond the disk's %llu bytes", i,
				    wlog_is_discard(e) ? "discards" : "writes", (unsigned long long)a,
				    (unsigned long long)b - 1, (unsigned long long)dev_size);
			return -1;
		}
	}
	return 0;
}

/* Check s against l before anything is written (wlog-priv.h). */
int wlog_check_spec(const struct wlog *l, const struct wlog_spec *s, struct errbuf *eb)
{
	if (s->prefix > l->n) {
		wlog_seterr(eb, "prefix %llu beyond the log's %zu entries", (unsigned long long)s->prefix, l->n);
		return -1;
	}
	for (size_t j = 0; j < s->nadd; j++) {
		if (s->add[j] >= l->n) {
			wlog_seterr(eb, "entry %llu beyond the log's %zu entries", (unsigned long long)s->add[j],
			       l->n);
			return -1;
		}
		if (s->add[j] < s->prefix || (j && s->add[j] <= s->add[j - 1])) {
			wlog_seterr(eb, "add index %llu out of order", (unsigned long long)s->add[j]);
			return -1;
		}
	}
	for (size_t j = 0; j < s->ntorn; j++) {
		const struct wlog_tear *t = &s->torn[j];
		if (t->entry < s->prefix || !wlog_spec_applies(s, t->entry)) {
			wlog_seterr(eb, "torn entry %llu is not in add", (unsigned long long)t->entry);
			return -1;
		}
		if (j && (t->entry < s->torn[j - 1].entry ||
			  (t->entry == s->torn[j - 1].entry &&
			   t->start < s->torn[j - 1].start + s->torn[j - 1].count))) {
			wlog_seterr(eb, "torn sectors of entry %llu out of order", (unsigned long long)t->entry);
			return -1;
		}
		const struct wlog_entry *e = &l->e[t->entry];
		if (!wlog_is_write(e)) {
			wlog_seterr(eb, "entry %llu is not a write and cannot be torn", (unsigned long long)t->entry);
			return -1;
		}
		uint64_t m = e->nr_sectors * l->sectorsize / WLOG_SECTOR;
		if (t->count == 0 || t->start >= m || t->count > m - t->start) {
			wlog_seterr(eb, "torn sectors %llu-%llu of entry %llu beyond its %llu sectors",
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
	if (wlog_check_spec(l, s, eb) < 0)
		return -1;
	off_t dev_size = lseek(dev_fd, 0, SEEK_END);
	if (dev_size < 0) {
		wlog_seterr(eb, "cannot size the disk: %s", strerror(errno));
		return -1;
	}
	if (check_extents(l, s, (uint64_t)dev_size, eb) < 0)
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
		rc = apply_one(&c, (size_t)i, t > t0 ? s->torn + t0 : NULL, t - t0);
	}
	free(c.buf);
	free(c.zeros);
	if (bytes_written)
		*bytes_written = c.written;
	return rc;
}

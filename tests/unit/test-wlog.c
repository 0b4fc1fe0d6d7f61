/* test-wlog.c - the write-log reader and replay on synthetic logs: scan,
 * tail, corruption messages, spec text, and states rebuilt byte for byte
 * against images computed here independently. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/wlog.h"
#include "tests/unit/check.h"

/* ---- a log builder that also remembers what it logged ---- */

enum { K_WRITE, K_FLUSH, K_DISCARD, K_MARK };

struct rec {
	int kind;
	uint64_t sector, nr;
	unsigned char *data;  /* K_WRITE: nr * S bytes */
	uint64_t hdr_off;     /* byte offset of the header in the log */
};

struct lb {
	uint32_t S;
	unsigned char *buf;
	size_t len, cap;
	struct rec r[64];
	size_t n;
};

static void lb_grow(struct lb *b, size_t need)
{
	if (b->len + need <= b->cap)
		return;
	while (b->cap < b->len + need)
		b->cap = b->cap ? b->cap * 2 : 65536;
	b->buf = realloc(b->buf, b->cap);
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void lb_init(struct lb *b, uint32_t S)
{
	memset(b, 0, sizeof(*b));
	b->S = S;
	lb_grow(b, S);
	memset(b->buf, 0, S);
	b->len = S;
}

static void lb_super(struct lb *b, uint64_t magic, uint64_t version, uint64_t committed, uint32_t S)
{
	memset(b->buf, 0, 32);
	put64(b->buf, magic);
	put64(b->buf + 8, version);
	put64(b->buf + 16, committed);
	for (int i = 0; i < 4; i++)
		b->buf[24 + i] = (unsigned char)(S >> (8 * i));
}

/* Header sector (with an optional inline label), then extra bytes of payload. */
static void lb_entry(struct lb *b, uint64_t sector, uint64_t nr, uint64_t flags, uint64_t data_len,
		     const void *inl, size_t inl_len, const void *payload, size_t plen)
{
	lb_grow(b, b->S + plen);
	unsigned char *h = b->buf + b->len;
	memset(h, 0, b->S);
	put64(h, sector);
	put64(h + 8, nr);
	put64(h + 16, flags);
	put64(h + 24, data_len);
	if (inl_len)
		memcpy(h + 32, inl, inl_len);
	b->len += b->S;
	if (plen)
		memcpy(b->buf + b->len, payload, plen);
	b->len += plen;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(x >> 16);
	}
}

static size_t lb_write(struct lb *b, uint64_t sector, uint64_t nr, unsigned seed)
{
	struct rec *r = &b->r[b->n];
	r->kind = K_WRITE;
	r->sector = sector;
	r->nr = nr;
	r->data = malloc(nr * b->S);
	fill(r->data, nr * b->S, seed);
	r->hdr_off = b->len;
	lb_entry(b, sector, nr, 0, 0, NULL, 0, r->data, nr * b->S);
	return b->n++;
}

static size_t lb_flush(struct lb *b)
{
	struct rec *r = &b->r[b->n];
	memset(r, 0, sizeof(*r));
	r->kind = K_FLUSH;
	r->hdr_off = b->len;
	lb_entry(b, 0, 0, WLOG_FLUSH, 0, NULL, 0, NULL, 0);
	return b->n++;
}

static size_t lb_discard(struct lb *b, uint64_t sector, uint64_t nr)
{
	struct rec *r = &b->r[b->n];
	memset(r, 0, sizeof(*r));
	r->kind = K_DISCARD;
	r->sector = sector;
	r->nr = nr;
	r->hdr_off = b->len;
	lb_entry(b, sector, nr, WLOG_DISCARD, 0, NULL, 0, NULL, 0);
	return b->n++;
}

/* Linux's layout: the label inline in the header sector. */
static size_t lb_mark(struct lb *b, const char *label)
{
	struct rec *r = &b->r[b->n];
	memset(r, 0, sizeof(*r));
	r->kind = K_MARK;
	r->hdr_off = b->len;
	lb_entry(b, 0, 0, WLOG_MARK, strlen(label), label, strlen(label), NULL, 0);
	return b->n++;
}

/* A label longer than the header sector can hold: in the following sectors. */
static size_t lb_long_mark(struct lb *b, const char *label)
{
	struct rec *r = &b->r[b->n];
	memset(r, 0, sizeof(*r));
	r->kind = K_MARK;
	r->hdr_off = b->len;
	size_t len = strlen(label), padded = (len + b->S - 1) / b->S * b->S;
	unsigned char *p = calloc(1, padded);
	memcpy(p, label, len);
	lb_entry(b, 0, 0, WLOG_MARK, len, NULL, 0, p, padded);
	free(p);
	return b->n++;
}

static void lb_free(struct lb *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->r[i].data);
	free(b->buf);
}

static char tmpdir[] = "/tmp/crashlab-wlog.XXXXXX";

static int save(const char *name, const void *data, size_t n)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n))
		return -1;
	return fd;
}

/* ---- the independent model of a rebuilt disk ---- */

#define DISK (512 * 1024)

static unsigned char base[DISK];

/* Apply record i (whole, or only the listed 512-byte pieces) to img. */
static void model_apply(const struct lb *b, unsigned char *img, size_t i, const uint64_t (*pieces)[2],
			size_t npieces)
{
	const struct rec *r = &b->r[i];
	uint64_t off = r->sector * b->S;
	if (r->kind == K_DISCARD)
		memset(img + off, 0, r->nr * b->S);
	if (r->kind != K_WRITE)
		return;
	if (!npieces) {
		memcpy(img + off, r->data, r->nr * b->S);
		return;
	}
	for (size_t k = 0; k < npieces; k++)
		memcpy(img + off + pieces[k][0] * 512, r->data + pieces[k][0] * 512, pieces[k][1] * 512);
}

/* Rebuild spec text on a fresh copy of base and compare with want. */
static int replay_equals(const struct wlog *l, const char *text, const unsigned char *want, uint64_t *written)
{
	struct wlog_spec s;
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	if (wlog_spec_parse(text, &s, &eb) < 0) {
		printf("# parse '%s': %s\n", text, err);
		return 0;
	}
	int fd = save("disk.img", base, DISK);
	int rc = wlog_apply(l, &s, fd, written, &eb);
	wlog_spec_free(&s);
	if (rc < 0) {
		printf("# apply '%s': %s\n", text, err);
		close(fd);
		return 0;
	}
	static unsigned char got[DISK];
	int ok = pread(fd, got, DISK, 0) == DISK && !memcmp(got, want, DISK);
	close(fd);
	return ok;
}

static int open_err(const void *data, size_t n, struct errbuf *ebp, struct wlog *l)
{
	int fd = save("bad.log", data, n);
	int rc = wlog_open(l, fd, ebp);
	close(fd);
	if (rc == 0)
		wlog_close(l);
	return rc;
}

static int spec_err(const char *text, const char *want)
{
	struct wlog_spec s;
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	if (wlog_spec_parse(text, &s, &eb) == 0) {
		wlog_spec_free(&s);
		printf("# '%s' parsed\n", text);
		return 0;
	}
	if (strcmp(err, want)) {
		printf("# '%s': got '%s'\n", text, err);
		return 0;
	}
	return 1;
}

static int spec_round(const char *in, const char *canon)
{
	struct wlog_spec s;
	char out[512];
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	if (wlog_spec_parse(in, &s, &eb) < 0) {
		printf("# '%s': %s\n", in, err);
		return 0;
	}
	int n = wlog_spec_format(&s, out, sizeof(out));
	wlog_spec_free(&s);
	if (n != (int)strlen(canon) || strcmp(out, canon)) {
		printf("# '%s' -> '%s' (%d)\n", in, out, n);
		return 0;
	}
	return 1;
}

static int apply_err(const struct wlog *l, const char *text, const char *want)
{
	struct wlog_spec s;
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	if (wlog_spec_parse(text, &s, &eb) < 0) {
		printf("# '%s': %s\n", text, err);
		return 0;
	}
	int fd = save("disk.img", base, DISK);
	uint64_t w = 99;
	int rc = wlog_apply(l, &s, fd, &w, &eb);
	wlog_spec_free(&s);
	static unsigned char got[DISK];
	int untouched = pread(fd, got, DISK, 0) == DISK && !memcmp(got, base, DISK);
	close(fd);
	if (rc == 0 || strcmp(err, want) || !untouched || w != 0) {
		printf("# '%s': rc %d, '%s', untouched %d\n", text, rc, err, untouched);
		return 0;
	}
	return 1;
}

TEST(log_reader_and_replay)
{
	if (!mkdtemp(tmpdir))
		SKIP("cannot make a temporary directory");
	fill(base, DISK, 7);
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	struct wlog l;

	/* ---- a 512-byte log: writes, flushes, a discard, a mark, a tail ---- */
	struct lb b;
	lb_init(&b, 512);
	size_t wA = lb_write(&b, 0, 8, 1);
	size_t wB = lb_write(&b, 16, 2, 2);
	lb_flush(&b);
	size_t dC = lb_discard(&b, 4, 4);
	size_t mk = lb_mark(&b, "hello");
	size_t wD = lb_write(&b, 100, 3, 3);
	lb_flush(&b);
	size_t wE = lb_write(&b, 0, 1, 4);
	size_t wF = lb_write(&b, 200, 16, 5);
	lb_super(&b, WLOG_MAGIC, 1, 7, 512);
	int fd = save("a.log", b.buf, b.len);
	CHECK(fd >= 0, "synthetic 512-byte log written (%zu bytes)", b.len);
	int rc = wlog_open(&l, fd, &eb);
	CHECK(rc == 0, "open: %s", rc ? err : "ok");
	CHECK(l.n == 9 && l.committed == 7 && l.sectorsize == 512 && !l.dropped && !l.nosuper,
	      "9 entries, 7 committed, a 2-entry tail, nothing dropped (n %zu, committed %llu)", l.n,
	      (unsigned long long)l.committed);
	CHECK(l.e[wA].sector == 0 && l.e[wA].nr_sectors == 8 && l.e[wA].offset == 1024 && wlog_is_write(&l.e[wA]),
	      "entry 0: write of 8 sectors, data at byte 1024");
	CHECK(l.e[2].flags == WLOG_FLUSH && wlog_is_flush(&l.e[2]) && !wlog_is_write(&l.e[2]), "entry 2: flush");
	CHECK(wlog_is_discard(&l.e[dC]) && l.e[dC].sector == 4 && l.e[dC].nr_sectors == 4 &&
	      !wlog_is_write(&l.e[dC]), "entry 3: discard of sectors 4-7");
	CHECK(wlog_is_mark(&l.e[mk]) && l.e[mk].data_len == 5 && l.e[mk].offset == b.r[mk].hdr_off + 32,
	      "entry 4: mark, label inline after the header");
	CHECK(l.e[wF].offset == b.r[wF].hdr_off + 512 && l.e[wF].nr_sectors == 16, "entry 8 (tail) found");
	char label[16] = "";
	CHECK(wlog_data_size(&l, mk) == 5 && wlog_read_data(&l, mk, label) == 0 && !memcmp(label, "hello", 5),
	      "mark label reads back");
	unsigned char *buf = malloc(16 * 512);
	CHECK(wlog_data_size(&l, wF) == 8192 && wlog_read_data(&l, wF, buf) == 0 &&
	      !memcmp(buf, b.r[wF].data, 8192), "tail write data reads back");
	CHECK(wlog_data_size(&l, 2) == 0 && wlog_data_size(&l, dC) == 0, "flush and discard carry no data");
	struct wlog_counts c;
	wlog_count(&l, 0, l.n, &c);
	CHECK(c.entries == 9 && c.flushes == 2 && c.writes == 5 && c.discards == 1 && c.marks == 1 && c.fua == 0 &&
	      c.bytes_written == (8 + 2 + 3 + 1 + 16) * 512ull && c.bytes_discarded == 2048,
	      "counts: 2 flushes, 5 writes, 1 discard, 1 mark, %llu bytes", (unsigned long long)c.bytes_written);
	wlog_count(&l, 3, 100, &c);
	CHECK(c.entries == 6 && c.writes == 3 && c.flushes == 1, "counts over a range (clamped)");
	size_t fl[4];
	CHECK(wlog_flush_index(&l, fl, 4) == 2 && fl[0] == 2 && fl[1] == 6 && wlog_flush_index(&l, NULL, 0) == 2,
	      "flush indices 2 and 6");
	uint64_t cnt = 0;
	CHECK(wlog_read_committed(fd, &cnt) == 0 && cnt == 7, "read_committed: 7");

	/* Replays against the model. */
	static unsigned char want[DISK];
	struct {
		const char *spec;
		size_t apply[10];
		size_t napply;
	} cases[] = {
		{ "prefix=0", { 0 }, 0 },
		{ "prefix=3", { wA, wB }, 2 },
		{ "prefix=9", { wA, wB, dC, wD, wE, wF }, 6 },
		{ "prefix=3 add=5,8", { wA, wB, wD, wF }, 4 },
		{ "prefix=2 add=3,7", { wA, wB, dC, wE }, 4 },
		{ "prefix=0 add=3", { dC }, 1 },
		{ "prefix=0 add=1,7-8", { wB, wE, wF }, 3 },
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		memcpy(want, base, DISK);
		for (size_t j = 0; j < cases[k].napply; j++)
			model_apply(&b, want, cases[k].apply[j], NULL, 0);
		CHECK(replay_equals(&l, cases[k].spec, want, NULL), "replay '%s' matches the model", cases[k].spec);
	}
	/* Torn: only some 512-byte pieces of entry 8 land; entry 0 is torn too. */
	memcpy(want, base, DISK);
	model_apply(&b, want, wB, NULL, 0);
	uint64_t p0[][2] = { { 1, 2 }, { 7, 1 } };
	model_apply(&b, want, wA, p0, 2);
	uint64_t p8[][2] = { { 0, 4 }, { 6, 1 }, { 10, 6 } };
	model_apply(&b, want, wF, p8, 3);
	uint64_t written = 0;
	CHECK(replay_equals(&l, "prefix=0 add=0-1,8 torn=0:1-2+7,8:0-3+6+10-15", want, &written),
	      "torn replay matches the model");
	CHECK(written == (3 + 2 + 11) * 512, "bytes written counts the torn pieces only (%llu)",
	      (unsigned long long)written);
	/* Discard after an overlapping write zeroes it; a later write lands on top. */
	memcpy(want, base, DISK);
	model_apply(&b, want, wA, NULL, 0);
	model_apply(&b, want, dC, NULL, 0);
	model_apply(&b, want, wE, NULL, 0);
	CHECK(replay_equals(&l, "prefix=1 add=3,7", want, &written) && written == 4096 + 2048 + 512,
	      "discard zeroes over an earlier write, later write on top, in log order");
	CHECK(want[4 * 512] == 0 && want[8 * 512 - 1] == 0, "the model zeroed the discarded range");

	/* Apply errors: checked before anything is written. */
	CHECK(apply_err(&l, "prefix=10", "prefix 10 beyond the log's 9 entries"), "prefix beyond the log");
	CHECK(apply_err(&l, "prefix=1 add=9", "entry 9 beyond the log's 9 entries"), "add beyond the log");
	CHECK(apply_err(&l, "prefix=0 add=0,2 torn=2:0", "entry 2 is not a write and cannot be torn"),
	      "a flush cannot be torn");
	CHECK(apply_err(&l, "prefix=0 add=3 torn=3:0", "entry 3 is not a write and cannot be torn"),
	      "a discard cannot be torn");
	CHECK(apply_err(&l, "prefix=0 add=1 torn=1:1-2", "torn sectors 1-2 of entry 1 beyond its 2 sectors"),
	      "torn sectors beyond the write");

	wlog_close(&l);

	/* The tail: a truncated last entry is dropped and reported. */
	size_t full_len = b.len;
	int tfd = save("trunc.log", b.buf, full_len - 1000);
	CHECK(wlog_open(&l, tfd, &eb) == 0 && l.n == 8 && l.dropped &&
	      l.dropped_at == b.r[wF].hdr_off, "truncated tail entry dropped (n %zu)", l.n);
	char msg[200];
	snprintf(msg, sizeof(msg), "entry 8 at byte %llu: truncated (needs 8704 bytes, file ends after %llu)",
		 (unsigned long long)b.r[wF].hdr_off, (unsigned long long)(8704 - 1000));
	CHECK(!strcmp(l.dropped_why, msg), "reported: %s", l.dropped_why);
	wlog_close(&l);
	close(tfd);
	/* Cut inside the next header: also a dropped tail. */
	tfd = save("trunc2.log", b.buf, b.r[wF].hdr_off + 20);
	CHECK(wlog_open(&l, tfd, &eb) == 0 && l.n == 8 && l.dropped, "cut inside a tail header");
	wlog_close(&l);
	close(tfd);
	/* Zeros after the last entry (unwritten or padded space) end the log cleanly. */
	unsigned char *padded = calloc(1, full_len + 8192);
	memcpy(padded, b.buf, full_len);
	tfd = save("padded.log", padded, full_len + 8192);
	CHECK(wlog_open(&l, tfd, &eb) == 0 && l.n == 9 && !l.dropped, "zero padding is not an entry");
	wlog_close(&l);
	close(tfd);
	/* An invalid header in the tail ends the log. */
	unsigned char *bad = malloc(full_len);
	memcpy(bad, b.buf, full_len);
	put64(bad + b.r[wE].hdr_off + 16, 0x40);
	snprintf(msg, sizeof(msg), "entry 7 at byte %llu: invalid flags 0x40", (unsigned long long)b.r[wE].hdr_off);
	tfd = save("badtail.log", bad, full_len);
	CHECK(wlog_open(&l, tfd, &eb) == 0 && l.n == 7 && l.dropped && !strcmp(l.dropped_why, msg),
	      "invalid flags in the tail end the log: %s", l.dropped_why);
	wlog_close(&l);
	close(tfd);

	/* ---- corruption in the committed part is fatal, with index and byte ---- */
	memcpy(bad, b.buf, full_len);
	put64(bad + b.r[wD].hdr_off + 16, 0x40);
	CHECK(open_err(bad, full_len, &eb, &l) < 0, "invalid flags in a committed entry fail");
	snprintf(msg, sizeof(msg), "entry 5 at byte %llu: invalid flags 0x40", (unsigned long long)b.r[wD].hdr_off);
	CHECK(!strcmp(err, msg), "message: %s", err);
	memcpy(bad, b.buf, full_len);
	put64(bad + 16, 9);
	CHECK(open_err(bad, full_len - 1000, &eb, &l) < 0, "truncated committed entry fails");
	snprintf(msg, sizeof(msg), "entry 8 at byte %llu: truncated (needs 8704 bytes, file ends after 7704)",
		 (unsigned long long)b.r[wF].hdr_off);
	CHECK(!strcmp(err, msg), "message: %s", err);
	put64(bad + 16, 12);
	CHECK(open_err(bad, full_len, &eb, &l) < 0, "entries missing from a committed count fail");
	snprintf(msg, sizeof(msg), "entry 9 at byte %zu: missing (the superblock counts 12 entries)", full_len);
	CHECK(!strcmp(err, msg), "message: %s", err);
	memcpy(bad, b.buf, full_len);
	memset(bad + b.r[wB].hdr_off, 0, 32);
	CHECK(open_err(bad, full_len, &eb, &l) < 0 &&
	      !strncmp(err, "entry 1 at byte 5120: empty header", 34), "zeroed committed header: %s", err);
	memcpy(bad, b.buf, full_len);
	put64(bad + b.r[wA].hdr_off, UINT64_MAX / 2);
	CHECK(open_err(bad, full_len, &eb, &l) < 0 && strstr(err, "entry 0 at byte 512: sectors ") &&
	      strstr(err, "beyond any disk"), "absurd sector number: %s", err);

	/* Superblock errors. */
	memcpy(bad, b.buf, full_len);
	put64(bad, 0x1234);
	CHECK(open_err(bad, full_len, &eb, &l) < 0 && !strcmp(err, "bad magic 0x1234"), "%s", err);
	memcpy(bad, b.buf, full_len);
	put64(bad + 8, 2);
	CHECK(open_err(bad, full_len, &eb, &l) < 0 && !strcmp(err, "unsupported version 2"), "%s", err);
	uint32_t sizes[] = { 1000, 256, 0, 16u << 20 };
	for (int k = 0; k < 4; k++) {
		memcpy(bad, b.buf, full_len);
		for (int i = 0; i < 4; i++)
			bad[24 + i] = (unsigned char)(sizes[k] >> (8 * i));
		char w[64];
		snprintf(w, sizeof(w), "invalid sector size %u", sizes[k]);
		CHECK(open_err(bad, full_len, &eb, &l) < 0 && !strcmp(err, w), "%s", err);
	}
	CHECK(open_err(b.buf, 10, &eb, &l) < 0 &&
	      !strcmp(err, "file too short for a superblock (10 bytes)"), "%s", err);
	CHECK(open_err(b.buf, 0, &eb, &l) < 0 &&
	      !strcmp(err, "file too short for a superblock (0 bytes)"), "%s", err);
	CHECK(open_err(b.buf, 300, &eb, &l) < 0 &&
	      !strcmp(err, "file too short for a superblock (300 bytes, sector size 512)"), "%s", err);

	/* No superblock yet (no flush logged): zeros, 512-byte sectors assumed. */
	memcpy(bad, b.buf, full_len);
	memset(bad, 0, 512);
	tfd = save("nosuper.log", bad, full_len);
	CHECK(wlog_open(&l, tfd, &eb) == 0 && l.nosuper && l.committed == 0 && l.n == 9,
	      "all-zero superblock: committed 0, every entry in the tail");
	CHECK(wlog_read_committed(tfd, &cnt) == 0 && cnt == 0, "read_committed of a zero superblock: 0");
	wlog_close(&l);
	close(tfd);
	tfd = save("empty.log", "", 0);
	cnt = 5;
	CHECK(wlog_read_committed(tfd, &cnt) == 0 && cnt == 0, "read_committed of an empty file: 0");
	close(tfd);
	memcpy(bad, b.buf, full_len);
	put64(bad, 0x1234);
	tfd = save("badmagic.log", bad, 512);
	CHECK(wlog_read_committed(tfd, &cnt) < 0, "read_committed of a foreign file fails");
	close(tfd);
	close(fd);
	free(bad);
	free(padded);

	/* ---- a 4096-byte log: torn at 512-byte granularity, long mark, truncated tail ---- */
	struct lb b4;
	lb_init(&b4, 4096);
	size_t v0 = lb_write(&b4, 1, 2, 11);
	lb_flush(&b4);
	size_t v2 = lb_write(&b4, 5, 1, 12);
	size_t mk4 = lb_mark(&b4, "after-fsync");
	size_t v4 = lb_discard(&b4, 2, 1);
	size_t v5 = lb_write(&b4, 10, 3, 13);
	lb_flush(&b4);
	lb_super(&b4, WLOG_MAGIC, 1, 7, 4096);
	size_t good4 = b4.len;
	/* A tail entry claiming 4 sectors, cut after one. */
	unsigned char four[4 * 4096];
	fill(four, sizeof(four), 14);
	lb_entry(&b4, 20, 4, 0, 0, NULL, 0, four, 4096);
	int fd4 = save("s4.log", b4.buf, b4.len);
	rc = wlog_open(&l, fd4, &eb);
	CHECK(rc == 0, "open 4096-byte log: %s", rc ? err : "ok");
	CHECK(l.sectorsize == 4096 && l.n == 7 && l.committed == 7 && l.dropped, "7 entries, truncated tail dropped");
	snprintf(msg, sizeof(msg), "entry 7 at byte %zu: truncated (needs 20480 bytes, file ends after 8192)", good4);
	CHECK(!strcmp(l.dropped_why, msg), "reported: %s", l.dropped_why);
	char lab4[32] = "";
	CHECK(wlog_read_data(&l, mk4, lab4) == 0 && !strcmp(lab4, "after-fsync") &&
	      l.e[mk4].offset == b4.r[mk4].hdr_off + 32, "4096-byte mark inline");
	CHECK(l.e[v5].offset == b4.r[v5].hdr_off + 4096, "data after a 4096-byte header");
	memcpy(want, base, DISK);
	model_apply(&b4, want, v0, NULL, 0);
	model_apply(&b4, want, v4, NULL, 0);
	uint64_t q5[][2] = { { 1, 1 }, { 3, 3 }, { 23, 1 } };
	model_apply(&b4, want, v5, q5, 3);
	CHECK(replay_equals(&l, "prefix=2 add=4-5 torn=5:1+3-5+23", want, &written) &&
	      written == 8192 + 4096 + 5 * 512, "4096-byte log torn in 512-byte sectors matches the model");
	memcpy(want, base, DISK);
	model_apply(&b4, want, v0, NULL, 0);
	model_apply(&b4, want, v2, NULL, 0);
	model_apply(&b4, want, v4, NULL, 0);
	model_apply(&b4, want, v5, NULL, 0);
	CHECK(replay_equals(&l, "prefix=7", want, NULL), "4096-byte log, every entry");
	CHECK(apply_err(&l, "prefix=0 add=5 torn=5:24", "torn sectors 24-24 of entry 5 beyond its 24 sectors"),
	      "torn sector counts are 512-byte units");
	wlog_close(&l);
	close(fd4);
	lb_free(&b4);

	/* A label longer than a header sector is read from the next sectors. */
	struct lb bm;
	lb_init(&bm, 512);
	char longl[701];
	memset(longl, 'x', 700);
	longl[700] = 0;
	longl[0] = 'L';
	size_t lm = lb_long_mark(&bm, longl);
	size_t after = lb_write(&bm, 3, 1, 21);
	lb_super(&bm, WLOG_MAGIC, 1, 2, 512);
	int fdm = save("mark.log", bm.buf, bm.len);
	char *lbuf = calloc(1, 701);
	CHECK(wlog_open(&l, fdm, &eb) == 0 && l.n == 2 && l.e[lm].offset == 1024 &&
	      wlog_read_data(&l, lm, lbuf) == 0 && !strcmp(lbuf, longl) && l.e[after].offset == 512 * 5,
	      "700-byte label in the two sectors after its header, next entry after it");
	free(lbuf);
	wlog_close(&l);
	close(fdm);
	lb_free(&bm);

	/* ---- spec text ---- */
	CHECK(spec_round("prefix=120", "prefix=120"), "prefix only");
	CHECK(spec_round("prefix=120 add=121,124-126,130 torn=124:0-3+6",
			 "prefix=120 add=121,124-126,130 torn=124:0-3+6"), "canonical text is a fixed point");
	CHECK(spec_round("  torn=9:4-5+0-1+2,7:3 add=9,5-6,5,7  prefix=3 ", "prefix=3 add=5-7,9 torn=7:3,9:0-2+4-5"),
	      "keys in any order, lists sorted, duplicates and touching pieces merged");
	CHECK(spec_round("prefix=0 add=1,2,3", "prefix=0 add=1-3"), "runs written as ranges");
	CHECK(spec_round("prefix=18446744073709551615", "prefix=18446744073709551615"), "largest prefix");
	CHECK(spec_err("", "missing 'prefix='"), "empty spec");
	CHECK(spec_err("add=3", "missing 'prefix='"), "no prefix");
	CHECK(spec_err("prefix=x", "expected a number in prefix at 'x'"), "prefix not a number");
	CHECK(spec_err("prefix=", "expected a number in prefix"), "prefix empty");
	CHECK(spec_err("prefix=5 add=3", "add index 3 is below prefix 5"), "add below prefix");
	CHECK(spec_err("prefix=1 torn=4:0", "torn entry 4 is not in add"), "torn without add");
	CHECK(spec_err("prefix=1 add=5-3", "reversed range 5-3 in add"), "reversed range");
	CHECK(spec_err("prefix=1 foo=2", "unknown key 'foo'"), "unknown key");
	CHECK(spec_err("prefix=1 prefix=2", "'prefix' given twice"), "repeated key");
	CHECK(spec_err("prefix=1 add=2 torn=2", "expected ':' after torn entry 2"), "torn without sectors");
	CHECK(spec_err("prefix=1 add=2,", "expected a number in add"), "dangling comma");
	CHECK(spec_err("prefix=1x", "unexpected 'x' in prefix"), "junk after a number");
	CHECK(spec_err("prefix=99999999999999999999", "number too large in prefix"), "overflow");
	CHECK(spec_err("prefix 3", "expected key=value at 'prefix'"), "missing '='");
	struct wlog_spec s;
	CHECK(wlog_spec_parse("prefix=3 add=5,9 torn=9:0", &s, &eb) == 0 && s.prefix == 3 &&
	      s.nadd == 2 && s.add[1] == 9 && s.ntorn == 1 && s.torn[0].entry == 9 && s.torn[0].count == 1 &&
	      wlog_spec_applies(&s, 2) && wlog_spec_applies(&s, 5) && !wlog_spec_applies(&s, 6),
	      "parsed fields and wlog_spec_applies");
	char small[8];
	int need = wlog_spec_format(&s, small, sizeof(small));
	CHECK(need == (int)strlen("prefix=3 add=5,9 torn=9:0") && !strcmp(small, "prefix="),
	      "format into a short buffer truncates and returns the needed length");
	wlog_spec_free(&s);

	/* ---- a large log scans fast ---- */
	struct lb big;
	lb_init(&big, 512);
	size_t nbig = 20000;
	unsigned char blk[512];
	fill(blk, sizeof(blk), 9);
	for (size_t i = 0; i < nbig; i++) {
		if (i % 50 == 49)
			lb_entry(&big, 0, 0, WLOG_FLUSH, 0, NULL, 0, NULL, 0);
		else
			lb_entry(&big, i % 1000, 1, 0, 0, NULL, 0, blk, sizeof(blk));
	}
	lb_super(&big, WLOG_MAGIC, 1, nbig, 512);
	int fdb = save("big.log", big.buf, big.len);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = wlog_open(&l, fdb, &eb);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(rc == 0 && l.n == nbig && secs < 2.0, "%zu entries (%zu MiB) scanned in %.3f s", l.n, big.len >> 20,
	      secs);
	wlog_close(&l);
	close(fdb);
	free(big.buf);

	lb_free(&b);
	free(buf);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
}

/* ---- content keys ---- */

static char keydir[256];

/* The key of spec text on k; sets *ok = 0 when it cannot be made. */
static struct wlog_key key_of(struct wlog_keyer *k, const char *text, int *ok)
{
	struct wlog_spec s;
	struct wlog_key key = { 0 };
	struct errbuf eb = { 0 };
	if (wlog_spec_parse(text, &s, &eb) < 0 || wlog_state_key(k, &s, &key, &eb) < 0) {
		printf("# key of '%s': %s\n", text, eb.msg);
		*ok = 0;
	}
	wlog_spec_free(&s);
	return key;
}

/* Do the two specs have equal keys (on a fresh keyer each, and on one
 * keyer in the order given)? -1 when they disagree or fail. */
static int keys_same(const struct wlog *l, const char *x, const char *y)
{
	struct wlog_keyer *k1, *k2;
	struct errbuf eb = { 0 };
	if (wlog_keyer_new(l, &k1, &eb) < 0 || wlog_keyer_new(l, &k2, &eb) < 0) {
		printf("# keyer: %s\n", eb.msg);
		return -1;
	}
	int ok = 1;
	struct wlog_key kx = key_of(k1, x, &ok), ky = key_of(k1, y, &ok);
	struct wlog_key fy = key_of(k2, y, &ok), fx = key_of(k2, x, &ok);
	wlog_keyer_free(k1);
	wlog_keyer_free(k2);
	if (!ok || !wlog_key_equal(&kx, &fx) || !wlog_key_equal(&ky, &fy)) {
		printf("# '%s' / '%s': the key depends on the order states are given\n", x, y);
		return -1;
	}
	return wlog_key_equal(&kx, &ky);
}

/* Replay spec text onto a copy of base into img (DISK bytes). */
static int replay_into(const struct wlog *l, const char *text, unsigned char *img)
{
	struct wlog_spec s;
	struct errbuf eb = { 0 };
	if (wlog_spec_parse(text, &s, &eb) < 0)
		return -1;
	char path[300];
	snprintf(path, sizeof(path), "%s/disk.img", keydir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int rc = fd >= 0 && write(fd, base, DISK) == DISK && wlog_apply(l, &s, fd, NULL, &eb) == 0 &&
			 pread(fd, img, DISK, 0) == DISK ? 0 : -1;
	if (fd >= 0)
		close(fd);
	wlog_spec_free(&s);
	return rc;
}

static int open_log(const char *name, const struct lb *b, struct wlog *l)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", keydir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct errbuf eb = { 0 };
	if (fd < 0 || write(fd, b->buf, b->len) != (ssize_t)b->len || wlog_open(l, fd, &eb) < 0) {
		printf("# %s: %s\n", name, eb.msg);
		return -1;
	}
	return fd;
}

TEST(content_keys)
{
	snprintf(keydir, sizeof(keydir), "%s/crashlab-wkey.XXXXXX",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(keydir))
		SKIP("cannot make a temporary directory");
	fill(base, DISK, 7);
	struct lb b;
	lb_init(&b, 512);
	unsigned char two[1024], zeros[2048] = { 0 };
	fill(two, sizeof(two), 11);
	lb_entry(&b, 10, 2, 0, 0, NULL, 0, two, 1024);          /* 0: A at 10-11 */
	lb_flush(&b);                                           /* 1 */
	lb_entry(&b, 10, 2, 0, 0, NULL, 0, two, 1024);          /* 2: A again, the same bytes */
	lb_flush(&b);                                           /* 3 */
	lb_mark(&b, "m");                                       /* 4 */
	two[600] ^= 1;
	lb_entry(&b, 10, 2, 0, 0, NULL, 0, two, 1024);          /* 5: A with one byte of sector 11 changed */
	two[600] ^= 1;
	lb_entry(&b, 10, 2, 0, 0, NULL, 0, two, 1024);          /* 6: A back */
	lb_write(&b, 40, 4, 3);                                 /* 7: B at 40-43 */
	lb_discard(&b, 40, 4);                                  /* 8: B discarded */
	lb_entry(&b, 40, 4, 0, 0, NULL, 0, zeros, 2048);        /* 9: zeros written over 40-43 */
	lb_flush(&b);                                           /* 10 */
	lb_super(&b, WLOG_MAGIC, 1, b.n, 512);
	struct wlog l;
	int fd = open_log("k.log", &b, &l);
	CHECK(fd >= 0, "a log with rewrites, a discard and zeros");

	CHECK(keys_same(&l, "prefix=1", "prefix=3") == 1, "the same bytes written again: the same key");
	CHECK(keys_same(&l, "prefix=1", "prefix=0 add=2") == 1, "another entry set with the same content: the same key");
	CHECK(keys_same(&l, "prefix=3", "prefix=5") == 1, "flushes and marks change nothing");
	CHECK(keys_same(&l, "prefix=5", "prefix=6") == 0, "one byte of one sector different: another key");
	CHECK(keys_same(&l, "prefix=5", "prefix=7") == 1, "rewritten back: the same key again");
	CHECK(keys_same(&l, "prefix=5", "prefix=5 add=5") == 0 && keys_same(&l, "prefix=5 add=5", "prefix=6") == 1,
	      "an add list keys as the prefix it equals");
	CHECK(keys_same(&l, "prefix=7 add=7 torn=7:1-2", "prefix=8") == 0 &&
		      keys_same(&l, "prefix=7 add=7 torn=7:1-2", "prefix=7 add=7 torn=7:1+3") == 0,
	      "a torn write: another key than the whole write, and than another tear");
	CHECK(keys_same(&l, "prefix=5 add=5 torn=5:1", "prefix=6") == 1 &&
		      keys_same(&l, "prefix=5 add=5 torn=5:0", "prefix=5") == 1,
	      "a write torn to its one changed sector is the whole write; torn to its unchanged one, none");
	CHECK(keys_same(&l, "prefix=6 add=6,7", "prefix=8") == 1 && keys_same(&l, "prefix=6 add=7", "prefix=6 add=6,7") == 0 &&
		      keys_same(&l, "prefix=5 add=5,7 torn=7:0", "prefix=6 add=7 torn=7:0") == 1 &&
		      keys_same(&l, "prefix=5 add=5,7", "prefix=5 add=5,7-8") == 0 &&
		      keys_same(&l, "prefix=5 add=5,8", "prefix=5 add=5,7-8") == 1,
	      "adds on separate sectors (keyed by their deltas over the prefix) and overlapping ones (applied in turn)");
	CHECK(keys_same(&l, "prefix=8", "prefix=9") == 0, "a discard: another key");
	CHECK(keys_same(&l, "prefix=9", "prefix=10") == 1, "a discard leaves zeros: the same key as zeros written");
	CHECK(keys_same(&l, "prefix=7", "prefix=9") == 0,
	      "a discarded range is touched: not the key of the state that never wrote it");
	struct wlog_keyer *k;
	struct errbuf eb = { 0 };
	CHECK(wlog_keyer_new(&l, &k, &eb) == 0, "a keyer");
	struct wlog_spec bad;
	struct wlog_key key;
	wlog_spec_parse("prefix=12", &bad, &eb);
	CHECK(wlog_state_key(k, &bad, &key, &eb) < 0 && strstr(eb.msg, "beyond the log"),
	      "a spec beyond the log is refused as wlog_apply refuses it (%s)", eb.msg);
	wlog_spec_free(&bad);

	/* Equal keys, equal disks: every state of the log against every other, replayed. */
	static const char *const specs[] = { "prefix=0", "prefix=1", "prefix=0 add=2", "prefix=3", "prefix=5",
					     "prefix=5 add=6", "prefix=5 add=6 torn=6:0", "prefix=5 add=6 torn=6:1",
					     "prefix=6", "prefix=7", "prefix=7 add=9", "prefix=8", "prefix=9",
					     "prefix=9 add=10", "prefix=11", "prefix=5 add=7-9", "prefix=5 add=6,8" };
	enum { NS = sizeof(specs) / sizeof(specs[0]) };
	static unsigned char img[NS][DISK];
	struct wlog_key keys[NS];
	int ok = 1, bad_pairs = 0, equal_pairs = 0;
	for (size_t i = 0; i < NS; i++) {
		keys[i] = key_of(k, specs[i], &ok);
		ok &= replay_into(&l, specs[i], img[i]) == 0;
	}
	for (size_t i = 0; i < NS; i++)
		for (size_t j = i + 1; j < NS; j++)
			if (wlog_key_equal(&keys[i], &keys[j])) {
				equal_pairs++;
				if (memcmp(img[i], img[j], DISK)) {
					printf("# '%s' and '%s': equal keys, different disks\n", specs[i], specs[j]);
					bad_pairs++;
				}
			}
	CHECK(ok && bad_pairs == 0 && equal_pairs >= 10, "equal keys are equal replayed disks (%d pairs, %d wrong)",
	      equal_pairs, bad_pairs);
	wlog_keyer_free(k);
	wlog_close(&l);
	close(fd);

	/* A 4096-byte log: torn pieces still count 512-byte sectors. */
	struct lb c;
	lb_init(&c, 4096);
	lb_write(&c, 2, 2, 5);
	lb_flush(&c);
	lb_write(&c, 2, 1, 6);
	lb_super(&c, WLOG_MAGIC, 1, c.n, 4096);
	fd = open_log("k4.log", &c, &l);
	CHECK(fd >= 0 && keys_same(&l, "prefix=2 add=2 torn=2:0-7", "prefix=3") == 1 &&
		      keys_same(&l, "prefix=2 add=2 torn=2:0-6", "prefix=3") == 0,
	      "4096-byte sectors: a write torn to all its eight 512-byte pieces is the whole write, seven are not");
	wlog_close(&l);
	close(fd);
	lb_free(&c);
	lb_free(&b);

	/* The cost on a big log: 64 MiB of writes, every prefix keyed, then an
	 * epoch's subsets: about one pass over the sectors. */
	struct lb big;
	lb_init(&big, 512);
	static unsigned char data[64 * 512];
	size_t nw = 2048;
	for (size_t i = 0; i < nw; i++) {
		fill(data, sizeof(data), (unsigned)i);
		lb_entry(&big, (i * 64) % (1u << 20), 64, 0, 0, NULL, 0, data, sizeof(data));
		if (i % 16 == 15)
			lb_flush(&big);
	}
	lb_super(&big, WLOG_MAGIC, 1, big.n, 512);
	fd = open_log("big.log", &big, &l);
	struct timespec t0, t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = wlog_keyer_new(&l, &k, &eb);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	size_t nkeys = 0;
	char text[128];
	for (size_t p = 0; rc == 0 && p <= l.n; p += 1, nkeys++)
		key_of(k, (snprintf(text, sizeof(text), "prefix=%zu", p), text), &ok);
	for (size_t m = 1; rc == 0 && m < 256; m++, nkeys++) {
		snprintf(text, sizeof(text), "prefix=%zu add=%zu%s", l.n - 16, l.n - 16 + m % 15, m & 1 ? ",2175" : "");
		key_of(k, text, &ok);
	}
	clock_gettime(CLOCK_MONOTONIC, &t2);
	double hs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	double ks = (double)(t2.tv_sec - t1.tv_sec) + (double)(t2.tv_nsec - t1.tv_nsec) / 1e9;
	CHECK(rc == 0 && ok && hs + ks < 5.0, "%zu MiB of writes hashed in %.3f s, %zu keys in %.3f s", big.len >> 20, hs,
	      nkeys, ks);
	wlog_keyer_free(k);
	wlog_close(&l);
	close(fd);
	free(big.buf);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", keydir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", keydir);
}

/* Rewrite the log file as its first len bytes of b (what QEMU has written so far). */
static void put_prefix(int fd, const struct lb *b, size_t len)
{
	if (ftruncate(fd, 0) < 0 || pwrite(fd, b->buf, len, 0) != (ssize_t)len)
		printf("# cannot write the test log\n");
}

/* A file of no name in $TMPDIR (else /tmp), or -1. */
static int temp_fd(void)
{
	const char *td = getenv("TMPDIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/crashlab-wlog-test.XXXXXX", td && *td ? td : "/tmp");
	int fd = mkstemp(path);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* wlog_follow: a log read while it grows, as the recording's op positions are. */
TEST(follow_a_growing_log)
{
	int fd = temp_fd();
	CHECK(fd >= 0, "temp file");
	if (fd < 0)
		return;
	struct lb b;
	lb_init(&b, 512);
	lb_write(&b, 8, 4, 1);   /* 1 */
	lb_flush(&b);            /* 2 */
	lb_write(&b, 16, 8, 2);  /* 3 */
	lb_write(&b, 40, 1, 3);  /* 4 */
	lb_flush(&b);            /* 5 */
	lb_discard(&b, 0, 8);    /* 6 */
	lb_mark(&b, "m");        /* 7 */
	lb_write(&b, 64, 2, 4);  /* 8 */
	struct wlog_follow f = { 0 };

	/* Nothing flushed yet: the superblock is still a hole. */
	put_prefix(fd, &b, b.r[2].hdr_off);
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 0 && f.flushed == 0 && f.sectorsize == 0,
	      "no superblock yet: nothing counted");

	/* The first flush: superblock written, two entries. */
	lb_super(&b, WLOG_MAGIC, 1, 2, 512);
	put_prefix(fd, &b, b.r[2].hdr_off);
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 2 && f.flushed == 2, "two entries, flushed 2 (%llu, %llu)",
	      (unsigned long long)f.entries, (unsigned long long)f.flushed);

	/* Entry 3's data only half there: it is not counted yet. */
	put_prefix(fd, &b, b.r[2].hdr_off + 512 + 2 * 512);
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 2 && f.flushed == 2, "a write whose data is partly written waits");

	/* Everything up to the second flush, but the superblock still says 2
	 * (an older superblock update landing last): the entries say 5. */
	put_prefix(fd, &b, b.r[5].hdr_off);
	uint64_t sb = 0;
	CHECK(wlog_read_committed(fd, &sb) == 0 && sb == 2 && wlog_follow(fd, &f) == 0 && f.entries == 5 &&
	      f.flushed == 5, "a stale superblock (2): the entries count 5 up to the flush");

	/* Entry 6 is still being written (its header a hole) while 7 and 8 are
	 * there: the prefix ends before it. */
	put_prefix(fd, &b, b.len);
	unsigned char zero[512] = { 0 };
	CHECK(pwrite(fd, zero, sizeof(zero), (off_t)b.r[5].hdr_off) == (ssize_t)sizeof(zero), "hole");
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 5 && f.flushed == 5, "a hole in the log ends the prefix");

	/* Then it is written: discard, mark and write follow, no new flush. */
	put_prefix(fd, &b, b.len);
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 8 && f.flushed == 5 && f.pos == b.len,
	      "the rest: 8 entries, the last flush still 5");
	CHECK(wlog_follow(fd, &f) == 0 && f.entries == 8 && f.flushed == 5, "again: nothing new");

	/* Not a write log. */
	struct wlog_follow g = { 0 };
	unsigned char junk[512];
	memset(junk, 0x5a, sizeof(junk));
	CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, junk, sizeof(junk), 0) == (ssize_t)sizeof(junk), "junk");
	errno = 0;
	CHECK(wlog_follow(fd, &g) < 0 && errno == EINVAL, "a foreign file: EINVAL");
	close(fd);
	lb_free(&b);
}

/* wlog_slice: a recording's part of a log that serves many recordings, one
 * region of the disk each, is the log a fresh disk would have had: built
 * here a second time directly, it must be the same bytes. */
TEST(slice_a_region)
{
	int fd = temp_fd(), ofd = temp_fd();
	CHECK(fd >= 0 && ofd >= 0, "temp files");
	if (fd < 0 || ofd < 0)
		return;
	const uint64_t R = 1000; /* region k: sectors [k * R, k * R + R) */
	struct lb b, want;
	lb_init(&b, 512);
	/* region 1's recording, then its unmount */
	lb_write(&b, R + 2, 4, 1);
	lb_flush(&b);
	lb_write(&b, R + 10, 1, 2);
	lb_flush(&b);
	put_prefix(fd, &b, b.len);
	lb_super(&b, WLOG_MAGIC, 1, 4, 512);
	put_prefix(fd, &b, b.len);
	struct wlog_follow from = { 0 }, to;
	CHECK(wlog_follow(fd, &from) == 0 && from.entries == 4, "region 1's part: 4 entries");
	/* region 2's recording: the first and the last sector of the region */
	lb_write(&b, 2 * R, 2, 3);
	lb_flush(&b);
	lb_discard(&b, 2 * R + 8, 8);
	lb_write(&b, 3 * R - 3, 3, 4);
	lb_super(&b, WLOG_MAGIC, 1, 6, 512);
	put_prefix(fd, &b, b.len);
	to = from;
	CHECK(wlog_follow(fd, &to) == 0 && to.entries == 8, "then 8 entries");
	struct errbuf eb = { 0 };
	CHECK(wlog_slice(fd, &from, &to, 6 - 4, 2 * R, R, ofd, &eb) == 0, "region 2 cut out: %s", eb.msg);
	lb_init(&want, 512);
	lb_write(&want, 0, 2, 3);
	lb_flush(&want);
	lb_discard(&want, 8, 8);
	lb_write(&want, R - 3, 3, 4);
	lb_super(&want, WLOG_MAGIC, 1, 2, 512);
	off_t got_len = lseek(ofd, 0, SEEK_END);
	unsigned char *got = malloc(want.len);
	CHECK(got_len == (off_t)want.len && pread(ofd, got, want.len, 0) == (ssize_t)want.len &&
	      !memcmp(got, want.buf, want.len), "the part is the log a fresh disk would have had (%lld bytes of %zu)",
	      (long long)got_len, want.len);
	struct wlog l;
	CHECK(wlog_open(&l, ofd, &eb) == 0 && l.n == 4 && l.committed == 2, "it opens: 4 entries, 2 committed");
	wlog_close(&l);

	/* A count beyond the part is clamped; the whole log from the start
	 * (a zeroed state) with no shift is the log itself, its count too. */
	CHECK(ftruncate(ofd, 0) == 0 && wlog_slice(fd, &from, &to, 99, 2 * R, R, ofd, &eb) == 0 &&
	      wlog_read_committed(ofd, &(uint64_t){ 0 }) == 0, "a count of 99");
	uint64_t c = 0;
	CHECK(wlog_read_committed(ofd, &c) == 0 && c == 4, "is clamped to the 4 entries (%llu)", (unsigned long long)c);
	struct wlog_follow zero = { 0 };
	CHECK(ftruncate(ofd, 0) == 0 && wlog_slice(fd, &zero, &to, 6, 0, 4 * R, ofd, &eb) == 0, "the whole log: %s",
	      eb.msg);
	got_len = lseek(ofd, 0, SEEK_END);
	got = realloc(got, b.len);
	CHECK(got_len == (off_t)b.len && pread(ofd, got, b.len, 0) == (ssize_t)b.len && !memcmp(got, b.buf, b.len),
	      "the whole log from the start is the log");

	/* A write outside the region: the part is not one region's. */
	CHECK(ftruncate(ofd, 0) == 0 && wlog_slice(fd, &from, &to, 2, 2 * R, R - 1, ofd, &eb) < 0 &&
	      strstr(eb.msg, "entry 7 writes sectors 2997+3, outside the region 2000+999"), "out of the region: %s",
	      eb.msg);
	CHECK(wlog_slice(fd, &from, &to, 2, 2 * R + 1, R, ofd, &eb) < 0 && strstr(eb.msg, "entry 4 writes"),
	      "below the region: %s", eb.msg);
	CHECK(wlog_slice(fd, &to, &from, 2, 0, 4 * R, ofd, &eb) < 0 && strstr(eb.msg, "do not follow"),
	      "positions the wrong way round: %s", eb.msg);
	free(got);
	close(fd);
	close(ofd);
	lb_free(&b);
	lb_free(&want);
}

TEST_MAIN()

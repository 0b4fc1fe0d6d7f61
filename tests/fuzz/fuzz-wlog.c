/* fuzz-wlog.c - the write-log reader and replay (core/wlog.c,
 * core/wlog-apply.c) on any bytes, as a recording guest that died mid-write
 * or a corrupted cache can leave them. The log is opened from a memfd; if it
 * scans, every entry must lie inside the file, the counts must add up, every
 * entry's data must be readable, and a crash state (given on a first line
 * "spec: ..." or else every flush point) must rebuild or be refused with a
 * message, never write outside what the log names; one that rebuilds has a
 * content key. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/wlog.h"
#include "tests/fuzz/fuzz.h"

static int memfd_with(const void *data, size_t size)
{
	int fd = memfd_create("fuzz-wlog", 0);
	if (fd < 0)
		abort();
	const unsigned char *p = data;
	while (size) {
		ssize_t n = write(fd, p, size);
		if (n <= 0)
			abort();
		p += n;
		size -= (size_t)n;
	}
	return fd;
}

static void replay(const struct wlog *l, const char *spec_text)
{
	struct wlog_spec s;
	struct errbuf e = { 0 };
	if (wlog_spec_parse(spec_text, &s, &e) < 0)
		return;
	/* a sparse 64 MiB disk: replay must refuse what lies beyond it */
	int dev = memfd_create("fuzz-dev", 0);
	if (dev < 0 || ftruncate(dev, 64 << 20) < 0)
		abort();
	uint64_t written = 0;
	struct errbuf e2 = { 0 };
	if (wlog_apply(l, &s, dev, &written, &e2) < 0) {
		FUZZ_ASSERT(e2.msg[0] != '\0', "wlog_apply failed without a message");
	} else {
		uint64_t bound = 0;
		for (size_t i = 0; i < l->n; i++)
			if (wlog_spec_applies(&s, i) && wlog_changes_disk(&l->e[i]))
				bound += l->e[i].nr_sectors * l->sectorsize;
		FUZZ_ASSERT(written <= bound, "replay wrote %llu bytes, the applied writes and discards hold %llu",
			    (unsigned long long)written, (unsigned long long)bound);
		/* a state that rebuilds has a content key, unless the log is too big to key (said) */
		struct wlog_keyer *k;
		struct wlog_key key;
		struct errbuf e3 = { 0 };
		if (wlog_keyer_new(l, &k, &e3) < 0) {
			FUZZ_ASSERT(e3.msg[0] != '\0', "wlog_keyer_new failed without a message");
		} else {
			FUZZ_ASSERT(wlog_state_key(k, &s, &key, &e3) == 0, "a state that rebuilds has no key: %s", e3.msg);
			wlog_keyer_free(k);
		}
	}
	close(dev);
	wlog_spec_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char spec[256] = "";
	if (size > 6 && memcmp(data, "spec: ", 6) == 0) {
		const uint8_t *nl = memchr(data, '\n', size < sizeof(spec) ? size : sizeof(spec));
		if (!nl)
			return 0;
		memcpy(spec, data + 6, (size_t)(nl - data) - 6);
		spec[nl - data - 6] = '\0';
		size -= (size_t)(nl + 1 - data);
		data = nl + 1;
	}
	int fd = memfd_with(data, size);
	struct wlog l;
	struct errbuf e = { 0 };
	uint64_t committed = 0;
	int rc = wlog_read_committed(fd, &committed);
	if (wlog_open(&l, fd, &e) < 0) {
		FUZZ_ASSERT(e.code == 65 && e.msg[0], "open failed without a data error (%d '%s')", e.code, e.msg);
		close(fd);
		return 0;
	}
	FUZZ_ASSERT(rc == 0 && committed == l.committed, "superblock count %llu, scan says %llu",
		    (unsigned long long)committed, (unsigned long long)l.committed);
	FUZZ_ASSERT(l.file_size == size, "file size %llu of %zu", (unsigned long long)l.file_size, size);
	FUZZ_ASSERT(l.n >= l.committed || l.nosuper, "%zu entries, %llu committed", l.n,
		    (unsigned long long)l.committed);
	if (!l.nosuper) {
		/* Following the log finds the same entries as reading it whole. */
		struct wlog_follow f = { 0 };
		uint64_t last_flush = 0;
		for (size_t i = 0; i < l.n; i++)
			if (wlog_is_flush(&l.e[i]))
				last_flush = i + 1;
		FUZZ_ASSERT(wlog_follow(fd, &f) == 0 && f.entries == l.n && f.flushed == last_flush,
			    "follow: %llu entries flushed %llu, the reader %zu flushed %llu",
			    (unsigned long long)f.entries, (unsigned long long)f.flushed, l.n,
			    (unsigned long long)last_flush);
	}
	uint64_t S = l.sectorsize;
	for (size_t i = 0; i < l.n; i++) {
		const struct wlog_entry *en = &l.e[i];
		uint64_t n = wlog_data_size(&l, i);
		FUZZ_ASSERT(en->offset <= size && n <= size - en->offset,
			    "entry %zu data [%llu, +%llu) beyond the file (%zu)", i,
			    (unsigned long long)en->offset, (unsigned long long)n, size);
		if (wlog_is_write(en))
			FUZZ_ASSERT(n == en->nr_sectors * S, "entry %zu: %llu bytes for %llu sectors", i,
				    (unsigned long long)n, (unsigned long long)en->nr_sectors);
		if (n && n <= 1 << 20) {
			void *buf = malloc(n);
			FUZZ_ASSERT(wlog_read_data(&l, i, buf) == 0, "entry %zu unreadable: %s", i,
				    strerror(errno));
			free(buf);
		}
	}
	struct wlog_counts c;
	wlog_count(&l, 0, l.n, &c);
	FUZZ_ASSERT(c.entries == l.n, "counted %llu of %zu", (unsigned long long)c.entries, l.n);
	FUZZ_ASSERT(c.writes + c.discards + c.marks <= c.entries, "counts exceed entries");
	size_t nf = wlog_flush_index(&l, NULL, 0);
	FUZZ_ASSERT(nf == c.flushes, "%zu flush points, %llu flushes", nf, (unsigned long long)c.flushes);
	size_t *fl = calloc(nf + 1, sizeof(*fl));
	wlog_flush_index(&l, fl, nf);
	for (size_t k = 0; k < nf; k++)
		FUZZ_ASSERT(fl[k] < l.n && wlog_is_flush(&l.e[fl[k]]) && (k == 0 || fl[k] > fl[k - 1]),
			    "flush index %zu is %zu", k, fl[k]);
	if (spec[0]) {
		replay(&l, spec);
	} else {
		char text[64];
		for (size_t k = 0; k < nf && k < 8; k++) {
			snprintf(text, sizeof(text), "prefix=%zu", fl[k] + 1);
			replay(&l, text);
		}
		snprintf(text, sizeof(text), "prefix=%zu", l.n);
		replay(&l, text);
	}
	free(fl);
	wlog_close(&l);
	close(fd);
	return 0;
}

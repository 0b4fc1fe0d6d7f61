/*
 * wlog.h - the write log: reading a dm-log-writes format log (as QEMU's
 * blklogwrites driver and Linux's dm-log-writes target write it), and
 * rebuilding a disk from it after a simulated power cut.
 *
 * libc only: the static in-guest agent links this file too (the checker
 * guest replays states with wlog_apply).
 *
 * On-disk format (little-endian; S = the log sector size, a power of two,
 * 512 <= S < 16 MiB):
 *   sector 0      superblock {u64 magic, u64 version = 1, u64 nr_entries,
 *                 u32 sectorsize}, zero-padded to S
 *   sector 1..    entries, each a header {u64 sector, u64 nr_sectors,
 *                 u64 flags, u64 data_len} zero-padded to S, followed by the
 *                 written data (nr_sectors * S bytes) unless it is a discard
 *                 or a mark. sector and nr_sectors count S-byte sectors.
 *   A mark's label (data_len bytes) sits in the header sector right after the
 *   32-byte header, as Linux writes it; a label too long for that
 *   (data_len > S - 32, never written by Linux) is read from the following
 *   sectors, data_len rounded up to S.
 * QEMU rewrites nr_entries when it logs a flush (the count includes the
 * flush) and every log-super-update-interval entries; after a power cut the
 * file usually holds complete entries beyond that count (the tail) and may
 * end inside an entry.
 *
 * State specs: a crash state as one line of text, stored in the db and sent
 * to the checker guest, so a state is rebuilt exactly without the seed that
 * chose it. Tokens separated by spaces:
 *
 *   prefix=N                apply entries 0..N-1 in log order (required)
 *   add=LIST                also apply these entries (all >= N); LIST is
 *                           comma-separated indices and inclusive ranges A-B
 *   torn=E:R+R,E:R...       tear entry E (which must be in add): write only
 *                           these sectors of it; R is a sector or an
 *                           inclusive range A-B, counted in 512-byte sectors
 *                           from the start of the write, whatever S is
 *
 * e.g. "prefix=120", "prefix=120 add=121,124-126,130 torn=124:0-3+6".
 * Parsing accepts the keys in any order and lists in any order (they are
 * sorted and merged); formatting always writes the canonical form above,
 * which parses back to itself.
 */
#ifndef CRASHLAB_CORE_WLOG_H
#define CRASHLAB_CORE_WLOG_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#define WLOG_MAGIC 0x6a736677736872ULL
#define WLOG_VERSION 1
#define WLOG_HDR 32            /* bytes of an entry header; the rest of its sector is padding */
#define WLOG_SECTOR 512        /* the unit of torn-write sectors */
#define WLOG_MAX_SECTORSIZE (16u << 20)

enum {
	WLOG_FLUSH = 1,        /* a cache flush (QEMU: nr_sectors 0) */
	WLOG_FUA = 2,          /* forced unit access (Linux only; QEMU never sets it) */
	WLOG_DISCARD = 4,      /* a discard: no data follows, replayed as zeros */
	WLOG_MARK = 8,         /* a label (Linux's "dmsetup message ... mark"); no disk effect */
	WLOG_METADATA = 16,    /* Linux: the write was REQ_META; informational */
	WLOG_FLAGS_KNOWN = 31,
};

struct wlog_entry {
	uint64_t sector;       /* first sector written, in S-byte sectors */
	uint64_t nr_sectors;   /* sectors written or discarded */
	uint64_t flags;        /* WLOG_* */
	uint64_t data_len;     /* the header's data_len (a mark's label length) */
	uint64_t offset;       /* byte offset in the log of the data (of a mark's label) */
};

struct wlog {
	int fd;                /* the log (not owned) */
	uint32_t sectorsize;   /* S */
	uint64_t committed;    /* the superblock's nr_entries */
	uint64_t file_size;    /* bytes in the log when it was opened */
	struct wlog_entry *e;  /* every complete entry, the tail beyond committed included */
	size_t n, cap;
	int nosuper;           /* sector 0 was all zeros (no flush logged yet): S taken as 512 */
	int dropped;           /* the tail ended in a truncated or invalid entry, left out
	                          (zeros after the last entry are unwritten space, not dropped) */
	uint64_t dropped_at;   /* byte offset of that entry */
	char dropped_why[160]; /* "entry N at byte B: ..." */
};

/* Is the entry a data write / a discard with an effect / a flush / a mark? */
static inline int wlog_is_write(const struct wlog_entry *e)
{
	return !(e->flags & (WLOG_DISCARD | WLOG_MARK)) && e->nr_sectors > 0;
}
static inline int wlog_is_discard(const struct wlog_entry *e)
{
	return (e->flags & WLOG_DISCARD) && e->nr_sectors > 0;
}
static inline int wlog_is_flush(const struct wlog_entry *e)
{
	return (e->flags & WLOG_FLUSH) != 0;
}
static inline int wlog_is_mark(const struct wlog_entry *e)
{
	return (e->flags & WLOG_MARK) != 0;
}
/* Does applying the entry change the disk (a write or a discard)? */
static inline int wlog_changes_disk(const struct wlog_entry *e)
{
	return wlog_is_write(e) || wlog_is_discard(e);
}

/* Scan the log behind fd: validate the superblock and every entry header
 * (headers only, the data are not read). An invalid or truncated entry among
 * the first `committed` is fatal; in the tail it ends the log (l->dropped).
 * 0, or -1 with a one-line message in e (65): "bad magic 0x...", "unsupported
 * version N", "invalid sector size N", "file too short for a superblock
 * (N bytes)", "entry 17 at byte 9216: invalid flags 0x40", "entry 17 at byte
 * 9216: truncated (needs 4608 bytes, file ends after 512)", "cannot read the
 * log: ...". */
int wlog_open(struct wlog *l, int fd, struct errbuf *e);
void wlog_close(struct wlog *l);   /* frees the entries; the fd stays open */

/* Re-read only the superblock's entry count. A log with no superblock yet
 * (shorter than one, or all zeros: no flush logged) counts 0. 0, or -1 with
 * errno (EINVAL: not a write log). */
int wlog_read_committed(int fd, uint64_t *nr_entries);
/* The same, and the log's sector size (0 while the superblock is a hole). */
int wlog_read_super(int fd, uint64_t *nr_entries, uint32_t *sectorsize);

/* Follow a log that is still being written (a recording under way), from
 * where the last call stopped: `entries` counts the entries that form a
 * complete prefix of the log, `flushed` those up to and including the last
 * flush among them. The superblock's count is not enough while requests
 * are in flight: QEMU builds each superblock update from its entry count
 * and writes it out asynchronously, so an older count can land after a
 * newer one. A flush the guest has seen complete is in this prefix unless
 * a request logged before it is still being written. Start from a zeroed
 * struct; 0 (the prefix may be empty), or -1 with errno (EINVAL: not a
 * write log). */
struct wlog_follow {
	uint64_t pos;             /* byte offset of the next entry */
	uint64_t entries;
	uint64_t flushed;
	uint32_t sectorsize;      /* 0 until the superblock is written */
};
int wlog_follow(int fd, struct wlog_follow *f);

/* A part of a log that is still being written, made a log of its own: the
 * complete entries from `from` (a wlog_follow state taken earlier on the
 * same log; zeroed: the start) to `to` (one taken later), written to out
 * from byte 0 as a fresh log would be - a superblock whose entry count is
 * `committed` (clamped to the entries copied), then the entries, every
 * write's and discard's sector moved down by `shift` S-byte sectors. An
 * entry that writes or discards outside [shift, shift + limit) is an
 * error: the part was to hold one region's requests only. A guest that
 * lives across recordings gives each its own region of one disk and one
 * log: this is how a recording's log is cut out of it. 0, or -1 with a
 * message in e (65 for the log; for I/O, exit_for_errno's code). */
int wlog_slice(int fd, const struct wlog_follow *from, const struct wlog_follow *to, uint64_t committed,
	       uint64_t shift, uint64_t limit, int out, struct errbuf *e);

/* Bytes wlog_read_data gives for an entry: nr_sectors * S for a write,
 * data_len for a mark, 0 otherwise. */
uint64_t wlog_data_size(const struct wlog *l, size_t i);
/* Read entry i's data (wlog_data_size bytes) into buf. 0, or -1 with errno. */
int wlog_read_data(const struct wlog *l, size_t i, void *buf);

struct wlog_counts {
	uint64_t entries;
	uint64_t flushes;
	uint64_t writes;          /* entries with data written to the disk */
	uint64_t discards;
	uint64_t marks;
	uint64_t fua;
	uint64_t bytes_written;   /* data bytes of the writes */
	uint64_t bytes_discarded;
};
/* Count entries [from, to) (to is clamped to l->n). */
void wlog_count(const struct wlog *l, size_t from, size_t to, struct wlog_counts *c);
/* Indices of the flush entries, in order: stores at most max of them in out
 * (out may be NULL) and returns how many there are. */
size_t wlog_flush_index(const struct wlog *l, size_t *out, size_t max);

/* A torn piece: sectors [start, start + count) of entry `entry`, in 512-byte
 * sectors from the start of its data. An entry may have several pieces. */
struct wlog_tear {
	uint64_t entry;
	uint64_t start, count;
};

/* A crash state: entries [0, prefix), then add[] (ascending, each >= prefix),
 * with the writes named in torn[] (sorted by entry, then start; pieces
 * neither overlapping nor adjacent) applied only in part. */
struct wlog_spec {
	uint64_t prefix;
	uint64_t *add;
	size_t nadd;
	struct wlog_tear *torn;
	size_t ntorn;
};

/* Parse spec text into s (allocated; free with wlog_spec_free). 0, or -1
 * with a message in e (65); nothing is left allocated on failure. */
int wlog_spec_parse(const char *text, struct wlog_spec *s, struct errbuf *e);
/* The canonical text of s (snprintf-like: returns the length it needs, and
 * writes at most size bytes including the NUL). */
int wlog_spec_format(const struct wlog_spec *s, char *buf, size_t size);
/* Sort and merge add[] and torn[] into the canonical order. 0, or -1 with a
 * message when an add index is below prefix or a torn entry is not in add. */
int wlog_spec_normalize(struct wlog_spec *s, struct errbuf *e);
void wlog_spec_free(struct wlog_spec *s);
/* Is entry i applied by s (in full or torn)? */
int wlog_spec_applies(const struct wlog_spec *s, uint64_t i);

/* Rebuild the crash state s on dev_fd (holding the base image): in log
 * order, pwrite each applied write's data (or its torn sectors) at byte
 * sector * S, zeros over each applied discard; flushes and marks change
 * nothing. The spec is checked against the log before anything is written
 * (indices in range, torn entries are writes, torn sectors inside them).
 * bytes_written (may be NULL) gets the bytes written to dev_fd. 0, or -1
 * with a message in e (65). */
int wlog_apply(const struct wlog *l, const struct wlog_spec *s, int dev_fd, uint64_t *bytes_written,
	       struct errbuf *e);

/*
 * Content keys: two crash states whose rebuilt disks are the same have the
 * same key, so the run loop checks one of them (engine/runner.c). The key
 * stands for the final content of every 512-byte sector the state's spec
 * touches, with wlog_apply's semantics: entries in log order, a torn write
 * only in its pieces, a discard leaving zeros (so a discard and a write of
 * zeros over the same sectors give the same key), flushes and marks
 * nothing. Sectors no applied entry touches hold the base image's content
 * in every state and are left out. Different touched sets give different
 * keys even where their content happens to equal the base's: a missed
 * duplicate, never a false one.
 *
 * Method. wlog_keyer_new reads the log's data once and hashes every
 * 512-byte sector of every write (128 bits; 16 bytes of memory per 512 of
 * data written). A state's key is a set hash over its touched sectors:
 * sums, in two independent 64-bit lanes, of a mix of (sector, that
 * sector's final data hash), with the count of touched sectors; equal sets
 * of (sector, content) give equal keys whatever the entries that wrote
 * them. The keyer keeps the sector -> content map of the last prefix it
 * applied, so states given in ascending prefix order (as states_enumerate
 * makes them) cost only their own entries: the whole enumeration costs
 * about one pass over the log's sectors plus each state's add list.
 */
struct wlog_key {
	uint64_t a, b;         /* the two lanes of the set hash */
	uint64_t sectors;      /* 512-byte sectors the state touches */
};

static inline int wlog_key_equal(const struct wlog_key *x, const struct wlog_key *y)
{
	return x->a == y->a && x->b == y->b && x->sectors == y->sectors;
}

struct wlog_keyer;
/* Hash the data of every write of l (one read of the log). *out is freed
 * with wlog_keyer_free. 0, or -1 with a message in e (65): the log cannot
 * be read, or its writes are spread wider than keys are made for. */
int wlog_keyer_new(const struct wlog *l, struct wlog_keyer **out, struct errbuf *e);
void wlog_keyer_free(struct wlog_keyer *k);
/* The content key of crash state s (checked against the log as wlog_apply
 * checks it). 0, or -1 with a message in e (65). */
int wlog_state_key(struct wlog_keyer *k, const struct wlog_spec *s, struct wlog_key *key, struct errbuf *e);

#endif

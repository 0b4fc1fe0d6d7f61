/*
 * workload.h - the workload language (.wl files): parse, print, patterns.
 *
 * libc only: the same parser runs on the host (crashlab run) and in the
 * static guest agent, which receives each op as its canonical text line and
 * parses it again, so the two sides can never read an op differently.
 *
 * Op numbering: ops are numbered 1..n in file order across both sections;
 * that number (wl_op.id) is the "op" of the write pattern and the op id
 * stored in crashdb.
 */
#ifndef CRASHLAB_CORE_WORKLOAD_H
#define CRASHLAB_CORE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

enum wl_kind {
	WL_MKDIR, WL_RMDIR, WL_CREAT, WL_WRITE, WL_APPEND, WL_DWRITE, WL_MMAPWRITE,
	WL_TRUNCATE, WL_FALLOC, WL_LINK, WL_SYMLINK, WL_RENAME, WL_UNLINK,
	WL_SETXATTR, WL_REMOVEXATTR, WL_CHMOD, WL_FSYNC, WL_FDATASYNC, WL_SYNC,
	WL_SYNCFS, WL_SYNC_FILE_RANGE, WL_FBARRIER, WL_FDATABARRIER, WL_FIEMAP_SYNC,
	WL_CLOSE, WL_SLEEP, WL_MARK,
	WL_NKINDS
};

enum wl_section { WL_SETUP = 0, WL_RUN = 1 };

/* falloc modes */
enum { WL_FALLOC_DEFAULT, WL_FALLOC_KEEP_SIZE, WL_FALLOC_PUNCH_HOLE, WL_FALLOC_ZERO_RANGE,
       WL_FALLOC_ZERO_RANGE_KEEP_SIZE };
/* rename flags */
enum { WL_RENAME_PLAIN, WL_RENAME_NOREPLACE, WL_RENAME_EXCHANGE, WL_RENAME_BARRIER };
/* sync_file_range flags: bit set of these */
enum { WL_SFR_WAIT_BEFORE = 1, WL_SFR_WRITE = 2, WL_SFR_WAIT_AFTER = 4 };

struct wl_op {
	enum wl_kind kind;
	enum wl_section section;
	int id;            /* 1..n over the whole file */
	int line, col;     /* where the op starts in the source (1-based) */
	char *path;        /* P, OLD (rename/link), or the link P of symlink */
	char *path2;       /* NEW (rename/link); TARGET of symlink */
	int64_t off;       /* OFF (write/dwrite/mmapwrite/falloc/sync_file_range); -1 = not given */
	int64_t len;       /* LEN, SIZE (truncate), MS (sleep); -1 = not given */
	char *data;        /* "TEXT" with escapes resolved, or NULL for a pattern write */
	size_t data_len;
	uint32_t mode;     /* mkdir/creat/chmod MODE (mkdir default 0755, creat 0644) */
	int flags;         /* falloc mode, rename flag or sync_file_range bits */
	char *name;        /* xattr NAME; mark LABEL */
	char *value;       /* xattr VALUE */
	size_t value_len;
};

/*
 * The result of one op as carried out in the recording guest: the one type
 * from the agent's reply (core/proto.h RESULT) through the simulator and the
 * judge to the database row.
 */
struct op_result {
	int64_t ret;       /* the system call's return value (-1 on failure) */
	int err;           /* errno when it failed, else 0 */
	uint64_t ino;      /* inode number path names after the op (lstat), 0 if none */
	uint64_t ino2;     /* the same for path2 (rename, link) or symlink's target, 0 if none */
	double ms;         /* how long the op took in the guest */
	int64_t log_pos;   /* the host's: committed write-log entries when it returned */
};

/*
 * An expectation of an [expect] section: what the crash states after the
 * run's last persistence op (the last fsync, fdatasync, sync or syncfs of
 * [run], else its last op) must show, as xfstests' power-failure tests
 * check after their simulated crash. "[expect ext4 xfs]" limits a section
 * to those file systems. One per line:
 *     PATH exists | absent
 *     PATH size N | nlink N | mode MODE
 *     PATH type file|dir|symlink
 *     PATH data K          its size and bytes as PATH had them after op K
 *     PATH text "TEXT"     its whole content
 *     PATH lists [NAME...] a directory holding exactly these names ("." is the root)
 *     PATH xattr NAME "VALUE" | noxattr NAME
 *     PATH target "TARGET" a symlink's target
 */
enum wl_expect_kind {
	WX_EXISTS, WX_ABSENT, WX_SIZE, WX_NLINK, WX_MODE, WX_TYPE, WX_DATA, WX_TEXT, WX_LISTS, WX_XATTR,
	WX_NOXATTR, WX_TARGET,
	WX_NKINDS
};

struct wl_expect {
	enum wl_expect_kind kind;
	int line;          /* in the source */
	char *text;        /* the line as written (trimmed), for citations */
	char *fs;          /* the section's file systems, space-separated; NULL: every one */
	char *path;
	int64_t num;       /* size, nlink, mode, op id (data); type: 'f', 'd', 'l' */
	char *str;         /* text, xattr name, symlink target */
	size_t str_len;
	char *value;       /* xattr value */
	size_t value_len;
	char **names;      /* lists: sorted */
	size_t nnames;
};

struct wl_workload {
	char *file;        /* as given, for messages */
	struct wl_op *ops;
	size_t n;          /* all ops */
	size_t nsetup;     /* ops[0..nsetup) are [setup]; the rest [run] */
	struct wl_expect *expects;
	size_t nexpects;
	int overlay;       /* the line of an [overlay] header, 0 without one: [setup]
			    * runs in the lower layer of an overlay on the fs under
			    * test, [run] through the overlay (WL_OVERLAY_OPTS) */
};

/* The overlay's mount options, besides its layers: every feature that keeps
 * more state on the upper layer off, so a crash state is judged on the
 * copy-up, rename and whiteout alone. */
#define WL_OVERLAY_OPTS "index=off,redirect_dir=off,metacopy=off,xino=off"
/* Its layers, in the root of the file system under test. */
#define WL_OVERLAY_LOWER "lower"
#define WL_OVERLAY_UPPER "upper"
#define WL_OVERLAY_WORK "work"

/* Replace dst's expectations with copies of src's. */
void wl_copy_expects(struct wl_workload *dst, const struct wl_workload *src);
/* Keep only the expectations that apply to file system fs. */
void wl_expects_for(struct wl_workload *w, const char *fs);
/* The op after which the expectations hold: the last persistence op of
 * [run], else its last op. */
int wl_expect_point(const struct wl_workload *w);


/* Parse text (the content of file). 0 on success; -1 with a message
 * "file:line:col: what" (no newline) in e (code 65). Nothing partial
 * is left in w on failure. */
int wl_parse(const char *file, const char *text, struct wl_workload *w, struct errbuf *e);
/* Read file into text and parse it into w: a missing file is 66, anything
 * else unreadable or a parse error 65 (with its file:line:col message). */
struct sbuf;
int wl_load(const char *file, struct sbuf *text, struct wl_workload *w, struct errbuf *e);
/* Parse one op line (the agent's side); section and id are given. */
int wl_parse_line(const char *line, int id, enum wl_section section, struct wl_op *op, struct errbuf *e);
/* The same, its messages naming file and line ("file:line:col: what"). */
int wl_parse_line_at(const char *file, int lineno, const char *line, int id, enum wl_section section,
		     struct wl_op *op, struct errbuf *e);
void wl_free(struct wl_workload *w);
void wl_op_free(struct wl_op *op);
/* Deep copies (free with wl_free / wl_op_free). */
void wl_copy(struct wl_workload *dst, const struct wl_workload *src);
void wl_op_copy(struct wl_op *dst, const struct wl_op *src);

/* The canonical text of op (one line, no newline), which wl_parse_line
 * reads back to the same op. Returns the length it needs (snprintf-like). */
int wl_format(const struct wl_op *op, char *buf, size_t size);

/* The words of falloc modes, rename flags and sync_file_range flags, by value. */
extern const char *const wl_falloc_names[5];
extern const char *const wl_rename_flags[4];
extern const char *const wl_sfr_flags[3];

/* The keyword of a kind ("mkdir", ...). */
const char *wl_kind_name(enum wl_kind k);
/* Its syntax ("mkdir P [MODE]"). */
const char *wl_kind_usage(enum wl_kind k);

/* Does op complete a durability request (fsync, fdatasync, sync, syncfs,
 * sync_file_range with WAIT_AFTER)? Does it write file data? */
int wl_is_persistence(const struct wl_op *op);
int wl_writes_data(const struct wl_op *op);

/*
 * The write pattern: byte x of a file written by op id with a length (not
 * a TEXT) is byte (x % 16) of the 16-byte record
 *     "CLWL" | le32 op id | le64 x / 4096
 * so every 16-byte aligned piece of a 4 KiB block names the op and the
 * block that wrote it. wl_pattern fills buf with the bytes for file offsets
 * [off, off + len).
 */
#define WL_PATTERN_MAGIC "CLWL"
void wl_pattern(uint32_t op_id, uint64_t off, void *buf, size_t len);
/* If the 16 bytes at p (file offset off, 16-aligned) are a pattern record
 * for block off / 4096, return its op id; else 0. */
uint32_t wl_pattern_op(const void *p, uint64_t off);

#endif

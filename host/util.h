/*
 * util.h - the few helpers every part of crashlab uses: messages and exit
 * codes, allocation that cannot fail, a growable string, paths, running a
 * child process, and reading/writing whole files.
 *
 * Naming scheme (written down once, used everywhere):
 *   lab_<subsystem>_<verb>   engine functions in lab/      (lab_vm_start, lab_kbuild_run)
 *   img_<subsystem>_<verb>   guest-side builders in images/ (img_initramfs_build)
 *   crashdb_<verb>           the database API in crashdb/
 *   cmd_<name>               one subcommand handler in cmd/<name>.c
 *   die/error/warning/note   messages (git's convention: error() returns -1)
 * Messages are lowercase, quote their subject, have no trailing period.
 */
#ifndef CRASHLAB_UTIL_H
#define CRASHLAB_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Fixed exit codes (README "Exit codes"); the same outcome is stored in the db. */
enum {
	EXIT_OK = 0,        /* every state as promised / command succeeded */
	EXIT_FINDING = 1,   /* a promise was broken */
	EXIT_USAGE = 2,     /* unknown command or option, bad argument */
	EXIT_DATAERR = 65,  /* an input file is malformed (corrupt tarball, not a bzImage) */
	EXIT_NOINPUT = 66,  /* an input file is missing */
	EXIT_GUEST = 69,    /* the guest could not run (QEMU died, agent never answered) */
	EXIT_SOFTWARE = 70, /* internal error: a bug in crashlab */
	EXIT_BUILD = 71,    /* a build step failed (kernel compile, mkfs) */
	EXIT_CANTCREAT = 73,/* cannot write the cache: disk full, permissions */
	EXIT_PATCH = 76,    /* a patch of kernel/series does not apply */
	EXIT_CONFIG = 78,   /* kernel config option dropped / prerequisite missing */
	EXIT_TIMEOUT = 124, /* the guest did not answer in time */
	EXIT_PANIC = 125,   /* the guest kernel panicked */
};

extern int verbose;     /* --verbose: show command lines */
extern int quiet;       /* --quiet: no progress output */

_Noreturn void die_code(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* errno turned into a short advice string for a file operation. */
const char *errno_advice(int err);
/* Exit code for a failed write/create, from errno (ENOSPC/EDQUOT/EROFS/EACCES -> EXIT_CANTCREAT). */
int exit_for_errno(int err);

#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Growable NUL-terminated buffer. */
struct sbuf {
	char *buf;
	size_t len, cap;
};
#define SBUF_INIT { NULL, 0, 0 }
void sbuf_add(struct sbuf *sb, const void *data, size_t n);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_reset(struct sbuf *sb);
void sbuf_free(struct sbuf *sb);
char *sbuf_detach(struct sbuf *sb);

/* NULL-terminated argv vector. */
struct strvec {
	char **v;
	size_t n, cap;
};
#define STRVEC_INIT { NULL, 0, 0 }
void strvec_push(struct strvec *sv, const char *s);
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_free(struct strvec *sv);
/* Shell-quoted one-line rendering, for "rerun by hand" messages. */
char *strvec_join_quoted(const struct strvec *sv);
/* Split a string on spaces (respecting simple '...' and "..." quoting). */
void strvec_split(struct strvec *sv, const char *s);

/* Files. */
int write_all(int fd, const void *data, size_t n);          /* -1 + errno */
int read_file(const char *path, struct sbuf *out);          /* -1 + errno on failure */
/* Write atomically: temp file in the same dir, fsync, rename. Returns -1 + errno. */
int write_file_atomic(const char *path, const void *data, size_t n);
int mkdir_p(const char *path, mode_t mode);                  /* -1 + errno */
int rm_rf(const char *path);                                 /* -1 + errno */
bool file_exists(const char *path);
bool is_dir(const char *path);
/* Find an executable in $PATH, then /usr/sbin and /sbin. Returned string is malloc'd, or NULL. */
char *find_program(const char *name);
/* The directory holding the running crashlab binary (for finding the agent). */
const char *self_dir(void);
/* The source tree root (self_dir(), as crashlab is built in place). */
const char *project_root(void);

/* Cache root: $XDG_CACHE_HOME/crashlab or ~/.cache/crashlab; created on demand. */
const char *cache_dir(void);
/* cache_dir()/sub, created; dies with EXIT_CANTCREAT when impossible. */
char *cache_subdir(const char *sub);

/* Run a program and wait. out (if non-NULL) receives stdout+stderr; otherwise
 * they go to log_fd (if >= 0) or are inherited. Returns the wait status as an
 * exit code (0..255, 128+sig), or -1 if it could not start. */
int run_cmd(const struct strvec *argv, struct sbuf *out, int log_fd);
/* Same, but run in directory dir (NULL = cwd). */
int run_cmd_in(const char *dir, const struct strvec *argv, struct sbuf *out, int log_fd);

/* Monotonic clock in seconds. */
double now_s(void);

/* Parse a size with optional K/M/G suffix (binary). Returns -1 on bad input. */
long long parse_size(const char *s);

/* SHA-256 (libcrypto) as lowercase hex; incremental for cache keys. */
struct hasher;
struct hasher *hasher_new(void);
void hasher_add(struct hasher *h, const void *data, size_t n);
void hasher_adds(struct hasher *h, const char *s);       /* adds the string and a NUL separator */
int hasher_add_file(struct hasher *h, const char *path);  /* -1 + errno */
/* Finish; writes 64 hex chars + NUL into out and frees h. */
void hasher_done(struct hasher *h, char out[65]);

#endif

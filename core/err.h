/*
 * err.h - crashlab's one error convention, and its exit codes.
 *
 * A library function that can fail takes a `struct errbuf *` as its last
 * argument and returns -1 (or NULL) after errbuf_set() has put a one-line
 * message (lowercase, subject quoted, no trailing period; further lines
 * only for excerpts) and the documented exit code into it. Only cmd/ turns
 * an errbuf into an exit (cmd/cmd.h die_err). Thin wrappers of one system
 * call family (write_all, read_file, mkdir_p, ...) keep the libc way:
 * -1 and errno, which their caller turns into an errbuf with errbuf_errno.
 *
 * libc only: the guest agent links it too.
 */
#ifndef CRASHLAB_CORE_ERR_H
#define CRASHLAB_CORE_ERR_H

#include <stddef.h>

/* Fixed exit codes (README "Exit codes"); the same outcome is stored in the db. */
enum {
	EXIT_OK = 0,        /* every state as promised / command succeeded */
	EXIT_FINDING = 1,   /* a promise was broken */
	EXIT_USAGE = 2,     /* unknown command or option, bad argument */
	EXIT_DATAERR = 65,  /* an input is malformed (workload syntax, corrupt tarball or log, not a bzImage) */
	EXIT_NOINPUT = 66,  /* an input is missing (a file, the kernel source, a tool) */
	EXIT_GUEST = 69,    /* the guest could not run (QEMU died, agent never answered) */
	EXIT_SOFTWARE = 70, /* internal error: a bug in crashlab */
	EXIT_BUILD = 71,    /* a build step failed (kernel compile, mkfs) */
	EXIT_CANTCREAT = 73,/* cannot write the cache: disk full, permissions */
	EXIT_PATCH = 76,    /* a patch of kernel/series does not apply */
	EXIT_CONFIG = 78,   /* kernel config option dropped / prerequisite missing */
	EXIT_TIMEOUT = 124, /* the guest did not answer in time */
	EXIT_PANIC = 125,   /* the guest kernel panicked */
};

struct errbuf {
	int code;           /* one of the EXIT_* codes; 0 while nothing failed */
	char msg[2048];     /* the message; "" while nothing failed */
};

/* Set the error; always returns -1, so `return errbuf_set(e, ...)` reads well. */
int errbuf_set(struct errbuf *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same, with ": <advice for errnum>" appended and the code taken from errnum (exit_for_errno). */
int errbuf_errno(struct errbuf *e, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Put "<context>: " in front of the message already there (the code stays). Returns -1. */
int errbuf_prefix(struct errbuf *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void errbuf_clear(struct errbuf *e);

/* errno turned into a short advice string for a file operation. */
const char *errno_advice(int err);
/* Exit code for a failed file operation, from errno (ENOSPC/EDQUOT/EROFS/EACCES -> EXIT_CANTCREAT, ENOENT -> 66). */
int exit_for_errno(int err);

/* A broken invariant: print where and abort (never for bad input). */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif

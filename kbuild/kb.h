/*
 * kb.h - what the files of kbuild/ share: the resolved inputs of a build
 * and the state of one build in progress. Not for use outside kbuild/.
 */
#ifndef CRASHLAB_KBUILD_KB_H
#define CRASHLAB_KBUILD_KB_H

#include <stdbool.h>
#include <stdint.h>

#include "core/util.h"
#include "kbuild/kbuild.h"

#define KB_RECIPE "crashlab-kbuild-1"   /* bumped when a build produces something else */
#define KB_STAMP "complete"
#define KB_FAILED_LOG "last-failed-build.log"
#define KB_TAIL_LINES 8                 /* last lines kept from a child's output */
#define KB_MAX_ERR_LINES 40             /* error lines kept from a child's output */

/* The resolved inputs of a build. */
struct kb_inputs {
	char *source;      /* tarball, made absolute when it exists */
	char *patches;     /* directory of the series and patches */
	char *series;      /* patches/series (or series-X.Y); NULL with no_patches */
	char *config;      /* config fragment, made absolute when it exists */
	int jobs;          /* make -j */
	char *pkg;         /* the Debian package of a packaged tarball, else NULL */
	bool packaged;     /* source is a Debian package's tarball (pkg) */
	bool tree;         /* source is a directory holding a kernel tree */
};

/* One build in progress. */
struct kb {
	struct kb_inputs in;
	struct strvec names;     /* patch names from the series, in order */
	char key[65];
	char *kdir;              /* <cache>/kernel */
	char *entry;             /* kdir/<key16> */
	char *tree;              /* entry/linux */
	char *log_path;          /* entry/build.log */
	char *failed_log;        /* kdir/last-failed-build.log */
	int log_fd;              /* -1 until the entry exists */
	int lock_fd;             /* flock held on kdir/<key16>.lock */
	struct progress *prog;   /* the progress line of the current step */
	bool ccache;             /* compile through ccache */
	struct strvec make_env;  /* NAME=value for every make run */
	struct errbuf *e;        /* where a failure is reported */
	/* while a child runs */
	bool count_steps;        /* kbuild step lines drive the progress line */
	uint64_t steps;          /* kbuild step lines seen */
	int disk_full;           /* ENOSPC/EDQUOT seen in the child's output */
	struct strvec err_lines; /* first error-looking lines of the output */
	char *tail[KB_TAIL_LINES]; /* ring of the last lines of the output */
	size_t tail_n;           /* lines put into the ring so far */
};

/* cache.c */
void kb_inputs_resolve(const struct kbuild_opts *o, struct kb_inputs *in);
void kb_inputs_free(struct kb_inputs *in);
int kb_compute_key(const struct kb_inputs *in, char key[65], struct strvec *names, struct errbuf *e);
char *kb_entry_of(const char *key);
bool kb_entry_complete(const char *entry);
int kb_take_lock(struct kb *kb);
/* A path inside the project shown relative to it ("kernel/series"). */
const char *kb_disp(const char *path);
/* Does a relative path have a ".." component? */
bool kb_has_dotdot(const char *p);

/* child.c: failing (the entry is removed, its log kept as last-failed-build.log); each returns -1 */
void kb_cleanup(struct kb *kb);
int kb_fail(struct kb *kb, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kb_fail_errno(struct kb *kb, int err, const char *path);
/* A child of a step exited rc: the lines that matter, the log; 71 (73 when the disk filled). */
int kb_step_failed(struct kb *kb, const char *what, int rc, double seconds);
/* Append to the build log; 0, or -1 (kb_fail done) when it cannot be written. */
int kb_log(struct kb *kb, const char *data, size_t n);
/* Run argv in the tree with env added, output into the log and through the
 * progress line (capture, when non-NULL, gets it too). The child's exit code,
 * or -1 (kb_fail done) when it could not run or the log could not be written. */
int kb_run(struct kb *kb, const struct strvec *argv, const struct strvec *env, struct sbuf *capture);

/* extract.c: a tarball unpacked into kb->tree, or a source tree copied there */
int kb_extract(struct kb *kb);

#endif

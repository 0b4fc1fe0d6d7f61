/*
 * sys.h - the host's files, programs and cache: making and removing
 * directories, atomic files, finding and running programs, where crashlab
 * lives and where its cache is.
 *
 * Wrappers of one system call family return -1 with errno; everything
 * that names a crashlab concept (the cache) fills a struct errbuf.
 */
#ifndef CRASHLAB_HOST_SYS_H
#define CRASHLAB_HOST_SYS_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/util.h"

/* Write atomically: temp file in the same dir, fsync, rename. -1 + errno. */
int write_file_atomic(const char *path, const void *data, size_t n);
int rm_rf(const char *path);                                 /* -1 + errno */
bool file_exists(const char *path);
/* Find an executable in $PATH, then /usr/sbin and /sbin. malloc'd, or NULL. */
char *find_program(const char *name);
/* The directory holding the running crashlab binary. */
const char *self_dir(void);
/* The source tree root ($CRASHLAB_ROOT, else self_dir(), as crashlab is built in place). */
const char *project_root(void);

/* The cache root: $XDG_CACHE_HOME/crashlab or ~/.cache/crashlab (not
 * created), or NULL when neither variable is set. */
const char *cache_dir(void);
/* cache_dir()/sub, created; NULL with e set (73) when that is impossible. */
char *cache_subdir(const char *sub, struct errbuf *e);

/* The temporary name a cache entry is written under before its rename
 * (path + ".tmp.<pid>"), and the sweep of such leftovers in dir whose
 * process is gone. */
char *tmp_name(const char *path);
void tmp_sweep(const char *dir);
/* Create (truncate) the temporary name of path for writing: its fd, with the
 * name in *tmp (malloc'd); -1 with e (73 when the disk refuses). */
int tmp_create(const char *path, char **tmp, struct errbuf *e);

/* Run a program and wait. out (if non-NULL) receives stdout+stderr; otherwise
 * they go to log_fd (if >= 0) or are inherited. With --verbose the command
 * line is printed first. Returns the exit code (0..255, 128+signal), or -1
 * if it could not start. */
/* An exclusive flock on path (created if missing), held until the fd is
 * closed or the process dies, however it dies: the fd, or -1 with errno
 * (EWOULDBLOCK: somebody holds it). */
int lock_take(const char *path);
/* Does somebody hold the lock on path? false when path does not exist. */
bool lock_busy(const char *path);

int run_cmd(const struct strvec *argv, struct sbuf *out, int log_fd);
/* Same, in directory dir (NULL = cwd). */
int run_cmd_in(const char *dir, const struct strvec *argv, struct sbuf *out, int log_fd);

#endif

/*
 * kbuild.h - the guest kernel: build it once into the cache (Debian's
 * linux-source-6.12 + kernel/series + kernel/crashlab.config), find it,
 * check a bzImage given by the user, read its version.
 *
 * Every command that boots a guest calls lab_kernel_ensure(). Failures of the
 * build die with the documented exit codes: 65 corrupt tarball or not a
 * bzImage, 66 missing input, 71 compile failed, 73 cache not writable (disk
 * full), 76 a patch does not apply, 78 a config option did not survive.
 */
#ifndef CRASHLAB_KBUILD_H
#define CRASHLAB_KBUILD_H

#include "host/util.h"

#define LAB_KBUILD_SOURCE "/usr/src/linux-source-6.12.tar.xz"
#define LAB_KBUILD_SOURCE_PKG "linux-source-6.12"

/* Inputs of one build; NULL / 0 fields take the defaults. */
struct lab_kbuild_opts {
	const char *source;   /* kernel tarball (LAB_KBUILD_SOURCE) */
	const char *patches;  /* directory holding 'series' and the patches (project_root()/kernel) */
	const char *config;   /* config fragment (project_root()/kernel/crashlab.config) */
	int jobs;             /* make -j (online CPUs) */
};

/* --- what the rest of crashlab uses --- */

/* bzImage of the default inputs if it is built, else NULL (never builds). malloc'd. */
char *lab_kernel_cached(void);
/* --kernel PATH checked (dies 66/65), else the default kernel, built first if needed. malloc'd. */
char *lab_kernel_ensure(void);
/* The built tree of the default inputs (for headers), or NULL. malloc'd. */
char *lab_kernel_tree(void);
/* The version string in a bzImage's header ("6.12.118 (crashlab@crashlab) #1 ..."),
 * or NULL when it has none. Owned by this module, valid until exit. */
const char *lab_kernel_version(const char *bzimage);
/* 0 if path is an x86 bzImage (boot flag 0xAA55 at 0x1FE, "HdrS" at 0x202);
 * -1 with errno: the open/read error, or ENOEXEC when it is not a bzImage. */
int lab_kernel_check(const char *path);

/* --- the build itself (cmd/kernel.c) --- */

/* Build if needed and return the bzImage path (malloc'd); dies on failure. */
char *lab_kbuild_run(const struct lab_kbuild_opts *o);
/* The cache entry's bzImage if complete, else NULL; never builds, never dies
 * for a missing input (returns NULL). When entry is non-NULL it receives the
 * entry directory (malloc'd) even when the entry is not complete. */
char *lab_kbuild_cached(const struct lab_kbuild_opts *o, char **entry);

/* --- pure steps, exposed for the unit tests --- */

/* Parse a quilt-style series: one patch name per line (an optional "-p1"
 * after it), '#' comments, blank lines. Appends names to out. On a malformed
 * line returns -1 and puts "line N: why" into err. */
int lab_kbuild_series_parse(const char *text, struct strvec *out, struct sbuf *err);
/* Compare a config fragment with the .config olddefconfig produced: every
 * "CONFIG_X=val" must be in .config as is, every "# CONFIG_X is not set" (or
 * CONFIG_X=n) must be unset. Appends one message per problem to problems,
 * naming the option, frag_name:line and what it became. Returns the count. */
int lab_kbuild_config_verify(const char *fragment, const char *frag_name, const char *dotconfig,
			     struct strvec *problems);
/* The cache key (64 hex) over source identity, series, patches, config
 * fragment and the recipe version. Returns 0, or -1 with a one-line message
 * in err and an exit code in *code (missing file 66, malformed series 65). */
int lab_kbuild_key(const struct lab_kbuild_opts *o, char key[65], struct sbuf *err, int *code);

#endif

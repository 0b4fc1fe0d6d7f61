/*
 * kbuild.h - the guest kernel: build it once into the cache (Debian's
 * linux-source-6.12 + kernel/series + kernel/crashlab.config), find it,
 * check a bzImage given by the user, read its version.
 *
 * The build is split along its jobs: cache.c names a build by its inputs
 * (the cache key), finds a finished one and serialises builders; series.c
 * reads kernel/series; extract.c unpacks the tarball (libarchive); child.c
 * runs patch and make with their output in the build log and on the
 * progress line; config.c checks that the fragment survived Kconfig;
 * bzimage.c reads the x86 boot header; build.c runs the steps in order.
 *
 * Failures fill a struct errbuf with the documented exit codes: 65 corrupt
 * tarball or not a bzImage, 66 missing input, 71 compile failed, 73 cache
 * not writable (disk full), 76 a patch does not apply, 78 a config option
 * did not survive or a build tool is missing.
 */
#ifndef CRASHLAB_KBUILD_KBUILD_H
#define CRASHLAB_KBUILD_KBUILD_H

#include "core/util.h"

#define KBUILD_SOURCE "/usr/src/linux-source-6.12.tar.xz"
#define KBUILD_SOURCE_PKG "linux-source-6.12"
#define KBUILD_SOURCE_NAME "6.12"
/* A source named "X.Y" is Debian's package linux-source-X.Y, whose tarball is here. */
#define KBUILD_PKG_TARBALL "/usr/src/linux-source-%s.tar.xz"

/* Inputs of one build; NULL / 0 fields take the defaults. */
struct kbuild_opts {
	const char *source;   /* "X.Y" (Debian's linux-source-X.Y), a tarball or a
			       * source tree (the selected source, else KBUILD_SOURCE) */
	const char *patches;  /* directory holding 'series' and the patches (project_root()/kernel) */
	bool no_patches;      /* build the source as it is, no series */
	const char *config;   /* config fragment (project_root()/kernel/crashlab.config) */
	int jobs;             /* make -j (online CPUs) */
};

/* --- what the rest of crashlab uses --- */

/* Select the kernel source the functions below (and kbuild_* with a NULL
 * source) use for the rest of the process: "X.Y", a tarball or a tree, or
 * NULL for the default. The string must outlive its use. */
void kbuild_select(const char *source);
/* The selected source as given ("6.12" when none was). */
const char *kbuild_selected(void);
/* Is s a source name "X.Y" (digits, one dot, digits)? */
bool kbuild_source_is_name(const char *s);

/* bzImage of the default inputs if it is built, else NULL (never builds). malloc'd. */
char *kernel_cached(void);
/* The user's bzImage (user_kernel, checked: 66 unreadable, 65 not a bzImage),
 * or when NULL the default kernel, built first if needed. malloc'd, or NULL with e. */
char *kernel_ensure(const char *user_kernel, struct errbuf *e);
/* The built tree of the default inputs (for headers and the syscall table), or NULL. malloc'd. */
char *kernel_tree(void);
/* The version string in a bzImage's header ("6.12.118 (crashlab@crashlab) #1 ..."),
 * or NULL when it has none. Owned by this module, valid until exit. */
const char *kernel_version(const char *bzimage);
/* 0 if path is an x86 bzImage (boot flag 0xAA55 at 0x1FE, "HdrS" at 0x202);
 * -1 with errno: the open/read error, or ENOEXEC when it is not a bzImage. */
int kernel_check(const char *path);

/* --- the build itself (cmd/kernel.c) --- */

/* Build if needed and return the bzImage path (malloc'd), or NULL with e. */
char *kbuild_run(const struct kbuild_opts *o, struct errbuf *e);
/* The cache entry's bzImage if complete, else NULL; never builds, and a
 * missing input is just NULL. When entry is non-NULL it receives the entry
 * directory (malloc'd) even when the entry is not complete. */
char *kbuild_cached(const struct kbuild_opts *o, char **entry);

/* --- pure steps, exposed for the unit tests --- */

/* Parse a quilt-style series: one patch name per line (an optional "-p1"
 * after it), '#' comments, blank lines. Appends names to out. On a malformed
 * line -1 with "line N: why" in e (65). */
int kbuild_series_parse(const char *text, struct strvec *out, struct errbuf *e);
/* Compare a config fragment with the .config olddefconfig produced: every
 * "CONFIG_X=val" must be in .config as is, every "# CONFIG_X is not set" (or
 * CONFIG_X=n) must be unset. Appends one message per problem to problems,
 * naming the option, frag_name:line and what it became. Returns the count. */
int kbuild_config_verify(const char *fragment, const char *frag_name, const char *dotconfig,
			 struct strvec *problems);
/* The number of option lines of a fragment. */
size_t kbuild_config_count(const char *fragment);
/* The series file a build of these inputs applies: kernel/series-X.Y when
 * the source is named X.Y and that file exists, else kernel/series (or the
 * patches directory's); NULL with no_patches. malloc'd. */
char *kbuild_series_path(const struct kbuild_opts *o);
/* The cache key (64 hex) over source identity, series, patches, config
 * fragment and the recipe version. 0, or -1 with e (missing file 66,
 * malformed series 65). */
int kbuild_key(const struct kbuild_opts *o, char key[65], struct errbuf *e);

#endif

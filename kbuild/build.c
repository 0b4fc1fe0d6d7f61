/*
 * build.c - build the guest kernel into the cache; see kbuild.h.
 *
 * Method. A kernel build is named by its inputs (cache.c): the source
 * tarball (by its Debian package version when it is the packaged tarball,
 * otherwise by its path, size and mtime), the series file, the content of
 * every patch the series lists, the config fragment, and KB_RECIPE, a
 * constant bumped whenever kbuild/ changes what a build produces. The
 * SHA-256 of these, cut to 16 hex digits, names the cache entry
 * <cache>/kernel/<key>/, which holds the extracted and patched tree
 * (linux/), the log of every step (build.log), a copy of the result
 * (bzImage) and, written last, the stamp file "complete".
 *
 * The stamp is the only thing a reader trusts. It is written with an atomic
 * rename after bzImage has been copied out and synced, so an interrupted,
 * crashed or failed build can only ever leave an entry without a stamp. A
 * stamped entry is returned at once, without locking and without touching
 * it. An entry without a stamp is garbage: the next build of the same key
 * removes it and starts again from an empty directory, so a half-extracted
 * tree or half-applied series is never built upon. Builders of one key
 * serialise on flock(<cache>/kernel/<key>.lock) and look for the stamp again
 * once they hold the lock, so the second of two concurrent builds picks up
 * the first one's result instead of building it twice.
 *
 * A build runs extract (extract.c; the tarball's top directory is replaced
 * by linux/), patch -p1 for each series entry in order, allnoconfig with the
 * fragment followed by olddefconfig and a check that every line of the
 * fragment survived (config.c), make bzImage (through ccache when present,
 * with a fixed build timestamp, user and host so rebuilds under another key
 * hit ccache), and the copy-out. Any failure moves the log to
 * <cache>/kernel/last-failed-build.log, removes the entry and returns the
 * code of the step that failed. The number of kbuild steps of the last good
 * build is kept in <cache>/kernel/steps as the next progress bar's total.
 * Entries of keys no longer in use are left alone; deleting them is safe.
 */
#include "kbuild/kb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/msg.h"
#include "host/progress.h"
#include "host/sys.h"

#define KB_STEPS_GUESS 1750    /* kbuild steps of the default config on 6.12 */
#define KB_BUILD_TIMESTAMP "Mon Jan  1 00:00:00 UTC 2024"

/* Why patch failed, in a few words, from its output. */
static char *reject_reason(const char *out, int rc)
{
	char *file = NULL, *reason = NULL;
	const char *p = out;
	while (*p && !reason) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xasprintf("%.*s", (int)len, p);
		p += len + (nl ? 1 : 0);
		int hunk, at;
		if (!strncmp(line, "patching file ", 14)) {
			free(file);
			const char *f = line + 14;
			size_t fl = strlen(f);
			if (fl >= 2 && f[0] == '\'' && f[fl - 1] == '\'')
				file = xasprintf("%.*s", (int)fl - 2, f + 1);
			else
				file = xstrdup(f);
		} else if (!strncmp(line, "|+++ ", 5) || !strncmp(line, "+++ ", 4)) {
			const char *f = line + (line[0] == '|' ? 5 : 4);
			size_t fl = strcspn(f, "\t");
			if (fl > 2 && f[1] == '/')
				f += 2, fl -= 2;
			free(file);
			file = xasprintf("%.*s", (int)fl, f);
		} else if (sscanf(line, "Hunk #%d FAILED at %d", &hunk, &at) == 2) {
			reason = xasprintf("hunk #%d FAILED at line %d of '%s'", hunk, at, file ? file : "?");
		} else if (strstr(line, "Reversed (or previously applied) patch detected")) {
			reason = xasprintf("'%s' already has this change (reversed or previously applied patch)",
					   file ? file : "?");
		} else if (strstr(line, "can't find file to patch")) {
			reason = file ? xasprintf("'%s' does not exist in the tree", file)
				      : xstrdup("a file it changes does not exist in the tree");
		} else if (strstr(line, "Only garbage was found")) {
			reason = xstrdup("it is not a patch (only garbage was found)");
		} else if (strstr(line, "malformed patch") || strstr(line, "unexpected end of file") ||
			   strstr(line, "cannot") || strstr(line, "Can't")) {
			reason = xstrdup(line);
		}
		free(line);
	}
	free(file);
	if (!reason) {
		const char *q = out;
		while (*q == '\n')
			q++;
		size_t len = strcspn(q, "\n");
		reason = len ? xasprintf("%.*s", (int)len, q) : xasprintf("patch exited %d", rc);
	}
	return reason;
}

static int apply_patches(struct kb *kb)
{
	if (!kb->names.n)
		return 0;
	char *patch = find_program("patch");
	free(patch);
	if (!patch)
		return kb_fail(kb, EXIT_CONFIG, "cannot apply '%s': 'patch' is missing; run 'make deps' "
		       "(or apt-get install patch)", kb_disp(kb->in.series));
	kb->prog = progress_start("applying patches", kb->names.n);
	for (size_t i = 0; i < kb->names.n; i++) {
		char *path = xasprintf("%s/%s", kb->in.patches, kb->names.v[i]);
		struct strvec argv = STRVEC_INIT;
		struct sbuf out = SBUF_INIT;
		progress_update(kb->prog, i, kb->names.v[i]);
		strvec_pushl(&argv, "patch", "-p1", "--forward", "--batch", "--fuzz=0",
			"--no-backup-if-mismatch", "-i", path, NULL);
		int rc = kb_run(kb, &argv, NULL, &out);
		strvec_free(&argv);
		if (rc != 0) {
			if (kb->disk_full)
				return kb_fail(kb, EXIT_CANTCREAT, "the disk filled up while applying '%s' in '%s': %s",
				       kb_disp(path), kb->tree, errno_advice(ENOSPC));
			char *why = rc < 0 ? NULL : reject_reason(out.buf ? out.buf : "", rc);
			int r = rc < 0 ? -1 : kb_fail(kb, EXIT_PATCH, "patch '%s' from '%s' does not apply: %s",
						      kb_disp(path), kb_disp(kb->in.series), why);
			free(why);
			free(path);
			sbuf_free(&out);
			return r;
		}
		sbuf_free(&out);
		free(path);
	}
	char msg[512];
	snprintf(msg, sizeof(msg), "applied %zu patch%s from '%s'", kb->names.n,
		 kb->names.n == 1 ? "" : "es", kb_disp(kb->in.series));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	return 0;
}

/* The same variables for every make run, so Kconfig sees the compiler the build uses. */
static void make_setup(struct kb *kb)
{
	char *ccache = find_program("ccache");
	kb->ccache = ccache != NULL;
	free(ccache);
	strvec_pushl(&kb->make_env, "KBUILD_BUILD_TIMESTAMP=" KB_BUILD_TIMESTAMP,
		"KBUILD_BUILD_USER=crashlab", "KBUILD_BUILD_HOST=crashlab", "KBUILD_BUILD_VERSION=1",
		NULL);
	if (kb->ccache) {
		struct errbuf ignore;
		char *dir = cache_subdir("ccache", &ignore);
		if (!dir)
			dir = xasprintf("%s/ccache", kb->kdir); /* beside the kernel entries, which exist */
		strvec_pushf(&kb->make_env, "CCACHE_DIR=%s", dir);
		strvec_pushf(&kb->make_env, "CCACHE_BASEDIR=%s", kb->tree);
		strvec_push(&kb->make_env, "CCACHE_NOHASHDIR=1");
		free(dir);
	}
}

static void make_argv(struct kb *kb, struct strvec *argv, const char *target)
{
	strvec_push(argv, "make");
	if (!strcmp(target, "bzImage"))
		strvec_pushf(argv, "-j%d", kb->in.jobs);
	strvec_push(argv, "ARCH=x86_64");
	if (kb->ccache)
		strvec_push(argv, "CC=ccache gcc");
	strvec_push(argv, target);
}

static int configure(struct kb *kb)
{
	kb->prog = progress_start("configuring", 2);
	double start = now_s();
	struct strvec argv = STRVEC_INIT;
	make_argv(kb, &argv, "allnoconfig");
	strvec_pushf(&argv, "KCONFIG_ALLCONFIG=%s", kb->in.config);
	progress_update(kb->prog, 0, "allnoconfig");
	int rc = kb_run(kb, &argv, &kb->make_env, NULL);
	strvec_free(&argv);
	if (rc < 0)
		return -1;
	if (rc != 0)
		return kb_step_failed(kb, "configuring the kernel ('make allnoconfig')", rc, now_s() - start);
	make_argv(kb, &argv, "olddefconfig");
	progress_update(kb->prog, 1, "olddefconfig");
	rc = kb_run(kb, &argv, &kb->make_env, NULL);
	strvec_free(&argv);
	if (rc < 0)
		return -1;
	if (rc != 0)
		return kb_step_failed(kb, "configuring the kernel ('make olddefconfig')", rc, now_s() - start);

	struct sbuf frag = SBUF_INIT, dot = SBUF_INIT;
	char *dotpath = xasprintf("%s/.config", kb->tree);
	if (read_file(kb->in.config, &frag) < 0)
		return kb_fail(kb, EXIT_NOINPUT, "cannot read config fragment '%s': %s", kb_disp(kb->in.config),
		       errno_advice(errno));
	if (read_file(dotpath, &dot) < 0)
		return kb_fail(kb, EXIT_BUILD, "configuring the kernel wrote no '%s': %s", dotpath, errno_advice(errno));
	struct strvec problems = STRVEC_INIT;
	int n = kbuild_config_verify(frag.buf, kb_disp(kb->in.config), dot.buf, &problems);
	int r = 0;
	if (n == 1) {
		r = kb_fail(kb, EXIT_CONFIG, "%s", problems.v[0]);
	} else if (n > 1) {
		struct sbuf msg = SBUF_INIT;
		sbuf_addf(&msg, "%d lines of '%s' did not survive the configuration:", n, kb_disp(kb->in.config));
		for (size_t i = 0; i < problems.n; i++)
			sbuf_addf(&msg, "\n    %s", problems.v[i]);
		r = kb_fail(kb, EXIT_CONFIG, "%s", msg.buf);
		sbuf_free(&msg);
	}
	size_t nopts = kbuild_config_count(frag.buf);
	strvec_free(&problems);
	sbuf_free(&frag);
	sbuf_free(&dot);
	free(dotpath);
	if (r < 0)
		return r;
	char msg[512];
	snprintf(msg, sizeof(msg), "configured: %s %zu option%s of '%s' kept", nopts == 1 ? "the" : "all",
		 nopts, nopts == 1 ? "" : "s", kb_disp(kb->in.config));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	return 0;
}

static uint64_t steps_guess(struct kb *kb)
{
	struct sbuf sb = SBUF_INIT;
	char *path = xasprintf("%s/steps", kb->kdir);
	long long n = 0;
	if (read_file(path, &sb) == 0)
		n = atoll(sb.buf);
	sbuf_free(&sb);
	free(path);
	return n >= 100 && n < 1000000 ? (uint64_t)n : KB_STEPS_GUESS;
}

static int build(struct kb *kb)
{
	struct strvec argv = STRVEC_INIT;
	make_argv(kb, &argv, "bzImage");
	kb->prog = progress_start("building kernel", steps_guess(kb));
	kb->count_steps = true;
	int rc = kb_run(kb, &argv, &kb->make_env, NULL);
	kb->count_steps = false;
	double secs = progress_elapsed(kb->prog);
	strvec_free(&argv);
	if (rc < 0)
		return -1;
	if (rc != 0)
		return kb_step_failed(kb, "building the kernel", rc, secs);
	char t[16], msg[256];
	snprintf(msg, sizeof(msg), "built bzImage in %s (%llu steps%s)", progress_fmt_time(secs, t, sizeof(t)),
		 (unsigned long long)kb->steps, kb->ccache ? ", ccache" : "");
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	return 0;
}

static int copy_file(struct kb *kb, const char *from, const char *to)
{
	char *tmp = xasprintf("%s.tmp", to);
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return kb_fail(kb, EXIT_BUILD, "the build made no '%s': %s", from, errno_advice(errno));
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return kb_fail_errno(kb, errno, tmp);
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return kb_fail(kb, EXIT_BUILD, "cannot read '%s': %s", from, errno_advice(errno));
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return kb_fail_errno(kb, errno, tmp);
			}
			off += w;
		}
	}
	close(in);
	if (fsync(out) < 0 || close(out) < 0)
		return kb_fail_errno(kb, errno, tmp);
	if (rename(tmp, to) < 0)
		return kb_fail_errno(kb, errno, to);
	free(tmp);
	return 0;
}

static int finish(struct kb *kb)
{
	char *built = xasprintf("%s/arch/x86/boot/bzImage", kb->tree);
	char *bz = xasprintf("%s/bzImage", kb->entry);
	if (copy_file(kb, built, bz) < 0)
		return -1;
	if (kernel_check(bz) < 0)
		return kb_fail(kb, EXIT_BUILD, "the build made '%s' but it is not a bzImage", built);

	char steps[32];
	int n = snprintf(steps, sizeof(steps), "%llu\n", (unsigned long long)kb->steps);
	char *steps_path = xasprintf("%s/steps", kb->kdir);
	if (write_file_atomic(steps_path, steps, (size_t)n) < 0)
		return kb_fail_errno(kb, errno, steps_path);

	const char *version = kernel_version(bz);
	char *stamp_text = xasprintf("key %s\nversion %s\n", kb->key, version ? version : "?");
	char *stamp = xasprintf("%s/%s", kb->entry, KB_STAMP);
	if (write_file_atomic(stamp, stamp_text, strlen(stamp_text)) < 0)
		return kb_fail_errno(kb, errno, stamp);
	int dfd = open(kb->entry, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	close(kb->log_fd);
	kb->log_fd = -1;
	free(stamp);
	free(stamp_text);
	free(steps_path);
	free(bz);
	free(built);
	return 0;
}

static int check_tools(struct kb *kb)
{
	static const char *const tools[][2] = {
		{ "make", "make" }, { "gcc", "gcc" }, { "flex", "flex" }, { "bison", "bison" },
		{ "bc", "bc" },
	};
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char *p = find_program(tools[i][0]);
		if (!p)
			return errbuf_set(kb->e, EXIT_CONFIG, "cannot build the kernel: '%s' is missing; run 'make deps' "
					  "(or apt-get install %s)", tools[i][0], tools[i][1]);
		free(p);
	}
	return 0;
}

static void kb_free(struct kb *kb)
{
	if (kb->lock_fd >= 0)
		close(kb->lock_fd);
	if (kb->log_fd >= 0)
		close(kb->log_fd);
	for (size_t i = 0; i < KB_TAIL_LINES; i++)
		free(kb->tail[i]);
	strvec_free(&kb->err_lines);
	strvec_free(&kb->names);
	strvec_free(&kb->make_env);
	kb_inputs_free(&kb->in);
	free(kb->kdir);
	free(kb->entry);
	free(kb->tree);
	free(kb->log_path);
	free(kb->failed_log);
}

/* An empty entry with its build log open. */
static int make_entry(struct kb *kb)
{
	if (file_exists(kb->entry)) {
		note("removing the incomplete kernel build '%s'", kb->entry);
		if (rm_rf(kb->entry) < 0)
			return errbuf_errno(kb->e, errno, "cannot remove '%s'", kb->entry);
	}
	if (mkdir(kb->entry, 0755) < 0)
		return errbuf_errno(kb->e, errno, "cannot create '%s'", kb->entry);
	kb->log_fd = open(kb->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (kb->log_fd < 0) {
		int err = errno;
		rm_rf(kb->entry);
		return errbuf_errno(kb->e, err, "cannot create '%s'", kb->log_path);
	}
	return 0;
}

char *kbuild_run(const struct kbuild_opts *o, struct errbuf *e)
{
	struct kb kb;
	memset(&kb, 0, sizeof(kb));
	kb.log_fd = -1;
	kb.lock_fd = -1;
	kb.e = e;
	kb_inputs_resolve(o, &kb.in);
	char *bz = NULL;
	if (kb_compute_key(&kb.in, kb.key, &kb.names, e) < 0 || !(kb.kdir = cache_subdir("kernel", e)))
		goto out;
	kb.entry = xasprintf("%s/%.16s", kb.kdir, kb.key);
	kb.tree = xasprintf("%s/linux", kb.entry);
	kb.log_path = xasprintf("%s/build.log", kb.entry);
	kb.failed_log = xasprintf("%s/%s", kb.kdir, KB_FAILED_LOG);
	bz = xasprintf("%s/bzImage", kb.entry);
	if (kb_entry_complete(kb.entry))
		goto out;
	if (kb_take_lock(&kb) < 0)
		goto fail;
	if (kb_entry_complete(kb.entry))
		goto out;
	if (check_tools(&kb) < 0)
		goto fail;
	make_setup(&kb);
	if (make_entry(&kb) < 0)
		goto fail;
	note("building the guest kernel in '%s' (once; later runs reuse it)", kb.entry);
	double start = now_s();
	if (kb_extract(&kb) < 0 || apply_patches(&kb) < 0 || configure(&kb) < 0 || build(&kb) < 0 || finish(&kb) < 0)
		goto fail;
	char t[16];
	note("kernel ready in %s: '%s'", progress_fmt_time(now_s() - start, t, sizeof(t)), bz);
	goto out;
fail:
	free(bz);
	bz = NULL;
out:
	kb_free(&kb);
	return bz;
}

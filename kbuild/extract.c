/*
 * extract.c - unpacking the kernel tarball into the cache entry with
 * libarchive: the tarball's top directory becomes linux/, no member may
 * point outside it, and a full disk or a damaged archive is named as such.
 */
#include "kbuild/kb.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "host/progress.h"

static int extract_failed(struct kb *kb, struct archive *rd, struct archive *wr, const char *at, bool writing,
			  const char *where)
{
	struct archive *a = writing ? wr : rd;
	int e = archive_errno(a);
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s", archive_error_string(a) ? archive_error_string(a) : "unknown error");
	archive_read_free(rd);
	archive_write_free(wr);
	if (writing) {
		if (e > 0 && exit_for_errno(e) == EXIT_CANTCREAT)
			return kb_fail_errno(kb, e, at);
		return kb_fail(kb, e > 0 ? exit_for_errno(e) : EXIT_SOFTWARE, "cannot write '%s': %s", at, msg);
	}
	if (e == ENOENT || e == EACCES)
		return kb_fail(kb, EXIT_NOINPUT, "cannot read kernel source '%s': %s", kb->in.source, errno_advice(e));
	char hint[128] = "";
	if (kb->in.packaged)
		snprintf(hint, sizeof(hint), "; reinstall it with 'apt-get install --reinstall %s'", kb->in.pkg);
	if (at && *at)
		return kb_fail(kb, EXIT_DATAERR, "kernel source '%s' is damaged: %s (%s '%s')%s", kb->in.source, msg,
		       where, at, hint);
	return kb_fail(kb, EXIT_DATAERR, "kernel source '%s' is damaged: %s%s", kb->in.source, msg, hint);
}

/*
 * Did a write-side call fail? libarchive reports a failed write(2) of file
 * data as ARCHIVE_WARN, and uses ARCHIVE_WARN for harmless trouble (times
 * it could not restore) as well: a warning counts when its errno says the
 * disk refused the data.
 */
static bool write_failed(struct archive *wr, int r)
{
	if (r < ARCHIVE_WARN)
		return true;
	if (r == ARCHIVE_OK)
		return false;
	int e = archive_errno(wr);
	return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS;
}

/* A source tree is copied, so the build never writes into the user's tree. */
static int copy_tree(struct kb *kb)
{
	if (mkdir(kb->tree, 0755) < 0)
		return kb_fail_errno(kb, errno, kb->tree);
	kb->prog = progress_start("copying the source tree", 0);
	double start = now_s();
	struct strvec argv = STRVEC_INIT;
	char *from = xasprintf("%s/.", kb->in.source);
	strvec_pushl(&argv, "cp", "-a", "--reflink=auto", from, ".", NULL);
	int rc = kb_run(kb, &argv, NULL, NULL);
	strvec_free(&argv);
	free(from);
	if (rc < 0)
		return -1;
	if (rc != 0)
		return kb_step_failed(kb, "copying the source tree", rc, now_s() - start);
	char t[16], msg[512];
	snprintf(msg, sizeof(msg), "copied the tree '%s' in %s", kb->in.source,
		 progress_fmt_time(now_s() - start, t, sizeof(t)));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	char *line = xasprintf("== %s\n", msg);
	int r = kb_log(kb, line, strlen(line));
	free(line);
	return r;
}

int kb_extract(struct kb *kb)
{
	if (kb->in.tree)
		return copy_tree(kb);
	struct stat st;
	if (stat(kb->in.source, &st) < 0)
		return kb_fail(kb, EXIT_NOINPUT, "cannot read kernel source '%s': %s", kb->in.source, errno_advice(errno));
	if (mkdir(kb->tree, 0755) < 0)
		return kb_fail_errno(kb, errno, kb->tree);
	struct archive *rd = archive_read_new();
	struct archive *wr = archive_write_disk_new();
	archive_read_support_filter_all(rd);
	archive_read_support_format_tar(rd);
	/* Member names are rewritten to absolute paths under the tree, so
	 * SECURE_NOABSOLUTEPATHS cannot be used; ".." and links are refused. */
	archive_write_disk_set_options(wr, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
					   ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	const char *base = strrchr(kb->in.source, '/');
	base = base ? base + 1 : kb->in.source;
	char *title = xasprintf("extracting %s", base);
	kb->prog = progress_start(title, (uint64_t)st.st_size);
	free(title);

	char at[PATH_MAX] = "";   /* the archive member being read, for messages */
	char dest[PATH_MAX + 64];
	long files = 0;
	if (archive_read_open_filename(rd, kb->in.source, 1 << 20) != ARCHIVE_OK)
		return extract_failed(kb, rd, wr, at, false, "");
	for (;;) {
		struct archive_entry *ae;
		int r = archive_read_next_header(rd, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return extract_failed(kb, rd, wr, at, false, "after");
		snprintf(at, sizeof(at), "%s", archive_entry_pathname(ae));
		const char *rest = strchr(at, '/');
		rest = rest ? rest + 1 : "";
		if (!*rest)
			continue;   /* the top directory itself (or a stray top-level member) */
		const char *hl = archive_entry_hardlink(ae);
		if (kb_has_dotdot(rest) || (hl && kb_has_dotdot(hl))) {
			archive_read_free(rd);
			archive_write_free(wr);
			return kb_fail(kb, EXIT_DATAERR, "kernel source '%s' is damaged: member '%s' points outside the tree",
			       kb->in.source, at);
		}
		snprintf(dest, sizeof(dest), "%s/%s", kb->tree, rest);
		archive_entry_set_pathname(ae, dest);
		if (hl) {
			const char *hrest = strchr(hl, '/');
			char *hdest = xasprintf("%s/%s", kb->tree, hrest ? hrest + 1 : hl);
			archive_entry_set_hardlink(ae, hdest);
			free(hdest);
		}
		progress_update(kb->prog, (uint64_t)archive_filter_bytes(rd, -1), rest);
		if (write_failed(wr, archive_write_header(wr, ae)))
			return extract_failed(kb, rd, wr, dest, true, "");
		for (;;) {
			const void *data;
			size_t size;
			la_int64_t off;
			r = archive_read_data_block(rd, &data, &size, &off);
			if (r == ARCHIVE_EOF)
				break;
			if (r < ARCHIVE_WARN)
				return extract_failed(kb, rd, wr, at, false, "in");
			if (archive_write_data_block(wr, data, size, off) != ARCHIVE_OK)
				return extract_failed(kb, rd, wr, dest, true, "");
		}
		if (write_failed(wr, archive_write_finish_entry(wr)))
			return extract_failed(kb, rd, wr, dest, true, "");
		files++;
	}
	if (write_failed(wr, archive_write_close(wr)))
		return extract_failed(kb, rd, wr, kb->tree, true, "");
	archive_read_free(rd);
	archive_write_free(wr);
	if (files == 0)
		return kb_fail(kb, EXIT_DATAERR, "kernel source '%s' holds no files", kb->in.source);
	char t[16], msg[512];
	snprintf(msg, sizeof(msg), "extracted '%s' (%ld files) in %s", base, files,
		 progress_fmt_time(progress_elapsed(kb->prog), t, sizeof(t)));
	progress_done(kb->prog, msg);
	kb->prog = NULL;
	char *line = xasprintf("== %s\n", msg);
	int r = kb_log(kb, line, strlen(line));
	free(line);
	return r;
}

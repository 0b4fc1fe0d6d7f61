/*
 * initramfs.c - the guest's root file system, packed with libarchive.
 *
 * Method. The image is first described as a layout: a list of entries
 * (archive path, type, permissions, and the host file, link target or
 * device number behind it), then written in that order.
 *
 *   /init                 the static agent built by make
 *   /bin/busybox          Debian's busybox-static, plus one symlink to it per
 *                         applet of `busybox --list-full` (bin/sh, sbin/...),
 *                         except where a real tool of the same name exists
 *   /sbin/<name>          each real tool of the table below, stored once
 *                         under the basename of its resolved host path; the
 *                         other names are relative symlinks (mkfs.ext4 ->
 *                         mke2fs, fsck.ext4 -> e2fsck, btrfsck -> btrfs)
 *   /etc/mke2fs.conf      when the host has one; /etc/mtab -> /proc/self/mounts
 *   libraries             every shared object the above load, found by
 *                         reading their ELF program headers (PT_INTERP,
 *                         PT_DYNAMIC's DT_NEEDED, DT_RUNPATH/DT_RPATH) with
 *                         libelf, recursively. Each is stored as its real
 *                         host file at its real path, and where the loader
 *                         finds it under another name (the soname in
 *                         /lib/x86_64-linux-gnu, /lib64/ld-linux-x86-64.so.2)
 *                         that name is an absolute symlink to the real path.
 *                         As the guest has no ld.so.cache, only the loader's
 *                         built-in directories and RUNPATHs are searched there.
 *   /dev/console, /dev/null, and the directories dev proc sys tmp mnt run
 *                         etc root, plus every parent directory needed.
 *
 * Entries are sorted by path (a parent sorts before its children), owned by
 * root, with mtime 0, sequential inode numbers and no gzip timestamp, so the
 * same inputs give the same bytes.
 *
 * Cache key: SHA-256 over a recipe version and, for every entry in order,
 * its path, type, permissions, and its content, link target or device
 * number. Computing it reads every file (a few tens of milliseconds), so a
 * changed tool or library is always noticed. The image is
 * cache_dir()/images/initramfs-<first 16 hex>.cpio.gz, written under a
 * temporary name and renamed only once complete.
 */
#include "images/initramfs.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/hash.h"
#include "host/msg.h"
#include "host/progress.h"
#include "host/sys.h"
#include "images/elfdeps.h"

#define RECIPE "crashlab-initramfs-1"
#define BUSYBOX "/bin/busybox"

static const struct img_tool tools[] = {
	{ "busybox", "busybox-static", false },
	{ "mke2fs", "e2fsprogs", false },
	{ "mkfs.ext4", "e2fsprogs", false },
	{ "e2fsck", "e2fsprogs", false },
	{ "fsck.ext4", "e2fsprogs", false },
	{ "mkfs.xfs", "xfsprogs", false },
	{ "xfs_repair", "xfsprogs", false },
	{ "xfs_db", "xfsprogs", true },
	{ "mkfs.btrfs", "btrfs-progs", false },
	{ "btrfs", "btrfs-progs", false },
	{ "btrfsck", "btrfs-progs", true },
	{ "mkfs.f2fs", "f2fs-tools", false },
	{ "fsck.f2fs", "f2fs-tools", false },
	{ "dmsetup", "dmsetup", false },
};

const struct img_tool *img_tools(size_t *n)
{
	*n = sizeof(tools) / sizeof(tools[0]);
	return tools;
}

char *img_agent_path(void)
{
	return xasprintf("%s/images/agent/crashlab-agent", project_root());
}

/* ---- layout ---------------------------------------------------------- */

enum ent_type { ENT_DIR, ENT_FILE, ENT_LINK, ENT_CHR };

struct ent {
	char *path;            /* archive path, no leading slash */
	enum ent_type type;
	mode_t perm;           /* permission bits */
	char *src;             /* ENT_FILE: host file holding the content */
	char *target;          /* ENT_LINK: symlink target */
	unsigned major, minor; /* ENT_CHR: device number */
	long long size;        /* ENT_FILE: content size at layout time */
};

struct layout {
	struct ent *v;
	size_t n, cap;
	struct strvec tool_names; /* names of real tools: no applet may take them */
	long long bytes;          /* total file content */
};

static struct ent *layout_find(struct layout *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].path, path))
			return &l->v[i];
	return NULL;
}

/* Add an entry unless its path is taken (the first claim wins). */
static struct ent *layout_add(struct layout *l, const char *path, enum ent_type type, mode_t perm)
{
	while (*path == '/')
		path++;
	if (layout_find(l, path))
		return NULL;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	struct ent *e = &l->v[l->n++];
	memset(e, 0, sizeof(*e));
	e->path = xstrdup(path);
	e->type = type;
	e->perm = perm;
	return e;
}

static int add_file(struct layout *l, const char *path, const char *src, struct errbuf *eb)
{
	struct stat st;
	if (stat(src, &st) < 0) {
		errbuf_set(eb, EXIT_NOINPUT, "cannot read '%s': %s", src, errno_advice(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		errbuf_set(eb, EXIT_NOINPUT, "cannot store '%s' in the image: not a regular file", src);
		return -1;
	}
	struct ent *e = layout_add(l, path, ENT_FILE, (st.st_mode & 0111) ? 0755 : 0644);
	if (e) {
		e->src = xstrdup(src);
		e->size = st.st_size;
		l->bytes += st.st_size;
	}
	return 0;
}

static void add_link(struct layout *l, const char *path, const char *target)
{
	struct ent *e = layout_add(l, path, ENT_LINK, 0777);
	if (e)
		e->target = xstrdup(target);
}

/* The libraries of the host file src: real files at their real paths, found names as links. */
static int add_libs(struct layout *l, const char *src, struct errbuf *eb)
{
	struct strvec libs = STRVEC_INIT;
	int ret = 0;
	if (img_elf_deps(src, &libs, eb) < 0) {
		strvec_free(&libs);
		return -1;
	}
	for (size_t i = 0; i < libs.n && !ret; i++) {
		char *real = realpath(libs.v[i], NULL);
		if (!real) {
			ret = errbuf_set(eb, EXIT_NOINPUT, "cannot resolve '%s': %s", libs.v[i], errno_advice(errno));
			break;
		}
		ret = add_file(l, real, real, eb);
		if (strcmp(real, libs.v[i]))
			add_link(l, libs.v[i], real);
		free(real);
	}
	strvec_free(&libs);
	return ret;
}

static int add_tool(struct layout *l, const struct img_tool *t, struct errbuf *eb)
{
	char *found = NULL;
	if (!strcmp(t->name, "busybox") && access(BUSYBOX, X_OK) == 0)
		found = xstrdup(BUSYBOX);
	else
		found = find_program(t->name);
	if (!found) {
		if (t->optional)
			return 0;
		errbuf_set(eb, EXIT_NOINPUT, "'%s' is missing; install the Debian package %s (or run 'make deps')",
			  t->name, t->package);
		return -1;
	}
	char *real = realpath(found, NULL);
	if (!real) {
		errbuf_set(eb, EXIT_NOINPUT, "cannot resolve '%s': %s", found, errno_advice(errno));
		free(found);
		return -1;
	}
	free(found);
	int ret;
	if (!strcmp(t->name, "busybox")) {
		ret = add_file(l, "bin/busybox", real, eb);
	} else {
		const char *base = strrchr(real, '/') + 1;
		char *dst = xasprintf("sbin/%s", base);
		ret = add_file(l, dst, real, eb);
		free(dst);
		strvec_push(&l->tool_names, base);
		if (strcmp(base, t->name)) {
			dst = xasprintf("sbin/%s", t->name);
			add_link(l, dst, base);
			free(dst);
			strvec_push(&l->tool_names, t->name);
		}
	}
	if (!ret)
		ret = add_libs(l, real, eb);
	free(real);
	return ret;
}

/* One symlink to /bin/busybox per applet, unless a real tool has that name. */
static int add_applets(struct layout *l, struct errbuf *eb)
{
	struct ent *bb = layout_find(l, "bin/busybox");
	struct strvec argv = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&argv, bb->src);
	strvec_push(&argv, "--list-full");
	int rc = run_cmd(&argv, &out, -1);
	strvec_free(&argv);
	if (rc != 0) {
		sbuf_free(&out);
		return errbuf_set(eb, EXIT_NOINPUT, "'%s --list-full' failed (exit %d); is it Debian's busybox-static?",
				  bb->src, rc);
	}
	char *save = NULL;
	for (char *line = strtok_r(out.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line[strcspn(line, " \t\r")] = '\0';
		while (*line == '/')
			line++;
		if (!*line || strstr(line, ".."))
			continue;
		const char *slash = strrchr(line, '/');
		if (strvec_has(&l->tool_names, slash ? slash + 1 : line))
			continue;
		add_link(l, line, "/bin/busybox");
	}
	sbuf_free(&out);
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->path, ((const struct ent *)b)->path);
}

static void layout_free(struct layout *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].src);
		free(l->v[i].target);
	}
	free(l->v);
	strvec_free(&l->tool_names);
	memset(l, 0, sizeof(*l));
}

/* Describe the image for the current host. Returns 0, or an exit code with err set. */
static int layout_collect(struct layout *l, struct errbuf *eb)
{
	int ret;
	char *agent = img_agent_path();
	if (access(agent, X_OK) != 0) {
		errbuf_set(eb, EXIT_NOINPUT, "the guest agent '%s' is missing; run 'make' in '%s'", agent, project_root());
		free(agent);
		return -1;
	}
	ret = add_file(l, "init", agent, eb);
	if (!ret)
		ret = add_libs(l, agent, eb);
	free(agent);
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]) && !ret; i++)
		ret = add_tool(l, &tools[i], eb);
	if (!ret && file_exists("/etc/mke2fs.conf"))
		ret = add_file(l, "etc/mke2fs.conf", "/etc/mke2fs.conf", eb);
	if (!ret)
		ret = add_applets(l, eb);
	if (ret)
		return ret;

	static const char *const dirs[] = { "dev", "proc", "sys", "tmp", "mnt", "run", "etc", "root", NULL };
	for (size_t i = 0; dirs[i]; i++)
		layout_add(l, dirs[i], ENT_DIR, !strcmp(dirs[i], "tmp") ? 01777 : !strcmp(dirs[i], "root") ? 0700 : 0755);
	/* e2fsprogs look for mounted file systems in /etc/mtab. */
	add_link(l, "etc/mtab", "/proc/self/mounts");
	struct ent *e = layout_add(l, "dev/console", ENT_CHR, 0600);
	e->major = 5, e->minor = 1;
	e = layout_add(l, "dev/null", ENT_CHR, 0666);
	e->major = 1, e->minor = 3;

	/* Every parent directory (the array grows as they are added). */
	for (size_t i = 0; i < l->n; i++) {
		char *p = xstrdup(l->v[i].path);
		for (char *s = strrchr(p, '/'); s; s = strrchr(p, '/')) {
			*s = '\0';
			struct ent *d = layout_find(l, p);
			if (d && d->type != ENT_DIR) {
				errbuf_set(eb, EXIT_SOFTWARE, "image layout conflict: '/%s' is needed as a directory", p);
				free(p);
				return -1;
			}
			if (!d)
				layout_add(l, p, ENT_DIR, 0755);
		}
		free(p);
	}
	qsort(l->v, l->n, sizeof(*l->v), ent_cmp);
	return 0;
}

/* The cache key of a collected layout. Returns 0, or an exit code with err set. */
static int layout_key(const struct layout *l, char hex[65], struct errbuf *eb)
{
	struct hasher *h = hasher_new();
	hasher_adds(h, RECIPE);
	for (size_t i = 0; i < l->n; i++) {
		const struct ent *e = &l->v[i];
		char meta[64];
		snprintf(meta, sizeof(meta), "%d %o %u:%u %lld", (int)e->type, (unsigned)e->perm, e->major, e->minor,
			 e->size);
		hasher_adds(h, e->path);
		hasher_adds(h, meta);
		if (e->type == ENT_LINK)
			hasher_adds(h, e->target);
		if (e->type == ENT_FILE && hasher_add_file(h, e->src) < 0) {
			int en = errno;
			char dummy[65];
			hasher_done(h, dummy);
			errbuf_set(eb, EXIT_NOINPUT, "cannot read '%s': %s", e->src, errno_advice(en));
			return -1;
		}
	}
	hasher_done(h, hex);
	return 0;
}

static char *image_path(const char *dir, const char hex[65])
{
	return xasprintf("%s/initramfs-%.16s.cpio.gz", dir, hex);
}

/* ---- writing --------------------------------------------------------- */

/* libarchive's message for a failure without an errno (kept for the error line). */
static char archive_msg[256];

/* Errno of a failed libarchive call: its own if it has one, else 0 with archive_msg set. */
static int archive_err(struct archive *a)
{
	int e = archive_errno(a);
	if (e > 0 && e < 4096)
		return e;
	snprintf(archive_msg, sizeof(archive_msg), "%s",
		 archive_error_string(a) ? archive_error_string(a) : "unknown libarchive error");
	return 0;
}

static int write_entry(struct archive *a, const struct ent *e, unsigned ino, int *err)
{
	struct archive_entry *ae = archive_entry_new();
	archive_entry_set_pathname(ae, e->path);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	archive_entry_set_mtime(ae, 0, 0);
	archive_entry_set_ino(ae, ino);
	archive_entry_set_nlink(ae, e->type == ENT_DIR ? 2 : 1);
	archive_entry_set_size(ae, 0);
	switch (e->type) {
	case ENT_DIR:
		archive_entry_set_filetype(ae, AE_IFDIR);
		break;
	case ENT_FILE:
		archive_entry_set_filetype(ae, AE_IFREG);
		archive_entry_set_size(ae, e->size);
		break;
	case ENT_LINK:
		archive_entry_set_filetype(ae, AE_IFLNK);
		archive_entry_set_symlink(ae, e->target);
		break;
	case ENT_CHR:
		archive_entry_set_filetype(ae, AE_IFCHR);
		archive_entry_set_rdevmajor(ae, e->major);
		archive_entry_set_rdevminor(ae, e->minor);
		break;
	}
	archive_entry_set_perm(ae, e->perm);
	int r = archive_write_header(a, ae);
	archive_entry_free(ae);
	if (r != ARCHIVE_OK) {
		*err = archive_err(a);
		return -1;
	}
	if (e->type != ENT_FILE)
		return 0;

	int fd = open(e->src, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return -2;
	}
	static char buf[1 << 16];
	long long left = e->size;
	while (left > 0) {
		ssize_t n = read(fd, buf, left < (long long)sizeof(buf) ? (size_t)left : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? errno : EIO; /* the file shrank under us */
			close(fd);
			return -2;
		}
		if (archive_write_data(a, buf, (size_t)n) != n) {
			*err = archive_err(a);
			close(fd);
			return -1;
		}
		left -= n;
	}
	/* A file that grew since the layout was taken would be cut short: refuse. */
	ssize_t more = read(fd, buf, 1);
	close(fd);
	if (more != 0) {
		*err = more < 0 ? errno : EIO;
		return -2;
	}
	return 0;
}

static int build(const struct layout *l, const char *path, struct errbuf *eb)
{
	char *tmp;
	int fd = tmp_create(path, &tmp, eb);
	if (fd < 0)
		return -1;
	/* The progress line appears only when the build takes more than a moment. */
	struct progress *prog = NULL;
	double start = now_s();
	long long done = 0;

	struct archive *a = archive_write_new();
	if (!a)
		BUG("out of memory");
	int err = 0, r = 0;
	const char *bad_src = NULL;
	if (archive_write_set_format_cpio_newc(a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(a, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(a, fd) != ARCHIVE_OK) {
		errbuf_set(eb, EXIT_SOFTWARE, "libarchive cannot write a gzip newc cpio: %s", archive_error_string(a));
		archive_write_free(a);
		close(fd);
		unlink(tmp);
		free(tmp);
		return -1;
	}
	for (size_t i = 0; i < l->n && !r; i++) {
		r = write_entry(a, &l->v[i], (unsigned)i + 1, &err);
		if (r == -2)
			bad_src = l->v[i].src;
		done += l->v[i].size;
		if (!prog && now_s() - start > 1.0)
			prog = progress_start("building the guest initramfs", (uint64_t)l->bytes);
		if (prog)
			progress_update(prog, (uint64_t)done, l->v[i].path);
	}
	if (!r && archive_write_close(a) != ARCHIVE_OK) {
		err = archive_err(a);
		r = -1;
	}
	archive_write_free(a);
	if (!r && (fsync(fd) < 0 || close(fd) < 0)) {
		err = errno;
		r = -1;
		fd = -1;
	} else if (!r) {
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	if (!r && rename(tmp, path) < 0) {
		err = errno;
		r = -1;
	}
	if (r) {
		progress_abort(prog);
		unlink(tmp);
		free(tmp);
		if (bad_src && err == EIO)
			return errbuf_set(eb, EXIT_NOINPUT, "'%s' changed while the image was being built; run again", bad_src);
		if (bad_src)
			return errbuf_set(eb, EXIT_NOINPUT, "cannot read '%s': %s", bad_src, errno_advice(err));
		if (!err)
			return errbuf_set(eb, EXIT_SOFTWARE, "cannot write '%s': libarchive: %s", path, archive_msg);
		return errbuf_errno(eb, err, "cannot write '%s'", path);
	}
	free(tmp);
	struct stat st;
	char *msg = xasprintf("built the guest initramfs: %zu entries, %.1f MiB unpacked, %.1f MiB packed, in %.1f s",
			      l->n, (double)l->bytes / (1 << 20),
			      stat(path, &st) == 0 ? (double)st.st_size / (1 << 20) : 0.0, now_s() - start);
	if (prog)
		progress_done(prog, msg);
	else
		note("%s", msg);
	free(msg);
	return 0;
}

char *img_initramfs_ensure(struct errbuf *e)
{
	struct layout l = { 0 };
	char hex[65];
	char *dir = NULL, *path = NULL;
	if (layout_collect(&l, e) < 0 || layout_key(&l, hex, e) < 0 || !(dir = cache_subdir("images", e)))
		goto out;
	path = image_path(dir, hex);
	if (!file_exists(path)) {
		tmp_sweep(dir);
		if (build(&l, path, e) < 0) {
			free(path);
			path = NULL;
		}
	}
out:
	free(dir);
	layout_free(&l);
	return path;
}

char *img_initramfs_cached(void)
{
	struct layout l = { 0 };
	struct errbuf e;
	char hex[65];
	char *path = NULL;
	const char *root = cache_dir();
	if (root && !layout_collect(&l, &e) && !layout_key(&l, hex, &e)) {
		char *dir = xasprintf("%s/images", root);
		path = image_path(dir, hex);
		free(dir);
		if (!file_exists(path)) {
			free(path);
			path = NULL;
		}
	}
	layout_free(&l);
	return path;
}

/*
 * basedisk.c - base disk images, made with the host's own mkfs.
 *
 * Method. A base image is a sparse file of the requested size (ftruncate)
 * on which the real mkfs of the file system runs directly: no root, no loop
 * device, and the image is never mounted on the host. mkfs writes to a
 * temporary name next to the final one; only when it exits 0 is the file
 * fsynced and renamed, so a failed or interrupted mkfs never leaves
 * something that looks like a cached image.
 *
 * Cache key: SHA-256 over a recipe version, the file system, the mkfs
 * tool's own version output (so an upgraded xfsprogs makes new images), the
 * size in bytes and the extra options after splitting (so spacing does not
 * matter). The image is cache_dir()/base/<fs>-<size>-<first 16 hex>.img.
 *
 * mkfs runs quietly (-q) except mkfs.f2fs, which with -q hides even its
 * error messages; its output is captured and shown only on failure (or with
 * --verbose), reduced to the one line that says what went wrong.
 */
#include "images/basedisk.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cmd/opt.h"
#include "host/util.h"

#define RECIPE "crashlab-base-1"

const char *const img_fs_names[] = { "ext4", "xfs", "btrfs", "f2fs", NULL };

struct fs_def {
	const char *name;
	const char *mkfs;                /* program */
	const char *package;             /* Debian package shipping it */
	const char *const mkfs_args[3];  /* before the user's options */
	const char *version_arg;         /* prints the tool's version */
	const char *const fsck[4];       /* read-only check, without the device */
};

static const struct fs_def fs_defs[] = {
	{ "ext4", "mkfs.ext4", "e2fsprogs", { "-F", "-q", NULL }, "-V",
	  { "e2fsck", "-fn", NULL } },
	{ "xfs", "mkfs.xfs", "xfsprogs", { "-f", "-q", NULL }, "-V",
	  { "xfs_repair", "-n", NULL } },
	{ "btrfs", "mkfs.btrfs", "btrfs-progs", { "-f", "-q", NULL }, "--version",
	  { "btrfs", "check", "--readonly", NULL } },
	{ "f2fs", "mkfs.f2fs", "f2fs-tools", { "-f", NULL }, "-V",
	  { "fsck.f2fs", "--dry-run", NULL } },
};

static const struct fs_def *fs_def(const char *fs)
{
	for (size_t i = 0; fs && i < sizeof(fs_defs) / sizeof(fs_defs[0]); i++)
		if (!strcmp(fs_defs[i].name, fs))
			return &fs_defs[i];
	return NULL;
}

int img_fs_valid(const char *fs)
{
	return fs_def(fs) != NULL;
}

const char *img_fs_list(void)
{
	return "ext4, xfs, btrfs, f2fs";
}

const char *const *img_fsck_argv(const char *fs)
{
	const struct fs_def *d = fs_def(fs);
	return d ? d->fsck : NULL;
}

bool img_fsck_clean(const char *fs, int status)
{
	return fs_def(fs) && status == 0;
}

char *img_tmp_name(const char *path)
{
	return xasprintf("%s.tmp.%d", path, (int)getpid());
}

void img_tmp_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *t = strstr(de->d_name, ".tmp.");
		if (!t || !t[5] || strspn(t + 5, "0123456789") != strlen(t + 5))
			continue;
		long pid = strtol(t + 5, NULL, 10);
		if (pid <= 0 || pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char *p = xasprintf("%s/%s", dir, de->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
}

/* "512M", "1G", "300K", or plain bytes: short and exact, for file names. */
static char *size_label(long long size)
{
	if (size % (1LL << 30) == 0)
		return xasprintf("%lldG", size >> 30);
	if (size % (1LL << 20) == 0)
		return xasprintf("%lldM", size >> 20);
	if (size % (1LL << 10) == 0)
		return xasprintf("%lldK", size >> 10);
	return xasprintf("%lld", size);
}

/* The line of mkfs output that says what went wrong. */
static char *mkfs_message(const char *out)
{
	char *copy = xstrdup(out ? out : ""), *save = NULL, *first = NULL, *res = NULL;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		size_t n = strlen(l);
		while (n && isspace((unsigned char)l[n - 1]))
			l[--n] = '\0';
		if (!n || !strncasecmp(l, "usage", 5) || !strncmp(l, "Info:", 5) || !strncmp(l, "F2FS-tools", 10))
			continue;
		if (strcasestr(l, "error")) {
			res = xstrdup(l);
			break;
		}
		if (!first)
			first = l;
	}
	if (!res)
		res = xstrdup(first ? first : "no message");
	free(copy);
	return res;
}

char *img_base_ensure(const char *fs, long long size, const char *mkfs_opts)
{
	const struct fs_def *d = fs_def(fs);
	if (!d)
		die_code(EXIT_USAGE, "unknown file system '%s'; choose one of %s", fs ? fs : "", img_fs_list());
	if (size <= 0)
		die_code(EXIT_USAGE, "the image size must be positive");
	char *label = size_label(size);
	if (!strcmp(fs, "xfs") && size < IMG_XFS_MIN_SIZE)
		die_code(EXIT_USAGE, "an xfs image needs at least 300M, not %s: mkfs.xfs refuses smaller file systems", label);

	char *mkfs = find_program(d->mkfs);
	if (!mkfs)
		die_code(EXIT_NOINPUT, "'%s' is missing; install the Debian package %s (or run 'make deps')",
			 d->mkfs, d->package);
	struct strvec argv = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&argv, mkfs);
	strvec_push(&argv, d->version_arg);
	int rc = run_cmd(&argv, &out, -1);
	strvec_free(&argv);
	if (rc < 0 || rc == 127)
		die_code(EXIT_NOINPUT, "cannot run '%s %s'", mkfs, d->version_arg);

	struct strvec opts = STRVEC_INIT;
	if (mkfs_opts)
		strvec_split(&opts, mkfs_opts);
	struct hasher *h = hasher_new();
	char hex[65], sizebuf[32];
	snprintf(sizebuf, sizeof(sizebuf), "%lld", size);
	hasher_adds(h, RECIPE);
	hasher_adds(h, fs);
	hasher_adds(h, out.buf);
	hasher_adds(h, sizebuf);
	for (size_t i = 0; i < opts.n; i++)
		hasher_adds(h, opts.v[i]);
	hasher_done(h, hex);
	sbuf_free(&out);

	char *dir = cache_subdir("base");
	char *path = xasprintf("%s/%s-%s-%.16s.img", dir, fs, label, hex);
	if (file_exists(path))
		goto done;
	img_tmp_sweep(dir);

	char *tmp = img_tmp_name(path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", tmp, errno_advice(errno));
	if (ftruncate(fd, size) < 0) {
		int e = errno;
		close(fd);
		unlink(tmp);
		die_code(exit_for_errno(e), "cannot make a %s image '%s': %s", label, tmp, errno_advice(e));
	}
	close(fd);

	strvec_push(&argv, mkfs);
	for (size_t i = 0; d->mkfs_args[i]; i++)
		strvec_push(&argv, d->mkfs_args[i]);
	for (size_t i = 0; i < opts.n; i++)
		strvec_push(&argv, opts.v[i]);
	free(argv.v[0]);
	argv.v[0] = xstrdup(d->mkfs);   /* shown by name; run by path below */
	char *shown = strvec_join_quoted(&argv);
	free(argv.v[0]);
	argv.v[0] = xstrdup(mkfs);
	strvec_push(&argv, tmp);
	note("making a %s %s base image", label, fs);
	rc = run_cmd(&argv, &out, -1);
	if (verbose && out.len)
		fputs(out.buf, stderr);
	if (rc != 0) {
		/* Some mkfs report a full disk as an I/O error: look before the space is freed. */
		struct statvfs sv;
		bool full = strcasestr(out.buf, "no space left on device") ||
			    (statvfs(dir, &sv) == 0 && (unsigned long long)sv.f_bavail * sv.f_frsize < (1ULL << 20));
		unlink(tmp);
		char *msg = mkfs_message(out.buf);
		if (full)
			die_code(EXIT_CANTCREAT, "'%s' ran out of space in '%s': %s", shown, dir, msg);
		die_code(EXIT_BUILD, "'%s' failed (exit %d): %s", shown, rc, msg);
	}
	fd = open(tmp, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		die_code(exit_for_errno(e), "cannot store '%s': %s", path, errno_advice(e));
	}
	close(fd);
	free(shown);
	free(tmp);
	strvec_free(&argv);
	sbuf_free(&out);
done:
	strvec_free(&opts);
	free(dir);
	free(label);
	free(mkfs);
	return path;
}

void img_fs_split(const char *cmd, const char *list, struct strvec *out)
{
	char *copy = xstrdup(list);
	char *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all")) {
			for (int i = 0; img_fs_names[i]; i++)
				strvec_push(out, img_fs_names[i]);
		} else if (!img_fs_valid(t)) {
			usage_error(cmd, "unknown file system '%s' (choose from %s)", t, img_fs_list());
		} else {
			strvec_push(out, t);
		}
	}
	free(copy);
	if (!out->n)
		usage_error(cmd, "no file system given to --fs");
}

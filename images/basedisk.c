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
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/util.h"
#include "host/hash.h"
#include "host/msg.h"
#include "host/sys.h"

#define RECIPE "crashlab-base-1"

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

/* Make the image at path: a sparse file of size, mkfs on a temporary name, then fsync and rename. */
static int make_image(const struct fs_type *d, const char *mkfs, const struct strvec *opts, long long size,
		      const char *label, const char *dir, const char *path, struct errbuf *e)
{
	char *tmp;
	int fd = tmp_create(path, &tmp, e);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, size) < 0) {
		int err = errno;
		close(fd);
		unlink(tmp);
		errbuf_errno(e, err, "cannot make a %s image '%s'", label, tmp);
		free(tmp);
		return -1;
	}
	close(fd);
	struct strvec argv = STRVEC_INIT;
	struct sbuf out = SBUF_INIT;
	strvec_push(&argv, d->mkfs);   /* shown by name; run by path below */
	for (size_t i = 0; d->mkfs_args[i]; i++)
		strvec_push(&argv, d->mkfs_args[i]);
	for (size_t i = 0; i < opts->n; i++)
		strvec_push(&argv, opts->v[i]);
	char *shown = strvec_join_quoted(&argv);
	free(argv.v[0]);
	argv.v[0] = xstrdup(mkfs);
	strvec_push(&argv, tmp);
	note("making a %s %s base image", label, d->name);
	int rc = run_cmd(&argv, &out, -1), r = 0;
	if (msg_verbose() && out.len)
		fputs(out.buf, stderr);
	if (rc != 0) {
		/* Some mkfs report a full disk as an I/O error: look before the space is freed. */
		struct statvfs sv;
		bool full = strcasestr(out.buf, "no space left on device") ||
			    (statvfs(dir, &sv) == 0 && (unsigned long long)sv.f_bavail * sv.f_frsize < (1ULL << 20));
		unlink(tmp);
		char *msg = mkfs_message(out.buf);
		if (full)
			r = errbuf_set(e, EXIT_CANTCREAT, "'%s' ran out of space in '%s': %s", shown, dir, msg);
		else
			r = errbuf_set(e, EXIT_BUILD, "'%s' failed (exit %d): %s", shown, rc, msg);
		free(msg);
	} else {
		fd = open(tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) < 0 || rename(tmp, path) < 0) {
			int err = errno;
			unlink(tmp);
			r = errbuf_errno(e, err, "cannot store '%s'", path);
		}
		if (fd >= 0)
			close(fd);
	}
	free(shown);
	free(tmp);
	strvec_free(&argv);
	sbuf_free(&out);
	return r;
}

/* What `mkfs VERSION_ARG` says, into out: run once per mkfs program and
 * process (a recording asks for its base image every time; the answer
 * cannot change while crashlab runs). 0, or -1 when it cannot run. */
static int mkfs_version(const struct fs_type *d, const char *mkfs, struct sbuf *out)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		char *mkfs, *text;
	} seen[FS_COUNT];
	size_t k = (size_t)(d - fs_types);
	pthread_mutex_lock(&mu);
	if (seen[k].mkfs && !strcmp(seen[k].mkfs, mkfs)) {
		sbuf_adds(out, seen[k].text);
		pthread_mutex_unlock(&mu);
		return 0;
	}
	pthread_mutex_unlock(&mu);
	struct strvec argv = STRVEC_INIT;
	strvec_push(&argv, mkfs);
	strvec_push(&argv, d->version_arg);
	int rc = run_cmd(&argv, out, -1);
	strvec_free(&argv);
	if (rc < 0 || rc == 127)
		return -1;
	pthread_mutex_lock(&mu);
	free(seen[k].mkfs);
	free(seen[k].text);
	seen[k].mkfs = xstrdup(mkfs);
	seen[k].text = xstrdup(out->buf ? out->buf : "");
	pthread_mutex_unlock(&mu);
	return 0;
}

char *img_base_ensure(const char *fs, long long size, const char *mkfs_opts, struct errbuf *e)
{
	const struct fs_type *d = fs_lookup(fs);
	if (!d) {
		errbuf_set(e, EXIT_USAGE, "unknown file system '%s'; choose one of %s", fs ? fs : "", fs_names_text());
		return NULL;
	}
	if (size <= 0) {
		errbuf_set(e, EXIT_USAGE, "the image size must be positive");
		return NULL;
	}
	char *label = size_label(size);
	if (size < d->min_size) {
		char *min = size_label(d->min_size);
		errbuf_set(e, EXIT_USAGE, "an %s image needs at least %s, not %s: %s refuses smaller file systems", fs, min,
			   label, d->mkfs);
		free(min);
		free(label);
		return NULL;
	}
	char *mkfs = find_program(d->mkfs);
	if (!mkfs) {
		errbuf_set(e, EXIT_NOINPUT, "'%s' is missing; install the Debian package %s (or run 'make deps')", d->mkfs,
			   d->package);
		free(label);
		return NULL;
	}
	struct sbuf out = SBUF_INIT;
	char *path = NULL, *dir = NULL;
	struct strvec opts = STRVEC_INIT;
	if (mkfs_version(d, mkfs, &out) < 0) {
		errbuf_set(e, EXIT_NOINPUT, "cannot run '%s %s'", mkfs, d->version_arg);
		goto done;
	}

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

	if (!(dir = cache_subdir("base", e)))
		goto done;
	path = xasprintf("%s/%s-%s-%.16s.img", dir, fs, label, hex);
	if (file_exists(path))
		goto done;
	tmp_sweep(dir);
	if (make_image(d, mkfs, &opts, size, label, dir, path, e) < 0) {
		free(path);
		path = NULL;
	}
done:
	sbuf_free(&out);
	strvec_free(&opts);
	free(dir);
	free(label);
	free(mkfs);
	return path;
}

long long img_region_stride(long long size)
{
	return (size + IMG_REGION_ALIGN - 1) / IMG_REGION_ALIGN * IMG_REGION_ALIGN;
}

/* The non-zero 4 KiB blocks of the file behind fd, size bytes: their
 * offsets in off[] and their data in data (4 KiB each). -1 with errno. */
static int nonzero_blocks(int fd, long long size, long long **off, char **data, size_t *n)
{
	enum { B = 4096 };
	size_t cap = 0;
	char blk[B];
	*off = NULL;
	*data = NULL;
	*n = 0;
	for (off_t at = 0; at < size;) {
		off_t d = lseek(fd, at, SEEK_DATA);
		if (d < 0)
			return errno == ENXIO ? 0 : -1;
		off_t h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			return -1;
		for (off_t b = d / B * B; b < h && b < size; b += B) {
			ssize_t got = pread(fd, blk, B, b);
			if (got < 0)
				return -1;
			if (got < B)
				memset(blk + got, 0, (size_t)(B - got));
			if (mem_is_zero(blk, B))
				continue;
			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				*off = xrealloc(*off, cap * sizeof(**off));
				*data = xrealloc(*data, cap * B);
			}
			(*off)[*n] = (long long)b;
			memcpy(*data + *n * B, blk, B);
			(*n)++;
		}
		at = h;
	}
	return 0;
}

char *img_regions_ensure(const char *base_path, long long size, int regions, struct errbuf *e)
{
	const char *dot = strrchr(base_path, '.');
	size_t stem = dot ? (size_t)(dot - base_path) : strlen(base_path);
	char *path = xasprintf("%.*s-regions%d.img", (int)stem, base_path, regions);
	if (file_exists(path))
		return path;
	long long stride = img_region_stride(size);
	int in = open(base_path, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		errbuf_errno(e, errno, "cannot read the base image '%s'", base_path);
		free(path);
		return NULL;
	}
	long long *off = NULL;
	char *data = NULL;
	size_t n = 0;
	int r = nonzero_blocks(in, size, &off, &data, &n);
	int err = errno;
	close(in);
	char *tmp = NULL;
	int fd = -1;
	if (r < 0) {
		errbuf_errno(e, err, "cannot read the base image '%s'", base_path);
		goto fail;
	}
	fd = tmp_create(path, &tmp, e);
	if (fd < 0)
		goto fail;
	if (ftruncate(fd, (off_t)((regions + 1) * stride)) < 0)
		goto io;
	for (int k = 1; k <= regions; k++)
		for (size_t i = 0; i < n; i++)
			if (pwrite_all(fd, data + i * 4096, 4096, (uint64_t)(k * stride + off[i])) < 0)
				goto io;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto io;
	}
	fd = -1;
	if (rename(tmp, path) < 0)
		goto io;
	free(tmp);
	free(off);
	free(data);
	return path;
io:
	errbuf_errno(e, errno, "cannot make the disk of %d regions '%s'", regions, path);
fail:
	if (fd >= 0)
		close(fd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(off);
	free(data);
	free(path);
	return NULL;
}

/*
 * ops.c - carry out workload ops with the real system calls.
 *
 * Method. Every path is relative to the mount point: we hold an O_DIRECTORY
 * fd of it and use the *at() calls, except where Linux has only a path
 * call (truncate, lsetxattr, lremovexattr), which get "mountpoint/P".
 *
 * Open files. A workload's files stay open from first use until `close P`
 * or agent_ops_free, as an application's would, so fsync, sync_file_range
 * and the barrier calls act on the fd the data went through. The table
 * keeps every fd ever opened under a name, newest last, with what it was
 * opened for: read-write (files), read-only (a file that refused O_RDWR),
 * directory (O_RDONLY|O_DIRECTORY, for fsync of a directory) and O_DIRECT
 * (dwrite's own fd). An op on P takes the newest fd opened as P that fits
 * its need, but only if P still names that fd's inode (fstat against
 * fstatat, following symlinks as open does); otherwise it opens P afresh
 * and the old fd stays open, unused, until close or free. That is what
 * makes `rename A/foo A/bar; write A/foo "world"` write a new A/foo.
 * `close P` closes every fd opened as P, current or stale.
 *
 * Creation: write, append, creat, dwrite and mmapwrite open with O_CREAT
 * (mode 0644 unless creat gives one); no other op creates. The umask is 0
 * while an op runs (and restored after it, since the PID-1 agent also
 * runs other programs), so modes are the workload's own.
 *
 * Results: a failing call is a result (ret -1 and its errno), never an
 * abort: even a SIGBUS while storing into a mapping becomes ret -1, EFAULT.
 * A write that wrote some of its bytes before a call failed (ENOSPC) has
 * both: ret the bytes written, err the failure.
 * ret is the call's return value (bytes for the writes, summed over the
 * chunks large writes are cut into), except creat, whose fd number means
 * nothing outside the guest: 0. After the op, ino/ino2 are the inode
 * numbers path/path2 name (lstat; 0 when absent); for symlink, path2 is
 * the TARGET, so ino2 is the inode the new link resolves to.
 */
#include "images/agent/agent.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_BARRIER
#define RENAME_BARRIER (1 << 3)   /* this project's kernel series (kernel/README.md) */
#endif

#define CHUNK (1u << 20)          /* large writes go out in pieces of this size */

enum fkind { F_RW, F_RO, F_DIR, F_DIRECT };
enum want { W_CREATE, W_RW, W_ANY, W_DIRECT };

struct ofile {
	char *path;       /* the name it was opened under */
	int fd;
	enum fkind kind;
};

struct agent_ops {
	int mnt;          /* O_DIRECTORY fd of the mount point */
	char *mntpath;
	long nr_fbarrier, nr_fdatabarrier;
	struct ofile *f;
	size_t n, cap;
	int short_err;    /* a write that wrote part of its bytes, then failed: why */
};

struct agent_ops *agent_ops_new(const char *mountpoint, long nr_fbarrier, long nr_fdatabarrier)
{
	struct agent_ops *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->mnt = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	a->mntpath = strdup(mountpoint);
	if (a->mnt < 0 || !a->mntpath) {
		int e = errno;
		if (a->mnt >= 0)
			close(a->mnt);
		free(a->mntpath);
		free(a);
		errno = e;
		return NULL;
	}
	a->nr_fbarrier = nr_fbarrier;
	a->nr_fdatabarrier = nr_fdatabarrier;
	return a;
}

void agent_ops_free(struct agent_ops *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		close(a->f[i].fd);
		free(a->f[i].path);
	}
	free(a->f);
	close(a->mnt);
	free(a->mntpath);
	free(a);
}

static char *full_path(const struct agent_ops *a, const char *p)
{
	size_t l1 = strlen(a->mntpath), l2 = strlen(p);
	char *s = malloc(l1 + l2 + 2);
	if (!s)
		return NULL;
	memcpy(s, a->mntpath, l1);
	s[l1] = '/';
	memcpy(s + l1 + 1, p, l2 + 1);
	return s;
}

static int add_file(struct agent_ops *a, const char *path, int fd, enum fkind kind)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct ofile *v = realloc(a->f, cap * sizeof(*v));
		if (!v)
			return -1;
		a->f = v;
		a->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return -1;
	a->f[a->n++] = (struct ofile){ p, fd, kind };
	return 0;
}

static int fits(enum fkind k, enum want w)
{
	switch (w) {
	case W_CREATE:
	case W_RW:
		return k == F_RW;
	case W_ANY:
		return k != F_DIRECT;
	case W_DIRECT:
		return k == F_DIRECT;
	}
	return 0;
}

/* The cached fd for path that fits w, if path still names its inode; -1. */
static int cached_fd(struct agent_ops *a, const char *path, enum want w)
{
	for (size_t i = a->n; i-- > 0;) {
		if (strcmp(a->f[i].path, path) || !fits(a->f[i].kind, w))
			continue;
		struct stat now, was;
		if (fstatat(a->mnt, path, &now, 0) < 0 || fstat(a->f[i].fd, &was) < 0)
			return -1;
		if (now.st_dev != was.st_dev || now.st_ino != was.st_ino)
			return -1;
		return a->f[i].fd;
	}
	return -1;
}

/* An fd for path fit for w: the cached one, or a fresh open (kept). -1
 * with errno when the open fails. */
static int get_fd(struct agent_ops *a, const char *path, enum want w, mode_t mode)
{
	int fd = cached_fd(a, path, w);
	if (fd >= 0)
		return fd;
	enum fkind kind = F_RW;
	switch (w) {
	case W_CREATE:
		fd = openat(a->mnt, path, O_RDWR | O_CREAT | O_CLOEXEC, mode);
		break;
	case W_RW:
		fd = openat(a->mnt, path, O_RDWR | O_CLOEXEC);
		break;
	case W_DIRECT:
		kind = F_DIRECT;
		fd = openat(a->mnt, path, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, mode);
		break;
	case W_ANY: {
		struct stat st;
		if (fstatat(a->mnt, path, &st, 0) == 0 && S_ISDIR(st.st_mode)) {
			kind = F_DIR;
			fd = openat(a->mnt, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			break;
		}
		fd = openat(a->mnt, path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0 && (errno == EACCES || errno == EROFS || errno == ETXTBSY || errno == EPERM)) {
			kind = F_RO;
			fd = openat(a->mnt, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		}
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl >= 0)
				fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		}
		break;
	}
	}
	if (fd < 0)
		return -1;
	if (add_file(a, path, fd, kind) < 0) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	return fd;
}

/* ---- the writes ---- */

/* Write len bytes of op's data at file offset off through fd: the TEXT, or
 * the op's pattern. appending: write() on an O_APPEND fd, else pwrite.
 * Returns the bytes written, or -1 when nothing was; when some were and
 * then a call failed (the disk full), *short_err is its errno. */
static long write_data(int fd, const struct wl_op *op, uint64_t off, uint64_t len, int appending,
		       unsigned char *buf, size_t bufsize, int *short_err)
{
	uint64_t done = 0;
	do {
		size_t n = len - done > bufsize ? bufsize : (size_t)(len - done);
		const void *src;
		if (op->data) {
			src = op->data + done;
		} else {
			wl_pattern((uint32_t)op->id, off + done, buf, n);
			src = buf;
		}
		ssize_t w = appending ? write(fd, src, n) : pwrite(fd, src, n, (off_t)(off + done));
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (!done)
				return -1;
			*short_err = errno;
			return (long)done;
		}
		done += (uint64_t)w;
		if (w == 0) {
			*short_err = EIO; /* no progress: do not spin */
			break;
		}
	} while (done < len);
	return (long)done;
}

static uint64_t op_len(const struct wl_op *op)
{
	if (op->data)
		return op->data_len;
	return op->len > 0 ? (uint64_t)op->len : 0;
}

static long do_write(struct agent_ops *a, const struct wl_op *op, int appending)
{
	int fd = get_fd(a, op->path, W_CREATE, 0644);
	if (fd < 0)
		return -1;
	uint64_t len = op_len(op), off = op->off > 0 ? (uint64_t)op->off : 0;
	unsigned char *buf = NULL;
	size_t bufsize = CHUNK;
	if (!op->data) {
		bufsize = len < CHUNK ? (size_t)len : CHUNK;
		buf = malloc(bufsize ? bufsize : 1);
		if (!buf) {
			errno = ENOMEM;
			return -1;
		}
	}
	int oldfl = -1;
	if (appending) {
		struct stat st;
		if (fstat(fd, &st) < 0 || (oldfl = fcntl(fd, F_GETFL)) < 0 ||
		    fcntl(fd, F_SETFL, oldfl | O_APPEND) < 0) {
			free(buf);
			return -1;
		}
		off = (uint64_t)st.st_size;
	}
	long r = write_data(fd, op, off, len, appending, buf, bufsize ? bufsize : 1, &a->short_err);
	int e = errno;
	if (appending)
		fcntl(fd, F_SETFL, oldfl);
	free(buf);
	errno = e;
	return r;
}

static long do_dwrite(struct agent_ops *a, const struct wl_op *op)
{
	int fd = get_fd(a, op->path, W_DIRECT, 0644);
	if (fd < 0)
		return -1;
	uint64_t len = op_len(op), off = op->off > 0 ? (uint64_t)op->off : 0;
	size_t bufsize = len < CHUNK ? (size_t)len : CHUNK;
	void *buf;
	int e = posix_memalign(&buf, 4096, bufsize ? bufsize : 4096);
	if (e) {
		errno = e;
		return -1;
	}
	long r = write_data(fd, op, off, len, 0, buf, bufsize ? bufsize : 4096, &a->short_err);
	e = errno;
	free(buf);
	errno = e;
	return r;
}

static sigjmp_buf bus_jump;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(bus_jump, 1);
}

static long do_mmapwrite(struct agent_ops *a, const struct wl_op *op)
{
	int fd = get_fd(a, op->path, W_CREATE, 0644);
	if (fd < 0)
		return -1;
	uint64_t len = op_len(op), off = op->off > 0 ? (uint64_t)op->off : 0;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -1;
	if ((uint64_t)st.st_size < off + len && ftruncate(fd, (off_t)(off + len)) < 0)
		return -1;
	if (len == 0)
		return 0;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t moff = off / page * page;
	size_t mlen = (size_t)(off + len - moff);
	unsigned char *m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)moff);
	if (m == MAP_FAILED)
		return -1;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old);
	volatile long r = (long)len;
	if (sigsetjmp(bus_jump, 1) == 0) {
		unsigned char *dst = m + (off - moff);
		if (op->data)
			memcpy(dst, op->data, (size_t)len);
		else
			wl_pattern((uint32_t)op->id, off, dst, (size_t)len);
	} else {
		r = -1;
	}
	sigaction(SIGBUS, &old, NULL);
	munmap(m, mlen);
	if (r < 0)
		errno = EFAULT;
	return r;
}

/* ---- everything else ---- */

static long do_truncate(struct agent_ops *a, const struct wl_op *op)
{
	int fd = cached_fd(a, op->path, W_RW);
	if (fd >= 0)
		return ftruncate(fd, (off_t)op->len);
	char *p = full_path(a, op->path);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	long r = truncate(p, (off_t)op->len);
	int e = errno;
	free(p);
	errno = e;
	return r;
}

static long do_falloc(struct agent_ops *a, const struct wl_op *op)
{
	static const int modes[] = {
		[WL_FALLOC_DEFAULT] = 0,
		[WL_FALLOC_KEEP_SIZE] = FALLOC_FL_KEEP_SIZE,
		[WL_FALLOC_PUNCH_HOLE] = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		[WL_FALLOC_ZERO_RANGE] = FALLOC_FL_ZERO_RANGE,
		[WL_FALLOC_ZERO_RANGE_KEEP_SIZE] = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
	};
	if (op->flags < 0 || op->flags > WL_FALLOC_ZERO_RANGE_KEEP_SIZE) {
		errno = EINVAL;
		return -1;
	}
	int fd = get_fd(a, op->path, W_RW, 0);
	if (fd < 0)
		return -1;
	return fallocate(fd, modes[op->flags], (off_t)op->off, (off_t)op->len);
}

static long do_rename(struct agent_ops *a, const struct wl_op *op)
{
	unsigned flags = 0;
	switch (op->flags) {
	case WL_RENAME_NOREPLACE: flags = RENAME_NOREPLACE; break;
	case WL_RENAME_EXCHANGE: flags = RENAME_EXCHANGE; break;
	case WL_RENAME_BARRIER: flags = RENAME_BARRIER; break;
	default: break;
	}
	return syscall(SYS_renameat2, a->mnt, op->path, a->mnt, op->path2, flags);
}

static long do_xattr(struct agent_ops *a, const struct wl_op *op)
{
	char *p = full_path(a, op->path);
	if (!p) {
		errno = ENOMEM;
		return -1;
	}
	long r;
	if (op->kind == WL_SETXATTR)
		r = lsetxattr(p, op->name, op->value ? op->value : "", op->value_len, 0);
	else
		r = lremovexattr(p, op->name);
	int e = errno;
	free(p);
	errno = e;
	return r;
}

static long do_close(struct agent_ops *a, const struct wl_op *op)
{
	size_t k = 0;
	int closed = 0, failed = 0, e = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (strcmp(a->f[i].path, op->path)) {
			a->f[k++] = a->f[i];
			continue;
		}
		if (close(a->f[i].fd) < 0 && !failed) {
			failed = 1;
			e = errno;
		}
		free(a->f[i].path);
		closed++;
	}
	a->n = k;
	if (!closed) {
		errno = EBADF;
		return -1;
	}
	if (failed) {
		errno = e;
		return -1;
	}
	return 0;
}

static long do_fiemap_sync(int fd)
{
	struct fiemap fm;
	memset(&fm, 0, sizeof(fm));
	fm.fm_start = 0;
	fm.fm_length = FIEMAP_MAX_OFFSET;
	fm.fm_flags = FIEMAP_FLAG_SYNC;
	fm.fm_extent_count = 0;
	return ioctl(fd, FS_IOC_FIEMAP, &fm);
}

static long do_sleep(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The ops that act on an fd of an existing path (file or directory). */
static long do_fd_op(struct agent_ops *a, const struct wl_op *op)
{
	int fd = get_fd(a, op->path, W_ANY, 0);
	if (fd < 0)
		return -1;
	switch (op->kind) {
	case WL_FSYNC:
		return fsync(fd);
	case WL_FDATASYNC:
		return fdatasync(fd);
	case WL_SYNC_FILE_RANGE: {
		unsigned fl = 0;
		if (op->flags & WL_SFR_WAIT_BEFORE)
			fl |= SYNC_FILE_RANGE_WAIT_BEFORE;
		if (op->flags & WL_SFR_WRITE)
			fl |= SYNC_FILE_RANGE_WRITE;
		if (op->flags & WL_SFR_WAIT_AFTER)
			fl |= SYNC_FILE_RANGE_WAIT_AFTER;
		return sync_file_range(fd, (off_t)op->off, (off_t)op->len, fl);
	}
	case WL_FBARRIER:
	case WL_FDATABARRIER: {
		long nr = op->kind == WL_FBARRIER ? a->nr_fbarrier : a->nr_fdatabarrier;
		if (nr < 0) {
			errno = ENOSYS;
			return -1;
		}
		return syscall(nr, fd, 0);
	}
	case WL_FIEMAP_SYNC:
		return do_fiemap_sync(fd);
	default:
		errno = EINVAL;
		return -1;
	}
}

static long run_op(struct agent_ops *a, const struct wl_op *op)
{
	switch (op->kind) {
	case WL_MKDIR:
		return mkdirat(a->mnt, op->path, (mode_t)op->mode);
	case WL_RMDIR:
		return unlinkat(a->mnt, op->path, AT_REMOVEDIR);
	case WL_CREAT: {
		int fd = openat(a->mnt, op->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, (mode_t)op->mode);
		if (fd < 0)
			return -1;
		if (add_file(a, op->path, fd, F_RW) < 0) {
			close(fd);
			errno = ENOMEM;
			return -1;
		}
		return 0;
	}
	case WL_WRITE:
	case WL_MMAPWRITE:
		return op->kind == WL_WRITE ? do_write(a, op, 0) : do_mmapwrite(a, op);
	case WL_APPEND:
		return do_write(a, op, 1);
	case WL_DWRITE:
		return do_dwrite(a, op);
	case WL_TRUNCATE:
		return do_truncate(a, op);
	case WL_FALLOC:
		return do_falloc(a, op);
	case WL_LINK:
		return linkat(a->mnt, op->path, a->mnt, op->path2, 0);
	case WL_SYMLINK:
		return symlinkat(op->path2, a->mnt, op->path);
	case WL_RENAME:
		return do_rename(a, op);
	case WL_UNLINK:
		return unlinkat(a->mnt, op->path, 0);
	case WL_SETXATTR:
	case WL_REMOVEXATTR:
		return do_xattr(a, op);
	case WL_CHMOD:
		return fchmodat(a->mnt, op->path, (mode_t)op->mode, 0);
	case WL_FSYNC:
	case WL_FDATASYNC:
	case WL_SYNC_FILE_RANGE:
	case WL_FBARRIER:
	case WL_FDATABARRIER:
	case WL_FIEMAP_SYNC:
		return do_fd_op(a, op);
	case WL_SYNC:
		sync();
		return 0;
	case WL_SYNCFS:
		return syncfs(a->mnt);
	case WL_CLOSE:
		return do_close(a, op);
	case WL_SLEEP:
		return do_sleep(op->len > 0 ? op->len : 0);
	case WL_MARK:
		return 0;
	case WL_NKINDS:
		break;
	}
	errno = EINVAL;
	return -1;
}

static uint64_t ino_of(const struct agent_ops *a, const char *path, int follow)
{
	struct stat st;
	if (!path || fstatat(a->mnt, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return (uint64_t)st.st_ino;
}

void agent_ops_exec(struct agent_ops *a, const struct wl_op *op, struct op_result *r)
{
	struct timespec t0, t1;
	memset(r, 0, sizeof(*r));
	mode_t old_umask = umask(0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	a->short_err = 0;
	long ret = run_op(a, op);
	int e = errno;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	umask(old_umask);
	r->ret = ret;
	r->err = ret < 0 ? (e ? e : EIO) : a->short_err;
	r->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	r->ino = ino_of(a, op->path, 0);
	if (op->kind == WL_SYMLINK)
		r->ino2 = ino_of(a, op->path, 1);
	else if (op->kind == WL_RENAME || op->kind == WL_LINK)
		r->ino2 = ino_of(a, op->path2, 0);
}

/* util.c - see util.h. */
#include "host/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int verbose;
int quiet;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	/* One line, written at once so it never interleaves with a progress bar. */
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "\r\033[K%s", prefix);
	if (!isatty(2))
		n = snprintf(buf, sizeof(buf), "%s", prefix);
	if (n < 0)
		n = 0;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	ssize_t w = write(2, buf, len);
	(void)w;
}

_Noreturn void die_code(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: error: ", fmt, ap);
	va_end(ap);
	exit(code);
}

_Noreturn void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: error: ", fmt, ap);
	va_end(ap);
	exit(EXIT_SOFTWARE);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: warning: ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: ", fmt, ap);
	va_end(ap);
}

_Noreturn void bug_at(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "crashlab: BUG: %s:%d: %s\n", file, line, msg);
	abort();
}

const char *errno_advice(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
		return "no space left on device; free some space or set XDG_CACHE_HOME elsewhere";
	case EACCES:
	case EPERM:
		return "permission denied";
	case EROFS:
		return "read-only file system";
	case ENOENT:
		return "no such file or directory";
	default:
		return strerror(err);
	}
}

int exit_for_errno(int err)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EROFS:
	case EACCES:
	case EPERM:
	case EFBIG:
		return EXIT_CANTCREAT;
	case ENOENT:
		return EXIT_NOINPUT;
	default:
		return EXIT_SOFTWARE;
	}
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory allocating %zu bytes", n);
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	return p;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	if (sb->len + n + 1 > sb->cap) {
		size_t cap = sb->cap ? sb->cap * 2 : 256;
		while (cap < sb->len + n + 1)
			cap *= 2;
		sb->buf = xrealloc(sb->buf, cap);
		sb->cap = cap;
	}
	if (n)
		memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	int n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("out of memory");
	sbuf_add(sb, p, (size_t)n);
	free(p);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sbuf_free(struct sbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

char *sbuf_detach(struct sbuf *sb)
{
	if (!sb->buf)
		sbuf_add(sb, "", 0);
	char *p = sb->buf;
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	return p;
}

void strvec_push(struct strvec *sv, const char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = xstrdup(s);
	sv->v[sv->n] = NULL;
}

void strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		die("out of memory");
	va_end(ap);
	strvec_push(sv, p);
	free(p);
}

void strvec_free(struct strvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

char *strvec_join_quoted(const struct strvec *sv)
{
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; i < sv->n; i++) {
		const char *a = sv->v[i];
		if (i)
			sbuf_adds(&sb, " ");
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+/.,:@%") == strlen(a)) {
			sbuf_adds(&sb, a);
			continue;
		}
		sbuf_adds(&sb, "'");
		for (; *a; a++) {
			if (*a == '\'')
				sbuf_adds(&sb, "'\\''");
			else
				sbuf_add(&sb, a, 1);
		}
		sbuf_adds(&sb, "'");
	}
	return sbuf_detach(&sb);
}

void strvec_split(struct strvec *sv, const char *s)
{
	struct sbuf word = SBUF_INIT;
	bool have = false;
	char q = 0;
	for (; *s; s++) {
		if (q) {
			if (*s == q)
				q = 0;
			else
				sbuf_add(&word, s, 1);
		} else if (*s == '\'' || *s == '"') {
			q = *s;
			have = true;
		} else if (*s == ' ' || *s == '\t') {
			if (have) {
				strvec_push(sv, word.buf ? word.buf : "");
				sbuf_reset(&word);
				have = false;
			}
		} else {
			sbuf_add(&word, s, 1);
			have = true;
		}
	}
	if (have)
		strvec_push(sv, word.buf ? word.buf : "");
	sbuf_free(&word);
}

int read_file(const char *path, struct sbuf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		if (n == 0)
			break;
		sbuf_add(out, buf, (size_t)n);
	}
	if (!out->buf)
		sbuf_add(out, "", 0);
	close(fd);
	return 0;
}

int write_all(int fd, const void *data, size_t n)
{
	const char *p = data;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int write_file_atomic(const char *path, const void *data, size_t n)
{
	char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	if (write_all(fd, data, n) < 0)
		goto fail;
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path) < 0) {
		fd = -1;
		goto fail;
	}
	free(tmp);
	return 0;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

int mkdir_p(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = '/';
	}
	int r = mkdir(p, mode);
	int e = errno;
	free(p);
	if (r < 0 && e != EEXIST) {
		errno = e;
		return -1;
	}
	if (r < 0 && !is_dir(path)) {
		errno = ENOTDIR;
		return -1;
	}
	return 0;
}

static int rm_rf_at(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0);
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	struct dirent *de;
	int ret = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (rm_rf_at(fd, de->d_name) < 0)
			ret = -1;
	}
	closedir(d);
	if (ret < 0)
		return -1;
	return unlinkat(dirfd, name, AT_REMOVEDIR);
}

int rm_rf(const char *path)
{
	return rm_rf_at(AT_FDCWD, path);
}

bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *find_program(const char *name)
{
	if (strchr(name, '/'))
		return access(name, X_OK) == 0 ? xstrdup(name) : NULL;
	const char *env = getenv("PATH");
	char *path = xasprintf("%s:/usr/local/sbin:/usr/sbin:/sbin", env ? env : "/usr/bin:/bin");
	char *save = NULL, *res = NULL;
	for (char *dir = strtok_r(path, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", dir, name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
			res = cand;
			break;
		}
		free(cand);
	}
	free(path);
	return res;
}

const char *self_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
		if (n < 0)
			die("cannot read '/proc/self/exe': %s", strerror(errno));
		dir[n] = '\0';
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
	}
	return dir;
}

const char *project_root(void)
{
	const char *env = getenv("CRASHLAB_ROOT");
	return env && *env ? env : self_dir();
}

const char *cache_dir(void)
{
	static char *dir;
	if (dir)
		return dir;
	const char *xdg = getenv("XDG_CACHE_HOME");
	if (xdg && *xdg == '/')
		dir = xasprintf("%s/crashlab", xdg);
	else {
		const char *home = getenv("HOME");
		if (!home || !*home)
			die_code(EXIT_CANTCREAT, "neither XDG_CACHE_HOME nor HOME is set; cannot place the cache");
		dir = xasprintf("%s/.cache/crashlab", home);
	}
	if (mkdir_p(dir, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create cache '%s': %s", dir, errno_advice(errno));
	return dir;
}

char *cache_subdir(const char *sub)
{
	char *p = xasprintf("%s/%s", cache_dir(), sub);
	if (mkdir_p(p, 0755) < 0)
		die_code(exit_for_errno(errno), "cannot create '%s': %s", p, errno_advice(errno));
	return p;
}

int run_cmd_in(const char *dir, const struct strvec *argv, struct sbuf *out, int log_fd)
{
	int pfd[2] = { -1, -1 };
	if (verbose)
		fprintf(stderr, "+ %s\n", strvec_join_quoted(argv));
	if (out && pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (dir && chdir(dir) < 0)
			_exit(127);
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		if (out) {
			dup2(pfd[1], 1);
			dup2(pfd[1], 2);
		} else if (log_fd >= 0) {
			dup2(log_fd, 1);
			dup2(log_fd, 2);
		}
		execvp(argv->v[0], argv->v);
		fprintf(stderr, "cannot run '%s': %s\n", argv->v[0], strerror(errno));
		_exit(127);
	}
	if (out) {
		close(pfd[1]);
		char buf[8192];
		ssize_t n;
		while ((n = read(pfd[0], buf, sizeof(buf))) != 0) {
			if (n < 0) {
				if (errno == EINTR)
					continue;
				break;
			}
			sbuf_add(out, buf, (size_t)n);
		}
		close(pfd[0]);
		if (!out->buf)
			sbuf_add(out, "", 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int run_cmd(const struct strvec *argv, struct sbuf *out, int log_fd)
{
	return run_cmd_in(NULL, argv, out, log_fd);
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long parse_size(const char *s)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	unsigned shift = 0;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: return -1;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	if (v > (unsigned long long)LLONG_MAX >> shift)
		return -1;
	return (long long)(v << shift);
}

struct hasher {
	EVP_MD_CTX *ctx;
};

struct hasher *hasher_new(void)
{
	struct hasher *h = xmalloc(sizeof(*h));
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		die("cannot initialise sha256");
	return h;
}

void hasher_add(struct hasher *h, const void *data, size_t n)
{
	EVP_DigestUpdate(h->ctx, data, n);
}

void hasher_adds(struct hasher *h, const char *s)
{
	hasher_add(h, s, strlen(s) + 1);
}

int hasher_add_file(struct hasher *h, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		hasher_add(h, buf, (size_t)n);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return 0;
}

void hasher_done(struct hasher *h, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;
	EVP_DigestFinal_ex(h->ctx, md, &len);
	EVP_MD_CTX_free(h->ctx);
	free(h);
	for (unsigned i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", md[i]);
	out[64] = '\0';
}

/* sys.c - see sys.h. */
#include "host/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/intr.h"
#include "host/msg.h"

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
			n = snprintf(dir, sizeof(dir), "."); /* no /proc: the current directory */
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
	static char dir[PATH_MAX];
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && *xdg == '/')
		snprintf(dir, sizeof(dir), "%s/crashlab", xdg);
	else if (home && *home)
		snprintf(dir, sizeof(dir), "%s/.cache/crashlab", home);
	else
		return NULL;
	return dir;
}

char *cache_subdir(const char *sub, struct errbuf *e)
{
	const char *root = cache_dir();
	if (!root) {
		errbuf_set(e, EXIT_CANTCREAT, "neither XDG_CACHE_HOME nor HOME is set; cannot place the cache");
		return NULL;
	}
	char *p = xasprintf("%s/%s", root, sub);
	if (mkdir_p(p, 0755) < 0) {
		errbuf_errno(e, errno, "cannot create '%s'", p);
		free(p);
		return NULL;
	}
	return p;
}

char *tmp_name(const char *path)
{
	return xasprintf("%s.tmp.%d", path, (int)getpid());
}

void tmp_sweep(const char *dir)
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

int tmp_create(const char *path, char **tmp, struct errbuf *e)
{
	*tmp = tmp_name(path);
	int fd = open(*tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		errbuf_errno(e, errno, "cannot create '%s'", *tmp);
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

int lock_take(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

bool lock_busy(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool busy = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);
	return busy;
}

/* We were asked to stop while a child ran: pass the request on, once. */
static void forward_stop(pid_t pid, int *forwarded)
{
	if (intr_pending() && !*forwarded) {
		kill(pid, SIGTERM);
		*forwarded = 1;
	}
}

int run_cmd_in(const char *dir, const struct strvec *argv, struct sbuf *out, int log_fd)
{
	int pfd[2] = { -1, -1 }, forwarded = 0;
	if (msg_verbose()) {
		char *line = strvec_join_quoted(argv);
		fprintf(stderr, "+ %s\n", line);
		free(line);
	}
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
				if (errno == EINTR) {
					forward_stop(pid, &forwarded);
					continue;
				}
				break;
			}
			sbuf_add(out, buf, (size_t)n);
		}
		close(pfd[0]);
		if (!out->buf)
			sbuf_add(out, "", 0);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return -1;
		forward_stop(pid, &forwarded);
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int run_cmd(const struct strvec *argv, struct sbuf *out, int log_fd)
{
	return run_cmd_in(NULL, argv, out, log_fd);
}


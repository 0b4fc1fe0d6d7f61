/*
 * child.c - running patch and make for a kernel build: their output goes
 * into the build log and, line by line, to the progress line (kbuild step
 * lines count the work) and to a short list of error lines; and failing,
 * which removes the incomplete entry and keeps its log.
 */
#include "kbuild/kb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/msg.h"
#include "host/progress.h"
#include "host/sys.h"

/* Remove the entry, keeping its log as last-failed-build.log. */
void kb_cleanup(struct kb *kb)
{
	progress_abort(kb->prog);
	kb->prog = NULL;
	if (kb->log_fd >= 0) {
		close(kb->log_fd);
		kb->log_fd = -1;
		if (rename(kb->log_path, kb->failed_log) < 0)
			unlink(kb->failed_log);
	}
	if (kb->entry && rm_rf(kb->entry) < 0)
		warning("cannot remove the incomplete kernel build '%s': %s", kb->entry, errno_advice(errno));
}

int kb_fail(struct kb *kb, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(kb->e->msg, sizeof(kb->e->msg), fmt, ap);
	va_end(ap);
	kb->e->code = code;
	kb_cleanup(kb);
	return -1;
}

int kb_fail_errno(struct kb *kb, int err, const char *path)
{
	return kb_fail(kb, exit_for_errno(err), "cannot write '%s': %s", path, errno_advice(err));
}

/* ---- running make and patch ---- */

static bool is_disk_full_line(const char *line)
{
	return strstr(line, "No space left on device") || strstr(line, "Disk quota exceeded");
}

static bool is_error_line(const char *line)
{
	return strstr(line, "error:") || strstr(line, "Error ") || strstr(line, "*** ") ||
	       strstr(line, "undefined reference") || strstr(line, "No rule to make target");
}

/* A kbuild step line: two spaces, an upper-case tag, spaces, a target. */
static bool step_line(const char *line, char *step, size_t size)
{
	if (line[0] != ' ' || line[1] != ' ' || !isupper((unsigned char)line[2]))
		return false;
	const char *t = line + 2;
	size_t n = 0;
	while (isupper((unsigned char)t[n]) || isdigit((unsigned char)t[n]) || t[n] == '_')
		n++;
	if (n > 12 || t[n] != ' ')
		return false;
	const char *target = t + n;
	while (*target == ' ')
		target++;
	if (!*target)
		return false;
	snprintf(step, size, "%.*s %s", (int)n, t, target);
	return true;
}

static void log_write(struct kb *kb, const char *data, size_t n, int *log_err)
{
	while (n && !*log_err) {
		ssize_t w = write(kb->log_fd, data, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			*log_err = errno;
			return;
		}
		data += w;
		n -= (size_t)w;
	}
}

static void on_line(struct kb *kb, char *line, struct sbuf *capture)
{
	char step[512];
	if (capture) {
		sbuf_adds(capture, line);
		sbuf_adds(capture, "\n");
	}
	if (is_disk_full_line(line))
		kb->disk_full = 1;
	if (is_error_line(line) && kb->err_lines.n < KB_MAX_ERR_LINES)
		strvec_push(&kb->err_lines, line);
	free(kb->tail[kb->tail_n % KB_TAIL_LINES]);
	kb->tail[kb->tail_n++ % KB_TAIL_LINES] = xstrdup(line);
	if (kb->count_steps && kb->prog && step_line(line, step, sizeof(step)))
		progress_update(kb->prog, ++kb->steps, step);
}

static void child_env(void)
{
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("KBUILD_OUTPUT");
	unsetenv("CROSS_COMPILE");
	setenv("LC_ALL", "C", 1);
	setenv("ARCH", "x86_64", 1);
}

/*
 * Run argv in the tree, with env (NAME=value strings, may be NULL) added to
 * the environment, and stream its stdout and stderr into the build log and,
 * line by line, through on_line (which feeds the progress line and keeps the
 * error lines). capture, when non-NULL, also receives the output. Returns
 * the exit code like run_cmd; a failed write of the log kills the child and
 * fails with EXIT_CANTCREAT.
 */
int kb_run(struct kb *kb, const struct strvec *argv, const struct strvec *env, struct sbuf *capture)
{
	char *cmdline = strvec_join_quoted(argv);
	int log_err = 0;
	if (msg_verbose())
		fprintf(stderr, "\r\033[K+ %s\n", cmdline);
	char *hdr = xasprintf("\n$ %s\n", cmdline);
	log_write(kb, hdr, strlen(hdr), &log_err);
	free(hdr);
	free(cmdline);
	if (log_err)
		return kb_fail_errno(kb, log_err, kb->log_path);

	kb->steps = 0;
	kb->disk_full = 0;
	strvec_free(&kb->err_lines);
	for (size_t i = 0; i < KB_TAIL_LINES; i++) {
		free(kb->tail[i]);
		kb->tail[i] = NULL;
	}
	kb->tail_n = 0;
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return kb_fail(kb, EXIT_SOFTWARE, "cannot create a pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return kb_fail(kb, EXIT_SOFTWARE, "cannot fork: %s", strerror(errno));
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0) {
			dup2(nul, 0);
			close(nul);
		}
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		if (chdir(kb->tree) < 0) {
			fprintf(stderr, "cannot enter '%s': %s\n", kb->tree, strerror(errno));
			_exit(127);
		}
		child_env();
		for (size_t i = 0; env && i < env->n; i++)
			putenv(env->v[i]);
		execvp(argv->v[0], argv->v);
		fprintf(stderr, "cannot run '%s': %s\n", argv->v[0], strerror(errno));
		_exit(127);
	}
	close(pfd[1]);

	struct sbuf pending = SBUF_INIT;
	char buf[16384];
	for (;;) {
		struct pollfd pf = { pfd[0], POLLIN, 0 };
		int pr = poll(&pf, 1, 1000);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr <= 0) {
			if (kb->prog)
				progress_tick(kb->prog);
			continue;
		}
		ssize_t n = read(pfd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		int had_err = log_err;
		log_write(kb, buf, (size_t)n, &log_err);
		if (log_err && !had_err)
			kill(pid, SIGTERM);   /* the log is the record of the build: stop */
		sbuf_add(&pending, buf, (size_t)n);
		char *start = pending.buf, *nl;
		while ((nl = memchr(start, '\n', pending.len - (size_t)(start - pending.buf)))) {
			*nl = '\0';
			on_line(kb, start, capture);
			start = nl + 1;
		}
		size_t rest = pending.len - (size_t)(start - pending.buf);
		memmove(pending.buf, start, rest);
		pending.len = rest;
		pending.buf[rest] = '\0';
	}
	close(pfd[0]);
	if (pending.len)
		on_line(kb, pending.buf, capture);
	sbuf_free(&pending);
	int st = 127 << 8;   /* as if it could not run, should waitpid fail */
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			break;
	if (log_err)
		return kb_fail_errno(kb, log_err, kb->log_path);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int kb_step_failed(struct kb *kb, const char *what, int rc, double seconds)
{
	char t[16];
	if (kb->disk_full)
		return kb_fail(kb, EXIT_CANTCREAT, "the disk filled up while %s in '%s': %s", what, kb->entry,
			       errno_advice(ENOSPC));
	progress_fmt_time(seconds, t, sizeof(t));
	struct strvec show = STRVEC_INIT;
	size_t compiler = 0;
	for (size_t i = 0; i < kb->err_lines.n && compiler < 4; i++) {
		const char *l = kb->err_lines.v[i];
		if (strstr(l, "error:") || strstr(l, "undefined reference") || strstr(l, "No rule to make target")) {
			strvec_push(&show, l);
			compiler++;
		}
	}
	for (size_t i = 0; i < kb->err_lines.n && show.n < 6; i++)
		if (strstr(kb->err_lines.v[i], "*** ")) {
			strvec_push(&show, kb->err_lines.v[i]);
			break;
		}
	if (!show.n) {
		size_t first = kb->tail_n > KB_TAIL_LINES ? kb->tail_n - KB_TAIL_LINES : 0;
		for (size_t i = first; i < kb->tail_n; i++)
			strvec_push(&show, kb->tail[i % KB_TAIL_LINES]);
	}
	struct sbuf msg = SBUF_INIT;
	sbuf_addf(&msg, "%s failed (exit code %d after %s); the log says:", what, rc, t);
	for (size_t i = 0; i < show.n; i++)
		sbuf_addf(&msg, "\n    %s", show.v[i]);
	sbuf_addf(&msg, "\nfull log: '%s'", kb->failed_log);
	strvec_free(&show);
	kb_fail(kb, EXIT_BUILD, "%s", msg.buf);
	sbuf_free(&msg);
	return -1;
}

int kb_log(struct kb *kb, const char *data, size_t n)
{
	int log_err = 0;
	log_write(kb, data, n, &log_err);
	return log_err ? kb_fail_errno(kb, log_err, kb->log_path) : 0;
}

/* ---- the steps ---- */

/* Extraction failed: writing (disk), or reading the archive in or after member at. */

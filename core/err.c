/* err.c - see err.h. */
#include "core/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void vset(struct errbuf *e, const char *fmt, va_list ap)
{
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int errbuf_set(struct errbuf *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(e, fmt, ap);
	va_end(ap);
	e->code = code;
	return -1;
}

int errbuf_errno(struct errbuf *e, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(e, fmt, ap);
	va_end(ap);
	size_t l = strlen(e->msg);
	snprintf(e->msg + l, sizeof(e->msg) - l, ": %s", errno_advice(errnum));
	e->code = exit_for_errno(errnum);
	return -1;
}

int errbuf_prefix(struct errbuf *e, const char *fmt, ...)
{
	char old[sizeof(e->msg)];
	memcpy(old, e->msg, sizeof(old));
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg)) {
		size_t rest = sizeof(e->msg) - (size_t)n;
		size_t l = strlen(old);
		if (l + 3 > rest)
			l = rest > 3 ? rest - 3 : 0;
		e->msg[n] = ':';
		e->msg[n + 1] = ' ';
		memcpy(e->msg + n + 2, old, l);
		e->msg[n + 2 + l] = '\0';
	}
	if (!e->code)
		e->code = EXIT_SOFTWARE;
	return -1;
}

void errbuf_clear(struct errbuf *e)
{
	e->code = 0;
	e->msg[0] = '\0';
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

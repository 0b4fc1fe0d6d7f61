/* msg.c - see msg.h. */
#include "host/msg.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int verbose_level, quiet_flag;

void msg_configure(int verbose, int quiet)
{
	verbose_level = verbose;
	quiet_flag = quiet;
}

int msg_verbose(void)
{
	return verbose_level;
}

int msg_quiet(void)
{
	return quiet_flag;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	/* One write, so it never interleaves with a progress bar (which it clears first). */
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "%s%s", isatty(2) ? "\r\033[K" : "", prefix);
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
	if (quiet_flag)
		return;
	va_list ap;
	va_start(ap, fmt);
	vmsg("crashlab: ", fmt, ap);
	va_end(ap);
}

void error_print(const struct errbuf *e)
{
	const char *msg = e->msg[0] ? e->msg : "unknown error";
	size_t first = strcspn(msg, "\n");
	error("%.*s", (int)first, msg);
	if (msg[first])
		fprintf(stderr, "%s\n", msg + first + 1);
}

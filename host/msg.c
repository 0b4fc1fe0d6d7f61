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
	/* One write, so it never interleaves with a progress bar (which it
	 * clears first). Whatever a guest put in the message is escaped. */
	char text[4096];
	int m = vsnprintf(text, sizeof(text), fmt, ap);
	size_t n = m < 0 ? 0 : (size_t)m < sizeof(text) ? (size_t)m : sizeof(text) - 1;
	struct sbuf line = SBUF_INIT;
	sbuf_adds(&line, isatty(2) ? "\r\033[K" : "");
	sbuf_adds(&line, prefix);
	sbuf_add_escaped(&line, text, n, SBUF_ESC_TEXT);
	if (line.len > sizeof(text))
		line.len = sizeof(text);
	sbuf_add(&line, "\n", 1);
	ssize_t w = write(2, line.buf, line.len);
	(void)w;
	sbuf_free(&line);
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
	if (msg[first]) {
		struct sbuf rest = SBUF_INIT;
		sbuf_add_escaped(&rest, msg + first + 1, strlen(msg + first + 1), SBUF_ESC_TEXT);
		fprintf(stderr, "%s\n", rest.buf);
		sbuf_free(&rest);
	}
}

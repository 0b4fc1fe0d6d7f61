/* opt.c - see opt.h. */
#include "cmd/opt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "crashlab: error: %s\n", msg);
	fprintf(stderr, "see '%s --help'\n", cmd ? cmd : "crashlab");
	exit(EXIT_USAGE);
}

static void print_opts(const struct opt *opts)
{
	for (const struct opt *o = opts; o && o->type != OPT_END; o++) {
		char left[96];
		int n = 0;
		if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c, ", o->short_name);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", o->long_name, o->argh ? " " : "",
			 o->argh ? o->argh : "");
		printf("  %-28s %s\n", left, o->help);
	}
}

void opt_usage(const struct opt *opts, const struct opt *common, const char *usage)
{
	fputs(usage, stdout);
	if (opts && opts->type != OPT_END) {
		printf("\noptions:\n");
		print_opts(opts);
	}
	if (common && common->type != OPT_END) {
		printf("\ncommon options:\n");
		print_opts(common);
	}
}

static const struct opt *find_long(const struct opt *const tables[2], const char *name, size_t len)
{
	for (int t = 0; t < 2; t++)
		for (const struct opt *o = tables[t]; o && o->type != OPT_END; o++)
			if (strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
				return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *const tables[2], char c)
{
	for (int t = 0; t < 2; t++)
		for (const struct opt *o = tables[t]; o && o->type != OPT_END; o++)
			if (o->short_name == c)
				return o;
	return NULL;
}

/* "; did you mean '--fs'?" for an unknown long option, or "". */
static void suggest(const struct opt *const tables[2], const char *name, char *buf, size_t n)
{
	const char *words[128];
	size_t k = 0;
	for (int t = 0; t < 2; t++)
		for (const struct opt *o = tables[t]; o && o->type != OPT_END && k + 1 < 128; o++)
			words[k++] = o->long_name;
	words[k] = NULL;
	const char *near = nearest_word(name, words);
	if (near)
		snprintf(buf, n, "; did you mean '--%s'?", near);
	else
		buf[0] = '\0';
}

static void set_value(const char *cmd, const struct opt *o, const char *arg, const char *shown)
{
	switch (o->type) {
	case OPT_BOOL:
		*(int *)o->value = 1;
		break;
	case OPT_COUNT:
		(*(int *)o->value)++;
		break;
	case OPT_STRING:
		*(const char **)o->value = arg;
		break;
	case OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > 1000000000)
			usage_error(cmd, "option '%s' wants a non-negative number, not '%s'", shown, arg);
		*(int *)o->value = (int)v;
		break;
	}
	case OPT_LIST:
		strvec_push((struct strvec *)o->value, arg);
		break;
	case OPT_END:
		break;
	}
}

int opt_parse(int argc, char **argv, const struct opt *opts, const struct opt *common, const char *usage, int flags)
{
	const struct opt *const tables[2] = { opts, common };
	int npos = 0;
	char *cmd = argv[0];
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (!strcmp(a, "--")) {
			for (i++; i < argc; i++)
				argv[npos++] = argv[i];
			break;
		}
		if (a[0] != '-' || !a[1]) {
			if (flags & OPT_STOP_AT_NONOPT) {
				for (; i < argc; i++)
					argv[npos++] = argv[i];
				break;
			}
			argv[npos++] = a;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			opt_usage(opts, common, usage);
			exit(0);
		}
		const struct opt *o;
		const char *inline_arg = NULL;
		char shown[128], hint[96] = "";
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(tables, name, len);
			snprintf(shown, sizeof(shown), "--%.*s", (int)len, name);
			if (eq)
				inline_arg = eq + 1;
			if (!o)
				suggest(tables, shown + 2, hint, sizeof(hint));
		} else {
			if (a[2])
				usage_error(cmd, "unknown option '%s' (short options cannot be combined)", a);
			o = find_short(tables, a[1]);
			snprintf(shown, sizeof(shown), "-%c", a[1]);
		}
		if (!o)
			usage_error(cmd, "unknown option '%s'%s", shown, hint);
		if (o->type == OPT_BOOL || o->type == OPT_COUNT) {
			if (inline_arg)
				usage_error(cmd, "option '%s' takes no value", shown);
			set_value(cmd, o, NULL, shown);
			continue;
		}
		if (!inline_arg) {
			if (i + 1 >= argc)
				usage_error(cmd, "option '%s' needs a value (%s)", shown, o->argh ? o->argh : "ARG");
			inline_arg = argv[++i];
		}
		set_value(cmd, o, inline_arg, shown);
	}
	argv[npos] = NULL;
	return npos;
}

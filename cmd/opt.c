/* opt.c - see opt.h. */
#include "cmd/opt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *opt_kernel;

static int opt_verbose_dummy;
static const struct opt global_opts[] = {
	{ OPT_BOOL, 'v', "verbose", &verbose, NULL, "show full command lines (QEMU, mkfs, make)" },
	{ OPT_BOOL, 'q', "quiet", &quiet, NULL, "no progress output" },
	{ OPT_STRING, 0, "kernel", &opt_kernel, "PATH", "use this bzImage instead of the built one" },
	{ OPT_BOOL, 'h', "help", &opt_verbose_dummy, NULL, "show this help" },
	{ OPT_END, 0, NULL, NULL, NULL, NULL },
};

static const char *cmd_name = "crashlab";

_Noreturn void usage_error(const char *cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "crashlab: error: %s\n", msg);
	fprintf(stderr, "see '%s --help'\n", cmd ? cmd : cmd_name);
	exit(EXIT_USAGE);
}

static void print_opts(const struct opt *opts)
{
	for (const struct opt *o = opts; o->type != OPT_END; o++) {
		char left[96];
		int n = 0;
		if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c, ", o->short_name);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", o->long_name,
			 o->argh ? " " : "", o->argh ? o->argh : "");
		printf("  %-28s %s\n", left, o->help);
	}
}

void opt_usage(const struct opt *opts, const char *usage)
{
	fputs(usage, stdout);
	if (opts && opts->type != OPT_END) {
		printf("\noptions:\n");
		print_opts(opts);
	}
	printf("\ncommon options:\n");
	print_opts(global_opts);
}

static const struct opt *find_long(const struct opt *opts, const char *name, size_t len)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct opt *t = pass ? global_opts : opts;
		for (const struct opt *o = t; o && o->type != OPT_END; o++)
			if (strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
				return o;
	}
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct opt *t = pass ? global_opts : opts;
		for (const struct opt *o = t; o && o->type != OPT_END; o++)
			if (o->short_name == c)
				return o;
	}
	return NULL;
}

static void set_value(const struct opt *o, const char *arg, const char *shown)
{
	switch (o->type) {
	case OPT_BOOL:
		*(int *)o->value = 1;
		break;
	case OPT_STRING:
		*(const char **)o->value = arg;
		break;
	case OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > 1000000000)
			usage_error(cmd_name, "option '%s' wants a non-negative number, not '%s'", shown, arg);
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

int opt_parse(int argc, char **argv, const struct opt *opts, const char *usage, int flags)
{
	int npos = 0;
	cmd_name = argv[0];
	char *first = argv[0];
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
		const struct opt *o;
		const char *inline_arg = NULL;
		char shown[128];
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(opts, name, len);
			snprintf(shown, sizeof(shown), "--%.*s", (int)len, name);
			if (eq)
				inline_arg = eq + 1;
		} else {
			if (a[2])
				usage_error(first, "unknown option '%s' (short options cannot be combined)", a);
			o = find_short(opts, a[1]);
			snprintf(shown, sizeof(shown), "-%c", a[1]);
		}
		if (!o)
			usage_error(first, "unknown option '%s'", shown);
		if (!strcmp(o->long_name, "help")) {
			opt_usage(opts, usage);
			exit(0);
		}
		if (o->type == OPT_BOOL) {
			if (inline_arg)
				usage_error(first, "option '%s' takes no value", shown);
			set_value(o, NULL, shown);
			continue;
		}
		if (!inline_arg) {
			if (i + 1 >= argc)
				usage_error(first, "option '%s' needs a value (%s)", shown, o->argh ? o->argh : "ARG");
			inline_arg = argv[++i];
		}
		set_value(o, inline_arg, shown);
	}
	argv[npos] = NULL;
	return npos;
}

/*
 * opt.h - the one option-table parser every subcommand uses.
 *
 * A command declares a table of struct opt rows and one usage string;
 * opt_parse() fills the values, prints help for -h/--help (exit 0), and
 * rejects unknown options with exit code 2. --verbose, --quiet and
 * --kernel PATH are accepted by every command ("anywhere").
 */
#ifndef CRASHLAB_OPT_H
#define CRASHLAB_OPT_H

#include "host/util.h"

enum opt_type {
	OPT_END = 0,
	OPT_BOOL,    /* int *: set to 1 */
	OPT_STRING,  /* const char **: last one wins */
	OPT_INT,     /* int *: decimal */
	OPT_LIST,    /* struct strvec *: repeatable */
};

struct opt {
	enum opt_type type;
	char short_name;          /* 0 when none */
	const char *long_name;
	void *value;
	const char *argh;         /* argument name shown in help, e.g. "FS" */
	const char *help;
};

enum {
	OPT_STOP_AT_NONOPT = 1,   /* the first positional ends option parsing (boot -- CMD) */
};

/* The user's --kernel PATH (any command), or NULL. */
extern const char *opt_kernel;

/*
 * Parse argv[1..argc) against opts. Positionals are moved to argv[0..ret).
 * usage is printed with the option list for --help and after an error.
 */
int opt_parse(int argc, char **argv, const struct opt *opts, const char *usage, int flags);
/* Print usage + options to stdout. */
void opt_usage(const struct opt *opts, const char *usage);
/* Report a usage error (one line + "see --help") and exit 2. */
_Noreturn void usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

/*
 * opt.h - the one option-table parser every subcommand uses.
 *
 * A command declares a table of struct opt rows and one usage string;
 * opt_parse() fills the values, prints help for -h/--help (exit 0), and
 * rejects an unknown option (suggesting the nearest one) or a bad value
 * with exit code 2. The common options a command takes (cmd/cmd.h: always
 * --verbose, --quiet, --help; --kernel and --accel for commands that boot
 * a guest; --db for those that use a database) come as a second table.
 */
#ifndef CRASHLAB_CMD_OPT_H
#define CRASHLAB_CMD_OPT_H

#include "core/util.h"

enum opt_type {
	OPT_END = 0,
	OPT_BOOL,    /* int *: set to 1 */
	OPT_COUNT,   /* int *: one more each time (-v -v) */
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
	OPT_STOP_AT_NONOPT = 1,   /* the first positional ends option parsing (boot -- CMD, subcommands) */
};

/*
 * Parse argv[1..argc) against opts, then common (either may be NULL).
 * argv[0] names the command in messages ("crashlab run"). Positionals are
 * moved to argv[0..ret). usage is printed with both option lists for --help.
 */
int opt_parse(int argc, char **argv, const struct opt *opts, const struct opt *common, const char *usage, int flags);
/* Print usage and the option lists to stdout. */
void opt_usage(const struct opt *opts, const struct opt *common, const char *usage);
/* Report a usage error (one line + "see 'cmd --help'") and exit 2. */
_Noreturn void usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

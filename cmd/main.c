/*
 * main.c - crashlab's entry point. It only dispatches: one row per
 * subcommand in the table of cmd/commands.c, each handled in cmd/<name>.c, with the
 * flags that say what the command needs (cmd.h). `crashlab help CMD` is
 * `crashlab CMD --help`; an unknown command gets the nearest one suggested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static void usage(FILE *f)
{
	size_t ntable;
	const struct command *table = commands(&ntable);
	fprintf(f, "usage: crashlab [--version] <command> [options] [args]\n\n"
		   "crashlab shows what Linux file systems keep when the power is cut.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < ntable; i++)
		fprintf(f, "  %-8s %s\n", table[i].name, table[i].summary);
	fprintf(f, "\n'crashlab help <command>' (or 'crashlab <command> --help') explains a command.\n"
		   "Every command accepts --verbose and --quiet; those that boot a guest also\n"
		   "--kernel PATH and --accel, those that use a database --db FILE.\n"
		   "Exit codes: 0 ok, 1 a promise broken, 2 usage, 65 malformed input, 66 missing\n"
		   "input, 69 guest could not run, 70 internal error, 71 build failed, 73 cache\n"
		   "or database not writable, 76 patch does not apply, 78 configuration, 124\n"
		   "guest timeout, 125 guest kernel panic.\n");
}

static _Noreturn void unknown(const char *name)
{
	size_t ntable;
	const struct command *table = commands(&ntable);
	const char **names = xcalloc(ntable + 2, sizeof(*names));
	for (size_t i = 0; i < ntable; i++)
		names[i] = table[i].name;
	names[ntable] = "help";
	names[ntable + 1] = NULL;
	const char *near = nearest_word(name, names);
	if (near)
		fprintf(stderr, "crashlab: error: unknown command '%s'; did you mean '%s'?\nsee 'crashlab --help'\n",
			name, near);
	else
		fprintf(stderr, "crashlab: error: unknown command '%s'\nsee 'crashlab --help'\n", name);
	free(names);
	exit(EXIT_USAGE);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || (!strcmp(name, "help") && argc == 2)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version")) {
		printf("crashlab %s\n", CRASHLAB_VERSION);
		return 0;
	}
	char *help_argv[4] = { NULL };
	if (!strcmp(name, "help")) {
		/* crashlab help CMD is crashlab CMD --help */
		if (!command_find(argv[2]))
			unknown(argv[2]);
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = "--help";
		argv = help_argv;
		argc = 3;
		name = argv[1];
	}
	const struct command *c = command_find(name);
	if (!c)
		unknown(name);
	struct cmd_ctx ctx = { .name = xasprintf("crashlab %s", c->name), .flags = c->flags, .accel = "auto" };
	int rc = c->fn(argc - 1, argv + 1, &ctx);
	free((char *)ctx.name);
	if ((c->flags & CMD_STDOUT) && (fflush(stdout) != 0 || ferror(stdout))) {
		fprintf(stderr, "crashlab: error: cannot write the output: %s\n", strerror(errno));
		return EXIT_CANTCREAT;
	}
	return rc;
}

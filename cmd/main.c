/*
 * main.c - crashlab's entry point. It only dispatches: one row per
 * subcommand in the table below, each handled in cmd/<name>.c, with the
 * flags that say what the command needs (cmd.h). `crashlab help CMD` is
 * `crashlab CMD --help`; an unknown command gets the nearest one suggested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct command table[] = {
	{ "run", cmd_run, "run a workload, cut the power at every flush, check and judge every crash state",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "show", cmd_show, "print a run, or one crash state's observed tree", CMD_DB | CMD_STDOUT },
	{ "report", cmd_report, "explain a run's findings: what each model promised and what was lost",
	  CMD_DB | CMD_STDOUT },
	{ "compare", cmd_compare, "what each file system kept, side by side, with who promised it", CMD_DB | CMD_STDOUT },
	{ "tutorial", cmd_tutorial, "the lessons: list them, or run one and say what to notice",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "judge", cmd_judge, "judge a stored run's states again with this crashlab's judge", CMD_DB | CMD_STDOUT },
	{ "try", cmd_try, "boot a guest and show each file system mount, write, unmount and fsck", CMD_GUEST | CMD_STDOUT },
	{ "boot", cmd_boot, "boot the guest, run a command in it, exit with its status", CMD_GUEST },
	{ "shell", cmd_shell, "interactive shell in the guest on the serial console", CMD_GUEST },
	{ "kernel", cmd_kernel, "build the patched guest kernel (cached), print its path; run its selftests",
	  CMD_STDOUT },
	{ "image", cmd_image, "build the guest initramfs, make base disk images", CMD_STDOUT },
	{ "bench", cmd_bench, "measure the lab: boot time, time per crash state, barrier cost", CMD_GUEST | CMD_STDOUT },
	{ "doctor", cmd_doctor, "check every prerequisite and say how to fix what is missing", CMD_STDOUT },
};

const struct command *commands(size_t *n)
{
	*n = ARRAY_SIZE(table);
	return table;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: crashlab [--version] <command> [options] [args]\n\n"
		   "crashlab shows what Linux file systems keep when the power is cut.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		fprintf(f, "  %-8s %s\n", table[i].name, table[i].summary);
	fprintf(f, "\n'crashlab help <command>' (or 'crashlab <command> --help') explains a command.\n"
		   "Every command accepts --verbose and --quiet; those that boot a guest also\n"
		   "--kernel PATH and --accel, those that use a database --db FILE.\n"
		   "Exit codes: 0 ok, 1 a promise broken, 2 usage, 65 malformed input, 66 missing\n"
		   "input, 69 guest could not run, 70 internal error, 71 build failed, 73 cache\n"
		   "not writable, 76 patch does not apply, 78 configuration, 124 guest timeout,\n"
		   "125 guest kernel panic.\n");
}

static const struct command *find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

static _Noreturn void unknown(const char *name)
{
	const char *names[ARRAY_SIZE(table) + 2];
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		names[i] = table[i].name;
	names[ARRAY_SIZE(table)] = "help";
	names[ARRAY_SIZE(table) + 1] = NULL;
	const char *near = nearest_word(name, names);
	if (near)
		fprintf(stderr, "crashlab: error: unknown command '%s'; did you mean '%s'?\nsee 'crashlab --help'\n",
			name, near);
	else
		fprintf(stderr, "crashlab: error: unknown command '%s'\nsee 'crashlab --help'\n", name);
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
		if (!find(argv[2]))
			unknown(argv[2]);
		help_argv[0] = argv[0];
		help_argv[1] = argv[2];
		help_argv[2] = "--help";
		argv = help_argv;
		argc = 3;
		name = argv[1];
	}
	const struct command *c = find(name);
	if (!c)
		unknown(name);
	struct cmd_ctx ctx = { .name = xasprintf("crashlab %s", c->name), .flags = c->flags, .accel = "auto" };
	int rc = c->fn(argc - 1, argv + 1, &ctx);
	if ((c->flags & CMD_STDOUT) && (fflush(stdout) != 0 || ferror(stdout))) {
		fprintf(stderr, "crashlab: error: cannot write the output: %s\n", strerror(errno));
		return EXIT_CANTCREAT;
	}
	return rc;
}

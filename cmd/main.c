/*
 * main.c - crashlab's entry point. It only dispatches: one row per
 * subcommand in the table below, each handled in cmd/<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include "host/util.h"
#include "cmd/cmds.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a workload, cut the power at every flush, check every crash state" },
	{ "try", cmd_try, "boot a guest and show each file system mount, write, unmount and fsck" },
	{ "boot", cmd_boot, "boot the guest, run a command in it, exit with its status" },
	{ "shell", cmd_shell, "interactive shell in the guest on the serial console" },
	{ "kernel", cmd_kernel, "build the patched guest kernel (cached), print its path" },
	{ "image", cmd_image, "build the guest initramfs, make base disk images" },
	{ "bench", cmd_bench, "measure the lab: boot time, time per crash state" },
	{ "show", cmd_show, "print a run, or one crash state's observed tree" },
	{ "report", cmd_report, "explain a run's findings: what each model promised and what was lost" },
	{ "doctor", cmd_doctor, "check every prerequisite and say how to fix what is missing" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: crashlab [--version] <command> [options] [args]\n\n"
		   "crashlab shows what Linux file systems keep when the power is cut.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'crashlab <command> --help' explains a command. Every command accepts\n"
		   "--verbose, --quiet and --kernel PATH. Exit codes: 0 ok, 1 a promise broken,\n"
		   "2 usage, 65 malformed input, 66 missing input, 69 guest could not run,\n"
		   "70 internal error, 71 build failed, 73 cache not writable, 76 patch does\n"
		   "not apply, 78 configuration, 124 guest timeout, 125 guest kernel panic.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version")) {
		printf("crashlab %s\n", CRASHLAB_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		argv[1] = xasprintf("crashlab %s", name);
		return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "crashlab: error: unknown command '%s'\nsee 'crashlab --help'\n", name);
	return EXIT_USAGE;
}

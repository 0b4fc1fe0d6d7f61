/*
 * commands.c - the command table: one row per subcommand, its handler in
 * cmd/<name>.c, its one-line summary, and the flags that say what it needs
 * (cmd.h). main.c dispatches through it; `crashlab tutorial` reads it to
 * know which options a lesson's command line takes.
 */
#include <string.h>

#include "cmd/cmd.h"

static const struct command table[] = {
	{ "run", cmd_run, "run a workload, cut the power at every flush, check and judge every crash state",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "list", cmd_list, "list the runs a database holds: id, time, workload, fs, kernel, options, findings",
	  CMD_DB | CMD_STDOUT },
	{ "show", cmd_show, "print a run, or one crash state's observed tree", CMD_DB | CMD_STDOUT },
	{ "report", cmd_report, "explain a run's findings: what each model promised and what was lost",
	  CMD_DB | CMD_STDOUT },
	{ "compare", cmd_compare, "what each file system kept, side by side, with who promised it", CMD_DB | CMD_STDOUT },
	{ "lab", cmd_lab, "the live lab: type ops, run each on every file system, say crash to see what each keeps",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "browse", cmd_browse, "browse the stored runs in a terminal: runs, the fs x state matrix, a state, two fs side by side",
	  CMD_DB | CMD_STDOUT },
	{ "gen", cmd_gen, "write every workload of a bounded space (seq 1, 2, 3), as CrashMonkey's Ace does",
	  CMD_STDOUT },
	{ "import", cmd_import, "turn a CrashMonkey J-lang workload into a .wl file", CMD_STDOUT },
	{ "tutorial", cmd_tutorial, "the lessons: list them, or run one and say what to notice",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "db", cmd_db, "merge crashlab databases: the shards of a batch run on several machines into one", CMD_STDOUT },
	{ "judge", cmd_judge, "judge a stored run's states again with this crashlab's judge", CMD_DB | CMD_STDOUT },
	{ "try", cmd_try, "boot a guest and show each file system mount, write, unmount and fsck", CMD_GUEST | CMD_STDOUT },
	{ "boot", cmd_boot, "boot the guest, run a command in it, exit with its status", CMD_GUEST },
	{ "shell", cmd_shell, "interactive shell in the guest on the serial console", CMD_GUEST },
	{ "kernel", cmd_kernel, "build the patched guest kernel (cached), print its path; run its selftests",
	  CMD_STDOUT },
	{ "image", cmd_image, "build the guest initramfs, make base disk images", CMD_STDOUT },
	{ "bench", cmd_bench, "measure the lab: boot time, time per crash state, barrier cost", CMD_GUEST | CMD_STDOUT },
	{ "export", cmd_export, "export a crash state: its disk image, a C program, an xfstests test or the .wl",
	  CMD_GUEST | CMD_DB | CMD_STDOUT },
	{ "doctor", cmd_doctor, "check every prerequisite and say how to fix what is missing", CMD_STDOUT },
};

const struct command *commands(size_t *n)
{
	*n = ARRAY_SIZE(table);
	return table;
}


const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

/*
 * db.c - `crashlab db merge OUT.db IN.db...`: the runs of several databases
 * in one (crashdb/merge.c), e.g. the shards of a batch that ran on several
 * machines (`crashlab run ... --shard I/N`). Every input is opened and
 * checked before the output is touched; each input is then one transaction.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char usage[] =
	"usage: crashlab db merge OUT.db IN.db...\n"
	"\n"
	"subcommands:\n"
	"  merge   copy the runs of crashlab databases into one\n"
	"\n"
	"'crashlab db merge --help' says more.\n";

static const char merge_usage[] =
	"usage: crashlab db merge OUT.db IN.db...\n"
	"\n"
	"Copy every run of each IN.db, with its fs runs, ops, crash states, observed\n"
	"trees and verdicts, into OUT.db: created when it does not exist, added to\n"
	"when it does. The runs get OUT's next ids, in the order the inputs are\n"
	"given and, within an input, in its id order; a run's fs runs and a fs run's\n"
	"states get consecutive ids. So the shards of a batch\n"
	"('crashlab run ... --shard I/N', contiguous slices of its workloads), merged\n"
	"in shard order, hold the same runs with the same ids as the batch run on\n"
	"one machine; only times, process ids and paths differ.\n"
	"\n"
	"A run OUT holds already (the same start time, command line, workload and\n"
	"folder) is skipped with a message naming it, so merging an input twice\n"
	"adds nothing. A run still running, or cut short (list says 'crashed'), is\n"
	"skipped with a message: resume it where it ran, then merge it.\n"
	"\n"
	"Every input is checked before OUT is touched: it must be a crashlab\n"
	"database at this crashlab's schema version. It is opened read-only and\n"
	"never changed, so an input from an older crashlab is refused rather than\n"
	"migrated: a command that writes it ('crashlab list --db IN.db') brings it up\n"
	"to date first. Each input is merged in one transaction: when one fails,\n"
	"nothing of it is in OUT (the inputs before it are), and the command stops.\n"
	"Columns and tables that later schema versions add are copied as they are.\n"
	"\n"
	"exit codes: 0 merged (runs skipped included), 2 usage (OUT is also an\n"
	"input), 65 an input is not a crashlab database, is damaged or at another\n"
	"schema version, 66 an input does not exist, 73 OUT cannot be written\n"
	"\n"
	"examples:\n"
	"  crashlab db merge all.db shard-1.db shard-2.db shard-3.db\n"
	"  crashlab db merge crashlab.db ~/from-ci/crashlab.db    # add CI's runs to yours\n"
	"then: crashlab list --db all.db\n";

static void skipped(void *ctx, const char *msg)
{
	(void)ctx;
	warning("skipped: %s", msg);
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int merge(struct cmd_ctx *ctx, int n, char **argv)
{
	struct errbuf e;
	if (n < 2)
		usage_error(ctx->name, n ? "no input database: give OUT.db and at least one IN.db" :
					   "give the output database and at least one input: crashlab db merge OUT.db IN.db...");
	const char *out_path = argv[0];
	for (int i = 1; i < n; i++)
		if (same_file(out_path, argv[i]) || !strcmp(out_path, argv[i]))
			usage_error(ctx->name, "'%s' is the output and an input; merge into another file", argv[i]);
	/* every input first: a bad one stops the merge before OUT is touched */
	struct crashdb **in = xcalloc((size_t)n, sizeof(*in));
	for (int i = 1; i < n; i++)
		if (crashdb_open_readonly(argv[i], &in[i], &e) < 0)
			die_err(&e);
	struct crashdb *out;
	if (crashdb_open(out_path, &out, &e) < 0)
		die_err(&e);
	size_t runs = 0, skip = 0;
	for (int i = 1; i < n; i++) {
		struct crashdb_merge_stats ms = { .skipped = skipped };
		double t0 = now_s();
		if (crashdb_merge(out, in[i], &ms, &e) < 0) {
			error_print(&e);
			fprintf(stderr, "nothing of '%s' was merged%s\n", argv[i],
				i > 1 ? "; the inputs before it are in the output" : "");
			crashdb_close(out);
			for (int k = 1; k < n; k++)
				crashdb_close(in[k]);
			free(in);
			return e.code ? e.code : EXIT_SOFTWARE;
		}
		runs += ms.runs;
		skip += ms.duplicates + ms.running;
		if (ms.runs)
			printf("%s: %zu run%s as %" PRId64 "-%" PRId64 " (%zu fs runs, %zu crash states, %zu rows) in %.1f ms",
			       argv[i], ms.runs, ms.runs == 1 ? "" : "s", ms.first_id, ms.last_id, ms.fsruns, ms.states,
			       ms.rows, (now_s() - t0) * 1000);
		else
			printf("%s: no run to add", argv[i]);
		if (ms.duplicates)
			printf("; %zu already in %s", ms.duplicates, out_path);
		if (ms.running)
			printf("; %zu still running or cut short, left out", ms.running);
		printf("\n");
		crashdb_close(in[i]);
		in[i] = NULL;
	}
	printf("%s: %zu run%s added from %d database%s", out_path, runs, runs == 1 ? "" : "s", n - 1, n == 2 ? "" : "s");
	if (skip)
		printf(", %zu skipped (said above)", skip);
	printf("\n");
	crashdb_close(out);
	free(in);
	return 0;
}

int cmd_db(int argc, char **argv, struct cmd_ctx *ctx)
{
	const struct opt none[] = { { OPT_END, 0, NULL, NULL, NULL, NULL } };
	int n = cmd_parse(ctx, argc, argv, none, usage, OPT_STOP_AT_NONOPT);
	if (n == 0)
		usage_error(ctx->name, "which one? 'crashlab db merge OUT.db IN.db...'");
	const char *sub = argv[0];
	cmd_name_sub(ctx, sub);
	if (!strcmp(sub, "merge"))
		return merge(ctx, cmd_parse(ctx, n, argv, none, merge_usage, 0), argv);
	const char *subs[] = { "merge", NULL };
	const char *near = nearest_word(sub, subs);
	if (near)
		usage_error("crashlab db", "unknown subcommand '%s'; did you mean '%s'?", sub, near);
	usage_error("crashlab db", "unknown subcommand '%s' (try 'merge')", sub);
}

/*
 * judge.c - `crashlab judge`: judge a stored run's crash states with this
 * crashlab's judge, from what the database holds (the ops, their results
 * and each observed tree), and store the verdicts (crashdb/judge.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "crashdb/crashdb.h"

static const char judge_usage[] =
	"usage: crashlab judge [--db FILE] [--again] RUN\n"
	"\n"
	"Judge the crash states of a stored run that have no verdicts yet - a\n"
	"database written before the judge existed is migrated when it is opened,\n"
	"and its states are judged here - and store the verdicts, so 'crashlab\n"
	"report RUN' can explain them. With --again, judge every state of the run\n"
	"anew and replace its verdicts (after an update of crashlab's judge).\n"
	"Nothing is booted: the judge works from the stored ops, op results and\n"
	"observed trees. RUN is a run id, 'last' or 'last~N' (the Nth before the last).\n"
	"\n"
	"examples:\n"
	"  crashlab judge last\n"
	"  crashlab judge 3 --again && crashlab report 3\n";

int cmd_judge(int argc, char **argv, struct cmd_ctx *ctx)
{
	int again = 0;
	const struct opt opts[] = {
		{ OPT_BOOL, 0, "again", &again, NULL, "judge every state anew, replacing its verdicts" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, judge_usage, 0);
	if (n != 1)
		usage_error(ctx->name, n ? "give one run" : "no run given; say which run (a run id, or 'last')");
	struct crashdb *db = cmd_db_existing(ctx);
	struct errbuf e;
	int64_t run_id;
	struct run_info run;
	if (crashdb_resolve_run(db, argv[0], &run_id, &e) < 0) {
		if (e.code == EXIT_USAGE)
			usage_error(ctx->name, "%s", e.msg);
		die_err(&e);
	}
	if (crashdb_read_run(db, run_id, &run, &e) < 0)
		die_err(&e);
	size_t judged;
	if (crashdb_judge_run(db, run_id, again, &judged, &e) < 0)
		die_err(&e);
	printf("run %" PRId64 ": %zu state%s judged\n", run_id, judged, judged == 1 ? "" : "s");
	run_info_free(&run);
	crashdb_close(db);
	return 0;
}

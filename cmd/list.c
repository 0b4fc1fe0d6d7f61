/*
 * list.c - `crashlab list`: the runs a database holds, one line each (id,
 * when, status, findings, states, file systems, kernel, workload and the
 * options that were not the defaults), so a run can be found by what it
 * was before it is shown, reported or compared. Text or a JSON array.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/render.h"
#include "core/fs.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char list_usage[] =
	"usage: crashlab list [--db FILE] [--format text|json]\n"
	"\n"
	"List the runs of a database, oldest first, one line each: the run id (what\n"
	"show, report and compare take), when it started (UTC), its status (ok,\n"
	"findings, failed; interrupted: stopped by Ctrl-C or SIGTERM; running; crashed:\n"
	"stored as running, but no crashlab runs it any more - 'crashlab run --resume\n"
	"RUN' goes on with an interrupted or crashed run), its findings (a\n"
	"promise LOST under a model the file system was judged for, or a universal\n"
	"rule broken; '?' when states are not judged yet: 'crashlab judge RUN'), its\n"
	"crash states, the file systems, the guest kernel, the workload, and the\n"
	"mkfs and mount options that were not the defaults.\n"
	"\n"
	"--format json prints the same as a JSON array of objects.\n"
	"\n"
	"examples:\n"
	"  crashlab list\n"
	"  crashlab list --db runs/ci.db --format json | jq '.[] | select(.findings > 0) | .id'\n";

/* "2026-12-05T12:03:04Z" -> "2026-12-05 12:03" */
static void short_time(const char *iso, char out[17])
{
	snprintf(out, 17, "%s", iso ? iso : "?");
	if (strlen(out) > 10 && out[10] == 'T')
		out[10] = ' ';
}

static void jset(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

int cmd_list(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = "text";
	const struct opt opts[] = {
		{ OPT_STRING, 'f', "format", &format, "text|json", "output format (default text)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, opts, list_usage, 0);
	bool json = !strcmp(format, "json");
	if (!json && strcmp(format, "text"))
		usage_error(ctx->name, "--format wants 'text' or 'json', not '%s'", format);
	if (n)
		usage_error(ctx->name, "unexpected argument '%s' (list takes no run; 'crashlab show %s' shows one)", argv[0],
			    argv[0]);
	struct crashdb *db = cmd_db_existing(ctx);
	struct errbuf e;
	struct run_row *rows;
	size_t nrows;
	if (crashdb_list_runs(db, &rows, &nrows, &e) < 0)
		die_err(&e);
	if (json) {
		json_t *a = json_array();
		for (size_t i = 0; i < nrows; i++) {
			const struct run_row *r = &rows[i];
			json_t *o = json_object(), *fs = json_array();
			jset(o, "id", json_integer(r->id));
			jset(o, "started_at", render_json_str(r->started_at));
			jset(o, "status", render_json_str(r->status));
			jset(o, "findings", r->unjudged ? json_null() : json_integer(r->findings));
			jset(o, "unjudged", json_integer(r->unjudged));
			jset(o, "states", json_integer(r->states));
			struct strvec sv = STRVEC_INIT;
			struct errbuf fe;
			if (r->fs)
				fs_split(r->fs, &sv, &fe);
			for (size_t k = 0; k < sv.n; k++)
				json_array_append_new(fs, json_string(sv.v[k]));
			strvec_free(&sv);
			jset(o, "fs", fs);
			jset(o, "kernel_version", render_json_str(r->kernel_version));
			jset(o, "workload_file", render_json_str(r->workload_file));
			jset(o, "options", render_json_str(r->options));
			json_array_append_new(a, o);
		}
		render_json_print(a);
		json_decref(a);
	} else if (!nrows) {
		printf("no runs in '%s' yet; 'crashlab run WORKLOAD.wl' makes one\n", crashdb_path(db));
	} else {
		printf("%4s  %-16s  %-11s  %8s  %6s  %-19s  %-16s  %s\n", "id", "started (UTC)", "status", "findings",
		       "states", "file systems", "kernel", "workload and options");
		for (size_t i = 0; i < nrows; i++) {
			const struct run_row *r = &rows[i];
			char t[17], found[24];
			short_time(r->started_at, t);
			if (r->unjudged)
				snprintf(found, sizeof(found), "?");
			else
				snprintf(found, sizeof(found), "%" PRId64, r->findings);
			/* the release ("6.12.118"), not the whole uname line */
			const char *kv = r->kernel_version ? r->kernel_version : "?";
			printf("%4" PRId64 "  %-16s  %-11s  %8s  %6" PRId64 "  %-19s  %-16.*s  %s%s%s\n", r->id, t,
			       r->status ? r->status : "?", found, r->states, r->fs ? r->fs : "-", (int)strcspn(kv, " "), kv, r->workload_file ? r->workload_file : "?",
			       r->options ? "  " : "", r->options ? r->options : "");
		}
	}
	run_rows_free(rows, nrows);
	crashdb_close(db);
	return 0;
}

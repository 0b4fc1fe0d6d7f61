/*
 * report.c - `crashlab report`: explain every finding of a run in plain
 * sentences, grouped by file system and crash state, each state with its op
 * timeline (completed or not, persisted or lost), as text, markdown or JSON.
 *
 * Everything comes from the verdicts the judge stored, through crashdb's
 * read API; this file only renders, and the three formats are made from the
 * same structs, so they always say the same thing. States stored without
 * verdicts are named, with the command that judges them (crashlab judge).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/render.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char report_usage[] =
	"usage: crashlab report [--db FILE] [--format text|markdown|json] [--model LIST] [--all] RUN\n"
	"\n"
	"Explain what a run found. RUN is a run id or 'last'. For each file system and\n"
	"crash state: the op timeline (which ops had completed when the power was cut,\n"
	"and which of them the state shows: persisted, partly, lost, superseded), then\n"
	"every finding in one sentence each: a promise LOST under a selected model, a\n"
	"universal rule broken (U1 mounts, U2 fsck clean, U3 explainable, U4 atomic\n"
	"rename, U5 sync), and what the file system kept beyond its promise (bonus).\n"
	"--all also lists the promises kept and the unpromised losses (gone).\n"
	"\n"
	"--model picks the models (default: those the run was judged for; 'all').\n"
	"States stored without verdicts (a database from before the judge) are\n"
	"judged by 'crashlab judge RUN'; report only reads.\n"
	"\n"
	"examples:\n"
	"  crashlab report last\n"
	"  crashlab report 3 --model all --format markdown > findings.md\n";

/* One fs run as the report shows it. */
struct fsview {
	struct fsrun f;
	struct state_result *st;
	size_t nst;
	unsigned sel;              /* the models to report (bit set) */
};

static bool selected(const struct fsview *f, int model)
{
	return model == MODEL_UNIVERSAL || (f->sel & (1u << model));
}

static bool is_finding(const struct verdict *v)
{
	return v->kind == V_LOST || v->kind == V_BROKEN;
}

static bool shown_verdict(const struct verdict *v, bool all)
{
	return all || is_finding(v) || v->kind == V_BONUS;
}

static void text_sel_models(const struct fsview *f, struct sbuf *sb)
{
	for (int m = 0; m < MODEL_COUNT; m++)
		if (f->sel & (1u << m))
			sbuf_addf(sb, "%s%s", sb->len ? ", " : "", model_name(m));
}

static void count_state(const struct fsview *f, const struct state_result *s, size_t c[V_COUNT])
{
	memset(c, 0, V_COUNT * sizeof(size_t));
	for (size_t i = 0; i < s->judge.n; i++)
		if (selected(f, s->judge.v[i].model))
			c[s->judge.v[i].kind]++;
}

static char *op_text(const struct wl_op *op)
{
	int len = wl_format(op, NULL, 0);
	char *t = xmalloc((size_t)len + 1);
	wl_format(op, t, (size_t)len + 1);
	return t;
}

static char mark_of(const struct state_result *s, size_t o)
{
	return s->judge.marks && strlen(s->judge.marks) > o ? s->judge.marks[o] : 0;
}

static void render_text(const struct fsview *fv, size_t nfs, const struct run_info *run, bool md, bool all)
{
	const char *file = run->workload_file ? run->workload_file : "?";
	if (md)
		printf("# crashlab report: run %" PRId64 " (%s)\n\n", run->id, file);
	else
		printf("run %" PRId64 ": %s\n", run->id, file);
	for (size_t i = 0; i < nfs; i++) {
		const struct fsview *f = &fv[i];
		struct sbuf ms = SBUF_INIT;
		text_sel_models(f, &ms);
		size_t tot[V_COUNT] = { 0 };
		for (size_t k = 0; k < f->nst; k++) {
			size_t c[V_COUNT];
			count_state(f, &f->st[k], c);
			for (int q = 0; q < V_COUNT; q++)
				tot[q] += c[q];
		}
		if (md)
			printf("## %s\n\nModels: %s (plus the universal rules U1-U5). %zu crash state%s: %zu LOST, %zu broken, "
			       "%zu bonus, %zu kept, %zu gone.\n\n",
			       f->f.fs, ms.len ? ms.buf : "none", f->nst, f->nst == 1 ? "" : "s", tot[V_LOST], tot[V_BROKEN],
			       tot[V_BONUS], tot[V_KEPT], tot[V_GONE]);
		else
			printf("\n== %s: models %s (and U1-U5); %zu crash state%s: %zu LOST, %zu broken, %zu bonus, %zu kept, "
			       "%zu gone\n",
			       f->f.fs, ms.len ? ms.buf : "none", f->nst, f->nst == 1 ? "" : "s", tot[V_LOST], tot[V_BROKEN],
			       tot[V_BONUS], tot[V_KEPT], tot[V_GONE]);
		sbuf_free(&ms);
		if (f->f.outcome && strcmp(f->f.outcome, "ok"))
			printf(md ? "The recording or checking ended with outcome **%s**.\n\n" : "   outcome: %s\n", f->f.outcome);
		if (f->f.sim_notes)
			printf(md ? "Simulator notes: %s\n\n" : "   simulator: %s\n", f->f.sim_notes);
		for (size_t k = 0; k < f->nst; k++) {
			const struct state_result *s = &f->st[k];
			size_t c[V_COUNT];
			count_state(f, s, c);
			char head[256];
			snprintf(head, sizeof(head), "state %d (%s, ops up to %d completed)", s->idx, s->kind ? s->kind : "?",
				 s->last_completed_op);
			if (md)
				printf("### %s\n\n", head);
			else
				printf("\n%s: ", head);
			if (!s->judge.judged) {
				const char *why = s->judge.diff[0] ? s->judge.diff : "not judged yet ('crashlab judge RUN' judges it)";
				printf(md ? "%s\n\n" : "%s\n", why);
				continue;
			}
			const char *how = !s->check.mount_ok ? "did not mount" : s->judge.explained ? "explained" : "unexplainable";
			if (md)
				printf("%c%s. %zu LOST, %zu broken, %zu bonus, %zu kept, %zu gone.\n\n", how[0] - 32, how + 1,
				       c[V_LOST], c[V_BROKEN], c[V_BONUS], c[V_KEPT], c[V_GONE]);
			else
				printf("%s; %zu LOST, %zu broken, %zu bonus, %zu kept, %zu gone\n", how, c[V_LOST], c[V_BROKEN],
				       c[V_BONUS], c[V_KEPT], c[V_GONE]);
			if (s->judge.diff[0] && !s->judge.explained)
				printf(md ? "First difference: %s\n\n" : "   first difference: %s\n", s->judge.diff);
			/* the timeline of the run ops */
			if (md)
				printf("| op | | completed | in this state |\n|---|---|---|---|\n");
			for (size_t o = 0; f->f.res && o < f->f.ops.n; o++) {
				const struct wl_op *op = &f->f.ops.ops[o];
				if (op->section != WL_RUN)
					continue;
				char m = mark_of(s, o);
				bool done = op_completed(&f->f.res[o], s);
				char *text = op_text(op);
				if (md)
					printf("| %d | `%s` | %s | %s |\n", op->id, text, done ? "yes" : "no", render_mark_word(m));
				else
					printf("   %c %3d  %-36s %-13s %s\n", m ? m : ' ', op->id, text, done ? "completed" : "not completed",
					       render_mark_word(m));
				free(text);
			}
			if (md)
				printf("\n");
			for (int pass = 0; pass < 2; pass++)
				for (size_t q = 0; q < s->judge.n; q++) {
					const struct verdict *v = &s->judge.v[q];
					if (!selected(f, v->model) || !shown_verdict(v, all) || is_finding(v) != (pass == 0))
						continue;
					if (v->kind == V_KEPT && v->model == MODEL_UNIVERSAL && !all)
						continue;
					const char *mn = model_name(v->model), *kn = verdict_name(v->kind);
					if (md)
						printf("- **%s** (%s, rule `%s`): %s  \n  _%s_\n", kn, mn, v->rule, v->reason, v->cite);
					else if (!strcmp(v->rule, "unpromised"))
						printf("   %-6s [%s] %s\n", kn, mn, v->reason);
					else
						printf("   %-6s [%s] %s\n          rule %s: %s\n", kn, mn, v->reason, v->rule, v->cite);
				}
			if (md)
				printf("\n");
		}
	}
	if (!md)
		printf("\nmarks: + persisted, ~ partly, - lost, = superseded, ? not visible, . no visible effect, x failed\n");
}

static void jset(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static void render_json(const struct fsview *fv, size_t nfs, const struct run_info *run, bool all)
{
	json_t *doc = json_object(), *fsa = json_array();
	jset(doc, "run", json_integer(run->id));
	jset(doc, "workload_file", render_json_str(run->workload_file));
	for (size_t i = 0; i < nfs; i++) {
		const struct fsview *f = &fv[i];
		json_t *fo = json_object(), *sa = json_array();
		struct sbuf ms = SBUF_INIT;
		text_sel_models(f, &ms);
		jset(fo, "fs", render_json_str(f->f.fs));
		jset(fo, "models", render_json_str(ms.buf ? ms.buf : ""));
		sbuf_free(&ms);
		jset(fo, "simulator_notes", render_json_str(f->f.sim_notes));
		for (size_t k = 0; k < f->nst; k++) {
			const struct state_result *s = &f->st[k];
			json_t *so = json_object(), *tl = json_array(), *va = json_array();
			jset(so, "idx", json_integer(s->idx));
			jset(so, "kind", render_json_str(s->kind));
			jset(so, "point", json_integer(s->point));
			jset(so, "judged", json_boolean(s->judge.judged));
			jset(so, "mount_ok", json_boolean(s->check.mount_ok));
			jset(so, "explained", s->judge.judged ? json_boolean(s->judge.explained) : json_null());
			jset(so, "difference", render_json_str(s->judge.diff[0] ? s->judge.diff : NULL));
			for (size_t o = 0; f->f.res && o < f->f.ops.n; o++) {
				const struct wl_op *op = &f->f.ops.ops[o];
				if (op->section != WL_RUN)
					continue;
				char *text = op_text(op);
				json_t *oo = json_object();
				jset(oo, "op", json_integer(op->id));
				jset(oo, "text", render_json_str(text));
				jset(oo, "completed", json_boolean(op_completed(&f->f.res[o], s)));
				jset(oo, "mark", json_string(render_mark_word(mark_of(s, o))));
				json_array_append_new(tl, oo);
				free(text);
			}
			jset(so, "timeline", tl);
			for (size_t q = 0; q < s->judge.n; q++) {
				const struct verdict *v = &s->judge.v[q];
				if (!selected(f, v->model) || !shown_verdict(v, all))
					continue;
				json_t *vo = json_object();
				jset(vo, "model", json_string(model_name(v->model)));
				jset(vo, "rule", render_json_str(v->rule));
				jset(vo, "verdict", json_string(verdict_name(v->kind)));
				jset(vo, "op", json_integer(v->op));
				jset(vo, "trigger", json_integer(v->trigger));
				jset(vo, "path", render_json_str(v->path));
				jset(vo, "expected", render_json_str(v->expected));
				jset(vo, "observed", render_json_str(v->observed));
				jset(vo, "reason", render_json_str(v->reason));
				jset(vo, "cite", render_json_str(v->cite));
				json_array_append_new(va, vo);
			}
			jset(so, "verdicts", va);
			json_array_append_new(sa, so);
		}
		jset(fo, "states", sa);
		json_array_append_new(fsa, fo);
	}
	jset(doc, "fs", fsa);
	render_json_print(doc);
	json_decref(doc);
}

int cmd_report(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = "text", *model_list = NULL;
	int all = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 'f', "format", &format, "text|markdown|json", "output format (default text)" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to report (default: the run's; 'all')" },
		{ OPT_BOOL, 0, "all", &all, NULL, "also list kept promises and unpromised losses (gone)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, report_usage, 0);
	bool md = !strcmp(format, "markdown") || !strcmp(format, "md"), json = !strcmp(format, "json");
	if (!md && !json && strcmp(format, "text"))
		usage_error(cmd, "--format wants 'text', 'markdown' or 'json', not '%s'", format);
	if (n != 1)
		usage_error(cmd, n ? "give one run" : "no run given; say which run (a run id, or 'last')");
	struct errbuf e;
	unsigned forced = 0;
	if (model_list && models_select(model_list, NULL, NULL, &forced, &e) < 0)
		usage_error(cmd, "%s", e.msg);
	struct crashdb *db = cmd_db_existing(ctx);
	int64_t run_id;
	if (crashdb_resolve_run(db, argv[0], &run_id, &e) < 0) {
		if (e.code == EXIT_USAGE)
			usage_error(cmd, "%s", e.msg);
		die_err(&e);
	}
	struct run_info run;
	struct fsrun *frs;
	size_t nfs;
	if (crashdb_read_run(db, run_id, &run, &e) < 0 || crashdb_read_fsruns(db, run_id, NULL, &frs, &nfs, &e) < 0)
		die_err(&e);
	struct fsview *fv = xcalloc(nfs ? nfs : 1, sizeof(*fv));
	for (size_t i = 0; i < nfs; i++) {
		fv[i].f = frs[i];
		if (crashdb_read_states(db, fv[i].f.id, CRASHDB_VERDICTS, &fv[i].st, &fv[i].nst, &e) < 0)
			die_err(&e);
		unsigned set = forced;
		if (!set && fv[i].f.models)
			models_select(fv[i].f.models, fv[i].f.fs, NULL, &set, &e);
		if (!set)
			models_select(NULL, fv[i].f.fs, &fv[i].f.ops, &set, &e);
		fv[i].sel = set;
	}
	free(frs); /* its fsruns now belong to fv */
	int64_t unjudged = crashdb_unjudged(db, run_id);
	if (unjudged)
		warning("%" PRId64 " state%s of run %" PRId64 " %s no verdicts yet; 'crashlab judge %" PRId64 "%s' judges them",
			unjudged, unjudged == 1 ? "" : "s", run_id, unjudged == 1 ? "has" : "have", run_id, cmd_db_arg(ctx));
	if (json)
		render_json(fv, nfs, &run, all);
	else
		render_text(fv, nfs, &run, md, all);
	for (size_t i = 0; i < nfs; i++) {
		fsrun_free(&fv[i].f);
		crashdb_states_free(fv[i].st, fv[i].nst);
	}
	free(fv);
	run_info_free(&run);
	crashdb_close(db);
	return 0;
}

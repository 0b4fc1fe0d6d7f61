/*
 * report.c - `crashlab report`: explain every finding of a run in plain
 * sentences, grouped by file system and crash state, each state with its op
 * timeline (completed or not, persisted or lost), as text, markdown or JSON.
 *
 * Method. Everything comes from the verdicts the judge stored (crashdb
 * schema v2). A run recorded before the judge existed (a database migrated
 * from schema v1) has states without verdicts: they are judged here, from
 * the stored workload text, op results and observed trees, and stored, so
 * the next report reads them back. The three formats are rendered from the
 * same in-memory rows, so they always say the same thing.
 */
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "crashdb/crashdb.h"
#include "judge/judge.h"
#include "cmd/opt.h"

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
	"\n"
	"examples:\n"
	"  crashlab report last\n"
	"  crashlab report 3 --model all --format markdown > findings.md\n";

struct vrow {
	char *model, *rule, *verdict, *path, *expected, *observed, *reason, *cite;
	int op, trigger;
};

struct srow {
	int64_t id;
	int idx, judged, explained_null, explained, mount_ok, last_completed;
	int64_t point;
	char *kind, *difference, *timeline;
	struct vrow *v;
	size_t nv;
};

struct oprow {
	int op, section, err;
	int64_t ret, log_pos;
	uint64_t ino, ino2;
	char *text;
};

struct frow {
	int64_t id;
	char *fs, *models, *sim_notes, *outcome;
	struct oprow *ops;
	size_t nops;
	struct srow *st;
	size_t nst;
	unsigned sel;
};

static struct crashdb *cdb;

#define prep(sql) crashdb_prepare(cdb, sql)
#define col(st, i) crashdb_col_text(st, i)
#define db_die(what) crashdb_read_die(cdb, what)

static void read_verdicts(struct srow *s)
{
	sqlite3_stmt *st = prep("SELECT model, rule, verdict, op_id, trigger_op, path, expected, observed, reason, cite"
				" FROM verdicts WHERE state_id = ? ORDER BY id");
	sqlite3_bind_int64(st, 1, s->id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		s->v = xrealloc(s->v, (s->nv + 1) * sizeof(*s->v));
		struct vrow *v = &s->v[s->nv++];
		v->model = col(st, 0);
		v->rule = col(st, 1);
		v->verdict = col(st, 2);
		v->op = sqlite3_column_int(st, 3);
		v->trigger = sqlite3_column_int(st, 4);
		v->path = col(st, 5);
		v->expected = col(st, 6);
		v->observed = col(st, 7);
		v->reason = col(st, 8);
		v->cite = col(st, 9);
	}
	sqlite3_finalize(st);
}

static void read_state_rows(struct frow *f)
{
	sqlite3_stmt *st = prep("SELECT id, idx, kind, point, last_completed_op, mount_ok, judged, explained, difference,"
				" timeline FROM states WHERE fsrun_id = ? ORDER BY idx");
	sqlite3_bind_int64(st, 1, f->id);
	f->nst = 0;
	free(f->st);
	f->st = NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		f->st = xrealloc(f->st, (f->nst + 1) * sizeof(*f->st));
		struct srow *s = &f->st[f->nst++];
		memset(s, 0, sizeof(*s));
		s->id = sqlite3_column_int64(st, 0);
		s->idx = sqlite3_column_int(st, 1);
		s->kind = col(st, 2);
		s->point = sqlite3_column_int64(st, 3);
		s->last_completed = sqlite3_column_int(st, 4);
		s->mount_ok = sqlite3_column_int(st, 5);
		s->judged = sqlite3_column_int(st, 6);
		s->explained_null = sqlite3_column_type(st, 7) == SQLITE_NULL;
		s->explained = sqlite3_column_int(st, 7);
		s->difference = col(st, 8);
		s->timeline = col(st, 9);
	}
	sqlite3_finalize(st);
}

static size_t read_nodes(int64_t state_id, struct tree_node **out)
{
	return crashdb_nodes_read(cdb, state_id, out);
}

/* Judge (and store) the states of a fs run that were never judged. */
static void judge_missing(struct crashdb *db, struct frow *f, const char *workload_text)
{
	size_t todo = 0;
	for (size_t i = 0; i < f->nst; i++)
		todo += !f->st[i].judged && !f->st[i].difference;
	if (!todo || !workload_text || !f->nops)
		return;
	struct wl_workload w;
	char err[512];
	if (wl_parse("stored workload", workload_text, &w, err, sizeof(err)) < 0 || w.n != f->nops) {
		warning("%s: cannot judge the stored states: %s", f->fs, w.n != f->nops ? "the ops do not match" : err);
		return;
	}
	struct sim_guest *g = xcalloc(w.n ? w.n : 1, sizeof(*g));
	for (size_t i = 0; i < w.n; i++)
		g[i] = (struct sim_guest){ f->ops[i].ret, f->ops[i].err, f->ops[i].ino, f->ops[i].ino2, f->ops[i].log_pos };
	struct lab_judge_run jr;
	lab_judge_run_init(&jr, &w, g);
	if (!f->models) {
		unsigned set;
		lab_models_select(NULL, f->fs, &w, &set, err, sizeof(err));
		char *names = lab_models_join(set);
		crashdb_fsrun_judge_info(db, f->id, names, jr.notes);
		f->models = names;
		if (jr.notes && !f->sim_notes)
			f->sim_notes = xstrdup(jr.notes);
	}
	sqlite3_stmt *q = prep("SELECT fsck_status, fsck_clean, fsck_output FROM states WHERE id = ?");
	for (size_t i = 0; i < f->nst; i++) {
		struct srow *s = &f->st[i];
		if (s->judged || s->difference)
			continue;
		sqlite3_bind_int64(q, 1, s->id);
		if (sqlite3_step(q) != SQLITE_ROW)
			db_die("a crash state");
		struct tree_node *nodes;
		size_t nn = read_nodes(s->id, &nodes);
		struct lab_judge_state js = { .mount_ok = s->mount_ok, .fsck_status = sqlite3_column_int(q, 0),
					      .fsck_clean = sqlite3_column_int(q, 1), .point = s->point,
					      .nodes = nodes, .n = nn };
		struct lab_judgement jd;
		lab_judge_state(&jr, &js, &jd);
		if (lab_judge_store(db, s->id, &jd) < 0)
			warning("cannot store the verdicts: %s", crashdb_error(db));
		lab_judgement_free(&jd);
		for (size_t k = 0; k < nn; k++)
			tree_node_free(&nodes[k]);
		free(nodes);
		sqlite3_reset(q);
	}
	sqlite3_finalize(q);
	lab_judge_run_free(&jr);
	free(g);
	wl_free(&w);
	read_state_rows(f);
}

static void read_fs(int64_t run_id, struct frow **out, size_t *nout)
{
	sqlite3_stmt *st = prep("SELECT id, fs, models, sim_notes, outcome FROM fsruns WHERE run_id = ? ORDER BY id");
	sqlite3_bind_int64(st, 1, run_id);
	struct frow *v = NULL;
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = xrealloc(v, (n + 1) * sizeof(*v));
		struct frow *f = &v[n++];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(st, 0);
		f->fs = col(st, 1);
		f->models = col(st, 2);
		f->sim_notes = col(st, 3);
		f->outcome = col(st, 4);
	}
	sqlite3_finalize(st);
	for (size_t i = 0; i < n; i++) {
		struct frow *f = &v[i];
		sqlite3_stmt *o = prep("SELECT op_id, section, text, ret, err, ino, ino2, log_pos FROM ops"
				       " WHERE fsrun_id = ? ORDER BY op_id");
		sqlite3_bind_int64(o, 1, f->id);
		while (sqlite3_step(o) == SQLITE_ROW) {
			f->ops = xrealloc(f->ops, (f->nops + 1) * sizeof(*f->ops));
			struct oprow *r = &f->ops[f->nops++];
			r->op = sqlite3_column_int(o, 0);
			r->section = sqlite3_column_int(o, 1);
			r->text = col(o, 2);
			r->ret = sqlite3_column_int64(o, 3);
			r->err = sqlite3_column_int(o, 4);
			r->ino = (uint64_t)sqlite3_column_int64(o, 5);
			r->ino2 = (uint64_t)sqlite3_column_int64(o, 6);
			r->log_pos = sqlite3_column_int64(o, 7);
		}
		sqlite3_finalize(o);
		read_state_rows(f);
	}
	*out = v;
	*nout = n;
}

/* ------------------------------------------------------------------ */

static bool selected(const struct frow *f, const char *model)
{
	if (!strcmp(model, "universal"))
		return true;
	int m = lab_model_parse(model);
	return m >= 0 && (f->sel & (1u << m));
}

static bool is_finding(const struct vrow *v)
{
	return !strcmp(v->verdict, "LOST") || !strcmp(v->verdict, "broken");
}

static bool shown_verdict(const struct vrow *v, bool all)
{
	if (all)
		return true;
	return is_finding(v) || !strcmp(v->verdict, "bonus");
}

static const char *mark_word(char m)
{
	switch (m) {
	case EX_MARK_SETUP: return "setup (in S0)";
	case EX_MARK_FAILED: return "failed: changed nothing";
	case EX_MARK_NOEFFECT: return "no visible effect";
	case EX_MARK_PERSISTED: return "persisted";
	case EX_MARK_SUPERSEDED: return "superseded by a later op";
	case EX_MARK_PARTIAL: return "partly persisted";
	case EX_MARK_LOST: return "lost";
	case EX_MARK_UNSEEN: return "not visible";
	default: return "not judged";
	}
}

static void text_sel_models(const struct frow *f, struct sbuf *sb)
{
	for (int m = 0; m < LAB_M_COUNT; m++)
		if (f->sel & (1u << m))
			sbuf_addf(sb, "%s%s", sb->len ? ", " : "", lab_model_name(m));
}

static void count_state(const struct frow *f, const struct srow *s, size_t c[LAB_V_COUNT])
{
	memset(c, 0, LAB_V_COUNT * sizeof(size_t));
	for (size_t i = 0; i < s->nv; i++)
		if (selected(f, s->v[i].model)) {
			int k = lab_verdict_parse(s->v[i].verdict);
			if (k >= 0)
				c[k]++;
		}
}

static void render_text(const struct frow *fv, size_t nfs, int64_t run_id, const char *file, bool md, bool all)
{
	if (md)
		printf("# crashlab report: run %" PRId64 " (%s)\n\n", run_id, file ? file : "?");
	else
		printf("run %" PRId64 ": %s\n", run_id, file ? file : "?");
	for (size_t i = 0; i < nfs; i++) {
		const struct frow *f = &fv[i];
		struct sbuf ms = SBUF_INIT;
		text_sel_models(f, &ms);
		size_t tot[LAB_V_COUNT] = { 0 };
		for (size_t k = 0; k < f->nst; k++) {
			size_t c[LAB_V_COUNT];
			count_state(f, &f->st[k], c);
			for (int q = 0; q < LAB_V_COUNT; q++)
				tot[q] += c[q];
		}
		if (md)
			printf("## %s\n\nModels: %s (plus the universal rules U1-U5). %zu crash state%s: %zu LOST, %zu broken, "
			       "%zu bonus, %zu kept, %zu gone.\n\n",
			       f->fs, ms.len ? ms.buf : "none", f->nst, f->nst == 1 ? "" : "s", tot[LAB_V_LOST],
			       tot[LAB_V_BROKEN], tot[LAB_V_BONUS], tot[LAB_V_KEPT], tot[LAB_V_GONE]);
		else
			printf("\n== %s: models %s (and U1-U5); %zu crash state%s: %zu LOST, %zu broken, %zu bonus, %zu kept, "
			       "%zu gone\n",
			       f->fs, ms.len ? ms.buf : "none", f->nst, f->nst == 1 ? "" : "s", tot[LAB_V_LOST],
			       tot[LAB_V_BROKEN], tot[LAB_V_BONUS], tot[LAB_V_KEPT], tot[LAB_V_GONE]);
		sbuf_free(&ms);
		if (f->outcome && strcmp(f->outcome, "ok"))
			printf(md ? "The recording or checking ended with outcome **%s**.\n\n" : "   outcome: %s\n", f->outcome);
		if (f->sim_notes)
			printf(md ? "Simulator notes: %s\n\n" : "   simulator: %s\n", f->sim_notes);
		for (size_t k = 0; k < f->nst; k++) {
			const struct srow *s = &f->st[k];
			size_t c[LAB_V_COUNT];
			count_state(f, s, c);
			char head[256];
			snprintf(head, sizeof(head), "state %d (%s, ops up to %d completed)", s->idx, s->kind ? s->kind : "?",
				 s->last_completed);
			if (md)
				printf("### %s\n\n", head);
			else
				printf("\n%s: ", head);
			if (!s->judged) {
				printf(md ? "%s\n\n" : "%s\n", s->difference ? s->difference : "not judged");
				continue;
			}
			if (md)
				printf("%s. %zu LOST, %zu broken, %zu bonus, %zu kept, %zu gone.\n\n",
				       !s->mount_ok ? "Did not mount" : s->explained ? "Explained" : "Unexplainable",
				       c[LAB_V_LOST], c[LAB_V_BROKEN], c[LAB_V_BONUS], c[LAB_V_KEPT], c[LAB_V_GONE]);
			else
				printf("%s; %zu LOST, %zu broken, %zu bonus, %zu kept, %zu gone\n",
				       !s->mount_ok ? "did not mount" : s->explained ? "explained" : "unexplainable",
				       c[LAB_V_LOST], c[LAB_V_BROKEN], c[LAB_V_BONUS], c[LAB_V_KEPT], c[LAB_V_GONE]);
			if (s->difference && !s->explained)
				printf(md ? "First difference: %s\n\n" : "   first difference: %s\n", s->difference);
			/* the timeline of the run ops */
			if (md)
				printf("| op | | completed | in this state |\n|---|---|---|---|\n");
			for (size_t o = 0; o < f->nops; o++) {
				const struct oprow *r = &f->ops[o];
				if (!r->section)
					continue;
				char m = s->timeline && strlen(s->timeline) > o ? s->timeline[o] : 0;
				bool done = r->log_pos <= s->point;
				if (md)
					printf("| %d | `%s` | %s | %s |\n", r->op, r->text, done ? "yes" : "no", mark_word(m));
				else
					printf("   %c %3d  %-36s %-13s %s\n", m ? m : ' ', r->op, r->text,
					       done ? "completed" : "not completed", mark_word(m));
			}
			if (md)
				printf("\n");
			for (int pass = 0; pass < 2; pass++)
				for (size_t q = 0; q < s->nv; q++) {
					const struct vrow *v = &s->v[q];
					if (!selected(f, v->model) || !shown_verdict(v, all) || is_finding(v) != (pass == 0))
						continue;
					if (!strcmp(v->verdict, "kept") && !strcmp(v->model, "universal") && !all)
						continue;
					if (md)
						printf("- **%s** (%s, rule `%s`): %s  \n  _%s_\n", v->verdict, v->model, v->rule,
						       v->reason, v->cite);
					else if (!strcmp(v->rule, "unpromised"))
						printf("   %-6s [%s] %s\n", v->verdict, v->model, v->reason);
					else
						printf("   %-6s [%s] %s\n          rule %s: %s\n", v->verdict, v->model, v->reason,
						       v->rule, v->cite);
				}
			if (md)
				printf("\n");
		}
	}
	if (!md)
		printf("\nmarks: + persisted, ~ partly, - lost, = superseded, ? not visible, . no visible effect, x failed\n");
}

static void jstr(const char *s)
{
	putchar('"');
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	putchar('"');
}

static void render_json(const struct frow *fv, size_t nfs, int64_t run_id, const char *file, bool all)
{
	printf("{\n  \"run\": %" PRId64 ",\n  \"workload_file\": ", run_id);
	jstr(file);
	printf(",\n  \"fs\": [");
	for (size_t i = 0; i < nfs; i++) {
		const struct frow *f = &fv[i];
		printf("%s\n    {\"fs\": ", i ? "," : "");
		jstr(f->fs);
		struct sbuf ms = SBUF_INIT;
		text_sel_models(f, &ms);
		printf(", \"models\": ");
		jstr(ms.buf ? ms.buf : "");
		sbuf_free(&ms);
		printf(", \"simulator_notes\": ");
		if (f->sim_notes)
			jstr(f->sim_notes);
		else
			printf("null");
		printf(",\n     \"states\": [");
		for (size_t k = 0; k < f->nst; k++) {
			const struct srow *s = &f->st[k];
			printf("%s\n      {\"idx\": %d, \"kind\": ", k ? "," : "", s->idx);
			jstr(s->kind);
			printf(", \"point\": %" PRId64 ", \"judged\": %s, \"mount_ok\": %s, \"explained\": %s, \"difference\": ",
			       s->point, s->judged ? "true" : "false", s->mount_ok ? "true" : "false",
			       s->explained_null ? "null" : s->explained ? "true" : "false");
			if (s->difference)
				jstr(s->difference);
			else
				printf("null");
			printf(",\n       \"timeline\": [");
			int first = 1;
			for (size_t o = 0; o < f->nops; o++) {
				const struct oprow *r = &f->ops[o];
				if (!r->section)
					continue;
				char m = s->timeline && strlen(s->timeline) > o ? s->timeline[o] : 0;
				printf("%s\n        {\"op\": %d, \"text\": ", first ? "" : ",", r->op);
				jstr(r->text);
				printf(", \"completed\": %s, \"mark\": ", r->log_pos <= s->point ? "true" : "false");
				jstr(mark_word(m));
				printf("}");
				first = 0;
			}
			printf("],\n       \"verdicts\": [");
			first = 1;
			for (size_t q = 0; q < s->nv; q++) {
				const struct vrow *v = &s->v[q];
				if (!selected(f, v->model) || (!all && !shown_verdict(v, false)))
					continue;
				printf("%s\n        {\"model\": ", first ? "" : ",");
				jstr(v->model);
				printf(", \"rule\": ");
				jstr(v->rule);
				printf(", \"verdict\": ");
				jstr(v->verdict);
				printf(", \"op\": %d, \"trigger\": %d, \"path\": ", v->op, v->trigger);
				jstr(v->path);
				printf(", \"expected\": ");
				jstr(v->expected);
				printf(", \"observed\": ");
				jstr(v->observed);
				printf(", \"reason\": ");
				jstr(v->reason);
				printf(", \"cite\": ");
				jstr(v->cite);
				printf("}");
				first = 0;
			}
			printf("]}");
		}
		printf("]}");
	}
	printf("\n  ]\n}\n");
}

int cmd_report(int argc, char **argv)
{
	const char *format = "text", *model_list = NULL, *db_path = CRASHDB_DEFAULT;
	int all = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "db", &db_path, "FILE", "the database (default crashlab.db here)" },
		{ OPT_STRING, 'f', "format", &format, "text|markdown|json", "output format (default text)" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to report (default: the run's; 'all')" },
		{ OPT_BOOL, 0, "all", &all, NULL, "also list kept promises and unpromised losses (gone)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = opt_parse(argc, argv, opts, report_usage, 0);
	bool md = !strcmp(format, "markdown") || !strcmp(format, "md"), json = !strcmp(format, "json");
	if (!md && !json && strcmp(format, "text"))
		usage_error("crashlab report", "--format wants 'text', 'markdown' or 'json', not '%s'", format);
	if (n != 1)
		usage_error("crashlab report", n ? "give one run" : "no run given; say which run (a run id, or 'last')");
	unsigned forced = 0;
	if (model_list) {
		char err[256];
		if (lab_models_select(model_list, NULL, NULL, &forced, err, sizeof(err)) < 0)
			usage_error("crashlab report", "%s", err);
	}
	struct crashdb *db = cdb = crashdb_open_existing(db_path);
	int64_t run_id = crashdb_run_resolve(db, argv[0], "crashlab report");
	char err[256];
	sqlite3_stmt *st = prep("SELECT workload_file, workload_text FROM runs WHERE id = ?");
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) != SQLITE_ROW)
		die_code(EXIT_NOINPUT, "run %" PRId64 " does not exist in '%s'", run_id, db_path);
	char *file = col(st, 0), *text = col(st, 1);
	sqlite3_finalize(st);

	struct frow *fv;
	size_t nfs;
	read_fs(run_id, &fv, &nfs);
	for (size_t i = 0; i < nfs; i++) {
		judge_missing(db, &fv[i], text);
		for (size_t k = 0; k < fv[i].nst; k++)
			read_verdicts(&fv[i].st[k]);
		unsigned set = 0;
		if (forced) {
			set = forced;
		} else if (fv[i].models) {
			lab_models_select(fv[i].models, fv[i].fs, NULL, &set, err, sizeof(err));
		}
		if (!set)
			lab_models_select(NULL, fv[i].fs, NULL, &set, err, sizeof(err));
		fv[i].sel = set;
	}
	if (json)
		render_json(fv, nfs, run_id, file, all);
	else
		render_text(fv, nfs, run_id, file, md, all);
	crashdb_close(db);
	free(file);
	free(text);
	if (fflush(stdout) != 0 || ferror(stdout))
		die_code(EXIT_CANTCREAT, "cannot write the output: %s", strerror(errno));
	return 0;
}

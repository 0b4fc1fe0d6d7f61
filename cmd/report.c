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
#include "cmd/report.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char report_usage[] =
	"usage: crashlab report [--db FILE] [--format text|markdown|json|html] [--model LIST] [--all]\n"
	"                       [--fs LIST] [--state STATE] [--findings-only] RUN\n"
	"\n"
	"Explain what a run found. RUN is a run id, 'last' or 'last~N' (the Nth before the last). For each file system and\n"
	"crash state: the op timeline (which ops had completed when the power was cut,\n"
	"and which of them the state shows: persisted, partly, lost, superseded), then\n"
	"every finding in one sentence each: a promise LOST under a selected model, or a\n"
	"universal rule broken (U1 mounts, U2 fsck clean, U3 explainable, U4 atomic\n"
	"rename, U5 sync). One fact is one line, naming every model it holds under;\n"
	"states with the same tree and the same completed ops are shown once\n"
	"(\"states 0-2\"); in a long workload, neighbouring ops that persisted, or that\n"
	"left nothing, share a timeline line. --all shows every op, the promises kept,\n"
	"what was kept beyond a promise (bonus) and the unpromised losses (gone). The\n"
	"rules are explained in docs/guarantees.md.\n"
	"\n"
	"--format html writes one self-contained page (inline CSS and SVG, nothing\n"
	"fetched; open it from file://): the file system x crash state matrix coloured\n"
	"by verdict, the comparison view (crashlab compare), each state's tree beside\n"
	"the program's, its op timeline and findings, and the command that makes the\n"
	"run again. Markdown and JSON also carry how the run was made (command,\n"
	"kernel, mkfs and mount options), the workload and each state's observed tree.\n"
	"\n"
	"--fs LIST keeps the named file systems; --state STATE one crash state of\n"
	"each (its index, or the LABEL of a 'mark LABEL' op: the first state in which\n"
	"the mark had completed); --findings-only only the states with a finding,\n"
	"without their timelines (and says so when there is none).\n"
	"\n"
	"--model picks the models (default: those the run was judged for; 'all').\n"
	"States stored without verdicts (a database from before the judge) are\n"
	"judged by 'crashlab judge RUN'; report only reads.\n"
	"\n"
	"examples:\n"
	"  crashlab report last\n"
	"  crashlab report 3 --model all --format markdown > findings.md\n"
	"  crashlab report last --fs f2fs --state 1\n"
	"  crashlab report last --findings-only --format json | jq '.fs[].states[].verdicts'\n"
	"  crashlab report last --format html > run.html\n";

bool report_selected(const struct fsview *f, int model)
{
	return model == MODEL_UNIVERSAL || (f->sel & (1u << model));
}
#define selected report_selected

const struct report_class report_classes[REPORT_NCLASS] = {
	{ 'L', "lost", "a promise of a selected model LOST" },
	{ 'B', "broken", "a universal rule broken (or no mount)" },
	{ '!', "naive", "only a program assuming in-order persistence loses" },
	{ '+', "bonus", "kept beyond the promise" },
	{ '=', "kept", "as promised" },
	{ '?', "unjudged", "not judged" },
};

const char *report_state_class(const struct fsview *f, const struct state_result *s, char *ch)
{
	const size_t(*c)[V_COUNT] = s->judge.count;
	size_t lost = 0, bonus = 0;
	for (int m = 0; m < MODEL_COUNT; m++)
		if (report_selected(f, m)) {
			lost += c[m][V_LOST];
			bonus += c[m][V_BONUS];
		}
	if (!s->judge.judged) {
		*ch = '?';
		return "unjudged";
	}
	if (!s->check.mount_ok || c[MODEL_UNIVERSAL][V_BROKEN]) {
		*ch = 'B';
		return "broken";
	}
	if (lost) {
		*ch = 'L';
		return "lost";
	}
	if (c[MODEL_SEQUENTIAL][V_LOST]) {
		*ch = '!';
		return "naive";
	}
	*ch = bonus ? '+' : '=';
	return bonus ? "bonus" : "kept";
}

static bool is_finding(const struct verdict *v)
{
	return v->kind == V_LOST || v->kind == V_BROKEN;
}

/* Findings always; kept, bonus and gone with --all. */
static bool shown_verdict(const struct verdict *v, bool all)
{
	return all || is_finding(v);
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

char *report_op_text(const struct wl_op *op)
{
	int len = wl_format(op, NULL, 0);
	char *t = xmalloc((size_t)len + 1);
	wl_format(op, t, (size_t)len + 1);
	return t;
}

char report_mark_of(const struct state_result *s, size_t o)
{
	return s->judge.marks && strlen(s->judge.marks) > o ? s->judge.marks[o] : 0;
}

/* States with the same tree, the same completed ops and the same check
 * outcome are judged alike: the report shows them once. */
static bool same_state(const struct state_result *a, const struct state_result *b)
{
	return a->point == b->point && a->check.mount_ok == b->check.mount_ok &&
	       a->check.fsck_clean == b->check.fsck_clean && a->judge.judged == b->judge.judged && a->check.tree_hash[0] &&
	       !strcmp(a->check.tree_hash, b->check.tree_hash);
}

/* "state 3", "states 0-1", "states 0, 2, 5" */
static void state_names(const struct fsview *f, size_t k, const int *rep, struct sbuf *sb)
{
	size_t n = 0;
	for (size_t q = 0; q < f->nst; q++)
		n += rep[q] == (int)k;
	int lo = f->st[k].idx, hi = lo, consecutive = 1;
	for (size_t q = k + 1; q < f->nst; q++)
		if (rep[q] == (int)k) {
			consecutive &= f->st[q].idx == hi + 1;
			hi = f->st[q].idx;
		}
	if (n == 1) {
		sbuf_addf(sb, "state %d", lo);
	} else if (consecutive) {
		sbuf_addf(sb, "states %d-%d", lo, hi);
	} else {
		sbuf_adds(sb, "states ");
		for (size_t q = k, first = 1; q < f->nst; q++)
			if (rep[q] == (int)k) {
				sbuf_addf(sb, "%s%d", first ? "" : ", ", f->st[q].idx);
				first = 0;
			}
	}
}


static bool same_fact(const struct verdict *a, const struct verdict *b)
{
	return a->kind == b->kind && a->op == b->op && !strcmp(a->path, b->path) && !strcmp(a->expected, b->expected) &&
	       !strcmp(a->observed, b->observed) && (a->model == MODEL_UNIVERSAL) == (b->model == MODEL_UNIVERSAL) &&
	       (a->model != MODEL_UNIVERSAL || !strcmp(a->rule, b->rule));
}

size_t report_facts(const struct fsview *f, const struct state_result *s, bool all, struct fact **out)
{
	struct fact *fa = NULL;
	size_t n = 0, cap = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t q = 0; q < s->judge.n; q++) {
			const struct verdict *v = &s->judge.v[q];
			if (!selected(f, v->model) || !shown_verdict(v, all) || is_finding(v) != (pass == 0))
				continue;
			if (v->kind == V_KEPT && v->model == MODEL_UNIVERSAL && !all)
				continue;
			size_t i = 0;
			while (i < n && !same_fact(fa[i].first, v))
				i++;
			if (i == n) {
				ALLOC_GROW(fa, n + 1, cap);
				memset(&fa[n], 0, sizeof(fa[n]));
				fa[n++].first = v;
			}
			if (v->model != MODEL_UNIVERSAL)
				fa[i].models |= 1u << v->model;
			size_t r = 0;
			while (r < fa[i].nrules && strcmp(fa[i].rules[r], v->rule))
				r++;
			if (r == fa[i].nrules && r < 8) {
				fa[i].rules[r] = v->rule;
				fa[i].cites[r] = v->cite;
				fa[i].nrules++;
			}
		}
	*out = fa;
	return n;
}

/* The sentence of a fact, its models named once: the first verdict's reason
 * speaks of its own model; the others are listed after it. */
/* Has this state's report cited rule already? (else remember it) */
static bool cited_before(struct strvec *cited, const char *rule)
{
	if (strvec_has(cited, rule))
		return true;
	strvec_push(cited, rule);
	return false;
}

static void fact_lines(const struct fact *fc, bool md, struct strvec *cited)
{
	const struct verdict *v = fc->first;
	const char *kn = verdict_name(v->kind);
	struct sbuf ms = SBUF_INIT;
	for (int m = 0; m < MODEL_COUNT; m++)
		if (fc->models & (1u << m))
			sbuf_addf(&ms, "%s%s", ms.len ? ", " : "", model_name(m));
	const char *who = v->model == MODEL_UNIVERSAL ? "universal" : ms.buf;
	if (md) {
		printf("- **%s** (%s): ", kn, who);
		render_puts(stdout, v->reason);
		for (size_t r = 0; r < fc->nrules; r++)
			if (strcmp(fc->rules[r], "unpromised") && !cited_before(cited, fc->rules[r]))
				printf("  \n  _rule `%s`: %s_", fc->rules[r], fc->cites[r]);
		printf("\n");
	} else {
		printf("   %-6s [%s] ", kn, who);
		render_puts(stdout, v->reason);
		putchar('\n');
		for (size_t r = 0; r < fc->nrules; r++)
			if (strcmp(fc->rules[r], "unpromised") && !cited_before(cited, fc->rules[r]))
				printf("          rule %s: %s\n", fc->rules[r], fc->cites[r]);
	}
	sbuf_free(&ms);
}

#define REPORT_MAX_FACTS 10     /* per state, unless --all */
#define REPORT_TIMELINE_OPS 12  /* more run ops than this: equal neighbours share a line */

/* Which marks can share a timeline line: persisted with persisted, the
 * marks of ops that left nothing with each other; partly persisted and
 * superseded say the most about a state and keep a line each. */
static int mark_class(char m)
{
	if (m == EX_MARK_PERSISTED)
		return 1; /* shown: persisted neighbours share a line */
	if (m == EX_MARK_LOST || m == EX_MARK_UNSEEN || m == EX_MARK_NOEFFECT || m == EX_MARK_FAILED)
		return 2; /* nothing in the state */
	return 0;
}

/* The op timeline. Past REPORT_TIMELINE_OPS run ops (and without --all),
 * neighbours that completed alike share one line with the count of each
 * mark; ops partly persisted or superseded keep a line each. */
static void timeline(const struct fsview *f, const struct state_result *s, bool md, bool all)
{
	size_t nrun = 0;
	for (size_t o = 0; f->f.res && o < f->f.ops.n; o++)
		nrun += f->f.ops.ops[o].section == WL_RUN;
	if (md)
		printf("| op | | completed | in this state |\n|---|---|---|---|\n");
	for (size_t o = 0; f->f.res && o < f->f.ops.n; o++) {
		const struct wl_op *op = &f->f.ops.ops[o];
		if (op->section != WL_RUN)
			continue;
		char m = report_mark_of(s, o);
		bool done = op_completed(&f->f.res[o], s);
		size_t e = o; /* the last op of a run of quiet neighbours */
		while (!all && nrun > REPORT_TIMELINE_OPS && mark_class(m) && e + 1 < f->f.ops.n &&
		       f->f.ops.ops[e + 1].section == WL_RUN && mark_class(report_mark_of(s, e + 1)) == mark_class(m) &&
		       op_completed(&f->f.res[e + 1], s) == done)
			e++;
		if (e > o) {
			size_t cnt[5] = { 0 };
			static const char marks[5] = { EX_MARK_PERSISTED, EX_MARK_LOST, EX_MARK_UNSEEN, EX_MARK_NOEFFECT,
						       EX_MARK_FAILED };
			static const char *const words[5] = { "persisted", "lost", "not visible", "no visible effect",
							      "failed" };
			for (size_t q = o; q <= e; q++)
				for (int i = 0; i < 5; i++)
					cnt[i] += report_mark_of(s, q) == marks[i];
			struct sbuf w = SBUF_INIT;
			for (int i = 0; i < 5; i++)
				if (cnt[i])
					sbuf_addf(&w, "%s%zu %s", w.len ? ", " : "", cnt[i], words[i]);
			int a = op->id, z = f->f.ops.ops[e].id;
			if (md)
				printf("| %d-%d | %zu ops | %s | %s |\n", a, z, e - o + 1, done ? "yes" : "no", w.buf);
			else
				printf("   %c %3d-%-3d %-32s %-13s %s\n", mark_class(m) == 1 ? EX_MARK_PERSISTED : ' ', a, z, "",
				       done ? "completed" : "not completed", w.buf);
			sbuf_free(&w);
			o = e;
			continue;
		}
		char *text = report_op_text(op);
		if (md)
			printf("| %d | `%s` | %s | %s |\n", op->id, text, done ? "yes" : "no", render_mark_word(m));
		else
			printf("   %c %3d  %-36s %-13s %s\n", m ? m : ' ', op->id, text, done ? "completed" : "not completed",
			       render_mark_word(m));
		free(text);
	}
	if (md)
		printf("\n");
}

/* A state with a LOST or broken verdict under a reported model. */
static bool has_finding(const struct fsview *f, const struct state_result *s)
{
	for (size_t i = 0; i < s->judge.n; i++)
		if (selected(f, s->judge.v[i].model) && is_finding(&s->judge.v[i]))
			return true;
	return false;
}

/* "`-O ^has_journal`", or "the defaults" */
static void md_opts(struct sbuf *sb, const char *what, const char *opts)
{
	if (opts && *opts)
		sbuf_addf(sb, "%s options `%s`", what, opts);
	else
		sbuf_addf(sb, "%s options: the defaults", what);
}

/* Markdown: the observed tree of a state, as an indented block. */
static void md_tree(const struct state_result *s)
{
	if (!s->check.n_nodes)
		return;
	printf("Observed tree:\n\n");
	render_tree_text(stdout, "    ", s->check.nodes, s->check.n_nodes);
	printf("\n");
}

/* Markdown: how the run was made, and the workload as stored. */
static void md_preamble(const struct run_info *run)
{
	printf("Command: `");
	render_puts(stdout, run->cmdline ? run->cmdline : "?");
	printf("`  \nKernel: %s (%s), accelerator %s, crash mode %s, started %s.\n\n",
	       run->kernel_version ? run->kernel_version : "?",
	       run->kernel_key ? run->kernel_key : "?", run->accel ? run->accel : "?",
	       run->crash_mode ? run->crash_mode : "?", run->started_at ? run->started_at : "?");
	if (run->workload_text) {
		printf("Workload:\n\n");
		const char *p = run->workload_text;
		while (*p) {
			size_t l = strcspn(p, "\n");
			printf("    ");
			render_lines(stdout, p, l);
			putchar('\n');
			p += l;
			if (*p)
				p++;
		}
		printf("\n");
	}
}

static void render_text(const struct fsview *fv, size_t nfs, const struct run_info *run, bool md, bool all,
			bool findings_only)
{
	const char *file = run->workload_file ? run->workload_file : "?";
	if (md) {
		printf("# crashlab report: run %" PRId64 " (", run->id);
		render_puts(stdout, file);
		printf(")\n\n");
		md_preamble(run);
	} else {
		printf("run %" PRId64 ": ", run->id);
		render_puts(stdout, file);
		putchar('\n');
	}
	size_t nfound = 0;
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
		const char *opts = f->f.mount_opts && *f->f.mount_opts ? f->f.mount_opts : NULL;
		if (md) {
			struct sbuf o = SBUF_INIT;
			md_opts(&o, "mkfs", f->f.mkfs_opts);
			sbuf_adds(&o, ", ");
			md_opts(&o, "mount", f->f.mount_opts);
			printf("## %s\n\n%s. Models: %s (plus the universal rules U1-U5). "
			       "%zu crash state%s: %zu LOST, %zu broken, %zu bonus, %zu kept, %zu gone.\n\n",
			       f->f.fs, o.buf, ms.len ? ms.buf : "none", f->nst, f->nst == 1 ? "" : "s", tot[V_LOST],
			       tot[V_BROKEN], tot[V_BONUS], tot[V_KEPT], tot[V_GONE]);
			sbuf_free(&o);
		} else
			printf("\n== %s: models %s (and U1-U5)%s%s; %zu crash state%s: %zu LOST, %zu broken, %zu bonus, %zu kept, "
			       "%zu gone\n",
			       f->f.fs, ms.len ? ms.buf : "none", opts ? ", mount options " : "", opts ? opts : "", f->nst,
			       f->nst == 1 ? "" : "s", tot[V_LOST], tot[V_BROKEN], tot[V_BONUS], tot[V_KEPT], tot[V_GONE]);
		sbuf_free(&ms);
		if (f->f.outcome && strcmp(f->f.outcome, "ok")) {
			/* a fs run that did not end well says so, with why: its counts are not a clean bill */
			const char *err = f->f.error && *f->f.error ? f->f.error : NULL;
			printf(md ? "**This fs run did not finish: outcome %s**" : "   NOT FINISHED: outcome %s", f->f.outcome);
			if (err) {
				printf(md ? " (" : ": ");
				render_put(stdout, err, strcspn(err, "\n"));
				printf(md ? ")" : "");
			}
			printf(md ? ". Only the states listed were checked.\n\n" : "; only the states below were checked\n");
		}
		if (f->f.sim_notes) {
			printf(md ? "Notes: " : "   notes: ");
			render_lines(stdout, f->f.sim_notes, strlen(f->f.sim_notes));
			printf(md ? "\n\n" : "\n");
		}
		/* rep[k]: the first state judged alike */
		int *rep = xmalloc((f->nst + 1) * sizeof(int));
		for (size_t k = 0; k < f->nst; k++) {
			rep[k] = (int)k;
			for (size_t q = 0; q < k && rep[k] == (int)k; q++)
				if (rep[q] == (int)q && same_state(&f->st[q], &f->st[k]))
					rep[k] = (int)q;
		}
		for (size_t k = 0; k < f->nst; k++) {
			if (rep[k] != (int)k)
				continue;
			const struct state_result *s = &f->st[k];
			if (findings_only && !has_finding(f, s))
				continue;
			nfound++;
			size_t c[V_COUNT];
			count_state(f, s, c);
			struct sbuf names = SBUF_INIT;
			state_names(f, k, rep, &names);
			char head[320];
			snprintf(head, sizeof(head), "%s (%s, ops up to %d completed)", names.buf, s->kind ? s->kind : "?",
				 s->last_completed_op);
			sbuf_free(&names);
			if (md)
				printf("### %s\n\n", head);
			else
				printf("\n%s: ", head);
			if (!s->judge.judged) {
				const char *why = s->judge.diff[0] ? s->judge.diff : "not judged yet ('crashlab judge RUN' judges it)";
				render_puts(stdout, why);
				printf(md ? "\n\n" : "\n");
				if (md && !findings_only)
					md_tree(s);
				continue;
			}
			const char *how = !s->check.mount_ok	 ? "did not mount" :
					  s->judge.setup_state	 ? "the setup state: nothing of the run persisted" :
					  s->judge.explained	 ? "explained" :
								   "unexplainable";
			char counts[160];
			if (c[V_LOST] || c[V_BROKEN])
				snprintf(counts, sizeof(counts), "%zu LOST, %zu broken", c[V_LOST], c[V_BROKEN]);
			else
				snprintf(counts, sizeof(counts), "nothing LOST or broken");
			if (md)
				printf("%c%s; %s.\n\n", how[0] >= 'a' ? how[0] - 32 : how[0], how + 1, counts);
			else
				printf("%s; %s\n", how, counts);
			if (s->judge.diff[0] && !s->judge.explained) {
				printf(md ? "First difference: " : "   first difference: ");
				render_puts(stdout, s->judge.diff);
				printf(md ? "\n\n" : "\n");
			}
			if (!findings_only)
				timeline(f, s, md, all);
			struct fact *fa;
			size_t nf = report_facts(f, s, all, &fa);
			size_t shown = all || nf <= REPORT_MAX_FACTS ? nf : REPORT_MAX_FACTS - 1;
			struct strvec cited = STRVEC_INIT; /* each rule's citation once per state */
			for (size_t q = 0; q < shown; q++)
				fact_lines(&fa[q], md, &cited);
			strvec_free(&cited);
			if (shown < nf)
				printf(md ? "- and %zu more (`--all` lists them)\n" : "   ... and %zu more (--all lists them)\n",
				       nf - shown);
			free(fa);
			if (md)
				printf("\n");
			if (md && !findings_only)
				md_tree(s);
		}
		free(rep);
	}
	if (findings_only && !nfound)
		printf(md ? "No findings: no promise LOST and no universal rule broken under the reported models.\n"
			  : "\nno findings: no promise LOST and no universal rule broken under the reported models\n");
	if (!md && !findings_only)
		printf("\nmarks: + persisted, ~ partly, - lost, = superseded, ? not visible, . no visible effect, x failed\n");
}

static void jset(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static void render_json(const struct fsview *fv, size_t nfs, const struct run_info *run, bool all, bool findings_only)
{
	json_t *doc = json_object(), *fsa = json_array();
	/* "run": the id, then how the run was made, as `show --format json` has it */
	json_t *how = render_json_run(run);
	json_object_del(how, "id");
	jset(doc, "run", json_integer(run->id));
	json_object_update(doc, how);
	json_decref(how);
	for (size_t i = 0; i < nfs; i++) {
		const struct fsview *f = &fv[i];
		json_t *fo = json_object(), *sa = json_array();
		struct sbuf ms = SBUF_INIT;
		text_sel_models(f, &ms);
		jset(fo, "fs", render_json_str(f->f.fs));
		jset(fo, "mkfs_opts", render_json_str(f->f.mkfs_opts && *f->f.mkfs_opts ? f->f.mkfs_opts : NULL));
		jset(fo, "mount_opts", render_json_str(f->f.mount_opts && *f->f.mount_opts ? f->f.mount_opts : NULL));
		jset(fo, "outcome", render_json_str(f->f.outcome));
		jset(fo, "error", render_json_str(f->f.error));
		json_t *ma = json_array();
		for (int m = 0; m < MODEL_COUNT; m++)
			if (f->sel & (1u << m))
				json_array_append_new(ma, json_string(model_name(m)));
		jset(fo, "models", ma);
		sbuf_free(&ms);
		jset(fo, "simulator_notes", render_json_str(f->f.sim_notes));
		for (size_t k = 0; k < f->nst; k++) {
			const struct state_result *s = &f->st[k];
			if (findings_only && !has_finding(f, s))
				continue;
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
				char *text = report_op_text(op);
				json_t *oo = json_object();
				jset(oo, "op", json_integer(op->id));
				jset(oo, "text", render_json_str(text));
				jset(oo, "completed", json_boolean(op_completed(&f->f.res[o], s)));
				jset(oo, "mark", json_string(render_mark_word(report_mark_of(s, o))));
				json_array_append_new(tl, oo);
				free(text);
			}
			jset(so, "timeline", tl);
			for (size_t q = 0; q < s->judge.n; q++) {
				const struct verdict *v = &s->judge.v[q];
				if (!selected(f, v->model) || !shown_verdict(v, all))
					continue;
				json_array_append_new(va, render_json_verdict(v));
			}
			jset(so, "verdicts", va);
			jset(so, "tree", render_json_tree(s->check.nodes, s->check.n_nodes));
			json_array_append_new(sa, so);
		}
		jset(fo, "states", sa);
		json_array_append_new(fsa, fo);
	}
	jset(doc, "fs", fsa);
	render_json_print(doc);
	json_decref(doc);
}

/* Keep the fs runs named in list, in the run's order; a name the run does not have is an error (66). */
static void keep_fs(struct cmd_ctx *ctx, struct fsrun *frs, size_t *nfs, const char *list, int64_t run_id)
{
	struct strvec want = STRVEC_INIT;
	cmd_fs_list(ctx, list, &want);
	struct sbuf have = SBUF_INIT;
	for (size_t i = 0; i < *nfs; i++)
		sbuf_addf(&have, "%s%s", i ? ", " : "", frs[i].fs);
	for (size_t w = 0; w < want.n; w++) {
		size_t i = 0;
		while (i < *nfs && strcmp(frs[i].fs, want.v[w]))
			i++;
		if (i == *nfs)
			die_code(EXIT_NOINPUT, "--fs: run %" PRId64 " has no file system '%s' (it has: %s)", run_id, want.v[w],
				 have.buf ? have.buf : "none");
	}
	size_t n = 0;
	for (size_t i = 0; i < *nfs; i++) {
		bool keep = false;
		for (size_t w = 0; w < want.n && !keep; w++)
			keep = !strcmp(frs[i].fs, want.v[w]);
		if (keep)
			frs[n++] = frs[i];
		else
			fsrun_free(&frs[i]);
	}
	*nfs = n;
	strvec_free(&want);
	sbuf_free(&have);
}

int cmd_report(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = "text", *model_list = NULL, *fs_list = NULL, *state_arg = NULL;
	int all = 0, findings_only = 0;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "only these file systems (e.g. ext4,f2fs)" },
		{ OPT_STRING, 0, "state", &state_arg, "STATE", "only this crash state: its index, or a mark's LABEL" },
		{ OPT_BOOL, 0, "findings-only", &findings_only, NULL, "only the states with a finding, without timelines" },
		{ OPT_STRING, 'f', "format", &format, "FMT", "text (default), markdown, json or html" },
		{ OPT_STRING, 0, "model", &model_list, "LIST", "models to report (default: the run's; 'all')" },
		{ OPT_BOOL, 0, "all", &all, NULL, "also list kept promises and unpromised losses (gone)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, report_usage, 0);
	bool md = !strcmp(format, "markdown") || !strcmp(format, "md"), json = !strcmp(format, "json");
	bool html = !strcmp(format, "html");
	if (!md && !json && !html && strcmp(format, "text"))
		usage_error(cmd, "--format wants 'text', 'markdown', 'json' or 'html', not '%s'", format);
	if (n != 1)
		usage_error(cmd, n ? "give one run" : "no run given; say which run (a run id, or 'last')");
	struct errbuf e;
	unsigned forced = 0;
	if (model_list && models_select(model_list, NULL, NULL, NULL, &forced, &e) < 0)
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
	if (fs_list)
		keep_fs(ctx, frs, &nfs, fs_list, run_id);
	struct fsview *fv = xcalloc(nfs ? nfs : 1, sizeof(*fv));
	for (size_t i = 0; i < nfs; i++) {
		fv[i].f = frs[i];
		if (crashdb_read_states(db, fv[i].f.id, CRASHDB_VERDICTS | (html || json || md ? CRASHDB_TREE : 0),
					&fv[i].st, &fv[i].nst, &e) < 0)
			die_err(&e);
		if (state_arg) {
			int at = render_state_arg(&fv[i].f, fv[i].st, fv[i].nst, state_arg, &e);
			if (at < 0) {
				if (e.code == EXIT_USAGE)
					usage_error(cmd, "--state: %s", e.msg);
				die_err(&e);
			}
			struct state_result one = fv[i].st[at];
			memset(&fv[i].st[at], 0, sizeof(one));
			crashdb_states_free(fv[i].st, fv[i].nst);
			fv[i].st = xmalloc(sizeof(one));
			fv[i].st[0] = one;
			fv[i].nst = 1;
		}
		for (size_t k = 0; k < fv[i].nst; k++)
			render_tree_sort(fv[i].st[k].check.nodes, fv[i].st[k].check.n_nodes);
		unsigned set = forced;
		if (!set && fv[i].f.models)
			models_select(fv[i].f.models, fv[i].f.fs, fv[i].f.mount_opts, NULL, &set, &e);
		if (!set)
			models_select(NULL, fv[i].f.fs, fv[i].f.mount_opts, &fv[i].f.ops, &set, &e);
		fv[i].sel = set;
	}
	free(frs); /* its fsruns now belong to fv */
	int64_t unjudged = crashdb_unjudged(db, run_id);
	if (unjudged)
		warning("%" PRId64 " state%s of run %" PRId64 " %s no verdicts yet; 'crashlab judge %" PRId64 "%s' judges them",
			unjudged, unjudged == 1 ? "" : "s", run_id, unjudged == 1 ? "has" : "have", run_id, cmd_db_arg(ctx));
	if (html) {
		if (report_html(stdout, &run, fv, nfs) < 0)
			die_code(EXIT_CANTCREAT, "cannot write the page: %s", strerror(errno));
	} else if (json)
		render_json(fv, nfs, &run, all, findings_only);
	else
		render_text(fv, nfs, &run, md, all, findings_only);
	for (size_t i = 0; i < nfs; i++) {
		fsrun_free(&fv[i].f);
		crashdb_states_free(fv[i].st, fv[i].nst);
	}
	free(fv);
	run_info_free(&run);
	crashdb_close(db);
	return 0;
}

/*
 * report-html.c - `crashlab report RUN --format html`: one self-contained
 * page (inline CSS, inline SVG, a few lines of script, nothing fetched) that
 * works from file://. Top to bottom: how the run was made and the command
 * that makes it again, the workload; the fs × crash-state matrix, one cell
 * per state coloured by its worst verdict, each a link to the state; the
 * comparison view (compare.h); then per file system each crash state: its
 * observed tree beside the tree the program had at that point with the
 * differences marked, the op timeline with persisted / lost marks, the
 * findings in sentences with the rules they break, and the fsck output.
 *
 * Like the other renderers it only reads what report.c read through the
 * crashdb read API; the words come from the same functions as the text.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/compare.h"
#include "cmd/render.h"
#include "cmd/report.h"
#include "judge/sim.h"

/* Text for the page: control bytes and invalid UTF-8 escaped as on a
 * terminal (a page can be cat'ed too), then HTML's own characters. */
static void esc(FILE *f, const char *text)
{
	struct sbuf sb = SBUF_INIT;
	if (text)
		sbuf_add_escaped(&sb, text, strlen(text), SBUF_ESC_TEXT);
	for (const char *s = sb.buf; s && *s; s++)
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	sbuf_free(&sb);
}

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#1b1b1b}"
	"h1{font-size:1.5em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}"
	"code,pre,.mono{font-family:ui-monospace,monospace;font-size:13px}"
	"pre{background:#f6f6f6;padding:.6em;overflow-x:auto}"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;"
	"vertical-align:top}th{background:#f0f0f0}"
	"dl.meta{display:grid;grid-template-columns:max-content auto;gap:0 1em}dl.meta dt{font-weight:600}"
	"dl.meta dd{margin:0}"
	".k-kept{background:#e3f4e1}.k-bonus{background:#d6ecfa}.k-gone{background:#f3f3f3}"
	".k-lost{background:#f9c9c4;font-weight:600}.k-broken{background:#e0837a;font-weight:600}"
	".naive{outline:2px dashed #d08a00;outline-offset:-2px}"
	"tr.differs td:first-child::before{content:'* ';color:#b00}"
	"tr.differs td{border-left-color:#b00}"
	".m-persisted{color:#17612a}.m-lost{color:#b00;font-weight:600}.m-partly{color:#a05a00}"
	".m-other{color:#666}"
	"details.state{border:1px solid #ccc;border-radius:4px;margin:.5em 0;padding:.2em .8em}"
	"details.state[open]{background:#fcfcfc}details.state>summary{cursor:pointer;font-weight:600}"
	".sum-lost{color:#b00}.sum-ok{color:#17612a}"
	".cols{display:flex;flex-wrap:wrap;gap:1.5em}"
	"ul.findings li{margin:.3em 0}.cite{color:#555;font-size:.92em;display:block}"
	"svg text{font:12px ui-monospace,monospace}";

static const char *fill_of(const char *cls)
{
	return !strcmp(cls, "broken") ? "#c0392b"
	       : !strcmp(cls, "lost") ? "#e8776c"
	       : !strcmp(cls, "naive") ? "#f2c14e"
	       : !strcmp(cls, "bonus") ? "#8ec9ee"
	       : !strcmp(cls, "kept")  ? "#9fd49a"
				       : "#cccccc";
}

static void matrix(FILE *f, const struct fsview *fv, size_t nfs)
{
	size_t maxst = 1;
	for (size_t i = 0; i < nfs; i++)
		if (fv[i].nst > maxst)
			maxst = fv[i].nst;
	const int cw = 22, lw = 64, top = 18;
	size_t shown = maxst > 200 ? 200 : maxst;
	int w = lw + (int)shown * cw + 4, h = top + (int)nfs * cw + 4;
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' role='img' "
		   "aria-label='crash states per file system'>\n",
		w, h);
	for (size_t k = 0; k < shown; k += shown > 20 ? 5 : 1)
		fprintf(f, "<text x='%d' y='12' text-anchor='middle'>%zu</text>", lw + (int)k * cw + cw / 2, k);
	for (size_t i = 0; i < nfs; i++) {
		int y = top + (int)i * cw;
		fprintf(f, "\n<text x='0' y='%d'>", y + 15);
		esc(f, fv[i].f.fs);
		fputs("</text>", f);
		for (size_t k = 0; k < fv[i].nst && k < shown; k++) {
			const struct state_result *s = &fv[i].st[k];
			char ch;
			const char *cls = report_state_class(&fv[i], s, &ch);
			fprintf(f, "<a href='#%s-s%d'><rect x='%d' y='%d' width='%d' height='%d' rx='3' fill='%s'><title>",
				fv[i].f.fs, s->idx, lw + (int)k * cw, y, cw - 3, cw - 3, fill_of(cls));
			esc(f, fv[i].f.fs);
			fprintf(f, " state %d (%s, ops up to %d): %s</title></rect><text x='%d' y='%d' text-anchor='middle'>%c</text></a>",
				s->idx, s->kind ? s->kind : "?", s->last_completed_op, cls, lw + (int)k * cw + (cw - 3) / 2,
				y + 14, ch);
		}
	}
	fputs("\n</svg>\n", f);
	if (shown < maxst)
		fprintf(f, "<p>The first %zu states of each file system are drawn; every state is listed below.</p>\n", shown);
	fputs("<p class='legend'>", f);
	for (size_t k = 0; k < REPORT_NCLASS; k++)
		fprintf(f, "%s%c %s", k ? " &nbsp; " : "", report_classes[k].ch, report_classes[k].words);
	fputs("</p>\n", f);
}

static const char *mark_cls(enum cmp_mark m)
{
	switch (m) {
	case CM_KEPT: return "k-kept";
	case CM_BONUS: return "k-bonus";
	case CM_GONE: return "k-gone";
	case CM_LOST: return "k-lost";
	case CM_BROKEN: return "k-broken";
	default: return "";
	}
}

static void compare_tables(FILE *f, const struct cmp_view *v)
{
	for (size_t k = 0; k < v->nt; k++) {
		const struct cmp_table *t = &v->t[k];
		if (k && t->same_as_final) {
			fputs("<p>The final crash state is also the worst one on every file system.</p>\n", f);
			continue;
		}
		fprintf(f, "<h3>%s</h3>\n<table class='compare'><tr><th>object</th>", t->title);
		if (t->program_k >= 0)
			fprintf(f, "<th>program<br>after op %d</th>", t->program_k);
		for (size_t i = 0; i < t->ncol; i++) {
			fputs("<th>", f);
			esc(f, t->col[i].head);
			fputs("<br>", f);
			if (t->col[i].state >= 0)
				fprintf(f, "<a href='#%s-s%d'>", t->col[i].fs, t->col[i].state);
			esc(f, t->col[i].sub);
			fputs(t->col[i].state >= 0 ? "</a>" : "", f);
			fprintf(f, "<br><small>under %s</small></th>", model_name(t->col[i].model));
		}
		fputs("</tr>\n", f);
		for (size_t r = 0; r < t->nrow; r++) {
			const struct cmp_row *row = &t->row[r];
			fprintf(f, "<tr%s><td class='mono'>", row->differs ? " class='differs'" : "");
			esc(f, row->path);
			fputs("</td>", f);
			if (t->program_k >= 0) {
				fputs("<td class='mono'>", f);
				esc(f, row->program);
				fputs("</td>", f);
			}
			for (size_t i = 0; i < t->ncol; i++) {
				const struct cmp_cell *c = &row->cell[i];
				fprintf(f, "<td class='mono %s%s'>", mark_cls(c->mark), c->naive ? " naive" : "");
				esc(f, c->text);
				const char *m = cmp_mark_str(c->mark);
				if (*m || c->naive)
					fprintf(f, " <b>%s%s</b>", m, c->naive ? "!" : "");
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n", f);
	}
	fputs("<p class='legend'><span class='k-kept'>= promised, kept</span> &nbsp; <span class='k-bonus'>+ kept, not "
	      "promised</span> &nbsp; <span class='k-gone'>- gone, not promised</span> &nbsp; <span class='k-lost'>LOST "
	      "promised, gone</span> &nbsp; <span class='naive'>! a program that assumes its ops reach the disk in order "
	      "loses here</span> &nbsp; * the columns differ</p>\n",
	      f);
}

static const struct tree_node *node_at(const struct tree_node *t, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].path, path))
			return &t[i];
	return NULL;
}

/* The observed tree beside the program's at the state's last completed op. */
static void trees(FILE *f, const struct state_result *s, const struct sim *sim, bool sim_ok)
{
	struct tree_node *pt = NULL;
	size_t npt = 0;
	if (sim_ok)
		sim_tree_at(sim, s->last_completed_op, &pt, &npt);
	struct strvec paths = STRVEC_INIT;
	for (size_t i = 0; i < npt; i++)
		strvec_push(&paths, pt[i].path);
	for (size_t i = 0; i < s->check.n_nodes; i++)
		if (!strvec_has(&paths, s->check.nodes[i].path))
			strvec_push(&paths, s->check.nodes[i].path);
	fprintf(f, "<table class='tree'><tr><th>path</th><th>the program had (after op %d)</th><th>the crash state "
		   "holds</th></tr>\n",
		s->last_completed_op);
	for (size_t i = 0; i < paths.n; i++) {
		char a[128], b[128];
		const struct tree_node *p = node_at(pt, npt, paths.v[i]);
		const struct tree_node *o = node_at(s->check.nodes, s->check.n_nodes, paths.v[i]);
		if (sim_ok)
			cmp_describe(pt, npt, p, a, sizeof(a));
		else
			snprintf(a, sizeof(a), "?");
		cmp_describe(s->check.nodes, s->check.n_nodes, o, b, sizeof(b));
		bool differs = strcmp(a, b) != 0;
		fprintf(f, "<tr%s><td class='mono'>", differs ? " class='differs'" : "");
		esc(f, paths.v[i]);
		fputs("</td><td class='mono'>", f);
		esc(f, a);
		fprintf(f, "</td><td class='mono%s'>", differs ? " k-gone" : "");
		esc(f, b);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	strvec_free(&paths);
	for (size_t i = 0; i < npt; i++)
		tree_node_free(&pt[i]);
	free(pt);
}

static const char *mark_class(char m)
{
	return m == EX_MARK_PERSISTED ? "m-persisted"
	       : m == EX_MARK_LOST    ? "m-lost"
	       : m == EX_MARK_PARTIAL ? "m-partly"
				      : "m-other";
}

static void timeline(FILE *f, const struct fsview *fv, const struct state_result *s)
{
	fputs("<table class='timeline'><tr><th>op</th><th></th><th>completed</th><th>in this state</th></tr>\n", f);
	for (size_t o = 0; fv->f.res && o < fv->f.ops.n; o++) {
		const struct wl_op *op = &fv->f.ops.ops[o];
		if (op->section != WL_RUN)
			continue;
		char m = report_mark_of(s, o);
		char *text = report_op_text(op);
		fprintf(f, "<tr><td>%d</td><td class='mono'>", op->id);
		esc(f, text);
		fprintf(f, "</td><td>%s</td><td class='%s'>%s</td></tr>\n", op_completed(&fv->f.res[o], s) ? "yes" : "no",
			mark_class(m), render_mark_word(m));
		free(text);
	}
	fputs("</table>\n", f);
}

static void findings(FILE *f, const struct fsview *fv, const struct state_result *s)
{
	struct fact *fa;
	size_t nf = report_facts(fv, s, false, &fa);
	if (!nf) {
		fputs("<p class='sum-ok'>No promise of a selected model was lost and every universal rule holds.</p>\n", f);
		free(fa);
		return;
	}
	fputs("<ul class='findings'>\n", f);
	for (size_t q = 0; q < nf; q++) {
		const struct verdict *v = fa[q].first;
		fprintf(f, "<li><b class='%s'>%s</b> [", v->kind == V_LOST || v->kind == V_BROKEN ? "sum-lost" : "",
			verdict_name(v->kind));
		if (v->model == MODEL_UNIVERSAL)
			fputs("universal", f);
		for (int m = 0, k = 0; m < MODEL_COUNT; m++)
			if (fa[q].models & (1u << m))
				fprintf(f, "%s%s", k++ ? ", " : "", model_name(m));
		fputs("] ", f);
		esc(f, v->reason);
		for (size_t r = 0; r < fa[q].nrules; r++)
			if (strcmp(fa[q].rules[r], "unpromised")) {
				fputs("<span class='cite'>rule ", f);
				esc(f, fa[q].rules[r]);
				fputs(": ", f);
				esc(f, fa[q].cites[r]);
				fputs("</span>", f);
			}
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
	free(fa);
}

static void fs_section(FILE *f, const struct fsview *fv)
{
	fprintf(f, "<section id='fs-%s'><h2>", fv->f.fs);
	esc(f, fv->f.fs);
	fputs("</h2>\n<dl class='meta'>", f);
	fputs("<dt>mkfs</dt><dd class='mono'>", f);
	esc(f, fv->f.mkfs_opts && *fv->f.mkfs_opts ? fv->f.mkfs_opts : "(defaults)");
	fputs("</dd><dt>mount</dt><dd class='mono'>", f);
	esc(f, fv->f.mount_opts && *fv->f.mount_opts ? fv->f.mount_opts : "(defaults)");
	fputs("</dd><dt>models</dt><dd>", f);
	for (int m = 0, k = 0; m < MODEL_COUNT; m++)
		if (fv->sel & (1u << m))
			fprintf(f, "%s%s", k++ ? ", " : "", model_name(m));
	fputs(" (and the universal rules U1-U5)</dd><dt>outcome</dt><dd>", f);
	esc(f, fv->f.outcome ? fv->f.outcome : "?");
	if (fv->f.error && *fv->f.error) {
		fputs(": ", f);
		esc(f, fv->f.error);
	}
	fprintf(f, "</dd><dt>write log</dt><dd>%" PRId64 " entries, %" PRId64 " flushes, %" PRId64 " writes</dd></dl>\n",
		fv->f.log.entries, fv->f.log.flushes, fv->f.log.writes);
	struct sim sim;
	struct errbuf e;
	bool sim_ok = fv->f.res && sim_run(&sim, &fv->f.ops, fv->f.res, &e) == 0;
	for (size_t k = 0; k < fv->nst; k++) {
		const struct state_result *s = &fv->st[k];
		char ch;
		const char *cls = report_state_class(fv, s, &ch);
		size_t lost = 0, broken = s->judge.count[MODEL_UNIVERSAL][V_BROKEN];
		for (int m = 0; m < MODEL_COUNT; m++)
			if (report_selected(fv, m))
				lost += s->judge.count[m][V_LOST];
		fprintf(f, "<details class='state' id='%s-s%d'><summary>state %d: %s, point %" PRId64 ", ops up to %d "
			   "completed &mdash; <span class='%s'>",
			fv->f.fs, s->idx, s->idx, s->kind ? s->kind : "?", s->point, s->last_completed_op,
			lost || broken ? "sum-lost" : "sum-ok");
		if (!s->judge.judged)
			fputs("not judged", f);
		else if (lost || broken)
			fprintf(f, "%zu LOST, %zu broken", lost, broken);
		else
			fprintf(f, "nothing LOST or broken%s", !strcmp(cls, "naive") ? " (a naive program loses)" : "");
		fputs("</span></summary>\n", f);
		fprintf(f, "<p>mount: %s; fsck: %s (exit %d)</p>\n", s->check.mount_ok ? "ok" : "<b>failed</b>",
			s->check.fsck_clean ? "clean" : "<b>not clean</b>", s->check.fsck_status);
		if (!s->check.mount_ok && s->check.mount_msg) {
			fputs("<pre>", f);
			esc(f, s->check.mount_msg);
			fputs("</pre>\n", f);
		}
		fputs("<div class='cols'><div>", f);
		trees(f, s, &sim, sim_ok);
		fputs("</div><div>", f);
		timeline(f, fv, s);
		fputs("</div></div>\n", f);
		if (s->judge.diff[0] && !s->judge.explained) {
			fputs("<p>First difference: ", f);
			esc(f, s->judge.diff);
			fputs("</p>\n", f);
		}
		findings(f, fv, s);
		if (s->check.fsck_output && *s->check.fsck_output) {
			fputs("<details><summary>fsck output</summary><pre>", f);
			esc(f, s->check.fsck_output);
			fputs("</pre></details>\n", f);
		}
		fputs("</details>\n", f);
	}
	if (sim_ok)
		sim_free(&sim);
	fputs("</section>\n", f);
}

/* Open the state a link or the address names. */
static const char script[] = "function openHash(){var h=decodeURIComponent(location.hash.slice(1));"
			     "if(!h)return;var d=document.getElementById(h);"
			     "if(d&&d.tagName==='DETAILS'){d.open=true;d.scrollIntoView();}}"
			     "window.addEventListener('hashchange',openHash);openHash();";

int report_html(FILE *f, const struct run_info *run, const struct fsview *fv, size_t nfs)
{
	const char *file = run->workload_file ? run->workload_file : "?";
	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>\n"
		   "<meta name='viewport' content='width=device-width, initial-scale=1'>\n<title>crashlab run %" PRId64
		   ": ",
		run->id);
	esc(f, file);
	fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>crashlab run %" PRId64 ": ", css, run->id);
	esc(f, file);
	fputs("</h1>\n<dl class='meta'>", f);
	const char *kv[][2] = { { "started", run->started_at },	     { "finished", run->finished_at },
				{ "status", run->status },	     { "kernel", run->kernel_version },
				{ "accelerator", run->accel },	     { "crash mode", run->crash_mode } };
	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
		fprintf(f, "<dt>%s</dt><dd>", kv[i][0]);
		esc(f, kv[i][1] ? kv[i][1] : "-");
		fputs("</dd>", f);
	}
	fputs("<dt>file systems</dt><dd>", f);
	for (size_t i = 0; i < nfs; i++) {
		fprintf(f, "%s<a href='#fs-%s'>", i ? ", " : "", fv[i].f.fs);
		esc(f, fv[i].f.fs);
		fputs("</a>", f);
	}
	fputs("</dd></dl>\n<p>Made again, from the folder it was run in, by:</p>\n<pre id='command'>", f);
	esc(f, run->cmdline);
	fputs("</pre>\n<details><summary>the workload</summary><pre>", f);
	esc(f, run->workload_text);
	fputs("</pre></details>\n", f);

	fputs("<section id='matrix'><h2>Crash states</h2>\n<p>One cell per crash state, coloured by its worst verdict "
	      "under the models each file system was judged by; a cell leads to the state.</p>\n",
	      f);
	matrix(f, fv, nfs);
	fputs("</section>\n", f);

	struct cmp_source *src = xcalloc(nfs ? nfs : 1, sizeof(*src));
	for (size_t i = 0; i < nfs; i++)
		src[i] = (struct cmp_source){ run, &fv[i].f, fv[i].st, fv[i].nst };
	struct cmp_view v;
	cmp_build(&v, src, nfs, -1);
	fputs("<section id='compare'><h2>What each file system kept</h2>\n<p>One row per object the ops touched; "
	      "each cell what the crash state holds there and its mark under the file system's own model.</p>\n",
	      f);
	compare_tables(f, &v);
	fputs("</section>\n", f);
	cmp_free(&v);
	free(src);

	for (size_t i = 0; i < nfs; i++)
		fs_section(f, &fv[i]);
	fprintf(f, "<footer><p>The rules and the documents behind them: docs/guarantees.md.</p></footer>\n"
		   "<script>%s</script>\n</body></html>\n",
		script);
	return ferror(f) ? -1 : 0;
}

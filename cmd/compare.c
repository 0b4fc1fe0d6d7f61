/*
 * compare.c - `crashlab compare`: what each file system kept, side by side
 * (compare.h), for one run or across runs, as text, markdown or JSON; and
 * the same view `crashlab run` ends with.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/compare.h"
#include "cmd/render.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char compare_usage[] =
	"usage: crashlab compare [--db FILE] [--fs LIST] [--model NAME] [--format text|markdown|json] RUN [RUN...]\n"
	"\n"
	"Put the file systems side by side: for the final crash state and for the worst\n"
	"crash state of each file system, one row per object the ops touched and one\n"
	"column per file system (per run and file system when several runs are given),\n"
	"each cell what the state holds there in words and its mark:\n"
	"\n"
	"  =       promised, and kept          +       kept, though nothing promised it\n"
	"  -       gone, and nothing promised it\n"
	"  LOST    promised, and gone          BROKEN  a universal rule failed (U1-U5)\n"
	"  !       a program that assumes its ops reach the disk in order (the model\n"
	"          'sequential') loses here, whatever the file system promised\n"
	"\n"
	"The 'program' column is what the program had there when the power was cut.\n"
	"Rows marked '*' differ between the columns. The worst state is the one with\n"
	"the most LOST and broken verdicts, then the most losses of the naive program, then\nthe most objects gone.\n"
	"\n"
	"--model NAME marks every column under one model (default: each file system's\n"
	"own, under its mount options: ext4, xfs, btrfs, f2fs-posix or f2fs-strict).\n"
	"RUN is a run id, 'last' or 'last~N' (the Nth run before the last); give two\n"
	"runs to compare kernels, mount options, or a workload with and without a\n"
	"barrier ('crashlab compare last~1 last': the last two runs). With several\n"
	"runs the view starts with the kernel each one ran on (its version and\n"
	"build key; 'run --kernel-source 6.1' picks another kernel).\n"
	"\n"
	"examples:\n"
	"  crashlab compare last\n"
	"  crashlab compare 3 4 --fs f2fs\n"
	"  crashlab compare last --model posix --format markdown\n";

/* Display width of UTF-8 text (code points; the renderers only emit
 * escaped text, so every character is one column). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

/* s cut to at most w columns (with "..." when cut), into buf. */
static const char *fit(const char *s, size_t w, char *buf, size_t len)
{
	if (width(s) <= w) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	size_t keep = w > 3 ? w - 3 : 0, cols = 0, i = 0;
	for (; s[i] && i + 4 < len; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (cols == keep)
				break;
			cols++;
		}
	}
	snprintf(buf, len, "%.*s...", (int)i, s);
	return buf;
}

static void pad(FILE *f, const char *s, size_t w)
{
	fputs(s, f);
	for (size_t i = width(s); i < w; i++)
		fputc(' ', f);
}

static void cell_mark(const struct cmp_cell *c, char *buf, size_t len)
{
	const char *m = cmp_mark_str(c->mark);
	snprintf(buf, len, "%s%s", m, c->naive ? "!" : "");
}

#define TEXT_WIDTH 100

/* A row's path as a terminal shows it (malloc'd). */
static char *shown_path(const char *path)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_add_escaped(&sb, path, strlen(path), 0);
	return sbuf_detach(&sb);
}

static void print_table(FILE *f, const struct cmp_table *t, bool color)
{
	size_t n = t->ncol;
	size_t pathw = 6, progw = 0;
	if (t->program_k >= 0) { /* "program" over "after op K" */
		char b[32];
		progw = (size_t)snprintf(b, sizeof(b), "after op %d", t->program_k);
	}
	char **paths = xcalloc(t->nrow ? t->nrow : 1, sizeof(*paths));
	for (size_t r = 0; r < t->nrow; r++) {
		paths[r] = shown_path(t->row[r].path);
		if (width(paths[r]) > pathw)
			pathw = width(paths[r]);
		if (t->program_k >= 0 && width(t->row[r].program) > progw)
			progw = width(t->row[r].program);
	}
	size_t *w = xcalloc(n ? n : 1, sizeof(*w));
	for (size_t i = 0; i < n; i++) {
		w[i] = width(t->col[i].head) > width(t->col[i].sub) ? width(t->col[i].head) : width(t->col[i].sub);
		if (t->col[i].mount_opts && width(t->col[i].mount_opts) > w[i])
			w[i] = width(t->col[i].mount_opts) < 24 ? width(t->col[i].mount_opts) : 24;
		for (size_t r = 0; r < t->nrow; r++) {
			char m[16];
			cell_mark(&t->row[r].cell[i], m, sizeof(m));
			size_t cw = width(t->row[r].cell[i].text) + (*m ? 1 + strlen(m) : 0);
			if (cw > w[i])
				w[i] = cw;
		}
	}
	/* Shrink the widest column until the table fits. */
	if (pathw > 24)
		pathw = 24;
	for (;;) {
		size_t total = 2 + pathw + (progw ? 2 + progw : 0);
		for (size_t i = 0; i < n; i++)
			total += 2 + w[i];
		if (total <= TEXT_WIDTH)
			break;
		size_t *widest = progw > 14 ? &progw : NULL;
		for (size_t i = 0; i < n; i++)
			if (w[i] > 14 && (!widest || w[i] > *widest))
				widest = &w[i];
		if (!widest)
			break;
		(*widest)--;
	}

	fprintf(f, "  %-*s", (int)pathw, "");
	if (progw) {
		fputs("  ", f);
		pad(f, "program", progw);
	}
	for (size_t i = 0; i < n; i++) {
		fputs("  ", f);
		pad(f, t->col[i].head, i + 1 < n ? w[i] : 0);
	}
	fputc('\n', f);
	fprintf(f, "  %-*s", (int)pathw, "");
	if (progw) {
		char b[32];
		snprintf(b, sizeof(b), "after op %d", t->program_k);
		fputs("  ", f);
		pad(f, b, progw);
	}
	for (size_t i = 0; i < n; i++) {
		fputs("  ", f);
		pad(f, t->col[i].sub, i + 1 < n ? w[i] : 0);
	}
	fputc('\n', f);
	char buf[128];
	bool opts = false;
	for (size_t i = 0; i < n; i++)
		opts |= t->col[i].mount_opts && *t->col[i].mount_opts;
	if (opts) { /* the mount options, when a column has some */
		fprintf(f, "  %-*s", (int)pathw, "");
		if (progw)
			fprintf(f, "  %-*s", (int)progw, "");
		for (size_t i = 0; i < n; i++) {
			const char *o = t->col[i].mount_opts && *t->col[i].mount_opts ? t->col[i].mount_opts : "defaults";
			fputs("  ", f);
			pad(f, fit(o, w[i], buf, sizeof(buf)), i + 1 < n ? w[i] : 0);
		}
		fputc('\n', f);
	}
	for (size_t r = 0; r < t->nrow; r++) {
		const struct cmp_row *row = &t->row[r];
		fputs(row->differs ? "* " : "  ", f);
		pad(f, fit(paths[r], pathw, buf, sizeof(buf)), pathw);
		if (progw) {
			fputs("  ", f);
			pad(f, fit(row->program, progw, buf, sizeof(buf)), progw);
		}
		for (size_t i = 0; i < n; i++) {
			const struct cmp_cell *c = &row->cell[i];
			char m[16];
			cell_mark(c, m, sizeof(m));
			size_t mw = *m ? 1 + strlen(m) : 0;
			fputs("  ", f);
			const char *txt = fit(c->text, w[i] > mw ? w[i] - mw : 1, buf, sizeof(buf));
			fputs(txt, f);
			if (*m) {
				bool hot = color && (c->mark == CM_LOST || c->mark == CM_BROKEN || c->naive);
				fprintf(f, " %s%s%s", hot ? (c->mark >= CM_LOST ? "\033[1;31m" : "\033[33m") : "", m,
					hot ? "\033[0m" : "");
			}
			if (i + 1 < n)
				for (size_t k = width(txt) + mw; k < w[i]; k++)
					fputc(' ', f);
		}
		fputc('\n', f);
	}
	for (size_t r = 0; r < t->nrow; r++)
		free(paths[r]);
	free(paths);
	free(w);
}

static void models_line(FILE *f, const struct cmp_table *t)
{
	bool same = true;
	for (size_t i = 1; i < t->ncol; i++)
		if (t->col[i].model != t->col[0].model)
			same = false;
	if (!t->ncol)
		return;
	if (same) {
		fprintf(f, "marks under %s", model_name(t->col[0].model));
		return;
	}
	fputs("marks under each file system's own model: ", f);
	for (size_t i = 0, k = 0; i < t->ncol; i++) {
		size_t j = 0;
		while (j < i && t->col[j].model != t->col[i].model)
			j++;
		if (j == i) /* each model once */
			fprintf(f, "%s%s", k++ ? ", " : "", model_name(t->col[i].model));
	}
}

void cmp_print_text(FILE *f, const struct cmp_view *v, bool color)
{
	for (size_t k = 0; k < v->nt; k++) {
		const struct cmp_table *t = &v->t[k];
		if (k && t->same_as_final) {
			fprintf(f, "The final crash state is also the worst one on every file system.\n");
			continue;
		}
		if (k)
			fputc('\n', f);
		fprintf(f, "What each file system kept, %s\n(", t->title);
		models_line(f, t);
		fputs(")\n", f);
		print_table(f, t, color);
	}
	fprintf(f, "%s\n", cmp_legend);
}

static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void cmp_print_markdown(FILE *f, const struct cmp_view *v)
{
	for (size_t k = 0; k < v->nt; k++) {
		const struct cmp_table *t = &v->t[k];
		if (k && t->same_as_final) {
			fprintf(f, "The final crash state is also the worst one on every file system.\n\n");
			continue;
		}
		fprintf(f, "### What each file system kept, %s\n\n", t->title);
		models_line(f, t);
		fputs(".\n\n| object |", f);
		if (t->program_k >= 0)
			fprintf(f, " program (after op %d) |", t->program_k);
		for (size_t i = 0; i < t->ncol; i++)
			fprintf(f, " %s, %s%s%s%s |", t->col[i].head, t->col[i].sub,
				t->col[i].mount_opts && *t->col[i].mount_opts ? " (" : "",
				t->col[i].mount_opts && *t->col[i].mount_opts ? t->col[i].mount_opts : "",
				t->col[i].mount_opts && *t->col[i].mount_opts ? ")" : "");
		fputs("\n|---|", f);
		if (t->program_k >= 0)
			fputs("---|", f);
		for (size_t i = 0; i < t->ncol; i++)
			fputs("---|", f);
		fputc('\n', f);
		for (size_t r = 0; r < t->nrow; r++) {
			const struct cmp_row *row = &t->row[r];
			fputs("| ", f);
			fputs(row->differs ? "**" : "", f);
			char *path = shown_path(row->path);
			md_cell(f, path);
			free(path);
			fputs(row->differs ? "**" : "", f);
			fputs(" |", f);
			if (t->program_k >= 0) {
				fputc(' ', f);
				md_cell(f, row->program);
				fputs(" |", f);
			}
			for (size_t i = 0; i < t->ncol; i++) {
				char m[16];
				cell_mark(&row->cell[i], m, sizeof(m));
				fputc(' ', f);
				md_cell(f, row->cell[i].text);
				if (*m)
					fprintf(f, " %s%s%s", row->cell[i].mark >= CM_LOST ? "**" : "", m,
						row->cell[i].mark >= CM_LOST ? "**" : "");
				fputs(" |", f);
			}
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	fprintf(f, "%s\n", cmp_legend);
}

static void jset(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v);
}

json_t *cmp_json(const struct cmp_view *v)
{
	json_t *doc = json_object(), *tabs = json_array();
	jset(doc, "legend", json_string(cmp_legend));
	for (size_t k = 0; k < v->nt; k++) {
		const struct cmp_table *t = &v->t[k];
		json_t *o = json_object(), *cols = json_array(), *rows = json_array();
		jset(o, "title", json_string(t->title));
		jset(o, "program_after_op", t->program_k >= 0 ? json_integer(t->program_k) : json_null());
		jset(o, "same_as_final", json_boolean(t->same_as_final));
		for (size_t i = 0; i < t->ncol; i++) {
			const struct cmp_col *c = &t->col[i];
			json_t *jc = json_object();
			jset(jc, "run", json_integer(c->run_id));
			jset(jc, "fs", render_json_str(c->fs));
			jset(jc, "mount_opts", render_json_str(c->mount_opts && *c->mount_opts ? c->mount_opts : NULL));
			jset(jc, "state", c->state >= 0 ? json_integer(c->state) : json_null());
			jset(jc, "kind", render_json_str(c->kind));
			jset(jc, "label", render_json_str(c->label));
			jset(jc, "after_op", json_integer(c->after_op));
			jset(jc, "model", json_string(model_name(c->model)));
			json_array_append_new(cols, jc);
		}
		for (size_t r = 0; r < t->nrow; r++) {
			const struct cmp_row *row = &t->row[r];
			json_t *jr = json_object(), *cells = json_array();
			jset(jr, "path", render_json_str(row->path));
			jset(jr, "program", t->program_k >= 0 ? render_json_str(row->program) : json_null());
			jset(jr, "differs", json_boolean(row->differs));
			for (size_t i = 0; i < t->ncol; i++) {
				const struct cmp_cell *c = &row->cell[i];
				json_t *jcl = json_object();
				jset(jcl, "text", render_json_str(c->text));
				jset(jcl, "mark", c->mark == CM_NONE ? json_null() : json_string(cmp_mark_str(c->mark)));
				jset(jcl, "naive_lost", json_boolean(c->naive));
				json_array_append_new(cells, jcl);
			}
			jset(jr, "cells", cells);
			json_array_append_new(rows, jr);
		}
		jset(o, "columns", cols);
		jset(o, "rows", rows);
		json_array_append_new(tabs, o);
	}
	jset(doc, "tables", tabs);
	return doc;
}

/* Everything one view needs, read from the database, kept until it is printed. */
struct cmp_read {
	struct run_info *runs;
	size_t nruns;
	struct fsrun **fr;
	size_t *nfr;
	struct state_result **st;
	size_t *nst;
	struct cmp_source *src;
	size_t nsrc;
};

static void read_free(struct cmp_read *R)
{
	for (size_t i = 0; i < R->nsrc; i++)
		crashdb_states_free(R->st[i], R->nst[i]);
	for (size_t i = 0; i < R->nruns; i++) {
		crashdb_fsruns_free(R->fr[i], R->nfr[i]);
		run_info_free(&R->runs[i]);
	}
	free(R->runs);
	free(R->fr);
	free(R->nfr);
	free(R->st);
	free(R->nst);
	free(R->src);
}

static bool fs_wanted(const struct strvec *fs, const char *name)
{
	if (!fs || !fs->n)
		return true;
	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->v[i], name))
			return true;
	return false;
}

static int read_runs(struct crashdb *db, const int64_t *ids, size_t n, const struct strvec *fs, struct cmp_read *R,
		     struct errbuf *e)
{
	memset(R, 0, sizeof(*R));
	R->runs = xcalloc(n, sizeof(*R->runs));
	R->fr = xcalloc(n, sizeof(*R->fr));
	R->nfr = xcalloc(n, sizeof(*R->nfr));
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		if (crashdb_read_run(db, ids[i], &R->runs[i], e) < 0)
			return -1;
		R->nruns = i + 1;
		if (crashdb_read_fsruns(db, ids[i], NULL, &R->fr[i], &R->nfr[i], e) < 0)
			return -1;
		total += R->nfr[i];
	}
	R->src = xcalloc(total ? total : 1, sizeof(*R->src));
	R->st = xcalloc(total ? total : 1, sizeof(*R->st));
	R->nst = xcalloc(total ? total : 1, sizeof(*R->nst));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < R->nfr[i]; j++) {
			if (!fs_wanted(fs, R->fr[i][j].fs))
				continue;
			size_t k = R->nsrc;
			if (crashdb_read_states(db, R->fr[i][j].id, CRASHDB_TREE | CRASHDB_VERDICTS, &R->st[k], &R->nst[k],
						e) < 0)
				return -1;
			R->src[k] = (struct cmp_source){ &R->runs[i], &R->fr[i][j], R->st[k], R->nst[k] };
			R->nsrc++;
		}
	if (!R->nsrc)
		return errbuf_set(e, EXIT_NOINPUT, "the run%s ha%s no fs run on %s", n > 1 ? "s" : "", n > 1 ? "ve" : "s",
			      fs->n ? "the file systems asked for" : "any file system");
	return 0;
}

/* "6.12.58" of "6.12.58 (crashlab@crashlab) #1 ...", into buf. */
static const char *kernel_short(const struct run_info *r, char *buf, size_t len)
{
	const char *v = r->kernel_version && *r->kernel_version ? r->kernel_version : "?";
	snprintf(buf, len, "%.*s", (int)strcspn(v, " "), v);
	return buf;
}

static bool same_kernel(const struct run_info *a, const struct run_info *b)
{
	const char *ka = a->kernel_key ? a->kernel_key : "", *kb = b->kernel_key ? b->kernel_key : "";
	const char *va = a->kernel_version ? a->kernel_version : "", *vb = b->kernel_version ? b->kernel_version : "";
	return !strcmp(ka, kb) && !strcmp(va, vb);
}

/* Which kernel each run used, when several runs are compared. */
static void kernels_text(FILE *f, const struct cmp_read *R, bool md)
{
	if (R->nruns < 2)
		return;
	bool same = true;
	for (size_t i = 1; i < R->nruns; i++)
		same = same && same_kernel(&R->runs[0], &R->runs[i]);
	fprintf(f, md ? "Kernels (%s):\n\n" : "Kernels (%s):\n", same ? "the same in every run" : "they differ");
	for (size_t i = 0; i < R->nruns; i++) {
		const struct run_info *r = &R->runs[i];
		char v[64], what[160];
		if (r->kernel_version && *r->kernel_version)
			snprintf(what, sizeof(what), "Linux %s (build %.16s)", kernel_short(r, v, sizeof(v)),
				 r->kernel_key && *r->kernel_key ? r->kernel_key : "?");
		else
			snprintf(what, sizeof(what), "kernel not recorded");
		fprintf(f, "%s run %" PRId64 ": %s%s%s\n", md ? "-" : " ", r->id, what,
			r->workload_file ? ", workload " : "", r->workload_file ? r->workload_file : "");
	}
	fputc('\n', f);
}

static json_t *kernels_json(const struct cmp_read *R)
{
	json_t *a = json_array();
	for (size_t i = 0; i < R->nruns; i++) {
		const struct run_info *r = &R->runs[i];
		json_t *o = json_object();
		jset(o, "run", json_integer(r->id));
		jset(o, "kernel_version", render_json_str(r->kernel_version));
		jset(o, "kernel_key", render_json_str(r->kernel_key));
		json_array_append_new(a, o);
	}
	return a;
}

static bool use_color(FILE *f)
{
	const char *t = getenv("TERM");
	return isatty(fileno(f)) && !getenv("NO_COLOR") && t && strcmp(t, "dumb");
}

int cmp_show(struct crashdb *db, const int64_t *ids, size_t n, const struct strvec *fs, int model, const char *format,
	     struct errbuf *e)
{
	struct cmp_read R;
	if (read_runs(db, ids, n, fs, &R, e) < 0) {
		read_free(&R);
		return -1;
	}
	struct cmp_view v;
	cmp_build(&v, R.src, R.nsrc, model);
	if (!strcmp(format, "json")) {
		json_t *doc = cmp_json(&v);
		jset(doc, "runs", kernels_json(&R));
		render_json_print(doc);
		json_decref(doc);
	} else if (!strcmp(format, "markdown")) {
		kernels_text(stdout, &R, true);
		cmp_print_markdown(stdout, &v);
	} else {
		kernels_text(stdout, &R, false);
		cmp_print_text(stdout, &v, use_color(stdout));
	}
	cmp_free(&v);
	read_free(&R);
	return 0;
}

int cmd_compare(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *format = "text", *fs_list = NULL, *model_s = NULL;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs_list, "LIST", "only these file systems, comma-separated" },
		{ OPT_STRING, 0, "model", &model_s, "NAME", "mark every column under this model" },
		{ OPT_STRING, 0, "format", &format, "FMT", "text (default), markdown or json" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, compare_usage, 0);
	if (n == 0)
		usage_error(cmd, "no run given; say which run to compare (a run id, or 'last')");
	if (strcmp(format, "text") && strcmp(format, "markdown") && strcmp(format, "json"))
		usage_error(cmd, "--format wants 'text', 'markdown' or 'json', not '%s'", format);
	int model = -1;
	if (model_s) {
		model = model_parse(model_s);
		if (model < 0 || model == MODEL_EXPECT)
			usage_error(cmd, "--model wants one model name (posix, ext4, xfs, btrfs, f2fs-posix, f2fs-strict, "
					 "somc, barrier, fiemap_sync, sequential), not '%s'",
				    model_s);
	}
	struct strvec fs = STRVEC_INIT;
	if (fs_list)
		cmd_fs_list(ctx, fs_list, &fs);
	struct crashdb *db = cmd_db_existing(ctx);
	struct errbuf e;
	int64_t *ids = xcalloc((size_t)n, sizeof(*ids));
	for (int i = 0; i < n; i++)
		if (crashdb_resolve_run(db, argv[i], &ids[i], &e) < 0) {
			if (e.code == EXIT_USAGE)
				usage_error(cmd, "%s", e.msg);
			die_err(&e);
		}
	if (cmp_show(db, ids, (size_t)n, &fs, model, format, &e) < 0)
		die_err(&e);
	free(ids);
	strvec_free(&fs);
	crashdb_close(db);
	return 0;
}

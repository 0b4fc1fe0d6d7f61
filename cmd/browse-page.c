/*
 * browse-page.c - the pages `crashlab browse` shows, built from the read
 * API's types only: below the fs x crash-state matrix the state under the
 * cursor; a state with its observed tree beside the program's, its verdicts
 * per model, the op timeline and the mount and fsck output; and two file
 * systems side by side at one crash point (the comparison view of
 * compare-view.c, built for those two states). The words are report's and
 * compare's: verdict names, timeline marks (render_mark_word), the state
 * classes of the matrix (report_state_class), the comparison's cells.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cmd/browse.h"
#include "cmd/compare.h"
#include "cmd/render.h"
#include "core/util.h"
#include "crashdb/crashdb.h"
#include "judge/explain.h"
#include "judge/sim.h"

/* ------------------------------------------------------------------ */
/* Pages */

struct bline *bpage_line(struct bpage *p)
{
	ALLOC_GROW(p->l, p->n + 1, p->cap);
	struct bline *l = &p->l[p->n++];
	memset(l, 0, sizeof(*l));
	l->cap = 16;
	l->text = xcalloc(l->cap, 1);
	l->style = xcalloc(l->cap, 1);
	return l;
}

void bpage_free(struct bpage *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->l[i].text);
		free(p->l[i].style);
	}
	free(p->l);
	memset(p, 0, sizeof(*p));
}

void bline_put(struct bline *l, int style, const char *s, size_t n)
{
	if (l->len + n + 1 > l->cap) {
		size_t c = l->cap * 2 > l->len + n + 1 ? l->cap * 2 : l->len + n + 1;
		l->text = xrealloc(l->text, c);
		l->style = xrealloc(l->style, c);
		l->cap = c;
	}
	memcpy(l->text + l->len, s, n);
	memset(l->style + l->len, style, n);
	l->len += n;
	l->text[l->len] = '\0';
}

void bline_puts(struct bline *l, int style, const char *s)
{
	if (s)
		bline_put(l, style, s, strlen(s));
}

void bline_printf(struct bline *l, int style, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	bline_puts(l, style, s);
	free(s);
}

void bline_safe(struct bline *l, int style, const char *s)
{
	if (!s)
		return;
	struct sbuf sb = SBUF_INIT;
	sbuf_add_escaped(&sb, s, strlen(s), SBUF_ESC_PROSE);
	if (sb.len)
		bline_put(l, style, sb.buf, sb.len);
	sbuf_free(&sb);
}

int bstr_width(const char *s, size_t n)
{
	int w = 0;
	mbstate_t ps;
	memset(&ps, 0, sizeof(ps));
	for (size_t i = 0; i < n;) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, s + i, n - i, &ps);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&ps, 0, sizeof(ps));
			w++;
			i++;
			continue;
		}
		int cw = wcwidth(wc);
		w += cw > 0 ? cw : 0;
		i += k;
	}
	return w;
}

void bline_pad(struct bline *l, int w)
{
	for (int have = bstr_width(l->text, l->len); have < w; have++)
		bline_put(l, BS_PLAIN, " ", 1);
}

/* The first n bytes of s that fit in w columns (whole characters). */
static size_t fit_bytes(const char *s, size_t n, int w)
{
	size_t i = 0;
	int used = 0;
	while (i < n) {
		size_t k = (unsigned char)s[i] < 0x80 ? 1 : utf8_len((const unsigned char *)s + i, n - i);
		if (!k)
			k = 1;
		int cw = bstr_width(s + i, k);
		if (used + cw > w)
			break;
		used += cw;
		i += k;
	}
	return i;
}

/* Put s in a column of width w: cut with '~' when it does not fit, padded. */
static void put_col(struct bline *l, int style, const char *s, int w)
{
	size_t n = strlen(s);
	int start = bstr_width(l->text, l->len);
	if (bstr_width(s, n) > w && w > 1) {
		bline_put(l, style, s, fit_bytes(s, n, w - 1));
		bline_put(l, BS_DIM, "~", 1);
	} else {
		bline_put(l, style, s, fit_bytes(s, n, w));
	}
	bline_pad(l, start + w);
}

void bpage_wrap(struct bpage *p, int style, const char *first, const char *indent, const char *text, int width)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_add_escaped(&sb, text ? text : "", text ? strlen(text) : 0, SBUF_ESC_PROSE);
	const char *s = sb.buf ? sb.buf : "";
	const char *lead = first ? first : indent;
	do {
		struct bline *l = bpage_line(p);
		bline_puts(l, BS_PLAIN, lead);
		int room = width - bstr_width(lead, strlen(lead));
		if (room < 10)
			room = 10;
		size_t n = strlen(s), take = fit_bytes(s, n, room);
		if (take < n) { /* break at the last space that fits */
			size_t b = take;
			while (b > 0 && s[b] != ' ')
				b--;
			if (b > 0)
				take = b;
		}
		bline_put(l, style, s, take);
		s += take;
		while (*s == ' ')
			s++;
		lead = indent;
	} while (*s);
	sbuf_free(&sb);
}

void browse_legend_lines(struct bpage *p, const char *legend, const char *indent, int width)
{
	/* items are separated by three spaces or a newline; a line takes as many as fit */
	struct bline *l = NULL;
	const char *q = legend;
	while (*q) {
		size_t n = strcspn(q, "\n");
		const char *sep = strstr(q, "   ");
		if (sep && (size_t)(sep - q) < n)
			n = (size_t)(sep - q);
		int w = bstr_width(q, n);
		if (!l || bstr_width(l->text, l->len) + 3 + w > width) {
			l = bpage_line(p);
			bline_puts(l, BS_PLAIN, indent);
		} else {
			bline_puts(l, BS_PLAIN, "   ");
		}
		bline_put(l, BS_PLAIN, q, n);
		q += n;
		if (*q == '\n') {
			q++;
			l = NULL;
		}
		while (*q == ' ')
			q++;
	}
}

/* ------------------------------------------------------------------ */
/* Reading a run */

int browse_read_run(struct crashdb *db, int64_t id, struct brun *out, struct errbuf *e)
{
	memset(out, 0, sizeof(*out));
	struct fsrun *frs;
	size_t nfs;
	if (crashdb_read_run(db, id, &out->run, e) < 0)
		return -1;
	if (crashdb_read_fsruns(db, id, NULL, &frs, &nfs, e) < 0) {
		run_info_free(&out->run);
		return -1;
	}
	out->fv = xcalloc(nfs ? nfs : 1, sizeof(*out->fv));
	out->nfs = nfs;
	for (size_t i = 0; i < nfs; i++) {
		struct fsview *f = &out->fv[i];
		f->f = frs[i];
		if (crashdb_read_states(db, f->f.id, CRASHDB_TREE | CRASHDB_VERDICTS, &f->st, &f->nst, e) < 0) {
			for (size_t k = i + 1; k < nfs; k++)
				fsrun_free(&frs[k]);
			free(frs);
			out->nfs = i + 1;
			browse_run_free(out);
			return -1;
		}
		for (size_t k = 0; k < f->nst; k++)
			render_tree_sort(f->st[k].check.nodes, f->st[k].check.n_nodes);
		/* The models reported, as `report` picks them: the run's, else the defaults. */
		struct errbuf me;
		unsigned set = 0;
		if (f->f.models)
			models_select(f->f.models, f->f.fs, f->f.mount_opts, NULL, &set, &me);
		if (!set)
			models_select(NULL, f->f.fs, f->f.mount_opts, &f->f.ops, &set, &me);
		f->sel = set;
	}
	free(frs);
	return 0;
}

void browse_run_free(struct brun *r)
{
	for (size_t i = 0; i < r->nfs; i++) {
		fsrun_free(&r->fv[i].f);
		crashdb_states_free(r->fv[i].st, r->fv[i].nst);
	}
	free(r->fv);
	run_info_free(&r->run);
	memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------------------------ */
/* Styles and words */

int browse_class_style(char ch)
{
	switch (ch) {
	case 'L': return BS_LOST;
	case 'B': return BS_BROKEN;
	case '!': return BS_NAIVE;
	case '+': return BS_BONUS;
	case '=': return BS_KEPT;
	default: return BS_DIM;
	}
}

static int verdict_style(enum verdict_kind k)
{
	switch (k) {
	case V_KEPT: return BS_KEPT;
	case V_LOST: return BS_LOST;
	case V_BONUS: return BS_BONUS;
	case V_BROKEN: return BS_BROKEN;
	default: return BS_PLAIN;
	}
}

static int mark_style(char m)
{
	switch (m) {
	case EX_MARK_PERSISTED: return BS_KEPT;
	case EX_MARK_PARTIAL: return BS_NAIVE;
	case EX_MARK_LOST: return BS_LOST;
	default: return BS_DIM;
	}
}

static const char *class_words(char ch)
{
	for (size_t k = 0; k < REPORT_NCLASS; k++)
		if (report_classes[k].ch == ch)
			return report_classes[k].words;
	return "";
}

/* The op of id k ("fsync A/foo"), malloc'd, or NULL. */
static char *op_text_of(const struct fsrun *f, int k)
{
	for (size_t i = 0; i < f->ops.n; i++)
		if (f->ops.ops[i].id == k)
			return report_op_text(&f->ops.ops[i]);
	return NULL;
}

static const char *fsck_word(const struct check_report *c)
{
	if (c->fsck_status < 0)
		return "not run";
	return c->fsck_clean ? "clean" : "complaint";
}

/* "ext4 state 2: final, after op 6 (fsync A/foo)" */
static void state_title(struct bline *l, const struct fsview *f, const struct state_result *s)
{
	bline_safe(l, BS_HEAD, f->f.fs);
	bline_printf(l, BS_HEAD, " state %d", s->idx);
	bline_printf(l, BS_PLAIN, ": %s, ", s->kind ? s->kind : "?");
	if (s->last_completed_op) {
		char *t = op_text_of(&f->f, s->last_completed_op);
		bline_printf(l, BS_PLAIN, "after op %d (", s->last_completed_op);
		bline_safe(l, BS_PLAIN, t ? t : "?");
		bline_puts(l, BS_PLAIN, ")");
		free(t);
	} else {
		bline_puts(l, BS_PLAIN, "before any op completed");
	}
}

/* The state's title on l, then on a new line its verdict character and
 * words ("  ! only a program assuming in-order persistence loses"); returns
 * that line, for the caller to go on. */
static struct bline *state_head(struct bpage *p, struct bline *l, const struct fsview *f,
				const struct state_result *s)
{
	state_title(l, f, s);
	l = bpage_line(p);
	char ch;
	report_state_class(f, s, &ch);
	bline_puts(l, BS_PLAIN, "  ");
	bline_put(l, browse_class_style(ch), &ch, 1);
	bline_puts(l, BS_PLAIN, " ");
	bline_puts(l, BS_PLAIN, class_words(ch));
	return l;
}

static void count_line(struct bpage *p, const struct state_result *s, int m, const char *name, bool reported)
{
	const size_t *c = s->judge.count[m];
	struct bline *l = bpage_line(p);
	char head[24];
	snprintf(head, sizeof(head), "  %s", name);
	put_col(l, BS_PLAIN, head, 15);
	if (m == MODEL_UNIVERSAL) {
		bline_printf(l, c[V_BROKEN] ? BS_BROKEN : BS_PLAIN, "%zu broken", c[V_BROKEN]);
		bline_printf(l, BS_PLAIN, ", %zu kept", c[V_KEPT]);
		return;
	}
	bline_printf(l, !c[V_LOST] ? BS_PLAIN : m == MODEL_SEQUENTIAL && !reported ? BS_NAIVE : BS_LOST, "%zu LOST",
		     c[V_LOST]);
	bline_printf(l, BS_PLAIN, ", %zu kept, ", c[V_KEPT]);
	bline_printf(l, c[V_BONUS] ? BS_BONUS : BS_PLAIN, "%zu bonus", c[V_BONUS]);
	bline_printf(l, BS_PLAIN, ", %zu gone", c[V_GONE]);
}

/* The models a state page shows: the reported ones, then sequential (the
 * program's naive assumption, which the '!' class is about). */
static bool shown_model(const struct fsview *f, int m)
{
	return m == MODEL_SEQUENTIAL || (f->sel & (1u << m));
}

void browse_page_cell(struct bpage *p, const struct brun *r, size_t fs, size_t st, int width)
{
	if (fs >= r->nfs)
		return;
	const struct fsview *f = &r->fv[fs];
	struct bline *l = bpage_line(p);
	if (st >= f->nst) {
		bline_safe(l, BS_HEAD, f->f.fs);
		bline_puts(l, BS_PLAIN, ": no crash states");
		if (f->f.outcome && strcmp(f->f.outcome, "ok")) {
			bline_puts(l, BS_PLAIN, " (");
			bline_safe(l, BS_PLAIN, f->f.outcome);
			bline_puts(l, BS_PLAIN, ")");
		}
		if (f->f.error && *f->f.error)
			bpage_wrap(p, BS_PLAIN, NULL, "  ", f->f.error, width);
		return;
	}
	const struct state_result *s = &f->st[st];
	l = state_head(p, l, f, s);
	bline_printf(l, BS_PLAIN, "; mount %s, fsck %s", s->check.mount_ok ? "ok" : "failed", fsck_word(&s->check));
	if (!s->judge.judged)
		return;
	for (int m = 0; m < MODEL_COUNT; m++)
		if (shown_model(f, m))
			count_line(p, s, m, model_name(m), report_selected(f, m));
	count_line(p, s, MODEL_UNIVERSAL, "universal", true);
	/* The first finding of the reported models, in report's sentence. */
	for (size_t i = 0; i < s->judge.n; i++) {
		const struct verdict *v = &s->judge.v[i];
		if ((v->kind == V_LOST || v->kind == V_BROKEN) && report_selected(f, v->model)) {
			char lead[32];
			snprintf(lead, sizeof(lead), "  %-6s ", verdict_name(v->kind));
			bpage_wrap(p, verdict_style(v->kind), lead, "         ", v->reason, width);
			break;
		}
	}
}

/* ------------------------------------------------------------------ */
/* A state */

static const struct tree_node *find_node(const struct tree_node *v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

static void add_path(struct strvec *v, const char *p)
{
	if (p && *p && !strvec_has(v, p))
		strvec_push(v, p);
}

/* The crash state's tree beside the program's after op k: one row per path
 * of either, marked where they differ. */
static void trees(struct bpage *p, const struct fsview *f, const struct state_result *s, int width)
{
	struct sim sim;
	struct errbuf e;
	struct tree_node *pt = NULL;
	size_t npt = 0;
	bool prog = false;
	if (f->f.res && sim_run(&sim, &f->f.ops, f->f.res, &e) == 0) {
		sim_tree_at(&sim, s->last_completed_op, &pt, &npt);
		sim_free(&sim);
		prog = true;
	}
	const struct check_report *c = &s->check;
	struct strvec paths = STRVEC_INIT;
	for (size_t i = 0; i < c->n_nodes; i++)
		add_path(&paths, c->nodes[i].path);
	for (size_t i = 0; i < npt; i++)
		add_path(&paths, pt[i].path);
	strvec_sort(&paths);

	int pw = 12;
	for (size_t i = 0; i < paths.n; i++) {
		int w = bstr_width(paths.v[i], strlen(paths.v[i])) + 1;
		if (w > pw)
			pw = w;
	}
	if (pw > width / 4)
		pw = width / 4 > 8 ? width / 4 : 8;
	int cw = (width - 2 - pw - 3) / 2;
	if (cw < 8)
		cw = 8;
	struct bline *l = bpage_line(p);
	bline_puts(l, BS_HEAD, "  ");
	put_col(l, BS_HEAD, "path", pw);
	put_col(l, BS_HEAD, "crash state", cw);
	bline_puts(l, BS_HEAD, " | ");
	char ph[48];
	if (prog)
		snprintf(ph, sizeof(ph), "program after op %d", s->last_completed_op);
	else
		snprintf(ph, sizeof(ph), "program (not simulated)");
	bline_puts(l, BS_HEAD, ph);
	size_t ndiff = 0;
	for (size_t i = 0; i < paths.n; i++) {
		const struct tree_node *o = c->mount_ok ? find_node(c->nodes, c->n_nodes, paths.v[i]) : NULL;
		const struct tree_node *q = prog ? find_node(pt, npt, paths.v[i]) : NULL;
		char ot[96], qt[96];
		if (c->mount_ok)
			cmp_describe(c->nodes, c->n_nodes, o, ot, sizeof(ot));
		else
			snprintf(ot, sizeof(ot), "does not mount");
		if (prog)
			cmp_describe(pt, npt, q, qt, sizeof(qt));
		else
			snprintf(qt, sizeof(qt), "?");
		bool differs = prog && c->mount_ok && (strcmp(ot, qt) || (o && q && o->mode != q->mode));
		/* '-' the program has it and the state not, '+' the other way, '*' both, differently */
		const char *mk = !differs ? "  " : !o ? "- " : !q ? "+ " : "* ";
		ndiff += differs;
		if (differs && o && q && o->mode != q->mode && !strcmp(ot, qt)) {
			size_t lo = strlen(ot), lq = strlen(qt);
			snprintf(ot + lo, sizeof(ot) - lo, " %04o", (unsigned)o->mode);
			snprintf(qt + lq, sizeof(qt) - lq, " %04o", (unsigned)q->mode);
		}
		l = bpage_line(p);
		bline_puts(l, BS_DIFF, mk);
		struct sbuf sp = SBUF_INIT;
		sbuf_add_escaped(&sp, paths.v[i], strlen(paths.v[i]), 0);
		put_col(l, differs ? BS_DIFF : BS_PLAIN, sp.buf ? sp.buf : "", pw);
		sbuf_free(&sp);
		put_col(l, differs ? BS_DIFF : BS_PLAIN, ot, cw);
		bline_puts(l, BS_PLAIN, " | ");
		bline_puts(l, BS_PLAIN, qt);
	}
	if (!paths.n)
		bline_puts(bpage_line(p), BS_DIM, "  (both trees are empty)");
	if (!c->mount_ok) {
		bline_puts(bpage_line(p), BS_BROKEN, "  the crash state did not mount: it has no tree to compare");
	} else if (!prog) {
		bline_puts(bpage_line(p), BS_DIM, "  the program's tree could not be simulated");
	} else if (ndiff) {
		char say[160];
		snprintf(say, sizeof(say), "%zu path%s differ%s: * held differently, - the program's is gone, + only in "
			 "the crash state", ndiff, ndiff == 1 ? "" : "s", ndiff == 1 ? "s" : "");
		bpage_wrap(p, BS_PLAIN, "  ", "    ", say, width);
	} else {
		bline_puts(bpage_line(p), BS_PLAIN, "  the crash state holds what the program had");
	}
	for (size_t i = 0; i < npt; i++)
		tree_node_free(&pt[i]);
	free(pt);
	strvec_free(&paths);
}

static void verdicts(struct bpage *p, const struct fsview *f, const struct state_result *s, int width)
{
	if (!s->judge.judged) {
		bpage_wrap(p, BS_DIM, "  ", "  ", s->judge.diff[0] ? s->judge.diff : "not judged", width);
		return;
	}
	static const enum verdict_kind order[] = { V_BROKEN, V_LOST, V_BONUS, V_KEPT, V_GONE };
	for (int m = 0; m <= MODEL_COUNT; m++) {
		if (m < MODEL_COUNT && !shown_model(f, m))
			continue;
		const char *name = m == MODEL_COUNT ? "universal" : model_name(m);
		count_line(p, s, m, name, report_selected(f, m));
		if (m == MODEL_SEQUENTIAL && !(f->sel & (1u << m)))
			bline_puts(&p->l[p->n - 1], BS_DIM, "  (in-order persistence)");
		size_t shown = 0;
		for (size_t k = 0; k < ARRAY_SIZE(order); k++)
			for (size_t i = 0; i < s->judge.n; i++) {
				const struct verdict *v = &s->judge.v[i];
				if (v->model != m || v->kind != order[k])
					continue;
				char lead[32];
				snprintf(lead, sizeof(lead), "    %-6s ", verdict_name(v->kind));
				/* sequential, when not reported, is the naive program's model: '!' */
				int style = verdict_style(v->kind);
				if (m == MODEL_SEQUENTIAL && !(f->sel & (1u << m)) && v->kind == V_LOST)
					style = BS_NAIVE;
				bpage_wrap(p, style, lead, "           ", v->reason, width);
				shown++;
			}
		if (!shown)
			bline_puts(bpage_line(p), BS_DIM, "    (no verdicts)");
	}
}

static void timeline(struct bpage *p, const struct fsview *f, const struct state_result *s)
{
	size_t nops = f->f.res ? f->f.ops.n : 0, nrun = 0;
	for (size_t o = 0; o < nops; o++) {
		const struct wl_op *op = &f->f.ops.ops[o];
		if (op->section != WL_RUN)
			continue;
		nrun++;
		char m = report_mark_of(s, o);
		bool done = op_completed(&f->f.res[o], s);
		char *text = report_op_text(op);
		struct bline *l = bpage_line(p);
		bline_puts(l, BS_PLAIN, "  ");
		char mk = m ? m : ' ';
		bline_put(l, mark_style(m), &mk, 1);
		bline_printf(l, BS_PLAIN, " %3d  ", op->id);
		struct sbuf sb = SBUF_INIT;
		sbuf_add_escaped(&sb, text, strlen(text), SBUF_ESC_PROSE);
		put_col(l, BS_PLAIN, sb.buf ? sb.buf : "", 28);
		sbuf_free(&sb);
		put_col(l, done ? BS_PLAIN : BS_DIM, done ? " completed" : " not completed", 15);
		bline_puts(l, mark_style(m), render_mark_word(m));
		free(text);
	}
	if (!nrun)
		bline_puts(bpage_line(p), BS_DIM, "  (no ops recorded)");
}

static void output_block(struct bpage *p, const char *text)
{
	const char *q = text;
	while (q && *q) {
		size_t n = strcspn(q, "\n");
		char *one = xstrndup(q, n && q[n - 1] == '\r' ? n - 1 : n);
		struct bline *l = bpage_line(p);
		bline_puts(l, BS_DIM, "  | ");
		bline_safe(l, BS_PLAIN, one);
		free(one);
		q += n;
		if (*q)
			q++;
	}
}

void browse_page_state(struct bpage *p, const struct brun *r, size_t fs, size_t st, int width)
{
	const struct fsview *f = &r->fv[fs];
	const struct state_result *s = &f->st[st];
	struct bline *l = bpage_line(p);
	l = state_head(p, l, f, s);
	l = bpage_line(p);
	bline_printf(l, BS_PLAIN, "  crash point %" PRId64 " (log position), mount %s, fsck %s", s->point,
		     s->check.mount_ok ? "ok" : "failed", fsck_word(&s->check));
	if (f->f.mount_opts && *f->f.mount_opts) {
		l = bpage_line(p);
		bline_puts(l, BS_PLAIN, "  mount options ");
		bline_safe(l, BS_PLAIN, f->f.mount_opts);
	}
	bpage_line(p);
	bline_puts(bpage_line(p), BS_HEAD, "tree");
	trees(p, f, s, width);
	if (s->judge.explained == 0 && s->judge.judged && s->judge.diff[0])
		bpage_wrap(p, BS_BROKEN, "  unexplainable: ", "    ", s->judge.diff, width);

	bpage_line(p);
	bline_puts(bpage_line(p), BS_HEAD, "verdicts per model");
	verdicts(p, f, s, width);

	bpage_line(p);
	bline_puts(bpage_line(p), BS_HEAD, "ops");
	timeline(p, f, s);

	bpage_line(p);
	l = bpage_line(p);
	bline_puts(l, BS_HEAD, "mount");
	bline_printf(l, BS_PLAIN, "  %s", s->check.mount_ok ? "ok" : "failed");
	output_block(p, s->check.mount_msg);
	l = bpage_line(p);
	bline_puts(l, BS_HEAD, "fsck");
	if (s->check.fsck_status < 0)
		bline_puts(l, BS_PLAIN, "   not run");
	else
		bline_printf(l, s->check.fsck_clean ? BS_PLAIN : BS_BROKEN, "   %s (exit %d)", fsck_word(&s->check),
			     s->check.fsck_status);
	output_block(p, s->check.fsck_output);
}

/* ------------------------------------------------------------------ */
/* Two file systems at one crash point */

size_t browse_same_point(const struct brun *r, size_t fs1, size_t st, size_t fs2)
{
	const struct fsview *a = &r->fv[fs1], *b = &r->fv[fs2];
	if (st >= a->nst || !b->nst)
		return 0;
	int k = a->st[st].last_completed_op;
	size_t best = 0;
	bool before = false;
	for (size_t i = 0; i < b->nst; i++) {
		if (b->st[i].last_completed_op == k)
			return i;
		if (b->st[i].last_completed_op < k) {
			best = i;
			before = true;
		}
	}
	return before ? best : 0;
}

void browse_page_compare(struct bpage *p, const struct brun *r, size_t fs1, size_t st1, size_t fs2, size_t st2,
			 int width)
{
	const struct fsview *a = &r->fv[fs1], *b = &r->fv[fs2];
	struct cmp_source src[2] = {
		{ &r->run, &a->f, st1 < a->nst ? &a->st[st1] : NULL, st1 < a->nst },
		{ &r->run, &b->f, st2 < b->nst ? &b->st[st2] : NULL, st2 < b->nst },
	};
	struct cmp_view v;
	cmp_build(&v, src, 2, -1);
	const struct cmp_table *t = &v.t[0];
	for (size_t i = 0; i < 2; i++) {
		struct bline *l = bpage_line(p);
		if (src[i].nst)
			state_title(l, &r->fv[i ? fs2 : fs1], src[i].st);
		else
			bline_printf(l, BS_HEAD, "%s: no crash states", i ? b->f.fs : a->f.fs);
	}
	struct bline *l = bpage_line(p);
	bline_puts(l, BS_PLAIN, "marks under each file system's own model: ");
	for (size_t i = 0; i < t->ncol; i++)
		bline_printf(l, BS_PLAIN, "%s%s", i ? ", " : "", model_name(t->col[i].model));
	bpage_line(p);

	int pw = 8;
	for (size_t i = 0; i < t->nrow; i++) {
		int w = bstr_width(t->row[i].path, strlen(t->row[i].path)) + 1;
		if (w > pw)
			pw = w;
	}
	if (pw > width / 5)
		pw = width / 5 > 6 ? width / 5 : 6;
	int ncol = 2 + (t->program_k >= 0);
	int cw = (width - 2 - pw) / ncol;
	if (cw < 10)
		cw = 10;
	l = bpage_line(p);
	bline_puts(l, BS_HEAD, "  ");
	put_col(l, BS_HEAD, "", pw);
	if (t->program_k >= 0) {
		char h[32];
		snprintf(h, sizeof(h), "program, op %d", t->program_k);
		put_col(l, BS_HEAD, h, cw);
	}
	for (size_t i = 0; i < t->ncol; i++) {
		char h[96];
		snprintf(h, sizeof(h), "%s %s", t->col[i].head, t->col[i].sub);
		put_col(l, BS_HEAD, h, cw);
	}
	for (size_t r2 = 0; r2 < t->nrow; r2++) {
		const struct cmp_row *row = &t->row[r2];
		l = bpage_line(p);
		bline_puts(l, BS_DIFF, row->differs ? "* " : "  ");
		struct sbuf sp = SBUF_INIT;
		sbuf_add_escaped(&sp, row->path, strlen(row->path), 0);
		put_col(l, row->differs ? BS_DIFF : BS_PLAIN, sp.buf ? sp.buf : "", pw);
		sbuf_free(&sp);
		if (t->program_k >= 0)
			put_col(l, BS_PLAIN, row->program, cw);
		for (size_t i = 0; i < t->ncol; i++) {
			const struct cmp_cell *c = &row->cell[i];
			const char *mk = cmp_mark_str(c->mark);
			int ms = c->mark == CM_LOST ? BS_LOST : c->mark == CM_BROKEN ? BS_BROKEN : c->mark == CM_BONUS ? BS_BONUS
				 : c->mark == CM_KEPT ? BS_KEPT : BS_PLAIN;
			int start = bstr_width(l->text, l->len);
			int room = cw - 1 - (int)strlen(mk) - (c->naive ? 1 : 0) - (*mk ? 1 : 0);
			put_col(l, BS_PLAIN, c->text, room > 4 ? room : 4);
			/* the mark right after the words, as compare prints it */
			while (l->len && l->text[l->len - 1] == ' ')
				l->text[--l->len] = '\0';
			if (*mk) {
				bline_puts(l, BS_PLAIN, " ");
				bline_puts(l, ms, mk);
			}
			if (c->naive)
				bline_puts(l, BS_NAIVE, "!");
			bline_pad(l, start + cw);
		}
	}
	if (!t->nrow)
		bline_puts(bpage_line(p), BS_DIM, "  (the ops touched no object)");
	bpage_line(p);
	browse_legend_lines(p, cmp_legend, "", width);
	cmp_free(&v);
}

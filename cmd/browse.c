/*
 * browse.c - `crashlab browse`: a read-only curses browser of the runs a
 * database holds, in the conventions of tig and htop: the runs list, a
 * run's fs x crash-state matrix, a state, two file systems side by side at
 * one crash point; j/k and the arrows move, Enter opens, q goes back, Q
 * quits, / searches, n/N repeat it, ? shows the legend.
 *
 * The database is opened read-only (crashdb_open_readonly) and read once
 * per run opened; the pages come from browse-page.c. Driven by a key
 * script (--keys or CRASHLAB_BROWSE_KEYS) it needs no terminal: curses
 * draws on a fake one of a fixed size (--size or CRASHLAB_BROWSE_SIZE), and
 * after each key the screen is printed as text, read back from curses'
 * own window, with the rows' attributes, which is how it is tested.
 */
#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

#include <curses.h>

#include "cmd/browse.h"
#include "cmd/cmd.h"
#include "cmd/compare.h"
#include "cmd/render.h"
#include "crashdb/crashdb.h"
#include "host/msg.h"

static const char browse_usage[] =
	"usage: crashlab browse [--db FILE] [--keys SCRIPT [--size WxH]] [RUN]\n"
	"\n"
	"Browse the runs a database holds, in a terminal, without changing it (the\n"
	"file is opened read-only). RUN (a run id, 'last' or 'last~N') opens that\n"
	"run at once; q goes back from it to the list of runs.\n"
	"\n"
	"screens\n"
	"  runs      every run: id, start (UTC), status, findings, file systems,\n"
	"            workload. Enter opens the run under the cursor.\n"
	"  run       the file system x crash state matrix: one row per file system,\n"
	"            one cell per crash state, its character the state's worst\n"
	"            verdict under the models the file system is judged by (below);\n"
	"            under the matrix, the state under the cursor in a few lines.\n"
	"            Enter opens the state, c compares it with the next file system.\n"
	"  state     the crash state's observed tree beside the tree the program\n"
	"            had after the last op completed, each difference marked (*\n"
	"            held differently, - the program's is gone, + only in the crash\n"
	"            state); every verdict per model with its sentence; the op\n"
	"            timeline (+ persisted, ~ partly persisted, - lost, = superseded,\n"
	"            ? not visible, . no visible effect, x failed); the mount and\n"
	"            fsck output. c compares it with the next file system.\n"
	"  compare   two file systems side by side at the same crash point (the\n"
	"            first state of the other file system after the same last\n"
	"            completed op): what each holds, marked as 'crashlab compare'\n"
	"            marks it. c again takes the next file system.\n"
	"\n"
	"the matrix's characters\n"
	"  L  a promise of a selected model LOST\n"
	"  B  a universal rule broken (or no mount)\n"
	"  !  only a program assuming in-order persistence loses\n"
	"  +  kept beyond the promise\n"
	"  =  as promised\n"
	"  ?  not judged\n"
	"\n"
	"keys\n"
	"  j k, Down Up         move the cursor, or scroll\n"
	"  h l, Left Right      move in the matrix; on a state or a comparison, the\n"
	"                       previous or the next crash state\n"
	"  PgDn PgUp, Space b   a page down, up\n"
	"  g G, Home End        the first, the last\n"
	"  Enter                open\n"
	"  c                    compare with the next file system at the same crash point\n"
	"  /TEXT Enter          search this screen; n N the next, the previous match\n"
	"  ?                    the legend and the keys\n"
	"  q                    back (on the runs list: quit)\n"
	"  Q                    quit\n"
	"\n"
	"Colours are off with NO_COLOR set or TERM=dumb (a dumb terminal cannot move\n"
	"the cursor, so browse shows a screen only with --keys there).\n"
	"\n"
	"Without a terminal, --keys SCRIPT (or CRASHLAB_BROWSE_KEYS) feeds keys and\n"
	"prints the screen as text after each one: a line '--- KEY (WxH)', the\n"
	"screen's rows, then for each row with attributes '~ ROW ' and one character\n"
	"per column: a digit, the colour pair (1 kept, 2 bonus, 3 naive, 4 LOST, 5\n"
	"broken, 6 a difference), r reverse (the cursor), b bold. SCRIPT is keys\n"
	"separated by spaces: a character is that key, a longer word types its\n"
	"characters one by one, and <Enter> <Esc> <Tab> <Space> <BS> <Up> <Down>\n"
	"<Left> <Right> <PgUp> <PgDn> <Home> <End> name the others; <resize=WxH>\n"
	"resizes the screen. --size WxH (or CRASHLAB_BROWSE_SIZE; default 80x24)\n"
	"sets the screen's size.\n"
	"\n"
	"examples:\n"
	"  crashlab browse\n"
	"  crashlab browse last --db runs/ci.db\n"
	"  crashlab browse 1 --keys 'l l <Enter> c q Q'\n";

enum bscreen { SC_RUNS, SC_RUN, SC_STATE, SC_COMPARE };

struct view {
	enum bscreen sc;
	size_t cur;              /* runs: the run under the cursor */
	size_t fs, st;           /* run: the cell under the cursor; state, compare: the state */
	size_t fs2, st2;         /* compare: the other file system and its state */
	size_t top;              /* the first row shown (runs, state, compare) */
	size_t left;             /* run: the first state shown */
	struct bpage page;       /* state, compare: built for page_w columns */
	int page_w;
	long match;              /* state, compare: the line of the last match, -1 none */
};

struct browser {
	struct crashdb *db;
	struct run_row *runs;
	size_t nruns;
	struct bpage runs_page;
	int runs_w;              /* the width runs_page was made for */
	int64_t open_id;         /* the run in `run`, 0 none */
	struct brun run;
	struct view v[4];
	int depth;
	bool legend, color, quit;
	char query[200];
	char prompt[200];        /* the search being typed */
	bool prompting;
	char msg[2400];           /* the last line's message */
	/* key script */
	bool scripted;
};

/* ------------------------------------------------------------------ */
/* Styles */

enum { PAIR_KEPT = 1, PAIR_BONUS, PAIR_NAIVE, PAIR_LOST, PAIR_BROKEN, PAIR_DIFF };

static attr_t style_attr(const struct browser *b, int style)
{
	if (!b->color) {
		switch (style) {
		case BS_HEAD:
		case BS_LOST:
		case BS_BROKEN: return A_BOLD;
		default: return A_NORMAL;
		}
	}
	switch (style) {
	case BS_HEAD: return A_BOLD;
	case BS_DIM: return A_DIM;
	case BS_KEPT: return COLOR_PAIR(PAIR_KEPT);
	case BS_BONUS: return COLOR_PAIR(PAIR_BONUS);
	case BS_NAIVE: return COLOR_PAIR(PAIR_NAIVE);
	case BS_LOST: return COLOR_PAIR(PAIR_LOST) | A_BOLD;
	case BS_BROKEN: return COLOR_PAIR(PAIR_BROKEN) | A_BOLD;
	case BS_DIFF: return COLOR_PAIR(PAIR_DIFF);
	default: return A_NORMAL;
	}
}

static void setup_colors(struct browser *b)
{
	const char *term = getenv("TERM");
	b->color = !getenv("NO_COLOR") && term && *term && strcmp(term, "dumb") && has_colors();
	if (!b->color)
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_KEPT, COLOR_GREEN, -1);
	init_pair(PAIR_BONUS, COLOR_CYAN, -1);
	init_pair(PAIR_NAIVE, COLOR_YELLOW, -1);
	init_pair(PAIR_LOST, COLOR_RED, -1);
	init_pair(PAIR_BROKEN, COLOR_MAGENTA, -1);
	init_pair(PAIR_DIFF, COLOR_YELLOW, -1);
}

/* ------------------------------------------------------------------ */
/* Drawing */

/* Draw line l at row y from display column `left`, at most COLS columns;
 * extra attributes on every cell (the cursor's reverse). */
static void draw_text(const struct browser *b, int y, const char *text, const unsigned char *style, size_t len,
		      int left, attr_t extra)
{
	int x = 0, col = 0;
	mbstate_t ps;
	memset(&ps, 0, sizeof(ps));
	move(y, 0);
	for (size_t i = 0; i < len && x < COLS;) {
		wchar_t wc;
		size_t k = mbrtowc(&wc, text + i, len - i, &ps);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
			memset(&ps, 0, sizeof(ps));
			wc = L'?';
			k = 1;
		}
		int w = wcwidth(wc);
		if (w < 0) {
			wc = L'?';
			w = 1;
		}
		if (col >= left && x + w <= COLS) {
			attr_t a = (style ? style_attr(b, style[i]) : A_NORMAL) | extra;
			cchar_t cc;
			wchar_t s[2] = { wc, L'\0' };
			setcchar(&cc, s, a, (short)PAIR_NUMBER(a), NULL);
			mvadd_wch(y, x, &cc);
			x += w;
		}
		col += w;
		i += k;
	}
	if (extra & A_REVERSE) {
		attrset(extra);
		for (; x < COLS; x++)
			mvaddch(y, x, ' ');
		attrset(A_NORMAL);
	}
}

static void draw_line(const struct browser *b, int y, const struct bline *l, int left, attr_t extra)
{
	draw_text(b, y, l->text, l->style, l->len, left, extra);
}

static void draw_plain(const struct browser *b, int y, const char *s, attr_t a)
{
	draw_text(b, y, s, NULL, strlen(s), 0, a);
}

static struct view *top_view(struct browser *b)
{
	return &b->v[b->depth - 1];
}

/* Rows 1 .. LINES-2 hold the content, the legend takes the bottom of it. */
static const char keys_help[] = "keys: j/k move  Enter open  c compare  / search  n/N again  q back  Q quit";

static int legend_lines(const struct browser *b, enum bscreen sc, struct bpage *out)
{
	if (!b->legend)
		return 0;
	struct bline *l = bpage_line(out);
	bline_puts(l, BS_HEAD, "legend");
	if (sc == SC_RUN || sc == SC_RUNS) {
		for (size_t k = 0; k < REPORT_NCLASS; k++) {
			l = bpage_line(out);
			bline_puts(l, BS_PLAIN, "  ");
			bline_put(l, browse_class_style(report_classes[k].ch), &report_classes[k].ch, 1);
			bline_puts(l, BS_PLAIN, "  ");
			bline_puts(l, BS_PLAIN, report_classes[k].words);
		}
	} else if (sc == SC_STATE) {
		static const char marks[] = { '+', '~', '-', '=', '?', '.', 'x' };
		struct sbuf sb = SBUF_INIT;
		sbuf_adds(&sb, "ops:");
		for (size_t k = 0; k < sizeof(marks); k++)
			sbuf_addf(&sb, "   %c %s", marks[k], render_mark_word(marks[k]));
		sbuf_adds(&sb, "\ntree:   * held differently   - the program's is gone   + only in the crash state");
		browse_legend_lines(out, sb.buf, "  ", COLS);
		sbuf_free(&sb);
	} else {
		browse_legend_lines(out, cmp_legend, "  ", COLS);
	}
	bline_puts(bpage_line(out), BS_PLAIN, keys_help);
	return (int)out->n;
}

static void rebuild_page(struct browser *b, struct view *v)
{
	if (v->sc != SC_STATE && v->sc != SC_COMPARE)
		return;
	if (v->page_w == COLS && v->page.n)
		return;
	bpage_free(&v->page);
	v->page_w = COLS;
	if (v->sc == SC_STATE)
		browse_page_state(&v->page, &b->run, v->fs, v->st, COLS);
	else
		browse_page_compare(&v->page, &b->run, v->fs, v->st, v->fs2, v->st2, COLS);
}

/* The rows for content (between the title and the status line, above the legend). */
static int content_rows(const struct browser *b, int legend)
{
	int r = LINES - 2 - legend;
	return r > 1 ? r : 1;
}

static void keep_visible(size_t cur, size_t *top, int rows)
{
	if (cur < *top)
		*top = cur;
	if (rows > 0 && cur >= *top + (size_t)rows)
		*top = cur - (size_t)rows + 1;
}

static void title(struct browser *b, char *buf, size_t len)
{
	struct view *v = top_view(b);
	const struct brun *r = &b->run;
	switch (v->sc) {
	case SC_RUNS:
		snprintf(buf, len, "crashlab browse: %zu run%s", b->nruns, b->nruns == 1 ? "" : "s");
		break;
	case SC_RUN:
		snprintf(buf, len, "run %" PRId64 ": the crash states of each file system", r->run.id);
		break;
	case SC_STATE:
		snprintf(buf, len, "run %" PRId64 " > %s state %d", r->run.id, r->fv[v->fs].f.fs,
			 v->st < r->fv[v->fs].nst ? r->fv[v->fs].st[v->st].idx : -1);
		break;
	case SC_COMPARE:
		snprintf(buf, len, "run %" PRId64 " > %s beside %s", r->run.id, r->fv[v->fs].f.fs, r->fv[v->fs2].f.fs);
		break;
	}
}

static void runs_page(struct browser *b, int width);

static void draw_runs(struct browser *b, struct view *v, int rows)
{
	if (b->runs_w != COLS) {
		runs_page(b, COLS);
		b->runs_w = COLS;
	}
	draw_plain(b, 1, "  id  started (UTC)     status    findings  file systems         workload", A_BOLD);
	int n = rows - 1;
	keep_visible(v->cur, &v->top, n);
	for (int i = 0; i < n && v->top + (size_t)i < b->runs_page.n; i++) {
		size_t k = v->top + (size_t)i;
		draw_line(b, 2 + i, &b->runs_page.l[k], 0, k == v->cur ? A_REVERSE : 0);
	}
	if (!b->nruns)
		draw_plain(b, 2, "  (the database holds no runs)", A_NORMAL);
}

static void draw_run(struct browser *b, struct view *v, int rows)
{
	const struct brun *r = &b->run;
	struct bpage hp = { 0 };
	struct bline *l = bpage_line(&hp);
	bline_printf(l, BS_PLAIN, "run %" PRId64 "  ", r->run.id);
	bline_safe(l, BS_PLAIN, r->run.workload_file ? r->run.workload_file : "?");
	bline_printf(l, BS_PLAIN, "  %s  crash mode %s  %s", r->run.status ? r->run.status : "?",
		     r->run.crash_mode ? r->run.crash_mode : "?", r->run.accel ? r->run.accel : "?");
	draw_line(b, 1, l, 0, 0);
	bpage_free(&hp);
	/* the matrix: a 7-column label, then two columns per state */
	size_t maxst = 0;
	for (size_t i = 0; i < r->nfs; i++)
		if (r->fv[i].nst > maxst)
			maxst = r->fv[i].nst;
	int label = 8;
	size_t fit = COLS > label + 2 ? (size_t)(COLS - label) / 2 : 1;
	if (v->st < v->left)
		v->left = v->st;
	if (v->st >= v->left + fit)
		v->left = v->st - fit + 1;
	char buf[1024];
	int y = 3;
	if (y < 1 + rows) {
		/* scrolled: the label says which state the digits start at */
		char from[16];
		snprintf(from, sizeof(from), v->left ? "%zu.." : "state", v->left);
		int x = snprintf(buf, sizeof(buf), "%-*s", label, from);
		for (size_t k = v->left; k < maxst && k < v->left + fit && x + 3 < (int)sizeof(buf); k++)
			x += snprintf(buf + x, sizeof(buf) - (size_t)x, "%zu ", k % 10);
		draw_plain(b, y, buf, A_BOLD);
	}
	for (size_t i = 0; i < r->nfs && y + 1 + (int)i < 1 + rows; i++) {
		const struct fsview *f = &r->fv[i];
		int row = y + 1 + (int)i;
		snprintf(buf, sizeof(buf), "%-*.*s", label, label - 1, f->f.fs);
		draw_plain(b, row, buf, i == v->fs ? A_BOLD : A_NORMAL);
		if (!f->nst) {
			snprintf(buf, sizeof(buf), "%-*.*s(no crash states: %s)", label, label - 1, f->f.fs,
				 f->f.outcome ? f->f.outcome : "?");
			draw_plain(b, row, buf, i == v->fs ? A_BOLD : A_NORMAL);
			continue;
		}
		for (size_t k = v->left; k < f->nst && k < v->left + fit; k++) {
			char ch;
			report_state_class(f, &f->st[k], &ch);
			attr_t a = style_attr(b, browse_class_style(ch));
			if (i == v->fs && k == v->st)
				a |= A_REVERSE;
			attrset(a);
			mvaddch(row, label + 2 * (int)(k - v->left), (chtype)(unsigned char)ch);
			attrset(A_NORMAL);
		}
	}
	int dy = y + 2 + (int)r->nfs;
	struct bpage cell = { 0 };
	browse_page_cell(&cell, r, v->fs, v->st, COLS);
	for (size_t i = 0; i < cell.n && dy + (int)i < 1 + rows; i++)
		draw_line(b, dy + (int)i, &cell.l[i], 0, 0);
	bpage_free(&cell);
}

static void draw_page(struct browser *b, struct view *v, int rows)
{
	rebuild_page(b, v);
	if (v->page.n > (size_t)rows && v->top > v->page.n - (size_t)rows)
		v->top = v->page.n - (size_t)rows;
	if (v->page.n <= (size_t)rows)
		v->top = 0;
	for (int i = 0; i < rows && v->top + (size_t)i < v->page.n; i++) {
		size_t k = v->top + (size_t)i;
		draw_line(b, 1 + i, &v->page.l[k], 0, (long)k == v->match ? A_REVERSE : 0);
	}
}

static void draw(struct browser *b)
{
	erase();
	struct view *v = top_view(b);
	struct bpage leg = { 0 };
	int nleg = legend_lines(b, v->sc, &leg);
	if (nleg > LINES - 4)
		nleg = LINES - 4 > 0 ? LINES - 4 : 0;
	int rows = content_rows(b, nleg);
	char t[256];
	title(b, t, sizeof(t));
	draw_plain(b, 0, t, A_BOLD | A_REVERSE);
	switch (v->sc) {
	case SC_RUNS: draw_runs(b, v, rows); break;
	case SC_RUN: draw_run(b, v, rows); break;
	default: draw_page(b, v, rows); break;
	}
	for (int i = 0; i < nleg; i++)
		draw_line(b, 1 + rows + i, &leg.l[i], 0, 0);
	bpage_free(&leg);
	char status[2600];
	if (b->prompting)
		snprintf(status, sizeof(status), "/%s", b->prompt);
	else if (b->msg[0])
		snprintf(status, sizeof(status), "%s", b->msg);
	else if (v->sc == SC_STATE || v->sc == SC_COMPARE) {
		size_t n = v->page.n, last = v->top + (size_t)rows < n ? v->top + (size_t)rows : n;
		snprintf(status, sizeof(status), "lines %zu-%zu of %zu  h/l state  c compare  / search  ? legend  q back",
			 n ? v->top + 1 : 0, last, n);
	} else if (v->sc == SC_RUN)
		snprintf(status, sizeof(status), "Enter open  c compare  / search  ? legend  q back  Q quit");
	else
		snprintf(status, sizeof(status), "Enter open  / search  ? legend  q quit");
	draw_text(b, LINES - 1, status, NULL, strlen(status), 0, 0);
	if (b->prompting) {
		curs_set(1);
		move(LINES - 1, 1 + (int)strlen(b->prompt) < COLS ? 1 + (int)strlen(b->prompt) : COLS - 1);
	} else {
		curs_set(0);
	}
	refresh();
}

/* ------------------------------------------------------------------ */
/* Moving */

static void push(struct browser *b, struct view nv)
{
	if (b->depth >= 4)
		return;
	nv.match = -1;
	b->v[b->depth++] = nv;
}

static void pop(struct browser *b)
{
	if (b->depth <= 1) {
		b->quit = true;
		return;
	}
	struct view *v = top_view(b), *parent = &b->v[b->depth - 2];
	/* the matrix's cursor follows the state h/l went to */
	if (parent->sc == SC_RUN && (v->sc == SC_STATE || v->sc == SC_COMPARE)) {
		parent->fs = v->fs;
		parent->st = v->st;
	}
	bpage_free(&v->page);
	b->depth--;
}

static int open_run(struct browser *b, int64_t id, struct errbuf *e)
{
	if (b->open_id == id)
		return 0;
	struct brun r;
	if (browse_read_run(b->db, id, &r, e) < 0)
		return -1;
	if (b->open_id)
		browse_run_free(&b->run);
	b->run = r;
	b->open_id = id;
	return 0;
}

static void enter_run(struct browser *b, size_t i)
{
	struct errbuf e;
	if (i >= b->nruns)
		return;
	if (open_run(b, b->runs[i].id, &e) < 0) {
		snprintf(b->msg, sizeof(b->msg), "%s", e.msg);
		return;
	}
	struct view nv = { .sc = SC_RUN };
	push(b, nv);
}

static void clamp_cell(struct browser *b, struct view *v)
{
	if (!b->run.nfs)
		return;
	if (v->fs >= b->run.nfs)
		v->fs = b->run.nfs - 1;
	size_t n = b->run.fv[v->fs].nst;
	if (n && v->st >= n)
		v->st = n - 1;
}

/* The next file system after fs that has states (fs itself when none). */
static size_t next_fs(const struct brun *r, size_t fs)
{
	for (size_t k = 1; k < r->nfs; k++) {
		size_t i = (fs + k) % r->nfs;
		if (r->fv[i].nst)
			return i;
	}
	return fs;
}

static void compare(struct browser *b)
{
	struct view *v = top_view(b);
	const struct brun *r = &b->run;
	if (v->fs >= r->nfs || v->st >= r->fv[v->fs].nst) {
		snprintf(b->msg, sizeof(b->msg), "nothing to compare: %s has no crash states",
			 v->fs < r->nfs ? r->fv[v->fs].f.fs : "this file system");
		return;
	}
	if (v->sc == SC_COMPARE) { /* the next file system on the right */
		size_t f2 = next_fs(r, v->fs2);
		if (f2 == v->fs)
			f2 = next_fs(r, f2);
		v->fs2 = f2;
		v->st2 = browse_same_point(r, v->fs, v->st, f2);
		bpage_free(&v->page);
		v->top = 0;
		v->match = -1;
		return;
	}
	size_t f2 = next_fs(r, v->fs);
	if (f2 == v->fs) {
		snprintf(b->msg, sizeof(b->msg), "nothing to compare with: no other file system has crash states");
		return;
	}
	struct view nv = { .sc = SC_COMPARE, .fs = v->fs, .st = v->st, .fs2 = f2 };
	nv.st2 = browse_same_point(r, v->fs, v->st, f2);
	push(b, nv);
}

static void move_by(struct browser *b, long dy, long dx)
{
	struct view *v = top_view(b);
	int rows = content_rows(b, 0);
	switch (v->sc) {
	case SC_RUNS: {
		long c = (long)v->cur + dy;
		if (c < 0)
			c = 0;
		if (b->nruns && c >= (long)b->nruns)
			c = (long)b->nruns - 1;
		v->cur = (size_t)c;
		break;
	}
	case SC_RUN: {
		long f = (long)v->fs + dy, s = (long)v->st + dx;
		if (f < 0)
			f = 0;
		if (s < 0)
			s = 0;
		v->fs = (size_t)f;
		v->st = (size_t)s;
		clamp_cell(b, v);
		break;
	}
	default: {
		long t = (long)v->top + dy;
		long max = (long)v->page.n - rows;
		if (t > max)
			t = max;
		if (t < 0)
			t = 0;
		v->top = (size_t)t;
		break;
	}
	}
}

/* A state or a comparison: the next (dir 1) or previous state of the
 * (left) file system; a comparison takes the other one's at that point. */
static void step_state(struct browser *b, struct view *v, int dir)
{
	size_t n = b->run.fv[v->fs].nst;
	if (dir > 0 ? v->st + 1 >= n : v->st == 0) {
		snprintf(b->msg, sizeof(b->msg), "%s has no state %s this one", b->run.fv[v->fs].f.fs,
			 dir > 0 ? "after" : "before");
		return;
	}
	v->st = dir > 0 ? v->st + 1 : v->st - 1;
	if (v->sc == SC_COMPARE)
		v->st2 = browse_same_point(&b->run, v->fs, v->st, v->fs2);
	bpage_free(&v->page);
	v->top = 0;
	v->match = -1;
}

/* ------------------------------------------------------------------ */
/* Search */

/* Does item i of the screen hold the query? */
static bool item_has(struct browser *b, struct view *v, size_t i)
{
	const char *q = b->query;
	switch (v->sc) {
	case SC_RUNS: return strcasestr(b->runs_page.l[i].text, q) != NULL;
	case SC_RUN: {
		/* the cells, file system by file system: what the cell's lines say */
		size_t fs = 0, st = i;
		while (fs < b->run.nfs && st >= b->run.fv[fs].nst)
			st -= b->run.fv[fs++].nst;
		if (fs >= b->run.nfs)
			return false;
		/* the cell's title and class (the first two lines below the
		 * matrix), then the sentences of its verdicts */
		struct bpage p = { 0 };
		browse_page_cell(&p, &b->run, fs, st, 1000);
		bool hit = false;
		for (size_t k = 0; k < p.n && k < 2 && !hit; k++)
			hit = strcasestr(p.l[k].text, q) != NULL;
		const struct state_result *s = &b->run.fv[fs].st[st];
		for (size_t k = 0; k < s->judge.n && !hit; k++)
			hit = strcasestr(s->judge.v[k].reason, q) != NULL;
		bpage_free(&p);
		return hit;
	}
	default: return strcasestr(v->page.l[i].text, q) != NULL;
	}
}

static size_t item_count(struct browser *b, struct view *v)
{
	switch (v->sc) {
	case SC_RUNS: return b->runs_page.n;
	case SC_RUN: {
		size_t n = 0;
		for (size_t i = 0; i < b->run.nfs; i++)
			n += b->run.fv[i].nst;
		return n;
	}
	default: rebuild_page(b, v); return v->page.n;
	}
}

static size_t item_at(struct browser *b, struct view *v)
{
	switch (v->sc) {
	case SC_RUNS: return v->cur;
	case SC_RUN: {
		size_t n = v->st;
		for (size_t i = 0; i < v->fs && i < b->run.nfs; i++)
			n += b->run.fv[i].nst;
		return n;
	}
	default: return v->match >= 0 ? (size_t)v->match : v->top;
	}
}

static void go_item(struct browser *b, struct view *v, size_t i)
{
	switch (v->sc) {
	case SC_RUNS: v->cur = i; break;
	case SC_RUN: {
		size_t fs = 0;
		while (fs < b->run.nfs && i >= b->run.fv[fs].nst)
			i -= b->run.fv[fs++].nst;
		v->fs = fs;
		v->st = i;
		break;
	}
	default: {
		v->match = (long)i;
		int rows = content_rows(b, 0);
		if (i < v->top || i >= v->top + (size_t)rows)
			v->top = i > 2 ? i - 2 : 0;
		break;
	}
	}
}

/* The next (dir 1) or previous (-1) item holding the query; first: the
 * search starts at the current item itself. */
static void search(struct browser *b, int dir, bool first)
{
	struct view *v = top_view(b);
	if (!b->query[0]) {
		snprintf(b->msg, sizeof(b->msg), "no search yet: / starts one");
		return;
	}
	size_t n = item_count(b, v);
	if (!n) {
		snprintf(b->msg, sizeof(b->msg), "not found: %s", b->query);
		return;
	}
	size_t at = item_at(b, v);
	bool from_here = first && !(v->sc == SC_STATE || v->sc == SC_COMPARE ? v->match >= 0 : false);
	for (size_t k = from_here ? 0 : 1; k <= n; k++) {
		size_t i = dir > 0 ? (at + k) % n : (at + n - k % n) % n;
		if (item_has(b, v, i)) {
			bool wrapped = dir > 0 ? i < at : i > at;
			go_item(b, v, i);
			snprintf(b->msg, sizeof(b->msg), "/%s%s", b->query,
				 i == at && !from_here ? "  (the only match)" : wrapped ? "  (search wrapped)" : "");
			return;
		}
	}
	snprintf(b->msg, sizeof(b->msg), "not found: %s", b->query);
}

/* ------------------------------------------------------------------ */
/* Keys */

#define KEY_CTRL(c) ((c) & 0x1f)

static void handle_prompt(struct browser *b, int key)
{
	size_t n = strlen(b->prompt);
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		b->prompting = false;
		if (n) {
			snprintf(b->query, sizeof(b->query), "%s", b->prompt);
			struct view *v = top_view(b);
			v->match = -1;
			search(b, 1, true);
		}
	} else if (key == 27) {
		b->prompting = false;
	} else if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (n)
			b->prompt[n - 1] = '\0';
		else
			b->prompting = false;
	} else if (key >= 0x20 && key < 0x7f && n + 1 < sizeof(b->prompt)) {
		b->prompt[n] = (char)key;
		b->prompt[n + 1] = '\0';
	}
}

static void handle_key(struct browser *b, int key)
{
	if (b->prompting) {
		handle_prompt(b, key);
		return;
	}
	b->msg[0] = '\0';
	struct view *v = top_view(b);
	int page = content_rows(b, 0) - 1;
	if (page < 1)
		page = 1;
	switch (key) {
	case 'Q': b->quit = true; break;
	case 'q': pop(b); break;
	case 'j': case KEY_DOWN: move_by(b, 1, 0); break;
	case 'k': case KEY_UP: move_by(b, -1, 0); break;
	case 'l': case KEY_RIGHT:
		if (v->sc == SC_RUN)
			move_by(b, 0, 1);
		else if (v->sc != SC_RUNS)
			step_state(b, v, 1);
		break;
	case 'h': case KEY_LEFT:
		if (v->sc == SC_RUN)
			move_by(b, 0, -1);
		else if (v->sc != SC_RUNS)
			step_state(b, v, -1);
		break;
	case ' ': case KEY_NPAGE: case KEY_CTRL('f'):
		if (v->sc == SC_RUN)
			move_by(b, 0, page);
		else
			move_by(b, page, 0);
		break;
	case 'b': case KEY_PPAGE: case KEY_CTRL('b'):
		if (v->sc == SC_RUN)
			move_by(b, 0, -page);
		else
			move_by(b, -page, 0);
		break;
	case 'g': case KEY_HOME:
		if (v->sc == SC_RUN)
			v->st = 0;
		else
			move_by(b, -(1L << 30), 0);
		break;
	case 'G': case KEY_END:
		if (v->sc == SC_RUN)
			move_by(b, 0, 1L << 30);
		else
			move_by(b, 1L << 30, 0);
		break;
	case '\n': case '\r': case KEY_ENTER:
		if (v->sc == SC_RUNS)
			enter_run(b, v->cur);
		else if (v->sc == SC_RUN && v->fs < b->run.nfs && v->st < b->run.fv[v->fs].nst) {
			struct view nv = { .sc = SC_STATE, .fs = v->fs, .st = v->st };
			push(b, nv);
		}
		break;
	case 'c':
		if (v->sc != SC_RUNS)
			compare(b);
		break;
	case '?': b->legend = !b->legend; break;
	case '/':
		b->prompting = true;
		b->prompt[0] = '\0';
		break;
	case 'n': search(b, 1, false); break;
	case 'N': search(b, -1, false); break;
	case KEY_RESIZE: break;
	default: break;
	}
}

/* ------------------------------------------------------------------ */
/* The key script */

static const struct {
	const char *name;
	int key;
} key_names[] = {
	{ "Enter", '\n' }, { "Esc", 27 }, { "Tab", '\t' }, { "Space", ' ' }, { "BS", KEY_BACKSPACE },
	{ "Up", KEY_UP }, { "Down", KEY_DOWN }, { "Left", KEY_LEFT }, { "Right", KEY_RIGHT },
	{ "PgUp", KEY_PPAGE }, { "PgDn", KEY_NPAGE }, { "Home", KEY_HOME }, { "End", KEY_END },
};

static int parse_wxh(const char *s, int *w, int *h)
{
	char *end;
	long a = strtol(s, &end, 10);
	if (end == s || (*end != 'x' && *end != 'X'))
		return -1;
	const char *p = end + 1;
	long c = strtol(p, &end, 10);
	if (end == p || *end || a < 16 || c < 6 || a > 1000 || c > 1000)
		return -1;
	*w = (int)a;
	*h = (int)c;
	return 0;
}

/* A script token: its keys (a resize is -1 with *w, *h). 0 keys when bad. */
static size_t token_keys(const char *tok, int *keys, size_t max, int *w, int *h)
{
	size_t n = strlen(tok);
	if (n > 2 && tok[0] == '<' && tok[n - 1] == '>') {
		if (!strncmp(tok, "<resize=", 8)) {
			char *sz = xstrndup(tok + 8, n - 9);
			int ok = parse_wxh(sz, w, h) == 0;
			free(sz);
			if (!ok)
				return 0;
			keys[0] = -1;
			return 1;
		}
		for (size_t i = 0; i < ARRAY_SIZE(key_names); i++)
			if (strlen(key_names[i].name) == n - 2 && !strncmp(tok + 1, key_names[i].name, n - 2)) {
				keys[0] = key_names[i].key;
				return 1;
			}
		return 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < n && k < max; i++) {
		unsigned char c = (unsigned char)tok[i];
		if (c < 0x20 || c >= 0x7f)
			return 0;
		keys[k++] = c;
	}
	return k;
}

static void dump_screen(const char *what)
{
	printf("--- %s (%dx%d)\n", what, COLS, LINES);
	wchar_t *wbuf = xcalloc((size_t)COLS + 1, sizeof(*wbuf));
	char *attrs = xcalloc((size_t)COLS + 1, 1);
	struct strvec arows = STRVEC_INIT;
	for (int y = 0; y < LINES; y++) {
		int n = mvinnwstr(y, 0, wbuf, COLS);
		if (n < 0)
			n = 0;
		struct sbuf sb = SBUF_INIT;
		for (int i = 0; i < n && wbuf[i]; i++) {
			char mb[MB_LEN_MAX];
			mbstate_t ps;
			memset(&ps, 0, sizeof(ps));
			size_t k = wcrtomb(mb, wbuf[i], &ps);
			if (k == (size_t)-1)
				sbuf_adds(&sb, "?");
			else
				sbuf_add(&sb, mb, k);
		}
		while (sb.len && sb.buf[sb.len - 1] == ' ')
			sb.buf[--sb.len] = '\0';
		printf("%s\n", sb.buf ? sb.buf : "");
		sbuf_free(&sb);
		/* attributes, column by column */
		bool any = false;
		int last = -1;
		for (int x = 0; x < COLS; x++) {
			cchar_t cc;
			char a = ' ';
			if (mvin_wch(y, x, &cc) == OK) {
				attr_t at;
				short pair;
				wchar_t wc[CCHARW_MAX + 1];
				getcchar(&cc, wc, &at, &pair, NULL);
				if (at & A_REVERSE)
					a = 'r';
				else if (pair > 0)
					a = (char)('0' + pair);
				else if (at & A_BOLD)
					a = 'b';
			}
			attrs[x] = a;
			if (a != ' ') {
				any = true;
				last = x;
			}
		}
		if (any) {
			attrs[last + 1] = '\0';
			strvec_pushf(&arows, "~ %2d %s", y, attrs);
		}
	}
	for (size_t i = 0; i < arows.n; i++)
		printf("%s\n", arows.v[i]);
	strvec_free(&arows);
	free(attrs);
	free(wbuf);
	fflush(stdout);
}

/* ------------------------------------------------------------------ */

static void runs_page(struct browser *b, int width)
{
	bpage_free(&b->runs_page);
	for (size_t i = 0; i < b->nruns; i++) {
		const struct run_row *r = &b->runs[i];
		struct bline *l = bpage_line(&b->runs_page);
		char when[17];
		snprintf(when, sizeof(when), "%s", r->started_at ? r->started_at : "?");
		if (strlen(when) > 10 && when[10] == 'T')
			when[10] = ' ';
		bline_printf(l, BS_PLAIN, "%4" PRId64 "  %-16s  ", r->id, when);
		struct sbuf st = SBUF_INIT;
		sbuf_add_escaped(&st, r->status ? r->status : "?", strlen(r->status ? r->status : "?"), SBUF_ESC_PROSE);
		bline_printf(l, BS_PLAIN, "%-8.8s", st.buf ? st.buf : "");
		sbuf_free(&st);
		if (r->unjudged)
			bline_printf(l, BS_DIM, "  %8s", "?");
		else
			bline_printf(l, r->findings ? BS_LOST : BS_PLAIN, "  %8" PRId64, r->findings);
		bline_puts(l, BS_PLAIN, "  ");
		int start = bstr_width(l->text, l->len);
		bline_safe(l, BS_PLAIN, r->fs ? r->fs : "-");
		bline_pad(l, start + 19);
		bline_puts(l, BS_PLAIN, "  ");
		/* the workload in what is left, its end kept when it does not fit */
		struct sbuf wl = SBUF_INIT;
		const char *wf = r->workload_file ? r->workload_file : "?";
		sbuf_add_escaped(&wl, wf, strlen(wf), SBUF_ESC_PROSE);
		if (r->options) {
			sbuf_adds(&wl, " ");
			sbuf_add_escaped(&wl, r->options, strlen(r->options), SBUF_ESC_PROSE);
		}
		int room = width - bstr_width(l->text, l->len);
		const char *t = wl.buf ? wl.buf : "";
		if (room >= 8 && bstr_width(t, strlen(t)) > room) {
			size_t n = strlen(t), cut = 0;
			while (cut < n && bstr_width(t + cut, n - cut) > room - 1)
				cut++;
			while (cut < n && ((unsigned char)t[cut] & 0xc0) == 0x80)
				cut++;
			bline_puts(l, BS_DIM, "~");
			t += cut;
		}
		bline_puts(l, BS_PLAIN, t);
		sbuf_free(&wl);
	}
}

static void utf8_locale(void)
{
	setlocale(LC_ALL, "");
	const char *cs = nl_langinfo(CODESET);
	if (!cs || strcmp(cs, "UTF-8"))
		if (!setlocale(LC_CTYPE, "C.UTF-8"))
			setlocale(LC_CTYPE, "");
}

int cmd_browse(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *keys = NULL, *size = NULL;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "keys", &keys, "SCRIPT", "feed keys, print the screen after each one" },
		{ OPT_STRING, 0, "size", &size, "WxH", "the screen's size with --keys (default 80x24)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const char *cmd = ctx->name;
	int n = cmd_parse(ctx, argc, argv, opts, browse_usage, 0);
	if (n > 1)
		usage_error(cmd, "unexpected argument '%s' (browse takes at most one run)", argv[1]);
	if (!keys)
		keys = getenv("CRASHLAB_BROWSE_KEYS");
	if (!size)
		size = getenv("CRASHLAB_BROWSE_SIZE");
	int w = 80, h = 24;
	if (size && parse_wxh(size, &w, &h) < 0)
		usage_error(cmd, "--size wants WIDTHxHEIGHT (at least 16x6), e.g. 80x24, not '%s'", size);
	struct strvec script = STRVEC_INIT;
	if (keys) {
		strvec_split(&script, keys);
		for (size_t i = 0; i < script.n; i++) {
			int k[256], tw, th;
			if (!token_keys(script.v[i], k, ARRAY_SIZE(k), &tw, &th))
				usage_error(cmd, "the key script has '%s', which is no key (see 'crashlab browse --help')",
					    script.v[i]);
		}
	} else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		die_code(EXIT_USAGE, "browse needs a terminal; without one, give it keys with --keys SCRIPT (or "
			 "CRASHLAB_BROWSE_KEYS), or use 'crashlab report' or 'crashlab show'");
	}

	struct browser b = { 0 };
	struct errbuf e;
	if (crashdb_open_readonly(ctx->db_path ? ctx->db_path : CRASHDB_DEFAULT, &b.db, &e) < 0)
		die_err(&e);
	if (crashdb_list_runs(b.db, &b.runs, &b.nruns, &e) < 0)
		die_err(&e);
	struct view first = { .sc = SC_RUNS };
	push(&b, first);
	if (n == 1) {
		int64_t id;
		if (crashdb_resolve_run(b.db, argv[0], &id, &e) < 0) {
			if (e.code == EXIT_USAGE)
				usage_error(cmd, "%s", e.msg);
			die_err(&e);
		}
		for (size_t i = 0; i < b.nruns; i++)
			if (b.runs[i].id == id)
				top_view(&b)->cur = i;
		if (open_run(&b, id, &e) < 0)
			die_err(&e);
		struct view nv = { .sc = SC_RUN };
		push(&b, nv);
	}

	utf8_locale();
	SCREEN *scr;
	FILE *fin = NULL, *fout = NULL;
	if (keys) {
		b.scripted = true;
		fout = fopen("/dev/null", "w");
		fin = fopen("/dev/null", "r");
		if (!fout || !fin)
			die_code(EXIT_SOFTWARE, "cannot open /dev/null: %s", strerror(errno));
		/* A fake terminal: curses draws for xterm into /dev/null, sized by us. */
		scr = newterm("xterm", fout, fin);
	} else {
		scr = newterm(NULL, stdout, stdin);
	}
	if (!scr)
		die_code(EXIT_USAGE, "cannot use the terminal '%s' (TERM); set TERM to your terminal's type",
			 getenv("TERM") ? getenv("TERM") : "");
	set_term(scr);
	/* A terminal that cannot move the cursor (TERM=dumb) cannot show a
	 * screen; the fake one of a key script always can. */
	const char *cup = tigetstr("cup");
	if (!keys && (!cup || cup == (char *)-1)) {
		endwin();
		delscreen(scr);
		die_code(EXIT_USAGE, "the terminal '%s' cannot move the cursor, which browse needs; set TERM to your "
			 "terminal's type, or use 'crashlab report' or 'crashlab show'",
			 getenv("TERM") ? getenv("TERM") : "");
	}
	if (keys)
		resizeterm(h, w);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	setup_colors(&b);

	if (keys) {
		draw(&b);
		dump_screen("start");
		for (size_t i = 0; i < script.n && !b.quit; i++) {
			int k[256], tw = 0, th = 0;
			size_t nk = token_keys(script.v[i], k, ARRAY_SIZE(k), &tw, &th);
			for (size_t j = 0; j < nk && !b.quit; j++) {
				if (k[j] == -1) {
					resizeterm(th, tw);
					handle_key(&b, KEY_RESIZE);
				} else {
					handle_key(&b, k[j]);
				}
			}
			if (b.quit) {
				printf("--- %s: quit\n", script.v[i]);
				break;
			}
			draw(&b);
			dump_screen(script.v[i]);
		}
	} else {
		while (!b.quit) {
			draw(&b);
			int key = getch();
			if (key == ERR)
				continue;
			handle_key(&b, key);
		}
	}
	endwin();
	delscreen(scr);
	if (fout)
		fclose(fout);
	if (fin)
		fclose(fin);
	strvec_free(&script);
	for (int i = 0; i < b.depth; i++)
		bpage_free(&b.v[i].page);
	bpage_free(&b.runs_page);
	if (b.open_id)
		browse_run_free(&b.run);
	run_rows_free(b.runs, b.nruns);
	crashdb_close(b.db);
	return 0;
}

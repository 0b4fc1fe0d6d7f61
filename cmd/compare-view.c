/*
 * compare-view.c - building the comparison view (compare.h) from stored fs
 * runs: which states are shown (the final one, the worst one), which objects
 * are rows, what each cell says, and its mark from the stored verdicts. The
 * program column comes from the reference simulator (judge/sim.h) replayed
 * on the fs run's own op results.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/compare.h"
#include "cmd/render.h"
#include "core/tree.h"
#include "core/util.h"
#include "judge/sim.h"

const char cmp_legend[] = "= promised, kept   + kept, not promised   - gone, not promised   LOST promised, gone\n"
			  "! a program that assumes its ops reach the disk in order loses here   * the columns differ";

const char *cmp_mark_str(enum cmp_mark m)
{
	switch (m) {
	case CM_KEPT: return "=";
	case CM_BONUS: return "+";
	case CM_GONE: return "-";
	case CM_LOST: return "LOST";
	case CM_BROKEN: return "BROKEN";
	case CM_NONE: break;
	}
	return "";
}

static const struct tree_node *find_node(const struct tree_node *v, size_t n, const char *path)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(v[mid].path, path);
		if (!c)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Trees are sorted bytewise by path; a tree that is not is searched whole. */
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

/* The ops' data in a blocks field: "op 5's data", "ops 3, 5 data", "zeros", with holes and foreign bytes named. */
struct blocks_sum {
	int ops[4];
	size_t nops;
	bool more_ops, zeros, other, unreadable;
};

static void sum_block(void *ctx, const char *tok, size_t len, size_t count)
{
	struct blocks_sum *b = ctx;
	if (len == 1 && tok[0] == 'z')
		b->zeros = true;
	else if (len == 1 && tok[0] == 'e')
		b->unreadable = true;
	else if (tok[0] == 'p') {
		int op = atoi(tok + 1);
		for (size_t i = 0; i < b->nops; i++)
			if (b->ops[i] == op)
				return;
		if (b->nops < 4)
			b->ops[b->nops++] = op;
		else
			b->more_ops = true;
	} else
		b->other = true;
}

static void describe_file(const struct tree_node *t, struct sbuf *sb)
{
	char sz[32];
	if (t->size == 0) {
		sbuf_adds(sb, "empty");
		return;
	}
	if (t->content && t->content_len == t->size && render_printable_ish(t->content, t->content_len)) {
		sbuf_add_escaped(sb, t->content, t->content_len, SBUF_ESC_QUOTED);
		return;
	}
	struct blocks_sum b = { 0 };
	if (t->blocks)
		render_block_runs(t->blocks, sum_block, &b);
	fmt_bytes(t->size, sz, sizeof(sz));
	if (b.nops == 1 && !b.zeros && !b.other && !b.unreadable) {
		sbuf_addf(sb, "op %d's data, %s", b.ops[0], sz);
		return;
	}
	if (b.nops) {
		sbuf_adds(sb, b.nops == 1 ? "op " : "ops ");
		for (size_t i = 0; i < b.nops; i++)
			sbuf_addf(sb, "%s%d", i ? "," : "", b.ops[i]);
		sbuf_adds(sb, b.more_ops ? ",..." : "");
		sbuf_adds(sb, b.zeros ? "+zeros" : "");
		sbuf_adds(sb, b.other ? "+other" : "");
	} else if (b.zeros && !b.other)
		sbuf_adds(sb, "zeros");
	else
		sbuf_adds(sb, "other data");
	sbuf_adds(sb, b.unreadable ? "+unreadable" : "");
	sbuf_addf(sb, ", %s", sz);
}

void cmp_describe(const struct tree_node *nodes, size_t n, const struct tree_node *t, char *buf, size_t len)
{
	struct sbuf sb = SBUF_INIT;
	if (!t)
		sbuf_adds(&sb, "gone");
	else if (t->type == 'f')
		describe_file(t, &sb);
	else if (t->type == 'l') {
		sbuf_adds(&sb, "-> ");
		if (t->target)
			sbuf_add_escaped(&sb, t->target, strlen(t->target), 0);
	} else if (t->type == 'd') {
		size_t pl = strlen(t->path), k = 0;
		sbuf_adds(&sb, "dir:");
		for (size_t i = 0; i < n; i++) {
			const char *p = nodes[i].path;
			if (strncmp(p, t->path, pl) || p[pl] != '/' || strchr(p + pl + 1, '/'))
				continue;
			sbuf_adds(&sb, " ");
			sbuf_add_escaped(&sb, p + pl + 1, strlen(p + pl + 1), 0);
			k++;
		}
		if (!k)
			sbuf_adds(&sb, " empty");
	} else
		sbuf_adds(&sb, "special file");
	if (t && t->xattrs)
		sbuf_adds(&sb, " +xattrs");
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "");
	if (sb.len >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	sbuf_free(&sb);
}

/* Does a verdict's object (a path, or "PATH block 3", "PATH xattr user.k", "PATH size") name path? */
static bool names(const char *vpath, const char *path)
{
	size_t l = strlen(path);
	return !strncmp(vpath, path, l) && (vpath[l] == '\0' || vpath[l] == ' ');
}

static int mark_rank(enum cmp_mark m)
{
	static const int rank[] = { [CM_NONE] = 0, [CM_KEPT] = 1, [CM_BONUS] = 2, [CM_GONE] = 3, [CM_LOST] = 4,
				    [CM_BROKEN] = 5 };
	return rank[m];
}

static void mark_cell(struct cmp_cell *c, const struct state_result *s, const char *path, int model)
{
	c->mark = CM_NONE;
	c->naive = false;
	for (size_t i = 0; i < s->judge.n; i++) {
		const struct verdict *v = &s->judge.v[i];
		if (!names(v->path, path))
			continue;
		enum cmp_mark m = CM_NONE;
		if (v->model == MODEL_UNIVERSAL && v->kind == V_BROKEN)
			m = CM_BROKEN;
		else if (v->model == model)
			m = v->kind == V_KEPT ? CM_KEPT : v->kind == V_BONUS ? CM_BONUS
			    : v->kind == V_GONE ? CM_GONE : v->kind == V_LOST ? CM_LOST : CM_NONE;
		if (mark_rank(m) > mark_rank(c->mark))
			c->mark = m;
		if (v->model == MODEL_SEQUENTIAL && v->kind == V_LOST && model != MODEL_SEQUENTIAL)
			c->naive = true;
	}
}

/* How bad a state is under model: findings first, then where the naive program loses, then what is gone. */
static long long badness(const struct state_result *s, int model)
{
	const size_t (*c)[V_COUNT] = s->judge.count;
	return 1000000LL * (long long)(c[model][V_LOST] + c[MODEL_UNIVERSAL][V_BROKEN] + (s->check.mount_ok ? 0 : 1)) +
	       1000LL * (long long)c[MODEL_SEQUENTIAL][V_LOST] + (long long)c[model][V_GONE];
}

static const struct state_result *final_state(const struct cmp_source *s)
{
	const struct state_result *f = NULL;
	for (size_t i = 0; i < s->nst; i++)
		if (!f || (s->st[i].kind && !strcmp(s->st[i].kind, "final")) || s->st[i].point > f->point)
			f = &s->st[i];
	return f;
}

static const struct state_result *worst_state(const struct cmp_source *s, int model)
{
	const struct state_result *w = NULL;
	for (size_t i = 0; i < s->nst; i++)
		if (!w || badness(&s->st[i], model) > badness(w, model))
			w = &s->st[i];
	return w;
}

/* The `mark` label in effect at op k: the last mark op at or before it. */
static const char *label_at(const struct fsrun *fr, int k)
{
	const char *l = NULL;
	for (size_t i = 0; i < fr->ops.n && fr->ops.ops[i].id <= k; i++)
		if (fr->ops.ops[i].kind == WL_MARK)
			l = fr->ops.ops[i].name;
	return l;
}

static void add_path(struct strvec *v, const char *p)
{
	if (!p || !*p)
		return;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], p))
			return;
	strvec_push(v, p);
}

/* The objects the ops touched, sorted as trees are. */
static void objects(const struct cmp_source *src, size_t n, struct strvec *out)
{
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < src[s].fr->ops.n; i++) {
			const struct wl_op *op = &src[s].fr->ops.ops[i];
			add_path(out, op->path);
			if (op->kind != WL_SYMLINK)
				add_path(out, op->path2);
		}
	strvec_sort(out);
}

static void append_mode(char *buf, size_t len, const struct tree_node *t)
{
	size_t l = strlen(buf);
	if (t && t->type != 'l' && l + 1 < len)
		snprintf(buf + l, len - l, " %04o", (unsigned)t->mode); /* "hello" 0600 */
}

/* The cells say what an object holds, not its attributes: where the program
 * and a state (or two states) disagree on the object's mode (a chmod that
 * fdatasync did not carry), every cell of the row ends with its mode in
 * octal. */
static void add_modes(struct cmp_row *row, struct cmp_table *t, const struct tree_node *pt, size_t npt,
		      const struct state_result **st)
{
	const struct tree_node *prog = t->program_k >= 0 ? find_node(pt, npt, row->path) : NULL;
	int mode = prog && prog->type != 'l' ? (int)prog->mode : -1;
	bool differ = false;
	for (size_t i = 0; i < t->ncol; i++) {
		const struct tree_node *o = st[i] && st[i]->check.mount_ok ?
			find_node(st[i]->check.nodes, st[i]->check.n_nodes, row->path) : NULL;
		if (!o || o->type == 'l')
			continue;
		if (mode >= 0 && (int)o->mode != mode)
			differ = true;
		mode = (int)o->mode;
	}
	if (!differ)
		return;
	append_mode(row->program, sizeof(row->program), prog);
	for (size_t i = 0; i < t->ncol; i++)
		if (st[i] && st[i]->check.mount_ok)
			append_mode(row->cell[i].text, sizeof(row->cell[i].text),
				    find_node(st[i]->check.nodes, st[i]->check.n_nodes, row->path));
}

struct program {
	struct sim sim;
	bool ok;
};

static void table_build(struct cmp_table *t, const struct cmp_source *src, size_t n, int model, bool worst,
			bool many_runs, struct program *prog, const struct strvec *objs)
{
	t->title = worst ? "worst crash state" : "final crash state";
	t->col = xcalloc(n ? n : 1, sizeof(*t->col));
	t->ncol = n;
	const struct state_result **st = xcalloc(n ? n : 1, sizeof(*st));
	t->same_as_final = true;
	t->program_k = -1;
	bool same_k = true;
	for (size_t i = 0; i < n; i++) {
		struct cmp_col *c = &t->col[i];
		int m = model >= 0 ? model : model_of_mount(src[i].fr->fs, src[i].fr->mount_opts);
		if (m < 0)
			m = MODEL_POSIX;
		st[i] = worst ? worst_state(&src[i], m) : final_state(&src[i]);
		if (worst && st[i] != final_state(&src[i]))
			t->same_as_final = false;
		c->run_id = src[i].run->id;
		c->fs = src[i].fr->fs;
		c->mount_opts = src[i].fr->mount_opts;
		c->model = m;
		c->state = st[i] ? st[i]->idx : -1;
		c->kind = st[i] ? st[i]->kind : NULL;
		c->after_op = st[i] ? st[i]->last_completed_op : 0;
		c->label = st[i] ? label_at(src[i].fr, c->after_op) : NULL;
		if (many_runs)
			snprintf(c->head, sizeof(c->head), "run %" PRId64 " %s", c->run_id, c->fs);
		else
			snprintf(c->head, sizeof(c->head), "%s", c->fs);
		const char *outcome = src[i].fr->outcome;
		if (c->state >= 0)
			snprintf(c->sub, sizeof(c->sub), "state %d", c->state);
		else if (outcome && strcmp(outcome, "ok"))
			snprintf(c->sub, sizeof(c->sub), "%s", outcome); /* the fs run failed or was interrupted */
		else
			snprintf(c->sub, sizeof(c->sub), "no states");
		if (i && c->after_op != t->col[0].after_op)
			same_k = false;
	}
	if (n && same_k && prog->ok && st[0])
		t->program_k = t->col[0].after_op;
	else /* no program column: each column says how far the program had got */
		for (size_t i = 0; i < n; i++)
			if (t->col[i].state >= 0)
				snprintf(t->col[i].sub, sizeof(t->col[i].sub), "state %d, op %d", t->col[i].state,
					 t->col[i].after_op);

	struct tree_node *pt = NULL;
	size_t npt = 0;
	if (t->program_k >= 0)
		sim_tree_at(&prog->sim, t->program_k, &pt, &npt);
	t->row = xcalloc(objs->n ? objs->n : 1, sizeof(*t->row));
	t->nrow = objs->n;
	for (size_t r = 0; r < objs->n; r++) {
		struct cmp_row *row = &t->row[r];
		row->path = xstrdup(objs->v[r]);
		row->cell = xcalloc(n ? n : 1, sizeof(*row->cell));
		if (t->program_k >= 0)
			cmp_describe(pt, npt, find_node(pt, npt, row->path), row->program, sizeof(row->program));
		for (size_t i = 0; i < n; i++) {
			struct cmp_cell *c = &row->cell[i];
			if (!st[i])
				snprintf(c->text, sizeof(c->text), "no crash state");
			else if (!st[i]->check.mount_ok)
				snprintf(c->text, sizeof(c->text), "does not mount");
			else
				cmp_describe(st[i]->check.nodes, st[i]->check.n_nodes,
					     find_node(st[i]->check.nodes, st[i]->check.n_nodes, row->path), c->text,
					     sizeof(c->text));
			if (st[i])
				mark_cell(c, st[i], row->path, t->col[i].model);
			if (i && (strcmp(c->text, row->cell[0].text) || c->mark != row->cell[0].mark ||
				  c->naive != row->cell[0].naive))
				row->differs = true;
		}
	}
	for (size_t r = 0; r < t->nrow; r++)
		add_modes(&t->row[r], t, pt, npt, st);
	for (size_t i = 0; i < npt; i++)
		tree_node_free(&pt[i]);
	free(pt);
	free(st);
}

void cmp_build(struct cmp_view *v, const struct cmp_source *src, size_t n, int model)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 1; i < n; i++)
		if (src[i].run->id != src[0].run->id)
			v->many_runs = true;
	/* The program column is the first fs run's simulation; it is shown
	 * only when every source ran the same workload. */
	struct program prog = { 0 };
	bool same_wl = true, ran = false;
	for (size_t i = 1; i < n; i++)
		if (strcmp(src[i].run->workload_text ? src[i].run->workload_text : "",
			   src[0].run->workload_text ? src[0].run->workload_text : ""))
			same_wl = false;
	if (n && same_wl && src[0].fr->res) {
		struct errbuf e;
		prog.ok = sim_run(&prog.sim, &src[0].fr->ops, src[0].fr->res, &e) == 0;
		ran = true;
	}
	struct strvec objs = STRVEC_INIT;
	objects(src, n, &objs);
	table_build(&v->t[0], src, n, model, false, v->many_runs, &prog, &objs);
	table_build(&v->t[1], src, n, model, true, v->many_runs, &prog, &objs);
	v->nt = 2;
	strvec_free(&objs);
	if (ran)
		sim_free(&prog.sim);
}

void cmp_free(struct cmp_view *v)
{
	for (size_t t = 0; t < v->nt; t++) {
		for (size_t r = 0; r < v->t[t].nrow; r++) {
			free(v->t[t].row[r].path);
			free(v->t[t].row[r].cell);
		}
		free(v->t[t].row);
		free(v->t[t].col);
	}
	memset(v, 0, sizeof(*v));
}

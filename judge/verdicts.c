/*
 * verdicts.c - the judge of one crash state: the rule table (models.c)
 * applied to every explanation of the state (explain.h), giving verdicts.
 *
 * What a verdict means (docs/guarantees.md "Verdicts"). A rule, once
 * triggered, promises a set of pieces (simulator changes): the data of a
 * file as of S_p, its names, a directory's names, the ops an op depends
 * on. The promise is kept when some explanation has every promised piece
 * in P or overwritten by a later piece in P, and LOST only when no
 * explanation does. A trigger that depends on what the state shows (SOMC's
 * "op2 is visible", a barrier's witness, sequential's "the last op shown")
 * counts only when every explanation shows it. The changes of completed
 * ops that no rule of a model promised are bonus when every explanation
 * shows them and gone when none has them; what only some explanations
 * have is neither, and not reported.
 *
 * Algorithm. Explanations are a product of per-field choices inside each
 * world (explain.h), so "some explanation keeps every piece" is "in some
 * world, every piece's field has an option at or after the piece", and
 * "every explanation shows op2" is "in every world, some field of op2 has
 * only options showing op2's change" (for one op the fields are distinct,
 * so the product makes a disjunction of per-field facts exact). Sequential
 * asks whether one k makes every observed field's options contain its S_k
 * version; it intersects, per field, the ranges of k each option allows.
 * Everything is linear in pieces times options times worlds.
 *
 * Dependencies (SOMC): two ops depend on each other when they touch a
 * common inode or the entries of the same directory, closed transitively
 * over earlier ops. SOMC orders metadata: entries, modes, xattrs and the
 * sizes truncate and fallocate set; not the blocks, nor the size a write
 * grows a file to (it travels with the data).
 *
 * U4 reads the names of every rename at once (one option per entry field);
 * sequential's LOST takes the reading that blames the latest op.
 *
 * Barriers (docs/guarantees.md "Barriers"): a succeeded
 * fdatabarrier/fbarrier/fiemap_sync on f covers f's earlier data (fbarrier:
 * and its mode and xattrs); a later op that adds a name for f's inode or
 * changes its mode, xattrs or size is a witness; when every explanation
 * shows a witness (wholly or in part), or a later completed fsync of the
 * file or of the witness's directory or a sync made one durable, the
 * covered pieces are promised. A failed call promises nothing.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "judge/models-priv.h"
#include "judge/verdicts-priv.h"


/* One group of pieces judged together: one rule, trigger, op, aspect and object. */
struct group {
	int model;
	const struct rule *rule;   /* NULL: not promised by any rule of the model */
	int trigger, op;
	char aspect;               /* 'n' name, 'd' data, 'm' metadata */
	struct sim_field obj;      /* entry field, or the inode (kind SF_MODE, key 0) */
	int promised;
	int fixed;                 /* sequential: the kind is decided, not evaluated */
	int later;                 /* sequential: the piece shows a later op than the nearest S_k has */
	enum verdict_kind kind;
	size_t *pc;                /* the pieces: change indices */
	size_t np, pcap;
};


int judge_completed(const struct judge *j, int op)
{
	return j->res[op - 1].log_pos <= j->point;
}

static int is_data(const struct sim_change *c)
{
	return c->f.kind == SF_BLOCK || c->f.kind == SF_SIZE;
}

/* What SOMC orders: the metadata, sizes set by truncate and fallocate
 * included; not the blocks, nor the size a write grows a file to, which
 * travels with its data (xfs, the one file system that claims SOMC, sets
 * the on-disk size of a buffered write when its data is written back, so
 * that a crash never shows stale blocks inside the size). */
static int is_ordered(const struct sim_change *c)
{
	return c->f.kind != SF_BLOCK && !(c->f.kind == SF_SIZE && c->data);
}

static char aspect_of(const struct sim_change *c)
{
	if (c->f.kind == SF_ENTRY)
		return 'n';
	return c->data || is_data(c) ? 'd' : 'm';
}

static struct sim_field obj_of(const struct sim_change *c)
{
	if (c->f.kind == SF_ENTRY)
		return c->f;
	return (struct sim_field){ SF_MODE, c->f.ino, 0 };
}

static struct group *find_group(struct judge *j, int model, const struct rule *r, int trigger, size_t c)
{
	const struct sim_change *ch = &j->s->ch[c];
	char aspect = aspect_of(ch);
	struct sim_field obj = obj_of(ch);
	for (size_t i = j->ng; i-- > 0;) {
		struct group *x = &j->g[i];
		if (x->model == model && x->rule == r && x->op == ch->op && x->aspect == aspect &&
		    x->obj.kind == obj.kind && x->obj.ino == obj.ino && x->obj.key == obj.key &&
		    (r == NULL || x->trigger == trigger))
			return x;
	}
	ALLOC_GROW(j->g, j->ng + 1, j->gcap);
	struct group *g = &j->g[j->ng++];
	*g = (struct group){ .model = model, .rule = r, .trigger = trigger, .op = ch->op, .aspect = aspect,
			     .obj = obj };
	return g;
}

static void add(struct judge *j, int model, const struct rule *r, int trigger, size_t c, int promised)
{
	if (promised)
		j->covered[c] = 1;
	struct group *g = find_group(j, model, r, trigger, c);
	g->promised = promised;
	/* pc stays sorted, so a gigabyte's 262,144 block changes go in at the
	 * end one by one and a repeat is found by bisection */
	size_t lo = 0, hi = g->np;
	if (hi && g->pc[hi - 1] < c) {
		lo = hi;
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (g->pc[mid] < c)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < g->np && g->pc[lo] == c)
			return;
	}
	ARRAY_PUSH(g->pc, g->np, g->pcap, c);
	memmove(&g->pc[lo + 1], &g->pc[lo], (g->np - 1 - lo) * sizeof(g->pc[0]));
	g->pc[lo] = c;
}

/* The last change of field f made by an op <= k, or -1. */
static long last_change_upto(const struct sim *s, const struct sim_field *f, int k)
{
	const struct sim_hist *h = sim_history(s, f);
	long r = -1;
	for (size_t i = 0; h && i < h->n && s->ch[h->idx[i]].op <= k; i++)
		r = (long)h->idx[i];
	return r;
}

/* Is change c the last one of its field made by an op <= k? */
static int last_upto(const struct sim *s, size_t c, int k)
{
	const struct sim_hist *h = &s->hist[s->ch[c].hist];
	return s->ch[c].op <= k && ((size_t)s->ch[c].hpos == h->n || s->ch[h->idx[s->ch[c].hpos]].op > k);
}

/* ------------------------------------------------------------------ */
/* Promises */

/* Every field of inode ino of the given kinds as of S_p. */
static void promise_inode(struct judge *j, int model, const struct rule *r, int p, int ino, int data, int meta)
{
	const struct sim *s = j->s;
	for (size_t c = 0; c < s->nch && s->ch[c].op <= p; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->f.kind == SF_ENTRY || ch->f.ino != ino)
			continue;
		if ((is_data(ch) && !data) || (!is_data(ch) && !meta))
			continue;
		if (last_upto(s, c, p))
			add(j, model, r, p, c, 1);
	}
}

static void promise_entry(struct judge *j, int model, const struct rule *r, int p, int dir, int64_t name,
			  int want_present, int want_absent)
{
	struct sim_field f = { SF_ENTRY, dir, name };
	long c = last_change_upto(j->s, &f, p);
	if (c < 0)
		return;
	int64_t v = j->s->ch[c].val;
	if ((v == SIM_ABSENT && want_absent) || (v != SIM_ABSENT && want_present))
		add(j, model, r, p, (size_t)c, 1);
}

/* ext4: the entry ino was created under in the run, if it still names ino at p
 * by that same change (a later rename back to it is a name added by rename). */
static void promise_born_name(struct judge *j, int model, const struct rule *r, int p, int ino)
{
	const struct sim *s = j->s;
	int born = s->in[ino].born;
	if (born <= 0 || !sim_is_run(s, born))
		return;
	const struct sim_op *so = &s->ops[born - 1];
	for (size_t c = so->first; c < so->first + so->n; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->f.kind == SF_ENTRY && ch->val == ino && ch->old == SIM_ABSENT && last_upto(s, c, p))
			add(j, model, r, p, c, 1);
	}
}

/* Objects an op touches: inodes changed, directories whose entries changed, their children. */
static size_t op_objects(const struct sim *s, int op, int *objs, size_t cap)
{
	const struct sim_op *so = &s->ops[op - 1];
	size_t n = 0;
	int cand[3];
	for (size_t c = so->first; c < so->first + so->n + 1; c++) {
		size_t nc = 0;
		if (c == so->first + so->n) {
			cand[nc++] = so->obj;
		} else {
			const struct sim_change *ch = &s->ch[c];
			cand[nc++] = ch->f.ino;
			if (ch->f.kind == SF_ENTRY) {
				cand[nc++] = (int)ch->old;
				cand[nc++] = (int)ch->val;
			}
		}
		for (size_t k = 0; k < nc; k++) {
			int dup = cand[k] < 0;
			for (size_t q = 0; q < n && !dup; q++)
				dup = objs[q] == cand[k];
			if (!dup && n < cap)
				objs[n++] = cand[k];
		}
	}
	return n;
}

/* Mark deps[q] = 1 for every op q < from that op `from` (or, with seed >= 0,
 * the object seed) depends on, transitively over earlier ops. */
static void dependencies(const struct judge *j, int from, int seed, unsigned char *deps)
{
	const struct sim *s = j->s;
	unsigned char *in = xcalloc(s->nin + 1, 1);
	int objs[256];
	if (seed >= 0) {
		in[seed] = 1;
	} else {
		size_t no = op_objects(s, from, objs, 256);
		for (size_t i = 0; i < no; i++)
			in[objs[i]] = 1;
	}
	for (int q = from - 1; q >= 1; q--) {
		if (!sim_is_run(s, q) || !s->ops[q - 1].applied || !s->ops[q - 1].n)
			continue;
		size_t no = op_objects(s, q, objs, 256);
		int hit = 0;
		for (size_t i = 0; i < no && !hit; i++)
			hit = in[objs[i]];
		if (!hit)
			continue;
		deps[q] = 1;
		for (size_t i = 0; i < no; i++)
			in[objs[i]] = 1;
	}
	free(in);
}

static void promise_deps(struct judge *j, int model, const struct rule *r, int trigger, int from, int seed)
{
	const struct sim *s = j->s;
	unsigned char *deps = xcalloc(s->w->n + 2, 1);
	dependencies(j, from, seed, deps);
	for (int q = 1; q < from; q++) {
		const struct sim_op *so = &s->ops[q - 1];
		for (size_t c = so->first; deps[q] && c < so->first + so->n; c++)
			if (is_ordered(&s->ch[c]))
				add(j, model, r, trigger, c, 1);
	}
	free(deps);
}

/* Does every judged explanation show some ordered piece of op q? */
static int op_shown(const struct judge *j, int q)
{
	const struct sim_op *so = &j->s->ops[q - 1];
	for (size_t w = 0; w < j->ex.nw; w++) {
		if (!explain_judged(&j->ex, w))
			continue;
		int shown = 0;
		for (size_t c = so->first; c < so->first + so->n && !shown; c++)
			shown = is_ordered(&j->s->ch[c]) && (explain_change(&j->ex, w, c) & EXC_SHOWN);
		if (!shown)
			return 0;
	}
	return 1;
}

struct witness {
	const struct sim *s;
	int ino, from;
};

static int is_witness(void *ctx, size_t c)
{
	const struct witness *wt = ctx;
	const struct sim_change *ch = &wt->s->ch[c];
	if (ch->op < wt->from)
		return 0;
	return (ch->f.kind == SF_ENTRY && ch->val == wt->ino) ||
	       (ch->f.kind != SF_ENTRY && ch->f.kind != SF_BLOCK && ch->f.ino == wt->ino);
}

static void barrier_rule(struct judge *j, int model, const struct rule *r, int b, int ino, int meta, int self_witness)
{
	const struct sim *s = j->s;
	if (ino < 0 || s->in[ino].type != 'f')
		return;
	struct witness wt = { s, ino, b + (self_witness ? 0 : 1) };
	/* G2: a witness made durable by a later completed fsync of the file or of
	 * the witness's directory, or by a sync */
	int durable = 0;
	for (size_t c = 0; c < s->nch && !durable; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (!is_witness(&wt, c))
			continue;
		for (int d = ch->op + 1; d <= (int)s->w->n && !durable; d++) {
			const struct sim_op *so = &s->ops[d - 1];
			if (!sim_is_run(s, d) || !judge_completed(j, d) || so->guest_err || !so->applied)
				continue;
			enum wl_kind k = so->op->kind;
			if (k == WL_SYNC || k == WL_SYNCFS)
				durable = 1;
			else if ((k == WL_FSYNC || k == WL_FDATASYNC) &&
				 (so->obj == ino || (ch->f.kind == SF_ENTRY && so->obj == ch->f.ino)))
				durable = 1;
		}
	}
	/* G1: every judged explanation shows a witness (a field whose every option shows one) */
	int visible = 1;
	for (size_t w = 0; w < j->ex.nw && visible; w++) {
		if (!explain_judged(&j->ex, w))
			continue;
		int here = 0;
		for (size_t h = 0; h < s->nhist && !here; h++) {
			const struct sim_hist *hs = &s->hist[h];
			int any = 0;
			for (size_t i = 0; i < hs->n && !any; i++)
				any = is_witness(&wt, hs->idx[i]);
			here = any && explain_field_shows(&j->ex, w, h, is_witness, &wt);
		}
		visible = here;
	}
	int required = visible || durable;
	for (size_t c = 0; c < s->nch && s->ch[c].op < b; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->f.kind == SF_ENTRY || ch->f.ino != ino || (!is_data(ch) && !meta))
			continue;
		if (!last_upto(s, c, b - 1))
			continue;
		/* not required: still this rule's verdict (bonus or gone), so the sentence can say why */
		add(j, model, r, b, c, required);
	}
}

/* ------------------------------------------------------------------ */
/* Sequential: is the state S_k for some k >= K0? */

/* ok[k] &= "world w's options for field F allow S_k". */
static void allow_k(const struct judge *j, size_t w, const struct ex_field *F, unsigned char *ok, int n)
{
	const struct sim *s = j->s;
	const struct ex_world *W = &j->ex.w[w];
	unsigned char *allow = xcalloc((size_t)n + 2, 1);
	for (size_t k = 0; k < F->n; k++) {
		const struct ex_opt *o = &W->opt[F->first + k];
		if (o->partial >= 0)
			continue;
		if (F->hist == (size_t)-1) {
			if (o->pos == 0)
				memset(allow, 1, (size_t)n + 1);
			continue;
		}
		const struct sim_hist *h = &s->hist[F->hist];
		int lo = o->pos == 0 ? 0 : s->ch[h->idx[o->pos - 1]].op;
		int hi = (size_t)o->pos == h->n ? n : s->ch[h->idx[o->pos]].op - 1;
		for (int q = lo; q <= hi && q <= n; q++)
			allow[q] = 1;
	}
	for (int q = 0; q <= n; q++)
		ok[q] &= allow[q];
	free(allow);
}

/* The pieces world w reading the state as S_q blames, one per field that
 * does not match S_q: the piece S_q has, when no explanation keeps it; else
 * the later piece the state shows out of order (lat[i] = 1). */
static size_t prefix_blame(const struct judge *j, size_t w, int q, size_t *pcs, int *lat)
{
	const struct sim *s = j->s;
	const struct ex_world *W = &j->ex.w[w];
	int n = (int)s->w->n;
	unsigned char *one = xmalloc((size_t)n + 2);
	size_t np = 0;
	for (size_t f = 0; f < W->nfld; f++) {
		const struct ex_field *F = &W->fld[f];
		memset(one, 1, (size_t)n + 1);
		allow_k(j, w, F, one, n);
		if (one[q] || F->hist == (size_t)-1)
			continue;
		const struct sim_hist *h = &s->hist[F->hist];
		long c = last_change_upto(s, &F->f, q);
		int jk = c < 0 ? 0 : s->ch[c].hpos, keepable = 0, later = -1;
		for (size_t o = 0; o < F->n; o++) {
			const struct ex_opt *op = &W->opt[F->first + o];
			keepable |= op->pos >= jk;
			int p = op->partial > jk ? op->partial : op->pos;
			if (p > jk && (later < 0 || p < later))
				later = p;
		}
		int shows_later = (keepable || c < 0) && later > 0;
		if (shows_later)
			c = (long)h->idx[later - 1];
		if (c < 0)
			continue;
		pcs[np] = (size_t)c;
		lat[np++] = shows_later;
	}
	free(one);
	return np;
}

static void judge_prefix(struct judge *j, int model, const struct rule *r)
{
	const struct sim *s = j->s;
	int n = (int)s->w->n, K0 = j->last_persisted;
	unsigned char *ok = xmalloc((size_t)n + 2);
	int best_k = -1;
	for (size_t w = 0; w < j->ex.nw; w++) {
		if (!explain_judged(&j->ex, w))
			continue;
		for (int q = 0; q <= n; q++)
			ok[q] = q >= K0;
		const struct ex_world *W = &j->ex.w[w];
		for (size_t f = 0; f < W->nfld; f++)
			allow_k(j, w, &W->fld[f], ok, n);
		for (int q = n; q >= K0 && best_k < 0; q--)
			if (ok[q] && W->explained)
				best_k = q;
	}
	if (best_k >= 0) {
		/* kept: one verdict for the whole prefix */
		int k = best_k;
		for (size_t c = 0; c < s->nch; c++)
			if (s->ch[c].op <= k)
				j->covered[c] = 1;
		ALLOC_GROW(j->g, j->ng + 1, j->gcap);
		j->g[j->ng++] = (struct group){ .model = model, .rule = r, .trigger = k, .op = k, .aspect = 'p',
						.promised = 1, .fixed = 1, .kind = V_KEPT };
		free(ok);
		return;
	}
	/* LOST: of every world and k >= K0, the reading that blames the latest
	 * op (a later op seen in part never counts against an earlier one, so
	 * the kindest reading names it), then the fewest mismatching fields */
	int k = K0 > 0 ? K0 : 0;
	size_t bw = j->ex.primary, best_n = (size_t)-1;
	int best_min = -1;
	size_t *pcs = xmalloc((s->nch + 1) * sizeof(size_t));
	int *lat = xmalloc((s->nch + 1) * sizeof(int));
	for (size_t w = 0; w < j->ex.nw; w++) {
		if (!explain_judged(&j->ex, w))
			continue;
		for (int q = K0; q <= n; q++) {
			size_t np = prefix_blame(j, w, q, pcs, lat);
			int mn = n + 1;
			for (size_t i = 0; i < np; i++)
				if (s->ch[pcs[i]].op < mn)
					mn = s->ch[pcs[i]].op;
			if (mn > best_min || (mn == best_min && np < best_n)) {
				best_min = mn;
				best_n = np;
				k = q;
				bw = w;
			}
		}
	}
	size_t np = prefix_blame(j, bw, k, pcs, lat);
	int named = np > 0;
	for (size_t i = 0; i < np; i++) {
		struct group *g = find_group(j, model, r, k, pcs[i]);
		g->promised = 1;
		g->fixed = 1;
		g->kind = V_LOST;
		g->later = lat[i];
		ARRAY_PUSH(g->pc, g->np, g->pcap, pcs[i]);
	}
	free(pcs);
	free(lat);
	if (!named) {
		ALLOC_GROW(j->g, j->ng + 1, j->gcap);
		j->g[j->ng++] = (struct group){ .model = model, .rule = r, .trigger = k, .op = k, .aspect = 'p',
						.promised = 1, .fixed = 1, .kind = V_LOST };
	}
	for (size_t c = 0; c < s->nch; c++)
		if (s->ch[c].op <= k)
			j->covered[c] = 1;
	free(ok);
}

/* SOMC ordering: for every op every explanation shows, its dependencies. */
static void judge_order(struct judge *j, int model, const struct rule *r)
{
	const struct sim *s = j->s;
	int n = (int)s->w->n;
	int *req_by = xcalloc((size_t)n + 2, sizeof(int));
	unsigned char *deps = xcalloc((size_t)n + 2, 1);
	for (int q2 = n; q2 >= 1; q2--) {
		const struct sim_op *so = &s->ops[q2 - 1];
		if (!sim_is_run(s, q2) || !so->applied || !so->n || !op_shown(j, q2))
			continue;
		memset(deps, 0, (size_t)n + 2);
		dependencies(j, q2, -1, deps);
		for (int q1 = 1; q1 < q2; q1++)
			if (deps[q1] && !req_by[q1])
				req_by[q1] = q2;
	}
	for (int q1 = 1; q1 <= n; q1++) {
		const struct sim_op *so = &s->ops[q1 - 1];
		for (size_t c = so->first; req_by[q1] && c < so->first + so->n; c++)
			if (is_ordered(&s->ch[c]))
				add(j, model, r, req_by[q1], c, 1);
	}
	free(deps);
	free(req_by);
}

static void judge_model(struct judge *j, int model)
{
	const struct sim *s = j->s;
	memset(j->covered, 0, s->nch ? s->nch : 1);
	for (size_t ri = 0; ri < model_nrules; ri++) {
		const struct rule *r = &model_rule_table[ri];
		if (!(r->models & (1u << model)))
			continue;
		if (r->trigger == T_EVERY_STATE) {
			if (r->covers & C_PREFIX)
				judge_prefix(j, model, r);
			if (r->covers & C_ORDER)
				judge_order(j, model, r);
			continue;
		}
		for (int p = 1; p <= (int)s->w->n; p++) {
			const struct sim_op *so = &s->ops[p - 1];
			if (!sim_is_run(s, p) || !so->applied)
				continue;
			enum wl_kind k = so->op->kind;
			int ino = so->obj;
			char type = ino >= 0 ? s->in[ino].type : 0;
			int dur = judge_completed(j, p);
			switch (r->trigger) {
			case T_FSYNC_FILE:
				if (k != WL_FSYNC || type != 'f' || !dur)
					continue;
				break;
			case T_FSYNC_ANY:
				if (k != WL_FSYNC || (type != 'f' && type != 'd') || !dur)
					continue;
				break;
			case T_FDATASYNC_FILE:
				if (k != WL_FDATASYNC || type != 'f' || !dur)
					continue;
				break;
			case T_FSYNC_DIR:
				if ((k != WL_FSYNC && k != WL_FDATASYNC) || type != 'd' || !dur)
					continue;
				break;
			case T_SYNC:
				if ((k != WL_SYNC && k != WL_SYNCFS) || !dur)
					continue;
				break;
			case T_FDATABARRIER:
			case T_FIEMAP_SYNC:
				if (k == (r->trigger == T_FDATABARRIER ? WL_FDATABARRIER : WL_FIEMAP_SYNC))
					barrier_rule(j, model, r, p, ino, 0, 0);
				continue;
			case T_FBARRIER:
				if (k == WL_FBARRIER)
					barrier_rule(j, model, r, p, ino, 1, 0);
				continue;
			case T_RENAME_BARRIER:
				if (k == WL_RENAME && so->op->flags == WL_RENAME_BARRIER)
					barrier_rule(j, model, r, p, so->obj2, 1, 1);
				continue;
			case T_EVERY_STATE:
				continue;
			}
			if (r->covers & C_EVERYTHING) {
				for (size_t c = 0; c < s->nch && s->ch[c].op < p; c++)
					if (last_upto(s, c, p))
						add(j, model, r, p, c, 1);
				continue;
			}
			if (r->covers & (C_DATA | C_META))
				promise_inode(j, model, r, p, ino, !!(r->covers & C_DATA), !!(r->covers & C_META));
			if ((r->covers & C_OWN_NAME) && so->obj_dir >= 0) {
				struct sim_field f = { SF_ENTRY, so->obj_dir, so->obj_name };
				if (sim_value_at(s, &f, p) == ino)
					promise_entry(j, model, r, p, so->obj_dir, so->obj_name, 1, 0);
			}
			if (r->covers & C_BORN_NAME)
				promise_born_name(j, model, r, p, ino);
			if (r->covers & C_ALL_NAMES) {
				for (size_t d = 0; d < s->nin; d++)
					for (size_t i = 0; s->in[d].type == 'd' && i < s->in[d].nall; i++) {
						struct sim_field f = { SF_ENTRY, (int)d, s->in[d].allnames[i] };
						if (sim_value_at(s, &f, p) == ino)
							promise_entry(j, model, r, p, (int)d, f.key, 1, 0);
					}
			}
			if (r->covers & (C_DIR_NAMES | C_DIR_REMOVALS)) {
				const struct sim_inode *d = &s->in[ino];
				for (size_t i = 0; i < d->nall; i++)
					promise_entry(j, model, r, p, ino, d->allnames[i], !!(r->covers & C_DIR_NAMES),
						      !!(r->covers & C_DIR_REMOVALS));
			}
			if (r->covers & C_DEPS)
				promise_deps(j, model, r, p, p, ino);
		}
	}
	/* what no rule of the model promised, among the completed ops (the
	 * barrier models judge only what their calls cover) */
	if (model == MODEL_BARRIER || model == MODEL_FIEMAP_SYNC)
		return;
	for (size_t c = 0; c < s->nch; c++)
		if (!j->covered[c] && judge_completed(j, s->ch[c].op))
			add(j, model, NULL, 0, c, 0);
}

/* ------------------------------------------------------------------ */
/* Evaluating a group over the explanations */

struct tally {
	enum verdict_kind kind;
	int drop;                  /* nothing to say: unseen, or only some explanations have it */
	size_t n_ok, n_missing;    /* pieces in the primary world */
	size_t first_missing, first;
};

static struct tally evaluate(const struct judge *j, const struct group *g)
{
	const struct explain *e = &j->ex;
	struct tally t = { .first = g->np ? g->pc[0] : 0, .first_missing = (size_t)-1 };
	for (size_t i = 0; i < g->np; i++) {
		unsigned f = explain_change(e, e->primary, g->pc[i]);
		if (!(f & EXC_SEEN))
			continue;
		if (f & EXC_KEEP) {
			t.n_ok++;
		} else {
			if (t.first_missing == (size_t)-1)
				t.first_missing = g->pc[i];
			t.n_missing++;
		}
	}
	if (g->fixed) {
		t.kind = g->kind;
		if (g->kind == V_LOST && g->np && t.first_missing == (size_t)-1)
			t.first_missing = g->pc[0];
		return t;
	}
	if (g->promised) {
		int kept = 0, unseen = 0;
		for (size_t w = 0; w < e->nw; w++) {
			if (!explain_judged(e, w))
				continue;
			int seen = 0, all = 1;
			for (size_t i = 0; i < g->np; i++) {
				unsigned f = explain_change(e, w, g->pc[i]);
				if (!(f & EXC_SEEN))
					continue;
				seen = 1;
				all &= !!(f & EXC_KEEP);
			}
			kept |= seen && all;
			unseen |= !seen;
		}
		t.drop = !kept && unseen;
		t.kind = kept ? V_KEPT : V_LOST;
		return t;
	}
	/* not promised: bonus if every explanation shows it, gone if none has it */
	size_t present = 0, missing = 0;
	for (size_t i = 0; i < g->np; i++) {
		int all_shown = 1, none_kept = 1;
		for (size_t w = 0; w < e->nw; w++) {
			if (!explain_judged(e, w))
				continue;
			unsigned f = explain_change(e, w, g->pc[i]);
			all_shown &= (f & EXC_SEEN) && (f & EXC_SHOWN);
			none_kept &= (f & EXC_SEEN) && !(f & (EXC_KEEP | EXC_PART));
		}
		present += all_shown;
		missing += none_kept;
	}
	t.kind = missing ? V_GONE : V_BONUS;
	t.drop = !missing && !present;
	return t;
}

/* ------------------------------------------------------------------ */
/* Sentences */

void judge_op_text(const struct sim *s, int op, char *buf, size_t n)
{
	char t[300];
	if (op <= 0) {
		judge_say(buf, n, "the empty file system");
		return;
	}
	wl_format(s->ops[op - 1].op, t, sizeof(t));
	judge_say(buf, n, "op %d `%s`", op, t);
}

struct verdict *judgement_add(struct judgement *o)
{
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	struct verdict *v = &o->v[o->n++];
	memset(v, 0, sizeof(*v));
	v->piece = -1;
	return v;
}

struct verdict *judge_new_verdict(struct judge *j)
{
	return judgement_add(j->out);
}

static const char *aspect_word(char a)
{
	return a == 'n' ? "name" : a == 'd' ? "data" : "metadata";
}

static void emit_prefix(struct judge *j, const struct group *g, const struct tally *t)
{
	struct verdict *v = judge_new_verdict(j);
	v->model = g->model;
	v->kind = t->kind;
	v->op = g->op;
	v->trigger = g->trigger;
	judge_say(v->rule, sizeof(v->rule), "%s", g->rule->id);
	judge_say(v->cite, sizeof(v->cite), "%s", g->rule->cite);
	if (t->kind == V_KEPT) {
		judge_say(v->expected, sizeof(v->expected), "the program's state after some op at or after op %d",
		    j->last_persisted);
		judge_say(v->observed, sizeof(v->observed), "the program's state after op %d", g->op);
		judge_say(v->reason, sizeof(v->reason),
		    "kept: the state is the program's state after op %d, so sequential's promise holds (%s)", g->op,
		    g->rule->id);
	} else {
		judge_say(v->expected, sizeof(v->expected), "the program's state after some op at or after op %d",
		    j->last_persisted);
		judge_say(v->observed, sizeof(v->observed), "no such state");
		judge_say(v->reason, sizeof(v->reason),
		    "LOST: sequential promises %s (%s), but the state is no program state after op %d or later%s%.600s",
		    g->rule->promise, g->rule->id, j->last_persisted, j->ex.explained ? "" : ": ",
		    j->ex.explained ? "" : j->ex.diff);
	}
}

/* What a data-writing op wrote, in words: "op 5's data, 64 KiB", or its
 * short text. 0 when the op writes no data of its own. */
static int op_data_desc(const struct sim *s, int op, char *buf, size_t len)
{
	const struct wl_op *o = s->ops[op - 1].op;
	if (o->kind != WL_WRITE && o->kind != WL_APPEND && o->kind != WL_DWRITE && o->kind != WL_MMAPWRITE)
		return 0;
	if (o->data) {
		if (o->data_len <= 40) {
			judge_say(buf, len, "\"%.*s\"", (int)o->data_len, o->data);
			return 1;
		}
		char h[32];
		fmt_bytes(o->data_len, h, sizeof(h));
		judge_say(buf, len, "op %d's text, %s", op, h);
		return 1;
	}
	char h[32];
	fmt_bytes((uint64_t)(o->len > 0 ? o->len : 0), h, sizeof(h));
	judge_say(buf, len, "op %d's data, %s", op, h);
	return 1;
}

/* The observed file's contents in words: "empty", "zeros, 64 KiB",
 * "op 2's data (8 KiB), then zeros (56 KiB)", or its short text. */
static void file_desc(const struct tree_node *t, char *buf, size_t len)
{
	if (t->type != 'f') {
		judge_say(buf, len, "a %s", t->type == 'd' ? "directory" : t->type == 'l' ? "symlink" : "special file");
		return;
	}
	if (!t->size) {
		judge_say(buf, len, "an empty file");
		return;
	}
	char h[32];
	if (t->content && t->content_len == t->size && t->size <= 40) {
		int text = 1;
		for (size_t i = 0; i < t->content_len; i++)
			text &= t->content[i] >= 0x20 && t->content[i] < 0x7f;
		if (text) {
			judge_say(buf, len, "\"%.*s\"", (int)t->content_len, (const char *)t->content);
			return;
		}
	}
	struct sbuf b = SBUF_INIT;
	const char *p = t->blocks ? t->blocks : "";
	uint64_t off = 0;
	int runs = 0;
	while (*p && runs < 3) {
		size_t l = strcspn(p, ",");
		uint64_t n = 0;
		const char *q = p;
		while (*q && !strncmp(q, p, l) && (q[l] == ',' || !q[l])) {
			n++;
			q += l + (q[l] == ',');
		}
		uint64_t bytes = off + n * TREE_BLOCK > t->size ? t->size - off : n * TREE_BLOCK;
		fmt_bytes(bytes, h, sizeof(h));
		if (*p == 'z')
			sbuf_addf(&b, "%szeros (%s)", runs ? ", then " : "", h);
		else if (*p == 'p')
			sbuf_addf(&b, "%sop %.*s's data (%s)", runs ? ", then " : "", (int)(l - 1), p + 1, h);
		else
			sbuf_addf(&b, "%sother bytes (%s)", runs ? ", then " : "", h);
		off += n * TREE_BLOCK;
		runs++;
		p = q;
	}
	if (*p)
		sbuf_adds(&b, ", ...");
	fmt_bytes(t->size, h, sizeof(h));
	judge_say(buf, len, "%s in %s", b.len ? b.buf : "?", h);
	sbuf_free(&b);
}

static void emit_group(struct judge *j, const struct group *g)
{
	const struct sim *s = j->s;
	struct tally t = evaluate(j, g);
	if (t.drop || !g->np) {
		if (g->fixed && !g->np)
			emit_prefix(j, g, &t);
		return;
	}
	struct verdict *v = judge_new_verdict(j);
	v->model = g->model;
	v->op = g->op;
	v->trigger = g->trigger;
	v->kind = t.kind;
	judge_say(v->rule, sizeof(v->rule), "%s", g->rule ? g->rule->id : "unpromised");
	judge_say(v->cite, sizeof(v->cite), "%s", g->rule ? g->rule->cite : "no rule of the model covers it");
	size_t c = t.n_missing ? t.first_missing : t.first;
	const struct sim_change *ch = &s->ch[c];
	v->piece = (long)c;
	int k = g->trigger ? g->trigger : ch->op;
	explain_field_path(&j->ex, g->aspect == 'n' ? &ch->f : &g->obj, k, v->path, sizeof(v->path));
	char fpath[256], val[160];
	explain_field_path(&j->ex, &ch->f, k, fpath, sizeof(fpath));
	const char *sub = (ch->f.kind == SF_BLOCK || ch->f.kind == SF_XATTR) && strchr(fpath, ' ') ? strchr(fpath, ' ') + 1
												      : NULL;
	explain_value_desc(s, &ch->f, ch->val, val, sizeof(val));
	judge_say(v->expected, sizeof(v->expected), "%s%s%s", sub ? sub : "", sub ? ": " : "", val);
	explain_observed_desc(&j->ex, &ch->f, val, sizeof(val));
	judge_say(v->observed, sizeof(v->observed), "%s%s%s", sub ? sub : "", sub ? ": " : "", val);
	/* the data of a file, several pieces: the whole file in words */
	if (g->aspect == 'd' && g->np > 1 && g->obj.ino >= 0 && j->ex.node_of && j->ex.node_of[g->obj.ino] >= 0 &&
	    op_data_desc(s, g->op, val, sizeof(val))) {
		judge_say(v->expected, sizeof(v->expected), "%s", val);
		file_desc(&j->ex.nodes[j->ex.node_of[g->obj.ino]], val, sizeof(val));
		judge_say(v->observed, sizeof(v->observed), "%s", val);
	}
	char optx[320], trig[400], where[320];
	judge_op_text(s, g->op, optx, sizeof(optx));
	if (g->aspect == 'n')
		judge_say(where, sizeof(where), "at '%s'", v->path);
	else
		judge_say(where, sizeof(where), "in the %s of '%s'", aspect_word(g->aspect), v->path);
	size_t total = t.n_ok + t.n_missing;
	char pieces[96] = "";
	if (total > 1)
		judge_say(pieces, sizeof(pieces), " (%zu of its %zu pieces there)", t.n_ok, total);
	if (g->promised) {
		char tt[320];
		judge_op_text(s, g->trigger, tt, sizeof(tt));
		if ((g->rule->covers & C_PREFIX) && g->later) {
			judge_say(v->reason, sizeof(v->reason),
			    "LOST: sequential promises %s (%s); the nearest is the state after op %d, but the state already "
			    "shows %s %s%s, without everything before it: expected %s, found %s",
			    g->rule->promise, g->rule->id, g->trigger, optx, where, pieces, v->expected, v->observed);
			return;
		}
		if (g->rule->covers & C_PREFIX) {
			judge_say(v->reason, sizeof(v->reason),
			    "LOST: sequential promises %s (%s); the nearest is the state after op %d, but %s is missing %s%s: "
			    "expected %s, found %s",
			    g->rule->promise, g->rule->id, g->trigger, optx, where, pieces, v->expected, v->observed);
			return;
		}
		if (g->rule->covers & C_ORDER)
			judge_say(trig, sizeof(trig), "every explanation of the state shows %s, which depends on it", tt);
		else if (g->rule->covers & C_BAR_DATA)
			judge_say(trig, sizeof(trig), "%s succeeded and a later witness is visible or durable", tt);
		else
			judge_say(trig, sizeof(trig), "%s completed", tt);
		if (t.kind == V_LOST)
			judge_say(v->reason, sizeof(v->reason),
			    "LOST: %s, which promises %s (%s), but %s is missing %s%s: expected %s, found %s", trig,
			    g->rule->promise, g->rule->id, optx, where, pieces, v->expected, v->observed);
		else
			judge_say(v->reason, sizeof(v->reason), "kept: %s, which promises %s (%s), and %s is there %s (%s)", trig,
			    g->rule->promise, g->rule->id, optx, where, v->observed);
	} else {
		char why[200];
		if (g->rule)
			judge_say(why, sizeof(why), "no later witness of the barrier is visible or durable, so %s does not yet promise",
			    g->rule->id);
		else
			judge_say(why, sizeof(why), "no rule promises");
		if (t.kind == V_GONE)
			judge_say(v->reason, sizeof(v->reason), "gone: %s %s %s, and it is missing%s: expected %s, found %s", why,
			    optx, where, pieces, v->expected, v->observed);
		else
			judge_say(v->reason, sizeof(v->reason), "bonus: %s %s %s, yet it persisted (%s)", why, optx, where,
			    v->observed);
	}
}

/* ------------------------------------------------------------------ */

void model_judge(const struct sim *s, const struct op_result *res, const struct check_report *st, int64_t point,
		 struct judgement *out)
{
	memset(out, 0, sizeof(*out));
	out->judged = 1;
	struct judge j = { .s = s, .res = res, .st = st, .point = point, .out = out };
	for (size_t i = 0; i < s->w->n; i++)
		if (s->w->ops[i].section == WL_RUN && res[i].log_pos <= point) {
			j.last_completed = s->w->ops[i].id;
			if (wl_is_persistence(&s->w->ops[i]) && res[i].ret == 0)
				j.last_persisted = s->w->ops[i].id;
		}
	if (!st->mount_ok) {
		struct verdict *v = judge_universal_verdict(&j, U1, 1);
		judge_say(v->expected, sizeof(v->expected), "mounts");
		judge_say(v->observed, sizeof(v->observed), "does not mount");
		judge_say(v->reason, sizeof(v->reason), "broken: the file system does not mount after the crash (U1)");
		judge_say(out->diff, sizeof(out->diff), "the state did not mount");
		out->marks = xmalloc(s->w->n + 1);
		for (size_t i = 0; i < s->w->n; i++)
			out->marks[i] = s->w->ops[i].section == WL_SETUP ? EX_MARK_SETUP : EX_MARK_UNSEEN;
		out->marks[s->w->n] = '\0';
	} else {
		struct verdict *v = judge_universal_verdict(&j, U1, 0);
		judge_say(v->expected, sizeof(v->expected), "mounts");
		judge_say(v->observed, sizeof(v->observed), "mounts");
		judge_say(v->reason, sizeof(v->reason), "kept: the file system mounts after the crash (U1)");
		explain_state(&j.ex, s, st->nodes, st->n_nodes, j.last_completed);
		out->explained = j.ex.explained;
		out->setup_state = j.ex.setup_state;
		judge_say(out->diff, sizeof(out->diff), "%s", j.ex.diff);
		out->marks = xstrdup(j.ex.marks);
		judge_universal(&j);
		j.covered = xcalloc(s->nch ? s->nch : 1, 1);
		for (int m = 0; m < MODEL_COUNT; m++) {
			j.ng = 0;
			if (m == MODEL_EXPECT) {
				expect_judge(s, res, st, point, out);
				continue;
			}
			judge_model(&j, m);
			for (size_t i = 0; i < j.ng; i++) {
				emit_group(&j, &j.g[i]);
				free(j.g[i].pc);
			}
		}
		free(j.covered);
		free(j.g);
		explain_free(&j.ex);
	}
	for (size_t i = 0; i < out->n; i++)
		out->count[out->v[i].model][out->v[i].kind]++;
}

void judgement_copy(struct judgement *dst, const struct judgement *src)
{
	*dst = *src;
	dst->v = src->n ? xmemdup(src->v, src->n * sizeof(*src->v)) : NULL;
	dst->marks = src->marks ? xstrdup(src->marks) : NULL;
}

void judgement_free(struct judgement *j)
{
	free(j->v);
	free(j->marks);
	memset(j, 0, sizeof(*j));
}

/*
 * universal.c - the universal rules, expected of every file system
 * whatever it documents (docs/guarantees.md "Universal rules"): U2 fsck is
 * clean, U3 the state is explainable, U4 renames are atomic, U5 sync makes
 * everything durable. U1 (it mounts) is judged first, by model_judge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "judge/verdicts-priv.h"

/* ------------------------------------------------------------------ */
/* Universal rules */

struct verdict *judge_universal_verdict(struct judge *j, int u, int broken)
{
	struct verdict *v = judge_new_verdict(j);
	v->model = MODEL_UNIVERSAL;
	judge_say(v->rule, sizeof(v->rule), "%s", model_universal[u].id);
	judge_say(v->cite, sizeof(v->cite), "%s", model_universal[u].cite);
	v->kind = broken ? V_BROKEN : V_KEPT;
	return v;
}

/* Does world w have an option showing entry field f absent? */
static int can_be_absent(const struct judge *j, size_t w, const struct sim_field *f)
{
	const struct sim_hist *h = sim_history(j->s, f);
	if (!h)
		return 0;
	for (size_t i = 0; i <= h->n; i++) {
		int64_t v = i == 0 ? j->s->ch[h->idx[0]].old : j->s->ch[h->idx[i - 1]].val;
		if (v == SIM_ABSENT && explain_has_exact(&j->ex, w, f, (int)i))
			return 1;
	}
	return 0;
}

enum u4_failure { U4_OK, U4_MISSING, U4_BOTH, U4_HALF_EXCHANGE };

/* U4 reads the names of all renames at once: one option per entry field,
 * the same for every rename (a name that is both the value before the run
 * and the value after a later rename cannot make one rename whole in one
 * reading and another in a second). */
struct u4_pick {
	size_t *hist;       /* the seen entry fields renames change */
	size_t *fld;        /* their index in the world's fields */
	size_t *choice;     /* per field, the option chosen */
	size_t m;
};

/* The chosen position of change c's field; -1 when not seen (free). */
static int u4_pos(const struct judge *j, size_t w, const struct u4_pick *p, size_t c)
{
	for (size_t i = 0; i < p->m; i++)
		if (p->hist[i] == j->s->ch[c].hist)
			return j->ex.w[w].opt[j->ex.w[w].fld[p->fld[i]].first + p->choice[i]].pos;
	return -1;
}

static enum u4_failure u4_in(const struct judge *j, size_t w, const struct u4_pick *p, const struct sim_op *so)
{
	const struct sim *s = j->s;
	size_t c1 = so->first, c2 = so->first + 1;
	int p1 = u4_pos(j, w, p, c1), p2 = u4_pos(j, w, p, c2);
	int h1 = s->ch[c1].hpos, h2 = s->ch[c2].hpos;
	int in1 = p1 < 0 || p1 >= h1, in2 = p2 < 0 || p2 >= h2;
	int out1 = p1 < 0 || p1 != h1, out2 = p2 < 0 || p2 != h2;
	if (so->op->flags == WL_RENAME_EXCHANGE)
		return (in1 && in2) || (out1 && out2) ? U4_OK : U4_HALF_EXCHANGE;
	const struct sim_change *dst = &s->ch[c2];
	if (dst->old != SIM_ABSENT && explain_entry_shown(&j->ex, w, dst->f.ino, dst->f.key) == SIM_ABSENT &&
	    !can_be_absent(j, w, &dst->f))
		return U4_MISSING;
	if (!out2 && !in1)
		return U4_BOTH;
	return U4_OK;
}

#define U4_MAX_READINGS 4096

/* fail[r - 1] for every rename r in world w's best reading (the fewest
 * failures); returns that count. */
static size_t u4_world(const struct judge *j, size_t w, enum u4_failure *fail)
{
	const struct sim *s = j->s;
	const struct ex_world *W = &j->ex.w[w];
	size_t n = s->w->n;
	struct u4_pick p = { xcalloc(2 * n + 1, sizeof(size_t)), xcalloc(2 * n + 1, sizeof(size_t)),
			     xcalloc(2 * n + 1, sizeof(size_t)), 0 };
	size_t readings = 1;
	for (size_t r = 1; r <= n; r++) {
		const struct sim_op *so = &s->ops[r - 1];
		if (!sim_is_run(s, (int)r) || !so->applied || so->op->kind != WL_RENAME || so->n < 2)
			continue;
		for (size_t c = so->first; c < so->first + 2; c++) {
			size_t h = s->ch[c].hist, fi = W->fld_of_hist[h], dup = 0;
			for (size_t i = 0; i < p.m; i++)
				dup |= p.hist[i] == h;
			if (dup || fi == (size_t)-1 || W->fld[fi].n < 1)
				continue;
			if (W->fld[fi].n > 1 && readings * W->fld[fi].n > U4_MAX_READINGS)
				continue; /* too many readings: this field is left free */
			readings *= W->fld[fi].n;
			p.hist[p.m] = h;
			p.fld[p.m++] = fi;
		}
	}
	enum u4_failure *cur = xcalloc(n + 1, sizeof(*cur));
	size_t best = (size_t)-1;
	for (;;) {
		size_t nf = 0;
		for (size_t r = 1; r <= n; r++) {
			const struct sim_op *so = &s->ops[r - 1];
			cur[r - 1] = U4_OK;
			if (!sim_is_run(s, (int)r) || !so->applied || so->op->kind != WL_RENAME || so->n < 2)
				continue;
			cur[r - 1] = u4_in(j, w, &p, so);
			nf += cur[r - 1] != U4_OK;
		}
		if (nf < best) {
			best = nf;
			memcpy(fail, cur, n * sizeof(*cur));
		}
		if (!best)
			break;
		size_t i = 0; /* the next reading */
		while (i < p.m && ++p.choice[i] == W->fld[p.fld[i]].n)
			p.choice[i++] = 0;
		if (i == p.m)
			break;
	}
	free(cur);
	free(p.hist);
	free(p.fld);
	free(p.choice);
	return best;
}

static void judge_u4(struct judge *j)
{
	const struct sim *s = j->s;
	const struct explain *e = &j->ex;
	int reported = 0;
	size_t n = s->w->n;
	/* a world with a reading where every rename is whole; else the primary's best */
	enum u4_failure *fail = xcalloc(n + 1, sizeof(*fail)), *tmp = xcalloc(n + 1, sizeof(*tmp));
	for (size_t w = 0, have = 0; w < e->nw; w++) {
		if (!explain_judged(e, w))
			continue;
		size_t nf = u4_world(j, w, tmp);
		if (nf == 0 || w == e->primary || !have)
			memcpy(fail, tmp, n * sizeof(*tmp));
		have = 1;
		if (nf == 0)
			break;
	}
	free(tmp);
	for (int r = 1; r <= (int)n; r++) {
		const struct sim_op *so = &s->ops[r - 1];
		if (!sim_is_run(s, r) || !so->applied || so->op->kind != WL_RENAME || so->n < 2)
			continue;
		const struct sim_change *src = &s->ch[so->first], *dst = &s->ch[so->first + 1];
		int seen = (explain_change(e, e->primary, so->first) | explain_change(e, e->primary, so->first + 1)) &
			   EXC_SEEN;
		if (!seen)
			continue;
		enum u4_failure f = fail[r - 1];
		char optx[320], apath[256], bpath[256];
		judge_op_text(s, r, optx, sizeof(optx));
		explain_field_path(e, &src->f, r - 1, apath, sizeof(apath));
		explain_field_path(e, &dst->f, r, bpath, sizeof(bpath));
		int exchange = so->op->flags == WL_RENAME_EXCHANGE;
		if (!f && dst->old == SIM_ABSENT && !exchange)
			continue; /* nothing replaced: nothing to say */
		struct verdict *v = judge_universal_verdict(j, U4, f != U4_OK);
		v->op = r;
		reported |= f != U4_OK;
		switch (f) {
		case U4_OK:
			judge_say(v->path, sizeof(v->path), "%s", bpath);
			judge_say(v->expected, sizeof(v->expected), exchange ? "both names swapped, or neither" :
								     "'%.120s' names the old or the new file", bpath);
			judge_say(v->observed, sizeof(v->observed), "as promised");
			judge_say(v->reason, sizeof(v->reason), "kept: %s %s atomically (U4)", optx,
			    exchange ? "exchanged the two names" : "replaced its destination");
			break;
		case U4_MISSING:
			judge_say(v->path, sizeof(v->path), "%s", bpath);
			judge_say(v->expected, sizeof(v->expected), "'%.120s' names the old or the new file", bpath);
			judge_say(v->observed, sizeof(v->observed), "'%.150s' is missing", bpath);
			judge_say(v->reason, sizeof(v->reason),
			    "broken: %s replaces '%s', which existed before, so '%s' must name the old or the new file after a "
			    "crash (U4), but it is missing and no op removed it",
			    optx, bpath, bpath);
			break;
		case U4_BOTH:
			judge_say(v->path, sizeof(v->path), "%s", apath);
			judge_say(v->expected, sizeof(v->expected), "the %s under one of '%.80s' and '%.80s'",
			    s->in[dst->val].type == 'd' ? "directory" : "file", apath, bpath);
			judge_say(v->observed, sizeof(v->observed), "under both");
			judge_say(v->reason, sizeof(v->reason), "broken: after %s the renamed %s is visible under both '%s' and '%s' (U4)",
			    optx, s->in[dst->val].type == 'd' ? "directory" : "file", apath, bpath);
			break;
		case U4_HALF_EXCHANGE:
			judge_say(v->path, sizeof(v->path), "%s", apath);
			judge_say(v->expected, sizeof(v->expected), "'%.80s' and '%.80s' both swapped, or neither", apath, bpath);
			judge_say(v->observed, sizeof(v->observed), "only one of them swapped");
			judge_say(v->reason, sizeof(v->reason),
			    "broken: %s must swap '%s' and '%s' together (U4), but the state shows only one name changed, so "
			    "one inode is under both names and the other is lost",
			    optx, apath, bpath);
			break;
		}
	}
	free(fail);
	/* a directory under two names, whatever made it */
	int twice = e->nw > 0;
	for (size_t w = 0; w < e->nw; w++)
		if (explain_judged(e, w) && e->w[w].dir_twice < 0)
			twice = 0;
	if (twice && !reported) {
		const struct ex_world *W = &e->w[e->primary];
		struct verdict *v = judge_universal_verdict(j, U4, 1);
		judge_say(v->path, sizeof(v->path), "%s", e->nodes[W->dir_twice_node[1]].path);
		judge_say(v->expected, sizeof(v->expected), "one name per directory");
		judge_say(v->observed, sizeof(v->observed), "'%.100s' and '%.100s'", e->nodes[W->dir_twice_node[0]].path,
		    e->nodes[W->dir_twice_node[1]].path);
		judge_say(v->reason, sizeof(v->reason), "broken: the directory is visible under two names, '%s' and '%s' (U4)",
		    e->nodes[W->dir_twice_node[0]].path, e->nodes[W->dir_twice_node[1]].path);
	}
}

static void judge_u5(struct judge *j)
{
	const struct sim *s = j->s;
	const struct explain *e = &j->ex;
	for (int y = 1; y <= (int)s->w->n; y++) {
		const struct sim_op *so = &s->ops[y - 1];
		if (!sim_is_run(s, y) || !so->applied || !judge_completed(j, y) ||
		    (so->op->kind != WL_SYNC && so->op->kind != WL_SYNCFS))
			continue;
		int broken = 1;
		long miss = -1;
		for (size_t w = 0; w < e->nw && broken; w++) {
			if (!explain_judged(e, w))
				continue;
			long m = -1;
			for (size_t c = 0; c < s->nch && s->ch[c].op < y && m < 0; c++) {
				unsigned f = explain_change(e, w, c);
				if ((f & EXC_SEEN) && !(f & EXC_KEEP))
					m = (long)c;
			}
			if (m < 0)
				broken = 0;
			else if (w == e->primary || miss < 0)
				miss = m;
		}
		char optx[320];
		judge_op_text(s, y, optx, sizeof(optx));
		struct verdict *v = judge_universal_verdict(j, U5, broken);
		v->trigger = y;
		if (!broken) {
			judge_say(v->expected, sizeof(v->expected), "every earlier op");
			judge_say(v->observed, sizeof(v->observed), "all there");
			judge_say(v->reason, sizeof(v->reason), "kept: %s completed and every earlier op persisted (U5)", optx);
			continue;
		}
		const struct sim_change *ch = &s->ch[miss];
		char mtx[320];
		judge_op_text(s, ch->op, mtx, sizeof(mtx));
		v->op = ch->op;
		explain_field_path(e, &ch->f, y, v->path, sizeof(v->path));
		explain_value_desc(s, &ch->f, ch->val, v->expected, sizeof(v->expected));
		explain_observed_desc(e, &ch->f, v->observed, sizeof(v->observed));
		judge_say(v->reason, sizeof(v->reason),
		    "broken: %s completed, so every earlier op must persist (U5), but %s did not: %s expected %s, found %s",
		    optx, mtx, v->path, v->expected, v->observed);
	}
}

void judge_universal(struct judge *j)
{
	const struct check_report *st = j->st;
	if (st->fsck_status >= 0) {
		struct verdict *v = judge_universal_verdict(j, U2, !st->fsck_clean);
		judge_say(v->expected, sizeof(v->expected), "fsck clean");
		judge_say(v->observed, sizeof(v->observed), st->fsck_clean ? "clean" : "exit status %d", st->fsck_status);
		if (st->fsck_clean)
			judge_say(v->reason, sizeof(v->reason), "kept: fsck found nothing to fix (U2)");
		else
			judge_say(v->reason, sizeof(v->reason), "broken: the file system's fsck reports corruption (U2): exit status %d",
			    st->fsck_status);
	}
	struct verdict *v = judge_universal_verdict(j, U3, !j->ex.explained);
	judge_say(v->expected, sizeof(v->expected), "S0 plus some set of op pieces");
	if (j->ex.explained) {
		judge_say(v->observed, sizeof(v->observed), "explained%s", j->ex.ntorn ? " (with pieces seen in part)" : "");
		judge_say(v->reason, sizeof(v->reason), "kept: %s (U3)%s",
		    j->ex.setup_state ? "the state is the setup state: nothing of the run is needed to explain it"
				      : "some set of op pieces replayed in program order gives the state",
		    j->ex.ntorn ? "; some writes are seen in part (a torn block or a partly written-back size)" : "");
	} else {
		judge_say(v->observed, sizeof(v->observed), "unexplainable");
		judge_say(v->reason, sizeof(v->reason), "broken: no set of op pieces explains the state (U3): %.900s", j->ex.diff);
		const char *q = strchr(j->ex.diff, '\'');
		const char *qe = q ? strchr(q + 1, '\'') : NULL;
		if (qe)
			judge_say(v->path, sizeof(v->path), "%.*s", (int)(qe - q - 1), q + 1);
	}
	judge_u4(j);
	judge_u5(j);
}


/*
 * explain.c - every explanation of a crash state (see explain.h).
 *
 * Method. Every piece of a [run] op is one change of one field (sim.h), so
 * a field's history is a short list of versions v0 (S0, or the value a new
 * inode is born with), v1, v2, ... each set by one change. Replaying a set
 * P of changes on S0 in program order leaves each field at the version of
 * its last change in P (v0 when P has none), whatever else P holds; so the
 * explanations of a state are exactly the choices, per observed field, of a
 * version equal to what the state shows, and nothing couples two fields but
 * the tree they are seen through. The walk goes top-down from the root: a
 * directory is already matched to a simulator inode; each name it ever had
 * is looked up in the state; an observed node is matched to one of the
 * inodes the name ever named, by identity first (the guest's inode number),
 * by type and content second (only among inodes whose number was never
 * learned). When more than one candidate is consistent with what the node
 * shows, each is tried in a world of its own (at most EX_MAX_WORLDS).
 *
 * Options of a field: every version equal to the observed value; for a
 * block, every pair of versions a < b whose sector-wise mix is the observed
 * block (version b written in part over a: a torn write); for a size, the
 * size before a growing data write plus whole 4 KiB steps of it (the size
 * written back so far), which shows that write in part. A field with no
 * option, a name no op made, an observed link count the names do not add
 * up to, or a symlink target no op wrote makes the world unexplained, and
 * the first such difference is named in one sentence.
 *
 * Cost: linear in the fields the state shows times their history lengths,
 * times the worlds; a torn block tries at most 8 versions pairwise.
 */
#include "judge/explain.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define NO_INDEX ((size_t)-1)

struct walk {
	struct explain *e;
	struct ex_world *W;
	const struct sim *s;
	int last;                 /* last completed op: the "expected" state */
	const size_t *order;      /* observed nodes sorted by path */
	/* the choices at ambiguous matches, shared by the worlds */
	int *choice, *arity;
	size_t nchoice, choice_cap, arity_cap;
	size_t point;             /* ambiguous matches met so far in this world */
};

/* ------------------------------------------------------------------ */
/* Versions */

static size_t nversions(const struct sim *s, size_t h)
{
	return h == NO_INDEX ? 1 : s->hist[h].n + 1;
}

static int64_t version(const struct sim *s, size_t h, const struct sim_field *f, size_t i)
{
	if (h == NO_INDEX)
		return sim_value_final(s, f);
	return i == 0 ? s->ch[s->hist[h].idx[0]].old : s->ch[s->hist[h].idx[i - 1]].val;
}

static size_t hist_of(const struct sim *s, const struct sim_field *f)
{
	const struct sim_hist *h = sim_history(s, f);
	return h ? (size_t)(h - s->hist) : NO_INDEX;
}

/* ------------------------------------------------------------------ */
/* A world's fields and options */

static struct ex_field *begin_field(struct walk *w, const struct sim_field *f)
{
	struct ex_world *W = w->W;
	ALLOC_GROW(W->fld, W->nfld + 1, W->fld_cap);
	W->fld[W->nfld] = (struct ex_field){ .hist = hist_of(w->s, f), .f = *f, .first = W->nopt };
	return &W->fld[W->nfld++];
}

static void add_opt(struct walk *w, int pos, int partial)
{
	struct ex_world *W = w->W;
	ALLOC_GROW(W->opt, W->nopt + 1, W->opt_cap);
	W->opt[W->nopt++] = (struct ex_opt){ pos, partial };
	W->fld[W->nfld - 1].n++;
}

/* Options: every version equal to v. Returns how many. */
static size_t opts_eq(struct walk *w, struct ex_field *F, int64_t v)
{
	size_t before = F->n;
	for (size_t i = 0; i < nversions(w->s, F->hist); i++)
		if (version(w->s, F->hist, &F->f, i) == v)
			add_opt(w, (int)i, -1);
	return w->W->fld[w->W->nfld - 1].n - before;
}

static void differ(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void differ(struct walk *w, const char *fmt, ...)
{
	if (!w->W->explained)
		return;
	w->W->explained = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->W->diff, sizeof(w->W->diff), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Descriptions */

/* A field's path without a state: names as of S_k. */
static void sim_field_path(const struct sim *s, const struct sim_field *f, int k, char *buf, size_t n)
{
	if (f->kind == SF_ENTRY) {
		char *p = sim_entry_path_at(s, f->ino, f->key, k);
		snprintf(buf, n, "%s", p);
		free(p);
		return;
	}
	char *p = sim_path_at(s, f->ino, k);
	if (!p)
		p = sim_path_at(s, f->ino, 1 << 30);
	/* never named at k or at the end: any time it had a name */
	for (size_t i = 0; i < s->nch && !p; i++)
		p = sim_path_at(s, f->ino, s->ch[i].op);
	const char *name = p ? p : "(an unnamed file)";
	switch (f->kind) {
	case SF_BLOCK:
		snprintf(buf, n, "%s block %" PRId64, name, f->key);
		break;
	case SF_XATTR:
		snprintf(buf, n, "%s xattr %s", name, sim_str(s, f->key, NULL));
		break;
	default:
		snprintf(buf, n, "%s", name);
		break;
	}
	free(p);
}

void explain_field_path(const struct explain *e, const struct sim_field *f, int k, char *buf, size_t n)
{
	const struct sim *s = e->s;
	int nd = -1;
	if (e->node_of && f->ino >= 0 && (size_t)f->ino < s->nin)
		nd = e->node_of[f->ino];
	if (f->kind == SF_ENTRY && (nd >= 0 || f->ino == SIM_ROOT)) {
		size_t l;
		const char *nm = sim_str(s, f->key, &l);
		if (f->ino == SIM_ROOT)
			snprintf(buf, n, "%.*s", (int)l, nm);
		else
			snprintf(buf, n, "%s/%.*s", e->nodes[nd].path, (int)l, nm);
		return;
	}
	if (f->kind == SF_ENTRY || nd < 0) {
		sim_field_path(s, f, k, buf, n);
		return;
	}
	const char *name = e->nodes[nd].path;
	if (f->kind == SF_BLOCK)
		snprintf(buf, n, "%s block %" PRId64, name, f->key);
	else if (f->kind == SF_XATTR)
		snprintf(buf, n, "%s xattr %s", name, sim_str(s, f->key, NULL));
	else
		snprintf(buf, n, "%s", name);
}

static const char *who_made(const struct sim *s, int ino, char *buf, size_t n)
{
	const struct sim_inode *in = &s->in[ino];
	const char *what = in->type == 'd' ? "directory" : in->type == 'l' ? "symlink" : "file";
	if (in->born)
		snprintf(buf, n, "the %s created by op %d", what, in->born);
	else
		snprintf(buf, n, "the %s from the setup", what);
	return buf;
}

/* Short printable text at the start of a block followed only by zeros, or 0. */
static size_t short_text(const unsigned char *b, size_t len)
{
	size_t l = 0;
	while (l < 40 && l < len && b[l] >= 0x20 && b[l] < 0x7f)
		l++;
	size_t z = l;
	while (z < len && !b[z])
		z++;
	return l && z == len ? l : 0;
}

void explain_value_desc(const struct sim *s, const struct sim_field *f, int64_t v, char *buf, size_t n)
{
	char tmp[96];
	switch (f->kind) {
	case SF_ENTRY:
		if (v == SIM_ABSENT)
			snprintf(buf, n, "absent");
		else
			snprintf(buf, n, "names %s", who_made(s, (int)v, tmp, sizeof(tmp)));
		return;
	case SF_MODE:
		snprintf(buf, n, "mode %04" PRIo64, v);
		return;
	case SF_SIZE:
		if (v >= 1024 && v % 1024 == 0) {
			char h[32];
			fmt_bytes((uint64_t)v, h, sizeof(h));
			snprintf(buf, n, "size %" PRId64 " (%s)", v, h);
		} else {
			snprintf(buf, n, "size %" PRId64, v);
		}
		return;
	case SF_BLOCK: {
		char tok[24];
		sim_block_token(s, v, (uint64_t)f->key * TREE_BLOCK, TREE_BLOCK, tok);
		const unsigned char *b = sim_block(s, v);
		size_t l;
		if (tok[0] == 'z')
			snprintf(buf, n, "zeros");
		else if (tok[0] == 'p')
			snprintf(buf, n, "op %s's data", tok + 1);
		else if ((l = short_text(b, TREE_BLOCK)))
			snprintf(buf, n, "\"%.*s\"", (int)l, (const char *)b);
		else
			snprintf(buf, n, "bytes %s", tok);
		return;
	}
	case SF_XATTR:
		if (v == SIM_ABSENT) {
			snprintf(buf, n, "absent");
		} else {
			size_t l;
			const char *x = sim_str(s, v, &l);
			snprintf(buf, n, "\"%.*s\"", (int)(l > 60 ? 60 : l), x);
		}
		return;
	}
	snprintf(buf, n, "?");
}

int explain_entry_shown(const struct explain *e, size_t w, int dir, int64_t name)
{
	const struct ex_world *W = &e->w[w];
	if (dir != SIM_ROOT && W->node_of[dir] < 0)
		return -2;
	size_t l;
	const char *nm = sim_str(e->s, name, &l);
	const char *dp = dir == SIM_ROOT ? "" : e->nodes[W->node_of[dir]].path;
	char *path = *dp ? xasprintf("%s/%.*s", dp, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
	int r = SIM_ABSENT;
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->nodes[i].path, path)) {
			r = W->sim_of[i] >= 0 ? W->sim_of[i] : -3;
			break;
		}
	free(path);
	return r;
}

void explain_observed_desc(const struct explain *e, const struct sim_field *f, char *buf, size_t n)
{
	const struct sim *s = e->s;
	if (f->kind == SF_ENTRY) {
		int r = explain_entry_shown(e, e->primary, f->ino, f->key);
		char tmp[96];
		if (r == -2)
			snprintf(buf, n, "(not visible: its directory is missing)");
		else if (r == -3)
			snprintf(buf, n, "names an inode no op made");
		else if (r == SIM_ABSENT)
			snprintf(buf, n, "absent");
		else
			snprintf(buf, n, "names %s", who_made(s, r, tmp, sizeof(tmp)));
		return;
	}
	int nd = e->node_of[f->ino];
	if (nd < 0) {
		snprintf(buf, n, "(not visible: no name leads to it)");
		return;
	}
	const struct tree_node *t = &e->nodes[nd];
	switch (f->kind) {
	case SF_MODE:
		snprintf(buf, n, "mode %04" PRIo32, t->mode);
		return;
	case SF_SIZE:
		snprintf(buf, n, "size %" PRIu64, t->size);
		return;
	case SF_BLOCK: {
		if ((uint64_t)f->key * TREE_BLOCK >= t->size) {
			snprintf(buf, n, "beyond the end of the file (size %" PRIu64 ")", t->size);
			return;
		}
		const char *b = t->blocks ? t->blocks : "";
		for (int64_t i = 0; i < f->key && b; i++) {
			b = strchr(b, ',');
			if (b)
				b++;
		}
		size_t l = b ? strcspn(b, ",") : 0;
		size_t tl;
		if (l == 1 && b[0] == 'z')
			snprintf(buf, n, "zeros");
		else if (l && b[0] == 'p')
			snprintf(buf, n, "op %.*s's data", (int)(l - 1), b + 1);
		else if (t->content && f->key == 0 && (tl = short_text(t->content, t->content_len)))
			snprintf(buf, n, "\"%.*s\"", (int)tl, (const char *)t->content);
		else
			snprintf(buf, n, "bytes %.*s", (int)l, b ? b : "");
		return;
	}
	case SF_XATTR: {
		unsigned char *v = NULL;
		size_t l = 0;
		int r = tree_xattr_get(t->xattrs, sim_str(s, f->key, NULL), &v, &l);
		if (r == 1)
			snprintf(buf, n, "\"%.*s\"", (int)(l > 60 ? 60 : l), (const char *)v);
		else
			snprintf(buf, n, "absent");
		free(v);
		return;
	}
	default:
		snprintf(buf, n, "?");
	}
}

static void expected_desc(struct walk *w, const struct sim_field *f, char *buf, size_t n)
{
	explain_value_desc(w->s, f, sim_value_at(w->s, f, w->last), buf, n);
}

/* ------------------------------------------------------------------ */
/* Options of data fields */

static int token_is(const struct sim *s, int64_t id, uint64_t off, size_t len, const char *tok, size_t toklen)
{
	char t[24];
	sim_block_token(s, id, off, len, t);
	return strlen(t) == toklen && !memcmp(t, tok, toklen);
}

/* Block options: exact versions, then pairs a < b whose sector-wise mix is
 * the observed block (b written in part over a). */
static void opts_block(struct walk *w, struct ex_field *F, const char *tok, size_t toklen, size_t len)
{
	const struct sim *s = w->s;
	uint64_t off = (uint64_t)F->f.key * TREE_BLOCK;
	size_t nv = nversions(s, F->hist);
	for (size_t i = 0; i < nv; i++)
		if (token_is(s, version(s, F->hist, &F->f, i), off, len, tok, toklen))
			add_opt(w, (int)i, -1);
	if (w->W->fld[w->W->nfld - 1].n || toklen < 2 || tok[0] != 'h' || nv < 2 || nv > 8)
		return;
	unsigned char mix[TREE_BLOCK];
	char t[24];
	for (size_t a = 0; a < nv; a++)
		for (size_t b = a + 1; b < nv; b++) {
			const unsigned char *A = sim_block(s, version(s, F->hist, &F->f, a));
			const unsigned char *B = sim_block(s, version(s, F->hist, &F->f, b));
			for (unsigned m = 1; m < 255; m++) {
				for (int sct = 0; sct < 8; sct++)
					memcpy(mix + sct * 512, (m >> sct) & 1 ? B + sct * 512 : A + sct * 512, 512);
				tree_block_token(mix, len, off, t);
				if (strlen(t) == toklen && !memcmp(t, tok, toklen)) {
					add_opt(w, (int)a, (int)b);
					break;
				}
			}
		}
}

/* Size options: exact versions, and a growing data write seen in part (the
 * size before it plus whole 4 KiB steps: what ext4 writes back as i_disksize). */
static void opts_size(struct walk *w, struct ex_field *F, uint64_t size)
{
	const struct sim *s = w->s;
	opts_eq(w, F, (int64_t)size);
	for (size_t i = 1; F->hist != NO_INDEX && i < nversions(s, F->hist); i++) {
		const struct sim_change *c = &s->ch[s->hist[F->hist].idx[i - 1]];
		if (c->data && (uint64_t)c->old < size && size < (uint64_t)c->val && size % TREE_BLOCK == 0)
			add_opt(w, (int)i - 1, (int)i);
	}
}

/* ------------------------------------------------------------------ */
/* Attribution */

static int find_node(struct walk *w, const char *path)
{
	size_t lo = 0, hi = w->e->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(w->e->nodes[w->order[mid]].path, path);
		if (!c)
			return (int)w->order[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static const struct tree_node *cmp_nodes_base;
static int cmp_order(const void *a, const void *b)
{
	return strcmp(cmp_nodes_base[*(const size_t *)a].path, cmp_nodes_base[*(const size_t *)b].path);
}

struct unknown_xattr {
	struct walk *w;
	const struct sim_inode *in;
	const struct tree_node *t;
	int report, bad;
};

static void unknown_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	struct unknown_xattr *u = ctx;
	int64_t id = sim_str_find(u->w->s, name->buf, name->len);
	int known = 0;
	for (size_t i = 0; id >= 0 && i < u->in->nallx; i++)
		known |= u->in->allx[i] == id;
	if (!known) {
		u->bad = 1;
		if (u->report)
			differ(u->w, "'%s' has xattr %s, which no op ever set", u->t->path, name->buf);
	}
	(void)value;
}

/* The fields of inode ino as node nd shows them (not its directory entries).
 * report: name the first difference. Returns 1 when every field has an option. */
static int attribute_inode(struct walk *w, int ino, int nd, int report)
{
	const struct sim *s = w->s;
	const struct sim_inode *in = &s->in[ino];
	const struct tree_node *t = &w->e->nodes[nd];
	char exp[160], got[160];
	int ok = 1;
	if (in->type != 'l') {
		struct sim_field f = { SF_MODE, ino, 0 };
		struct ex_field *F = begin_field(w, &f);
		if (!opts_eq(w, F, t->mode)) {
			ok = 0;
			if (report) {
				expected_desc(w, &f, exp, sizeof(exp));
				differ(w, "'%s' has mode %04" PRIo32 ", which no op ever gave it (expected: %s)", t->path,
				       t->mode, exp);
			}
		}
	} else if (!in->target || !t->target || strcmp(in->target, t->target)) {
		ok = 0;
		if (report)
			differ(w, "symlink '%s' points to '%s' (expected: '%s')", t->path, t->target ? t->target : "",
			       in->target ? in->target : "");
	}
	if (in->type == 'f') {
		struct sim_field f = { SF_SIZE, ino, 0 };
		struct ex_field *F = begin_field(w, &f);
		opts_size(w, F, t->size);
		F = &w->W->fld[w->W->nfld - 1];
		if (!F->n) {
			ok = 0;
			if (report) {
				expected_desc(w, &f, exp, sizeof(exp));
				differ(w, "'%s' has size %" PRIu64 ", which no op ever gave it (expected: %s)", t->path,
				       t->size, exp);
			}
		}
		uint64_t nb = (t->size + TREE_BLOCK - 1) / TREE_BLOCK;
		const char *next = t->blocks ? t->blocks : ""; /* block b's token: the list is walked once */
		for (uint64_t b = 0; b < nb; b++) {
			struct sim_field bf = { SF_BLOCK, ino, (int64_t)b };
			size_t toklen = next ? strcspn(next, ",") : 0;
			const char *tok = next ? next : "";
			next = next && next[toklen] == ',' ? next + toklen + 1 : NULL;
			size_t len = t->size - b * TREE_BLOCK < TREE_BLOCK ? (size_t)(t->size - b * TREE_BLOCK) : TREE_BLOCK;
			F = begin_field(w, &bf);
			opts_block(w, F, tok, toklen, len);
			F = &w->W->fld[w->W->nfld - 1];
			if (!F->n) {
				ok = 0;
				if (report) {
					expected_desc(w, &bf, exp, sizeof(exp));
					explain_observed_desc(w->e, &bf, got, sizeof(got));
					differ(w, "'%s' block %" PRIu64 " holds %s, which no op ever wrote there (expected: %s)",
					       t->path, b, got, exp);
				}
			}
		}
	}
	/* xattrs: every name it ever had, and every name the state shows */
	for (size_t i = 0; i < in->nallx; i++) {
		struct sim_field f = { SF_XATTR, ino, in->allx[i] };
		unsigned char *v = NULL;
		size_t l = 0;
		int r = tree_xattr_get(t->xattrs, sim_str(s, f.key, NULL), &v, &l);
		int64_t id = r == 1 ? sim_str_find(s, (const char *)v, l) : SIM_ABSENT;
		free(v);
		struct ex_field *F = begin_field(w, &f);
		if ((r == 1 && id < 0) || !opts_eq(w, F, id)) {
			ok = 0;
			if (report) {
				expected_desc(w, &f, exp, sizeof(exp));
				explain_observed_desc(w->e, &f, got, sizeof(got));
				differ(w, "'%s' xattr %s is %s, which no op ever set (expected: %s)", t->path,
				       sim_str(s, f.key, NULL), got, exp);
			}
		}
	}
	struct unknown_xattr ux = { w, in, t, report, 0 };
	tree_xattrs_each(t->xattrs, unknown_xattr, &ux);
	return ok && !ux.bad;
}

/* An ambiguous match with `arity` consistent candidates: which one this world takes. */
static int choose(struct walk *w, int arity)
{
	size_t i = w->point++;
	if (i == w->nchoice) {
		ALLOC_GROW(w->choice, i + 1, w->choice_cap);
		ALLOC_GROW(w->arity, i + 1, w->arity_cap);
		w->choice[i] = 0;
		w->nchoice++;
	}
	w->arity[i] = arity;
	return w->choice[i] < arity ? w->choice[i] : 0;
}

static int content_score(const struct sim *s, int ino, const struct tree_node *t)
{
	const struct sim_inode *in = &s->in[ino];
	int sc = 0;
	if (in->mode == t->mode)
		sc++;
	if (in->type == 'f' && in->size == t->size)
		sc += 2;
	if (in->type == 'l' && in->target && t->target && !strcmp(in->target, t->target))
		sc += 2;
	return sc;
}

/* Is a trial attribution of ino to node nd consistent? Leaves no trace. */
static int consistent(struct walk *w, int ino, int nd)
{
	struct ex_world *W = w->W;
	size_t nfld = W->nfld, nopt = W->nopt;
	int ok = attribute_inode(w, ino, nd, 0);
	W->nfld = nfld;
	W->nopt = nopt;
	return ok;
}

/* Which simulator inode, of those entry f ever named, is node nd? -1 when none can be. */
static int match_inode(struct walk *w, const struct sim_field *f, int nd)
{
	const struct sim *s = w->s;
	const struct tree_node *t = &w->e->nodes[nd];
	size_t h = hist_of(s, f);
	int cand[64], nc = 0, strong = 0;
	for (size_t i = 0; i < nversions(s, h) && nc < 64; i++) {
		int64_t v = version(s, h, f, i);
		if (v == SIM_ABSENT || s->in[v].type != t->type)
			continue;
		int dup = 0;
		for (int k = 0; k < nc; k++)
			dup |= cand[k] == v;
		if (dup)
			continue;
		const struct sim_inode *in = &s->in[v];
		int is_strong = in->ino && in->ino == t->ino;
		if (in->ino && !is_strong)
			continue; /* a different file, even if it has the same bytes */
		/* already shown by a node with another inode number: not this one */
		if (w->W->node_of[v] >= 0 && w->e->nodes[w->W->node_of[v]].ino != t->ino)
			continue;
		if (is_strong && !strong) {
			nc = 0;
			strong = 1;
		}
		if (is_strong == strong)
			cand[nc++] = (int)v;
	}
	if (nc <= 1)
		return nc ? cand[0] : -1;
	int ok[64], nok = 0;
	for (int k = 0; k < nc; k++)
		if (w->W->node_of[cand[k]] >= 0 || consistent(w, cand[k], nd))
			ok[nok++] = cand[k];
	if (nok == 1)
		return ok[0];
	if (nok > 1)
		return ok[choose(w, nok)];
	int best = cand[0], best_score = -1;
	for (int k = 0; k < nc; k++) {
		int sc = content_score(s, cand[k], t);
		if (sc >= best_score) {
			best = cand[k];
			best_score = sc;
		}
	}
	return best;
}

static const char *type_word(char type)
{
	return type == 'd' ? "directory" : type == 'l' ? "symlink" : "file";
}

static void visit_dir(struct walk *w, int dir, const char *dpath, int depth)
{
	const struct sim *s = w->s;
	struct ex_world *W = w->W;
	const struct sim_inode *d = &s->in[dir];
	if (depth > 64)
		return;
	for (size_t i = 0; i < d->nall; i++) {
		struct sim_field f = { SF_ENTRY, dir, d->allnames[i] };
		size_t l;
		const char *nm = sim_str(s, f.key, &l);
		char *path = *dpath ? xasprintf("%s/%.*s", dpath, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		int nd = find_node(w, path);
		char exp[128];
		if (nd < 0) {
			struct ex_field *F = begin_field(w, &f);
			if (!opts_eq(w, F, SIM_ABSENT)) {
				expected_desc(w, &f, exp, sizeof(exp));
				differ(w, "'%s' is missing, but no op ever removed it (expected: %s; found: absent)", path,
				       exp);
			}
			free(path);
			continue;
		}
		const struct tree_node *t = &w->e->nodes[nd];
		int ino = match_inode(w, &f, nd);
		struct ex_field *F = begin_field(w, &f);
		if (ino < 0) {
			expected_desc(w, &f, exp, sizeof(exp));
			differ(w, "'%s' is a %s with inode number %" PRIu64 " that no op ever put there (expected: %s)",
			       path, type_word(t->type), t->ino, exp);
			free(path);
			continue;
		}
		opts_eq(w, F, ino);
		W->sim_of[nd] = ino;
		int seen = W->node_of[ino];
		if (seen < 0) {
			W->node_of[ino] = nd;
			attribute_inode(w, ino, nd, 1);
			if (s->in[ino].type == 'd')
				visit_dir(w, ino, path, depth + 1);
		} else if (w->e->nodes[seen].ino != t->ino) {
			differ(w, "'%s' and '%s' are two different inodes in the state, but the same file in the workload",
			       w->e->nodes[seen].path, path);
		} else if (s->in[ino].type == 'd' && W->dir_twice < 0) {
			W->dir_twice = ino;
			W->dir_twice_node[0] = seen;
			W->dir_twice_node[1] = nd;
		}
		free(path);
	}
}

/* Nodes no name leads to, and link counts the names do not add up to. */
static void check_tree(struct walk *w)
{
	struct explain *e = w->e;
	struct ex_world *W = w->W;
	for (size_t k = 0; k < e->n; k++) {
		size_t i = w->order[k];
		if (W->sim_of[i] >= 0)
			continue;
		const char *slash = strrchr(e->nodes[i].path, '/');
		int parent_ok = 1;
		if (slash) {
			char *pp = xasprintf("%.*s", (int)(slash - e->nodes[i].path), e->nodes[i].path);
			int pn = find_node(w, pp);
			parent_ok = pn >= 0 && W->sim_of[pn] >= 0;
			free(pp);
		}
		if (parent_ok)
			differ(w, "'%s' is in the state, but no op of the workload ever created it", e->nodes[i].path);
	}
	for (size_t i = 0; i < e->n; i++) {
		int x = W->sim_of[i];
		if (x < 0 || w->s->in[x].type != 'f')
			continue;
		uint32_t links = 0;
		for (size_t k = 0; k < e->n; k++)
			links += W->sim_of[k] == x;
		if (links != e->nodes[i].nlink)
			differ(w, "'%s' has %" PRIu32 " link%s, but the state shows %" PRIu32 " name%s for it",
			       e->nodes[i].path, e->nodes[i].nlink, e->nodes[i].nlink == 1 ? "" : "s", links,
			       links == 1 ? "" : "s");
	}
}

static void walk_world(struct walk *w)
{
	const struct sim *s = w->s;
	struct explain *e = w->e;
	struct ex_world *W = w->W;
	memset(W, 0, sizeof(*W));
	W->explained = 1;
	W->dir_twice = -1;
	W->node_of = xmalloc((s->nin ? s->nin : 1) * sizeof(int));
	W->sim_of = xmalloc((e->n ? e->n : 1) * sizeof(int));
	for (size_t i = 0; i < s->nin; i++)
		W->node_of[i] = -1;
	for (size_t i = 0; i < e->n; i++)
		W->sim_of[i] = -1;
	w->point = 0;
	/* descriptions during the walk read this world */
	e->node_of = W->node_of;
	e->sim_of = W->sim_of;
	e->primary = (size_t)(W - e->w);
	visit_dir(w, SIM_ROOT, "", 0);
	check_tree(w);
	W->fld_of_hist = xmalloc((s->nhist ? s->nhist : 1) * sizeof(size_t));
	for (size_t i = 0; i < s->nhist; i++)
		W->fld_of_hist[i] = NO_INDEX;
	for (size_t i = 0; i < W->nfld; i++) {
		const struct ex_field *F = &W->fld[i];
		if (F->hist != NO_INDEX)
			W->fld_of_hist[F->hist] = i;
		for (size_t k = 0; k < F->n; k++)
			if (W->opt[F->first + k].partial >= 0) {
				W->ntorn++;
				break;
			}
	}
}

/* ------------------------------------------------------------------ */
/* Queries */

static const struct ex_field *field_of_change(const struct explain *e, size_t w, size_t c)
{
	size_t fi = e->w[w].fld_of_hist[e->s->ch[c].hist];
	return fi == NO_INDEX ? NULL : &e->w[w].fld[fi];
}

unsigned explain_change(const struct explain *e, size_t w, size_t c)
{
	const struct ex_field *F = field_of_change(e, w, c);
	if (!F)
		return 0;
	const struct ex_opt *o = &e->w[w].opt[F->first];
	int hp = e->s->ch[c].hpos;
	unsigned r = EXC_SEEN;
	int all = F->n > 0;
	for (size_t k = 0; k < F->n; k++) {
		if (o[k].pos >= hp)
			r |= EXC_KEEP;
		if (o[k].pos == hp)
			r |= EXC_WHOLE;
		else if (o[k].partial == hp)
			r |= EXC_PART;
		if (o[k].pos != hp && o[k].partial != hp)
			all = 0;
	}
	return all ? r | EXC_SHOWN : r;
}

int explain_field_shows(const struct explain *e, size_t w, size_t hist, int (*pick)(void *ctx, size_t change),
			void *ctx)
{
	size_t fi = e->w[w].fld_of_hist[hist];
	if (fi == NO_INDEX)
		return 0;
	const struct ex_field *F = &e->w[w].fld[fi];
	const size_t *idx = e->s->hist[hist].idx;
	for (size_t k = 0; k < F->n; k++) {
		const struct ex_opt *o = &e->w[w].opt[F->first + k];
		if (!((o->pos >= 1 && pick(ctx, idx[o->pos - 1])) || (o->partial >= 1 && pick(ctx, idx[o->partial - 1]))))
			return 0;
	}
	return F->n > 0;
}

int explain_judged(const struct explain *e, size_t w)
{
	return !e->explained || e->w[w].explained;
}

int explain_has_exact(const struct explain *e, size_t w, const struct sim_field *f, int pos)
{
	size_t h = hist_of(e->s, f);
	if (h == NO_INDEX)
		return 0;
	size_t fi = e->w[w].fld_of_hist[h];
	if (fi == NO_INDEX)
		return 0;
	const struct ex_field *F = &e->w[w].fld[fi];
	for (size_t k = 0; k < F->n; k++)
		if (e->w[w].opt[F->first + k].pos == pos && e->w[w].opt[F->first + k].partial < 0)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Marks: the simplest explanation, per op */

enum piece {
	P_UNSEEN,      /* its field is not seen */
	P_SHOWN,       /* every explanation has it */
	P_PART,        /* every explanation has it, some only in part */
	P_OVERWRITTEN, /* every explanation overwrote it with a later piece */
	P_EITHER,      /* some explanations have it, some not */
	P_MISSING,     /* no explanation has it */
	P_NKINDS
};

static enum piece classify(const struct explain *e, size_t w, size_t c)
{
	const struct ex_field *F = field_of_change(e, w, c);
	if (!F)
		return P_UNSEEN;
	if (!F->n)
		return P_MISSING;
	int hp = e->s->ch[c].hpos, shown = 1, part = 1, over = 1, keep = 0;
	for (size_t k = 0; k < F->n; k++) {
		const struct ex_opt *o = &e->w[w].opt[F->first + k];
		shown &= o->pos == hp || o->partial == hp;
		part &= o->partial == hp && o->pos != hp;
		over &= o->pos > hp;
		keep |= o->pos >= hp || o->partial == hp;
	}
	if (shown)
		return part ? P_PART : P_SHOWN;
	if (over)
		return P_OVERWRITTEN;
	return keep ? P_EITHER : P_MISSING;
}

static void set_marks(struct explain *e)
{
	const struct sim *s = e->s;
	e->marks = xmalloc(s->w->n + 1);
	for (size_t i = 0; i < s->w->n; i++) {
		const struct sim_op *so = &s->ops[i];
		char m;
		if (so->op->section == WL_SETUP)
			m = EX_MARK_SETUP;
		else if (so->guest_err > 0 || (!so->applied && so->sim_err))
			m = EX_MARK_FAILED;
		else if (!so->n)
			m = EX_MARK_NOEFFECT;
		else {
			size_t cnt[P_NKINDS] = { 0 };
			for (size_t k = so->first; k < so->first + so->n; k++)
				cnt[classify(e, e->primary, k)]++;
			/* the simplest explanation: a piece only some explanations
			 * have counts when the op shows anyway, and not otherwise */
			if (cnt[P_SHOWN])
				m = cnt[P_MISSING] || cnt[P_PART] ? EX_MARK_PARTIAL : EX_MARK_PERSISTED;
			else if (cnt[P_PART] || (cnt[P_OVERWRITTEN] && cnt[P_MISSING]))
				m = EX_MARK_PARTIAL;
			else if (cnt[P_OVERWRITTEN])
				m = EX_MARK_SUPERSEDED;
			else if (cnt[P_MISSING] || cnt[P_EITHER])
				m = EX_MARK_LOST;
			else
				m = EX_MARK_UNSEEN;
		}
		e->marks[i] = m;
	}
	e->marks[s->w->n] = '\0';
}

/* Does S0 itself explain world w (every seen field has v0 as an option)? */
static int is_setup_state(const struct explain *e, size_t w)
{
	const struct ex_world *W = &e->w[w];
	if (!W->explained)
		return 0;
	for (size_t i = 0; i < W->nfld; i++) {
		int has0 = 0;
		for (size_t k = 0; k < W->fld[i].n && !has0; k++)
			has0 = W->opt[W->fld[i].first + k].pos == 0 && W->opt[W->fld[i].first + k].partial < 0;
		if (!has0)
			return 0;
	}
	return 1;
}

/* ------------------------------------------------------------------ */

void explain_state(struct explain *e, const struct sim *s, const struct tree_node *nodes, size_t n,
		   int last_completed)
{
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->nodes = nodes;
	e->n = n;
	size_t *order = xmalloc((n ? n : 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	cmp_nodes_base = nodes;
	qsort(order, n, sizeof(size_t), cmp_order);

	struct walk w = { .e = e, .s = s, .last = last_completed, .order = order };
	size_t cap = 0;
	for (;;) {
		ALLOC_GROW(e->w, e->nw + 1, cap);
		w.W = &e->w[e->nw++];
		walk_world(&w);
		w.nchoice = w.point; /* the choices this world met */
		size_t i = w.nchoice;
		while (i > 0 && w.choice[i - 1] + 1 >= w.arity[i - 1])
			i--;
		if (i == 0)
			break;
		if (e->nw == EX_MAX_WORLDS) {
			e->nw_capped = 1;
			break;
		}
		w.choice[i - 1]++;
		w.nchoice = i;
	}
	free(w.choice);
	free(w.arity);
	free(order);

	e->primary = 0;
	for (size_t i = 0; i < e->nw; i++)
		if (e->w[i].explained) {
			if (!e->explained)
				e->primary = i;
			e->explained = 1;
			e->setup_state |= is_setup_state(e, i);
		}
	const struct ex_world *P = &e->w[e->primary];
	snprintf(e->diff, sizeof(e->diff), "%s", P->diff);
	e->ntorn = P->ntorn;
	e->node_of = P->node_of;
	e->sim_of = P->sim_of;
	set_marks(e);
}

void explain_free(struct explain *e)
{
	for (size_t i = 0; i < e->nw; i++) {
		struct ex_world *W = &e->w[i];
		free(W->node_of);
		free(W->sim_of);
		free(W->fld);
		free(W->opt);
		free(W->fld_of_hist);
	}
	free(e->w);
	free(e->marks);
	memset(e, 0, sizeof(*e));
}

/*
 * sim-tree.c - the program's tree in S_k as the checker would have seen it
 * (core/tree.h nodes), so a crash state's observed tree can be put beside
 * the tree the program had when the power was cut (compare, report).
 */
#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/util.h"
#include "judge/sim.h"

struct walk {
	const struct sim *s;
	int k;
	struct tree_node *v;
	size_t n, cap;
	int depth;
};

static uint32_t nlink_at(const struct sim *s, int ino, int k)
{
	uint32_t n = 0;
	for (size_t d = 0; d < s->nin; d++) {
		const struct sim_inode *dn = &s->in[d];
		if (dn->type != 'd')
			continue;
		for (size_t i = 0; i < dn->nall; i++) {
			struct sim_field f = { SF_ENTRY, (int)d, dn->allnames[i] };
			if (sim_value_at(s, &f, k) == ino)
				n++;
		}
	}
	return n;
}

static void node_of(struct walk *w, int ino, const char *path, struct tree_node *t)
{
	const struct sim *s = w->s;
	const struct sim_inode *in = &s->in[ino];
	struct sim_field f = { SF_MODE, ino, 0 };
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->type = in->type;
	t->mode = (uint32_t)sim_value_at(s, &f, w->k) & 07777;
	t->ino = in->ino;
	t->nlink = nlink_at(s, ino, w->k);
	for (size_t i = 0; i < in->nallx; i++) {
		struct sim_field x = { SF_XATTR, ino, in->allx[i] };
		int64_t v = sim_value_at(s, &x, w->k);
		if (v == SIM_ABSENT)
			continue;
		size_t nl, vl;
		const char *nm = sim_str(s, in->allx[i], &nl);
		const char *val = sim_str(s, v, &vl);
		t->xattrs = tree_xattrs_append(t->xattrs, nm, val, vl);
	}
	if (in->type == 'l') {
		t->target = xstrdup(in->target ? in->target : "");
		t->size = strlen(t->target);
	}
	if (in->type == 'd') {
		t->nlink += 1; /* "." */
		for (size_t i = 0; i < in->nall; i++) {
			struct sim_field e = { SF_ENTRY, ino, in->allnames[i] };
			int64_t c = sim_value_at(s, &e, w->k);
			if (c >= 0 && (size_t)c < s->nin && s->in[c].type == 'd')
				t->nlink++; /* the child's ".." */
		}
	}
	if (in->type != 'f')
		return;
	struct sim_field sz = { SF_SIZE, ino, 0 };
	t->size = (uint64_t)sim_value_at(s, &sz, w->k);
	struct sbuf toks = SBUF_INIT, bytes = SBUF_INIT;
	for (uint64_t off = 0; off < t->size; off += TREE_BLOCK) {
		struct sim_field b = { SF_BLOCK, ino, (int64_t)(off / TREE_BLOCK) };
		int64_t id = sim_value_at(s, &b, w->k);
		size_t len = t->size - off < TREE_BLOCK ? (size_t)(t->size - off) : TREE_BLOCK;
		char tok[24];
		sim_block_token(s, id, off, len, tok);
		sbuf_addf(&toks, "%s%s", toks.len ? "," : "", tok);
		if (t->size <= TREE_INLINE_MAX)
			sbuf_add(&bytes, sim_block(s, id), len);
	}
	t->blocks = sbuf_detach(&toks);
	if (t->size <= TREE_INLINE_MAX) {
		t->content_len = bytes.len;
		t->content = (unsigned char *)sbuf_detach(&bytes);
	}
	sbuf_free(&bytes);
}

static void walk_dir(struct walk *w, int dir, const char *prefix)
{
	const struct sim *s = w->s;
	const struct sim_inode *dn = &s->in[dir];
	if (++w->depth > 64) {
		w->depth--;
		return;
	}
	for (size_t i = 0; i < dn->nall; i++) {
		struct sim_field e = { SF_ENTRY, dir, dn->allnames[i] };
		int64_t c = sim_value_at(s, &e, w->k);
		if (c < 0 || (size_t)c >= s->nin)
			continue;
		size_t l;
		const char *nm = sim_str(s, dn->allnames[i], &l);
		char *path = *prefix ? xasprintf("%s/%.*s", prefix, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		if (w->n == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 16;
			w->v = xrealloc(w->v, w->cap * sizeof(*w->v));
		}
		node_of(w, (int)c, path, &w->v[w->n++]);
		if (s->in[c].type == 'd')
			walk_dir(w, (int)c, path);
		free(path);
	}
	w->depth--;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct tree_node *)a)->path, ((const struct tree_node *)b)->path);
}

void sim_tree_at(const struct sim *s, int k, struct tree_node **out, size_t *n)
{
	struct walk w = { .s = s, .k = k };
	if (s->nin)
		walk_dir(&w, SIM_ROOT, "");
	if (w.n)
		qsort(w.v, w.n, sizeof(*w.v), by_path);
	*out = w.v;
	*n = w.n;
}

/*
 * simtree.h - render a simulated state as the observed tree the checker
 * guest would capture (core/tree.h), for the judge's tests: S_k exactly, or
 * S_k with some fields changed (a piece removed, a torn block, half a
 * rename). The value of every field comes from a callback, so a test can
 * build any state, possible or not.
 */
#ifndef CRASHLAB_TESTS_UNIT_SIMTREE_H
#define CRASHLAB_TESTS_UNIT_SIMTREE_H

#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/util.h"
#include "judge/sim.h"

typedef int64_t (*st_value_fn)(void *ctx, const struct sim_field *f);

struct st_tree {
	struct tree_node *v;
	size_t n, cap;
};

/* The value S_k gives: ctx is a struct st_at. */
struct st_at {
	const struct sim *s;
	int k;
};
static inline int64_t st_value_at(void *ctx, const struct sim_field *f)
{
	const struct st_at *a = ctx;
	return sim_value_at(a->s, f, a->k);
}

/* The guest's inode number a render gives simulator inode x. */
static inline uint64_t st_ino(const struct sim *s, int x)
{
	return s->in[x].ino ? s->in[x].ino : 900000 + (uint64_t)x;
}

struct st_xa {
	const char *name;
	int64_t val;
};

static inline int st_xa_cmp(const void *a, const void *b)
{
	return strcmp(((const struct st_xa *)a)->name, ((const struct st_xa *)b)->name);
}

static inline void st_walk(const struct sim *s, st_value_fn val, void *ctx, int dir, const char *dpath, int depth,
			   struct st_tree *t)
{
	if (depth > 16)
		return;
	const struct sim_inode *d = &s->in[dir];
	for (size_t i = 0; i < d->nall; i++) {
		struct sim_field ef = { SF_ENTRY, dir, d->allnames[i] };
		int64_t child = val(ctx, &ef);
		if (child == SIM_ABSENT)
			continue;
		size_t l;
		const char *nm = sim_str(s, ef.key, &l);
		char *path = *dpath ? xasprintf("%s/%.*s", dpath, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		const struct sim_inode *in = &s->in[child];
		ALLOC_GROW(t->v, t->n + 1, t->cap);
		struct tree_node *nd = &t->v[t->n++];
		memset(nd, 0, sizeof(*nd));
		nd->path = path;
		nd->type = in->type;
		nd->ino = st_ino(s, (int)child);
		struct sim_field mf = { SF_MODE, (int)child, 0 };
		nd->mode = in->type == 'l' ? 0777 : (uint32_t)val(ctx, &mf);
		if (in->type == 'l') {
			nd->target = xstrdup(in->target ? in->target : "");
			nd->size = strlen(nd->target);
		} else if (in->type == 'd') {
			nd->size = 4096;
		} else {
			struct sim_field sf = { SF_SIZE, (int)child, 0 };
			nd->size = (uint64_t)val(ctx, &sf);
			struct sbuf b = SBUF_INIT;
			uint64_t nb = (nd->size + TREE_BLOCK - 1) / TREE_BLOCK;
			for (uint64_t k = 0; k < nb; k++) {
				struct sim_field bf = { SF_BLOCK, (int)child, (int64_t)k };
				int64_t id = val(ctx, &bf);
				size_t len = nd->size - k * TREE_BLOCK < TREE_BLOCK ? (size_t)(nd->size - k * TREE_BLOCK) : TREE_BLOCK;
				char tok[24];
				sim_block_token(s, id, k * TREE_BLOCK, len, tok);
				sbuf_addf(&b, "%s%s", k ? "," : "", tok);
				if (k == 0 && nd->size <= TREE_INLINE_MAX) {
					nd->content = xmalloc(nd->size + 1);
					memcpy(nd->content, sim_block(s, id), nd->size);
					nd->content_len = nd->size;
				}
			}
			nd->blocks = sbuf_detach(&b);
		}
		struct st_xa xa[64];
		size_t nx = 0;
		for (size_t k = 0; k < in->nallx && nx < 64; k++) {
			struct sim_field xf = { SF_XATTR, (int)child, in->allx[k] };
			int64_t v = val(ctx, &xf);
			if (v != SIM_ABSENT)
				xa[nx++] = (struct st_xa){ sim_str(s, in->allx[k], NULL), v };
		}
		qsort(xa, nx, sizeof(xa[0]), st_xa_cmp);
		for (size_t k = 0; k < nx; k++) {
			size_t vl;
			const char *v = sim_str(s, xa[k].val, &vl);
			nd->xattrs = tree_xattrs_append(nd->xattrs, xa[k].name, v, vl);
		}
		if (in->type == 'd')
			st_walk(s, val, ctx, (int)child, path, depth + 1, t);
	}
}

/* Render the state whose fields val gives into t (freed with st_free). */
static inline void st_render(const struct sim *s, st_value_fn val, void *ctx, struct st_tree *t)
{
	memset(t, 0, sizeof(*t));
	st_walk(s, val, ctx, SIM_ROOT, "", 0, t);
	/* link counts: names of the same inode number */
	for (size_t i = 0; i < t->n; i++) {
		uint32_t links = 0;
		for (size_t k = 0; k < t->n; k++)
			links += t->v[k].ino == t->v[i].ino;
		t->v[i].nlink = t->v[i].type == 'd' ? 2 : links;
	}
}

static inline void st_render_at(const struct sim *s, int k, struct st_tree *t)
{
	struct st_at a = { s, k };
	st_render(s, st_value_at, &a, t);
}

/* Replace block b's token of node nd. */
static inline void st_set_token(struct tree_node *nd, uint64_t b, const char *tok)
{
	struct sbuf out = SBUF_INIT;
	const char *p = nd->blocks ? nd->blocks : "";
	for (uint64_t i = 0; *p || i <= b; i++) {
		size_t l = strcspn(p, ",");
		sbuf_addf(&out, "%s%.*s", i ? "," : "", (int)(i == b ? strlen(tok) : l), i == b ? tok : p);
		p += l;
		if (*p == ',')
			p++;
		if (!*p && i >= b)
			break;
	}
	free(nd->blocks);
	nd->blocks = sbuf_detach(&out);
}

static inline int st_find(const struct st_tree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return (int)i;
	return -1;
}

static inline void st_free(struct st_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		tree_node_free(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

#endif

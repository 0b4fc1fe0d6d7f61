/*
 * sim-store.c - the reference simulator's store (see sim.h): interned names,
 * xattr values and blocks, each field's history of changes, the value of a
 * field in any S_k, and paths as of S_k. The op semantics are in sim.c.
 */
#include "judge/sim-priv.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/util.h"

/* ------------------------------------------------------------------ */
/* Interning */

static int same_str(const void *key, size_t idx, void *ctx)
{
	const struct sim_strs *t = ctx;
	const struct sbuf *k = key;
	return t->len[idx] == k->len && !memcmp(t->s[idx], k->buf, k->len);
}

static int64_t str_lookup(const struct sim *s, const char *str, size_t len)
{
	struct sbuf k = { (char *)str, len, 0 };
	size_t i = hmap_get(&s->strs.map, fnv1a64(str, len), same_str, &k, (void *)&s->strs);
	return i == HMAP_NONE ? -1 : (int64_t)i;
}

int64_t sim_str_intern(struct sim *s, const char *str, size_t len)
{
	struct sim_strs *t = &s->strs;
	int64_t id = str_lookup(s, str, len);
	if (id >= 0)
		return id;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->s = xrealloc(t->s, t->cap * sizeof(*t->s));
		t->len = xrealloc(t->len, t->cap * sizeof(*t->len));
	}
	t->s[t->n] = xmemdup(str, len);
	t->len[t->n] = len;
	hmap_put(&t->map, fnv1a64(str, len), t->n);
	return (int64_t)t->n++;
}

int64_t sim_str_find(const struct sim *s, const char *str, size_t len)
{
	return str_lookup(s, str, len);
}

const char *sim_str(const struct sim *s, int64_t id, size_t *len)
{
	assert(id >= 0 && (size_t)id < s->strs.n);
	if (len)
		*len = s->strs.len[id];
	return s->strs.s[id];
}

static int same_block(const void *key, size_t idx, void *ctx)
{
	const struct sim_blocks *t = ctx;
	return !memcmp(t->b[idx], key, TREE_BLOCK);
}

int64_t sim_blk_intern(struct sim *s, const unsigned char *b)
{
	struct sim_blocks *t = &s->blks;
	uint64_t h = fnv1a64(b, TREE_BLOCK);
	size_t i = hmap_get(&t->map, h, same_block, b, t);
	if (i != HMAP_NONE)
		return (int64_t)i;
	ALLOC_GROW(t->b, t->n + 1, t->cap);
	t->b[t->n] = xmemdup(b, TREE_BLOCK);
	hmap_put(&t->map, h, t->n);
	return (int64_t)t->n++;
}

const unsigned char *sim_block(const struct sim *s, int64_t id)
{
	assert(id >= 0 && (size_t)id < s->blks.n);
	return s->blks.b[id];
}

void sim_block_token(const struct sim *s, int64_t id, uint64_t off, size_t len, char out[24])
{
	tree_block_token(sim_block(s, id), len > TREE_BLOCK ? TREE_BLOCK : len, off, out);
}

/* ------------------------------------------------------------------ */
/* Fields and their history */

static uint64_t field_hash(const struct sim_field *f)
{
	return hmap_mix((uint64_t)f->kind, (uint64_t)(int64_t)f->ino, (uint64_t)f->key);
}

static int same_field(const void *key, size_t idx, void *ctx)
{
	const struct sim_field *a = key, *b = &((const struct sim *)ctx)->hist[idx].f;
	return a->kind == b->kind && a->ino == b->ino && a->key == b->key;
}

void sim_hist_add(struct sim *s, const struct sim_field *f, size_t change)
{
	uint64_t h = field_hash(f);
	size_t i = hmap_get(&s->hist_map, h, same_field, f, s);
	if (i == HMAP_NONE) {
		ALLOC_GROW(s->hist, s->nhist + 1, s->hist_cap);
		i = s->nhist++;
		s->hist[i] = (struct sim_hist){ .f = *f };
		hmap_put(&s->hist_map, h, i);
	}
	struct sim_hist *hs = &s->hist[i];
	ARRAY_PUSH(hs->idx, hs->n, hs->cap, change);
	s->ch[change].hpos = (int)hs->n;
	s->ch[change].hist = i;
}

const struct sim_hist *sim_history(const struct sim *s, const struct sim_field *f)
{
	size_t i = hmap_get(&s->hist_map, field_hash(f), same_field, f, (void *)s);
	return i == HMAP_NONE ? NULL : &s->hist[i];
}

/* Raw field access on the current (final) inode table. */
int64_t sim_field_get(const struct sim *s, const struct sim_field *f)
{
	const struct sim_inode *in = &s->in[f->ino];
	switch (f->kind) {
	case SF_ENTRY:
		for (size_t i = 0; i < in->ne; i++)
			if (in->enames[i] == f->key)
				return in->echild[i];
		return SIM_ABSENT;
	case SF_MODE:
		return in->mode;
	case SF_SIZE:
		return (int64_t)in->size;
	case SF_BLOCK:
		return (size_t)f->key < in->nblocks ? in->blocks[f->key] : 0;
	case SF_XATTR:
		for (size_t i = 0; i < in->nx; i++)
			if (in->xnames[i] == f->key)
				return in->xvals[i];
		return SIM_ABSENT;
	}
	return SIM_ABSENT;
}

static void add_name(int64_t **v, size_t *n, int64_t name)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i] == name)
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = name;
}

void sim_field_put(struct sim *s, const struct sim_field *f, int64_t val)
{
	struct sim_inode *in = &s->in[f->ino];
	switch (f->kind) {
	case SF_ENTRY: {
		add_name(&in->allnames, &in->nall, f->key);
		for (size_t i = 0; i < in->ne; i++) {
			if (in->enames[i] != f->key)
				continue;
			if (val == SIM_ABSENT) {
				in->enames[i] = in->enames[in->ne - 1];
				in->echild[i] = in->echild[in->ne - 1];
				in->ne--;
			} else {
				in->echild[i] = (int)val;
			}
			return;
		}
		if (val == SIM_ABSENT)
			return;
		in->enames = xrealloc(in->enames, (in->ne + 1) * sizeof(*in->enames));
		in->echild = xrealloc(in->echild, (in->ne + 1) * sizeof(*in->echild));
		in->enames[in->ne] = f->key;
		in->echild[in->ne++] = (int)val;
		return;
	}
	case SF_MODE:
		in->mode = (uint32_t)val;
		return;
	case SF_SIZE:
		in->size = (uint64_t)val;
		return;
	case SF_BLOCK:
		if ((size_t)f->key >= in->nblocks) {
			size_t nn = (size_t)f->key + 1;
			in->blocks = xrealloc(in->blocks, nn * sizeof(*in->blocks));
			for (size_t i = in->nblocks; i < nn; i++)
				in->blocks[i] = 0;
			in->nblocks = nn;
		}
		in->blocks[f->key] = val;
		return;
	case SF_XATTR:
		add_name(&in->allx, &in->nallx, f->key);
		for (size_t i = 0; i < in->nx; i++) {
			if (in->xnames[i] != f->key)
				continue;
			if (val == SIM_ABSENT) {
				in->xnames[i] = in->xnames[in->nx - 1];
				in->xvals[i] = in->xvals[in->nx - 1];
				in->nx--;
			} else {
				in->xvals[i] = val;
			}
			return;
		}
		if (val == SIM_ABSENT)
			return;
		in->xnames = xrealloc(in->xnames, (in->nx + 1) * sizeof(*in->xnames));
		in->xvals = xrealloc(in->xvals, (in->nx + 1) * sizeof(*in->xvals));
		in->xnames[in->nx] = f->key;
		in->xvals[in->nx++] = val;
		return;
	}
}

int64_t sim_value_final(const struct sim *s, const struct sim_field *f)
{
	if ((size_t)f->ino >= s->nin)
		return SIM_ABSENT;
	return sim_field_get(s, f);
}

int64_t sim_value_at(const struct sim *s, const struct sim_field *f, int k)
{
	const struct sim_hist *h = sim_history(s, f);
	if (!h)
		return sim_value_final(s, f);
	int64_t v = s->ch[h->idx[0]].old;
	for (size_t i = 0; i < h->n && s->ch[h->idx[i]].op <= k; i++)
		v = s->ch[h->idx[i]].val;
	return v;
}

static int path_ino_at(const struct sim *s, int ino, int k, struct sbuf *out, int depth)
{
	if (ino == SIM_ROOT)
		return 0;
	if (depth > 64)
		return -1;
	/* find a directory with an entry naming ino in S_k */
	for (size_t d = 0; d < s->nin; d++) {
		const struct sim_inode *dn = &s->in[d];
		if (dn->type != 'd')
			continue;
		for (size_t i = 0; i < dn->nall; i++) {
			struct sim_field f = { SF_ENTRY, (int)d, dn->allnames[i] };
			if (sim_value_at(s, &f, k) != ino)
				continue;
			if (path_ino_at(s, (int)d, k, out, depth + 1) < 0)
				continue;
			size_t l;
			const char *nm = sim_str(s, dn->allnames[i], &l);
			if (out->len)
				sbuf_adds(out, "/");
			sbuf_add(out, nm, l);
			return 0;
		}
	}
	return -1;
}

char *sim_path_at(const struct sim *s, int ino, int k)
{
	struct sbuf sb = SBUF_INIT;
	if (path_ino_at(s, ino, k, &sb, 0) < 0) {
		sbuf_free(&sb);
		return NULL;
	}
	if (!sb.buf)
		sbuf_adds(&sb, "");
	return sbuf_detach(&sb);
}

char *sim_entry_path_at(const struct sim *s, int dir, int64_t name, int k)
{
	size_t l;
	const char *nm = sim_str(s, name, &l);
	if (dir == SIM_ROOT)
		return xasprintf("%.*s", (int)l, nm);
	char *d = sim_path_at(s, dir, k);
	if (!d)
		d = xasprintf("(dir #%d)", dir);
	char *r = xasprintf("%s/%.*s", d, (int)l, nm);
	free(d);
	return r;
}


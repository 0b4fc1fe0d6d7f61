/*
 * explain.c - which op pieces a crash state shows (see explain.h).
 *
 * Method. Every piece of a [run] op is one change of one field (sim.h), so
 * a field's history is a short list of values v0 (S0, or the value a new
 * inode is born with), v1, v2, ... each set by one change. The search is
 * per field, never over subsets of ops: for each field the state lets us
 * see, we find the latest history value equal to what the state shows; the
 * change that set it is in P, the earlier changes of that field are
 * superseded, the later ones are missing. That is linear in the number of
 * changes. Fields are seen through names, so the walk goes top-down from
 * the root: an observed path's directory is already matched to a simulator
 * inode, and the name's history offers the inodes it ever named; the node
 * is matched to one of them by identity first (the guest's inode number of
 * that simulator inode equals the node's), by type and content second (only
 * among inodes whose number was never learned). Everything reachable from
 * that inode (its mode, size, blocks, xattrs, and for a directory its
 * entries) is then attributed the same way. A block that matches no version
 * is tried as a sector-wise mix of two versions (a torn write), and a size
 * that matches none as a 4 KiB step of one growing write (the size written
 * back so far); both explain the state and still count as missing for
 * promises.
 *
 * Confirmation re-simulates S0 + P: each field takes the value P chose (or
 * v0 when unseen), the tree is walked from the root with those values, and
 * every node (type, mode, size, nlink of files, xattrs, target, block
 * tokens) is compared with the observed tree. A value no op ever set, a
 * name no op ever made, or a node the walk does not produce makes the state
 * unexplainable, and the first such difference is named in one sentence.
 */
#include "judge/explain.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* A field's attribution: the history position shown (0 = v0), or: */
#define POS_UNSEEN (-1)
#define POS_NONE (-2)    /* no version matches */
#define POS_TORN (-3)    /* a block mixing two versions */

struct walk {
	struct explain *e;
	const struct sim *s;
	int last;                 /* last completed op: the "expected" state */
	size_t *order;            /* observed nodes sorted by path */
	/* the chosen position of every field seen, with a map field -> index */
	struct pos { struct sim_field f; int pos; } *pos;
	size_t npos, pos_cap;
	struct hmap map;
};

static uint64_t fhash(const struct sim_field *f)
{
	return hmap_mix((uint64_t)f->kind, (uint64_t)(int64_t)f->ino, (uint64_t)f->key);
}

static int same_field(const void *key, size_t idx, void *ctx)
{
	const struct sim_field *a = key, *b = &((const struct walk *)ctx)->pos[idx].f;
	return a->kind == b->kind && a->ino == b->ino && a->key == b->key;
}

static struct pos *pos_slot(struct walk *w, const struct sim_field *f, int create)
{
	uint64_t h = fhash(f);
	size_t i = hmap_get(&w->map, h, same_field, f, w);
	if (i != HMAP_NONE)
		return &w->pos[i];
	if (!create)
		return NULL;
	ALLOC_GROW(w->pos, w->npos + 1, w->pos_cap);
	w->pos[w->npos] = (struct pos){ *f, POS_UNSEEN };
	hmap_put(&w->map, h, w->npos);
	return &w->pos[w->npos++];
}

/* History helpers: number of versions and version i's value. */
static size_t nversions(const struct sim *s, const struct sim_field *f)
{
	const struct sim_hist *h = sim_history(s, f);
	return h ? h->n + 1 : 1;
}

static int64_t version(const struct sim *s, const struct sim_field *f, size_t i)
{
	const struct sim_hist *h = sim_history(s, f);
	if (!h)
		return sim_value_final(s, f);
	return i == 0 ? s->ch[h->idx[0]].old : s->ch[h->idx[i - 1]].val;
}

/* The chosen value of a field in S0 + P. */
static int64_t chosen(struct walk *w, const struct sim_field *f)
{
	struct pos *p = pos_slot(w, f, 0);
	int pos = p ? p->pos : POS_UNSEEN;
	return version(w->s, f, pos > 0 ? (size_t)pos : 0);
}

static void set_pos(struct walk *w, const struct sim_field *f, int pos)
{
	pos_slot(w, f, 1)->pos = pos;
}

static void differ(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void differ(struct walk *w, const char *fmt, ...)
{
	if (!w->e->explained)
		return;
	w->e->explained = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->e->diff, sizeof(w->e->diff), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* Descriptions */

void explain_field_path(const struct sim *s, const struct sim_field *f, int k, char *buf, size_t n)
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
	if (!p) {
		/* never named at k or at the end: any time it had a name */
		for (size_t i = 0; i < s->nch && !p; i++)
			p = sim_path_at(s, f->ino, s->ch[i].op);
	}
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
		snprintf(buf, n, "size %" PRId64, v);
		return;
	case SF_BLOCK: {
		char tok[24];
		sim_block_token(s, v, (uint64_t)f->key * TREE_BLOCK, TREE_BLOCK, tok);
		if (tok[0] == 'z')
			snprintf(buf, n, "zeros");
		else if (tok[0] == 'p')
			snprintf(buf, n, "op %s's data", tok + 1);
		else {
			/* short text: show it */
			const unsigned char *b = sim_block(s, v);
			size_t l = 0;
			while (l < 40 && b[l] >= 0x20 && b[l] < 0x7f)
				l++;
			size_t z = l;
			while (z < TREE_BLOCK && !b[z])
				z++;
			if (l && z == TREE_BLOCK)
				snprintf(buf, n, "\"%.*s\"", (int)l, (const char *)b);
			else
				snprintf(buf, n, "bytes %s", tok);
		}
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

void explain_observed_desc(const struct explain *e, const struct sim_field *f, char *buf, size_t n)
{
	const struct sim *s = e->s;
	if (f->kind == SF_ENTRY) {
		int nd = e->node_of[f->ino];
		if (f->ino != SIM_ROOT && nd < 0) {
			snprintf(buf, n, "(not visible: its directory is missing)");
			return;
		}
		/* find the node at that path */
		size_t l;
		const char *nm = sim_str(s, f->key, &l);
		const char *dp = f->ino == SIM_ROOT ? "" : e->nodes[nd].path;
		char *path = *dp ? xasprintf("%s/%.*s", dp, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		for (size_t i = 0; i < e->n; i++) {
			if (strcmp(e->nodes[i].path, path))
				continue;
			char tmp[96];
			if (e->sim_of[i] >= 0)
				snprintf(buf, n, "names %s", who_made(s, e->sim_of[i], tmp, sizeof(tmp)));
			else
				snprintf(buf, n, "names an unknown inode %" PRIu64, e->nodes[i].ino);
			free(path);
			return;
		}
		free(path);
		snprintf(buf, n, "absent");
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
		if (l == 1 && b[0] == 'z')
			snprintf(buf, n, "zeros");
		else if (l && b[0] == 'p')
			snprintf(buf, n, "op %.*s's data", (int)(l - 1), b + 1);
		else if (t->content && t->content_len <= 60 && f->key == 0)
			snprintf(buf, n, "\"%.*s\"", (int)t->content_len, (const char *)t->content);
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

/* ------------------------------------------------------------------ */
/* Attribution */

static const char *block_token_at(const struct tree_node *t, uint64_t b, size_t *len)
{
	const char *p = t->blocks ? t->blocks : "";
	for (uint64_t i = 0; i < b; i++) {
		p = strchr(p, ',');
		if (!p) {
			*len = 0;
			return "";
		}
		p++;
	}
	*len = strcspn(p, ",");
	return p;
}

/* Latest version of f whose value satisfies eq(); -1 when none. */
typedef int (*eq_fn)(struct walk *w, const struct sim_field *f, int64_t v, const void *obs);

static int latest_match(struct walk *w, const struct sim_field *f, eq_fn eq, const void *obs)
{
	for (size_t i = nversions(w->s, f); i-- > 0;)
		if (eq(w, f, version(w->s, f, i), obs))
			return (int)i;
	return -1;
}

static int eq_int(struct walk *w, const struct sim_field *f, int64_t v, const void *obs)
{
	return v == *(const int64_t *)obs;
}

struct blk_obs {
	const char *tok;
	size_t toklen;
	size_t len;  /* bytes of the block inside the observed size */
};

static int eq_block(struct walk *w, const struct sim_field *f, int64_t v, const void *obs)
{
	const struct blk_obs *o = obs;
	char tok[24];
	sim_block_token(w->s, v, (uint64_t)f->key * TREE_BLOCK, o->len, tok);
	return strlen(tok) == o->toklen && !memcmp(tok, o->tok, o->toklen);
}

/* A block that is two versions mixed sector by sector (a torn write)? */
static int torn_mix(struct walk *w, const struct sim_field *f, const struct blk_obs *o)
{
	size_t nv = nversions(w->s, f);
	if (o->toklen < 2 || o->tok[0] != 'h' || nv < 2 || nv > 8)
		return 0;
	unsigned char mix[TREE_BLOCK];
	char tok[24];
	for (size_t a = 0; a < nv; a++)
		for (size_t b = 0; b < nv; b++) {
			if (a == b)
				continue;
			const unsigned char *A = sim_block(w->s, version(w->s, f, a));
			const unsigned char *B = sim_block(w->s, version(w->s, f, b));
			for (unsigned m = 1; m < 255; m++) {
				for (int sct = 0; sct < 8; sct++)
					memcpy(mix + sct * 512, (m >> sct) & 1 ? B + sct * 512 : A + sct * 512, 512);
				tree_block_token(mix, o->len, (uint64_t)f->key * TREE_BLOCK, tok);
				if (strlen(tok) == o->toklen && !memcmp(tok, o->tok, o->toklen))
					return 1;
			}
		}
	return 0;
}

static void expected_desc(struct walk *w, const struct sim_field *f, char *buf, size_t n)
{
	explain_value_desc(w->s, f, sim_value_at(w->s, f, w->last), buf, n);
}

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

/* Which simulator inode, of those the name ever named, is node t? */
static int match_inode(struct walk *w, const struct sim_field *f, const struct tree_node *t, int *pos)
{
	const struct sim *s = w->s;
	int best = -1, best_strong = 0, best_score = -1;
	size_t nv = nversions(s, f);
	for (size_t i = 0; i < nv; i++) {
		int64_t v = version(s, f, i);
		if (v == SIM_ABSENT)
			continue;
		const struct sim_inode *in = &s->in[v];
		if (in->type != t->type)
			continue;
		int strong = in->ino && in->ino == t->ino;
		if (in->ino && !strong)
			continue; /* a different file, even if it has the same bytes */
		int sc = content_score(s, (int)v, t);
		if (strong > best_strong || (strong == best_strong && sc >= best_score)) {
			best = (int)v;
			best_strong = strong;
			best_score = sc;
		}
	}
	if (best < 0)
		return -1;
	int64_t b = best;
	*pos = latest_match(w, f, eq_int, &b);
	return best;
}

static void attribute_inode(struct walk *w, int ino, int nd);

static void visit_dir(struct walk *w, int dir, const char *dpath)
{
	const struct sim *s = w->s;
	const struct sim_inode *d = &s->in[dir];
	for (size_t i = 0; i < d->nall; i++) {
		struct sim_field f = { SF_ENTRY, dir, d->allnames[i] };
		size_t l;
		const char *nm = sim_str(s, f.key, &l);
		char *path = *dpath ? xasprintf("%s/%.*s", dpath, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		int nd = find_node(w, path);
		if (nd < 0) {
			int64_t absent = SIM_ABSENT;
			int pos = latest_match(w, &f, eq_int, &absent);
			set_pos(w, &f, pos >= 0 ? pos : POS_NONE);
			if (pos < 0) {
				char exp[128];
				expected_desc(w, &f, exp, sizeof(exp));
				differ(w, "'%s' is missing, but no op ever removed it (expected: %s; found: absent)", path,
				       exp);
			}
		} else {
			int pos = -1;
			int ino = match_inode(w, &f, &w->e->nodes[nd], &pos);
			if (ino < 0) {
				char exp[128];
				expected_desc(w, &f, exp, sizeof(exp));
				differ(w, "'%s' is a %s with inode number %" PRIu64 " that no op ever put there (expected: %s)",
				       path, w->e->nodes[nd].type == 'd' ? "directory" : w->e->nodes[nd].type == 'l' ? "symlink" : "file",
				       w->e->nodes[nd].ino, exp);
				set_pos(w, &f, POS_NONE);
			} else {
				set_pos(w, &f, pos);
				w->e->sim_of[nd] = ino;
				if (w->e->node_of[ino] < 0) {
					w->e->node_of[ino] = nd;
					attribute_inode(w, ino, nd);
					if (s->in[ino].type == 'd')
						visit_dir(w, ino, path);
				} else if (w->e->nodes[w->e->node_of[ino]].ino != w->e->nodes[nd].ino) {
					differ(w, "'%s' and '%s' are two different inodes in the state, but the same file in "
						  "the workload", w->e->nodes[w->e->node_of[ino]].path, path);
				}
			}
		}
		free(path);
	}
}

/* Is size an intermediate of one growing data write (a multiple of 4 KiB
 * between the size before and after it)? */
static int partial_size(struct walk *w, const struct sim_field *f, uint64_t size)
{
	const struct sim_hist *h = sim_history(w->s, f);
	for (size_t i = 0; h && i < h->n; i++) {
		const struct sim_change *c = &w->s->ch[h->idx[i]];
		if (c->data && (uint64_t)c->old < size && size < (uint64_t)c->val && size % TREE_BLOCK == 0)
			return 1;
	}
	return 0;
}

struct unknown_xattr {
	struct walk *w;
	const struct sim_inode *in;
	const struct tree_node *t;
};

static void unknown_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	struct unknown_xattr *u = ctx;
	int64_t id = sim_str_find(u->w->s, name->buf, name->len);
	int known = 0;
	for (size_t i = 0; id >= 0 && i < u->in->nallx; i++)
		known |= u->in->allx[i] == id;
	if (!known)
		differ(u->w, "'%s' has xattr %s, which no op ever set", u->t->path, name->buf);
	(void)value;
}

static void attribute_inode(struct walk *w, int ino, int nd)
{
	const struct sim *s = w->s;
	const struct sim_inode *in = &s->in[ino];
	const struct tree_node *t = &w->e->nodes[nd];
	char exp[160], got[160];
	if (in->type != 'l') {
		struct sim_field f = { SF_MODE, ino, 0 };
		int64_t m = t->mode;
		int pos = latest_match(w, &f, eq_int, &m);
		set_pos(w, &f, pos >= 0 ? pos : POS_NONE);
		if (pos < 0) {
			expected_desc(w, &f, exp, sizeof(exp));
			differ(w, "'%s' has mode %04" PRIo32 ", which no op ever gave it (expected: %s)", t->path, t->mode,
			       exp);
		}
	} else if (!in->target || !t->target || strcmp(in->target, t->target)) {
		differ(w, "symlink '%s' points to '%s' (expected: '%s')", t->path, t->target ? t->target : "",
		       in->target ? in->target : "");
	}
	if (in->type == 'f') {
		struct sim_field f = { SF_SIZE, ino, 0 };
		int64_t sz = (int64_t)t->size;
		int pos = latest_match(w, &f, eq_int, &sz);
		if (pos < 0 && partial_size(w, &f, t->size)) {
			/* a growing write whose first blocks reached the disk with the size
			 * written back so far (ext4's i_disksize): the write persisted partly */
			set_pos(w, &f, POS_TORN);
			w->e->ntorn++;
			pos = POS_TORN;
		}
		if (pos != POS_TORN)
			set_pos(w, &f, pos >= 0 ? pos : POS_NONE);
		if (pos == -1) {
			expected_desc(w, &f, exp, sizeof(exp));
			differ(w, "'%s' has size %" PRIu64 ", which no op ever gave it (expected: %s)", t->path, t->size,
			       exp);
		}
		uint64_t nb = (t->size + TREE_BLOCK - 1) / TREE_BLOCK;
		for (uint64_t b = 0; b < nb; b++) {
			struct sim_field bf = { SF_BLOCK, ino, (int64_t)b };
			struct blk_obs o;
			o.tok = block_token_at(t, b, &o.toklen);
			o.len = t->size - b * TREE_BLOCK < TREE_BLOCK ? (size_t)(t->size - b * TREE_BLOCK) : TREE_BLOCK;
			int bp = latest_match(w, &bf, eq_block, &o);
			if (bp < 0 && torn_mix(w, &bf, &o)) {
				set_pos(w, &bf, POS_TORN);
				w->e->ntorn++;
				continue;
			}
			set_pos(w, &bf, bp >= 0 ? bp : POS_NONE);
			if (bp < 0) {
				expected_desc(w, &bf, exp, sizeof(exp));
				explain_observed_desc(w->e, &bf, got, sizeof(got));
				differ(w, "'%s' block %" PRIu64 " holds %s, which no op ever wrote there (expected: %s)",
				       t->path, b, got, exp);
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
		int pos = (r == 1 && id < 0) ? -1 : latest_match(w, &f, eq_int, &id);
		set_pos(w, &f, pos >= 0 ? pos : POS_NONE);
		if (pos < 0) {
			expected_desc(w, &f, exp, sizeof(exp));
			explain_observed_desc(w->e, &f, got, sizeof(got));
			differ(w, "'%s' xattr %s is %s, which no op ever set (expected: %s)", t->path,
			       sim_str(s, f.key, NULL), got, exp);
		}
	}
	/* a name the workload never set */
	struct unknown_xattr ux = { w, in, t };
	tree_xattrs_each(t->xattrs, unknown_xattr, &ux);
}

/* ------------------------------------------------------------------ */
/* Confirmation: walk S0 + P and compare with the observed tree */

static void confirm_dir(struct walk *w, int dir, const char *dpath, char *seen, int depth)
{
	const struct sim *s = w->s;
	const struct sim_inode *d = &s->in[dir];
	if (depth > 64)
		return;
	for (size_t i = 0; i < d->nall; i++) {
		struct sim_field f = { SF_ENTRY, dir, d->allnames[i] };
		int64_t child = chosen(w, &f);
		if (child == SIM_ABSENT)
			continue;
		size_t l;
		const char *nm = sim_str(s, f.key, &l);
		char *path = *dpath ? xasprintf("%s/%.*s", dpath, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
		int nd = find_node(w, path);
		if (nd < 0) {
			differ(w, "re-simulating the explanation gives '%s', which the state does not have", path);
			free(path);
			continue;
		}
		seen[nd] = 1;
		const struct tree_node *t = &w->e->nodes[nd];
		const struct sim_inode *in = &s->in[child];
		if (in->type != t->type)
			differ(w, "'%s' is of type %c, the re-simulation gives %c", path, t->type, in->type);
		if (in->type == 'f') {
			/* nlink: every name of it in S0 + P */
			uint32_t links = 0;
			for (size_t dd = 0; dd < s->nin; dd++)
				if (s->in[dd].type == 'd')
					for (size_t k = 0; k < s->in[dd].nall; k++) {
						struct sim_field ef = { SF_ENTRY, (int)dd, s->in[dd].allnames[k] };
						if (chosen(w, &ef) == child)
							links++;
					}
			if (links != t->nlink)
				differ(w, "'%s' has %" PRIu32 " link%s, the re-simulation gives %" PRIu32, path, t->nlink,
				       t->nlink == 1 ? "" : "s", links);
			struct sim_field sf = { SF_SIZE, (int)child, 0 };
			struct pos *sp = pos_slot(w, &sf, 0);
			if (!(sp && sp->pos == POS_TORN) && (uint64_t)chosen(w, &sf) != t->size)
				differ(w, "'%s' has size %" PRIu64 ", the re-simulation gives %" PRId64, path, t->size,
				       chosen(w, &sf));
		}
		if (in->type != 'l') {
			struct sim_field mf = { SF_MODE, (int)child, 0 };
			if ((uint32_t)chosen(w, &mf) != t->mode)
				differ(w, "'%s' has mode %04" PRIo32 ", the re-simulation gives %04" PRIo64, path, t->mode,
				       chosen(w, &mf));
		}
		if (in->type == 'd' && w->e->node_of[child] == nd)
			confirm_dir(w, (int)child, path, seen, depth + 1);
		free(path);
	}
}

/* ------------------------------------------------------------------ */

void explain_state(struct explain *e, const struct sim *s, const struct tree_node *nodes, size_t n,
		   int last_completed)
{
	memset(e, 0, sizeof(*e));
	e->s = s;
	e->nodes = nodes;
	e->n = n;
	e->explained = 1;
	e->st = xcalloc(s->nch ? s->nch : 1, 1);
	e->torn = xcalloc(s->nch ? s->nch : 1, 1);
	e->node_of = xmalloc((s->nin ? s->nin : 1) * sizeof(int));
	e->sim_of = xmalloc((n ? n : 1) * sizeof(int));
	for (size_t i = 0; i < s->nin; i++)
		e->node_of[i] = -1;
	for (size_t i = 0; i < n; i++)
		e->sim_of[i] = -1;

	struct walk w = { .e = e, .s = s, .last = last_completed };
	w.order = xmalloc((n ? n : 1) * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
		w.order[i] = i;
	cmp_nodes_base = nodes;
	qsort(w.order, n, sizeof(size_t), cmp_order);

	visit_dir(&w, SIM_ROOT, "");
	/* nodes no name of the workload leads to */
	for (size_t k = 0; k < n; k++) {
		size_t i = w.order[k];
		if (e->sim_of[i] >= 0)
			continue;
		const char *slash = strrchr(nodes[i].path, '/');
		int parent_ok = 1;
		if (slash) {
			char *pp = xasprintf("%.*s", (int)(slash - nodes[i].path), nodes[i].path);
			int pn = find_node(&w, pp);
			parent_ok = pn >= 0 && e->sim_of[pn] >= 0;
			free(pp);
		}
		if (parent_ok)
			differ(&w, "'%s' is in the state, but no op of the workload ever created it", nodes[i].path);
	}
	/* confirm */
	char *seen = xcalloc(n ? n : 1, 1);
	confirm_dir(&w, SIM_ROOT, "", seen, 0);
	for (size_t i = 0; i < n; i++)
		if (!seen[i] && e->sim_of[i] >= 0)
			differ(&w, "re-simulating the explanation does not give '%s'", nodes[i].path);
	free(seen);

	/* per change status */
	for (size_t i = 0; i < w.npos; i++) {
		const struct sim_hist *h = sim_history(s, &w.pos[i].f);
		if (!h)
			continue;
		int pos = w.pos[i].pos;
		for (size_t k = 0; k < h->n; k++) {
			size_t c = h->idx[k];
			int vp = (int)k + 1;
			if (pos == POS_UNSEEN)
				e->st[c] = EX_UNOBSERVED;
			else if (pos == POS_NONE || pos == POS_TORN) {
				e->st[c] = EX_MISSING;
				e->torn[c] = pos == POS_TORN;
			} else
				e->st[c] = pos == vp ? EX_IN : pos > vp ? EX_SUPERSEDED : EX_MISSING;
		}
	}
	/* per op marks */
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
			size_t in = 0, sup = 0, miss = 0, torn = 0;
			for (size_t k = so->first; k < so->first + so->n; k++) {
				in += e->st[k] == EX_IN;
				sup += e->st[k] == EX_SUPERSEDED;
				miss += e->st[k] == EX_MISSING;
				torn += e->torn[k];
			}
			if (!in && !sup && !miss)
				m = EX_MARK_UNSEEN;
			else if (!miss)
				m = in ? EX_MARK_PERSISTED : EX_MARK_SUPERSEDED;
			else if (in || sup || torn)
				m = EX_MARK_PARTIAL;
			else
				m = EX_MARK_LOST;
		}
		e->marks[i] = m;
	}
	e->marks[s->w->n] = '\0';
	free(w.order);
	free(w.pos);
	hmap_free(&w.map);
}

void explain_free(struct explain *e)
{
	free(e->st);
	free(e->torn);
	free(e->node_of);
	free(e->sim_of);
	free(e->marks);
	memset(e, 0, sizeof(*e));
}

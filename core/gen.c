/*
 * gen.c - the workload generator (see gen.h).
 *
 * Method. The paths form a fixed universe of eight: the directories A and
 * B and the six files foo, A/foo, bar, A/bar, B/foo, B/bar (the file set
 * of --files is the first N files in that order). A tiny model of the tree
 * (which inode each path names: a file, a directory, a symlink or none,
 * and whether a file carries the xattr) is all the generator needs.
 *
 * A depth-first walk picks, for each of the N positions, a core op
 * instance (op, paths, argument variant), then a persistence choice. Before
 * an instance is applied, each of its needs is met on the model: a path no
 * earlier op of [run] touched (nor its parent) is set up in [setup], which
 * cannot change what an earlier op saw; a touched path gets a dependency
 * op in [run] (creat, mkdir, unlink, rmdir, setxattr); a need that cannot
 * be met (a directory that should be a file, a directory not empty) drops
 * the branch. Ops that depend on a directory's entries (rmdir, renaming a
 * directory) touch the entries too. A persistence target that does not
 * exist yet and was never touched (a sibling) is set up, so `fsync bar`
 * after `creat foo` asks whether an unrelated fsync carries foo.
 *
 * At the end of a branch the whole workload is replayed on a fresh model,
 * op by op, with each op's preconditions (strict ones: creat and mkdir of
 * a name that does not exist); a workload where one fails is dropped. Two
 * workloads are the same when one is the other with foo and bar, or A and
 * B, swapped: the key is the smallest rendering over those four renamings
 * ([setup] lines sorted, [run] lines in order), and only the first
 * workload with a key is kept. The walk's order is fixed, so the output is
 * the same for the same bounds.
 */
#include "core/gen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "core/util.h"

/* ---- the universe of paths ---- */

enum { U_A, U_B, U_FOO, U_AFOO, U_BAR, U_ABAR, U_BFOO, U_BBAR, NU };

static const char *const upath[NU] = { "A", "B", "foo", "A/foo", "bar", "A/bar", "B/foo", "B/bar" };
static const int uparent[NU] = { -1, -1, -1, U_A, -1, U_A, U_B, U_B };
static const int usibling[NU] = { U_B, U_A, U_BAR, U_ABAR, U_FOO, U_AFOO, U_BBAR, U_BFOO };
/* the renamings: none, foo <-> bar, A <-> B, both */
static const int uperm[4][NU] = {
	{ 0, 1, 2, 3, 4, 5, 6, 7 },
	{ 0, 1, 4, 5, 2, 3, 7, 6 },
	{ 1, 0, 2, 6, 4, 7, 3, 5 },
	{ 1, 0, 4, 7, 2, 6, 5, 3 },
};
/* a directory's entries (foo, bar) */
static const int uchild[2][2] = { { U_AFOO, U_ABAR }, { U_BFOO, U_BBAR } };

static int up(int u)
{
	return u >= 0 && u < NU ? uparent[u] : -1;
}

static int is_dir_path(int u)
{
	return u == U_A || u == U_B;
}

const char *gen_file(int i)
{
	return i >= 0 && i < GEN_MAX_FILES ? upath[U_FOO + i] : NULL;
}

static int in_set(const struct gen_params *p, int u)
{
	return is_dir_path(u) || u - U_FOO < p->files;
}

/* ---- ops ---- */

/* Op kinds: the core ops (enum gen_op), then the two setup fills, then
 * the persistence ops (K_PERSIST + enum gen_persist). */
enum { K_FILL = GEN_NOPS, K_XINIT, K_PERSIST };

static const char *const op_names[GEN_NOPS] = {
	"creat", "mkdir", "rmdir", "write", "append", "dwrite", "mmapwrite", "truncate",
	"falloc", "link", "symlink", "rename", "unlink", "setxattr", "removexattr", "chmod",
};
static const char *const persist_names[GEN_NPERSIST] = {
	"fsync", "fdatasync", "sync", "syncfs", "fbarrier", "fdatabarrier",
};

/* The argument variants of a core op (sequence 1 takes them all, longer
 * sequences the first). Files are set up with 16 KiB. */
static const char *const write_args[] = { "4K 4K", "5000 3000", "12K 8K" };
static const char *const dwrite_args[] = { "4K 4K", "16K 4K" };
static const char *const mmap_args[] = { "4K 4K", "5000 3000" };
static const char *const trunc_args[] = { "8K", "5000", "32K" };
static const char *const falloc_modes[] = { "keep_size", "0", "punch_hole", "zero_range", "zero_range_keep_size" };
static const char *const falloc_ranges[] = { "16K 4K", "4K 4K" };
enum { RENAME_NEW, RENAME_REPLACE };

static int nvariants(int op)
{
	switch (op) {
	case GEN_WRITE: return 3;
	case GEN_DWRITE: return 2;
	case GEN_MMAPWRITE: return 2;
	case GEN_TRUNCATE: return 3;
	case GEN_FALLOC: return 10;
	case GEN_RENAME: return 2;
	default: return 1;
	}
}

const char *gen_op_name(enum gen_op op)
{
	return op < GEN_NOPS ? op_names[op] : NULL;
}

const char *gen_persist_name(enum gen_persist p)
{
	return p < GEN_NPERSIST ? persist_names[p] : NULL;
}

static int parse_list(const char *list, const char *const *names, int n, const char *what, unsigned *out,
		      struct errbuf *e)
{
	unsigned set = 0;
	const char *s = list;
	for (;;) {
		size_t len = strcspn(s, ",");
		int found = -1;
		for (int i = 0; i < n; i++)
			if (strlen(names[i]) == len && !strncmp(names[i], s, len))
				found = i;
		if (found < 0) {
			struct sbuf all = SBUF_INIT;
			for (int i = 0; i < n; i++)
				sbuf_addf(&all, "%s%s", i ? "," : "", names[i]);
			if (len == 0)
				errbuf_set(e, EXIT_USAGE, "empty %s name in '%s' (known: %s)", what, list, all.buf);
			else
				errbuf_set(e, EXIT_USAGE, "unknown %s '%.*s' (known: %s)", what, (int)len, s, all.buf);
			sbuf_free(&all);
			return -1;
		}
		set |= 1u << found;
		if (!s[len])
			break;
		s += len + 1;
	}
	*out = set;
	return 0;
}

int gen_ops_parse(const char *list, unsigned *out, struct errbuf *e)
{
	return parse_list(list, op_names, GEN_NOPS, "op", out, e);
}

int gen_persist_parse(const char *list, unsigned *out, struct errbuf *e)
{
	return parse_list(list, persist_names, GEN_NPERSIST, "persistence op", out, e);
}

struct gop {
	unsigned char k;     /* kind: enum gen_op, K_FILL, K_XINIT, K_PERSIST + p */
	signed char a, b;    /* universe paths, -1 when none */
	unsigned char v;     /* argument variant */
};

/* ---- the model ---- */

#define MAX_INODES 64

struct model {
	signed char ino[NU];          /* inode a path names, 0: none */
	char type[MAX_INODES];        /* 'f', 'd', 'l' */
	char xattr[MAX_INODES];
	int nin;
};

static char mtype(const struct model *m, int u)
{
	return u < 0 ? 'd' : m->ino[u] ? m->type[(int)m->ino[u]] : 0;
}

static int new_inode(struct model *m, char type)
{
	if (m->nin + 1 >= MAX_INODES)
		return 0;
	m->nin++;
	m->type[m->nin] = type;
	m->xattr[m->nin] = 0;
	return m->nin;
}

static int dir_empty(const struct model *m, int d)
{
	const int *c = uchild[d == U_B];
	return !m->ino[c[0]] && !m->ino[c[1]];
}

/* Apply op to m: 0, or -1 when it would fail (strict: creat and mkdir want
 * a name that does not exist). */
static int apply(struct model *m, const struct gop *op)
{
	int a = op->a, b = op->b;
	char ta = a >= 0 ? mtype(m, a) : 0;
	switch (op->k) {
	case GEN_CREAT:
	case GEN_MKDIR:
		if (ta || mtype(m, up(a)) != 'd')
			return -1;
		if (!(m->ino[a] = (signed char)new_inode(m, op->k == GEN_MKDIR ? 'd' : 'f')))
			return -1;
		return 0;
	case K_FILL:
		if (!ta) {
			if (mtype(m, up(a)) != 'd' || !(m->ino[a] = (signed char)new_inode(m, 'f')))
				return -1;
			return 0;
		}
		return ta == 'f' ? 0 : -1;
	case GEN_RMDIR:
		if (ta != 'd' || !dir_empty(m, a))
			return -1;
		m->ino[a] = 0;
		return 0;
	case GEN_WRITE:
	case GEN_APPEND:
	case GEN_DWRITE:
	case GEN_MMAPWRITE:
	case GEN_TRUNCATE:
	case GEN_FALLOC:
	case GEN_CHMOD:
		return ta == 'f' ? 0 : -1;
	case GEN_SETXATTR:
	case K_XINIT:
		if (ta != 'f')
			return -1;
		m->xattr[(int)m->ino[a]] = 1;
		return 0;
	case GEN_REMOVEXATTR:
		if (ta != 'f' || !m->xattr[(int)m->ino[a]])
			return -1;
		m->xattr[(int)m->ino[a]] = 0;
		return 0;
	case GEN_LINK:
		if (ta != 'f' || mtype(m, b) || mtype(m, up(b)) != 'd')
			return -1;
		m->ino[b] = m->ino[a];
		return 0;
	case GEN_SYMLINK:
		if (mtype(m, b) || mtype(m, up(b)) != 'd' || !(m->ino[b] = (signed char)new_inode(m, 'l')))
			return -1;
		return 0;
	case GEN_UNLINK:
		if (ta != 'f' && ta != 'l')
			return -1;
		m->ino[a] = 0;
		return 0;
	case GEN_RENAME: {
		char tb = mtype(m, b);
		if (!ta || mtype(m, up(b)) != 'd')
			return -1;
		if (ta == 'd') {
			if (tb && (tb != 'd' || !dir_empty(m, b)))
				return -1;
			for (int i = 0; i < 2; i++) {
				m->ino[uchild[b == U_B][i]] = m->ino[uchild[a == U_B][i]];
				m->ino[uchild[a == U_B][i]] = 0;
			}
		} else {
			if (tb == 'd')
				return -1;
			if (m->ino[a] == m->ino[b]) /* two names of one file: rename does nothing */
				return 0;
		}
		m->ino[b] = m->ino[a];
		m->ino[a] = 0;
		return 0;
	}
	default: {
		int p = op->k - K_PERSIST;
		if (p == GEN_SYNC || p == GEN_SYNCFS)
			return 0;
		if (p == GEN_FSYNC)
			return ta == 'f' || ta == 'd' ? 0 : -1;
		return ta == 'f' ? 0 : -1;
	}
	}
}

/* ---- rendering ---- */

/* A symlink's target: the path of a, relative to the directory of b. */
static void symlink_target(const int *perm, int a, int b, char *buf, size_t n)
{
	int pa = up(a) < 0 ? -1 : perm[up(a)], pb = up(b) < 0 ? -1 : perm[up(b)];
	const char *full = upath[perm[a]], *base = strrchr(full, '/');
	base = base ? base + 1 : full;
	if (pa == pb)
		snprintf(buf, n, "%s", base);
	else if (pb < 0)
		snprintf(buf, n, "%s", full);
	else
		snprintf(buf, n, "../%s", full);
}

static void render(struct sbuf *sb, const struct gop *op, const int *perm)
{
	const char *a = op->a >= 0 ? upath[perm[op->a]] : NULL, *b = op->b >= 0 ? upath[perm[op->b]] : NULL;
	char t[32];
	switch (op->k) {
	case GEN_CREAT: case GEN_MKDIR: case GEN_RMDIR: case GEN_UNLINK:
		sbuf_addf(sb, "%s %s", op_names[op->k], a);
		break;
	case GEN_WRITE: sbuf_addf(sb, "write %s %s", a, write_args[op->v]); break;
	case GEN_APPEND: sbuf_addf(sb, "append %s 4K", a); break;
	case GEN_DWRITE: sbuf_addf(sb, "dwrite %s %s", a, dwrite_args[op->v]); break;
	case GEN_MMAPWRITE: sbuf_addf(sb, "mmapwrite %s %s", a, mmap_args[op->v]); break;
	case GEN_TRUNCATE: sbuf_addf(sb, "truncate %s %s", a, trunc_args[op->v]); break;
	case GEN_FALLOC:
		sbuf_addf(sb, "falloc %s %s %s", a, falloc_modes[op->v / 2], falloc_ranges[op->v % 2]);
		break;
	case GEN_LINK: case GEN_RENAME: sbuf_addf(sb, "%s %s %s", op_names[op->k], a, b); break;
	case GEN_SYMLINK:
		symlink_target(perm, op->a, op->b, t, sizeof(t));
		sbuf_addf(sb, "symlink %s %s", t, b);
		break;
	case GEN_SETXATTR: sbuf_addf(sb, "setxattr %s user.gen \"v2\"", a); break;
	case GEN_REMOVEXATTR: sbuf_addf(sb, "removexattr %s user.gen", a); break;
	case GEN_CHMOD: sbuf_addf(sb, "chmod %s 0600", a); break;
	case K_FILL: sbuf_addf(sb, "write %s 16K", a); break;
	case K_XINIT: sbuf_addf(sb, "setxattr %s user.gen \"v1\"", a); break;
	default:
		if (a)
			sbuf_addf(sb, "%s %s", persist_names[op->k - K_PERSIST], a);
		else
			sbuf_addf(sb, "%s", persist_names[op->k - K_PERSIST]);
	}
}

/* ---- one workload under construction ---- */

#define MAX_SETUP 24
#define MAX_RUN 32

struct wl {
	struct gop setup[MAX_SETUP];
	int nsetup;
	struct gop run[MAX_RUN];
	int nrun;
	signed char core[3];          /* run index of each core op */
	signed char persist[3];       /* run index of the persistence op after it, -1: none */
	int ncore;
	struct model m;               /* after [setup] and [run] so far */
	unsigned touched;             /* paths an op of [run] used */
	const struct gen_params *p;
};

static int touched(const struct wl *w, int u)
{
	return u >= 0 && (w->touched >> u & 1);
}

/* Could u be made in [setup]: neither it nor its parent touched by [run]. */
static int setup_able(const struct wl *w, int u)
{
	return !touched(w, u) && !touched(w, up(u));
}

static int add(struct wl *w, int in_setup, struct gop op)
{
	if (in_setup ? w->nsetup >= MAX_SETUP : w->nrun >= MAX_RUN)
		return -1;
	if (apply(&w->m, &op) < 0)
		return -1;
	if (in_setup)
		w->setup[w->nsetup++] = op;
	else
		w->run[w->nrun++] = op;
	return 0;
}

static struct gop mk(int k, int a, int b, int v)
{
	return (struct gop){ (unsigned char)k, (signed char)a, (signed char)b, (unsigned char)v };
}

static int need_dir(struct wl *w, int d)
{
	char t = mtype(&w->m, d);
	if (t == 'd')
		return 0;
	if (t)
		return -1;
	return add(w, setup_able(w, d), mk(GEN_MKDIR, d, -1, 0));
}

static int need_file(struct wl *w, int u)
{
	char t = mtype(&w->m, u);
	if (t == 'f')
		return 0;
	if (t)
		return -1;
	int s = setup_able(w, u);
	if (need_dir(w, up(u)) < 0)
		return -1;
	return add(w, s, s ? mk(K_FILL, u, -1, 0) : mk(GEN_CREAT, u, -1, 0));
}

static int need_absent(struct wl *w, int u)
{
	char t = mtype(&w->m, u);
	if (!t)
		return 0;
	if (t == 'd')
		return dir_empty(&w->m, u) ? add(w, 0, mk(GEN_RMDIR, u, -1, 0)) : -1;
	return add(w, 0, mk(GEN_UNLINK, u, -1, 0));
}

static int need_empty_dir(struct wl *w, int d)
{
	if (need_dir(w, d) < 0)
		return -1;
	return dir_empty(&w->m, d) ? 0 : -1;
}

static int need_xattr(struct wl *w, int u)
{
	if (need_file(w, u) < 0)
		return -1;
	if (w->m.xattr[(int)w->m.ino[u]])
		return 0;
	return add(w, setup_able(w, u), mk(K_XINIT, u, -1, 0));
}

static void touch(struct wl *w, int u)
{
	if (u < 0)
		return;
	w->touched |= 1u << u;
	if (is_dir_path(u))
		w->touched |= 1u << uchild[u == U_B][0] | 1u << uchild[u == U_B][1];
}

/* Meet the needs of core op instance op, then apply it: 0 or -1. */
static int place_core(struct wl *w, struct gop op)
{
	int a = op.a, b = op.b, r = 0;
	switch (op.k) {
	case GEN_CREAT:
		r = need_absent(w, a) < 0 || need_dir(w, up(a)) < 0;
		break;
	case GEN_MKDIR:
		r = need_absent(w, a) < 0;
		break;
	case GEN_RMDIR:
		r = need_empty_dir(w, a) < 0;
		break;
	case GEN_REMOVEXATTR:
		r = need_xattr(w, a) < 0;
		break;
	case GEN_LINK:
	case GEN_SYMLINK:
		r = need_file(w, a) < 0 || need_absent(w, b) < 0 || need_dir(w, up(b)) < 0;
		break;
	case GEN_RENAME:
		if (is_dir_path(a))
			/* a directory with a file in it, when the file set has A/foo */
			r = need_dir(w, a) < 0 || (in_set(w->p, U_AFOO) && a == U_A && need_file(w, U_AFOO) < 0) ||
			    (op.v == RENAME_NEW ? need_absent(w, b) < 0 : need_empty_dir(w, b) < 0);
		else
			r = need_file(w, a) < 0 || need_dir(w, up(b)) < 0 ||
			    (op.v == RENAME_NEW ? need_absent(w, b) < 0 : need_file(w, b) < 0);
		break;
	default:
		r = need_file(w, a) < 0;
	}
	if (r)
		return -1;
	touch(w, a);
	touch(w, b);
	if (w->ncore >= 3)
		return -1;
	w->core[w->ncore] = (signed char)w->nrun;
	w->persist[w->ncore] = -1;
	w->ncore++;
	return add(w, 0, op);
}

/* ---- the walk ---- */

struct gen {
	const struct gen_params *p;
	struct gen_result *r;
	struct hmap keys;
	char **key;                   /* the key of each kept workload */
	struct gop *inst;             /* the core op instances */
	size_t ninst;
	int over;                     /* the space is larger than p->max */
};

static int same_key(const void *key, size_t idx, void *ctx)
{
	const struct gen *g = ctx;
	return !strcmp(key, g->key[idx]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *key_of(const struct wl *w, const int *perm)
{
	char *lines[MAX_SETUP];
	struct sbuf sb = SBUF_INIT;
	for (int i = 0; i < w->nsetup; i++) {
		render(&sb, &w->setup[i], perm);
		lines[i] = sbuf_detach(&sb);
	}
	qsort(lines, (size_t)w->nsetup, sizeof(*lines), cmp_str);
	for (int i = 0; i < w->nsetup; i++) {
		sbuf_addf(&sb, "%s\n", lines[i]);
		free(lines[i]);
	}
	sbuf_adds(&sb, "--\n");
	for (int i = 0; i < w->nrun; i++) {
		render(&sb, &w->run[i], perm);
		sbuf_adds(&sb, "\n");
	}
	return sbuf_detach(&sb);
}

static int replays(const struct wl *w)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	for (int i = 0; i < w->nsetup; i++)
		if (apply(&m, &w->setup[i]) < 0)
			return 0;
	for (int i = 0; i < w->nrun; i++)
		if (apply(&m, &w->run[i]) < 0)
			return 0;
	return 1;
}

static void finish(struct gen *g, const struct wl *w)
{
	struct gen_result *r = g->r;
	if (g->over)
		return;
	if (!replays(w)) {
		r->invalid++;
		return;
	}
	char *best = NULL;
	for (int i = 0; i < 4; i++) {
		char *k = key_of(w, uperm[i]);
		if (!best || strcmp(k, best) < 0) {
			free(best);
			best = k;
		} else {
			free(k);
		}
	}
	uint64_t h = fnv1a64(best, strlen(best));
	if (hmap_get(&g->keys, h, same_key, best, g) != HMAP_NONE) {
		free(best);
		r->same++;
		return;
	}
	if (g->p->max && r->n >= g->p->max) {
		free(best);
		g->over = 1;
		return;
	}
	g->key = xrealloc(g->key, (r->n + 1) * sizeof(*g->key));
	g->key[r->n] = best;
	hmap_put(&g->keys, h, r->n);

	struct sbuf shape = SBUF_INIT, sb = SBUF_INIT;
	for (int i = 0; i < w->ncore; i++)
		sbuf_addf(&shape, "%s%s", i ? "+" : "", op_names[w->run[(int)w->core[i]].k]);
	/* the header's summary: the core ops and their persistence */
	sbuf_addf(&sb, "# shape %s:", shape.buf);
	for (int i = 0; i < w->ncore; i++) {
		sbuf_adds(&sb, i ? "; " : " ");
		render(&sb, &w->run[(int)w->core[i]], uperm[0]);
		sbuf_adds(&sb, ", then ");
		if (w->persist[i] >= 0)
			render(&sb, &w->run[(int)w->persist[i]], uperm[0]);
		else
			sbuf_adds(&sb, "no persistence op");
	}
	sbuf_adds(&sb, "\n[setup]\n");
	for (int i = 0; i < w->nsetup; i++) {
		render(&sb, &w->setup[i], uperm[0]);
		sbuf_adds(&sb, "\n");
	}
	sbuf_adds(&sb, "[run]\n");
	for (int i = 0; i < w->nrun; i++) {
		render(&sb, &w->run[i], uperm[0]);
		sbuf_adds(&sb, "\n");
	}
	ALLOC_GROW(r->w, r->n + 1, r->cap);
	r->w[r->n++] = (struct gen_workload){ NULL, xstrdup(shape.buf), sbuf_detach(&sb) };
	size_t s;
	for (s = 0; s < r->nshapes; s++)
		if (!strcmp(r->shapes[s].shape, shape.buf))
			break;
	if (s == r->nshapes) {
		ALLOC_GROW(r->shapes, r->nshapes + 1, r->shapes_cap);
		r->shapes[r->nshapes++] = (struct gen_shape){ xstrdup(shape.buf), 0 };
	}
	r->shapes[s].n++;
	sbuf_free(&shape);
}

static void walk(struct gen *g, const struct wl *w, int depth);

/* The persistence target t (or none for sync and syncfs) with kind p after
 * the core op just placed, then the rest of the walk. */
static void with_persist(struct gen *g, const struct wl *w, int depth, int p, int t)
{
	struct wl n = *w;
	if (t >= 0) {
		char ty = mtype(&n.m, t);
		if (!ty) {
			/* a path never touched (a sibling): set it up */
			if (!setup_able(&n, t) || mtype(&n.m, up(t)) != 'd')
				return;
			if (add(&n, 1, is_dir_path(t) ? mk(GEN_MKDIR, t, -1, 0) : mk(K_FILL, t, -1, 0)) < 0)
				return;
			ty = mtype(&n.m, t);
		}
		if (ty == 'l' || (ty == 'd' && p != GEN_FSYNC))
			return;
		touch(&n, t);
	}
	n.persist[n.ncore - 1] = (signed char)n.nrun;
	if (add(&n, 0, mk(K_PERSIST + p, t, -1, 0)) < 0)
		return;
	walk(g, &n, depth + 1);
}

static void walk(struct gen *g, const struct wl *w, int depth)
{
	const struct gen_params *p = g->p;
	if (g->over)
		return;
	if (depth == p->seq) {
		finish(g, w);
		return;
	}
	for (size_t i = 0; i < g->ninst && !g->over; i++) {
		struct wl n = *w;
		if (place_core(&n, g->inst[i]) < 0) {
			g->r->invalid++;
			continue;
		}
		const struct gop *op = &g->inst[i];
		/* the targets: the paths used, their siblings and parents (only the used for sequence 3) */
		int used[2] = { op->a, op->b }, targets[6], nt = 0;
		if (op->k == GEN_SYMLINK)
			used[0] = -1; /* the target is read by nobody */
		for (int round = 0; round < (p->seq >= 3 ? 1 : 3); round++)
			for (int j = 0; j < 2; j++) {
				int u = used[j];
				if (u < 0)
					continue;
				int t = round == 0 ? u : round == 1 ? usibling[u] : up(u);
				if (t < 0 || !in_set(p, t))
					continue;
				int dup = 0;
				for (int k = 0; k < nt; k++)
					dup |= targets[k] == t;
				if (!dup)
					targets[nt++] = t;
			}
		if (depth + 1 < p->seq)
			walk(g, &n, depth + 1); /* no persistence op after this one */
		for (int k = 0; k < nt; k++)
			for (int q = 0; q < GEN_NPERSIST; q++)
				if ((p->persist >> q & 1) && q != GEN_SYNC && q != GEN_SYNCFS)
					with_persist(g, &n, depth, q, targets[k]);
		if (p->persist >> GEN_SYNC & 1)
			with_persist(g, &n, depth, GEN_SYNC, -1);
		if (p->persist >> GEN_SYNCFS & 1)
			with_persist(g, &n, depth, GEN_SYNCFS, -1);
	}
}

static void instances(struct gen *g)
{
	const struct gen_params *p = g->p;
	size_t cap = 0;
	for (int op = 0; op < GEN_NOPS; op++) {
		if (!(p->ops >> op & 1))
			continue;
		int nv = p->seq == 1 ? nvariants(op) : 1;
		for (int v = 0; v < nv; v++) {
			if (op == GEN_MKDIR || op == GEN_RMDIR) {
				for (int d = U_A; d <= U_B; d++)
					ARRAY_PUSH(g->inst, g->ninst, cap, mk(op, d, -1, v));
			} else if (op == GEN_LINK || op == GEN_SYMLINK || op == GEN_RENAME) {
				for (int a = U_FOO; a < NU; a++)
					for (int b = U_FOO; b < NU; b++)
						if (a != b && in_set(p, a) && in_set(p, b))
							ARRAY_PUSH(g->inst, g->ninst, cap, mk(op, a, b, v));
				if (op == GEN_RENAME)
					ARRAY_PUSH(g->inst, g->ninst, cap, mk(op, U_A, U_B, v));
			} else {
				for (int a = U_FOO; a < NU; a++)
					if (in_set(p, a))
						ARRAY_PUSH(g->inst, g->ninst, cap, mk(op, a, -1, v));
			}
		}
	}
}

static void name_list(struct sbuf *sb, unsigned set, const char *const *names, int n)
{
	int first = 1;
	for (int i = 0; i < n; i++)
		if (set >> i & 1) {
			sbuf_addf(sb, "%s%s", first ? "" : ",", names[i]);
			first = 0;
		}
}

int gen_run(const struct gen_params *p, struct gen_result *r, struct errbuf *e)
{
	memset(r, 0, sizeof(*r));
	if (p->seq < 1 || p->seq > 3)
		return errbuf_set(e, EXIT_USAGE, "sequence length %d is not 1, 2 or 3", p->seq);
	if (p->files < 1 || p->files > GEN_MAX_FILES)
		return errbuf_set(e, EXIT_USAGE, "--files %d: the file set has 1 to %d files", p->files, GEN_MAX_FILES);
	if (!(p->ops & GEN_ALL_OPS))
		return errbuf_set(e, EXIT_USAGE, "no core op to generate from");
	if (!(p->persist & ((1u << GEN_NPERSIST) - 1)))
		return errbuf_set(e, EXIT_USAGE, "no persistence op to end a workload with");
	struct gen g = { .p = p, .r = r, .keys = HMAP_INIT };
	instances(&g);
	struct wl w;
	memset(&w, 0, sizeof(w));
	w.p = p;
	walk(&g, &w, 0);
	for (size_t i = 0; i < r->n; i++)
		free(g.key[i]);
	free(g.key);
	free(g.inst);
	hmap_free(&g.keys);
	if (g.over) {
		gen_result_free(r);
		return errbuf_set(e, EXIT_USAGE,
				  "the space holds more than %zu workloads; narrow it with --ops or --files, or raise --max",
				  p->max);
	}
	/* names and headers, now that the total is known */
	int width = 4;
	for (size_t n = r->n; n >= 10000; n /= 10)
		width++;
	struct sbuf bounds = SBUF_INIT;
	sbuf_adds(&bounds, "# bounds: ops ");
	name_list(&bounds, p->ops, op_names, GEN_NOPS);
	sbuf_adds(&bounds, "; files");
	for (int i = 0; i < p->files; i++)
		sbuf_addf(&bounds, " %s", gen_file(i));
	sbuf_adds(&bounds, "; persist ");
	name_list(&bounds, p->persist, persist_names, GEN_NPERSIST);
	sbuf_adds(&bounds, "\n");
	for (size_t i = 0; i < r->n; i++) {
		struct gen_workload *x = &r->w[i];
		x->name = xasprintf("%0*zu-%s.wl", width, i + 1, x->shape);
		char *body = x->text;
		x->text = xasprintf("# generated by crashlab gen: seq %d, workload %zu of %zu\n%s%s", p->seq, i + 1,
				    r->n, bounds.buf, body);
		free(body);
	}
	sbuf_free(&bounds);
	return 0;
}

void gen_result_free(struct gen_result *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->w[i].name);
		free(r->w[i].shape);
		free(r->w[i].text);
	}
	free(r->w);
	for (size_t i = 0; i < r->nshapes; i++)
		free(r->shapes[i].shape);
	free(r->shapes);
	memset(r, 0, sizeof(*r));
}

/*
 * judgekit.h - helpers for the judge's host-only tests: a workload from
 * text, guest results in which op i returned at log position i (so a state
 * with point k has ops 1..k completed), and hand-made observed trees.
 */
#ifndef CRASHLAB_TESTS_UNIT_JUDGEKIT_H
#define CRASHLAB_TESTS_UNIT_JUDGEKIT_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "judge/models.h"
#include "judge/sim.h"
#include "core/tree.h"
#include "core/util.h"

struct kit {
	struct wl_workload w;
	struct op_result *res;
	struct sim s;
	struct tree_node nodes[32];
	size_t n;
	struct judgement j;
};

/* Parse the workload; every op succeeds unless kit_fail says otherwise. */
static inline void kit_init(struct kit *k, const char *text)
{
	memset(k, 0, sizeof(*k));
	struct errbuf eb = { 0 };
	if (wl_parse("test.wl", text, &k->w, &eb) < 0)
		BUG("bad test workload: %s", eb.msg);
	k->res = xcalloc(k->w.n + 1, sizeof(*k->res));
	for (size_t i = 0; i < k->w.n; i++)
		k->res[i].log_pos = k->w.ops[i].section == WL_SETUP ? 0 : k->w.ops[i].id;
}

static inline void kit_fail(struct kit *k, int op, int err)
{
	k->res[op - 1].ret = -1;
	k->res[op - 1].err = err;
}

static inline int kit_sim(struct kit *k)
{
	struct errbuf eb = { 0 };
	return sim_run(&k->s, &k->w, k->res, &eb);
}

/* A node; blocks NULL for non-files. */
static inline void kit_node(struct kit *k, const char *path, char type, unsigned mode, uint64_t size, unsigned nlink,
			    uint64_t ino, const char *blocks)
{
	struct tree_node *t = &k->nodes[k->n++];
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(path);
	t->type = type;
	t->mode = mode;
	t->size = size;
	t->nlink = nlink;
	t->ino = ino;
	t->blocks = blocks ? xstrdup(blocks) : (type == 'f' ? xstrdup("") : NULL);
}

/* A regular file holding text (one block, token computed as the checker does). */
static inline void kit_text(struct kit *k, const char *path, unsigned mode, uint64_t ino, const char *text)
{
	char tok[24] = "";
	size_t len = strlen(text);
	if (len) {
		unsigned char blk[TREE_BLOCK] = { 0 };
		memcpy(blk, text, len);
		tree_block_token(blk, len, 0, tok);
	}
	kit_node(k, path, 'f', mode, len, 1, ino, tok);
	k->nodes[k->n - 1].content = (unsigned char *)xstrdup(text);
	k->nodes[k->n - 1].content_len = len;
}

static inline void kit_xattr(struct kit *k, const char *name, const char *value)
{
	struct tree_node *t = &k->nodes[k->n - 1];
	t->xattrs = tree_xattrs_append(t->xattrs, name, value, strlen(value));
}

/* Judge the tree as a mounted, fsck-clean state with ops 1..point completed
 * (the previous judgement, if any, is dropped). */
static inline void kit_judge(struct kit *k, int64_t point)
{
	judgement_free(&k->j);
	struct check_report st = { .mount_ok = 1, .fsck_status = 0, .fsck_clean = 1, .nodes = k->nodes, .n_nodes = k->n };
	model_judge(&k->s, k->res, &st, point, &k->j);
}

/* The first verdict of model (name) and rule with kind, or NULL. */
static inline const struct verdict *kit_find(const struct kit *k, const char *model, const char *rule,
						 const char *kind)
{
	for (size_t i = 0; i < k->j.n; i++) {
		const struct verdict *v = &k->j.v[i];
		if (!strcmp(model_name(v->model), model) && (!rule || !strcmp(v->rule, rule)) &&
		    !strcmp(verdict_name(v->kind), kind))
			return v;
	}
	return NULL;
}

static inline size_t kit_count(const struct kit *k, const char *model, const char *kind)
{
	int m = !strcmp(model, "universal") ? MODEL_UNIVERSAL : model_parse(model);
	return k->j.count[m][verdict_parse(kind)];
}

/* Drop the tree and the judgement; keep the workload and simulation. */
static inline void kit_clear(struct kit *k)
{
	for (size_t i = 0; i < k->n; i++)
		tree_node_free(&k->nodes[i]);
	k->n = 0;
	judgement_free(&k->j);
}

static inline void kit_free(struct kit *k)
{
	kit_clear(k);
	sim_free(&k->s);
	free(k->res);
	wl_free(&k->w);
}

#endif

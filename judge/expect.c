/*
 * expect.c - the workload's own expectations ([expect], core/workload.h),
 * judged as the model `expect`: after the run's last persistence op
 * completed, each expectation is kept or LOST, and its citation is the line
 * of the workload that states it (the known-answer suite cites the
 * xfstests test each file translates in its header).
 *
 * "PATH data K" compares with the simulator: the file PATH named after op
 * K, its size and every 4 KiB block's token, as the checker computes them
 * (core/tree.h), so a file renamed since is compared with what it held.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/util.h"
#include "judge/models-priv.h"
#include "judge/sim.h"


static const struct tree_node *find(const struct tree_node *v, size_t n, const char *path)
{
	if (!strcmp(path, ".") || !*path)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

/* The simulator inode path names after op k, or -1. */
static int sim_lookup(const struct sim *s, const char *path, int k)
{
	int cur = SIM_ROOT;
	for (const char *p = path; *p;) {
		size_t l = strcspn(p, "/");
		if (l && !(l == 1 && *p == '.')) {
			int64_t name = sim_str_find(s, p, l);
			if (name < 0 || s->in[cur].type != 'd')
				return -1;
			struct sim_field f = { SF_ENTRY, cur, name };
			int64_t v = sim_value_at(s, &f, k);
			if (v < 0)
				return -1;
			cur = (int)v;
		}
		p += l;
		if (*p == '/')
			p++;
	}
	return cur;
}

/* The block tokens and size of simulator inode x after op k. */
static uint64_t sim_file(const struct sim *s, int x, int k, struct sbuf *tokens)
{
	struct sim_field sf = { SF_SIZE, x, 0 };
	uint64_t size = (uint64_t)sim_value_at(s, &sf, k);
	for (uint64_t b = 0; b * TREE_BLOCK < size; b++) {
		struct sim_field bf = { SF_BLOCK, x, (int64_t)b };
		size_t len = size - b * TREE_BLOCK < TREE_BLOCK ? (size_t)(size - b * TREE_BLOCK) : TREE_BLOCK;
		char tok[24];
		sim_block_token(s, sim_value_at(s, &bf, k), b * TREE_BLOCK, len, tok);
		sbuf_addf(tokens, "%s%s", b ? "," : "", tok);
	}
	return size;
}

static const char *type_word(int t)
{
	return t == 'd' ? "directory" : t == 'l' ? "symlink" : t == 'f' ? "file" : "special file";
}

/* The names directly in directory path (the root: "."), sorted, comma-joined. */
static void listing(const struct tree_node *v, size_t n, const char *path, struct sbuf *out)
{
	int root = !strcmp(path, ".") || !*path;
	size_t pl = strlen(path);
	struct strvec names = STRVEC_INIT;
	for (size_t i = 0; i < n; i++) {
		const char *p = v[i].path, *rest;
		if (root)
			rest = p;
		else if (!strncmp(p, path, pl) && p[pl] == '/')
			rest = p + pl + 1;
		else
			continue;
		if (!*rest || strchr(rest, '/') || (root && !strcmp(rest, "lost+found")))
			continue;
		strvec_push(&names, rest);
	}
	if (names.n)
		strvec_sort(&names);
	for (size_t i = 0; i < names.n; i++)
		sbuf_addf(out, "%s%s", i ? " " : "", names.v[i]);
	strvec_free(&names);
}


/* Judge one expectation: 1 kept. expected/observed in words. */
static int check(const struct sim *s, const struct wl_expect *x, const struct tree_node *v, size_t n, char *exp,
		 size_t en, char *obs, size_t on)
{
	const struct tree_node *t = find(v, n, x->path);
	int root = !strcmp(x->path, ".");
	if (x->kind == WX_ABSENT) {
		judge_say(exp, en, "absent");
		judge_say(obs, on, t ? "a %s" : "absent", t ? type_word(t->type) : "");
		return !t;
	}
	if (!t && !(root && x->kind == WX_LISTS)) {
		judge_say(exp, en, "%s", x->kind == WX_EXISTS ? "present" : x->text);
		judge_say(obs, on, "absent");
		return 0;
	}
	switch (x->kind) {
	case WX_EXISTS:
		judge_say(exp, en, "present");
		judge_say(obs, on, "a %s", type_word(t->type));
		return 1;
	case WX_SIZE:
		judge_say(exp, en, "size %" PRId64, x->num);
		judge_say(obs, on, "size %" PRIu64, t->size);
		return t->size == (uint64_t)x->num;
	case WX_NLINK:
		judge_say(exp, en, "%" PRId64 " link%s", x->num, x->num == 1 ? "" : "s");
		judge_say(obs, on, "%u link%s", t->nlink, t->nlink == 1 ? "" : "s");
		return t->nlink == (uint64_t)x->num;
	case WX_MODE:
		judge_say(exp, en, "mode %04" PRIo64, x->num);
		judge_say(obs, on, "mode %04o", t->mode & 07777);
		return (t->mode & 07777) == (uint32_t)x->num;
	case WX_TYPE:
		judge_say(exp, en, "a %s", type_word((int)x->num));
		judge_say(obs, on, "a %s", type_word(t->type));
		return t->type == (char)x->num;
	case WX_DATA: {
		int k = (int)x->num, ino = sim_lookup(s, x->path, k);
		if (ino < 0 || s->in[ino].type != 'f') {
			judge_say(exp, en, "the data '%s' had after op %d", x->path, k);
			judge_say(obs, on, "(after op %d '%s' names no file: the expectation cannot hold)", k, x->path);
			return 0;
		}
		struct sbuf want = SBUF_INIT;
		uint64_t size = sim_file(s, ino, k, &want);
		judge_say(exp, en, "the data it had after op %d (%" PRIu64 " bytes)", k, size);
		int ok = t->type == 'f' && t->size == size && !strcmp(t->blocks ? t->blocks : "", want.buf ? want.buf : "");
		if (ok)
			judge_say(obs, on, "that data");
		else if (t->type != 'f')
			judge_say(obs, on, "a %s", type_word(t->type));
		else if (t->size != size)
			judge_say(obs, on, "%" PRIu64 " bytes", t->size);
		else
			judge_say(obs, on, "%" PRIu64 " bytes with other contents", t->size);
		sbuf_free(&want);
		return ok;
	}
	case WX_TEXT: {
		judge_say(exp, en, "the text \"%.*s\"", (int)(x->str_len > 80 ? 80 : x->str_len), x->str);
		int ok = t->type == 'f' && t->size == x->str_len && t->content && t->content_len == x->str_len &&
			 !memcmp(t->content, x->str, x->str_len);
		if (ok)
			judge_say(obs, on, "that text");
		else if (t->content && t->content_len == t->size)
			judge_say(obs, on, "\"%.*s\"", (int)(t->content_len > 80 ? 80 : t->content_len), (const char *)t->content);
		else
			judge_say(obs, on, "%" PRIu64 " bytes", t->size);
		return ok;
	}
	case WX_LISTS: {
		struct sbuf got = SBUF_INIT, want = SBUF_INIT;
		listing(v, n, x->path, &got);
		for (size_t i = 0; i < x->nnames; i++)
			sbuf_addf(&want, "%s%s", i ? " " : "", x->names[i]);
		judge_say(exp, en, "names: %s", want.len ? want.buf : "(none)");
		judge_say(obs, on, "names: %s", got.len ? got.buf : "(none)");
		int ok = !strcmp(got.buf ? got.buf : "", want.buf ? want.buf : "");
		sbuf_free(&got);
		sbuf_free(&want);
		return ok;
	}
	case WX_XATTR:
	case WX_NOXATTR: {
		size_t len = 0;
		unsigned char *uv = NULL;
		const char *val = t->xattrs && tree_xattr_get(t->xattrs, x->str, &uv, &len) > 0 ? (const char *)uv : NULL;
		if (x->kind == WX_NOXATTR) {
			judge_say(exp, en, "no xattr %s", x->str);
			if (val)
				judge_say(obs, on, "xattr %s = \"%.*s\"", x->str, (int)(len > 60 ? 60 : len), val);
			else
				judge_say(obs, on, "no xattr %s", x->str);
			free(uv);
			return !val;
		}
		judge_say(exp, en, "xattr %s = \"%.*s\"", x->str, (int)(x->value_len > 60 ? 60 : x->value_len), x->value);
		if (val)
			judge_say(obs, on, "xattr %s = \"%.*s\"", x->str, (int)(len > 60 ? 60 : len), val);
		else
			judge_say(obs, on, "no xattr %s", x->str);
		int ok = val && len == x->value_len && !memcmp(val, x->value, len);
		free(uv);
		return ok;
	}
	case WX_TARGET:
		judge_say(exp, en, "a symlink to '%s'", x->str);
		judge_say(obs, on, t->type == 'l' ? "a symlink to '%s'" : "a %s", t->type == 'l' ? t->target : type_word(t->type));
		return t->type == 'l' && t->target && !strcmp(t->target, x->str);
	case WX_ABSENT:
	case WX_NKINDS:
		break;
	}
	return 0;
}

int expect_validate(const struct wl_workload *w, struct errbuf *e)
{
	int need = 0;
	for (size_t i = 0; i < w->nexpects; i++)
		need |= w->expects[i].kind == WX_DATA;
	if (!need)
		return 0;
	struct sim s;
	if (sim_run(&s, w, NULL, e) < 0) {
		sim_free(&s);
		return -1;
	}
	int r = 0;
	for (size_t i = 0; i < w->nexpects && !r; i++) {
		const struct wl_expect *x = &w->expects[i];
		if (x->kind != WX_DATA)
			continue;
		int ino = sim_lookup(&s, x->path, (int)x->num);
		if (ino < 0 || s.in[ino].type != 'f')
			r = errbuf_set(e, EXIT_DATAERR, "%s:%d: expect: after op %" PRId64 " '%s' names no regular file", w->file,
				       x->line, x->num, x->path);
	}
	sim_free(&s);
	return r;
}

void expect_judge(const struct sim *s, const struct op_result *res, const struct check_report *st, int64_t point,
		  struct judgement *out)
{
	const struct wl_workload *w = s->w;
	int k = wl_expect_point(w);
	if (!w->nexpects || k < 1 || res[k - 1].log_pos > point || !st->mount_ok)
		return;
	char optx[300];
	wl_format(&w->ops[k - 1], optx, sizeof(optx));
	for (size_t i = 0; i < w->nexpects; i++) {
		const struct wl_expect *x = &w->expects[i];
		struct verdict *v = judgement_add(out);
		v->model = MODEL_EXPECT;
		judge_say(v->rule, sizeof(v->rule), "expect");
		judge_say(v->cite, sizeof(v->cite), "%s:%d: %s", w->file ? w->file : "workload", x->line, x->text);
		v->op = k;
		v->trigger = k;
		judge_say(v->path, sizeof(v->path), "%s", x->path);
		int ok = check(s, x, st->nodes, st->n_nodes, v->expected, sizeof(v->expected), v->observed,
			       sizeof(v->observed));
		v->kind = ok ? V_KEPT : V_LOST;
		judge_say(v->reason, sizeof(v->reason), "%s: the workload expects '%s' once op %d `%s` completed (line %d), %s: "
			 "expected %s, found %s",
		    ok ? "kept" : "LOST", x->text, k, optx, x->line, ok ? "and it holds" : "but it does not", v->expected,
		    v->observed);
	}
}

/*
 * props.c - the judge's properties, over workloads a seeded generator
 * draws from the whole workload language (make check-props; also part of
 * make check). Each workload is simulated, given guest results (inode
 * numbers, some reused), and its states are rendered as the checker would
 * capture them (tests/unit/simtree.h), then judged:
 *
 *   P1  every exact state S_k, judged with any completion point <= k, gives
 *       no LOST and no broken under any model;
 *   P2  S_k plus op k+1 seen in part (a torn block, a partly written-back
 *       size, one half of a rename, any subset of its pieces) gives no LOST
 *       for ops up to k (and nothing broken but U3/U4 for half a rename);
 *   P3  for every rule, S_k with a piece the rule keeps taken out (the
 *       field put back to its value before that piece, where no later
 *       piece gives that value again) reports the rule LOST when the state
 *       is still explainable and the rule still applies: the kill rate per
 *       rule, which must be 100 %;
 *   P4  states no op sequence makes (a name no op made, bytes no op wrote,
 *       a directory under two names, half an exchange) are U3 or U4 broken.
 *
 * A failure prints the seed and the workload made minimal (ops removed
 * while it still fails), ready to paste into a unit test, and the output is
 * TAP. Usage: props [--count N] [--seed S] [--verbose]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"
#include "judge/explain.h"
#include "judge/models.h"
#include "judge/sim.h"
#include "tests/unit/simtree.h"

static int verbose;

/* ------------------------------------------------------------------ */
/* Random numbers: xorshift64* */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 2685821657736338717ULL;
}

static int pick(struct rng *r, int n)
{
	return (int)(rnd(r) % (uint64_t)n);
}

static struct rng rng_of(uint64_t seed)
{
	struct rng r = { seed * 0x9E3779B97F4A7C15ULL + 0x1234567 };
	if (!r.s)
		r.s = 1;
	rnd(&r);
	return r;
}

#define ARRAY_N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ------------------------------------------------------------------ */
/* The generator */

static const char *const dirs[] = { "A", "B", "A/C", "D" };
static const char *const files[] = { "f", "g", "A/f", "A/g", "B/f", "A/C/h", "B/g" };
static const char *const syms[] = { "s", "A/s" };
static const char *const xnames[] = { "user.a", "user.b" };
static const char *const xvals[] = { "1", "2", "xyz" };
static const char *const modes[] = { "0600", "0644", "0755", "0700" };
static const char *const sizes[] = { "0", "100", "4096", "5000", "8K", "16K" };
static const char *const lens[] = { "1K", "4K", "8K", "12K", "512" };
static const char *const offs[] = { "0", "512", "4096", "6000", "8K" };
static const char *const fallocs[] = { "0", "keep_size", "punch_hole", "zero_range", "zero_range_keep_size" };

static const char *any_path(struct rng *r)
{
	int k = pick(r, 10);
	if (k < 6)
		return files[pick(r, ARRAY_N(files))];
	if (k < 9)
		return dirs[pick(r, ARRAY_N(dirs))];
	return syms[pick(r, ARRAY_N(syms))];
}

static const char *a_file(struct rng *r)
{
	return files[pick(r, ARRAY_N(files))];
}

static void gen_op(struct rng *r, struct sbuf *o, int setup, int nth)
{
	int k = pick(r, setup ? 6 : 34);
	const char *F = a_file(r), *G = a_file(r);
	switch (k) {
	case 30:
		sbuf_addf(o, "write %s 8K\n%s %s\nrename %s %s", F, pick(r, 2) ? "fdatabarrier" : "fiemap_sync", F, F, G);
		break;
	case 31:
		if (pick(r, 2))
			sbuf_addf(o, "write %s 4K\nfbarrier %s\nchmod %s 0600", F, F, F);
		else
			sbuf_addf(o, "write %s 4K\nfbarrier %s\nsetxattr %s user.b 2", F, F, F);
		break;
	case 32:
		sbuf_addf(o, "write %s 12K\nrename %s %s barrier", F, F, G);
		break;
	case 33:
		sbuf_addf(o, "link %s %s\nfsync %s", F, G, G);
		break;
	case 0:
		sbuf_addf(o, "mkdir %s", dirs[pick(r, ARRAY_N(dirs))]);
		break;
	case 1:
	case 2:
		if (pick(r, 2))
			sbuf_addf(o, "write %s \"t%d\"", a_file(r), nth);
		else
			sbuf_addf(o, "write %s %s %s", a_file(r), offs[pick(r, ARRAY_N(offs))], lens[pick(r, ARRAY_N(lens))]);
		break;
	case 3:
		sbuf_addf(o, "creat %s %s", a_file(r), modes[pick(r, ARRAY_N(modes))]);
		break;
	case 4:
		sbuf_addf(o, "setxattr %s %s %s", any_path(r), xnames[pick(r, ARRAY_N(xnames))], xvals[pick(r, ARRAY_N(xvals))]);
		break;
	case 5:
		sbuf_addf(o, "link %s %s", a_file(r), a_file(r));
		break;
	case 6:
		sbuf_addf(o, "append %s %s", a_file(r), pick(r, 2) ? "4K" : "\"more\"");
		break;
	case 7:
		sbuf_addf(o, "truncate %s %s", a_file(r), sizes[pick(r, ARRAY_N(sizes))]);
		break;
	case 8:
		sbuf_addf(o, "falloc %s %s %s %s", a_file(r), fallocs[pick(r, ARRAY_N(fallocs))], offs[pick(r, ARRAY_N(offs))],
			  lens[pick(r, 4)]);
		break;
	case 9:
		sbuf_addf(o, "rename %s %s", a_file(r), a_file(r));
		break;
	case 10: {
		static const char *const fl[] = { "", " noreplace", " exchange", " barrier" };
		int dir = pick(r, 3) == 0;
		const char *a = dir ? dirs[pick(r, ARRAY_N(dirs))] : a_file(r);
		const char *b = dir ? dirs[pick(r, ARRAY_N(dirs))] : a_file(r);
		sbuf_addf(o, "rename %s %s%s", a, b, fl[pick(r, 4)]);
		break;
	}
	case 11:
		sbuf_addf(o, "unlink %s", pick(r, 5) ? a_file(r) : syms[pick(r, ARRAY_N(syms))]);
		break;
	case 12:
		sbuf_addf(o, "removexattr %s %s", any_path(r), xnames[pick(r, ARRAY_N(xnames))]);
		break;
	case 13:
		sbuf_addf(o, "chmod %s %s", any_path(r), modes[pick(r, ARRAY_N(modes))]);
		break;
	case 14:
	case 15:
	case 16:
		sbuf_addf(o, "fsync %s", any_path(r));
		break;
	case 17:
		sbuf_addf(o, "fdatasync %s", a_file(r));
		break;
	case 18:
		sbuf_addf(o, "%s", pick(r, 2) ? "sync" : "syncfs");
		break;
	case 19:
		sbuf_addf(o, "%s %s", pick(r, 2) ? "fbarrier" : "fdatabarrier", a_file(r));
		break;
	case 20:
		sbuf_addf(o, "rmdir %s", dirs[pick(r, ARRAY_N(dirs))]);
		break;
	case 21: {
		/* a symlink to a file in its own directory */
		int i = pick(r, ARRAY_N(syms));
		sbuf_addf(o, "symlink %s %s", pick(r, 2) ? "f" : "g", syms[i]);
		break;
	}
	case 22:
		sbuf_addf(o, "dwrite %s %s %s", a_file(r), pick(r, 2) ? "0" : "4096", pick(r, 2) ? "4K" : "8K");
		break;
	case 23:
		sbuf_addf(o, "mmapwrite %s 0 %s", a_file(r), pick(r, 2) ? "\"mm\"" : "4K");
		break;
	case 24:
		sbuf_addf(o, "fiemap_sync %s", a_file(r));
		break;
	case 25:
		sbuf_addf(o, "mkdir %s", dirs[pick(r, ARRAY_N(dirs))]);
		break;
	case 26:
		/* reuse a name: unlink then write it again */
		sbuf_addf(o, "write %s \"r%d\"", a_file(r), nth);
		break;
	case 27:
		sbuf_addf(o, "fsync %s", dirs[pick(r, ARRAY_N(dirs))]);
		break;
	default:
		sbuf_addf(o, "write %s %s %s", a_file(r), offs[pick(r, ARRAY_N(offs))], lens[pick(r, ARRAY_N(lens))]);
		break;
	}
}

struct wcase {
	struct strvec setup, run;
};

static void wcase_free(struct wcase *c)
{
	strvec_free(&c->setup);
	strvec_free(&c->run);
}

static char *wcase_text(const struct wcase *c)
{
	struct sbuf b = SBUF_INIT;
	sbuf_adds(&b, "[setup]\n");
	for (size_t i = 0; i < c->setup.n; i++)
		sbuf_addf(&b, "%s\n", c->setup.v[i]);
	sbuf_adds(&b, "[run]\n");
	for (size_t i = 0; i < c->run.n; i++)
		sbuf_addf(&b, "%s\n", c->run.v[i]);
	return sbuf_detach(&b);
}

/* A setup that usually gives the run something to work on, then the run. */
static void gen_case(struct rng *r, struct wcase *c)
{
	memset(c, 0, sizeof(*c));
	static const char *const base[][2] = {
		{ "mkdir A", "80" }, { "mkdir B", "50" }, { "mkdir A/C", "40" }, { "write f \"hello\"", "70" },
		{ "write A/f 8K", "50" }, { "write A/g \"old\"", "40" }, { "write B/f 4K", "30" },
		{ "setxattr f user.a 1", "20" }, { "symlink f s", "15" }, { "chmod A 0700", "10" },
	};
	for (int i = 0; i < ARRAY_N(base); i++)
		if (pick(r, 100) < atoi(base[i][1]))
			strvec_push(&c->setup, base[i][0]);
	int ns = pick(r, 3), nr = 2 + pick(r, 9), nth = 1;
	for (int i = 0; i < ns; i++) {
		struct sbuf o = SBUF_INIT;
		gen_op(r, &o, 1, nth++);
		strvec_push(&c->setup, o.buf);
		sbuf_free(&o);
	}
	for (int i = 0; i < nr; i++) {
		struct sbuf o = SBUF_INIT;
		gen_op(r, &o, 0, nth++);
		for (char *save = NULL, *l = strtok_r(o.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			strvec_push(&c->run, l);
		sbuf_free(&o);
	}
}

/* ------------------------------------------------------------------ */
/* A workload with guest results */

struct built {
	struct wl_workload w;
	struct op_result *res;
	struct sim s;
	int nsetup;                /* ops 1..nsetup are [setup] */
};

static void built_free(struct built *b)
{
	sim_free(&b->s);
	free(b->res);
	wl_free(&b->w);
}

/* Guest inode numbers for the simulator's inodes: a fresh number, or (one
 * time in three) the number of an inode whose last name went away before
 * this one was made, as file systems reuse them. */
static void assign_inos(const struct sim *s0, uint64_t *num, struct rng *r)
{
	size_t n = s0->nin;
	int *death = xcalloc(n + 1, sizeof(int)), *cnt = xcalloc(n + 1, sizeof(int));
	unsigned char *reused = xcalloc(n + 1, 1);
	for (size_t d = 0; d < n; d++)
		for (size_t i = 0; s0->in[d].type == 'd' && i < s0->in[d].nall; i++) {
			struct sim_field f = { SF_ENTRY, (int)d, s0->in[d].allnames[i] };
			int64_t v = sim_value_at(s0, &f, 0);
			if (v >= 0)
				cnt[v]++;
		}
	for (size_t i = 0; i < n; i++)
		death[i] = cnt[i] ? -1 : 0; /* -1: alive */
	for (size_t c = 0; c < s0->nch; c++) {
		const struct sim_change *ch = &s0->ch[c];
		if (ch->f.kind != SF_ENTRY)
			continue;
		if (ch->old >= 0 && --cnt[ch->old] == 0)
			death[ch->old] = ch->op;
		if (ch->val >= 0 && cnt[ch->val]++ >= 0)
			death[ch->val] = -1;
	}
	for (size_t x = 0; x < n; x++) {
		num[x] = 2 + x;
		if (x == SIM_ROOT || pick(r, 3))
			continue;
		for (size_t z = 1; z < x; z++)
			if (!reused[z] && death[z] > 0 && death[z] < s0->in[x].born && num[z] == 2 + z) {
				num[x] = num[z];
				reused[z] = 1;
				break;
			}
	}
	free(death);
	free(cnt);
	free(reused);
}

/* 0 built; 1 the simulator cannot model it (draw another). */
static int build(const char *text, struct built *b, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	struct errbuf e = { 0 };
	if (wl_parse("gen.wl", text, &b->w, &e) < 0) {
		fprintf(stderr, "props: the generator wrote a bad workload: %s\n%s", e.msg, text);
		exit(2);
	}
	if (sim_check(&b->w, &e) < 0) {
		wl_free(&b->w);
		return 1;
	}
	struct sim s0;
	if (sim_run(&s0, &b->w, NULL, &e) < 0) {
		sim_free(&s0);
		wl_free(&b->w);
		return 1;
	}
	b->nsetup = (int)b->w.nsetup;
	struct rng r = rng_of(seed ^ 0xabcdef);
	uint64_t *num = xcalloc(s0.nin + 1, sizeof(uint64_t));
	assign_inos(&s0, num, &r);
	b->res = xcalloc(b->w.n + 1, sizeof(*b->res));
	for (size_t i = 0; i < b->w.n; i++) {
		const struct sim_op *so = &s0.ops[i];
		struct op_result *g = &b->res[i];
		g->ret = so->sim_err ? -1 : 0;
		g->err = so->sim_err;
		g->log_pos = b->w.ops[i].section == WL_SETUP ? 0 : b->w.ops[i].id;
		int id = b->w.ops[i].id;
		if (so->obj_dir >= 0 && so->obj_name >= 0) {
			struct sim_field f = { SF_ENTRY, so->obj_dir, so->obj_name };
			int64_t v = sim_value_at(&s0, &f, id);
			if (v >= 0)
				g->ino = num[v];
		}
		if (so->op->kind != WL_SYMLINK && so->obj2_dir >= 0 && so->obj2_name >= 0) {
			struct sim_field f = { SF_ENTRY, so->obj2_dir, so->obj2_name };
			int64_t v = sim_value_at(&s0, &f, id);
			if (v >= 0)
				g->ino2 = num[v];
		}
	}
	free(num);
	sim_free(&s0);
	if (sim_run(&b->s, &b->w, b->res, &e) < 0) {
		built_free(b);
		return 1;
	}
	for (size_t i = 0; i < b->w.n; i++)
		if (b->s.ops[i].mismatch[0]) {
			fprintf(stderr, "props: the simulator disagrees with itself: %s\n%s", b->s.ops[i].mismatch, text);
			exit(2);
		}
	return 0;
}

static void judge_tree(const struct built *b, const struct st_tree *t, int point, struct judgement *j)
{
	struct check_report rep = { .mount_ok = 1, .fsck_status = 0, .fsck_clean = 1, .nodes = t->v, .n_nodes = t->n };
	model_judge(&b->s, b->res, &rep, point, j);
}

static int find_verdict(const struct judgement *j, int model, const char *rule, int op, int kind)
{
	for (size_t i = 0; i < j->n; i++) {
		const struct verdict *v = &j->v[i];
		if (v->model == model && !strcmp(v->rule, rule) && (op < 0 || v->op == op) &&
		    (kind < 0 || (int)v->kind == kind))
			return (int)i;
	}
	return -1;
}

static int broken_rule(const struct judgement *j, const char *rule)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].kind == V_BROKEN && (!rule || !strcmp(j->v[i].rule, rule)))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The properties. Each returns 1 on a failure, with one line in why. */

struct stats {
	size_t workloads, states, variants, mutations, applicable, impossible;
	size_t rule_tried[64], rule_killed[64];
	clock_t t[5];
};

static struct stats st;
static const struct rule_info *rules;
static size_t nrules;

static int rule_index(const char *id)
{
	for (size_t i = 0; i < nrules; i++)
		if (!strcmp(rules[i].id, id))
			return (int)i;
	return -1;
}

static void say_verdict(char *why, size_t n, const char *what, int k, int point, const struct verdict *v)
{
	snprintf(why, n, "%s S_%d (point %d): [%s %s %s] %s", what, k, point, model_name(v->model), v->rule,
		 verdict_name(v->kind), v->reason);
}

static int p1(const struct built *b, struct rng *r, char *why, size_t wn)
{
	int n = (int)b->w.n;
	for (int k = b->nsetup; k <= n; k++) {
		struct st_tree t;
		st_render_at(&b->s, k, &t);
		int points[2] = { k, b->nsetup + pick(r, k - b->nsetup + 1) };
		for (int pi = 0; pi < 2; pi++) {
			struct judgement j;
			judge_tree(b, &t, points[pi], &j);
			st.states++;
			for (size_t i = 0; i < j.n; i++)
				if (j.v[i].kind == V_LOST || j.v[i].kind == V_BROKEN) {
					say_verdict(why, wn, "P1: the exact state", k, points[pi], &j.v[i]);
					judgement_free(&j);
					st_free(&t);
					return 1;
				}
			judgement_free(&j);
		}
		st_free(&t);
	}
	return 0;
}

/* Values of S_k with some of op q's changes applied (q = k + 1). */
struct partial {
	const struct sim *s;
	int k;
	const unsigned char *take;  /* per change of op q: applied */
	size_t first, n;
	int size_ino;               /* a size put in part, or -1 */
	int64_t size;
};

static int64_t partial_value(void *ctx, const struct sim_field *f)
{
	const struct partial *p = ctx;
	if (p->size_ino >= 0 && f->kind == SF_SIZE && f->ino == p->size_ino)
		return p->size;
	for (size_t i = p->n; i-- > 0;) {
		const struct sim_change *c = &p->s->ch[p->first + i];
		if (p->take[i] && c->f.kind == f->kind && c->f.ino == f->ino && c->f.key == f->key)
			return c->val;
	}
	return sim_value_at(p->s, f, p->k);
}

static int p2_check(const struct built *b, const struct st_tree *t, int k, int point, int allow_u34, const char *what,
		    char *why, size_t wn)
{
	struct judgement j;
	judge_tree(b, t, point, &j);
	st.variants++;
	int bad = 0;
	for (size_t i = 0; i < j.n && !bad; i++) {
		const struct verdict *v = &j.v[i];
		if ((v->kind == V_LOST && v->op > 0 && v->op <= k) ||
		    (v->kind == V_BROKEN && !(allow_u34 && (!strcmp(v->rule, "U3") || !strcmp(v->rule, "U4"))))) {
			char w[64];
			snprintf(w, sizeof(w), "P2 (%s): the state", what);
			say_verdict(why, wn, w, k, point, v);
			bad = 1;
		}
	}
	judgement_free(&j);
	return bad;
}

static int p2(const struct built *b, struct rng *r, char *why, size_t wn)
{
	const struct sim *s = &b->s;
	int n = (int)b->w.n;
	for (int k = b->nsetup; k < n; k++) {
		int q = k + 1;
		const struct sim_op *so = &s->ops[q - 1];
		if (!so->applied || so->n < 1)
			continue;
		int point = b->nsetup + pick(r, k - b->nsetup + 1);
		unsigned char take[256];
		if (so->n > 256)
			continue;
		struct partial pt = { s, k, take, so->first, so->n, -1, 0 };
		int rename = so->op->kind == WL_RENAME;
		/* any subset of the pieces (three draws) */
		for (int d = 0; d < 3; d++) {
			for (size_t i = 0; i < so->n; i++)
				take[i] = (uint8_t)pick(r, 2);
			struct st_tree t;
			st_render(s, partial_value, &pt, &t);
			int bad = p2_check(b, &t, k, point, rename, "a subset of the next op's pieces", why, wn);
			st_free(&t);
			if (bad)
				return 1;
		}
		memset(take, 1, so->n);
		/* a torn block: the old and the new version mixed by sectors */
		for (size_t i = 0; i < so->n; i++) {
			const struct sim_change *c = &s->ch[so->first + i];
			if (c->f.kind != SF_BLOCK)
				continue;
			struct st_tree t;
			st_render(s, partial_value, &pt, &t);
			char *path = sim_path_at(s, c->f.ino, q);
			int nd = path ? st_find(&t, path) : -1;
			free(path);
			if (nd < 0 || (uint64_t)c->f.key * TREE_BLOCK >= t.v[nd].size) {
				st_free(&t);
				continue;
			}
			unsigned char mix[TREE_BLOCK];
			const unsigned char *A = sim_block(s, c->old), *B = sim_block(s, c->val);
			unsigned m = 1 + (unsigned)pick(r, 254);
			for (int sct = 0; sct < 8; sct++)
				memcpy(mix + sct * 512, (m >> sct) & 1 ? B + sct * 512 : A + sct * 512, 512);
			uint64_t off = (uint64_t)c->f.key * TREE_BLOCK, size = t.v[nd].size;
			char tok[24];
			tree_block_token(mix, size - off < TREE_BLOCK ? (size_t)(size - off) : TREE_BLOCK, off, tok);
			st_set_token(&t.v[nd], (uint64_t)c->f.key, tok);
			int bad = p2_check(b, &t, k, point, 0, "a torn block", why, wn);
			st_free(&t);
			if (bad)
				return 1;
			break;
		}
		/* a growing write's size written back in part */
		for (size_t i = 0; i < so->n; i++) {
			const struct sim_change *c = &s->ch[so->first + i];
			if (c->f.kind != SF_SIZE || !c->data || c->val <= c->old)
				continue;
			int64_t lo = (c->old / TREE_BLOCK + 1) * TREE_BLOCK;
			if (lo >= c->val)
				continue;
			int64_t steps = (c->val - 1 - lo) / TREE_BLOCK + 1;
			pt.size_ino = c->f.ino;
			pt.size = lo + TREE_BLOCK * pick(r, (int)steps);
			struct st_tree t;
			st_render(s, partial_value, &pt, &t);
			int bad = p2_check(b, &t, k, point, 0, "a size written back in part", why, wn);
			st_free(&t);
			pt.size_ino = -1;
			if (bad)
				return 1;
			break;
		}
		/* one half of a rename */
		if (rename && so->n == 2) {
			for (int h = 0; h < 2; h++) {
				take[0] = h == 0;
				take[1] = h == 1;
				struct st_tree t;
				st_render(s, partial_value, &pt, &t);
				int bad = p2_check(b, &t, k, point, h == 1 || so->op->flags == WL_RENAME_EXCHANGE,
						   h ? "the destination half of a rename" : "the source half of a rename", why, wn);
				st_free(&t);
				if (bad)
					return 1;
			}
		}
	}
	return 0;
}

static int tree_text_equal(const struct st_tree *a, const struct st_tree *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		char *x = tree_node_format(&a->v[i]), *y = tree_node_format(&b->v[i]);
		int eq = !strcmp(x, y);
		free(x);
		free(y);
		if (!eq)
			return 0;
	}
	return 1;
}

/* S_k with field f given value v. */
struct mutant {
	const struct sim *s;
	int k;
	struct sim_field f;
	int64_t v;
};

static int64_t mutant_value(void *ctx, const struct sim_field *f)
{
	const struct mutant *m = ctx;
	if (f->kind == m->f.kind && f->ino == m->f.ino && f->key == m->f.key)
		return m->v;
	return sim_value_at(m->s, f, m->k);
}

/* Is change c the last of its field's changes in S_k? */
static int last_at(const struct sim *s, size_t c, int k)
{
	const struct sim_hist *h = &s->hist[s->ch[c].hist];
	return (size_t)s->ch[c].hpos == h->n || s->ch[h->idx[s->ch[c].hpos]].op > k;
}

/* Can change c be taken out of S_k: does its old value look like no value
 * a change at or after it gives? */
static int removable(const struct sim *s, size_t c, int k)
{
	const struct sim_change *ch = &s->ch[c];
	const struct sim_hist *h = &s->hist[ch->hist];
	size_t blen = TREE_BLOCK;
	/* an inode whose number another inode reuses: the judge may rightly
	 * read the object as that other inode, whose fields can hold the old
	 * value (a fresh file's size 0, no data) */
	for (size_t y = 0; y < s->nin; y++)
		if ((int)y != ch->f.ino && st_ino(s, (int)y) == st_ino(s, ch->f.ino))
			return 0;
	if (ch->f.kind == SF_BLOCK) {
		struct sim_field sf = { SF_SIZE, ch->f.ino, 0 };
		uint64_t size = (uint64_t)sim_value_at(s, &sf, k), off = (uint64_t)ch->f.key * TREE_BLOCK;
		if (size <= off)
			return 0;
		blen = size - off < TREE_BLOCK ? (size_t)(size - off) : TREE_BLOCK;
	}
	for (size_t i = (size_t)ch->hpos; i <= h->n; i++) {
		int64_t v = s->ch[h->idx[i - 1]].val;
		if (v == ch->old)
			return 0;
		if (ch->f.kind == SF_BLOCK) {
			char a[24], b[24];
			sim_block_token(s, ch->old, (uint64_t)ch->f.key * TREE_BLOCK, blen, a);
			sim_block_token(s, v, (uint64_t)ch->f.key * TREE_BLOCK, blen, b);
			if (!strcmp(a, b))
				return 0;
		}
		/* a size a later growing write passes through on 4 KiB steps
		 * explains the old size too (that write seen in part) */
		const struct sim_change *l = &s->ch[h->idx[i - 1]];
		if (ch->f.kind == SF_SIZE && l->data && l->old < ch->old && ch->old < l->val && ch->old % TREE_BLOCK == 0)
			return 0;
		/* two inodes with one number (reused) look the same */
		if (ch->f.kind == SF_ENTRY && v >= 0 && ch->old >= 0 && st_ino(s, (int)v) == st_ino(s, (int)ch->old))
			return 0;
	}
	return 1;
}

/* Judge S_k with change c taken out; the verdicts of the rules listed in
 * want (model, rule, op) must turn LOST. 1 on a survivor. */
static int mutate(const struct built *b, int k, size_t c, const int *models, const char *const *rule_ids,
		  const int *ops, size_t nwant, char *why, size_t wn)
{
	const struct sim *s = &b->s;
	struct mutant m = { s, k, s->ch[c].f, s->ch[c].old };
	struct st_tree t, t0;
	st_render(s, mutant_value, &m, &t);
	st_render_at(s, k, &t0);
	int same = tree_text_equal(&t, &t0);
	st_free(&t0);
	if (same) {
		st_free(&t);
		return 0; /* the piece cannot be seen (beyond the end of the file): no mutant */
	}
	struct judgement j;
	judge_tree(b, &t, k, &j);
	st.mutations++;
	int bad = 0;
	if (j.explained) {
		for (size_t i = 0; i < nwant && !bad; i++) {
			int ri = rule_index(rule_ids[i]);
			if (find_verdict(&j, models[i], rule_ids[i], ops[i], -1) < 0)
				continue; /* the rule no longer applies (its trigger went with the piece) */
			st.applicable++;
			st.rule_tried[ri]++;
			if (find_verdict(&j, models[i], rule_ids[i], ops[i], V_LOST) >= 0) {
				st.rule_killed[ri]++;
				continue;
			}
			char what[200];
			snprintf(what, sizeof(what), "P3: op %d's piece taken out of", s->ch[c].op);
			int vi = find_verdict(&j, models[i], rule_ids[i], ops[i], -1);
			say_verdict(why, wn, what, k, k, &j.v[vi]);
			bad = 1;
		}
	}
	judgement_free(&j);
	st_free(&t);
	return bad;
}

static int p3(const struct built *b, struct rng *r, char *why, size_t wn)
{
	const struct sim *s = &b->s;
	int n = (int)b->w.n;
	for (int k = b->nsetup + 1; k <= n; k++) {
		struct st_tree t;
		st_render_at(s, k, &t);
		struct judgement j;
		judge_tree(b, &t, k, &j);
		st_free(&t);
		/* every piece some rule keeps, once, with the rules that keep it */
		for (size_t i = 0; i < j.n; i++) {
			const struct verdict *v = &j.v[i];
			if (v->kind != V_KEPT || v->piece < 0 || v->model == MODEL_UNIVERSAL || !strcmp(v->rule, "unpromised"))
				continue;
			int dup = 0;
			for (size_t q = 0; q < i && !dup; q++)
				dup = j.v[q].kind == V_KEPT && j.v[q].piece == v->piece;
			if (dup || !last_at(s, (size_t)v->piece, k) || !removable(s, (size_t)v->piece, k))
				continue; /* a superseded piece cannot be taken out alone */
			int models[64], ops[64];
			const char *ids[64];
			size_t nw = 0;
			for (size_t q = i; q < j.n && nw < 64; q++)
				if (j.v[q].kind == V_KEPT && j.v[q].piece == v->piece && j.v[q].model != MODEL_UNIVERSAL) {
					models[nw] = j.v[q].model;
					ids[nw] = j.v[q].rule;
					ops[nw++] = j.v[q].op;
				}
			if (mutate(b, k, (size_t)v->piece, models, ids, ops, nw, why, wn)) {
				judgement_free(&j);
				return 1;
			}
		}
		/* sequential: take out a piece of an op up to the last completed fsync/sync */
		int K0 = 0;
		for (int q = b->nsetup + 1; q <= k; q++)
			if (wl_is_persistence(&b->w.ops[q - 1]) && b->res[q - 1].ret == 0)
				K0 = q;
		if (K0 && find_verdict(&j, MODEL_SEQUENTIAL, "sequential.prefix", -1, V_KEPT) >= 0) {
			size_t cand[512], nc = 0;
			for (size_t c = 0; c < s->nch && s->ch[c].op <= K0 && nc < 512; c++) {
				if (last_at(s, c, k) && removable(s, c, k))
					cand[nc++] = c;
			}
			if (nc) {
				int model = MODEL_SEQUENTIAL, op = -1;
				const char *id = "sequential.prefix";
				if (mutate(b, k, cand[pick(r, (int)nc)], &model, &id, &op, 1, why, wn)) {
					judgement_free(&j);
					return 1;
				}
			}
		}
		judgement_free(&j);
	}
	return 0;
}

static int p4_check(const struct built *b, const struct st_tree *t, int k, const char *what, char *why, size_t wn)
{
	struct judgement j;
	judge_tree(b, t, k, &j);
	st.impossible++;
	int ok = broken_rule(&j, "U3") || broken_rule(&j, "U4");
	if (!ok)
		snprintf(why, wn, "P4: %s in S_%d is judged neither U3 nor U4 broken", what, k);
	judgement_free(&j);
	return !ok;
}

static int p4(const struct built *b, struct rng *r, char *why, size_t wn)
{
	const struct sim *s = &b->s;
	int n = (int)b->w.n;
	int k = b->nsetup + pick(r, n - b->nsetup + 1);
	struct st_tree t;
	/* a name no op made */
	st_render_at(s, k, &t);
	ALLOC_GROW(t.v, t.n + 1, t.cap);
	memset(&t.v[t.n], 0, sizeof(t.v[t.n]));
	t.v[t.n].path = xstrdup("zz");
	t.v[t.n].type = 'f';
	t.v[t.n].mode = 0644;
	t.v[t.n].nlink = 1;
	t.v[t.n].ino = 777777;
	t.v[t.n].blocks = xstrdup("");
	t.n++;
	int bad = p4_check(b, &t, k, "a file no op made", why, wn);
	st_free(&t);
	if (bad)
		return 1;
	/* bytes no op wrote */
	st_render_at(s, k, &t);
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].type == 'f' && t.v[i].size > 0) {
			st_set_token(&t.v[i], 0, "h0123456789abcdef");
			free(t.v[i].content);
			t.v[i].content = NULL;
			bad = p4_check(b, &t, k, "a block no op wrote", why, wn);
			break;
		}
	st_free(&t);
	if (bad)
		return 1;
	/* a directory under two names */
	st_render_at(s, k, &t);
	for (size_t i = 0; i < t.n; i++)
		if (t.v[i].type == 'd') {
			char *dir = xstrdup(t.v[i].path);
			size_t dl = strlen(dir), n0 = t.n;
			for (size_t q = 0; q < n0; q++) {
				const char *p = t.v[q].path;
				if (strncmp(p, dir, dl) || (p[dl] && p[dl] != '/'))
					continue;
				ALLOC_GROW(t.v, t.n + 1, t.cap);
				struct tree_node *c = &t.v[t.n++];
				*c = t.v[q];
				c->path = xasprintf("zz%s", t.v[q].path + dl);
				c->xattrs = t.v[q].xattrs ? xstrdup(t.v[q].xattrs) : NULL;
				c->target = t.v[q].target ? xstrdup(t.v[q].target) : NULL;
				c->blocks = t.v[q].blocks ? xstrdup(t.v[q].blocks) : NULL;
				if (t.v[q].content) {
					c->content = xmalloc(t.v[q].content_len + 1);
					memcpy(c->content, t.v[q].content, t.v[q].content_len);
				}
			}
			free(dir);
			bad = p4_check(b, &t, k, "a directory under two names", why, wn);
			break;
		}
	st_free(&t);
	if (bad)
		return 1;
	/* half an exchange */
	for (int q = b->nsetup + 1; q <= n; q++) {
		const struct sim_op *so = &s->ops[q - 1];
		if (so->op->kind != WL_RENAME || so->op->flags != WL_RENAME_EXCHANGE || !so->applied || so->n != 2)
			continue;
		unsigned char take[2] = { 1, 0 };
		struct partial pt = { s, q - 1, take, so->first, 2, -1, 0 };
		for (int h = 0; h < 2 && !bad; h++) {
			take[0] = h == 0;
			take[1] = h == 1;
			st_render(s, partial_value, &pt, &t);
			bad = p4_check(b, &t, q, "half an exchange", why, wn);
			st_free(&t);
		}
		break;
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* Running and minimizing */

typedef int (*prop_fn)(const struct built *b, struct rng *r, char *why, size_t wn);

static uint64_t text_seed(const char *text)
{
	return fnv1a64(text, strlen(text));
}

/* Does the property fail on this case? (-1: the case cannot be simulated) */
static int fails(prop_fn p, const struct wcase *c, char *why, size_t wn)
{
	char *text = wcase_text(c);
	struct built b;
	uint64_t seed = text_seed(text);
	if (build(text, &b, seed)) {
		free(text);
		return -1;
	}
	struct rng r = rng_of(seed);
	int f = p(&b, &r, why, wn);
	built_free(&b);
	free(text);
	return f;
}

static void minimize(prop_fn p, struct wcase *c, char *why, size_t wn)
{
	for (int changed = 1; changed;) {
		changed = 0;
		for (int sec = 0; sec < 2; sec++) {
			struct strvec *v = sec ? &c->run : &c->setup;
			for (size_t i = 0; i < v->n; i++) {
				if (sec == 1 && v->n == 1)
					break;
				char *saved = v->v[i];
				memmove(&v->v[i], &v->v[i + 1], (v->n - i) * sizeof(char *));
				v->n--;
				char w2[2048];
				if (fails(p, c, w2, sizeof(w2)) == 1) {
					free(saved);
					snprintf(why, wn, "%s", w2);
					changed = 1;
					i--;
					continue;
				}
				memmove(&v->v[i + 1], &v->v[i], (v->n - i + 1) * sizeof(char *));
				v->v[i] = saved;
				v->n++;
			}
		}
	}
}

int main(int argc, char **argv)
{
	long count = 10000;
	uint64_t seed = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = strtol(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else {
			fprintf(stderr, "usage: props [--count N] [--seed S] [--verbose]\n");
			return 2;
		}
	}
	nrules = model_rules(&rules);
	static const struct {
		const char *name;
		prop_fn fn;
	} props[] = {
		{ "P1 exact states are never LOST or broken", p1 },
		{ "P2 a later op seen in part breaks no earlier promise", p2 },
		{ "P3 a promised piece taken out is LOST", p3 },
		{ "P4 impossible states are U3 or U4 broken", p4 },
	};
	int failed[4] = { 0 };
	char why[4][2048];
	struct wcase bad[4];
	uint64_t bad_seed[4];
	clock_t t0 = clock();
	uint64_t draw = 0;
	for (long i = 0; i < count; i++) {
		uint64_t ws = seed * 1000003ULL + draw++;
		struct rng r = rng_of(ws);
		struct wcase c;
		gen_case(&r, &c);
		char *text = wcase_text(&c);
		struct built b;
		uint64_t ts = text_seed(text);
		if (build(text, &b, ts)) {
			/* the simulator cannot model it: draw another */
			free(text);
			wcase_free(&c);
			i--;
			continue;
		}
		st.workloads++;
		for (int p = 0; p < 4; p++) {
			if (failed[p])
				continue;
			clock_t a = clock();
			struct rng pr = rng_of(ts);
			if (props[p].fn(&b, &pr, why[p], sizeof(why[p]))) {
				failed[p] = 1;
				bad_seed[p] = ws;
				bad[p] = (struct wcase){ 0 };
				for (size_t q = 0; q < c.setup.n; q++)
					strvec_push(&bad[p].setup, c.setup.v[q]);
				for (size_t q = 0; q < c.run.n; q++)
					strvec_push(&bad[p].run, c.run.v[q]);
			}
			st.t[p] += clock() - a;
		}
		built_free(&b);
		free(text);
		wcase_free(&c);
		if (verbose && (i + 1) % 1000 == 0)
			fprintf(stderr, "props: %ld workloads\n", i + 1);
	}
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	printf("# %zu workloads (seed %" PRIu64 "), %zu exact states judged, %zu partial states, %zu mutants "
	       "(%zu applicable), %zu impossible states, %.1f s\n",
	       st.workloads, seed, st.states, st.variants, st.mutations, st.applicable, st.impossible, secs);
	for (int p = 0; p < 4; p++) {
		if (!failed[p]) {
			printf("ok %d - %s (%.1f s)\n", p + 1, props[p].name, (double)st.t[p] / CLOCKS_PER_SEC);
			continue;
		}
		minimize(props[p].fn, &bad[p], why[p], sizeof(why[p]));
		char *text = wcase_text(&bad[p]);
		printf("not ok %d - %s\n# workload seed %" PRIu64 ": %s\n# minimal workload:\n", p + 1, props[p].name,
		       bad_seed[p], why[p]);
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			printf("#   %s\n", line);
		free(text);
		wcase_free(&bad[p]);
	}
	/* P3's kill rate per rule */
	int all = 1;
	printf("# kill rate per rule (P3): rule, mutants that applied, killed\n");
	for (size_t i = 0; i < nrules; i++) {
		if (!strncmp(rules[i].id, "U", 1))
			continue;
		size_t tr = st.rule_tried[i], ki = st.rule_killed[i];
		printf("#   %-22s %7zu %7zu  %s\n", rules[i].id, tr, ki,
		       tr ? (ki == tr ? "100 %" : "below 100 %") : "no mutant applied");
		if (!tr || ki != tr)
			all = 0;
	}
	printf("%s 5 - every rule of the table kills every mutant that applies to it\n", all ? "ok" : "not ok");
	printf("1..5\n");
	return failed[0] || failed[1] || failed[2] || failed[3] || !all;
}

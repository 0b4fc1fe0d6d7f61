/*
 * models.c - every guarantee model and universal rule, as one table, and
 * the judge that applies them to an explained crash state.
 *
 * Method. A model is the set of rows of rule_table[] whose bit it has; a
 * row says which completed op triggers it (fsync of a file, fdatasync,
 * fsync of a directory, a barrier call, or "every state" for the ordering
 * models) and what it then promises, as a set of simulator changes
 * (sim.h): the data (blocks and size) of the file as of S_p, its metadata
 * (mode, xattrs), its own name, all its names, a directory's names, every
 * earlier op the file depends on (SOMC), or a whole prefix of the program
 * (sequential). Each promised change is then looked up in the explanation
 * (explain.h): shown or overwritten by a later shown change (superseded)
 * is kept, an earlier value shown is LOST, a change the state cannot show
 * (its file has no visible name) is left to the rule about that name. The
 * changes of completed ops that no rule of the model promised give bonus
 * (present) or gone (missing): what the file system did beyond, or within,
 * its documented promise. Verdicts are grouped per (rule, promising op,
 * judged op, aspect, object), so one sentence covers "the 16 blocks op 2
 * wrote to f".
 *
 * Dependencies (SOMC): two ops depend on each other when they touch a
 * common inode or the entries of the same directory; an op's dependencies
 * are closed transitively over earlier ops by walking back from it with a
 * growing set of touched objects. Only metadata changes are ordered by
 * SOMC; file data written without a sync is never promised by it.
 *
 * Barriers (KERNEL-API.md): a succeeded fdatabarrier/fbarrier/fiemap_sync
 * on f covers f's earlier data (and for fbarrier its metadata); a later op
 * that moves or adds a name for f's inode, or changes its mode, xattrs or
 * size, is a witness; if a witness is shown (G1), or a later completed
 * fsync of the file or of the witness's directory, or a sync, made it
 * durable (G2), the covered changes are required. A failed call promises
 * nothing (G3): on a kernel without the series the rules have nothing to
 * judge.
 *
 * Universal rules (U1..U5) are judged once per state, under the model name
 * "universal", and count as broken for every model.
 */
#include "judge/models.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/util.h"

/* snprintf for sentences: a long path makes the sentence shorter, never wrong. */
static void say(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static const char *const model_names[MODEL_COUNT + 1] = {
	"sequential", "posix", "ext4", "xfs", "btrfs", "f2fs-posix", "f2fs-strict", "somc", "barrier",
	"fiemap_sync", "universal",
};

const char *model_name(int model)
{
	return model >= 0 && model <= MODEL_COUNT ? model_names[model] : NULL;
}

int model_parse(const char *name)
{
	for (int i = 0; i < MODEL_COUNT; i++)
		if (!strcasecmp(name, model_names[i]))
			return i;
	if (!strcasecmp(name, "f2fs"))
		return MODEL_F2FS_POSIX;
	if (!strcasecmp(name, "fiemap-sync"))
		return MODEL_FIEMAP_SYNC;
	return -1;
}

static const char *const verdict_names[V_COUNT] = { "kept", "LOST", "bonus", "gone", "broken" };

const char *verdict_name(enum verdict_kind k)
{
	return k < V_COUNT ? verdict_names[k] : "?";
}

int verdict_parse(const char *name)
{
	for (int i = 0; i < V_COUNT; i++)
		if (!strcmp(name, verdict_names[i]))
			return i;
	return -1;
}

int model_of_fs(const char *fs)
{
	const struct fs_type *t = fs_lookup(fs);
	return t ? model_parse(t->model) : -1;
}

int models_select(const char *list, const char *fs, const struct wl_workload *w, unsigned *set, struct errbuf *e)
{
	*set = 0;
	if (!list || !*list) {
		*set |= 1u << MODEL_POSIX;
		int own = fs ? model_of_fs(fs) : -1;
		if (own >= 0)
			*set |= 1u << own;
		for (size_t i = 0; w && i < w->n; i++) {
			const struct wl_op *op = &w->ops[i];
			if (op->kind == WL_FBARRIER || op->kind == WL_FDATABARRIER ||
			    (op->kind == WL_RENAME && op->flags == WL_RENAME_BARRIER))
				*set |= 1u << MODEL_BARRIER;
			if (op->kind == WL_FIEMAP_SYNC)
				*set |= 1u << MODEL_FIEMAP_SYNC;
		}
		return 0;
	}
	char *copy = xstrdup(list), *save = NULL;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (*t == ' ')
			t++;
		if (!strcmp(t, "all")) {
			*set |= (1u << MODEL_COUNT) - 1;
			continue;
		}
		if (!strcmp(t, "default")) {
			unsigned d;
			models_select(NULL, fs, w, &d, e);
			*set |= d;
			continue;
		}
		int m = model_parse(t);
		if (m < 0) {
			const char *names[MODEL_COUNT + 3];
			for (int k = 0; k < MODEL_COUNT; k++)
				names[k] = model_names[k];
			names[MODEL_COUNT] = "all";
			names[MODEL_COUNT + 1] = "default";
			names[MODEL_COUNT + 2] = NULL;
			const char *near = nearest_word(t, names);
			char hint[64] = "";
			if (near)
				say(hint, sizeof(hint), "; did you mean '%s'?", near);
			errbuf_set(e, EXIT_USAGE, "unknown model '%s'%s (choose from sequential, posix, ext4, xfs, btrfs, "
				   "f2fs-posix, f2fs-strict, somc, barrier, fiemap_sync, all)", t, hint);
			free(copy);
			return -1;
		}
		*set |= 1u << m;
	}
	free(copy);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The rules */

enum trigger {
	T_FSYNC_FILE,      /* a completed fsync of a regular file */
	T_FDATASYNC_FILE,  /* a completed fdatasync of a regular file */
	T_FSYNC_DIR,       /* a completed fsync or fdatasync of a directory */
	T_EVERY_STATE,     /* ordering rules: judged in every state */
	T_FDATABARRIER,    /* a succeeded fdatabarrier */
	T_FBARRIER,        /* a succeeded fbarrier */
	T_RENAME_BARRIER,  /* a succeeded rename ... barrier */
	T_FIEMAP_SYNC,     /* a succeeded fiemap_sync */
};

enum {
	C_DATA = 1 << 0,        /* the file's blocks and size as of S_p */
	C_META = 1 << 1,        /* the file's mode and xattrs as of S_p */
	C_OWN_NAME = 1 << 2,    /* the name the op used, naming the file (as of S_p) */
	C_ALL_NAMES = 1 << 3,   /* every name of the file as of S_p */
	C_DEPS = 1 << 4,        /* every earlier op the object depends on (metadata) */
	C_DIR_NAMES = 1 << 5,   /* a directory's names present in S_p */
	C_DIR_REMOVALS = 1 << 6,/* a directory's names absent in S_p (renamed or unlinked away) */
	C_ORDER = 1 << 7,       /* SOMC ordering: a visible op's dependencies */
	C_PREFIX = 1 << 8,      /* sequential: every op up to the last visible one or completed fsync/sync */
	C_BAR_DATA = 1 << 9,    /* barrier: earlier data, if a witness is visible or durable */
	C_BAR_META = 1 << 10,   /* barrier: earlier metadata too */
};

#define M(x) (1u << MODEL_##x)
#define DURABILITY (M(POSIX) | M(EXT4) | M(XFS) | M(BTRFS) | M(F2FS_POSIX) | M(F2FS_STRICT) | M(SOMC))
#define SOMC_LIKE (M(XFS) | M(F2FS_STRICT) | M(SOMC))

struct rule {
	const char *id;
	unsigned models;          /* bit set of enum model */
	enum trigger trigger;
	unsigned covers;          /* C_* */
	const char *promise;      /* what it promises, completing "so <model> promises ..." */
	const char *cite;         /* where the promise is written down */
};

static const struct rule rule_table[] = {
	{ "fsync.file", DURABILITY, T_FSYNC_FILE, C_DATA | C_META, "the file's data and metadata as of the fsync",
	  "GUARANTEES.md table, fsync f, POSIX: f's data and inode metadata as of S_p persist" },
	{ "fdatasync.file", DURABILITY, T_FDATASYNC_FILE, C_DATA, "the file's data and size as of the fdatasync",
	  "GUARANTEES.md table, fdatasync f: f's data and the metadata needed to read it (size, allocation)" },
	{ "ext4.fsync-name", M(EXT4), T_FSYNC_FILE, C_OWN_NAME, "the fsynced file's own new name",
	  "GUARANTEES.md table, fsync f, ext4: a newly created f's own directory entry persists" },
	{ "btrfs.fsync-names", M(BTRFS), T_FSYNC_FILE, C_ALL_NAMES, "every name of the fsynced file",
	  "GUARANTEES.md table, fsync f, btrfs: its entry and the entries of all its hard links" },
	{ "somc.fsync-deps", SOMC_LIKE, T_FSYNC_FILE, C_OWN_NAME | C_DEPS,
	  "the fsynced file's name and every earlier op it depends on",
	  "GUARANTEES.md table, fsync f, xfs / f2fs strict / SOMC: its entry + every earlier op f depends on" },
	{ "fsync.dir", DURABILITY, T_FSYNC_DIR, C_DIR_NAMES, "the directory's names as of the fsync",
	  "GUARANTEES.md table, fsync d: d's entries as of S_p persist (names -> inodes exist)" },
	{ "btrfs.fsync-dir", M(BTRFS), T_FSYNC_DIR, C_DIR_REMOVALS, "the renames and unlinks inside the directory",
	  "GUARANTEES.md table, fsync d, btrfs: all names in d persist, and renames/unlinks inside d" },
	{ "somc.fsync-dir-deps", SOMC_LIKE, T_FSYNC_DIR, C_DEPS, "every earlier metadata op the directory depends on",
	  "GUARANTEES.md table, fsync d, xfs: as ext4 + earlier dependent metadata ops" },
	{ "somc.order", SOMC_LIKE, T_EVERY_STATE, C_ORDER, "every earlier op a visible op depends on",
	  "GUARANTEES.md SOMC: if op1 precedes op2 and they share a dependency, op2 is not visible without op1" },
	{ "sequential.prefix", M(SEQUENTIAL), T_EVERY_STATE, C_PREFIX,
	  "every op up to the last visible one or the last completed fsync/sync, whole",
	  "GUARANTEES.md sequential: every crash state equals some S_k for k >= the last completed op" },
	{ "barrier.fdatabarrier", M(BARRIER), T_FDATABARRIER, C_BAR_DATA,
	  "the file's earlier data, once a later witness (rename, link, metadata change) is visible or durable",
	  "KERNEL-API.md G1/G2: a visible or durable witness after fdatabarrier f implies f's data written before it" },
	{ "barrier.fbarrier", M(BARRIER), T_FBARRIER, C_BAR_DATA | C_BAR_META,
	  "the file's earlier data and metadata, once a later witness is visible or durable",
	  "KERNEL-API.md G1/G2: as fdatabarrier, plus the inode metadata fsync covers" },
	{ "barrier.rename", M(BARRIER), T_RENAME_BARRIER, C_BAR_DATA | C_BAR_META,
	  "the moved file's earlier data and metadata, whenever the rename is visible",
	  "KERNEL-API.md / GUARANTEES.md: rename ... barrier behaves as fbarrier on the moved inode, then the rename" },
	{ "fiemap_sync.order", M(FIEMAP_SYNC), T_FIEMAP_SYNC, C_BAR_DATA,
	  "the file's earlier data, once a later witness is visible or durable",
	  "GUARANTEES.md barrier rules: fiemap_sync (FIEMAP_FLAG_SYNC) is modelled with the fdatabarrier rule" },
};
#define NRULES (sizeof(rule_table) / sizeof(rule_table[0]))

/* The universal rules, judged once per state. */
enum { U1, U2, U3, U4, U5, NU };
static const struct rule universal[NU] = {
	{ "U1", 0, T_EVERY_STATE, 0, "the file system mounts after the crash", "GUARANTEES.md U1: the fs mounts after the crash" },
	{ "U2", 0, T_EVERY_STATE, 0, "fsck reports no corruption", "GUARANTEES.md U2: its fsck reports no corruption" },
	{ "U3", 0, T_EVERY_STATE, 0, "the state is explainable by some set of ops", "GUARANTEES.md U3: O is explainable" },
	{ "U4", 0, T_EVERY_STATE, 0, "a rename replaces atomically",
	  "GUARANTEES.md U4: after rename a b (b existed) b is never missing; the inode is never under both names" },
	{ "U5", 0, T_EVERY_STATE, 0, "every op before a completed sync persists",
	  "GUARANTEES.md U5: every op completed before sync/syncfs returned (and the sync) is in P" },
};

size_t model_rules(const struct rule_info **out)
{
	static struct rule_info info[NRULES + NU];
	for (size_t i = 0; i < NRULES; i++)
		info[i] = (struct rule_info){ rule_table[i].id, rule_table[i].models, rule_table[i].cite };
	for (size_t i = 0; i < NU; i++)
		info[NRULES + i] = (struct rule_info){ universal[i].id, (1u << MODEL_COUNT) - 1, universal[i].cite };
	*out = info;
	return NRULES + NU;
}

/* ------------------------------------------------------------------ */
/* Judging */

/* One group of changes judged together. */
struct group {
	int model;
	const struct rule *rule;   /* NULL: not promised by any rule of the model */
	int trigger, op;
	char aspect;               /* 'n' name, 'd' data, 'm' metadata */
	struct sim_field obj;      /* entry field, or the inode (kind SF_MODE, key 0) */
	int promised;
	size_t n_ok, n_missing;
	size_t first_missing, first; /* change indices */
};

struct judge {
	const struct sim *s;
	const struct op_result *res;
	const struct check_report *st;
	struct explain ex;
	int64_t point;
	int last_completed;
	int last_persisted;     /* last completed persistence op (fsync, sync...) that succeeded */
	struct group *g;
	size_t ng, gcap;
	unsigned char *covered;    /* per change, for the current model */
	struct judgement *out;
};

static int completed(const struct judge *j, int op)
{
	return j->res[op - 1].log_pos <= j->point;
}

static char aspect_of(const struct sim_change *c)
{
	if (c->f.kind == SF_ENTRY)
		return 'n';
	return c->data || c->f.kind == SF_BLOCK || c->f.kind == SF_SIZE ? 'd' : 'm';
}

static struct sim_field obj_of(const struct sim_change *c)
{
	if (c->f.kind == SF_ENTRY)
		return c->f;
	return (struct sim_field){ SF_MODE, c->f.ino, 0 };
}

/* Was the field of change c absent at some point before c? */
static int absent_before(const struct sim *s, size_t c)
{
	const struct sim_hist *h = sim_history(s, &s->ch[c].f);
	for (size_t i = 0; h && i < h->n && h->idx[i] <= c; i++)
		if (s->ch[h->idx[i]].old == SIM_ABSENT)
			return 1;
	return 0;
}

static void add(struct judge *j, int model, const struct rule *r, int trigger, size_t c, int promised)
{
	const struct sim_change *ch = &j->s->ch[c];
	enum ex_status st = j->ex.st[c];
	if (promised)
		j->covered[c] = 1;
	if (st == EX_UNOBSERVED || (!promised && st == EX_SUPERSEDED))
		return;
	if (!promised && ch->f.kind == SF_ENTRY && ch->val == SIM_ABSENT && absent_before(j->s, c))
		return; /* "absent" is also what the name was before: nothing to credit */
	char aspect = aspect_of(ch);
	struct sim_field obj = obj_of(ch);
	struct group *g = NULL;
	for (size_t i = j->ng; i-- > 0;) {
		struct group *x = &j->g[i];
		if (x->model == model && x->rule == r && x->op == ch->op && x->aspect == aspect &&
		    x->obj.kind == obj.kind && x->obj.ino == obj.ino && x->obj.key == obj.key &&
		    (r == NULL || r->trigger == T_EVERY_STATE || x->trigger == trigger)) {
			g = x;
			break;
		}
	}
	if (!g) {
		if (j->ng == j->gcap) {
			j->gcap = j->gcap ? 2 * j->gcap : 32;
			j->g = xrealloc(j->g, j->gcap * sizeof(*j->g));
		}
		g = &j->g[j->ng++];
		*g = (struct group){ .model = model, .rule = r, .trigger = trigger, .op = ch->op, .aspect = aspect,
				     .obj = obj, .promised = promised, .first = c };
	}
	if (st == EX_MISSING) {
		if (!g->n_missing)
			g->first_missing = c;
		g->n_missing++;
	} else {
		g->n_ok++;
	}
}

/* The last change of field f made by an op <= k, or -1. */
static long last_change_upto(const struct sim *s, const struct sim_field *f, int k)
{
	const struct sim_hist *h = sim_history(s, f);
	long r = -1;
	for (size_t i = 0; h && i < h->n && s->ch[h->idx[i]].op <= k; i++)
		r = (long)h->idx[i];
	return r;
}

/* Promise every field of inode ino of the given kinds as of S_p. */
static void promise_inode(struct judge *j, int model, const struct rule *r, int p, int ino, int data, int meta)
{
	const struct sim *s = j->s;
	/* the fields of ino that any run op changed: walk the changes once */
	for (size_t c = 0; c < s->nch && s->ch[c].op <= p; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->f.kind == SF_ENTRY || ch->f.ino != ino)
			continue;
		int is_data = ch->f.kind == SF_BLOCK || ch->f.kind == SF_SIZE;
		if ((is_data && !data) || (!is_data && !meta))
			continue;
		if (last_change_upto(s, &ch->f, p) == (long)c)
			add(j, model, r, p, c, 1);
	}
}

static void promise_entry(struct judge *j, int model, const struct rule *r, int p, int dir, int64_t name,
			  int want_present, int want_absent)
{
	struct sim_field f = { SF_ENTRY, dir, name };
	long c = last_change_upto(j->s, &f, p);
	if (c < 0)
		return;
	int64_t v = j->s->ch[c].val;
	if ((v == SIM_ABSENT && want_absent) || (v != SIM_ABSENT && want_present))
		add(j, model, r, p, (size_t)c, 1);
}

/* Objects an op touches: inodes changed, directories whose entries changed, their children. */
static void op_objects(const struct sim *s, int op, int *objs, size_t *n, size_t cap)
{
	const struct sim_op *so = &s->ops[op - 1];
	*n = 0;
#define PUSH(x)                                                                   \
	do {                                                                      \
		int v_ = (x);                                                     \
		int dup_ = v_ < 0;                                                \
		for (size_t q_ = 0; q_ < *n && !dup_; q_++)                        \
			dup_ = objs[q_] == v_;                                    \
		if (!dup_ && *n < cap)                                            \
			objs[(*n)++] = v_;                                        \
	} while (0)
	for (size_t c = so->first; c < so->first + so->n; c++) {
		const struct sim_change *ch = &s->ch[c];
		PUSH(ch->f.ino);
		if (ch->f.kind == SF_ENTRY) {
			PUSH((int)ch->old);
			PUSH((int)ch->val);
		}
	}
	if (so->obj >= 0)
		PUSH(so->obj);
#undef PUSH
}

/* Mark deps[q] = 1 for every op q < from that op `from` (or the object set
 * seeded with seed) depends on, transitively over earlier ops. */
static void dependencies(const struct judge *j, int from, const int *seed, size_t nseed, unsigned char *deps)
{
	const struct sim *s = j->s;
	unsigned char *in = xcalloc(s->nin + 1, 1);
	int objs[256];
	size_t no;
	for (size_t i = 0; i < nseed; i++)
		if (seed[i] >= 0)
			in[seed[i]] = 1;
	if (!seed) {
		op_objects(s, from, objs, &no, 256);
		for (size_t i = 0; i < no; i++)
			in[objs[i]] = 1;
	}
	for (int q = from - 1; q >= 1; q--) {
		if (!sim_is_run(s, q) || !s->ops[q - 1].applied || !s->ops[q - 1].n)
			continue;
		op_objects(s, q, objs, &no, 256);
		int hit = 0;
		for (size_t i = 0; i < no && !hit; i++)
			hit = in[objs[i]];
		if (!hit)
			continue;
		deps[q] = 1;
		for (size_t i = 0; i < no; i++)
			in[objs[i]] = 1;
	}
	free(in);
}

static void promise_op_meta(struct judge *j, int model, const struct rule *r, int trigger, int q, int all)
{
	const struct sim_op *so = &j->s->ops[q - 1];
	for (size_t c = so->first; c < so->first + so->n; c++)
		if (all || aspect_of(&j->s->ch[c]) != 'd')
			add(j, model, r, trigger, c, 1);
}

/* Is change c shown exactly (its own value)? */
static int shown(const struct judge *j, size_t c)
{
	return j->ex.st[c] == EX_IN;
}

/* Is change c evidence that its op is visible? A name's removal shows only
 * if the name itself was there to remove: set before the run, or by a
 * change the state shows. (A rename of a file created in the run, none of
 * which persisted, leaves the source name absent, but that shows nothing.) */
static int evident(const struct judge *j, size_t c)
{
	const struct sim *s = j->s;
	if (!shown(j, c))
		return 0;
	if (s->ch[c].f.kind != SF_ENTRY || s->ch[c].val != SIM_ABSENT)
		return 1;
	const struct sim_hist *h = sim_history(s, &s->ch[c].f);
	size_t prev = (size_t)-1;
	for (size_t i = 0; h && i < h->n && h->idx[i] < c; i++)
		prev = h->idx[i];
	if (prev == (size_t)-1)
		return s->ch[c].old != SIM_ABSENT; /* the name was there before the run */
	return shown(j, prev) && s->ch[prev].val != SIM_ABSENT;
}

static void barrier_rule(struct judge *j, int model, const struct rule *r, int b, int ino, int meta, int self_witness)
{
	const struct sim *s = j->s;
	if (ino < 0 || s->in[ino].type != 'f')
		return;
	/* witnesses after b (or b itself for rename ... barrier) */
	int visible = 0, durable = 0;
	for (size_t c = 0; c < s->nch; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->op < b + (self_witness ? 0 : 1))
			continue;
		int witness = (ch->f.kind == SF_ENTRY && ch->val == ino) ||
			      (ch->f.kind != SF_ENTRY && ch->f.kind != SF_BLOCK && ch->f.ino == ino);
		if (!witness)
			continue;
		if (shown(j, c))
			visible = 1;
		/* G2: a later completed fsync of the file or of the witness's directory, or a sync */
		for (int d = ch->op + 1; d <= (int)s->w->n && !durable; d++) {
			const struct sim_op *so = &s->ops[d - 1];
			if (!sim_is_run(s, d) || !completed(j, d) || so->guest_err)
				continue;
			enum wl_kind k = so->op->kind;
			if (k == WL_SYNC || k == WL_SYNCFS)
				durable = 1;
			else if ((k == WL_FSYNC || k == WL_FDATASYNC) &&
				 (so->obj == ino || (ch->f.kind == SF_ENTRY && so->obj == ch->f.ino)))
				durable = 1;
		}
	}
	int required = visible || durable;
	for (size_t c = 0; c < s->nch && s->ch[c].op < b; c++) {
		const struct sim_change *ch = &s->ch[c];
		if (ch->f.kind == SF_ENTRY || ch->f.ino != ino)
			continue;
		int is_data = ch->f.kind == SF_BLOCK || ch->f.kind == SF_SIZE;
		if (!is_data && !meta)
			continue;
		/* not required: still this rule's verdict (bonus or gone), so the sentence can say why */
		add(j, model, r, b, c, required);
	}
}

static void judge_model(struct judge *j, int model)
{
	const struct sim *s = j->s;
	memset(j->covered, 0, s->nch ? s->nch : 1);
	for (size_t ri = 0; ri < NRULES; ri++) {
		const struct rule *r = &rule_table[ri];
		if (!(r->models & (1u << model)))
			continue;
		if (r->trigger == T_EVERY_STATE) {
			if (r->covers & C_PREFIX) {
				/* K: the last op shown, or the last completed op that
				 * asked for durability: a prefix of the program must
				 * reach at least that far. (Taking K from every completed
				 * op would call unsynced data that a crash dropped LOST,
				 * which GUARANTEES.md's known answers rule out.) */
				int K = j->last_persisted;
				for (size_t c = 0; c < s->nch; c++)
					if (evident(j, c) && s->ch[c].op > K)
						K = s->ch[c].op;
				for (size_t c = 0; c < s->nch && s->ch[c].op <= K; c++)
					add(j, model, r, K, c, 1);
			}
			if (r->covers & C_ORDER) {
				unsigned char *deps = xcalloc(s->w->n + 2, 1);
				int *req_by = xcalloc(s->w->n + 2, sizeof(int));
				for (int q2 = (int)s->w->n; q2 >= 1; q2--) {
					const struct sim_op *so = &s->ops[q2 - 1];
					if (!sim_is_run(s, q2) || !so->applied)
						continue;
					int vis = 0;
					for (size_t c = so->first; c < so->first + so->n && !vis; c++)
						vis = evident(j, c) && aspect_of(&s->ch[c]) != 'd';
					if (!vis)
						continue;
					memset(deps, 0, s->w->n + 2);
					dependencies(j, q2, NULL, 0, deps);
					for (int q1 = 1; q1 < q2; q1++)
						if (deps[q1] && !req_by[q1])
							req_by[q1] = q2;
				}
				for (int q1 = 1; q1 <= (int)s->w->n; q1++)
					if (req_by[q1])
						promise_op_meta(j, model, r, req_by[q1], q1, 0);
				free(deps);
				free(req_by);
			}
			continue;
		}
		for (int p = 1; p <= (int)s->w->n; p++) {
			const struct sim_op *so = &s->ops[p - 1];
			if (!sim_is_run(s, p) || !so->applied)
				continue;
			enum wl_kind k = so->op->kind;
			int ino = so->obj;
			char type = ino >= 0 ? s->in[ino].type : 0;
			int dur = completed(j, p);
			switch (r->trigger) {
			case T_FSYNC_FILE:
				if (k != WL_FSYNC || type != 'f' || !dur)
					continue;
				break;
			case T_FDATASYNC_FILE:
				if (k != WL_FDATASYNC || type != 'f' || !dur)
					continue;
				break;
			case T_FSYNC_DIR:
				if ((k != WL_FSYNC && k != WL_FDATASYNC) || type != 'd' || !dur)
					continue;
				break;
			case T_FDATABARRIER:
				if (k != WL_FDATABARRIER)
					continue;
				barrier_rule(j, model, r, p, ino, 0, 0);
				continue;
			case T_FBARRIER:
				if (k != WL_FBARRIER)
					continue;
				barrier_rule(j, model, r, p, ino, 1, 0);
				continue;
			case T_FIEMAP_SYNC:
				if (k != WL_FIEMAP_SYNC)
					continue;
				barrier_rule(j, model, r, p, ino, 0, 0);
				continue;
			case T_RENAME_BARRIER:
				if (k != WL_RENAME || so->op->flags != WL_RENAME_BARRIER)
					continue;
				barrier_rule(j, model, r, p, so->obj2, 1, 1);
				continue;
			case T_EVERY_STATE:
				continue;
			}
			if (r->covers & (C_DATA | C_META))
				promise_inode(j, model, r, p, ino, !!(r->covers & C_DATA), !!(r->covers & C_META));
			if ((r->covers & C_OWN_NAME) && so->obj_dir >= 0) {
				struct sim_field f = { SF_ENTRY, so->obj_dir, so->obj_name };
				if (sim_value_at(s, &f, p) == ino)
					promise_entry(j, model, r, p, so->obj_dir, so->obj_name, 1, 0);
			}
			if (r->covers & C_ALL_NAMES) {
				for (size_t d = 0; d < s->nin; d++)
					for (size_t i = 0; s->in[d].type == 'd' && i < s->in[d].nall; i++) {
						struct sim_field f = { SF_ENTRY, (int)d, s->in[d].allnames[i] };
						if (sim_value_at(s, &f, p) == ino)
							promise_entry(j, model, r, p, (int)d, f.key, 1, 0);
					}
			}
			if (r->covers & (C_DIR_NAMES | C_DIR_REMOVALS)) {
				const struct sim_inode *d = &s->in[ino];
				for (size_t i = 0; i < d->nall; i++)
					promise_entry(j, model, r, p, ino, d->allnames[i], !!(r->covers & C_DIR_NAMES),
						      !!(r->covers & C_DIR_REMOVALS));
			}
			if (r->covers & C_DEPS) {
				unsigned char *deps = xcalloc(s->w->n + 2, 1);
				int seed[2] = { ino, -1 };
				dependencies(j, p, seed, 2, deps);
				for (int q = 1; q < p; q++)
					if (deps[q])
						promise_op_meta(j, model, r, p, q, 0);
				free(deps);
			}
		}
	}
	/* what no rule of the model promised, among the completed ops (the
	 * barrier models judge only what their calls cover) */
	if (model == MODEL_BARRIER || model == MODEL_FIEMAP_SYNC)
		return;
	for (size_t c = 0; c < s->nch; c++)
		if (!j->covered[c] && completed(j, s->ch[c].op))
			add(j, model, NULL, 0, c, 0);
}

/* ------------------------------------------------------------------ */
/* Sentences */

static void op_text(const struct sim *s, int op, char *buf, size_t n)
{
	char t[300];
	wl_format(s->ops[op - 1].op, t, sizeof(t));
	say(buf, n, "op %d `%s`", op, t);
}

static struct verdict *new_verdict(struct judge *j)
{
	struct judgement *o = j->out;
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	struct verdict *v = &o->v[o->n++];
	memset(v, 0, sizeof(*v));
	return v;
}

static const char *aspect_word(char a)
{
	return a == 'n' ? "name" : a == 'd' ? "data" : "metadata";
}

static void emit_group(struct judge *j, const struct group *g)
{
	const struct sim *s = j->s;
	struct verdict *v = new_verdict(j);
	v->model = g->model;
	v->op = g->op;
	v->trigger = g->trigger;
	const char *mname = model_name(g->model);
	say(v->rule, sizeof(v->rule), "%s", g->rule ? g->rule->id : "unpromised");
	say(v->cite, sizeof(v->cite), "%s", g->rule ? g->rule->cite : "no rule of the model covers it");
	size_t c = g->n_missing ? g->first_missing : g->first;
	const struct sim_change *ch = &s->ch[c];
	int k = g->trigger ? g->trigger : ch->op;
	explain_field_path(s, g->aspect == 'n' ? &ch->f : &g->obj, k, v->path, sizeof(v->path));
	char fpath[256];
	explain_field_path(s, &ch->f, k, fpath, sizeof(fpath));
	if (g->aspect == 'n')
		explain_value_desc(s, &ch->f, ch->val, v->expected, sizeof(v->expected));
	else {
		char val[160];
		explain_value_desc(s, &ch->f, ch->val, val, sizeof(val));
		if (ch->f.kind == SF_BLOCK || ch->f.kind == SF_XATTR)
			say(v->expected, sizeof(v->expected), "%s%s", strchr(fpath, ' ') ? strchr(fpath, ' ') + 1 : "", "");
		say(v->expected, sizeof(v->expected), "%s%s%s",
			 ch->f.kind == SF_BLOCK || ch->f.kind == SF_XATTR ? strchr(fpath, ' ') + 1 : "",
			 ch->f.kind == SF_BLOCK || ch->f.kind == SF_XATTR ? ": " : "", val);
	}
	explain_observed_desc(&j->ex, &ch->f, v->observed, sizeof(v->observed));
	if ((ch->f.kind == SF_BLOCK || ch->f.kind == SF_XATTR) && strchr(fpath, ' ')) {
		char tmp[192];
		say(tmp, sizeof(tmp), "%s: %s", strchr(fpath, ' ') + 1, v->observed);
		say(v->observed, sizeof(v->observed), "%s", tmp);
	}
	char optx[320], trig[320], where[320];
	op_text(s, g->op, optx, sizeof(optx));
	if (g->aspect == 'n')
		say(where, sizeof(where), "at '%s'", v->path);
	else
		say(where, sizeof(where), "in the %s of '%s'", aspect_word(g->aspect), v->path);
	size_t total = g->n_ok + g->n_missing;
	char pieces[96] = "";
	if (total > 1)
		say(pieces, sizeof(pieces), " (%zu of its %zu pieces there)", g->n_ok, total);
	if (g->promised) {
		v->kind = g->n_missing ? V_LOST : V_KEPT;
		if (g->rule->trigger == T_EVERY_STATE && g->rule->covers & C_PREFIX)
			say(trig, sizeof(trig), "the state shows or completed every op up to op %d", g->trigger);
		else if (g->rule->trigger == T_EVERY_STATE)
			say(trig, sizeof(trig), "the state shows op %d, which depends on it", g->trigger);
		else if (g->trigger == g->op)
			say(trig, sizeof(trig), "%s is visible", optx);
		else {
			char t[320];
			op_text(s, g->trigger, t, sizeof(t));
			say(trig, sizeof(trig), "%s %s", t,
			    g->rule->covers & C_BAR_DATA ? "succeeded and a later witness is visible or durable" : "completed");
		}
		if (g->n_missing)
			say(v->reason, sizeof(v->reason),
			    "LOST: %s, so %s promises %s (%s), but %s is missing %s%s: expected %s, found %s", trig, mname,
			    g->rule->promise, g->rule->id, optx, where, pieces, v->expected, v->observed);
		else
			say(v->reason, sizeof(v->reason), "kept: %s, so %s promises %s (%s), and %s is there %s (%s)", trig,
			    mname, g->rule->promise, g->rule->id, optx, where, v->observed);
	} else {
		v->kind = g->n_missing ? V_GONE : V_BONUS;
		char why[160];
		if (g->rule)
			say(why, sizeof(why), "no later witness of the barrier is visible or durable, so %s (%s) does not yet promise",
			    mname, g->rule->id);
		else
			say(why, sizeof(why), "no %s rule promises", mname);
		if (g->n_missing)
			say(v->reason, sizeof(v->reason), "gone: %s %s %s, and it is missing%s: expected %s, found %s", why,
			    optx, where, pieces, v->expected, v->observed);
		else
			say(v->reason, sizeof(v->reason), "bonus: %s %s %s, yet it persisted (%s)", why, optx, where,
			    v->observed);
	}
}

static struct verdict *universal_verdict(struct judge *j, int u, int broken)
{
	struct verdict *v = new_verdict(j);
	v->model = MODEL_UNIVERSAL;
	say(v->rule, sizeof(v->rule), "%s", universal[u].id);
	say(v->cite, sizeof(v->cite), "%s", universal[u].cite);
	v->kind = broken ? V_BROKEN : V_KEPT;
	return v;
}

/* Which inode the state shows at entry (dir, name): sim inode, SIM_ABSENT, or -2 unseen. */
static int shown_entry(const struct judge *j, int dir, int64_t name)
{
	const struct explain *e = &j->ex;
	if (dir != SIM_ROOT && e->node_of[dir] < 0)
		return -2;
	size_t l;
	const char *nm = sim_str(j->s, name, &l);
	const char *dp = dir == SIM_ROOT ? "" : e->nodes[e->node_of[dir]].path;
	char *path = *dp ? xasprintf("%s/%.*s", dp, (int)l, nm) : xasprintf("%.*s", (int)l, nm);
	int r = SIM_ABSENT;
	for (size_t i = 0; i < e->n; i++)
		if (!strcmp(e->nodes[i].path, path)) {
			r = e->sim_of[i] >= 0 ? e->sim_of[i] : -3;
			break;
		}
	free(path);
	return r;
}

static void judge_universal(struct judge *j)
{
	const struct sim *s = j->s;
	const struct check_report *st = j->st;
	/* U2 */
	if (st->fsck_status >= 0) {
		struct verdict *v = universal_verdict(j, U2, !st->fsck_clean);
		say(v->expected, sizeof(v->expected), "fsck clean");
		say(v->observed, sizeof(v->observed), st->fsck_clean ? "clean" : "exit status %d", st->fsck_status);
		say(v->reason, sizeof(v->reason), st->fsck_clean ? "kept: fsck found nothing to fix (U2)"
								       : "broken: the file system's fsck reports corruption (U2): exit status %d",
			 st->fsck_status);
	}
	/* U3 */
	{
		struct verdict *v = universal_verdict(j, U3, !j->ex.explained);
		say(v->expected, sizeof(v->expected), "S0 plus some set of op pieces");
		if (j->ex.explained) {
			say(v->observed, sizeof(v->observed), "explained%s", j->ex.ntorn ? " (with torn blocks)" : "");
			say(v->reason, sizeof(v->reason),
				 "kept: the state is S0 plus the pieces of the ops marked persisted, confirmed by re-simulation (U3)%s",
				 j->ex.ntorn ? "; some blocks are torn between two versions" : "");
		} else {
			say(v->observed, sizeof(v->observed), "unexplainable");
			say(v->reason, sizeof(v->reason), "broken: no set of ops explains the state (U3): %.900s", j->ex.diff);
			/* the path of the first difference */
			const char *q = strchr(j->ex.diff, '\'');
			if (q) {
				const char *e = strchr(q + 1, '\'');
				if (e)
					say(v->path, sizeof(v->path), "%.*s", (int)(e - q - 1), q + 1);
			}
		}
	}
	/* U4: every succeeded rename (not exchange) */
	for (int r = 1; r <= (int)s->w->n; r++) {
		const struct sim_op *so = &s->ops[r - 1];
		if (!sim_is_run(s, r) || !so->applied || so->op->kind != WL_RENAME || so->op->flags == WL_RENAME_EXCHANGE ||
		    so->n < 2)
			continue;
		size_t csrc = so->first, cdst = so->first + 1;
		const struct sim_change *src = &s->ch[csrc], *dst = &s->ch[cdst];
		int X = (int)dst->val;
		int at_b = shown_entry(j, dst->f.ino, dst->f.key), at_a = shown_entry(j, src->f.ino, src->f.key);
		if (at_b == -2 && at_a == -2)
			continue;
		char optx[320];
		op_text(s, r, optx, sizeof(optx));
		int broken = 0;
		char bpath[256], apath[256];
		explain_field_path(s, &dst->f, r, bpath, sizeof(bpath));
		explain_field_path(s, &src->f, r - 1, apath, sizeof(apath));
		struct verdict *v;
		/* b existed (durably: from S0) and is now missing, with no later visible removal */
		if (dst->old != SIM_ABSENT && at_b == SIM_ABSENT && sim_value_at(s, &dst->f, 0) == dst->old) {
			int later_removal = 0;
			const struct sim_hist *h = sim_history(s, &dst->f);
			for (size_t i = 0; h && i < h->n; i++)
				if (h->idx[i] > cdst && s->ch[h->idx[i]].val == SIM_ABSENT && j->ex.st[h->idx[i]] == EX_IN)
					later_removal = 1;
			if (!later_removal) {
				v = universal_verdict(j, U4, 1);
				broken = 1;
				v->op = r;
				say(v->path, sizeof(v->path), "%s", bpath);
				say(v->expected, sizeof(v->expected), "'%.120s' names the old or the new file", bpath);
				say(v->observed, sizeof(v->observed), "'%.150s' is missing", bpath);
				say(v->reason, sizeof(v->reason),
					 "broken: %s replaces '%s', which existed before, so '%s' must name the old or the new "
					 "file after a crash (U4), but it is missing",
					 optx, bpath, bpath);
			}
		}
		if (at_a == X && at_b == X && X >= 0) {
			int relinked = 0;
			const struct sim_hist *h = sim_history(s, &src->f);
			for (size_t i = 0; h && i < h->n; i++)
				if (h->idx[i] > csrc && s->ch[h->idx[i]].val == X && j->ex.st[h->idx[i]] == EX_IN)
					relinked = 1;
			if (!relinked && s->in[X].type != 'd') {
				v = universal_verdict(j, U4, 1);
				broken = 1;
				v->op = r;
				say(v->path, sizeof(v->path), "%s", apath);
				say(v->expected, sizeof(v->expected), "the file under one of '%.80s' and '%.80s'", apath, bpath);
				say(v->observed, sizeof(v->observed), "under both");
				say(v->reason, sizeof(v->reason),
					 "broken: after %s the renamed file is visible under both '%s' and '%s' (U4)", optx,
					 apath, bpath);
			}
		}
		if (!broken && (dst->old != SIM_ABSENT)) {
			v = universal_verdict(j, U4, 0);
			v->op = r;
			say(v->path, sizeof(v->path), "%s", bpath);
			say(v->expected, sizeof(v->expected), "'%.120s' names the old or the new file", bpath);
			say(v->observed, sizeof(v->observed), at_b == SIM_ABSENT ? "missing after a later removal" : "present");
			say(v->reason, sizeof(v->reason), "kept: %s replaced '%s' atomically (U4)", optx, bpath);
		}
	}
	/* U5: every completed sync/syncfs */
	for (int y = 1; y <= (int)s->w->n; y++) {
		const struct sim_op *so = &s->ops[y - 1];
		if (!sim_is_run(s, y) || !so->applied || !completed(j, y) ||
		    (so->op->kind != WL_SYNC && so->op->kind != WL_SYNCFS))
			continue;
		long miss = -1;
		for (size_t c = 0; c < s->nch && s->ch[c].op < y && miss < 0; c++)
			if (j->ex.st[c] == EX_MISSING)
				miss = (long)c;
		char optx[320];
		op_text(s, y, optx, sizeof(optx));
		struct verdict *v = universal_verdict(j, U5, miss >= 0);
		v->trigger = y;
		if (miss < 0) {
			say(v->expected, sizeof(v->expected), "every earlier op");
			say(v->observed, sizeof(v->observed), "all there");
			say(v->reason, sizeof(v->reason), "kept: %s completed and every earlier op persisted (U5)", optx);
			continue;
		}
		const struct sim_change *ch = &s->ch[miss];
		char mtx[320];
		op_text(s, ch->op, mtx, sizeof(mtx));
		v->op = ch->op;
		explain_field_path(s, &ch->f, y, v->path, sizeof(v->path));
		explain_value_desc(s, &ch->f, ch->val, v->expected, sizeof(v->expected));
		explain_observed_desc(&j->ex, &ch->f, v->observed, sizeof(v->observed));
		say(v->reason, sizeof(v->reason),
			 "broken: %s completed, so every earlier op must persist (U5), but %s did not: %s expected %s, found %s",
			 optx, mtx, v->path, v->expected, v->observed);
	}
}

void model_judge(const struct sim *s, const struct op_result *res, const struct check_report *st, int64_t point,
		 struct judgement *out)
{
	memset(out, 0, sizeof(*out));
	out->judged = 1;
	struct judge j = { .s = s, .res = res, .st = st, .point = point, .out = out };
	for (size_t i = 0; i < s->w->n; i++)
		if (s->w->ops[i].section == WL_RUN && res[i].log_pos <= point) {
			j.last_completed = s->w->ops[i].id;
			if (wl_is_persistence(&s->w->ops[i]) && res[i].ret == 0)
				j.last_persisted = s->w->ops[i].id;
		}
	if (!st->mount_ok) {
		struct verdict *v = universal_verdict(&j, U1, 1);
		say(v->expected, sizeof(v->expected), "mounts");
		say(v->observed, sizeof(v->observed), "does not mount");
		say(v->reason, sizeof(v->reason), "broken: the file system does not mount after the crash (U1)");
		out->explained = 0;
		say(out->diff, sizeof(out->diff), "the state did not mount");
		out->marks = xmalloc(s->w->n + 1);
		for (size_t i = 0; i < s->w->n; i++)
			out->marks[i] = s->w->ops[i].section == WL_SETUP ? EX_MARK_SETUP : EX_MARK_UNSEEN;
		out->marks[s->w->n] = '\0';
	} else {
		struct verdict *v = universal_verdict(&j, U1, 0);
		say(v->expected, sizeof(v->expected), "mounts");
		say(v->observed, sizeof(v->observed), "mounts");
		say(v->reason, sizeof(v->reason), "kept: the file system mounts after the crash (U1)");
		explain_state(&j.ex, s, st->nodes, st->n_nodes, j.last_completed);
		out->explained = j.ex.explained;
		say(out->diff, sizeof(out->diff), "%s", j.ex.diff);
		out->marks = xstrdup(j.ex.marks);
		judge_universal(&j);
		j.covered = xcalloc(s->nch ? s->nch : 1, 1);
		for (int m = 0; m < MODEL_COUNT; m++) {
			j.ng = 0;
			judge_model(&j, m);
			for (size_t i = 0; i < j.ng; i++)
				emit_group(&j, &j.g[i]);
		}
		free(j.covered);
		free(j.g);
		explain_free(&j.ex);
	}
	for (size_t i = 0; i < out->n; i++)
		out->count[out->v[i].model][out->v[i].kind]++;
}

void judgement_free(struct judgement *j)
{
	free(j->v);
	free(j->marks);
	memset(j, 0, sizeof(*j));
}

char *models_join(unsigned set)
{
	struct sbuf sb = SBUF_INIT;
	for (int m = 0; m < MODEL_COUNT; m++)
		if (set & (1u << m))
			sbuf_addf(&sb, "%s%s", sb.len ? "," : "", model_name(m));
	return sbuf_detach(&sb);
}

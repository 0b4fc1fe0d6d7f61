/*
 * models.c - the guarantee models as data: their names, the --model
 * selection, and one table of rules, each with the promise it encodes and
 * a one-line citation of docs/guarantees.md saying what the code does. The
 * judge that applies the table to an explained crash state is verdicts.c.
 *
 * A model is the set of rows whose bit it has. The universal rules U1..U5
 * are expected of every file system; they are judged once per state under
 * the model name "universal" and count as broken for every model.
 */
#include "judge/models.h"
#include "judge/models-priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/util.h"

void judge_say(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static const char *const model_names[MODEL_COUNT + 1] = {
	"sequential", "posix", "ext4", "xfs", "btrfs", "f2fs-posix", "f2fs-strict", "somc", "barrier",
	"fiemap_sync", "expect", "universal",
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

/* Is opt=value one of the comma-separated options? (the last one wins) */
static const char *mount_opt(const char *opts, const char *name, char *buf, size_t n)
{
	const char *found = NULL;
	size_t nl = strlen(name);
	for (const char *p = opts; p && *p;) {
		size_t l = strcspn(p, ",");
		if (l > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			judge_say(buf, n, "%.*s", (int)(l - nl - 1), p + nl + 1);
			found = buf;
		}
		p += l;
		if (*p == ',')
			p++;
	}
	return found;
}

int model_of_mount(const char *fs, const char *mount_opts)
{
	int own = fs ? model_of_fs(fs) : -1;
	char v[32];
	if (own == MODEL_F2FS_POSIX && mount_opt(mount_opts, "fsync_mode", v, sizeof(v)) && !strcmp(v, "strict"))
		own = MODEL_F2FS_STRICT;
	return own;
}

static bool is_barrier_op(const struct wl_op *op)
{
	return op->kind == WL_FBARRIER || op->kind == WL_FDATABARRIER ||
	       (op->kind == WL_RENAME && op->flags == WL_RENAME_BARRIER);
}

unsigned models_inapplicable(const struct wl_workload *w, const struct op_result *res, unsigned set, char *why,
			     size_t n)
{
	if (n)
		why[0] = '\0';
	if (!w || !res || !(set & (1u << MODEL_BARRIER)))
		return 0;
	const struct wl_op *first = NULL;
	int first_err = 0;
	for (size_t i = 0; i < w->n; i++) {
		const struct wl_op *op = &w->ops[i];
		if (!is_barrier_op(op))
			continue;
		int lack = op->kind == WL_RENAME ? EINVAL : ENOSYS;
		if (res[i].ret >= 0 || res[i].err != lack)
			return 0;   /* the kernel has the call (or it failed for another reason) */
		if (!first) {
			first = op;
			first_err = lack;
		}
	}
	if (!first)
		return 0;
	if (n)
		snprintf(why, n, "model barrier: not applicable, the kernel has no barrier calls (op %d, line %d, "
			 "failed with %s)", first->id, first->line, first_err == ENOSYS ? "ENOSYS" : "EINVAL");
	return 1u << MODEL_BARRIER;
}

char *models_notes(const char *sim_notes, const char *inapplicable)
{
	if (!sim_notes && !inapplicable)
		return NULL;
	if (!sim_notes || !inapplicable)
		return xstrdup(sim_notes ? sim_notes : inapplicable);
	return xasprintf("%s\n%s", sim_notes, inapplicable);
}

int models_select(const char *list, const char *fs, const char *mount_opts, const struct wl_workload *w,
		  unsigned *set, struct errbuf *e)
{
	*set = 0;
	if (!list || !*list) {
		*set |= 1u << MODEL_POSIX;
		int own = model_of_mount(fs, mount_opts);
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
		if (w && w->nexpects)
			*set |= 1u << MODEL_EXPECT;
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
			models_select(NULL, fs, mount_opts, w, &d, e);
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
				judge_say(hint, sizeof(hint), "; did you mean '%s'?", near);
			errbuf_set(e, EXIT_USAGE, "unknown model '%s'%s (choose from sequential, posix, ext4, xfs, btrfs, "
				   "f2fs-posix, f2fs-strict, somc, barrier, fiemap_sync, expect, all)", t, hint);
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

#define M(x) (1u << MODEL_##x)
#define DURABILITY (M(POSIX) | M(EXT4) | M(XFS) | M(BTRFS) | M(F2FS_POSIX) | M(F2FS_STRICT) | M(SOMC))
#define SOMC_LIKE (M(XFS) | M(F2FS_STRICT) | M(SOMC))
#define EVERY_MODEL ((1u << MODEL_COUNT) - 1)

#define DOC "docs/guarantees.md"

const struct rule model_rule_table[] = {
	{ "fsync.file", DURABILITY, T_FSYNC_FILE, C_DATA | C_META, "the file's data and metadata as of the fsync",
	  DOC "#fsync-of-a-file: fsync f makes f's blocks, size, mode and xattrs as of the call durable, not its names" },
	{ "fdatasync.file", DURABILITY, T_FDATASYNC_FILE, C_DATA, "the file's data and size as of the fdatasync",
	  DOC "#fdatasync: fdatasync f makes f's blocks and size as of the call durable" },
	{ "ext4.fsync-name", M(EXT4), T_FSYNC_ANY, C_BORN_NAME, "the name the fsynced file was created under",
	  DOC "#ext4: fsync of a file or directory created in the run makes the entry it was created under durable, "
	      "if it still names it; not names added by link or rename" },
	{ "btrfs.fsync-names", M(BTRFS), T_FSYNC_FILE, C_ALL_NAMES, "every name of the fsynced file",
	  DOC "#btrfs: fsync of a file makes every name it has at the call durable (all its hard links)" },
	{ "somc.fsync-deps", SOMC_LIKE, T_FSYNC_FILE, C_OWN_NAME | C_DEPS,
	  "the fsynced file's name and every earlier op it depends on",
	  DOC "#somc: fsync f makes the fsynced name and every earlier metadata op f depends on durable" },
	{ "fsync.dir", DURABILITY, T_FSYNC_DIR, C_DIR_NAMES, "the directory's names as of the fsync",
	  DOC "#fsync-of-a-directory: fsync d makes every name in d at the call durable (name -> inode), not the "
	      "files' data" },
	{ "btrfs.fsync-dir", M(BTRFS), T_FSYNC_DIR, C_DIR_REMOVALS, "the renames and unlinks out of the directory",
	  DOC "#btrfs: fsync d also makes the names removed from d (renamed or unlinked away) durable" },
	{ "somc.fsync-dir-deps", SOMC_LIKE, T_FSYNC_DIR, C_DEPS, "every earlier metadata op the directory depends on",
	  DOC "#somc: fsync d makes every earlier metadata op d depends on durable (its names: fsync.dir)" },
	{ "sync", EVERY_MODEL, T_SYNC, C_EVERYTHING, "everything done before the sync",
	  DOC "#sync: a completed sync or syncfs makes every earlier op durable" },
	{ "somc.order", SOMC_LIKE, T_EVERY_STATE, C_ORDER, "every earlier metadata op a visible op depends on",
	  DOC "#somc: a metadata op every explanation shows implies every earlier metadata op it depends on "
	      "(a common inode or directory, transitively)" },
	{ "sequential.prefix", M(SEQUENTIAL), T_EVERY_STATE, C_PREFIX,
	  "that the state is the program's state after some op, at or after the last completed fsync/sync",
	  DOC "#sequential: the state equals S_k for some k at or after the last completed fsync, fdatasync or sync" },
	{ "barrier.fdatabarrier", M(BARRIER), T_FDATABARRIER, C_BAR_DATA,
	  "the file's earlier data, once a later witness (rename, link, metadata change) is visible or durable",
	  DOC "#barriers: a witness on f after fdatabarrier f that every explanation shows, or that was made "
	      "durable, implies f's data written before the call" },
	{ "barrier.fbarrier", M(BARRIER), T_FBARRIER, C_BAR_DATA | C_BAR_META,
	  "the file's earlier data and metadata, once a later witness is visible or durable",
	  DOC "#barriers: as fdatabarrier, plus f's mode and xattrs set before the call" },
	{ "barrier.rename", M(BARRIER), T_RENAME_BARRIER, C_BAR_DATA | C_BAR_META,
	  "the moved file's earlier data and metadata, whenever the rename is visible",
	  DOC "#barriers: rename ... barrier is fbarrier on the moved inode, then the rename, its own witness" },
	{ "fiemap_sync.order", M(FIEMAP_SYNC), T_FIEMAP_SYNC, C_BAR_DATA,
	  "the file's earlier data, once a later witness is visible or durable",
	  DOC "#fiemap-sync: FIEMAP_FLAG_SYNC is judged by the fdatabarrier rule" },
};
const size_t model_nrules = sizeof(model_rule_table) / sizeof(model_rule_table[0]);

const struct rule model_universal[NU] = {
	{ "U1", 0, T_EVERY_STATE, 0, "the file system mounts after the crash",
	  DOC "#u1-it-mounts: the file system mounts after the crash" },
	{ "U2", 0, T_EVERY_STATE, 0, "fsck reports no corruption",
	  DOC "#u2-fsck-is-clean: the file system's fsck reports nothing to repair" },
	{ "U3", 0, T_EVERY_STATE, 0, "the state is explainable by some set of op pieces",
	  DOC "#u3-the-state-is-explainable: some set of op pieces replayed on S0 in program order gives the state" },
	{ "U4", 0, T_EVERY_STATE, 0, "a rename replaces atomically",
	  DOC "#u4-renames-are-atomic: after rename a b, b names the old or the new inode; no inode under both; an "
	      "exchange swaps both; a directory has one name" },
	{ "U5", 0, T_EVERY_STATE, 0, "every op before a completed sync persists",
	  DOC "#u5-sync-makes-everything-durable: every op completed before a completed sync or syncfs is there" },
};

size_t model_rules(const struct rule_info **out)
{
	static struct rule_info info[64];
	size_t n = 0;
	for (size_t i = 0; i < model_nrules; i++)
		info[n++] = (struct rule_info){ model_rule_table[i].id, model_rule_table[i].models, model_rule_table[i].cite };
	for (size_t i = 0; i < NU; i++)
		info[n++] = (struct rule_info){ model_universal[i].id, EVERY_MODEL, model_universal[i].cite };
	*out = info;
	return n;
}

char *models_join(unsigned set)
{
	struct sbuf sb = SBUF_INIT;
	for (int m = 0; m < MODEL_COUNT; m++)
		if (set & (1u << m))
			sbuf_addf(&sb, "%s%s", sb.len ? "," : "", model_name(m));
	return sbuf_detach(&sb);
}

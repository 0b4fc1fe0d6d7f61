/*
 * explain.h - every way one observed crash state can be explained as a set
 * P of [run] op pieces (simulator changes, sim.h) replayed on S0 in program
 * order, or the first difference that no P explains (docs/guarantees.md
 * "Explanations").
 *
 * An observed value often matches several versions of its field (an xattr
 * set then removed, a rename and its reverse, a size equal to the one after
 * setup), and a torn block or a partly written-back size matches a version
 * with a later change seen in part. So the explanation keeps, per observed
 * field, the set of its options; any choice of one option per field is an
 * explanation. Which simulator inode an observed file is can be ambiguous
 * too (an inode number reused, a file without a known number): each such
 * choice is a world with its own fields; a world is explained when every
 * observed field has an option and the tree adds up (no unknown names,
 * link counts). The rules (models.c) ask, per world and per change, whether
 * some option keeps it and whether every option shows it.
 */
#ifndef CRASHLAB_JUDGE_EXPLAIN_H
#define CRASHLAB_JUDGE_EXPLAIN_H

#include <stddef.h>

#include "core/hmap.h"
#include "core/tree.h"
#include "judge/sim.h"

/* Per op, the timeline mark (explain.marks), for the simplest explanation. */
#define EX_MARK_SETUP 's'      /* a [setup] op: in S0 */
#define EX_MARK_FAILED 'x'     /* failed in the guest: changed nothing */
#define EX_MARK_NOEFFECT '.'   /* succeeded, changes nothing visible (fsync, sync, close, ...) */
#define EX_MARK_PERSISTED '+'  /* every observable piece is shown or overwritten, and some are shown */
#define EX_MARK_SUPERSEDED '=' /* every observable piece was overwritten by a later op the state shows */
#define EX_MARK_PARTIAL '~'    /* some pieces shown (or seen in part), some not */
#define EX_MARK_LOST '-'       /* the state needs none of its pieces */
#define EX_MARK_UNSEEN '?'     /* nothing of it can be seen */

/* One way a field's observed value comes about. */
struct ex_opt {
	int pos;         /* history position of the last change wholly in P (0: none, the value before the run) */
	int partial;     /* position of a later change seen in part (a torn block, a partial size), or -1 */
};

struct ex_field {
	size_t hist;     /* the field's history (sim.hist index), or (size_t)-1 when no run op changed it */
	struct sim_field f;
	size_t first, n; /* its options: world.opt[first .. first + n); n = 0: nothing explains the value */
};

struct ex_world {
	int explained;
	char diff[1024];           /* when not explained: the first difference, one sentence */
	int *node_of;              /* per simulator inode: the observed node showing it, or -1 */
	int *sim_of;               /* per observed node: the simulator inode it is, or -1 */
	struct ex_field *fld;
	size_t nfld, fld_cap;
	struct ex_opt *opt;
	size_t nopt, opt_cap;
	size_t *fld_of_hist;       /* per sim history: index into fld, or (size_t)-1 when not seen */
	size_t ntorn;              /* fields seen with a change in part */
	int dir_twice;             /* a simulator directory shown under two names, or -1 */
	int dir_twice_node[2];     /* the two observed nodes */
};

struct explain {
	const struct sim *s;
	const struct tree_node *nodes; /* the observed tree */
	size_t n;
	struct ex_world *w;        /* one per choice among ambiguous inode matches */
	size_t nw;
	int nw_capped;             /* more choices existed than were tried (EX_MAX_WORLDS) */
	size_t primary;            /* the world descriptions use: the first explained one */
	int explained;             /* some world is explained */
	int setup_state;           /* S0 itself explains the state: nothing of [run] persisted */
	char diff[1024];           /* the primary world's first difference */
	char *marks;               /* per op (index op id - 1): EX_MARK_*; NUL-terminated */
	size_t ntorn;
	const int *node_of, *sim_of; /* the primary world's */
};

#define EX_MAX_WORLDS 32

/* Explain the observed tree nodes[0..n) against s. last_completed: the
 * highest op id completed in the state (the "expected" side of a
 * difference is the value in that S_k). Always fills e. */
void explain_state(struct explain *e, const struct sim *s, const struct tree_node *nodes, size_t n,
		   int last_completed);
void explain_free(struct explain *e);

/* What world w shows of change c (bits): */
#define EXC_SEEN 1u   /* its field is seen */
#define EXC_KEEP 2u   /* some option has it in P or overwritten by a later change in P */
#define EXC_SHOWN 4u  /* every option shows it, wholly or in part (so every explanation has it) */
#define EXC_PART 8u   /* some option shows it only in part */
#define EXC_WHOLE 16u /* some option shows exactly its value */
unsigned explain_change(const struct explain *e, size_t w, size_t c);
/* Does every option of history hist's field in world w show (wholly or in
 * part) one of the changes for which pick(ctx, change) is true? 0 when the
 * field is not seen. */
int explain_field_shows(const struct explain *e, size_t w, size_t hist, int (*pick)(void *ctx, size_t change),
			void *ctx);
/* Is the world one the rules judge (explained, or every world when none is)? */
int explain_judged(const struct explain *e, size_t w);
/* The inode world w shows at entry (dir, name): a simulator inode,
 * SIM_ABSENT, -2 when the directory is not seen, -3 an unknown inode. */
int explain_entry_shown(const struct explain *e, size_t w, int dir, int64_t name);
/* Does world w have an option for field f (seen) with exactly position pos and nothing in part? */
int explain_has_exact(const struct explain *e, size_t w, const struct sim_field *f, int pos);

/* A field's value in words: "65536 bytes", "op 2's data", "names the file
 * created by op 5", "absent", "mode 0644", ... */
void explain_value_desc(const struct sim *s, const struct sim_field *f, int64_t v, char *buf, size_t n);
/* What the state shows for a field, in the same words ("(not visible)" if unobservable). */
void explain_observed_desc(const struct explain *e, const struct sim_field *f, char *buf, size_t n);
/* The path a field is seen at ("A/foo", "A/foo block 3", "A/foo xattr user.k"): the
 * path in the observed state when it shows the inode, else as of S_k. */
void explain_field_path(const struct explain *e, const struct sim_field *f, int k, char *buf, size_t n);

#endif

/*
 * explain.h - explain one observed crash state as the set P of [run] op
 * pieces (simulator changes, sim.h) whose effects it shows, confirmed by
 * re-simulating S0 + P; or name the first difference that no P explains
 * (GUARANTEES.md "Explanation").
 */
#ifndef CRASHLAB_JUDGE_EXPLAIN_H
#define CRASHLAB_JUDGE_EXPLAIN_H

#include <stddef.h>

#include "judge/sim.h"
#include "core/tree.h"

/* What the state shows of one change (one piece of an op). */
enum ex_status {
	EX_UNOBSERVED = 0, /* the field cannot be seen (its inode or directory is not reachable) */
	EX_IN,             /* the state shows exactly this change's value: the piece is in P */
	EX_SUPERSEDED,     /* a later change of the same field is in P */
	EX_MISSING,        /* the state shows an earlier value: the piece is not in P */
};

/* Per op, the timeline mark (explain_op_mark). */
#define EX_MARK_SETUP 's'     /* a [setup] op: in S0 */
#define EX_MARK_FAILED 'x'    /* failed in the guest: changed nothing */
#define EX_MARK_NOEFFECT '.'  /* succeeded, changes nothing visible (fsync, sync, close, ...) */
#define EX_MARK_PERSISTED '+' /* every observable piece is in P (some exactly) */
#define EX_MARK_SUPERSEDED '=' /* every observable piece was overwritten by a later op in P */
#define EX_MARK_PARTIAL '~'   /* some pieces in P, some not (a torn write, half a rename) */
#define EX_MARK_LOST '-'      /* no piece in P */
#define EX_MARK_UNSEEN '?'    /* nothing of it can be seen */

struct explain {
	const struct sim *s;
	const struct tree_node *nodes;   /* the observed tree */
	size_t n;
	unsigned char *st;       /* per simulator change: enum ex_status */
	unsigned char *torn;     /* per change: 1 when its block is seen torn (sectors of two versions) */
	int *node_of;            /* per simulator inode: index of an observed node showing it, or -1 */
	int *sim_of;             /* per observed node: the simulator inode it is, or -1 */
	int explained;           /* 1: S0 + P reproduces the state */
	char diff[1024];         /* when not explained: the first difference, one sentence */
	char *marks;             /* per op (index op id - 1): EX_MARK_*; NUL-terminated */
	size_t ntorn;            /* blocks explained as torn */
};

/* Explain the observed tree nodes[0..n) against s. last_completed: the
 * highest op id completed in the state (the "expected" side of a
 * difference is the value in that S_k). Always fills e. */
void explain_state(struct explain *e, const struct sim *s, const struct tree_node *nodes, size_t n,
		   int last_completed);
void explain_free(struct explain *e);

/* A field's value in words: "65536 bytes", "block of op 2's pattern",
 * "names the file created by op 5", "absent", "mode 0644", ... */
void explain_value_desc(const struct sim *s, const struct sim_field *f, int64_t v, char *buf, size_t n);
/* What the state shows for a field, in the same words ("(not visible)" if unobservable). */
void explain_observed_desc(const struct explain *e, const struct sim_field *f, char *buf, size_t n);
/* The path a field is seen at ("A/foo", "A/foo block 3", "A/foo xattr user.k"). k: names as of S_k. */
void explain_field_path(const struct sim *s, const struct sim_field *f, int k, char *buf, size_t n);

#endif

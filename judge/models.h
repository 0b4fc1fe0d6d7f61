/*
 * models.h - the guarantee models and the universal rules as one table of
 * rules (models.c), and the judge that turns an explained crash state into
 * verdicts (GUARANTEES.md, KERNEL-API.md).
 */
#ifndef CRASHLAB_MODELS_H
#define CRASHLAB_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "judge/explain.h"
#include "judge/sim.h"
#include "core/tree.h"

enum lab_model {
	LAB_M_SEQUENTIAL, LAB_M_POSIX, LAB_M_EXT4, LAB_M_XFS, LAB_M_BTRFS, LAB_M_F2FS_POSIX,
	LAB_M_F2FS_STRICT, LAB_M_SOMC, LAB_M_BARRIER, LAB_M_FIEMAP_SYNC,
	LAB_M_COUNT,
	LAB_M_UNIVERSAL = LAB_M_COUNT /* the verdicts of U1..U5, shared by every model */
};

enum lab_verdict_kind { LAB_V_KEPT, LAB_V_LOST, LAB_V_BONUS, LAB_V_GONE, LAB_V_BROKEN, LAB_V_COUNT };

/* "posix", ..., "universal"; NULL for out of range. */
const char *lab_model_name(int model);
/* -1 for an unknown name. */
int lab_model_parse(const char *name);
/* One line on what the model is. */
const char *lab_model_summary(int model);
/* "kept", "LOST", "bonus", "gone", "broken". */
const char *lab_verdict_name(enum lab_verdict_kind k);
int lab_verdict_parse(const char *name);
/* The documented model of a file system ("f2fs" -> f2fs-posix), or -1. */
int lab_model_of_fs(const char *fs);
/*
 * Parse a --model list ("posix,somc", "all", or NULL/"" for the default:
 * POSIX and fs's own model, plus barrier/fiemap_sync when the workload uses
 * those calls) into a bit set (bit i = model i). 0, or -1 with the bad name
 * in err.
 */
int lab_models_select(const char *list, const char *fs, const struct wl_workload *w, unsigned *set, char *err,
		      size_t errlen);

/* One verdict. */
struct lab_verdict {
	int model;                   /* enum lab_model, or LAB_M_UNIVERSAL */
	const char *rule;            /* rule id, e.g. "posix.fsync", "U4" */
	const char *cite;            /* the one-line citation of the promise */
	enum lab_verdict_kind kind;
	int op;                      /* the op whose effect is judged, 0 when none */
	int trigger;                 /* the op that made the promise, 0 when none */
	char path[256];              /* the object */
	char expected[192];          /* the promised (or S_k) value */
	char observed[192];          /* what the state shows */
	char reason[1024];           /* one sentence a newcomer understands */
};

/* The judged state: the explanation and every verdict. */
struct lab_judgement {
	struct lab_verdict *v;
	size_t n;
	int judged;                  /* 0: the state could not be judged (e.g. the checker guest went down) */
	int explained;
	char diff[1024];             /* the first difference when not explained */
	char *marks;                 /* per op, explain.h EX_MARK_* (malloc'd) */
	size_t count[LAB_M_COUNT + 1][LAB_V_COUNT]; /* per model (and universal) and kind */
};

/* A crash state as checked (crashdb_state + its tree). */
struct lab_judge_state {
	int mount_ok;
	int fsck_status;             /* -1: fsck did not run */
	int fsck_clean;
	const char *fsck_output;
	int64_t point;               /* ops with log_pos <= point completed */
	const struct tree_node *nodes;
	size_t n;
};

/* Judge a state under every model. res: the guest's op results (log_pos decides completion). */
void lab_judge(const struct sim *s, const struct sim_guest *res, const struct lab_judge_state *st,
	       struct lab_judgement *out);
void lab_judgement_free(struct lab_judgement *j);

/* The rule table, for documentation and tests: id, its models (bit set) and citation. */
struct lab_rule_info {
	const char *id;
	unsigned models;
	const char *cite;
};
size_t lab_rules(const struct lab_rule_info **out);

#endif

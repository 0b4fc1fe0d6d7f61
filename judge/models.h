/*
 * models.h - the guarantee models and the universal rules as one table of
 * rules (models.c), and the judge that turns the explanations of a crash
 * state into verdicts (verdicts.c). docs/guarantees.md is the specification
 * both follow.
 */
#ifndef CRASHLAB_JUDGE_MODELS_H
#define CRASHLAB_JUDGE_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "judge/explain.h"
#include "judge/sim.h"
#include "core/proto.h"
#include "core/tree.h"

enum model {
	MODEL_SEQUENTIAL, MODEL_POSIX, MODEL_EXT4, MODEL_XFS, MODEL_BTRFS, MODEL_F2FS_POSIX,
	MODEL_F2FS_STRICT, MODEL_SOMC, MODEL_BARRIER, MODEL_FIEMAP_SYNC,
	MODEL_EXPECT,      /* the workload's own [expect] lines (judge/expect.c) */
	MODEL_COUNT,
	MODEL_UNIVERSAL = MODEL_COUNT /* the verdicts of U1..U5, shared by every model */
};

enum verdict_kind { V_KEPT, V_LOST, V_BONUS, V_GONE, V_BROKEN, V_COUNT };

/* "posix", ..., "universal"; NULL for out of range. */
const char *model_name(int model);
/* -1 for an unknown name. */
int model_parse(const char *name);
/* "kept", "LOST", "bonus", "gone", "broken". */
const char *verdict_name(enum verdict_kind k);
int verdict_parse(const char *name);
/* The documented model of a file system ("f2fs" -> f2fs-posix), or -1. */
int model_of_fs(const char *fs);
/*
 * Parse a --model list ("posix,somc", "all", or NULL/"" for the default:
 * POSIX and fs's own model under its mount options (model_of_mount), plus
 * barrier/fiemap_sync when the workload uses those calls) into a bit set (bit i = model i). 0, or -1 with e (2)
 * naming the bad name and the nearest good one.
 */
int models_select(const char *list, const char *fs, const char *mount_opts, const struct wl_workload *w,
		  unsigned *set, struct errbuf *e);
/* The file system's own model under its mount options: f2fs with
 * fsync_mode=strict is judged by f2fs-strict; -1 for an unknown fs. */
int model_of_mount(const char *fs, const char *mount_opts);
/*
 * The models of set the guest's kernel made not applicable: barrier when the
 * workload calls fbarrier, fdatabarrier or rename ... barrier and every one
 * of those calls failed as on a kernel without the calls (ENOSYS, EINVAL for
 * the rename flag; docs/guarantees.md). why (n bytes) gets one line saying
 * so, naming the first such op. A bit set (bit i = model i), 0 when none.
 */
unsigned models_inapplicable(const struct wl_workload *w, const struct op_result *res, unsigned set, char *why,
			     size_t n);
/* The simulator's notes and a models_inapplicable line joined, one per
 * line (malloc'd), or NULL when both are NULL. */
char *models_notes(const char *sim_notes, const char *inapplicable);
/* "posix,ext4" for a bit set of models (malloc'd). */
char *models_join(unsigned set);

/* One verdict. */
struct verdict {
	int model;                   /* enum model, or MODEL_UNIVERSAL */
	char rule[32];               /* rule id, e.g. "fsync.file", "U4"; "unpromised" */
	char cite[256];              /* the one-line citation of the promise */
	enum verdict_kind kind;
	int op;                      /* the op whose effect is judged, 0 when none */
	int trigger;                 /* the op that made the promise, 0 when none */
	char path[256];              /* the object */
	char expected[192];          /* the promised (or S_k) value */
	char observed[192];          /* what the state shows */
	char reason[1024];           /* one sentence a newcomer understands */
	long piece;                  /* the simulator change it is about (the first missing one), or -1; not
					stored */
};

/* The judged state: the explanation and every verdict. */
struct judgement {
	struct verdict *v;
	size_t n;
	int judged;                  /* 0: the state could not be judged (e.g. the checker guest went down) */
	int explained;
	int setup_state;             /* S0 explains the state: nothing of [run] persisted */
	char diff[1024];             /* the first difference when not explained */
	char *marks;                 /* per op, explain.h EX_MARK_* (malloc'd) */
	size_t count[MODEL_COUNT + 1][V_COUNT]; /* per model (and universal) and kind */
};

/* Judge a checked crash state under every model. res: the guest's op
 * results; those with log_pos <= point completed before the crash. */
void model_judge(const struct sim *s, const struct op_result *res, const struct check_report *rep, int64_t point,
		 struct judgement *out);
/* A new zeroed verdict at the end of j (piece -1). */
struct verdict *judgement_add(struct judgement *j);
/* The verdicts of the workload's [expect] lines (model expect) for a state
 * with ops completed up to point: none before the expectation point
 * (core/workload.h wl_expect_point). */
/* Check what parsing cannot: every "PATH data K" names a regular file
 * after op K. 0, or -1 with e ("file:line: ...", 65). */
int expect_validate(const struct wl_workload *w, struct errbuf *e);
void expect_judge(const struct sim *s, const struct op_result *res, const struct check_report *st, int64_t point,
		  struct judgement *out);
void judgement_free(struct judgement *j);
/* A deep copy of src into dst (free with judgement_free). */
void judgement_copy(struct judgement *dst, const struct judgement *src);

/* The rule table, for documentation and tests: id, its models (bit set) and citation. */
struct rule_info {
	const char *id;
	unsigned models;
	const char *cite;
};
size_t model_rules(const struct rule_info **out);

#endif

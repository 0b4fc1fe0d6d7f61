/*
 * judge.h - the judge of one fs run, pure: the workload and the guest's op
 * results in, simulated once (judge/sim.h); then each checked crash state
 * in, its explanation and verdicts under every model out (judge/models.h).
 * Nothing here reads or writes the database or talks to a guest: the
 * runner (engine/runner.c) judges each state as it is checked, and
 * crashdb/judge.c judges states stored without verdicts.
 */
#ifndef CRASHLAB_JUDGE_JUDGE_H
#define CRASHLAB_JUDGE_JUDGE_H

#include "core/proto.h"
#include "judge/models.h"
#include "judge/sim.h"

struct judge_run {
	struct sim sim;           /* the workload simulated with the guest's results */
	struct op_result *res;    /* one per op (owned copy) */
	char *notes;              /* simulator/guest disagreements, one per line, or NULL */
	int ok;                   /* 0: the workload could not be simulated (err says why) */
	struct errbuf err;
};

/* Simulate w with the guest's results res[0..w->n). Always fills jr. */
void judge_run_init(struct judge_run *jr, const struct wl_workload *w, const struct op_result *res);
void judge_run_free(struct judge_run *jr);

/* Judge one checked state whose crash point is point; out is freed with
 * judgement_free. A run that could not be simulated gives judged = 0 with
 * the reason in out->diff. */
void judge_state(const struct judge_run *jr, const struct check_report *rep, int64_t point, struct judgement *out);

#endif

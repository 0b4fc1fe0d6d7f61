/*
 * judge.h - the judge's façade for a fs run: simulate the workload once
 * with the guest's op results (sim.h), then judge each checked crash state
 * under every model (models.h) and store its verdicts (crashdb.h).
 * `crashlab run` judges each state right after checking it; `crashlab
 * report` judges the states of runs stored before the judge existed.
 */
#ifndef CRASHLAB_JUDGE_H
#define CRASHLAB_JUDGE_H

#include "crashdb/crashdb.h"
#include "judge/models.h"
#include "judge/sim.h"

struct lab_judge_run {
	struct sim sim;           /* the workload simulated with the guest's results */
	struct sim_guest *res;    /* one per op (owned copy) */
	char *notes;              /* simulator/guest disagreements, one per line, or NULL */
	int ok;                   /* 0: the workload could not be simulated (err says why) */
	char err[512];
};

/* Simulate w with the guest's results res[0..w->n). Always fills jr. */
void lab_judge_run_init(struct lab_judge_run *jr, const struct wl_workload *w, const struct sim_guest *res);
void lab_judge_run_free(struct lab_judge_run *jr);

/* Judge one state (nodes as captured); out is freed with lab_judgement_free. */
void lab_judge_state(const struct lab_judge_run *jr, const struct lab_judge_state *st, struct lab_judgement *out);

/* Store a judgement (judged or not) with its verdicts. 0 or -1 (crashdb_error). */
int lab_judge_store(struct crashdb *db, int64_t state_id, const struct lab_judgement *j);

/* "posix,ext4" for a bit set of models (malloc'd). */
char *lab_models_join(unsigned set);

#endif

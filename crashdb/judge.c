/*
 * judge.c - judging states that were stored without verdicts (a database
 * from before the judge, or a run whose states are to be judged again by
 * the current judge): the stored ops and results are simulated once per fs
 * run, each stored tree is judged (judge/judge.h), and the verdicts replace
 * whatever the state had, one state per transaction. This is an engine
 * call over the store; the viewers never judge.
 */
#include "crashdb/db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/judge.h"

static int judge_fsrun(struct crashdb *db, struct fsrun *f, int force, size_t *judged, struct errbuf *e)
{
	struct state_result *st;
	size_t n;
	if (crashdb_read_states(db, f->id, 0, &st, &n, e) < 0)
		return -1;
	size_t todo = 0;
	for (size_t i = 0; i < n; i++)
		todo += force || (!st[i].judge.judged && !st[i].judge.diff[0]);
	if (!todo || !f->res) {
		crashdb_states_free(st, n);
		return 0;
	}
	struct judge_run jr;
	judge_run_init(&jr, &f->ops, f->res);
	int r = 0;
	if (!f->models || force) {
		unsigned set;
		struct errbuf me;
		if (!f->models || models_select(f->models, f->fs, f->mount_opts, &f->ops, &set, &me) < 0)
			models_select(NULL, f->fs, f->mount_opts, &f->ops, &set, &me);
		char na_why[256];
		set &= ~models_inapplicable(&f->ops, f->res, set, na_why, sizeof(na_why));
		char *names = models_join(set);
		char *notes = models_notes(jr.notes, na_why[0] ? na_why : NULL);
		r = db_write_fsrun_models(db, f->id, names, notes, e);
		free(notes);
		free(names);
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		struct state_result *s = &st[i];
		if (!force && (s->judge.judged || s->judge.diff[0]))
			continue;
		if (s->check.mount_ok) {
			struct state_result full;
			if ((r = crashdb_read_state(db, f, s->idx, CRASHDB_TREE, &full, e)) < 0)
				break;
			state_result_free(s);
			*s = full;
		}
		judgement_free(&s->judge);
		judge_state(&jr, &s->check, s->point, &s->judge);
		char what[128];
		snprintf(what, sizeof(what), "cannot store the verdicts of state %d of fs run %" PRId64 " (%s)", s->idx,
			 f->id, f->fs);
		r = db_write_judgement(db, s->id, &s->judge, what, e);
		if (r == 0 && judged)
			(*judged)++;
	}
	judge_run_free(&jr);
	crashdb_states_free(st, n);
	return r;
}

int crashdb_judge_run(struct crashdb *db, int64_t run_id, int force, size_t *judged, struct errbuf *e)
{
	struct fsrun *f;
	size_t n;
	if (judged)
		*judged = 0;
	if (crashdb_read_fsruns(db, run_id, NULL, &f, &n, e) < 0)
		return -1;
	int r = 0;
	for (size_t i = 0; i < n && r == 0; i++)
		r = judge_fsrun(db, &f[i], force, judged, e);
	crashdb_fsruns_free(f, n);
	return r;
}

/*
 * judge.c - simulate once per fs run, judge and store each state (judge.h).
 */
#include "judge/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/util.h"

void lab_judge_run_init(struct lab_judge_run *jr, const struct wl_workload *w, const struct sim_guest *res)
{
	memset(jr, 0, sizeof(*jr));
	jr->res = xcalloc(w->n ? w->n : 1, sizeof(*jr->res));
	if (w->n)
		memcpy(jr->res, res, w->n * sizeof(*res));
	jr->ok = sim_run(&jr->sim, w, jr->res, jr->err, sizeof(jr->err)) == 0;
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; jr->ok && i < w->n; i++)
		if (jr->sim.ops[i].mismatch[0])
			sbuf_addf(&sb, "%s%s", sb.len ? "\n" : "", jr->sim.ops[i].mismatch);
	jr->notes = sb.len ? sbuf_detach(&sb) : NULL;
	sbuf_free(&sb);
}

void lab_judge_run_free(struct lab_judge_run *jr)
{
	sim_free(&jr->sim);
	free(jr->res);
	free(jr->notes);
	memset(jr, 0, sizeof(*jr));
}

void lab_judge_state(const struct lab_judge_run *jr, const struct lab_judge_state *st, struct lab_judgement *out)
{
	if (!jr->ok) {
		memset(out, 0, sizeof(*out));
		snprintf(out->diff, sizeof(out->diff), "%s", jr->err);
		return;
	}
	lab_judge(&jr->sim, jr->res, st, out);
}

int lab_judge_store(struct crashdb *db, int64_t state_id, const struct lab_judgement *j)
{
	struct crashdb_verdict *v = xcalloc(j->n ? j->n : 1, sizeof(*v));
	for (size_t i = 0; i < j->n; i++) {
		const struct lab_verdict *x = &j->v[i];
		v[i] = (struct crashdb_verdict){
			.model = lab_model_name(x->model), .rule = x->rule, .verdict = lab_verdict_name(x->kind),
			.op_id = x->op, .trigger_op = x->trigger, .path = x->path, .expected = x->expected,
			.observed = x->observed, .reason = x->reason, .cite = x->cite,
		};
	}
	struct crashdb_judgement cj = {
		.judged = j->judged, .explained = j->explained, .difference = j->explained ? NULL : j->diff,
		.timeline = j->marks,
	};
	int r = crashdb_judgement_insert(db, state_id, &cj, v, j->n);
	free(v);
	return r;
}

char *lab_models_join(unsigned set)
{
	struct sbuf sb = SBUF_INIT;
	for (int m = 0; m < LAB_M_COUNT; m++)
		if (set & (1u << m))
			sbuf_addf(&sb, "%s%s", sb.len ? "," : "", lab_model_name(m));
	if (!sb.len)
		sbuf_adds(&sb, "");
	return sbuf_detach(&sb);
}

/*
 * judge.c - simulate once per fs run, judge each state (judge.h).
 */
#include "judge/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

void judge_run_init(struct judge_run *jr, const struct wl_workload *w, const struct op_result *res)
{
	memset(jr, 0, sizeof(*jr));
	jr->res = xcalloc(w->n ? w->n : 1, sizeof(*jr->res));
	if (w->n)
		memcpy(jr->res, res, w->n * sizeof(*res));
	jr->ok = sim_run(&jr->sim, w, jr->res, &jr->err) == 0;
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; jr->ok && i < w->n; i++)
		if (jr->sim.ops[i].mismatch[0])
			sbuf_addf(&sb, "%s%s", sb.len ? "\n" : "", jr->sim.ops[i].mismatch);
	jr->notes = sb.len ? sbuf_detach(&sb) : NULL;
	sbuf_free(&sb);
}

void judge_run_free(struct judge_run *jr)
{
	sim_free(&jr->sim);
	free(jr->res);
	free(jr->notes);
	memset(jr, 0, sizeof(*jr));
}

void judge_state(const struct judge_run *jr, const struct check_report *rep, int64_t point, struct judgement *out)
{
	if (!jr->ok) {
		memset(out, 0, sizeof(*out));
		snprintf(out->diff, sizeof(out->diff), "%.1000s", jr->err.msg);
		return;
	}
	model_judge(&jr->sim, jr->res, rep, point, out);
}

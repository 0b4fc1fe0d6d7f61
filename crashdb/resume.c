/*
 * resume.c - what a stopped run has, for `crashlab run --resume`.
 *
 * Method. A run stops between two steps (host/intr.h) or is cut short
 * with crashlab itself; either way every row stored is whole. Per file
 * system the run asks for, its last fs run decides: one that ended (ok or
 * a guest failure) is only counted again; one still 'running' or
 * 'interrupted' whose recording was stored (the ops with their results,
 * the write log and the base image still on disk) goes on from its stored
 * states, which the run loop checks against the states the log gives
 * again (their trees read too, so that a later state with the same content
 * copies a stored report instead of being checked); one whose recording never got stored is removed with everything
 * under it and made again from a fresh recording.
 */
#include "crashdb/db.h"

#include <stdlib.h>
#include <string.h>

#include "crashdb/crashdb.h"
#include "host/msg.h"
#include "host/sys.h"

int crashdb_resume_fs(struct crashdb *db, const struct run_info *run, const struct wl_workload *w,
		      struct fs_params *fps, size_t n, struct crashdb_resume *R, struct errbuf *e)
{
	memset(R, 0, sizeof(*R));
	if (crashdb_read_fsruns(db, run->id, NULL, &R->frs, &R->nfrs, e) < 0)
		return -1;
	R->states = xcalloc(R->nfrs ? R->nfrs : 1, sizeof(*R->states));
	R->nstates = xcalloc(R->nfrs ? R->nfrs : 1, sizeof(*R->nstates));
	R->r = xcalloc(n ? n : 1, sizeof(*R->r));
	for (size_t i = 0; i < n; i++) {
		struct fsrun *fr = NULL;
		size_t k = 0;
		for (size_t j = 0; j < R->nfrs; j++)
			if (!strcmp(R->frs[j].fs, fps[i].fs)) {
				fr = &R->frs[j];
				k = j;
			}
		if (!fr)
			continue;
		int going = !fr->outcome || !strcmp(fr->outcome, "running") || !strcmp(fr->outcome, "interrupted");
		int recorded = fr->res && fr->ops.n == w->n && fr->log_path && file_exists(fr->log_path) &&
			       fr->base_image && file_exists(fr->base_image);
		if (going && !recorded) {
			if (crashdb_delete_fsrun(db, fr->id, e) < 0)
				return -1;
			note("%s: its recording had not finished: recording it again", fps[i].fs);
			continue;
		}
		if (crashdb_read_states(db, fr->id, CRASHDB_VERDICTS | CRASHDB_TREE, &R->states[k], &R->nstates[k], e) < 0)
			return -1;
		R->r[i] = (struct fs_resume){ fr, R->states[k], R->nstates[k], !going };
		fps[i].resume = &R->r[i];
		if (going)
			note("%s: %zu crash state%s checked before it stopped: going on", fps[i].fs, R->nstates[k],
			     R->nstates[k] == 1 ? "" : "s");
	}
	return 0;
}

void crashdb_resume_free(struct crashdb_resume *R)
{
	for (size_t j = 0; j < R->nfrs; j++)
		crashdb_states_free(R->states[j], R->nstates[j]);
	free(R->states);
	free(R->nstates);
	free(R->r);
	crashdb_fsruns_free(R->frs, R->nfrs);
	memset(R, 0, sizeof(*R));
}

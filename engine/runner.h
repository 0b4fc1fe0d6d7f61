/*
 * runner.h - the core loop for one file system: record the workload
 * (record.h), enumerate crash states from the write log (states.h), check
 * each state in a checker guest (check.h) and store it in crashdb, one
 * transaction per state. `crashlab run` and `crashlab bench check` drive it.
 */
#ifndef CRASHLAB_RUNNER_H
#define CRASHLAB_RUNNER_H

#include "crashdb/crashdb.h"
#include "judge/models.h"
#include "engine/states.h"
#include "engine/vm.h"
#include "core/workload.h"

struct lab_run_params {
	const struct wl_workload *w;
	const struct lab_vm_config *guest;  /* kernel, initrd, accel */
	long long size;                     /* test disk size */
	enum lab_crash_mode mode;
	uint64_t seed;
	size_t max_states;                  /* 0 = the default cap */
	int torn;
	const char *workdir;                /* overlays (removed) and write logs (kept) */
	const char *models;                 /* --model list (NULL: the default per fs, models.h) */
};

/* What the run table shows for one file system. */
struct lab_fs_summary {
	const char *fs;
	size_t states, mount_fail, fsck_fail, distinct;
	const char *outcome;
	char error[1024];
	double ms;
	unsigned models;                    /* the models selected for this fs (bit set) */
	size_t verdicts[LAB_M_COUNT + 1][LAB_V_COUNT]; /* verdict counts per model (and universal) */
	size_t judged, unexplained;         /* states judged; states no set of ops explains */
	char *sim_notes;                    /* simulator/guest disagreements, or NULL (malloc'd) */
};

/* Read and parse a workload file into text and w; a missing file dies
 * with 66, a parse error with 65 and its file:line:col message. */
void lab_workload_load(const char *file, struct sbuf *text, struct wl_workload *w);

/* Record, enumerate, check and store one file system. Returns 0, or the
 * exit code of a guest failure (the fs run is stored with its outcome). */
int lab_run_fs(struct crashdb *db, int64_t run_id, const char *fs, const char *mkfs_opts,
	       const char *mount_opts, const struct lab_run_params *p, struct lab_fs_summary *sum);

#endif

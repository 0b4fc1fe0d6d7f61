/*
 * run.h - what `crashlab run` (cmd/run.c: one workload, or a run to
 * resume) and its batches (cmd/run-batch.c: many workloads, -j workers)
 * share.
 */
#ifndef CRASHLAB_CMD_RUN_H
#define CRASHLAB_CMD_RUN_H

#include "cmd/cmd.h"
#include "core/workload.h"
#include "judge/sim.h"

/* The options of one run, as typed or as a resumed run stored them. */
struct run_args {
	const char *fs_list, *crash, *size_s, *model_list, *resume;
	struct strvec mkfs_opts, mount_opts;
	int seed, max_states, torn, check_only, no_dedup;
	int jobs;                    /* -j N; -1 when not given */
	const char *shard;           /* --shard I/N: the batch's I-th slice of N, or NULL */
};
void cmd_run_args_free(struct run_args *a);

/* "fs:opts" values of --mkfs-opts / --mount-opts for one fs, or NULL. */
const char *cmd_run_opts_for(const struct strvec *list, const char *fs);
/* Every FS:OPTS of list names a known fs (a usage error otherwise); one not in fss is warned about. */
void cmd_run_check_opts(const char *cmd, const struct strvec *list, const char *what, const struct strvec *fss);
/* What a workload most likely did not mean, said before anything runs:
 * an op the simulation says will fail (a mistyped path), and a [run]
 * without any op that makes something durable. */
void cmd_run_hints(const struct wl_workload *w, const struct sim *s, const char *file);

/* Every .wl file under dir (its subfolders too), in name order, appended to out. */
int cmd_run_find_workloads(const char *dir, struct strvec *out, struct errbuf *e);

/* Many workloads as one batch, one run each (engine/batch.h): the
 * positionals pos[0..npos) are .wl files and folders of them; orig is the
 * command's argv as typed (orig[0] is "run"), for
 * each run's own command line. Returns the exit code. */
int cmd_run_batch(struct cmd_ctx *ctx, int argc, char **orig, char **pos, int npos, struct run_args *a);

#endif

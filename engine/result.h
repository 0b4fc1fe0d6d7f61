/*
 * result.h - what a run produces, one type per concept: the run, one file
 * system of it (its recording, its write log, its ops and their results),
 * and one crash state (how it was built, what the checker guest saw, how
 * the judge explained it). The engine fills these and hands them to a sink
 * (engine/sink.h); crashdb stores them and its read API returns them again,
 * owned, for the viewers to render. Every string is malloc'd (or NULL) and
 * freed by the type's _free function.
 */
#ifndef CRASHLAB_ENGINE_RESULT_H
#define CRASHLAB_ENGINE_RESULT_H

#include <stdint.h>

#include "core/proto.h"
#include "core/workload.h"
#include "judge/models.h"

/* One `crashlab run` invocation. */
struct run_info {
	int64_t id;                  /* set by the sink that stores it (0: not stored) */
	char *started_at;            /* ISO 8601 UTC */
	char *finished_at;           /* NULL while running (or if the run was killed) */
	char *status;                /* running | ok | findings | failed | interrupted, and as read back
	                              * also crashed: 'running' with nobody holding its lock */
	int has_exit;                /* exit_code is set */
	int exit_code;               /* crashlab's exit code for the run (README "Exit codes") */
	char *cmdline;               /* the command line as typed (quoted) */
	char *accel;                 /* kvm | tcg */
	char *kernel_version;        /* from the bzImage header */
	char *kernel_key;            /* hash of source version + series + patches + config, or "user:<path>" */
	char *workload_file;
	char *workload_text;         /* the whole .wl text */
	char *crash_mode;            /* flush | write | reorder */
	int64_t seed;
	int64_t max_states;
	int torn;
	char *workdir;               /* its write logs, consoles and lock (the cache's runs/ folder) */
	int64_t pid;                 /* the crashlab process that runs it, 0 when unknown */
	int64_t resumes;             /* how many times it was resumed */
};

/* What the write log of a recording holds. */
struct log_summary {
	int64_t entries, committed, flushes, writes, discards, bytes;
	int truncated;               /* a torn last entry was dropped */
};

/* One file system of a run. */
struct fsrun {
	int64_t id;                  /* set by the sink */
	int64_t run_id;
	char *fs;
	char *mkfs_opts, *mount_opts;/* "" or NULL: the defaults */
	char *base_image;            /* path of the cached base image */
	char *log_path;              /* the write log, kept so every state can be rebuilt */
	char *qemu_cmdline;          /* the recording guest's QEMU command line */
	int64_t image_size;
	struct log_summary log;
	int64_t setup_end;           /* committed log entries after the setup's sync */
	char *outcome;               /* running | ok | panic | timeout | no-output | lost-connection | qemu-failed | error */
	char *error;                 /* what went wrong when outcome is not ok */
	double record_ms, check_ms;
	char *models;                /* the models it was judged for ("posix,ext4"); NULL: not judged */
	char *sim_notes;             /* where the simulator and the guest disagreed, or NULL */
	struct wl_workload ops;      /* every op, setup and run, as sent to the guest */
	struct op_result *res;       /* one per op; NULL when nothing was recorded */
};

/* One crash state. */
struct state_result {
	int64_t id;                  /* set by the sink */
	int idx;                     /* 0.. within the fs run */
	char *kind;                  /* flush | final | prefix | subset | torn */
	char *spec;                  /* the exact recipe (core/wlog.h spec text) */
	int64_t point;               /* ops with log_pos <= point completed */
	int last_completed_op;       /* highest [run] op id completed, 0 when none */
	int64_t n_nodes;             /* nodes in the observed tree (also when check.nodes was not read) */
	struct check_report check;   /* mount, fsck, the observed tree, times */
	struct judgement judge;      /* explanation and verdicts (judge.judged = 0: not judged) */
};

void run_info_free(struct run_info *r);
void fsrun_free(struct fsrun *f);
void state_result_free(struct state_result *s);
/* A deep copy of src into dst (freed with fsrun_free). */
void fsrun_dup(struct fsrun *dst, const struct fsrun *src);

/* An op that completed before state s's crash point. */
static inline int op_completed(const struct op_result *r, const struct state_result *s)
{
	return r->log_pos <= s->point;
}

#endif

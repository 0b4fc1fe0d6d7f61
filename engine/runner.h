/*
 * runner.h - the run loop, where a recording becomes crash states and each
 * state is checked, judged and handed to the sink:
 *
 *     per file system: record (backend) -> the write log (core/wlog.h)
 *       -> enumerate crash states (engine/states.h)
 *       -> per state: check (backend) -> judge (judge/judge.h) -> sink->state
 *
 * `crashlab run` and `crashlab bench check` drive it; storage is only
 * ever reached through the sink (engine/sink.h).
 */
#ifndef CRASHLAB_ENGINE_RUNNER_H
#define CRASHLAB_ENGINE_RUNNER_H

#include "engine/backend.h"
#include "engine/sink.h"
#include "engine/states.h"
#include "judge/models.h"

/* What every file system of a run shares. */
struct run_params {
	const struct wl_workload *w;
	const struct vm_config *guest;      /* kernel, initrd, accel */
	const struct backend *backend;      /* who runs the guests */
	long long size;                     /* test disk size */
	enum crash_mode mode;
	uint64_t seed;
	size_t max_states;                  /* 0 = the default cap */
	int torn;
	const char *workdir;                /* overlays (removed) and write logs (kept) */
	const char *models;                 /* --model list (NULL: the default per fs, judge/models.h) */
	long nr_fbarrier, nr_fdatabarrier;  /* the barrier calls' syscall numbers, -1 when none */
	/* A power cut now (crashlab lab's crash): of the enumerated states keep
	 * only the final one and the last flush's (the two ends of what the
	 * disk may hold now), and with since_op >= 0 also every state in which
	 * op since_op or a later one had completed (0: every state). The kept
	 * states are numbered 0.. again. */
	int cut_now;
	int cut_since_op;
	int quiet;                          /* no progress lines (a batch's workers: the batch has one) */
	/* Deduplication (crashlab run's default; --no-dedup turns it off):
	 * states whose rebuilt disks are the same (core/wlog.h content keys)
	 * are checked once, the others getting a copy of that check report with
	 * its times 0; states with the same input to the judge are judged once.
	 * 0: every state is checked and judged. */
	int dedup;
};

/* What a resumed fs run already has (crashlab run --resume): its stored
 * fs run with the recording, ops and results, and the states stored
 * before the run stopped, with their verdicts (and their trees: with
 * dedup, a later state with the same content copies a stored report that
 * is whole, and is checked otherwise). */
struct fs_resume {
	const struct fsrun *fr;
	const struct state_result *done;
	size_t ndone;
	int finished;                       /* the fs run had ended (ok or a failure): only count it */
};

/* One file system of a run. */
struct fs_params {
	const char *fs;
	const char *mkfs_opts;              /* NULL = defaults */
	const char *mount_opts;             /* NULL = defaults */
	const struct fs_resume *resume;     /* NULL: a fresh fs run */
};

/* What the run table shows for one file system. */
struct fs_summary {
	char fs[16];
	size_t states, mount_fail, fsck_fail, distinct;
	char outcome[32];                   /* as stored: ok, panic, error, ... */
	char error[1024];                   /* the first line of what went wrong, or "" */
	int exit_code;                      /* the failure's exit code, 0 when none */
	double ms;
	unsigned models;                    /* the models selected for this fs (bit set) */
	size_t verdicts[MODEL_COUNT + 1][V_COUNT]; /* verdict counts per model (and universal) */
	size_t judged, unexplained;         /* states judged; states no set of ops explains */
	/* What became of the crash states: built (enumerated) = resumed (stored
	 * before a resumed run stopped, counted) + deduplicated (a copy of an
	 * equal state's check report) + checked (sent to a checker guest) +
	 * those not reached when the fs run stopped. */
	size_t built, resumed, deduplicated, checked;
	size_t judged_once;                 /* judgements copied from a state with the same input to the judge */
	double key_ms;                      /* time spent on content keys (reading and hashing the log included) */
};

/* One file system: record, enumerate, check, judge and hand every state to
 * the sink. 0, or the exit code of a guest or input failure (the fs run is
 * stored with its outcome and sum says why); -1 with e when the sink failed.
 * With f->resume the recording is the stored one and the states already
 * stored are counted, not checked again (their specs must be the ones the
 * log gives again). A stop request (host/intr.h) ends it between two steps
 * with the outcome "interrupted" and its exit code (130 for SIGINT). */
int runner_fs(const struct run_params *p, const struct fs_params *f, const struct run_info *run,
	      const struct sink *sink, struct fs_summary *sum, struct errbuf *e);

/* The whole run: run_begin (not for a run that has an id: it is resumed),
 * every file system in order, run_end with the status and exit code set.
 * Returns the run's exit code (README "Exit codes": 1 when a selected model
 * has a LOST or a universal rule is broken; 128 + the signal when it was
 * interrupted, status "interrupted"), or -1 with e when the sink failed. */
int runner_run(const struct run_params *p, const struct fs_params *fss, size_t n, struct run_info *run,
	       const struct sink *sink, struct fs_summary *sums, struct errbuf *e);

/* The end of a run: its exit code from its fs runs' summaries and the
 * first failure's code rc (0 when none): 1 for a finding, 128 + the signal
 * when interrupted; run's status, has_exit and exit_code are set. */
int runner_run_status(const struct fs_summary *sums, size_t n, int rc, struct run_info *run);

#endif

/*
 * lab.h - a live lab session (crashlab lab): one recording guest per file
 * system stays up while ops are typed, each op runs at once on every file
 * system, and a power cut "now" is a snapshot of each write log recorded so
 * far, which the run loop (engine/runner.h) turns into crash states,
 * checks, judges and hands to a sink like any recording.
 *
 *     lab_start -> lab_op ... -> (a crash: runner_run with lab_backend)
 *               -> lab_op ... -> lab_reset -> ... -> lab_stop
 *
 * The session's ops are [run] ops after the setup's sync, and a setup
 * (lab_setup: a loaded workload's [setup]) runs before that sync, exactly
 * as `crashlab run` records a workload: lab_workload_text is that
 * workload, and `crashlab run` on it records the same ops the same way.
 */
#ifndef CRASHLAB_ENGINE_LAB_H
#define CRASHLAB_ENGINE_LAB_H

#include <stddef.h>

#include "core/workload.h"
#include "engine/backend.h"
#include "engine/runner.h"

struct lab_params {
	const char *const *fs;             /* the file systems, in column order */
	size_t nfs;
	const struct vm_config *guest;     /* kernel, initrd, accel */
	long long size;                    /* test disk size */
	long nr_fbarrier, nr_fdatabarrier; /* the barrier calls' syscall numbers, -1 when none */
	const char *workdir;               /* where the live overlays and write logs go (a folder per reset) */
};

/* One file system's recording guest. */
struct lab_fs {
	const char *fs;
	struct recording rec;              /* the live one: overlay, log, base, setup_end, command line */
	struct record_session *s;          /* NULL when the guest is down */
	struct op_result *res;             /* one per session op; for ops sent while it was down: err = -1 */
	char down[2048];                   /* why it is down, or "" */
	int code;                          /* the exit code of that failure */
};

struct lab {
	struct lab_params p;
	struct lab_fs *fs;
	size_t nfs;
	struct wl_op *ops;                 /* the session's ops, ids 1..n: [setup] ones first */
	size_t nops, cap;
	size_t nsetup;                     /* ops[0..nsetup) are the setup, run before the setup's sync */
	int generation;                    /* how many times the file systems were made fresh */
	char *dir;                         /* this generation's folder */
	double boot_ms;                    /* the last start, all guests */
};

/* Start every file system's recording guest on a fresh disk (and the empty
 * setup's sync). A file system whose guest fails is kept down with the
 * reason (lab_fs.down); 0 when at least one is up, else -1 with e. */
int lab_start(struct lab *L, const struct lab_params *p, struct errbuf *e);
/* Run op (its id and section are set here) on every file system that is
 * up; the op joins the session. A guest that fails is down from then on
 * (its result has err -1). 0, or -1 when no guest is up any more. */
int lab_op(struct lab *L, const struct wl_op *op);
/* Is op i's result on fs k a result (not "the guest was down")? */
int lab_has_result(const struct lab *L, size_t k, size_t i);
/* Fresh file systems: stop every guest and start new ones; keep_ops: run
 * the session's ops again on them (a replay), else forget them. */
int lab_reset(struct lab *L, int keep_ops, struct errbuf *e);
/* Fresh file systems with a setup: every guest starts again, runs these
 * ops and the setup's sync, as `crashlab run` runs a workload's [setup];
 * the session's ops are forgotten. 0, or -1 as lab_start. */
int lab_setup(struct lab *L, const struct wl_op *ops, size_t n, struct errbuf *e);
/* Cut the power of every guest and free everything. */
void lab_stop(struct lab *L);

/* The session as a workload file (`crashlab run` records it the same way):
 * a comment, [run] and one canonical op line per op. Malloc'd. */
char *lab_workload_text(const struct lab *L, const char *comment);

/* A backend whose record call is a snapshot of the live recording of
 * record_opts.fs (its write log copied into record_opts.workdir, as far as
 * it is whole, and the results of the session's first w->n ops), and whose
 * checker is the QEMU one. The guests go on. */
void lab_backend(struct lab *L, struct backend *out);

#endif

/*
 * batch.h - many workloads as one batch: every (workload, file system) job
 * through the run loop (engine/runner.h), spread over worker threads that
 * each keep their own guests (a backend per worker, e.g. engine/pool.h),
 * and stored in one fixed order whatever finished first:
 *
 *     workers:  job -> runner_fs -> an in-memory sink (the job's calls)
 *     caller:   the jobs' calls, in the batch's order -> the real sink
 *
 * Each workload is one run (run_begin when its first job is stored,
 * run_end after its last), so show, report, browse and compare read a
 * batch's runs like any other. Because the store sees the same calls in
 * the same order, a batch stores the same rows, with the same ids, for any
 * number of workers: only times differ. A job whose guest failed is run
 * again once in a fresh guest, and nothing of the failed attempt is
 * stored.
 */
#ifndef CRASHLAB_ENGINE_BATCH_H
#define CRASHLAB_ENGINE_BATCH_H

#include "engine/runner.h"

/* One workload of the batch, and its run. */
struct batch_item {
	const struct wl_workload *w;
	struct run_info *run;        /* described by the caller, workdir included (created when missing) */
	struct fs_summary *sums;     /* nfs of them: filled as its jobs are stored */
	int begun, ended;            /* its run_begin / run_end were called */
	int rc;                      /* the run's exit code once ended */
};

/* How far the batch is (for a progress line). */
struct batch_stats {
	size_t jobs, jobs_done, jobs_stored;
	size_t runs, runs_done;
	size_t states;               /* crash states stored */
	size_t retries;              /* jobs run again after a guest failure */
	size_t peak_held;            /* jobs done but held back at once to keep the order */
	double elapsed;              /* seconds since batch_run started */
};

struct batch_params {
	struct run_params p;         /* what every job shares; w, workdir, backend and quiet are set per job */
	const struct fs_params *fss;
	size_t nfs;
	struct batch_item *items;
	size_t n;
	int workers;                 /* threads, >= 1 */
	size_t chunk;                /* workloads a worker takes at once, on one fs (0: batch_chunk(n, nfs)) */
	int live_fs;                 /* file systems whose guests a worker's backend keeps up at once, the least
	                              * recently used one's stopped for another (0: 1); a worker then prefers
	                              * units of those */
	/* Each worker's backend, made and freed in the worker's thread. */
	const struct backend *(*backend_new)(void *ctx);
	void (*backend_free)(void *ctx, const struct backend *b);
	/* How many guests of b have failed so far (NULL: only a job's outcome says). */
	size_t (*guest_failures)(void *ctx, const struct backend *b);
	void *ctx;
	/* In the caller's thread: about once a second and after each stored job. */
	void (*progress)(void *ctx, const struct batch_stats *st);
	/* In the caller's thread: an item's run has ended (run_end stored). */
	void (*run_done)(void *ctx, struct batch_item *it);
};

/* How many workloads a chunk of a batch of n workloads on nfs file systems
 * has: 16, fewer for small batches so there is work to share. The batch
 * stores its jobs chunk by chunk (in a chunk, file system by file system),
 * so a slice of whole chunks, run as a batch with the same chunk size,
 * stores a contiguous part of what the whole batch stores, in the same
 * order: what makes shards (run --shard) merge into the batch's database. */
size_t batch_chunk(size_t n, size_t nfs);

/* Run the batch, storing through sink (from the caller's thread only).
 * Returns the batch's exit code: the first run failure's code in item
 * order, else 1 when a run has findings, else 0 (128 + the signal when
 * interrupted); -1 with e when the sink failed. A stop request
 * (host/intr.h) ends every job between two steps: what was done is stored,
 * a run that was begun ends "interrupted", runs not begun are not stored. */
int batch_run(const struct batch_params *bp, const struct sink *sink, struct batch_stats *st, struct errbuf *e);

#endif

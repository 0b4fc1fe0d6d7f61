/*
 * sink.h - the only way the engine reports results: a struct of callbacks.
 * The run loop (engine/runner.c) calls them in this order:
 *
 *     run_begin
 *       fsrun_begin, fsrun_recorded, state (once per crash state), fsrun_end
 *                                                              (per fs)
 *     run_end
 *
 * A resumed run (crashlab run --resume) was begun before: its run and the
 * fs runs that have their recording stored go on without run_begin,
 * fsrun_begin and fsrun_recorded.
 *
 * Each callback that stores something sets the id field of what it got;
 * a callback may be NULL (nothing to do). One that fails returns -1 with e
 * set, and the run stops with that error. crashdb/ implements a sink over
 * sqlite (crashdb_sink), the tests one in memory.
 */
#ifndef CRASHLAB_ENGINE_SINK_H
#define CRASHLAB_ENGINE_SINK_H

#include "engine/result.h"

struct sink {
	void *ctx;
	int (*run_begin)(void *ctx, struct run_info *run, struct errbuf *e);
	/* The fs run starts: fs, options and image size are known, nothing else yet. */
	int (*fsrun_begin)(void *ctx, struct fsrun *fr, struct errbuf *e);
	/* The recording is over: its log, ops and their results, models are
	 * known, so an interrupted run can go on from here (--resume). */
	int (*fsrun_recorded)(void *ctx, const struct fsrun *fr, struct errbuf *e);
	/* One state, checked and judged, stored as a whole. */
	int (*state)(void *ctx, const struct fsrun *fr, struct state_result *st, struct errbuf *e);
	/* The fs run ended: its recording, log summary, ops, models and outcome are final. */
	int (*fsrun_end)(void *ctx, const struct fsrun *fr, struct errbuf *e);
	/* The run ended: status and exit code are set. */
	int (*run_end)(void *ctx, const struct run_info *run, struct errbuf *e);
};

#endif

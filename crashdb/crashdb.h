/*
 * crashdb.h - the sqlite store of everything a run produced, at the edge of
 * the engine: it is a sink (engine/sink.h) for the run loop, and its read
 * API gives the same types back, owned, so every view (run table, show,
 * report, browse) only renders. Schema and migrations: crashdb/SCHEMA.md.
 *
 *   crashdb.c  open, identity check, migrations
 *   write.c    the sink: a run, its fs runs, each state with its tree and verdicts
 *   read.c     runs, fs runs with their ops, states with their trees and verdicts
 *   judge.c    judging stored states that have no verdicts (the judge, then write.c)
 *   resume.c   what a stopped run has, for crashlab run --resume
 *   merge.c    the runs of another database copied in (crashlab db merge)
 */
#ifndef CRASHLAB_CRASHDB_CRASHDB_H
#define CRASHLAB_CRASHDB_CRASHDB_H

#include <stddef.h>
#include <stdint.h>

#include "engine/result.h"
#include "engine/runner.h"
#include "engine/sink.h"

#define CRASHDB_DEFAULT "crashlab.db"
/* The lock a running run holds in its workdir (flock): how a reader tells a
 * run that is going on from one that crashed. */
#define CRASHDB_RUN_LOCK "lock"

struct crashdb;

/* Open (creating it, or migrating it to the current schema); WAL, foreign
 * keys on. 0, or -1 with e (73: cannot be created or written: permissions,
 * read-only, disk full, locked by another process past the 30 s wait; 65:
 * not a crashlab database, damaged, or newer than this crashlab). Every
 * call that writes fails the same way, with the file as it was before. */
int crashdb_open(const char *path, struct crashdb **out, struct errbuf *e);
/* The same for a database that must exist already (66 when it does not). */
int crashdb_open_existing(const char *path, struct crashdb **out, struct errbuf *e);
/* Only to read (crashlab browse): the file is opened read-only and never
 * written, not even migrated: 66 when it does not exist or holds no runs
 * yet, 65 when it is not a crashlab database or not at the current schema
 * version (a command that writes it migrates it first). */
int crashdb_open_readonly(const char *path, struct crashdb **out, struct errbuf *e);
void crashdb_close(struct crashdb *db);
/* The schema version this crashlab writes (the number of migration steps). */
int crashdb_schema_version(void);
/* The schema version the file is at (PRAGMA user_version), or -1. */
int crashdb_version(struct crashdb *db);
/* The path the database was opened with. */
const char *crashdb_path(const struct crashdb *db);

/* --- writing: the sink --- */

/* A sink that stores everything the run loop hands it in db: every state
 * with its tree and verdicts in one transaction. */
void crashdb_sink(struct crashdb *db, struct sink *out);

/* A stopped run goes on (crashlab run --resume): status 'running' again,
 * r->pid the process that resumes it, one more resume counted. */
int crashdb_run_resume(struct crashdb *db, struct run_info *r, struct errbuf *e);
/* Remove a fs run and everything under it (one whose recording was not
 * stored before its run stopped: a resumed run records it again). */
int crashdb_delete_fsrun(struct crashdb *db, int64_t fsrun_id, struct errbuf *e);

/* What a stopped run has (resume.c): fps[i].resume is set for each file
 * system that has a stored fs run to count or go on with; a fs run whose
 * recording was never stored is removed (the run loop makes it again). */
struct crashdb_resume {
	struct fsrun *frs;
	size_t nfrs;
	struct state_result **states;   /* per fs run, its stored states with verdicts */
	size_t *nstates;
	struct fs_resume *r;            /* per fps[i] */
};
int crashdb_resume_fs(struct crashdb *db, const struct run_info *run, const struct wl_workload *w,
		      struct fs_params *fps, size_t n, struct crashdb_resume *R, struct errbuf *e);
void crashdb_resume_free(struct crashdb_resume *R);

/* --- merging (merge.c, crashlab db merge) --- */

/* What one input gave. skipped (may be NULL) is told each run left out, in
 * a sentence that names it and says why. */
struct crashdb_merge_stats {
	void (*skipped)(void *ctx, const char *msg);
	void *ctx;
	size_t runs, fsruns, states, rows;   /* copied (rows: of every table) */
	size_t duplicates, running;          /* runs skipped: in out already; still running or cut short */
	int64_t first_id, last_id;           /* the copied runs' new ids (0: none) */
};
/* Copy every run of in (opened with crashdb_open_readonly) that out has not
 * already, with everything under it, into out with new ids: the next ones
 * of out, in in's order, a run's fs runs (and a fs run's states)
 * consecutive. A run still running is skipped. Columns and child tables are
 * found in the schema, so what later migrations add is copied too. One
 * transaction: 0, or -1 with e and nothing of in stored (65: in was made by
 * another crashlab; 73: out cannot be written). */
int crashdb_merge(struct crashdb *out, struct crashdb *in, struct crashdb_merge_stats *ms, struct errbuf *e);

/* --- reading --- */

/* "last" or a run id as the user typed it: 0 with *id, or -1 with e (66
 * when there are no runs or no such run, 2 when arg is neither). */
int crashdb_resolve_run(struct crashdb *db, const char *arg, int64_t *id, struct errbuf *e);
/* One line of `crashlab list`: a run, its file systems and what it found. */
struct run_row {
	int64_t id;
	char *started_at, *status, *workload_file, *kernel_version;
	char *fs;                    /* "ext4,xfs", in the order they ran; NULL: none */
	char *options;               /* "f2fs:fsync_mode=strict ...": the non-default mkfs and mount options, or NULL */
	int64_t states;
	int64_t findings;            /* LOST under a model its fs run was judged for, or a universal rule broken */
	int64_t unjudged;            /* states without verdicts */
};
/* Every run, oldest first. 0, or -1 with e. */
int crashdb_list_runs(struct crashdb *db, struct run_row **out, size_t *n, struct errbuf *e);
void run_rows_free(struct run_row *v, size_t n);

/* Run id. 0, or -1 with e (66 when it does not exist). */
int crashdb_read_run(struct crashdb *db, int64_t id, struct run_info *out, struct errbuf *e);
/* The fs runs of a run (all, or only the one named fs), each with its ops
 * and their results, in the order they ran. 0, or -1 with e (66 when fs is
 * named and the run has no such file system; the message lists those it has). */
int crashdb_read_fsruns(struct crashdb *db, int64_t run_id, const char *fs, struct fsrun **out, size_t *n,
			struct errbuf *e);
void crashdb_fsruns_free(struct fsrun *v, size_t n);

enum {
	CRASHDB_TREE = 1 << 0,      /* read each state's observed tree (check.nodes) */
	CRASHDB_VERDICTS = 1 << 1,  /* read each state's verdicts (judge.v, judge.count) */
};
/* The states of a fs run in index order, with what `want` asks for
 * (CRASHDB_*). 0, or -1 with e. */
int crashdb_read_states(struct crashdb *db, int64_t fsrun_id, unsigned want, struct state_result **out, size_t *n,
			struct errbuf *e);
/* State idx of a fs run. 0, or -1 with e (66 naming the states it has). */
int crashdb_read_state(struct crashdb *db, const struct fsrun *fr, int idx, unsigned want, struct state_result *out,
		       struct errbuf *e);
void crashdb_states_free(struct state_result *v, size_t n);

/* --- judging what was stored without verdicts --- */

/* Judge the states of run_id that have no verdicts (all of them with
 * force), with the current judge, and store the verdicts; *judged (may be
 * NULL) gets how many. A fs run never judged gets its default models. 0, or
 * -1 with e. */
int crashdb_judge_run(struct crashdb *db, int64_t run_id, int force, size_t *judged, struct errbuf *e);
/* How many states of run_id have no verdicts yet. */
int64_t crashdb_unjudged(struct crashdb *db, int64_t run_id);

#endif

/*
 * crashdb.h - the sqlite store of everything a run produced. Everything a
 * user sees (run table, show, report, browse) is a query over it. Schema and
 * migrations: crashdb/SCHEMA.md.
 */
#ifndef CRASHLAB_CRASHDB_H
#define CRASHLAB_CRASHDB_H

#include <stddef.h>
#include <stdint.h>

#include "core/tree.h"

#define CRASHDB_DEFAULT "crashlab.db"

struct crashdb;
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;

/* One `crashlab run` invocation. */
struct crashdb_run {
	int64_t id;                  /* set by insert */
	const char *started_at;      /* ISO 8601 UTC */
	const char *cmdline;         /* the command line as typed (quoted) */
	const char *accel;           /* kvm | tcg */
	const char *kernel_version;  /* from the bzImage header */
	const char *kernel_key;      /* hash of source version + series + patches + config, or "user:<path>" */
	const char *workload_file;
	const char *workload_text;   /* the whole .wl text */
	const char *crash_mode;      /* flush | write | reorder */
	int64_t seed;
	int64_t max_states;
	int torn;
};

/* One file system of a run: its recording and its log. */
struct crashdb_fsrun {
	int64_t id;                  /* set by insert */
	int64_t run_id;
	const char *fs;
	const char *mkfs_opts;
	const char *mount_opts;
	const char *base_image;      /* cache key / path of the base image */
	const char *log_path;        /* the write log, kept so every state can be rebuilt */
	int64_t image_size;
	const char *qemu_cmdline;    /* the recording guest's full QEMU command line */
	/* log summary (filled by crashdb_fsrun_update after the recording) */
	int64_t log_entries, log_committed, log_flushes, log_writes, log_discards, log_bytes;
	int log_truncated;           /* a truncated entry was dropped at the end */
	int64_t setup_end;           /* committed count after the setup's sync */
	const char *outcome;         /* ok | panic | timeout | no-output | lost-connection | qemu-failed | error */
	const char *error;           /* message when outcome != ok */
	double record_ms, check_ms;
};

/* One op as carried out in the recording guest. */
struct crashdb_op {
	int op_id;                   /* 1..n over the whole workload */
	int section;                 /* 0 setup, 1 run */
	const char *text;            /* canonical op line */
	int line;                    /* source line */
	int64_t ret;
	int err;                     /* errno, 0 when none */
	uint64_t ino, ino2;
	int64_t log_pos;             /* committed log count when the op returned */
	double ms;
};

/* One crash state and how checking it went. */
struct crashdb_state {
	int64_t id;                  /* set by insert */
	int idx;                     /* 0.. within the fs run */
	const char *kind;            /* flush | final | prefix | subset | torn */
	const char *spec;            /* the exact recipe (core/wlog.h spec text) */
	int64_t point;               /* ops with log_pos <= point completed */
	int last_completed_op;       /* highest op id completed (0 if none) */
	int mount_ok;
	const char *mount_msg;       /* mount error output when !mount_ok */
	int fsck_status;             /* fsck exit status, -1 when not run */
	int fsck_clean;
	const char *fsck_output;
	const char *tree_hash;       /* hash of the tree lines: equal trees, equal hash */
	double ms_replay, ms_mount, ms_capture, ms_fsck, ms_other;
};

/* How a state was judged (judge/models.h), stored with its verdicts. */
struct crashdb_judgement {
	int judged;                  /* 0: not judged (the checker guest went down) */
	int explained;               /* 1: some set of op pieces reproduces the state */
	const char *difference;      /* the first difference when not explained */
	const char *timeline;        /* one mark per op (judge/explain.h EX_MARK_*) */
};

/* One verdict: state x model x rule (GUARANTEES.md "Verdicts"). */
struct crashdb_verdict {
	const char *model;           /* posix, ext4, ..., or universal (U1-U5) */
	const char *rule;            /* rule id, e.g. fsync.file, somc.order, U4 */
	const char *verdict;         /* kept | LOST | bonus | gone | broken */
	int op_id;                   /* the op whose effect is judged, 0 when none */
	int trigger_op;              /* the op that made the promise, 0 when none */
	const char *path;            /* the object */
	const char *expected;        /* the promised value */
	const char *observed;        /* what the state shows */
	const char *reason;          /* the one-sentence explanation */
	const char *cite;            /* the rule's citation */
};

/* Open (creating or migrating to the current schema); WAL, foreign keys on.
 * 0, or -1 with a one-line message in err. */
int crashdb_open(const char *path, struct crashdb **out, char *err, size_t errlen);
void crashdb_close(struct crashdb *db);
sqlite3 *crashdb_sqlite(struct crashdb *db);
/* The schema version the file is at (PRAGMA user_version). */
int crashdb_version(struct crashdb *db);
/* The last sqlite error message. */
const char *crashdb_error(struct crashdb *db);

/* --- for the commands that read a database (show, report) --- */

/* Open an existing database (migrating it); dies with 66 when it does not
 * exist and 65 when it cannot be read, naming the file. */
struct crashdb *crashdb_open_existing(const char *path);
/* "last" or a run id given by the user of command cmd (for messages): the
 * run id; dies with 66 when there are no runs yet, 2 when arg is neither. */
int64_t crashdb_run_resolve(struct crashdb *db, const char *arg, const char *cmd);
/* Prepare sql; dies with 65 naming the database when it fails. */
sqlite3_stmt *crashdb_prepare(struct crashdb *db, const char *sql);
/* Die with 65: "cannot read WHAT from 'db': sqlite's message". */
_Noreturn void crashdb_read_die(struct crashdb *db, const char *what);
/* Column i as a malloc'd string, or NULL. */
char *crashdb_col_text(sqlite3_stmt *st, int i);
/* The observed tree of a state (in storage order; free each node with
 * tree_node_free, then the array). Returns the count. */
size_t crashdb_nodes_read(struct crashdb *db, int64_t state_id, struct tree_node **out);

/* Writers; each returns 0 (or the new id, > 0) and -1 on error. */
int64_t crashdb_run_insert(struct crashdb *db, struct crashdb_run *r);
int crashdb_run_finish(struct crashdb *db, int64_t run_id, const char *status, int exit_code);
int64_t crashdb_fsrun_insert(struct crashdb *db, struct crashdb_fsrun *f);
int crashdb_fsrun_update(struct crashdb *db, const struct crashdb_fsrun *f);
/* All ops of a fs run, in one transaction. */
int crashdb_ops_insert(struct crashdb *db, int64_t fsrun_id, const struct crashdb_op *ops, size_t n);
/* One state with its observed tree, in one transaction. */
int64_t crashdb_state_insert(struct crashdb *db, int64_t fsrun_id, struct crashdb_state *s,
			     const struct tree_node *nodes, size_t n);

/* A state's judgement and its verdicts, in one transaction. */
int crashdb_judgement_insert(struct crashdb *db, int64_t state_id, const struct crashdb_judgement *j,
			     const struct crashdb_verdict *v, size_t n);
/* The models a fs run was judged for (comma-separated), and simulator notes (NULL: none). */
int crashdb_fsrun_judge_info(struct crashdb *db, int64_t fsrun_id, const char *models, const char *sim_notes);

#endif

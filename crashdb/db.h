/*
 * db.h - what the files of crashdb/ share: the connection with its cached
 * statements, and the helpers that turn sqlite's failures into errbufs.
 * Not for use outside crashdb/.
 */
#ifndef CRASHLAB_CRASHDB_DB_H
#define CRASHLAB_CRASHDB_DB_H

#include <sqlite3.h>

#include "crashdb/crashdb.h"

enum db_stmt {
	ST_RUN_INSERT,
	ST_RUN_FINISH,
	ST_RUN_RESUME,
	ST_FSRUN_DELETE,
	ST_FSRUN_INSERT,
	ST_FSRUN_UPDATE,
	ST_OP_INSERT,
	ST_OPS_DELETE,
	ST_STATE_INSERT,
	ST_NODE_INSERT,
	ST_VERDICT_INSERT,
	ST_VERDICTS_DELETE,
	ST_STATE_JUDGED,
	ST_FSRUN_JUDGE,
	ST_COUNT
};

struct crashdb {
	sqlite3 *db;
	char *path;                  /* as given to crashdb_open, for messages */
	sqlite3_stmt *st[ST_COUNT];  /* prepared on first use (write.c) */
	int busy_ms;                 /* how long a statement waits for another process's lock */
};

/* "<what> in '<file>': <sqlite's message>[; advice]" into e with code (73
 * for writes, 65 for reads), except that sqlite's reason decides when it
 * is the file's state: full, read-only or locked past the wait 73, damaged
 * 65, a row the schema refuses 70. Returns -1. */
int db_fail(struct crashdb *db, struct errbuf *e, int code, const char *what);
int db_exec(struct crashdb *db, const char *sql, struct errbuf *e, const char *what);
/* A statement for reading (finalize it); NULL with e (65). */
sqlite3_stmt *db_prepare(struct crashdb *db, const char *sql, struct errbuf *e);
/* One group of writes: a transaction, or a savepoint when the caller holds
 * one; end it committed when ok, else rolled back. what begins the message
 * when starting or committing fails (NULL: "cannot start a transaction",
 * "cannot commit"). */
int db_tx_begin(struct crashdb *db, int *nested, const char *what, struct errbuf *e);
int db_tx_end(struct crashdb *db, int nested, int ok, const char *what, struct errbuf *e);
/* A read of several statements that must see one state of the file (a
 * writer may commit between them): a read transaction, unless the caller
 * holds a transaction already. 1 when begun, 0 when the caller's, -1 with e;
 * db_read_end takes what db_read_begin returned. */
int db_read_begin(struct crashdb *db, struct errbuf *e);
void db_read_end(struct crashdb *db, int began);
/* One integer from a single-row query; -1 when it fails. */
int db_query_int(struct crashdb *db, const char *sql, int64_t *out);
void db_bind_text(sqlite3_stmt *st, int i, const char *s);
/* Column i as a malloc'd string, or NULL. */
char *db_col_text(sqlite3_stmt *st, int i);

/* write.c: a state's judgement and verdicts, replacing any stored before
 * (inside the caller's transaction, or its own; what begins the message of
 * a failure, NULL for "cannot store the verdicts of state ID"); the models
 * of a fs run. */
int db_write_judgement(struct crashdb *db, int64_t state_id, const struct judgement *j, const char *what,
		       struct errbuf *e);
int db_write_fsrun_models(struct crashdb *db, int64_t fsrun_id, const char *models, const char *sim_notes,
			  struct errbuf *e);

#endif

/*
 * crashdb.c - opening the sqlite store behind crashdb.h: its identity and
 * its schema.
 *
 * Method. The schema is the result of an ordered list of migration steps,
 * each a piece of SQL text. A file's PRAGMA user_version says how many steps
 * it has seen; opening applies the missing ones in order, each in its own
 * BEGIN IMMEDIATE transaction that also bumps user_version, so a crash or a
 * failing step leaves the file at the previous version, never half-way. The
 * version is read again inside the transaction, because another crashlab
 * (a parallel shard) may have migrated the file while we waited for the
 * lock. A file at a version newer than the last step is refused: an old
 * binary cannot know what a new column means. Steps are append-only: a step
 * that has shipped is never edited, a change is a new step (SCHEMA.md).
 *
 * The first step also stamps PRAGMA application_id, so a sqlite file that
 * belongs to something else is recognised and refused before any crashlab
 * table is added to it; a file that is not sqlite at all is caught on the
 * first read (SQLITE_NOTADB) and named in the message.
 *
 * Writers (write.c) use prepared statements cached in struct crashdb
 * (prepared on first use, reset after each). A state with its nodes and
 * verdicts, and a fs run's ops, go in one transaction each: BEGIN IMMEDIATE
 * takes the write lock up front, so the commit cannot fail with "busy"
 * half-way, and any failing row rolls the whole group back. When the caller
 * already holds a transaction the group becomes a savepoint inside it.
 *
 * A failure says what was being stored and sqlite's reason, and the reason
 * picks the exit code when it is the file's state rather than the caller's
 * (db_fail): full, read-only, or locked by another process past the busy
 * timeout is 73 with what to do, damaged is 65, a row the schema refuses is
 * 70. Opening reads the file's identity in one read transaction, so a file
 * that another crashlab is creating at that moment is never seen half made.
 */
#include "crashdb/db.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "host/sys.h"

/* "CrLb": PRAGMA application_id of every crashlab database. */
#define CRASHDB_APP_ID 0x43724c62
#define BUSY_TIMEOUT_MS 30000

/*
 * The migration steps; migrations[i] takes a file from version i to i + 1.
 * Append only. SCHEMA.md documents every table and column.
 */
static const char *const migrations[] = {
	/* 0 -> 1: runs, fs runs, ops, crash states and their observed trees */
	"CREATE TABLE runs (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  started_at TEXT NOT NULL,\n"
	"  finished_at TEXT,\n"
	"  status TEXT NOT NULL DEFAULT 'running',\n"
	"  exit_code INTEGER,\n"
	"  cmdline TEXT NOT NULL DEFAULT '',\n"
	"  accel TEXT,\n"
	"  kernel_version TEXT,\n"
	"  kernel_key TEXT,\n"
	"  workload_file TEXT,\n"
	"  workload_text TEXT,\n"
	"  crash_mode TEXT NOT NULL DEFAULT 'flush',\n"
	"  seed INTEGER NOT NULL DEFAULT 0,\n"
	"  max_states INTEGER NOT NULL DEFAULT 0,\n"
	"  torn INTEGER NOT NULL DEFAULT 0\n"
	");\n"
	"CREATE TABLE fsruns (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
	"  fs TEXT NOT NULL,\n"
	"  mkfs_opts TEXT,\n"
	"  mount_opts TEXT,\n"
	"  base_image TEXT,\n"
	"  log_path TEXT,\n"
	"  image_size INTEGER NOT NULL DEFAULT 0,\n"
	"  qemu_cmdline TEXT,\n"
	"  log_entries INTEGER NOT NULL DEFAULT 0,\n"
	"  log_committed INTEGER NOT NULL DEFAULT 0,\n"
	"  log_flushes INTEGER NOT NULL DEFAULT 0,\n"
	"  log_writes INTEGER NOT NULL DEFAULT 0,\n"
	"  log_discards INTEGER NOT NULL DEFAULT 0,\n"
	"  log_bytes INTEGER NOT NULL DEFAULT 0,\n"
	"  log_truncated INTEGER NOT NULL DEFAULT 0,\n"
	"  setup_end INTEGER NOT NULL DEFAULT 0,\n"
	"  outcome TEXT,\n"
	"  error TEXT,\n"
	"  record_ms REAL NOT NULL DEFAULT 0,\n"
	"  check_ms REAL NOT NULL DEFAULT 0\n"
	");\n"
	"CREATE INDEX fsruns_run ON fsruns(run_id, fs);\n"
	"CREATE TABLE ops (\n"
	"  fsrun_id INTEGER NOT NULL REFERENCES fsruns(id) ON DELETE CASCADE,\n"
	"  op_id INTEGER NOT NULL,\n"
	"  section INTEGER NOT NULL CHECK (section IN (0, 1)),\n"
	"  text TEXT NOT NULL,\n"
	"  line INTEGER NOT NULL DEFAULT 0,\n"
	"  ret INTEGER NOT NULL DEFAULT 0,\n"
	"  err INTEGER NOT NULL DEFAULT 0,\n"
	"  ino INTEGER NOT NULL DEFAULT 0,\n"
	"  ino2 INTEGER NOT NULL DEFAULT 0,\n"
	"  log_pos INTEGER NOT NULL,\n"
	"  ms REAL NOT NULL DEFAULT 0,\n"
	"  PRIMARY KEY (fsrun_id, op_id)\n"
	");\n"
	"CREATE TABLE states (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  fsrun_id INTEGER NOT NULL REFERENCES fsruns(id) ON DELETE CASCADE,\n"
	"  idx INTEGER NOT NULL,\n"
	"  kind TEXT NOT NULL,\n"
	"  spec TEXT NOT NULL,\n"
	"  point INTEGER NOT NULL,\n"
	"  last_completed_op INTEGER NOT NULL DEFAULT 0,\n"
	"  mount_ok INTEGER NOT NULL CHECK (mount_ok IN (0, 1)),\n"
	"  mount_msg TEXT,\n"
	"  fsck_status INTEGER NOT NULL DEFAULT -1,\n"
	"  fsck_clean INTEGER NOT NULL DEFAULT 0,\n"
	"  fsck_output TEXT,\n"
	"  tree_hash TEXT,\n"
	"  n_nodes INTEGER NOT NULL DEFAULT 0,\n"
	"  ms_replay REAL NOT NULL DEFAULT 0,\n"
	"  ms_mount REAL NOT NULL DEFAULT 0,\n"
	"  ms_capture REAL NOT NULL DEFAULT 0,\n"
	"  ms_fsck REAL NOT NULL DEFAULT 0,\n"
	"  ms_other REAL NOT NULL DEFAULT 0,\n"
	"  UNIQUE (fsrun_id, idx)\n"
	");\n"
	"CREATE INDEX states_tree ON states(fsrun_id, tree_hash);\n"
	"CREATE TABLE nodes (\n"
	"  state_id INTEGER NOT NULL REFERENCES states(id) ON DELETE CASCADE,\n"
	"  path TEXT NOT NULL CHECK (path <> ''),\n"
	"  type TEXT NOT NULL CHECK (type IN ('f', 'd', 'l', 'o')),\n"
	"  mode INTEGER NOT NULL,\n"
	"  uid INTEGER NOT NULL,\n"
	"  gid INTEGER NOT NULL,\n"
	"  size INTEGER NOT NULL,\n"
	"  nlink INTEGER NOT NULL,\n"
	"  ino INTEGER NOT NULL,\n"
	"  xattrs TEXT,\n"
	"  target TEXT,\n"
	"  blocks TEXT,\n"
	"  content BLOB,\n"
	"  PRIMARY KEY (state_id, path)\n"
	");\n",
	/* 1 -> 2: the judge: verdicts per state, model and rule; each state's explanation */
	"CREATE TABLE verdicts (\n"
	"  id INTEGER PRIMARY KEY,\n"
	"  state_id INTEGER NOT NULL REFERENCES states(id) ON DELETE CASCADE,\n"
	"  model TEXT NOT NULL,\n"
	"  rule TEXT NOT NULL,\n"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('kept', 'LOST', 'bonus', 'gone', 'broken')),\n"
	"  op_id INTEGER NOT NULL DEFAULT 0,\n"
	"  trigger_op INTEGER NOT NULL DEFAULT 0,\n"
	"  path TEXT NOT NULL DEFAULT '',\n"
	"  expected TEXT NOT NULL DEFAULT '',\n"
	"  observed TEXT NOT NULL DEFAULT '',\n"
	"  reason TEXT NOT NULL,\n"
	"  cite TEXT NOT NULL DEFAULT ''\n"
	");\n"
	"CREATE INDEX verdicts_state ON verdicts(state_id, model, verdict);\n"
	"ALTER TABLE states ADD COLUMN judged INTEGER NOT NULL DEFAULT 0;\n"
	"ALTER TABLE states ADD COLUMN explained INTEGER;\n"
	"ALTER TABLE states ADD COLUMN difference TEXT;\n"
	"ALTER TABLE states ADD COLUMN timeline TEXT;\n"
	"ALTER TABLE fsruns ADD COLUMN models TEXT;\n"
	"ALTER TABLE fsruns ADD COLUMN sim_notes TEXT;\n",
	/* 2 -> 3: runs that stop can go on (crashlab run --resume): where their
	 * logs and lock are, who runs them, how often they were resumed */
	"ALTER TABLE runs ADD COLUMN workdir TEXT;\n"
	"ALTER TABLE runs ADD COLUMN pid INTEGER;\n"
	"ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;\n",
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))


int db_fail(struct crashdb *db, struct errbuf *e, int code, const char *what)
{
	char advice[160] = "";
	switch (sqlite3_errcode(db->db)) {
	case SQLITE_FULL:
		code = EXIT_CANTCREAT;
		snprintf(advice, sizeof(advice), "; free some space where it is, or give another file with --db");
		break;
	case SQLITE_READONLY:
		code = EXIT_CANTCREAT;
		snprintf(advice, sizeof(advice), "; crashlab writes the file and its directory: check their permissions, or "
			 "give another file with --db");
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = EXIT_CANTCREAT;
		snprintf(advice, sizeof(advice), "; another process kept it locked for more than the %g s crashlab waits; "
			 "try again when it is done", db->busy_ms / 1000.0);
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		code = EXIT_DATAERR;
		snprintf(advice, sizeof(advice), "; the file is damaged: restore it or start a new one");
		break;
	case SQLITE_CONSTRAINT:
		code = EXIT_SOFTWARE; /* a row the schema refuses: the caller's bug, not the file's */
		break;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN: {
		/* e.g. no room for the -shm or -wal file beside it */
		int sys = sqlite3_system_errno(db->db);
		if (sys == ENOSPC || sys == EDQUOT)
			snprintf(advice, sizeof(advice), "; no space left on device: free some space where it is, or give "
				 "another file with --db");
		else if (sys)
			snprintf(advice, sizeof(advice), "; %s", errno_advice(sys));
		if (sys && exit_for_errno(sys) == EXIT_CANTCREAT)
			code = EXIT_CANTCREAT;
		break;
	}
	}
	return errbuf_set(e, code, "%s in '%s': %s%s", what, db->path, sqlite3_errmsg(db->db), advice);
}

int db_exec(struct crashdb *db, const char *sql, struct errbuf *e, const char *what)
{
	if (sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, e, EXIT_CANTCREAT, what);
	return 0;
}

sqlite3_stmt *db_prepare(struct crashdb *db, const char *sql, struct errbuf *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK) {
		db_fail(db, e, EXIT_DATAERR, "cannot read the schema");
		return NULL;
	}
	return st;
}

int db_tx_begin(struct crashdb *db, int *nested, const char *what, struct errbuf *e)
{
	*nested = !sqlite3_get_autocommit(db->db);
	return db_exec(db, *nested ? "SAVEPOINT crashdb_group" : "BEGIN IMMEDIATE", e,
		       what ? what : "cannot start a transaction");
}

int db_tx_end(struct crashdb *db, int nested, int ok, const char *what, struct errbuf *e)
{
	if (ok && db_exec(db, nested ? "RELEASE crashdb_group" : "COMMIT", e, what ? what : "cannot commit") == 0)
		return 0;
	/* The failure is already in e; the rollback must not replace it. */
	if (nested)
		sqlite3_exec(db->db, "ROLLBACK TO crashdb_group; RELEASE crashdb_group", NULL, NULL, NULL);
	else if (!sqlite3_get_autocommit(db->db))
		sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

int db_read_begin(struct crashdb *db, struct errbuf *e)
{
	if (!sqlite3_get_autocommit(db->db))
		return 0;
	if (sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, e, EXIT_DATAERR, "cannot start reading");
	return 1;
}

void db_read_end(struct crashdb *db, int began)
{
	/* Nothing was written: ending the read cannot lose anything. */
	if (began == 1 && sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK &&
	    !sqlite3_get_autocommit(db->db))
		sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
}

int db_query_int(struct crashdb *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

void db_bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

char *db_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

/* Apply every missing migration step, each in its own transaction. */
static int migrate(struct crashdb *db, struct errbuf *e)
{
	for (;;) {
		int64_t v;
		if (db_query_int(db, "PRAGMA user_version", &v) < 0)
			return db_fail(db, e, EXIT_DATAERR, "cannot read the schema version");
		if (v >= SCHEMA_VERSION)
			return 0;
		if (db_exec(db, "BEGIN IMMEDIATE", e, "cannot lock the database to migrate it") < 0)
			return -1;
		/* Another crashlab may have migrated while we waited for the lock. */
		if (db_query_int(db, "PRAGMA user_version", &v) < 0) {
			db_fail(db, e, EXIT_DATAERR, "cannot read the schema version");
			return db_tx_end(db, 0, 0, NULL, e);
		}
		if (v >= SCHEMA_VERSION)
			return db_tx_end(db, 0, 1, NULL, e);
		char what[64], bump[96];
		snprintf(what, sizeof(what), "cannot migrate from schema version %d to %d", (int)v, (int)v + 1);
		snprintf(bump, sizeof(bump), "PRAGMA application_id = %d; PRAGMA user_version = %d", CRASHDB_APP_ID,
			 (int)v + 1);
		if (db_exec(db, migrations[v], e, what) < 0 || db_exec(db, bump, e, what) < 0 ||
		    db_tx_end(db, 0, 1, what, e) < 0)
			return db_tx_end(db, 0, 0, NULL, e);
	}
}

/* Is this a crashlab database (or an empty file that can become one)? The
 * three numbers are read in one read transaction: another crashlab may be
 * creating the file this very moment, and its first step sets them all at
 * once, so read apart they could mix the file before and after it. */
static int check_identity(struct crashdb *db, struct errbuf *e)
{
	int64_t app, ver, ntables;
	if (sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(db, e, EXIT_DATAERR, "cannot read");
	if (db_query_int(db, "PRAGMA application_id", &app) < 0) {
		int code = sqlite3_errcode(db->db);
		if (code == SQLITE_NOTADB)
			errbuf_set(e, EXIT_DATAERR, "'%s' is not a crashlab database (not an sqlite file)", db->path);
		else if (code == SQLITE_CORRUPT)
			errbuf_set(e, EXIT_DATAERR, "'%s' is damaged (%s); restore it or start a new one", db->path,
				   sqlite3_errmsg(db->db));
		else
			db_fail(db, e, EXIT_DATAERR, "cannot read the database");
		return db_tx_end(db, 0, 0, NULL, e);
	}
	if (db_query_int(db, "PRAGMA user_version", &ver) < 0 ||
	    db_query_int(db, "SELECT count(*) FROM sqlite_master", &ntables) < 0) {
		db_fail(db, e, EXIT_DATAERR, "cannot read the schema");
		return db_tx_end(db, 0, 0, NULL, e);
	}
	if (db_tx_end(db, 0, 1, NULL, e) < 0)
		return -1;
	if (app != 0 && app != CRASHDB_APP_ID)
		return errbuf_set(e, EXIT_DATAERR, "'%s' is an sqlite database of another program (application id "
				  "0x%08" PRIx32 "), not a crashlab one", db->path, (uint32_t)app);
	if (ver > SCHEMA_VERSION)
		return errbuf_set(e, EXIT_DATAERR, "'%s' has schema version %" PRId64 "; this crashlab knows up to %d; "
				  "upgrade crashlab", db->path, ver, SCHEMA_VERSION);
	if (app == 0 && (ver != 0 || ntables != 0))
		return errbuf_set(e, EXIT_DATAERR, "'%s' is an sqlite database but not a crashlab one; give another file "
				  "with --db", db->path);
	return 0;
}

/* A handle on the file PATH opened with sqlite's FLAGS; when it cannot be
 * opened, db->db is NULL and e says why (CODE when the system gave no
 * reason). Either way the caller closes it with crashdb_close. */
static struct crashdb *db_open_file(const char *path, int flags, int code, struct errbuf *e)
{
	struct crashdb *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	int rc = sqlite3_open_v2(path, &db->db, flags, NULL);
	if (rc == SQLITE_OK)
		return db;
	int sys = db->db ? sqlite3_system_errno(db->db) : 0;
	if (sys == EISDIR)
		errbuf_set(e, EXIT_DATAERR, "'%s' is a directory, not a database; give a file with --db", path);
	else if (sys)
		errbuf_errno(e, sys, "cannot open '%s'", path);
	else
		errbuf_set(e, code, "cannot open '%s': %s", path, db->db ? sqlite3_errmsg(db->db) : sqlite3_errstr(rc));
	sqlite3_close(db->db);
	db->db = NULL;
	return db;
}

int crashdb_open(const char *path, struct crashdb **out, struct errbuf *e)
{
	*out = NULL;
	struct crashdb *db = db_open_file(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, EXIT_CANTCREAT, e);
	if (!db->db)
		goto fail;
	/* Test hook: CRASHLAB_TEST_DB_BUSY_MS=N waits N ms for a lock instead
	 * of 30 s, so the tests can hold one past the wait. */
	const char *busy = getenv("CRASHLAB_TEST_DB_BUSY_MS");
	db->busy_ms = busy && atoi(busy) > 0 ? atoi(busy) : BUSY_TIMEOUT_MS;
	sqlite3_busy_timeout(db->db, db->busy_ms);
	if (check_identity(db, e) < 0)
		goto fail;
	/* WAL: readers (show, browse) never block a running batch. A read-only
	 * file cannot switch; it is still readable, so that is not an error. */
	sqlite3_exec(db->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	if (db_exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", e, "cannot configure the database") < 0)
		goto fail;
	if (migrate(db, e) < 0)
		goto fail;
	*out = db;
	return 0;
fail:
	crashdb_close(db);
	return -1;
}

int crashdb_open_existing(const char *path, struct crashdb **out, struct errbuf *e)
{
	*out = NULL;
	if (!file_exists(path))
		return errbuf_set(e, EXIT_NOINPUT, "database '%s' does not exist; 'crashlab run' makes it, or name one "
				  "with --db", path);
	return crashdb_open(path, out, e);
}

int crashdb_open_readonly(const char *path, struct crashdb **out, struct errbuf *e)
{
	*out = NULL;
	if (!file_exists(path))
		return errbuf_set(e, EXIT_NOINPUT, "database '%s' does not exist; 'crashlab run' makes it, or name one "
				  "with --db", path);
	struct crashdb *db = db_open_file(path, SQLITE_OPEN_READONLY, EXIT_NOINPUT, e);
	if (!db->db)
		goto fail;
	db->busy_ms = BUSY_TIMEOUT_MS;
	sqlite3_busy_timeout(db->db, db->busy_ms);
	if (check_identity(db, e) < 0)
		goto fail;
	int v = crashdb_version(db);
	if (v == 0) {
		errbuf_set(e, EXIT_NOINPUT, "'%s' holds no runs yet; 'crashlab run' stores them", path);
		goto fail;
	}
	if (v != SCHEMA_VERSION) {
		errbuf_set(e, EXIT_DATAERR, "'%s' has schema version %d and this crashlab reads %d; a command that "
			   "writes it ('crashlab list') brings it up to date first", path, v, SCHEMA_VERSION);
		goto fail;
	}
	/* Nothing here writes; query_only makes sure of it. */
	if (db_exec(db, "PRAGMA query_only = 1; PRAGMA foreign_keys = ON", e, "cannot configure the database") < 0)
		goto fail;
	*out = db;
	return 0;
fail:
	crashdb_close(db);
	return -1;
}

void crashdb_close(struct crashdb *db)
{
	if (!db)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	sqlite3_close(db->db);
	free(db->path);
	free(db);
}

int crashdb_schema_version(void)
{
	return SCHEMA_VERSION;
}

int crashdb_version(struct crashdb *db)
{
	int64_t v;
	return db_query_int(db, "PRAGMA user_version", &v) < 0 ? -1 : (int)v;
}

const char *crashdb_path(const struct crashdb *db)
{
	return db->path;
}

/*
 * crashdb.c - the sqlite store behind crashdb.h.
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
 * Writers use prepared statements cached in struct crashdb (prepared on
 * first use, reset after each). A state and its nodes, and a fs run's ops,
 * go in one transaction each: BEGIN IMMEDIATE takes the write lock up
 * front, so the commit cannot fail with "busy" half-way, and any failing
 * row rolls the whole group back. When the caller already holds a
 * transaction the group becomes a savepoint inside it instead.
 */
#include "crashdb/crashdb.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/opt.h"
#include "host/util.h"

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
};

#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

enum stmt_id {
	ST_RUN_INSERT,
	ST_RUN_FINISH,
	ST_FSRUN_INSERT,
	ST_FSRUN_UPDATE,
	ST_OP_INSERT,
	ST_STATE_INSERT,
	ST_NODE_INSERT,
	ST_VERDICT_INSERT,
	ST_STATE_JUDGED,
	ST_FSRUN_JUDGE,
	ST_COUNT
};

#define NOW_UTC "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

static const char *const stmt_sql[ST_COUNT] = {
	[ST_RUN_INSERT] =
		"INSERT INTO runs (started_at, cmdline, accel, kernel_version, kernel_key, workload_file,"
		" workload_text, crash_mode, seed, max_states, torn)"
		" VALUES (COALESCE(?1, " NOW_UTC "), COALESCE(?2, ''), ?3, ?4, ?5, ?6, ?7,"
		" COALESCE(?8, 'flush'), ?9, ?10, ?11)",
	[ST_RUN_FINISH] =
		"UPDATE runs SET finished_at = " NOW_UTC ", status = ?2, exit_code = ?3 WHERE id = ?1",
	[ST_FSRUN_INSERT] =
		"INSERT INTO fsruns (run_id, fs, mkfs_opts, mount_opts, base_image, image_size, qemu_cmdline,"
		" log_entries, log_committed, log_flushes, log_writes, log_discards, log_bytes, log_truncated,"
		" setup_end, outcome, error, record_ms, check_ms, log_path)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
	[ST_FSRUN_UPDATE] =
		"UPDATE fsruns SET fs = COALESCE(?2, fs), mkfs_opts = COALESCE(?3, mkfs_opts),"
		" mount_opts = COALESCE(?4, mount_opts), base_image = COALESCE(?5, base_image),"
		" image_size = ?6, qemu_cmdline = COALESCE(?7, qemu_cmdline),"
		" log_entries = ?8, log_committed = ?9, log_flushes = ?10, log_writes = ?11,"
		" log_discards = ?12, log_bytes = ?13, log_truncated = ?14, setup_end = ?15,"
		" outcome = COALESCE(?16, outcome), error = COALESCE(?17, error),"
		" record_ms = ?18, check_ms = ?19, log_path = COALESCE(?20, log_path) WHERE id = ?1",
	[ST_OP_INSERT] =
		"INSERT INTO ops (fsrun_id, op_id, section, text, line, ret, err, ino, ino2, log_pos, ms)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_STATE_INSERT] =
		"INSERT INTO states (fsrun_id, idx, kind, spec, point, last_completed_op, mount_ok, mount_msg,"
		" fsck_status, fsck_clean, fsck_output, tree_hash, n_nodes, ms_replay, ms_mount, ms_capture,"
		" ms_fsck, ms_other)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
	[ST_NODE_INSERT] =
		"INSERT INTO nodes (state_id, path, type, mode, uid, gid, size, nlink, ino, xattrs, target,"
		" blocks, content) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[ST_VERDICT_INSERT] =
		"INSERT INTO verdicts (state_id, model, rule, verdict, op_id, trigger_op, path, expected, observed,"
		" reason, cite) VALUES (?1, ?2, ?3, ?4, ?5, ?6, COALESCE(?7, ''), COALESCE(?8, ''), COALESCE(?9, ''),"
		" ?10, COALESCE(?11, ''))",
	[ST_STATE_JUDGED] =
		"UPDATE states SET judged = ?2, explained = ?3, difference = ?4, timeline = ?5 WHERE id = ?1",
	[ST_FSRUN_JUDGE] =
		"UPDATE fsruns SET models = ?2, sim_notes = ?3 WHERE id = ?1",
};

struct crashdb {
	sqlite3 *db;
	char *path;                  /* as given to crashdb_open, for messages */
	sqlite3_stmt *st[ST_COUNT];  /* prepared on first use */
	char err[1024];              /* the last failure, with context */
};

static void set_err(struct crashdb *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(struct crashdb *db, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(db->err, sizeof(db->err), fmt, ap);
	va_end(ap);
}

/* Record a failed sqlite call: "<what> in '<file>': <sqlite message>". */
static int sql_fail(struct crashdb *db, const char *what)
{
	set_err(db, "%s in '%s': %s", what, db->path, sqlite3_errmsg(db->db));
	return -1;
}

static int exec(struct crashdb *db, const char *sql, const char *what)
{
	if (sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(db, what);
	return 0;
}

static sqlite3_stmt *stmt(struct crashdb *db, enum stmt_id id)
{
	if (!db->st[id] &&
	    sqlite3_prepare_v3(db->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &db->st[id], NULL) != SQLITE_OK) {
		sql_fail(db, "cannot prepare a statement");
		return NULL;
	}
	return db->st[id];
}

/* Run a cached statement that returns no rows, then reset it. */
static int step_done(struct crashdb *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		sql_fail(db, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

/* One group of writes: a transaction, or a savepoint in the caller's. */
static int tx_begin(struct crashdb *db, int *nested)
{
	*nested = !sqlite3_get_autocommit(db->db);
	return exec(db, *nested ? "SAVEPOINT crashdb_group" : "BEGIN IMMEDIATE", "cannot start a transaction");
}

static int tx_end(struct crashdb *db, int nested, int ok)
{
	if (ok) {
		if (exec(db, nested ? "RELEASE crashdb_group" : "COMMIT", "cannot commit") == 0)
			return 0;
	}
	/* The failure is already in db->err; the rollback must not replace it. */
	if (nested)
		sqlite3_exec(db->db, "ROLLBACK TO crashdb_group; RELEASE crashdb_group", NULL, NULL, NULL);
	else if (!sqlite3_get_autocommit(db->db))
		sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* One integer from a single-row query, or -1 with db->err set. */
static int query_int(struct crashdb *db, const char *sql, int64_t *out)
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

/* Apply every missing migration step, each in its own transaction. */
static int migrate(struct crashdb *db)
{
	for (;;) {
		int64_t v;
		if (query_int(db, "PRAGMA user_version", &v) < 0)
			return sql_fail(db, "cannot read the schema version");
		if (v >= SCHEMA_VERSION)
			return 0;
		if (exec(db, "BEGIN IMMEDIATE", "cannot lock the database to migrate it") < 0)
			return -1;
		/* Another crashlab may have migrated while we waited for the lock. */
		if (query_int(db, "PRAGMA user_version", &v) < 0) {
			sql_fail(db, "cannot read the schema version");
			return tx_end(db, 0, 0);
		}
		if (v >= SCHEMA_VERSION)
			return tx_end(db, 0, 1);
		char what[64], bump[96];
		snprintf(what, sizeof(what), "cannot migrate from schema version %d to %d", (int)v, (int)v + 1);
		snprintf(bump, sizeof(bump), "PRAGMA application_id = %d; PRAGMA user_version = %d", CRASHDB_APP_ID,
			 (int)v + 1);
		if (exec(db, migrations[v], what) < 0 || exec(db, bump, what) < 0 || tx_end(db, 0, 1) < 0)
			return tx_end(db, 0, 0);
	}
}

/* Is this a crashlab database (or an empty file that can become one)? */
static int check_identity(struct crashdb *db)
{
	int64_t app, ver, ntables;
	if (query_int(db, "PRAGMA application_id", &app) < 0) {
		int code = sqlite3_errcode(db->db);
		if (code == SQLITE_NOTADB)
			set_err(db, "'%s' is not a crashlab database (not an sqlite file)", db->path);
		else if (code == SQLITE_CORRUPT)
			set_err(db, "'%s' is damaged (%s); restore it or start a new one", db->path,
				sqlite3_errmsg(db->db));
		else
			set_err(db, "cannot read '%s': %s", db->path, sqlite3_errmsg(db->db));
		return -1;
	}
	if (query_int(db, "PRAGMA user_version", &ver) < 0 ||
	    query_int(db, "SELECT count(*) FROM sqlite_master", &ntables) < 0)
		return sql_fail(db, "cannot read the schema");
	if (app != 0 && app != CRASHDB_APP_ID) {
		set_err(db, "'%s' is an sqlite database of another program (application id 0x%08" PRIx32 "), "
			"not a crashlab one", db->path, (uint32_t)app);
		return -1;
	}
	if (ver > SCHEMA_VERSION) {
		set_err(db, "'%s' has schema version %" PRId64 "; this crashlab knows up to %d; upgrade crashlab",
			db->path, ver, SCHEMA_VERSION);
		return -1;
	}
	if (app == 0 && (ver != 0 || ntables != 0)) {
		set_err(db, "'%s' is an sqlite database but not a crashlab one; give another file with --db",
			db->path);
		return -1;
	}
	return 0;
}

int crashdb_open(const char *path, struct crashdb **out, char *err, size_t errlen)
{
	struct crashdb *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	*out = NULL;
	int rc = sqlite3_open_v2(path, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		int sys = db->db ? sqlite3_system_errno(db->db) : 0;
		if (sys)
			set_err(db, "cannot open '%s': %s", path, errno_advice(sys));
		else
			set_err(db, "cannot open '%s': %s", path, db->db ? sqlite3_errmsg(db->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(db->db, BUSY_TIMEOUT_MS);
	if (check_identity(db) < 0)
		goto fail;
	/* WAL: readers (show, browse) never block a running batch. A read-only
	 * file cannot switch; it is still readable, so that is not an error. */
	sqlite3_exec(db->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	if (exec(db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", "cannot configure the database") < 0)
		goto fail;
	if (migrate(db) < 0)
		goto fail;
	*out = db;
	return 0;
fail:
	if (err && errlen)
		snprintf(err, errlen, "%s", db->err);
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

sqlite3 *crashdb_sqlite(struct crashdb *db)
{
	return db->db;
}

int crashdb_version(struct crashdb *db)
{
	int64_t v;
	if (query_int(db, "PRAGMA user_version", &v) < 0)
		return sql_fail(db, "cannot read the schema version");
	return (int)v;
}

const char *crashdb_error(struct crashdb *db)
{
	return db->err[0] ? db->err : sqlite3_errmsg(db->db);
}

int64_t crashdb_run_insert(struct crashdb *db, struct crashdb_run *r)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_RUN_INSERT);
	if (!st)
		return -1;
	bind_text(st, 1, r->started_at);
	bind_text(st, 2, r->cmdline);
	bind_text(st, 3, r->accel);
	bind_text(st, 4, r->kernel_version);
	bind_text(st, 5, r->kernel_key);
	bind_text(st, 6, r->workload_file);
	bind_text(st, 7, r->workload_text);
	bind_text(st, 8, r->crash_mode);
	sqlite3_bind_int64(st, 9, r->seed);
	sqlite3_bind_int64(st, 10, r->max_states);
	sqlite3_bind_int(st, 11, r->torn != 0);
	if (step_done(db, st, "cannot store the run") < 0)
		return -1;
	r->id = sqlite3_last_insert_rowid(db->db);
	return r->id;
}

int crashdb_run_finish(struct crashdb *db, int64_t run_id, const char *status, int exit_code)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_RUN_FINISH);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, status ? status : "ok");
	sqlite3_bind_int(st, 3, exit_code);
	if (step_done(db, st, "cannot finish the run") < 0)
		return -1;
	if (sqlite3_changes(db->db) == 0) {
		set_err(db, "run %" PRId64 " does not exist in '%s'", run_id, db->path);
		return -1;
	}
	return 0;
}

/* The 20 fsrun columns, in the order both fsrun statements number them. */
static void bind_fsrun(sqlite3_stmt *st, const struct crashdb_fsrun *f)
{
	bind_text(st, 2, f->fs);
	bind_text(st, 3, f->mkfs_opts);
	bind_text(st, 4, f->mount_opts);
	bind_text(st, 5, f->base_image);
	sqlite3_bind_int64(st, 6, f->image_size);
	bind_text(st, 7, f->qemu_cmdline);
	sqlite3_bind_int64(st, 8, f->log_entries);
	sqlite3_bind_int64(st, 9, f->log_committed);
	sqlite3_bind_int64(st, 10, f->log_flushes);
	sqlite3_bind_int64(st, 11, f->log_writes);
	sqlite3_bind_int64(st, 12, f->log_discards);
	sqlite3_bind_int64(st, 13, f->log_bytes);
	sqlite3_bind_int(st, 14, f->log_truncated != 0);
	sqlite3_bind_int64(st, 15, f->setup_end);
	bind_text(st, 16, f->outcome);
	bind_text(st, 17, f->error);
	sqlite3_bind_double(st, 18, f->record_ms);
	sqlite3_bind_double(st, 19, f->check_ms);
	bind_text(st, 20, f->log_path);
}

int64_t crashdb_fsrun_insert(struct crashdb *db, struct crashdb_fsrun *f)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_FSRUN_INSERT);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, f->run_id);
	bind_fsrun(st, f);
	char what[96];
	snprintf(what, sizeof(what), "cannot store fs run '%s' of run %" PRId64, f->fs ? f->fs : "?", f->run_id);
	if (step_done(db, st, what) < 0)
		return -1;
	f->id = sqlite3_last_insert_rowid(db->db);
	return f->id;
}

int crashdb_fsrun_update(struct crashdb *db, const struct crashdb_fsrun *f)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_FSRUN_UPDATE);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, f->id);
	bind_fsrun(st, f);
	if (step_done(db, st, "cannot update the fs run") < 0)
		return -1;
	if (sqlite3_changes(db->db) == 0) {
		set_err(db, "fs run %" PRId64 " does not exist in '%s'", f->id, db->path);
		return -1;
	}
	return 0;
}

int crashdb_ops_insert(struct crashdb *db, int64_t fsrun_id, const struct crashdb_op *ops, size_t n)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_OP_INSERT);
	int nested;
	if (!st || tx_begin(db, &nested) < 0)
		return -1;
	int ok = 1;
	for (size_t i = 0; i < n && ok; i++) {
		const struct crashdb_op *o = &ops[i];
		sqlite3_bind_int64(st, 1, fsrun_id);
		sqlite3_bind_int(st, 2, o->op_id);
		sqlite3_bind_int(st, 3, o->section);
		bind_text(st, 4, o->text);
		sqlite3_bind_int(st, 5, o->line);
		sqlite3_bind_int64(st, 6, o->ret);
		sqlite3_bind_int(st, 7, o->err);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)o->ino);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)o->ino2);
		sqlite3_bind_int64(st, 10, o->log_pos);
		sqlite3_bind_double(st, 11, o->ms);
		char what[96];
		snprintf(what, sizeof(what), "cannot store op %d of fs run %" PRId64, o->op_id, fsrun_id);
		ok = step_done(db, st, what) == 0;
	}
	return tx_end(db, nested, ok);
}

int64_t crashdb_state_insert(struct crashdb *db, int64_t fsrun_id, struct crashdb_state *s,
			     const struct tree_node *nodes, size_t n)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_STATE_INSERT);
	sqlite3_stmt *nt = stmt(db, ST_NODE_INSERT);
	int nested;
	if (!st || !nt || tx_begin(db, &nested) < 0)
		return -1;
	char what[128];
	snprintf(what, sizeof(what), "cannot store state %d of fs run %" PRId64, s->idx, fsrun_id);

	sqlite3_bind_int64(st, 1, fsrun_id);
	sqlite3_bind_int(st, 2, s->idx);
	bind_text(st, 3, s->kind);
	bind_text(st, 4, s->spec);
	sqlite3_bind_int64(st, 5, s->point);
	sqlite3_bind_int(st, 6, s->last_completed_op);
	sqlite3_bind_int(st, 7, s->mount_ok != 0);
	bind_text(st, 8, s->mount_msg);
	sqlite3_bind_int(st, 9, s->fsck_status);
	sqlite3_bind_int(st, 10, s->fsck_clean != 0);
	bind_text(st, 11, s->fsck_output);
	bind_text(st, 12, s->tree_hash);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)n);
	sqlite3_bind_double(st, 14, s->ms_replay);
	sqlite3_bind_double(st, 15, s->ms_mount);
	sqlite3_bind_double(st, 16, s->ms_capture);
	sqlite3_bind_double(st, 17, s->ms_fsck);
	sqlite3_bind_double(st, 18, s->ms_other);
	if (step_done(db, st, what) < 0)
		return tx_end(db, nested, 0);
	int64_t id = sqlite3_last_insert_rowid(db->db);

	int ok = 1;
	for (size_t i = 0; i < n && ok; i++) {
		const struct tree_node *t = &nodes[i];
		char type[2] = { t->type, '\0' };
		sqlite3_bind_int64(nt, 1, id);
		bind_text(nt, 2, t->path);
		sqlite3_bind_text(nt, 3, type, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(nt, 4, t->mode);
		sqlite3_bind_int64(nt, 5, t->uid);
		sqlite3_bind_int64(nt, 6, t->gid);
		sqlite3_bind_int64(nt, 7, (sqlite3_int64)t->size);
		sqlite3_bind_int64(nt, 8, t->nlink);
		sqlite3_bind_int64(nt, 9, (sqlite3_int64)t->ino);
		bind_text(nt, 10, t->xattrs);
		bind_text(nt, 11, t->target);
		bind_text(nt, 12, t->blocks);
		/* NULL stays NULL; a present empty content is an empty blob. */
		if (t->content)
			sqlite3_bind_blob64(nt, 13, t->content_len ? (const void *)t->content : "",
					    t->content_len, SQLITE_STATIC);
		else
			sqlite3_bind_null(nt, 13);
		if (step_done(db, nt, what) < 0) {
			size_t l = strlen(db->err);
			snprintf(db->err + l, sizeof(db->err) - l, " (node '%s')", t->path ? t->path : "");
			ok = 0;
		}
	}
	if (tx_end(db, nested, ok) < 0)
		return -1;
	s->id = id;
	return id;
}

int crashdb_judgement_insert(struct crashdb *db, int64_t state_id, const struct crashdb_judgement *jd,
			     const struct crashdb_verdict *v, size_t n)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_STATE_JUDGED);
	sqlite3_stmt *vt = stmt(db, ST_VERDICT_INSERT);
	int nested;
	if (!st || !vt || tx_begin(db, &nested) < 0)
		return -1;
	char what[96];
	snprintf(what, sizeof(what), "cannot store the verdicts of state %" PRId64, state_id);
	sqlite3_bind_int64(st, 1, state_id);
	sqlite3_bind_int(st, 2, jd->judged != 0);
	if (jd->judged)
		sqlite3_bind_int(st, 3, jd->explained != 0);
	else
		sqlite3_bind_null(st, 3);
	bind_text(st, 4, jd->difference && *jd->difference ? jd->difference : NULL);
	bind_text(st, 5, jd->timeline);
	int ok = step_done(db, st, what) == 0;
	if (ok && sqlite3_changes(db->db) == 0) {
		set_err(db, "state %" PRId64 " does not exist in '%s'", state_id, db->path);
		ok = 0;
	}
	for (size_t i = 0; i < n && ok; i++) {
		sqlite3_bind_int64(vt, 1, state_id);
		bind_text(vt, 2, v[i].model);
		bind_text(vt, 3, v[i].rule);
		bind_text(vt, 4, v[i].verdict);
		sqlite3_bind_int(vt, 5, v[i].op_id);
		sqlite3_bind_int(vt, 6, v[i].trigger_op);
		bind_text(vt, 7, v[i].path);
		bind_text(vt, 8, v[i].expected);
		bind_text(vt, 9, v[i].observed);
		bind_text(vt, 10, v[i].reason ? v[i].reason : "");
		bind_text(vt, 11, v[i].cite);
		ok = step_done(db, vt, what) == 0;
	}
	return tx_end(db, nested, ok);
}

int crashdb_fsrun_judge_info(struct crashdb *db, int64_t fsrun_id, const char *models, const char *sim_notes)
{
	db->err[0] = '\0';
	sqlite3_stmt *st = stmt(db, ST_FSRUN_JUDGE);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, fsrun_id);
	bind_text(st, 2, models);
	bind_text(st, 3, sim_notes && *sim_notes ? sim_notes : NULL);
	return step_done(db, st, "cannot store the fs run's models");
}

/* ---- the read side shared by show and report ---------------------------- */

struct crashdb *crashdb_open_existing(const char *path)
{
	if (!file_exists(path))
		die_code(EXIT_NOINPUT, "database '%s' does not exist; 'crashlab run' makes it, or name one with --db",
			 path);
	struct crashdb *db;
	char err[1024];
	if (crashdb_open(path, &db, err, sizeof(err)) < 0)
		die_code(EXIT_DATAERR, "%s", err);
	return db;
}

_Noreturn void crashdb_read_die(struct crashdb *db, const char *what)
{
	die_code(EXIT_DATAERR, "cannot read %s from '%s': %s", what, db->path, sqlite3_errmsg(db->db));
}

sqlite3_stmt *crashdb_prepare(struct crashdb *db, const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
		crashdb_read_die(db, "the schema");
	return st;
}

char *crashdb_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);
	return s ? xstrdup((const char *)s) : NULL;
}

int64_t crashdb_run_resolve(struct crashdb *db, const char *arg, const char *cmd)
{
	if (!strcmp(arg, "last")) {
		sqlite3_stmt *st = crashdb_prepare(db, "SELECT max(id) FROM runs");
		if (sqlite3_step(st) != SQLITE_ROW)
			crashdb_read_die(db, "the runs");
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			die_code(EXIT_NOINPUT, "there are no runs in '%s' yet; 'crashlab run' makes one", db->path);
		int64_t id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		return id;
	}
	char *end;
	errno = 0;
	long long id = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || id <= 0)
		usage_error(cmd, "RUN must be a run id or 'last', not '%s'", arg);
	return id;
}

size_t crashdb_nodes_read(struct crashdb *db, int64_t state_id, struct tree_node **out)
{
	sqlite3_stmt *st = crashdb_prepare(db,"SELECT path, type, mode, uid, gid, size, nlink, ino, xattrs, target, blocks,"
				   " content FROM nodes WHERE state_id = ?");
	sqlite3_bind_int64(st, 1, state_id);
	struct tree_node *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			v = xrealloc(v, cap * sizeof(*v));
		}
		struct tree_node *t = &v[n++];
		memset(t, 0, sizeof(*t));
		t->path = crashdb_col_text(st, 0);
		const unsigned char *type = sqlite3_column_text(st, 1);
		t->type = type ? (char)type[0] : 'o';
		t->mode = (uint32_t)sqlite3_column_int64(st, 2);
		t->uid = (uint32_t)sqlite3_column_int64(st, 3);
		t->gid = (uint32_t)sqlite3_column_int64(st, 4);
		t->size = (uint64_t)sqlite3_column_int64(st, 5);
		t->nlink = (uint32_t)sqlite3_column_int64(st, 6);
		t->ino = (uint64_t)sqlite3_column_int64(st, 7);
		t->xattrs = crashdb_col_text(st, 8);
		t->target = crashdb_col_text(st, 9);
		t->blocks = crashdb_col_text(st, 10);
		if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
			const void *b = sqlite3_column_blob(st, 11);
			t->content_len = (size_t)sqlite3_column_bytes(st, 11);
			t->content = xmalloc(t->content_len + 1);
			if (t->content_len)
				memcpy(t->content, b, t->content_len);
			t->content[t->content_len] = '\0';
		}
	}
	if (rc != SQLITE_DONE)
		crashdb_read_die(db, "the observed tree");
	sqlite3_finalize(st);
	*out = v;
	return n;
}

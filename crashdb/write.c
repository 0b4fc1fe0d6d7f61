/*
 * write.c - the sink over sqlite (crashdb_sink): a run, its fs runs, and
 * each crash state with its observed tree, its judgement and its verdicts
 * in one transaction, so a reader never sees a state half stored.
 */
#include "crashdb/db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define NOW_UTC "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"

static const char *const stmt_sql[ST_COUNT] = {
	[ST_OPS_DELETE] = "DELETE FROM ops WHERE fsrun_id = ?1",
	[ST_VERDICTS_DELETE] = "DELETE FROM verdicts WHERE state_id = ?1",
	[ST_RUN_INSERT] =
		"INSERT INTO runs (started_at, cmdline, accel, kernel_version, kernel_key, workload_file,"
		" workload_text, crash_mode, seed, max_states, torn, workdir, pid)"
		" VALUES (COALESCE(?1, " NOW_UTC "), COALESCE(?2, ''), ?3, ?4, ?5, ?6, ?7,"
		" COALESCE(?8, 'flush'), ?9, ?10, ?11, ?12, ?13)",
	[ST_RUN_FINISH] =
		"UPDATE runs SET finished_at = " NOW_UTC ", status = ?2, exit_code = ?3 WHERE id = ?1",
	[ST_RUN_RESUME] =
		"UPDATE runs SET status = 'running', finished_at = NULL, exit_code = NULL, pid = ?2,"
		" resumes = resumes + 1 WHERE id = ?1",
	[ST_FSRUN_DELETE] = "DELETE FROM fsruns WHERE id = ?1",
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


static sqlite3_stmt *stmt(struct crashdb *db, enum db_stmt id, struct errbuf *e)
{
	if (!db->st[id] &&
	    sqlite3_prepare_v3(db->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &db->st[id], NULL) != SQLITE_OK) {
		db_fail(db, e, EXIT_SOFTWARE, "cannot prepare a statement");
		return NULL;
	}
	return db->st[id];
}

/* Run a cached statement that returns no rows, then reset it. */
static int step_done(struct crashdb *db, sqlite3_stmt *st, struct errbuf *e, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		db_fail(db, e, EXIT_CANTCREAT, what);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- runs ---- */

static int run_begin(void *ctx, struct run_info *r, struct errbuf *e)
{
	struct crashdb *db = ctx;
	sqlite3_stmt *st = stmt(db, ST_RUN_INSERT, e);
	if (!st)
		return -1;
	db_bind_text(st, 1, r->started_at);
	db_bind_text(st, 2, r->cmdline);
	db_bind_text(st, 3, r->accel);
	db_bind_text(st, 4, r->kernel_version);
	db_bind_text(st, 5, r->kernel_key);
	db_bind_text(st, 6, r->workload_file);
	db_bind_text(st, 7, r->workload_text);
	db_bind_text(st, 8, r->crash_mode);
	sqlite3_bind_int64(st, 9, r->seed);
	sqlite3_bind_int64(st, 10, r->max_states);
	sqlite3_bind_int(st, 11, r->torn != 0);
	db_bind_text(st, 12, r->workdir);
	sqlite3_bind_int64(st, 13, r->pid);
	if (step_done(db, st, e, "cannot store the run") < 0)
		return -1;
	r->id = sqlite3_last_insert_rowid(db->db);
	return 0;
}

static int run_end(void *ctx, const struct run_info *r, struct errbuf *e)
{
	struct crashdb *db = ctx;
	sqlite3_stmt *st = stmt(db, ST_RUN_FINISH, e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->id);
	db_bind_text(st, 2, r->status ? r->status : "ok");
	sqlite3_bind_int(st, 3, r->exit_code);
	if (step_done(db, st, e, "cannot finish the run") < 0)
		return -1;
	if (sqlite3_changes(db->db) == 0)
		return errbuf_set(e, EXIT_SOFTWARE, "run %" PRId64 " does not exist in '%s'", r->id, db->path);
	return 0;
}

int crashdb_run_resume(struct crashdb *db, struct run_info *r, struct errbuf *e)
{
	sqlite3_stmt *st = stmt(db, ST_RUN_RESUME, e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, r->id);
	sqlite3_bind_int64(st, 2, r->pid);
	if (step_done(db, st, e, "cannot mark the run as resumed") < 0)
		return -1;
	if (sqlite3_changes(db->db) == 0)
		return errbuf_set(e, EXIT_NOINPUT, "run %" PRId64 " does not exist in '%s'", r->id, db->path);
	r->resumes++;
	free(r->status);
	r->status = xstrdup("running");
	return 0;
}

int crashdb_delete_fsrun(struct crashdb *db, int64_t fsrun_id, struct errbuf *e)
{
	sqlite3_stmt *st = stmt(db, ST_FSRUN_DELETE, e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, fsrun_id);
	return step_done(db, st, e, "cannot remove the fs run");
}

/* ---- fs runs ---- */

/* The 20 fsrun columns, in the order both fsrun statements number them. */
static void bind_fsrun(sqlite3_stmt *st, const struct fsrun *f)
{
	db_bind_text(st, 2, f->fs);
	db_bind_text(st, 3, f->mkfs_opts);
	db_bind_text(st, 4, f->mount_opts);
	db_bind_text(st, 5, f->base_image);
	sqlite3_bind_int64(st, 6, f->image_size);
	db_bind_text(st, 7, f->qemu_cmdline);
	sqlite3_bind_int64(st, 8, f->log.entries);
	sqlite3_bind_int64(st, 9, f->log.committed);
	sqlite3_bind_int64(st, 10, f->log.flushes);
	sqlite3_bind_int64(st, 11, f->log.writes);
	sqlite3_bind_int64(st, 12, f->log.discards);
	sqlite3_bind_int64(st, 13, f->log.bytes);
	sqlite3_bind_int(st, 14, f->log.truncated != 0);
	sqlite3_bind_int64(st, 15, f->setup_end);
	db_bind_text(st, 16, f->outcome);
	db_bind_text(st, 17, f->error);
	sqlite3_bind_double(st, 18, f->record_ms);
	sqlite3_bind_double(st, 19, f->check_ms);
	db_bind_text(st, 20, f->log_path);
}

static int fsrun_begin(void *ctx, struct fsrun *f, struct errbuf *e)
{
	struct crashdb *db = ctx;
	sqlite3_stmt *st = stmt(db, ST_FSRUN_INSERT, e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, f->run_id);
	bind_fsrun(st, f);
	char what[96];
	snprintf(what, sizeof(what), "cannot store fs run '%s' of run %" PRId64, f->fs ? f->fs : "?", f->run_id);
	if (step_done(db, st, e, what) < 0)
		return -1;
	f->id = sqlite3_last_insert_rowid(db->db);
	return 0;
}

static int write_ops(struct crashdb *db, const struct fsrun *f, struct errbuf *e)
{
	sqlite3_stmt *del = stmt(db, ST_OPS_DELETE, e), *st = stmt(db, ST_OP_INSERT, e);
	if (!del || !st)
		return -1;
	sqlite3_bind_int64(del, 1, f->id);
	if (step_done(db, del, e, "cannot replace the ops") < 0)
		return -1;
	for (size_t i = 0; f->res && i < f->ops.n; i++) {
		const struct wl_op *op = &f->ops.ops[i];
		const struct op_result *r = &f->res[i];
		int len = wl_format(op, NULL, 0);
		char *text = xmalloc((size_t)len + 1);
		wl_format(op, text, (size_t)len + 1);
		sqlite3_bind_int64(st, 1, f->id);
		sqlite3_bind_int(st, 2, op->id);
		sqlite3_bind_int(st, 3, op->section);
		sqlite3_bind_text(st, 4, text, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st, 5, op->line);
		sqlite3_bind_int64(st, 6, r->ret);
		sqlite3_bind_int(st, 7, r->err);
		sqlite3_bind_int64(st, 8, (sqlite3_int64)r->ino);
		sqlite3_bind_int64(st, 9, (sqlite3_int64)r->ino2);
		sqlite3_bind_int64(st, 10, r->log_pos);
		sqlite3_bind_double(st, 11, r->ms);
		free(text);
		char what[96];
		snprintf(what, sizeof(what), "cannot store op %d of fs run %" PRId64, op->id, f->id);
		if (step_done(db, st, e, what) < 0)
			return -1;
	}
	return 0;
}

int db_write_fsrun_models(struct crashdb *db, int64_t fsrun_id, const char *models, const char *sim_notes,
			  struct errbuf *e)
{
	sqlite3_stmt *st = stmt(db, ST_FSRUN_JUDGE, e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, fsrun_id);
	db_bind_text(st, 2, models);
	db_bind_text(st, 3, sim_notes && *sim_notes ? sim_notes : NULL);
	return step_done(db, st, e, "cannot store the fs run's models");
}

static int fsrun_end(void *ctx, const struct fsrun *f, struct errbuf *e)
{
	struct crashdb *db = ctx;
	int nested;
	sqlite3_stmt *st = stmt(db, ST_FSRUN_UPDATE, e);
	char what[96];
	snprintf(what, sizeof(what), "cannot store the end of fs run %" PRId64, f->id);
	if (!st || db_tx_begin(db, &nested, what, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, f->id);
	bind_fsrun(st, f);
	int ok = step_done(db, st, e, what) == 0;
	if (ok && sqlite3_changes(db->db) == 0)
		ok = errbuf_set(e, EXIT_SOFTWARE, "fs run %" PRId64 " does not exist in '%s'", f->id, db->path) == 0;
	ok = ok && write_ops(db, f, e) == 0;
	ok = ok && (!f->models || db_write_fsrun_models(db, f->id, f->models, f->sim_notes, e) == 0);
	return db_tx_end(db, nested, ok, what, e);
}

/* ---- states ---- */

static int write_nodes(struct crashdb *db, int64_t id, const struct check_report *c, struct errbuf *e,
		       const char *what)
{
	sqlite3_stmt *nt = stmt(db, ST_NODE_INSERT, e);
	if (!nt)
		return -1;
	for (size_t i = 0; i < c->n_nodes; i++) {
		const struct tree_node *t = &c->nodes[i];
		char type[2] = { t->type, '\0' };
		sqlite3_bind_int64(nt, 1, id);
		db_bind_text(nt, 2, t->path);
		sqlite3_bind_text(nt, 3, type, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(nt, 4, t->mode);
		sqlite3_bind_int64(nt, 5, t->uid);
		sqlite3_bind_int64(nt, 6, t->gid);
		sqlite3_bind_int64(nt, 7, (sqlite3_int64)t->size);
		sqlite3_bind_int64(nt, 8, t->nlink);
		sqlite3_bind_int64(nt, 9, (sqlite3_int64)t->ino);
		db_bind_text(nt, 10, t->xattrs);
		db_bind_text(nt, 11, t->target);
		db_bind_text(nt, 12, t->blocks);
		/* NULL stays NULL; a present empty content is an empty blob. */
		if (t->content)
			sqlite3_bind_blob64(nt, 13, t->content_len ? (const void *)t->content : "", t->content_len,
					    SQLITE_STATIC);
		else
			sqlite3_bind_null(nt, 13);
		if (step_done(db, nt, e, what) < 0) {
			size_t l = strlen(e->msg);
			snprintf(e->msg + l, sizeof(e->msg) - l, " (node '%s')", t->path ? t->path : "");
			return -1;
		}
	}
	return 0;
}

int db_write_judgement(struct crashdb *db, int64_t state_id, const struct judgement *j, const char *what,
		       struct errbuf *e)
{
	sqlite3_stmt *st = stmt(db, ST_STATE_JUDGED, e), *del = stmt(db, ST_VERDICTS_DELETE, e);
	sqlite3_stmt *vt = stmt(db, ST_VERDICT_INSERT, e);
	int nested;
	char own[96];
	if (!what) {
		snprintf(own, sizeof(own), "cannot store the verdicts of state %" PRId64, state_id);
		what = own;
	}
	if (!st || !del || !vt || db_tx_begin(db, &nested, what, e) < 0)
		return -1;
	sqlite3_bind_int64(del, 1, state_id);
	int ok = step_done(db, del, e, what) == 0;
	sqlite3_bind_int64(st, 1, state_id);
	sqlite3_bind_int(st, 2, j->judged != 0);
	if (j->judged)
		sqlite3_bind_int(st, 3, !j->explained ? 0 : j->setup_state ? 2 : 1); /* 2: the setup state */
	else
		sqlite3_bind_null(st, 3);
	db_bind_text(st, 4, !j->explained && j->diff[0] ? j->diff : NULL);
	db_bind_text(st, 5, j->marks);
	ok = ok && step_done(db, st, e, what) == 0;
	if (ok && sqlite3_changes(db->db) == 0)
		ok = errbuf_set(e, EXIT_SOFTWARE, "state %" PRId64 " does not exist in '%s'", state_id, db->path) == 0;
	for (size_t i = 0; i < j->n && ok; i++) {
		const struct verdict *v = &j->v[i];
		const char *model = model_name(v->model), *kind = verdict_name(v->kind);
		sqlite3_bind_int64(vt, 1, state_id);
		db_bind_text(vt, 2, model);
		db_bind_text(vt, 3, v->rule);
		db_bind_text(vt, 4, kind);
		sqlite3_bind_int(vt, 5, v->op);
		sqlite3_bind_int(vt, 6, v->trigger);
		db_bind_text(vt, 7, v->path);
		db_bind_text(vt, 8, v->expected);
		db_bind_text(vt, 9, v->observed);
		db_bind_text(vt, 10, v->reason);
		db_bind_text(vt, 11, v->cite);
		ok = step_done(db, vt, e, what) == 0;
		if (!ok) {
			size_t l = strlen(e->msg);
			snprintf(e->msg + l, sizeof(e->msg) - l, " (verdict %zu of %zu: %s %s %s)", i + 1, j->n,
				 model ? model : "?", v->rule, kind);
		}
	}
	return db_tx_end(db, nested, ok, what, e);
}

static int state(void *ctx, const struct fsrun *fr, struct state_result *s, struct errbuf *e)
{
	struct crashdb *db = ctx;
	const struct check_report *c = &s->check;
	sqlite3_stmt *st = stmt(db, ST_STATE_INSERT, e);
	int nested;
	char what[128];
	snprintf(what, sizeof(what), "cannot store state %d of fs run %" PRId64, s->idx, fr->id);
	if (!st || db_tx_begin(db, &nested, what, e) < 0)
		return -1;
	sqlite3_bind_int64(st, 1, fr->id);
	sqlite3_bind_int(st, 2, s->idx);
	db_bind_text(st, 3, s->kind);
	db_bind_text(st, 4, s->spec);
	sqlite3_bind_int64(st, 5, s->point);
	sqlite3_bind_int(st, 6, s->last_completed_op);
	sqlite3_bind_int(st, 7, c->mount_ok != 0);
	db_bind_text(st, 8, c->mount_msg ? c->mount_msg : "");
	sqlite3_bind_int(st, 9, c->fsck_status);
	sqlite3_bind_int(st, 10, c->fsck_clean != 0);
	db_bind_text(st, 11, c->fsck_output ? c->fsck_output : "");
	db_bind_text(st, 12, c->mount_ok ? c->tree_hash : "");
	sqlite3_bind_int64(st, 13, (sqlite3_int64)c->n_nodes);
	sqlite3_bind_double(st, 14, c->ms_replay);
	sqlite3_bind_double(st, 15, c->ms_mount);
	sqlite3_bind_double(st, 16, c->ms_capture);
	sqlite3_bind_double(st, 17, c->ms_fsck);
	double other = c->ms_host - c->ms_replay - c->ms_mount - c->ms_capture - c->ms_fsck;
	sqlite3_bind_double(st, 18, c->ms_host > 0 ? other : c->ms_other);
	int ok = step_done(db, st, e, what) == 0;
	int64_t id = ok ? sqlite3_last_insert_rowid(db->db) : 0;
	ok = ok && write_nodes(db, id, c, e, what) == 0;
	ok = ok && db_write_judgement(db, id, &s->judge, what, e) == 0;
	if (db_tx_end(db, nested, ok, what, e) < 0)
		return -1;
	s->id = id;
	return 0;
}

void crashdb_sink(struct crashdb *db, struct sink *out)
{
	/* fsrun_recorded is the same update as fsrun_end: what is known so far */
	*out = (struct sink){ .ctx = db, .run_begin = run_begin, .fsrun_begin = fsrun_begin, .fsrun_recorded = fsrun_end,
			      .state = state, .fsrun_end = fsrun_end, .run_end = run_end };
}

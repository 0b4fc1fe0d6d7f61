/*
 * read.c - the typed read API (crashdb.h): runs, fs runs with their ops,
 * states with their trees and verdicts, as the engine's own types, owned
 * by the caller. A stored op is its canonical text, parsed again here, so a
 * reader gets the same struct wl_op the run had. A call that takes several
 * statements (fs runs with their ops, states with their trees and verdicts)
 * runs them in one read transaction: a run writing, or a state judged again,
 * meanwhile commits either before all of them or after.
 */
#include "crashdb/db.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "host/sys.h"

static int read_fail(struct crashdb *db, struct errbuf *e, const char *what)
{
	char w[128];
	snprintf(w, sizeof(w), "cannot read %s", what);
	return db_fail(db, e, EXIT_DATAERR, w);
}

int crashdb_resolve_run(struct crashdb *db, const char *arg, int64_t *id, struct errbuf *e)
{
	char *end;
	if (!strncmp(arg, "last", 4) && (!arg[4] || arg[4] == '~')) {
		/* last~N: the Nth run before the last, as git's HEAD~N */
		long long back = 0;
		if (arg[4]) {
			errno = 0;
			back = strtoll(arg + 5, &end, 10);
			if (errno || end == arg + 5 || *end || back < 0)
				return errbuf_set(e, EXIT_USAGE, "RUN must be a run id, 'last' or 'last~N', not '%s'", arg);
		}
		sqlite3_stmt *st = db_prepare(db, "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", e);
		if (!st)
			return -1;
		sqlite3_bind_int64(st, 1, back);
		int rc = sqlite3_step(st);
		*id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return read_fail(db, e, "the runs");
		if (rc == SQLITE_DONE && !back)
			return errbuf_set(e, EXIT_NOINPUT, "there are no runs in '%s' yet; 'crashlab run' makes one", db->path);
		if (rc == SQLITE_DONE)
			return errbuf_set(e, EXIT_NOINPUT, "'%s': '%s' holds fewer than %lld runs", arg, db->path, back + 1);
		return 0;
	}
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0)
		return errbuf_set(e, EXIT_USAGE, "RUN must be a run id, 'last' or 'last~N', not '%s'", arg);
	*id = v;
	return 0;
}

/* A run stored as 'running' whose lock nobody holds was cut short (the
 * crashlab running it was killed, or the machine stopped): 'crashed',
 * which `crashlab run --resume` continues. */
static void status_live(char **status, const char *workdir)
{
	if (!*status || strcmp(*status, "running") || !workdir)
		return;
	char *lock = xasprintf("%s/" CRASHDB_RUN_LOCK, workdir);
	if (!lock_busy(lock)) {
		free(*status);
		*status = xstrdup("crashed");
	}
	free(lock);
}

int crashdb_read_run(struct crashdb *db, int64_t id, struct run_info *v, struct errbuf *e)
{
	memset(v, 0, sizeof(*v));
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, started_at, finished_at, status, exit_code, cmdline, accel, kernel_version,"
		" kernel_key, workload_file, workload_text, crash_mode, seed, max_states, torn, workdir, pid, resumes"
		" FROM runs WHERE id = ?", e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		v->id = sqlite3_column_int64(st, 0);
		v->started_at = db_col_text(st, 1);
		v->finished_at = db_col_text(st, 2);
		v->status = db_col_text(st, 3);
		v->has_exit = sqlite3_column_type(st, 4) != SQLITE_NULL;
		v->exit_code = sqlite3_column_int(st, 4);
		v->cmdline = db_col_text(st, 5);
		v->accel = db_col_text(st, 6);
		v->kernel_version = db_col_text(st, 7);
		v->kernel_key = db_col_text(st, 8);
		v->workload_file = db_col_text(st, 9);
		v->workload_text = db_col_text(st, 10);
		v->crash_mode = db_col_text(st, 11);
		v->seed = sqlite3_column_int64(st, 12);
		v->max_states = sqlite3_column_int64(st, 13);
		v->torn = sqlite3_column_int(st, 14);
		v->workdir = db_col_text(st, 15);
		v->pid = sqlite3_column_int64(st, 16);
		v->resumes = sqlite3_column_int64(st, 17);
		status_live(&v->status, v->workdir);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return errbuf_set(e, EXIT_NOINPUT, "run %" PRId64 " does not exist in '%s'", id, db->path);
	if (rc != SQLITE_ROW)
		return read_fail(db, e, "the run");
	return 0;
}

/* The ops of a fs run: each stored text parsed back into a struct wl_op. */
static int read_ops(struct crashdb *db, struct fsrun *f, struct errbuf *e)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT op_id, section, text, line, ret, err, ino, ino2, log_pos, ms"
				      " FROM ops WHERE fsrun_id = ? ORDER BY op_id", e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, f->id);
	size_t cap = 0, rcap = 0;
	int rc, r = 0;
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct wl_op op;
		int id = sqlite3_column_int(st, 0), section = sqlite3_column_int(st, 1);
		const char *text = (const char *)sqlite3_column_text(st, 2);
		struct errbuf pe;
		if (wl_parse_line(text ? text : "", id, section ? WL_RUN : WL_SETUP, &op, &pe) < 0) {
			r = errbuf_set(e, EXIT_DATAERR, "op %d of fs run %" PRId64 " in '%s' does not parse: %s", id, f->id,
				       db->path, pe.msg);
			break;
		}
		op.line = sqlite3_column_int(st, 3);
		ARRAY_PUSH(f->ops.ops, f->ops.n, cap, op);
		f->ops.nsetup += !section;
		struct op_result res = {
			.ret = sqlite3_column_int64(st, 4), .err = sqlite3_column_int(st, 5),
			.ino = (uint64_t)sqlite3_column_int64(st, 6), .ino2 = (uint64_t)sqlite3_column_int64(st, 7),
			.log_pos = sqlite3_column_int64(st, 8), .ms = sqlite3_column_double(st, 9),
		};
		size_t nres = f->ops.n - 1;
		ARRAY_PUSH(f->res, nres, rcap, res);
	}
	sqlite3_finalize(st);
	if (r == 0 && rc != SQLITE_DONE)
		return read_fail(db, e, "the ops");
	return r;
}

/* The workload's [expect] lines (and its [overlay] header) are not op rows:
 * they come from the run's stored workload text, each fs run keeping those
 * that apply to its fs. A text that no longer parses keeps none. */
static void read_expects(struct crashdb *db, int64_t run_id, struct fsrun *v, size_t n)
{
	struct errbuf e;
	sqlite3_stmt *st = db_prepare(db, "SELECT workload_file, workload_text FROM runs WHERE id = ?", &e);
	if (!st)
		return;
	sqlite3_bind_int64(st, 1, run_id);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 1)) {
		struct wl_workload w;
		const char *file = (const char *)sqlite3_column_text(st, 0);
		if (wl_parse(file ? file : "workload", (const char *)sqlite3_column_text(st, 1), &w, &e) == 0) {
			for (size_t i = 0; i < n; i++)
				v[i].ops.overlay = w.overlay;
			for (size_t i = 0; i < n && w.nexpects; i++) {
				wl_copy_expects(&v[i].ops, &w);
				free(v[i].ops.file);
				v[i].ops.file = xstrdup(w.file);
				wl_expects_for(&v[i].ops, v[i].fs);
			}
			wl_free(&w);
		}
	}
	sqlite3_finalize(st);
}

void crashdb_fsruns_free(struct fsrun *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fsrun_free(&v[i]);
	free(v);
}

static int read_fsruns_tx(struct crashdb *db, int64_t run_id, const char *fs, struct fsrun **out, size_t *nout,
			  struct errbuf *e)
{
	*out = NULL;
	*nout = 0;
	sqlite3_stmt *st = db_prepare(db,
		"SELECT id, run_id, fs, mkfs_opts, mount_opts, base_image, image_size, qemu_cmdline, log_entries,"
		" log_committed, log_flushes, log_writes, log_discards, log_bytes, log_truncated, setup_end,"
		" outcome, error, record_ms, check_ms, log_path, models, sim_notes FROM fsruns"
		" WHERE run_id = ?1 AND (?2 IS NULL OR fs = ?2) ORDER BY id", e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, run_id);
	db_bind_text(st, 2, fs);
	struct fsrun *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(v, n + 1, cap);
		struct fsrun *f = &v[n++];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(st, 0);
		f->run_id = sqlite3_column_int64(st, 1);
		f->fs = db_col_text(st, 2);
		f->mkfs_opts = db_col_text(st, 3);
		f->mount_opts = db_col_text(st, 4);
		f->base_image = db_col_text(st, 5);
		f->image_size = sqlite3_column_int64(st, 6);
		f->qemu_cmdline = db_col_text(st, 7);
		f->log = (struct log_summary){ sqlite3_column_int64(st, 8), sqlite3_column_int64(st, 9),
					       sqlite3_column_int64(st, 10), sqlite3_column_int64(st, 11),
					       sqlite3_column_int64(st, 12), sqlite3_column_int64(st, 13),
					       sqlite3_column_int(st, 14) };
		f->setup_end = sqlite3_column_int64(st, 15);
		f->outcome = db_col_text(st, 16);
		f->error = db_col_text(st, 17);
		f->record_ms = sqlite3_column_double(st, 18);
		f->check_ms = sqlite3_column_double(st, 19);
		f->log_path = db_col_text(st, 20);
		f->models = db_col_text(st, 21);
		f->sim_notes = db_col_text(st, 22);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		crashdb_fsruns_free(v, n);
		return read_fail(db, e, "the file system runs");
	}
	for (size_t i = 0; i < n; i++)
		if (read_ops(db, &v[i], e) < 0) {
			crashdb_fsruns_free(v, n);
			return -1;
		}
	if (n)
		read_expects(db, run_id, v, n);
	if (fs && !n) {
		struct sbuf names = SBUF_INIT;
		sqlite3_stmt *q = db_prepare(db, "SELECT fs FROM fsruns WHERE run_id = ? ORDER BY id", e);
		if (!q)
			return -1;
		sqlite3_bind_int64(q, 1, run_id);
		while (sqlite3_step(q) == SQLITE_ROW)
			sbuf_addf(&names, "%s%s", names.len ? ", " : "", (const char *)sqlite3_column_text(q, 0));
		sqlite3_finalize(q);
		errbuf_set(e, EXIT_NOINPUT, "run %" PRId64 " has no file system '%s' (it has: %s)", run_id, fs,
			   names.len ? names.buf : "none");
		sbuf_free(&names);
		return -1;
	}
	*out = v;
	*nout = n;
	return 0;
}

int crashdb_read_fsruns(struct crashdb *db, int64_t run_id, const char *fs, struct fsrun **out, size_t *nout,
			struct errbuf *e)
{
	*out = NULL;
	*nout = 0;
	int began = db_read_begin(db, e);
	if (began < 0)
		return -1;
	int r = read_fsruns_tx(db, run_id, fs, out, nout, e);
	db_read_end(db, began);
	return r;
}

static int read_tree(struct crashdb *db, struct state_result *s, struct errbuf *e)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT path, type, mode, uid, gid, size, nlink, ino, xattrs, target, blocks,"
				      " content FROM nodes WHERE state_id = ? ORDER BY rowid", e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	struct check_report *c = &s->check;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(c->nodes, c->n_nodes + 1, cap);
		struct tree_node *t = &c->nodes[c->n_nodes++];
		memset(t, 0, sizeof(*t));
		t->path = db_col_text(st, 0);
		const unsigned char *type = sqlite3_column_text(st, 1);
		t->type = type ? (char)type[0] : 'o';
		t->mode = (uint32_t)sqlite3_column_int64(st, 2);
		t->uid = (uint32_t)sqlite3_column_int64(st, 3);
		t->gid = (uint32_t)sqlite3_column_int64(st, 4);
		t->size = (uint64_t)sqlite3_column_int64(st, 5);
		t->nlink = (uint32_t)sqlite3_column_int64(st, 6);
		t->ino = (uint64_t)sqlite3_column_int64(st, 7);
		t->xattrs = db_col_text(st, 8);
		t->target = db_col_text(st, 9);
		t->blocks = db_col_text(st, 10);
		if (sqlite3_column_type(st, 11) != SQLITE_NULL) {
			t->content_len = (size_t)sqlite3_column_bytes(st, 11);
			t->content = xmemdup(sqlite3_column_blob(st, 11), t->content_len);
		}
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : read_fail(db, e, "the observed tree");
}

static void copy_field(char *dst, size_t n, const unsigned char *src)
{
	snprintf(dst, n, "%s", src ? (const char *)src : "");
}

static int read_verdicts(struct crashdb *db, struct state_result *s, struct errbuf *e)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT model, rule, verdict, op_id, trigger_op, path, expected, observed,"
				      " reason, cite FROM verdicts WHERE state_id = ? ORDER BY id", e);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	struct judgement *j = &s->judge;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *model = (const char *)sqlite3_column_text(st, 0);
		const char *kind = (const char *)sqlite3_column_text(st, 2);
		int m = model && !strcmp(model, "universal") ? MODEL_UNIVERSAL : model_parse(model ? model : "");
		int k = verdict_parse(kind ? kind : "");
		if (m < 0 || k < 0)
			continue; /* a model or verdict this crashlab does not know: not ours to render */
		ALLOC_GROW(j->v, j->n + 1, cap);
		struct verdict *v = &j->v[j->n++];
		memset(v, 0, sizeof(*v));
		v->model = m;
		v->kind = (enum verdict_kind)k;
		copy_field(v->rule, sizeof(v->rule), sqlite3_column_text(st, 1));
		v->op = sqlite3_column_int(st, 3);
		v->trigger = sqlite3_column_int(st, 4);
		copy_field(v->path, sizeof(v->path), sqlite3_column_text(st, 5));
		copy_field(v->expected, sizeof(v->expected), sqlite3_column_text(st, 6));
		copy_field(v->observed, sizeof(v->observed), sqlite3_column_text(st, 7));
		copy_field(v->reason, sizeof(v->reason), sqlite3_column_text(st, 8));
		copy_field(v->cite, sizeof(v->cite), sqlite3_column_text(st, 9));
		j->count[m][k]++;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : read_fail(db, e, "the verdicts");
}

static const char state_cols[] =
	"SELECT id, idx, kind, spec, point, last_completed_op, mount_ok, mount_msg, fsck_status, fsck_clean,"
	" fsck_output, tree_hash, n_nodes, ms_replay, ms_mount, ms_capture, ms_fsck, ms_other, judged, explained,"
	" difference, timeline FROM states";

static void state_from_row(sqlite3_stmt *st, struct state_result *s)
{
	memset(s, 0, sizeof(*s));
	struct check_report *c = &s->check;
	s->id = sqlite3_column_int64(st, 0);
	s->idx = sqlite3_column_int(st, 1);
	s->kind = db_col_text(st, 2);
	s->spec = db_col_text(st, 3);
	s->point = sqlite3_column_int64(st, 4);
	s->last_completed_op = sqlite3_column_int(st, 5);
	c->mount_ok = sqlite3_column_int(st, 6);
	c->mount_msg = db_col_text(st, 7);
	c->fsck_status = sqlite3_column_int(st, 8);
	c->fsck_clean = sqlite3_column_int(st, 9);
	c->fsck_output = db_col_text(st, 10);
	copy_field(c->tree_hash, sizeof(c->tree_hash), sqlite3_column_text(st, 11));
	s->n_nodes = sqlite3_column_int64(st, 12);
	c->ms_replay = sqlite3_column_double(st, 13);
	c->ms_mount = sqlite3_column_double(st, 14);
	c->ms_capture = sqlite3_column_double(st, 15);
	c->ms_fsck = sqlite3_column_double(st, 16);
	c->ms_other = sqlite3_column_double(st, 17);
	s->judge.judged = sqlite3_column_int(st, 18);
	s->judge.explained = sqlite3_column_int(st, 19) != 0;
	s->judge.setup_state = sqlite3_column_int(st, 19) == 2;
	copy_field(s->judge.diff, sizeof(s->judge.diff), sqlite3_column_text(st, 20));
	s->judge.marks = db_col_text(st, 21);
}

static int read_parts(struct crashdb *db, struct state_result *s, unsigned want, struct errbuf *e)
{
	if ((want & CRASHDB_TREE) && read_tree(db, s, e) < 0)
		return -1;
	if ((want & CRASHDB_VERDICTS) && read_verdicts(db, s, e) < 0)
		return -1;
	return 0;
}

void crashdb_states_free(struct state_result *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		state_result_free(&v[i]);
	free(v);
}

static int read_states_tx(struct crashdb *db, int64_t fsrun_id, unsigned want, struct state_result **out,
			  size_t *nout, struct errbuf *e)
{
	*out = NULL;
	*nout = 0;
	char *sql = xasprintf("%s WHERE fsrun_id = ? ORDER BY idx", state_cols);
	sqlite3_stmt *st = db_prepare(db, sql, e);
	free(sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, fsrun_id);
	struct state_result *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		ALLOC_GROW(v, n + 1, cap);
		state_from_row(st, &v[n++]);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		crashdb_states_free(v, n);
		return read_fail(db, e, "the crash states");
	}
	for (size_t i = 0; i < n; i++)
		if (read_parts(db, &v[i], want, e) < 0) {
			crashdb_states_free(v, n);
			return -1;
		}
	*out = v;
	*nout = n;
	return 0;
}

int crashdb_read_states(struct crashdb *db, int64_t fsrun_id, unsigned want, struct state_result **out, size_t *nout,
			struct errbuf *e)
{
	*out = NULL;
	*nout = 0;
	int began = db_read_begin(db, e);
	if (began < 0)
		return -1;
	int r = read_states_tx(db, fsrun_id, want, out, nout, e);
	db_read_end(db, began);
	return r;
}

static int read_state_tx(struct crashdb *db, const struct fsrun *fr, int idx, unsigned want,
			 struct state_result *out, struct errbuf *e)
{
	memset(out, 0, sizeof(*out));
	char *sql = xasprintf("%s WHERE fsrun_id = ? AND idx = ?", state_cols);
	sqlite3_stmt *st = db_prepare(db, sql, e);
	free(sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, fr->id);
	sqlite3_bind_int(st, 2, idx);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		state_from_row(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE) {
		sqlite3_stmt *c = db_prepare(db, "SELECT count(*), min(idx), max(idx) FROM states WHERE fsrun_id = ?", e);
		if (!c)
			return -1;
		sqlite3_bind_int64(c, 1, fr->id);
		int r;
		if (sqlite3_step(c) != SQLITE_ROW)
			r = read_fail(db, e, "the crash states");
		else if (sqlite3_column_int64(c, 0) == 0)
			r = errbuf_set(e, EXIT_NOINPUT, "state %d does not exist for %s in run %" PRId64 " (it has no states)",
				       idx, fr->fs, fr->run_id);
		else
			r = errbuf_set(e, EXIT_NOINPUT, "state %d does not exist for %s in run %" PRId64 " (it has states %d..%d)",
				       idx, fr->fs, fr->run_id, sqlite3_column_int(c, 1), sqlite3_column_int(c, 2));
		sqlite3_finalize(c);
		return r;
	}
	if (rc != SQLITE_ROW)
		return read_fail(db, e, "the crash state");
	if (read_parts(db, out, want, e) < 0) {
		state_result_free(out);
		return -1;
	}
	return 0;
}

int crashdb_read_state(struct crashdb *db, const struct fsrun *fr, int idx, unsigned want, struct state_result *out,
		       struct errbuf *e)
{
	memset(out, 0, sizeof(*out));
	int began = db_read_begin(db, e);
	if (began < 0)
		return -1;
	int r = read_state_tx(db, fr, idx, want, out, e);
	db_read_end(db, began);
	return r;
}

int64_t crashdb_unjudged(struct crashdb *db, int64_t run_id)
{
	struct errbuf e;
	sqlite3_stmt *st = db_prepare(db, "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id"
				      " WHERE f.run_id = ? AND s.judged = 0 AND s.difference IS NULL", &e);
	if (!st)
		return 0;
	sqlite3_bind_int64(st, 1, run_id);
	int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
	sqlite3_finalize(st);
	return n;
}

void run_rows_free(struct run_row *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].started_at);
		free(v[i].status);
		free(v[i].workload_file);
		free(v[i].kernel_version);
		free(v[i].fs);
		free(v[i].options);
	}
	free(v);
}

int crashdb_list_runs(struct crashdb *db, struct run_row **out, size_t *n, struct errbuf *e)
{
	*out = NULL;
	*n = 0;
	/* Per run: its file systems in order, their non-default options, the
	 * states, and the findings: LOST under a model the fs run was judged
	 * for, or a universal rule broken. */
	sqlite3_stmt *st = db_prepare(db,
		"SELECT r.id, r.started_at, r.status, r.workload_file, r.kernel_version, r.workdir,"
		" (SELECT group_concat(fs, ',') FROM (SELECT fs FROM fsruns WHERE run_id = r.id ORDER BY id)),"
		" (SELECT group_concat(o, ' ') FROM (SELECT fs || ':' || trim(coalesce(mkfs_opts, '') || ' ' ||"
		"   coalesce(mount_opts, '')) AS o FROM fsruns WHERE run_id = r.id AND"
		"   (coalesce(mkfs_opts, '') <> '' OR coalesce(mount_opts, '') <> '') ORDER BY id)),"
		" (SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = r.id),"
		" (SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id"
		"   WHERE f.run_id = r.id AND (v.verdict = 'broken' OR (v.verdict = 'LOST' AND"
		"   instr(',' || coalesce(f.models, '') || ',', ',' || v.model || ',') > 0))),"
		" (SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = r.id AND s.judged = 0)"
		" FROM runs r ORDER BY r.id", e);
	if (!st)
		return -1;
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct run_row row = {
			.id = sqlite3_column_int64(st, 0),
			.started_at = db_col_text(st, 1),
			.status = db_col_text(st, 2),
			.workload_file = db_col_text(st, 3),
			.kernel_version = db_col_text(st, 4),
			.fs = db_col_text(st, 6),
			.options = db_col_text(st, 7),
			.states = sqlite3_column_int64(st, 8),
			.findings = sqlite3_column_int64(st, 9),
			.unjudged = sqlite3_column_int64(st, 10),
		};
		const char *workdir = (const char *)sqlite3_column_text(st, 5);
		status_live(&row.status, workdir);
		ARRAY_PUSH(*out, *n, cap, row);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		run_rows_free(*out, *n);
		*out = NULL;
		*n = 0;
		return read_fail(db, e, "the runs");
	}
	return 0;
}

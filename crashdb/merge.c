/*
 * merge.c - the runs of one crashlab database copied into another
 * (crashlab db merge), with new ids.
 *
 * Method. The tables form a tree under runs: each table but runs has one
 * foreign key, to its parent's INTEGER PRIMARY KEY (fsruns -> runs, ops and
 * states -> fsruns, nodes and verdicts -> states). The tree is read from
 * the output's schema (sqlite_master, PRAGMA foreign_key_list and
 * table_info), never written down here, and so are the columns copied: the
 * input's columns by name, every one of which the output must have. A
 * column or a child table that a later migration step adds is merged
 * without a change to this file; a table outside the tree is refused
 * rather than dropped.
 *
 * The input's runs are taken in id order. A run still running (or cut
 * short: it can be resumed where it ran) is skipped, and so is a run the
 * output holds already: the same started_at, cmdline, workload_text and
 * workdir (the run's folder names its machine's process id and start time,
 * so two runs that agree on all four are one run). Then table by table,
 * parents before children, every row under a copied row is copied in the
 * input's rowid order. A table with an INTEGER PRIMARY KEY gets the
 * output's next ids, so the output's ids stay dense and keep the order the
 * input stored its rows in: the fs runs of a batch's runs interleaved as
 * the batch stored them, so the shards of a batch (engine/batch.h), merged
 * in shard order, get the ids the batch gives them on one machine.
 *
 * One input is one write transaction on the output, read in one read
 * transaction on the input: a failure leaves nothing of that input.
 */
#include "crashdb/db.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/util.h"

struct mtable {
	char *name;
	int parent;                  /* index of the parent table, -1 for runs */
	char *fk;                    /* the column that names the parent's row (NULL for runs) */
	char *fk_to;                 /* the parent's column it names (must be the parent's pk) */
	char *pk;                    /* its INTEGER PRIMARY KEY column, or NULL (then rowid order only) */
	struct strvec cols;          /* the columns copied, as the input names them */
	int fk_col, pk_col;          /* their positions in cols, -1 when none */
	sqlite3_stmt *sel, *ins;
	int64_t next;                /* the output's next id (with pk) */
	size_t rows;                 /* rows copied from this input */
	int64_t *old_ids, *new_ids;  /* the ids given, in ascending old id (tables with children) */
	size_t nids, capids;
	int has_children, done;
};

/* Remember old -> new (old ids come in ascending order: rowid order). */
static void ids_add(struct mtable *t, int64_t old_id, int64_t new_id)
{
	if (t->nids == t->capids) {
		t->capids = t->capids ? t->capids * 2 : 256;
		t->old_ids = xrealloc(t->old_ids, t->capids * sizeof(*t->old_ids));
		t->new_ids = xrealloc(t->new_ids, t->capids * sizeof(*t->new_ids));
	}
	t->old_ids[t->nids] = old_id;
	t->new_ids[t->nids++] = new_id;
}

/* The new id of old_id, or 0 when its row was not copied. */
static int64_t ids_get(const struct mtable *t, int64_t old_id)
{
	size_t lo = 0, hi = t->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->old_ids[mid] < old_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nids && t->old_ids[lo] == old_id ? t->new_ids[lo] : 0;
}

struct merge {
	struct crashdb *out, *in;
	struct mtable *t;
	size_t nt;
	struct errbuf *e;
};

static void mtables_free(struct mtable *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(t[i].name);
		free(t[i].fk);
		free(t[i].fk_to);
		free(t[i].pk);
		strvec_free(&t[i].cols);
		sqlite3_finalize(t[i].sel);
		sqlite3_finalize(t[i].ins);
		free(t[i].old_ids);
		free(t[i].new_ids);
	}
	free(t);
}

static int find_table(const struct mtable *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return (int)i;
	return -1;
}

/* "name" as an SQL identifier. */
static char *ident(const char *name)
{
	struct sbuf b = SBUF_INIT;
	sbuf_adds(&b, "\"");
	for (const char *p = name; *p; p++) {
		sbuf_add(&b, p, 1);
		if (*p == '"')
			sbuf_add(&b, p, 1); /* doubled */
	}
	sbuf_adds(&b, "\"");
	return sbuf_detach(&b);
}

/* The tables of db (not sqlite's own), sorted by name. */
static int table_names(struct crashdb *db, struct strvec *out, struct errbuf *e)
{
	sqlite3_stmt *st = db_prepare(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
					  "'sqlite\\_%' ESCAPE '\\' ORDER BY name", e);
	if (!st)
		return -1;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		strvec_push(out, (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : db_fail(db, e, EXIT_DATAERR, "cannot read the list of tables");
}

/* The columns of a table of db in their order; *pk its INTEGER PRIMARY KEY (malloc'd) or NULL. */
static int table_columns(struct crashdb *db, const char *table, struct strvec *cols, char **pk, struct errbuf *e)
{
	char *id = ident(table);
	char *sql = xasprintf("PRAGMA table_info(%s)", id);
	free(id);
	sqlite3_stmt *st = db_prepare(db, sql, e);
	free(sql);
	if (!st)
		return -1;
	int rc, npk = 0;
	char *one = NULL, *type = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		strvec_push(cols, name);
		if (sqlite3_column_int(st, 5) > 0) {
			npk++;
			free(one);
			free(type);
			one = xstrdup(name);
			type = xstrdup(sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
		}
	}
	sqlite3_finalize(st);
	if (pk)
		*pk = npk == 1 && !strcasecmp(type, "INTEGER") ? xstrdup(one) : NULL;
	free(one);
	free(type);
	return rc == SQLITE_DONE ? 0 : db_fail(db, e, EXIT_DATAERR, "cannot read a table's columns");
}

static int col_index(const struct strvec *cols, const char *name)
{
	for (size_t i = 0; name && i < cols->n; i++)
		if (!strcmp(cols->v[i], name))
			return (int)i;
	return -1;
}

/* The output's tree of tables, checked against the input's; the statements prepared. */
static int plan(struct merge *m)
{
	struct errbuf *e = m->e;
	struct strvec names = STRVEC_INIT, in_names = STRVEC_INIT;
	int r = table_names(m->out, &names, e);
	if (r == 0)
		r = table_names(m->in, &in_names, e);
	m->nt = names.n;
	m->t = xcalloc(names.n ? names.n : 1, sizeof(*m->t));
	for (size_t i = 0; i < names.n; i++)
		m->t[i] = (struct mtable){ .name = xstrdup(names.v[i]), .parent = -1, .fk_col = -1, .pk_col = -1 };
	for (size_t i = 0; r == 0 && i < in_names.n; i++)
		if (find_table(m->t, m->nt, in_names.v[i]) < 0)
			r = errbuf_set(e, EXIT_DATAERR, "'%s' has a table '%s' that '%s' has not: it was written by another "
				       "crashlab; merge with the crashlab that made it", crashdb_path(m->in), in_names.v[i],
				       crashdb_path(m->out));
	/* each table's parent, from its foreign key */
	for (size_t i = 0; r == 0 && i < m->nt; i++) {
		struct mtable *t = &m->t[i];
		char *id = ident(t->name);
		char *sql = xasprintf("PRAGMA foreign_key_list(%s)", id);
		free(id);
		sqlite3_stmt *st = db_prepare(m->out, sql, e);
		free(sql);
		if (!st) {
			r = -1;
			break;
		}
		int nfk = 0;
		char *to = NULL;
		while (sqlite3_step(st) == SQLITE_ROW) {
			nfk++;
			t->parent = find_table(m->t, m->nt, (const char *)sqlite3_column_text(st, 2));
			free(t->fk);
			t->fk = xstrdup((const char *)sqlite3_column_text(st, 3));
			free(to);
			to = sqlite3_column_text(st, 4) ? xstrdup((const char *)sqlite3_column_text(st, 4)) : NULL;
		}
		sqlite3_finalize(st);
		struct strvec out_cols = STRVEC_INIT;
		r = table_columns(m->out, t->name, &out_cols, &t->pk, e);
		if (r == 0 && ((nfk == 0) != !strcmp(t->name, "runs") || nfk > 1 || (nfk == 1 && t->parent < 0)))
			r = errbuf_set(e, EXIT_SOFTWARE, "table '%s' is not under runs by one foreign key: crashlab db merge "
				       "cannot place its rows", t->name);
		t->fk_to = to;
		/* the input's columns, each of which the output has */
		if (r == 0) {
			int present = 0;
			for (size_t k = 0; k < in_names.n; k++)
				present |= !strcmp(in_names.v[k], t->name);
			if (present)
				r = table_columns(m->in, t->name, &t->cols, NULL, e);
		}
		for (size_t k = 0; r == 0 && k < t->cols.n; k++)
			if (col_index(&out_cols, t->cols.v[k]) < 0)
				r = errbuf_set(e, EXIT_DATAERR, "'%s' has a column %s.%s that '%s' has not: it was written by "
					       "another crashlab; merge with the crashlab that made it", crashdb_path(m->in),
					       t->name, t->cols.v[k], crashdb_path(m->out));
		strvec_free(&out_cols);
		t->fk_col = col_index(&t->cols, t->fk);
		t->pk_col = col_index(&t->cols, t->pk);
		if (r == 0 && t->cols.n && ((t->fk && t->fk_col < 0) || (t->pk && t->pk_col < 0)))
			r = errbuf_set(e, EXIT_DATAERR, "'%s': table %s lacks its key columns", crashdb_path(m->in), t->name);
	}
	/* a table with children must have an id to give them, and they must name it;
	 * every table's parents lead to runs (no table is its own ancestor) */
	for (size_t i = 0; r == 0 && i < m->nt; i++) {
		const struct mtable *t = &m->t[i], *p = t->parent >= 0 ? &m->t[t->parent] : NULL;
		int up = t->parent;
		for (size_t k = 0; up >= 0 && k <= m->nt; k++)
			up = m->t[up].parent;
		if (up >= 0)
			r = errbuf_set(e, EXIT_SOFTWARE, "table '%s' is its own ancestor by its foreign keys: crashlab db "
				       "merge cannot place its rows", t->name);
		else if (p && !p->pk)
			r = errbuf_set(e, EXIT_SOFTWARE, "table '%s' is under '%s', which has no INTEGER PRIMARY KEY: crashlab "
				       "db merge cannot place its rows", t->name, p->name);
		else if (p && t->fk_to && strcmp(t->fk_to, p->pk))
			r = errbuf_set(e, EXIT_SOFTWARE, "table '%s' refers to '%s' by another column than its id: crashlab "
				       "db merge cannot place its rows", t->name, p->name);
	}
	for (size_t i = 0; r == 0 && i < m->nt; i++)
		if (m->t[i].parent >= 0)
			m->t[m->t[i].parent].has_children = 1;
	/* the statements */
	for (size_t i = 0; r == 0 && i < m->nt; i++) {
		struct mtable *t = &m->t[i];
		if (!t->cols.n)
			continue; /* the input has no such table: nothing to copy */
		struct sbuf sel = SBUF_INIT, ins = SBUF_INIT, vals = SBUF_INIT;
		char *tn = ident(t->name);
		sbuf_addf(&sel, "SELECT ");
		sbuf_addf(&ins, "INSERT INTO %s (", tn);
		for (size_t k = 0; k < t->cols.n; k++) {
			char *c = ident(t->cols.v[k]);
			sbuf_addf(&sel, "%s%s", k ? ", " : "", c);
			sbuf_addf(&ins, "%s%s", k ? ", " : "", c);
			sbuf_addf(&vals, "%s?%zu", k ? ", " : "", k + 1);
			free(c);
		}
		sbuf_addf(&sel, " FROM %s ORDER BY rowid", tn);
		sbuf_addf(&ins, ") VALUES (%s)", vals.buf);
		free(tn);
		t->sel = db_prepare(m->in, sel.buf, e);
		if (t->sel) {
			if (sqlite3_prepare_v2(m->out->db, ins.buf, -1, &t->ins, NULL) != SQLITE_OK)
				r = db_fail(m->out, e, EXIT_DATAERR, "cannot prepare the merge");
		} else {
			r = -1;
		}
		sbuf_free(&sel);
		sbuf_free(&ins);
		sbuf_free(&vals);
	}
	strvec_free(&names);
	strvec_free(&in_names);
	return r;
}

static int next_ids(struct merge *m)
{
	for (size_t i = 0; i < m->nt; i++) {
		struct mtable *t = &m->t[i];
		t->rows = 0;
		if (!t->pk)
			continue;
		char *tn = ident(t->name), *pk = ident(t->pk);
		char *sql = xasprintf("SELECT coalesce(max(%s), 0) + 1 FROM %s", pk, tn);
		int r = db_query_int(m->out, sql, &t->next);
		free(sql);
		free(tn);
		free(pk);
		if (r < 0)
			return db_fail(m->out, m->e, EXIT_DATAERR, "cannot read the last ids");
	}
	return 0;
}

/* Insert the row sel stands on into table t, under the new parent id; *new_id its id. */
static int insert_row(struct merge *m, struct mtable *t, int64_t new_parent, int64_t *new_id)
{
	*new_id = 0;
	for (size_t k = 0; k < t->cols.n; k++) {
		int i = (int)k;
		if (i == t->fk_col)
			sqlite3_bind_int64(t->ins, i + 1, new_parent);
		else if (i == t->pk_col)
			sqlite3_bind_int64(t->ins, i + 1, *new_id = t->next++);
		else
			sqlite3_bind_value(t->ins, i + 1, sqlite3_column_value(t->sel, i));
	}
	int rc = sqlite3_step(t->ins);
	sqlite3_reset(t->ins);
	sqlite3_clear_bindings(t->ins);
	if (rc != SQLITE_DONE) {
		char what[200];
		snprintf(what, sizeof(what), "cannot store a row of %s from '%s'", t->name, crashdb_path(m->in));
		return db_fail(m->out, m->e, EXIT_CANTCREAT, what);
	}
	t->rows++;
	return 0;
}

/* Copy table t's rows whose parent row was copied, in rowid order. */
static int copy_table(struct merge *m, struct mtable *t)
{
	const struct mtable *p = &m->t[t->parent];
	int rc, r = 0;
	while (r == 0 && (rc = sqlite3_step(t->sel)) == SQLITE_ROW) {
		int64_t new_parent = ids_get(p, sqlite3_column_int64(t->sel, t->fk_col)), new_id;
		if (!new_parent)
			continue; /* under a run that is not copied */
		int64_t old_id = t->pk_col >= 0 ? sqlite3_column_int64(t->sel, t->pk_col) : 0;
		r = insert_row(m, t, new_parent, &new_id);
		if (r == 0 && t->pk && t->has_children)
			ids_add(t, old_id, new_id);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = db_fail(m->in, m->e, EXIT_DATAERR, "cannot read");
	sqlite3_reset(t->sel);
	return r;
}

/* Every table under runs, each after its parent. */
static int copy_tables(struct merge *m)
{
	for (int progress = 1; progress;) {
		progress = 0;
		for (size_t i = 0; i < m->nt; i++) {
			struct mtable *t = &m->t[i];
			if (t->done || t->parent < 0 || !m->t[t->parent].done)
				continue;
			if (t->sel && copy_table(m, t) < 0)
				return -1;
			t->done = 1;
			progress = 1;
		}
	}
	return 0;
}

static const char *col_text(struct mtable *t, const char *name)
{
	int i = col_index(&t->cols, name);
	return i < 0 ? NULL : (const char *)sqlite3_column_text(t->sel, i);
}

/* Is the run sel stands on in the output already? Its id there, 0 when not, -1 with e. */
static int64_t present(struct merge *m, struct mtable *runs, sqlite3_stmt *dup)
{
	static const char *const keys[] = { "started_at", "cmdline", "workload_text", "workdir" };
	for (int k = 0; k < 4; k++) {
		int i = col_index(&runs->cols, keys[k]);
		if (i < 0)
			sqlite3_bind_null(dup, k + 1);
		else
			sqlite3_bind_value(dup, k + 1, sqlite3_column_value(runs->sel, i));
	}
	int rc = sqlite3_step(dup);
	int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(dup, 0) : 0;
	sqlite3_reset(dup);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_fail(m->out, m->e, EXIT_DATAERR, "cannot look for the run");
	return id;
}

static int merge_runs(struct merge *m, struct crashdb_merge_stats *ms)
{
	int ri = find_table(m->t, m->nt, "runs");
	struct mtable *runs = &m->t[ri];
	if (!runs->sel)
		return 0;
	sqlite3_stmt *dup;
	if (sqlite3_prepare_v2(m->out->db,
			       "SELECT id FROM runs WHERE started_at IS ?1 AND cmdline IS ?2 AND workload_text IS ?3 "
			       "AND workdir IS ?4 ORDER BY id LIMIT 1",
			       -1, &dup, NULL) != SQLITE_OK)
		return db_fail(m->out, m->e, EXIT_DATAERR, "cannot read the runs");
	int rc, r = 0;
	while (r == 0 && (rc = sqlite3_step(runs->sel)) == SQLITE_ROW) {
		int64_t old_id = sqlite3_column_int64(runs->sel, runs->pk_col), new_id;
		const char *status = col_text(runs, "status"), *wl = col_text(runs, "workload_file");
		char why[300];
		why[0] = 0;
		if (status && !strcmp(status, "running")) {
			snprintf(why, sizeof(why), "is still running (or was cut short: 'crashlab run --resume %" PRId64
				 "' where it ran finishes it); merge it once it has ended", old_id);
		} else {
			int64_t there = present(m, runs, dup);
			if (there < 0) {
				r = -1;
				break;
			}
			if (there)
				snprintf(why, sizeof(why), "is in '%s' already (run %" PRId64 ": the same start, command "
					 "line, workload and folder)", crashdb_path(m->out), there);
		}
		if (why[0]) {
			if (status && !strcmp(status, "running"))
				ms->running++;
			else
				ms->duplicates++;
			if (ms->skipped) {
				char *msg = xasprintf("run %" PRId64 " of '%s' (%s, started %s) %s", old_id,
						      crashdb_path(m->in), wl ? wl : "no workload file",
						      col_text(runs, "started_at") ? col_text(runs, "started_at") : "?", why);
				ms->skipped(ms->ctx, msg);
				free(msg);
			}
			continue;
		}
		r = insert_row(m, runs, 0, &new_id);
		if (r == 0) {
			ids_add(runs, old_id, new_id);
			ms->runs++;
			if (!ms->first_id)
				ms->first_id = new_id;
			ms->last_id = new_id;
		}
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = db_fail(m->in, m->e, EXIT_DATAERR, "cannot read the runs");
	sqlite3_reset(runs->sel);
	sqlite3_finalize(dup);
	runs->done = 1;
	if (r == 0)
		r = copy_tables(m);
	return r;
}

int crashdb_merge(struct crashdb *out, struct crashdb *in, struct crashdb_merge_stats *ms, struct errbuf *e)
{
	struct merge m = { .out = out, .in = in, .e = e };
	ms->runs = ms->duplicates = ms->running = 0;
	ms->fsruns = ms->states = ms->rows = 0;
	ms->first_id = ms->last_id = 0;
	int nested;
	int r = db_read_begin(in, e);
	if (r < 0)
		return -1;
	int began = r;
	char what[300];
	snprintf(what, sizeof(what), "cannot merge '%s'", crashdb_path(in));
	r = plan(&m);
	if (r == 0 && db_tx_begin(out, &nested, what, e) == 0) {
		r = next_ids(&m);
		if (r == 0)
			r = merge_runs(&m, ms);
		r = db_tx_end(out, nested, r == 0, what, e);
	} else {
		r = -1;
	}
	if (r == 0)
		for (size_t i = 0; i < m.nt; i++) {
			ms->rows += m.t[i].rows;
			if (!strcmp(m.t[i].name, "fsruns"))
				ms->fsruns = m.t[i].rows;
			if (!strcmp(m.t[i].name, "states"))
				ms->states = m.t[i].rows;
		}
	mtables_free(m.t, m.nt);
	db_read_end(in, began);
	return r;
}

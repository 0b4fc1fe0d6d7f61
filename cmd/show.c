/*
 * show.c - `crashlab show`: print one run (its workload, and per file system
 * the ops as carried out, the write-log summary and the table of crash
 * states), or one crash state in full (its recipe, the mount and fsck
 * outcome, which ops had completed, and the observed tree, one line per
 * node), as text or as a JSON document.
 *
 * Everything comes from the database through plain queries; nothing here
 * writes. The rows are read into the crashdb.h structs first, then one of
 * two renderers prints them, so text and JSON always say the same thing.
 * The tree is sorted with '/' below every other byte, so a directory's
 * children follow it directly ("A", "A/x", "A-b", not "A", "A-b", "A/x").
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "crashdb/crashdb.h"
#include "cmd/opt.h"

static const char show_usage[] =
	"usage: crashlab show [--db FILE] [--format text|json] RUN [FS STATE]\n"
	"\n"
	"Print what a run stored. RUN is a run id or 'last'.\n"
	"\n"
	"With RUN alone: when and how the run was made (command line, accelerator,\n"
	"kernel, crash mode), the workload with its line numbers, then for each file\n"
	"system its mkfs and mount options, how the recording went, the write-log\n"
	"summary, every op with its result and the log position at which it returned,\n"
	"and the crash states: index, kind, flush point, last op completed by then,\n"
	"whether it mounted, whether fsck was clean, the tree's hash and node count.\n"
	"\n"
	"With FS and STATE (the state's index, as in that table): the state's recipe,\n"
	"the mount and fsck outcome with their messages, which ops had completed\n"
	"(returned at a log position <= the state's point), and the tree the crash\n"
	"left, one line per node: type and mode, links, owner, size, path, the link\n"
	"target, xattrs, and the content (inline text, or one token per 4 KiB block:\n"
	"'p5' is the pattern op 5 wrote there, 'z' zeros, 'h...' other bytes;\n"
	"'p5×16' is 16 such blocks in a row).\n"
	"\n"
	"--format json prints the same data as one JSON document; --verbose adds\n"
	"each recording's QEMU command line to the text.\n"
	"\n"
	"examples:\n"
	"  crashlab show last\n"
	"  crashlab show 3 ext4 2\n"
	"  crashlab show --db runs/ci.db --format json last xfs 0 | jq .tree\n";

/* ------------------------------------------------------------------ */
/* Reading */

struct run_view {
	struct crashdb_run r;
	char *finished_at, *status;
	bool has_exit;
	int exit_code;
};

struct state_view {
	struct crashdb_state s;
	int64_t n_nodes;
};

struct fs_view {
	struct crashdb_fsrun f;
	struct crashdb_op *ops;
	size_t nops;
	struct state_view *states;
	size_t nstates;
};

static struct crashdb *cdb;
static const char *db_path;

#define prepare(sql) crashdb_prepare(cdb, sql)
#define col_str(st, i) crashdb_col_text(st, i)
#define db_die(what) crashdb_read_die(cdb, what)

static void free_str(const char *s)
{
	free((char *)s);
}

static void read_run(int64_t id, struct run_view *v)
{
	sqlite3_stmt *st = prepare(
		"SELECT id, started_at, finished_at, status, exit_code, cmdline, accel, kernel_version,"
		" kernel_key, workload_file, workload_text, crash_mode, seed, max_states, torn"
		" FROM runs WHERE id = ?");
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		die_code(EXIT_NOINPUT, "run %" PRId64 " does not exist in '%s'", id, db_path);
	if (rc != SQLITE_ROW)
		db_die("the run");
	memset(v, 0, sizeof(*v));
	v->r.id = sqlite3_column_int64(st, 0);
	v->r.started_at = col_str(st, 1);
	v->finished_at = col_str(st, 2);
	v->status = col_str(st, 3);
	v->has_exit = sqlite3_column_type(st, 4) != SQLITE_NULL;
	v->exit_code = sqlite3_column_int(st, 4);
	v->r.cmdline = col_str(st, 5);
	v->r.accel = col_str(st, 6);
	v->r.kernel_version = col_str(st, 7);
	v->r.kernel_key = col_str(st, 8);
	v->r.workload_file = col_str(st, 9);
	v->r.workload_text = col_str(st, 10);
	v->r.crash_mode = col_str(st, 11);
	v->r.seed = sqlite3_column_int64(st, 12);
	v->r.max_states = sqlite3_column_int64(st, 13);
	v->r.torn = sqlite3_column_int(st, 14);
	sqlite3_finalize(st);
}

static void free_run(struct run_view *v)
{
	free_str(v->r.started_at);
	free_str(v->r.cmdline);
	free_str(v->r.accel);
	free_str(v->r.kernel_version);
	free_str(v->r.kernel_key);
	free_str(v->r.workload_file);
	free_str(v->r.workload_text);
	free_str(v->r.crash_mode);
	free(v->finished_at);
	free(v->status);
}

static void read_ops(struct fs_view *fv)
{
	sqlite3_stmt *st = prepare("SELECT op_id, section, text, line, ret, err, ino, ino2, log_pos, ms"
				   " FROM ops WHERE fsrun_id = ? ORDER BY op_id");
	sqlite3_bind_int64(st, 1, fv->f.id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (fv->nops == cap) {
			cap = cap ? 2 * cap : 16;
			fv->ops = xrealloc(fv->ops, cap * sizeof(*fv->ops));
		}
		struct crashdb_op *o = &fv->ops[fv->nops++];
		o->op_id = sqlite3_column_int(st, 0);
		o->section = sqlite3_column_int(st, 1);
		o->text = col_str(st, 2);
		o->line = sqlite3_column_int(st, 3);
		o->ret = sqlite3_column_int64(st, 4);
		o->err = sqlite3_column_int(st, 5);
		o->ino = (uint64_t)sqlite3_column_int64(st, 6);
		o->ino2 = (uint64_t)sqlite3_column_int64(st, 7);
		o->log_pos = sqlite3_column_int64(st, 8);
		o->ms = sqlite3_column_double(st, 9);
	}
	if (rc != SQLITE_DONE)
		db_die("the ops");
	sqlite3_finalize(st);
}

static const char state_cols[] =
	"SELECT id, idx, kind, spec, point, last_completed_op, mount_ok, mount_msg, fsck_status, fsck_clean,"
	" fsck_output, tree_hash, n_nodes, ms_replay, ms_mount, ms_capture, ms_fsck, ms_other FROM states";

static void state_from_row(sqlite3_stmt *st, struct state_view *v)
{
	struct crashdb_state *s = &v->s;
	s->id = sqlite3_column_int64(st, 0);
	s->idx = sqlite3_column_int(st, 1);
	s->kind = col_str(st, 2);
	s->spec = col_str(st, 3);
	s->point = sqlite3_column_int64(st, 4);
	s->last_completed_op = sqlite3_column_int(st, 5);
	s->mount_ok = sqlite3_column_int(st, 6);
	s->mount_msg = col_str(st, 7);
	s->fsck_status = sqlite3_column_int(st, 8);
	s->fsck_clean = sqlite3_column_int(st, 9);
	s->fsck_output = col_str(st, 10);
	s->tree_hash = col_str(st, 11);
	v->n_nodes = sqlite3_column_int64(st, 12);
	s->ms_replay = sqlite3_column_double(st, 13);
	s->ms_mount = sqlite3_column_double(st, 14);
	s->ms_capture = sqlite3_column_double(st, 15);
	s->ms_fsck = sqlite3_column_double(st, 16);
	s->ms_other = sqlite3_column_double(st, 17);
}

static void free_state(struct state_view *v)
{
	free_str(v->s.kind);
	free_str(v->s.spec);
	free_str(v->s.mount_msg);
	free_str(v->s.fsck_output);
	free_str(v->s.tree_hash);
}

static void read_states(struct fs_view *fv)
{
	char *sql = xasprintf("%s WHERE fsrun_id = ? ORDER BY idx", state_cols);
	sqlite3_stmt *st = prepare(sql);
	free(sql);
	sqlite3_bind_int64(st, 1, fv->f.id);
	size_t cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (fv->nstates == cap) {
			cap = cap ? 2 * cap : 16;
			fv->states = xrealloc(fv->states, cap * sizeof(*fv->states));
		}
		state_from_row(st, &fv->states[fv->nstates++]);
	}
	if (rc != SQLITE_DONE)
		db_die("the crash states");
	sqlite3_finalize(st);
}

/* The fs runs of a run (all, or only those named fs), with their ops; states too when want_states. */
static size_t read_fsruns(int64_t run_id, const char *fs, bool want_states, struct fs_view **out)
{
	sqlite3_stmt *st = prepare(
		"SELECT id, run_id, fs, mkfs_opts, mount_opts, base_image, image_size, qemu_cmdline, log_entries,"
		" log_committed, log_flushes, log_writes, log_discards, log_bytes, log_truncated, setup_end,"
		" outcome, error, record_ms, check_ms, log_path FROM fsruns"
		" WHERE run_id = ?1 AND (?2 IS NULL OR fs = ?2) ORDER BY id");
	sqlite3_bind_int64(st, 1, run_id);
	if (fs)
		sqlite3_bind_text(st, 2, fs, -1, SQLITE_STATIC);
	struct fs_view *v = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4;
			v = xrealloc(v, cap * sizeof(*v));
		}
		struct fs_view *fv = &v[n++];
		memset(fv, 0, sizeof(*fv));
		struct crashdb_fsrun *f = &fv->f;
		f->id = sqlite3_column_int64(st, 0);
		f->run_id = sqlite3_column_int64(st, 1);
		f->fs = col_str(st, 2);
		f->mkfs_opts = col_str(st, 3);
		f->mount_opts = col_str(st, 4);
		f->base_image = col_str(st, 5);
		f->image_size = sqlite3_column_int64(st, 6);
		f->qemu_cmdline = col_str(st, 7);
		f->log_entries = sqlite3_column_int64(st, 8);
		f->log_committed = sqlite3_column_int64(st, 9);
		f->log_flushes = sqlite3_column_int64(st, 10);
		f->log_writes = sqlite3_column_int64(st, 11);
		f->log_discards = sqlite3_column_int64(st, 12);
		f->log_bytes = sqlite3_column_int64(st, 13);
		f->log_truncated = sqlite3_column_int(st, 14);
		f->setup_end = sqlite3_column_int64(st, 15);
		f->outcome = col_str(st, 16);
		f->error = col_str(st, 17);
		f->record_ms = sqlite3_column_double(st, 18);
		f->check_ms = sqlite3_column_double(st, 19);
		f->log_path = col_str(st, 20);
	}
	if (rc != SQLITE_DONE)
		db_die("the file system runs");
	sqlite3_finalize(st);
	for (size_t i = 0; i < n; i++) {
		read_ops(&v[i]);
		if (want_states)
			read_states(&v[i]);
	}
	*out = v;
	return n;
}

static void free_fsruns(struct fs_view *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct crashdb_fsrun *f = &v[i].f;
		free_str(f->fs);
		free_str(f->mkfs_opts);
		free_str(f->mount_opts);
		free_str(f->base_image);
		free_str(f->log_path);
		free_str(f->qemu_cmdline);
		free_str(f->outcome);
		free_str(f->error);
		for (size_t k = 0; k < v[i].nops; k++)
			free_str(v[i].ops[k].text);
		free(v[i].ops);
		for (size_t k = 0; k < v[i].nstates; k++)
			free_state(&v[i].states[k]);
		free(v[i].states);
	}
	free(v);
}

/* The file system names a run has, for "it has: ext4, xfs". */
static char *fs_names(int64_t run_id)
{
	sqlite3_stmt *st = prepare("SELECT fs FROM fsruns WHERE run_id = ? ORDER BY id");
	sqlite3_bind_int64(st, 1, run_id);
	struct sbuf sb = SBUF_INIT;
	while (sqlite3_step(st) == SQLITE_ROW)
		sbuf_addf(&sb, "%s%s", sb.len ? ", " : "", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (!sb.len)
		sbuf_adds(&sb, "none");
	return sbuf_detach(&sb);
}

static void read_state(const struct fs_view *fv, int idx, struct state_view *v)
{
	char *sql = xasprintf("%s WHERE fsrun_id = ? AND idx = ?", state_cols);
	sqlite3_stmt *st = prepare(sql);
	free(sql);
	sqlite3_bind_int64(st, 1, fv->f.id);
	sqlite3_bind_int(st, 2, idx);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		sqlite3_stmt *c = prepare("SELECT count(*), min(idx), max(idx) FROM states WHERE fsrun_id = ?");
		sqlite3_bind_int64(c, 1, fv->f.id);
		if (sqlite3_step(c) != SQLITE_ROW)
			db_die("the crash states");
		if (sqlite3_column_int64(c, 0) == 0)
			die_code(EXIT_NOINPUT, "state %d does not exist for %s in run %" PRId64 " (it has no states)",
				 idx, fv->f.fs, fv->f.run_id);
		die_code(EXIT_NOINPUT, "state %d does not exist for %s in run %" PRId64 " (it has states %d..%d)", idx,
			 fv->f.fs, fv->f.run_id, sqlite3_column_int(c, 1), sqlite3_column_int(c, 2));
	}
	if (rc != SQLITE_ROW)
		db_die("the crash state");
	state_from_row(st, v);
	sqlite3_finalize(st);
}

/* Tree order: '/' sorts below every other byte, so children follow their directory. */
static int path_cmp(const void *a, const void *b)
{
	const unsigned char *p = (const unsigned char *)((const struct tree_node *)a)->path;
	const unsigned char *q = (const unsigned char *)((const struct tree_node *)b)->path;
	for (; *p && *p == *q; p++, q++)
		;
	int x = *p == '/' ? 1 : *p ? *p + 1 : 0;
	int y = *q == '/' ? 1 : *q ? *q + 1 : 0;
	return x - y;
}

static size_t read_nodes(int64_t state_id, struct tree_node **out)
{
	size_t n = crashdb_nodes_read(cdb, state_id, out);
	if (n)
		qsort(*out, n, sizeof(**out), path_cmp);
	return n;
}

static void free_nodes(struct tree_node *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].xattrs);
		free(v[i].target);
		free(v[i].blocks);
		free(v[i].content);
	}
	free(v);
}

/* ------------------------------------------------------------------ */
/* Helpers shared by both renderers */

static const struct {
	int err;
	const char *name;
} errno_names[] = {
	{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EINTR, "EINTR" }, { EIO, "EIO" }, { ENXIO, "ENXIO" },
	{ E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
	{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" },
	{ EXDEV, "EXDEV" }, { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
	{ EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" }, { ENOTTY, "ENOTTY" },
	{ ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
	{ EROFS, "EROFS" }, { EMLINK, "EMLINK" }, { EPIPE, "EPIPE" }, { ERANGE, "ERANGE" },
	{ EDEADLK, "EDEADLK" }, { ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSYS, "ENOSYS" },
	{ ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" }, { ENODATA, "ENODATA" }, { EOVERFLOW, "EOVERFLOW" },
	{ EOPNOTSUPP, "EOPNOTSUPP" }, { ETIMEDOUT, "ETIMEDOUT" }, { ESTALE, "ESTALE" },
	{ EDQUOT, "EDQUOT" }, { ECANCELED, "ECANCELED" }, { EUCLEAN, "EUCLEAN" },
};

/* "ENOENT", or NULL for an errno the table does not know. */
static const char *errno_name(int err)
{
	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return NULL;
}

/* "ok", "ok (5)", or "-1 ENOENT". */
static void op_result(const struct crashdb_op *o, char *buf, size_t len)
{
	if (o->err) {
		const char *name = errno_name(o->err);
		if (name)
			snprintf(buf, len, "%" PRId64 " %s", o->ret, name);
		else
			snprintf(buf, len, "%" PRId64 " errno %d", o->ret, o->err);
	} else if (o->ret) {
		snprintf(buf, len, "ok (%" PRId64 ")", o->ret);
	} else {
		snprintf(buf, len, "ok");
	}
}

/* Length of the valid UTF-8 sequence (2..4 bytes) at s, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = utf8_seq(s + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* Mostly text: at most one byte in eight is neither printable, whitespace nor UTF-8. */
static bool printable_ish(const unsigned char *s, size_t n)
{
	size_t bad = 0;
	for (size_t i = 0; i < n;) {
		if ((s[i] >= 0x20 && s[i] < 0x7f) || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			i++;
			continue;
		}
		size_t l = s[i] >= 0x80 ? utf8_seq(s + i, n - i) : 0;
		if (l) {
			i += l;
			continue;
		}
		bad++;
		i++;
	}
	return bad * 8 <= n;
}

/* Text escaping: C-style escapes for control bytes and invalid UTF-8, '"' and '\' escaped when quoted. */
static void esc_text(struct sbuf *sb, const void *data, size_t n, bool quoted)
{
	const unsigned char *s = data;
	if (quoted)
		sbuf_adds(sb, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c >= 0x80) {
			size_t l = utf8_seq(s + i, n - i);
			if (l) {
				sbuf_add(sb, s + i, l);
				i += l - 1;
			} else {
				sbuf_addf(sb, "\\x%02x", c);
			}
		} else if (c == '\n') {
			sbuf_adds(sb, "\\n");
		} else if (c == '\t') {
			sbuf_adds(sb, "\\t");
		} else if (c == '\r') {
			sbuf_adds(sb, "\\r");
		} else if (c == '\0' && !(i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7')) {
			sbuf_adds(sb, "\\0");
		} else if (c < 0x20 || c == 0x7f) {
			sbuf_addf(sb, "\\x%02x", c);
		} else if (c == '\\' || (quoted && c == '"')) {
			sbuf_addf(sb, "\\%c", c);
		} else {
			sbuf_add(sb, &c, 1);
		}
	}
	if (quoted)
		sbuf_adds(sb, "\"");
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo the percent-encoding inside the xattrs field; a malformed %XX stays as is. */
static void pct_decode(struct sbuf *sb, const char *s, size_t n)
{
	sbuf_reset(sb);
	sbuf_add(sb, "", 0);
	for (size_t i = 0; i < n; i++) {
		int h, l;
		if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 && (l = hexval(s[i + 2])) >= 0) {
			unsigned char c = (unsigned char)(h * 16 + l);
			sbuf_add(sb, &c, 1);
			i += 2;
		} else {
			sbuf_add(sb, &s[i], 1);
		}
	}
}

/* Call fn for each xattr (decoded name, decoded value) of a tree node's xattrs field. */
static void each_xattr(const char *xattrs, void (*fn)(void *ctx, const struct sbuf *name, const struct sbuf *value),
		       void *ctx)
{
	struct sbuf name = SBUF_INIT, value = SBUF_INIT;
	for (const char *p = xattrs; p && *p;) {
		size_t l = strcspn(p, ";");
		const char *eq = memchr(p, '=', l);
		size_t nl = eq ? (size_t)(eq - p) : l;
		pct_decode(&name, p, nl);
		pct_decode(&value, eq ? eq + 1 : p + l, eq ? l - nl - 1 : 0);
		fn(ctx, &name, &value);
		p += l;
		if (*p)
			p++;
	}
	sbuf_free(&name);
	sbuf_free(&value);
}

/* Call fn for each run of equal block tokens. */
static void each_block_run(const char *blocks, void (*fn)(void *ctx, const char *tok, size_t len, size_t count),
			   void *ctx)
{
	const char *p = blocks;
	while (p && *p) {
		size_t l = strcspn(p, ",");
		size_t count = 1;
		const char *q = p + l;
		while (*q == ',' && !strncmp(q + 1, p, l) && (q[1 + l] == ',' || q[1 + l] == '\0')) {
			count++;
			q += 1 + l;
		}
		fn(ctx, p, l, count);
		p = *q ? q + 1 : q;
	}
}

static void mode_string(const struct tree_node *t, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	out[0] = t->type == 'f' ? '-' : t->type == 'd' ? 'd' : t->type == 'l' ? 'l' : '?';
	for (int i = 0; i < 9; i++)
		out[1 + i] = t->mode & (0400u >> i) ? rwx[i] : '-';
	if (t->mode & 04000)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (t->mode & 02000)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (t->mode & 01000)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = '\0';
}

static const char *fsck_word(const struct crashdb_state *s)
{
	if (s->fsck_status < 0)
		return "not run";
	return s->fsck_clean ? "clean" : "complaint";
}

static bool op_completed(const struct crashdb_op *o, const struct crashdb_state *s)
{
	return o->log_pos <= s->point;
}

/* ------------------------------------------------------------------ */
/* Text */

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* A multi-line message, each line indented under a label column. */
static void print_block(const char *text)
{
	const char *p = text;
	while (p && *p) {
		size_t l = strcspn(p, "\n");
		printf("          | %.*s\n", (int)l, p);
		p += l;
		if (*p)
			p++;
	}
}

static void print_size(const char *label, int64_t bytes)
{
	if (bytes > 0 && bytes % (1 << 20) == 0)
		printf("%s%" PRId64 " MiB", label, bytes >> 20);
	else
		printf("%s%" PRId64 " bytes", label, bytes);
}

static void text_run(const struct run_view *v)
{
	const struct crashdb_run *r = &v->r;
	printf("run %" PRId64 "\n", r->id);
	printf("started   %s\n", or_dash(r->started_at));
	if (v->finished_at)
		printf("finished  %s\n", v->finished_at);
	printf("status    %s", or_dash(v->status));
	if (v->has_exit)
		printf(" (exit %d)", v->exit_code);
	printf("\ncommand   %s\n", or_dash(r->cmdline));
	printf("accel     %s\n", or_dash(r->accel));
	printf("kernel    %s", or_dash(r->kernel_version));
	if (r->kernel_key)
		printf(" (%s)", r->kernel_key);
	printf("\ncrash     %s", or_dash(r->crash_mode));
	if (r->crash_mode && !strcmp(r->crash_mode, "reorder"))
		printf(", seed %" PRId64 "%s", r->seed, r->torn ? ", torn writes" : "");
	if (r->max_states > 0)
		printf(", at most %" PRId64 " states", r->max_states);
	printf("\nworkload  %s\n", or_dash(r->workload_file));
	const char *p = r->workload_text;
	for (int line = 1; p && *p; line++) {
		size_t l = strcspn(p, "\n");
		printf("  %4d  %.*s\n", line, (int)l, p);
		p += l;
		if (*p)
			p++;
	}
}

static void text_fsrun(const struct fs_view *fv)
{
	const struct crashdb_fsrun *f = &fv->f;
	printf("\n== %s (fs run %" PRId64 ")\n", f->fs, f->id);
	printf("mkfs      %s\n", f->mkfs_opts && *f->mkfs_opts ? f->mkfs_opts : "(defaults)");
	printf("mount     %s\n", f->mount_opts && *f->mount_opts ? f->mount_opts : "(defaults)");
	print_size("image     ", f->image_size);
	if (f->base_image)
		printf(", base %s", f->base_image);
	printf("\noutcome   %s", or_dash(f->outcome));
	printf(" (recorded in %.0f ms, checked in %.0f ms)\n", f->record_ms, f->check_ms);
	if (f->error && *f->error)
		print_block(f->error);
	if (verbose && f->qemu_cmdline)
		printf("qemu      %s\n", f->qemu_cmdline);
	printf("log       %" PRId64 " entries (%" PRId64 " committed), %" PRId64 " flushes, %" PRId64 " writes, %" PRId64
	       " discards, %" PRId64 " bytes%s\n",
	       f->log_entries, f->log_committed, f->log_flushes, f->log_writes, f->log_discards, f->log_bytes,
	       f->log_truncated ? ", a truncated last entry dropped" : "");
	if (f->log_path)
		printf("log file  %s\n", f->log_path);
	printf("setup     ends at log position %" PRId64 "\n", f->setup_end);

	printf("\nops\n");
	int rw = 6;
	char res[64];
	for (size_t i = 0; i < fv->nops; i++) {
		op_result(&fv->ops[i], res, sizeof(res));
		if ((int)strlen(res) > rw)
			rw = (int)strlen(res);
	}
	if (fv->nops)
		printf("  %4s  %-5s  %4s  %-*s  %7s  %s\n", "op", "sect", "line", rw, "result", "log pos", "text");
	for (size_t i = 0; i < fv->nops; i++) {
		const struct crashdb_op *o = &fv->ops[i];
		op_result(o, res, sizeof(res));
		printf("  %4d  %-5s  %4d  %-*s  %7" PRId64 "  %s\n", o->op_id, o->section ? "run" : "setup", o->line, rw,
		       res, o->log_pos, or_dash(o->text));
	}
	if (!fv->nops)
		printf("  (none recorded)\n");

	printf("\nstates (%zu)\n", fv->nstates);
	if (!fv->nstates)
		return;
	printf("  %4s  %-6s  %7s  %7s  %-6s  %-9s  %-12s  %5s\n", "idx", "kind", "point", "last op", "mount", "fsck",
	       "tree", "nodes");
	for (size_t i = 0; i < fv->nstates; i++) {
		const struct crashdb_state *s = &fv->states[i].s;
		char last[16];
		snprintf(last, sizeof(last), "%d", s->last_completed_op);
		printf("  %4d  %-6s  %7" PRId64 "  %7s  %-6s  %-9s  %-12.12s  %5" PRId64 "\n", s->idx, or_dash(s->kind),
		       s->point, s->last_completed_op ? last : "-", s->mount_ok ? "ok" : "failed", fsck_word(s),
		       or_dash(s->tree_hash), fv->states[i].n_nodes);
	}
}

static void text_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	struct sbuf *sb = ctx;
	sbuf_adds(sb, " ");
	esc_text(sb, name->buf, name->len, false);
	sbuf_adds(sb, "=");
	esc_text(sb, value->buf, value->len, true);
}

static void text_block_run(void *ctx, const char *tok, size_t len, size_t count)
{
	struct sbuf *sb = ctx;
	if (sb->len && sb->buf[sb->len - 1] != '[')
		sbuf_adds(sb, ",");
	sbuf_add(sb, tok, len);
	if (count > 1)
		sbuf_addf(sb, "×%zu", count);
}

static void text_node(const struct tree_node *t, int wl, int wo, int ws)
{
	char mode[11], owner[32];
	mode_string(t, mode);
	snprintf(owner, sizeof(owner), "%" PRIu32 ":%" PRIu32, t->uid, t->gid);
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "%s  %*" PRIu32 "  %-*s  %*" PRIu64 "  ", mode, wl, t->nlink, wo, owner, ws, t->size);
	esc_text(&sb, t->path, strlen(t->path), false);
	if (t->type == 'l' && t->target) {
		sbuf_adds(&sb, " -> ");
		esc_text(&sb, t->target, strlen(t->target), false);
	}
	if (t->type == 'f' && t->size > 0) {
		sbuf_adds(&sb, "  ");
		/* Short or text-like inline content says more than a hash. */
		if (t->content && (printable_ish(t->content, t->content_len) || t->content_len <= 64 || !t->blocks)) {
			esc_text(&sb, t->content, t->content_len, true);
		} else if (t->blocks) {
			sbuf_adds(&sb, "[");
			each_block_run(t->blocks, text_block_run, &sb);
			sbuf_adds(&sb, "]");
		}
	}
	if (t->xattrs && *t->xattrs) {
		sbuf_adds(&sb, "  xattrs");
		each_xattr(t->xattrs, text_xattr, &sb);
	}
	printf("%s\n", sb.buf);
	sbuf_free(&sb);
}

static int digits(uint64_t v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* The judge's findings on a state (schema v2), when it was judged: LOST, broken and bonus. */
static void text_verdicts(const struct run_view *rv, const struct fs_view *fv, const struct crashdb_state *s)
{
	sqlite3_stmt *st = prepare("SELECT verdict, model, reason FROM verdicts WHERE state_id = ?"
				   " AND verdict IN ('LOST', 'broken', 'bonus') ORDER BY verdict = 'bonus', id");
	sqlite3_bind_int64(st, 1, s->id);
	int first = 1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (first)
			printf("\nverdicts (all models; 'crashlab report %" PRId64 "' explains the run's findings)\n",
			       rv->r.id);
		first = 0;
		printf("  %-6s [%s] %s\n", (const char *)sqlite3_column_text(st, 0),
		       (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	(void)fv;
}

static void text_state(const struct run_view *rv, const struct fs_view *fv, const struct state_view *sv,
		       const struct tree_node *nodes, size_t n)
{
	const struct crashdb_state *s = &sv->s;
	printf("run %" PRId64 ", %s (fs run %" PRId64 "), state %d\n", rv->r.id, fv->f.fs, fv->f.id, s->idx);
	printf("kind      %s\n", or_dash(s->kind));
	printf("spec      %s\n", or_dash(s->spec));
	printf("point     %" PRId64 "\n", s->point);
	if (s->last_completed_op)
		printf("last op   %d (the last op completed by this point)\n", s->last_completed_op);
	else
		printf("last op   - (no op had completed by this point)\n");
	printf("mount     %s\n", s->mount_ok ? "ok" : "failed");
	if (s->mount_msg && *s->mount_msg)
		print_block(s->mount_msg);
	if (s->fsck_status < 0)
		printf("fsck      not run\n");
	else
		printf("fsck      %s (exit %d)\n", fsck_word(s), s->fsck_status);
	if (s->fsck_output && *s->fsck_output)
		print_block(s->fsck_output);
	printf("tree      %s, %" PRId64 " nodes\n", or_dash(s->tree_hash), sv->n_nodes);
	printf("times     replay %.1f ms, mount %.1f ms, capture %.1f ms, fsck %.1f ms, other %.1f ms\n", s->ms_replay,
	       s->ms_mount, s->ms_capture, s->ms_fsck, s->ms_other);

	printf("\nops\n");
	for (size_t i = 0; i < fv->nops; i++) {
		const struct crashdb_op *o = &fv->ops[i];
		printf("  %-13s  %4d  %s\n", op_completed(o, s) ? "completed" : "not completed", o->op_id, or_dash(o->text));
	}
	if (!fv->nops)
		printf("  (none recorded)\n");

	printf("\ntree\n");
	int wl = 1, wo = 3, ws = 1;
	for (size_t i = 0; i < n; i++) {
		char owner[32];
		int l = snprintf(owner, sizeof(owner), "%" PRIu32 ":%" PRIu32, nodes[i].uid, nodes[i].gid);
		if (digits(nodes[i].nlink) > wl)
			wl = digits(nodes[i].nlink);
		if (l > wo)
			wo = l;
		if (digits(nodes[i].size) > ws)
			ws = digits(nodes[i].size);
	}
	for (size_t i = 0; i < n; i++)
		text_node(&nodes[i], wl, wo, ws);
	if (!n)
		printf("  (empty%s)\n", s->mount_ok ? "" : ": the state did not mount");
	text_verdicts(rv, fv, s);
}

/* ------------------------------------------------------------------ */
/* JSON: a small pretty-printing writer */

struct json {
	int depth;
	int count[32];     /* values written so far at each depth */
	bool inline_[32];  /* this container is printed on one line */
};

static void j_indent(int depth)
{
	putchar('\n');
	for (int i = 0; i < depth; i++)
		fputs("  ", stdout);
}

static void j_string(const void *data, size_t n)
{
	const unsigned char *s = data;
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			printf("\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", stdout);
		} else if (c == '\t') {
			fputs("\\t", stdout);
		} else if (c == '\r') {
			fputs("\\r", stdout);
		} else if (c < 0x20 || c == 0x7f) {
			printf("\\u%04x", c);
		} else if (c >= 0x80) {
			size_t l = utf8_seq(s + i, n - i);
			if (l) {
				fwrite(s + i, 1, l, stdout);
				i += l - 1;
			} else {
				printf("\\u%04x", c); /* an invalid byte, read as Latin-1 */
			}
		} else {
			putchar(c);
		}
	}
	putchar('"');
}

/* Separator and key before a value. */
static void j_key(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->count[j->depth]++)
			putchar(',');
		if (j->inline_[j->depth]) {
			if (j->count[j->depth] > 1)
				putchar(' ');
		} else {
			j_indent(j->depth);
		}
	}
	if (key) {
		j_string(key, strlen(key));
		fputs(": ", stdout);
	}
}

static void j_open(struct json *j, const char *key, char c, bool inl)
{
	j_key(j, key);
	putchar(c);
	j->depth++;
	j->count[j->depth] = 0;
	j->inline_[j->depth] = inl || (j->depth > 1 && j->inline_[j->depth - 1]);
}

static void j_close(struct json *j, char c)
{
	bool empty = j->count[j->depth] == 0, inl = j->inline_[j->depth];
	j->depth--;
	if (!empty && !inl)
		j_indent(j->depth);
	putchar(c);
	if (j->depth == 0)
		putchar('\n');
}

static void j_str(struct json *j, const char *key, const char *s)
{
	j_key(j, key);
	if (s)
		j_string(s, strlen(s));
	else
		fputs("null", stdout);
}

static void j_int(struct json *j, const char *key, int64_t v)
{
	j_key(j, key);
	printf("%" PRId64, v);
}

static void j_uint(struct json *j, const char *key, uint64_t v)
{
	j_key(j, key);
	printf("%" PRIu64, v);
}

static void j_bool(struct json *j, const char *key, bool v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", stdout);
}

static void j_ms(struct json *j, const char *key, double v)
{
	j_key(j, key);
	printf("%.3f", isfinite(v) ? v : 0.0);
}

/* ------------------------------------------------------------------ */
/* JSON renderers */

static void json_op(struct json *j, const struct crashdb_op *o, const struct crashdb_state *s)
{
	j_open(j, NULL, '{', true);
	j_int(j, "op", o->op_id);
	j_str(j, "section", o->section ? "run" : "setup");
	j_int(j, "line", o->line);
	j_str(j, "text", o->text);
	j_int(j, "ret", o->ret);
	j_int(j, "errno", o->err);
	j_str(j, "error", o->err ? errno_name(o->err) : NULL);
	j_uint(j, "ino", o->ino);
	j_uint(j, "ino2", o->ino2);
	j_int(j, "log_pos", o->log_pos);
	j_ms(j, "ms", o->ms);
	if (s)
		j_bool(j, "completed", op_completed(o, s));
	j_close(j, '}');
}

static void json_state_fields(struct json *j, const struct state_view *sv)
{
	const struct crashdb_state *s = &sv->s;
	j_int(j, "idx", s->idx);
	j_str(j, "kind", s->kind);
	j_str(j, "spec", s->spec);
	j_int(j, "point", s->point);
	j_int(j, "last_completed_op", s->last_completed_op);
	j_bool(j, "mount_ok", s->mount_ok);
	j_str(j, "mount_msg", s->mount_msg);
	j_int(j, "fsck_status", s->fsck_status);
	j_bool(j, "fsck_clean", s->fsck_clean);
	j_str(j, "fsck_output", s->fsck_output);
	j_str(j, "tree_hash", s->tree_hash);
	j_int(j, "nodes", sv->n_nodes);
	j_open(j, "ms", '{', true);
	j_ms(j, "replay", s->ms_replay);
	j_ms(j, "mount", s->ms_mount);
	j_ms(j, "capture", s->ms_capture);
	j_ms(j, "fsck", s->ms_fsck);
	j_ms(j, "other", s->ms_other);
	j_close(j, '}');
}

static void json_run_fields(struct json *j, const struct run_view *v)
{
	const struct crashdb_run *r = &v->r;
	j_int(j, "id", r->id);
	j_str(j, "started_at", r->started_at);
	j_str(j, "finished_at", v->finished_at);
	j_str(j, "status", v->status);
	j_key(j, "exit_code");
	if (v->has_exit)
		printf("%d", v->exit_code);
	else
		fputs("null", stdout);
	j_str(j, "cmdline", r->cmdline);
	j_str(j, "accel", r->accel);
	j_str(j, "kernel_version", r->kernel_version);
	j_str(j, "kernel_key", r->kernel_key);
	j_str(j, "crash_mode", r->crash_mode);
	j_int(j, "seed", r->seed);
	j_int(j, "max_states", r->max_states);
	j_bool(j, "torn", r->torn);
	j_str(j, "workload_file", r->workload_file);
	j_str(j, "workload_text", r->workload_text);
}

static void json_fsrun(struct json *j, const struct fs_view *fv)
{
	const struct crashdb_fsrun *f = &fv->f;
	j_open(j, NULL, '{', false);
	j_int(j, "id", f->id);
	j_str(j, "fs", f->fs);
	j_str(j, "mkfs_opts", f->mkfs_opts);
	j_str(j, "mount_opts", f->mount_opts);
	j_str(j, "base_image", f->base_image);
	j_str(j, "log_path", f->log_path);
	j_int(j, "image_size", f->image_size);
	j_str(j, "qemu_cmdline", f->qemu_cmdline);
	j_str(j, "outcome", f->outcome);
	j_str(j, "error", f->error);
	j_ms(j, "record_ms", f->record_ms);
	j_ms(j, "check_ms", f->check_ms);
	j_open(j, "log", '{', true);
	j_int(j, "entries", f->log_entries);
	j_int(j, "committed", f->log_committed);
	j_int(j, "flushes", f->log_flushes);
	j_int(j, "writes", f->log_writes);
	j_int(j, "discards", f->log_discards);
	j_int(j, "bytes", f->log_bytes);
	j_bool(j, "truncated", f->log_truncated);
	j_int(j, "setup_end", f->setup_end);
	j_close(j, '}');
	j_open(j, "ops", '[', false);
	for (size_t i = 0; i < fv->nops; i++)
		json_op(j, &fv->ops[i], NULL);
	j_close(j, ']');
	j_open(j, "states", '[', false);
	for (size_t i = 0; i < fv->nstates; i++) {
		j_open(j, NULL, '{', true);
		json_state_fields(j, &fv->states[i]);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void json_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	struct json *j = ctx;
	j_key(j, NULL);
	j_string(name->buf, name->len);
	fputs(": ", stdout);
	j_string(value->buf, value->len);
}

static void json_block_run(void *ctx, const char *tok, size_t len, size_t count)
{
	struct json *j = ctx;
	j_open(j, NULL, '[', true);
	j_key(j, NULL);
	j_string(tok, len);
	j_uint(j, NULL, count);
	j_close(j, ']');
}

static void json_node(struct json *j, const struct tree_node *t)
{
	char mode[8], type[2] = { t->type, '\0' };
	snprintf(mode, sizeof(mode), "%04" PRIo32, t->mode & 07777);
	j_open(j, NULL, '{', true);
	j_str(j, "path", t->path);
	j_str(j, "type", type);
	j_str(j, "mode", mode);
	j_uint(j, "nlink", t->nlink);
	j_uint(j, "uid", t->uid);
	j_uint(j, "gid", t->gid);
	j_uint(j, "size", t->size);
	j_uint(j, "ino", t->ino);
	j_str(j, "target", t->target);
	j_open(j, "xattrs", '{', true);
	each_xattr(t->xattrs, json_xattr, j);
	j_close(j, '}');
	j_key(j, "blocks");
	if (t->blocks) {
		/* One line: [["p5", 16], ["z", 1]] */
		j->depth++;
		j->count[j->depth] = 0;
		j->inline_[j->depth] = true;
		putchar('[');
		each_block_run(t->blocks, json_block_run, j);
		j->depth--;
		putchar(']');
	} else {
		fputs("null", stdout);
	}
	/* Content that is valid UTF-8 is a JSON string (lossless); anything else is hex. */
	if (t->content && utf8_valid(t->content, t->content_len)) {
		j_key(j, "content");
		j_string(t->content, t->content_len);
	} else if (t->content) {
		j_key(j, "content_hex");
		putchar('"');
		for (size_t i = 0; i < t->content_len; i++)
			printf("%02x", t->content[i]);
		putchar('"');
	} else {
		j_str(j, "content", NULL);
	}
	j_close(j, '}');
}

/* ------------------------------------------------------------------ */

int cmd_show(int argc, char **argv)
{
	const char *format = "text";
	db_path = CRASHDB_DEFAULT;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "db", &db_path, "FILE", "the database (default crashlab.db here)" },
		{ OPT_STRING, 'f', "format", &format, "text|json", "output format (default text)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = opt_parse(argc, argv, opts, show_usage, 0);
	bool json = false;
	if (!strcmp(format, "json"))
		json = true;
	else if (strcmp(format, "text"))
		usage_error("crashlab show", "--format wants 'text' or 'json', not '%s'", format);
	if (n == 0)
		usage_error("crashlab show", "no run given; say which run to show (a run id, or 'last')");
	if (n == 2)
		usage_error("crashlab show", "a state needs both FS and STATE (e.g. 'crashlab show %s ext4 0')", argv[0]);
	if (n > 3)
		usage_error("crashlab show", "unexpected argument '%s'", argv[3]);
	int idx = -1;
	if (n == 3) {
		char *end;
		errno = 0;
		long v = strtol(argv[2], &end, 10);
		if (errno || end == argv[2] || *end || v < 0 || v > 1000000000)
			usage_error("crashlab show", "STATE must be a state index (0, 1, ...), not '%s'", argv[2]);
		idx = (int)v;
	}

	struct crashdb *db = cdb = crashdb_open_existing(db_path);

	struct run_view rv;
	read_run(crashdb_run_resolve(db, argv[0], "crashlab show"), &rv);
	struct fs_view *fv;
	size_t nfs = read_fsruns(rv.r.id, n == 3 ? argv[1] : NULL, n == 1, &fv);
	if (n == 3 && nfs == 0) {
		char *names = fs_names(rv.r.id);
		die_code(EXIT_NOINPUT, "run %" PRId64 " has no file system '%s' (it has: %s)", rv.r.id, argv[1], names);
	}

	struct json j = { 0 };
	if (n == 1) {
		if (json) {
			j_open(&j, NULL, '{', false);
			j_open(&j, "run", '{', false);
			json_run_fields(&j, &rv);
			j_close(&j, '}');
			j_open(&j, "fs", '[', false);
			for (size_t i = 0; i < nfs; i++)
				json_fsrun(&j, &fv[i]);
			j_close(&j, ']');
			j_close(&j, '}');
		} else {
			text_run(&rv);
			for (size_t i = 0; i < nfs; i++)
				text_fsrun(&fv[i]);
		}
	} else {
		struct state_view sv;
		read_state(&fv[0], idx, &sv);
		struct tree_node *nodes;
		size_t nn = read_nodes(sv.s.id, &nodes);
		if (json) {
			j_open(&j, NULL, '{', false);
			j_int(&j, "run", rv.r.id);
			j_str(&j, "fs", fv[0].f.fs);
			j_int(&j, "fsrun", fv[0].f.id);
			j_open(&j, "state", '{', false);
			json_state_fields(&j, &sv);
			j_close(&j, '}');
			j_open(&j, "ops", '[', false);
			for (size_t i = 0; i < fv[0].nops; i++)
				json_op(&j, &fv[0].ops[i], &sv.s);
			j_close(&j, ']');
			j_open(&j, "tree", '[', false);
			for (size_t i = 0; i < nn; i++)
				json_node(&j, &nodes[i]);
			j_close(&j, ']');
			j_close(&j, '}');
		} else {
			text_state(&rv, &fv[0], &sv, nodes, nn);
		}
		free_nodes(nodes, nn);
		free_state(&sv);
	}
	free_fsruns(fv, nfs);
	free_run(&rv);
	crashdb_close(db);
	if (fflush(stdout) != 0 || ferror(stdout))
		die_code(EXIT_CANTCREAT, "cannot write the output: %s", strerror(errno));
	return 0;
}

/* render.c - see render.h. */
#include "cmd/render.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "host/progress.h"
#include "judge/explain.h"

void render_run_table(FILE *f, const struct run_info *run, const struct fs_summary *sums, size_t n)
{
	fprintf(f, "run %" PRId64 ": ", run->id);
	render_puts(f, run->workload_file ? run->workload_file : "?");
	fprintf(f, " on %zu file system%s, crash mode %s (%s)\n", n, n == 1 ? "" : "s",
		run->crash_mode ? run->crash_mode : "?", run->accel ? run->accel : "?");
	fprintf(f, "%-7s %7s %7s %7s %9s %8s  %s\n", "fs", "states", "mount", "fsck", "distinct", "time", "");
	fprintf(f, "%-7s %7s %7s %7s %9s %8s\n", "", "", "failed", "flagged", "trees", "");
	for (size_t i = 0; i < n; i++) {
		const struct fs_summary *s = &sums[i];
		char t[16];
		render_time(s->ms / 1000, t, sizeof(t));
		fprintf(f, "%-7s %7zu %7zu %7zu %9zu %8s  ", s->fs, s->states, s->mount_fail, s->fsck_fail, s->distinct, t);
		const char *why = s->error[0] ? s->error : strcmp(s->outcome, "ok") && s->outcome[0] ? s->outcome : "";
		render_put(f, why, strcspn(why, "\n"));
		fputc('\n', f);
	}
	/* what became of the states: checked in a guest, or a copy of an equal state's check */
	for (size_t i = 0; i < n; i++) {
		const struct fs_summary *s = &sums[i];
		if (!s->built)
			continue;
		fprintf(f, "%-7s %zu states built = %zu deduplicated + %zu checked", s->fs, s->built, s->deduplicated,
			s->checked);
		if (s->resumed)
			fprintf(f, " + %zu stored before the stop", s->resumed);
		size_t done = s->resumed + s->deduplicated + s->checked;
		if (done < s->built)
			fprintf(f, " (%zu not reached)", s->built - done);
		fprintf(f, "; %zu judged by copy\n", s->judged_once);
	}
	fprintf(f, "\n%-7s %-12s %6s %7s %6s %6s %6s  %s\n", "fs", "model", "LOST", "broken", "bonus", "kept", "gone",
		"(broken: universal rules U1-U5, the same for every model)");
	for (size_t i = 0; i < n; i++) {
		const struct fs_summary *s = &sums[i];
		size_t broken = s->verdicts[MODEL_UNIVERSAL][V_BROKEN];
		/* a fs run that did not end well says so: no row of zeros that looks judged */
		const char *ended = s->outcome[0] && strcmp(s->outcome, "ok") ? s->outcome : NULL;
		if (ended && !s->judged) {
			fprintf(f, "%-7s %-12s %s\n", s->fs, "-", !strcmp(ended, "not started") ? "not started: nothing judged"
				: "nothing judged: the fs run failed (see above)");
			continue;
		}
		for (int m = 0; m < MODEL_COUNT; m++) {
			if (!(s->models & (1u << m)))
				continue;
			fprintf(f, "%-7s %-12s %6zu %7zu %6zu %6zu %6zu\n", s->fs, model_name(m), s->verdicts[m][V_LOST], broken,
				s->verdicts[m][V_BONUS], s->verdicts[m][V_KEPT], s->verdicts[m][V_GONE]);
		}
		if (s->unexplained)
			fprintf(f, "%-7s %zu state%s no set of ops explains (U3)\n", s->fs, s->unexplained,
				s->unexplained == 1 ? "" : "s");
		if (ended)
			fprintf(f, "%-7s counts of the %zu state%s judged before the fs run ended (%s)\n", s->fs, s->judged,
				s->judged == 1 ? "" : "s", ended);
	}
}

const char *render_errno_name(int err, char buf[24])
{
	const char *n = err ? strerrorname_np(err) : NULL;
	if (n)
		return n;
	snprintf(buf, 24, "errno %d", err);
	return buf;
}

void render_op_result(const struct op_result *r, char *buf, size_t len)
{
	char nb[24];
	if (r->err)
		snprintf(buf, len, "%" PRId64 " %s", r->ret, render_errno_name(r->err, nb));
	else if (r->ret)
		snprintf(buf, len, "ok (%" PRId64 ")", r->ret);
	else
		snprintf(buf, len, "ok");
}

bool render_utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = utf8_len(s + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

bool render_printable_ish(const unsigned char *s, size_t n)
{
	size_t bad = 0;
	for (size_t i = 0; i < n;) {
		if ((s[i] >= 0x20 && s[i] < 0x7f) || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			i++;
			continue;
		}
		size_t l = s[i] >= 0x80 ? utf8_len(s + i, n - i) : 0;
		if (l) {
			i += l;
			continue;
		}
		bad++;
		i++;
	}
	return bad * 8 <= n;
}

static void put_escaped(FILE *f, const char *s, size_t n, unsigned flags)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_add_escaped(&sb, s, n, flags);
	fwrite(sb.buf, 1, sb.len, f);
	sbuf_free(&sb);
}

void render_put(FILE *f, const char *s, size_t n)
{
	put_escaped(f, s, n, SBUF_ESC_PROSE);
}

void render_puts(FILE *f, const char *s)
{
	if (s)
		put_escaped(f, s, strlen(s), SBUF_ESC_PROSE);
}

void render_lines(FILE *f, const char *s, size_t n)
{
	put_escaped(f, s, n, SBUF_ESC_TEXT);
}

void render_mode_string(const struct tree_node *t, char out[11])
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

void render_block_runs(const char *blocks, void (*fn)(void *ctx, const char *tok, size_t len, size_t count), void *ctx)
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

const char *render_mark_word(char m)
{
	switch (m) {
	case EX_MARK_SETUP: return "setup (in S0)";
	case EX_MARK_FAILED: return "failed: changed nothing";
	case EX_MARK_NOEFFECT: return "no visible effect";
	case EX_MARK_PERSISTED: return "persisted";
	case EX_MARK_SUPERSEDED: return "superseded by a later op";
	case EX_MARK_PARTIAL: return "partly persisted";
	case EX_MARK_LOST: return "lost";
	case EX_MARK_UNSEEN: return "not visible";
	default: return "not judged";
	}
}

const char *render_time(double seconds, char *buf, unsigned size)
{
	return progress_fmt_time(seconds, buf, size);
}

json_t *render_json_bytes(const void *data, size_t n)
{
	if (!data)
		return json_null();
	const unsigned char *s = data;
	if (render_utf8_valid(s, n))
		return json_stringn((const char *)s, n);
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		size_t l = s[i] >= 0x80 ? utf8_len(s + i, n - i) : 1;
		if (l) {
			sbuf_add(&sb, s + i, l);
			i += l - 1;
		} else { /* an invalid byte, read as Latin-1 */
			unsigned char u[2] = { (unsigned char)(0xc0 | s[i] >> 6), (unsigned char)(0x80 | (s[i] & 0x3f)) };
			sbuf_add(&sb, u, 2);
		}
	}
	json_t *j = json_stringn(sb.buf ? sb.buf : "", sb.len);
	sbuf_free(&sb);
	return j;
}

json_t *render_json_str(const char *s)
{
	return render_json_bytes(s, s ? strlen(s) : 0);
}

void render_json_print(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	putchar('\n');
}

/* ------------------------------------------------------------------ */
/* Observed trees */

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

void render_tree_sort(struct tree_node *nodes, size_t n)
{
	if (n)
		qsort(nodes, n, sizeof(*nodes), path_cmp);
}

static void text_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	struct sbuf *sb = ctx;
	sbuf_adds(sb, " ");
	sbuf_add_escaped(sb, name->buf, name->len, 0);
	sbuf_adds(sb, "=");
	sbuf_add_escaped(sb, value->buf, value->len, SBUF_ESC_QUOTED);
}

static void text_block_run(void *ctx, const char *tok, size_t len, size_t count)
{
	struct sbuf *sb = ctx;
	if (sb->len && sb->buf[sb->len - 1] != '[')
		sbuf_adds(sb, ",");
	sbuf_add(sb, tok, len);
	if (count > 1)
		sbuf_addf(sb, "\u00d7%zu", count);
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

void render_tree_text(FILE *f, const char *indent, const struct tree_node *nodes, size_t n)
{
	int wl = 1, wo = 3, ws = 1;
	for (size_t i = 0; i < n; i++) {
		const struct tree_node *t = &nodes[i];
		char owner[32];
		int l = snprintf(owner, sizeof(owner), "%" PRIu32 ":%" PRIu32, t->uid, t->gid);
		if (digits(t->nlink) > wl)
			wl = digits(t->nlink);
		if (l > wo)
			wo = l;
		if (digits(t->size) > ws)
			ws = digits(t->size);
	}
	for (size_t i = 0; i < n; i++) {
		const struct tree_node *t = &nodes[i];
		char mode[11], owner[32];
		render_mode_string(t, mode);
		snprintf(owner, sizeof(owner), "%" PRIu32 ":%" PRIu32, t->uid, t->gid);
		struct sbuf sb = SBUF_INIT;
		sbuf_addf(&sb, "%s%s  %*" PRIu32 "  %-*s  %*" PRIu64 "  ", indent, mode, wl, t->nlink, wo, owner, ws, t->size);
		sbuf_add_escaped(&sb, t->path, strlen(t->path), 0);
		if (t->type == 'l' && t->target) {
			sbuf_adds(&sb, " -> ");
			sbuf_add_escaped(&sb, t->target, strlen(t->target), 0);
		}
		if (t->type == 'f' && t->size > 0) {
			sbuf_adds(&sb, "  ");
			/* Short or text-like inline content says more than a hash. */
			if (t->content &&
			    (render_printable_ish(t->content, t->content_len) || t->content_len <= 64 || !t->blocks)) {
				sbuf_add_escaped(&sb, t->content, t->content_len, SBUF_ESC_QUOTED);
			} else if (t->blocks) {
				sbuf_adds(&sb, "[");
				render_block_runs(t->blocks, text_block_run, &sb);
				sbuf_adds(&sb, "]");
			}
		}
		if (t->xattrs && *t->xattrs) {
			sbuf_adds(&sb, "  xattrs");
			tree_xattrs_each(t->xattrs, text_xattr, &sb);
		}
		fprintf(f, "%s\n", sb.buf);
		sbuf_free(&sb);
	}
}

static void jset(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

static void json_xattr(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	json_t *o = ctx;
	json_t *k = render_json_bytes(name->buf, name->len);
	json_object_set_new(o, json_string_value(k), render_json_bytes(value->buf, value->len));
	json_decref(k);
}

static void json_block_run(void *ctx, const char *tok, size_t len, size_t count)
{
	json_t *run = json_array();
	json_array_append_new(run, json_stringn(tok, len));
	json_array_append_new(run, json_integer((json_int_t)count));
	json_array_append_new(ctx, run);
}

static json_t *json_node(const struct tree_node *t)
{
	char mode[8], type[2] = { t->type, '\0' };
	snprintf(mode, sizeof(mode), "%04" PRIo32, t->mode & 07777);
	json_t *o = json_object();
	jset(o, "path", render_json_str(t->path));
	jset(o, "type", json_string(type));
	jset(o, "mode", json_string(mode));
	jset(o, "nlink", json_integer(t->nlink));
	jset(o, "uid", json_integer(t->uid));
	jset(o, "gid", json_integer(t->gid));
	jset(o, "size", json_integer((json_int_t)t->size));
	jset(o, "ino", json_integer((json_int_t)t->ino));
	jset(o, "target", render_json_str(t->target));
	json_t *x = json_object();
	tree_xattrs_each(t->xattrs, json_xattr, x);
	jset(o, "xattrs", x);
	if (t->blocks) {
		json_t *b = json_array();
		render_block_runs(t->blocks, json_block_run, b);
		jset(o, "blocks", b);
	} else {
		jset(o, "blocks", json_null());
	}
	/* Content that is valid UTF-8 is a JSON string (lossless); anything else is hex. */
	if (t->content && render_utf8_valid(t->content, t->content_len)) {
		jset(o, "content", json_stringn((const char *)t->content, t->content_len));
	} else if (t->content) {
		struct sbuf hex = SBUF_INIT;
		for (size_t i = 0; i < t->content_len; i++)
			sbuf_addf(&hex, "%02x", t->content[i]);
		jset(o, "content_hex", json_stringn(hex.buf ? hex.buf : "", hex.len));
		sbuf_free(&hex);
	} else {
		jset(o, "content", json_null());
	}
	return o;
}

json_t *render_json_tree(const struct tree_node *nodes, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_node(&nodes[i]));
	return a;
}

json_t *render_json_run(const struct run_info *r)
{
	json_t *o = json_object();
	jset(o, "id", json_integer(r->id));
	jset(o, "started_at", render_json_str(r->started_at));
	jset(o, "finished_at", render_json_str(r->finished_at));
	jset(o, "status", render_json_str(r->status));
	jset(o, "exit_code", r->has_exit ? json_integer(r->exit_code) : json_null());
	jset(o, "cmdline", render_json_str(r->cmdline));
	jset(o, "accel", render_json_str(r->accel));
	jset(o, "kernel_version", render_json_str(r->kernel_version));
	jset(o, "kernel_key", render_json_str(r->kernel_key));
	jset(o, "crash_mode", render_json_str(r->crash_mode));
	jset(o, "seed", json_integer(r->seed));
	jset(o, "max_states", json_integer(r->max_states));
	jset(o, "torn", json_boolean(r->torn));
	jset(o, "workload_file", render_json_str(r->workload_file));
	jset(o, "workload_text", render_json_str(r->workload_text));
	return o;
}

json_t *render_json_verdict(const struct verdict *v)
{
	json_t *o = json_object();
	jset(o, "model", json_string(model_name(v->model)));
	jset(o, "rule", render_json_str(v->rule));
	jset(o, "verdict", json_string(verdict_name(v->kind)));
	jset(o, "op", json_integer(v->op));
	jset(o, "trigger", json_integer(v->trigger));
	jset(o, "path", render_json_str(v->path));
	jset(o, "expected", render_json_str(v->expected));
	jset(o, "observed", render_json_str(v->observed));
	jset(o, "reason", render_json_str(v->reason));
	jset(o, "cite", render_json_str(v->cite));
	return o;
}

/* ------------------------------------------------------------------ */
/* Naming a state */

/* The log position at which `mark LABEL` returned, or -1 (*found: 0 no such mark, 1 found, 2 not recorded). */
static int64_t mark_pos(const struct fsrun *f, const char *label, int *found)
{
	*found = 0;
	for (size_t i = 0; i < f->ops.n; i++) {
		const struct wl_op *op = &f->ops.ops[i];
		if (op->kind != WL_MARK || !op->name || strcmp(op->name, label))
			continue;
		*found = 1;
		if (!f->res) {
			*found = 2;
			return -1;
		}
		return f->res[i].log_pos;
	}
	return -1;
}

static void list_marks(const struct fsrun *f, struct sbuf *sb)
{
	size_t n = 0;
	for (size_t i = 0; i < f->ops.n; i++)
		if (f->ops.ops[i].kind == WL_MARK && f->ops.ops[i].name)
			sbuf_addf(sb, "%s'%s'", n++ ? ", " : "", f->ops.ops[i].name);
	if (!n)
		sbuf_adds(sb, "none");
}

int render_state_arg(const struct fsrun *f, const struct state_result *st, size_t nst, const char *arg,
		     struct errbuf *e)
{
	char *end;
	errno = 0;
	long v = strtol(arg, &end, 10);
	if (*arg && !errno && end != arg && !*end && v >= 0) {
		for (size_t i = 0; i < nst; i++)
			if (st[i].idx == v)
				return (int)i;
		if (!nst)
			return errbuf_set(e, EXIT_NOINPUT, "state %ld does not exist for %s in run %" PRId64 " (it has no states)",
					  v, f->fs, f->run_id);
		return errbuf_set(e, EXIT_NOINPUT, "state %ld does not exist for %s in run %" PRId64 " (it has states 0..%d)",
				  v, f->fs, f->run_id, st[nst - 1].idx);
	}
	const char *label = arg[0] == '@' ? arg + 1 : arg;
	int found;
	int64_t pos = mark_pos(f, label, &found);
	if (found == 1) {
		for (size_t i = 0; i < nst; i++)
			if (st[i].point >= pos)
				return (int)i;
		return errbuf_set(e, EXIT_NOINPUT, "%s has no crash state in which 'mark %s' (log position %" PRId64
				  ") had completed: the power was never cut after it",
				  f->fs, label, pos);
	}
	if (found == 2)
		return errbuf_set(e, EXIT_NOINPUT, "%s recorded no ops, so 'mark %s' names no state", f->fs, label);
	struct sbuf sb = SBUF_INIT;
	list_marks(f, &sb);
	errbuf_set(e, EXIT_USAGE,
		   "STATE must be a state index (0, 1, ...) or the LABEL of a 'mark LABEL' op, not '%s' (%s's marks: %s)",
		   arg, f->fs, sb.buf);
	sbuf_free(&sb);
	return -1;
}

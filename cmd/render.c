/* render.c - see render.h. */
#include "cmd/render.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "host/progress.h"
#include "judge/explain.h"

void render_run_table(FILE *f, const struct run_info *run, const struct fs_summary *sums, size_t n)
{
	fprintf(f, "run %" PRId64 ": %s on %zu file system%s, crash mode %s (%s)\n", run->id,
		run->workload_file ? run->workload_file : "?", n, n == 1 ? "" : "s", run->crash_mode ? run->crash_mode : "?",
		run->accel ? run->accel : "?");
	fprintf(f, "%-7s %7s %7s %7s %9s %8s  %s\n", "fs", "states", "mount", "fsck", "distinct", "time", "");
	fprintf(f, "%-7s %7s %7s %7s %9s %8s\n", "", "", "failed", "flagged", "trees", "");
	for (size_t i = 0; i < n; i++) {
		const struct fs_summary *s = &sums[i];
		char t[16];
		render_time(s->ms / 1000, t, sizeof(t));
		fprintf(f, "%-7s %7zu %7zu %7zu %9zu %8s  %.*s\n", s->fs, s->states, s->mount_fail, s->fsck_fail, s->distinct,
			t, (int)strcspn(s->error, "\n"), s->error);
	}
	fprintf(f, "\n%-7s %-12s %6s %7s %6s %6s %6s  %s\n", "fs", "model", "LOST", "broken", "bonus", "kept", "gone",
		"(broken: universal rules U1-U5, the same for every model)");
	for (size_t i = 0; i < n; i++) {
		const struct fs_summary *s = &sums[i];
		size_t broken = s->verdicts[MODEL_UNIVERSAL][V_BROKEN];
		for (int m = 0; m < MODEL_COUNT; m++) {
			if (!(s->models & (1u << m)))
				continue;
			fprintf(f, "%-7s %-12s %6zu %7zu %6zu %6zu %6zu\n", s->fs, model_name(m), s->verdicts[m][V_LOST], broken,
				s->verdicts[m][V_BONUS], s->verdicts[m][V_KEPT], s->verdicts[m][V_GONE]);
		}
		if (s->unexplained)
			fprintf(f, "%-7s %zu state%s no set of ops explains (U3)\n", s->fs, s->unexplained,
				s->unexplained == 1 ? "" : "s");
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

bool render_utf8_valid(const unsigned char *s, size_t n)
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

bool render_printable_ish(const unsigned char *s, size_t n)
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

void render_escape(struct sbuf *sb, const void *data, size_t n, bool quoted)
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
		size_t l = s[i] >= 0x80 ? utf8_seq(s + i, n - i) : 1;
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

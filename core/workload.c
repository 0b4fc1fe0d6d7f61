/*
 * workload.c - the workload language: tokenizer, parser, canonical printer
 * and the write pattern.
 *
 * Method. A .wl file is read line by line. Each line is first cut into
 * tokens: a bare word runs to the next blank or '#'; a double-quoted string
 * may hold anything, with the escapes \n \t \\ \" \xHH resolved; a '#'
 * outside quotes ends the line. Every token keeps its column and whether it
 * was quoted, because the quoting carries meaning: in `write P 4K` the 4K
 * is a length, in `write P "4K"` it is text. A line whose first token
 * starts with '[' is a section header; anything else is an op, looked up
 * in one table (keyword, kind, usage) and then read argument by argument
 * with the few helpers below, each of which names the argument it expected
 * and the column of the token it rejects. Optional arguments are told
 * apart by the number of arguments alone, never by guessing from their
 * text, so every op has one reading.
 *
 * Stored values: an omitted OFF of write/dwrite/mmapwrite is stored as 0;
 * off/len are -1 for ops that take no such argument (append has no OFF);
 * a TEXT write also sets len = data_len. wl_format prints the canonical
 * line: every argument explicit except a zero OFF and the plain rename,
 * modes as four octal digits, sizes with the largest exact K/M/G suffix,
 * TEXT and xattr VALUE always quoted, other tokens quoted only when they
 * must be. wl_parse_line reads that line back to the same op (line/col
 * aside: a single line is line 1).
 *
 * libc only: this file is linked into the static guest agent too.
 */
#include "core/workload.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fs.h"
#include "core/util.h"
#include "core/workload-priv.h"

void wl_perr(const struct pctx *c, int col, const char *fmt, ...)
{
	if (!c->e)
		return;
	char *m = c->e->msg;
	size_t size = sizeof(c->e->msg);
	c->e->code = EXIT_DATAERR;
	int n = snprintf(m, size, "%s:%d:%d: ", c->file, c->line, col);
	if (n < 0 || (size_t)n >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m + n, size - (size_t)n, fmt, ap);
	va_end(ap);
}

static void toks_free(struct toks *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

static int toks_push(struct toks *t, struct tok *k)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 8;
		struct tok *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -1;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *k;
	return 0;
}

static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Cut s[0..n) into tokens. 0, or -1 with the error set. */
static int tokenize(const struct pctx *c, const char *s, size_t n, struct toks *t)
{
	size_t i = 0;
	while (i < n) {
		if (is_blank((unsigned char)s[i])) {
			i++;
			continue;
		}
		if (s[i] == '#')
			break;
		struct tok k = { .col = (int)i + 1, .raw = s + i };
		if (s[i] == '"') {
			char *buf = malloc(n - i + 1);
			size_t bl = 0, j = i + 1;
			if (!buf) {
				wl_perr(c, k.col, "out of memory");
				return -1;
			}
			for (;;) {
				if (j >= n) {
					free(buf);
					wl_perr(c, k.col, "unterminated string");
					return -1;
				}
				if (s[j] == '"')
					break;
				if (s[j] != '\\') {
					buf[bl++] = s[j++];
					continue;
				}
				int ecol = (int)j + 1;
				char e = j + 1 < n ? s[j + 1] : '\0';
				if (e == 'n') {
					buf[bl++] = '\n';
					j += 2;
				} else if (e == 't') {
					buf[bl++] = '\t';
					j += 2;
				} else if (e == '\\' || e == '"') {
					buf[bl++] = e;
					j += 2;
				} else if (e == 'x' && j + 3 < n && hexval((unsigned char)s[j + 2]) >= 0 &&
					   hexval((unsigned char)s[j + 3]) >= 0) {
					buf[bl++] = (char)(hexval((unsigned char)s[j + 2]) * 16 +
							   hexval((unsigned char)s[j + 3]));
					j += 4;
				} else {
					free(buf);
					if (e == 'x')
						wl_perr(c, ecol, "bad escape '\\x': two hex digits must follow");
					else if (e == '\0' || (unsigned char)e < 0x20)
						wl_perr(c, ecol, "bad escape: '\\' at the end of the string");
					else
						wl_perr(c, ecol, "bad escape '\\%c' (use \\n \\t \\\\ \\\" or \\xHH)", e);
					return -1;
				}
			}
			j++; /* the closing quote */
			if (j < n && !is_blank((unsigned char)s[j]) && s[j] != '#') {
				free(buf);
				wl_perr(c, (int)j + 1, "text right after a closing quote; separate the tokens with a space");
				return -1;
			}
			buf[bl] = '\0';
			k.s = buf;
			k.len = bl;
			k.quoted = 1;
			k.rawlen = j - i;
			k.end = (int)j + 1;
			i = j;
		} else {
			size_t j = i;
			while (j < n && !is_blank((unsigned char)s[j]) && s[j] != '#') {
				if (s[j] == '"') {
					wl_perr(c, (int)j + 1, "a quote inside a word; quote the whole token");
					return -1;
				}
				j++;
			}
			k.len = j - i;
			k.s = malloc(k.len + 1);
			if (!k.s) {
				wl_perr(c, k.col, "out of memory");
				return -1;
			}
			memcpy(k.s, s + i, k.len);
			k.s[k.len] = '\0';
			k.rawlen = j - i;
			k.end = (int)j + 1;
			i = j;
		}
		if (toks_push(t, &k) < 0) {
			free(k.s);
			wl_perr(c, k.col, "out of memory");
			return -1;
		}
	}
	return 0;
}

/* ---- the op table ---- */

static const struct opdef opdefs[WL_NKINDS] = {
	{ "mkdir", WL_MKDIR, "mkdir P [MODE]" },
	{ "rmdir", WL_RMDIR, "rmdir P" },
	{ "creat", WL_CREAT, "creat P [MODE]" },
	{ "write", WL_WRITE, "write P [OFF] (LEN|\"TEXT\")" },
	{ "append", WL_APPEND, "append P (LEN|\"TEXT\")" },
	{ "dwrite", WL_DWRITE, "dwrite P [OFF] LEN" },
	{ "mmapwrite", WL_MMAPWRITE, "mmapwrite P [OFF] (LEN|\"TEXT\")" },
	{ "truncate", WL_TRUNCATE, "truncate P SIZE" },
	{ "falloc", WL_FALLOC, "falloc P (0|keep_size|punch_hole|zero_range|zero_range_keep_size) OFF LEN" },
	{ "link", WL_LINK, "link OLD NEW" },
	{ "symlink", WL_SYMLINK, "symlink TARGET P" },
	{ "rename", WL_RENAME, "rename OLD NEW [noreplace|exchange|barrier]" },
	{ "unlink", WL_UNLINK, "unlink P" },
	{ "setxattr", WL_SETXATTR, "setxattr P NAME VALUE" },
	{ "removexattr", WL_REMOVEXATTR, "removexattr P NAME" },
	{ "chmod", WL_CHMOD, "chmod P MODE" },
	{ "fsync", WL_FSYNC, "fsync P" },
	{ "fdatasync", WL_FDATASYNC, "fdatasync P" },
	{ "sync", WL_SYNC, "sync" },
	{ "syncfs", WL_SYNCFS, "syncfs" },
	{ "sync_file_range", WL_SYNC_FILE_RANGE, "sync_file_range P OFF LEN FLAGS" },
	{ "fbarrier", WL_FBARRIER, "fbarrier P" },
	{ "fdatabarrier", WL_FDATABARRIER, "fdatabarrier P" },
	{ "fiemap_sync", WL_FIEMAP_SYNC, "fiemap_sync P" },
	{ "close", WL_CLOSE, "close P" },
	{ "sleep", WL_SLEEP, "sleep MS" },
	{ "mark", WL_MARK, "mark LABEL" },
};

const char *const wl_falloc_names[5] = { "0", "keep_size", "punch_hole", "zero_range",
					    "zero_range_keep_size" };
const char *const wl_rename_flags[4] = { "", "noreplace", "exchange", "barrier" };
const char *const wl_sfr_flags[3] = { "wait_before", "write", "wait_after" };

const char *wl_kind_usage(enum wl_kind k)
{
	return (unsigned)k < WL_NKINDS ? opdefs[k].usage : "";
}

const char *wl_kind_name(enum wl_kind k)
{
	if ((int)k < 0 || k >= WL_NKINDS)
		return "?";
	return opdefs[k].name;
}

/* ---- argument readers ---- */

int wl_missing(const struct args *a, size_t i, const char *what)
{
	if (i < a->n)
		return 0;
	wl_perr(a->c, a->endcol, "%s: missing %s (usage: %s)", a->def->name, what, a->def->usage);
	return 1;
}

/* Show a token in a message, shortened and without control bytes. */
const char *wl_shown(const struct tok *k, char *buf, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < k->rawlen && o + 4 < size; i++) {
		unsigned char ch = (unsigned char)k->raw[i];
		buf[o++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	if (o + 4 >= size && k->rawlen > o) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = '\0';
	return buf;
}

static int parse_path(const struct args *a, size_t i, const char *what, char **out)
{
	if (wl_missing(a, i, what))
		return -1;
	const struct tok *k = &a->v[i];
	char sb[64];
	if (k->len == 0) {
		wl_perr(a->c, k->col, "empty path");
		return -1;
	}
	if (memchr(k->s, '\0', k->len)) {
		wl_perr(a->c, k->col, "path %s contains a NUL byte", wl_shown(k, sb, sizeof(sb)));
		return -1;
	}
	if (k->s[0] == '/') {
		wl_perr(a->c, k->col, "absolute path '%s'; paths are relative to the test file system",
		     wl_shown(k, sb, sizeof(sb)));
		return -1;
	}
	for (const char *p = k->s; *p;) {
		size_t cl = strcspn(p, "/");
		if (cl == 2 && p[0] == '.' && p[1] == '.') {
			wl_perr(a->c, k->col, "path '%s' has a '..' component", wl_shown(k, sb, sizeof(sb)));
			return -1;
		}
		p += cl;
		if (*p == '/')
			p++;
	}
	*out = strdup(k->s);
	return *out ? 0 : -1;
}

/* A token that is not a path: a name, label or symlink target (no NUL). */
static int parse_word(const struct args *a, size_t i, const char *what, int allow_empty, char **out)
{
	if (wl_missing(a, i, what))
		return -1;
	const struct tok *k = &a->v[i];
	if (!allow_empty && k->len == 0) {
		wl_perr(a->c, k->col, "empty %s", what);
		return -1;
	}
	if (memchr(k->s, '\0', k->len)) {
		wl_perr(a->c, k->col, "%s contains a NUL byte", what);
		return -1;
	}
	*out = strdup(k->s);
	return *out ? 0 : -1;
}

/* Is token k a number (unquoted digits with an optional K/M/G suffix)? */
static int looks_numeric(const struct tok *k)
{
	return !k->quoted && k->len > 0 && k->s[0] >= '0' && k->s[0] <= '9';
}

int wl_parse_num(const struct args *a, size_t i, const char *what, int64_t *out)
{
	if (wl_missing(a, i, what))
		return -1;
	const struct tok *k = &a->v[i];
	char sb[64];
	if (k->quoted) {
		wl_perr(a->c, k->col, "%s: expected a number for %s, not a quoted string", a->def->name, what);
		return -1;
	}
	uint64_t v = 0;
	size_t j = 0;
	while (j < k->len && k->s[j] >= '0' && k->s[j] <= '9') {
		unsigned d = (unsigned)(k->s[j] - '0');
		if (v > (UINT64_C(0x7fffffffffffffff) - d) / 10) {
			wl_perr(a->c, k->col, "number '%s' is too large", wl_shown(k, sb, sizeof(sb)));
			return -1;
		}
		v = v * 10 + d;
		j++;
	}
	int shift = 0;
	if (j > 0 && j + 1 == k->len) {
		switch (k->s[j]) {
		case 'K': case 'k': shift = 10; j++; break;
		case 'M': case 'm': shift = 20; j++; break;
		case 'G': case 'g': shift = 30; j++; break;
		default: break;
		}
	}
	if (j == 0 || j != k->len) {
		wl_perr(a->c, k->col, "bad number '%s' for %s (digits with an optional K, M or G suffix)",
		     wl_shown(k, sb, sizeof(sb)), what);
		return -1;
	}
	if (shift && v > (UINT64_C(0x7fffffffffffffff) >> shift)) {
		wl_perr(a->c, k->col, "number '%s' is too large", wl_shown(k, sb, sizeof(sb)));
		return -1;
	}
	*out = (int64_t)(v << shift);
	return 0;
}

int wl_parse_mode(const struct args *a, size_t i, uint32_t *out)
{
	if (wl_missing(a, i, "MODE"))
		return -1;
	const struct tok *k = &a->v[i];
	char sb[64];
	uint32_t v = 0;
	size_t j;
	for (j = 0; j < k->len && k->s[j] >= '0' && k->s[j] <= '7'; j++) {
		v = v * 8 + (uint32_t)(k->s[j] - '0');
		if (v > 07777)
			break;
	}
	if (k->quoted || j == 0 || j != k->len || v > 07777) {
		wl_perr(a->c, k->col, "bad mode '%s' (octal, e.g. 0644; at most 07777)", wl_shown(k, sb, sizeof(sb)));
		return -1;
	}
	*out = v;
	return 0;
}

/* (LEN|"TEXT") at argument i */
static int parse_len_or_text(const struct args *a, size_t i, struct wl_op *op)
{
	if (wl_missing(a, i, "LEN or \"TEXT\""))
		return -1;
	const struct tok *k = &a->v[i];
	if (k->quoted) {
		op->data = malloc(k->len + 1);
		if (!op->data)
			return -1;
		memcpy(op->data, k->s, k->len + 1);
		op->data_len = k->len;
		op->len = (int64_t)k->len;
		return 0;
	}
	if (!looks_numeric(k)) {
		char sb[64];
		wl_perr(a->c, k->col, "%s: bad LEN '%s'; a TEXT must be quoted", a->def->name, wl_shown(k, sb, sizeof(sb)));
		return -1;
	}
	return wl_parse_num(a, i, "LEN", &op->len);
}

static int parse_keyword(const struct args *a, size_t i, const char *what, const char *const *names,
			 int nnames, const char *choices, int *out)
{
	if (wl_missing(a, i, what))
		return -1;
	const struct tok *k = &a->v[i];
	char sb[64];
	for (int j = 0; j < nnames; j++) {
		if (!k->quoted && names[j][0] && !strcmp(k->s, names[j])) {
			*out = j;
			return 0;
		}
	}
	wl_perr(a->c, k->col, "bad %s '%s' (%s)", what, wl_shown(k, sb, sizeof(sb)), choices);
	return -1;
}

static int parse_sfr_flags(const struct args *a, size_t i, int *out)
{
	if (wl_missing(a, i, "FLAGS"))
		return -1;
	const struct tok *k = &a->v[i];
	int flags = 0;
	const char *p = k->s;
	for (;;) {
		size_t l = strcspn(p, ",|");
		int bit = 0;
		for (int j = 0; j < 3; j++)
			if (strlen(wl_sfr_flags[j]) == l && !strncmp(p, wl_sfr_flags[j], l))
				bit = 1 << j;
		if (!bit || k->quoted) {
			char sb[64];
			wl_perr(a->c, k->col, "bad sync_file_range flag '%.*s' in '%s' (wait_before, write, wait_after, joined by ',' or '|')",
			     (int)(l > 30 ? 30 : l), p, wl_shown(k, sb, sizeof(sb)));
			return -1;
		}
		flags |= bit;
		p += l;
		if (!*p)
			break;
		p++;
	}
	*out = flags;
	return 0;
}

static int parse_value(const struct args *a, size_t i, struct wl_op *op)
{
	if (wl_missing(a, i, "VALUE"))
		return -1;
	const struct tok *k = &a->v[i];
	op->value = malloc(k->len + 1);
	if (!op->value)
		return -1;
	memcpy(op->value, k->s, k->len + 1);
	op->value_len = k->len;
	return 0;
}

static int check_aligned(const struct args *a, size_t i, const char *what, int64_t v)
{
	if (v % 4096 == 0)
		return 0;
	wl_perr(a->c, a->v[i].col, "dwrite: %s %" PRId64 " is not a multiple of 4096 (O_DIRECT needs aligned I/O)",
	     what, v);
	return -1;
}

/* Read the arguments of op (kind already set). Returns the number of
 * arguments used, or -1. */
static int parse_args(const struct args *a, struct wl_op *op)
{
	size_t n = a->n;
	switch (op->kind) {
	case WL_MKDIR:
	case WL_CREAT:
		op->mode = op->kind == WL_MKDIR ? 0755 : 0644;
		if (parse_path(a, 0, "P", &op->path) < 0)
			return -1;
		if (n >= 2 && wl_parse_mode(a, 1, &op->mode) < 0)
			return -1;
		return n >= 2 ? 2 : 1;
	case WL_RMDIR: case WL_UNLINK: case WL_FSYNC: case WL_FDATASYNC: case WL_FBARRIER:
	case WL_FDATABARRIER: case WL_FIEMAP_SYNC: case WL_CLOSE:
		return parse_path(a, 0, "P", &op->path) < 0 ? -1 : 1;
	case WL_WRITE:
	case WL_MMAPWRITE:
		if (parse_path(a, 0, "P", &op->path) < 0)
			return -1;
		op->off = 0;
		if (n >= 3) {
			if (wl_parse_num(a, 1, "OFF", &op->off) < 0 || parse_len_or_text(a, 2, op) < 0)
				return -1;
			return 3;
		}
		return parse_len_or_text(a, 1, op) < 0 ? -1 : 2;
	case WL_APPEND:
		if (parse_path(a, 0, "P", &op->path) < 0 || parse_len_or_text(a, 1, op) < 0)
			return -1;
		return 2;
	case WL_DWRITE: {
		if (parse_path(a, 0, "P", &op->path) < 0)
			return -1;
		op->off = 0;
		size_t li = n >= 3 ? 2 : 1;
		if (n >= 3 && (wl_parse_num(a, 1, "OFF", &op->off) < 0 || check_aligned(a, 1, "OFF", op->off) < 0))
			return -1;
		if (li < n && a->v[li].quoted) {
			wl_perr(a->c, a->v[li].col, "dwrite: takes a LEN, not a TEXT (O_DIRECT writes whole 4096-byte blocks)");
			return -1;
		}
		if (wl_parse_num(a, li, "LEN", &op->len) < 0 || check_aligned(a, li, "LEN", op->len) < 0)
			return -1;
		return (int)li + 1;
	}
	case WL_TRUNCATE:
		if (parse_path(a, 0, "P", &op->path) < 0 || wl_parse_num(a, 1, "SIZE", &op->len) < 0)
			return -1;
		return 2;
	case WL_FALLOC:
		if (parse_path(a, 0, "P", &op->path) < 0 ||
		    parse_keyword(a, 1, "falloc mode", wl_falloc_names, 5,
				  "0, keep_size, punch_hole, zero_range or zero_range_keep_size", &op->flags) < 0 ||
		    wl_parse_num(a, 2, "OFF", &op->off) < 0 || wl_parse_num(a, 3, "LEN", &op->len) < 0)
			return -1;
		return 4;
	case WL_LINK:
		if (parse_path(a, 0, "OLD", &op->path) < 0 || parse_path(a, 1, "NEW", &op->path2) < 0)
			return -1;
		return 2;
	case WL_SYMLINK:
		if (parse_word(a, 0, "TARGET", 1, &op->path2) < 0 || parse_path(a, 1, "P", &op->path) < 0)
			return -1;
		return 2;
	case WL_RENAME:
		if (parse_path(a, 0, "OLD", &op->path) < 0 || parse_path(a, 1, "NEW", &op->path2) < 0)
			return -1;
		op->flags = WL_RENAME_PLAIN;
		if (n >= 3 && parse_keyword(a, 2, "rename flag", wl_rename_flags, 4, "noreplace, exchange or barrier",
					    &op->flags) < 0)
			return -1;
		return n >= 3 ? 3 : 2;
	case WL_SETXATTR:
		if (parse_path(a, 0, "P", &op->path) < 0 || parse_word(a, 1, "NAME", 0, &op->name) < 0 ||
		    parse_value(a, 2, op) < 0)
			return -1;
		return 3;
	case WL_REMOVEXATTR:
		if (parse_path(a, 0, "P", &op->path) < 0 || parse_word(a, 1, "NAME", 0, &op->name) < 0)
			return -1;
		return 2;
	case WL_CHMOD:
		if (parse_path(a, 0, "P", &op->path) < 0 || wl_parse_mode(a, 1, &op->mode) < 0)
			return -1;
		return 2;
	case WL_SYNC:
	case WL_SYNCFS:
		return 0;
	case WL_SYNC_FILE_RANGE:
		if (parse_path(a, 0, "P", &op->path) < 0 || wl_parse_num(a, 1, "OFF", &op->off) < 0 ||
		    wl_parse_num(a, 2, "LEN", &op->len) < 0 || parse_sfr_flags(a, 3, &op->flags) < 0)
			return -1;
		return 4;
	case WL_SLEEP:
		return wl_parse_num(a, 0, "MS", &op->len) < 0 ? -1 : 1;
	case WL_MARK:
		return parse_word(a, 0, "LABEL", 0, &op->name) < 0 ? -1 : 1;
	case WL_NKINDS:
		break;
	}
	return -1;
}

static char *dup_or_null(const char *p, size_t n)
{
	return p ? xmemdup(p, n) : NULL;
}

void wl_op_copy(struct wl_op *dst, const struct wl_op *src)
{
	*dst = *src;
	dst->path = src->path ? xstrdup(src->path) : NULL;
	dst->path2 = src->path2 ? xstrdup(src->path2) : NULL;
	dst->data = dup_or_null(src->data, src->data_len);
	dst->name = src->name ? xstrdup(src->name) : NULL;
	dst->value = dup_or_null(src->value, src->value_len);
}

void wl_copy(struct wl_workload *dst, const struct wl_workload *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->file = src->file ? xstrdup(src->file) : NULL;
	dst->n = src->n;
	dst->nsetup = src->nsetup;
	dst->overlay = src->overlay;
	dst->ops = xcalloc(src->n ? src->n : 1, sizeof(*dst->ops));
	for (size_t i = 0; i < src->n; i++)
		wl_op_copy(&dst->ops[i], &src->ops[i]);
	wl_copy_expects(dst, src);
}

void wl_op_free(struct wl_op *op)
{
	if (!op)
		return;
	free(op->path);
	free(op->path2);
	free(op->data);
	free(op->name);
	free(op->value);
	memset(op, 0, sizeof(*op));
}

/* Parse the op whose tokens are t (t->n >= 1). */
static int parse_op(const struct pctx *c, struct toks *t, int id, enum wl_section section, struct wl_op *op)
{
	memset(op, 0, sizeof(*op));
	const struct tok *kw = &t->v[0];
	const struct opdef *def = NULL;
	for (int k = 0; k < WL_NKINDS; k++)
		if (!kw->quoted && !strcmp(kw->s, opdefs[k].name))
			def = &opdefs[k];
	if (!def) {
		char sb[64];
		const char *names[WL_NKINDS + 1];
		for (int k = 0; k < WL_NKINDS; k++)
			names[k] = opdefs[k].name;
		names[WL_NKINDS] = NULL;
		const char *near = kw->quoted ? NULL : nearest_word(kw->s, names);
		if (near)
			wl_perr(c, kw->col, "unknown op '%s'; did you mean '%s'?", wl_shown(kw, sb, sizeof(sb)), near);
		else
			wl_perr(c, kw->col, "unknown op '%s'", wl_shown(kw, sb, sizeof(sb)));
		return -1;
	}
	op->kind = def->kind;
	op->section = section;
	op->id = id;
	op->line = c->line;
	op->col = kw->col;
	op->off = -1;
	op->len = -1;
	struct args a = { c, def, t->v + 1, t->n - 1, t->v[t->n - 1].end };
	int used = parse_args(&a, op);
	if (used >= 0 && (size_t)used < a.n) {
		char sb[64];
		wl_perr(c, a.v[used].col, "%s: unexpected argument '%s' (usage: %s)", def->name,
		     wl_shown(&a.v[used], sb, sizeof(sb)), def->usage);
		used = -1;
	}
	if (used < 0) {
		if (c->e && !c->e->msg[0])
			wl_perr(c, kw->col, "out of memory");
		wl_op_free(op);
		return -1;
	}
	return 0;
}

int wl_parse_line(const char *line, int id, enum wl_section section, struct wl_op *op, struct errbuf *e)
{
	return wl_parse_line_at("<line>", 1, line, id, section, op, e);
}

int wl_parse_line_at(const char *file, int lineno, const char *line, int id, enum wl_section section,
		     struct wl_op *op, struct errbuf *e)
{
	struct pctx c = { file, lineno, e };
	struct toks t = { 0 };
	if (e)
		errbuf_clear(e);
	memset(op, 0, sizeof(*op));
	size_t n = strcspn(line, "\n");
	int rc = -1;
	if (tokenize(&c, line, n, &t) < 0)
		goto out;
	if (t.n == 0) {
		wl_perr(&c, 1, "no op on the line");
		goto out;
	}
	if (t.v[0].s[0] == '[' && !t.v[0].quoted) {
		wl_perr(&c, t.v[0].col, "a section header where an op was expected");
		goto out;
	}
	rc = parse_op(&c, &t, id, section, op);
out:
	toks_free(&t);
	return rc;
}

void wl_free(struct wl_workload *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		wl_op_free(&w->ops[i]);
	free(w->ops);
	for (size_t i = 0; i < w->nexpects; i++)
		wl_expect_free(&w->expects[i]);
	free(w->expects);
	free(w->file);
	memset(w, 0, sizeof(*w));
}

/* A section header line: its tokens are t. [expect] may name file systems
 * ("[expect ext4 xfs]", the closing bracket on the last one); *fs gets them. */
static int parse_header(const struct pctx *c, const struct toks *t, int *state, int *seen_setup,
			int *seen_run, int *run_line, int *run_col, char **fs, int *overlay)
{
	const struct tok *h = &t->v[0];
	char sb[64];
	int is_setup = !strcmp(h->s, "[setup]"), is_run = !strcmp(h->s, "[run]");
	int is_expect = !strcmp(h->s, "[expect]") || (!strcmp(h->s, "[expect") && t->n > 1);
	int is_overlay = !strcmp(h->s, "[overlay]") || !strcmp(h->s, "[overlay");
	if (!is_setup && !is_run && !is_expect && !is_overlay) {
		wl_perr(c, h->col, "unknown section '%s' (expected [overlay], [setup], [run] or [expect])",
			wl_shown(h, sb, sizeof(sb)));
		return -1;
	}
	if (is_overlay) {
		/* a header of the whole workload, with nothing under it */
		if (t->n > 1 || strcmp(h->s, "[overlay]")) {
			wl_perr(c, t->n > 1 ? t->v[1].col : h->col,
				"[overlay] takes no options (the overlay is mounted with %s)", WL_OVERLAY_OPTS);
			return -1;
		}
		if (*overlay) {
			wl_perr(c, h->col, "duplicate [overlay] (the first is on line %d)", *overlay);
			return -1;
		}
		if (*state != 0) {
			wl_perr(c, h->col, "[overlay] must come first, before [setup], [run] and any op");
			return -1;
		}
		*overlay = c->line;
		return 0;
	}
	if (is_expect) {
		if (!*seen_run) {
			wl_perr(c, h->col, "section [expect] must come after [run]");
			return -1;
		}
		free(*fs);
		*fs = NULL;
		if (t->n > 1) {
			const struct tok *last = &t->v[t->n - 1];
			if (!strcmp(h->s, "[expect]") || last->len < 2 || last->s[last->len - 1] != ']') {
				wl_perr(c, t->v[1].col, "[expect FS...] names file systems and ends with ']'");
				return -1;
			}
			struct sbuf b = SBUF_INIT;
			for (size_t i = 1; i < t->n; i++) {
				size_t l = t->v[i].len - (i + 1 == t->n);
				const char *nm = t->v[i].s;
				char one[32];
				snprintf(one, sizeof(one), "%.*s", (int)l, nm);
				if (!fs_lookup(one)) {
					wl_perr(c, t->v[i].col, "[expect]: unknown file system '%.*s' (ext4, xfs, btrfs or f2fs)", (int)l, nm);
					sbuf_free(&b);
					return -1;
				}
				sbuf_addf(&b, "%s%.*s", b.len ? " " : "", (int)l, nm);
			}
			*fs = sbuf_detach(&b);
		}
		*state = 4;
		return 0;
	}
	if (t->n > 1) {
		wl_perr(c, t->v[1].col, "unexpected '%s' after the section header", wl_shown(&t->v[1], sb, sizeof(sb)));
		return -1;
	}
	if (*state == 1) {
		wl_perr(c, h->col, "section %s after ops outside any section; a file with sections starts with one",
		     h->s);
		return -1;
	}
	if ((is_setup && *seen_setup) || (is_run && *seen_run)) {
		wl_perr(c, h->col, "duplicate section %s", h->s);
		return -1;
	}
	if (is_setup && *seen_run) {
		wl_perr(c, h->col, "section [setup] must come before [run]");
		return -1;
	}
	if (*state == 4) {
		wl_perr(c, h->col, "section %s after [expect]: [expect] comes last", h->s);
		return -1;
	}
	if (is_setup) {
		*seen_setup = 1;
		*state = 2;
	} else {
		*seen_run = 1;
		*state = 3;
		*run_line = c->line;
		*run_col = h->col;
	}
	return 0;
}

int wl_parse(const char *file, const char *text, struct wl_workload *w, struct errbuf *e)
{
	struct pctx c = { file ? file : "<workload>", 0, e };
	struct wl_workload r = { 0 };
	/* state: 0 nothing yet, 1 ops without a header (all [run]), 2 in [setup], 3 in [run], 4 in [expect] */
	int state = 0, seen_setup = 0, seen_run = 0, run_line = 0, run_col = 0;
	size_t cap = 0, nrun = 0, xcap = 0;
	char *xfs = NULL;
	int last_line = 1, last_col = 1;
	if (e)
		errbuf_clear(e);
	memset(w, 0, sizeof(*w));
	r.file = strdup(c.file);
	if (!r.file)
		goto fail_oom;
	for (const char *p = text; *p || p == text;) {
		size_t n = strcspn(p, "\n");
		c.line++;
		last_line = c.line;
		last_col = (int)n + 1;
		struct toks t = { 0 };
		if (tokenize(&c, p, n, &t) < 0) {
			toks_free(&t);
			goto fail;
		}
		if (t.n > 0 && !t.v[0].quoted && t.v[0].s[0] == '[') {
			int rc = parse_header(&c, &t, &state, &seen_setup, &seen_run, &run_line, &run_col, &xfs,
					      &r.overlay);
			toks_free(&t);
			if (rc < 0)
				goto fail;
		} else if (t.n > 0 && state == 4) {
			struct wl_expect x;
			int rc = wl_parse_expect(&c, &t, xfs, p, n, &r, &x);
			toks_free(&t);
			if (rc < 0)
				goto fail;
			ARRAY_PUSH(r.expects, r.nexpects, xcap, x);
		} else if (t.n > 0) {
			if (state == 0)
				state = 1;
			if (r.n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				struct wl_op *v = realloc(r.ops, nc * sizeof(*v));
				if (!v) {
					toks_free(&t);
					goto fail_oom;
				}
				r.ops = v;
				cap = nc;
			}
			enum wl_section sec = state == 2 ? WL_SETUP : WL_RUN;
			int rc = parse_op(&c, &t, (int)r.n + 1, sec, &r.ops[r.n]);
			toks_free(&t);
			if (rc < 0)
				goto fail;
			r.n++;
			if (sec == WL_SETUP)
				r.nsetup++;
			else
				nrun++;
		} else {
			toks_free(&t);
		}
		p += n;
		if (!*p)
			break;
		p++;
		if (!*p)
			break;
	}
	if (nrun == 0) {
		if (seen_run) {
			c.line = run_line;
			wl_perr(&c, run_col, "section [run] has no ops");
		} else {
			c.line = last_line;
			wl_perr(&c, last_col, "the workload has no [run] ops");
		}
		goto fail;
	}
	free(xfs);
	*w = r;
	return 0;
fail_oom:
	wl_perr(&c, 1, "out of memory");
fail:
	free(xfs);
	wl_free(&r);
	return -1;
}

int wl_load(const char *file, struct sbuf *text, struct wl_workload *w, struct errbuf *e)
{
	memset(w, 0, sizeof(*w));
	if (read_file(file, text) < 0)
		return errbuf_set(e, errno == ENOENT ? EXIT_NOINPUT : EXIT_DATAERR, "cannot read workload '%s': %s", file,
				  errno_advice(errno));
	return wl_parse(file, text->buf, w, e);
}

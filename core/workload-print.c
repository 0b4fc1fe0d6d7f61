/*
 * workload-print.c - the other half of the workload language (workload.h):
 * the canonical text of an op, which wl_parse_line reads back to the same
 * op (the host sends it to the agent, the store keeps it); which ops ask for
 * durability or write data; and the write pattern that names, in every
 * 16 bytes, the op and block that wrote them.
 */
#include "core/workload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"

/* ---- the canonical printer ---- */

struct out {
	char *buf;
	size_t size, len;
};

static void out_ch(struct out *o, char ch)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = ch;
	o->len++;
}

static void out_str(struct out *o, const char *s)
{
	while (*s)
		out_ch(o, *s++);
}

static void out_quoted(struct out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	out_ch(o, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\n') {
			out_str(o, "\\n");
		} else if (ch == '\t') {
			out_str(o, "\\t");
		} else if (ch == '\\' || ch == '"') {
			out_ch(o, '\\');
			out_ch(o, (char)ch);
		} else if (ch < 0x20 || ch >= 0x7f) {
			out_str(o, "\\x");
			out_ch(o, hex[ch >> 4]);
			out_ch(o, hex[ch & 15]);
		} else {
			out_ch(o, (char)ch);
		}
	}
	out_ch(o, '"');
}

/* A word: bare when it reads back as itself, else quoted. */
static void out_word(struct out *o, const char *s)
{
	int bare = *s != '\0';
	for (const unsigned char *p = (const unsigned char *)s; *p && bare; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '"' || *p == '#' || *p == '\\')
			bare = 0;
	out_ch(o, ' ');
	if (bare)
		out_str(o, s);
	else
		out_quoted(o, s, strlen(s));
}

static void out_size(struct out *o, int64_t v)
{
	char b[32];
	static const char suffix[] = "GMK";
	for (int i = 0; i < 3; i++) {
		int shift = 30 - 10 * i;
		if (v > 0 && v % ((int64_t)1 << shift) == 0) {
			snprintf(b, sizeof(b), " %" PRId64 "%c", v >> shift, suffix[i]);
			out_str(o, b);
			return;
		}
	}
	snprintf(b, sizeof(b), " %" PRId64, v);
	out_str(o, b);
}

static void out_mode(struct out *o, uint32_t mode)
{
	char b[16];
	snprintf(b, sizeof(b), " %04o", (unsigned)(mode & 07777));
	out_str(o, b);
}

static void out_len_or_text(struct out *o, const struct wl_op *op)
{
	if (op->data) {
		out_ch(o, ' ');
		out_quoted(o, op->data, op->data_len);
	} else {
		out_size(o, op->len);
	}
}

int wl_format(const struct wl_op *op, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };
	out_str(&o, wl_kind_name(op->kind));
	const char *p = op->path ? op->path : "";
	switch (op->kind) {
	case WL_MKDIR: case WL_CREAT:
		out_word(&o, p);
		out_mode(&o, op->mode);
		break;
	case WL_RMDIR: case WL_UNLINK: case WL_FSYNC: case WL_FDATASYNC: case WL_FBARRIER:
	case WL_FDATABARRIER: case WL_FIEMAP_SYNC: case WL_CLOSE:
		out_word(&o, p);
		break;
	case WL_WRITE: case WL_MMAPWRITE: case WL_DWRITE:
		out_word(&o, p);
		if (op->off > 0)
			out_size(&o, op->off);
		out_len_or_text(&o, op);
		break;
	case WL_APPEND:
		out_word(&o, p);
		out_len_or_text(&o, op);
		break;
	case WL_TRUNCATE:
		out_word(&o, p);
		out_size(&o, op->len);
		break;
	case WL_FALLOC:
		out_word(&o, p);
		out_ch(&o, ' ');
		out_str(&o, op->flags >= 0 && op->flags < 5 ? wl_falloc_names[op->flags] : "?");
		out_size(&o, op->off);
		out_size(&o, op->len);
		break;
	case WL_LINK:
		out_word(&o, p);
		out_word(&o, op->path2 ? op->path2 : "");
		break;
	case WL_SYMLINK:
		out_word(&o, op->path2 ? op->path2 : "");
		out_word(&o, p);
		break;
	case WL_RENAME:
		out_word(&o, p);
		out_word(&o, op->path2 ? op->path2 : "");
		if (op->flags > 0 && op->flags < 4) {
			out_ch(&o, ' ');
			out_str(&o, wl_rename_flags[op->flags]);
		}
		break;
	case WL_SETXATTR:
		out_word(&o, p);
		out_word(&o, op->name ? op->name : "");
		out_ch(&o, ' ');
		out_quoted(&o, op->value ? op->value : "", op->value ? op->value_len : 0);
		break;
	case WL_REMOVEXATTR:
		out_word(&o, p);
		out_word(&o, op->name ? op->name : "");
		break;
	case WL_CHMOD:
		out_word(&o, p);
		out_mode(&o, op->mode);
		break;
	case WL_SYNC: case WL_SYNCFS:
		break;
	case WL_SYNC_FILE_RANGE: {
		out_word(&o, p);
		out_size(&o, op->off);
		out_size(&o, op->len);
		out_ch(&o, ' ');
		int first = 1;
		for (int j = 0; j < 3; j++) {
			if (!(op->flags & (1 << j)))
				continue;
			if (!first)
				out_ch(&o, ',');
			out_str(&o, wl_sfr_flags[j]);
			first = 0;
		}
		break;
	}
	case WL_SLEEP: {
		char b[32];
		snprintf(b, sizeof(b), " %" PRId64, op->len);
		out_str(&o, b);
		break;
	}
	case WL_MARK:
		out_word(&o, op->name ? op->name : "");
		break;
	case WL_NKINDS:
		break;
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

/* ---- classification ---- */

int wl_is_persistence(const struct wl_op *op)
{
	switch (op->kind) {
	case WL_FSYNC: case WL_FDATASYNC: case WL_SYNC: case WL_SYNCFS:
		return 1;
	case WL_SYNC_FILE_RANGE:
		return (op->flags & WL_SFR_WAIT_AFTER) != 0;
	default:
		return 0;
	}
}

/* File bytes change: the writes, and fallocate modes that zero or punch.
 * truncate and plain/keep_size fallocate change the size or allocation
 * only (bytes past the old end read as zeros either way), so they are
 * not data writes. */
int wl_writes_data(const struct wl_op *op)
{
	switch (op->kind) {
	case WL_WRITE: case WL_APPEND: case WL_DWRITE: case WL_MMAPWRITE:
		return 1;
	case WL_FALLOC:
		return op->flags == WL_FALLOC_PUNCH_HOLE || op->flags == WL_FALLOC_ZERO_RANGE ||
		       op->flags == WL_FALLOC_ZERO_RANGE_KEEP_SIZE;
	default:
		return 0;
	}
}

/* ---- the write pattern ---- */

static void pattern_record(uint32_t op_id, uint64_t block, unsigned char rec[16])
{
	memcpy(rec, WL_PATTERN_MAGIC, 4);
	for (int i = 0; i < 4; i++)
		rec[4 + i] = (unsigned char)(op_id >> (8 * i));
	for (int i = 0; i < 8; i++)
		rec[8 + i] = (unsigned char)(block >> (8 * i));
}

void wl_pattern(uint32_t op_id, uint64_t off, void *buf, size_t len)
{
	unsigned char *p = buf, rec[16];
	uint64_t block = UINT64_MAX;
	for (size_t i = 0; i < len; i++) {
		uint64_t x = off + i;
		if (x / 4096 != block) {
			block = x / 4096;
			pattern_record(op_id, block, rec);
		}
		p[i] = rec[x % 16];
	}
}

uint32_t wl_pattern_op(const void *p, uint64_t off)
{
	const unsigned char *r = p;
	if (memcmp(r, WL_PATTERN_MAGIC, 4))
		return 0;
	uint64_t block = 0;
	for (int i = 7; i >= 0; i--)
		block = block << 8 | r[8 + i];
	if (block != off / 4096)
		return 0;
	return (uint32_t)r[4] | (uint32_t)r[5] << 8 | (uint32_t)r[6] << 16 | (uint32_t)r[7] << 24;
}


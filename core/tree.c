/*
 * tree.c - one observed node per line: format, parse, block tokens.
 *
 * Method. A node is twelve tab-separated fields. Every field goes through
 * one percent-encoding (the bytes tree.h lists become %XX, upper-case hex;
 * the decoder accepts either case), so a line never holds a tab, a newline
 * or a raw non-printing byte whatever the path, target or content are.
 * "-" stands for a field that does not apply (a NULL pointer); a value
 * that really is "-" is written "%2D", so the two never meet. Content is
 * the one field with an extra rule, straight from tree.h: a regular file
 * larger than TREE_INLINE_MAX has an empty content field, read back as
 * NULL, while an empty field on a small file is a real empty content.
 * The path comes from a guest and is checked as well as decoded: it is
 * what a walk of the mounted tree gives, relative, with no empty, "." or
 * ".." component and no NUL, so it can never name a place outside the
 * tree; any other byte, a control byte included, is a legal name.
 *
 * The xattrs field is already line-safe when it reaches us: tree.h puts
 * the percent-encoding inside it (name=value pairs, ';' and '=' inside a
 * name or value encoded too), so it is copied as is after a check that it
 * holds only safe bytes. tree_xattrs_append and tree_xattr_get build and
 * read that form, so nobody else has to know the encoding.
 *
 * A block token is "z" for zeros, "p<op>" when every byte of the block is
 * the write pattern (workload.h) of one op for that block: every full
 * 16-byte record names the same op and block, and the bytes of a short
 * trailing record equal the same record's prefix; a block shorter than
 * one record is never a pattern. Anything else is "h" and the FNV-1a 64
 * hash. The capture adds "e" for a block that could not be read (EIO in a
 * crash state): it is a result, and the parser accepts it.
 *
 * libc only: this file is linked into the static guest agent too.
 */
#include "core/tree.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "core/workload.h"

#define NFIELDS 12

static int must_encode(unsigned char ch, int extra)
{
	if (ch == '%' || ch == '\\' || ch < 0x21 || ch > 0x7e)
		return 1;
	return extra && (ch == ';' || ch == '=');
}

static void sb_encode(struct sbuf *b, const void *data, size_t n, int extra)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = data;
	for (size_t i = 0; i < n; i++) {
		if (must_encode(s[i], extra)) {
			char e[3] = { '%', hex[s[i] >> 4], hex[s[i] & 15] };
			sbuf_add(b, e, 3);
		} else {
			sbuf_add(b, &s[i], 1);
		}
	}
}

/* A field holding an optional string. */
static void sb_field(struct sbuf *b, const void *data, size_t n, int present)
{
	sbuf_add(b, "\t", 1);
	if (!present)
		sbuf_add(b, "-", 1);
	else if (n == 1 && *(const char *)data == '-')
		sbuf_add(b, "%2D", 3);
	else
		sb_encode(b, data, n, 0);
}

/* Decode s[0..n) into a malloc'd buffer (NUL-terminated). NULL when
 * malformed or out of memory. */
static unsigned char *pct_decode_strict(const char *s, size_t n, size_t *outlen)
{
	unsigned char *o = malloc(n + 1);
	size_t k = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '%') {
			int h, l;
			if (i + 2 >= n) {
				free(o);
				return NULL;
			}
			h = hexval((unsigned char)s[i + 1]);
			l = hexval((unsigned char)s[i + 2]);
			if (h < 0 || l < 0) {
				free(o);
				return NULL;
			}
			o[k++] = (unsigned char)(h * 16 + l);
			i += 2;
		} else if (must_encode(ch, 0)) {
			free(o);
			return NULL;
		} else {
			o[k++] = ch;
		}
	}
	o[k] = '\0';
	*outlen = k;
	return o;
}

/* Is the xattrs field s[0..n) well formed: name=value pairs of safe bytes? */
static int xattrs_valid(const char *s, size_t n)
{
	size_t i = 0;
	if (n == 0)
		return 1;
	while (i <= n) {
		size_t j = i, eq = 0;
		while (j < n && s[j] != ';') {
			if (s[j] == '=' && !eq)
				eq = j;
			else if (s[j] == '=')
				return 0;
			j++;
		}
		if (!eq || eq == i)
			return 0;
		size_t dl;
		unsigned char *d = pct_decode_strict(s + i, j - i, &dl);
		if (!d)
			return 0;
		free(d);
		i = j + 1;
	}
	return 1;
}

char *tree_node_format(const struct tree_node *n)
{
	struct sbuf b = SBUF_INIT;
	char num[128];
	sb_encode(&b, n->path ? n->path : "", n->path ? strlen(n->path) : 0, 0);
	snprintf(num, sizeof(num), "\t%c\t%04" PRIo32 "\t%" PRIu32 "\t%" PRIu32 "\t%" PRIu64 "\t%" PRIu32 "\t%" PRIu64,
		 n->type, n->mode & 07777, n->uid, n->gid, n->size, n->nlink, n->ino);
	sbuf_adds(&b, num);
	sbuf_add(&b, "\t", 1);
	if (!n->xattrs)
		sbuf_add(&b, "-", 1);
	else if (xattrs_valid(n->xattrs, strlen(n->xattrs)))
		sbuf_adds(&b, n->xattrs);
	else /* not in the documented form: keep it readable, never break the line */
		sb_encode(&b, n->xattrs, strlen(n->xattrs), 0);
	sb_field(&b, n->target, n->target ? strlen(n->target) : 0, n->target != NULL);
	sb_field(&b, n->blocks, n->blocks ? strlen(n->blocks) : 0, n->blocks != NULL);
	if (!n->content && n->type == 'f' && n->size > TREE_INLINE_MAX)
		sbuf_add(&b, "\t", 1);
	else
		sb_field(&b, n->content, n->content_len, n->content != NULL);
	sbuf_add(&b, "\n", 1);
	return sbuf_detach(&b);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void tree_node_copy(struct tree_node *dst, const struct tree_node *src)
{
	*dst = *src;
	dst->path = dup_or_null(src->path);
	dst->xattrs = dup_or_null(src->xattrs);
	dst->target = dup_or_null(src->target);
	dst->blocks = dup_or_null(src->blocks);
	dst->content = src->content ? xmemdup(src->content, src->content_len) : NULL;
}

void tree_node_free(struct tree_node *n)
{
	if (!n)
		return;
	free(n->path);
	free(n->xattrs);
	free(n->target);
	free(n->blocks);
	free(n->content);
	memset(n, 0, sizeof(*n));
}

static int parse_u64(const char *s, size_t n, int base, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = hexval((unsigned char)s[i]);
		if (d < 0 || d >= base || (s[i] >= 'A' && s[i] <= 'Z'))
			return -1;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -1;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int blocks_valid(const char *s)
{
	if (!*s)
		return 1;
	for (;;) {
		size_t l = strcspn(s, ",");
		if (l == 1 && (s[0] == 'z' || s[0] == 'e')) {
			/* ok */
		} else if (l >= 2 && s[0] == 'p') {
			uint64_t v;
			if (s[1] == '0' || parse_u64(s + 1, l - 1, 10, UINT32_MAX, &v) < 0)
				return 0;
		} else if (l == 17 && s[0] == 'h') {
			for (size_t i = 1; i < 17; i++)
				if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
					return 0;
		} else {
			return 0;
		}
		s += l;
		if (!*s)
			return 1;
		s++;
	}
}

/* A path as the capture writes it: relative, its components separated by
 * single slashes, none of them "." or "..". Any other byte may be in a
 * name, which is why the views escape them. */
static int path_valid(const char *p)
{
	for (;;) {
		size_t l = strcspn(p, "/");
		if (l == 0 || (l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += l;
		if (!*p)
			return 1;
		p++;
	}
}

/* An optional string field: "-" is NULL. */
static int opt_field(const char *s, size_t n, char **out, size_t *outlen)
{
	if (n == 1 && s[0] == '-') {
		*out = NULL;
		return 0;
	}
	size_t l;
	unsigned char *d = pct_decode_strict(s, n, &l);
	if (!d)
		return -1;
	*out = (char *)d;
	if (outlen)
		*outlen = l;
	return 0;
}

int tree_node_parse(const char *line, struct tree_node *n)
{
	const char *f[NFIELDS];
	size_t fl[NFIELDS];
	memset(n, 0, sizeof(*n));
	size_t len = strcspn(line, "\n");
	if (line[len] == '\n' && line[len + 1] != '\0')
		return -1;
	size_t nf = 0;
	for (const char *p = line;;) {
		size_t l = strcspn(p, "\t\n");
		if (nf == NFIELDS)
			return -1;
		f[nf] = p;
		fl[nf++] = l;
		p += l;
		if (*p != '\t')
			break;
		p++;
	}
	if (nf != NFIELDS)
		return -1;

	uint64_t v[6];
	size_t plen;
	if (fl[1] != 1 || !strchr("fdlo", f[1][0]))
		goto bad;
	n->type = f[1][0];
	if (parse_u64(f[2], fl[2], 8, 07777, &v[0]) < 0 || parse_u64(f[3], fl[3], 10, UINT32_MAX, &v[1]) < 0 ||
	    parse_u64(f[4], fl[4], 10, UINT32_MAX, &v[2]) < 0 || parse_u64(f[5], fl[5], 10, UINT64_MAX, &v[3]) < 0 ||
	    parse_u64(f[6], fl[6], 10, UINT32_MAX, &v[4]) < 0 || parse_u64(f[7], fl[7], 10, UINT64_MAX, &v[5]) < 0)
		goto bad;
	n->mode = (uint32_t)v[0];
	n->uid = (uint32_t)v[1];
	n->gid = (uint32_t)v[2];
	n->size = v[3];
	n->nlink = (uint32_t)v[4];
	n->ino = v[5];

	n->path = (char *)pct_decode_strict(f[0], fl[0], &plen);
	if (!n->path || plen == 0 || strlen(n->path) != plen || !path_valid(n->path))
		goto bad;
	if (!(fl[8] == 1 && f[8][0] == '-')) {
		if (!xattrs_valid(f[8], fl[8]))
			goto bad;
		n->xattrs = strndup(f[8], fl[8]);
		if (!n->xattrs)
			goto bad;
	}
	size_t tl = 0;
	if (opt_field(f[9], fl[9], &n->target, &tl) < 0 || (n->target && strlen(n->target) != tl))
		goto bad;
	if (opt_field(f[10], fl[10], &n->blocks, NULL) < 0 || (n->blocks && !blocks_valid(n->blocks)))
		goto bad;
	if (fl[11] == 0 && n->type == 'f' && n->size > TREE_INLINE_MAX) {
		n->content = NULL;
	} else {
		if (opt_field(f[11], fl[11], (char **)&n->content, &n->content_len) < 0)
			goto bad;
		if (!n->content)
			n->content_len = 0;
	}
	return 0;
bad:
	tree_node_free(n);
	return -1;
}

/* The op whose pattern fills blk (file offset off), or 0. */
static uint32_t pattern_of(const unsigned char *blk, size_t len, uint64_t off)
{
	size_t full = len / 16;
	if (off % 16 || full == 0)
		return 0;
	uint32_t op = wl_pattern_op(blk, off);
	if (!op)
		return 0;
	for (size_t r = 1; r < full; r++)
		if (memcmp(blk + 16 * r, blk, 16))
			return 0;
	if (len % 16 && memcmp(blk + 16 * full, blk, len % 16))
		return 0;
	return op;
}

void tree_block_token(const unsigned char *blk, size_t len, uint64_t off, char out[24])
{
	size_t i = 0;
	while (i < len && !blk[i])
		i++;
	if (i == len) {
		strcpy(out, "z");
		return;
	}
	/* Records are aligned to the block, and every record of one block is
	 * the same 16 bytes, so comparing with the first record suffices. */
	uint32_t op = off % TREE_BLOCK == 0 ? pattern_of(blk, len, off) : 0;
	if (op) {
		snprintf(out, 24, "p%" PRIu32, op);
		return;
	}
	snprintf(out, 24, "h%016" PRIx64, fnv1a64(blk, len));
}

char *tree_xattrs_append(char *xattrs, const char *name, const void *value, size_t len)
{
	struct sbuf b = SBUF_INIT;
	if (xattrs && *xattrs) {
		sbuf_adds(&b, xattrs);
		sbuf_add(&b, ";", 1);
	}
	sb_encode(&b, name, strlen(name), 1);
	sbuf_add(&b, "=", 1);
	sb_encode(&b, value, len, 1);
	free(xattrs);
	return sbuf_detach(&b);
}

int tree_xattr_get(const char *xattrs, const char *name, unsigned char **value, size_t *len)
{
	if (!xattrs || !*xattrs)
		return 0;
	for (const char *p = xattrs;;) {
		size_t l = strcspn(p, ";");
		const char *eq = memchr(p, '=', l);
		if (!eq)
			return -1;
		size_t nl;
		unsigned char *nm = pct_decode_strict(p, (size_t)(eq - p), &nl);
		if (!nm)
			return -1;
		int match = nl == strlen(name) && !memcmp(nm, name, nl);
		free(nm);
		if (match) {
			size_t vl;
			unsigned char *v = pct_decode_strict(eq + 1, l - (size_t)(eq + 1 - p), &vl);
			if (!v)
				return -1;
			if (value)
				*value = v;
			else
				free(v);
			if (len)
				*len = vl;
			return 1;
		}
		p += l;
		if (!*p)
			return 0;
		p++;
	}
}

void tree_xattrs_each(const char *xattrs, void (*fn)(void *ctx, const struct sbuf *name, const struct sbuf *value),
		      void *ctx)
{
	struct sbuf name = SBUF_INIT, value = SBUF_INIT;
	for (const char *p = xattrs; p && *p;) {
		size_t l = strcspn(p, ";");
		const char *eq = memchr(p, '=', l);
		size_t nl = eq ? (size_t)(eq - p) : l;
		sbuf_reset(&name);
		sbuf_reset(&value);
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

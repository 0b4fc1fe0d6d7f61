/*
 * sim.c - the reference simulator (see sim.h).
 *
 * Method. The model is a table of inodes, each with its type, mode, size,
 * 4 KiB block ids, xattrs and (for directories) entries; names, xattr
 * values and block contents are interned, so a value is one integer and
 * two equal blocks have the same id. Each op is first checked the way the
 * kernel would check it (ENOENT, EEXIST, ENOTEMPTY, ...) and only then
 * applied, through one function, set_field(), which records the change
 * (field, old value, new value) when the op is a [run] op. Setup ops are
 * applied without recording: their result is S0. Data writes go block by
 * block through the block store: the new block is the old one with the
 * written bytes replaced, so sub-block writes keep what was there; bytes
 * beyond a file's size are always zero (a shrinking truncate zeroes them),
 * as the kernel guarantees on re-extension.
 *
 * Paths follow the agent (images/agent/ops.c): every op acts on what the
 * path names now (an fd is reused only while the path still names it), the
 * open-based ops follow a final symlink, the name ops (rename, link,
 * unlink, lsetxattr) do not. A symlink in the middle of a path, or one
 * pointing outside the file system, is not modelled: sim_check refuses it.
 *
 * After every op the inode numbers the guest reported for path and path2
 * are attached to the inodes the simulator resolves them to.
 */
#include "judge/sim-priv.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/util.h"

/* The op being applied (its id), and whether its changes are recorded. */
struct ctx {
	struct sim *s;
	const struct wl_op *op;
	int record;       /* a [run] op: its changes are recorded */
	int dry;          /* only check: change nothing */
	const struct op_result *g; /* the guest's result, or NULL */
};

static void set_field(struct ctx *c, enum sim_field_kind kind, int ino, int64_t key, int64_t val, int data)
{
	struct sim *s = c->s;
	if (c->dry)
		return;
	struct sim_field f = { kind, ino, key };
	int64_t old = sim_field_get(s, &f);
	if (old == val)
		return;
	sim_field_put(s, &f, val);
	if (!c->record)
		return;
	ALLOC_GROW(s->ch, s->nch + 1, s->ch_cap);
	s->ch[s->nch] = (struct sim_change){ .op = c->op->id, .f = f, .old = old, .val = val, .data = data };
	sim_hist_add(s, &f, s->nch);
	s->nch++;
}

/* ------------------------------------------------------------------ */
/* Paths */

static int new_inode(struct sim *s, char type, uint32_t mode, int born)
{
	if (born < 0)
		return SIM_ROOT; /* a dry run creates nothing */
	ALLOC_GROW(s->in, s->nin + 1, s->in_cap);
	memset(&s->in[s->nin], 0, sizeof(s->in[s->nin]));
	s->in[s->nin].type = type;
	s->in[s->nin].mode = mode;
	s->in[s->nin].born = born;
	return (int)s->nin++;
}

struct where {
	int dir;          /* the directory holding the last name, -1 when a middle component is missing */
	int64_t name;     /* the last name's id */
	int ino;          /* what it names (no follow), or SIM_ABSENT */
	int err;          /* ENOENT/ENOTDIR for a middle component, EOPNOTSUPP for what we do not model */
};

static int lookup(const struct sim *s, int dir, const char *name, size_t len)
{
	int64_t id = sim_str_find(s, name, len);
	if (id < 0)
		return SIM_ABSENT;
	struct sim_field f = { SF_ENTRY, dir, id };
	return (int)sim_field_get(s, &f);
}

static struct where resolve(struct sim *s, const char *path)
{
	struct where w = { SIM_ROOT, -1, SIM_ABSENT, 0 };
	const char *p = path;
	int dir = SIM_ROOT;
	for (;;) {
		while (*p == '/')
			p++;
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *rest = e;
		while (rest && *rest == '/')
			rest++;
		if (!rest || !*rest) {
			w.dir = dir;
			if (len == 0) { /* the root itself */
				w.dir = -1;
				w.ino = SIM_ROOT;
				return w;
			}
			w.name = sim_str_intern(s, p, len);
			w.ino = lookup(s, dir, p, len);
			return w;
		}
		int child = (len == 1 && *p == '.') ? dir : lookup(s, dir, p, len);
		if (child == SIM_ABSENT) {
			w.dir = -1;
			w.err = ENOENT;
			return w;
		}
		if (s->in[child].type == 'l') {
			w.dir = -1;
			w.err = EOPNOTSUPP;
			return w;
		}
		if (s->in[child].type != 'd') {
			w.dir = -1;
			w.err = ENOTDIR;
			return w;
		}
		dir = child;
		p = rest;
	}
}

/* Follow a final symlink (relative targets only, a few levels). */
static struct where follow(struct sim *s, struct where w, int *unsupported)
{
	for (int depth = 0; depth < 8 && w.ino != SIM_ABSENT && s->in[w.ino].type == 'l'; depth++) {
		const char *t = s->in[w.ino].target;
		if (!t || t[0] == '/' || strstr(t, "..")) {
			*unsupported = 1;
			return w;
		}
		/* the target is relative to the link's directory */
		char *dirpath = w.dir == SIM_ROOT ? xstrdup("") : sim_path_at(s, w.dir, 1 << 30);
		if (!dirpath) {
			*unsupported = 1;
			return w;
		}
		char *full = *dirpath ? xasprintf("%s/%s", dirpath, t) : xstrdup(t);
		w = resolve(s, full);
		free(full);
		free(dirpath);
		if (w.err)
			return w;
	}
	return w;
}

/* ------------------------------------------------------------------ */
/* Data */

static void write_bytes(struct ctx *c, int ino, uint64_t off, const unsigned char *src, const struct wl_op *pat,
			uint64_t len)
{
	struct sim *s = c->s;
	unsigned char blk[TREE_BLOCK];
	uint64_t done = 0;
	while (done < len) {
		uint64_t pos = off + done, b = pos / TREE_BLOCK, in = pos % TREE_BLOCK;
		size_t n = (size_t)(TREE_BLOCK - in < len - done ? TREE_BLOCK - in : len - done);
		struct sim_field f = { SF_BLOCK, ino, (int64_t)b };
		memcpy(blk, sim_block(s, sim_field_get(s, &f)), TREE_BLOCK);
		if (src)
			memcpy(blk + in, src + done, n);
		else if (pat)
			wl_pattern((uint32_t)pat->id, pos, blk + in, n);
		else
			memset(blk + in, 0, n);
		set_field(c, SF_BLOCK, ino, (int64_t)b, sim_blk_intern(s, blk), 1);
		done += n;
	}
}

static void set_size(struct ctx *c, int ino, uint64_t size, int data)
{
	struct sim_inode *in = &c->s->in[ino];
	uint64_t old = in->size;
	if (size < old) {
		/* zero what lies beyond the new end, so a later extension reads zeros */
		uint64_t end = (old + TREE_BLOCK - 1) / TREE_BLOCK * TREE_BLOCK;
		if (size % TREE_BLOCK)
			write_bytes(c, ino, size, NULL, NULL, TREE_BLOCK - size % TREE_BLOCK);
		for (uint64_t b = (size + TREE_BLOCK - 1) / TREE_BLOCK; b * TREE_BLOCK < end; b++)
			set_field(c, SF_BLOCK, ino, (int64_t)b, 0, data);
	}
	set_field(c, SF_SIZE, ino, 0, (int64_t)size, data);
}

/* ------------------------------------------------------------------ */
/* Ops */

static int is_empty_dir(const struct sim_inode *in)
{
	return in->ne == 0;
}

static int is_opened(const struct sim *s, const char *path)
{
	for (size_t i = 0; i < s->nopened; i++)
		if (!strcmp(s->opened[i], path))
			return 1;
	return 0;
}

static void mark_opened(struct sim *s, const char *path)
{
	if (is_opened(s, path))
		return;
	s->opened = xrealloc(s->opened, (s->nopened + 1) * sizeof(*s->opened));
	s->opened[s->nopened++] = xstrdup(path);
}

static void unmark_opened(struct sim *s, const char *path)
{
	size_t k = 0;
	for (size_t i = 0; i < s->nopened; i++) {
		if (strcmp(s->opened[i], path))
			s->opened[k++] = s->opened[i];
		else
			free(s->opened[i]);
	}
	s->nopened = k;
}

static int is_ancestor(const struct sim *s, int anc, int ino)
{
	/* is anc ino itself or above it? (directories have one name) */
	for (int depth = 0; depth < 256; depth++) {
		if (ino == anc)
			return 1;
		if (ino == SIM_ROOT)
			return 0;
		int parent = -1;
		for (size_t d = 0; d < s->nin && parent < 0; d++)
			for (size_t i = 0; i < s->in[d].ne; i++)
				if (s->in[d].echild[i] == ino) {
					parent = (int)d;
					break;
				}
		if (parent < 0)
			return 0;
		ino = parent;
	}
	return 0;
}

static uint64_t data_len(const struct wl_op *op)
{
	if (op->data)
		return op->data_len;
	return op->len > 0 ? (uint64_t)op->len : 0;
}

/* Open-for-data semantics (write, append, dwrite, mmapwrite, creat): the
 * target inode, created when missing; -errno on failure. */
static int open_create(struct ctx *c, const char *path, uint32_t mode, int *unsup)
{
	struct sim *s = c->s;
	struct where w = follow(s, resolve(s, path), unsup);
	if (*unsup)
		return -EOPNOTSUPP;
	if (w.err)
		return -w.err;
	if (w.ino == SIM_ABSENT) {
		if (w.dir < 0)
			return -ENOENT;
		int ino = new_inode(s, 'f', mode, c->dry ? -1 : c->record ? c->op->id : 0);
		set_field(c, SF_ENTRY, w.dir, w.name, ino, 0);
		return ino;
	}
	if (s->in[w.ino].type == 'd')
		return -EISDIR;
	return w.ino;
}

/* An existing path for an fd op (follows symlinks); -errno. */
static int open_existing(struct sim *s, const char *path, int *unsup)
{
	struct where w = follow(s, resolve(s, path), unsup);
	if (*unsup)
		return -EOPNOTSUPP;
	if (w.err)
		return -w.err;
	if (w.ino == SIM_ABSENT)
		return -ENOENT;
	return w.ino;
}

/* A path that does not resolve: its errno; one the simulator cannot follow
 * (a symlink inside it) sets *unsup. */
static int path_err(const struct where *w, int *unsup)
{
	if (w->err == EOPNOTSUPP)
		*unsup = 1;
	return w->err;
}

/* The two paths of link and rename: the source must exist, the destination's
 * directory too. 0, or the errno the kernel would give. */
static int resolve_two(struct sim *s, const struct wl_op *op, struct where *a, struct where *b, int *unsup)
{
	*a = resolve(s, op->path);
	*b = resolve(s, op->path2);
	if (a->err == EOPNOTSUPP || b->err == EOPNOTSUPP)
		return *unsup = 1, EOPNOTSUPP;
	if (a->err)
		return a->err;
	if (a->ino == SIM_ABSENT)
		return ENOENT;
	return b->err;
}

/* One function per op: 0 or the errno the call returns, as the kernel checks
 * them; *unsup is set when the simulator cannot model the op. */
static int op_mkdir(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where w = resolve(s, op->path);
	if (w.err)
		return path_err(&w, unsup);
	if (w.ino != SIM_ABSENT)
		return EEXIST;
	if (w.dir < 0)
		return ENOENT;
	int ino = new_inode(s, 'd', op->mode & 07777, c->dry ? -1 : c->record ? op->id : 0);
	set_field(c, SF_ENTRY, w.dir, w.name, ino, 0);
	return 0;
}

static int op_rmdir(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where w = resolve(s, op->path);
	if (w.err)
		return path_err(&w, unsup);
	if (w.ino == SIM_ABSENT)
		return ENOENT;
	if (w.ino == SIM_ROOT)
		return EBUSY;
	if (s->in[w.ino].type != 'd')
		return ENOTDIR;
	if (!is_empty_dir(&s->in[w.ino]))
		return ENOTEMPTY;
	set_field(c, SF_ENTRY, w.dir, w.name, SIM_ABSENT, 0);
	return 0;
}

static int op_creat(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	int ino = open_create(c, op->path, op->mode & 07777, unsup);
	if (ino < 0)
		return -ino;
	if (c->dry)
		return 0;
	mark_opened(s, op->path);
	set_size(c, ino, 0, 0);
	return 0;
}

static int is_write_op(const struct wl_op *op)
{
	return op->kind == WL_WRITE || op->kind == WL_APPEND || op->kind == WL_DWRITE || op->kind == WL_MMAPWRITE;
}

/* write, append, dwrite (O_DIRECT: 512-byte aligned) and mmapwrite. */
static int op_write(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	uint64_t len = data_len(op), off = op->off > 0 ? (uint64_t)op->off : 0;
	if (op->kind == WL_DWRITE && (off % 512 || len % 512))
		return EINVAL;
	int ino = open_create(c, op->path, 0644, unsup);
	if (ino < 0)
		return -ino;
	if (c->dry)
		return off + len > (uint64_t)SIM_MAX_FILE ? (*unsup = 1, EFBIG) : 0;
	mark_opened(s, op->path);
	if (op->kind == WL_APPEND)
		off = s->in[ino].size;
	/* a short write (the disk full): the guest wrote its first ret bytes,
	 * then failed; a write that did not fail wrote them all */
	if (c->g && c->g->err && c->g->ret >= 0 && (uint64_t)c->g->ret < len)
		len = (uint64_t)c->g->ret;
	if (off + len > (uint64_t)SIM_MAX_FILE) {
		*unsup = 1;
		return EFBIG;
	}
	write_bytes(c, ino, off, (const unsigned char *)op->data, op->data ? NULL : op, len);
	if (off + len > s->in[ino].size)
		set_size(c, ino, off + len, 1);
	return 0;
}

static int op_truncate(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	int ino = open_existing(s, op->path, unsup);
	if (ino < 0)
		return -ino;
	if (s->in[ino].type == 'd')
		return EISDIR;
	if (op->len < 0)
		return EINVAL;
	if (op->len > SIM_MAX_FILE) {
		*unsup = 1;
		return EFBIG;
	}
	set_size(c, ino, (uint64_t)op->len, 0);
	return 0;
}

static int op_falloc(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	int ino = open_existing(s, op->path, unsup);
	if (ino < 0)
		return -ino;
	if (s->in[ino].type == 'd')
		return EISDIR;
	if (op->off < 0 || op->len <= 0)
		return EINVAL;
	uint64_t off = (uint64_t)op->off, len = (uint64_t)op->len, size = s->in[ino].size;
	if (off + len > (uint64_t)SIM_MAX_FILE) {
		*unsup = 1;
		return EFBIG;
	}
	if (c->dry)
		return op->flags > WL_FALLOC_ZERO_RANGE_KEEP_SIZE ? EINVAL : 0;
	mark_opened(s, op->path);
	switch (op->flags) {
	case WL_FALLOC_DEFAULT:
		if (off + len > size)
			set_size(c, ino, off + len, 0);
		break;
	case WL_FALLOC_KEEP_SIZE:
		break;
	case WL_FALLOC_PUNCH_HOLE:
	case WL_FALLOC_ZERO_RANGE_KEEP_SIZE:
		if (off < size)
			write_bytes(c, ino, off, NULL, NULL, (off + len > size ? size : off + len) - off);
		break;
	case WL_FALLOC_ZERO_RANGE:
		if (off < size)
			write_bytes(c, ino, off, NULL, NULL, (off + len > size ? size : off + len) - off);
		if (off + len > size)
			set_size(c, ino, off + len, 0);
		break;
	default:
		return EINVAL;
	}
	return 0;
}

static int op_link(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where a, b;
	int e = resolve_two(s, op, &a, &b, unsup);
	if (e)
		return e;
	if (b.ino != SIM_ABSENT)
		return EEXIST;
	if (s->in[a.ino].type == 'd')
		return EPERM;
	set_field(c, SF_ENTRY, b.dir, b.name, a.ino, 0);
	return 0;
}

static int op_symlink(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where w = resolve(s, op->path);
	if (w.err)
		return path_err(&w, unsup);
	if (w.ino != SIM_ABSENT)
		return EEXIST;
	if (c->dry)
		return 0;
	int ino = new_inode(s, 'l', 0777, c->record ? op->id : 0);
	s->in[ino].target = xstrdup(op->path2 ? op->path2 : "");
	s->in[ino].size = strlen(s->in[ino].target);
	set_field(c, SF_ENTRY, w.dir, w.name, ino, 0);
	return 0;
}

static int op_rename(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where a, b;
	int e = resolve_two(s, op, &a, &b, unsup);
	if (e)
		return e;
	if (op->flags == WL_RENAME_EXCHANGE) {
		if (b.ino == SIM_ABSENT)
			return ENOENT;
		if (a.ino == b.ino)
			return 0;
		if ((s->in[a.ino].type == 'd' && is_ancestor(s, a.ino, b.dir)) ||
		    (s->in[b.ino].type == 'd' && is_ancestor(s, b.ino, a.dir)))
			return EINVAL;
		int ai = a.ino, bi = b.ino;
		set_field(c, SF_ENTRY, a.dir, a.name, bi, 0);
		set_field(c, SF_ENTRY, b.dir, b.name, ai, 0);
		return 0;
	}
	if (op->flags == WL_RENAME_NOREPLACE && b.ino != SIM_ABSENT)
		return EEXIST;
	if (a.ino == b.ino)
		return 0;
	const struct sim_inode *ai = &s->in[a.ino];
	if (ai->type == 'd' && is_ancestor(s, a.ino, b.dir))
		return EINVAL;
	if (b.ino != SIM_ABSENT) {
		const struct sim_inode *bi = &s->in[b.ino];
		if (ai->type == 'd' && bi->type != 'd')
			return ENOTDIR;
		if (ai->type != 'd' && bi->type == 'd')
			return EISDIR;
		if (bi->type == 'd' && !is_empty_dir(bi))
			return ENOTEMPTY;
	}
	int moved = a.ino;
	set_field(c, SF_ENTRY, a.dir, a.name, SIM_ABSENT, 0);
	set_field(c, SF_ENTRY, b.dir, b.name, moved, 0);
	return 0;
}

static int op_unlink(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where w = resolve(s, op->path);
	if (w.err)
		return path_err(&w, unsup);
	if (w.ino == SIM_ABSENT)
		return ENOENT;
	if (s->in[w.ino].type == 'd')
		return EISDIR;
	set_field(c, SF_ENTRY, w.dir, w.name, SIM_ABSENT, 0);
	return 0;
}

/* setxattr and removexattr. */
static int op_xattr(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	struct where w = resolve(s, op->path);
	if (w.err)
		return path_err(&w, unsup);
	if (w.ino == SIM_ABSENT)
		return ENOENT;
	if (s->in[w.ino].type == 'l' && !strncmp(op->name, "user.", 5))
		return EPERM;
	int64_t name = sim_str_intern(s, op->name, strlen(op->name));
	struct sim_field f = { SF_XATTR, w.ino, name };
	if (op->kind == WL_REMOVEXATTR) {
		if (sim_field_get(s, &f) == SIM_ABSENT)
			return ENODATA;
		set_field(c, SF_XATTR, w.ino, name, SIM_ABSENT, 0);
	} else {
		set_field(c, SF_XATTR, w.ino, name,
			  sim_str_intern(s, op->value ? op->value : "", op->value ? op->value_len : 0), 0);
	}
	return 0;
}

static int op_chmod(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	int ino = open_existing(s, op->path, unsup);
	if (ino < 0)
		return -ino;
	set_field(c, SF_MODE, ino, 0, op->mode & 07777, 0);
	return 0;
}

/* the calls on an open file that change nothing visible: fsync, fdatasync, sync_file_range, the barriers, fiemap_sync. */
static int op_sync_file(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	int ino = open_existing(s, op->path, unsup);
	if (ino < 0)
		return -ino;
	if (!c->dry)
		mark_opened(s, op->path);
	return 0;
}

static int op_close(struct ctx *c, int *unsup)
{
	struct sim *s = c->s;
	const struct wl_op *op = c->op;
	(void)unsup;
	if (!is_opened(s, op->path))
		return EBADF;
	if (!c->dry)
		unmark_opened(s, op->path);
	return 0;
}

/* sync, syncfs, sleep, mark: nothing visible changes. */
static int op_nothing(struct ctx *c, int *unsup)
{
	(void)unsup;
	(void)c;
	return 0;
}

typedef int apply_fn(struct ctx *c, int *unsup);

static apply_fn *const apply_op[WL_NKINDS] = {
	[WL_MKDIR] = op_mkdir,
	[WL_RMDIR] = op_rmdir,
	[WL_CREAT] = op_creat,
	[WL_WRITE] = op_write,
	[WL_APPEND] = op_write,
	[WL_DWRITE] = op_write,
	[WL_MMAPWRITE] = op_write,
	[WL_TRUNCATE] = op_truncate,
	[WL_FALLOC] = op_falloc,
	[WL_LINK] = op_link,
	[WL_SYMLINK] = op_symlink,
	[WL_RENAME] = op_rename,
	[WL_UNLINK] = op_unlink,
	[WL_SETXATTR] = op_xattr,
	[WL_REMOVEXATTR] = op_xattr,
	[WL_CHMOD] = op_chmod,
	[WL_FSYNC] = op_sync_file,
	[WL_FDATASYNC] = op_sync_file,
	[WL_SYNC_FILE_RANGE] = op_sync_file,
	[WL_FBARRIER] = op_sync_file,
	[WL_FDATABARRIER] = op_sync_file,
	[WL_FIEMAP_SYNC] = op_sync_file,
	[WL_CLOSE] = op_close,
	[WL_SYNC] = op_nothing,
	[WL_SYNCFS] = op_nothing,
	[WL_SLEEP] = op_nothing,
	[WL_MARK] = op_nothing,
};

/* Apply c->op to the model: 0 or the errno the call returns. An op the
 * simulator cannot model sets *unsup. */
static int apply(struct ctx *c, int *unsup)
{
	if (c->op->kind < 0 || c->op->kind >= WL_NKINDS || !apply_op[c->op->kind]) {
		*unsup = 1;
		return EOPNOTSUPP;
	}
	return apply_op[c->op->kind](c, unsup);
}

/* A barrier call the guest's kernel does not have: not a disagreement. */
static int kernel_lacks(const struct wl_op *op, int guest_err)
{
	if ((op->kind == WL_FBARRIER || op->kind == WL_FDATABARRIER) && guest_err == ENOSYS)
		return 1;
	return op->kind == WL_RENAME && op->flags == WL_RENAME_BARRIER && guest_err == EINVAL;
}

static void op_text(const struct wl_op *op, char *buf, size_t n)
{
	wl_format(op, buf, n);
}

static void errname(int e, char *buf, size_t n)
{
	if (!e)
		snprintf(buf, n, "success");
	else
		snprintf(buf, n, "%s", strerror(e));
}

static void remember_objects(struct sim *s, struct sim_op *so)
{
	const struct wl_op *op = so->op;
	so->obj = so->obj2 = so->obj_dir = so->obj2_dir = -1;
	so->obj_name = so->obj2_name = -1;
	if (!op->path || op->kind == WL_CLOSE || op->kind == WL_MARK)
		return;
	int unsup = 0;
	struct where w = resolve(s, op->path);
	if (!w.err) {
		so->obj_dir = w.dir;
		so->obj_name = w.name;
		int nofollow = op->kind == WL_RENAME || op->kind == WL_LINK || op->kind == WL_UNLINK ||
			       op->kind == WL_SYMLINK || op->kind == WL_SETXATTR || op->kind == WL_REMOVEXATTR ||
			       op->kind == WL_RMDIR;
		so->obj = w.ino;
		if (!nofollow) {
			struct where f = follow(s, w, &unsup);
			so->obj = unsup || f.err ? SIM_ABSENT : f.ino;
		}
		if (so->obj == SIM_ABSENT)
			so->obj = -1;
		/* the guest's inode numbers: ino = lstat(path), ino2 = lstat(path2), or stat(path) for symlink */
	}
	if (op->path2 && op->kind != WL_SYMLINK) {
		struct where b = resolve(s, op->path2);
		if (!b.err) {
			so->obj2_dir = b.dir;
			so->obj2_name = b.name;
			so->obj2 = b.ino == SIM_ABSENT ? -1 : b.ino;
		}
	}
}

static void learn_ino(struct sim *s, const struct sim_op *so, const struct op_result *g)
{
	const struct wl_op *op = so->op;
	if (!g || !op->path)
		return;
	struct where w = resolve(s, op->path);
	if (!w.err && w.ino != SIM_ABSENT && g->ino && !s->in[w.ino].ino)
		s->in[w.ino].ino = g->ino;
	if (!g->ino2)
		return;
	if (op->kind == WL_SYMLINK) {
		int unsup = 0;
		struct where f = follow(s, w, &unsup);
		if (!unsup && !f.err && f.ino != SIM_ABSENT && !s->in[f.ino].ino)
			s->in[f.ino].ino = g->ino2;
	} else if (op->path2) {
		struct where b = resolve(s, op->path2);
		if (!b.err && b.ino != SIM_ABSENT && !s->in[b.ino].ino)
			s->in[b.ino].ino = g->ino2;
	}
}

static int sim_exec(struct sim *s, const struct wl_workload *w, const struct op_result *res, int check_only,
		    struct errbuf *eb)
{
	memset(s, 0, sizeof(*s));
	s->w = w;
	new_inode(s, 'd', 0755, 0);
	sim_blk_intern(s, (const unsigned char[TREE_BLOCK]){ 0 });
	s->ops = xcalloc(w->n ? w->n : 1, sizeof(*s->ops));
	for (size_t i = 0; i < w->n; i++) {
		const struct wl_op *op = &w->ops[i];
		struct sim_op *so = &s->ops[i];
		so->op = op;
		so->first = s->nch;
		const struct op_result *g = res ? &res[i] : NULL;
		so->guest_err = g ? (g->err ? g->err : (g->ret < 0 ? EIO : 0)) : -1;
		/* A write that wrote part of its bytes, then failed (ENOSPC), did
		 * write them: it is applied as the guest did it, not as a failure. */
		int short_write = g && g->err && g->ret > 0 && is_write_op(op);
		if (short_write)
			so->guest_err = 0;
		struct ctx c = { s, op, op->section == WL_RUN, 0, g };
		int unsup = 0, e;
		if (g && so->guest_err) {
			/* The guest failed: the simulator applies the same failure
			 * (nothing changes) and only predicts, in a dry pass, what it
			 * would have said. */
			c.dry = 1;
			e = apply(&c, &unsup);
			so->applied = 0;
			so->sim_err = so->guest_err;
			char text[300], a[64], b[64];
			op_text(op, text, sizeof(text));
			errname(so->guest_err, a, sizeof(a));
			errname(e, b, sizeof(b));
			if (!unsup && e != so->guest_err && !kernel_lacks(op, so->guest_err))
				snprintf(so->mismatch, sizeof(so->mismatch),
					 "op %d `%s` failed in the guest (%s) but the simulator expected %s; the guest's "
					 "outcome is used (the op changed nothing)",
					 op->id, text, a, b);
			unsup = 0;
		} else {
			e = apply(&c, &unsup);
			so->applied = e == 0;
			so->sim_err = e;
			if (unsup) {
				char text[300];
				op_text(op, text, sizeof(text));
				errbuf_set(eb, EXIT_DATAERR, "op %d (line %d) `%s`: the simulator cannot model it (%s)", op->id,
					 op->line, text,
					 e == EFBIG ? "file offsets beyond 1 GiB"
						    : "a symlink inside a path, or one pointing outside the file system");
				if (check_only || !g)
					return -1;
			}
			if (short_write) {
				char text[300], a[64];
				op_text(op, text, sizeof(text));
				errname(g->err, a, sizeof(a));
				snprintf(so->mismatch, sizeof(so->mismatch),
					 "op %d `%s` wrote only %" PRId64 " bytes in the guest, then failed (%s); the "
					 "simulator applies what the guest wrote",
					 op->id, text, g->ret, a);
			} else if (g && e) {
				char text[300], a[64];
				op_text(op, text, sizeof(text));
				errname(e, a, sizeof(a));
				snprintf(so->mismatch, sizeof(so->mismatch),
					 "op %d `%s` succeeded in the guest but the simulator expected it to fail (%s); it is "
					 "not applied",
					 op->id, text, a);
			}
		}
		so->n = s->nch - so->first;
		remember_objects(s, so);
		learn_ino(s, so, g);
	}
	return 0;
}

int sim_run(struct sim *s, const struct wl_workload *w, const struct op_result *res, struct errbuf *e)
{
	return sim_exec(s, w, res, 0, e);
}

int sim_check(const struct wl_workload *w, struct errbuf *e)
{
	struct sim s;
	int r = sim_exec(&s, w, NULL, 1, e);
	sim_free(&s);
	return r;
}

void sim_free(struct sim *s)
{
	for (size_t i = 0; i < s->nin; i++) {
		struct sim_inode *in = &s->in[i];
		free(in->blocks);
		free(in->xnames);
		free(in->xvals);
		free(in->enames);
		free(in->echild);
		free(in->allnames);
		free(in->allx);
		free(in->target);
	}
	free(s->in);
	free(s->ops);
	free(s->ch);
	for (size_t i = 0; i < s->strs.n; i++)
		free(s->strs.s[i]);
	free(s->strs.s);
	free(s->strs.len);
	hmap_free(&s->strs.map);
	for (size_t i = 0; i < s->blks.n; i++)
		free(s->blks.b[i]);
	free(s->blks.b);
	hmap_free(&s->blks.map);
	for (size_t i = 0; i < s->nhist; i++)
		free(s->hist[i].idx);
	free(s->hist);
	hmap_free(&s->hist_map);
	for (size_t i = 0; i < s->nopened; i++)
		free(s->opened[i]);
	free(s->opened);
	memset(s, 0, sizeof(*s));
}

/*
 * jlang.c - J-lang import (see jlang.h).
 *
 * Method. The importer keeps a small model of the tree the J-lang ops
 * build: which path names which inode (file, directory or symlink), and
 * which descriptors the section opened, each on the inode it opened. An
 * op CrashMonkey runs on a descriptor becomes an op on the path that
 * names the descriptor's inode now (its own path when it still does, else
 * another name of it), so `rename Afoo Abar` then `fsync Afoo` fsyncs
 * A/bar, as CrashMonkey's fsync of the old descriptor does. [setup] and
 * [run] are methods of their own in CrashMonkey, so a descriptor opened in
 * [setup] is not open in [run]. Every line written is parsed back with the
 * workload parser, so what this file writes is always a valid op.
 */
#include "core/jlang.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/workload.h"

struct jl_name {
	char *name;        /* the define line without its slashes */
	char *path;        /* the path; NULL for "test", the root */
};

struct jl_entry {
	char *path;        /* a path that exists now */
	int ino;
};

struct jl_fd {
	int name;          /* the define entry it was opened by */
	int ino;
};

struct jl {
	const char *file;
	int line;
	struct errbuf *e;
	struct jl_name *names;
	size_t nnames, names_cap;
	struct jl_entry *ent;
	size_t nent, ent_cap;
	char *types;       /* inode types, 'f', 'd', 'l'; [0] unused */
	int ninodes;
	struct jl_fd *fds;
	size_t nfds, fds_cap;
	struct strvec wl_open;   /* paths the .wl side has open */
	struct sbuf sect[2];     /* the [setup] and [run] lines */
	int section;             /* -1 none yet, 0 define, 1 declare, 2 setup, 3 run */
	int nops;
	const char *op;          /* the op of the line being read */
};

static int fail(struct jl *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct jl *j, const char *fmt, ...)
{
	char why[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return errbuf_set(j->e, EXIT_DATAERR, "%s:%d: cannot import '%s': %s", j->file, j->line, j->op, why);
}

/* ---- the tree ---- */

static int ino_at(const struct jl *j, const char *path)
{
	for (size_t i = 0; i < j->nent; i++)
		if (!strcmp(j->ent[i].path, path))
			return j->ent[i].ino;
	return 0;
}

static char type_at(const struct jl *j, const char *path)
{
	int ino = ino_at(j, path);
	return ino ? j->types[ino] : 0;
}

static int new_inode(struct jl *j, char type)
{
	j->types = xrealloc(j->types, (size_t)j->ninodes + 2);
	j->types[++j->ninodes] = type;
	return j->ninodes;
}

static void put(struct jl *j, const char *path, int ino)
{
	for (size_t i = 0; i < j->nent; i++)
		if (!strcmp(j->ent[i].path, path)) {
			j->ent[i].ino = ino;
			return;
		}
	ARRAY_PUSH(j->ent, j->nent, j->ent_cap, ((struct jl_entry){ xstrdup(path), ino }));
}

static void drop(struct jl *j, const char *path)
{
	for (size_t i = 0; i < j->nent; i++)
		if (!strcmp(j->ent[i].path, path)) {
			free(j->ent[i].path);
			j->ent[i] = j->ent[--j->nent];
			return;
		}
}

/* Is path inside dir (dir/...)? */
static int inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

/* The parent folder of path exists (the root always does). */
static int parent_exists(const struct jl *j, const char *path)
{
	const char *s = strrchr(path, '/');
	if (!s)
		return 1;
	char *dir = xstrndup(path, (size_t)(s - path));
	int ok = type_at(j, dir) == 'd';
	free(dir);
	return ok;
}

/* ---- names ---- */

static int name_index(struct jl *j, const char *word, int *out)
{
	for (size_t i = 0; i < j->nnames; i++)
		if (!strcmp(j->names[i].name, word)) {
			*out = (int)i;
			return 0;
		}
	return fail(j, "'%s' is not a path of # define", word);
}

/* The define entry word names (*i), which must not be the root: a
 * workload cannot name it. */
static int name_not_root(struct jl *j, const char *word, int *i)
{
	if (name_index(j, word, i) < 0)
		return -1;
	if (!j->names[*i].path)
		return fail(j, "'%s' is the test file system's root directory, which a crashlab workload cannot name",
			    word);
	return 0;
}

/* The path of a define entry. */
static int path_of(struct jl *j, const char *word, const char **out)
{
	int i = -1;
	if (name_not_root(j, word, &i) < 0)
		return -1;
	*out = j->names[i].path;
	return 0;
}

static struct jl_fd *fd_of(struct jl *j, int name)
{
	for (size_t i = 0; i < j->nfds; i++)
		if (j->fds[i].name == name)
			return &j->fds[i];
	return NULL;
}

/* The path an op on descriptor word acts on: the path of the inode it
 * opened, its own when it still names it, else its first other name. */
static int fd_path(struct jl *j, const char *word, const char **out)
{
	int i = -1;
	if (name_not_root(j, word, &i) < 0)
		return -1;
	struct jl_fd *fd = fd_of(j, i);
	if (!fd)
		return fail(j, "'%s' is not open in this section (no open or opendir of it before)", word);
	if (ino_at(j, j->names[i].path) == fd->ino) {
		*out = j->names[i].path;
		return 0;
	}
	for (size_t k = 0; k < j->nent; k++)
		if (j->ent[k].ino == fd->ino) {
			*out = j->ent[k].path;
			return 0;
		}
	return fail(j, "the file '%s' opened has no name any more (unlinked while open); a crashlab workload names "
		       "files by path", word);
}

/* ---- output ---- */

static void wl_mark_open(struct jl *j, const char *path, int open)
{
	int has = strvec_has(&j->wl_open, path);
	if (open && !has) {
		strvec_push(&j->wl_open, path);
	} else if (!open && has) {
		struct strvec keep = STRVEC_INIT;
		for (size_t i = 0; i < j->wl_open.n; i++)
			if (strcmp(j->wl_open.v[i], path))
				strvec_push(&keep, j->wl_open.v[i]);
		strvec_free(&j->wl_open);
		j->wl_open = keep;
	}
}

/* Write one .wl op line, parsed back first. */
static int emit(struct jl *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int emit(struct jl *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *line = xvasprintf(fmt, ap);
	va_end(ap);
	struct wl_op op;
	struct errbuf pe;
	int run = j->section == 3;
	if (wl_parse_line_at("", 0, line, ++j->nops, run ? WL_RUN : WL_SETUP, &op, &pe) < 0) {
		/* the parser's message after its ":0:COL: " */
		const char *m = pe.msg;
		for (int k = 0; k < 3 && strchr(m, ':'); k++)
			m = strchr(m, ':') + 1;
		while (*m == ' ')
			m++;
		fail(j, "%s (as '%s')", m, line);
		free(line);
		return -1;
	}
	static const enum wl_kind opens[] = { WL_CREAT, WL_WRITE, WL_APPEND, WL_DWRITE, WL_MMAPWRITE,
					      WL_FALLOC, WL_FSYNC, WL_FDATASYNC };
	for (size_t k = 0; k < ARRAY_SIZE(opens); k++)
		if (op.kind == opens[k])
			wl_mark_open(j, op.path, 1);
	if (op.kind == WL_CLOSE)
		wl_mark_open(j, op.path, 0);
	wl_op_free(&op);
	sbuf_addf(&j->sect[run], "%s\n", line);
	free(line);
	return 0;
}

/* ---- words ---- */

static int num(struct jl *j, const char *what, const char *s, long long *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return fail(j, "%s '%s' is not a number", what, s);
	long long v = strtoll(s, &end, 10);
	if (*end || v < 0)
		return fail(j, "%s '%s' is not a number", what, s);
	*out = v;
	return 0;
}

static int mode_word(struct jl *j, const char *s)
{
	if (!*s || strspn(s, "01234567") != strlen(s) || strlen(s) > 5)
		return fail(j, "mode '%s' is not an octal mode", s);
	return 0;
}

static int nargs(struct jl *j, size_t n, size_t lo, size_t hi, const char *syntax)
{
	if (n < lo || n > hi)
		return fail(j, "wants '%s'", syntax);
	return 0;
}

/* ---- the ops ---- */

static int op_open(struct jl *j, char **w, size_t n, int dir)
{
	const char *path;
	int i = -1;
	if (dir ? nargs(j, n, 2, 3, "opendir NAME [MODE]") < 0 : nargs(j, n, 3, 4, "open NAME FLAGS [MODE]") < 0)
		return -1;
	if (name_index(j, w[1], &i) < 0 || path_of(j, w[1], &path) < 0)
		return -1;
	int creat = 0, trunc = 0, excl = 0, isdir = dir;
	if (!dir) {
		char *flags = xstrdup(w[2]);
		for (char *f = strtok(flags, "|"); f; f = strtok(NULL, "|")) {
			if (!strcmp(f, "O_RDWR") || !strcmp(f, "O_WRONLY") || !strcmp(f, "O_RDONLY") ||
			    !strcmp(f, "O_CLOEXEC") || !strcmp(f, "O_NOFOLLOW") || !strcmp(f, "0"))
				continue;
			if (!strcmp(f, "O_CREAT")) creat = 1;
			else if (!strcmp(f, "O_TRUNC")) trunc = 1;
			else if (!strcmp(f, "O_EXCL")) excl = 1;
			else if (!strcmp(f, "O_DIRECTORY")) isdir = 1;
			else if (!strcmp(f, "O_APPEND") || !strcmp(f, "O_SYNC") || !strcmp(f, "O_DSYNC") ||
				 !strcmp(f, "O_DIRECT")) {
				fail(j, "%s changes what later ops on the descriptor do; a crashlab workload opens files "
					"without it", f);
				free(flags);
				return -1;
			} else {
				fail(j, "unknown open flag '%s'", f);
				free(flags);
				return -1;
			}
		}
		free(flags);
	}
	const char *mode = n > (size_t)(dir ? 2 : 3) ? w[dir ? 2 : 3] : "0644";
	if (mode_word(j, mode) < 0)
		return -1;
	char t = type_at(j, path);
	if (isdir) {
		if (t != 'd')
			return fail(j, "'%s' is not a directory here (the open would fail)", path);
	} else if (!t) {
		if (!creat)
			return fail(j, "'%s' does not exist and O_CREAT is not given (the open would fail)", path);
		if (!parent_exists(j, path))
			return fail(j, "the folder of '%s' does not exist (the open would fail)", path);
		if (emit(j, "creat %s %s", path, mode) < 0)
			return -1;
		put(j, path, new_inode(j, 'f'));
	} else if (creat && excl) {
		return fail(j, "'%s' exists and O_EXCL is given (the open would fail)", path);
	} else if (t == 'd') {
		/* a directory opened without O_DIRECTORY: read-only, as opendir */
	} else if (trunc && emit(j, "truncate %s 0", path) < 0) {
		return -1;
	}
	struct jl_fd *fd = fd_of(j, i);
	if (fd)
		fd->ino = ino_at(j, path);
	else
		ARRAY_PUSH(j->fds, j->nfds, j->fds_cap, ((struct jl_fd){ i, ino_at(j, path) }));
	return 0;
}

static int op_close(struct jl *j, char **w, size_t n)
{
	int i = -1;
	if (nargs(j, n, 2, 2, "close NAME") < 0 || name_index(j, w[1], &i) < 0)
		return -1;
	struct jl_fd *fd = fd_of(j, i);
	if (!fd)
		return fail(j, "'%s' is not open in this section", w[1]);
	const char *path = j->names[i].path;
	/* the language's descriptor of the path, when it has one on this file */
	if (path && ino_at(j, path) == fd->ino && strvec_has(&j->wl_open, path) && emit(j, "close %s", path) < 0)
		return -1;
	*fd = j->fds[--j->nfds];
	return 0;
}

static int data_op(struct jl *j, char **w, size_t n, const char *kind)
{
	const char *path;
	long long off, len;
	char syntax[64];
	snprintf(syntax, sizeof(syntax), "%s NAME OFFSET LENGTH", kind);
	if (nargs(j, n, 4, 4, syntax) < 0 || num(j, "offset", w[2], &off) < 0 || num(j, "length", w[3], &len) < 0)
		return -1;
	/* dwrite opens the path again (O_DIRECT|O_SYNC); write and mmapwrite use the descriptor */
	if (!strcmp(kind, "dwrite") ? path_of(j, w[1], &path) < 0 : fd_path(j, w[1], &path) < 0)
		return -1;
	if (type_at(j, path) != 'f')
		return fail(j, "'%s' is not a file here (the op would fail)", path);
	if (!strcmp(kind, "write"))
		return emit(j, "write %s %lld %lld", path, off, len);
	if (!strcmp(kind, "dwrite"))
		return emit(j, "dwrite %s %lld %lld", path, off, len) < 0 || emit(j, "fsync %s", path) < 0 ? -1 : 0;
	return emit(j, "falloc %s 0 %lld %lld", path, off, len) < 0 || emit(j, "mmapwrite %s %lld %lld", path, off, len) < 0 ||
			       emit(j, "fdatasync %s", path) < 0
		       ? -1
		       : 0;
}

static int op_falloc(struct jl *j, char **w, size_t n)
{
	const char *path;
	long long off, len;
	if (nargs(j, n, 5, 5, "falloc NAME MODE OFFSET LENGTH") < 0 || fd_path(j, w[1], &path) < 0 ||
	    num(j, "offset", w[3], &off) < 0 || num(j, "length", w[4], &len) < 0)
		return -1;
	int keep = 0, punch = 0, zero = 0;
	char *flags = xstrdup(w[2]);
	for (char *f = strtok(flags, "|"); f; f = strtok(NULL, "|")) {
		if (!strcmp(f, "0"))
			continue;
		if (!strcmp(f, "FALLOC_FL_KEEP_SIZE")) keep = 1;
		else if (!strcmp(f, "FALLOC_FL_PUNCH_HOLE")) punch = 1;
		else if (!strcmp(f, "FALLOC_FL_ZERO_RANGE")) zero = 1;
		else {
			fail(j, "mode '%s': the language's falloc has 0, keep_size, punch_hole, zero_range and "
				"zero_range_keep_size", f);
			free(flags);
			return -1;
		}
	}
	free(flags);
	if (punch && zero)
		return fail(j, "FALLOC_FL_PUNCH_HOLE and FALLOC_FL_ZERO_RANGE together (the call would fail)");
	if (punch && !keep)
		return fail(j, "FALLOC_FL_PUNCH_HOLE without FALLOC_FL_KEEP_SIZE (the call would fail)");
	const char *mode = punch ? "punch_hole" : zero ? (keep ? "zero_range_keep_size" : "zero_range")
					    : keep ? "keep_size" : "0";
	if (type_at(j, path) != 'f')
		return fail(j, "'%s' is not a file here (the op would fail)", path);
	return emit(j, "falloc %s %s %lld %lld", path, mode, off, len);
}

/* symlink's target: the path of to, relative to the folder of link */
static char *relative(const char *to, const char *link)
{
	struct sbuf sb = SBUF_INIT;
	const char *a = to, *b = link;
	/* drop the folders both share */
	for (;;) {
		const char *sa = strchr(a, '/'), *sb2 = strchr(b, '/');
		if (!sa || !sb2 || sa - a != sb2 - b || strncmp(a, b, (size_t)(sa - a)))
			break;
		a = sa + 1;
		b = sb2 + 1;
	}
	for (const char *p = b; (p = strchr(p, '/')); p++)
		sbuf_adds(&sb, "../");
	sbuf_adds(&sb, a);
	return sbuf_detach(&sb);
}

static int name_op(struct jl *j, char **w, size_t n)
{
	const char *kind = w[0], *from, *to;
	char syntax[64];
	snprintf(syntax, sizeof(syntax), "%s NAME NAME", kind);
	if (nargs(j, n, 3, 3, syntax) < 0 || path_of(j, w[1], &from) < 0 || path_of(j, w[2], &to) < 0)
		return -1;
	char tf = type_at(j, from), tt = type_at(j, to);
	if (!parent_exists(j, to))
		return fail(j, "the folder of '%s' does not exist (the op would fail)", to);
	if (!strcmp(kind, "symlink")) {
		if (tt)
			return fail(j, "'%s' exists (the symlink would fail)", to);
		char *target = relative(from, to);
		int r = emit(j, "symlink %s %s", target, to);
		free(target);
		if (r < 0)
			return -1;
		put(j, to, new_inode(j, 'l'));
		return 0;
	}
	if (!tf)
		return fail(j, "'%s' does not exist (the op would fail)", from);
	if (!strcmp(kind, "link")) {
		if (tf == 'd')
			return fail(j, "'%s' is a directory (the link would fail)", from);
		if (tt)
			return fail(j, "'%s' exists (the link would fail)", to);
		if (emit(j, "link %s %s", from, to) < 0)
			return -1;
		put(j, to, ino_at(j, from));
		return 0;
	}
	/* rename */
	if (!strcmp(from, to) || inside(to, from))
		return fail(j, "'%s' onto '%s' (the rename would fail or do nothing)", from, to);
	if (tt && (tf == 'd') != (tt == 'd'))
		return fail(j, "'%s' and '%s' are not both directories or both not (the rename would fail)", from, to);
	if (tt == 'd')
		for (size_t i = 0; i < j->nent; i++)
			if (inside(j->ent[i].path, to))
				return fail(j, "the directory '%s' is not empty (the rename would fail)", to);
	if (emit(j, "rename %s %s", from, to) < 0)
		return -1;
	if (tt && ino_at(j, from) == ino_at(j, to))
		return 0; /* two names of one file: nothing happens */
	int ino = ino_at(j, from);
	drop(j, from);
	put(j, to, ino);
	if (tf == 'd') {
		size_t fl = strlen(from);
		for (size_t i = 0; i < j->nent; i++)
			if (inside(j->ent[i].path, from)) {
				char *np = xasprintf("%s%s", to, j->ent[i].path + fl);
				free(j->ent[i].path);
				j->ent[i].path = np;
			}
	}
	return 0;
}

static int op_remove(struct jl *j, char **w, size_t n)
{
	const char *path;
	char syntax[32];
	snprintf(syntax, sizeof(syntax), "%s NAME", w[0]);
	if (nargs(j, n, 2, 2, syntax) < 0 || path_of(j, w[1], &path) < 0)
		return -1;
	char t = type_at(j, path);
	if (!t)
		return fail(j, "'%s' does not exist (the op would fail)", path);
	int rmdir = t == 'd';
	if (rmdir && !strcmp(w[0], "unlink"))
		return fail(j, "'%s' is a directory (unlink would fail; remove or rmdir removes it)", path);
	if (!rmdir && !strcmp(w[0], "rmdir"))
		return fail(j, "'%s' is not a directory (rmdir would fail)", path);
	if (rmdir)
		for (size_t i = 0; i < j->nent; i++)
			if (inside(j->ent[i].path, path))
				return fail(j, "the directory '%s' is not empty (the op would fail)", path);
	if (emit(j, "%s %s", rmdir ? "rmdir" : "unlink", path) < 0)
		return -1;
	drop(j, path);
	return 0;
}

static int one_op(struct jl *j, char **w, size_t n)
{
	const char *op = w[0], *path;
	long long v;
	if (!strcmp(op, "mkdir")) {
		if (nargs(j, n, 2, 3, "mkdir NAME [MODE]") < 0 || path_of(j, w[1], &path) < 0 ||
		    (n == 3 && mode_word(j, w[2]) < 0))
			return -1;
		if (type_at(j, path))
			return fail(j, "'%s' exists (mkdir would fail)", path);
		if (!parent_exists(j, path))
			return fail(j, "the folder of '%s' does not exist (mkdir would fail)", path);
		if (emit(j, "mkdir %s %s", path, n == 3 ? w[2] : "0755") < 0)
			return -1;
		put(j, path, new_inode(j, 'd'));
		return 0;
	}
	if (!strcmp(op, "open"))
		return op_open(j, w, n, 0);
	if (!strcmp(op, "opendir"))
		return op_open(j, w, n, 1);
	if (!strcmp(op, "creat")) {
		int i = -1;
		if (nargs(j, n, 2, 3, "creat NAME [MODE]") < 0 || name_index(j, w[1], &i) < 0 ||
		    path_of(j, w[1], &path) < 0 || (n == 3 && mode_word(j, w[2]) < 0))
			return -1;
		char t = type_at(j, path);
		if (t && t != 'f')
			return fail(j, "'%s' is not a file (creat would fail)", path);
		if (!t && !parent_exists(j, path))
			return fail(j, "the folder of '%s' does not exist (creat would fail)", path);
		if (emit(j, "creat %s %s", path, n == 3 ? w[2] : "0644") < 0)
			return -1;
		if (!t)
			put(j, path, new_inode(j, 'f'));
		struct jl_fd *fd = fd_of(j, i);
		if (fd)
			fd->ino = ino_at(j, path);
		else
			ARRAY_PUSH(j->fds, j->nfds, j->fds_cap, ((struct jl_fd){ i, ino_at(j, path) }));
		return 0;
	}
	if (!strcmp(op, "close"))
		return op_close(j, w, n);
	if (!strcmp(op, "write") || !strcmp(op, "dwrite") || !strcmp(op, "mmapwrite"))
		return data_op(j, w, n, op);
	if (!strcmp(op, "falloc"))
		return op_falloc(j, w, n);
	if (!strcmp(op, "truncate")) {
		if (nargs(j, n, 3, 3, "truncate NAME LENGTH") < 0 || path_of(j, w[1], &path) < 0 ||
		    num(j, "length", w[2], &v) < 0)
			return -1;
		if (type_at(j, path) != 'f')
			return fail(j, "'%s' is not a file here (truncate would fail)", path);
		return emit(j, "truncate %s %lld", path, v);
	}
	if (!strcmp(op, "link") || !strcmp(op, "symlink") || !strcmp(op, "rename"))
		return name_op(j, w, n);
	if (!strcmp(op, "unlink") || !strcmp(op, "remove") || !strcmp(op, "rmdir"))
		return op_remove(j, w, n);
	if (!strcmp(op, "fsync") || !strcmp(op, "fdatasync")) {
		char syntax[32];
		snprintf(syntax, sizeof(syntax), "%s NAME", op);
		if (nargs(j, n, 2, 2, syntax) < 0 || fd_path(j, w[1], &path) < 0)
			return -1;
		char t = type_at(j, path);
		if (t == 'l')
			return fail(j, "'%s' is a symlink (the language opens what it points to)", path);
		return emit(j, "%s %s", op, path);
	}
	if (!strcmp(op, "sync")) {
		if (nargs(j, n, 1, 1, "sync") < 0)
			return -1;
		return emit(j, "sync");
	}
	if (!strcmp(op, "fsetxattr")) {
		if (nargs(j, n, 2, 2, "fsetxattr NAME") < 0 || fd_path(j, w[1], &path) < 0)
			return -1;
		return emit(j, "setxattr %s user.xattr1 \"val1\"", path);
	}
	if (!strcmp(op, "removexattr")) {
		if (nargs(j, n, 2, 2, "removexattr NAME") < 0 || path_of(j, w[1], &path) < 0)
			return -1;
		if (!type_at(j, path))
			return fail(j, "'%s' does not exist (removexattr would fail)", path);
		return emit(j, "removexattr %s user.xattr1", path);
	}
	if (!strcmp(op, "checkpoint")) {
		if (nargs(j, n, 2, 2, "checkpoint N") < 0 || num(j, "checkpoint", w[1], &v) < 0)
			return -1;
		return emit(j, "mark checkpoint-%lld", v);
	}
	if (!strcmp(op, "none"))
		return nargs(j, n, 1, 1, "none");
	if (!strcmp(op, "mknod"))
		return fail(j, "a crashlab workload has no mknod: it makes files, directories and symlinks only");
	return fail(j, "not a J-lang op (known: mkdir, open, opendir, creat, close, write, dwrite, mmapwrite, "
		       "falloc, truncate, link, symlink, rename, unlink, remove, rmdir, fsync, fdatasync, sync, "
		       "fsetxattr, removexattr, checkpoint, none)");
}

static int define_line(struct jl *j, char **w, size_t n)
{
	if (n != 1)
		return errbuf_set(j->e, EXIT_DATAERR, "%s:%d: a # define line is one path, not %zu words", j->file,
				  j->line, n);
	const char *p = w[0];
	if (p[0] == '/' || strstr(p, "//") || p[strlen(p) - 1] == '/' || !strcmp(p, ".") || strstr(p, ".."))
		return errbuf_set(j->e, EXIT_DATAERR, "%s:%d: '%s' is not a path below the test file system",
				  j->file, j->line, p);
	struct sbuf name = SBUF_INIT;
	for (const char *s = p; *s; s++)
		if (*s != '/')
			sbuf_add(&name, s, 1);
	for (size_t i = 0; i < j->nnames; i++)
		if (!strcmp(j->names[i].name, name.buf)) {
			int r = errbuf_set(j->e, EXIT_DATAERR, "%s:%d: '%s' is defined twice (as '%s' and '%s')",
					   j->file, j->line, name.buf, j->names[i].path ? j->names[i].path : "test", p);
			sbuf_free(&name);
			return r;
		}
	ARRAY_PUSH(j->names, j->nnames, j->names_cap,
		   ((struct jl_name){ sbuf_detach(&name), strcmp(p, "test") ? xstrdup(p) : NULL }));
	return 0;
}

static const char *basename_of(const char *file)
{
	const char *s = strrchr(file, '/');
	return s ? s + 1 : file;
}

int jlang_import(const char *file, const char *text, struct sbuf *out, struct errbuf *e)
{
	struct jl j = { .file = file, .e = e, .section = -1, .wl_open = STRVEC_INIT };
	j.sect[0] = (struct sbuf)SBUF_INIT;
	j.sect[1] = (struct sbuf)SBUF_INIT;
	j.types = xmalloc(1);
	int rc = 0, seen_run = 0;
	const char *p = text;
	while (*p && !rc) {
		size_t len = strcspn(p, "\n");
		char *line = xstrndup(p, len);
		p += len + (p[len] == '\n');
		j.line++;
		if (strlen(line) != len) {
			rc = errbuf_set(e, EXIT_DATAERR, "%s:%d: a NUL byte in the line", file, j.line);
			free(line);
			break;
		}
		struct strvec w = STRVEC_INIT;
		for (char *t = strtok(line, " \t\r"); t; t = strtok(NULL, " \t\r"))
			strvec_push(&w, t);
		free(line);
		if (!w.n) {
			strvec_free(&w);
			continue;
		}
		if (w.v[0][0] == '#') {
			const char *s = w.n == 1 ? w.v[0] + 1 : w.v[w.n - 1];
			static const char *const sections[] = { "define", "declare", "setup", "run" };
			int found = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(s, sections[i]))
					found = i;
			if (found < 0 || (w.n > 2) || (w.n == 2 && strcmp(w.v[0], "#")))
				rc = errbuf_set(e, EXIT_DATAERR,
						"%s:%d: '%s' is not a section (J-lang has # define, # declare, # setup "
						"and # run)",
						file, j.line, w.n == 2 ? w.v[1] : w.v[0]);
			else if (found <= j.section)
				rc = errbuf_set(e, EXIT_DATAERR, "%s:%d: the # %s section comes again or out of order",
						file, j.line, sections[found]);
			else
				j.section = found;
			if (found == 3) {
				seen_run = 1;
				j.nfds = 0; /* run() opens its own descriptors */
			}
		} else if (j.section < 0) {
			rc = errbuf_set(e, EXIT_DATAERR, "%s:%d: '%s' before any section (# define, # setup, # run)",
					file, j.line, w.v[0]);
		} else if (j.section == 0) {
			rc = define_line(&j, w.v, w.n);
		} else if (j.section == 1) {
			/* local variables of the generated code: nothing to import */
		} else {
			j.op = w.v[0];
			rc = one_op(&j, w.v, w.n);
		}
		strvec_free(&w);
	}
	if (!rc && !seen_run)
		rc = errbuf_set(e, EXIT_DATAERR, "%s:%d: no # run section by the end of the file", file, j.line);
	else if (!rc && !j.sect[1].len)
		rc = errbuf_set(e, EXIT_DATAERR,
				"%s:%d: the # run section has no op a crashlab workload runs (none, opendir and "
				"declarations are not ops)",
				file, j.line);
	if (!rc) {
		sbuf_addf(out, "# imported from CrashMonkey J-lang %s by crashlab import jlang\n", basename_of(file));
		sbuf_addf(out, "[setup]\n%s[run]\n%s", j.sect[0].buf ? j.sect[0].buf : "",
			  j.sect[1].buf ? j.sect[1].buf : "");
	}
	for (size_t i = 0; i < j.nnames; i++) {
		free(j.names[i].name);
		free(j.names[i].path);
	}
	free(j.names);
	for (size_t i = 0; i < j.nent; i++)
		free(j.ent[i].path);
	free(j.ent);
	free(j.types);
	free(j.fds);
	strvec_free(&j.wl_open);
	sbuf_free(&j.sect[0]);
	sbuf_free(&j.sect[1]);
	return rc ? -1 : 0;
}

/*
 * capture.c - walk a mounted tree into observed-tree lines (core/tree.h).
 *
 * Method. First collect every relative path under the directory, never
 * following a symlink (fstatat with AT_SYMLINK_NOFOLLOW, directories
 * opened with O_NOFOLLOW), leaving out the root itself and a top-level
 * lost+found; then sort the paths bytewise, so the order is the same on
 * every file system whatever its readdir order, and describe each path
 * once (a damaged directory can list a name twice):
 * lstat fields, extended attributes (llistxattr, names sorted, values by
 * lgetxattr), the symlink target, and for a regular file its data read
 * block by block into the block tokens, plus the bytes themselves when
 * the file is small. A crash state may have damage we must report rather
 * than stop at: a block that cannot be read becomes the token "e", a
 * directory that cannot be listed still appears itself, and the walk goes
 * on; the function then returns -1 with the first errno after printing
 * everything it could.
 */
#include "images/agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/tree.h"

struct paths {
	char **v;
	size_t n, cap;
	int err;        /* first errno met, 0 if none */
};

static void note_err(struct paths *p, int e)
{
	if (!p->err)
		p->err = e ? e : EIO;
}

static int push(struct paths *p, char *s)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		char **v = realloc(p->v, cap * sizeof(*v));
		if (!v)
			return -1;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = s;
	return 0;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 2);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

/* Add every path under rel ("" for the root) to p. -1 only when out of memory. */
static int collect(int root, const char *rel, struct paths *p)
{
	int fd = openat(root, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		note_err(p, errno);
		return 0;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		note_err(p, errno);
		close(fd);
		return 0;
	}
	size_t first = p->n;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d))) {
		const char *nm = de->d_name;
		if (!strcmp(nm, ".") || !strcmp(nm, "..") || (!*rel && !strcmp(nm, "lost+found")))
			continue;
		char *s = *rel ? join(rel, nm) : strdup(nm);
		if (!s || push(p, s) < 0) {
			free(s);
			closedir(d);
			return -1;
		}
		errno = 0;
	}
	if (errno)
		note_err(p, errno);
	closedir(d);
	size_t last = p->n;
	for (size_t i = first; i < last; i++) {
		struct stat st;
		if (fstatat(root, p->v[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			note_err(p, errno);
			continue;
		}
		if (S_ISDIR(st.st_mode) && collect(root, p->v[i], p) < 0)
			return -1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The xattrs field of the node at full path fp, or NULL when it has none. */
static char *read_xattrs(const char *fp, struct paths *p)
{
	ssize_t n = llistxattr(fp, NULL, 0);
	if (n < 0) {
		if (errno != ENOTSUP && errno != ENODATA)
			note_err(p, errno);
		return NULL;
	}
	if (n == 0)
		return NULL;
	char *list = malloc((size_t)n + 1);
	if (!list)
		return NULL;
	n = llistxattr(fp, list, (size_t)n);
	if (n <= 0) {
		if (n < 0)
			note_err(p, errno);
		free(list);
		return NULL;
	}
	list[n] = '\0';
	size_t cnt = 0;
	char *names[4096];
	for (char *s = list; s < list + n && cnt < 4096; s += strlen(s) + 1)
		if (*s)
			names[cnt++] = s;
	qsort(names, cnt, sizeof(names[0]), cmp_str);
	char *out = NULL;
	for (size_t i = 0; i < cnt; i++) {
		ssize_t vl = lgetxattr(fp, names[i], NULL, 0);
		if (vl < 0) {
			note_err(p, errno);
			continue;
		}
		char *v = malloc((size_t)vl + 1);
		if (!v)
			break;
		vl = lgetxattr(fp, names[i], v, (size_t)vl);
		if (vl < 0) {
			note_err(p, errno);
			free(v);
			continue;
		}
		char *nx = tree_xattrs_append(out, names[i], v, (size_t)vl);
		free(v);
		if (!nx)
			break;
		out = nx;
	}
	free(list);
	return out;
}

static char *read_target(int root, const char *rel, struct paths *p)
{
	size_t size = 256;
	for (;;) {
		char *b = malloc(size);
		if (!b)
			return NULL;
		ssize_t n = readlinkat(root, rel, b, size);
		if (n < 0) {
			note_err(p, errno);
			free(b);
			return NULL;
		}
		if ((size_t)n < size) {
			b[n] = '\0';
			return b;
		}
		free(b);
		size *= 2;
	}
}

/* Fill in the blocks and content of regular file rel of size st_size. */
static void read_data(int root, const char *rel, struct tree_node *nd, struct paths *p)
{
	uint64_t size = nd->size, nblk = (size + TREE_BLOCK - 1) / TREE_BLOCK;
	size_t cap = (size_t)nblk * 19 + 1, len = 0;
	nd->blocks = malloc(cap);
	if (!nd->blocks)
		return;
	nd->blocks[0] = '\0';
	int fd = openat(root, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		note_err(p, errno);
	unsigned char blk[TREE_BLOCK];
	for (uint64_t b = 0; b < nblk; b++) {
		uint64_t off = b * TREE_BLOCK;
		size_t want = size - off < TREE_BLOCK ? (size_t)(size - off) : TREE_BLOCK, got = 0;
		char tok[24] = "e";
		while (fd >= 0 && got < want) {
			ssize_t r = pread(fd, blk + got, want - got, (off_t)(off + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				note_err(p, r < 0 ? errno : EIO);
				break;
			}
			got += (size_t)r;
		}
		if (fd >= 0 && got == want) {
			tree_block_token(blk, want, off, tok);
			if (b == 0 && size <= TREE_INLINE_MAX) {
				nd->content = malloc(want + 1);
				if (nd->content) {
					memcpy(nd->content, blk, want);
					nd->content_len = want;
				}
			}
		}
		size_t tl = strlen(tok);
		if (len + tl + 2 > cap)
			break;
		if (b)
			nd->blocks[len++] = ',';
		memcpy(nd->blocks + len, tok, tl + 1);
		len += tl;
	}
	if (size == 0) {
		nd->content = malloc(1);
		nd->content_len = 0;
	}
	if (fd >= 0)
		close(fd);
}

static int emit(int root, const char *dir, const char *rel, FILE *out, struct paths *p)
{
	struct stat st;
	if (fstatat(root, rel, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		note_err(p, errno);
		return 0;
	}
	struct tree_node nd;
	memset(&nd, 0, sizeof(nd));
	nd.path = (char *)rel;
	nd.type = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : 'o';
	nd.mode = (uint32_t)(st.st_mode & 07777);
	nd.uid = (uint32_t)st.st_uid;
	nd.gid = (uint32_t)st.st_gid;
	nd.size = (uint64_t)st.st_size;
	nd.nlink = (uint32_t)st.st_nlink;
	nd.ino = (uint64_t)st.st_ino;
	char *fp = join(dir, rel);
	if (!fp)
		return -1;
	nd.xattrs = read_xattrs(fp, p);
	free(fp);
	if (nd.type == 'l')
		nd.target = read_target(root, rel, p);
	else if (nd.type == 'f')
		read_data(root, rel, &nd, p);
	char *line = tree_node_format(&nd);
	nd.path = NULL;
	tree_node_free(&nd);
	if (!line)
		return -1;
	fputs(line, out);
	free(line);
	return 0;
}

int agent_capture_tree(const char *dir, FILE *out)
{
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	struct paths p = { 0 };
	int rc = collect(root, "", &p);
	if (rc == 0) {
		qsort(p.v, p.n, sizeof(p.v[0]), cmp_str);
		/* A damaged directory may list a name twice; a path is one node
		 * (the host refuses a tree with a path twice). */
		for (size_t i = 0; i < p.n && rc == 0; i++)
			if (i == 0 || strcmp(p.v[i - 1], p.v[i]))
				rc = emit(root, dir, p.v[i], out, &p);
	}
	for (size_t i = 0; i < p.n; i++)
		free(p.v[i]);
	free(p.v);
	close(root);
	if (fflush(out) != 0 || ferror(out))
		note_err(&p, errno);
	if (rc < 0) {
		errno = ENOMEM;
		return -1;
	}
	if (p.err) {
		errno = p.err;
		return -1;
	}
	return 0;
}

/*
 * tree.h - an observed file tree: what the checker guest saw in one mounted
 * crash state. libc only: the agent produces it, the host parses and stores
 * it, and the same line format crosses the guest channel.
 *
 * Line format, one node per line, tab-separated, each field percent-encoded
 * (%, tab, newline, backslash and bytes outside 0x21..0x7e become %XX):
 *   path type mode uid gid size nlink ino xattrs target blocks content
 * type is f (regular), d (directory), l (symlink), o (other); mode is octal
 * permission bits; xattrs is "name=value" pairs joined by ';' (values
 * percent-encoded within the field, so ';' and '=' are %3B / %3D); blocks is
 * one token per 4 KiB block of a regular file joined by ',':
 *   z        the block reads as zeros (or is a hole)
 *   p<op>    the block is entirely the write pattern of op <op> for this block
 *   h<hex>   anything else: 16 hex digits of a 64-bit FNV-1a hash
 *   e        the block could not be read (e.g. EIO in a crash state)
 * content is the file's bytes when size <= TREE_INLINE_MAX, else empty; a
 * field that does not apply is "-".
 */
#ifndef CRASHLAB_CORE_TREE_H
#define CRASHLAB_CORE_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

#define TREE_INLINE_MAX 256
#define TREE_BLOCK 4096

struct tree_node {
	char *path;         /* relative to the mount point, e.g. "A/foo": never empty, no NUL,
			     * no empty, "." or ".." component (any other byte may be in a name) */
	char type;          /* 'f', 'd', 'l', 'o' */
	uint32_t mode;      /* st_mode & 07777 */
	uint32_t uid, gid;
	uint64_t size;
	uint32_t nlink;
	uint64_t ino;
	char *xattrs;       /* "user.a=v1;user.b=v2" sorted by name, or NULL */
	char *target;       /* symlink target, or NULL */
	char *blocks;       /* "p3,p3,z,h0123..." for regular files, or NULL */
	unsigned char *content; /* inline content (size <= TREE_INLINE_MAX), or NULL */
	size_t content_len;
};

/* Format one node as a line (with trailing newline) into a malloc'd string. */
char *tree_node_format(const struct tree_node *n);
/* Parse one line (without or with the newline). 0, or -1 on a malformed line. */
int tree_node_parse(const char *line, struct tree_node *n);
void tree_node_free(struct tree_node *n);
/* A deep copy of src into dst (free with tree_node_free). */
void tree_node_copy(struct tree_node *dst, const struct tree_node *src);

/* Append name=value to an encoded xattrs field (malloc'd result; xattrs may
 * be NULL and is freed). */
char *tree_xattrs_append(char *xattrs, const char *name, const void *value, size_t len);
/* Look name up in an encoded xattrs field: 1 found (*value malloc'd),
 * 0 absent, -1 malformed. */
int tree_xattr_get(const char *xattrs, const char *name, unsigned char **value, size_t *len);

/* Call fn(ctx, name, value) for each pair of an encoded xattrs field, decoded
 * (a malformed pair is passed as it is). */
void tree_xattrs_each(const char *xattrs, void (*fn)(void *ctx, const struct sbuf *name, const struct sbuf *value),
		      void *ctx);

/* The block token (the "h" hash is 64-bit FNV-1a, fnv1a64) for one 4 KiB block at file offset off (len <= 4096; a
 * short last block is compared as is). Writes at most 24 bytes into out. */
void tree_block_token(const unsigned char *blk, size_t len, uint64_t off, char out[24]);

#endif

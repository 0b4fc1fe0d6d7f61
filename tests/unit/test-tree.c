/* test-tree.c - observed-tree lines: round trip with nasty bytes, block
 * tokens, FNV-1a, malformed lines. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/tree.h"
#include "core/workload.h"
#include "tests/unit/check.h"

static int opt_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int same(const struct tree_node *a, const struct tree_node *b)
{
	return opt_eq(a->path, b->path) && a->type == b->type && a->mode == b->mode && a->uid == b->uid &&
	       a->gid == b->gid && a->size == b->size && a->nlink == b->nlink && a->ino == b->ino &&
	       opt_eq(a->xattrs, b->xattrs) && opt_eq(a->target, b->target) && opt_eq(a->blocks, b->blocks) &&
	       (!a->content) == (!b->content) && a->content_len == b->content_len &&
	       (!a->content || !memcmp(a->content, b->content, a->content_len));
}

static int round_trip(const struct tree_node *n, const char *what)
{
	char *line = tree_node_format(n);
	struct tree_node back;
	int ok = line && strchr(line, '\n') == line + strlen(line) - 1;
	int tabs = 0;
	for (const char *p = line; ok && *p; p++) {
		tabs += *p == '\t';
		ok &= (*p >= 0x21 && *p <= 0x7e) || *p == '\t' || (*p == '\n' && !p[1]);
	}
	ok = ok && tabs == 11 && tree_node_parse(line, &back) == 0;
	if (ok) {
		ok = same(n, &back);
		tree_node_free(&back);
	}
	CHECK(ok, "round trip: %s", what);
	if (!ok && line)
		printf("#   line: %s", line);
	free(line);
	return ok;
}

TEST(format)
{
	struct tree_node n = { 0 };
	n.path = "A/foo";
	n.type = 'f';
	n.mode = 0644;
	n.size = 5;
	n.nlink = 1;
	n.ino = 12;
	n.blocks = "h0123456789abcdef";
	n.content = (unsigned char *)"world";
	n.content_len = 5;
	char *line = tree_node_format(&n);
	CHECK(line && !strcmp(line, "A/foo\tf\t0644\t0\t0\t5\t1\t12\t-\t-\th0123456789abcdef\tworld\n"),
	      "the documented line: '%.*s'", line ? (int)strlen(line) - 1 : 0, line ? line : "");
	free(line);
	round_trip(&n, "a plain file");

	/* Every byte value in the path, target and content. */
	char path[300], target[300];
	unsigned char content[256];
	size_t k = 0;
	for (int c = 1; c < 256; c++)
		if (c != '/')
			path[k++] = (char)c;
	path[k] = '\0';
	for (int c = 1; c < 256; c++)
		target[c - 1] = (char)c;
	target[255] = '\0';
	for (int c = 0; c < 256; c++)
		content[c] = (unsigned char)c;
	struct tree_node m = { 0 };
	m.path = path;
	m.type = 'l';
	m.mode = 07777;
	m.uid = UINT32_MAX;
	m.gid = 1234;
	m.size = UINT64_MAX;
	m.nlink = UINT32_MAX;
	m.ino = UINT64_MAX - 1;
	m.target = target;
	round_trip(&m, "a symlink with every byte in its name and target, extreme numbers");
	m.type = 'f';
	m.target = NULL;
	m.size = 256;
	m.content = content;
	m.content_len = 256;
	m.blocks = "h0000000000000000";
	round_trip(&m, "256 bytes of content, every value, NUL included");

	struct tree_node d = { 0 };
	d.path = "-";
	d.type = 'd';
	d.mode = 0755;
	d.nlink = 2;
	d.target = "-";
	round_trip(&d, "a path and a target that are exactly \"-\"");
	char *dl = tree_node_format(&d);
	CHECK(dl && strstr(dl, "\t%2D\t-\t-\n"), "\"-\" as a value is %%2D, a missing field is -: '%.*s'", dl ? (int)strlen(dl) - 1 : 0, dl ? dl : "");
	free(dl);

	struct tree_node e = { 0 };
	e.path = "empty";
	e.type = 'f';
	e.mode = 0600;
	e.nlink = 1;
	e.blocks = "";
	e.content = (unsigned char *)"";
	e.content_len = 0;
	round_trip(&e, "an empty file: no blocks, empty content");
	e.content = NULL;
	e.size = 300;
	e.blocks = "p3";
	char *el = tree_node_format(&e);
	CHECK(el && el[strlen(el) - 2] == '\t', "a large file has an empty content field");
	free(el);
	round_trip(&e, "a large file: empty content field back to NULL");
	e.size = 10;
	round_trip(&e, "a small file whose content could not be read: -");
	e.blocks = "z,p1,p4294967295,h00000000ffffffff,e";
	round_trip(&e, "every kind of block token");

	char *x = tree_xattrs_append(NULL, "user.b", "x;y=z\t%\n", 8);
	x = tree_xattrs_append(x, "user.a=;", "\0\xff", 2);
	x = tree_xattrs_append(x, "trusted.empty", "", 0);
	CHECK(x && !strcmp(x, "user.b=x%3By%3Dz%09%25%0A;user.a%3D%3B=%00%FF;trusted.empty="),
	      "xattrs field: pairs joined by ';', ';' and '=' encoded: '%s'", x);
	e.xattrs = x;
	round_trip(&e, "xattrs with nasty names and values");
	unsigned char *v = NULL;
	size_t vl = 0;
	CHECK(tree_xattr_get(x, "user.a=;", &v, &vl) == 1 && vl == 2 && !memcmp(v, "\0\xff", 2), "xattr value read back");
	free(v);
	CHECK(tree_xattr_get(x, "trusted.empty", &v, &vl) == 1 && vl == 0, "empty xattr value");
	free(v);
	CHECK(tree_xattr_get(x, "user.c", NULL, NULL) == 0 && tree_xattr_get(NULL, "user.c", NULL, NULL) == 0,
	      "an absent xattr");
	free(x);
	e.xattrs = "";
	round_trip(&e, "an empty but present xattrs field");

	struct tree_node o = { 0 };
	o.path = "fifo";
	o.type = 'o';
	round_trip(&o, "another file type, no optional fields");
}

TEST(parse_errors)
{
	const char *bad[] = {
		"",
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz",                 /* 11 fields */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-\t-",          /* 13 fields */
		"a\tx\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",             /* bad type */
		"a\tf\t0648\t0\t0\t5\t1\t12\t-\t-\tz\t-",             /* bad octal */
		"a\tf\t10000\t0\t0\t5\t1\t12\t-\t-\tz\t-",            /* mode too big */
		"a\tf\t0644\t-1\t0\t5\t1\t12\t-\t-\tz\t-",            /* negative uid */
		"a\tf\t0644\t0\t4294967296\t5\t1\t12\t-\t-\tz\t-",    /* gid too big */
		"a\tf\t0644\t0\t0\t18446744073709551616\t1\t12\t-\t-\tz\t-", /* size overflow */
		"a\tf\t0644\t0\t0\t\t1\t12\t-\t-\tz\t-",              /* empty number */
		"\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",              /* empty path */
		"a%0\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",           /* short escape */
		"a%zz\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",          /* bad escape */
		"a%00b\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",         /* NUL in the path */
		"a b\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-",           /* raw space */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tq\t-",             /* bad block token */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tp0\t-",            /* op 0 */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\th123\t-",          /* short hash */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz,\t-",            /* empty token */
		"a\tf\t0644\t0\t0\t5\t1\t12\tuser.a\t-\tz\t-",        /* xattr without '=' */
		"a\tf\t0644\t0\t0\t5\t1\t12\t=v\t-\tz\t-",            /* xattr without a name */
		"a\tf\t0644\t0\t0\t5\t1\t12\tu=a=b\t-\tz\t-",         /* raw '=' in a value */
		"a\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-\nmore",       /* two lines */
	};
	size_t n = sizeof(bad) / sizeof(bad[0]);
	for (size_t i = 0; i < n; i++) {
		struct tree_node t;
		int rc = tree_node_parse(bad[i], &t);
		CHECK(rc == -1 && !t.path && !t.blocks, "malformed line %zu is rejected, nothing left allocated", i + 1);
		if (rc == 0)
			tree_node_free(&t);
	}
	struct tree_node t;
	CHECK(tree_node_parse("a%2fb%2Fc\tf\t0644\t0\t0\t5\t1\t12\t-\t-\tz\t-\n", &t) == 0 && !strcmp(t.path, "a/b/c"),
	      "either hex case decodes, a trailing newline is fine");
	tree_node_free(&t);
}

/* A path comes from a guest: it names a node under the mount point, never
 * a place above or beside it, whatever bytes its names hold. */
TEST(path_rules)
{
	static const char *const refused[] = {
		"..", "../x", "a/../../x", "a/..", "%2E%2E/x", ".", "./a", "a/./b", "a/.",
		"/abs", "%2Fabs", "a//b", "a/", "a%2F%2Fb",
	};
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		char *line = xasprintf("%s\tf\t0644\t0\t0\t0\t1\t12\t-\t-\t\t", refused[i]);
		struct tree_node t;
		CHECK(tree_node_parse(line, &t) == -1 && !t.path, "path '%s' is refused", refused[i]);
		free(line);
	}
	static const struct { const char *enc, *path; } kept[] = {
		{ "%1B[31mred%1B[0m", "\x1b[31mred\x1b[0m" }, { "line%0Abreak", "line\nbreak" },
		{ "a/..b", "a/..b" },         { "...", "..." },
		{ ".hidden/x.", ".hidden/x." }, { "bidi%E2%80%AE", "bidi\xe2\x80\xae" },
		{ "bad%FF", "bad\xff" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		char *line = xasprintf("%s\tf\t0644\t0\t0\t0\t1\t12\t-\t-\t\t", kept[i].enc);
		struct tree_node t;
		CHECK(tree_node_parse(line, &t) == 0 && !strcmp(t.path, kept[i].path),
		      "name '%s' is a name like any other", kept[i].enc);
		tree_node_free(&t);
		free(line);
	}
}

TEST(tokens)
{
	unsigned char blk[TREE_BLOCK];
	char tok[24];
	memset(blk, 0, sizeof(blk));
	tree_block_token(blk, sizeof(blk), 0, tok);
	CHECK(!strcmp(tok, "z"), "zero block: z");
	tree_block_token(blk, 100, 8192, tok);
	CHECK(!strcmp(tok, "z"), "short zero block: z");

	wl_pattern(42, 3 * TREE_BLOCK, blk, sizeof(blk));
	tree_block_token(blk, sizeof(blk), 3 * TREE_BLOCK, tok);
	CHECK(!strcmp(tok, "p42"), "pattern of op 42 at its own block: %s", tok);
	tree_block_token(blk, sizeof(blk), 4 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h' && strlen(tok) == 17, "the same bytes at another block: a hash (%s)", tok);
	tree_block_token(blk, 100, 3 * TREE_BLOCK, tok);
	CHECK(!strcmp(tok, "p42"), "short last block of 100 bytes (6 full records and a tail): %s", tok);
	tree_block_token(blk, 32, 3 * TREE_BLOCK, tok);
	CHECK(!strcmp(tok, "p42"), "short last block of exactly 2 records: %s", tok);
	tree_block_token(blk, 10, 3 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h', "a block shorter than one record is never a pattern: %s", tok);
	blk[98] ^= 1;
	tree_block_token(blk, 100, 3 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h', "a changed byte in the short tail: a hash (%s)", tok);
	blk[98] ^= 1;
	blk[4095] ^= 1;
	tree_block_token(blk, sizeof(blk), 3 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h', "the last byte changed: a hash (%s)", tok);
	blk[4095] ^= 1;
	wl_pattern(43, 3 * TREE_BLOCK + 2048, blk + 2048, 2048);
	tree_block_token(blk, sizeof(blk), 3 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h', "two ops in one block: a hash (%s)", tok);
	memset(blk + 2048, 0, 2048);
	tree_block_token(blk, sizeof(blk), 3 * TREE_BLOCK, tok);
	CHECK(tok[0] == 'h', "half pattern, half zeros: a hash (%s)", tok);

	uint64_t h = fnv1a64(blk, sizeof(blk));
	char want[24];
	snprintf(want, sizeof(want), "h%016" PRIx64, h);
	CHECK(!strcmp(tok, want), "the hash token is FNV-1a of the block");
	CHECK(fnv1a64("", 0) == UINT64_C(0xcbf29ce484222325), "FNV-1a 64 of nothing is the offset basis");
	CHECK(fnv1a64("a", 1) == UINT64_C(0xaf63dc4c8601ec8c), "FNV-1a 64 of \"a\"");
	CHECK(fnv1a64("foobar", 6) == UINT64_C(0x85944171f73967e8), "FNV-1a 64 of \"foobar\"");
	unsigned char one[1] = { 7 };
	tree_block_token(one, 1, 0, tok);
	CHECK(tok[0] == 'h' && strlen(tok) == 17, "one byte: hash token of 16 digits (%s)", tok);
}

TEST_MAIN()

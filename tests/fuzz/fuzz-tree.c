/* fuzz-tree.c - observed-tree lines (core/tree.c), as a checker guest sends
 * them: any line parses or is refused; what parses formats to a line that
 * parses back to the same line, and its xattrs field can be walked and
 * looked up without reading outside it. */
#include "core/tree.h"
#include "tests/fuzz/fuzz.h"

static void count_pair(void *ctx, const struct sbuf *name, const struct sbuf *value)
{
	(*(size_t *)ctx)++;
	if (name->len)
		FUZZ_ASSERT(name->buf[name->len] == '\0', "name not terminated");
	(void)value;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char *line = fuzz_cstr(data, size);
	struct tree_node n, m;
	if (tree_node_parse(line, &n) < 0) {
		free(line);
		return 0;
	}
	FUZZ_ASSERT(n.path && n.path[0], "a parsed node has no path");
	FUZZ_ASSERT(strchr("fdlo", n.type) && n.type, "type '%c'", n.type);
	char *out = tree_node_format(&n);
	FUZZ_ASSERT(out && out[strlen(out) - 1] == '\n', "formatted line does not end in a newline");
	FUZZ_ASSERT(tree_node_parse(out, &m) == 0, "formatted '%s' does not parse", out);
	char *again = tree_node_format(&m);
	FUZZ_ASSERT(strcmp(out, again) == 0, "'%s' reads back as '%s'", out, again);
	FUZZ_ASSERT(n.content_len == m.content_len &&
			    (!n.content_len || memcmp(n.content, m.content, n.content_len) == 0),
		    "content differs after a round trip");
	if (n.xattrs) {
		size_t pairs = 0;
		tree_xattrs_each(n.xattrs, count_pair, &pairs);
		unsigned char *v = NULL;
		size_t vlen = 0;
		if (tree_xattr_get(n.xattrs, "user.a", &v, &vlen) == 1)
			free(v);
	}
	free(out);
	free(again);
	tree_node_free(&n);
	tree_node_free(&m);
	free(line);
	return 0;
}

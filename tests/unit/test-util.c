/* test-util.c - sizes, quoting, splitting, atomic files, the cache key hash. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hmap.h"
#include "core/util.h"
#include "host/hash.h"
#include "host/msg.h"
#include "host/sys.h"
#include "tests/unit/check.h"

TEST(sizes)
{
	CHECK(parse_size("512M") == 512LL << 20, "512M");
	CHECK(parse_size("4k") == 4096, "4k");
	CHECK(parse_size("1G") == 1LL << 30, "1G");
	CHECK(parse_size("300MiB") == 300LL << 20, "300MiB");
	CHECK(parse_size("12") == 12, "plain bytes");
	CHECK(parse_size("-1") == -1 && parse_size("12X") == -1 && parse_size("") == -1 && parse_size("M") == -1,
	      "bad sizes rejected");
}

TEST(quoting)
{
	struct strvec sv = STRVEC_INIT;
	strvec_split(&sv, "-O ^has_journal  -L 'my label' -E \"a b\"");
	CHECK(sv.n == 6 && !strcmp(sv.v[3], "my label") && !strcmp(sv.v[5], "a b"), "split honours quotes (%zu)",
	      sv.n);
	char *q = strvec_join_quoted(&sv);
	CHECK(!strcmp(q, "-O '^has_journal' -L 'my label' -E 'a b'"), "quoted join: %s", q);
	free(q);
	strvec_free(&sv);
	/* what join writes, split reads back: quotes, spaces, backslashes, empty words */
	static const char *const words[] = { "run", "it's", "a b", "", "back\\slash", "'", "x=\"y\"", "--fs" };
	size_t nw = sizeof(words) / sizeof(words[0]);
	for (size_t i = 0; i < nw; i++)
		strvec_push(&sv, words[i]);
	q = strvec_join_quoted(&sv);
	struct strvec back = STRVEC_INIT;
	strvec_split(&back, q);
	int same = back.n == nw;
	for (size_t i = 0; same && i < nw; i++)
		same = !strcmp(back.v[i], words[i]);
	CHECK(same, "split reads back a quoted join: %s (%zu words)", q, back.n);
	free(q);
	strvec_free(&back);
	strvec_free(&sv);
}

TEST(files)
{
	char dir[] = "/tmp/crashlab-unit.XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "temp dir");
	char *f = xasprintf("%s/a/b/c", dir);
	CHECK(mkdir_p(f, 0755) == 0 && is_dir(f), "mkdir_p makes parents");
	char *file = xasprintf("%s/x", f);
	CHECK(write_file_atomic(file, "hello", 5) == 0, "atomic write");
	struct sbuf sb = SBUF_INIT;
	CHECK(read_file(file, &sb) == 0 && sb.len == 5 && !strcmp(sb.buf, "hello"), "read back");
	char *tmp = xasprintf("%s.tmp.%d", file, (int)getpid());
	CHECK(!file_exists(tmp), "no temp file left behind");
	CHECK(rm_rf(dir) == 0 && !file_exists(dir), "rm_rf");
	free(f);
	free(file);
	free(tmp);
	sbuf_free(&sb);
}

TEST(sha256)
{
	struct hasher *h = hasher_new();
	hasher_add(h, "abc", 3);
	char hex[65];
	hasher_done(h, hex);
	CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "sha256(abc)");
}

TEST(run_cmd)
{
	struct sbuf out = SBUF_INIT;
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, "sh");
	strvec_push(&av, "-c");
	strvec_push(&av, "echo out; echo err >&2; exit 3");
	int rc = run_cmd(&av, &out, -1);
	CHECK(rc == 3 && strstr(out.buf, "out") && strstr(out.buf, "err"), "run_cmd status and output");
	sbuf_free(&out);
	strvec_free(&av);
}

TEST(nearest_word)
{
	const char *cmds[] = { "run", "show", "report", "judge", "kernel", NULL };
	CHECK(nearest_word("shwo", cmds) && !strcmp(nearest_word("shwo", cmds), "show"), "a swap: shwo -> show");
	CHECK(nearest_word("repotr", cmds) && !strcmp(nearest_word("repotr", cmds), "report"), "repotr -> report");
	CHECK(nearest_word("kern", cmds) && !strcmp(nearest_word("kern", cmds), "kernel"), "a prefix: kern -> kernel");
	CHECK(nearest_word("frobnicate", cmds) == NULL, "nothing near: no suggestion");
}

TEST(hash_map)
{
	struct hmap m = HMAP_INIT;
	for (size_t i = 0; i < 1000; i++)
		hmap_put(&m, hmap_mix(i % 100, 0, 0), i);
	size_t found = 0;
	for (size_t i = 0; i < 100; i++)
		found += hmap_get(&m, hmap_mix(i, 0, 0), NULL, NULL, NULL) != HMAP_NONE;
	CHECK(found == 100 && m.n == 1000, "1000 pairs under 100 hashes: every hash found (%zu)", found);
	CHECK(hmap_get(&m, hmap_mix(100, 0, 0), NULL, NULL, NULL) == HMAP_NONE, "an absent hash is HMAP_NONE");
	hmap_free(&m);
}

TEST(errbuf)
{
	struct errbuf e;
	CHECK(errbuf_errno(&e, ENOSPC, "cannot write '%s'", "x") == -1 && e.code == EXIT_CANTCREAT &&
	      strstr(e.msg, "cannot write 'x': no space left"), "errno turned into advice and code 73 (%s)", e.msg);
	errbuf_set(&e, EXIT_DATAERR, "bad magic");
	errbuf_prefix(&e, "write log '%s'", "l");
	CHECK(e.code == EXIT_DATAERR && !strcmp(e.msg, "write log 'l': bad magic"), "a prefix keeps the code (%s)", e.msg);
}

TEST_MAIN()

/* test-util.c - sizes, quoting, splitting, atomic files, the cache key hash,
 * the terminal escaper, key=value numbers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hmap.h"
#include "core/kv.h"
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

static char *escaped(const char *s, size_t n, unsigned flags)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_add_escaped(&sb, s, n, flags);
	return sbuf_detach(&sb);
}

/* What a guest names reaches a terminal only as text that does nothing. */
TEST(escape)
{
	static const struct { const char *in; size_t n; unsigned flags; const char *out; } cases[] = { /* n 0: strlen */
		{ "plain/name.txt", 0, 0, "plain/name.txt" },
		{ "\x1b[31mred\x1b]0;t\x07", 0, 0, "\\x1b[31mred\\x1b]0;t\\x07" },
		{ "a\nb\tc\rd\x7f", 0, 0, "a\\nb\\tc\\rd\\x7f" },
		{ "nul\0x\0" "1", 7, 0, "nul\\0x\\x001" },
		{ "caf\xc3\xa9 \xe2\x9c\x93", 0, 0, "caf\xc3\xa9 \xe2\x9c\x93" },
		{ "bad\xff\xc3", 0, 0, "bad\\xff\\xc3" },
		{ "csi\xc2\x9b" "2J", 0, 0, "csi\\u009b2J" },
		{ "txt\xe2\x80\xae" "exe", 0, 0, "txt\\u202eexe" },
		{ "iso\xe2\x81\xa6", 0, 0, "iso\\u2066" },
		{ "back\\slash \"q\"", 0, 0, "back\\\\slash \"q\"" },
		{ "back\\slash \"q\"", 0, SBUF_ESC_QUOTED, "\"back\\\\slash \\\"q\\\"\"" },
		{ "line 1\n\tline 2\x1b[2J\\", 0, SBUF_ESC_TEXT, "line 1\n\tline 2\\x1b[2J\\" },
		{ "one\nline\\", 0, SBUF_ESC_PROSE, "one\\nline\\" },
		{ "console\r\nline\r", 0, SBUF_ESC_TEXT, "console\nline\\r" },
		{ "console\r\n", 0, SBUF_ESC_PROSE, "console\\r\\n" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = escaped(cases[i].in, cases[i].n ? cases[i].n : strlen(cases[i].in), cases[i].flags);
		CHECK(!strcmp(got, cases[i].out), "case %zu escapes as expected", i);
		free(got);
	}
	/* No byte a terminal acts on survives, whatever comes in. */
	unsigned char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	char *got = escaped((const char *)all, sizeof(all), SBUF_ESC_TEXT);
	bool clean = true;
	for (const unsigned char *p = (const unsigned char *)got; *p; p++)
		clean &= *p >= 0x20 ? *p != 0x7f && !(*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) : *p == '\n' || *p == '\t';
	CHECK(clean && utf8_len((const unsigned char *)"\xc2\x9b", 2) == 2, "every byte value comes out inert");
	free(got);
}

TEST(kv_numbers)
{
	static const char t[] = "a=18446744073709551615\nb=-1\nc=0x10\nd=1.5\ne=nan\nf=inf\ng=1e999\nh=2x\ni= 3\n\nz=9\n";
	unsigned long long u = 0;
	double d = 0;
	CHECK(kv_u64(t, sizeof(t) - 1, "a", &u) == 1 && u == UINT64_MAX, "kv_u64 reads 2^64-1");
	CHECK(kv_u64(t, sizeof(t) - 1, "b", &u) == -1 && kv_u64(t, sizeof(t) - 1, "c", &u) == -1 &&
		      kv_u64(t, sizeof(t) - 1, "d", &u) == -1, "kv_u64 refuses a sign, hex, a fraction");
	CHECK(kv_u64(t, sizeof(t) - 1, "z", &u) == 0, "a key after the blank line is not in the header");
	CHECK(kv_real(t, sizeof(t) - 1, "d", 0, 10, &d) == 1 && d == 1.5, "kv_real reads 1.5");
	CHECK(kv_real(t, sizeof(t) - 1, "d", 0, 1, &d) == -1, "kv_real refuses a value above its range");
	bool refused = true;
	for (const char *k = "efghi"; *k; k++) {
		char key[2] = { *k, 0 };
		refused &= kv_real(t, sizeof(t) - 1, key, -1e300, 1e300, &d) == -1;
	}
	CHECK(refused, "kv_real refuses nan, inf, an overflow, trailing junk and leading space");
	CHECK(kv_real(t, sizeof(t) - 1, "q", 0, 1, &d) == 0, "an absent key is 0");
}

TEST_MAIN()

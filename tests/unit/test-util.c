/* test-util.c - sizes, quoting, splitting, atomic files, the cache key hash. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/util.h"
#include "tests/unit/check.h"

int main(void)
{
	CHECK(parse_size("512M") == 512LL << 20, "512M");
	CHECK(parse_size("4k") == 4096, "4k");
	CHECK(parse_size("1G") == 1LL << 30, "1G");
	CHECK(parse_size("300MiB") == 300LL << 20, "300MiB");
	CHECK(parse_size("12") == 12, "plain bytes");
	CHECK(parse_size("-1") == -1 && parse_size("12X") == -1 && parse_size("") == -1 && parse_size("M") == -1,
	      "bad sizes rejected");

	struct strvec sv = STRVEC_INIT;
	strvec_split(&sv, "-O ^has_journal  -L 'my label' -E \"a b\"");
	CHECK(sv.n == 6 && !strcmp(sv.v[3], "my label") && !strcmp(sv.v[5], "a b"), "split honours quotes (%zu)",
	      sv.n);
	char *q = strvec_join_quoted(&sv);
	CHECK(!strcmp(q, "-O '^has_journal' -L 'my label' -E 'a b'"), "quoted join: %s", q);
	free(q);
	strvec_free(&sv);

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

	struct hasher *h = hasher_new();
	hasher_add(h, "abc", 3);
	char hex[65];
	hasher_done(h, hex);
	CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "sha256(abc)");

	struct sbuf out = SBUF_INIT;
	struct strvec av = STRVEC_INIT;
	strvec_push(&av, "sh");
	strvec_push(&av, "-c");
	strvec_push(&av, "echo out; echo err >&2; exit 3");
	int rc = run_cmd(&av, &out, -1);
	CHECK(rc == 3 && strstr(out.buf, "out") && strstr(out.buf, "err"), "run_cmd status and output");
	free(f);
	free(file);
	free(tmp);
	sbuf_free(&sb);
	sbuf_free(&out);
	strvec_free(&av);
	return check_done();
}

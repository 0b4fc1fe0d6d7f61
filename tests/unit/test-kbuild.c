/*
 * test-kbuild.c - the kernel build's pure steps, host only: config
 * verification, bzImage header checks, version extraction, series parsing
 * and the cache key.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/sys.h"
#include "kbuild/kbuild.h"
#include "tests/unit/check.h"

static bool has_problem(const struct strvec *p, const char *a, const char *b)
{
	for (size_t i = 0; i < p->n; i++)
		if (strstr(p->v[i], a) && (!b || strstr(p->v[i], b)))
			return true;
	return false;
}

TEST(config_verify)
{
	struct strvec p = STRVEC_INIT;
	const char *frag =
		"# a comment\n"
		"CONFIG_KEPT=y\n"
		"\n"
		"# CONFIG_OFF is not set\n"
		"CONFIG_MOD=m\n"
		"CONFIG_TURNED_OFF=y\n"
		"CONFIG_STR=\"hello world\"\n"
		"CONFIG_NO=n\n"
		"CONFIG_DROPPED=y\n"
		"CONFIG_INT=100  \n";
	const char *dot =
		"#\n# Automatically generated file; DO NOT EDIT.\n#\n"
		"CONFIG_KEPT=y\n"
		"CONFIG_OFF=y\n"
		"CONFIG_MOD=y\n"
		"# CONFIG_TURNED_OFF is not set\n"
		"CONFIG_STR=\"hello world\"\n"
		"CONFIG_INT=250\n";
	int n = kbuild_config_verify(frag, "kernel/test.config", dot, &p);
	CHECK(n == 5, "config verify finds 5 problems (found %d)", n);
	CHECK(!has_problem(&p, "CONFIG_KEPT", NULL), "an option kept as is is no problem");
	CHECK(!has_problem(&p, "CONFIG_STR", NULL), "a quoted string value kept as is is no problem");
	CHECK(!has_problem(&p, "CONFIG_NO", NULL), "CONFIG_X=n absent from .config is no problem");
	CHECK(has_problem(&p, "'CONFIG_DROPPED=y' from 'kernel/test.config:9' was dropped by olddefconfig", NULL),
	      "a dropped option is named with its file and line");
	CHECK(has_problem(&p, "'CONFIG_MOD=m'", "became 'CONFIG_MOD=y'"), "a changed value says what it became");
	CHECK(has_problem(&p, "'CONFIG_INT=100'", "became 'CONFIG_INT=250'"),
	      "a changed number says what it became (trailing blanks ignored)");
	CHECK(has_problem(&p, "'CONFIG_TURNED_OFF=y'", "became '# CONFIG_TURNED_OFF is not set'"),
	      "an option turned off is reported");
	CHECK(has_problem(&p, "'CONFIG_OFF'", "should not be set but became 'CONFIG_OFF=y'"),
	      "'is not set' violated is reported");
	strvec_free(&p);

	n = kbuild_config_verify("CONFIG_A=y\n# CONFIG_B is not set\n", "f",
				     "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=y\n", &p);
	CHECK(n == 0 && p.n == 0, "a fragment fully kept has no problems");
	n = kbuild_config_verify("# CONFIG_B is not set\n", "f", "CONFIG_A=y\n", &p);
	CHECK(n == 0, "'is not set' and absent from .config is no problem");
	n = kbuild_config_verify("CONFIG_X=y\n# CONFIG_X is not set\n", "f", "# CONFIG_X is not set\n", &p);
	CHECK(n == 0, "the last line for an option wins, as in Kconfig");
	n = kbuild_config_verify("CONFIG_X=y\nthis is not an option\n", "f", "CONFIG_X=y\n", &p);
	CHECK(n == 1 && has_problem(&p, "'this is not an option' of 'f:2' is not a config option", NULL),
	      "a malformed fragment line is reported");
	strvec_free(&p);
}

static char *write_tmp(const char *dir, const char *name, const void *data, size_t n)
{
	char *path = xasprintf("%s/%s", dir, name);
	if (write_file_atomic(path, data, n) < 0)
		SKIP("cannot write '%s': %s", path, strerror(errno));
	return path;
}

static void bzimage(const char *dir)
{
	unsigned char img[0x800];
	memset(img, 0, sizeof(img));
	char *plain = write_tmp(dir, "plain", img, sizeof(img));
	CHECK(kernel_check(plain) < 0 && errno == ENOEXEC, "a file without the boot header is not a bzImage");
	CHECK(kernel_version(plain) == NULL, "no version from a non-bzImage");

	img[0x1FE] = 0x55;
	img[0x1FF] = 0xAA;
	memcpy(img + 0x202, "HdrS", 4);
	img[0x206] = 0x0F;   /* boot protocol 2.15 */
	img[0x207] = 0x02;
	char *nover = write_tmp(dir, "nover", img, sizeof(img));
	CHECK(kernel_check(nover) == 0, "boot flag 0xAA55 and 'HdrS' make a bzImage");
	CHECK(kernel_version(nover) == NULL, "a bzImage with kernel_version 0 has no version");

	const char *ver = "6.12.118 (crashlab@crashlab) #1 SMP PREEMPT_DYNAMIC Mon Jan  1 00:00:00 UTC 2024";
	img[0x20E] = 0x00;   /* version string at 0x100 + 0x200 */
	img[0x20F] = 0x01;
	memcpy(img + 0x300, ver, strlen(ver) + 1);
	char *good = write_tmp(dir, "good", img, sizeof(img));
	const char *got = kernel_version(good);
	CHECK(got && !strcmp(got, ver), "the version string is read from the header (got '%s')", got ? got : "(null)");

	char *shortf = write_tmp(dir, "short", img, 0x100);
	CHECK(kernel_check(shortf) < 0 && errno == ENOEXEC, "a file shorter than the header is not a bzImage");
	char *missing = xasprintf("%s/missing", dir);
	CHECK(kernel_check(missing) < 0 && errno == ENOENT, "a missing file reports ENOENT");
	CHECK(kernel_check(dir) < 0 && errno == ENOEXEC, "a directory is not a bzImage");
	free(plain);
	free(nover);
	free(good);
	free(shortf);
	free(missing);
}

TEST(series)
{
	struct strvec names = STRVEC_INIT;
	struct errbuf err = { 0 };
	int r = kbuild_series_parse("# the series\n"
					"\n"
					"0001-first.patch\n"
					"   0002-second.patch   -p1   # why\n"
					"\t# indented comment\n"
					"sub/0003-third#x.patch\r\n"
					"0004-last.patch", &names, &err);
	CHECK(r == 0 && names.n == 4, "series: 4 names out of comments and blank lines (got %zu)", names.n);
	CHECK(names.n == 4 && !strcmp(names.v[0], "0001-first.patch") && !strcmp(names.v[1], "0002-second.patch") &&
	      !strcmp(names.v[2], "sub/0003-third#x.patch") && !strcmp(names.v[3], "0004-last.patch"),
	      "series: names in order, '#' inside a name kept, -p1 accepted");
	strvec_free(&names);

	r = kbuild_series_parse("", &names, &err);
	CHECK(r == 0 && names.n == 0, "an empty series is valid");
	r = kbuild_series_parse("# only comments\n\n", &names, &err);
	CHECK(r == 0 && names.n == 0, "a series of comments is empty");

	r = kbuild_series_parse("a.patch\nb.patch -p0\n", &names, &err);
	CHECK(r < 0 && strstr(err.msg, "line 2") && strstr(err.msg, "-p1"), "-p0 is refused with its line (%s)", err.msg);
	r = kbuild_series_parse("../outside.patch\n", &names, &err);
	CHECK(r < 0 && strstr(err.msg, "line 1"), "a name leaving the directory is refused");
	r = kbuild_series_parse("/abs.patch\n", &names, &err);
	CHECK(r < 0, "an absolute name is refused");
	r = kbuild_series_parse("a.patch extra\n", &names, &err);
	CHECK(r < 0 && strstr(err.msg, "'extra'"), "junk after a name is refused");
	strvec_free(&names);
}

static int key_of(struct kbuild_opts *o, char key[65], int *code)
{
	struct errbuf err = { 0 };
	int r = kbuild_key(o, key, &err);
	*code = err.code;
	return r;
}

static void key(const char *dir)
{
	char *pdir = xasprintf("%s/patches", dir);
	mkdir(pdir, 0755);
	char *src = write_tmp(dir, "src.tar.xz", "not really a tarball", 20);
	char *series = write_tmp(pdir, "series", "# s\n0001-a.patch\n", 17);
	char *patch = write_tmp(pdir, "0001-a.patch", "patch one\n", 10);
	char *cfg = write_tmp(dir, "frag.config", "CONFIG_A=y\n", 11);
	struct kbuild_opts o = { .source = src, .patches = pdir, .config = cfg, .jobs = 1 };
	char k1[65], k2[65], k3[65];
	int code;

	CHECK(key_of(&o, k1, &code) == 0 && strlen(k1) == 64, "a key is 64 hex digits");
	CHECK(key_of(&o, k2, &code) == 0 && !strcmp(k1, k2), "the same inputs give the same key");
	o.jobs = 7;
	CHECK(key_of(&o, k2, &code) == 0 && !strcmp(k1, k2), "-j does not change the key");

	free(write_tmp(pdir, "0001-a.patch", "patch two\n", 10));
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "changing a patch changes the key");
	free(write_tmp(pdir, "0001-a.patch", "patch one\n", 10));
	CHECK(key_of(&o, k3, &code) == 0 && !strcmp(k1, k3), "restoring the patch restores the key");

	free(write_tmp(dir, "frag.config", "CONFIG_A=m\n", 11));
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "changing the config fragment changes the key");
	free(write_tmp(dir, "frag.config", "CONFIG_A=y\n", 11));

	free(write_tmp(pdir, "series", "# t\n0001-a.patch\n", 17));
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "changing the series file changes the key");
	free(write_tmp(pdir, "series", "# s\n0001-a.patch\n", 17));

	struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };
	utimensat(AT_FDCWD, src, ts, 0);
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "a non-packaged tarball's mtime is part of the key");

	free(write_tmp(pdir, "series", "0001-a.patch\n0002-missing.patch\n", 32));
	CHECK(key_of(&o, k2, &code) < 0 && code == EXIT_NOINPUT, "a missing patch is EXIT_NOINPUT");
	free(write_tmp(pdir, "series", "0001-a.patch -p2\n", 17));
	CHECK(key_of(&o, k2, &code) < 0 && code == EXIT_DATAERR, "a malformed series is EXIT_DATAERR");
	free(write_tmp(pdir, "series", "", 0));
	CHECK(key_of(&o, k2, &code) == 0, "an empty series is fine");
	o.config = "/nonexistent/frag.config";
	CHECK(key_of(&o, k2, &code) < 0 && code == EXIT_NOINPUT, "a missing config fragment is EXIT_NOINPUT");
	o.config = cfg;
	o.source = "/nonexistent/linux.tar.xz";
	CHECK(key_of(&o, k2, &code) < 0 && code == EXIT_NOINPUT, "a missing tarball is EXIT_NOINPUT");

	free(pdir);
	free(src);
	free(series);
	free(patch);
	free(cfg);
}

/* A case in a temporary directory of its own. */
static void in_tmpdir(void (*fn)(const char *dir))
{
	char tmpl[] = "/tmp/crashlab-test-kbuild.XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir)
		SKIP("cannot create a temporary directory: %s", strerror(errno));
	fn(dir);
	rm_rf(dir);
}

TEST(bzimage)
{
	in_tmpdir(bzimage);
}

TEST(cache_key)
{
	in_tmpdir(key);
}

TEST(source_names)
{
	CHECK(kbuild_source_is_name("6.1") && kbuild_source_is_name("6.12"), "6.1 and 6.12 are source names");
	CHECK(!kbuild_source_is_name("6") && !kbuild_source_is_name("6.") && !kbuild_source_is_name(".1"),
	      "a name is X.Y with both parts");
	CHECK(!kbuild_source_is_name("6.1.5") && !kbuild_source_is_name("v6.1") && !kbuild_source_is_name("6.1/"),
	      "three parts, a prefix or a suffix are paths, not names");
	CHECK(!kbuild_source_is_name("") && !kbuild_source_is_name("./6.1"), "empty and relative paths are not names");
	CHECK(!strcmp(kbuild_selected(), KBUILD_SOURCE_NAME), "nothing selected means the default source");
	kbuild_select("6.1");
	CHECK(!strcmp(kbuild_selected(), "6.1"), "the selected source is reported as given");
	kbuild_select(NULL);
	CHECK(!strcmp(kbuild_selected(), "6.12"), "selecting NULL restores the default");
}

static void sources(const char *dir)
{
	char *pdir = xasprintf("%s/patches", dir);
	mkdir(pdir, 0755);
	char *series = write_tmp(pdir, "series", "0001-a.patch\n", 13);
	char *patch = write_tmp(pdir, "0001-a.patch", "patch one\n", 10);
	char *cfg = write_tmp(dir, "frag.config", "CONFIG_A=y\n", 11);
	struct kbuild_opts o = { .source = "6.12", .patches = pdir, .config = cfg };
	char *p;

	p = kbuild_series_path(&o);
	CHECK(p && !strcmp(p, series), "6.12 applies the series (got '%s')", p ? p : "(null)");
	free(p);
	o.source = "6.1";
	p = kbuild_series_path(&o);
	CHECK(p && !strcmp(p, series), "6.1 without series-6.1 applies the series");
	free(p);
	char *s61 = write_tmp(pdir, "series-6.1", "# none apply\n", 14);
	p = kbuild_series_path(&o);
	CHECK(p && !strcmp(p, s61), "6.1 applies series-6.1 when it exists (got '%s')", p ? p : "(null)");
	free(p);
	o.source = "/usr/src/linux-source-6.1.tar.xz";
	p = kbuild_series_path(&o);
	CHECK(p && !strcmp(p, s61), "the packaged tarball's path is the same as its name");
	free(p);
	o.source = "6.12";
	p = kbuild_series_path(&o);
	CHECK(p && !strcmp(p, series), "6.12 never reads series-6.12 (its key must not move)");
	free(p);
	o.no_patches = true;
	CHECK(kbuild_series_path(&o) == NULL, "--no-patches has no series");
	o.no_patches = false;

	/* keys of sources; a packaged source needs its tarball installed */
	char k1[65], k2[65], k3[65];
	int code;
	char *tarball = write_tmp(dir, "linux-x.tar.xz", "not a tarball", 13);
	o.source = tarball;
	CHECK(key_of(&o, k1, &code) == 0, "a tarball path has a key");
	o.no_patches = true;
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "--no-patches changes the key");
	o.no_patches = false;
	char *tree = xasprintf("%s/tree", dir);
	mkdir(tree, 0755);
	o.source = tree;
	CHECK(key_of(&o, k2, &code) < 0 && code == EXIT_NOINPUT, "a directory without a Makefile is EXIT_NOINPUT");
	free(write_tmp(tree, "Makefile", "VERSION = 6\n", 12));
	CHECK(key_of(&o, k2, &code) == 0 && strcmp(k1, k2), "a tree has a key of its own");
	CHECK(key_of(&o, k3, &code) == 0 && !strcmp(k2, k3), "the same tree gives the same key");
	struct timespec ts[2] = { { 1000000, 0 }, { 1000000, 0 } };
	char *mk = xasprintf("%s/Makefile", tree);
	utimensat(AT_FDCWD, mk, ts, 0);
	CHECK(key_of(&o, k3, &code) == 0 && strcmp(k2, k3), "touching the tree's Makefile changes its key");
	free(mk);
	o.source = "9.99";
	CHECK(key_of(&o, k3, &code) < 0 && code == EXIT_NOINPUT, "a name whose package is not installed is EXIT_NOINPUT");
	if (file_exists("/usr/src/linux-source-6.1.tar.xz") && file_exists(KBUILD_SOURCE)) {
		o.source = "6.1";
		CHECK(key_of(&o, k1, &code) == 0, "6.1 has a key");
		o.source = "/usr/src/linux-source-6.1.tar.xz";
		CHECK(key_of(&o, k2, &code) == 0 && !strcmp(k1, k2), "6.1 by name and by path is one key");
		o.source = "6.12";
		CHECK(key_of(&o, k3, &code) == 0 && strcmp(k1, k3), "6.1 and 6.12 have different keys");
		o.source = NULL;
		CHECK(key_of(&o, k2, &code) == 0 && !strcmp(k2, k3), "the default source is 6.12");
		kbuild_select("6.1");
		CHECK(key_of(&o, k2, &code) == 0 && !strcmp(k2, k1), "the selected source is used when none is given");
		kbuild_select(NULL);
	} else {
		printf("# skipped the packaged-source keys: linux-source-6.1 or 6.12 is not installed\n");
	}
	free(tree);
	free(tarball);
	free(s61);
	free(pdir);
	free(series);
	free(patch);
	free(cfg);
}

TEST(source_keys)
{
	in_tmpdir(sources);
}

TEST_MAIN()

/* test-opt.c - the shared option parser: values, lists, --, errors exit 2. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/opt.h"
#include "tests/unit/check.h"

static int exit_of(char **argv, int argc, const struct opt *opts, int flags)
{
	pid_t pid = fork();
	if (pid == 0) {
		close(2);
		close(1);
		opt_parse(argc, argv, opts, NULL, "usage: t\n", flags);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(values)
{
	const char *fs = NULL, *kernel = NULL;
	int n = 0, flag = 0;
	struct strvec list = STRVEC_INIT;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs, "FS", "fs" },
		{ OPT_INT, 'n', "count", &n, "N", "count" },
		{ OPT_BOOL, 'f', "flag", &flag, NULL, "flag" },
		{ OPT_LIST, 'd', "disk", &list, "F", "disk" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	char *a1[] = { "t", "pos1", "--fs=xfs", "-n", "7", "--disk", "a", "-d", "b", "--flag", "pos2",
		       "--kernel", "/k", "--", "--fs", NULL };
	const struct opt common[] = {
		{ OPT_STRING, 0, "kernel", &kernel, "PATH", "kernel" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int np = opt_parse(15, a1, opts, common, "usage: t\n", 0);
	CHECK(np == 3 && !strcmp(a1[0], "pos1") && !strcmp(a1[1], "pos2") && !strcmp(a1[2], "--fs"),
	      "positionals kept in order, '--' ends options (%d)", np);
	CHECK(fs && !strcmp(fs, "xfs") && n == 7 && flag == 1, "values set");
	CHECK(list.n == 2 && !strcmp(list.v[1], "b"), "repeatable list");
	CHECK(kernel && !strcmp(kernel, "/k"), "--kernel is accepted from the common table");

	char *a2[] = { "t", "--accel", "tcg", "uname", "-a", NULL };
	const char *accel = NULL;
	const struct opt o2[] = { { OPT_STRING, 0, "accel", &accel, "A", "a" }, { OPT_END, 0, NULL, NULL, NULL, NULL } };
	np = opt_parse(5, a2, o2, NULL, "usage\n", OPT_STOP_AT_NONOPT);
	CHECK(np == 2 && !strcmp(a2[1], "-a") && !strcmp(accel, "tcg"), "stop at the command's own options");

	strvec_free(&list);
}

TEST(errors)
{
	const char *fs = NULL;
	int n = 0, flag = 0;
	struct strvec list = STRVEC_INIT;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs, "FS", "fs" },
		{ OPT_INT, 'n', "count", &n, "N", "count" },
		{ OPT_BOOL, 'f', "flag", &flag, NULL, "flag" },
		{ OPT_LIST, 'd', "disk", &list, "F", "disk" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	char *e1[] = { "t", "--nope", NULL };
	CHECK(exit_of(e1, 2, opts, 0) == EXIT_USAGE, "unknown option exits 2");
	char *e2[] = { "t", "--count", "x", NULL };
	CHECK(exit_of(e2, 3, opts, 0) == EXIT_USAGE, "non-number exits 2");
	char *e3[] = { "t", "--fs", NULL };
	CHECK(exit_of(e3, 2, opts, 0) == EXIT_USAGE, "missing value exits 2");
	char *e4[] = { "t", "--help", NULL };
	CHECK(exit_of(e4, 2, opts, 0) == 0, "--help exits 0");
	char *e5[] = { "t", "--kernel", "x", NULL };
	CHECK(exit_of(e5, 3, opts, 0) == EXIT_USAGE, "--kernel where the command has no guest exits 2");
}

TEST_MAIN()

/* kernel.c - `crashlab kernel build|path`: the guest kernel, built once into the cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "kbuild/kbuild.h"

int kernel_test(const struct kbuild_opts *o, const char *fs_list, struct cmd_ctx *ctx);
int kernel_tree_cmd(const struct kbuild_opts *o, bool reset);
int kernel_export_cmd(const struct kbuild_opts *o);
int kernel_check_cmd(const struct kbuild_opts *o, const char *build_mode, bool selftests, struct cmd_ctx *ctx);

static const char usage[] =
	"usage: crashlab kernel build [--source X.Y|PATH] [--patches DIR] [--no-patches] [--config FILE] [-j N]\n"
	"   or: crashlab kernel path [--source X.Y|PATH] [--kernel PATH]\n"
	"   or: crashlab kernel test [--patches DIR] [--fs LIST] [--kernel PATH]\n"
	"   or: crashlab kernel tree [--reset] | export | check [--build full|touched|none] [--no-selftests]\n"
	"\n"
	"The guest kernel is Debian's linux-source-6.12 with the patches listed in\n"
	"kernel/series applied and the options of kernel/crashlab.config set.\n"
	"Other kernels build beside it: --source 6.1 is Debian's linux-source-6.1\n"
	"(apt-get install linux-source-6.1) with kernel/series-6.1 (no patches: the\n"
	"barrier series does not apply there), --source PATH a tarball or a tree\n"
	"with kernel/series (--no-patches: none). 'crashlab run --kernel-source 6.1'\n"
	"then runs on it.\n"
	"\n"
	"subcommands:\n"
	"  build   extract the source, apply the series, configure (every option of the\n"
	"          fragment must survive) and build bzImage, then print its path; returns\n"
	"          at once when the same inputs were built before\n"
	"  path    print the built bzImage's path without building (or check and print\n"
	"          --kernel PATH); exit 66 when it is not built yet\n"
	"  test    compile the series' selftests (tools/testing/selftests/fbarrier)\n"
	"          statically against the built tree's uapi headers, boot the kernel\n"
	"          and run them on a fresh image of each file system and on tmpfs;\n"
	"          prints TAP, exits 1 when a test fails\n"
	"  tree    the series as git commits: <cache>/git/linux-6.12, branch 'series' on\n"
	"          'base' (Debian's source); edit the patches there with git\n"
	"  export  git format-patch that branch back into kernel/, with the cover letter\n"
	"  check   apply kernel/series a patch at a time; at each one build, check the\n"
	"          Documentation references and kernel-doc, run checkpatch --strict;\n"
	"          then the selftests; prints a table, exits 1 when something failed\n"
	"\n"
	"Builds are cached in $XDG_CACHE_HOME/crashlab/kernel/<key>/ (default\n"
	"~/.cache/crashlab), one per hash of source version, series, patches and config:\n"
	"bzImage, build.log and the tree in linux/. Compiler output is reused through\n"
	"ccache in <cache>/ccache. A failed build leaves its log in\n"
	"<cache>/kernel/last-failed-build.log.\n"
	"\n"
	"exit codes: 65 corrupt tarball or not a bzImage, 66 missing input or not built,\n"
	"71 compile failed, 73 cache not writable (disk full), 76 a patch does not\n"
	"apply, 78 a config option was dropped or a build tool is missing\n";

static const char build_usage[] =
	"usage: crashlab kernel build [--source X.Y|PATH] [--patches DIR] [--no-patches] [--config FILE] [-j N]\n"
	"\n"
	"Extract the source, apply kernel/series, configure (every option of the\n"
	"fragment must survive) and build bzImage, then print its path; returns at\n"
	"once when the same inputs were built before.\n"
	"\n"
	"--source X.Y builds Debian's linux-source-X.Y (/usr/src/linux-source-X.Y.tar.xz)\n"
	"with kernel/series-X.Y when that file exists, else kernel/series: 6.12 is\n"
	"the default, 6.1 has kernel/series-6.1 (empty). --source PATH builds a\n"
	"tarball, or a copy of a kernel tree (named by its path, git commit and\n"
	"state, and its Makefile). Each source has its own cache entry.\n"
	"\n"
	"examples:\n"
	"  crashlab kernel build --source 6.1\n"
	"  crashlab kernel build --source ~/linux --no-patches -j 4\n";

static const char path_usage[] =
	"usage: crashlab kernel path [--source X.Y|PATH] [--patches DIR] [--no-patches] [--config FILE] [--kernel PATH]\n"
	"\n"
	"Print the path of the bzImage built from these inputs (the defaults: Debian's\n"
	"source, kernel/series, kernel/crashlab.config) without building, or check and\n"
	"print --kernel PATH; exit 66 when it is not built yet.\n";

static const char tree_usage[] =
	"usage: crashlab kernel tree [--patches DIR] [--reset]\n"
	"\n"
	"Print the path of the series' git tree, making it first when it is missing:\n"
	"<cache>/git/linux-6.12 holds Debian's linux-source-6.12 as the commit tagged\n"
	"'base' and branch 'series' with kernel/series applied by 'git am' (the text\n"
	"of kernel/0000-cover-letter.patch becomes the branch description). Change the\n"
	"patches there with git (commit --fixup, rebase -i, commit --amend), then\n"
	"'crashlab kernel export'. --reset makes the branch again from kernel/,\n"
	"dropping what was committed there.\n"
	"\n"
	"example:\n"
	"  cd \"$(crashlab kernel tree)\" && git log --oneline base..series\n";

static const char export_usage[] =
	"usage: crashlab kernel export [--patches DIR]\n"
	"\n"
	"Write the tree's branch 'series' into kernel/ with 'git format-patch': the\n"
	"barrier patches with their cover letter (0000-cover-letter.patch, whose text\n"
	"is the branch description: 'git branch --edit-description'), and each patch\n"
	"kernel/series lists after its comment naming the independent patches on its\n"
	"own, numbered on. The cover letter's date is the last patch's, and commit\n"
	"ids are zeros, so exporting an unchanged branch changes no file.\n";

static const char check_usage[] =
	"usage: crashlab kernel check [--patches DIR] [--build full|touched|none] [--no-selftests] [-j N]\n"
	"\n"
	"Check the series the way a maintainer would, on a worktree of the series'\n"
	"git tree reset to 'base' (see 'crashlab kernel tree'): apply kernel/series one\n"
	"patch at a time with 'git am', and at every bisect point\n"
	"  build       make bzImage (full, the default; every patch must build without a\n"
	"              warning), the objects of the .c files the patch touches (touched),\n"
	"              or nothing (none); out of tree in <cache>/git/check-build, with ccache\n"
	"  refs        scripts/documentation-file-ref-check: no reference to a missing\n"
	"              Documentation file that base does not have already\n"
	"  kernel-doc  scripts/kernel-doc -Wall on the touched .c and .h files: no more\n"
	"              warnings than the same files have at base\n"
	"  rst         docutils on the touched .rst files: no more warnings than at base\n"
	"and for every patch scripts/checkpatch.pl --strict: no error, and every\n"
	"warning or check type it reports (e.g. BIT_MACRO) named in the cover letter,\n"
	"which must explain it. Then 'crashlab kernel test' on the kernel of the whole\n"
	"series. Prints a table and, on stderr, the details of each failure; exits 1\n"
	"when anything failed. A full build at every patch takes long the first time\n"
	"(a header change rebuilds most of the kernel) and is fast from ccache after.\n";

static const char test_usage[] =
	"usage: crashlab kernel test [--patches DIR] [--fs LIST] [--kernel PATH] [--accel auto|kvm|tcg]\n"
	"\n"
	"Compile the series' selftests (tools/testing/selftests/fbarrier) statically\n"
	"against the built tree's uapi headers, boot the kernel and run them on a\n"
	"fresh image of each file system and on tmpfs; prints TAP, exits 1 when a\n"
	"test fails.\n";

int cmd_kernel(int argc, char **argv, struct cmd_ctx *ctx)
{
	struct kbuild_opts o = { 0 };
	const char *fs = NULL;
	const struct opt none[] = { { OPT_END, 0, NULL, NULL, NULL, NULL } };
	const struct opt source_opts[] = {
		{ OPT_STRING, 0, "source", &o.source, "X.Y|PATH",
		  "6.12 (default), 6.1 (Debian's linux-source-X.Y), or a tarball or tree" },
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_BOOL, 0, "no-patches", &o.no_patches, NULL, "build the source as it is, without a series" },
		{ OPT_STRING, 0, "config", &o.config, "FILE", "config fragment (kernel/crashlab.config)" },
		{ OPT_INT, 'j', "jobs", &o.jobs, "N", "parallel make jobs (online CPUs)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const struct opt test_opts[] = {
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_STRING, 0, "fs", &fs, "LIST", "file systems (ext4,xfs,btrfs,f2fs)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	bool reset = false, no_selftests = false;
	const char *build_mode = "full";
	const struct opt tree_opts[] = {
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_BOOL, 0, "reset", &reset, NULL, "make branch 'series' again from kernel/" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const struct opt export_opts[] = {
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	const struct opt check_opts[] = {
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_STRING, 0, "build", &build_mode, "full|touched|none", "what to build at each patch (full)" },
		{ OPT_BOOL, 0, "no-selftests", &no_selftests, NULL, "skip 'crashlab kernel test'" },
		{ OPT_INT, 'j', "jobs", &o.jobs, "N", "parallel make jobs (online CPUs)" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = cmd_parse(ctx, argc, argv, none, usage, OPT_STOP_AT_NONOPT);
	if (n == 0)
		usage_error(ctx->name, "which one: 'crashlab kernel build', 'path', 'test', 'tree', 'export' or 'check'?");
	const char *sub = argv[0];
	cmd_name_sub(ctx, sub);
	struct errbuf e;
	if (!strcmp(sub, "build")) {
		if (cmd_parse(ctx, n, argv, source_opts, build_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		char *bz = kbuild_run(&o, &e);
		if (!bz)
			die_err(&e);
		printf("%s\n", bz);
		free(bz);
		return 0;
	}
	if (!strcmp(sub, "path")) {
		ctx->flags |= CMD_GUEST;
		if (cmd_parse(ctx, n, argv, source_opts, path_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		char *bz = ctx->kernel ? kernel_ensure(ctx->kernel, &e) : kbuild_cached(&o, NULL);
		if (!bz && ctx->kernel)
			die_err(&e);
		const char *src = o.source ? o.source : ctx->kernel_source;
		if (!bz && src)
			die_code(EXIT_NOINPUT, "kernel of source '%s' not built; run 'crashlab kernel build --source %s'", src,
				  src);
		if (!bz)
			die_code(EXIT_NOINPUT, "kernel not built; run 'crashlab kernel build'");
		printf("%s\n", bz);
		free(bz);
		return 0;
	}
	if (!strcmp(sub, "test")) {
		ctx->flags |= CMD_GUEST;
		if (cmd_parse(ctx, n, argv, test_opts, test_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		return kernel_test(&o, fs, ctx);
	}
	if (!strcmp(sub, "tree")) {
		if (cmd_parse(ctx, n, argv, tree_opts, tree_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		return kernel_tree_cmd(&o, reset);
	}
	if (!strcmp(sub, "export")) {
		if (cmd_parse(ctx, n, argv, export_opts, export_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		return kernel_export_cmd(&o);
	}
	if (!strcmp(sub, "check")) {
		ctx->flags |= CMD_GUEST;
		if (cmd_parse(ctx, n, argv, check_opts, check_usage, 0))
			usage_error(ctx->name, "unexpected argument '%s'", argv[0]);
		return kernel_check_cmd(&o, build_mode, !no_selftests, ctx);
	}
	const char *subs[] = { "build", "path", "test", "tree", "export", "check", NULL };
	const char *near = nearest_word(sub, subs);
	if (near)
		usage_error("crashlab kernel", "unknown subcommand '%s'; did you mean '%s'?", sub, near);
	usage_error("crashlab kernel", "unknown subcommand '%s' (try 'build', 'path', 'test', 'tree', 'export' or 'check')", sub);
}

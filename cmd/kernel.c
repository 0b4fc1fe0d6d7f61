/* kernel.c - `crashlab kernel build|path`: the guest kernel, built once into the cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbuild/kbuild.h"
#include "cmd/opt.h"
#include "cmd/cmds.h"
#include "cmd/kernel_test.h"

static const char usage[] =
	"usage: crashlab kernel build [--source TARBALL] [--patches DIR] [--config FILE] [-j N]\n"
	"   or: crashlab kernel path [--kernel PATH]\n"
	"   or: crashlab kernel test [--patches DIR] [--fs LIST] [--kernel PATH]\n"
	"\n"
	"The guest kernel is Debian's linux-source-6.12 with the patches listed in\n"
	"kernel/series applied and the options of kernel/crashlab.config set.\n"
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

int cmd_kernel(int argc, char **argv)
{
	const char *cmd = argv[0];
	struct lab_kbuild_opts o = { 0 };
	const char *fs = NULL, *accel = "auto";
	const struct opt opts[] = {
		{ OPT_STRING, 0, "source", &o.source, "TARBALL", "kernel source tarball (" LAB_KBUILD_SOURCE ")" },
		{ OPT_STRING, 0, "patches", &o.patches, "DIR", "directory with 'series' and patches (kernel/)" },
		{ OPT_STRING, 0, "config", &o.config, "FILE", "config fragment (kernel/crashlab.config)" },
		{ OPT_INT, 'j', "jobs", &o.jobs, "N", "parallel make jobs (online CPUs)" },
		{ OPT_STRING, 0, "fs", &fs, "LIST", "test: file systems (ext4,xfs,btrfs,f2fs)" },
		{ OPT_STRING, 0, "accel", &accel, "auto|kvm|tcg", "test: accelerator" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	int n = opt_parse(argc, argv, opts, usage, 0);
	if (n == 0)
		usage_error(cmd, "which one: 'crashlab kernel build', 'path' or 'test'?");
	if (n > 1)
		usage_error(cmd, "unexpected argument '%s'", argv[1]);
	const char *sub = argv[0];

	if (!strcmp(sub, "build")) {
		if (opt_kernel)
			usage_error(cmd, "--kernel names a ready bzImage; 'kernel build' builds one (drop --kernel)");
		char *bz = lab_kbuild_run(&o);
		printf("%s\n", bz);
		free(bz);
		return 0;
	}
	if (!strcmp(sub, "path")) {
		if (opt_kernel) {
			char *bz = lab_kernel_ensure();
			printf("%s\n", bz);
			free(bz);
			return 0;
		}
		char *bz = lab_kbuild_cached(&o, NULL);
		if (!bz)
			die_code(EXIT_NOINPUT, "kernel not built; run 'crashlab kernel build'");
		printf("%s\n", bz);
		free(bz);
		return 0;
	}
	if (!strcmp(sub, "test"))
		return kernel_test(&o, fs, accel);
	usage_error(cmd, "unknown subcommand '%s' (try 'build', 'path' or 'test')", sub);
}

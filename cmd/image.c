/*
 * image.c - `crashlab image`: build the guest initramfs, make base disk
 * images, show where the initramfs is. The work is in images/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/fs.h"
#include "images/basedisk.h"
#include "images/initramfs.h"

static const char image_usage[] =
	"usage: crashlab image build\n"
	"   or: crashlab image base --fs FS [--size SIZE] [--mkfs-opts OPTS]\n"
	"   or: crashlab image path\n"
	"\n"
	"Make what the guest boots from and the disks it tests; each result is\n"
	"cached and its path printed.\n"
	"\n"
	"subcommands:\n"
	"  build   pack the agent, busybox, the mkfs/fsck/dmsetup tools and every\n"
	"          library they load into the guest initramfs (rebuilt only when\n"
	"          one of those files changes)\n"
	"  base    make an empty FS image (ext4, xfs, btrfs or f2fs) with the host's\n"
	"          own mkfs, without root and without mounting it\n"
	"  path    print the initramfs path if it is built for the current inputs\n";

static const char base_usage[] =
	"usage: crashlab image base --fs FS [--size SIZE] [--mkfs-opts OPTS]\n"
	"\n"
	"Make (or find in the cache) an empty base image of file system FS with the\n"
	"host's mkfs, and print its path. The cache key is the file system, the mkfs\n"
	"version, the options and the size. xfs needs at least 300M.\n";

static const char build_usage[] =
	"usage: crashlab image build\n"
	"\n"
	"Build the guest initramfs (a gzip newc cpio) unless the cache already has\n"
	"it for the current agent, tools and libraries, and print its path.\n";

static const char path_usage[] =
	"usage: crashlab image path\n"
	"\n"
	"Print the path of the guest initramfs if it is built for the current\n"
	"inputs; exit 66 if it is not ('crashlab image build' makes it).\n";

static const struct opt no_opts[] = { { OPT_END, 0, NULL, NULL, NULL, NULL } };

static int image_base(int argc, char **argv, struct cmd_ctx *ctx)
{
	const char *fs = NULL, *size_arg = NULL, *mkfs_opts = NULL;
	const struct opt opts[] = {
		{ OPT_STRING, 0, "fs", &fs, "FS", "file system: ext4, xfs, btrfs or f2fs" },
		{ OPT_STRING, 0, "size", &size_arg, "SIZE", "image size with K/M/G suffix (default 512M)" },
		{ OPT_STRING, 0, "mkfs-opts", &mkfs_opts, "OPTS", "extra mkfs options, e.g. \"-O ^has_journal\"" },
		{ OPT_END, 0, NULL, NULL, NULL, NULL },
	};
	if (cmd_parse(ctx, argc, argv, opts, base_usage, 0) != 0)
		usage_error(ctx->name, "unexpected argument");
	if (!fs)
		usage_error(ctx->name, "which file system? give --fs (%s)", fs_names_text());
	struct strvec one = STRVEC_INIT;
	struct errbuf e;
	if (fs_split(fs, &one, &e) < 0 || one.n != 1)
		usage_error(ctx->name, "%s", one.n > 1 ? "give one file system" : e.msg);
	strvec_free(&one);
	long long size = size_arg ? cmd_size(ctx, size_arg) : IMG_BASE_DEFAULT_SIZE;
	char *path = img_base_ensure(fs, size, mkfs_opts, &e);
	if (!path)
		die_err(&e);
	printf("%s\n", path);
	free(path);
	return 0;
}

int cmd_image(int argc, char **argv, struct cmd_ctx *ctx)
{
	int n = cmd_parse(ctx, argc, argv, no_opts, image_usage, OPT_STOP_AT_NONOPT);
	if (n == 0)
		usage_error(ctx->name, "which subcommand? build, base or path");
	const char *sub = argv[0];
	cmd_name_sub(ctx, sub);
	const char *name = ctx->name;
	int ret = 0;
	struct errbuf e;
	if (!strcmp(sub, "base")) {
		ret = image_base(n, argv, ctx);
	} else if (!strcmp(sub, "build")) {
		if (cmd_parse(ctx, n, argv, no_opts, build_usage, 0) != 0)
			usage_error(name, "'build' takes no arguments");
		char *path = img_initramfs_ensure(&e);
		if (!path)
			die_err(&e);
		printf("%s\n", path);
		free(path);
	} else if (!strcmp(sub, "path")) {
		if (cmd_parse(ctx, n, argv, no_opts, path_usage, 0) != 0)
			usage_error(name, "'path' takes no arguments");
		char *path = img_initramfs_cached();
		if (!path)
			die_code(EXIT_NOINPUT, "the guest initramfs is not built for the current inputs; run 'crashlab image build'");
		printf("%s\n", path);
		free(path);
	} else {
		usage_error("crashlab image", "unknown subcommand '%s'; use build, base or path", sub);
	}
	return ret;
}

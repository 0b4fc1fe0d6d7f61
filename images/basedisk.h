/*
 * basedisk.h - base disk images made on the host with the real mkfs, one
 * per (file system, mkfs version, options, size), cached; and what the guest
 * runs to check each file system read-only.
 */
#ifndef CRASHLAB_BASEDISK_H
#define CRASHLAB_BASEDISK_H

#include <stdbool.h>

/* The supported file systems, NULL-terminated: ext4, xfs, btrfs, f2fs. */
extern const char *const img_fs_names[];

/* Default base image size (512 MiB). */
#define IMG_BASE_DEFAULT_SIZE (512LL << 20)
/* mkfs.xfs refuses images smaller than this. */
#define IMG_XFS_MIN_SIZE (300LL << 20)

/* 1 if fs is one of img_fs_names, else 0. */
int img_fs_valid(const char *fs);

/* "ext4, xfs, btrfs, f2fs", for messages. */
const char *img_fs_list(void);

/* Split a --fs value ("ext4,xfs" or "all") into out; an unknown or empty
 * list is a usage error of command cmd (exit 2). */
struct strvec;
void img_fs_split(const char *cmd, const char *list, struct strvec *out);

/*
 * Return the path (malloc'd) of the cached base image for fs, size bytes
 * and the extra mkfs options (NULL or "" for none), making it first if
 * needed. Dies with EXIT_USAGE (unknown fs, bad size, xfs under 300 MiB),
 * EXIT_NOINPUT (mkfs missing), EXIT_BUILD (mkfs failed; its own message is
 * shown and no file is left) or EXIT_CANTCREAT (cache not writable).
 */
char *img_base_ensure(const char *fs, long long size, const char *mkfs_opts);

/*
 * The guest command that checks fs read-only, without the device to append,
 * NULL-terminated (e.g. {"e2fsck", "-fn", NULL}); NULL for an unknown fs.
 * ext4: e2fsck -fn, xfs: xfs_repair -n, btrfs: btrfs check --readonly,
 * f2fs: fsck.f2fs --dry-run (a full check that never writes).
 */
const char *const *img_fsck_argv(const char *fs);

/*
 * Whether the fsck exit status means "clean". All four exit 0 for a clean
 * file system; on damage e2fsck -n and fsck.f2fs --dry-run exit 4,
 * xfs_repair -n and btrfs check exit 1; 8 (e2fsck) or 255 (fsck.f2fs) mean
 * the check itself could not run.
 */
bool img_fsck_clean(const char *fs, int status);

/*
 * Helpers shared by the image builders: the temporary name a cache entry is
 * written under before the rename (path + ".tmp.<pid>"), and removal of such
 * leftovers in dir whose process is gone.
 */
char *img_tmp_name(const char *path);
void img_tmp_sweep(const char *dir);

#endif

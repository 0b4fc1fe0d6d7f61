/*
 * fs.h - the one table of file systems under test: how each is made (the
 * host's mkfs and the Debian package shipping it), checked (its read-only
 * fsck in the guest, and which exit status means clean), how small it may
 * be, and which guarantee model documents it; and the --fs list.
 * libc only.
 */
#ifndef CRASHLAB_CORE_FS_H
#define CRASHLAB_CORE_FS_H

#include <stdbool.h>

#include "core/util.h"

struct fs_type {
	const char *name;                /* "ext4": the mount type and the --fs word */
	const char *mkfs;                /* the host program that makes it */
	const char *package;             /* the Debian package shipping mkfs and fsck */
	const char *const mkfs_args[3];  /* before the user's options */
	const char *version_arg;         /* makes mkfs print its version */
	const char *const fsck[4];       /* read-only check in the guest, without the device */
	long long min_size;              /* mkfs refuses smaller images (0: no limit) */
	const char *model;               /* its documented guarantee model (judge/models.h) */
};

#define FS_COUNT 4
extern const struct fs_type fs_types[FS_COUNT];

/* The entry of name, or NULL. */
const struct fs_type *fs_lookup(const char *name);
/* "ext4, xfs, btrfs, f2fs", for messages. */
const char *fs_names_text(void);
/* Split a --fs value ("ext4,xfs" or "all") into out, in the order given,
 * without repeats. An unknown or empty name is -1 with e (2), suggesting the
 * nearest name. */
int fs_split(const char *list, struct strvec *out, struct errbuf *e);
/* Does the fsck exit status mean clean? All four exit 0 when clean; on damage
 * e2fsck -n and fsck.f2fs --dry-run exit 4, xfs_repair -n and btrfs check 1;
 * 8 (e2fsck) or 255 (fsck.f2fs) mean the check itself could not run. */
bool fs_fsck_clean(const struct fs_type *t, int status);
/* fsck's output without what says nothing about the state and differs from
 * machine to machine: the kernel version strings fsck.f2fs prints (the one
 * mkfs ran under is the host's, stored in the superblock) and its run time.
 * In place; returns text. */
char *fs_fsck_filter(char *text);
/* The fsck command as one space-joined line (malloc'd), for the checker guest. */
char *fs_fsck_line(const struct fs_type *t);

#endif

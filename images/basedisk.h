/*
 * basedisk.h - base disk images made on the host with the real mkfs (the
 * file system table is core/fs.h), one per (file system, mkfs version,
 * options, size), cached.
 */
#ifndef CRASHLAB_IMAGES_BASEDISK_H
#define CRASHLAB_IMAGES_BASEDISK_H

#include "core/fs.h"

/* Default base image size (512 MiB). */
#define IMG_BASE_DEFAULT_SIZE (512LL << 20)

/*
 * The path (malloc'd) of the cached base image for fs, size bytes and the
 * extra mkfs options (NULL or "" for none), made first if needed. NULL with
 * e: 2 (unknown fs, bad size, smaller than the fs allows), 66 (mkfs
 * missing), 71 (mkfs failed; its own message is quoted and no file is left)
 * or 73 (cache not writable, disk full).
 */
char *img_base_ensure(const char *fs, long long size, const char *mkfs_opts, struct errbuf *e);

#endif

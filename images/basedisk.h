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

/*
 * A disk of regions for a guest that lives across recordings: region k
 * (1 <= k <= regions) is bytes [k * stride, k * stride + size) and holds a
 * copy of the base image at base_path (size bytes); region 0 and every gap
 * are holes, so the disk has no partition table. stride is size rounded up
 * to 1 MiB. The path (malloc'd) of the cached file, made first from the
 * base's non-zero 4 KiB blocks (a few hundred KiB for a fresh file system:
 * the file costs little whatever the count), or NULL with e (73: cache not
 * writable, disk full). Beside the base, named after it and the count.
 */
#define IMG_REGION_ALIGN (1LL << 20)
long long img_region_stride(long long size);
char *img_regions_ensure(const char *base_path, long long size, int regions, struct errbuf *e);

#endif

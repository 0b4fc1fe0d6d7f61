/*
 * initramfs.h - the guest's root file system: the agent as /init, busybox,
 * the real mkfs/fsck/dmsetup tools and every shared library they load,
 * packed as a gzip-compressed newc cpio and cached by content hash.
 */
#ifndef CRASHLAB_IMAGES_INITRAMFS_H
#define CRASHLAB_IMAGES_INITRAMFS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/util.h"

/* One host program the guest image carries. */
struct img_tool {
	const char *name;     /* program name, found with find_program() (busybox: /bin/busybox first) */
	const char *package;  /* the Debian package that ships it */
	bool optional;        /* the image is built without it when it is absent */
};

/* The table of tools (busybox included), in image order; *n receives its length. */
const struct img_tool *img_tools(size_t *n);

/* project_root()/images/agent/crashlab-agent, whether or not it exists yet. */
char *img_agent_path(void);

/*
 * Build the initramfs for the current inputs unless the cache has it, and
 * return its path (malloc'd); NULL with e: 66 for a missing agent, tool or
 * library, 73 when the cache cannot be written.
 */
char *img_initramfs_ensure(struct errbuf *e);

/* The path if the initramfs for the current inputs is already built, else NULL. Never builds. */
char *img_initramfs_cached(void);

#endif

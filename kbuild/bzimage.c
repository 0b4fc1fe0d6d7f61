/*
 * bzimage.c - the x86 boot header of a bzImage: is it one, and which kernel version it carries.
 */
#include "kbuild/kb.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- bzImage header ---- */

int kernel_check(const char *path)
{
	unsigned char hdr[0x210];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
	int e = errno;
	close(fd);
	if (n < 0 && e != EISDIR) {
		errno = e;
		return -1;
	}
	if (n < (ssize_t)sizeof(hdr) || hdr[0x1FE] != 0x55 || hdr[0x1FF] != 0xAA ||
	    memcmp(hdr + 0x202, "HdrS", 4)) {
		errno = ENOEXEC;
		return -1;
	}
	return 0;
}

const char *kernel_version(const char *bzimage)
{
	static struct { char *path, *version; } seen[8];
	static unsigned next;
	for (unsigned i = 0; i < 8; i++)
		if (seen[i].path && !strcmp(seen[i].path, bzimage))
			return seen[i].version;
	if (kernel_check(bzimage) < 0)
		return NULL;
	int fd = open(bzimage, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	unsigned char hdr[0x210];
	char buf[257];
	char *version = NULL;
	if (pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr)) {
		unsigned proto = hdr[0x206] | (unsigned)hdr[0x207] << 8;
		unsigned off = hdr[0x20E] | (unsigned)hdr[0x20F] << 8;
		ssize_t n = off && proto >= 0x200 ? pread(fd, buf, sizeof(buf) - 1, (off_t)off + 0x200) : -1;
		if (n > 0) {
			buf[n] = '\0';
			size_t len = strlen(buf);
			bool printable = len > 0 && len < (size_t)n;
			for (size_t i = 0; i < len; i++)
				if (!isprint((unsigned char)buf[i]))
					printable = false;
			if (printable)
				version = xstrdup(buf);
		}
	}
	close(fd);
	if (!version)
		return NULL;
	unsigned slot = next++ % 8;
	free(seen[slot].path);
	seen[slot].path = xstrdup(bzimage);
	seen[slot].version = version;   /* the old one leaks: callers may still hold it */
	return version;
}

/* ---- cache key ---- */

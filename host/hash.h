/*
 * hash.h - SHA-256 (libcrypto) as lowercase hex, incremental, for the
 * cache keys of kernels, images and base disks.
 */
#ifndef CRASHLAB_HOST_HASH_H
#define CRASHLAB_HOST_HASH_H

#include <stddef.h>

struct hasher;
struct hasher *hasher_new(void);
void hasher_add(struct hasher *h, const void *data, size_t n);
void hasher_adds(struct hasher *h, const char *s);       /* the string and a NUL separator */
int hasher_add_file(struct hasher *h, const char *path);  /* -1 + errno */
/* Finish: 64 hex chars + NUL into out; frees h. */
void hasher_done(struct hasher *h, char out[65]);

#endif

/*
 * hmap.h - the one hash map: 64-bit hashes to indices.
 *
 * The map stores (hash, index) pairs in open addressing; the objects live
 * in the caller's own array and the index names one. A lookup visits every
 * pair with the hash asked for and lets the caller's eq() decide, so keys
 * of any shape (bytes, fields, specs) share this one table:
 *
 *     size_t i = hmap_get(&m, h, same_name, &key);
 *     if (i == HMAP_NONE) { i = n++; ...; hmap_put(&m, h, i); }
 *
 * libc only (the guest agent links core/).
 */
#ifndef CRASHLAB_CORE_HMAP_H
#define CRASHLAB_CORE_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define HMAP_NONE ((size_t)-1)

struct hmap_slot {
	uint64_t hash;
	size_t idx;              /* HMAP_NONE: empty */
};

struct hmap {
	struct hmap_slot *slot;
	size_t cap, n;           /* slots (a power of two, or 0), pairs stored */
};
#define HMAP_INIT { NULL, 0, 0 }

/* Does the object at idx equal the key? */
typedef int (*hmap_eq_fn)(const void *key, size_t idx, void *ctx);

/* The index stored under hash whose object eq() accepts, or HMAP_NONE.
 * eq may be NULL: the first index stored under hash. */
size_t hmap_get(const struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *key, void *ctx);
/* Store (hash, idx); a second pair with the same hash is kept beside the first. */
void hmap_put(struct hmap *m, uint64_t hash, size_t idx);
void hmap_free(struct hmap *m);

/* A good 64-bit mix of up to three integers (for field-like keys). */
uint64_t hmap_mix(uint64_t a, uint64_t b, uint64_t c);

#endif

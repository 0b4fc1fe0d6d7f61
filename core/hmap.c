/* hmap.c - see hmap.h. Linear probing over a power-of-two table kept at most half full. */
#include "core/hmap.h"

#include <stdlib.h>

#include "core/util.h"

static size_t home(const struct hmap *m, uint64_t hash)
{
	return (size_t)(hash ^ (hash >> 29)) & (m->cap - 1);
}

size_t hmap_get(const struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *key, void *ctx)
{
	if (!m->cap)
		return HMAP_NONE;
	for (size_t i = home(m, hash);; i = (i + 1) & (m->cap - 1)) {
		const struct hmap_slot *s = &m->slot[i];
		if (s->idx == HMAP_NONE)
			return HMAP_NONE;
		if (s->hash == hash && (!eq || eq(key, s->idx, ctx)))
			return s->idx;
	}
}

static void insert(struct hmap *m, uint64_t hash, size_t idx)
{
	size_t i = home(m, hash);
	while (m->slot[i].idx != HMAP_NONE)
		i = (i + 1) & (m->cap - 1);
	m->slot[i].hash = hash;
	m->slot[i].idx = idx;
}

void hmap_put(struct hmap *m, uint64_t hash, size_t idx)
{
	if (2 * (m->n + 1) > m->cap) {
		struct hmap_slot *old = m->slot;
		size_t oc = m->cap;
		m->cap = oc ? 2 * oc : 64;
		m->slot = xmalloc(m->cap * sizeof(*m->slot));
		for (size_t i = 0; i < m->cap; i++)
			m->slot[i].idx = HMAP_NONE;
		for (size_t i = 0; i < oc; i++)
			if (old[i].idx != HMAP_NONE)
				insert(m, old[i].hash, old[i].idx);
		free(old);
	}
	insert(m, hash, idx);
	m->n++;
}

void hmap_free(struct hmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->n = 0;
}

uint64_t hmap_mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 1) * 0xc2b2ae3d27d4eb4fULL ^ c * 0x165667b19e3779f9ULL;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 27);
}

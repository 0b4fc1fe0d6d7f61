/*
 * wlog-key.c - content keys of crash states (wlog.h, "Content keys").
 *
 * The keyer holds one 128-bit hash per 512-byte sector of every write's
 * data (h[], an entry's sectors contiguous from first[entry]) and the map
 * sector -> content of the state it last built: a two-level table of
 * 4096-sector chunks allocated on first touch, each slot 0 (untouched),
 * 1 (zeros: a discard) or 2 + an index into h[]. The key's sums are kept
 * up to date as slots change, so a key is read off in O(1) once the
 * state's entries are applied; a state's add list is applied with an undo
 * list and taken back, leaving the prefix for the next state.
 *
 * Reorder states draw many subsets of one epoch's entries over the same
 * prefix. When a state's adds name pairwise disjoint sectors, each add
 * changes the key by what it changes over the prefix alone, so that delta
 * is computed once per (prefix, entry) and the state's key is the prefix's
 * plus its adds' deltas: a state costs its number of adds, not its sectors.
 * Adds that overlap (a later one overwriting an earlier one) and torn adds
 * are applied sector by sector.
 */
#include "core/wlog.h"
#include "core/wlog-priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC WLOG_SECTOR
#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS (1u << 22)  /* 2^34 sectors: 8 TiB of disk */
#define MAX_NAMED (1ull << 27) /* sectors the log's writes and discards name, in all: 64 GiB */
#define SLOT_ZERO 1u
#define SLOT_DATA 2u

struct h128 {
	uint64_t a, b;
};

struct undo {
	uint64_t sector;
	uint32_t old;
};

/* What applying one whole entry over the current prefix adds to the sums. */
struct delta {
	uint64_t a, b, n;       /* n: sectors it newly touches (mod 2^64: may be "negative") */
	uint64_t gen;           /* valid when it equals the keyer's gen */
};

struct range {
	uint64_t start, end;    /* 512-byte sectors [start, end) */
	size_t j;               /* the add's index in the spec */
};

struct wlog_keyer {
	const struct wlog *l;
	uint64_t *first;        /* per entry: index in h of its first sector (writes) */
	struct h128 *h;
	size_t nh;
	struct h128 zero;       /* the hash of a sector of zeros */
	uint32_t **chunk;       /* nchunks chunks of CHUNK slots, NULL until touched */
	size_t nchunks;
	uint64_t prefix;        /* entries [0, prefix) are in the map */
	uint64_t a, b, n;       /* the set hash of the map */
	struct undo *undo;
	size_t nundo, undo_cap;
	struct delta *delta;    /* per entry, for the current prefix */
	uint64_t gen;           /* bumped whenever the prefix changes */
	struct range *ranges;
	size_t ranges_cap;
	int oom;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/* Two independent 64-bit lanes over the sector's 64 words (xxh64's round
 * with different primes and seeds), each finished with the other's state. */
static void sector_hash(const unsigned char *p, struct h128 *out)
{
	uint64_t a = 0x243f6a8885a308d3ULL, b = 0x13198a2e03707344ULL;
	for (size_t i = 0; i < SEC; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		a = rotl(a + w * 0xc2b2ae3d27d4eb4fULL, 31) * 0x9e3779b185ebca87ULL;
		b = rotl(b ^ (w * 0x165667b19e3779f9ULL), 27) * 0x85ebca77c2b2ae63ULL + 0x27d4eb2f165667c5ULL;
	}
	out->a = mix64(a ^ mix64(b + 1));
	out->b = mix64(b ^ mix64(a + 2));
}

static const struct h128 *slot_hash(const struct wlog_keyer *k, uint32_t v)
{
	return v == SLOT_ZERO ? &k->zero : &k->h[v - SLOT_DATA];
}

/* What (sector, content) adds to each lane of the set hash. */
static void contrib(const struct wlog_keyer *k, uint64_t sector, uint32_t v, uint64_t *ca, uint64_t *cb)
{
	const struct h128 *h = slot_hash(k, v);
	uint64_t s = mix64(sector + 0x9e3779b97f4a7c15ULL);
	*ca = mix64(h->a ^ s);
	*cb = mix64(h->b + rotl(s, 29) + 0x632be59bd9b4e019ULL);
}

/* Set a sector's slot to v (0: untouched again), keeping the sums; with
 * undo, remember what it held. */
static void set_slot(struct wlog_keyer *k, uint64_t sector, uint32_t v, int undo)
{
	uint64_t c = sector >> CHUNK_BITS;
	if (!k->chunk[c]) {
		if (!v)
			return;
		k->chunk[c] = calloc(CHUNK, sizeof(uint32_t));
		if (!k->chunk[c]) {
			k->oom = 1;
			return;
		}
	}
	uint32_t *slot = &k->chunk[c][sector & (CHUNK - 1)];
	uint32_t old = *slot;
	if (old == v)
		return;
	uint64_t ca, cb;
	if (old) {
		contrib(k, sector, old, &ca, &cb);
		k->a -= ca;
		k->b -= cb;
		k->n--;
	}
	if (v) {
		contrib(k, sector, v, &ca, &cb);
		k->a += ca;
		k->b += cb;
		k->n++;
	}
	*slot = v;
	if (undo) {
		if (k->nundo == k->undo_cap) {
			size_t cap = k->undo_cap ? 2 * k->undo_cap : 4096;
			struct undo *nu = realloc(k->undo, cap * sizeof(*nu));
			if (!nu) {
				k->oom = 1;
				return;
			}
			k->undo = nu;
			k->undo_cap = cap;
		}
		k->undo[k->nundo++] = (struct undo){ sector, old };
	}
}

/* Apply entry i (whole, or only its torn pieces) to the map. */
static void apply_entry(struct wlog_keyer *k, uint64_t i, const struct wlog_tear *torn, size_t ntorn, int undo)
{
	const struct wlog_entry *e = &k->l->e[i];
	const uint64_t per = k->l->sectorsize / SEC;
	const uint64_t s0 = e->sector * per, m = e->nr_sectors * per;
	if (wlog_is_discard(e)) {
		for (uint64_t j = 0; j < m; j++)
			set_slot(k, s0 + j, SLOT_ZERO, undo);
		return;
	}
	if (!wlog_is_write(e))
		return;
	const uint64_t h0 = k->first[i];
	if (!ntorn) {
		for (uint64_t j = 0; j < m; j++)
			set_slot(k, s0 + j, (uint32_t)(SLOT_DATA + h0 + j), undo);
		return;
	}
	for (size_t t = 0; t < ntorn; t++)
		for (uint64_t j = torn[t].start; j < torn[t].start + torn[t].count; j++)
			set_slot(k, s0 + j, (uint32_t)(SLOT_DATA + h0 + j), undo);
}

/* The slot of a sector, 0 when untouched. */
static uint32_t get_slot(const struct wlog_keyer *k, uint64_t sector)
{
	const uint32_t *c = k->chunk[sector >> CHUNK_BITS];
	return c ? c[sector & (CHUNK - 1)] : 0;
}

/* Entry i's delta over the current prefix (computed on first use). */
static const struct delta *entry_delta(struct wlog_keyer *k, uint64_t i)
{
	struct delta *d = &k->delta[i];
	if (d->gen == k->gen)
		return d;
	const struct wlog_entry *e = &k->l->e[i];
	const uint64_t per = k->l->sectorsize / SEC;
	const uint64_t s0 = e->sector * per, m = wlog_changes_disk(e) ? e->nr_sectors * per : 0;
	*d = (struct delta){ .gen = k->gen };
	for (uint64_t j = 0; j < m; j++) {
		uint32_t old = get_slot(k, s0 + j);
		uint32_t v = wlog_is_discard(e) ? SLOT_ZERO : (uint32_t)(SLOT_DATA + k->first[i] + j);
		if (old == v)
			continue;
		uint64_t ca, cb;
		if (old) {
			contrib(k, s0 + j, old, &ca, &cb);
			d->a -= ca;
			d->b -= cb;
			d->n--;
		}
		contrib(k, s0 + j, v, &ca, &cb);
		d->a += ca;
		d->b += cb;
		d->n++;
	}
	return d;
}

static int cmp_range(const void *x, const void *y)
{
	const struct range *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Do the adds of s name pairwise disjoint sectors (a torn add counted whole)? */
static int adds_disjoint(struct wlog_keyer *k, const struct wlog_spec *s)
{
	if (s->nadd > k->ranges_cap) {
		struct range *nr = realloc(k->ranges, s->nadd * sizeof(*nr));
		if (!nr)
			return 0;
		k->ranges = nr;
		k->ranges_cap = s->nadd;
	}
	const uint64_t per = k->l->sectorsize / SEC;
	size_t n = 0;
	for (size_t j = 0; j < s->nadd; j++) {
		const struct wlog_entry *e = &k->l->e[s->add[j]];
		if (wlog_changes_disk(e))
			k->ranges[n++] = (struct range){ e->sector * per, (e->sector + e->nr_sectors) * per, j };
	}
	qsort(k->ranges, n, sizeof(*k->ranges), cmp_range);
	for (size_t j = 1; j < n; j++)
		if (k->ranges[j].start < k->ranges[j - 1].end)
			return 0;
	return 1;
}

static void reset(struct wlog_keyer *k)
{
	for (size_t c = 0; c < k->nchunks; c++)
		if (k->chunk[c])
			memset(k->chunk[c], 0, CHUNK * sizeof(uint32_t));
	k->prefix = 0;
	k->a = k->b = k->n = 0;
	k->gen++;
}

void wlog_keyer_free(struct wlog_keyer *k)
{
	if (!k)
		return;
	for (size_t c = 0; k->chunk && c < k->nchunks; c++)
		free(k->chunk[c]);
	free(k->chunk);
	free(k->first);
	free(k->h);
	free(k->undo);
	free(k->delta);
	free(k->ranges);
	free(k);
}

int wlog_keyer_new(const struct wlog *l, struct wlog_keyer **out, struct errbuf *eb)
{
	*out = NULL;
	const uint64_t per = l->sectorsize / SEC;
	uint64_t nh = 0, end = 0, named = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct wlog_entry *e = &l->e[i];
		if (!wlog_changes_disk(e))
			continue;
		if (wlog_is_write(e))
			nh += e->nr_sectors * per;
		if (e->nr_sectors > MAX_NAMED || (named += e->nr_sectors * per) > MAX_NAMED) {
			wlog_seterr(eb, "the log's writes and discards name more than %llu sectors: too many for content keys",
				    (unsigned long long)MAX_NAMED);
			return -1;
		}
		uint64_t last = (e->sector + e->nr_sectors) * per; /* bounded by wlog_open */
		if (last > end)
			end = last;
	}
	uint64_t nchunks = (end + CHUNK - 1) >> CHUNK_BITS;
	if (nchunks > MAX_CHUNKS) {
		wlog_seterr(eb, "the log writes up to byte %llu: too wide a disk for content keys",
			    (unsigned long long)(end * SEC));
		return -1;
	}
	struct wlog_keyer *k = calloc(1, sizeof(*k));
	unsigned char *buf = NULL;
	if (!k)
		goto oom;
	k->l = l;
	k->nchunks = (size_t)nchunks;
	k->first = calloc(l->n ? l->n : 1, sizeof(*k->first));
	k->h = malloc((nh ? nh : 1) * sizeof(*k->h));
	k->chunk = calloc(nchunks ? nchunks : 1, sizeof(*k->chunk));
	k->delta = calloc(l->n ? l->n : 1, sizeof(*k->delta));
	k->gen = 1;
	if (!k->first || !k->h || !k->chunk || !k->delta)
		goto oom;
	unsigned char zeros[SEC] = { 0 };
	sector_hash(zeros, &k->zero);
	size_t cap = 0;
	for (size_t i = 0; i < l->n; i++) {
		const struct wlog_entry *e = &l->e[i];
		if (!wlog_is_write(e))
			continue;
		k->first[i] = k->nh;
		uint64_t len = e->nr_sectors * l->sectorsize;
		for (uint64_t done = 0; done < len;) {
			size_t chunk = len - done > COPY_MAX ? COPY_MAX : (size_t)(len - done);
			if (chunk > cap) {
				free(buf);
				buf = malloc(chunk);
				cap = buf ? chunk : 0;
				if (!buf)
					goto oom;
			}
			if (wlog_pread_full(l->fd, buf, chunk, e->offset + done) < 0) {
				wlog_seterr(eb, "cannot read entry %zu from the log: %s", i, strerror(errno));
				free(buf);
				wlog_keyer_free(k);
				return -1;
			}
			for (size_t off = 0; off < chunk; off += SEC)
				sector_hash(buf + off, &k->h[k->nh++]);
			done += chunk;
		}
	}
	free(buf);
	*out = k;
	return 0;
oom:
	free(buf);
	wlog_keyer_free(k);
	wlog_seterr(eb, "out of memory for the content keys");
	return -1;
}

int wlog_state_key(struct wlog_keyer *k, const struct wlog_spec *s, struct wlog_key *key, struct errbuf *eb)
{
	if (wlog_check_spec(k->l, s, eb) < 0)
		return -1;
	if (s->prefix < k->prefix)
		reset(k);
	if (k->prefix < s->prefix)
		k->gen++;
	while (k->prefix < s->prefix)
		apply_entry(k, k->prefix++, NULL, 0, 0);
	k->nundo = 0;
	/* disjoint adds: whole ones by their deltas, torn ones applied (their
	 * sectors are no other add's, so the deltas stay true) */
	int fast = s->nadd > 0 && adds_disjoint(k, s);
	uint64_t a = 0, b = 0, n = 0;
	size_t t = 0;
	for (size_t j = 0; j < s->nadd; j++) {
		uint64_t i = s->add[j];
		while (t < s->ntorn && s->torn[t].entry < i)
			t++;
		size_t t0 = t;
		while (t < s->ntorn && s->torn[t].entry == i)
			t++;
		if (fast && t == t0) {
			const struct delta *d = entry_delta(k, i);
			a += d->a;
			b += d->b;
			n += d->n;
		} else {
			apply_entry(k, i, t > t0 ? s->torn + t0 : NULL, t - t0, 1);
		}
	}
	a += k->a;
	b += k->b;
	n += k->n;
	*key = (struct wlog_key){ mix64(a ^ 0x5851f42d4c957f2dULL), mix64(b + 0x14057b7ef767814fULL), n };
	/* back to the prefix, the last change undone first */
	while (k->nundo) {
		struct undo u = k->undo[--k->nundo];
		set_slot(k, u.sector, u.old, 0);
	}
	if (k->oom) {
		/* a slot or an undo record that could not be kept: the map is not to be trusted */
		k->oom = 0;
		reset(k);
		wlog_seterr(eb, "out of memory for the content keys");
		return -1;
	}
	return 0;
}

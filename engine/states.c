/*
 * states.c - crash-state enumeration over a scanned write log.
 *
 * Method. The log is cut into epochs by its flushes. Everything before a
 * flush was durable when the flush completed; the data entries (writes and
 * discards) logged after flush F_i and before F_{i+1} sat in the volatile
 * cache, and a power cut during that epoch may have kept any subset of them,
 * a multi-sector write possibly only in part. The entries before setup_end
 * (the setup phase, which ended with sync) are applied in every state, so the
 * first epoch starts at setup_end.
 *
 * A crash state is a spec (entries [0, prefix) plus an explicit add list,
 * with torn pieces) and a point, the log position that counts as reached:
 * an op recorded at position pos (the superblock count when it returned) is
 * completed iff pos <= point. A state of epoch i models a power cut at the
 * end of the epoch, just before F_{i+1} was issued, so every op that
 * returned while the count still read F_i + 1 had returned: point = F_i + 1
 * (never below setup_end); the final state, the disk with every entry after
 * the last op returned, has point = n.
 *
 *   flush:   for each epoch, the state with none of its cached writes, plus
 *            the final state;
 *   write:   every prefix k in [setup_end, n], the cache having kept the
 *            first writes in order (point: after the last flush before k);
 *   reorder: for each epoch, subsets of its data entries (bit j of a mask
 *            selects the epoch's j-th data entry), all 2^k when they fit the
 *            epoch's share of the budget, else the empty and full subsets and
 *            random distinct ones drawn with a random density (so near-empty
 *            and near-full subsets are drawn as often as half-full ones);
 *            torn states pick a random subset, tear one of its multi-sector
 *            writes (and each other one with probability 1/8) to a random
 *            nonempty proper subset of its 512-byte sectors.
 *
 * Two states are the same when they give the same disk and the same point:
 * the key is the point, the longest run of data entries applied in full from
 * the start, then every further applied data entry with its torn pieces
 * (flushes and marks change no data). A hash set over the keys emits each
 * state once. Randomness is splitmix64, one stream per epoch (or per torn
 * entry in write mode) derived from the seed, so a seed reproduces the
 * states exactly, and the budget given to one epoch does not change the
 * draws of another.
 */
#include "engine/states.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "core/util.h"

static const char *const mode_names[] = { "flush", "write", "reorder" };

int crash_mode_parse(const char *name, enum crash_mode *mode)
{
	for (int i = 0; i < 3; i++) {
		if (!strcmp(name, mode_names[i])) {
			*mode = (enum crash_mode)i;
			return 0;
		}
	}
	return -1;
}

const char *crash_mode_name(enum crash_mode mode)
{
	return (unsigned)mode < 3 ? mode_names[mode] : "unknown";
}

/* ---- randomness: splitmix64 ---- */

struct rng {
	uint64_t s;
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rng_next(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

/* An independent stream for (seed, stream, purpose). */
static void rng_init(struct rng *r, uint64_t seed, uint64_t stream, uint64_t purpose)
{
	r->s = mix64(seed ^ mix64(stream * 8 + purpose + 0x2545f4914f6cdd1dULL));
}

/* Uniform in [0, n), n > 0. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t lim = (0 - n) % n, x;
	do
		x = rng_next(r);
	while (x < lim);
	return x % n;
}

static double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	return mix64(fnv1a64(p, n));
}

/* A set of mask hashes: equal hash, same mask (64 bits of a random subset's bits). */
static int seen_add(struct hmap *seen, uint64_t h)
{
	if (hmap_get(seen, h, NULL, NULL, NULL) != HMAP_NONE)
		return 0;
	hmap_put(seen, h, 0);
	return 1;
}

/* ---- the generator: states with dedup ---- */

struct gen {
	const struct wlog *l;
	uint64_t setup_end;
	uint64_t seed;
	struct crash_state *st;
	size_t n, cap;
	struct sbuf *keys;       /* keys[i]: the dedup key of st[i] */
	size_t keys_cap;
	struct hmap map;         /* key -> index into st */
	struct sbuf key;
};

static void put64(struct sbuf *sb, uint64_t v)
{
	sbuf_add(sb, &v, sizeof(v));
}

/* The identity of a state: same key, same disk and same completed ops. */
static void make_key(const struct wlog *l, const struct wlog_spec *s, uint64_t point, struct sbuf *k)
{
	sbuf_reset(k);
	put64(k, point);
	uint64_t p = s->prefix;
	size_t j = 0, t = 0;
	while (p < l->n) {
		while (j < s->nadd && s->add[j] < p)
			j++;
		while (t < s->ntorn && s->torn[t].entry < p)
			t++;
		if (!wlog_changes_disk(&l->e[p])) {
			p++;
			continue;
		}
		int torn = t < s->ntorn && s->torn[t].entry == p;
		if (j < s->nadd && s->add[j] == p && !torn) {
			p++;
			continue;
		}
		break;
	}
	while (j < s->nadd && s->add[j] < p)
		j++;
	put64(k, p);
	for (; j < s->nadd; j++) {
		uint64_t i = s->add[j];
		if (!wlog_changes_disk(&l->e[i]))
			continue;
		put64(k, i);
		while (t < s->ntorn && s->torn[t].entry < i)
			t++;
		for (; t < s->ntorn && s->torn[t].entry == i; t++) {
			put64(k, s->torn[t].start);
			put64(k, s->torn[t].count);
		}
		put64(k, UINT64_MAX);
	}
}

static int same_key(const void *key, size_t idx, void *ctx)
{
	const struct sbuf *k = key, *o = &((const struct gen *)ctx)->keys[idx];
	return k->len == o->len && !memcmp(k->buf, o->buf, k->len);
}

/* Add a state, taking ownership of spec. 1 if added, 0 if a duplicate. */
static int emit(struct gen *g, struct wlog_spec *spec, uint64_t point, const char *kind)
{
	make_key(g->l, spec, point, &g->key);
	uint64_t h = hash_bytes(g->key.buf, g->key.len);
	size_t dup = hmap_get(&g->map, h, same_key, &g->key, g);
	if (dup != HMAP_NONE) {
		if (!strcmp(kind, "final"))
			snprintf(g->st[dup].kind, sizeof(g->st[dup].kind), "%s", kind);
		wlog_spec_free(spec);
		return 0;
	}
	ALLOC_GROW(g->st, g->n + 1, g->cap);
	ALLOC_GROW(g->keys, g->n + 1, g->keys_cap);
	struct crash_state *s = &g->st[g->n];
	memset(s, 0, sizeof(*s));
	s->idx = (int)g->n;
	s->spec = *spec;
	s->point = point;
	snprintf(s->kind, sizeof(s->kind), "%s", kind);
	int len = wlog_spec_format(spec, NULL, 0);
	s->text = xmalloc((size_t)len + 1);
	wlog_spec_format(spec, s->text, (size_t)len + 1);
	struct sbuf k = SBUF_INIT;
	sbuf_add(&k, g->key.buf, g->key.len);
	g->keys[g->n] = k;
	hmap_put(&g->map, h, g->n);
	g->n++;
	memset(spec, 0, sizeof(*spec));
	return 1;
}

static void emit_prefix(struct gen *g, uint64_t prefix, uint64_t point, const char *kind)
{
	struct wlog_spec s = { .prefix = prefix };
	emit(g, &s, point, kind);
}

static void gen_free(struct gen *g)
{
	for (size_t i = 0; i < g->n; i++)
		sbuf_free(&g->keys[i]);
	free(g->keys);
	hmap_free(&g->map);
	sbuf_free(&g->key);
}

/* The i-th of keep evenly spaced picks among count candidates (first and
 * last always kept). */
static size_t thin_index(size_t count, size_t keep, size_t i)
{
	if (keep >= count)
		return i;
	if (keep == 1)
		return count - 1;
	return (size_t)((uint64_t)i * (count - 1) / (keep - 1));
}

static int tearable(const struct wlog *l, size_t i)
{
	const struct wlog_entry *e = &l->e[i];
	return wlog_is_write(e) && e->nr_sectors * l->sectorsize / WLOG_SECTOR >= 2;
}

static void add_tear(struct wlog_spec *s, size_t *cap, uint64_t entry, uint64_t start, uint64_t count)
{
	if (s->ntorn == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		s->torn = xrealloc(s->torn, *cap * sizeof(*s->torn));
	}
	s->torn[s->ntorn++] = (struct wlog_tear){ entry, start, count };
}

static int cmp_tear_start(const void *a, const void *b)
{
	const struct wlog_tear *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Tear entry i: a random nonempty proper subset of its m 512-byte sectors,
 * uniform over all such subsets up to 64 sectors, else 1-4 random pieces of
 * at most m/4 sectors each. */
static void tear_entry(const struct wlog *l, size_t i, struct rng *r, struct wlog_spec *s, size_t *cap)
{
	uint64_t m = l->e[i].nr_sectors * l->sectorsize / WLOG_SECTOR;
	if (m <= 64) {
		uint64_t full = m == 64 ? UINT64_MAX : (1ULL << m) - 1;
		uint64_t x = 1 + rng_below(r, full - 1);
		for (uint64_t b = 0; b < m;) {
			if (!(x >> b & 1)) {
				b++;
				continue;
			}
			uint64_t start = b;
			while (b < m && (x >> b & 1))
				b++;
			add_tear(s, cap, i, start, b - start);
		}
		return;
	}
	struct wlog_tear p[4];
	int np = 1 + (int)rng_below(r, 4);
	uint64_t maxlen = m / 4;
	for (int k = 0; k < np; k++) {
		uint64_t start = rng_below(r, m);
		uint64_t room = m - start < maxlen ? m - start : maxlen;
		p[k] = (struct wlog_tear){ i, start, 1 + rng_below(r, room) };
	}
	qsort(p, (size_t)np, sizeof(p[0]), cmp_tear_start);
	int k = 0;
	for (int j = 1; j < np; j++) {
		if (p[j].start <= p[k].start + p[k].count) {
			uint64_t end = p[j].start + p[j].count;
			if (end > p[k].start + p[k].count)
				p[k].count = end - p[k].start;
		} else {
			p[++k] = p[j];
		}
	}
	np = k + 1;
	uint64_t covered = 0;
	for (k = 0; k < np; k++)
		covered += p[k].count;
	if (covered == m) /* four pieces tiling the write: keep it proper */
		p[np - 1].count--;
	for (k = 0; k < np; k++)
		if (p[k].count)
			add_tear(s, cap, i, p[k].start, p[k].count);
}

/* ---- flush mode ---- */

static void gen_flush(struct gen *g, size_t max)
{
	const struct wlog *l = g->l;
	size_t count = 2;
	for (size_t i = g->setup_end; i < l->n; i++)
		count += wlog_is_flush(&l->e[i]);
	uint64_t *cand = xmalloc(count * sizeof(*cand));
	size_t c = 0;
	cand[c++] = g->setup_end;
	for (size_t i = g->setup_end; i < l->n; i++)
		if (wlog_is_flush(&l->e[i]))
			cand[c++] = i + 1;
	cand[c++] = l->n;
	size_t keep = count < max ? count : max;
	for (size_t k = 0; k < keep; k++) {
		size_t j = thin_index(count, keep, k);
		if (j == count - 1)
			emit_prefix(g, l->n, l->n, "final");
		else
			emit_prefix(g, cand[j], cand[j], "flush");
	}
	free(cand);
}

/* ---- write mode ---- */

struct wcand {
	uint64_t k;
	int torn;
};

static void gen_write(struct gen *g, size_t max, int torn)
{
	const struct wlog *l = g->l;
	size_t count = 0, cap = 0;
	struct wcand *cand = NULL;
	for (uint64_t k = g->setup_end; k <= l->n; k++) {
		for (int t = 0; t < 2; t++) {
			if (t && !(torn && k < l->n && tearable(l, (size_t)k)))
				continue;
			if (count == cap) {
				cap = cap ? cap * 2 : 256;
				cand = xrealloc(cand, cap * sizeof(*cand));
			}
			cand[count++] = (struct wcand){ k, t };
		}
	}
	size_t keep = count < max ? count : max;
	uint64_t scan = 0, point = 0;
	for (size_t x = 0; x < keep; x++) {
		const struct wcand *c = &cand[thin_index(count, keep, x)];
		for (; scan < c->k; scan++)
			if (wlog_is_flush(&l->e[scan]))
				point = scan + 1;
		uint64_t pt = point > g->setup_end ? point : g->setup_end;
		if (!c->torn) {
			if (c->k == l->n)
				emit_prefix(g, l->n, l->n, "final");
			else
				emit_prefix(g, c->k, pt, "prefix");
			continue;
		}
		struct wlog_spec s = { .prefix = c->k, .nadd = 1 };
		s.add = xmalloc(sizeof(*s.add));
		s.add[0] = c->k;
		size_t tcap = 0;
		struct rng r;
		rng_init(&r, g->seed, c->k, 2);
		tear_entry(l, (size_t)c->k, &r, &s, &tcap);
		emit(g, &s, pt, "torn");
	}
	free(cand);
}

/* ---- reorder mode ---- */

struct epoch {
	uint64_t start, end;     /* entries [start, end); end is the next flush or n */
	size_t d0, k;            /* its data entries: data[d0 .. d0 + k) */
	size_t ntear;            /* how many of them are tearable writes */
	uint64_t demand;
	size_t alloc;
};

/* A subset of an epoch's data entries as a bit mask over k bits. */
struct mask {
	uint64_t *w;
	size_t nw;
};

static void mask_clear(struct mask *m)
{
	memset(m->w, 0, m->nw * sizeof(*m->w));
}

static int mask_get(const struct mask *m, size_t b)
{
	return (int)(m->w[b / 64] >> (b % 64) & 1);
}

static void mask_set(struct mask *m, size_t b)
{
	m->w[b / 64] |= 1ULL << (b % 64);
}

static void mask_random(struct mask *m, size_t k, struct rng *r)
{
	mask_clear(m);
	double p = rng_unit(r);
	for (size_t b = 0; b < k; b++)
		if (rng_unit(r) < p)
			mask_set(m, b);
}

static uint64_t mask_hash(const struct mask *m)
{
	return hash_bytes(m->w, m->nw * sizeof(*m->w));
}

struct reorder {
	struct gen *g;
	const uint64_t *data;    /* indices of all data entries after setup */
};

/* Emit the state "epoch e with the subset m" (kind "subset", or "flush" when
 * empty, or "final" for the last epoch's full subset). */
static void emit_subset(struct reorder *ro, const struct epoch *e, const struct mask *m)
{
	const struct wlog *l = ro->g->l;
	size_t pop = 0;
	for (size_t b = 0; b < e->k; b++)
		pop += (size_t)mask_get(m, b);
	if (pop == e->k && e->end == l->n) {
		emit_prefix(ro->g, l->n, l->n, "final");
		return;
	}
	struct wlog_spec s = { .prefix = e->start };
	if (pop) {
		s.add = xmalloc(pop * sizeof(*s.add));
		for (size_t b = 0; b < e->k; b++)
			if (mask_get(m, b))
				s.add[s.nadd++] = ro->data[e->d0 + b];
	}
	emit(ro->g, &s, e->start, pop ? "subset" : "flush");
}

static void gen_epoch(struct reorder *ro, const struct epoch *e, int torn)
{
	struct gen *g = ro->g;
	const struct wlog *l = g->l;
	size_t a = e->alloc;
	if (!a)
		return;
	size_t k = e->k;
	uint64_t sub = k >= 62 ? 1ULL << 62 : 1ULL << k;
	size_t nsub = a, ntorn = 0;
	if (torn && e->ntear) {
		nsub = a - a / 2;
		if (sub < nsub)
			nsub = (size_t)sub;
		ntorn = a - nsub;
		if (ntorn > sub)
			ntorn = (size_t)sub;
	} else if (sub < nsub) {
		nsub = (size_t)sub;
	}

	struct mask m = { xcalloc(k / 64 + 1, sizeof(uint64_t)), k / 64 + 1 };
	struct hmap seen = HMAP_INIT;
	size_t made = 0;
	/* The empty subset, then the full one. */
	mask_clear(&m);
	seen_add(&seen, mask_hash(&m));
	emit_subset(ro, e, &m);
	made++;
	if (made < nsub && k > 0) {
		for (size_t b = 0; b < k; b++)
			mask_set(&m, b);
		seen_add(&seen, mask_hash(&m));
		emit_subset(ro, e, &m);
		made++;
	}
	if (k <= 62 && sub <= nsub) {
		/* Exhaustive: every other mask in numeric order. */
		for (uint64_t x = 1; x + 1 < sub; x++) {
			m.w[0] = x;
			emit_subset(ro, e, &m);
			made++;
		}
	} else if (made < nsub) {
		struct rng r;
		rng_init(&r, g->seed, e->start, 0);
		size_t tries = 0, limit = 64 * nsub + 1024;
		while (made < nsub && tries++ < limit) {
			mask_random(&m, k, &r);
			if (seen_add(&seen, mask_hash(&m))) {
				emit_subset(ro, e, &m);
				made++;
			}
		}
		if (made < nsub && k <= 62) {
			/* A small epoch whose random draws kept colliding: walk the masks. */
			uint64_t x = rng_below(&r, sub);
			for (uint64_t step = 0; step < sub && made < nsub; step++, x = (x + 1) & (sub - 1)) {
				mask_clear(&m);
				m.w[0] = x;
				if (seen_add(&seen, mask_hash(&m))) {
					emit_subset(ro, e, &m);
					made++;
				}
			}
		}
	}
	hmap_free(&seen);

	if (ntorn) {
		struct rng r;
		rng_init(&r, g->seed, e->start, 1);
		size_t done = 0, tries = 0, limit = 64 * ntorn + 1024;
		size_t *sel = xmalloc((k ? k : 1) * sizeof(*sel));
		while (done < ntorn && tries++ < limit) {
			mask_random(&m, k, &r);
			size_t nsel = 0;
			for (size_t b = 0; b < k; b++)
				if (mask_get(&m, b) && tearable(l, (size_t)ro->data[e->d0 + b]))
					sel[nsel++] = b;
			if (!nsel) {
				/* Make sure a tearable write is in: the ntear-th one at random. */
				uint64_t want = rng_below(&r, e->ntear);
				for (size_t b = 0; b < k; b++) {
					if (!tearable(l, (size_t)ro->data[e->d0 + b]))
						continue;
					if (want-- == 0) {
						mask_set(&m, b);
						sel[nsel++] = b;
						break;
					}
				}
			}
			size_t first = (size_t)rng_below(&r, nsel);
			struct wlog_spec s = { .prefix = e->start };
			size_t pop = 0, tcap = 0;
			for (size_t b = 0; b < k; b++)
				pop += (size_t)mask_get(&m, b);
			s.add = xmalloc(pop * sizeof(*s.add));
			for (size_t b = 0; b < k; b++)
				if (mask_get(&m, b))
					s.add[s.nadd++] = ro->data[e->d0 + b];
			for (size_t x = 0; x < nsel; x++)
				if (x == first || rng_below(&r, 8) == 0)
					tear_entry(l, (size_t)ro->data[e->d0 + sel[x]], &r, &s, &tcap);
			if (wlog_spec_normalize(&s, NULL) < 0)
				BUG("torn spec not canonical");
			done += (size_t)emit(g, &s, e->start, "torn");
			wlog_spec_free(&s);
		}
		free(sel);
	}
	free(m.w);
}

static int cmp_demand(const void *a, const void *b)
{
	const struct epoch *x = *(const struct epoch *const *)a, *y = *(const struct epoch *const *)b;
	if (x->demand != y->demand)
		return x->demand < y->demand ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void gen_reorder(struct gen *g, size_t max, int torn)
{
	const struct wlog *l = g->l;
	size_t ne = 0, ecap = 0, nd = 0;
	struct epoch *ep = NULL;
	uint64_t *data = xmalloc((l->n - g->setup_end + 1) * sizeof(*data));
	for (uint64_t b = g->setup_end;;) {
		uint64_t end = b;
		while (end < l->n && !wlog_is_flush(&l->e[end]))
			end++;
		if (ne == ecap) {
			ecap = ecap ? ecap * 2 : 16;
			ep = xrealloc(ep, ecap * sizeof(*ep));
		}
		struct epoch *e = &ep[ne++];
		memset(e, 0, sizeof(*e));
		e->start = b;
		e->end = end;
		e->d0 = nd;
		for (uint64_t i = b; i < end; i++) {
			if (!wlog_changes_disk(&l->e[i]))
				continue;
			data[nd++] = i;
			e->k++;
			e->ntear += (size_t)tearable(l, (size_t)i);
		}
		uint64_t sub = e->k >= 62 ? 1ULL << 62 : 1ULL << e->k;
		e->demand = sub + (torn && e->ntear ? sub : 0);
		if (end == l->n)
			break;
		b = end + 1;
	}

	/* Max-min fair split of the budget, smallest demands first. */
	struct epoch **order = xmalloc(ne * sizeof(*order));
	for (size_t j = 0; j < ne; j++)
		order[j] = &ep[j];
	qsort(order, ne, sizeof(*order), cmp_demand);
	size_t left = max;
	for (size_t j = 0; j < ne; j++) {
		size_t share = (left + (ne - j) - 1) / (ne - j);
		order[j]->alloc = order[j]->demand < share ? (size_t)order[j]->demand : share;
		left -= order[j]->alloc;
	}
	free(order);

	struct reorder ro = { g, data };
	for (size_t j = 0; j < ne; j++)
		gen_epoch(&ro, &ep[j], torn);
	free(ep);
	free(data);
}

int states_enumerate(const struct wlog *l, uint64_t setup_end, enum crash_mode mode, uint64_t seed,
		     size_t max_states, int torn, struct crash_state **out, size_t *n, struct errbuf *e)
{
	*out = NULL;
	*n = 0;
	if (setup_end > l->n) {
		return errbuf_set(e, EXIT_DATAERR, "setup ends at entry %llu, beyond the log's %zu entries",
				  (unsigned long long)setup_end, l->n);
	}
	if ((unsigned)mode > CRASH_REORDER) {
		return errbuf_set(e, EXIT_SOFTWARE, "unknown crash mode %d", (int)mode);
	}
	if (!max_states)
		max_states = STATES_DEFAULT_MAX;
	struct gen g = { .l = l, .setup_end = setup_end, .seed = seed, .key = SBUF_INIT };
	switch (mode) {
	case CRASH_FLUSH:
		gen_flush(&g, max_states);
		break;
	case CRASH_WRITE:
		gen_write(&g, max_states, torn);
		break;
	case CRASH_REORDER:
		gen_reorder(&g, max_states, torn);
		break;
	}
	*out = g.st;
	*n = g.n;
	g.st = NULL;
	gen_free(&g);
	return 0;
}

void states_free(struct crash_state *st, size_t n)
{
	if (!st)
		return;
	for (size_t i = 0; i < n; i++) {
		wlog_spec_free(&st[i].spec);
		free(st[i].text);
	}
	free(st);
}

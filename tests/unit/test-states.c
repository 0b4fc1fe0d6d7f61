/* test-states.c - crash-state enumeration on synthetic logs (entries built in
 * memory): counts per mode, points, the budget, seeds, torn states, dedup,
 * and every spec's text parsing back to itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/states.h"
#include "tests/unit/check.h"

static struct wlog_entry ents[8192];

/* A log from a pattern: w = 4-sector write, s = 1-sector write,
 * d = discard, F = flush, m = mark. */
static void mk(struct wlog *l, const char *pat)
{
	memset(l, 0, sizeof(*l));
	l->sectorsize = 512;
	l->fd = -1;
	l->e = ents;
	uint64_t sector = 0, off = 512;
	for (const char *p = pat; *p; p++) {
		struct wlog_entry *e = &ents[l->n++];
		memset(e, 0, sizeof(*e));
		e->offset = off + 512;
		switch (*p) {
		case 'w':
			e->sector = sector;
			e->nr_sectors = 4;
			sector += 4;
			break;
		case 's':
			e->sector = sector++;
			e->nr_sectors = 1;
			break;
		case 'd':
			e->sector = sector;
			e->nr_sectors = 2;
			e->flags = WLOG_DISCARD;
			break;
		case 'F':
			e->flags = WLOG_FLUSH;
			break;
		case 'm':
			e->flags = WLOG_MARK;
			e->data_len = 3;
			break;
		}
		off += 512 + (wlog_is_write(e) ? e->nr_sectors * 512 : 0);
	}
	l->committed = l->n;
	l->cap = l->n;
}

static char *repeat(const char *head, const char *unit, int times, const char *tail)
{
	size_t n = strlen(head) + strlen(unit) * (size_t)times + strlen(tail) + 1;
	char *s = malloc(n);
	strcpy(s, head);
	for (int i = 0; i < times; i++)
		strcat(s, unit);
	strcat(s, tail);
	return s;
}

static size_t nstates;
static struct crash_state *st;

static int run(const struct wlog *l, uint64_t setup_end, enum crash_mode mode, uint64_t seed, size_t max,
	       int torn)
{
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	states_free(st, nstates);
	st = NULL;
	nstates = 0;
	if (states_enumerate(l, setup_end, mode, seed, max, torn, &st, &nstates, &eb) < 0) {
		printf("# enumerate: %s\n", err);
		return -1;
	}
	return (int)nstates;
}

static size_t count_kind(const char *kind)
{
	size_t k = 0;
	for (size_t i = 0; i < nstates; i++)
		k += !strcmp(st[i].kind, kind);
	return k;
}

/* Every text parses back to the same spec and formats to itself; indices
 * count up; no two states share text and point. */
static int all_consistent(void)
{
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	for (size_t i = 0; i < nstates; i++) {
		struct wlog_spec s;
		if (st[i].idx != (int)i || wlog_spec_parse(st[i].text, &s, &eb) < 0) {
			printf("# state %zu: '%s': %s\n", i, st[i].text, err);
			return 0;
		}
		int len = wlog_spec_format(&s, NULL, 0);
		char *t = malloc((size_t)len + 1);
		wlog_spec_format(&s, t, (size_t)len + 1);
		int same = !strcmp(t, st[i].text) && s.prefix == st[i].spec.prefix && s.nadd == st[i].spec.nadd &&
			   s.ntorn == st[i].spec.ntorn &&
			   (!s.nadd || !memcmp(s.add, st[i].spec.add, s.nadd * sizeof(*s.add))) &&
			   (!s.ntorn || !memcmp(s.torn, st[i].spec.torn, s.ntorn * sizeof(*s.torn)));
		free(t);
		wlog_spec_free(&s);
		if (!same) {
			printf("# state %zu: '%s' does not round-trip\n", i, st[i].text);
			return 0;
		}
		for (size_t j = 0; j < i; j++) {
			if (st[j].point == st[i].point && !strcmp(st[j].text, st[i].text)) {
				printf("# states %zu and %zu are both '%s'\n", j, i, st[i].text);
				return 0;
			}
		}
	}
	return 1;
}

static char **texts(void)
{
	char **t = malloc((nstates + 1) * sizeof(*t));
	for (size_t i = 0; i < nstates; i++)
		t[i] = strdup(st[i].text);
	t[nstates] = NULL;
	return t;
}

static void free_texts(char **t)
{
	for (size_t i = 0; t[i]; i++)
		free(t[i]);
	free(t);
}

static int same_texts(char **a, char **b)
{
	size_t i = 0;
	for (; a[i] && b[i]; i++)
		if (strcmp(a[i], b[i]))
			return 0;
	return !a[i] && !b[i];
}

/* Torn pieces are inside their write, nonempty, and not the whole write. */
static int torn_ok(const struct wlog *l)
{
	for (size_t i = 0; i < nstates; i++) {
		const struct wlog_spec *s = &st[i].spec;
		if (!strcmp(st[i].kind, "torn") != !!s->ntorn)
			return 0;
		for (size_t t = 0; t < s->ntorn;) {
			uint64_t e = s->torn[t].entry, m = l->e[e].nr_sectors * l->sectorsize / 512, sum = 0;
			if (!wlog_spec_applies(s, e) || e < s->prefix || !wlog_is_write(&l->e[e]))
				return 0;
			for (; t < s->ntorn && s->torn[t].entry == e; t++) {
				if (s->torn[t].start + s->torn[t].count > m)
					return 0;
				sum += s->torn[t].count;
			}
			if (sum == 0 || sum >= m) {
				printf("# state %zu: '%s' tears %llu of %llu sectors\n", i, st[i].text,
				       (unsigned long long)sum, (unsigned long long)m);
				return 0;
			}
		}
	}
	return 1;
}

TEST(enumeration)
{
	struct wlog l;
	enum crash_mode mode;
	CHECK(crash_mode_parse("flush", &mode) == 0 && mode == CRASH_FLUSH &&
	      crash_mode_parse("write", &mode) == 0 && mode == CRASH_WRITE &&
	      crash_mode_parse("reorder", &mode) == 0 && mode == CRASH_REORDER &&
	      crash_mode_parse("Flush", &mode) < 0 && crash_mode_parse("", &mode) < 0,
	      "mode names parse");
	CHECK(!strcmp(crash_mode_name(CRASH_REORDER), "reorder") &&
	      !strcmp(crash_mode_name(CRASH_WRITE), "write"), "mode names print");

	/* setup: w w F | run: w w F, w F, w w w F, w w  (n = 14, setup_end = 3) */
	mk(&l, "wwF" "wwF" "wF" "wwwF" "ww");
	CHECK(run(&l, 3, CRASH_FLUSH, 1, 0, 0) == 5, "flush: setup flush + 3 flushes + final = 5 (%zu)", nstates);
	uint64_t fp[] = { 3, 6, 8, 12, 14 };
	int ok = nstates == 5;
	for (size_t i = 0; ok && i < 5; i++)
		ok = st[i].spec.prefix == fp[i] && st[i].point == fp[i] && !st[i].spec.nadd &&
		     !strcmp(st[i].kind, i == 4 ? "final" : "flush");
	CHECK(ok, "flush: prefixes and points 3 6 8 12, final 14");
	CHECK(all_consistent(), "flush: specs round-trip");
	CHECK(state_completed(&st[1], 6) && !state_completed(&st[1], 8) && state_completed(&st[4], 14),
	      "completed iff position <= point");
	CHECK(run(&l, 3, CRASH_FLUSH, 1, 0, 1) == 5 && count_kind("torn") == 0, "flush mode ignores torn");
	CHECK(run(&l, 0, CRASH_FLUSH, 1, 0, 0) == 6 && st[0].spec.prefix == 0 && st[0].point == 0,
	      "setup_end 0: the base image first");

	CHECK(run(&l, 3, CRASH_WRITE, 1, 0, 0) == 14 - 3 + 1, "write: n - setup_end + 1 = 12 (%zu)", nstates);
	uint64_t wp[] = { 3, 3, 3, 6, 6, 8, 8, 8, 8, 12, 12, 14 };
	ok = nstates == 12;
	for (size_t i = 0; ok && i < 12; i++)
		ok = st[i].spec.prefix == 3 + i && st[i].point == wp[i] &&
		     !strcmp(st[i].kind, i == 11 ? "final" : "prefix");
	CHECK(ok, "write: prefix k, point after the last flush before k");
	CHECK(all_consistent(), "write: specs round-trip");
	CHECK(run(&l, 3, CRASH_WRITE, 1, 0, 1) == 12 + 8 && count_kind("torn") == 8 && torn_ok(&l),
	      "write + torn: one torn state per multi-sector write after setup (%zu)", nstates);
	CHECK(all_consistent(), "write + torn: specs round-trip");
	ok = 1;
	for (size_t i = 0; i < nstates; i++)
		if (!strcmp(st[i].kind, "torn"))
			ok &= st[i].spec.nadd == 1 && st[i].spec.add[0] == st[i].spec.prefix &&
			      !strcmp(st[i - 1].kind, "prefix") && st[i - 1].spec.prefix == st[i].spec.prefix &&
			      st[i - 1].point == st[i].point;
	CHECK(ok, "write + torn: the torn state follows its prefix, same point");

	CHECK(run(&l, 3, CRASH_REORDER, 1, 0, 0) == 4 + 2 + 8 + 4, "reorder: 2^k per epoch, 18 (%zu)", nstates);
	CHECK(count_kind("flush") == 4 && count_kind("final") == 1 && count_kind("subset") == 13,
	      "reorder kinds: 4 empty subsets, 1 final, 13 subsets");
	ok = 1;
	for (size_t i = 0; i < nstates; i++) {
		uint64_t start = st[i].spec.prefix;
		if (!strcmp(st[i].kind, "final"))
			ok &= start == 14 && st[i].point == 14;
		else
			ok &= (start == 3 || start == 6 || start == 8 || start == 12) && st[i].point == start;
		for (size_t j = 0; j < st[i].spec.nadd; j++)
			ok &= wlog_is_write(&l.e[st[i].spec.add[j]]) && st[i].spec.add[j] < start + 3;
	}
	CHECK(ok, "reorder: prefix = the epoch's start = point, adds are the epoch's writes");
	CHECK(all_consistent(), "reorder: specs round-trip, no duplicates");
	char **a = texts();
	CHECK(run(&l, 3, CRASH_REORDER, 999, 0, 0) == 18, "exhaustive enumeration does not depend on the seed");
	char **b = texts();
	CHECK(same_texts(a, b), "same states in the same order");
	free_texts(a);
	free_texts(b);

	/* Discards count as writes; marks are not; a trailing flush makes the final state. */
	mk(&l, "wF" "sdmsF");
	CHECK(run(&l, 2, CRASH_REORDER, 1, 0, 0) == 8 + 1 && count_kind("final") == 1,
	      "reorder: 3 data entries (discard included, mark not) = 8, + final after the last flush (%zu)",
	      nstates);
	CHECK(st[nstates - 1].spec.prefix == 7 && st[nstates - 1].point == 7, "final after a trailing flush");

	/* Dedup. */
	mk(&l, "wwF" "wF" "wF");
	CHECK(run(&l, 3, CRASH_FLUSH, 1, 0, 0) == 3 && !strcmp(st[2].kind, "final") && st[2].spec.prefix == 7,
	      "flush: a log ending in a flush has its last flush state as the final (%zu)", nstates);
	mk(&l, "wwF" "wmwmF" "w");
	CHECK(run(&l, 3, CRASH_WRITE, 1, 0, 0) == 5, "write: prefixes differing only by a mark are one state (%zu)",
	      nstates);
	CHECK(st[1].spec.prefix == 4 && st[2].spec.prefix == 6 && st[3].spec.prefix == 8 && st[3].point == 8,
	      "write: the first of equal prefixes is kept; a flush changes the point");
	CHECK(all_consistent(), "dedup: specs round-trip");

	/* The budget: a 20-write epoch next to a 2-write one. */
	char *pat = repeat("wF", "w", 20, "Fww");
	mk(&l, pat);
	free(pat);
	CHECK(run(&l, 2, CRASH_REORDER, 42, 100, 0) == 100, "reorder capped at 100 (%zu)", nstates);
	size_t big = 0, small = 0, empty = 0, full = 0;
	for (size_t i = 0; i < nstates; i++) {
		if (st[i].point == 2) {
			big++;
			empty += st[i].spec.nadd == 0;
			full += st[i].spec.nadd == 20;
		} else {
			small++;
		}
	}
	CHECK(big == 96 && small == 4 && empty == 1 && full == 1,
	      "the small epoch is exhaustive (4), the big one gets the rest (%zu) with its empty and full subsets",
	      big);
	CHECK(all_consistent(), "capped random subsets: distinct, round-trip");
	a = texts();
	run(&l, 2, CRASH_REORDER, 42, 100, 0);
	b = texts();
	CHECK(same_texts(a, b), "the same seed gives exactly the same states");
	free_texts(b);
	run(&l, 2, CRASH_REORDER, 43, 100, 0);
	b = texts();
	CHECK(!same_texts(a, b) && nstates == 100, "a different seed gives different states");
	free_texts(a);
	free_texts(b);
	size_t pops[21] = { 0 };
	run(&l, 2, CRASH_REORDER, 7, 1000, 0);
	for (size_t i = 0; i < nstates; i++)
		if (st[i].point == 2)
			pops[st[i].spec.nadd]++;
	CHECK(pops[1] + pops[2] + pops[3] > 20 && pops[17] + pops[18] + pops[19] > 20,
	      "random density: near-empty (%zu) and near-full (%zu) subsets are drawn", pops[1] + pops[2] + pops[3],
	      pops[17] + pops[18] + pops[19]);
	CHECK(run(&l, 2, CRASH_REORDER, 1, 0, 0) == STATES_DEFAULT_MAX, "max_states 0 means %d",
	      STATES_DEFAULT_MAX);

	/* A share just under 2^k: random draws, then a walk over the masks. */
	mk(&l, "wF" "www");
	CHECK(run(&l, 2, CRASH_REORDER, 5, 7, 0) == 7 && count_kind("final") == 1 && count_kind("flush") == 1,
	      "7 of the 8 subsets, empty and full among them (%zu)", nstates);
	CHECK(all_consistent(), "near-exhaustive random: distinct");
	CHECK(run(&l, 2, CRASH_REORDER, 5, 8, 0) == 8, "8 fit: exhaustive");

	/* Many epochs share the budget fairly. */
	pat = repeat("wF", "wwwwwF", 30, "");
	mk(&l, pat);
	free(pat);
	CHECK(run(&l, 2, CRASH_REORDER, 3, 100, 0) == 100, "30 epochs of 32 subsets, cap 100 (%zu)", nstates);
	size_t per[32] = { 0 }, lo = 1000, hi = 0;
	for (size_t i = 0; i < nstates; i++)
		per[(st[i].point - 2) / 6]++;
	for (int j = 0; j < 30; j++) {
		lo = per[j] < lo ? per[j] : lo;
		hi = per[j] > hi ? per[j] : hi;
	}
	CHECK(lo == 3 && hi == 4, "every epoch gets 3 or 4 states (%zu-%zu)", lo, hi);
	CHECK(run(&l, 2, CRASH_REORDER, 3, 20, 0) == 20, "fewer states than epochs: the cap still holds");

	/* The cap in flush mode: evenly spaced, first and final kept. */
	pat = repeat("wF", "wF", 50, "");
	mk(&l, pat);
	free(pat);
	CHECK(run(&l, 2, CRASH_FLUSH, 1, 10, 0) == 10 && st[0].spec.prefix == 2 && !strcmp(st[9].kind, "final"),
	      "flush capped at 10: first and final kept (%zu)", nstates);
	ok = 1;
	for (size_t i = 1; i < nstates; i++)
		ok &= st[i].spec.prefix > st[i - 1].spec.prefix;
	CHECK(ok, "capped flush states stay in log order");
	CHECK(run(&l, 2, CRASH_WRITE, 1, 7, 0) == 7 && st[0].spec.prefix == 2 && st[6].spec.prefix == l.n,
	      "write capped at 7: first and final kept");

	/* Torn states only with the flag, at 512-byte sectors of multi-sector writes. */
	mk(&l, "wwF" "wwF" "wF" "wwwF" "ww");
	CHECK(run(&l, 3, CRASH_REORDER, 11, 0, 0) == 18 && count_kind("torn") == 0, "no torn states without torn");
	CHECK(run(&l, 3, CRASH_REORDER, 11, 0, 1) == 36 && count_kind("torn") == 18,
	      "with torn: 2^k subsets + 2^k torn states per epoch (%zu, %zu torn)", nstates, count_kind("torn"));
	CHECK(torn_ok(&l), "torn pieces: nonempty proper subsets of the write's sectors, entries in add");
	CHECK(all_consistent(), "torn: specs round-trip, no duplicates");
	ok = 1;
	for (size_t i = 0; i < nstates; i++)
		if (!strcmp(st[i].kind, "torn"))
			ok &= st[i].point == st[i].spec.prefix;
	CHECK(ok, "torn states keep their epoch's point");
	a = texts();
	run(&l, 3, CRASH_REORDER, 11, 0, 1);
	b = texts();
	CHECK(same_texts(a, b), "torn: the same seed gives the same tears");
	free_texts(b);
	run(&l, 3, CRASH_REORDER, 12, 0, 1);
	b = texts();
	CHECK(!same_texts(a, b), "torn: another seed tears differently");
	free_texts(a);
	free_texts(b);
	CHECK(run(&l, 3, CRASH_REORDER, 11, 20, 1) == 20 && count_kind("torn") > 0 && torn_ok(&l),
	      "torn under a tight cap: %zu torn of 20", count_kind("torn"));
	mk(&l, "sF" "sss");
	CHECK(run(&l, 2, CRASH_REORDER, 1, 0, 1) == 8 && count_kind("torn") == 0,
	      "single-sector writes are never torn");
	/* A 4096-byte log: a one-sector write has eight 512-byte sectors to tear. */
	mk(&l, "sF" "s");
	l.sectorsize = 4096;
	CHECK(run(&l, 2, CRASH_REORDER, 1, 0, 1) == 4 && count_kind("torn") == 2 && torn_ok(&l),
	      "4096-byte sectors torn at 512 bytes");

	/* A big epoch stays fast. */
	pat = repeat("wF", "s", 3000, "F");
	mk(&l, pat);
	free(pat);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int got = run(&l, 2, CRASH_REORDER, 9, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(got == STATES_DEFAULT_MAX && secs < 5, "3000-write epoch: %d states in %.2f s", got, secs);
	CHECK(all_consistent(), "big epoch: distinct, round-trip");

	/* Errors. */
	struct errbuf eb = { 0 };
	char *err = eb.msg;
	struct crash_state *o;
	size_t n;
	mk(&l, "wF");
	CHECK(states_enumerate(&l, 3, CRASH_FLUSH, 0, 0, 0, &o, &n, &eb) < 0 &&
	      !strcmp(err, "setup ends at entry 3, beyond the log's 2 entries"), "%s", err);
	CHECK(run(&l, 2, CRASH_FLUSH, 0, 0, 0) == 1 && !strcmp(st[0].kind, "final"),
	      "no run entries: one final state");

	states_free(st, nstates);
}

TEST_MAIN()

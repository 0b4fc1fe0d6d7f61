/*
 * states.h - crash-state enumeration: from a scanned write log, the list of
 * disks to rebuild (each a wlog spec) and, for each, which ops count as
 * completed. Host side; the specs are stored in the db and replayed by the
 * checker guest with wlog_apply.
 *
 * Modes (--crash):
 *   flush    (default) the state after the flush that ended setup, one after
 *            each later flush, and the final state (every logged entry)
 *   write    every prefix of the log from the end of setup to the final state
 *   reorder  per flush epoch, subsets of the writes still in the volatile
 *            cache: all of them when they fit the budget, else seeded random
 *            distinct subsets; with torn, some writes of a subset also land
 *            only in part (512-byte sectors)
 *
 * Completed ops: an op whose recorded position is pos (the log superblock's
 * count when it returned) counts as completed in a state iff
 * pos <= state.point (state_completed).
 *
 * point: the number of entries that had certainly been logged when the
 * crash the state models happened: the position just after the last flush
 * that the state applies together with everything before it (a flush state:
 * flush index + 1; a write-mode prefix of k entries: the last flush before k,
 * + 1; a reorder state of epoch i: flush F_i + 1), never less than setup_end
 * (the setup is applied in full in every state), and n (all entries) for the
 * final state, in which every op has returned (the power was cut after the
 * last op). A state stands for a crash at the end of its epoch, before the
 * next flush was issued, with the epoch's cached writes lost (or, for subset
 * and torn states, the chosen ones kept): every op that returned while
 * the superblock still said `point` had returned by then.
 *
 * Budget (max_states, 0 = STATES_DEFAULT_MAX), the cap on the total:
 *   flush, write: when there are more candidates than the cap, an evenly
 *     spaced selection that always keeps the first and the final state.
 *   reorder: split across epochs by max-min fairness: epochs are served in
 *     ascending order of demand (2^k states for k writes, twice that with
 *     torn when the epoch has a tearable write), each taking at most an equal
 *     share (rounded up) of what is left, so small epochs are exhaustive and
 *     the rest is shared evenly by the big ones. Within an epoch, an
 *     exhaustive enumeration when 2^k fits its share; otherwise the empty
 *     subset, the full one, and random distinct subsets. With torn, at least
 *     half of an epoch's share goes to subsets, the rest to torn states.
 *   torn in write mode adds, after each prefix k whose next entry is a
 *   multi-sector write, the state "prefix k + that write torn"; flush mode
 *   ignores torn (nothing is in flight at a flush).
 *
 * Randomness: splitmix64 seeded from (seed, the epoch's first entry) (write
 * mode: (seed, the entry torn)), so the same seed and log give the same
 * states, and every spec is explicit: a state is rebuilt from its text alone.
 * Duplicates (same disk content and same point) are emitted once; a final
 * state that duplicates another takes the kind "final".
 */
#ifndef CRASHLAB_ENGINE_STATES_H
#define CRASHLAB_ENGINE_STATES_H

#include <stddef.h>
#include <stdint.h>

#include "core/wlog.h"

enum crash_mode { CRASH_FLUSH, CRASH_WRITE, CRASH_REORDER };

#define STATES_DEFAULT_MAX 1024

/* "flush" | "write" | "reorder". Parse: 0, or -1 for an unknown name. */
int crash_mode_parse(const char *name, enum crash_mode *mode);
const char *crash_mode_name(enum crash_mode mode);

struct crash_state {
	int idx;                 /* 0.. in enumeration order */
	struct wlog_spec spec;   /* the entries applied */
	uint64_t point;          /* ops with recorded position <= point completed */
	char kind[16];           /* "flush", "final", "prefix", "subset", "torn" */
	char *text;              /* the spec's canonical text (owned) */
};

static inline int state_completed(const struct crash_state *s, uint64_t op_pos)
{
	return op_pos <= s->point;
}

/* Enumerate the crash states of log l. setup_end: the superblock count when
 * the setup phase's sync returned (entries before it are never dropped).
 * 0 with a malloc'd array in *out (free with states_free), or -1 with e. */
int states_enumerate(const struct wlog *l, uint64_t setup_end, enum crash_mode mode, uint64_t seed,
		     size_t max_states, int torn, struct crash_state **out, size_t *n, struct errbuf *e);
void states_free(struct crash_state *st, size_t n);

#endif

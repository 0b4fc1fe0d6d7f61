#!/usr/bin/env bash
# Sharded batches: the batch run as two shards with the GNU parallel recipe
# (docs/sharding/parallel.sh, on this machine), merged with
# `crashlab db merge`, stores what the batch stores on one machine: the same
# runs, fs runs and crash states with the same ids, and the same op results,
# observed trees and verdicts (what t0940 compares between -j 1 and -j 2).
. "$(dirname "$0")/../lib.sh"

mkdir -p "$T/wl"
printf '[setup]\nmkdir A\n[run]\nwrite A/foo 4K\nfsync A/foo\n' >"$T/wl/a.wl"
printf '[run]\nmkdir B\nwrite B/bar 8K\nrename B/bar B/baz\nsync\n' >"$T/wl/b.wl"
printf '[setup]\nwrite x 4K\n[run]\nwrite x 4K 4K\nfdatasync x\nunlink x\nsync\n' >"$T/wl/c.wl"
for w in d e f g h; do printf '[run]\nwrite %s 4K\nfsync %s\n' "$w" "$w" >"$T/wl/$w.wl"; done
# 8 workloads on 2 fs: the batch stores them in chunks of 2 workloads, in a
# chunk file system by file system (engine/batch.h), so fs runs interleave
FS=ext4,f2fs

# --- --shard is checked before anything runs
expect_exit 2 "--shard 3/2 is refused" -- "$CRASHLAB" run "$T/wl" --shard 3/2 --db "$T/bad.db"
expect_grep "$T/err" "1 <= I <= N" "saying what I/N must be"
expect_exit 2 "--shard 0/2 is refused" -- "$CRASHLAB" run "$T/wl" --shard 0/2 --db "$T/bad.db"
expect_exit 2 "--shard 1 is refused" -- "$CRASHLAB" run "$T/wl" --shard 1 --db "$T/bad.db"
expect_exit 0 "a shard without workloads (1/9 of 8)" -- "$CRASHLAB" run "$T/wl" --fs ext4 --shard 1/9 --db "$T/empty.db"
expect_grep "$T/out" "shard 1/9 has no workloads" "says so"
if [ "$(sqlite3 "$T/empty.db" 'SELECT count(*) FROM runs')" = 0 ]; then ok "and its database is empty"; else not_ok "runs in an empty shard's database"; fi

# --- the batch on one machine
t0=$SECONDS
expect_exit 0 "the batch of eight workloads on ext4 and f2fs" -- "$CRASHLAB" run "$T/wl" --fs $FS -j 1 --db "$T/whole.db"

echo "# the batch took $((SECONDS - t0)) s"
start=$SECONDS
# --- the same as two shards with the GNU parallel recipe, then merged
mkdir -p "$T/p"
if ! command -v parallel >/dev/null; then
	skip "the GNU parallel recipe" "GNU parallel is not installed (make deps)"
	exit 0
fi
(cd "$T/p" && CRASHLAB=$CRASHLAB "$OLDPWD/docs/sharding/parallel.sh" -n 2 -o merged.db "$T/wl" --fs $FS -j 1) >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" = 0 ]; then ok "two shards through parallel.sh, merged (exit 0)"; else not_ok "parallel.sh: exit $rc"; sed 's/^/#   /' "$T/err" | tail -15; fi
echo "# two shards and the merge took $((SECONDS - start)) s"
grep -E "^shard-|^merged.db" "$T/out" | sed 's/^/# /'
sqlite3 "$T/whole.db" "SELECT '# the batch on one machine: ' || count(*) || ' crash states' FROM states"
expect_grep "$T/out" "shard-1-of-2.db: 4 runs as 1-4" "shard 1 is the first two chunks"
expect_grep "$T/out" "shard-2-of-2.db: 4 runs as 5-8" "shard 2 the other two"
expect_db_ok "$T/p/merged.db" "the merged database is sound"
db_ids "$T/whole.db" states >"$T/i1"
db_ids "$T/p/merged.db" states >"$T/i2"
if [ "$(grep -c '^fsrun|' "$T/i1")" = 16 ] && [ "$(sqlite3 "$T/whole.db" "SELECT group_concat(run_id, ' ') FROM (SELECT run_id FROM fsruns ORDER BY id)")" = "1 2 1 2 3 4 3 4 5 6 5 6 7 8 7 8" ] && cmp -s "$T/i1" "$T/i2"; then
	ok "the merged shards hold the batch's runs, fs runs (interleaved) and crash states with the same ids"
else
	not_ok "merged shards and batch differ:"
	diff "$T/i1" "$T/i2" | head -20 | sed 's/^/#   /'
fi
db_outcomes "$T/whole.db" >"$T/o1"
db_outcomes "$T/p/merged.db" >"$T/o2"
nrows=$(wc -l <"$T/o1")
if [ "$nrows" -gt 20 ] && cmp -s "$T/o1" "$T/o2"; then
	ok "and the same op results, observed trees and verdicts ($nrows rows)"
else
	not_ok "outcomes differ ($nrows rows):"
	diff "$T/o1" "$T/o2" | head -20 | sed 's/^/#   /'
fi
n=$(sqlite3 "$T/p/merged.db" "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id
	WHERE s.id <> (SELECT count(*) FROM states t WHERE t.id <= s.id)")
if [ "$n" = 0 ] && [ "$(sqlite3 "$T/whole.db" 'SELECT count(*) FROM states')" = "$(sqlite3 "$T/p/merged.db" 'SELECT count(*) FROM states')" ]; then
	ok "as many crash states, with dense ids"
else
	not_ok "states: $n out of place"
fi
cmdl=$(sqlite3 "$T/p/merged.db" "SELECT cmdline FROM runs WHERE id = 8")
case $cmdl in
*"h.wl --fs $FS --shard 2/2 --db shard-2-of-2.db") ok "a run's command line says its shard" ;;
*) not_ok "command line: $cmdl" ;;
esac
expect_exit 0 "report a merged run" -- "$CRASHLAB" report 2 --db "$T/p/merged.db"
expect_exit 0 "merge the shards again: nothing added" -- "$CRASHLAB" db merge "$T/p/merged.db" "$T/p/shard-1-of-2.db" "$T/p/shard-2-of-2.db"
expect_grep "$T/out" "0 runs added from 2 databases, 8 skipped" "every run is skipped as already there"

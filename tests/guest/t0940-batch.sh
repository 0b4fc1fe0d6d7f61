#!/usr/bin/env bash
# Batches: many workloads in one `crashlab run`, one run each, stored in one
# order whatever the number of workers. A batch with -j 1 and with -j 2
# store the same rows (ids included) except times and paths, and the same
# verdicts, trees and op results as each workload run alone.
. "$(dirname "$0")/../lib.sh"

wls="tutorials/seed/seed.wl tests/known/generic-034.wl tests/known/generic-039.wl"

# A batch stores its runs and their fs runs in one order, whatever the
# number of workers: the same ids for the same (workload, fs).

# What each (workload, fs) showed: its ops' results, the distinct outcomes
# of its crash states (mount, fsck, observed tree) and the distinct
# verdicts. Not the log positions: a recording's exact number of log
# entries is not the same from one recording of a workload to the next
# (the guest kernel's own timers may add a journal commit), so a state's
# prefix may differ by an entry between two runs of the same thing.

# --- bad input stops everything before a guest starts
printf '[run]\nmkdir a\nfrobnicate a\n' >"$T/bad.wl"
expect_exit 65 "a batch with a workload that does not parse" -- "$CRASHLAB" run tutorials/seed/seed.wl "$T/bad.wl" --db "$T/bad.db"
expect_grep "$T/err" "bad.wl:3" "the error names the file and the line"
if [ ! -e "$T/bad.db" ] || [ "$(sqlite3 "$T/bad.db" 'SELECT count(*) FROM runs')" = 0 ]; then
	ok "nothing was stored"
else
	not_ok "a run was stored for a batch that could not start"
fi
mkdir -p "$T/empty"
expect_exit 66 "a folder without workloads" -- "$CRASHLAB" run "$T/empty" --db "$T/bad.db"
expect_grep "$T/err" "no .wl file" "says the folder has no workload"
expect_exit 2 "-j 0 is refused" -- "$CRASHLAB" run tutorials/seed/seed.wl -j 0 --db "$T/bad.db"

# --- a folder is its .wl files, in name order, subfolders too
mkdir -p "$T/dir/sub"
cp tests/known/generic-039.wl "$T/dir/b.wl"
cp tutorials/seed/seed.wl "$T/dir/a.wl"
cp tests/known/generic-034.wl "$T/dir/sub/c.wl"
echo "not a workload" >"$T/dir/notes.txt"
expect_exit 0 "--check over a folder" -- "$CRASHLAB" run "$T/dir" --check
expect_lines "$T/out" 3 "three workloads found (notes.txt is not one)"
if head -1 "$T/out" | grep -q "dir/a.wl" && tail -1 "$T/out" | grep -q "dir/sub/c.wl"; then
	ok "in name order, the subfolder's after"
else
	not_ok "order: $(cat "$T/out")"
fi

# --- the same batch with one worker and with two
# shellcheck disable=SC2086
expect_exit 0 "a batch of three workloads on four fs, -j 1" -- "$CRASHLAB" run $wls -j 1 --db "$T/j1.db"
cp "$T/out" "$T/out-j1"
expect_grep "$T/err" "a batch of 3 workloads on 4 file systems, 1 worker" "says what it runs"
for wl in $wls; do
	expect_grep "$T/out-j1" "^ +[0-9]+ +ok +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* +[1-9][0-9]* +$wl\$" "a line for $wl, with states on each fs"
done
expect_grep "$T/out-j1" "^3 runs: 3 ok, 0 with findings, 0 failed" "the batch's verdict"
expect_grep "$T/out-j1" "3 workloads x 4 fs in .* with 1 worker: [0-9.]+ s per workload per fs" "its figures"
expect_db_ok "$T/j1.db" "the -j 1 database is sound"
# shellcheck disable=SC2086
expect_exit 0 "the same batch, -j 2" -- "$CRASHLAB" run $wls -j 2 --db "$T/j2.db"
expect_db_ok "$T/j2.db" "the -j 2 database is sound"
db_ids "$T/j1.db" >"$T/c1"
db_ids "$T/j2.db" >"$T/c2"
if [ "$(grep -c '^fsrun|' "$T/c1")" = 12 ] && cmp -s "$T/c1" "$T/c2"; then
	ok "-j 1 and -j 2 store the same runs and fs runs with the same ids"
else
	not_ok "-j 1 and -j 2 store other runs or ids:"
	diff "$T/c1" "$T/c2" | head -20 | sed 's/^/#   /'
fi
db_outcomes "$T/j1.db" >"$T/o1"
db_outcomes "$T/j2.db" >"$T/o2"
nrows=$(wc -l <"$T/o1")
if [ "$nrows" -gt 100 ] && cmp -s "$T/o1" "$T/o2"; then
	ok "-j 1 and -j 2 store the same op results, observed trees and verdicts ($nrows rows)"
else
	not_ok "-j 1 and -j 2 differ ($nrows rows):"
	diff "$T/o1" "$T/o2" | head -20 | sed 's/^/#   /'
fi
# Each run of a batch is a run like any other.
id=$(sqlite3 "$T/j2.db" "SELECT id FROM runs WHERE workload_file = 'tests/known/generic-034.wl'")
expect_exit 0 "show a batch's run" -- "$CRASHLAB" show "$id" --db "$T/j2.db"
expect_grep "$T/out" "generic-034" "show names its workload"
cmdl=$(sqlite3 "$T/j2.db" "SELECT cmdline FROM runs WHERE id = $id")
if [ "$cmdl" = "crashlab run tests/known/generic-034.wl -j 2 --db $T/j2.db" ] || [ "$cmdl" = "crashlab run tests/known/generic-034.wl --db $T/j2.db" ]; then
	if [ "$cmdl" = "crashlab run tests/known/generic-034.wl --db $T/j2.db" ]; then ok "its command line is the workload's own, without -j"; else not_ok "-j kept: $cmdl"; fi
else
	not_ok "command line: $cmdl"
fi
expect_exit 0 "compare two fs of a batch's run" -- "$CRASHLAB" compare "$id" --db "$T/j2.db"
expect_exit 0 "report a batch's run" -- "$CRASHLAB" report "$id" --db "$T/j2.db"

# --- each workload alone, the classic way
for wl in $wls; do
	"$CRASHLAB" run "$wl" --db "$T/plain.db" >"$T/out" 2>"$T/err" || { not_ok "$wl alone: exit $?"; cat "$T/err" | sed 's/^/#   /'; }
done
db_outcomes "$T/plain.db" >"$T/k0"
db_outcomes "$T/j2.db" >"$T/k2"
nkeys=$(wc -l <"$T/k0")
if [ "$nkeys" -gt 100 ] && cmp -s "$T/k0" "$T/k2"; then
	ok "the batch stores the same op results, states, trees and verdicts as each workload run alone ($nkeys rows)"
else
	not_ok "batch and single runs differ ($nkeys rows):"
	diff "$T/k0" "$T/k2" | head -20 | sed 's/^/#   /'
fi

# --- an overwrite in place, then sync, as a batch on xfs and f2fs. Whether that
# sync flushes the disk's cache depends on the clock: when the overwrite falls in
# the clock tick of the setup's write, the file's mtime does not change, xfs and
# f2fs have nothing to log or checkpoint, and sync returns with the data written
# but not flushed: a power cut then loses it, and the judge says LOST. Recording
# guests that live across workloads run ops closer together and meet this more
# often than a guest per workload. The claim is checked against the recording:
# a LOST comes only from a sync that committed no flush (its log position, read
# from the log's entries when it returned, is the overwrite's).
mkdir -p "$T/sync"
for f in foo A/foo; do
	n=$(echo "$f" | tr / _)
	{ [ "$f" = A/foo ] && printf '[setup]\nmkdir A\nwrite A/foo 16K\n' || printf '[setup]\nwrite foo 16K\n'
	  printf '[run]\nwrite %s 4K 4K\nsync\n' "$f"; } >"$T/sync/over-$n.wl"
	{ [ "$f" = A/foo ] && printf '[setup]\nmkdir A\nwrite A/foo 16K\n' || printf '[setup]\nwrite foo 16K\n'
	  printf '[run]\ndwrite %s 4K 4K\nsync\n' "$f"; } >"$T/sync/direct-$n.wl"
done
"$CRASHLAB" run "$T/sync" --fs xfs,f2fs -j 2 --db "$T/sync.db" >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then ok "overwrites then sync, as a batch on xfs and f2fs (exit $rc)"; else not_ok "overwrites then sync: exit $rc"; tail -5 "$T/err"; fi
expect_grep "$T/out" "^4 runs: [0-9]+ ok, [0-9]+ with findings, 0 failed" "every run ends"
lost_runs=$(sqlite3 "$T/sync.db" "SELECT count(*) FROM fsruns f WHERE EXISTS (SELECT 1 FROM states s JOIN verdicts v ON v.state_id = s.id WHERE s.fsrun_id = f.id AND v.verdict = 'LOST')")
bad=$(sqlite3 "$T/sync.db" "SELECT r.workload_file || ' on ' || f.fs FROM fsruns f JOIN runs r ON r.id = f.run_id
	WHERE EXISTS (SELECT 1 FROM states s JOIN verdicts v ON v.state_id = s.id WHERE s.fsrun_id = f.id AND v.verdict = 'LOST')
	AND (SELECT log_pos FROM ops WHERE fsrun_id = f.id AND section = 1 AND text = 'sync') >
	    (SELECT max(log_pos) FROM ops WHERE fsrun_id = f.id AND section = 1 AND text <> 'sync')")
lost_syncs=$(sqlite3 "$T/sync.db" "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN ops o ON o.fsrun_id = s.fsrun_id AND o.op_id = v.trigger_op WHERE v.verdict = 'LOST' AND o.text <> 'sync'")
if [ -z "$bad" ] && [ "$lost_syncs" = 0 ]; then
	ok "every LOST ($lost_runs fs runs of 8) is a sync that committed no flush after the overwrite"
else
	not_ok "a LOST where the sync had flushed: ${bad:-none}; LOSTs triggered by another op: $lost_syncs"
fi

# --- a checker guest that fails once: the job runs again in a fresh guest, nothing of the failed try is stored
touch "$T/crash-once"
# shellcheck disable=SC2086
CRASHLAB_TEST_CRASH_ONCE="$T/crash-once" expect_exit 0 "a batch whose checker guest crashes once" -- \
	"$CRASHLAB" run $wls -j 2 --db "$T/retry.db"
if [ ! -e "$T/crash-once" ]; then ok "the guest did crash"; else not_ok "the crash hook never fired"; fi
expect_grep "$T/out" "^jobs run again after a guest failure: 1;" "one job was run again"
bad=$(sqlite3 "$T/retry.db" "SELECT count(*) FROM states WHERE mount_msg LIKE 'checker guest:%'")
if [ "$bad" = 0 ]; then ok "no state of the failed try is stored"; else not_ok "$bad state(s) of the failed guest stored"; fi
db_outcomes "$T/retry.db" >"$T/kr"
if cmp -s "$T/k0" "$T/kr"; then ok "the batch with a retry stores what the workloads store alone"; else not_ok "retry batch differs"; diff "$T/k0" "$T/kr" | head -10 | sed 's/^/#   /'; fi
expect_db_ok "$T/retry.db" "the retried batch's database is sound"

# --- Ctrl-C: the runs begun end interrupted, the rest are not stored, each can be resumed
# shellcheck disable=SC2086
"$CRASHLAB" run $wls -j 1 --db "$T/int.db" >"$T/out" 2>"$T/err" &
pid=$!
for _ in $(seq 1 600); do
	n=$(sqlite3 "$T/int.db" "SELECT count(*) FROM states" 2>/dev/null || echo 0)
	[ "${n:-0}" -ge 2 ] && break
	sleep 0.2
done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" = 130 ]; then ok "Ctrl-C ends the batch with 130"; else not_ok "Ctrl-C: exit $rc"; fi
st=$(sqlite3 "$T/int.db" "SELECT group_concat(DISTINCT status) FROM runs")
nr=$(sqlite3 "$T/int.db" "SELECT count(*) FROM runs")
if [ "$st" = interrupted ] && [ "$nr" -ge 1 ] && [ "$nr" -lt 3 ]; then
	ok "the $nr run(s) begun are interrupted, the last workload was not begun"
else
	not_ok "runs after Ctrl-C: $nr, '$st'"
fi
expect_db_ok "$T/int.db" "the interrupted batch's database is sound"
for id in $(sqlite3 "$T/int.db" "SELECT id FROM runs"); do
	expect_exit 0 "interrupted run $id of the batch resumes alone" -- "$CRASHLAB" run --resume "$id" --db "$T/int.db"
done
st=$(sqlite3 "$T/int.db" "SELECT group_concat(DISTINCT status) FROM runs")
if [ "$st" = ok ]; then ok "and each ends ok"; else not_ok "after resume: $st"; fi
db_outcomes "$T/int.db" | grep -v "^tests/known/generic-039.wl" >"$T/ki"
grep -v "^tests/known/generic-039.wl" "$T/k0" | { [ "$nr" = 1 ] && grep -v "^tests/known/generic-034.wl" || cat; } >"$T/k0i"
if cmp -s "$T/ki" "$T/k0i"; then ok "the resumed runs store what the workloads store alone"; else not_ok "resumed runs differ"; diff "$T/k0i" "$T/ki" | head -10 | sed 's/^/#   /'; fi

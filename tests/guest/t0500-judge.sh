#!/usr/bin/env bash
# The judge end to end: the known answers of docs/guarantees.md on all four file
# systems (the seed example, unsynced data, a new file's fsync), the
# negative control N1 that proves a LOST is really reported, the report in
# three formats, the exit status, and bad input.
. "$(dirname "$0")/../lib.sh"

db="$T/judge.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }
# count VERDICT MODEL [EXTRA SQL]: verdicts of the last run
count() {
	q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
	   WHERE f.run_id = (SELECT max(id) FROM runs) AND v.verdict = '$1' AND v.model = '$2' ${3:-}"
}

# The seed example (generic/342), every model.
expect_exit 1 "seed, all models: exit 1 (sequential reports LOST)" -- "$CRASHLAB" run tutorials/seed/seed.wl --model all --db "$db"
expect_grep "$T/out" "^ext4 +posix +0 +0 " "the table counts LOST, broken, bonus per fs and model"
for fs in ext4 xfs btrfs f2fs; do
	own=$fs; [ "$fs" = f2fs ] && own=f2fs-posix
	n=$(count LOST posix "AND f.fs = '$fs'"); m=$(count LOST f2fs-posix "AND f.fs = '$fs'")
	if [ "$n" = 0 ] && [ "$m" = 0 ]; then ok "$fs: seed: nothing LOST under posix and f2fs-posix"; else not_ok "$fs: seed: posix $n, f2fs-posix $m LOST"; fi
	b=$(count broken universal "AND f.fs = '$fs'")
	if [ "$b" = 0 ]; then ok "$fs: seed: no universal rule fires"; else not_ok "$fs: seed: $b universal rules broken"; fi
	u=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = (SELECT max(id) FROM runs)
	       AND f.fs = '$fs' AND (s.judged = 0 OR s.explained = 0)")
	if [ "$u" = 0 ]; then ok "$fs: seed: every state judged and explained"; else not_ok "$fs: seed: $u states unjudged or unexplained"; fi
done
# f2fs (fsync_mode=posix) may lose A/bar: when it does, SOMC reports it and POSIX calls it gone.
lostbar=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = (SELECT max(id) FROM runs)
	     AND f.fs = 'f2fs' AND s.kind = 'final' AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.state_id = s.id AND n.path = 'A/bar')")
if [ "$lostbar" -ge 1 ]; then
	n=$(count LOST somc "AND f.fs = 'f2fs' AND v.path = 'A/bar'")
	if [ "$n" -ge 1 ]; then ok "f2fs: A/bar lost after fsync A/foo: SOMC reports it LOST"; else not_ok "f2fs: SOMC does not report A/bar"; fi
	n=$(count gone posix "AND f.fs = 'f2fs' AND v.path = 'A/bar'")
	if [ "$n" -ge 1 ]; then ok "f2fs: POSIX calls A/bar gone"; else not_ok "f2fs: POSIX verdict on A/bar missing"; fi
else
	ok "f2fs kept A/bar in the final state on this kernel (SOMC-like); nothing to report"
fi
for fs in ext4 xfs btrfs f2fs; do
	own=$fs; [ "$fs" = f2fs ] && own=f2fs-posix
	n=$(count kept posix "AND f.fs = '$fs' AND v.rule = 'fsync.file' AND v.path = 'A/foo'")
	m=$(count kept "$own" "AND f.fs = '$fs'")
	if [ "$n" -ge 1 ] && [ "$m" -ge 1 ]; then ok "$fs: seed: fsync.file kept under posix ($n), $m kept under $own"; else not_ok "$fs: seed: kept fsync.file $n, kept $own $m"; fi
done
for fs in ext4 xfs btrfs; do
	n=$(count kept somc "AND f.fs = '$fs' AND v.path = 'A/bar'")
	if [ "$n" -ge 1 ]; then ok "$fs: seed: SOMC's promise of A/bar is kept"; else not_ok "$fs: no kept SOMC verdict on A/bar"; fi
done

expect_exit 0 "report of the seed run" -- "$CRASHLAB" report last --db "$db" --model posix,somc --all
expect_grep "$T/out" "^== f2fs: models posix, somc" "the report groups by file system"
expect_grep "$T/out" "^states? [0-9]+(-[0-9]+)? \((flush|final)" "and by crash state"
expect_grep "$T/out" "rename A/foo A/bar +completed +(persisted|partly persisted|lost)" "with the op timeline"
expect_grep "$T/out" "rule [a-z0-9.-]+: docs/guarantees.md#" "each finding with its rule's citation"
expect_exit 0 "report as markdown" -- "$CRASHLAB" report last --db "$db" --format markdown
expect_grep "$T/out" "^## xfs" "markdown has a section per file system"
expect_grep "$T/out" "^\| 4 \| \`rename A/foo A/bar\` \|" "and a timeline table"
expect_exit 0 "report as json" -- "$CRASHLAB" report last --db "$db" --format json --all
if python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["fs"][0]["states"][0]["verdicts"]' <"$T/out" 2>"$T/err"; then
	ok "report --format json is valid JSON with verdicts"
else
	not_ok "report json: $(tail -1 "$T/err")"
fi

# Data written without fsync: gone, never LOST (except under sequential when a later fsync or sync completed: a prefix must reach it).
expect_exit 0 "unsynced write, default models: exit 0" -- "$CRASHLAB" run tests/workloads/unsynced.wl --db "$db"
for fs in ext4 xfs btrfs f2fs; do
	own=$fs; [ "$fs" = f2fs ] && own=f2fs-posix
	l=$(count LOST posix "AND f.fs = '$fs'")$(count LOST $own "AND f.fs = '$fs'")
	g=$(count gone posix "AND f.fs = '$fs' AND v.op_id = 2")
	if [ "$l" = 00 ] && [ "$g" -ge 1 ]; then ok "$fs: unsynced data is gone ($g), not LOST, under posix and $own"; else not_ok "$fs: LOST $l, gone $g"; fi
done
expect_exit 1 "unsynced write, all models" -- "$CRASHLAB" run tests/workloads/unsynced.wl --db "$db" --model all
d=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
       WHERE f.run_id = (SELECT max(id) FROM runs) AND v.verdict = 'LOST' AND v.model <> 'sequential' AND v.reason LIKE '%in the data of%'")
if [ "$d" = 0 ]; then ok "no model but sequential calls the unsynced data LOST"; else not_ok "$d LOST data verdicts"; fi

# A new file + fsync without fsync of the parent: promised by ext4, xfs, btrfs; not by POSIX or f2fs-posix.
# Each file system is judged by the models that document it: f2fs with fsync_mode=posix does not promise the
# name, so whether it keeps it varies from run to run (its checkpoint timing) and is no finding.
expect_exit 0 "a new file's fsync on ext4, xfs, btrfs" -- "$CRASHLAB" run tests/workloads/newfile-fsync.wl --db "$db" --fs ext4,xfs,btrfs --model posix,ext4,xfs,btrfs
for m in ext4:ext4.fsync-name xfs:somc.fsync-deps btrfs:btrfs.fsync-names; do
	n=$(count kept "${m%%:*}" "AND v.rule = '${m#*:}' AND v.path = 'd/n' AND v.expected LIKE 'names%'")
	if [ "$n" -ge 3 ]; then ok "${m%%:*} promises d/n's name (${m#*:}), kept on ext4, xfs and btrfs"; else not_ok "${m%%:*}: $n kept"; fi
done
expect_exit 0 "a new file's fsync on f2fs, judged by posix and f2fs-posix" -- "$CRASHLAB" run tests/workloads/newfile-fsync.wl --db "$db" --fs f2fs --model posix,f2fs-posix
for m in posix f2fs-posix; do
	n=$(count kept "$m" "AND v.path = 'd/n' AND v.expected LIKE 'names%'")
	l=$(count LOST "$m" "AND v.path = 'd/n' AND v.expected LIKE 'names%'")
	b=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
	       WHERE f.run_id = (SELECT max(id) FROM runs) AND v.verdict IN ('bonus', 'gone') AND v.model = '$m'
	       AND v.path = 'd/n' AND v.expected LIKE 'names%'")
	if [ "$n" = 0 ] && [ "$l" = 0 ] && [ "$b" -ge 1 ]; then ok "$m does not promise the name: bonus or gone ($b)"; else not_ok "$m: $n kept, $l LOST, $b bonus/gone"; fi
done

# The negative control N1: write t; rename t f; creat g; fsync g. ext4 keeps f renamed but empty.
expect_exit 1 "N1 on ext4 under sequential, posix, ext4: exit 1" -- "$CRASHLAB" run tests/workloads/n1-rename-empty.wl --fs ext4 --db "$db" --model sequential,posix,ext4
empty=$(q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	   WHERE f.run_id = (SELECT max(id) FROM runs) AND n.path = 'f' AND n.size = 0")
if [ "$empty" -ge 1 ]; then
	ok "N1: a crash state has f renamed with size 0 ($empty)"
	n=$(count LOST sequential "AND v.op_id = 2 AND v.path = 'f'")
	if [ "$n" -ge 1 ]; then ok "sequential reports op 2's data LOST in f"; else not_ok "sequential does not report f"; fi
else
	# flush states may not show it; reorder states do
	expect_exit 1 "N1 with reordered writes" -- "$CRASHLAB" run tests/workloads/n1-rename-empty.wl --fs ext4 --crash reorder --max-states 40 --db "$db" --model sequential,posix,ext4
	n=$(count LOST sequential "AND v.op_id = 2")
	if [ "$n" -ge 1 ]; then ok "sequential reports op 2 LOST (reorder)"; else not_ok "sequential reports nothing"; fi
fi
l=$(count LOST posix)$(count LOST ext4)
if [ "$l" = 00 ]; then ok "N1: POSIX and ext4 promise nothing about f"; else not_ok "N1: posix/ext4 LOST $l"; fi
expect_grep "$T/out" "^ext4 +sequential +[1-9]" "the run table shows sequential's LOST"
expect_exit 0 "report names the finding" -- "$CRASHLAB" report last --db "$db"
expect_grep "$T/out" "LOST: .*op 2 \`write t 64K\` is missing in the data of 'f'.*expected .*found" "in one sentence: op, object, expected, found"
expect_exit 0 "N1 with the default models: exit 0" -- "$CRASHLAB" run tests/workloads/n1-rename-empty.wl --fs ext4 --db "$db"

# The FIEMAP_FLAG_SYNC trick before the rename works in the guest today: judged with the fdatabarrier rule.
expect_exit 0 "fiemap_sync before the rename, ext4 and xfs" -- "$CRASHLAB" run tests/workloads/fiemap-rename.wl --fs ext4,xfs --db "$db"
expect_grep "$T/out" "^ext4 +fiemap_sync +0 +0 " "fiemap_sync is selected by default when the workload uses it"
for fs in ext4 xfs; do
	n=$(count kept fiemap_sync "AND f.fs = '$fs' AND v.rule = 'fiemap_sync.order'")
	if [ "$n" -ge 1 ]; then ok "$fs: f visible after fiemap_sync holds the data (kept $n)"; else not_ok "$fs: no kept fiemap_sync verdict"; fi
done

# Defaults follow the mount: f2fs with fsync_mode=strict is judged by f2fs-strict, and the report says so.
expect_exit 0 "the seed on f2fs with fsync_mode=strict" -- "$CRASHLAB" run tutorials/seed/seed.wl --fs f2fs --mount-opts f2fs:fsync_mode=strict --db "$db"
expect_grep "$T/out" "^f2fs +f2fs-strict +0 +0 " "the run table counts f2fs-strict, chosen by the mount option"
m=$(q "SELECT models FROM fsruns WHERE run_id = (SELECT max(id) FROM runs)")
if [ "$m" = "posix,f2fs-strict" ]; then ok "the fs run is judged by posix and f2fs-strict"; else not_ok "the fs run's models: '$m'"; fi
n=$(count kept f2fs-strict "AND v.path = 'A/bar'")
if [ "$n" -ge 1 ]; then ok "f2fs-strict's promise of A/bar is kept ($n)"; else not_ok "no kept f2fs-strict verdict on A/bar"; fi
expect_exit 0 "report of the strict run" -- "$CRASHLAB" report last --db "$db"
expect_grep "$T/out" "^== f2fs: models posix, f2fs-strict \(and U1-U5\), mount options fsync_mode=strict" "its header names the mount options and the models"

# Bad input.
expect_exit 66 "report on a run that does not exist" -- "$CRASHLAB" report 999 --db "$db"
expect_grep "$T/err" "run 999 does not exist" "says so"
expect_exit 2 "an unknown model" -- "$CRASHLAB" run tutorials/seed/seed.wl --model posix,quantum --db "$db"
expect_grep "$T/err" "unknown model 'quantum'" "names it"
printf '[run]\nsymlink /etc/passwd s\nwrite s "x"\n' >"$T/out-of-fs.wl"
expect_exit 65 "a workload the simulator cannot model" -- "$CRASHLAB" run "$T/out-of-fs.wl" --fs ext4 --db "$db"
expect_grep "$T/err" "op 2 \(line 3\) \`write s \"x\"\`: the simulator cannot model it" "the error names the op"
# An older database: strip schema v2 from a copy; opening migrates it, 'judge' judges its states
# (report only reads, and says which command judges them).
cp "$db" "$T/old.db"
sqlite3 "$T/old.db" "DROP TABLE verdicts; ALTER TABLE states DROP COLUMN judged; ALTER TABLE states DROP COLUMN explained;
	ALTER TABLE states DROP COLUMN difference; ALTER TABLE states DROP COLUMN timeline; ALTER TABLE fsruns DROP COLUMN models;
	ALTER TABLE fsruns DROP COLUMN sim_notes; ALTER TABLE runs DROP COLUMN workdir; ALTER TABLE runs DROP COLUMN pid;
	ALTER TABLE runs DROP COLUMN resumes; PRAGMA user_version = 1;"
expect_exit 0 "report on a schema-1 database before judging" -- "$CRASHLAB" report 1 --db "$T/old.db"
expect_grep "$T/err" "have no verdicts yet; 'crashlab judge 1 --db .*' judges them" "report says how to judge them"
n=$(sqlite3 "$T/old.db" "SELECT count(*) FROM verdicts")
if [ "$n" = 0 ]; then ok "report wrote nothing"; else not_ok "report wrote $n verdicts"; fi
expect_exit 0 "judge the schema-1 database's run" -- "$CRASHLAB" judge 1 --db "$T/old.db"
expect_grep "$T/out" "^run 1: [1-9][0-9]* states judged" "judge says how many states it judged"
expect_exit 0 "report on the judged database" -- "$CRASHLAB" report 1 --db "$T/old.db"
v=$(sqlite3 "$T/old.db" "PRAGMA user_version"); n=$(sqlite3 "$T/old.db" "SELECT count(*) FROM verdicts")
cur=$(sqlite3 "$db" "PRAGMA user_version")
if [ "$v" = "$cur" ] && [ "$n" -gt 0 ]; then ok "the old database is migrated to schema $cur and its states judged ($n verdicts)"; else not_ok "version $v (want $cur), $n verdicts"; fi
expect_db_ok "$T/old.db" "the migrated database is sound"
expect_grep "$T/out" "^== f2fs" "and reported"
expect_db_ok "$db" "the database is sound after the failing runs"

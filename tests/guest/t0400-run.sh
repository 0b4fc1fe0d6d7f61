#!/usr/bin/env bash
# Record and replay end to end: run workloads, enumerate crash states,
# check each in a guest, store and show them.
. "$(dirname "$0")/../lib.sh"

db="$T/crash.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }

# The seed example on all four file systems.
expect_exit 0 "the seed example runs on all four file systems" -- "$CRASHLAB" run tutorials/seed/seed.wl --db "$db"
for fs in ext4 xfs btrfs f2fs; do
	expect_grep "$T/out" "^$fs +[1-9][0-9]* +0 +0 +[1-9]" "$fs: states, no mount failure, no fsck complaint"
	flushes=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.fs = '$fs'")
	# every flush at or after the end of setup has a state (the last one may be the final state)
	want=$(q "SELECT log_flushes FROM fsruns WHERE fs = '$fs'")
	if [ "$flushes" -ge 1 ] && [ -n "$want" ]; then ok "$fs: $flushes crash states for $want flushes in the log"; else not_ok "$fs: no crash states"; fi
	final=$(q "SELECT n.content FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
		   WHERE f.fs = '$fs' AND s.kind = 'final' AND n.path = 'A/foo'")
	if [ "$final" = world ]; then ok "$fs: the final state has A/foo = world (fsynced)"; else not_ok "$fs: final A/foo is '$final'"; fi
	first=$(q "SELECT n.content FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
		   WHERE f.fs = '$fs' AND s.idx = 0 AND n.path = 'A/foo'")
	if [ "$first" = hello ]; then ok "$fs: the first state is the setup (A/foo = hello)"; else not_ok "$fs: first A/foo is '$first'"; fi
done
nops=$(q "SELECT count(*) FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.fs = 'ext4'")
if [ "$nops" -eq 6 ]; then ok "six ops stored for ext4"; else not_ok "ops stored: $nops"; fi
bad=$(q "SELECT count(*) FROM ops WHERE ret < 0")
if [ "$bad" -eq 0 ]; then ok "every op of the seed example succeeded"; else not_ok "$bad ops failed"; fi

expect_exit 0 "show the run" -- "$CRASHLAB" show last --db "$db"
expect_grep "$T/out" "rename A/foo A/bar" "show lists the ops"
expect_exit 0 "show one state" -- "$CRASHLAB" show last ext4 0 --db "$db"
expect_grep "$T/out" "A/foo +\"hello\"" "show prints the observed tree"
expect_exit 0 "show as json" -- "$CRASHLAB" show last --db "$db" --format json
if command -v python3 >/dev/null; then
	if python3 -c 'import json,sys; json.load(sys.stdin)' <"$T/out"; then ok "show --format json is valid JSON"; else not_ok "invalid JSON"; fi
fi

# Data written without fsync: missing in some state, present in the final one.
expect_exit 0 "an unsynced write, all four file systems" -- "$CRASHLAB" run tests/workloads/unsynced.wl --db "$db"
for fs in ext4 xfs btrfs f2fs; do
	run=$(q "SELECT max(id) FROM runs")
	full=$(printf 'p2,%.0s' $(seq 16)); full=${full%,}
	final=$(q "SELECT n.blocks FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
		   WHERE f.run_id = $run AND f.fs = '$fs' AND s.kind = 'final' AND n.path = 'f'")
	if [ "$final" = "$full" ]; then ok "$fs: f's 64 KiB are all there in the final state"; else not_ok "$fs: final f blocks '$final'"; fi
	missing=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND f.fs = '$fs'
		     AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.state_id = s.id AND n.path = 'f' AND n.blocks = '$full')")
	if [ "$missing" -ge 1 ]; then ok "$fs: f's data is missing in $missing state(s)"; else not_ok "$fs: f's data never missing"; fi
done

# The other crash modes, on one file system.
expect_exit 0 "--crash write" -- "$CRASHLAB" run tests/workloads/unsynced.wl --fs ext4 --crash write --db "$db"
run=$(q "SELECT max(id) FROM runs")
nw=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run")
ent=$(q "SELECT log_entries - setup_end + 1 FROM fsruns WHERE run_id = $run")
if [ "$nw" -ge 2 ] && [ "$nw" -le "$ent" ]; then ok "write mode: $nw states for $ent log prefixes (duplicates merged)"; else not_ok "write mode: $nw states, $ent prefixes"; fi
# Torn states: unsynced.wl promises nothing before its sync, so neither posix nor ext4 may report a LOST,
# and the run exits 0 unless a universal rule really broke (a superblock
# torn at a 512-byte sector may fail its checksum: U1, a finding).
"$CRASHLAB" run tests/workloads/unsynced.wl --fs ext4 --crash reorder --torn --seed 3 --max-states 12 --db "$db" >"$T/out" 2>"$T/err"
rc=$?
run=$(q "SELECT max(id) FROM runs")
vq() { q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND $1"; }
lost=$(vq "v.verdict = 'LOST' AND v.model IN ('posix', 'ext4')")
broken=$(vq "v.verdict = 'broken'")
notu12=$(vq "v.verdict = 'broken' AND v.rule NOT IN ('U1', 'U2')")
if [ "$lost" = 0 ]; then ok "--crash reorder --torn: nothing LOST (nothing was promised)"; else not_ok "--crash reorder --torn: $lost LOST"; fi
if [ "$notu12" = 0 ]; then ok "--crash reorder --torn: no U3-U5 broken on torn pieces"; else not_ok "--crash reorder --torn: $notu12 of U3-U5 broken"; fi
if { [ "$broken" = 0 ] && [ $rc -eq 0 ]; } || { [ "$broken" -gt 0 ] && [ $rc -eq 1 ]; }; then
	ok "--crash reorder --torn exits $rc with $broken broken"
else
	not_ok "--crash reorder --torn: exit $rc with $broken broken"; tail -5 "$T/err"
fi
nr=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run")
if [ "$nr" -ge 2 ] && [ "$nr" -le 12 ]; then ok "reorder mode: $nr states within --max-states 12"; else not_ok "reorder mode: $nr states"; fi
torn=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND s.spec LIKE '%torn=%'")
if [ "$torn" -ge 1 ]; then ok "reorder --torn stores torn states ($torn)"; else not_ok "no torn state stored"; fi
seed=$(q "SELECT seed FROM runs WHERE id = $run")
if [ "$seed" = 3 ]; then ok "the seed is stored with the run"; else not_ok "seed stored as '$seed'"; fi

# Bad input: parse errors name file:line:col and nothing runs.
printf '[run]\nwrite f 4K\nfrobnicate g\n' >"$T/bad.wl"
before=$(q "SELECT count(*) FROM runs")
expect_exit 65 "a workload with an unknown op" -- "$CRASHLAB" run "$T/bad.wl" --db "$db"
expect_grep "$T/err" "bad.wl:3:1: " "the error names file:line:col"
after=$(q "SELECT count(*) FROM runs")
if [ "$before" = "$after" ]; then ok "nothing ran"; else not_ok "a run was stored"; fi
expect_exit 66 "a missing workload" -- "$CRASHLAB" run "$T/none.wl" --db "$db"
expect_exit 2 "an unknown crash mode" -- "$CRASHLAB" run tutorials/seed/seed.wl --crash sideways --db "$db"
expect_exit 2 "--mkfs-opts without FS:" -- "$CRASHLAB" run tutorials/seed/seed.wl --mkfs-opts "-O ^has_journal" --db "$db"
expect_exit 66 "show of a run that does not exist" -- "$CRASHLAB" show 999 --db "$db"

# A state that takes the checker guest down (here: a forced kernel crash
# while the second state is checked) is stored as a finding (U1 broken: the
# run exits 1); checking goes on in a fresh guest.
CRASHLAB_TEST_CRASH_STATE=2 expect_exit 1 "a checker guest panic on one state is a finding, not the end of the run" -- "$CRASHLAB" run tutorials/seed/seed.wl --fs ext4 --db "$db"
expect_grep "$T/out" "^ext4 +3 +1 +1 " "three states checked, the panicked one counted as a mount failure"
expect_grep "$T/err" "crash state 1: guest kernel panic" "a one-line warning names the state and the panic"
run=$(q "SELECT max(id) FROM runs")
msg=$(q "SELECT s.mount_msg FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND s.idx = 1")
case "$msg" in *"Kernel panic"*"console log"*) ok "the state stores the panic and the console log's path" ;; *) not_ok "state 1 mount_msg: '$msg'" ;; esac
after=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND s.idx = 2 AND s.mount_ok = 1")
if [ "$after" = 1 ]; then ok "the state after it was checked in a fresh guest"; else not_ok "state 2 not checked"; fi
u1=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
	WHERE f.run_id = $run AND s.idx = 1 AND v.rule = 'U1' AND v.verdict = 'broken'")
if [ "$u1" -ge 1 ]; then ok "the panicked state is judged: U1 broken"; else not_ok "no U1 verdict for the panicked state"; fi
expect_db_ok "$db" "the database is sound after a checker guest panicked"

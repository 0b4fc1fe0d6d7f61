#!/usr/bin/env bash
# Deduplication before checking: crash states whose rebuilt disks are the
# same are checked once and states with the same input to the judge are
# judged once, and the run stores what checking and judging every state
# stores. The seed and two known-answer workloads run on all four file
# systems with dedup (the default), the seed with a state per flush and
# all three with a state per log prefix (--crash write, whose prefixes
# that end on a flush give the disk of the prefix before); the reference is the plain path
# (--no-dedup) over the same recordings: a copy of the database with every
# state taken out and each run resumed with --no-dedup, so both check the
# same write logs. Compared per run and fs: every stored state with its
# check, tree and verdicts, all but times and ids.
. "$(dirname "$0")/../lib.sh"

ddb="$T/dedup.db"
pdb="$T/plain.db"
q() { sqlite3 -batch -noheader -cmd '.timeout 30000' "$1" "$2"; }

# What a database stored, times and ids left out, in order.
dump() {
	q "$1" "SELECT r.workload_file, f.fs, f.outcome, s.idx, s.kind, s.spec, s.point, s.last_completed_op, s.mount_ok,
		       coalesce(s.mount_msg, ''), s.fsck_status, s.fsck_clean, coalesce(s.fsck_output, ''),
		       coalesce(s.tree_hash, ''), s.n_nodes, s.judged, s.explained, coalesce(s.difference, ''),
		       coalesce(s.timeline, '')
		FROM states s JOIN fsruns f ON f.id = s.fsrun_id JOIN runs r ON r.id = f.run_id ORDER BY r.id, f.fs, s.idx"
	q "$1" "SELECT f.run_id, f.fs, s.idx, n.path, n.type, n.mode, n.uid, n.gid, n.size, n.nlink, n.ino,
		       coalesce(n.xattrs, ''), coalesce(n.target, ''), coalesce(n.blocks, ''), hex(n.content)
		FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
		ORDER BY f.run_id, f.fs, s.idx, n.path"
	q "$1" "SELECT f.run_id, f.fs, s.idx, v.model, v.rule, v.verdict, v.op_id, v.trigger_op, v.path, v.expected,
		       v.observed, v.reason, v.cite
		FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
		ORDER BY f.run_id, f.fs, s.idx, v.id"
}

# counts FILE NAME PLAIN: every fs has a "FS N states built = D deduplicated
# + C checked; J judged by copy" line with N = D + C; PLAIN=1: D = J = 0.
# Adds D to $dedups, C to $checks and J to $jcopies.
counts() {
	local file=$1 name=$2 plain=$3 fs line n d c j
	for fs in ext4 xfs btrfs f2fs; do
		line=$(grep -E "^$fs +[0-9]+ states built = [0-9]+ deduplicated \+ [0-9]+ checked; [0-9]+ judged by copy$" "$file")
		read -r n d c j < <(echo "$line" | sed -E 's/^[a-z0-9]+ +([0-9]+) states built = ([0-9]+) deduplicated \+ ([0-9]+) checked; ([0-9]+) judged.*/\1 \2 \3 \4/')
		if [ -z "$line" ]; then
			not_ok "$name, $fs: no 'states built' line"
			sed 's/^/    | /' "$file" | head -n 12
		elif [ "$n" -ne $((d + c)) ] || [ "$n" -lt 1 ]; then
			not_ok "$name, $fs: built $n is not deduplicated $d + checked $c"
		elif [ "$plain" = 1 ] && { [ "$d" -ne 0 ] || [ "$j" -ne 0 ]; }; then
			not_ok "$name, $fs: --no-dedup deduplicated $d and judged $j by copy"
		else
			ok "$name, $fs: $n states built = $d deduplicated + $c checked, $j judged by copy"
			dedups=$((dedups + d))
			checks=$((checks + c))
			jcopies=$((jcopies + j))
		fi
	done
}

# workload and crash mode of each run, in order (run ids 1..)
runs_list="tutorials/seed/seed.wl:flush tutorials/seed/seed.wl:write tests/known/generic-034.wl:write
	tests/known/generic-039.wl:write"
dedups=0
checks=0
jcopies=0
for r in $runs_list; do
	wl=${r%:*}
	name="$(basename "$wl" .wl)-${r#*:}"
	"$CRASHLAB" run "$wl" --crash "${r#*:}" --db "$ddb" >"$T/$name.out" 2>"$T/$name.err" </dev/null
	rc=$?
	if [ "$rc" -le 1 ]; then ok "$name: run with dedup (exit $rc)"; else not_ok "$name: exit $rc"; tail -n 5 "$T/$name.err" | sed 's/^/    | /'; fi
	echo "$rc" >"$T/$name.rc"
	counts "$T/$name.out" "$name" 0
done
if [ "$dedups" -ge 1 ]; then ok "dedup spared $dedups checks ($checks made)"; else not_ok "no state was deduplicated ($checks checks)"; fi
if [ "$jcopies" -ge 1 ]; then ok "$jcopies states judged by copy"; else not_ok "no state was judged by copy"; fi
dchecks=$checks
ddedups=$dedups

# The reference: the same recordings, every state checked and judged.
cp "$ddb" "$pdb"
q "$pdb" "PRAGMA foreign_keys = ON; DELETE FROM states; UPDATE fsruns SET outcome = 'interrupted';
	UPDATE runs SET status = 'interrupted', cmdline = cmdline || ' --no-dedup'"
dedups=0
checks=0
i=0
for r in $runs_list; do
	i=$((i + 1))
	wl=${r%:*}
	name="$(basename "$wl" .wl)-${r#*:}"
	"$CRASHLAB" run --resume "$i" --db "$pdb" >"$T/$name.plain" 2>"$T/$name.perr" </dev/null
	rc=$?
	if [ "$rc" = "$(cat "$T/$name.rc")" ]; then ok "$name: --no-dedup over the same recordings (exit $rc, the same)"; else not_ok "$name: --no-dedup exits $rc, dedup $(cat "$T/$name.rc")"; tail -n 5 "$T/$name.perr" | sed 's/^/    | /'; fi
	counts "$T/$name.plain" "$name --no-dedup" 1
done
if [ "$checks" -eq $((dchecks + ddedups)) ]; then
	ok "--no-dedup checks every state: $checks checks = $dchecks with dedup + $ddedups deduplicated"
else
	not_ok "--no-dedup made $checks checks; dedup $dchecks + $ddedups deduplicated"
fi

if [ "$(dump "$ddb")" = "$(dump "$pdb")" ] && [ -n "$(dump "$ddb")" ]; then
	ok "dedup and --no-dedup store the same states, checks, trees and verdicts ($(q "$ddb" "SELECT count(*) FROM states") states)"
else
	not_ok "dedup and --no-dedup stored different results"
	diff <(dump "$pdb") <(dump "$ddb") | head -n 12 | sed 's/^/    | /'
fi
copies=$(q "$ddb" "SELECT count(*) FROM states WHERE ms_replay + ms_mount + ms_capture + ms_fsck + ms_other = 0")
if [ "$copies" -eq "$ddedups" ]; then ok "the $copies copies claim no time"; else not_ok "$copies states with times 0, $ddedups deduplicated"; fi
expect_db_ok "$ddb" "the deduplicated database is sound"

#!/usr/bin/env bash
# The lessons of tutorials/: each parses (`tutorial --check`), then runs as
# its README says (`crashlab tutorial NAME`, which runs the 'Run it' lines as
# written) and ends with what to notice. What each file system keeps is
# pinned by the lessons' [expect FS] lines: none may be LOST, and every fs
# run of every lesson must be judged by at least one. The seed example
# carries no [expect] (other tests count its models), so its outcome is
# pinned here, as its README states it.
. "$(dirname "$0")/../lib.sh"

db="$T/tutorials.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }

expect_exit 0 "every lesson parses and its workloads pass run --check" -- "$CRASHLAB" tutorial --check
n=$(grep -c '^ok ' "$T/out")
if [ "$n" -ge 12 ]; then ok "$n lessons"; else not_ok "only $n lessons (at least 12)"; fi
expect_exit 0 "crashlab tutorial lists them" -- "$CRASHLAB" tutorial
expect_grep "$T/out" "^ +seed +The seed example" "the list names each lesson with its title"
expect_exit 66 "an unknown lesson" -- "$CRASHLAB" tutorial sede
expect_grep "$T/err" "did you mean 'seed'" "the nearest lesson is suggested"

# The final crash state's node at path in run $1 on fs $2: "type size content".
final() {
	q "SELECT n.type || ' ' || n.size || ' ' || coalesce(n.content, '') || ' ' || printf('%o', n.mode)
	   FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	   WHERE f.run_id = $1 AND f.fs = '$2' AND s.kind = 'final' AND n.path = '$3'"
}

for readme in tutorials/*/README.md; do
	name=$(basename "$(dirname "$readme")")
	grep -q '^## Run it$' "$readme" || continue
	before=$(q "SELECT coalesce(max(id), 0) FROM runs" 2>/dev/null || echo 0)
	expect_exit 0 "lesson $name runs as its README says" -- "$CRASHLAB" tutorial "$name" --db "$db" -q
	cp "$T/out" "$T/lesson-$name.out"
	expect_grep "$T/out" "^-- what to notice" "lesson $name ends by saying what to notice"
	expect_grep "$T/out" "What each file system kept" "lesson $name shows the comparison view"
	runs="SELECT id FROM runs WHERE id > $before"
	nruns=$(q "SELECT count(*) FROM runs WHERE id > $before")
	want=$(sed -n '/^## Run it$/,/^## /p' "$readme" | grep -c '^    \./crashlab run ')
	if [ "$nruns" = "$want" ]; then ok "lesson $name: its $want runs are stored"; else not_ok "lesson $name: $nruns runs stored, $want in its README"; fi
	[ "$name" = seed ] && continue
	lost=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
		  WHERE f.run_id IN ($runs) AND v.model = 'expect' AND v.verdict = 'LOST'")
	unpinned=$(q "SELECT group_concat(f.fs || ' (run ' || f.run_id || ')', ', ') FROM fsruns f WHERE f.run_id IN ($runs)
		      AND NOT EXISTS (SELECT 1 FROM verdicts v JOIN states s ON s.id = v.state_id
				      WHERE s.fsrun_id = f.id AND v.model = 'expect')")
	if [ "$lost" = 0 ]; then ok "lesson $name: every file system keeps what the lesson says"
	else
		not_ok "lesson $name: $lost expectations LOST"
		q "SELECT f.run_id, f.fs, s.idx, v.path, v.expected, v.observed FROM verdicts v JOIN states s ON s.id = v.state_id
		   JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id IN ($runs) AND v.model = 'expect' AND v.verdict = 'LOST'" |
			head -n 20 | sed 's/^/    | /'
	fi
	if [ -z "$unpinned" ]; then ok "lesson $name: its outcome is pinned on every file system it runs"
	else not_ok "lesson $name: no [expect] line judges $unpinned"; fi
done

# The seed lesson (its first run): A/foo "world" everywhere; A/bar "hello" on
# ext4, xfs and btrfs, gone on f2fs with fsync_mode=posix.
seed=$(q "SELECT min(id) FROM runs WHERE workload_file LIKE '%tutorials/seed/seed.wl'")
for fs in ext4 xfs btrfs f2fs; do
	foo=$(final "$seed" $fs A/foo); bar=$(final "$seed" $fs A/bar)
	if [ "$fs" = f2fs ]; then want=""; else want="f 5 hello 644"; fi
	if [ "${foo% *}" = "f 5 world" ] && [ "$bar" = "$want" ]; then ok "seed on $fs: A/foo \"world\", A/bar '${want:-gone}'"
	else not_ok "seed on $fs: A/foo '$foo', A/bar '$bar' (want '${want:-gone}')"; fi
done
expect_grep "$T/lesson-seed.out" '^\* A/bar +"hello" +"hello" \+ +"hello" = +"hello" \+ +gone -!' "seed: the comparison view's A/bar row as the README describes it"

# What the lessons' READMEs point at in the view.
expect_grep "$T/lesson-fdatasync.out" '"12345" 0644 -!' "fdatasync: ext4's cell shows the mode the chmod lost"
expect_grep "$T/lesson-fbarrier.out" 'fbarrier/ +fdatabarr/' "fbarrier: the benchmark prints the speedup columns"
expect_grep "$T/lesson-fbarrier.out" '^ext4 +20ms +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+x +[0-9.]+x$' "fbarrier: and ext4's row at a 20 ms flush, as the README describes"
expect_grep "$T/lesson-atomic-replace.out" 'noauto_da_alloc' "atomic-replace: the column names the mount option"
expect_grep "$T/lesson-f2fs-fsync-mode.out" 'fsync_mode=strict' "f2fs-fsync-mode: the strict column names its mount option"

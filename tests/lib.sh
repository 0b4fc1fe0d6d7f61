# tests/lib.sh - sourced by the shell tests: run from the repo root,
# print "ok - ..." / "not ok - ..." lines (counted by tests/run).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
CRASHLAB=${CRASHLAB:-$PWD/crashlab}
T=$(mktemp -d "${TMPDIR:-/tmp}/crashlab-t.XXXXXX")
trap 'rm -rf "$T"' EXIT

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
# skip DESC WHY: a check that cannot run here (counted as a skip, not a pass)
skip() { echo "ok - $1 # SKIP $2"; }

# expect_exit CODE DESC -- CMD...: run CMD (stdout in $T/out, stderr in $T/err)
expect_exit() {
	local want=$1 desc=$2
	shift 3
	"$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "$desc (exit $rc)"
	else
		not_ok "$desc: exit $rc, expected $want"
		sed 's/^/    stderr: /' "$T/err" | tail -n 15
		sed 's/^/    stdout: /' "$T/out" | tail -n 5
	fi
}

# expect_grep FILE PATTERN DESC
expect_grep() {
	if grep -qE -- "$2" "$1"; then ok "$3"; else not_ok "$3: no /$2/ in $(basename "$1")"; sed 's/^/    | /' "$1" | tail -n 10; fi
}

expect_no_grep() {
	if grep -qE -- "$2" "$1"; then not_ok "$3: /$2/ found in $(basename "$1")"; sed 's/^/    | /' "$1" | tail -n 10; else ok "$3"; fi
}

# expect_lines FILE N DESC: the file has exactly N lines
expect_lines() {
	local n
	n=$(wc -l <"$1")
	if [ "$n" -eq "$2" ]; then ok "$3"; else not_ok "$3: $n lines, expected $2"; sed 's/^/    | /' "$1" | tail -n 10; fi
}

# expect_db_ok DB DESC: the database file is sound: PRAGMA integrity_check
# says "ok" and PRAGMA foreign_key_check finds no row without its parent
# (with the sqlite3 tool, waiting for a writer as crashlab does). For every
# test that hurts a run on purpose: a killed crashlab, a guest that panics
# or hangs, a checker that dies on a state.
expect_db_ok() {
	local db=$1 desc=$2 out rc
	if ! command -v sqlite3 >/dev/null 2>&1; then
		skip "$desc" "the sqlite3 tool is not installed"
		return
	fi
	if [ ! -f "$db" ]; then
		not_ok "$desc: '$db' does not exist"
		return
	fi
	out=$(sqlite3 -bail -cmd '.timeout 30000' "$db" 'PRAGMA integrity_check; PRAGMA foreign_key_check;' 2>&1)
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$out" = ok ]; then
		ok "$desc"
	else
		not_ok "$desc: '$db' is not sound (sqlite3 exit $rc)"
		printf '%s\n' "$out" | sed 's/^/    | /' | head -n 10
	fi
}

# db_ids DB [states]: a batch's runs and fs runs, by id, in storing order
# (with "states": its crash states' ids too, with their fs run and index)
db_ids() {
	local states=""
	[ "${2:-}" = states ] && states="SELECT 'state', id, fsrun_id, idx FROM states ORDER BY id;"
	sqlite3 -batch -noheader "$1" "
	SELECT 'run', id, status, exit_code, workload_file, length(workload_text), crash_mode, seed, max_states, torn
	  FROM runs ORDER BY id;
	SELECT 'fsrun', f.id, f.run_id, r.workload_file, f.fs, f.outcome, f.error, f.models
	  FROM fsruns f JOIN runs r ON r.id = f.run_id ORDER BY f.id;
	$states"
}

# db_outcomes DB: what a database holds whatever the ids and the write-log
# positions: op results, states' mount, fsck and tree, verdicts (sorted)
db_outcomes() {
	sqlite3 -batch -noheader "$1" "
	SELECT DISTINCT r.workload_file, f.fs, 'op', o.op_id, o.text, o.ret, o.err
	  FROM ops o JOIN fsruns f ON f.id = o.fsrun_id JOIN runs r ON r.id = f.run_id;
	SELECT DISTINCT r.workload_file, f.fs, 'state', s.mount_ok, s.fsck_clean, s.tree_hash, s.explained
	  FROM states s JOIN fsruns f ON f.id = s.fsrun_id JOIN runs r ON r.id = f.run_id;
	SELECT DISTINCT r.workload_file, f.fs, 'verdict', v.model, v.rule, v.verdict, v.op_id, v.path, v.reason
	  FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id JOIN runs r ON r.id = f.run_id;" |
		sort
}

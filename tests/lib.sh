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

#!/usr/bin/env bash
# crashlab export without a guest, on the schema fixture's stored runs
# (tests/fixtures/db): argument errors and their exit codes, files never
# replaced without --force, the C program built with plain cc and run on a
# host directory (no mount) giving the stored op results, the .wl parsing
# back, and an xfstests test that passes bash -n.
. "$(dirname "$0")/../lib.sh"

gzip -dc tests/fixtures/db/v2.db.gz >"$T/db"
cd "$T" || exit 1
X() { "$CRASHLAB" export --db "$T/db" "$@"; }

expect_exit 2 "no arguments" -- X
expect_exit 2 "no state" -- X 1 ext4 --format wl --out o
expect_exit 2 "no --format" -- X 1 ext4 2 --out o
expect_exit 2 "an unknown --format" -- X 1 ext4 2 --format pdf --out o
expect_grep "$T/err" "use image, c, xfstests or wl" "says which formats there are"
expect_exit 2 "no --out" -- X 1 ext4 2 --format wl
expect_exit 2 "--qcow2 with another format" -- X 1 ext4 2 --format c --qcow2 --out o
expect_exit 2 "--image-format gif" -- X 1 ext4 2 --format image --image-format gif --out o
expect_exit 2 "--model with --format c" -- X 1 ext4 2 --format c --model posix --out o
expect_exit 2 "an unknown model" -- X 1 ext4 2 --format xfstests --model nosuch --out o
expect_exit 2 "a RUN that is not one" -- X one ext4 2 --format wl --out o
expect_exit 66 "an unknown run" -- X 9 ext4 2 --format wl --out o
expect_grep "$T/err" "run 9 does not exist" "names the run"
expect_exit 66 "an unknown file system" -- X 1 btrfs 2 --format wl --out o
expect_grep "$T/err" "it has: ext4, f2fs" "names the file systems the run has"
expect_exit 66 "an unknown state" -- X 1 ext4 7 --format wl --out o
expect_grep "$T/err" "states 0..2" "names the states there are"
expect_exit 66 "a database that does not exist" -- "$CRASHLAB" export --db "$T/none.db" 1 ext4 2 --format wl --out o
expect_exit 0 "--help" -- "$CRASHLAB" export --help
expect_grep "$T/out" "_flakey_drop_and_remount" "--help says what the xfstests test does"
[ ! -e o ] && ok "nothing was written by the refused calls" || not_ok "'o' was created by a refused call"

# --- wl
expect_exit 0 "--format wl" -- X 1 ext4 2 --format wl --out o/new
expect_exit 0 "the .wl parses and simulates" -- "$CRASHLAB" run o/new/run1-ext4-state2.wl --check
expect_exit 73 "an existing file is not replaced" -- X 1 ext4 2 --format wl --out o/new
expect_grep "$T/err" "exists; --force replaces it" "says --force replaces it"
expect_exit 0 "--force replaces it" -- X 1 ext4 2 --format wl --out o/new --force
: >o/file
expect_exit 73 "--out that is a file" -- X 1 ext4 2 --format wl --out o/file

# --- c
expect_exit 0 "--format c" -- X 1 ext4 2 --format c --out o
if command -v cc >/dev/null; then
	expect_exit 0 "the program builds with cc -Wall -Werror" -- cc -Wall -Werror -O2 -o "$T/prog" o/run1-ext4-state2.c
	mkdir "$T/dir"
	"$T/prog" "$T/dir" >"$T/ran" 2>&1
	sqlite3 -separator "$(printf '\t')" "$T/db" "SELECT op_id, ret, err FROM ops WHERE fsrun_id = 1 ORDER BY op_id" >"$T/stored"
	if cut -f1-3 "$T/ran" | diff "$T/stored" - >"$T/diff"; then
		ok "run on a directory, it gives the stored results (op, ret, errno) of every op"
	else
		not_ok "the program's results differ from the stored ones"
		sed 's/^/    | /' "$T/diff"
	fi
	cmp -s "$T/ran" o/run1-ext4-state2.expected && ok "and the .expected file's lines" || not_ok ".expected differs"
	expect_grep "$T/ran" "^6	-1	2	ENOENT	unlink A/nope$" "the failed unlink as ENOENT"
	expect_exit 2 "the program without a directory" -- "$T/prog"
else
	skip "the C program builds" "no cc"
fi

# --- xfstests: run 1 has no LOST, so a test of what xfs promises and ext4 kept
expect_exit 65 "xfstests of a state without a LOST" -- X 1 ext4 2 --format xfstests --out xt
expect_grep "$T/err" "no LOST promise" "says there is no finding"
expect_exit 0 "xfstests with --model xfs" -- X 1 ext4 2 --format xfstests --model xfs --number 123 --out xt
expect_exit 0 "the test passes bash -n" -- bash -n xt/tests/generic/123
[ -x xt/tests/generic/123 ] && ok "the test is executable" || not_ok "the test is not executable"
expect_grep xt/tests/generic/123.out "^QA output created by 123$" "the golden output's first line"
expect_grep xt/tests/generic/123.out "^A/bar: file$" "A/bar promised (the rename before the fsync, xfs's SOMC)"

# --- image: the fixture's base image is not in any cache here
expect_exit 66 "an image whose base image is gone" -- X 1 ext4 2 --format image --out img
expect_grep "$T/err" "cannot read the base image" "says the base image is missing"
[ -z "$(ls img 2>/dev/null)" ] && ok "no partial image left" || not_ok "a partial image was left: $(ls img)"

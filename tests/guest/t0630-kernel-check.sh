#!/usr/bin/env bash
# The series as git commits and its maintainer's check: 'crashlab kernel tree'
# makes the git tree from kernel/, 'kernel export' writes it back unchanged,
# and 'kernel check' applies the series a patch at a time, builds the touched
# objects, checks Documentation references, kernel-doc and checkpatch, and
# fails on a copy of the series with a bug planted in each of those.
. "$(dirname "$0")/../lib.sh"

k="$T/k"
cp -r kernel "$k"
expect_exit 0 "kernel tree makes the git tree from a copy of kernel/" -- "$CRASHLAB" kernel tree --reset --patches "$k"
tree=$(tail -n 1 "$T/out")
n=$(git -C "$tree" rev-list --count base..series 2>/dev/null)
want=$(grep -c '^[0-9]' kernel/series)
if [ "$n" = "$want" ]; then ok "branch 'series' has the $want patches of kernel/series"; else not_ok "branch 'series' has '$n' commits, want $want"; fi
expect_grep "$T/err" "the cover letter as its description" "the cover letter's text became the branch description"

rm "$k"/0*.patch
expect_exit 0 "kernel export writes the branch back" -- "$CRASHLAB" kernel export --patches "$k"
if diff -r kernel "$k" >"$T/diff"; then ok "the export is byte for byte kernel/: patches, cover letter and series"
else not_ok "the export differs from kernel/"; head -20 "$T/diff" | sed 's/^/    | /'; fi

# The real series passes, table and all (objects only: the full build at every
# patch is for the series' maintainer, not for the suite).
expect_exit 0 "kernel check passes on kernel/" -- "$CRASHLAB" kernel check --build touched
for p in $(grep '^[0-9]' kernel/series); do
	expect_grep "$T/out" "^${p:0:62} +ok +(ok [0-9]+s 0W|nothing) +ok +(ok|-) +(ok|-) +0E" "check table: $p applies, builds, no new broken reference, kernel-doc or docutils warning, no checkpatch error"
done
expect_grep "$T/out" "^selftests: ok: [0-9]+ passed, 0 failed, [0-9]+ skipped in 7 runs" "check table: the selftests passed in their 7 runs"

# Plant a bug of each kind in a copy and check that each is found.
b="$T/bad"
cp -r kernel "$b"
p4=$(ls "$b"/0004-*.patch) p1=$(ls "$b"/0001-*.patch) p5=$(ls "$b"/0005-*.patch)
# 0004: a statement without its semicolon (the hunk keeps its line count)
sed -i 's/^+	ret = fbarrier_write_and_wait(inode);$/+	ret = fbarrier_write_and_wait(inode)/' "$p4"
# 0001: vfs.rst points to a document no patch before it adds
sed -i 's|^+	It need not make anything durable; |+	It need not make anything durable (Documentation/filesystems/no-such-doc.rst); |' "$p1"
# 0007: a section title with too short an underline (docutils warns)
p7=$(ls "$b"/0007-*.patch)
sed -i '/^+Covered set$/{n;s/^+-*$/+----/}' "$p7"
# the cover letter no longer explains 0005's OPEN_ENDED_LINE
sed -i 's/OPEN_ENDED_LINE/OPEN-ENDED LINE/' "$b/0000-cover-letter.patch"
expect_exit 1 "kernel check fails on the planted bugs" -- "$CRASHLAB" kernel check --build touched --no-selftests --patches "$b"
expect_grep "$T/out" "^0004-[^ ]* +ok +FAIL" "a patch that does not compile: build FAIL at 0004"
expect_grep "$T/out" "^0005-[^ ]* +ok +ok .*\(unexplained\)" "a checkpatch finding the cover letter does not name: unexplained at 0005"
expect_grep "$T/out" "^0003-[^ ]* +ok +ok .* 2C$" "0003's BIT_MACRO checks stay explained"
if grep -q "no-such-doc" "$p1"; then
	expect_grep "$T/out" "^0001-[^ ]* +ok +ok [0-9]+s 0W +1 new" "a reference to a missing document: refs '1 new' at 0001"
else
	not_ok "the planted reference did not land in 0001 (the test's sed no longer matches vfs.rst's entry)"
fi
# (0001's planted reference stays broken at every later patch: refs "1 new" there too)
expect_grep "$T/out" "^0007-[^ ]* +ok +nothing +1 new +- +[0-9]+ new +0E" "a malformed .rst section: new docutils warnings at 0007"
expect_grep "$T/err" "error:" "the details on stderr show the compiler's error"

expect_exit 2 "kernel check rejects an unknown --build" -- "$CRASHLAB" kernel check --build some

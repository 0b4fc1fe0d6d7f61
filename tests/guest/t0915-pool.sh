#!/usr/bin/env bash
# Guests that live across recordings (engine/pool.c, through the hidden
# `crashlab bench pool`): several workloads per file system through one
# recording guest and one checker guest give the same states, trees,
# mount and fsck outcomes and verdicts as a guest per recording and per
# check; a recording guest of two regions boots again for the third
# workload; a checker guest that dies is replaced; a log too big to send
# gets a checker of its own. The times of both paths are printed (not
# checked).
. "$(dirname "$0")/../lib.sh"

WLS=(tutorials/seed/seed.wl tests/known/generic-034.wl tests/known/generic-321a.wl tests/known/generic-106.wl)
P=$T/p

# stats_is FS PATTERN DESC: the pool's counts for FS
stats_is() { expect_grep "$P/stats-$1.txt" "^$2\$" "$3"; }
# same_states FS DESC: the pool's states are the classic path's. Where a
# file system's own timing gives its write log a few entries more or less
# in one recording (btrfs does, between two classic runs too), the states'
# log positions differ and nothing else may: said in a comment.
mask() { sed -E 's/(prefix|upto)=[0-9]+/\1=N/g; s/log_entries=[0-9]+ setup_end=[0-9]+/log=N/' "$1"; }
same_states() {
	local n
	n=$(grep -c ' mount=' "$P/pool-$1.txt")
	if [ -s "$P/classic-$1.txt" ] && diff -u "$P/classic-$1.txt" "$P/pool-$1.txt" >"$T/diff"; then
		ok "$2 ($n states)"
	elif [ -s "$P/classic-$1.txt" ] && diff -u <(mask "$P/classic-$1.txt") <(mask "$P/pool-$1.txt") >/dev/null; then
		ok "$2 ($n states; log positions differ, the file system's timing)"
		grep -E '^[-+][^-+]' "$T/diff" | sed 's/^/# /' | cut -c1-100
	else
		not_ok "$2"
		sed 's/^/    | /' "$T/diff" | head -n 20
	fi
}
figures() { grep -E '^(fs|ext4|xfs|btrfs|f2fs|milliseconds) ' "$T/out" | sed 's/^/# /'; }

# Four workloads on ext4 and xfs: one recording guest, one checker guest each.
expect_exit 0 "four workloads on ext4 and xfs, pooled and classic" -- \
	"$CRASHLAB" bench pool --fs ext4,xfs --out "$P" "${WLS[@]}"
figures
for fs in ext4 xfs; do
	stats_is $fs "record_boots=1 checker_boots=1 recordings=4 checks=[1-9][0-9]* guest_failures=0" \
		"$fs: four recordings in one recording guest, their states in one checker guest"
	same_states $fs "$fs: every state's spec, tree hash, mount and fsck outcome and verdicts as in the classic path"
	n=$(grep -c ' outcome=ok ' "$P/pool-$fs.txt")
	[ "$n" = 4 ] && ok "$fs: four fs runs ended ok" || not_ok "$fs: $n fs runs ended ok"
done
cp "$P/classic-xfs.txt" "$T/classic-xfs.txt"

# Btrfs and f2fs with two regions per recording guest: the third workload boots another.
expect_exit 0 "three workloads on btrfs and f2fs, two regions per recording guest" -- \
	"$CRASHLAB" bench pool --fs btrfs,f2fs --slots 2 --out "$P" "${WLS[@]:0:3}"
figures
for fs in btrfs f2fs; do
	stats_is $fs "record_boots=2 checker_boots=1 recordings=3 checks=[1-9][0-9]* guest_failures=0" \
		"$fs: two regions per guest, so a second recording guest for the third workload; one checker guest"
	same_states $fs "$fs: every state as in the classic path"
done

# A checker guest that dies on the fifth state it is sent (the second state
# of the second workload) is killed and replaced; everything else goes on.
expect_exit 0 "a checker guest that dies mid-batch" -- env CRASHLAB_TEST_CRASH_STATE=5 \
	"$CRASHLAB" bench pool --fs ext4 --no-classic --out "$P" "${WLS[@]:0:3}"
stats_is ext4 "record_boots=1 checker_boots=2 recordings=3 checks=[1-9][0-9]* guest_failures=1" \
	"ext4: the dead checker guest counted and replaced"
down=$(grep -c ' mount=0 ' "$P/pool-ext4.txt")
[ "$down" = 1 ] && ok "ext4: the one state that took the guest down is a state that did not mount" ||
	not_ok "ext4: $down states did not mount"
n=$(grep -c ' outcome=ok ' "$P/pool-ext4.txt")
[ "$n" = 3 ] && ok "ext4: the three fs runs ended ok" || not_ok "ext4: $n fs runs ended ok"
grep -E '^generic-321a.wl [0-9]' "$P/pool-ext4.txt" >"$T/after"
if grep -q ' mount=1 ' "$T/after" && ! grep -q ' mount=0 ' "$T/after"; then
	ok "ext4: the next workload was checked in the new guest"
else
	not_ok "ext4: the workload after the crash: $(grep -c . "$T/after") states"
fi

# A log bigger than the pool sends gets a checker guest of its own (the
# threshold made one byte for the test), with the same states.
expect_exit 0 "logs too big to send" -- env CRASHLAB_TEST_POOL_LOG_MAX=1 \
	"$CRASHLAB" bench pool --fs xfs --no-classic --out "$P" "${WLS[@]:0:2}"
stats_is xfs "record_boots=1 checker_boots=2 recordings=2 checks=[1-9][0-9]* guest_failures=0" \
	"xfs: a checker guest per log that is not sent"
grep -E '^(seed|generic-034)\.wl ' "$T/classic-xfs.txt" >"$P/classic-xfs.txt"
same_states xfs "xfs: states checked with the log as a disk are the classic path's"

#!/usr/bin/env bash
# The kernel series' barrier calls: the kselftests of the series in a guest
# on every file system and tmpfs ('crashlab kernel test'), then the ops
# fbarrier, fdatabarrier and 'rename ... barrier' through 'crashlab run'.
. "$(dirname "$0")/../lib.sh"

kpath=$("$CRASHLAB" kernel build 2>/dev/null) || { not_ok "the kernel does not build"; exit 0; }
tbl=$(dirname "$kpath")/linux/arch/x86/entry/syscalls/syscall_64.tbl
if ! grep -q fdatabarrier "$tbl" 2>/dev/null; then
	skip "the barrier selftests" "the built kernel has no fbarrier (kernel/series does not carry the patches)"
	exit 0
fi

expect_exit 0 "crashlab kernel test passes" -- "$CRASHLAB" kernel test
n=$(grep -c '^# Totals: pass:[0-9]* fail:0 ' "$T/out")
if [ "$n" -eq 7 ]; then ok "every selftest passed on ext4, xfs, btrfs, f2fs, tmpfs and ext4 and xfs through device-mapper"; else not_ok "$n of 7 passes passed"; grep -E '^not ok|Totals' "$T/out" | sed 's/^/    | /'; fi
expect_no_grep "$T/out" '^not ok' "no selftest failed"
# The checks that need a file system with writeback, or the error target,
# ran (not skipped) where they apply.
for check in 'write error: the first barrier fails with EIO' 'write error: reported once per file description' \
	'write error: another open description gets it once' 'written range is delalloc before the barrier'; do
	n=$(grep -c "^ok [0-9]* $check" "$T/out")
	want=2; [ "$check" = 'written range is delalloc before the barrier' ] && want=4
	if [ "$n" -eq "$want" ]; then ok "ran $want times: $check"; else not_ok "ran $n times, want $want: $check"; fi
done
n=$(grep -c '^ok [0-9]* fdatabarrier leaves no unwritten extent' "$T/out")
if [ "$n" -eq 6 ]; then ok "FIEMAP checked on every fs with writeback"; else not_ok "FIEMAP checked $n times, want 6"; fi
expect_exit 2 "kernel test rejects an unknown fs" -- "$CRASHLAB" kernel test --fs ntfs

# The ops through the agent: they return 0 now, and the data is there.
cat >"$T/barrier.wl" <<'WL'
[setup]
write other "before"
sync
[run]
write t 64K
fbarrier t
fdatabarrier t
rename t f barrier
write u "small"
rename u v barrier
fsync f
sync
WL
db="$T/crash.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }
# Judged under the barrier model only (and the universal rules): the other
# models' verdicts on this workload are not what this test is about.
expect_exit 0 "a barrier workload runs on all four file systems, nothing LOST under 'barrier'" -- \
	"$CRASHLAB" run "$T/barrier.wl" --model barrier --db "$db"
for fs in ext4 xfs btrfs f2fs; do
	bad=$(q "SELECT group_concat(o.text || ' = ' || o.ret || '/' || o.err, '; ') FROM ops o JOIN fsruns r ON r.id = o.fsrun_id
		 WHERE r.fs = '$fs' AND o.section = 1 AND o.ret < 0")
	if [ -z "$bad" ]; then ok "$fs: fbarrier, fdatabarrier and rename ... barrier return 0"; else not_ok "$fs: failed ops: $bad"; fi
	size=$(q "SELECT n.size FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns r ON r.id = s.fsrun_id
		  WHERE r.fs = '$fs' AND s.kind = 'final' AND n.path = 'f'")
	if [ "$size" = 65536 ]; then ok "$fs: f has its 64 KiB in the final state"; else not_ok "$fs: final f size '$size'"; fi
	t=$(q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns r ON r.id = s.fsrun_id
	       WHERE r.fs = '$fs' AND s.kind = 'final' AND n.path IN ('t', 'u')")
	# after the closing sync: a barrier makes no rename durable by itself (on
	# btrfs, whose barrier is a file-system sync, 'u' is on disk until then)
	if [ "$t" = 0 ]; then ok "$fs: the barrier renames moved their sources"; else not_ok "$fs: t or u still there"; fi
	kept=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns r ON r.id = s.fsrun_id
		  WHERE r.fs = '$fs' AND v.model = 'barrier' AND v.verdict = 'kept'")
	if [ "$kept" -ge 1 ]; then ok "$fs: the barrier model judged and kept $kept promise(s)"; else not_ok "$fs: no barrier promise judged"; fi
done

# The cost benchmark runs and prints its ratios (the figures themselves are
# measurements, not assertions).
expect_exit 0 "bench barrier runs on four fs over dm-delay, flush delays 0 and 5 ms" -- \
	"$CRASHLAB" bench barrier -n 3 --delay 0,5
for fs in ext4 xfs btrfs f2fs; do
	for d in 0 5; do
		expect_grep "$T/out" "^$fs +${d}ms +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+x +[0-9.]+x$" \
			"bench barrier: $fs at ${d} ms, ops/s of five calls and two ratios"
	done
done
expect_grep "$T/out" "^operations per second of the atomic replace" "bench barrier says what it measured"
expect_grep "$T/out" "then syncfs, timed together" "and that the syncfs is timed"
expect_exit 2 "bench barrier refuses a bad delay list" -- "$CRASHLAB" bench barrier --delay 5,x
expect_grep "$T/err" "--delay takes up to 8 comma-separated milliseconds" "and says what --delay takes"

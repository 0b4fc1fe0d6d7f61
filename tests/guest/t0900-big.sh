#!/usr/bin/env bash
# Big workloads: a 1 GiB write records and yields crash states on every file
# system; a write past the end of the disk is a short write with ENOSPC in
# the op result and a judged run; a full host disk under the write log is
# exit 73 with a message, not a recording.
. "$(dirname "$0")/../lib.sh"

db="$T/big.db"
q() { sqlite3 -batch -noheader -cmd '.timeout 30000' "$db" "$1"; }

cat >"$T/1g.wl" <<'WL'
[setup]
write g 4K
sync
[run]
write f 1G
fsync f
rename f h
fsync h
WL
expect_exit 0 "a 1 GiB write, fsync and rename on all four file systems (--size 2G)" -- \
	"$CRASHLAB" run "$T/1g.wl" --size 2G --max-states 4 --db "$db"
run=$(q "SELECT max(id) FROM runs")
for fs in ext4 xfs btrfs f2fs; do
	expect_grep "$T/out" "^$fs +[2-9] +0 +0 +[1-9]" "$fs: crash states, each mounts, fsck clean"
	o=$(q "SELECT outcome || ' ' || log_bytes FROM fsruns WHERE run_id = $run AND fs = '$fs'")
	if [ "${o%% *}" = ok ] && [ "${o#* }" -ge $((1 << 30)) ]; then ok "$fs: the log holds the whole GiB (${o#* } bytes)"; else not_ok "$fs: outcome/log bytes '$o'"; fi
	r=$(q "SELECT ret || ' ' || err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $run AND f.fs = '$fs' AND o.op_id = 3")
	if [ "$r" = "$((1 << 30)) 0" ]; then ok "$fs: the write wrote 1 GiB"; else not_ok "$fs: the write returned '$r'"; fi
	h=$(q "SELECT n.size FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	       WHERE f.run_id = $run AND f.fs = '$fs' AND s.kind = 'final' AND n.path = 'h'")
	if [ "$h" = $((1 << 30)) ]; then ok "$fs: the final state has h, 1 GiB"; else not_ok "$fs: final h has size '$h'"; fi
done
bad=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
	 WHERE f.run_id = $run AND (v.verdict = 'broken' OR (v.verdict = 'LOST' AND v.model IN ('posix', f.fs)))")
if [ "$bad" -eq 0 ]; then ok "nothing LOST or broken"; else not_ok "$bad LOST/broken verdicts"; fi
expect_db_ok "$db" "the database is sound"

# A write past the end of the 512 MiB disk.
cat >"$T/full.wl" <<'WL'
[setup]
write g 4K
sync
[run]
write f 600M
fsync f
rename f h
fsync h
WL
expect_exit 0 "a 600 MiB write on a 512 MiB disk is judged, nothing LOST" -- "$CRASHLAB" run "$T/full.wl" --db "$db"
run=$(q "SELECT max(id) FROM runs")
for fs in ext4 xfs btrfs f2fs; do
	r=$(q "SELECT ret || ' ' || err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $run AND f.fs = '$fs' AND o.op_id = 3")
	if [ "${r#* }" = 28 ] && [ "${r%% *}" -gt 0 ] && [ "${r%% *}" -lt $((600 << 20)) ]; then
		ok "$fs: the write is short with ENOSPC (${r%% *} bytes)"
	else
		not_ok "$fs: the write returned '$r'"
	fi
	n=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND f.fs = '$fs' AND s.judged = 1")
	if [ "$n" -ge 2 ]; then ok "$fs: $n crash states judged"; else not_ok "$fs: $n states judged"; fi
done
expect_exit 0 "show the run" -- "$CRASHLAB" show "$run" --db "$db"
expect_grep "$T/out" "[0-9]+ ENOSPC +[0-9]+ +write f 600M" "show gives the op's result: bytes written and ENOSPC"

# The host's disk full under the write log: a cache whose runs/ folder is a
# 64 MiB tmpfs (kernel, images and base images are the real cache's).
if [ "$(id -u)" != 0 ]; then
	skip "a full host disk under the write log" "mounting a tmpfs needs root"
else
	real=$("$CRASHLAB" doctor 2>&1 | sed -n "s/.* cache '\([^']*\)'.*/\1/p" | head -n 1)
	mkdir -p "$T/xdg/crashlab/runs"
	for d in kernel images base accel; do [ -e "$real/$d" ] && ln -s "$real/$d" "$T/xdg/crashlab/$d"; done
	if mount -t tmpfs -o size=64M tmpfs "$T/xdg/crashlab/runs"; then
		cat >"$T/host.wl" <<'WL'
[run]
write f 200M
fsync f
WL
		XDG_CACHE_HOME="$T/xdg" expect_exit 73 "the host disk fills under the write log: exit 73" -- \
			"$CRASHLAB" run "$T/host.wl" --fs ext4 --db "$db"
		expect_grep "$T/err" "the disk that holds the write log .* is full" "and it says the host's disk is full"
		expect_grep "$T/err" "XDG_CACHE_HOME" "and what to do"
		umount "$T/xdg/crashlab/runs"
		expect_db_ok "$db" "the database is sound after it"
	else
		not_ok "cannot mount a tmpfs for the full-disk check"
	fi
fi

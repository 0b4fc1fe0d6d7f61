#!/usr/bin/env bash
# The checker builds every crash state of a guest's life on one
# device-mapper device: a new snapshot table is swapped in per state, over
# one of two copy-on-write stores used in turn, and the device outlives a
# write log (a checker guest of a batch serves many). Stale data from the
# state before - the device's page cache, the other store, the last log's
# table - would show as a wrong tree. The oracle: `export --verify` rebuilds
# a state's disk on the host (no device mapper) and checks it in a fresh
# guest, whose first state is built on a new device; it must see the tree
# the batch stored. Checked for the states whose tree differs from the state
# checked just before them, in a batch of two workloads (so the second
# run's states are built on the device the first run's states left), on
# ext4 and xfs with --crash write (many states, many trees): the seed and
# a workload of overwrites and new names.
. "$(dirname "$0")/../lib.sh"

db="$T/db"
q() { sqlite3 -batch -noheader -separator ' ' "$db" "$1"; }

cat >"$T/b.wl" <<'WL'
[setup]
mkdir B
write B/x 0 8K
sync
[run]
write B/x 0 4K
mkdir B/d
creat B/d/y
fsync B/d/y
fsync B/d
WL
"$CRASHLAB" run tutorials/seed/seed.wl "$T/b.wl" --fs ext4,xfs --crash write -j 1 --db "$db" >"$T/run.out" 2>&1
rc=$?
[ "$rc" -le 1 ] && ok "a batch of 2 workloads on ext4 and xfs, --crash write (exit $rc)" ||
	{ not_ok "crashlab run: exit $rc"; tail -5 "$T/run.out"; exit 0; }
[ "$(q "SELECT count(*) FROM runs")" = 2 ] && ok "2 runs stored" || not_ok "runs: $(q "SELECT count(*) FROM runs")"

for fs in ext4 xfs; do
	# the states in the order the checker built them, with their trees
	q "SELECT f.run_id, s.idx, s.tree_hash, s.n_nodes FROM states s JOIN fsruns f ON f.id = s.fsrun_id
	   WHERE f.fs = '$fs' ORDER BY f.run_id, s.idx" >"$T/$fs.states"
	n=$(wc -l <"$T/$fs.states")
	distinct=$(cut -d' ' -f3 "$T/$fs.states" | sort -u | wc -l)
	[ "$distinct" -ge 3 ] && ok "$fs: $n states, $distinct distinct trees" ||
		not_ok "$fs: only $distinct distinct trees in $n states: the test would not see stale data"
	# each run's first state, and per run the first two states whose tree
	# differs from the one built before it
	awk -v prev= '{ first = ($1 != run); if (first || ($3 != prev && picked[$1] < 2)) { print $1, $2, $3, $4; if (!first) picked[$1]++ } run = $1; prev = $3 }' \
		"$T/$fs.states" >"$T/$fs.pick"
	second_first=$(awk '$1 == 2 { print $2; exit }' "$T/$fs.pick")
	[ -n "$second_first" ] && ok "$fs: the second run's first state is checked against the oracle" ||
		not_ok "$fs: the second run has no states"
	while read -r run idx hash nodes; do
		rm -rf "$T/img"
		if ! "$CRASHLAB" export --db "$db" "$run" "$fs" "$idx" --format image --out "$T/img" --verify >"$T/out" 2>&1; then
			not_ok "$fs: run $run state $idx: export --verify failed"
			tail -5 "$T/out"
			continue
		fi
		seen=$(sed -n 's/^verified: .*(hash \([0-9a-f]*\), \([0-9]*\) nodes).*/\1 \2/p' "$T/out")
		if [ "$seen" = "$hash $nodes" ]; then
			ok "$fs: run $run state $idx: a fresh guest sees the stored tree ($nodes nodes)"
		else
			not_ok "$fs: run $run state $idx: a fresh guest sees '$seen', the batch stored '$hash $nodes'"
		fi
	done <"$T/$fs.pick"
done

#!/usr/bin/env bash
# Overlayfs in the lab ([overlay] workloads, tutorials/overlayfs/overlay-*.wl)
# on ext4 and xfs as the upper file system: a lower file copied up by a
# setxattr, written, then fbarrier (or 'rename ... barrier') and a rename.
# With the barrier no barrier promise is LOST and every crash state that
# shows the new name shows the xattr and all the data; fbarrier on the
# overlay file reaches the upper file system's own barrier (kernel patch
# 0006): it returns 0 and adds no flush. Without the barrier the new name
# shows up without the data written through the overlay.
. "$(dirname "$0")/../lib.sh"

db="$T/overlay.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }
dir=tutorials/overlayfs

# Bad use, before any guest: the header must come first.
printf '[setup]\nwrite f 4K\n[overlay]\n[run]\nsync\n' >"$T/late.wl"
expect_exit 65 "run --check: [overlay] after [setup] is refused" -- "$CRASHLAB" run "$T/late.wl" --check
expect_grep "$T/err" "late.wl:3:1: \[overlay\] must come first" "the error names the file and line"
expect_exit 0 "run --check: the litmus workloads parse" -- "$CRASHLAB" run "$dir/overlay-fbarrier.wl" --check
expect_grep "$T/out" "through the overlay" "run --check says the workload runs on an overlay"

# What a state that shows g must hold: op 1's 64 KiB (copied up from the
# lower layer), op 4's 64 KiB after it, and the xattr.
want=$(printf 'p1,%.0s' $(seq 16); printf 'p4,%.0s' $(seq 15); printf p4)
# states of run $1 on fs $2 that show g; those of them that lack the data
# or the xattr; those that show the merged view's f next to g
g_states() { q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	WHERE f.run_id = $1 AND f.fs = '$2' AND n.path = 'g' $3"; }

for wl in overlay-fbarrier overlay-rename-barrier; do
	for mode in flush reorder; do
		expect_exit 0 "$wl, --crash $mode: no LOST under barrier, no universal rule broken" -- \
			"$CRASHLAB" run "$dir/$wl.wl" --fs ext4,xfs --crash "$mode" --max-states 24 --seed 1 \
			--model barrier --db "$db"
		run=$(q "SELECT max(id) FROM runs")
		for fs in ext4 xfs; do
			seen=$(g_states "$run" "$fs" "")
			bad=$(g_states "$run" "$fs" "AND (n.size <> 131072 OR n.blocks IS NOT '$want'
				OR n.xattrs IS NOT 'user.x=copied-up')")
			if [ "$seen" -ge 1 ] && [ "$bad" = 0 ]; then
				ok "$wl $mode $fs: g in $seen states, each with the xattr and all 128 KiB"
			else
				not_ok "$wl $mode $fs: g in $seen states, $bad of them without the xattr or the data"
			fi
		done
		# the program's view: the merged tree, never the layers; the lower
		# layer's f is hidden (a whiteout) wherever g shows
		layers=$(q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
			WHERE f.run_id = $run AND n.path IN ('lower', 'upper', 'work')")
		both=$(q "SELECT count(*) FROM nodes g JOIN nodes f ON f.state_id = g.state_id AND f.path = 'f'
			JOIN states s ON s.id = g.state_id JOIN fsruns r ON r.id = s.fsrun_id
			WHERE r.run_id = $run AND g.path = 'g'")
		if [ "$layers" = 0 ] && [ "$both" = 0 ]; then
			ok "$wl $mode: the overlay's merged view was checked (no layer directory, f hidden where g is)"
		else
			not_ok "$wl $mode: $layers layer directories captured, f next to g in $both states"
		fi
	done
done
kept=$(q "SELECT count(*) FROM verdicts WHERE model = 'barrier' AND verdict = 'kept'")
if [ "$kept" -ge 1 ]; then ok "the barrier model kept $kept promises on the overlay"; else not_ok "no barrier promise was judged"; fi
lost=$(q "SELECT count(*) FROM verdicts WHERE model = 'barrier' AND verdict = 'LOST'")
if [ "$lost" = 0 ]; then ok "no barrier promise LOST"; else not_ok "$lost barrier promises LOST"; fi

# fbarrier on the overlay file went to the upper file system's barrier: it
# returned 0, and its log position is the write's: no journal commit, no
# cache flush (overlayfs's fsync, its fallback, would flush on both). Only
# a periodic commit landing in the few ms between the two could move it.
for fs in ext4 xfs; do
	r=$(q "SELECT o.ret || ' ' || o.err || ' ' || (o.log_pos = w.log_pos)
		FROM ops o JOIN ops w ON w.fsrun_id = o.fsrun_id AND w.op_id = o.op_id - 1
		JOIN fsruns f ON f.id = o.fsrun_id JOIN runs r ON r.id = f.run_id
		WHERE r.workload_file LIKE '%overlay-fbarrier.wl' AND f.fs = '$fs' AND o.text = 'fbarrier f'
		  AND w.text = 'write f 64K 64K'")
	n=$(printf '%s\n' "$r" | grep -c .)
	good=$(printf '%s\n' "$r" | grep -c '^0 0 1$')
	if [ "$n" = 2 ] && [ "$good" = 2 ]; then
		ok "$fs: fbarrier on the overlay file returned 0 and added no flush (both runs)"
	else
		not_ok "$fs: fbarrier on the overlay file: ret errno same-position = $(echo $r)"
	fi
	r=$(q "SELECT o.ret || ' ' || o.err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id JOIN runs r ON r.id = f.run_id
		WHERE r.workload_file LIKE '%overlay-rename-barrier.wl' AND f.fs = '$fs' AND o.text = 'rename f g barrier'")
	if [ "$(echo $r)" = "0 0 0 0" ]; then ok "$fs: 'rename f g barrier' on the overlay returned 0"; else not_ok "$fs: rename ... barrier: $(echo $r)"; fi
done

# Without the barrier: on ext4 and xfs the rename reaches the log with the
# xattr, the data written through the overlay does not (delayed
# allocation): g shows the copy-up's 64 KiB alone. sequential reports it.
expect_exit 1 "overlay-no-barrier: sequential reports the violation" -- \
	"$CRASHLAB" run "$dir/overlay-no-barrier.wl" --fs ext4,xfs --model sequential --db "$db"
run=$(q "SELECT max(id) FROM runs")
n=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
       WHERE f.run_id = $run AND v.model = 'sequential' AND v.verdict = 'LOST'")
if [ "$n" -ge 1 ]; then ok "overlay-no-barrier: $n sequential LOST verdicts"; else not_ok "overlay-no-barrier: no violation reported"; fi
for fs in ext4 xfs; do
	short=$(g_states "$run" "$fs" "AND n.size = 65536 AND n.blocks = substr('$want', 1, 47)")
	noxattr=$(g_states "$run" "$fs" "AND n.xattrs IS NOT 'user.x=copied-up'")
	if [ "$short" -ge 1 ]; then ok "$fs without the barrier: g in $short states with op 1's 64 KiB alone"; else not_ok "$fs without the barrier: g never without op 4's data"; fi
	# not a promise, what the journal's order gives: the xattr goes with the rename
	if [ "$noxattr" = 0 ]; then ok "$fs without the barrier: g never without the xattr (journal order)"; else not_ok "$fs: g without the xattr in $noxattr states"; fi
done

# A batch: guests that live across recordings (engine/pool.c), the overlay
# workloads and the lesson's plain ones in turn on the same guests, so each
# session lets go of its overlay before the next disk.
expect_exit 0 "the lesson's folder as a batch: every run ok" -- \
	"$CRASHLAB" run "$dir/" --fs ext4,xfs -j 1 --db "$db"
expect_grep "$T/out" "6 runs: 6 ok, 0 with findings, 0 failed" "six workloads, none failed"
run=$(q "SELECT id FROM runs WHERE workload_file LIKE '%overlay-fbarrier.wl' ORDER BY id DESC LIMIT 1")
for fs in ext4 xfs; do
	seen=$(g_states "$run" "$fs" "")
	bad=$(g_states "$run" "$fs" "AND (n.blocks IS NOT '$want' OR n.xattrs IS NOT 'user.x=copied-up')")
	if [ "$seen" -ge 1 ] && [ "$bad" = 0 ]; then ok "batch, overlay-fbarrier $fs: g in $seen states, whole"; else not_ok "batch, overlay-fbarrier $fs: g in $seen states, $bad without the xattr or data"; fi
done
layers=$(q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	JOIN runs r ON r.id = f.run_id WHERE r.id > (SELECT max(id) - 6 FROM runs) AND r.workload_file LIKE '%/overlay-%'
	AND n.path IN ('lower', 'upper', 'work')")
plain=$(q "SELECT count(DISTINCT s.id) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	JOIN runs r ON r.id = f.run_id WHERE r.id > (SELECT max(id) - 6 FROM runs) AND r.workload_file LIKE '%/overlayfs.wl'
	AND n.path = 'upper'")
if [ "$layers" = 0 ] && [ "$plain" -ge 1 ]; then
	ok "batch: overlay runs checked through the overlay, the plain lesson on the fs itself ($plain states show its upper/)"
else
	not_ok "batch: $layers layer directories in overlay runs, $plain plain states with upper/"
fi
expect_db_ok "$db" "the database is sound"

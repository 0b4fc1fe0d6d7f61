#!/usr/bin/env bash
# The barrier litmus workloads L1-L9 on all four file systems, with crash
# states at every flush and with reordered cache contents: the barrier model
# finds nothing LOST and no universal rule breaks. N1 (L1 without the
# barrier) shows the violation the barrier prevents.
. "$(dirname "$0")/../lib.sh"

db="$T/litmus.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }
for wl in tutorials/barrier/l*.wl; do
	name=$(basename "$wl" .wl)
	for mode in flush reorder; do
		expect_exit 0 "$name, --crash $mode: no LOST under barrier, no universal rule broken" -- \
			"$CRASHLAB" run "$wl" --crash "$mode" --max-states 24 --seed 1 --model barrier --db "$db"
	done
done
judged=$(q "SELECT count(*) FROM verdicts WHERE model = 'barrier' AND verdict = 'kept'")
if [ "$judged" -ge 1 ]; then ok "the barrier model kept $judged promises across the litmus runs"; else not_ok "no barrier promise was ever judged"; fi
lost=$(q "SELECT count(*) FROM verdicts WHERE model = 'barrier' AND verdict = 'LOST'")
if [ "$lost" = 0 ]; then ok "no barrier promise LOST"; else not_ok "$lost barrier promises LOST"; fi

# N1: without the barrier, ext4 and xfs can show f renamed but empty.
expect_exit 1 "N1 without the barrier: sequential reports the violation" -- \
	"$CRASHLAB" run tutorials/barrier/n1-no-barrier.wl --fs ext4,xfs --model sequential --db "$db"
run=$(q "SELECT max(id) FROM runs")
n=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
       WHERE f.run_id = $run AND v.model = 'sequential' AND v.verdict = 'LOST'")
if [ "$n" -ge 1 ]; then ok "N1: $n sequential LOST verdicts"; else not_ok "N1: no violation reported"; fi

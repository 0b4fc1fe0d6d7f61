#!/usr/bin/env bash
# Ctrl-C and kill -9 while a run checks its states: the run stops within
# 2 s with nothing half-stored, reads as interrupted or crashed, leaves no
# guest behind, and `run --resume` ends with what an uninterrupted check of
# the same recordings stores.
. "$(dirname "$0")/../lib.sh"

db="$T/run.db"
q() { sqlite3 -batch -noheader -cmd '.timeout 30000' "$1" "$2"; }

# What a run stored for one fs, times and ids left out.
dump() {
	q "$1" "SELECT s.idx, s.kind, s.spec, s.point, s.mount_ok, s.fsck_clean, s.tree_hash, s.judged, s.explained,
		       coalesce(s.difference, ''), coalesce(s.timeline, '')
		FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $2 AND f.fs = '$3' ORDER BY s.idx"
	q "$1" "SELECT s.idx, v.model, v.rule, v.verdict, v.op_id, v.path, v.expected, v.observed
		FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
		WHERE f.run_id = $2 AND f.fs = '$3' ORDER BY s.idx, v.id"
	q "$1" "SELECT s.idx, n.path, n.type, n.size, n.blocks FROM nodes n JOIN states s ON s.id = n.state_id
		JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $2 AND f.fs = '$3' ORDER BY s.idx, n.path"
}

# same_as REF RUN DESC: run RUN stored, per fs, what it stored in the database REF
same_as() {
	local fs
	for fs in ext4 xfs; do
		if [ "$(dump "$db" "$2" $fs)" = "$(dump "$1" "$2" $fs)" ] && [ -n "$(dump "$db" "$2" $fs)" ]; then
			ok "$fs: $3"
		else
			not_ok "$fs: $3: it differs"
			diff <(dump "$1" "$2" $fs) <(dump "$db" "$2" $fs) | head -n 10 | sed 's/^/    | /'
		fi
	done
}

# QEMU processes of run $1 still running (their disks are in the run's folder)
guests() {
	local wd
	wd=$(q "$db" "SELECT workdir FROM runs WHERE id = $1")
	[ -n "$wd" ] || { echo "no workdir"; return; }
	pgrep -f "qemu-system.*$wd" | wc -l
}

# start_run SIGNAL: run the seed on ext4 and xfs; send SIGNAL once xfs has
# checked a state; sets rc, stop_s (seconds from the signal to the exit)
start_run() {
	local sig=$1
	: >"$T/err"
	"$CRASHLAB" run tutorials/seed/seed.wl --fs ext4,xfs --db "$db" >"$T/out" 2>"$T/err" &
	local pid=$! t0
	for _ in $(seq 600); do
		grep -q "xfs: checking: .*2 of" "$T/err" 2>/dev/null && break
		sleep 0.2
	done
	running_guests=$(guests "$(q "$db" "SELECT max(id) FROM runs")")
	t0=$(date +%s.%N)
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	stop_s=$(echo "$(date +%s.%N) - $t0" | bc)
}

# 1. Ctrl-C (SIGINT)
start_run INT
run=$(q "$db" "SELECT max(id) FROM runs")
if [ "$running_guests" = 1 ]; then ok "while it ran, its checker guest was seen"; else not_ok "guests seen while running: $running_guests"; fi
if [ "$rc" -eq 130 ]; then ok "SIGINT: crashlab exits 130"; else not_ok "SIGINT: exit $rc"; sed 's/^/    | /' "$T/err" | tail -n 5; fi
if [ "$(echo "$stop_s < 2" | bc)" = 1 ]; then ok "and stops within 2 s (${stop_s} s)"; else not_ok "it took ${stop_s} s to stop"; fi
expect_grep "$T/out" "crashlab run --resume $run" "the run table says how to go on"
st=$(q "$db" "SELECT status || ' ' || exit_code FROM runs WHERE id = $run")
if [ "$st" = "interrupted 130" ]; then ok "the run is stored as interrupted"; else not_ok "the run is stored as '$st'"; fi
xo=$(q "$db" "SELECT outcome FROM fsruns WHERE run_id = $run AND fs = 'xfs'")
if [ "$xo" = interrupted ]; then ok "xfs's fs run is stored as interrupted"; else not_ok "xfs's fs run is '$xo'"; fi
half=$(q "$db" "SELECT count(*) FROM states s WHERE NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.state_id = s.id)
		OR (s.mount_ok = 1 AND NOT EXISTS (SELECT 1 FROM nodes n WHERE n.state_id = s.id))")
if [ "$half" -eq 0 ]; then ok "every stored state is whole (tree and verdicts)"; else not_ok "$half states half-stored"; fi
expect_db_ok "$db" "the database is sound after SIGINT"
sleep 0.5
if [ "$(guests "$run")" = 0 ]; then ok "no guest is left running"; else not_ok "guests still run: $(guests "$run")"; fi
expect_exit 0 "crashlab list shows it" -- "$CRASHLAB" list --db "$db"
expect_grep "$T/out" "^ +$run .* interrupted " "as interrupted"

# The reference: the same recordings, their states all checked from the
# start (the interrupted run with xfs's stored states taken out).
cp "$db" "$T/ref.db"
q "$T/ref.db" "PRAGMA foreign_keys = ON; DELETE FROM states WHERE fsrun_id IN
	(SELECT id FROM fsruns WHERE run_id = $run AND fs = 'xfs')"
expect_exit 0 "the reference: every xfs state of the same recording checked" -- \
	"$CRASHLAB" run --resume "$run" --db "$T/ref.db"

expect_exit 0 "run --resume goes on with the interrupted run" -- "$CRASHLAB" run --resume "$run" --db "$db"
expect_grep "$T/err" "xfs: [1-9][0-9]* crash states? checked before it stopped: going on" "it says what it keeps"
st=$(q "$db" "SELECT status || ' ' || exit_code || ' ' || resumes FROM runs WHERE id = $run")
if [ "$st" = "ok 0 1" ]; then ok "the resumed run ends ok, one resume counted"; else not_ok "the resumed run is '$st'"; fi
same_as "$T/ref.db" "$run" "the resumed run stored what the uninterrupted check stored"
expect_db_ok "$db" "the database is sound after the resume"
expect_exit 2 "a run that ended cannot be resumed" -- "$CRASHLAB" run --resume "$run" --db "$db"
expect_grep "$T/err" "ended \(status ok\): there is nothing to resume" "and says so"

# 2. crashlab itself killed (kill -9): no handler runs
start_run KILL
run=$(q "$db" "SELECT max(id) FROM runs")
sleep 0.5
if [ "$(guests "$run")" = 0 ]; then ok "kill -9: the guests die with crashlab"; else not_ok "kill -9: guests still run: $(guests "$run")"; fi
expect_db_ok "$db" "the database is sound after kill -9"
expect_exit 0 "crashlab list after kill -9" -- "$CRASHLAB" list --db "$db"
expect_grep "$T/out" "^ +$run .* crashed " "shows the run as crashed (stored as running, its lock free)"
cp "$db" "$T/ref2.db"
q "$T/ref2.db" "PRAGMA foreign_keys = ON; DELETE FROM states WHERE fsrun_id IN
	(SELECT id FROM fsruns WHERE run_id = $run AND fs = 'xfs')"
expect_exit 0 "the reference check of the crashed run's recordings" -- "$CRASHLAB" run --resume "$run" --db "$T/ref2.db"
expect_exit 0 "run --resume goes on with the crashed run" -- "$CRASHLAB" run --resume "$run" --db "$db"
same_as "$T/ref2.db" "$run" "after kill -9 and resume, the same as the uninterrupted check"
expect_db_ok "$db" "the database is sound at the end"

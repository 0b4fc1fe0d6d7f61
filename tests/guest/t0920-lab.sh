#!/usr/bin/env bash
# The live lab from a pipe: ops on all four file systems side by side, a
# crash stored as a run, why, save, bad lines that leave the session going;
# then `crashlab run` of the saved session gives the verdicts the lab's
# crash gave; Ctrl-C and end of input stop every guest.
. "$(dirname "$0")/../lib.sh"

db="$T/lab.db"
q() { sqlite3 -batch -noheader -cmd '.timeout 30000' "$db" "$1"; }

expect_exit 0 "crashlab lab --help" -- "$CRASHLAB" lab --help
expect_grep "$T/out" "^usage: crashlab lab" "lab --help prints its usage"
expect_grep "$T/out" "why PATH" "lab --help lists the commands"
expect_exit 2 "crashlab lab with a workload argument is a usage error" -- "$CRASHLAB" lab x.wl --db "$db"
expect_exit 2 "crashlab lab with an unknown model" -- "$CRASHLAB" lab --model nosuch --db "$db"

# QEMU processes of lab sessions of crashlab process $1 (their disks are in the session's folder)
lab_guests() { pgrep -f "qemu-system.*/lab/[^ ]*-$1/" | wc -l; }

cat >"$T/session" <<EOS
mkdir A
write A/foo "hello"
fsync A/foo
frobnicate A/foo
write A/foo "unterminated
rename A/foo A/bar
write A/foo "world"
sync
crash
why A/bar
save $T/saved.wl
show ext4
ops
write B 64K
crash all
help fsync
EOS
start=$(date +%s.%N)
"$CRASHLAB" lab --db "$db" <"$T/session" >"$T/out" 2>"$T/err" &
pid=$!
wait $pid
rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
if [ $rc -eq 0 ]; then ok "a scripted session on all four file systems ends with its input (exit 0, ${secs%.*} s)"; else not_ok "the session exited $rc"; sed 's/^/    | /' "$T/err" | tail -n 15; fi
n=$(lab_guests $pid)
if [ "$n" -eq 0 ]; then ok "no recording guest is left after the end of input"; else not_ok "$n guests left running"; fi
expect_grep "$T/out" "^op +ext4 +xfs +btrfs +f2fs" "the results are one column per file system"
expect_grep "$T/out" "^1 +ok +ok +ok +ok +mkdir A" "op 1 ran on all four"
expect_grep "$T/out" "^3 +ok +ok +ok +ok +fsync A/foo" "fsync ran on all four"
expect_grep "$T/err" "stdin:4:1: unknown op 'frobnicate'" "an unknown op is reported as stdin:LINE:COL"
expect_grep "$T/err" "stdin:5:[0-9]+: .*" "a malformed line is reported with its line"
expect_grep "$T/err" "^ +\\^" "a caret under the column"
expect_grep "$T/out" "^4 +ok +ok +ok +ok +rename A/foo A/bar" "the session goes on after bad lines: the next op is op 4, on every guest"
expect_grep "$T/out" "^crash after op 6: run 1, ext4 [0-9]+ states?, xfs [0-9]+ states?, btrfs [0-9]+ states?, f2fs [0-9]+ states?" "crash stores a run"
expect_grep "$T/out" "What each file system kept, final crash state" "crash shows what each file system kept"
expect_grep "$T/out" "A/bar +\"hello\" +\"hello\" = +\"hello\" = +\"hello\" = +\"hello\" =" "A/bar (synced) is kept as promised on every fs"
expect_grep "$T/out" "A/foo +\"world\" +\"world\" = +\"world\" = +\"world\" = +\"world\" =" "A/foo (synced) is kept as promised on every fs"
expect_grep "$T/out" "rule sync: " "why cites the promise that covers the path"
expect_grep "$T/out" "^ +kept +\\[.*posix" "why gives the verdict per model"
expect_grep "$T/out" "^saved 6 ops to" "save says what it wrote"
expect_grep "$T/out" "^ext4 \\(posix,ext4\\): ok" "show ext4 lists its states"
expect_grep "$T/out" "^crash after op 7: run 2" "a second crash, after more ops, is a second run (the guests went on)"
expect_grep "$T/out" "^fsync P$" "help fsync gives the syntax"
expect_grep "$T/out" "fsync.file: .*posix" "help fsync names the promises and their models"

# The stored crashes read like any run.
expect_exit 0 "crashlab list shows the crashes" -- "$CRASHLAB" list --db "$db"
expect_grep "$T/out" "lab-crash-1.wl" "the first crash is listed under its workload name"
expect_exit 0 "crashlab report on the lab's crash" -- "$CRASHLAB" report 1 --db "$db"
nfs=$(q "SELECT count(*) FROM fsruns WHERE run_id = 1 AND outcome = 'ok'")
if [ "$nfs" = 4 ]; then ok "the crash stored four fs runs, all ok"; else not_ok "$nfs ok fs runs"; fi

# `crashlab run` of the saved session: the same ops, and the same verdicts
# in the final state (the power cut after the last op) on every fs.
expect_grep "$T/saved.wl" "^\\[run\\]$" "the saved session is a workload"
expect_exit 0 "crashlab run on the saved session" -- "$CRASHLAB" run "$T/saved.wl" --db "$db"
run=$(q "SELECT max(id) FROM runs")
verdicts() {
	q "SELECT v.model, v.rule, v.verdict, v.op_id, v.trigger_op, v.path, v.expected, v.observed
	   FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
	   WHERE f.run_id = $1 AND f.fs = '$2' AND s.kind = 'final' ORDER BY 1, 2, 3, 4, 5, 6, 7, 8"
}
ops() { q "SELECT o.op_id, o.text, o.ret, o.err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $1 AND f.fs = '$2' ORDER BY o.op_id"; }
for fs in ext4 xfs btrfs f2fs; do
	a=$(verdicts 1 $fs); b=$(verdicts "$run" $fs)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		ok "$fs: crashlab run of the saved session gives the lab crash's verdicts ($(echo "$a" | wc -l) verdicts)"
	else
		not_ok "$fs: the verdicts differ"; diff <(echo "$a") <(echo "$b") | head -n 10 | sed 's/^/    | /'
	fi
	a=$(ops 1 $fs); b=$(ops "$run" $fs)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "$fs: the same ops with the same results"; else not_ok "$fs: the ops differ"; diff <(echo "$a") <(echo "$b") | head -n 6 | sed 's/^/    | /'; fi
done
expect_db_ok "$db" "the database is sound after the lab"

# The seed example loaded into a session: its [setup] is the session's
# setup, and the crash judges as `crashlab run` of the seed does.
printf 'load tutorials/seed/seed.wl\ncrash\nsave %s\nreset\nops\nmkdir C\nreplay\nquit\nmkdir D\n' "$T/seed-lab.wl" >"$T/session2"
expect_exit 0 "a session that loads the seed example" -- sh -c "\"$CRASHLAB\" lab --fs ext4 --db \"$db\" <\"$T/session2\""
lab_run=$(q "SELECT max(id) FROM runs")
expect_grep "$T/out" "^fresh file systems with the setup of tutorials/seed/seed.wl" "load takes the seed's [setup] as the session's"
expect_grep "$T/out" "^6 +ok +fsync A/foo" "the seed's run ops follow"
expect_grep "$T/seed-lab.wl" "^\[setup\]$" "save writes the setup as [setup]"
expect_grep "$T/out" "^fresh file systems .*the session is empty" "reset starts fresh file systems"
expect_grep "$T/out" "^the session has no op yet" "after reset the session is empty"
expect_grep "$T/out" "^1 +ok +mkdir C" "after reset ops number from 1"
expect_grep "$T/out" "the session's ops ran again" "replay runs the session's ops again on fresh file systems"
expect_no_grep "$T/out" "mkdir D" "quit ends the session: what follows it is not read"
expect_exit 0 "crashlab run of the seed example on ext4" -- "$CRASHLAB" run tutorials/seed/seed.wl --fs ext4 --db "$db"
run=$(q "SELECT max(id) FROM runs")
a=$(verdicts "$lab_run" ext4); b=$(verdicts "$run" ext4)
o1=$(q "SELECT o.op_id, o.section, o.text, o.ret, o.err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $lab_run ORDER BY 1")
o2=$(q "SELECT o.op_id, o.section, o.text, o.ret, o.err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $run ORDER BY 1")
if [ -n "$o1" ] && [ "$o1" = "$o2" ]; then ok "the lab's crash stored the seed's ops, sections and results"; else not_ok "the seed's ops differ"; diff <(echo "$o1") <(echo "$o2") | sed 's/^/    | /'; fi
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok "ext4: the lab's crash of the seed judges as crashlab run of the seed ($(echo "$a" | wc -l) verdicts)"; else not_ok "ext4: seed verdicts differ"; diff <(echo "$a") <(echo "$b") | head -n 10 | sed 's/^/    | /'; fi

# A guest that dies mid-session: its column says so, the others go on, a
# crash is stored for the ones up, replay brings it back; then Ctrl-C ends
# the session with 130 and no guest left.
mkfifo "$T/fifo"
"$CRASHLAB" lab --fs ext4,xfs --db "$db" <"$T/fifo" >"$T/out" 2>"$T/err" &
pid=$!
exec 3>"$T/fifo"
echo 'write f "x"' >&3
for _ in $(seq 300); do grep -q 'write f' "$T/out" && break; sleep 0.2; done
qpid=$(pgrep -f "qemu-system.*/lab/[^ ]*-$pid/0/xfs.qcow2")
if [ -n "$qpid" ]; then kill -9 $qpid; fi
printf 'fsync f\ncrash\nreplay\n' >&3
for _ in $(seq 600); do grep -q "the session's ops ran again" "$T/out" && break; sleep 0.2; done
expect_grep "$T/out" "^2 +ok +\(down\) +fsync f" "a guest that died: its column says down, the other fs goes on"
expect_grep "$T/err" "xfs: the recording guest is down" "the dead guest is reported"
expect_grep "$T/out" "^crash after op 2: run [0-9]+, ext4 [0-9]+ states? \(" "the crash is stored for the file system that is up"
expect_grep "$T/out" "^2 +ok +ok +fsync f" "replay ran the session's ops again on fresh file systems, xfs too"
n=$(lab_guests $pid)
kill -INT $pid
wait $pid
rc=$?
exec 3>&-
if [ $rc -eq 130 ]; then ok "Ctrl-C at the prompt ends the lab with 130"; else not_ok "Ctrl-C: exit $rc"; fi
if [ "$n" -eq 2 ] && [ "$(lab_guests $pid)" -eq 0 ]; then ok "the guests that ran stopped with it"; else not_ok "guests: $n before, $(lab_guests $pid) after"; fi

# On a terminal (tmux): the prompt, completion of an op name and of a path
# the session made, Ctrl-C dropping the line being typed, the history kept
# in the file CRASHLAB_LAB_HISTORY names, Ctrl-D ends the session with 0.
if ! command -v tmux >/dev/null 2>&1; then
	skip "the lab on a terminal" "tmux is not installed"
else
	sess="t0920-$$"
	tmux new-session -d -s "$sess" -x 160 -y 50 \
		"CRASHLAB_LAB_HISTORY='$T/hist' '$CRASHLAB' lab --fs ext4 --db '$db'; echo \"exit=\$?\" >'$T/tty-exit'; sleep 60"
	screen() { tmux capture-pane -p -J -t "$sess"; }
	wait_for() { for _ in $(seq 300); do screen | grep -qE -- "$1" && return 0; sleep 0.2; done; return 1; }
	if wait_for '^lab> '; then ok "the prompt comes up on a terminal"; else not_ok "no prompt"; screen | tail -5 | sed 's/^/    | /'; fi
	tmux send-keys -t "$sess" 'mkd' Tab 'Z' Enter
	if wait_for '^1 +ok +mkdir Z'; then ok "tab completes an op name"; else not_ok "mkd<Tab> did not become mkdir"; screen | tail -5 | sed 's/^/    | /'; fi
	tmux send-keys -t "$sess" 'write Z/f "q"' Enter
	wait_for '^2 +ok' >/dev/null
	tmux send-keys -t "$sess" 'fsync Z/' Tab Enter
	if wait_for '^3 +ok +fsync Z/f'; then ok "tab completes a path the session made"; else not_ok "fsync Z/<Tab> did not become Z/f"; screen | tail -5 | sed 's/^/    | /'; fi
	# Ctrl-C at the prompt drops the line being typed; the session goes on
	tmux send-keys -t "$sess" 'unlink Z/f'
	sleep 0.5
	tmux send-keys -t "$sess" C-c
	sleep 0.5
	tmux send-keys -t "$sess" 'ops' Enter
	if wait_for '^lab> ops$' && ! screen | grep -qE '^4 +.*unlink Z/f' && screen | grep -qE '^3 +ok +fsync Z/f$' &&
		[ ! -s "$T/tty-exit" ]; then
		ok "Ctrl-C at the prompt drops the line, the session goes on"
	else
		not_ok "Ctrl-C at the prompt"; screen | tail -8 | sed 's/^/    | /'
	fi
	tmux send-keys -t "$sess" C-d
	for _ in $(seq 100); do [ -s "$T/tty-exit" ] && break; sleep 0.2; done
	if grep -q '^exit=0$' "$T/tty-exit" 2>/dev/null; then ok "Ctrl-D ends the session with 0"; else not_ok "Ctrl-D: $(cat "$T/tty-exit" 2>/dev/null)"; fi
	if grep -q 'mkdir\\040Z\|mkdir Z' "$T/hist" 2>/dev/null; then ok "the history is kept"; else not_ok "the history file has no 'mkdir Z'"; fi
	tmux kill-session -t "$sess" 2>/dev/null
fi

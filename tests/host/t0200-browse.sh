#!/usr/bin/env bash
# crashlab browse on the fixture database (tests/fixtures/browse/runs.sql,
# two real stored runs on four file systems), driven by key scripts: every
# screen (runs, the fs x state matrix, a state, two fs side by side), the
# ? legend, c compare, / search with n and N, q and Q, 80x24 and resizes,
# compared with the golden screens of tests/golden/browse-*.txt
# (CRASHLAB_UPDATE_GOLDEN=1 writes them again); colours off with NO_COLOR
# and TERM=dumb; the errors and their exit codes; the database never
# written; and one real terminal through tmux.
. "$(dirname "$0")/../lib.sh"

if ! command -v sqlite3 >/dev/null; then
	skip "browse" "needs the sqlite3 tool ('make deps')"
	exit 0
fi
DB=$T/db/runs.db
mkdir -p "$T/db"
if ! sqlite3 "$DB" <tests/fixtures/browse/runs.sql; then
	not_ok "the fixture database loads"
	exit 1
fi
before=$(sha256sum "$DB" | cut -d' ' -f1)
export TERM=xterm
unset NO_COLOR CRASHLAB_BROWSE_KEYS CRASHLAB_BROWSE_SIZE

# browse [VAR=VALUE...] -- ARGS: the browser on the fixture, stdout in
# $T/out, stderr in $T/err, its exit code in $rc.
browse() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	env "${env[@]}" timeout -s KILL 60 "$CRASHLAB" browse --db "$DB" "$@" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	cat "$T/err" >>"$T/all-err"
}

# golden NAME DESC [VAR=VALUE...] -- ARGS
golden() {
	local name=$1 desc=$2
	shift 2
	browse "$@"
	local g=tests/golden/browse-$name.txt
	if [ "$rc" -ne 0 ]; then
		not_ok "$desc: exit $rc"
		sed 's/^/    stderr: /' "$T/err" | tail -n 10
		return
	fi
	if grep -qE 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' "$T/err"; then
		not_ok "$desc: a sanitizer report"
		head -n 20 "$T/err" | sed 's/^/    | /'
		return
	fi
	if [ -n "${CRASHLAB_UPDATE_GOLDEN:-}" ]; then
		cp "$T/out" "$g"
		ok "$desc (golden written)"
	elif diff -u "$g" "$T/out" >"$T/diff"; then
		ok "$desc"
	else
		not_ok "$desc: the screens differ from $g"
		head -n 40 "$T/diff" | sed 's/^/    | /'
	fi
}

# The screens, at 80x24 unless said otherwise.
golden runs "runs list: move, open a run's matrix" -- --keys 'j k j k <Enter>'
golden matrix "the matrix: cells by h/l/j/k, ? legend on and off, a state's summary" -- 1 --keys '? l l j j j ? h k k G g'
golden state "a state: tree beside the program's, verdicts, timeline, mount and fsck, scrolled, h/l the states" -- 1 \
	--keys 'j j j l <Enter> j <PgDn> <PgDn> G g ? ? h h l q'
golden compare "c: two file systems at one crash point, c again the next one, h/l the crash points, q back" -- 1 \
	--keys 'j j j l c c c h l l q k c'
golden search "/ search with n and N on the runs, the matrix and a state; not found" -- \
	--keys '/ext4 <Enter> n n <Enter> /LOST <Enter> n N <Enter> /fsck <Enter> n N /zzz <Enter> q q q'
golden resize "80x24 to 100x30 and 60x20 on a state and the matrix" -- 1 \
	--keys 'j j j l <Enter> <resize=100x30> <resize=60x20> q <resize=80x24>'
golden quit "Q quits from a state at once, and nothing after it is read" -- 1 --keys '<Enter> Q j j'

# The same through the environment, at another size.
browse -- --size 100x30 --keys 'j <Enter> c'
cp "$T/out" "$T/by-option"
browse CRASHLAB_BROWSE_SIZE=100x30 "CRASHLAB_BROWSE_KEYS=j <Enter> c" --
if [ "$rc" -eq 0 ] && cmp -s "$T/out" "$T/by-option" && grep -q '^--- c (100x30)$' "$T/out"; then
	ok "CRASHLAB_BROWSE_KEYS and CRASHLAB_BROWSE_SIZE do what --keys and --size do"
else
	not_ok "CRASHLAB_BROWSE_KEYS and CRASHLAB_BROWSE_SIZE differ from --keys and --size (exit $rc)"
fi

# q on the runs list quits; the dump says so and nothing follows.
browse -- --keys 'q j'
if [ "$rc" -eq 0 ] && [ "$(tail -n 1 "$T/out")" = '--- q: quit' ] && [ "$(grep -c '^--- ' "$T/out")" -eq 2 ]; then
	ok "q on the runs list quits"
else
	not_ok "q on the runs list: exit $rc, last line '$(tail -n 1 "$T/out")'"
fi

# Colours: on for xterm (the '!' cell of f2fs in the naive pair 3, the '='
# cells in pair 1), off with NO_COLOR and TERM=dumb: the same text, no pair.
SCRIPT='? j j j l <Enter> q c'
browse -- 1 --keys "$SCRIPT"
cp "$T/out" "$T/colour"
if grep -q '^f2fs    = !$' "$T/colour" && grep -qE '^~  7         1 3' "$T/colour"; then
	ok "colours on: the matrix's '=' in pair 1 (kept) and '!' in pair 3 (naive)"
else
	not_ok "colours on: no '=' in pair 1 and '!' in pair 3 on the f2fs row"
	grep -E '^(f2fs|~  7)' "$T/colour" | head -n 4 | sed 's/^/    | /'
fi
grep -v '^~' "$T/colour" >"$T/colour.text"
for how in NO_COLOR=1 TERM=dumb; do
	browse "$how" -- 1 --keys "$SCRIPT"
	if [ "$rc" -ne 0 ]; then
		not_ok "$how: exit $rc"
	elif grep -E '^~ +[0-9]+ ' "$T/out" | cut -c6- | grep -q '[0-9]'; then
		not_ok "$how: a colour pair on the screen"
		grep -E '^~ +[0-9]+ .*[0-9]' "$T/out" | head -n 3 | sed 's/^/    | /'
	elif ! grep -v '^~' "$T/out" | cmp -s - "$T/colour.text"; then
		not_ok "$how: the text differs from the coloured screens"
	else
		ok "$how: the same screens without any colour"
	fi
done

# Errors and their exit codes (README "Exit codes").
browse -- 9 --keys q
if [ "$rc" -eq 66 ] && grep -q "run 9 does not exist" "$T/err"; then
	ok "a run that does not exist: exit 66 and says so"
else
	not_ok "a run that does not exist: exit $rc: $(head -n 1 "$T/err")"
fi
browse -- nine --keys q
if [ "$rc" -eq 2 ] && grep -q "RUN must be a run id" "$T/err"; then
	ok "a run that is no run id: usage error, exit 2"
else
	not_ok "a run that is no run id: exit $rc: $(head -n 1 "$T/err")"
fi
timeout 60 "$CRASHLAB" browse --db "$T/db/none.db" --keys q >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ "$rc" -eq 66 ] && grep -q "does not exist" "$T/err" && ! [ -e "$T/db/none.db" ]; then
	ok "a missing database: exit 66, and it is not created"
else
	not_ok "a missing database: exit $rc: $(head -n 1 "$T/err")"
fi
echo "not a database" >"$T/db/notes.txt"
timeout 60 "$CRASHLAB" browse --db "$T/db/notes.txt" --keys q >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ "$rc" -eq 65 ] && [ "$(cat "$T/db/notes.txt")" = "not a database" ]; then
	ok "a file that is not a crashlab database: exit 65, left as it was"
else
	not_ok "a file that is not a crashlab database: exit $rc: $(head -n 1 "$T/err")"
fi
browse -- --keys '<Bogus>'
if [ "$rc" -eq 2 ] && grep -q "'<Bogus>', which is no key" "$T/err"; then
	ok "a key script with a bad key: exit 2"
else
	not_ok "a key script with a bad key: exit $rc: $(head -n 1 "$T/err")"
fi
browse -- --size 10x3 --keys q
if [ "$rc" -eq 2 ]; then ok "a size too small: exit 2"; else not_ok "a size too small: exit $rc"; fi
browse --
if [ "$rc" -eq 2 ] && grep -q "browse needs a terminal" "$T/err" && ! [ -s "$T/out" ]; then
	ok "no terminal and no key script: exit 2, one clear line, nothing drawn"
else
	not_ok "no terminal and no key script: exit $rc: $(head -n 1 "$T/err")"
fi

# A database at an older schema version is not migrated: browse only reads.
gzip -dc tests/fixtures/db/v2.db.gz >"$T/v2.db"
v2=$(sha256sum "$T/v2.db" | cut -d' ' -f1)
timeout 60 "$CRASHLAB" browse --db "$T/v2.db" --keys q >"$T/out" 2>"$T/err" </dev/null
rc=$?
if [ "$rc" -eq 65 ] && grep -q "schema version 2" "$T/err" && [ "$(sha256sum "$T/v2.db" | cut -d' ' -f1)" = "$v2" ]; then
	ok "an older schema version: exit 65, the file not migrated"
else
	not_ok "an older schema version: exit $rc: $(head -n 1 "$T/err")"
fi

# A scrolled matrix says where its digits start.
golden narrow "a matrix wider than the screen scrolls, its label says from where" -- 2 --size 16x12 --keys 'j j l l l l h h h h'

# What the fixture's runs do not have, made by hand in a copy: a state that
# did not mount (with escape sequences in its mount message), one that was
# not judged, and a file system without crash states.
ODD=$T/odd.db
cp "$DB" "$ODD"
sqlite3 "$ODD" "PRAGMA foreign_keys = ON;
UPDATE states SET mount_ok = 0, mount_msg = 'mount: bad superblock' || char(27) || '[2J' || char(10) || 'second line',
	fsck_status = -1, tree_hash = NULL WHERE id = 4;
DELETE FROM nodes WHERE state_id = 4;
DELETE FROM verdicts WHERE state_id IN (4, 5);
UPDATE states SET judged = 0 WHERE id = 5;
DELETE FROM states WHERE fsrun_id = 3;
UPDATE fsruns SET outcome = 'panic', error = 'Kernel panic - not syncing' WHERE id = 3;"
timeout 60 "$CRASHLAB" browse --db "$ODD" 1 --keys '<Enter> G q l <Enter> q j c' >"$T/out" 2>"$T/err" </dev/null
rc=$?
awk '/^--- /{c++} c==1' "$T/out" >"$T/odd-matrix"
awk '/^--- /{c++} c==2 || c==3' "$T/out" >"$T/odd-state"
awk '/^--- /{c++} c==6' "$T/out" >"$T/odd-state2"
if [ "$rc" -ne 0 ]; then
	not_ok "odd states: exit $rc"
	head -n 5 "$T/err" | sed 's/^/    | /'
else
	expect_grep "$T/odd-matrix" '^ext4    B \? \+$' "a state that did not mount is B, one not judged ?"
	expect_grep "$T/odd-matrix" '^xfs     \(no crash states: panic\)$' "a file system without states says why"
	expect_grep "$T/odd-state" 'the crash state did not mount' "a state that did not mount says so beside the program's tree"
	expect_grep "$T/odd-state" '^  \| mount: bad superblock\\x1b\[2J$' "the mount message, its escape sequence made harmless"
	expect_grep "$T/odd-state2" '^  \? not judged$' "a state not judged says so"
	expect_grep "$T/out" '^nothing to compare: xfs has no crash states$' "c on a file system without states says why"
	if LC_ALL=C grep -q "$(printf '\033')" "$T/out"; then
		not_ok "odd states: a raw escape byte in the screens"
	else
		ok "odd states: no raw escape byte in the screens"
	fi
fi

# A promise LOST: no real run in the fixture has one, so a copy gets one by
# hand (btrfs state 0's btrfs verdict on A/foo). Its cell is L in colour
# pair 4; with NO_COLOR the same L, uncoloured.
LOSTDB=$T/lost.db
cp "$DB" "$LOSTDB"
sqlite3 "$LOSTDB" "UPDATE verdicts SET verdict = 'LOST', reason = 'LOST: made by hand for this test'
	WHERE id = (SELECT v.id FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
		WHERE f.run_id = 1 AND f.fs = 'btrfs' AND s.idx = 0 AND v.model = 'btrfs' AND v.verdict = 'gone' LIMIT 1);"
env -u NO_COLOR timeout 60 "$CRASHLAB" browse --db "$LOSTDB" 1 --keys 'q' >"$T/lost" 2>&1 </dev/null
expect_grep "$T/lost" '^btrfs   L = \+$' "a state with a promise LOST is L in the matrix"
expect_grep "$T/lost" '^~  6         4 1 2$' "the L cell has the LOST colour (pair 4)"
NO_COLOR=1 timeout 60 "$CRASHLAB" browse --db "$LOSTDB" 1 --keys 'q' >"$T/lost-nc" 2>&1 </dev/null
expect_grep "$T/lost-nc" '^btrfs   L = \+$' "NO_COLOR: the L is there"
expect_no_grep "$T/lost-nc" '^~ +[0-9]+ .*[1-6]' "NO_COLOR: no colour pair on any row"

# --help teaches the screens, the keys and the matrix's characters.
"$CRASHLAB" browse --help >"$T/help" 2>&1
if grep -q "L  a promise of a selected model LOST" "$T/help" && grep -q "!  only a program assuming" "$T/help" &&
	grep -q "/TEXT Enter" "$T/help" && grep -q "<resize=WxH>" "$T/help" && grep -q "^  compare " "$T/help"; then
	ok "--help: screens, keys, the verdict characters and the key script"
else
	not_ok "--help lacks the screens, keys, verdict characters or key script"
fi

touch "$T/all-err"
expect_no_grep "$T/all-err" 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' "no sanitizer report from any browse"

# Read-only: the file is as it was, and nothing appeared beside it.
after=$(sha256sum "$DB" | cut -d' ' -f1)
extra=$(cd "$T/db" && ls | grep -v -x -e runs.db -e notes.txt)
if [ "$before" = "$after" ] && [ -z "$extra" ]; then
	ok "the database was never written, nothing appeared beside it"
else
	not_ok "the database changed or files appeared beside it: $extra"
fi

# A real terminal: tmux at 80x24, keys sent, the pane read back.
if ! command -v tmux >/dev/null; then
	skip "a real terminal through tmux" "tmux is not installed ('make deps')"
	exit 0
fi
S=crashlab-browse-$$
export TMUX_TMPDIR=$T
pane() { tmux capture-pane -t "$S" -p >"$T/pane" 2>/dev/null; }
# wait_for PATTERN: up to 10 s for the pane to show it
wait_for() {
	local i
	for i in $(seq 1 50); do
		pane
		grep -qE -- "$1" "$T/pane" && return 0
		sleep 0.2
	done
	return 1
}
if ! tmux new-session -d -s "$S" -x 80 -y 24 \
	"TERM=xterm-256color '$CRASHLAB' browse --db '$DB'; echo browse exited \$?; sleep 30"; then
	not_ok "tmux: cannot start a session"
	exit 0
fi
if wait_for 'crashlab browse: 2 runs'; then ok "tmux: the runs list"; else not_ok "tmux: no runs list"; cat "$T/pane" | sed 's/^/    | /'; fi
tmux send-keys -t "$S" Enter
if wait_for '^f2fs    = !'; then ok "tmux: Enter opens run 1's matrix"; else not_ok "tmux: no matrix"; sed 's/^/    | /' "$T/pane"; fi
tmux send-keys -t "$S" l j j j c
if wait_for 'A/bar +"hello" +gone -!'; then ok "tmux: c puts f2fs beside ext4"; else not_ok "tmux: no comparison"; sed 's/^/    | /' "$T/pane"; fi
tmux resize-window -t "$S" -x 100 -y 30 2>/dev/null
if wait_for 'program, op 6 {10,}'; then ok "tmux: redrawn for 100x30"; else not_ok "tmux: not redrawn after a resize"; sed 's/^/    | /' "$T/pane"; fi
tmux send-keys -t "$S" Q
if wait_for '^browse exited 0$'; then ok "tmux: Q quits with exit 0"; else not_ok "tmux: Q did not quit"; sed 's/^/    | /' "$T/pane"; fi
tmux kill-session -t "$S" 2>/dev/null
exit 0

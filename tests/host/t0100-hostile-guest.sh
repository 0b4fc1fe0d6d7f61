#!/usr/bin/env bash
# A broken or hostile guest, played by build/tests/fake-qemu in place of
# QEMU (CRASHLAB_QEMU): frames cut short, oversized or garbage, replies that
# never end, a guest that dies mid-reply or floods its console, junk
# numbers, and trees whose names hold escape sequences, '..', absolute
# paths, NULs or duplicates. Each must end with its documented exit code
# and one clear line, within a bounded time; what reaches the terminal is
# escaped, JSON stays valid, a malformed report is stored as a failed fs
# run with its reason, and no file appears outside the test's directories.
# Hanging guests meet their deadlines fast through CRASHLAB_TEST_SLOWDOWN.
# Under `make SANITIZE=...` the tool runs sanitized and any report fails.
. "$(dirname "$0")/../lib.sh"

FAKE=$PWD/build/tests/fake-qemu
if ! [ -x "$FAKE" ]; then
	not_ok "build/tests/fake-qemu is missing (make unit builds it)"
	exit 1
fi
for tool in sqlite3 python3 mkfs.ext4 qemu-img; do
	if ! command -v "$tool" >/dev/null; then
		skip "hostile guests" "needs $tool ('make deps')"
		exit 0
	fi
done
export CRASHLAB_QEMU=$FAKE XDG_CACHE_HOME=$T/cache
unset CRASHLAB_TEST_SLOWDOWN CRASHLAB_FAKE_GUEST CRASHLAB_FAKE_ON
WL=$PWD/tests/workloads/newfile-fsync.wl
W=$T/w/a/b # the tool's working directory: a '../../x' from it stays in $T
mkdir -p "$W" "$T/db"
# A file with a bzImage header, which is all the tool reads of a kernel.
head -c 4096 /dev/zero >"$T/bz"
printf '\x55\xaa' | dd of="$T/bz" bs=1 seek=510 conv=notrunc 2>/dev/null
printf 'HdrS' | dd of="$T/bz" bs=1 seek=514 conv=notrunc 2>/dev/null
LIMIT=90 # seconds any one command may take before it counts as a hang

# cl [VAR=VALUE...] -- ARGS: crashlab in $W with the fake guest's settings,
# killed (exit 137) if it hangs.
cl() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	(cd "$W" && env "${env[@]}" timeout -s KILL "$LIMIT" "$CRASHLAB" "$@")
}

# The checks every scenario gets: no raw control byte, C1 control or
# bidirectional override on the terminal, no sanitizer report.
terminal_safe() {
	local f=$1 what=$2
	if tr -d '\n\t' <"$f" | LC_ALL=C grep -q '[[:cntrl:]]' ||
		LC_ALL=C grep -qP '\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]' "$f"; then
		not_ok "$what: a control sequence reaches the terminal raw"
		LC_ALL=C grep -naP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]|\xe2\x80\xae' "$f" | cat -v | head -n 3 | sed 's/^/    | /'
	else
		ok "$what: nothing raw reaches the terminal"
	fi
}
no_sanitizer_report() {
	expect_no_grep "$1" 'ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:' "$2: no sanitizer report"
}

# guest NAME ON CODE MESSAGE [VAR=VALUE...] -- ARGS: crashlab ARGS against
# the fake guest NAME misbehaving on the request kind ON ("" for the first
# request). It must exit CODE (137: killed as hung) with MESSAGE (an ERE;
# "": no error at all) in its messages.
guest() {
	local name=$1 on=$2 code=$3 msg=$4
	shift 4
	local env=() what="$name${on:+ on $on}"
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	expect_exit "$code" "$what: crashlab $1 exits $code" -- \
		cl CRASHLAB_FAKE_GUEST="$name" CRASHLAB_FAKE_ON="$on" "${env[@]}" -- "$@"
	if [ -n "$msg" ]; then
		expect_grep "$T/err" "$msg" "$what: says /$msg/"
	else
		expect_no_grep "$T/err" 'error:' "$what: no error"
	fi
	terminal_safe "$T/err" "$what (stderr)"
	terminal_safe "$T/out" "$what (stdout)"
	no_sanitizer_report "$T/err" "$what"
}

boot() { guest "$@" -- boot --kernel "$T/bz" --accel tcg -- true; }
boot_slow() { guest "$@" -- boot --kernel "$T/bz" --accel tcg --timeout 2 -- true; }

# run NAME ON CODE MESSAGE [VAR=VALUE...]: a run of $WL (or $RUN_WL) on ext4
# into the database $DB, $T/db/NAME-ON[-WORKLOAD].db
run() {
	DB=$T/db/$1-${2:-any}${RUN_WL:+-${RUN_WL##*/}}.db
	guest "$@" -- run "${RUN_WL:-$WL}" --fs ext4 --kernel "$T/bz" --accel tcg --db "$DB"
}

# sql_is SQL EXPECTED DESC: a query on $DB gives EXPECTED (one line)
sql_is() {
	local got
	got=$(sqlite3 "$DB" "$1" 2>&1 | tr '\n' '|' | sed 's/|$//')
	if [ "$got" = "$2" ]; then ok "$3"; else not_ok "$3: '$got', expected '$2'"; fi
}
db_sound() {
	sql_is "PRAGMA integrity_check" ok "$1: the database passes integrity_check"
	sql_is "SELECT count(*) FROM runs WHERE status = 'running' OR finished_at IS NULL" 0 "$1: the run is finished in the database"
}

# ---- crashlab boot: the guest is up, then answers its command badly ----

boot ok "" 0 ""
expect_grep "$T/out" '^fake guest$' "ok: the command's output arrives"
boot hello-after-noise "" 0 ""
boot truncated "" 69 '^crashlab: error: guest lost: '
boot exit-mid "" 69 '^crashlab: error: guest lost: '
boot oversized "" 69 '^crashlab: error: guest lost: guest channel: frame of 4294967295 bytes exceeds the limit$'
boot garbage "" 69 '^crashlab: error: guest lost: guest channel: bad frame magic'
boot exit-status "" 69 '^crashlab: error: guest lost: guest channel: exit status 2147483647 out of range$'
boot panic "" 125 '^crashlab: error: guest kernel panic: Kernel panic - not syncing'
boot error-reply "" 127 '^crashlab: error: guest: no \\x1b\[31mway'
boot_slow silent "" 124 '^crashlab: error: guest timeout: '
boot_slow trickle "" 124 '^crashlab: error: guest timeout: '
boot_slow out-forever "" 124 '^crashlab: error: guest timeout: '
boot_slow console-flood "" 124 '^crashlab: error: guest timeout: '
boot no-hello "" 124 '^crashlab: error: guest timeout: the agent did not answer within 1 s of boot' CRASHLAB_TEST_SLOWDOWN=0.05
# crashlab try shows the first line a failed step printed: escaped.
guest error-reply "" 1 "" -- try --fs ext4 --kernel "$T/bz" --accel tcg
expect_grep "$T/out" '^ext4 +FAIL .* no \\x1b\[31mway' "error-reply: try shows the failing step's words, escaped"
expect_exit 69 "a QEMU that exits at once exits 69" -- cl CRASHLAB_QEMU=false -- boot --kernel "$T/bz" --accel tcg -- true
expect_grep "$T/err" '^crashlab: error: qemu failed before the guest was up' "and says QEMU failed"

# ---- crashlab run: the recording guest ----

run ok "" 0 ""
sql_is "SELECT outcome, (SELECT count(*) FROM states) FROM fsruns" "ok|1" "ok: the fs run and its state are stored"
db_sound ok
# A name of the workload's own is shown escaped too (progress, compare view).
printf '[setup]\nmkdir d\n[run]\nwrite d/n 4K\ncreat "d/\\x1b[31mevil\\x1b[0m"\nfsync d/n\n' >"$T/esc.wl"
RUN_WL=$T/esc.wl run ok "" 0 ""
expect_grep "$T/err" 'op 3/4: creat "d/\\x1b\[31mevil\\x1b\[0m" 0644$' "esc-workload: the progress line escapes the op"
expect_grep "$T/out" '^  d/\\x1b\[31mevil\\x1b\[0m  ' "esc-workload: the comparison escapes the row's name"
run junk-result op 69 "^crashlab: error: ext4: the agent's result of op 'mkdir d 0755' is malformed: ret=12abc\\\\nerrno=99999999999"
sql_is "SELECT outcome, exit_code, status FROM fsruns, runs" "error|69|failed" "junk-result: stored as a failed fs run"
db_sound junk-result
run nan-result op 69 "is malformed: ret=0\\\\nerrno=0\\\\nino=13\\\\nino2=0\\\\nms=nan"
db_sound nan-result
run error-reply op 69 "^crashlab: error: ext4: the agent could not run op 'mkdir d 0755': no \\\\x1b\\[31mway"
sql_is "SELECT error FROM fsruns" "the agent could not run op 'mkdir d 0755': no \\x1b[31mway\\x1b[0m\\x1b]0;owned\\x07 \\x1b[2J" \
	"error-reply: the reason is stored, escaped"
run error-reply session 69 '^crashlab: error: ext4: the agent refused the workload session: no \\x1b\[31mway'
run exit-status op 69 "^crashlab: error: ext4: the agent could not run op 'mkdir d 0755': a reply of type 4$"
# The agent mounts the test disk when the session opens: a recording runs no command.
run exit-status session 69 '^crashlab: error: ext4: the agent refused the workload session: a reply of type 4$'
run garbage session 69 '^crashlab: error: ext4: the guest failed while mounting ext4 and opening the workload session: guest lost: guest channel: bad frame magic'
sql_is "SELECT outcome FROM fsruns" "lost-connection" "garbage on session: the outcome is stored"
boot junk-result exec 69 'guest lost: guest channel: a reply of type 10 \(54 bytes\) to a command$'
run garbage op 69 "^crashlab: error: ext4: the guest failed during op 'mkdir d 0755': guest lost: guest channel: bad frame magic"
sql_is "SELECT outcome FROM fsruns" "lost-connection" "garbage: the outcome is stored"
db_sound garbage

# A guest that floods a command's output: the host keeps a bounded part
# (crashlab try keeps each step's output for its message). Peak memory is
# compared with a well-behaved guest's (a sanitized build's baseline is
# large).
peak() {
	(cd "$W" && CRASHLAB_FAKE_GUEST=$1 CRASHLAB_FAKE_ON=exec python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		timeout -s KILL "$LIMIT" "$CRASHLAB" try --fs ext4 --kernel "$T/bz" --accel tcg)
}
base=$(peak ok) flood=$(peak out-flood)
if [ "${base%% *}" = 0 ] && [ "${flood%% *}" = 0 ] && [ $((${flood#* } - ${base#* })) -lt 65536 ]; then
	ok "out-flood: 256 MiB of a command's output cost crashlab try $((${flood#* } - ${base#* })) KiB more than none"
else
	not_ok "out-flood: exit and peak KiB '$flood', a quiet guest's '$base' (expected both 0, under 64 MiB apart)"
fi

# ---- crashlab run: the checker guest ----

# Names a file system may hold, hard on a terminal: stored as they are,
# escaped in every view, exact in JSON.
run state-names check 1 ""
expect_grep "$T/out" '^findings: crashlab report 1 ' "state-names: the run is judged and reported"
sql_is "SELECT count(*) FROM nodes" 11 "state-names: every node is stored"
sql_is "SELECT quote(CAST(path AS BLOB)) FROM nodes WHERE path LIKE 'bidi%'" "X'62696469E280AE7478742E657865'" \
	"state-names: a name is stored byte for byte"
db_sound state-names
for view in "show 1" "show 1 ext4 0" "report 1" "report --all 1" "report --format markdown 1" "report --format html 1" \
	"compare 1" "compare --format markdown 1" "list"; do
	# shellcheck disable=SC2086 # the view's words
	expect_exit 0 "state-names: $view exits 0" -- "$CRASHLAB" $view --db "$DB"
	terminal_safe "$T/out" "state-names: $view"
	no_sanitizer_report "$T/err" "state-names: $view"
done
"$CRASHLAB" show 1 ext4 0 --db "$DB" >"$T/show" 2>&1
expect_grep "$T/show" '^-rw-r--r-- .* \\x1b\[31mred\\x1b\[0m  "abc"$' "state-names: show escapes an ESC in a name"
expect_grep "$T/show" ' bidi\\u202etxt\.exe$' "state-names: and a right-to-left override"
expect_grep "$T/show" ' line\\nbreak$' "state-names: and a newline"
expect_grep "$T/show" '\| fsck \\x1b\[2J\\x1b\]0;owned\\x07 clean$' "state-names: and fsck's output"
expect_grep "$T/show" ' 18446744073709551615  huge  \[\]  xattrs user\.\\x1b\[2J="\\x1b\]0;x\\x07"$' \
	"state-names: absurd numbers are shown as numbers"
for view in "show --format json 1 ext4 0" "report --format json 1" "compare --format json 1" "list --format json"; do
	# shellcheck disable=SC2086
	"$CRASHLAB" $view --db "$DB" >"$T/json" 2>"$T/err"
	if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/json" 2>>"$T/err"; then
		ok "state-names: $view is valid JSON"
	else
		not_ok "state-names: $view is not valid JSON"
		tail -n 3 "$T/err" | sed 's/^/    | /'
	fi
done
"$CRASHLAB" show --format json 1 ext4 0 --db "$DB" >"$T/json"
if python3 - "$T/json" <<'EOF'; then ok "state-names: JSON carries every name exactly"; else not_ok "state-names: JSON names differ"; fi
import json, sys
paths = {n["path"] for n in json.load(open(sys.argv[1]))["tree"]}
want = {"\x1b[31mred\x1b[0m", "\x1b]0;owned\x07title", "line\nbreak", "tab\tcr\rbell\x07del\x7f",
        "bidi\u202etxt.exe", "c1\x9b2Jcsi", "bad\xffutf8\\back\"quote", "link", "huge", "d", "d/n"}
sys.exit(paths != want)
EOF

# A report that cannot be read ends the fs run with the reason; nothing of it
# is stored as a state, and no path of it becomes a file anywhere.
for bad in "state-dotdot:tree line 3 is malformed" "state-inner-dotdot:tree line 3 is malformed" \
	"state-absolute:tree line 3 is malformed" "state-nul:tree line 3 is malformed" \
	"state-empty-component:tree line 3 is malformed" "state-raw-nul:tree line 2 is malformed" \
	"state-duplicate:path 'd/n' is in the tree twice" "state-nan:ms_mount is not a time" \
	"state-numbers:a number of the header is out of range"; do
	name=${bad%%:*} why=${bad#*:}
	run "$name" check 69 "^crashlab: error: ext4: crash state 0: checker: malformed state report: $why$"
	sql_is "SELECT f.outcome, f.error, r.status, r.exit_code, (SELECT count(*) FROM states) FROM fsruns f, runs r" \
		"error|crash state 0: checker: malformed state report: $why|failed|69|0" "$name: stored as a failed fs run with the reason"
	db_sound "$name"
done
run junk-result check 69 '^crashlab: error: ext4: crash state 0: checker: a reply of type 10 instead of a STATE$'
run error-reply check 69 '^crashlab: error: ext4: crash state 0: checker: no \\x1b\[31mway'
run garbage check 69 '^crashlab: error: ext4: crash state 0: checker: guest channel: bad frame magic'
run oversized check 69 'checker: guest channel: frame of 4294967295 bytes exceeds the limit$'
db_sound oversized

# A checker guest that dies or hangs on a state: that state is stored as one
# that took the guest down (the run loop's rule), with the reason.
run truncated check 1 '^crashlab: warning: ext4: crash state 0: the guest was lost'
sql_is "SELECT mount_ok, mount_msg LIKE 'checker guest: the guest was lost (lost-connection)%' FROM states" "0|1" \
	"truncated: the state is stored as failed, with the reason"
run exit-mid check 1 '^crashlab: warning: ext4: crash state 0: the guest was lost'
for hang in silent trickle console-flood; do
	run "$hang" check 1 '^crashlab: warning: ext4: crash state 0: the guest did not answer in time' CRASHLAB_TEST_SLOWDOWN=0.05
	sql_is "SELECT mount_ok, mount_msg LIKE 'checker guest: the guest did not answer in time%' FROM states" "0|1" \
		"$hang: the state is stored as failed, with the reason"
	db_sound "$hang"
done
logs=$(find "$T/cache/crashlab/runs" -name 'ext4-state0-console.log' -size +1024k)
[ -z "$logs" ] && ok "console-flood: the console logs kept are bounded" || not_ok "console-flood: console log over 1 MiB: $logs"

# ---- what the tool wrote ----

canaries=$(find "$T" /tmp/escape-canary /escape-canary -name '*escape-canary*' 2>/dev/null)
[ -z "$canaries" ] && ok "no path of a guest's tree became a file" || not_ok "files made from guest paths: $canaries"
left=$(find "$W" -mindepth 1)
[ -z "$left" ] && ok "nothing was written in the working directory" || not_ok "written in the working directory: $left"
stray=$(find "$T/cache/crashlab/runs" -type f | grep -vE '/[^/]+Z-[0-9]+/(lock|ext4(\.log|\.(record|check)-console\.log|-state[0-9]+-console\.log))$')
[ -z "$stray" ] && ok "a run's folder holds only its write logs and console logs" || not_ok "unexpected files: $stray"
top=$(cd "$T" && find . -mindepth 1 -maxdepth 1 | sort | tr '\n' ' ')
case "$top" in
"./bz ./cache ./db ./err ./esc.wl ./json ./out ./show ./w ") ok "nothing was written beside the cache, the databases and the test's files" ;;
*) not_ok "the test directory holds: $top" ;;
esac

# ---- guests that live across recordings (engine/pool.c) ----

# The pool speaks QMP to its recording guests and sends the checker each
# write log (LOG): three workloads, two regions of its disk per recording
# guest, so two recording boots and one checker boot.
P=$T/pool
pool() { cl "$@" -- bench pool --fs ext4 --kernel "$T/bz" --accel tcg --no-classic --slots 2 --out "$P" "$WL" "$WL" "$WL"; }
expect_exit 0 "the pool with a well-behaved fake guest" -- pool
expect_grep "$P/stats-ext4.txt" '^record_boots=2 checker_boots=1 recordings=3 checks=[1-9][0-9]* guest_failures=0$' \
	"the pool: two recording guests of two regions for three workloads, one checker guest"
n=$(grep -c ' outcome=ok ' "$P/pool-ext4.txt")
[ "$n" = 3 ] && ok "the pool: the three fs runs ended ok" || not_ok "the pool: $n fs runs ended ok, expected 3"
# A recording whose writes land outside its region of the disk is not cut
# out of the guest's log; the guest is not reused.
expect_exit 65 "the pool with a guest that writes outside the recording's region" -- \
	pool CRASHLAB_FAKE_GUEST=off-region CRASHLAB_FAKE_ON=session
expect_grep "$T/err" "cannot cut the log: entry 0 writes sectors 4096.1, outside the region 1048576.1048576" \
	"the pool names the write outside the region"
expect_grep "$P/stats-ext4.txt" '^record_boots=3 checker_boots=0 recordings=3 checks=0 guest_failures=3$' \
	"the pool: each such guest counted as failed, a new one booted for the next workload"
# A recording guest lost mid-op is killed, never reused: the next recording
# boots another (each fake guest is lost on its first op, so every one).
expect_exit 69 "the pool with a recording guest lost on an op" -- pool CRASHLAB_FAKE_GUEST=exit-mid CRASHLAB_FAKE_ON=op
expect_grep "$T/err" "the guest failed during op" "the pool says which op the guest failed on"
expect_grep "$P/stats-ext4.txt" '^record_boots=3 checker_boots=0 recordings=3 checks=0 guest_failures=3$' \
	"the pool: each lost guest counted, a new one booted for the next workload"
terminal_safe "$T/err" "the pool (stderr)"

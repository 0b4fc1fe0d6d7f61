#!/usr/bin/env bash
# Every command line of README.md runs as written. The lines of "Using it"
# run in order, through the shell, in a fresh directory that holds the tool
# as ./crashlab, the shipped tutorials and tests and a my.wl (the seed example, as a
# user's first workload would be), so the default database is ./crashlab.db
# there and each line sees the runs the lines before it made. The two make
# lines are what CI and `make example` run: the example's recipe must be the
# README's first run line, and `make check` is this suite.
. "$(dirname "$0")/../lib.sh"

root=$PWD
w="$T/user"
mkdir -p "$w"
ln -s "$CRASHLAB" "$w/crashlab"
ln -s "$root/tutorials" "$w/tutorials"
ln -s "$root/tests" "$w/tests"
cp tutorials/seed/seed.wl "$w/my.wl"

# The README's "Using it" block: its indented ./crashlab lines, comments cut.
sed -n '/^## Using it$/,/^#/p' README.md | sed -n 's/^    \(\.\/crashlab .*\)$/\1/p' |
	sed 's/ \{2,\}#.*$//; s/[[:space:]]*$//' >"$T/lines"
n=$(wc -l <"$T/lines")
if [ "$n" -ge 15 ]; then ok "README's 'Using it' has $n command lines"; else not_ok "only $n command lines found in README's 'Using it'"; fi

recipe=$(sed -n '/^example:/,/^$/p' Makefile | sed -n 's/^\t\(\.\/crashlab .*\)$/\1/p')
first=$(head -n 1 "$T/lines")
if [ "$recipe" = "$first" ]; then ok "make example runs the README's first line: $first"; else not_ok "make example runs '$recipe', the README says '$first'"; fi

# The tutorials' command lines outside their "Run it" sections (those run in
# t0800, through `crashlab tutorial NAME`), in order, after the README's.
for f in tutorials/*/README.md; do
	awk '/^## /{ sec = $0 } /^    \.\/crashlab / && sec != "## Run it" { sub(/^    /, ""); print }' "$f" |
		sed 's/ \{2,\}#.*$//; s/[[:space:]]*$//'
done >"$T/tutorial-lines"
m=$(wc -l <"$T/tutorial-lines")
ok "the tutorials have $m command lines outside their 'Run it' sections"
cat "$T/tutorial-lines" >>"$T/lines"

# What a line must exit with: 1 where the README says it finds a broken
# promise (--model all judges the seed under 'sequential', which loses A/bar on f2fs;
# the overlay without a barrier shows g without its data under 'sequential').
want_exit() {
	case "$1" in
	*"run my.wl --model all"*) echo 1 ;;
	*"overlay-no-barrier.wl"*"sequential"*) echo 1 ;;
	*) echo 0 ;;
	esac
}

i=0
while IFS= read -r line; do
	i=$((i + 1))
	want=$(want_exit "$line")
	input=/dev/null
	case "$line" in
	*" shell") printf 'echo readme-shell-$((6*7))\nexit\n' >"$T/stdin"; input="$T/stdin" ;;
	esac
	(cd "$w" && timeout 900 bash -c "$line" <"$input" >"$T/out" 2>"$T/err")
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "README line $i: $line (exit $rc)"
	else
		not_ok "README line $i: $line: exit $rc, expected $want"
		sed 's/^/    stderr: /' "$T/err" | tail -n 10
	fi
	if grep -q '^crashlab[^:]*: error:' "$T/err"; then not_ok "README line $i: an error on stderr"; sed 's/^/    | /' "$T/err" | tail -n 5; fi
	cp "$T/out" "$T/out.$i"
	case "$line" in
	*"> run.html") expect_grep "$w/run.html" '^<!DOCTYPE html>' "README line $i: run.html is an HTML page" ;;
	*" shell") expect_grep "$T/out" 'readme-shell-42' "README line $i: the shell ran what was typed" ;;
	*) if [ -s "$T/out" ]; then ok "README line $i prints something"; else not_ok "README line $i printed nothing"; fi ;;
	esac
done <"$T/lines"

# What the lines showed, where the README says what they show.
runs=$(sqlite3 -batch -noheader "$w/crashlab.db" "SELECT count(*) FROM runs")
want=$(grep -c '^\./crashlab run ' "$T/lines")
if [ "$runs" = "$want" ]; then ok "the $want run lines stored $want runs in ./crashlab.db"; else not_ok "$runs runs stored, $want run lines"; fi
grep -n 'compare last$' "$T/lines" | cut -d: -f1 | while read -r k; do
	expect_grep "$T/out.$k" '^\* A/bar ' "compare last shows the seed's A/bar row"
done
grep -n 'compare last~1 last$' "$T/lines" | cut -d: -f1 | while read -r k; do
	expect_grep "$T/out.$k" 'run [0-9]+ ext4' "compare last~1 last has a column per run and fs"
done
grep -n '^./crashlab list$' "$T/lines" | cut -d: -f1 | while read -r k; do
	expect_grep "$T/out.$k" '^ +3  .* my\.wl' "list shows the third run with its workload"
done

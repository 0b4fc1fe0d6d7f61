#!/usr/bin/env bash
# The HTML report in a real browser: the seed example on ext4 and f2fs,
# `report --format html`, then headless chromium loads the page from
# file:// and must render it without a console error, with the comparison
# view's words in the page, the state a link names opened by the page's
# script, and a screenshot. A page with a deliberate script error proves the
# console check can fail.
. "$(dirname "$0")/../lib.sh"

db="$T/html.db"
expect_exit 0 "the seed example on ext4 and f2fs" -- "$CRASHLAB" run tutorials/seed/seed.wl --fs ext4,f2fs --db "$db"
expect_exit 0 "report --format html" -- "$CRASHLAB" report last --format html --db "$db"
cp "$T/out" "$T/run.html"
expect_grep "$T/run.html" "^<!DOCTYPE html>" "the page is an HTML document"
expect_no_grep "$T/run.html" "(src|href)=['\"]?(https?:)?//" "it fetches nothing: no external script, style or link"
expect_no_grep "$T/run.html" "<link |<img " "styles and pictures are inline"
expect_grep "$T/run.html" "<svg " "the crash-state matrix is inline SVG"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	not_ok "chromium is not installed ('make deps' installs it)"
	exit 0
fi
# load URL OUT: the DOM after the page's script ran in OUT, the browser's log in OUT.log
load() {
	timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
		--enable-logging=stderr --v=0 --dump-dom "$1" >"$2" 2>"$2.log"
}
load "file://$T/run.html#f2fs-s1" "$T/dom"
expect_no_grep "$T/dom.log" "CONSOLE" "no console message or error while the page loads"
expect_grep "$T/dom" "What each file system kept" "the comparison view is on the page"
expect_grep "$T/dom" "A/bar" "its rows name the objects"
expect_grep "$T/dom" "gone <b>-!</b>" "f2fs's A/bar: gone, and a program assuming order loses it"
expect_grep "$T/dom" "<details class=\"state\" id=\"f2fs-s1\" open" "the state the address names is opened"
expect_grep "$T/dom" "crashlab run tutorials/seed/seed.wl" "the command that makes the run again"
expect_grep "$T/dom" "the program had \(after op" "each state's tree beside the program's"
expect_grep "$T/dom" "persisted" "the op timeline with its marks"

sed 's|</script>|;noSuchFunction();</script>|' "$T/run.html" >"$T/bad.html"
load "file://$T/bad.html" "$T/bad"
expect_grep "$T/bad.log" "CONSOLE.*noSuchFunction" "the console check sees a script error (the check can fail)"

timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
	--hide-scrollbars --window-size=1280,2000 --screenshot="$T/run.png" "file://$T/run.html" >/dev/null 2>&1
size=$(stat -c %s "$T/run.png" 2>/dev/null || echo 0)
if [ "$size" -gt 20000 ]; then ok "a screenshot of the page ($size bytes)"; else not_ok "the screenshot is $size bytes"; fi

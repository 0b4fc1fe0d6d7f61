#!/usr/bin/env bash
# `crashlab kernel`: every bad input fails with its own exit code and one line
# naming the culprit, leaves no cache entry behind, and fails the same way
# when run again (a half-made entry is never taken for a built kernel).
# A stand-in tree (a tiny tarball whose Makefile fakes kbuild) covers the
# full life cycle in seconds; the real tarball covers corruption, a real
# patch and a config option olddefconfig drops.
. "$(dirname "$0")/../lib.sh"
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
KDIR="$XDG_CACHE_HOME/crashlab/kernel"
SRC=/usr/src/linux-source-6.12.tar.xz

# no_entry DESC: no cache entry directory (complete or not) is left
no_entry() {
	local left
	left=$(find "$KDIR" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9a-f]\{16\}' 2>/dev/null)
	if [ -z "$left" ]; then ok "$1"; else not_ok "$1: left behind: $left"; fi
}

# one_line DESC: stderr of the last command is exactly one line
one_line() { expect_lines "$T/err" 1 "$1"; }

# --- usage and --kernel
expect_exit 2 "unknown subcommand" -- "$CRASHLAB" kernel frobnicate
expect_grep "$T/err" "unknown subcommand 'frobnicate'" "the message names it"
expect_exit 2 "no subcommand" -- "$CRASHLAB" kernel
expect_exit 0 "kernel --help" -- "$CRASHLAB" kernel --help
expect_grep "$T/out" "^  build " "help lists 'build'"
expect_grep "$T/out" "^  path " "help lists 'path'"
expect_grep "$T/out" "crashlab/kernel/<key>" "help names the cache location"
expect_exit 66 "kernel path before any build" -- "$CRASHLAB" kernel path
expect_grep "$T/err" "kernel not built; run 'crashlab kernel build'" "it says how to build"
expect_exit 65 "--kernel /etc/passwd" -- "$CRASHLAB" kernel path --kernel /etc/passwd
expect_grep "$T/err" "'/etc/passwd' is not a bzImage \(no x86 boot header\)" "it says why"
one_line "one line for a non-bzImage"
expect_exit 66 "--kernel /nonexistent" -- "$CRASHLAB" kernel path --kernel /nonexistent
one_line "one line for a missing --kernel"
expect_exit 2 "--kernel with 'kernel build'" -- "$CRASHLAB" kernel build --kernel /etc/passwd

# --- missing and corrupt tarballs
expect_exit 66 "missing tarball" -- "$CRASHLAB" kernel build --source "$T/none.tar.xz"
expect_grep "$T/err" "apt-get install linux-source-6.12" "it suggests installing the package"
one_line "one line for a missing tarball"

if [ ! -f "$SRC" ]; then
	not_ok "'$SRC' is missing (apt-get install linux-source-6.12); the real-tree checks need it"
	exit 1
fi
head -c 20000000 "$SRC" >"$T/trunc.tar.xz"
for round in first second; do
	expect_exit 65 "truncated tarball ($round run)" -- "$CRASHLAB" kernel build --quiet --source "$T/trunc.tar.xz"
	expect_grep "$T/err" "kernel source '$T/trunc.tar.xz' is damaged: .* \((in|after) 'linux-source-6.12/" \
		"it names the file, the libarchive error and the member"
	one_line "one line for a truncated tarball"
	no_entry "no entry is left after a truncated tarball"
done

# --- a stand-in tree: README, a Makefile faking kbuild, a prebuilt "bzImage"
mkdir -p "$T/fake/linux-source-6.12"
F="$T/fake/linux-source-6.12"
# The first lines of the real README, so one patch applies to both trees.
cat >"$F/README" <<'README'
Linux kernel
============

There are several guides for kernel developers and users. These guides can
be rendered in a number of formats, like HTML and PDF. Please read
Documentation/admin-guide/README.rst first.
README
head -c 4096 /dev/zero >"$F/fake.bzImage"
printf '\x55\xaa' | dd of="$F/fake.bzImage" bs=1 seek=$((0x1fe)) conv=notrunc status=none
printf 'HdrS\x0f\x02' | dd of="$F/fake.bzImage" bs=1 seek=$((0x202)) conv=notrunc status=none
printf '\x00\x01' | dd of="$F/fake.bzImage" bs=1 seek=$((0x20e)) conv=notrunc status=none
printf '6.12.0-fake (crashlab@crashlab) #1\0' | dd of="$F/fake.bzImage" bs=1 seek=$((0x300)) conv=notrunc status=none
{
	printf 'allnoconfig:\n'
	printf '\t@echo "  HOSTCC  scripts/kconfig/conf.o"\n'
	printf '\t@grep -v NONEXISTENT $(KCONFIG_ALLCONFIG) >.config\n'
	printf 'olddefconfig:\n\t@true\n'
	printf 'bzImage:\n'
	printf '\t@echo "  CC      init/main.o"\n'
	printf '\t@if [ -e FAIL ]; then echo "init/main.c:1:1: error: injected failure" >&2; exit 1; fi\n'
	printf '\t@echo "  LD      vmlinux"\n'
	printf '\t@mkdir -p arch/x86/boot && cp fake.bzImage arch/x86/boot/bzImage\n'
	printf '\t@echo "  BUILD   arch/x86/boot/bzImage"\n'
} >"$F/Makefile"
tar -C "$T/fake" -cJf "$T/fake.tar.xz" linux-source-6.12
printf 'CONFIG_FAKE=y\n' >"$T/fake.config"

# The README patch applies to both the stand-in and the real tree.
mkdir -p "$T/good" "$T/reject" "$T/broken"
{
	printf -- '--- a/README\n+++ b/README\n@@ -1,6 +1,7 @@\n'
	printf ' Linux kernel\n ============\n \n+crashlab test: a line added by a patch\n'
	printf ' There are several guides for kernel developers and users. These guides can\n'
	printf ' be rendered in a number of formats, like HTML and PDF. Please read\n'
	printf ' Documentation/admin-guide/README.rst first.\n'
} >"$T/good/0001-readme.patch"
printf '# a test series\n\n0001-readme.patch   # adds a line\n' >"$T/good/series"
cp "$T/good/0001-readme.patch" "$T/reject/"
{
	printf -- '--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n'
	printf ' Linux kernel\n-=== this line is not in the tree ===\n+=== nor is this one ===\n \n'
} >"$T/reject/0002-reject.patch"
printf '0001-readme.patch\n0002-reject.patch\n' >"$T/reject/series"
cp "$T/good/0001-readme.patch" "$T/broken/"
printf -- '--- /dev/null\n+++ b/FAIL\n@@ -0,0 +1 @@\n+make the stand-in build fail\n' >"$T/broken/0002-fail.patch"
printf '0001-readme.patch\n0002-fail.patch\n' >"$T/broken/series"

fake() { "$CRASHLAB" kernel "$1" --source "$T/fake.tar.xz" --config "$T/fake.config" --patches "$T/$2" "${@:3}"; }

expect_exit 0 "stand-in tree builds with a working patch" -- fake build good
bz=$(cat "$T/out")
[ -n "$bz" ] || { not_ok "no bzImage path printed; stopping"; exit 1; }
case $bz in
"$KDIR"/????????????????/bzImage) ok "the bzImage path is <cache>/kernel/<key>/bzImage" ;;
*) not_ok "unexpected bzImage path '$bz'" ;;
esac
entry=$(dirname "$bz")
[ -f "$entry/complete" ] && ok "the entry has its stamp" || not_ok "no stamp in '$entry'"
expect_grep "$entry/linux/README" "^crashlab test: a line added by a patch" "the patch was applied to the tree"
expect_grep "$entry/build.log" "CC +init/main.o" "the build log is kept in the entry"
expect_grep "$T/err" "built bzImage in" "the build reports its time"
start=$(date +%s%N)
expect_exit 0 "second build of the same inputs" -- fake build good
ms=$((($(date +%s%N) - start) / 1000000))
[ "$(cat "$T/out")" = "$bz" ] && ok "it prints the same path" || not_ok "second build printed '$(cat "$T/out")'"
[ ! -s "$T/err" ] && ok "a cache hit says nothing (${ms} ms)" || not_ok "a cache hit printed: $(head -1 "$T/err")"
expect_exit 0 "kernel path finds it" -- fake path good
[ "$(cat "$T/out")" = "$bz" ] && ok "kernel path prints the same path" || not_ok "kernel path printed '$(cat "$T/out")'"
expect_exit 0 "--kernel with a built bzImage" -- "$CRASHLAB" kernel path --kernel "$bz"

rm "$entry/complete"
expect_exit 66 "an entry without its stamp is not a built kernel" -- fake path good
expect_exit 0 "the next build redoes it" -- fake build good
expect_grep "$T/err" "removing the incomplete kernel build" "it says it removed the incomplete entry"
[ -f "$entry/complete" ] && ok "the rebuilt entry has its stamp" || not_ok "no stamp after the rebuild"
rm -rf "$entry"

for round in first second; do
	expect_exit 76 "a rejecting patch ($round run)" -- fake build reject --quiet
	expect_grep "$T/err" "patch '$T/reject/0002-reject.patch' from '$T/reject/series' does not apply: hunk #1 FAILED at line 1 of 'README'" \
		"it names the patch, the hunk and the file"
	one_line "one line for a rejecting patch"
	no_entry "no entry is left after a rejecting patch"
	expect_grep "$KDIR/last-failed-build.log" "Hunk #1 FAILED" "the log is kept as last-failed-build.log"
done

for round in first second; do
	expect_exit 71 "a failing compile ($round run)" -- fake build broken
	expect_grep "$T/err" "error: building the kernel failed" "it says the build failed"
	expect_grep "$T/err" "init/main.c:1:1: error: injected failure" "it shows the compiler's error line"
	expect_grep "$T/err" "full log: '$KDIR/last-failed-build.log'" "it names the log"
	no_entry "no entry is left after a failing compile"
done

# --- the real tree: a real patch applies, then a config option is dropped
mkdir -p "$T/real"
cp "$T/good/0001-readme.patch" "$T/good/series" "$T/real/"
cp "$(dirname "$0")/../../kernel/crashlab.config" "$T/real.config"
printf 'CONFIG_CRASHLAB_NO_SUCH_OPTION=y\n' >>"$T/real.config"
for round in first second; do
	rm -f "$KDIR/last-failed-build.log"
	expect_exit 78 "a config option that does not exist ($round run)" -- \
		"$CRASHLAB" kernel build --quiet --patches "$T/real" --config "$T/real.config"
	expect_grep "$T/err" "config option 'CONFIG_CRASHLAB_NO_SUCH_OPTION=y' from '$T/real.config:[0-9]+' was dropped by olddefconfig" \
		"it names the option and the fragment"
	one_line "one line for one dropped option"
	no_entry "no entry is left after a dropped option"
	expect_grep "$KDIR/last-failed-build.log" "^patching file '?README'?" "the real patch applied to the real tree"
done

# --- a full cache disk: a 20 MiB host tmpfs (needs root to mount)
if [ "$(id -u)" -ne 0 ]; then
	skip "the full-disk check" "mounting a tmpfs needs root"
elif ! mkdir -p "$T/full" || ! mount -t tmpfs -o size=20m tmpfs "$T/full"; then
	not_ok "cannot mount a 20 MiB tmpfs on '$T/full'"
else
	expect_exit 73 "extraction onto a full disk" -- env XDG_CACHE_HOME="$T/full" "$CRASHLAB" kernel build --quiet
	expect_grep "$T/err" "cannot write '.*/linux/.*': no space left on device" \
		"the message names the file being extracted and says why"
	one_line "one line for a full disk"
	left=$(find "$T/full/crashlab/kernel" -mindepth 1 -maxdepth 1 -type d 2>/dev/null)
	[ -z "$left" ] && ok "no entry is left on the full disk" || not_ok "left behind: $left"
	umount "$T/full"
fi

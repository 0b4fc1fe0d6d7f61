#!/usr/bin/env bash
# `crashlab image`: base disks for the four file systems (made, fsck-clean,
# cached), the refusals and their exit codes, the initramfs build/path
# commands, and a full cache disk (a small host tmpfs, as root).
. "$(dirname "$0")/../lib.sh"
trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
BASE="$XDG_CACHE_HOME/crashlab/base"

# The read-only check of img_fsck_argv(), on the image file (xfs_repair needs -f for a file).
fsck_file() {
	case $1 in
	ext4) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n -f "$2" ;;
	btrfs) btrfs check --readonly "$2" ;;
	f2fs) fsck.f2fs --dry-run "$2" ;;
	esac
}

for fs in ext4 xfs btrfs f2fs; do
	expect_exit 0 "base image for $fs" -- "$CRASHLAB" image base --fs "$fs"
	path=$(cat "$T/out")
	case $path in
	"$BASE/$fs-512M-"????????????????.img) ok "$fs: named $fs-512M-<hash>.img in the cache" ;;
	*) not_ok "$fs: unexpected path '$path'" ;;
	esac
	if [ -f "$path" ] && [ "$(stat -c %s "$path")" -eq $((512 << 20)) ]; then
		ok "$fs: the image is 512 MiB"
	else
		not_ok "$fs: no 512 MiB image at '$path'"
	fi
	if fsck_file "$fs" "$path" >"$T/fsck" 2>&1; then
		ok "$fs: a fresh image is fsck-clean"
	else
		not_ok "$fs: fsck of a fresh image failed"
		sed 's/^/    | /' "$T/fsck" | tail -n 5
	fi
	before=$(stat -c '%i %Y.%y' "$path" 2>/dev/null)
	sleep 1
	expect_exit 0 "$fs: second call" -- "$CRASHLAB" image base --fs "$fs"
	if [ "$(cat "$T/out")" = "$path" ] && [ "$(stat -c '%i %Y.%y' "$path" 2>/dev/null)" = "$before" ]; then
		ok "$fs: second call is a cache hit (same path, file untouched)"
	else
		not_ok "$fs: second call did not reuse '$path'"
	fi
done

expect_exit 0 "a 1G ext4 image" -- "$CRASHLAB" image base --fs ext4 --size 1G
expect_grep "$T/out" "/ext4-1G-[0-9a-f]{16}\.img$" "is named by its size"
expect_exit 0 "options change the key" -- "$CRASHLAB" image base --fs ext4 --mkfs-opts "-O ^has_journal"
if [ "$(ls "$BASE"/ext4-512M-*.img | wc -l)" -eq 2 ]; then ok "a second 512M ext4 image"; else not_ok "options did not make another image"; fi

expect_exit 2 "xfs under 300M is refused" -- "$CRASHLAB" image base --fs xfs --size 200M
expect_grep "$T/err" "300M" "and the message says the minimum"
expect_exit 0 "xfs at 300M is made" -- "$CRASHLAB" image base --fs xfs --size 300M
expect_exit 2 "an unknown file system" -- "$CRASHLAB" image base --fs zfs
expect_grep "$T/err" "ext4, xfs, btrfs, f2fs" "the message lists the four"
expect_exit 2 "no --fs" -- "$CRASHLAB" image base
expect_exit 2 "a bad size" -- "$CRASHLAB" image base --fs ext4 --size 12X

count_base() { ls -A "$BASE" | wc -l; }
n=$(count_base)
expect_exit 71 "bad mkfs options for ext4" -- "$CRASHLAB" image base --fs ext4 --mkfs-opts "-O bogus"
expect_grep "$T/err" "mkfs.ext4 .*bogus" "the error quotes mkfs's own message"
expect_lines "$T/err" 2 "in one line (after the progress note)"
expect_exit 71 "bad mkfs options for f2fs" -- "$CRASHLAB" image base --fs f2fs --mkfs-opts "-O bogus"
expect_grep "$T/err" "Wrong features" "mkfs.f2fs's message is shown"
expect_exit 71 "a btrfs image too small" -- "$CRASHLAB" image base --fs btrfs --size 64M
if [ "$(count_base)" -eq "$n" ]; then ok "failed mkfs runs leave no file"; else not_ok "failed mkfs left files: $(ls "$BASE")"; fi

# The initramfs commands.
expect_exit 0 "image --help" -- "$CRASHLAB" image --help
expect_grep "$T/out" "^  build " "help teaches build"
expect_grep "$T/out" "^  base " "help teaches base"
expect_grep "$T/out" "^  path " "help teaches path"
expect_exit 2 "image without a subcommand" -- "$CRASHLAB" image
expect_exit 2 "an unknown subcommand" -- "$CRASHLAB" image frob
expect_exit 66 "image path before a build" -- "$CRASHLAB" image path
expect_exit 0 "image build" -- "$CRASHLAB" image build
img=$(cat "$T/out")
case $img in
"$XDG_CACHE_HOME/crashlab/images/initramfs-"????????????????.cpio.gz) ok "named initramfs-<hash>.cpio.gz" ;;
*) not_ok "unexpected initramfs path '$img'" ;;
esac
if gzip -t "$img" 2>/dev/null; then ok "the initramfs is valid gzip"; else not_ok "'$img' is not valid gzip"; fi
expect_exit 0 "image path after the build" -- "$CRASHLAB" image path
if [ -n "$img" ] && [ "$(cat "$T/out")" = "$img" ]; then ok "image path prints the built image"; else not_ok "image path printed '$(cat "$T/out")'"; fi
before=$(stat -c '%i %y' "$img" 2>/dev/null)
expect_exit 0 "image build again" -- "$CRASHLAB" image build
if [ -n "$img" ] && [ "$(cat "$T/out")" = "$img" ] && [ "$(stat -c '%i %y' "$img")" = "$before" ]; then
	ok "the second build is a cache hit"
else
	not_ok "the second build did not reuse '$img'"
fi

# A full cache disk: a 2 MiB host tmpfs (the file systems under test are never mounted on the host).
if [ "$(id -u)" -ne 0 ]; then
	skip "the full-disk check" "mounting a tmpfs needs root"
elif ! mkdir -p "$T/full" || ! mount -t tmpfs -o size=2m tmpfs "$T/full"; then
	not_ok "cannot mount a 2 MiB tmpfs on '$T/full'"
else
	expect_exit 73 "image build on a full disk" -- env XDG_CACHE_HOME="$T/full" "$CRASHLAB" image build
	expect_grep "$T/err" "no space left" "the message says why"
	left=$(ls -A "$T/full/crashlab/images" 2>/dev/null)
	if [ -z "$left" ]; then ok "nothing is left in images/"; else not_ok "left in images/: $left"; fi
	expect_exit 66 "and image path does not take anything as built" -- env XDG_CACHE_HOME="$T/full" "$CRASHLAB" image path
	expect_exit 73 "an xfs base image on a full disk" -- env XDG_CACHE_HOME="$T/full" "$CRASHLAB" image base --fs xfs
	left=$(ls -A "$T/full/crashlab/base" 2>/dev/null)
	if [ -z "$left" ]; then ok "nothing is left in base/"; else not_ok "left in base/: $left"; fi
	umount "$T/full"
fi

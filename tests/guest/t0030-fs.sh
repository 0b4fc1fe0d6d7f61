#!/usr/bin/env bash
# Each file system: made on the host, mounted in the guest, written,
# unmounted, remounted and read back, checked with its fsck in the guest.
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "crashlab try on all four file systems" -- "$CRASHLAB" try
for fs in ext4 xfs btrfs f2fs; do
	expect_grep "$T/out" "^$fs +[0-9]+ms +[0-9]+ms +[0-9]+ms +[0-9]+ms +[0-9]+ms +ok$" "$fs: mount, write, umount, remount, fsck"
done
expect_grep "$T/out" "^4 file systems, 0 failed" "summary line"
expect_exit 2 "an unknown file system" -- "$CRASHLAB" try --fs zfs
expect_grep "$T/err" "unknown file system 'zfs'" "is named"

# Lesson overlayfs, with the barrier: the copy-up without its fsync, the
# rename made a RENAME_BARRIER rename (fbarrier on the file, then the
# rename). The barrier orders the data, the xattr and the mode before the
# new name without waiting for any of it to be durable.
[setup]
mkdir work
mkdir upper
[run]
write work/tmp 64K
setxattr work/tmp user.overlay.origin "lower-42"
chmod work/tmp 0640
rename work/tmp upper/file barrier
fsync upper
# Observed on 6.12 with the kernel series: the file arrives whole everywhere.
[expect]
upper lists file
upper/file data 7
upper/file xattr user.overlay.origin "lower-42"
upper/file mode 0640
[expect ext4 xfs f2fs]
work/tmp absent
# btrfs has no barrier hook: the barrier syncs the file system before the
# rename, so the rename opens a new transaction, and the fsync of upper logs
# the new name but not the removal of the old one: both names survive.
[expect btrfs]
work/tmp nlink 2
upper/file nlink 2

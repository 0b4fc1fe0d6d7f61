# A new file, fsynced, without an fsync of its directory: ext4, xfs and
# btrfs promise its name (their fsync of a new file makes its own entry
# durable); POSIX and f2fs with fsync_mode=posix do not.
[setup]
mkdir d
[run]
write d/n 4K
fsync d/n

# xfstests generic/056: fsynced data survives a later hard link and a log commit
# foo receives 4 KiB and is fsynced; a hard link to it is then added and a new,
# unrelated file is fsynced, which commits the log. foo must still have its
# 4 KiB afterwards (a bug logged a zero size for the linked inode).
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: fix fsync data loss after adding hard link to inode
[setup]
[run]
write foo 0 4K
fsync foo
link foo foo_link
creat bar
fsync bar
[expect]
foo size 4096
foo data 1

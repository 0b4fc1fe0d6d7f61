# xfstests generic/057: an appended, fsynced range survives a later link and log commit
# foo holds 8 KiB that are already committed. 4 KiB are appended and fsynced,
# then a hard link is added and another new file is fsynced. foo must keep all
# 12 KiB with the appended block in place.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: fix fsync data loss after adding hard link to inode
[setup]
write foo 0 8K
[run]
write foo 8K 4K
fsync foo
link foo foo_link
creat bar
fsync bar
[expect]
foo size 12288
foo data 2

# xfstests generic/090: append and fsync a file whose hard link was committed by sync
# foo (32 KiB) is committed, a second name bar is added and committed again, then
# 32 KiB are appended to foo and it is fsynced. After the crash foo must have the
# new 64 KiB size and both halves of data.
# fs: ext4 xfs btrfs f2fs
# translation: the source's second sync is the sync crashlab runs at the end of [setup]
[setup]
write foo 0 32K
fsync foo
sync
link foo bar
[run]
write foo 32K 32K
fsync foo
[expect]
foo size 65536
foo data 5

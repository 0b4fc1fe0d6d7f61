# xfstests generic/322 (write after fsync case): a range written and waited on between fsync and rename
# foo receives a first range and is fsynced; a second range further on is written
# and passed to sync_file_range with only the wait-before flag; foo is renamed to
# bar and bar fsynced. After the crash bar must hold both ranges and the gap.
# fs: ext4 xfs btrfs f2fs
# translation: scaled by 1/4 (1 MiB at 0 and 1 MiB at 2 MiB become 256 KiB at 0 and 256 KiB at 512 KiB); the md5 comparison is a data comparison
[setup]
[run]
write foo 0 256K
fsync foo
write foo 512K 256K
sync_file_range foo 512K 256K wait_before
rename foo bar
fsync bar
[expect]
bar size 786432
bar data 5

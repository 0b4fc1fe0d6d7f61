# xfstests generic/322 (plain case): rename an fsynced file and fsync the new name
# foo receives 1 MiB and is fsynced, is renamed to bar, and bar is fsynced. After
# the crash bar must hold exactly the data written.
# fs: ext4 xfs btrfs f2fs
# translation: the md5 comparison before and after the crash is a data comparison with what the file held after the rename
[setup]
[run]
write foo 0 1M
fsync foo
rename foo bar
fsync bar
[expect]
bar size 1048576
bar data 3

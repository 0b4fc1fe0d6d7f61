# xfstests generic/534: shrink a file by truncate, rename it, fsync the new name
# foo receives 8000 bytes and is fsynced, is truncated to 3000 bytes, renamed to
# bar, and bar is fsynced. After the crash only bar may exist, holding the first
# 3000 bytes.
# fs: ext4 xfs btrfs f2fs
[setup]
[run]
write foo 0 8000
fsync foo
truncate foo 3000
rename foo bar
fsync bar
[expect]
foo absent
bar size 3000
bar data 4

# xfstests generic/342: rename a file, write a new one under the old name, fsync the new one
# a/foo (16 KiB) is committed, renamed to a/bar, and a new a/foo is written and
# fsynced. After the crash a must hold both names, each with its own data.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fsync_mode=strict
# translation: f2fs runs with -o fsync_mode=strict, as the source mounts it; the md5 checks are data comparisons
[setup]
mkdir a
write a/foo 0 16K
[run]
rename a/foo a/bar
write a/foo 0 16K
fsync a/foo
[expect]
a lists bar foo
a/foo data 4
a/bar data 3

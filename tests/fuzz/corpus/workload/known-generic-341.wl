# xfstests generic/341: rename a directory, make a new one under its old name, fsync that
# a/x holds two 32 KiB files, all committed. a/x is renamed to a/y, a new empty
# a/x is made and fsynced. After the crash a must hold x and y, x must be empty,
# and y must still hold both files with their data.
# fs: ext4 xfs btrfs f2fs
# translation: the md5 checks are data comparisons with what the files held once the directory was renamed
[setup]
mkdir a
mkdir a/x
write a/x/foo 0 32K
write a/x/bar 0 32K
[run]
rename a/x a/y
mkdir a/x
fsync a/x
[expect]
a lists x y
a/x lists
a/y lists bar foo
a/y/foo data 5
a/y/bar data 5

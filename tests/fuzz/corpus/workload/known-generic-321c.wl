# xfstests generic/321 (replay case): as the rename case, with an xattr set before the last fsync
# Same as the rename case, but an xattr is set on bar/foo before it is fsynced, so
# btrfs logs the whole inode, whose number is lower than its new parent's. After
# the crash the root must list only bar, and bar only foo, with their modes.
# fs: ext4 xfs btrfs f2fs
# translation: each case is its own workload here; the xattr value itself is not checked (the test does not check it)
[setup]
[run]
creat foo
mkdir bar 0755
fsync foo
rename foo bar/foo
fsync bar
setxattr bar/foo user.foo "blah"
fsync bar/foo
[expect]
. lists bar
bar lists foo
bar type dir
bar mode 0755
bar/foo type file
bar/foo mode 0644

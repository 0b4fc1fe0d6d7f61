# xfstests generic/336: unlink a second link in b, move b/bar to c, fsync the first link
# a/foo (with a second name b/foo_link) and b/bar are committed. foo_link is
# unlinked, bar moves to c, and a/foo is fsynced. After the crash a must hold foo,
# b nothing, and c bar.
# fs: ext4 xfs btrfs f2fs
[setup]
mkdir a
mkdir b
mkdir c
creat a/foo
link a/foo b/foo_link
creat b/bar
[run]
unlink b/foo_link
rename b/bar c/bar
fsync a/foo
[expect]
a lists foo
b lists
c lists bar

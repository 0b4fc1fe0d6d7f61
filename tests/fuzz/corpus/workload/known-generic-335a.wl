# xfstests generic/335 (non-btrfs case): move a file out of a/b, create a/bar, fsync a
# a/b/foo and the directory c are committed. foo moves to c, a new a/bar is made,
# and a is fsynced. After the crash a must hold b and bar, a/b nothing, and c foo.
# fs: ext4 xfs f2fs
# translation: the source adds an fsync of c/foo on btrfs only; that branch is generic-335b.wl, so this file makes no claim for btrfs
[setup]
mkdir a
mkdir a/b
mkdir c
creat a/b/foo
[run]
rename a/b/foo c/foo
creat a/bar
fsync a
[expect ext4 xfs f2fs]
a lists b bar
a/b lists
c lists foo

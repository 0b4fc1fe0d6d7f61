# xfstests generic/335 (btrfs case): as the other case, with an extra fsync of the moved file
# a/b/foo and the directory c are committed. foo moves to c, a new a/bar is made,
# a is fsynced and then c/foo too (btrfs does not promise the move otherwise).
# After the crash a must hold b and bar, a/b nothing, and c foo.
# fs: btrfs
# translation: the source's btrfs-only branch; the other file systems run generic-335a.wl
[setup]
mkdir a
mkdir a/b
mkdir c
creat a/b/foo
[run]
rename a/b/foo c/foo
creat a/bar
fsync a
fsync c/foo
[expect btrfs]
a lists b bar
a/b lists
c lists foo

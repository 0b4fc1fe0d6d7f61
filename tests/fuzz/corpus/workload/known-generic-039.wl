# xfstests generic/039: fsync a file after dropping one of its two hard links
# a/b/foo and its second name a/b/bar are committed; bar is unlinked and foo is
# fsynced. After the crash the test empties a/b and removes a/b and a, which
# broke when replay left a directory entry pointing at no inode.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: fix directory inconsistency after fsync log replay
# translation: the rm/rmdir after replay cannot run here; only the two directories are checked and a stale entry is left to fsck (U2); whether bar survives is not checked (the test does not care)
[setup]
mkdir a
mkdir a/b
write a/b/foo "hello world\n"
link a/b/foo a/b/bar
[run]
unlink a/b/bar
fsync a/b/foo
[expect]
a type dir
a/b type dir

# xfstests generic/107: unlink a name in one directory, fsync the file by a name in another
# foo in the root has two more names, testdir/foo2 and testdir/foo3, all committed.
# foo3 is unlinked and the file is fsynced through foo. After the crash testdir
# must list only foo2.
# fs: ext4 xfs btrfs f2fs
# translation: the rm/rmdir of testdir after replay cannot run here; stale entries are left to fsck (U2)
[setup]
mkdir testdir
creat foo
link foo testdir/foo2
link foo testdir/foo3
[run]
unlink testdir/foo3
fsync foo
[expect]
testdir lists foo2

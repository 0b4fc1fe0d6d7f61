# xfstests generic/104: two files gain a hard link each, only one is fsynced
# testdir/foo and testdir/bar are committed. Each gets a second name in the same
# directory and only bar is fsynced. After the crash both files must report two
# links, and the test then empties and removes the directory.
# fs: ext4 xfs btrfs f2fs
# translation: the rm/rmdir after replay cannot run here; stale entries are left to fsck (U2)
[setup]
mkdir testdir
creat testdir/foo
creat testdir/bar
[run]
link testdir/bar testdir/bar_link
link testdir/foo testdir/foo_link
fsync testdir/bar
[expect]
testdir/foo nlink 2
testdir/bar nlink 2

# xfstests generic/106: drop one hard link, then fsync the file through the other
# testdir/foo and its second name testdir/bar are committed. bar is unlinked and
# foo fsynced. After the crash testdir must list foo alone.
# fs: ext4 xfs btrfs f2fs
# translation: the source evicts inodes (drop_caches) between the unlink and the fsync, which crashlab cannot do, and crashlab keeps foo open; the rm/rmdir after replay is not run
[setup]
mkdir testdir
creat testdir/foo
link testdir/foo testdir/bar
[run]
unlink testdir/bar
fsync testdir/foo
[expect]
testdir lists foo

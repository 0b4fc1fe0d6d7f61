# xfstests generic/510: move a file into A, rename A over the emptied B, fsync the file
# testdir/A, testdir/B and B/bar are committed. bar moves into A, A is renamed
# over B (now empty), and B/bar is fsynced. After the crash testdir must hold only
# B, and B only bar.
# fs: ext4 xfs btrfs f2fs
[setup]
mkdir testdir
mkdir testdir/A
mkdir testdir/B
creat testdir/B/bar
[run]
rename testdir/B/bar testdir/A/bar
rename testdir/A testdir/B
fsync testdir/B/bar
[expect]
testdir lists B
testdir/B lists bar

# xfstests generic/480: unlink one of two links and reuse its name for a new file, fsync it
# testdir/foo and its second name bar are committed. bar is unlinked, a new file
# called bar is created and fsynced. The only check is that replay and mount succeed.
# fs: ext4 xfs btrfs f2fs
# translation: the check is crashlab's universal rules U1 (mounts) and U2 (fsck clean), so there is no [expect] section
[setup]
mkdir testdir
creat testdir/foo
link testdir/foo testdir/bar
[run]
unlink testdir/bar
creat testdir/bar
fsync testdir/bar

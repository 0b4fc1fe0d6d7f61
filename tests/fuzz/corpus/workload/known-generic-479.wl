# xfstests generic/479: rename a symlink and hard-link it back under its old name, then commit the log
# testdir/foo, a symlink, is committed. A log exists after fsyncing a new file
# testdir/f1; foo is then renamed to bar, linked back as foo, and another new file
# is fsynced to commit the log. The only check is that replay and mount succeed.
# fs: ext4 xfs btrfs f2fs
# translation: only the symlink variant (the fifo and device variants need mknod); the check is crashlab's universal rules U1 (mounts) and U2 (fsck clean), so there is no [expect] section
[setup]
mkdir testdir
symlink "xxx" testdir/foo
[run]
creat testdir/f1
fsync testdir/f1
rename testdir/foo testdir/bar
link testdir/bar testdir/foo
creat f2
fsync f2

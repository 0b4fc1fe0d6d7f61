# xfstests generic/526: renames, a link onto a renamed inode, and a new file under an old name
# testdir/fname1 ("foo") and fname2 ("hello") are committed. fname1 becomes fname3,
# fname2 becomes fname4, fname3 gets the extra name fname2, and a new fname1
# ("bar") is written and fsynced. After the crash every name must lead to the
# right content.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fsync_mode=strict
# translation: f2fs runs with -o fsync_mode=strict, as the source mounts it
[setup]
mkdir testdir
write testdir/fname1 "foo"
write testdir/fname2 "hello"
[run]
rename testdir/fname1 testdir/fname3
rename testdir/fname2 testdir/fname4
link testdir/fname3 testdir/fname2
write testdir/fname1 "bar"
fsync testdir/fname1
[expect]
testdir/fname1 text "bar"
testdir/fname2 text "foo"
testdir/fname3 text "foo"
testdir/fname4 text "hello"

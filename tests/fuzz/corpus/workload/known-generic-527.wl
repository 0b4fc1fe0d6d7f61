# xfstests generic/527: renames, a deletion, links and reused names in two directories
# In testdir, fname1 is renamed to fname3, fname2 is deleted and recreated as a
# link to fname3, and a new fname1 is written and fsynced. In testdir2, a and
# zz_link swap names through tmp, zz becomes a2, and a new zz is written and
# fsynced. After the crash every name must lead to the right content.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fsync_mode=strict
# translation: a close of fname2 precedes its unlink so the deleted inode is not left open (the source's rm had no open descriptor); f2fs runs with -o fsync_mode=strict, as the source mounts it
[setup]
mkdir testdir
write testdir/fname1 "foo"
write testdir/fname2 "hello"
mkdir testdir2
write testdir2/zz "foo"
link testdir2/zz testdir2/zz_link
write testdir2/a "hello"
[run]
rename testdir/fname1 testdir/fname3
close testdir/fname2
unlink testdir/fname2
link testdir/fname3 testdir/fname2
write testdir/fname1 "bar"
fsync testdir/fname1
rename testdir2/a testdir2/tmp
rename testdir2/zz_link testdir2/a
rename testdir2/tmp testdir2/zz_link
rename testdir2/zz testdir2/a2
write testdir2/zz "bar"
fsync testdir2/zz
[expect]
testdir/fname1 text "bar"
testdir/fname2 text "foo"
testdir/fname3 text "foo"
testdir2/a text "foo"
testdir2/a2 text "foo"
testdir2/zz text "bar"
testdir2/zz_link text "hello"

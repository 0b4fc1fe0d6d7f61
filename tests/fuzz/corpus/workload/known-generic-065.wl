# xfstests generic/065: fsync a directory that gained links to an old and a new inode
# foo and mydir are committed. Links to foo and to a new file hello are added in
# mydir and in new subdirectories below it; only mydir and then hello are fsynced.
# After the crash foo must have five links and every name must exist with its data.
# fs: ext4 xfs btrfs f2fs
# translation: `mkdir -p mydir/x/y/z` becomes three mkdirs; the bottom-up removal of mydir after replay cannot run here and stale entries are left to fsck (U2)
[setup]
write foo 0 8K
mkdir mydir
[run]
link foo mydir/foo_2
link foo mydir/foo_3
write hello 0 64K
link hello mydir/hello_2
mkdir mydir/x
mkdir mydir/x/y
mkdir mydir/x/y/z
link foo mydir/x/y/foo_y_link
link foo mydir/x/y/z/foo_z_link
creat mydir/x/y/z/qwerty
fsync mydir
fsync hello
[expect]
foo size 8192
foo data 1
foo nlink 5
mydir/foo_2 exists
mydir/foo_3 exists
mydir/hello_2 exists
mydir/x/y/foo_y_link exists
mydir/x/y/z/foo_z_link exists
mydir/x/y/z/qwerty exists
hello size 65536
hello data 5

# xfstests generic/784: move a dir away, create a file under its old name, fsync, move it, fsync
# dir1 and dir2 are committed. dir1 moves into dir2, a file named dir1 is created
# in the root and fsynced, then moved to dir2/foo and fsynced. After the crash
# the root must hold dir2, dir2 must hold dir1 and foo, and dir2/dir1 be empty.
# fs: ext4 xfs btrfs f2fs
# guards: btrfs: don't log conflicting inode if it's a dir moved in the current transaction
[setup]
mkdir dir1
mkdir dir2
[run]
rename dir1 dir2/dir1
creat dir1
fsync dir1
rename dir1 dir2/foo
fsync dir2/foo
[expect]
. lists dir2
dir2 lists dir1 foo
dir2/dir1 lists

# xfstests generic/782: new dir in the root, fsync a file, link it into the dir, fsync the root
# An empty foo is committed. A directory dir is made, foo receives 64 KiB and is
# fsynced, gets a second name dir/bar, and the root is fsynced. After the crash
# the root must hold dir and foo, and foo its 64 KiB.
# fs: ext4 xfs btrfs f2fs
# guards: btrfs: do not update last_log_commit when logging inode due to a new name (bfe3d755ef7c)
[setup]
creat foo
[run]
mkdir dir
write foo 0 64K
fsync foo
link foo dir/bar
fsync .
[expect]
. lists dir foo
foo size 65536
foo data 3

# Lesson new-file: create a file, fsync it, never fsync its directory.
# POSIX promises the file's data and metadata, not the name it was created
# under; ext4, xfs and btrfs document that the fsync carries the new name.
[setup]
mkdir d
[run]
write d/new "hello"
fsync d/new
# Observed on 6.12: ext4, xfs and btrfs keep the name.
[expect ext4 xfs btrfs]
d lists new
d/new text "hello"
# f2fs keeps it only when its fsync-marked inode block reaches the disk before
# the fsync's cache flush. On 6.12 the first fsync after a checkpoint does not
# wait for that block (its fsync sequence number is 0, and the wait loop in
# f2fs_wait_on_node_pages_writeback skips a 0), so the flush can overtake the
# write and the name is gone: both outcomes are recorded here. What holds
# either way is the directory the setup synced.
[expect f2fs]
d type dir

# Lesson new-file: create a file, fsync it, never fsync its directory.
# POSIX promises the file's data and metadata, not the name it was created
# under; ext4, xfs and btrfs document that the fsync carries the new name.
[setup]
mkdir d
[run]
write d/new "hello"
fsync d/new
# Observed on 6.12 with the series: every file system keeps the name. f2fs
# keeps it by roll-forward recovery of the fsync-marked inode block; without
# patch 0009 (kernel/README.md) the first fsync after a checkpoint did not
# wait for that block before its cache flush, and about half of the runs lost
# the name.
[expect]
d lists new
d/new text "hello"

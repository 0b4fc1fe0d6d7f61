# Lesson new-file: create a file, fsync it, never fsync its directory.
# POSIX promises the file's data and metadata, not the name it was created
# under; ext4, xfs and btrfs document that the fsync carries the new name.
[setup]
mkdir d
[run]
write d/new "hello"
fsync d/new
# Observed on 6.12: every file system keeps the name, f2fs included.
[expect]
d lists new
d/new text "hello"

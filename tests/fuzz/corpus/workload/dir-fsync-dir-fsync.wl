# Lesson dir-fsync: change a directory's entries three ways (a new file,
# a rename inside it, an unlink), then fsync the directory itself.
[setup]
mkdir d
write d/old "old"
write d/gone "bye"
[run]
write d/new "new"
rename d/old d/renamed
unlink d/gone
fsync d
# Observed on 6.12: every name change survives everywhere.
[expect]
d lists new renamed
d/renamed text "old"
# The new file's data was never fsynced: empty on ext4, xfs and btrfs.
[expect ext4 xfs btrfs]
d/new size 0
# f2fs's directory fsync is a checkpoint; the 3 bytes came along with it.
[expect f2fs]
d/new text "new"

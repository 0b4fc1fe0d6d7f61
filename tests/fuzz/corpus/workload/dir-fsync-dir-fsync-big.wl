# Lesson dir-fsync, variant: as dir-fsync.wl, with 64 KiB for the new
# file instead of 3 bytes (too large to live inside an f2fs inode).
[setup]
mkdir d
write d/old "old"
write d/gone "bye"
[run]
write d/new 64K
rename d/old d/renamed
unlink d/gone
fsync d
# Observed on 6.12.
[expect]
d lists new renamed
d/renamed text "old"
[expect ext4 xfs btrfs]
d/new size 0
# f2fs keeps the size the write set, but none of the data: 64 KiB of zeros.
[expect f2fs]
d/new size 65536

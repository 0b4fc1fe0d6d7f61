# Lesson no-fsync, variant: the same unsynced writes, then an fsync of an
# unrelated file. Only `other` is promised; the rest is whatever the fsync
# happened to carry along.
[setup]
mkdir d
write d/old "version 1"
[run]
write d/old "version 2"
write d/new 64K
mkdir d/sub
write other "unrelated"
fsync other
# Observed on 6.12 with default options.
[expect]
other text "unrelated"
d/old text "version 1"
# ext4 and xfs commit their journal, which holds the new names; the data
# of d/new was not written back: the name survives, empty.
[expect ext4 xfs]
d lists new old sub
d/new size 0
d/sub type dir
# btrfs and f2fs persist only the fsynced file.
[expect btrfs f2fs]
d lists old

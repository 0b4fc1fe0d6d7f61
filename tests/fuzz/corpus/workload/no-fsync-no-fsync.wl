# Lesson no-fsync: write without any fsync, then the power is cut.
# d/old is durable after setup; the run overwrites it, creates d/new with
# 64 KiB and makes the directory d/sub. Nothing asks for durability, so no
# model promises any of it.
[setup]
mkdir d
write d/old "version 1"
[run]
write d/old "version 2"
write d/new 64K
mkdir d/sub
# Observed on 6.12 with default options: nothing of the run reached the disk.
[expect]
d lists old
d/old text "version 1"
d/new absent
d/sub absent

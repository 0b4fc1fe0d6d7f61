# Lesson fbarrier: write a new file t, order its data before the rename
# with fdatabarrier (no durability asked for), rename it to f, then force
# a commit that does not cover f (fsync of an unrelated new file).
[run]
write t 256K
fdatabarrier t
rename t f
write other "after"
fsync other
# Observed on 6.12 with the kernel series.
[expect]
other text "after"
# ext4 and xfs: the rename rode along with the commit for `other`, and the
# barrier had put the data on disk first: f holds all 256 KiB.
# btrfs: its barrier is an fsync of t, and fsync other carried the rename.
[expect ext4 xfs btrfs]
f data 3
t absent
# f2fs: its barrier is an fsync of t; fsync other does not carry the rename.
[expect f2fs]
f absent
t data 1

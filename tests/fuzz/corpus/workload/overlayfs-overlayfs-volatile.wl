# Lesson overlayfs, variant: overlayfs mounted with `volatile` skips every
# fsync on the upper file system, so the copy-up is the same sequence
# without `fsync work/tmp`. The final `fsync upper` stands for whatever
# later makes the rename durable.
[setup]
mkdir work
mkdir upper
[run]
write work/tmp 64K
setxattr work/tmp user.overlay.origin "lower-42"
chmod work/tmp 0640
rename work/tmp upper/file
fsync upper
# Observed on 6.12: the rename and the attributes survive, the data does not.
[expect]
work/tmp absent
upper lists file
upper/file xattr user.overlay.origin "lower-42"
upper/file mode 0640
[expect ext4 xfs btrfs]
upper/file size 0
# f2fs keeps the size the write set, but none of the data: 64 KiB of zeros.
[expect f2fs]
upper/file size 65536

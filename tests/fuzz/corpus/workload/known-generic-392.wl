# xfstests generic/392: file size after fsync or fdatasync of a small append or an end punch
# Each file is sized by truncate, filled and fsynced, then either grown by a small
# write or given a small hole near its end, and fsynced or fdatasynced. After the
# crash each file must report the size it had before.
# fs: ext4 xfs btrfs f2fs
# translation: sizes scaled from 4 MiB / 4 MiB + 8 KiB to 256 KiB / 264 KiB; four of the ten cases (fsync + 1 KiB append, fdatasync + 4 KiB append, fsync + 1 KiB punch, fdatasync + 4 KiB punch) run on four files in one workload instead of one shutdown each (the source uses the shutdown ioctl, btrfs only on kernels that have it); the atime/mtime/ctime comparison and the touch-only case cannot be expressed and are dropped
[setup]
[run]
creat f1
truncate f1 256K
write f1 0 256K
fsync f1
write f1 256K 1K
fsync f1
creat f2
truncate f2 256K
write f2 0 256K
fsync f2
write f2 256K 4K
fdatasync f2
creat f3
truncate f3 264K
write f3 0 264K
fsync f3
falloc f3 punch_hole 256K 1K
fsync f3
creat f4
truncate f4 264K
write f4 0 264K
fsync f4
falloc f4 punch_hole 256K 4K
fdatasync f4
[expect]
f1 size 263168
f2 size 266240
f3 size 270336
f4 size 270336

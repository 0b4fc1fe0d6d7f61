# xfstests generic/468: file size after fallocate past EOF and fsync or fdatasync
# Each file is sized by truncate, filled and fsynced, then preallocated past its
# end, either growing it or with keep-size, and fsynced or fdatasynced. After the
# crash each file must report the size it had before.
# fs: ext4 xfs btrfs f2fs
# translation: sizes scaled (4 MiB + 8 KiB base to 264 KiB, the 100 MiB preallocation to 512 KiB); four of the twelve cases (fsync + 1 KiB, fdatasync + 512 KiB, fsync + keep-size 4 KiB, fdatasync + keep-size 512 KiB) run on four files in one workload instead of one shutdown each (the source uses the shutdown ioctl, btrfs only on kernels that have it); the st_blocks and time comparisons cannot be expressed and are dropped
[setup]
[run]
creat g1
truncate g1 264K
write g1 0 264K
fsync g1
falloc g1 0 264K 1K
fsync g1
creat g2
truncate g2 264K
write g2 0 264K
fsync g2
falloc g2 0 264K 512K
fdatasync g2
creat g3
truncate g3 264K
write g3 0 264K
fsync g3
falloc g3 keep_size 264K 4K
fsync g3
creat g4
truncate g4 264K
write g4 0 264K
fsync g4
falloc g4 keep_size 264K 512K
fdatasync g4
[expect]
g1 size 271360
g2 size 794624
g3 size 270336
g4 size 270336

# xfstests generic/059: fsync after punching holes smaller than a block
# A committed 16 KiB file gets two small holes punched, one unaligned 4 KiB range
# and one of 100 bytes, then is fsynced. After the crash the holes must read as
# zeros and the size must be unchanged.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: add missing inode update when punching hole
# translation: the check that mtime and ctime grew across the punches (after a 1 s pause) cannot be expressed and is dropped
[setup]
write foo 0 16K
fsync foo
[run]
falloc foo punch_hole 8000 4K
falloc foo punch_hole 15000 100
fsync foo
[expect]
foo size 16384
foo data 4

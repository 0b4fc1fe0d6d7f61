# xfstests generic/047: files fsynced one by one keep their size after an abrupt stop
# Several new files each receive 32 KiB followed by an fsync. After the crash
# every one of them must exist with the full 32768-byte size, rather than a size
# with no data behind it.
# fs: ext4 xfs btrfs f2fs
# translation: 999 files scaled to 8 (f1..f8); the source stops the fs with the shutdown ioctl (btrfs only on kernels that have it), here the power is cut at the last fsync; its "has at least one extent" check cannot be expressed and is dropped
[setup]
[run]
write f1 0 32K
fsync f1
write f2 0 32K
fsync f2
write f3 0 32K
fsync f3
write f4 0 32K
fsync f4
write f5 0 32K
fsync f5
write f6 0 32K
fsync f6
write f7 0 32K
fsync f7
write f8 0 32K
fsync f8
[expect]
f1 size 32768
f2 size 32768
f3 size 32768
f4 size 32768
f5 size 32768
f6 size 32768
f7 size 32768
f8 size 32768

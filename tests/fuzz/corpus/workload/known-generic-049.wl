# xfstests generic/049: files written without fsync keep their size after sync and an abrupt stop
# Several new 32 KiB files are written with no fsync, then sync is called. After
# the crash each file must be present with its 32768-byte size (a replay that
# undid the synced sizes is the bug this hunts).
# fs: ext4 xfs btrfs f2fs
# translation: 999 files scaled to 8 (f1..f8); the source uses the shutdown ioctl after sync (btrfs only on kernels that have it), here the power is cut at the sync; its "has at least one extent" check cannot be expressed and is dropped
[setup]
[run]
write f1 0 32K
write f2 0 32K
write f3 0 32K
write f4 0 32K
write f5 0 32K
write f6 0 32K
write f7 0 32K
write f8 0 32K
sync
[expect]
f1 size 32768
f2 size 32768
f3 size 32768
f4 size 32768
f5 size 32768
f6 size 32768
f7 size 32768
f8 size 32768

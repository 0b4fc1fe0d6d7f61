# xfstests btrfs/240: partial writes into preallocated extents across transactions
# Two preallocated ranges, the second three times the first, are partly written
# and fsynced, then committed. The middle of the second range is written and
# fsynced; then the first range is written, the file truncated and fsynced. That
# last fsync must succeed and the content must survive the crash.
# fs: btrfs
# translation: scaled by 1/16 (1 MiB becomes 64 KiB); that the last fsync returns 0 is not an [expect] line: crashlab stores each op's result and reports a failure there as the simulator and the guest disagreeing
[setup]
creat foobar
falloc foobar 0 0 64K
falloc foobar 0 192K 192K
write foobar 192K 64K
write foobar 320K 64K
fsync foobar
[run]
write foobar 256K 64K
fsync foobar
write foobar 0 64K
truncate foobar 320K
fsync foobar
[expect btrfs]
foobar size 327680
foobar data 10

# xfstests generic/695: punch holes that border existing holes, fsync
# A file laid out as hole, data, hole is committed. Two holes are punched, each
# next to one of the existing holes, and the file is fsynced. After the crash the
# new holes must read as zeros and the middle data must be intact.
# fs: ext4 xfs btrfs f2fs
# guards: btrfs: update generation of hole file extent item when merging holes (e6e3dec6c3c288)
# translation: scaled by 1/16 (12 MiB file, 8 MiB of data at 2 MiB, 2 MiB punches); the fiemap layout check cannot be expressed and is dropped; the btrfs bug needs a file system made without no-holes, which the default btrfs mkfs does not give, so there the expected result is checked without the trigger
[setup]
creat foobar
truncate foobar 768K
write foobar 128K 512K
[run]
falloc foobar punch_hole 128K 128K
falloc foobar punch_hole 512K 128K
fsync foobar
[expect]
foobar size 786432
foobar data 5

# xfstests generic/101: shrink then grow a file by truncate, fsync, and read the gap
# foo and bar (125 KiB each) are committed. foo is cut to 64 KiB and grown back to
# 125 KiB; bar is cut to zero and grown to 253 KiB; each is fsynced. After the
# crash the regrown ranges must read as zeros, with the new sizes.
# fs: ext4 xfs btrfs f2fs
# translation: the source makes btrfs with -O no-holes; crashlab passes no mkfs options, so this relies on no-holes being the btrfs-progs default (since 5.15)
[setup]
write foo 0 64K
write foo 64K 61K
write bar 0 64K
write bar 64K 61K
[run]
truncate foo 64K
truncate foo 125K
fsync foo
truncate bar 0
truncate bar 253K
fsync bar
[expect]
foo size 128000
foo data 6
bar size 259072
bar data 9

# xfstests generic/512: tiny file, preallocate a range past EOF inside the same block, fsync
# A new file gets 21 bytes, then [40, 80) is preallocated (growing it to 80 bytes)
# and the file is fsynced. After the crash it must be 80 bytes: the written bytes
# followed by zeros.
# fs: ext4 xfs btrfs f2fs
[setup]
[run]
write foobar 0 21
falloc foobar 0 40 40
fsync foobar
[expect]
foobar size 80
foobar data 2

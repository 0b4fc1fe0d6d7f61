# xfstests btrfs/243: rename two files, grow one by truncate, fsync the other, then the first
# An empty foo and a bar with data are committed. bar is fsynced (nothing to log),
# both are renamed (bar2, foo2), bar2 is grown by truncate, foo2 is fsynced and
# then bar2. After the crash bar2 must have its new size with zeros past the old
# data, foo2 must exist and foo must not.
# fs: btrfs
# translation: scaled by 1/4 (1 MiB of data and a 2 MiB truncate become 256 KiB and 512 KiB)
[setup]
creat foo
write bar 0 256K
[run]
fsync bar
rename bar bar2
rename foo foo2
truncate bar2 512K
fsync foo2
fsync bar2
[expect btrfs]
bar2 size 524288
bar2 data 6
foo2 exists
foo absent

# xfstests generic/073: fsynced data survives after another file left a fsynced directory
# foo (8 KiB) and testdir_1/bar are committed. foo grows by 8 KiB, bar is moved
# to testdir_2, testdir_1 is fsynced (on btrfs a full commit), then foo is
# fsynced. All 16 KiB of foo must be there after the crash.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: fix data loss in the fast fsync path
[setup]
write foo 0 8K
fsync foo
mkdir testdir_1
creat testdir_1/bar
mkdir testdir_2
[run]
write foo 8K 8K
rename testdir_1/bar testdir_2/bar
fsync testdir_1
fsync foo
[expect]
foo size 16384
foo data 6

# xfstests generic/552: O_DIRECT data, fsync of a sibling, rename, fsync of the renamed file
# dir, dir/foo and dir/bar are new; bar receives 4 KiB with O_DIRECT. foo is
# fsynced, bar is renamed to baz, and baz is fsynced. After the crash baz must
# hold the 4 KiB.
# fs: ext4 xfs btrfs f2fs
# translation: the source evicts inodes (drop_caches, with dir held busy) before the first fsync, which crashlab cannot do
[setup]
[run]
mkdir dir
creat dir/foo
creat dir/bar
dwrite dir/bar 0 4K
fsync dir/foo
rename dir/bar dir/baz
fsync dir/baz
[expect]
dir/baz size 4096
dir/baz data 6

# xfstests generic/557: fsync a file, unlink it, fsync its directory
# dir/foo is created and fsynced, then unlinked, and dir is fsynced. After the
# crash foo must be gone.
# fs: ext4 xfs btrfs f2fs
# translation: the source evicts inodes (drop_caches, with dir held busy) before the unlink, which crashlab cannot do; foo is closed before the unlink so the unlink drops its last reference
[setup]
[run]
mkdir dir
creat dir/foo
fsync dir/foo
close dir/foo
unlink dir/foo
fsync dir
[expect]
dir/foo absent

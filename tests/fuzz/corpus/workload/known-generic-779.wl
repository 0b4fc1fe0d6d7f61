# xfstests generic/779: fsync a dir holding a new symlink, rename the symlink, fsync again
# A new directory with a new symlink old-slink (to "foobar") is fsynced; the
# symlink is renamed to new-slink and the directory fsynced again. After the crash
# new-slink must be a symlink to "foobar".
# fs: ext4 xfs btrfs f2fs
# guards: btrfs: set inode flag BTRFS_INODE_COPY_EVERYTHING when logging new name (953902e4fb4c)
# fails btrfs: real bug: the guest kernel (Debian 6.12.118) does not have the fix above; after the second fsync of dir the final state still has the symlink under old-slink and no new-slink, so fsync.dir and btrfs.fsync-dir are LOST too
[setup]
[run]
mkdir dir
symlink "foobar" dir/old-slink
fsync dir
rename dir/old-slink dir/new-slink
fsync dir
[expect]
dir/new-slink target "foobar"

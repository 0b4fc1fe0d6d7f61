# xfstests generic/474: syncfs makes a new directory and file durable
# After a sync, a directory and a 4 KiB file inside it are created and syncfs is
# called. After the crash the directory and the file must be as they were: the
# same names, data and modes.
# fs: ext4 xfs btrfs f2fs
# translation: the source stops the fs with the shutdown ioctl after syncfs (btrfs only on kernels that have it), here the power is cut; the fssum comparison keeps names, data and modes, while uid/gid and times cannot be expressed and are dropped
[setup]
[run]
mkdir dir
write dir/testfile 0 4K
syncfs
[expect]
dir lists testfile
dir mode 0755
dir/testfile size 4096
dir/testfile data 2
dir/testfile mode 0644

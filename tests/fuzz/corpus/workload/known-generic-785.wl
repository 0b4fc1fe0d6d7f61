# xfstests generic/785: fsync a file, add a dir and file, rename the first file, fsync the root
# An empty file1 is committed; 1000 bytes are written to it and fsynced. A new
# dir with a new dir/foo is made, file1 is renamed to file2, and the root is
# fsynced. After the crash the whole tree must be as it was before it.
# fs: ext4 xfs btrfs f2fs
# guards: btrfs: do not skip logging new dentries when logging a new name
# translation: the fssum of the whole fs becomes listings, sizes, data and modes; uid/gid and mtime cannot be expressed and are dropped (there are no xattrs)
[setup]
creat file1
[run]
write file1 0 1000
fsync file1
mkdir dir
creat dir/foo
rename file1 file2
fsync .
[expect]
. lists dir file2
file1 absent
dir lists foo
dir mode 0755
file2 size 1000
file2 data 6
file2 mode 0644
dir/foo size 0
dir/foo mode 0644

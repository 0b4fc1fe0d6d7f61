# xfstests generic/348: symlinks made in a committed and in a new directory, each directory fsynced
# A symlink is created in an already committed directory and that directory is
# fsynced; then a new directory gets a symlink and is fsynced. After the crash
# both symlinks must exist and point where they were made to point (not empty).
# fs: ext4 xfs btrfs f2fs
# translation: the source's targets are paths under its scratch mount that do not exist; fixed absolute strings play that role
[setup]
mkdir testdir1
[run]
symlink "/mnt/scratch/foo1" testdir1/bar1
fsync testdir1
mkdir testdir2
symlink "/mnt/scratch/foo2" testdir2/bar2
fsync testdir2
[expect]
testdir1/bar1 target "/mnt/scratch/foo1"
testdir2/bar2 target "/mnt/scratch/foo2"

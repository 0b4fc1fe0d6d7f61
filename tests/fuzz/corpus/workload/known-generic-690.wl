# xfstests generic/690: fsync a dir, create and rename a symlink in it, fsync the dir again
# testdir is committed. A file is created in it and the directory fsynced; a
# symlink bar is created, renamed to baz, and the directory fsynced again. After
# the crash baz must be a symlink with its full target.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fastboot
# guards: btrfs: always log symlinks in full mode (d0e64a981fd841)
# translation: f2fs runs with -o fastboot, as the source mounts it; the target, a path under the scratch mount, is a fixed absolute string
[setup]
mkdir testdir
[run]
creat testdir/foo
fsync testdir
symlink "/mnt/scratch/testdir/foo" testdir/bar
rename testdir/bar testdir/baz
fsync testdir
[expect]
testdir/baz target "/mnt/scratch/testdir/foo"

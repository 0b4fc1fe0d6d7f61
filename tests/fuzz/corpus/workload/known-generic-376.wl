# xfstests generic/376: rename a file, create a new one under its old name, fsync the renamed one
# dir/foo is committed, renamed to dir/bar, a new empty dir/foo is made, and
# dir/bar is fsynced. After the crash dir must hold both bar and foo.
# fs: ext4 xfs btrfs f2fs
[setup]
mkdir dir
creat dir/foo
[run]
rename dir/foo dir/bar
creat dir/foo
fsync dir/bar
[expect]
dir lists bar foo

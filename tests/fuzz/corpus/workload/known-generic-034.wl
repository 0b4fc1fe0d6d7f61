# xfstests generic/034: fsync a directory whose older entry is already committed
# test_dir/foo is committed by a sync; test_dir/bar is then created and both the
# directory and bar are fsynced. After the crash both names must be present and
# nothing else, since the test deletes the two and expects rmdir to work.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: fix directory recovery from fsync log
# translation: the rm + rmdir the test runs after replay is expressed as the exact listing of test_dir
[setup]
mkdir test_dir
creat test_dir/foo
[run]
creat test_dir/bar
fsync test_dir
fsync test_dir/bar
[expect]
test_dir/foo exists
test_dir/bar exists
test_dir lists bar foo

# xfstests generic/321 (rename case): move an fsynced file into a new directory
# foo is created and fsynced, a new directory bar is made, foo is moved into it,
# and bar then bar/foo are fsynced. After the crash the root must list only bar,
# and bar only foo, with their modes.
# fs: ext4 xfs btrfs f2fs
# translation: the source runs its three cases one after another on one fs; each is its own workload here
[setup]
[run]
creat foo
mkdir bar 0755
fsync foo
rename foo bar/foo
fsync bar
fsync bar/foo
[expect]
. lists bar
bar lists foo
bar type dir
bar mode 0755
bar/foo type file
bar/foo mode 0644

# xfstests generic/321 (new directory case): fsync a freshly made directory
# On an empty fs a directory bar is created and fsynced. After the crash the
# root must list bar, a directory with mode 0755.
# fs: ext4 xfs btrfs f2fs
# translation: the source runs its three cases one after another on one fs; each is its own workload here
[setup]
[run]
mkdir bar 0755
fsync bar
[expect]
. lists bar
bar type dir
bar mode 0755

# xfstests generic/066 (second crash): an xattr removed after an fsync stays removed
# foobar has two user xattrs. Data is appended and fsynced, one xattr is removed,
# a hard link is added, and a new unrelated file is fsynced to commit the log.
# After the crash only the remaining xattr may be there.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fastboot
# guards: Btrfs: remove deleted xattrs on fsync log replay
# translation: starts from a synced file instead of the first crash's replayed state; f2fs runs with -o fastboot, as the source mounts it
[setup]
creat foobar
setxattr foobar user.attr1 "val1"
setxattr foobar user.attr3 "val3"
[run]
append foobar "hello world!\n"
fsync foobar
removexattr foobar user.attr1
link foobar foobar_link
creat qwerty
fsync qwerty
[expect]
foobar xattr user.attr3 "val3"
foobar noxattr user.attr1

# xfstests generic/066 (first crash): a removed xattr stays removed after fsync
# foobar carries three user xattrs, all committed. One of them is removed and the
# file fsynced. After the crash only the other two may remain, with their values.
# fs: ext4 xfs btrfs f2fs
# guards: Btrfs: remove deleted xattrs on fsync log replay
# translation: "exactly these xattrs" is written as the two kept values plus the removed name being absent
[setup]
creat foobar
setxattr foobar user.attr1 "val1"
setxattr foobar user.attr2 "val2"
setxattr foobar user.attr3 "val3"
[run]
removexattr foobar user.attr2
fsync foobar
[expect]
foobar xattr user.attr1 "val1"
foobar xattr user.attr3 "val3"
foobar noxattr user.attr2

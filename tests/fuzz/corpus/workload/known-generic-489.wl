# xfstests generic/489: xattrs survive a commit between two fsyncs of the file
# foobar gets three user xattrs and is fsynced, then everything is committed.
# 64 KiB are written and the file is fsynced again. After the crash all three
# xattrs and the data must be there.
# fs: ext4 xfs btrfs f2fs
[setup]
creat foobar
setxattr foobar user.xa1 "qwerty"
setxattr foobar user.xa2 "hello world"
setxattr foobar user.xa3 "test"
fsync foobar
[run]
write foobar 0 64K
fsync foobar
[expect]
foobar xattr user.xa1 "qwerty"
foobar xattr user.xa2 "hello world"
foobar xattr user.xa3 "test"
foobar size 65536
foobar data 6

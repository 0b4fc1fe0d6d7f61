# xfstests generic/498: a new hard link in new directories, fsync the top new directory
# New directories A, B and A/C and a new file B/foo are made; foo is fsynced, then
# it gets a second name A/C/foo and A is fsynced. After the crash A and B/foo must
# exist.
# fs: ext4 xfs btrfs f2fs
[setup]
[run]
mkdir A
mkdir B
mkdir A/C
creat B/foo
fsync B/foo
link B/foo A/C/foo
fsync A
[expect]
A type dir
B/foo exists

# xfstests generic/343: add a link in x, move a directory and a file from y into x, fsync the link
# x/foo, the directory y/z and the file y/foo2 are committed. x/bar becomes a
# second name of foo, y/z and y/foo2 move into x, and x/bar is fsynced. After the
# crash x must hold bar, foo, foo2 and z, with z empty and y empty.
# fs: ext4 xfs btrfs f2fs
[setup]
mkdir x
mkdir y
creat x/foo
mkdir y/z
creat y/foo2
[run]
link x/foo x/bar
rename y/z x/z
rename y/foo2 x/foo2
fsync x/bar
[expect]
x lists bar foo foo2 z
x/z lists
y lists

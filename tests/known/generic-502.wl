# xfstests generic/502: shuffle the names of two links, reuse one for a new file, fsync it
# testdir/foo and its second name bar are committed. foo is renamed to qwerty, bar
# to foo, and a new bar is created and fsynced. After the crash testdir must hold
# bar, foo and qwerty.
# fs: ext4 xfs btrfs
# translation: f2fs is dropped because the source mounts it with -o fsync_mode=strict and crashlab's default f2fs mount does not promise this
[setup]
mkdir testdir
creat testdir/foo
link testdir/foo testdir/bar
[run]
rename testdir/foo testdir/qwerty
rename testdir/bar testdir/foo
creat testdir/bar
fsync testdir/bar
[expect ext4 xfs btrfs]
testdir lists bar foo qwerty

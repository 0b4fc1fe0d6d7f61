# xfstests generic/502: shuffle the names of two links, reuse one for a new file, fsync it
# testdir/foo and its second name bar are committed. foo is renamed to qwerty, bar
# to foo, and a new bar is created and fsynced. After the crash testdir must hold
# bar, foo and qwerty.
# fs: ext4 xfs btrfs f2fs
# mount-opts: f2fs:fsync_mode=strict
# translation: f2fs runs with -o fsync_mode=strict, as the source mounts it
[setup]
mkdir testdir
creat testdir/foo
link testdir/foo testdir/bar
[run]
rename testdir/foo testdir/qwerty
rename testdir/bar testdir/foo
creat testdir/bar
fsync testdir/bar
[expect]
testdir lists bar foo qwerty

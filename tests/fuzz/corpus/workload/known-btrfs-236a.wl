# xfstests btrfs/236 (rename case): fsync a file overwritten after a rename, with another fsync first
# bar is created and baz receives 1 MiB and is fsynced. baz is renamed to foo,
# foo is overwritten with 1 MiB of new data, bar is fsynced (committing the log)
# and foo fsynced. After the crash foo must hold the new data, not the old.
# fs: btrfs
# translation: the source repeats each case three times (a race) and also under -o nodatacow; only one run with the default COW mount is expressed; the mtime/ctime checks (after a 1 s pause) cannot be expressed and are dropped
[setup]
[run]
creat bar
write baz 0 1M
fsync baz
rename baz foo
write foo 0 1M
fsync bar
fsync foo
[expect btrfs]
foo size 1048576
foo data 5

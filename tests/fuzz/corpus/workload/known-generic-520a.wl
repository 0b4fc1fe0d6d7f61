# xfstests generic/520 (case: link foo A/bar, then fsync A/bar): stat of the source after a link
# A new file foo gets a second name A/bar (directories are new too) and then A/bar is fsynced.
# After the crash foo must look as before: there, empty, with two links.
# fs: ext4 xfs btrfs f2fs
# translation: one of the source's 37 cases; its inode number and st_blocks comparison cannot be expressed (only size and link count are checked)
[setup]
[run]
mkdir A
creat foo
link foo A/bar
fsync A/bar
[expect]
foo exists
foo size 0
foo nlink 2

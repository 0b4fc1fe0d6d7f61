# xfstests generic/520 (case: link A/foo bar, then fsync A/foo): stat of the source after a link
# A new file A/foo gets a second name bar (directories are new too) and then A/foo is fsynced.
# After the crash A/foo must look as before: there, empty, with two links.
# fs: ext4 xfs btrfs f2fs
# translation: one of the source's 37 cases; its inode number and st_blocks comparison cannot be expressed (only size and link count are checked)
[setup]
[run]
mkdir A
creat A/foo
link A/foo bar
fsync A/foo
[expect]
A/foo exists
A/foo size 0
A/foo nlink 2

# xfstests generic/520 (case: link A/foo A/bar, then sync): stat of the source after a link
# A new file A/foo gets a second name A/bar (directories are new too) and then sync is called.
# After the crash A/foo must look as before: there, empty, with two links.
# fs: ext4 xfs btrfs f2fs
# translation: one of the source's 37 cases; its inode number and st_blocks comparison cannot be expressed (only size and link count are checked)
[setup]
[run]
mkdir A
creat A/foo
link A/foo A/bar
sync
[expect]
A/foo exists
A/foo size 0
A/foo nlink 2

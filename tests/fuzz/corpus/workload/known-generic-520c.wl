# xfstests generic/520 (case: link bar A/bar, then fsync bar): stat of the source after a link
# A new file bar gets a second name A/bar (directories are new too) and then bar is fsynced.
# After the crash bar must look as before: there, empty, with two links.
# fs: ext4 xfs btrfs f2fs
# translation: one of the source's 37 cases; its inode number and st_blocks comparison cannot be expressed (only size and link count are checked)
[setup]
[run]
mkdir A
creat bar
link bar A/bar
fsync bar
[expect]
bar exists
bar size 0
bar nlink 2

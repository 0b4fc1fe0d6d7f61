# N1 with the FIEMAP_FLAG_SYNC trick before the rename (what overlayfs and
# others do today instead of fsync): fiemap_sync writes t's data back and
# waits, so whenever the rename is visible the data should be too. The
# `fiemap_sync` model judges it with the fdatabarrier rule.
[setup]
mkdir d
[run]
write t 64K
fiemap_sync t
rename t f
creat g
fsync g

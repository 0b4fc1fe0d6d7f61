# Lesson overlayfs, with the barrier: the same copy-up sequence, with the
# rename made a RENAME_BARRIER rename (fbarrier on the file, then the
# rename), which orders the xattrs and the mode before the new name.
[setup]
mkdir work
mkdir upper
[run]
write work/tmp 64K
fsync work/tmp
setxattr work/tmp user.overlay.origin "lower-42"
chmod work/tmp 0640
rename work/tmp upper/file barrier
fsync upper
# Observed on 6.12 with the kernel series.
[expect]
work/tmp absent
upper lists file
upper/file data 7
upper/file xattr user.overlay.origin "lower-42"
upper/file mode 0640

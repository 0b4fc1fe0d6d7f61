# L5: fbarrier covers inode metadata: an xattr and the mode.
# Must hold: if f exists, the xattr and mode 0640 are set.
[setup]
write other "before"
sync
[run]
creat t 0600
setxattr t user.state ready
chmod t 0640
fbarrier t
rename t f
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

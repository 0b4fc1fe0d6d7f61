# Overlayfs litmus, with the barrier: the overlay mounted (`[overlay]`),
# a file of the lower layer copied up by its first change, written, then
# fbarrier and a rename. fbarrier on the overlay file goes to the upper
# file system's own barrier (kernel patch 0006), so the new name is never
# visible without the xattr and the data written before the barrier.
# Must hold: if g exists, it has user.x and all 128 KiB (ops 1 and 4).
[overlay]
[setup]
write f 64K
write other "before"
[run]
setxattr f user.x "copied-up"
write f 64K 64K
fbarrier f
rename f g
# Force a journal commit that does not cover f: change and fsync an
# unrelated file (its copy-up alone syncs the upper file system's log).
write other "after"
fsync other

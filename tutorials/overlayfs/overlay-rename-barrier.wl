# Overlayfs litmus, `rename ... barrier`: overlay-fbarrier.wl with the
# barrier in the rename (RENAME_BARRIER: the barrier on the moved file,
# then the rename; the overlay forwards it to the upper file system too).
# Must hold: if g exists, it has user.x and all 128 KiB (ops 1 and 4).
[overlay]
[setup]
write f 64K
write other "before"
[run]
setxattr f user.x "copied-up"
write f 64K 64K
rename f g barrier
# Force a journal commit that does not cover f: change and fsync an
# unrelated file (its copy-up alone syncs the upper file system's log).
write other "after"
fsync other

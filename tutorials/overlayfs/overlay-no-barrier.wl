# Overlayfs litmus, the negative control: overlay-fbarrier.wl without the
# fbarrier. Nothing orders the data written through the overlay before
# the rename: the new name can be visible with the copy-up's 64 KiB and
# without op 4's; the `sequential` model reports it.
[overlay]
[setup]
write f 64K
write other "before"
[run]
setxattr f user.x "copied-up"
write f 64K 64K
rename f g
# Force a journal commit that does not cover f: change and fsync an
# unrelated file (its copy-up alone syncs the upper file system's log).
write other "after"
fsync other

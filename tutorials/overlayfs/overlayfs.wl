# Lesson overlayfs: the sequence overlayfs runs on its upper file system
# when it copies a file up (fs/overlayfs/copy_up.c, 6.12, default
# fsync=auto): create a temporary file in the work directory, copy the
# data and fsync it, set the overlay xattrs and the attributes, rename the
# file into the upper directory. Nothing orders the xattrs before the
# rename. overlayfs itself stores trusted.overlay.* xattrs; the lesson uses
# a user.* name. The final `fsync upper` stands for whatever later makes
# the rename durable.
[setup]
mkdir work
mkdir upper
[run]
write work/tmp 64K
fsync work/tmp
setxattr work/tmp user.overlay.origin "lower-42"
chmod work/tmp 0640
rename work/tmp upper/file
fsync upper
# Observed on 6.12: the copied-up file arrives whole everywhere.
[expect]
work/tmp absent
upper lists file
upper/file data 7
upper/file xattr user.overlay.origin "lower-42"
upper/file mode 0640

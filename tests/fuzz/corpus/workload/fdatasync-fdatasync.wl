# Lesson fdatasync: change only a file's mode, then fdatasync it.
# fdatasync promises the data and what is needed to read it back (the
# size), not the mode.
[setup]
write f "12345"
[run]
chmod f 0600
fdatasync f
# Observed on 6.12.
[expect]
f text "12345"
# ext4: fdatasync commits the journal only when the data or the size needs
# it; a mode change alone does not.
[expect ext4]
f mode 0644
# xfs, btrfs and f2fs write the inode anyway.
[expect xfs btrfs f2fs]
f mode 0600

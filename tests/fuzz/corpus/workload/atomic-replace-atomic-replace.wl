# Lesson atomic-replace: replace a file's contents through a temporary
# file and a rename over the old one, twice side by side.
#   safe/:   write the temporary file, fsync it, rename it over cfg, fsync safe
#   unsafe/: write the temporary file, rename it over cfg, fsync unsafe
# Both cfg files hold "version 1" after setup.
[setup]
mkdir safe
mkdir unsafe
write safe/cfg "version 1"
write unsafe/cfg "version 1"
[run]
write safe/cfg.tmp "version 2"
fsync safe/cfg.tmp
rename safe/cfg.tmp safe/cfg
fsync safe
write unsafe/cfg.tmp "version 2"
rename unsafe/cfg.tmp unsafe/cfg
fsync unsafe
# Observed on 6.12 with default options.
[expect]
safe lists cfg
safe/cfg text "version 2"
unsafe lists cfg
# ext4: auto_da_alloc starts writeback of the new file on a rename over an
# existing one, and the journal commit waits for it. f2fs: the fsync of the
# directory runs a checkpoint, which writes the small file with its inode.
[expect ext4 f2fs]
unsafe/cfg text "version 2"
# xfs and btrfs: the rename is durable, the new file's data is not: empty.
[expect xfs btrfs]
unsafe/cfg size 0

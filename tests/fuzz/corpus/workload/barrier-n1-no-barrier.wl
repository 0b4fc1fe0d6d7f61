# N1 (negative control): L1 without the barrier. ext4 can keep f renamed
# but empty or short; the 'sequential' model must report it, POSIX and
# ext4 promise nothing about f.
[setup]
write other "before"
sync
[run]
write t 2M
rename t f
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

# L9: the witness is a metadata change, not a rename.
# Must hold: mode 0600 visible implies the 1 MiB written before the barrier is visible.
[setup]
write other "before"
creat f 0644
sync
[run]
write f 1M
fdatabarrier f
chmod f 0600
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

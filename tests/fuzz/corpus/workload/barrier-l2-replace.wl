# L2: replace a synced file through a temporary file and fdatabarrier.
# Must hold: f holds the old 1 MiB or the new 1 MiB, never a mix, short or empty.
[setup]
write other "before"
write f 1M
sync
[run]
write t 1M
fdatabarrier t
rename t f
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

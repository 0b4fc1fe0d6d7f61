# L1: publish a new file with fdatabarrier instead of fsync.
# Must hold in every crash state: f absent, or f holds exactly the 2 MiB.
[setup]
write other "before"
sync
[run]
write t 2M
fdatabarrier t
rename t f
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

# L7 (data): L1 with 'rename ... barrier' instead of a separate fdatabarrier.
# Must hold: f absent, or f holds exactly the 2 MiB.
[setup]
write other "before"
sync
[run]
write t 2M
rename t f barrier
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

# L3: overwrite preallocated, synced blocks in place, then rename.
# Must hold: if g exists it holds the new data (P1), not the old (P0).
[setup]
write other "before"
creat f
falloc f 0 0 1M
write f 0 1M
sync
[run]
write f 0 1M
fdatabarrier f
rename f g
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

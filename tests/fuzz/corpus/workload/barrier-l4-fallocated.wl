# L4: write into fallocated (unwritten) extents, then publish.
# Must hold: if f exists, no zeros where the data was written.
[setup]
write other "before"
sync
[run]
creat t
falloc t 0 0 1M
write t 0 1M
fdatabarrier t
rename t f
# Force a journal commit that does not cover f: change and fsync an
# unrelated file. Without it no crash state could show the rename at all.
write other "after"
fsync other

# Lesson fbarrier, the comparison: the same workload with fsync t in
# place of fdatabarrier t. Same outcome, more cache flushes.
[run]
write t 256K
fsync t
rename t f
write other "after"
fsync other
# Observed on 6.12.
[expect]
other text "after"
[expect ext4 xfs btrfs]
f data 3
t absent
[expect f2fs]
f absent
t data 1

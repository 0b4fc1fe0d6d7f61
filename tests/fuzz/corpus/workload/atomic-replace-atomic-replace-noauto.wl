# Lesson atomic-replace, variant for ext4 mounted with noauto_da_alloc
# (run it with --fs ext4 --mount-opts ext4:noauto_da_alloc): the same ops as
# atomic-replace.wl. Without the heuristic, ext4 behaves as xfs does.
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
# Observed on 6.12, ext4 with noauto_da_alloc.
[expect ext4]
safe lists cfg
safe/cfg text "version 2"
unsafe lists cfg
unsafe/cfg size 0

# Lesson new-file, variant: the file gets its final name by a rename
# before the fsync. ext4's promise covers only the name a file was created
# under, so here ext4 promises nothing about d/new; btrfs (every name of the
# file) and xfs (SOMC) still do.
[setup]
mkdir d
[run]
write d/tmp "hello"
rename d/tmp d/new
fsync d/new
# Observed on 6.12: every file system keeps d/new.
[expect]
d lists new
d/new text "hello"

# Lesson dir-fsync, variant: move a durable file out of d into another
# directory e, then fsync d only. The fsync covers d's entries: the name
# that left d. Nothing fsyncs e.
[setup]
mkdir d
mkdir e
write d/x "moved"
[run]
rename d/x e/x
fsync d
# Observed on 6.12: the file arrives in e everywhere.
[expect]
d/x absent
e lists x
e/x text "moved"

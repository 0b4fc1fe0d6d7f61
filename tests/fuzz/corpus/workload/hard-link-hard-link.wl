# Lesson hard-link: a durable file a/f gets a second name b/g in another
# directory, then only a/f is fsynced. Which names survive?
[setup]
mkdir a
mkdir b
write a/f "data"
[run]
link a/f b/g
fsync a/f
# Observed on 6.12: both names survive everywhere.
[expect]
a/f nlink 2
b/g nlink 2
b/g text "data"

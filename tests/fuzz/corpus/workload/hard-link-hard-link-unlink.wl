# Lesson hard-link, variant: the reverse. a/f and b/g name one durable
# file; the run removes b/g and fsyncs a/f. Does the removal survive?
[setup]
mkdir a
mkdir b
write a/f "data"
link a/f b/g
[run]
unlink b/g
fsync a/f
# Observed on 6.12: the removal survives.
[expect]
a/f nlink 1
a/f text "data"
b/g absent

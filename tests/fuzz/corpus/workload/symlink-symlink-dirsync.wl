# Lesson symlink, the way that works: fsync the directory the link is in.
[setup]
mkdir d
write d/target "data"
[run]
symlink "target" d/link
fsync d
# Observed on 6.12: the link survives everywhere.
[expect]
d lists link target
d/link type symlink
d/link target "target"

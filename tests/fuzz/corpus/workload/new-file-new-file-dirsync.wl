# Lesson new-file, the POSIX way: fsync the file, then its directory.
# Now the name is promised by every model.
[setup]
mkdir d
[run]
write d/new "hello"
fsync d/new
fsync d
[expect]
d lists new
d/new text "hello"

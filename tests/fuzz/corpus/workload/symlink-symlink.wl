# Lesson symlink: create a symlink, then "fsync" it. fsync needs an open
# file, and open follows the link: the call fsyncs the target, which the
# run never changed. Nothing is done for the link itself.
[setup]
mkdir d
write d/target "data"
[run]
symlink "target" d/link
fsync d/link
# Observed on 6.12: the link is gone everywhere.
[expect]
d lists target
d/link absent
d/target text "data"

# N1, the negative control (the litmus table of tutorials/barrier): write a new file,
# rename it over a fresh name, then force a journal commit that does not
# cover it (fsync of an unrelated new file). On ext4 with default options
# the rename can reach the disk before the data: f exists with size 0.
# `sequential` must report that as LOST; POSIX and ext4 promise nothing
# about f.
[setup]
mkdir d
[run]
write t 64K
rename t f
creat g
fsync g

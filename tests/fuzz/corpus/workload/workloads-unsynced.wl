# Data written without fsync is not promised: it may be missing after a
# crash until something (here the final sync) makes it durable.
[setup]
creat g
[run]
write f 64K
creat h
fsync h
sync

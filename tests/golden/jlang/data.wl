# imported from CrashMonkey J-lang data.jlang by crashlab import jlang
[setup]
creat foo 0777
write foo 0 32768
setxattr foo user.xattr1 "val1"
close foo
[run]
dwrite foo 32768 4096
fsync foo
falloc foo 0 8192 4096
mmapwrite foo 8192 4096
fdatasync foo
falloc foo 0 36864 4096
falloc foo keep_size 40960 4096
falloc foo punch_hole 4096 4096
falloc foo zero_range 12288 4096
falloc foo zero_range_keep_size 16384 8192
truncate foo 20000
removexattr foo user.xattr1
fdatasync foo
mark checkpoint-1
creat bar 0600
write bar 0 5000
setxattr bar user.xattr1 "val1"
fsync bar
truncate bar 0
fsync bar
mkdir A 0700
creat A/foo 0640
fsync A/foo
mark checkpoint-2
close A/foo
close bar
close foo

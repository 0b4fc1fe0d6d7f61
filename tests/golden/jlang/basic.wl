# imported from CrashMonkey J-lang basic.jlang by crashlab import jlang
[setup]
mkdir A 0755
[run]
creat A/foo 0644
write A/foo 0 16384
fsync A/foo
mark checkpoint-1
creat foo 0600
write foo 4096 100
fdatasync foo
mark checkpoint-2
close foo
close A/foo

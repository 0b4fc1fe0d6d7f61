# imported from CrashMonkey J-lang names.jlang by crashlab import jlang
[setup]
mkdir A 0777
creat A/foo 0777
write A/foo 0 8192
close A/foo
mkdir B 0777
[run]
link A/foo B/foo
rename A/foo A/bar
fsync B/foo
symlink A/bar bar
symlink ../foo B/bar
creat foo 0644
unlink B/bar
unlink B/foo
fsync B
rename A B
fsync B/bar
mark checkpoint-1
mkdir A 0777
creat A/foo 0600
unlink A/foo
rmdir A
unlink foo
rename B/bar B/foo
sync
mark checkpoint-2

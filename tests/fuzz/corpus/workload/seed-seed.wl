# The seed example (xfstests generic/342): rename a file away, write a new
# file under the old name, fsync only the new file, then cut the power.
[setup]
mkdir A
write A/foo "hello"
sync
[run]
rename A/foo A/bar
write A/foo "world"
fsync A/foo

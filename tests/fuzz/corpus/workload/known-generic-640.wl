# xfstests generic/640: fsync dir A, move a file from A to B, fsync an unrelated new file
# A/foo ("hello world") and B are committed. A/bar is created and A fsynced, then
# foo moves to B and a new file baz is fsynced. After the crash foo must be in
# exactly one of A and B with its content, and A/bar and baz must exist.
# fs: ext4 xfs btrfs f2fs
# translation: "foo in exactly one of A/ or B/" cannot be expressed (the test accepts either) and is dropped; the drop_caches between the directory fsync and the move is not reproduced
[setup]
mkdir A
mkdir B
write A/foo "hello world"
[run]
creat A/bar
fsync A
rename A/foo B/foo
creat baz
fsync baz
[expect]
A/bar exists
baz exists

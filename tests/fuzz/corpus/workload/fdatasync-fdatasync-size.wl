# Lesson fdatasync, variant: the same chmod, then an append that grows
# the file, then fdatasync. The new size is promised, and on ext4 the
# journal commit that carries it carries the chmod too.
[setup]
write f "12345"
[run]
chmod f 0600
append f "678"
fdatasync f
# Observed on 6.12: data, size and mode survive everywhere.
[expect]
f text "12345678"
f mode 0600

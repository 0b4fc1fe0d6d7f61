#!/usr/bin/env bash
# Guest failures are told apart: panic, hang, QEMU dying early.
. "$(dirname "$0")/../lib.sh"

expect_exit 125 "a guest kernel panic (sysrq crash) exits 125" -- "$CRASHLAB" boot -- sh -c 'echo c > /proc/sysrq-trigger; sleep 60'
expect_grep "$T/err" "guest kernel panic" "and says it was a panic"
expect_grep "$T/err" "console log: " "and where the console log is"

expect_exit 124 "a hanging command exits 124" -- "$CRASHLAB" boot --timeout 4 -- sleep 1000
expect_grep "$T/err" "guest timeout" "and says it was a timeout"

# A file with a bzImage header but nothing behind it: QEMU cannot load it.
head -c 4096 /dev/zero >"$T/fake"
printf '\x55\xaa' | dd of="$T/fake" bs=1 seek=510 conv=notrunc 2>/dev/null
printf 'HdrS' | dd of="$T/fake" bs=1 seek=514 conv=notrunc 2>/dev/null
expect_exit 69 "QEMU dying early exits 69" -- "$CRASHLAB" boot --kernel "$T/fake" -- true
expect_grep "$T/err" "qemu failed" "and says QEMU failed"

CRASHLAB_QEMU=false expect_exit 69 "a QEMU that exits at once exits 69" -- "$CRASHLAB" boot --accel tcg -- true

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

# A forced --accel kvm: it boots where KVM works; where the probe found it
# unusable (the cached answer says tcg), it fails and says what to do.
"$CRASHLAB" boot -q -- true >/dev/null 2>&1 # make sure the probe's answer is cached
if ! [ -w /dev/kvm ]; then
	expect_exit 69 "--accel kvm without a usable /dev/kvm exits 69" -- "$CRASHLAB" boot --accel kvm -- true
	expect_grep "$T/err" "use --accel tcg" "and says what to do"
elif "$CRASHLAB" doctor 2>&1 | grep -q "KVM unusable here"; then
	expect_exit 69 "--accel kvm where KVM does not work exits 69" -- "$CRASHLAB" boot --accel kvm -- true
	expect_grep "$T/err" "use --accel auto, which probes KVM once and falls back to TCG, or --accel tcg" "and says what to do"
else
	expect_exit 0 "--accel kvm where KVM works boots" -- "$CRASHLAB" boot --accel kvm -- true
fi

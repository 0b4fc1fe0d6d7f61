#!/usr/bin/env bash
# Boot a guest, run a command, get its output and exit status back.
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "boot runs true" -- "$CRASHLAB" boot -- true
expect_exit 7 "exit status round trip" -- "$CRASHLAB" boot -- sh -c 'exit 7'
expect_exit 0 "stdout and stderr streamed apart" -- "$CRASHLAB" boot -- sh -c 'echo to-out; echo to-err >&2; uname -r'
expect_grep "$T/out" '^to-out$' "stdout arrives on stdout"
expect_no_grep "$T/out" 'to-err' "stderr does not arrive on stdout"
expect_grep "$T/err" '^to-err$' "stderr arrives on stderr"
expect_grep "$T/out" '^6\.12\.' "the guest runs the 6.12 kernel"
expect_exit 0 "large output arrives whole" -- "$CRASHLAB" boot -- sh -c 'seq 1 200000'
expect_lines "$T/out" 200000 "200000 lines of output, none lost"
expect_exit 143 "a command killed by a signal reports 128+signal" -- "$CRASHLAB" boot -- sh -c 'kill -TERM $$'
expect_exit 127 "a command that does not exist gives 127" -- "$CRASHLAB" boot -- no-such-command
expect_grep "$T/err" "no-such-command" "and says which command"
expect_exit 0 "the tools are in the guest" -- "$CRASHLAB" boot -- sh -c 'for t in mkfs.ext4 e2fsck mkfs.xfs xfs_repair mkfs.btrfs btrfs mkfs.f2fs fsck.f2fs dmsetup; do command -v $t >/dev/null || { echo missing $t; exit 1; }; done; mkfs.xfs -V && e2fsck -V && dmsetup version'

# A disk written in the guest is seen on the host.
truncate -s 1M "$T/disk.img"
expect_exit 0 "a --disk is /dev/vda in the guest" -- "$CRASHLAB" boot --disk "$T/disk.img" -- sh -c 'printf crashlab-disk | dd of=/dev/vda conv=notrunc 2>/dev/null && sync'
if [ "$(head -c 13 "$T/disk.img")" = crashlab-disk ]; then ok "guest write reached the disk file"; else not_ok "guest write reached the disk file"; fi

# A user's own bzImage, given with --kernel (here: the built one, by path).
kpath=$("$CRASHLAB" kernel path 2>/dev/null)
expect_exit 0 "--kernel PATH boots the given bzImage" -- "$CRASHLAB" boot --kernel "$kpath" -- true

# Bad input: one line, distinct exit codes.
expect_exit 2 "no command is a usage error" -- "$CRASHLAB" boot
expect_exit 2 "unknown option" -- "$CRASHLAB" boot --frobnicate -- true
expect_grep "$T/err" "unknown option '--frobnicate'" "the unknown option is named"
expect_exit 66 "a missing disk" -- "$CRASHLAB" boot --disk "$T/none.img" -- true
expect_exit 66 "a missing --kernel" -- "$CRASHLAB" boot --kernel "$T/none" -- true
expect_exit 65 "a --kernel that is not a bzImage" -- "$CRASHLAB" boot --kernel /etc/passwd -- true
expect_grep "$T/err" "not a bzImage" "and says so"
expect_exit 2 "an unknown accelerator" -- "$CRASHLAB" boot --accel warp -- true
expect_exit 0 "--verbose prints the QEMU command line" -- "$CRASHLAB" boot --verbose -- true
expect_grep "$T/err" "qemu-system-x86_64 -nodefaults -no-reboot .*-sandbox on" "with -nodefaults, -no-reboot and -sandbox on"
expect_no_grep "$T/err" " -net| -nic|netdev" "and no network device"

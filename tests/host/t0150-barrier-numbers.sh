#!/usr/bin/env bash
# The barrier calls' syscall numbers, no guest: every table the kernel
# series touches (kernel/0002: x86-64, i386, scripts/syscall.tbl, the
# generic unistd.h) gives fbarrier and fdatabarrier the same two numbers,
# the document (kernel/0007) and the exported C program (engine/export-gen.c)
# use those, and they lie far above every number upstream has assigned:
# 463-466 went to the *xattrat calls in 6.13, and the highest upstream number
# is below 480, so a number of 600 or more cannot be another kernel's call.
. "$(dirname "$0")/../lib.sh"

p2=$(ls kernel/0002-*.patch)
p7=$(ls kernel/0007-*.patch)
nr() { # nr FILE REGEX: the number of the first added line matching REGEX
	grep -E "^\+$2" "$1" | head -n 1 | grep -oE '[0-9]+' | head -n 1
}
fb=$(nr "$p2" '[0-9]+[[:space:]]+common[[:space:]]+fbarrier[[:space:]]+sys_fbarrier')
fdb=$(nr "$p2" '[0-9]+[[:space:]]+common[[:space:]]+fdatabarrier[[:space:]]')
if [ -n "$fb" ] && [ -n "$fdb" ]; then ok "kernel/0002 numbers the calls: fbarrier $fb, fdatabarrier $fdb"; else not_ok "no fbarrier/fdatabarrier lines in $p2"; exit 0; fi

n=$(grep -cE "^\+$fb[[:space:]]+(common|i386)[[:space:]]+fbarrier[[:space:]]" "$p2")
m=$(grep -cE "^\+$fdb[[:space:]]+(common|i386)[[:space:]]+fdatabarrier[[:space:]]" "$p2")
if [ "$n" = 3 ] && [ "$m" = 3 ]; then ok "the x86-64, i386 and generic tables agree"; else not_ok "tables: $n fbarrier and $m fdatabarrier lines with $fb/$fdb, want 3 each"; fi
expect_grep "$p2" "^\+#define __NR_fbarrier $fb$" "asm-generic unistd.h: __NR_fbarrier $fb"
expect_grep "$p2" "^\+#define __NR_fdatabarrier $fdb$" "asm-generic unistd.h: __NR_fdatabarrier $fdb"
expect_grep "$p2" "^\+#define __NR_syscalls $((fdb + 1))$" "asm-generic unistd.h: __NR_syscalls $((fdb + 1))"
no_old=$(grep -cE '^\+(463|464)[[:space:]]|__NR_[a-z]*barrier 46[34]' "$p2")
[ "$no_old" = 0 ] && ok "nothing numbered 463 or 464 (setxattrat, getxattrat upstream)" || not_ok "$no_old lines still use 463/464"
if [ "$fb" -ge 600 ] && [ "$fdb" -ge 600 ] && [ "$fdb" -lt 1000 ]; then
	ok "the numbers are far above upstream's (under 480) and below 1000 (MIPS adds its ABI base)"
else
	not_ok "numbers $fb/$fdb: want 600..999"
fi

expect_grep "$p7" "^\+.*\`\`__NR_fbarrier\`\` \($fb\)" "the document states fbarrier's number"
expect_grep "$p7" "^\+\`\`__NR_fdatabarrier\`\` \($fdb\)" "the document states fdatabarrier's number"
expect_grep "$p7" "^\+can probe for support by calling" "the document says how to probe without calling another call"
expect_grep engine/export-gen.c "^#define SERIES_NR_FBARRIER \"$fb\"$" "the exported C program calls fbarrier $fb"
expect_grep engine/export-gen.c "^#define SERIES_NR_FDATABARRIER \"$fdb\"$" "the exported C program calls fdatabarrier $fdb"
expect_no_grep engine/export-gen.c 'osrelease|46[34]' "the exported C program neither checks the release nor uses 463/464"

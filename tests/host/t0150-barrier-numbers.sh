#!/usr/bin/env bash
# The barrier calls' syscall numbers, no guest: every table the kernel
# series touches (kernel/0002: every architecture's table, scripts/syscall.tbl,
# the generic unistd.h) gives fbarrier and fdatabarrier the same two numbers,
# every syscall table of the pristine 6.12 tree (all architectures, compat
# ABIs included) gets both exactly once, in fsync's ABI column and with
# fsync's entry point convention, where no pristine table uses them yet,
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

# every table line of the patch uses the same two numbers (which tables,
# and in which ABI column: below, against the pristine tree)
n=$(grep -cE "^\+[0-9]+[[:space:]]+[a-z0-9]+[[:space:]]+fbarrier[[:space:]]" "$p2")
m=$(grep -cE "^\+[0-9]+[[:space:]]+[a-z0-9]+[[:space:]]+fdatabarrier[[:space:]]" "$p2")
n1=$(grep -cE "^\+$fb[[:space:]]+[a-z0-9]+[[:space:]]+fbarrier[[:space:]]" "$p2")
m1=$(grep -cE "^\+$fdb[[:space:]]+[a-z0-9]+[[:space:]]+fdatabarrier[[:space:]]" "$p2")
if [ "$n" = "$n1" ] && [ "$m" = "$m1" ] && [ "$n" -ge 3 ] && [ "$n" = "$m" ]; then
	ok "all $n table lines number fbarrier $fb and fdatabarrier $fdb"
else
	not_ok "tables: $n1 of $n fbarrier lines use $fb, $m1 of $m fdatabarrier lines use $fdb"
fi
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

# Every syscall table of the pristine 6.12 tree (tools/ holds perf's copies,
# which the kernel does not build from) against the patch: 900 and 901 free
# before, each added exactly once after, in the ABI column fsync has in the
# same table (i386, n32/n64/o32, common elsewhere: for powerpc, common puts
# the calls in the SPU table as fsync is), with as many columns as fsync's
# line and sys_* in every entry column (no compat wrapper: both arguments
# are 32-bit integers). A table that is a symlink (arm64's syscall_64.tbl
# -> scripts/syscall.tbl) gets the entries through its target and must not
# be patched itself.
SRC=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
if [ ! -f "$SRC" ]; then
	skip "every syscall table of 6.12 gets $fb and $fdb" "$SRC is missing (apt-get install linux-source-6.12)"
	exit 0
fi
mkdir -p "$T/src"
tar -xJf "$SRC" -C "$T/src" --strip-components=1 --wildcards --no-wildcards-match-slash \
	'*/arch/*/*/syscall*.tbl' '*/arch/*/*/*/syscall*.tbl' '*/scripts/syscall.tbl'
tables=$(cd "$T/src" && find arch scripts -name '*.tbl' | sort)
ntab=$(echo "$tables" | grep -c .)
if [ "$ntab" -ge 18 ]; then ok "the pristine tree has $ntab syscall tables"; else not_ok "only $ntab syscall tables found in $SRC"; fi

# section FILE: the lines the patch adds to FILE
section() {
	awk -v f="$1" '/^diff --git / { on = ($3 == "a/" f) } on && /^\+[^+]/' "$p2"
}
bad=0 good=0
for t in $tables; do
	if [ -L "$T/src/$t" ]; then
		target=$(cd "$T/src/$(dirname "$t")" && realpath --relative-to="$T/src" "$(readlink "$(basename "$t")")")
		if grep -q "^diff --git a/$t " "$p2"; then
			not_ok "$t is a symlink to $target and must not be patched itself"; bad=$((bad + 1))
		elif ! echo "$tables" | grep -qx "$target"; then
			not_ok "$t links to $target, which is not a table"; bad=$((bad + 1))
		else
			good=$((good + 1))
		fi
		continue
	fi
	used=$(grep -cE "^($fb|$fdb)[[:space:]]" "$T/src/$t")
	[ "$used" = 0 ] || { not_ok "$t already uses $fb or $fdb"; bad=$((bad + 1)); }
	ref=$(grep -E '^[0-9]+[[:space:]]+[a-z0-9]+[[:space:]]+fsync[[:space:]]' "$T/src/$t")
	abi=$(echo "$ref" | awk '{ print $2 }')
	ncol=$(echo "$ref" | awk '{ print NF }')
	[ -n "$abi" ] || { not_ok "$t: no fsync line to take the ABI column from"; bad=$((bad + 1)); continue; }
	section "$t" >"$T/added"
	for call in "$fb fbarrier" "$fdb fdatabarrier"; do
		set -- $call
		all=$(grep -cE "^\+$1[[:space:]]" "$T/added")
		want=$(grep -E "^\+$1[[:space:]]+$abi[[:space:]]+$2([[:space:]]+sys_$2)+[[:space:]]*$" "$T/added" |
			awk -v n="$ncol" 'NF == n' | wc -l)
		if [ "$all" = 1 ] && [ "$want" = 1 ]; then
			good=$((good + 1))
		else
			not_ok "$t: $all lines numbered $1, $want as '$1 $abi $2 sys_$2' with $ncol columns; want exactly 1"
			bad=$((bad + 1))
		fi
	done
done
[ "$bad" = 0 ] && ok "every table: $fb and $fdb free in 6.12, then fbarrier and fdatabarrier once each, in fsync's ABI column, no compat wrapper ($good checks)"
extra=$(grep -oE '^diff --git a/[^ ]+\.tbl ' "$p2" | sed 's|^diff --git a/||; s/ $//' | grep -vxF "$tables")
[ -z "$extra" ] && ok "the patch touches no table the tree does not have" || not_ok "the patch touches unknown tables: $extra"

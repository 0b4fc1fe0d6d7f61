#!/bin/sh
# checkarch.sh: configure each architecture of a patched kernel tree with
# Debian's cross compiler, run `make prepare` (which runs
# scripts/checksyscalls.sh) and report whether the barrier calls are wired.
# A developer tool (minutes per architecture), not part of `make check`.
# See "Checking the other architectures" in kernel/README.md.
set -u

usage() {
	cat <<EOF
usage: kernel/checkarch.sh [-o DIR] [-j N] [TREE] [VARIANT...]

TREE is a clean Linux 6.12 source tree with the series applied (nothing
built in it; it is only read).  Without TREE, DIR/src is made from
$tarball and the series of this directory, applied
as crashlab applies it.  For each VARIANT (default: all)
whose cross compiler is installed, in DIR/VARIANT (default DIR:
\${TMPDIR:-/tmp}/checkarch):

  make allnoconfig KCONFIG_ALLCONFIG=<the variant's options>
  make prepare          # runs scripts/checksyscalls.sh
  make OBJECTS          # the syscall tables and the entry code

then prints one row: the compiler, how many "#warning syscall fbarrier
not implemented" (and fdatabarrier) lines prepare printed, the value of
__NR_fbarrier in the generated unistd headers and how many of the syscall
headers define it (compat ABIs included: arm64 has 3), and ok, WARN
(checksyscalls warned, or a header lacks the call) or FAIL, with why.
A variant without its compiler only generates its headers (make
archheaders needs no compiler) and says "headers".

variants: $(variants | awk '{printf "%s ", $1}')
exit: 0 all ok, 1 a warning or failure, 64 usage, 65 a patch does not apply,
66 no tarball, 73 DIR cannot be written
EOF
}

# name ARCH CROSS_COMPILE options objects: the options (comma-separated,
# "=n" for "is not set") are merged onto allnoconfig; the objects (the
# syscall tables and the entry code that checks the table size) are
# compiled after prepare
variants() {
	cat <<'EOF'
arm64      arm64      aarch64-linux-gnu-     CONFIG_COMPAT=y                     fs/sync.o,arch/arm64/kernel/sys.o,arch/arm64/kernel/sys32.o
arm        arm        arm-linux-gnueabi-     CONFIG_MMU=y,CONFIG_ARCH_MULTI_V7=y,CONFIG_THUMB2_KERNEL=n,CONFIG_AEABI=y,CONFIG_OABI_COMPAT=y arch/arm/kernel/entry-common.o
alpha      alpha      alpha-linux-gnu-       -                                   arch/alpha/kernel/systbls.o,arch/alpha/kernel/entry.o
m68k       m68k       m68k-linux-gnu-        -                                   arch/m68k/kernel/syscalltable.o,arch/m68k/kernel/entry.o
mips64     mips       mips64-linux-gnuabi64- CONFIG_CPU_MIPS64_R2=y,CONFIG_64BIT=y,CONFIG_MIPS32_O32=y,CONFIG_MIPS32_N32=y arch/mips/kernel/scall64-n64.o,arch/mips/kernel/scall64-n32.o,arch/mips/kernel/scall64-o32.o
mips32     mips       mips64-linux-gnuabi64- CONFIG_32BIT=y                      arch/mips/kernel/scall32-o32.o
parisc     parisc     hppa-linux-gnu-        -                                   arch/parisc/kernel/syscall.o
parisc64   parisc     hppa64-linux-gnu-      CONFIG_PA8X00=y,CONFIG_64BIT=y      arch/parisc/kernel/syscall.o
powerpc64  powerpc    powerpc64le-linux-gnu- CONFIG_PPC64=y,CONFIG_CPU_BIG_ENDIAN=y,CONFIG_COMPAT=y arch/powerpc/kernel/systbl.o,arch/powerpc/kernel/syscall.o
s390       s390       s390x-linux-gnu-       CONFIG_COMPAT=y                     fs/sync.o,arch/s390/kernel/entry.o,arch/s390/kernel/syscall.o
sh         sh         sh4-linux-gnu-         -                                   arch/sh/kernel/syscalls_32.o,arch/sh/kernel/cpu/sh2/entry.o
sparc32    sparc      sparc64-linux-gnu-     CONFIG_64BIT=n                      arch/sparc/kernel/systbls_32.o,arch/sparc/kernel/entry.o
sparc64    sparc      sparc64-linux-gnu-     CONFIG_64BIT=y,CONFIG_COMPAT=y      fs/sync.o,arch/sparc/kernel/systbls_64.o,arch/sparc/kernel/head_64.o
microblaze microblaze microblaze-linux-gnu-  -                                   -
xtensa     xtensa     xtensa-linux-gnu-      -                                   -
EOF
}

out=${TMPDIR:-/tmp}/checkarch
tarball=/usr/src/linux-source-6.12.tar.xz
jobs=2
while getopts o:j:h opt; do
	case $opt in
	o) out=$OPTARG ;;
	j) jobs=$OPTARG ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
tree=
if [ $# -ge 1 ] && [ -d "$1" ]; then
	tree=$(cd "$1" && pwd) || exit 64
	shift
fi
want=${*:-$(variants | awk '{print $1}')}
for v in $want; do
	variants | grep -q "^$v " || { echo "checkarch: unknown variant or no such tree '$v' (-h lists the variants)" >&2; exit 64; }
done
mkdir -p "$out" || exit 73
if [ -z "$tree" ]; then
	tree=$out/src
	here=$(cd "$(dirname "$0")" && pwd)
	[ -f "$tarball" ] || { echo "checkarch: $tarball is missing (apt-get install linux-source-6.12)" >&2; exit 66; }
	echo "checkarch: extracting $tarball and applying $here/series into $tree"
	rm -rf "$tree" && mkdir -p "$tree" || exit 73
	tar -xJf "$tarball" -C "$tree" --strip-components=1 || exit 66
	for p in $(sed 's/#.*//' "$here/series" | awk '{ print $1 }'); do
		patch -d "$tree" -p1 --forward --batch --fuzz=0 -s <"$here/$p" ||
			{ echo "checkarch: $p does not apply" >&2; exit 65; }
	done
fi
[ -f "$tree/scripts/checksyscalls.sh" ] || { echo "checkarch: $tree: not a kernel tree" >&2; exit 64; }
[ ! -e "$tree/.config" ] || { echo "checkarch: $tree has been built in (.config): O= builds need a clean tree" >&2; exit 64; }

# numbers DIR: the values of __NR_fbarrier in the generated unistd headers
# (native and compat ABIs), then how many of the headers that define
# __NR_mseal (every syscall header of 6.12) define it, "3/3 hdr"
numbers() {
	hdrs=$(find "$1/arch" -path '*/include/generated/*' -name 'unistd*.h' 2>/dev/null)
	all=$(echo "$hdrs" | xargs -r grep -lE 'define __NR_([a-z0-9]+_)?mseal[[:space:]]' | wc -l)
	echo "$hdrs" | xargs -r grep -hE 'define __NR_([a-z0-9]+_)?fbarrier[[:space:]]' |
		sed -E 's/.*define [A-Za-z0-9_]+[[:space:]]+//; s/[() ]//g; s/__NR_[A-Za-z_]+\+/base+/' |
		sort | uniq -c | awk -v all="$all" '
		{ printf "%s%s", (NR > 1 ? "," : ""), $2; n += $1 }
		END { printf "%s in %d/%d hdr\n", (NR ? "" : "-"), n, all }'
}
# all_headers "N/M hdr": every syscall header defines __NR_fbarrier
all_headers() {
	echo "$1" | grep -qE ' ([1-9][0-9]*)/\1 hdr$'
}

printf '%-10s %-30s %-8s %-12s %-24s %s\n' variant compiler fbarrier fdatabarrier __NR_fbarrier result
status=0
for v in $want; do
	set -- $(variants | grep "^$v ")
	arch=$2 cross=$3 opts=$4 objs=$(echo "$5" | tr ',' ' ')
	dir=$out/$v
	log=$dir/prepare.log
	rm -rf "$dir" && mkdir -p "$dir" || exit 73
	mk="make -C $tree O=$dir ARCH=$arch -j$jobs"
	if ! command -v "${cross}gcc" >/dev/null 2>&1; then
		$mk archheaders >"$log" 2>&1
		nr=$(numbers "$dir")
		res=headers; all_headers "$nr" || { res=FAIL:headers; status=1; }
		printf '%-10s %-30s %-8s %-12s %-24s %s\n' "$v" "(no ${cross}gcc)" - - "$nr" "$res"
		continue
	fi
	echo "$opts" | tr ',' '\n' | grep -v '^-$' | sed 's/^\(CONFIG_[A-Z0-9_]*\)=n$/# \1 is not set/' >"$dir/fragment"
	res=ok
	if ! $mk CROSS_COMPILE="$cross" KCONFIG_ALLCONFIG="$dir/fragment" allnoconfig >"$log" 2>&1; then
		res=FAIL:config
	else
		while read -r line; do
			grep -qx "$line" "$dir/.config" || res="FAIL:$line"
		done <"$dir/fragment"
	fi
	if [ "$res" = ok ] && ! $mk CROSS_COMPILE="$cross" prepare >>"$log" 2>&1; then
		res=FAIL:prepare
	fi
	if [ "$res" = ok ] && [ "$objs" != - ] && ! $mk CROSS_COMPILE="$cross" $objs >"$dir/objects.log" 2>&1; then
		res=FAIL:objects
	fi
	w1=$(grep -c '#warning syscall fbarrier not implemented' "$log")
	w2=$(grep -c '#warning syscall fdatabarrier not implemented' "$log")
	nr=$(numbers "$dir")
	why=
	[ $((w1 + w2)) -eq 0 ] || why=checksyscalls
	all_headers "$nr" || why=${why:+$why+}headers
	[ "$res" = ok ] && [ -n "$why" ] && res=WARN:$why
	[ "$res" = ok ] || status=1
	printf '%-10s %-30s %-8s %-12s %-24s %s\n' "$v" "${cross}gcc $("${cross}gcc" -dumpversion)" "$w1" "$w2" "$nr" "$res"
done
echo "logs: $out/VARIANT/prepare.log, objects.log"
exit $status

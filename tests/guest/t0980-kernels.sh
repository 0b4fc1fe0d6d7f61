#!/usr/bin/env bash
# Two kernels side by side: Debian's 6.1 (built unpatched: the barrier
# series does not apply to it) and the default 6.12 with the series. A run
# on each stores the kernel it used; compare puts them side by side and
# names the kernels; a barrier call on 6.1 fails with ENOSYS and the barrier
# model is stored as not applicable, not as a LOST.
# The first 'kernel build --source 6.1' builds 6.1 (about 10 minutes on 2
# cores); 'make check' builds it before the guest tests.
. "$(dirname "$0")/../lib.sh"

if [ ! -f /usr/src/linux-source-6.1.tar.xz ]; then
	skip "kernels 6.1 and 6.12" "linux-source-6.1 is not installed (make deps)"
	exit 0
fi
db="$T/k.db"
q() { sqlite3 -batch -noheader "$db" "$1"; }

# --- the source names and the cache
expect_exit 0 "kernel build --source 6.1 (cached after the first time)" -- "$CRASHLAB" kernel build --source 6.1
k61=$(cat "$T/out")
expect_exit 0 "kernel path --source 6.12" -- "$CRASHLAB" kernel path --source 6.12
k612=$(cat "$T/out")
expect_exit 0 "kernel path" -- "$CRASHLAB" kernel path
if [ "$(cat "$T/out")" = "$k612" ] && [ "$k61" != "$k612" ] && [ -f "$k61" ] && [ -f "$k612" ]; then
	ok "6.1 and 6.12 live side by side in the cache; 6.12 is the default"
else
	not_ok "cache entries: 6.1 '$k61', 6.12 '$k612', default '$(cat "$T/out")'"
fi
expect_exit 0 "kernel path --source /usr/src/linux-source-6.1.tar.xz" -- \
	"$CRASHLAB" kernel path --source /usr/src/linux-source-6.1.tar.xz
if [ "$(cat "$T/out")" = "$k61" ]; then ok "the packaged tarball's path and its name are one build"; else not_ok "by path: '$(cat "$T/out")'"; fi
expect_exit 66 "a source whose package is not installed" -- "$CRASHLAB" kernel build --source 9.99
expect_grep "$T/err" "apt-get install linux-source-9.99" "says which package to install"
expect_exit 2 "--kernel and --kernel-source together" -- \
	"$CRASHLAB" run tutorials/seed/seed.wl --fs ext4 --kernel "$k61" --kernel-source 6.1 --db "$db"
key61=$(basename "$(dirname "$k61")")
key612=$(basename "$(dirname "$k612")")

# --- the seed example on each kernel
expect_exit 0 "the seed example on 6.1 (ext4, btrfs)" -- \
	"$CRASHLAB" run tutorials/seed/seed.wl --fs ext4,btrfs --kernel-source 6.1 --db "$db"
expect_exit 0 "the seed example on 6.12 (ext4, btrfs)" -- "$CRASHLAB" run tutorials/seed/seed.wl --fs ext4,btrfs --db "$db"
row1=$(q "SELECT kernel_version || '|' || kernel_key FROM runs WHERE id = 1")
row2=$(q "SELECT kernel_version || '|' || kernel_key FROM runs WHERE id = 2")
case "$row1" in
6.1.*"|$key61"*) ok "run 1 stores the 6.1 kernel and its build key" ;;
*) not_ok "run 1 stores '$row1' (build $key61)" ;;
esac
case "$row2" in
6.12.*"|$key612"*) ok "run 2 stores the 6.12 kernel and its build key" ;;
*) not_ok "run 2 stores '$row2' (build $key612)" ;;
esac
expect_exit 0 "show 1" -- "$CRASHLAB" show 1 --db "$db"
expect_grep "$T/out" "^kernel +6\.1\.[0-9]+ .*\($key61" "show names the 6.1 kernel and its key"
expect_exit 0 "list" -- "$CRASHLAB" list --db "$db"
expect_grep "$T/out" "^ +1 .* 6\.1\.[0-9]+ " "list shows run 1's kernel"
expect_grep "$T/out" "^ +2 .* 6\.12\.[0-9]+ " "list shows run 2's kernel"

# --- compare across the kernels
expect_exit 0 "compare 1 2" -- "$CRASHLAB" compare 1 2 --db "$db"
expect_grep "$T/out" "^Kernels \(they differ\)" "compare says the kernels differ"
expect_grep "$T/out" "run 1: Linux 6\.1\.[0-9]+ \(build $key61" "compare names run 1's kernel"
expect_grep "$T/out" "run 2: Linux 6\.12\.[0-9]+ \(build $key612" "compare names run 2's kernel"
expect_grep "$T/out" "run 1 ext4.*run 1 btrfs.*run 2 ext4.*run 2 btrfs" "one column per run and file system"
expect_exit 0 "compare 1 2 --format json" -- "$CRASHLAB" compare 1 2 --format json --db "$db"
if command -v jq >/dev/null 2>&1; then
	v=$(jq -r '.runs | map((.run|tostring) + ":" + (.kernel_version | split(" ")[0])) | join(",")' "$T/out")
	case "$v" in
	1:6.1.*,2:6.12.*) ok "the JSON names each run's kernel ($v)" ;;
	*) not_ok "the JSON's runs: '$v'" ;;
	esac
else
	skip "the JSON names each run's kernel" "jq is not installed"
fi
expect_exit 0 "compare 1 2 --fs ext4 (the same kernel twice is said so)" -- "$CRASHLAB" compare 2 2 --fs ext4 --db "$db"
expect_grep "$T/out" "^Kernels \(the same in every run\)" "the same kernel twice"

# --- barrier calls on a kernel without them
cat >"$T/barrier.wl" <<'EOF'
[setup]
write other "before"
sync
[run]
write t "new"
fdatabarrier t
rename t f
write other "after"
fsync other
EOF
expect_exit 0 "a barrier workload on 6.1 (ext4): no LOST" -- \
	"$CRASHLAB" run "$T/barrier.wl" --fs ext4 --kernel-source 6.1 --db "$db"
r=$(q "SELECT max(id) FROM runs")
err=$(q "SELECT o.err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = $r AND o.text LIKE 'fdatabarrier%'")
if [ "$err" = 38 ]; then ok "fdatabarrier failed with ENOSYS on 6.1"; else not_ok "fdatabarrier's errno on 6.1: '$err'"; fi
models=$(q "SELECT models FROM fsruns WHERE run_id = $r")
case ",$models," in
*,barrier,*) not_ok "the barrier model is among the judged ones on 6.1: '$models'" ;;
,posix,ext4,) ok "the barrier model is left out of the judged models on 6.1 ($models)" ;;
*) not_ok "models on 6.1: '$models'" ;;
esac
notes=$(q "SELECT sim_notes FROM fsruns WHERE run_id = $r")
case "$notes" in
*"model barrier: not applicable"*ENOSYS*) ok "the fs run's notes say the barrier model is not applicable" ;;
*) not_ok "notes: '$notes'" ;;
esac
n=$(q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
       WHERE f.run_id = $r AND v.model = 'barrier' AND v.verdict = 'LOST'")
if [ "$n" = 0 ]; then ok "no barrier verdict is LOST on 6.1"; else not_ok "$n barrier verdicts LOST on 6.1"; fi
expect_exit 0 "report on the 6.1 barrier run" -- "$CRASHLAB" report "$r" --db "$db"
expect_grep "$T/out" "not applicable" "report shows the barrier model is not applicable"
expect_exit 0 "the same workload on 6.12 judges the barrier" -- "$CRASHLAB" run "$T/barrier.wl" --fs ext4 --db "$db"
r2=$(q "SELECT max(id) FROM runs")
models=$(q "SELECT models FROM fsruns WHERE run_id = $r2")
case ",$models," in
*,barrier,*) ok "6.12 has the calls: the barrier model is judged ($models)" ;;
*) not_ok "models on 6.12: '$models'" ;;
esac
expect_exit 0 "compare the barrier workload across the kernels" -- "$CRASHLAB" compare "$r" "$r2" --db "$db"
expect_grep "$T/out" "^Kernels \(they differ\)" "compare says the kernels differ"
expect_db_ok "$db" "the database is sound"

# --- a source tree, copied into its own cache entry (a stand-in tree whose
# Makefile fakes the kernel's targets, in a cache of its own)
F="$T/tree"
mkdir -p "$F"
head -c 4096 /dev/zero >"$F/fake.bzImage"
printf '\x55\xaa' | dd of="$F/fake.bzImage" bs=1 seek=$((0x1fe)) conv=notrunc status=none
printf 'HdrS\x0f\x02' | dd of="$F/fake.bzImage" bs=1 seek=$((0x202)) conv=notrunc status=none
{
	printf 'allnoconfig:\n\t@cp $(KCONFIG_ALLCONFIG) .config\n'
	printf 'olddefconfig:\n\t@true\n'
	printf 'bzImage:\n\t@echo "  CC      init/main.o"\n'
	printf '\t@mkdir -p arch/x86/boot && cp fake.bzImage arch/x86/boot/bzImage\n'
} >"$F/Makefile"
printf 'CONFIG_FAKE=y\n' >"$T/fake.config"
tb() { XDG_CACHE_HOME="$T/cache" "$CRASHLAB" kernel "$1" --source "$F" --config "$T/fake.config" "${@:2}"; }
expect_exit 76 "a tree with the default series: the barrier series does not apply" -- tb build --quiet
expect_grep "$T/err" "patch '.*0001-.*' from '.*series' does not apply" "the message names the patch"
expect_exit 0 "a tree with --no-patches builds" -- tb build --quiet --no-patches
tbz=$(cat "$T/out")
case "$tbz" in
"$T/cache/crashlab/kernel/"*/bzImage) ok "it is built into an entry of its own" ;;
*) not_ok "the tree's bzImage is '$tbz'" ;;
esac
if [ ! -e "$F/.config" ] && [ ! -e "$F/arch" ]; then ok "the tree itself is not written"; else not_ok "the build wrote into the tree"; fi
expect_exit 0 "kernel path of the same tree" -- tb path --no-patches
if [ "$(cat "$T/out")" = "$tbz" ]; then ok "the same tree is the same entry"; else not_ok "path: '$(cat "$T/out")'"; fi
touch -d '2001-01-01' "$F/Makefile"
expect_exit 66 "after the tree's Makefile changed, it is another build" -- tb path --no-patches

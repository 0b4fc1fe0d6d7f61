#!/usr/bin/env bash
# Every op of the workload language, run by the agent with the real system
# calls on each file system, then the tree it leaves, checked on the host:
# sizes, pattern blocks, contents, modes, xattrs, links, renames, failures.
. "$(dirname "$0")/../lib.sh"

WL=tests/workloads/ops-all.wl
# Does the kernel carry the barrier series (kernel/series)? Then RENAME_BARRIER
# works; fbarrier/fdatabarrier stay ENOSYS here because 'run-ops' is given no
# syscall numbers (t0600 runs them through 'crashlab run').
series=no
tbl=$(dirname "$("$CRASHLAB" kernel path 2>/dev/null)")/linux/arch/x86/entry/syscalls/syscall_64.tbl
grep -q fdatabarrier "$tbl" 2>/dev/null && series=yes
nops=$(grep -cvE '^[[:space:]]*(#.*)?$|^\[' "$WL")

# The guest script: mount, write the workload, run it, capture the tree.
guest_script() {
	printf 'mount -t %s /dev/vda /mnt || exit 3\n' "$1"
	printf "cat > /tmp/w.wl <<'CRASHLAB_EOF'\n"
	cat "$WL"
	printf 'CRASHLAB_EOF\n'
	printf '/init run-ops /mnt /tmp/w.wl || exit 4\n'
	printf 'echo ==tree==\n'
	printf '/init tree /mnt || exit 5\n'
}

# op TEXT: "id ret errno ino ino2" of the op whose canonical text is TEXT
op() { awk -F'\t' -v t="$1" '$1 == t { print NR, $2, $3, $4, $5; exit }' "$T/ops"; }
op_id() { op "$1" | cut -d' ' -f1; }

expect_op() { # FS TEXT "RET ERRNO"
	local got
	got=$(op "$2" | cut -d' ' -f2,3)
	if [ "$got" = "$3" ]; then ok "$1: '$2' returns $3"; else not_ok "$1: '$2' returned '${got:-nothing}', expected $3"; fi
}

# field PATH N: field N of the tree line of PATH (1 path, 2 type, 3 mode,
# 4 uid, 5 gid, 6 size, 7 nlink, 8 ino, 9 xattrs, 10 target, 11 blocks, 12 content)
field() { awk -F'\t' -v p="$1" -v n="$2" '$1 == p { print $n; exit }' "$T/tree"; }
has() { awk -F'\t' -v p="$1" '$1 == p { f = 1 } END { exit !f }' "$T/tree"; }

expect_field() { # FS PATH N WANT DESC
	local got
	got=$(field "$2" "$3")
	if [ "$got" = "$4" ]; then ok "$1: $5"; else not_ok "$1: $5: '$2' field $3 is '$got', expected '$4'"; fi
}

expect_node() { # FS PATH TYPE MODE SIZE DESC
	local got
	got=$(awk -F'\t' -v p="$2" '$1 == p { print $2, $3, $6; exit }' "$T/tree")
	if [ "$got" = "$3 $4 $5" ]; then ok "$1: $6"; else not_ok "$1: $6: '$2' is '${got:-absent}', expected '$3 $4 $5'"; fi
}

expect_absent() { # FS PATH DESC
	if has "$2"; then not_ok "$1: $3: '$2' exists"; else ok "$1: $3"; fi
}

check_fs() {
	local fs=$1 base
	if ! base=$("$CRASHLAB" image base --fs "$fs" 2>"$T/err"); then
		not_ok "$fs: no base image"; sed 's/^/    /' "$T/err" | tail -n 5; return
	fi
	rm -f "$T/disk.img"
	cp --sparse=always "$base" "$T/disk.img"
	"$CRASHLAB" boot --disk "$T/disk.img" -- sh -c "$(guest_script "$fs")" >"$T/out" 2>"$T/err" </dev/null
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		not_ok "$fs: the guest ran the workload (exit $rc)"
		sed 's/^/    stderr: /' "$T/err" | tail -n 15; sed 's/^/    stdout: /' "$T/out" | tail -n 5
		return
	fi
	ok "$fs: the guest ran the workload and captured the tree"
	sed '/^==tree==$/,$d' "$T/out" >"$T/ops"
	sed '1,/^==tree==$/d' "$T/out" >"$T/tree"
	expect_lines "$T/ops" "$nops" "$fs: one result line per op"
	local bad
	bad=$(awk -F'\t' 'NF != 5' "$T/ops" | head -n 3)
	if [ -z "$bad" ]; then ok "$fs: every result line has op, ret, errno, ino, ino2"; else not_ok "$fs: malformed result lines: $bad"; fi
	bad=$(awk -F'\t' 'NF != 12' "$T/tree" | head -n 3)
	if [ -z "$bad" ]; then ok "$fs: every tree line has 12 fields"; else not_ok "$fs: malformed tree lines: $bad"; fi
	if [ "$(cut -f1 "$T/tree" | LC_ALL=C sort)" = "$(cut -f1 "$T/tree")" ]; then
		ok "$fs: the tree is sorted by path"
	else
		not_ok "$fs: the tree is sorted by path"
	fi
	expect_absent "$fs" lost+found "lost+found is left out"

	# generic/342: rename, then a write to the old name makes a new file.
	expect_op "$fs" "rename A/foo A/bar" "0 0"
	expect_field "$fs" A/bar 12 hello "A/bar holds the renamed 'hello'"
	expect_field "$fs" A/foo 12 world "A/foo holds 'world'"
	local i_bar i_foo i_old
	i_bar=$(field A/bar 8); i_foo=$(field A/foo 8)
	i_old=$(op 'write A/foo "hello"' | cut -d' ' -f4)
	if [ -n "$i_foo" ] && [ "$i_foo" != "$i_bar" ] && [ "$i_old" = "$i_bar" ]; then
		ok "$fs: the second write made a NEW A/foo (inode $i_foo, not $i_bar)"
	else
		not_ok "$fs: the second write made a NEW A/foo: foo=$i_foo bar=$i_bar first=$i_old"
	fi
	expect_op "$fs" "fsync A/foo" "0 0"

	expect_node "$fs" d d 0700 "$(field d 6)" "mkdir d 0700"
	expect_op "$fs" "fsync d" "0 0"
	expect_absent "$fs" gone "rmdir removed 'gone'"
	expect_node "$fs" c f 0600 0 "creat c 0600 is an empty file"
	expect_field "$fs" open 3 0777 "mkdir 0777: the workload's mode, not the umask's"
	expect_node "$fs" wide f 0666 0 "creat 0666: the workload's mode, not the umask's"

	local w1 w2
	w1=$(op_id "write w 8K"); w2=$(op_id "write w 8K 100")
	expect_node "$fs" w f 0640 8292 "write w: 8K then 100 bytes at 8K (and chmod 0640)"
	expect_field "$fs" w 11 "p$w1,p$w1,p$w2" "write w: pattern blocks name their ops, short last block too"
	expect_field "$fs" t 12 "%00%00%00text" "write t 3 \"text\": text at an offset after a hole"

	local a1
	a1=$(op_id "append ap 4K")
	expect_node "$fs" ap f 0644 4099 "append 4K then 3 bytes"
	local ab
	ab=$(field ap 11)
	case "$ab" in "p$a1,h"*) ok "$fs: append: the first block is op $a1's pattern, then mixed bytes";;
	*) not_ok "$fs: append blocks are '$ab', expected p$a1,h...";; esac
	local dw mp tr
	dw=$(op_id "dwrite dw 4K 8K")
	expect_node "$fs" dw f 0644 12288 "dwrite at 4K of 8K"
	expect_field "$fs" dw 11 "z,p$dw,p$dw" "dwrite content is its pattern, a hole before it"
	expect_op "$fs" "dwrite dw 4K 8K" "8192 0"
	expect_field "$fs" mm 12 "%00%00%00%00%00%00%00%00%00%00mapped" "mmapwrite text, file extended first"
	mp=$(op_id "mmapwrite mp 4K 4K")
	expect_field "$fs" mp 11 "z,p$mp" "mmapwrite pattern at 4K"
	tr=$(op_id "write tr 16K")
	expect_node "$fs" tr f 0644 5000 "truncate to 5000"
	expect_field "$fs" tr 11 "p$tr,p$tr" "truncate keeps the pattern of what is left"

	expect_node "$fs" fa f 0644 65536 "falloc mode 0 extends the size"
	expect_field "$fs" fa 11 "z,z,z,z,z,z,z,z,z,z,z,z,z,z,z,z" "preallocated blocks read as zeros"
	expect_node "$fs" fk f 0644 0 "falloc keep_size leaves the size"
	local ph zr zk
	ph=$(op_id "write ph 12K"); zr=$(op_id "write zr 12K"); zk=$(op_id "write zk 8K")
	expect_field "$fs" ph 11 "p$ph,z,p$ph" "punch_hole zeroes the middle block"
	expect_field "$fs" ph 6 12288 "punch_hole keeps the size"
	expect_field "$fs" zr 11 "p$zr,z,p$zr" "zero_range zeroes the middle block"
	expect_node "$fs" zk f 0644 8192 "zero_range_keep_size past the end keeps the size"
	expect_field "$fs" zk 11 "p$zk,z" "zero_range_keep_size zeroes the second block"
	expect_op "$fs" "falloc zk zero_range_keep_size 4K 8K" "0 0"

	expect_field "$fs" w 7 2 "link: w has two links"
	if [ "$(field wl 8)" = "$(field w 8)" ]; then ok "$fs: link: wl is w's inode"; else not_ok "$fs: link: wl is w's inode"; fi
	expect_node "$fs" sl l 0777 11 "symlink"
	expect_field "$fs" sl 10 some/target "symlink target"

	expect_absent "$fs" ra "rename ra rb: ra is gone"
	expect_op "$fs" "rename nx ny noreplace" "-1 EEXIST"
	if has nx && has ny; then ok "$fs: noreplace left both names"; else not_ok "$fs: noreplace left both names"; fi
	expect_op "$fs" "rename ex1 ex2 exchange" "0 0"
	expect_field "$fs" ex1 12 two "exchange: ex1 holds 'two'"
	expect_field "$fs" ex2 12 one "exchange: ex2 holds 'one'"
	if [ "$series" = yes ]; then
		expect_op "$fs" "rename rb rc barrier" "0 0"
		if has rc && ! has rb; then ok "$fs: rename barrier moved rb to rc"; else not_ok "$fs: rename barrier on this kernel"; fi
	else
		expect_op "$fs" "rename rb rc barrier" "-1 EINVAL"
		if has rb && ! has rc; then ok "$fs: rename barrier is refused by this kernel, rb stays"; else not_ok "$fs: rename barrier on this kernel"; fi
	fi
	expect_absent "$fs" un "unlink"

	expect_field "$fs" c 9 "user.k=v%3B1" "setxattr, removexattr: only user.k remains, ';' encoded"
	expect_op "$fs" "removexattr c user.gone" "0 0"

	local p
	for p in "fdatasync w" "sync_file_range w 0 0 write,wait_after" "fiemap_sync w" "close w" "sync" "syncfs" \
		"sleep 10" "mark end"; do
		expect_op "$fs" "$p" "0 0"
	done
	expect_op "$fs" "fbarrier w" "-1 ENOSYS"
	expect_op "$fs" "fdatabarrier w" "-1 ENOSYS"
	expect_op "$fs" "close nosuch" "-1 EBADF"
	expect_op "$fs" "rmdir A" "-1 ENOTEMPTY"
	expect_field "$fs" after 12 "still%20running" "ops after a failing op still run"
}

for fs in ext4 xfs btrfs f2fs; do
	check_fs "$fs"
done

#!/usr/bin/env bash
# crashlab export end to end, on f2fs (which loses the seed's rename):
# (a) the exported disk image, checked again in a guest (the image as the
#     checker's base, nothing replayed), shows the tree the run stored, and
#     a raw and a qcow2 export hold the same disk;
# (b) the exported C program, built statically here and run in a guest on
#     a fresh copy of the run's base image, gives every op's stored result
#     (the barrier call made with the series' number; ENOSYS when told the
#     kernel has none);
# (c) the xfstests test of the finding passes bash -n, calls only helpers
#     xfstests has (the list below) and its golden output is the promise;
#     run in a guest with stand-ins for those helpers, it passes on xfs,
#     which keeps the promise, and fails on f2fs, which lost it.
. "$(dirname "$0")/../lib.sh"

db="$T/db"
q() { sqlite3 -batch -noheader -separator "$(printf '\t')" "$db" "$1"; }

# The seed with a write and a barrier between the new file and its fsync.
cat >"$T/bar.wl" <<'WL'
[setup]
mkdir A
write A/foo "hello"
sync
[run]
rename A/foo A/bar
write A/foo "world"
write A/big 0 8K
fdatabarrier A/big
unlink A/nope
fsync A/foo
WL
"$CRASHLAB" run "$T/bar.wl" --fs f2fs --db "$db" >"$T/run.out" 2>&1
rc=$?
[ "$rc" -le 1 ] && ok "the workload ran on f2fs (exit $rc)" || { not_ok "crashlab run: exit $rc"; tail -5 "$T/run.out"; exit 0; }
final=$(q "SELECT max(idx) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = 1 AND f.fs = 'f2fs'")

# --- (a) the image
for idx in 0 "$final"; do
	expect_exit 0 "export state $idx as an image, verified in a guest" -- \
		"$CRASHLAB" export --db "$db" 1 f2fs "$idx" --format image --out "$T/img" --verify
	stored=$(q "SELECT s.tree_hash || ' ' || s.n_nodes FROM states s JOIN fsruns f ON f.id = s.fsrun_id
		    WHERE f.run_id = 1 AND s.idx = $idx")
	seen=$(sed -n 's/^verified: .*(hash \([0-9a-f]*\), \([0-9]*\) nodes).*/\1 \2/p' "$T/out")
	if [ -n "$seen" ] && [ "$seen" = "$stored" ]; then
		ok "state $idx: the guest saw the stored tree ($seen)"
	else
		not_ok "state $idx: the guest saw '$seen', the store has '$stored'"
		cat "$T/out"
	fi
	eval "seen_$idx=\$seen"
done
eval "a=\$seen_0 b=\$seen_$final"
[ "$a" != "$b" ] && ok "the two states' trees differ, as stored (the check reads the image)" ||
	not_ok "states 0 and $final showed the same tree"
img="$T/img/run1-f2fs-state$final.img"
expect_grep "$T/img/run1-f2fs-state$final.img.notes.txt" "^mount +-t f2fs -o defaults" "the notes say how to mount it"
expect_grep "$T/img/run1-f2fs-state$final.img.notes.txt" "LOST +\[somc\]" "and what was promised and lost"
expect_exit 73 "a second export does not replace the image" -- \
	"$CRASHLAB" export --db "$db" 1 f2fs "$final" --format image --out "$T/img"
expect_exit 0 "the same state as qcow2" -- \
	"$CRASHLAB" export --db "$db" 1 f2fs "$final" --format image --qcow2 --out "$T/qc"
qc="$T/qc/run1-f2fs-state$final.qcow2"
expect_exit 0 "qemu-img says qcow2" -- sh -c "qemu-img info '$qc' | grep -q '^file format: qcow2'"
expect_exit 0 "the raw and the qcow2 export hold the same disk" -- qemu-img compare -q "$img" "$qc"
[ ! -e "$T/qc/.run1-f2fs-state$final.img.tmp" ] && ok "no raw left behind by the qcow2 export" || not_ok "the raw temporary is left"

# --- (b) the C program, in a guest, on a fresh copy of the run's base image
expect_exit 0 "export the program" -- "$CRASHLAB" export --db "$db" 1 f2fs "$final" --format c --out "$T/c"
src="$T/c/run1-f2fs-state$final.c"
if ! cc -static -O2 -Wall -Werror -o "$T/prog" "$src" 2>"$T/cc.err"; then
	not_ok "the program builds statically with cc -Wall -Werror"
	cat "$T/cc.err"
else
	ok "the program builds statically with cc -Wall -Werror"
	size=$(stat -c %s "$T/prog")
	truncate -s $(((size + 511) / 512 * 512)) "$T/prog"
	base=$(q "SELECT base_image FROM fsruns WHERE run_id = 1 AND fs = 'f2fs'")
	q "SELECT op_id, ret, err FROM ops o JOIN fsruns f ON f.id = o.fsrun_id WHERE f.run_id = 1 ORDER BY op_id" >"$T/stored"
	for nr in series none; do
		cp --sparse=always "$base" "$T/fresh.img"
		env=
		[ "$nr" = none ] && env="FBARRIER_NR=-1 FDATABARRIER_NR=-1"
		"$CRASHLAB" boot --disk "$T/fresh.img" --disk "$T/prog" -- sh -c \
			"mkdir -p /mnt/t && mount -t f2fs /dev/vda /mnt/t && head -c $size /dev/vdb >/tmp/p &&
			 chmod +x /tmp/p && $env /tmp/p /mnt/t && umount /mnt/t" >"$T/ran.$nr" 2>"$T/err"
		rc=$?
		[ "$rc" -eq 0 ] && ok "the program ran in a guest on fresh f2fs ($nr)" || { not_ok "boot: exit $rc"; cat "$T/err"; }
	done
	if cut -f1-3 "$T/ran.series" | diff "$T/stored" - >"$T/diff"; then
		ok "every op's result (op, ret, errno) is the stored one, fdatabarrier's 0 included"
	else
		not_ok "the program's results differ from the stored ones"
		sed 's/^/    | /' "$T/diff"
	fi
	expect_grep "$T/ran.series" "^7	0	0	-	fdatabarrier A/big$" "fdatabarrier made with the series' number"
	expect_grep "$T/ran.none" "^7	-1	38	ENOSYS	fdatabarrier A/big$" "told there is no barrier call: ENOSYS"
fi

# --- (c) xfstests
expect_exit 65 "xfstests of a workload with a barrier call is refused" -- \
	"$CRASHLAB" export --db "$db" 1 f2fs "$final" --format xfstests --out "$T/x"
expect_grep "$T/err" "fdatabarrier A/big.*--format c" "naming the op and what to use instead"
"$CRASHLAB" run tutorials/seed/seed.wl --fs f2fs,xfs --db "$db" >"$T/run2.out" 2>&1
final2=$(q "SELECT max(idx) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = 2 AND f.fs = 'f2fs'")
expect_exit 0 "xfstests of the seed's final state on f2fs" -- \
	"$CRASHLAB" export --db "$db" 2 f2fs "$final2" --format xfstests --number 901 --out "$T/x"
t="$T/x/tests/generic/901"
expect_grep "$T/out" "promises of model somc" "the model the finding broke: somc (f2fs's own promises nothing here)"
expect_exit 0 "bash -n passes" -- bash -n "$t"
# xfstests' helpers this test may call, each found defined in xfstests'
# common/ (preamble, rc, exit, filter, dmflakey, attr) at commit 63a29724a85f.
known="_begin_fstest _cleanup _cleanup_flakey _require_scratch _require_dm_target _require_xfs_io_command
_require_odirect _require_attrs _scratch_mkfs _require_metadata_journaling _init_flakey _scratch_mount
_scratch_sync _flakey_drop_and_remount _scratch_unmount _exit"
bad=
for h in $(grep -oE '(^|[^A-Za-z0-9_$.])_[a-z_]+' "$t" | sed 's/^[^_]*//' | sort -u); do
	case " $(echo $known) " in *" $h "*) ;; *) bad="$bad $h" ;; esac
done
[ -z "$bad" ] && ok "every helper it calls is one xfstests has" || not_ok "helpers xfstests does not have:$bad"
missing=
for h in _begin_fstest _require_scratch _require_dm_target _scratch_mkfs _init_flakey _scratch_mount _flakey_drop_and_remount; do
	grep -qE "(^|[ 	])$h( |$)" "$t" || missing="$missing $h"
done
for f in preamble filter dmflakey; do
	grep -q "^\. \./common/$f$" "$t" || missing="$missing common/$f"
done
[ -z "$missing" ] && ok "it sources the preamble, filter and dmflakey and calls the scratch, dm-flakey and power-cut helpers" ||
	not_ok "the test lacks:$missing"
expect_grep "$t.out" "^QA output created by 901$" "the golden output's first line"
expect_grep "$t.out" "^A/bar: file$" "A/bar is promised (the rename before the fsync, under somc)"
expect_grep "$t" "^mv -T \"\\\$SCRATCH_MNT\"/'A/foo' \"\\\$SCRATCH_MNT\"/'A/bar'" "the rename as mv -T"
bar=$(q "SELECT count(*) FROM nodes n JOIN states s ON s.id = n.state_id JOIN fsruns f ON f.id = s.fsrun_id
	 WHERE f.run_id = 2 AND f.fs = 'f2fs' AND s.idx = $final2 AND n.path = 'A/bar'")
[ "$bar" = 0 ] && ok "and f2fs's state has no A/bar: the test fails on it" || not_ok "f2fs kept A/bar here ($bar)"

# --- the exported test run in a guest, with stand-ins for the few xfstests
# helpers it calls (ours, written from what those helpers do: a dm-flakey
# device that passes writes, then drops them for the power cut) and the
# host's xfs_io with its libraries; the scratch device a fresh copy of the
# run's base image. xfs keeps the seed's rename (the lab says so): the
# output must be the golden one; f2fs lost it: the test must fail there.
if xio=$(command -v xfs_io); then
	pkg="$T/pkg"
	mkdir -p "$pkg/xio" "$pkg/xt/common" "$pkg/xt/tests/generic"
	cp "$xio" "$pkg/xio/"
	for l in $(ldd "$xio" | awk '/=>/ { print $3 } /ld-linux/ && !/=>/ { print $1 }'); do cp -L "$l" "$pkg/xio/"; done
	cp "$t" "$t.out" "$pkg/xt/tests/generic/"
	: >"$pkg/xt/common/filter"
	cat >"$pkg/xt/common/preamble" <<'SH'
# stand-in: only what an exported test calls
_begin_fstest()
{
	seq=$(basename "$0")
	seqres=$RESULT_DIR/$seq
	echo "QA output created by $seq"
	tmp=/tmp/$$
	status=1
	trap '_cleanup; exit $status' EXIT
}
_cleanup() { :; }
_exit() { status=$1; exit "$1"; }
_require_scratch() { :; }
_require_dm_target() { :; }
_require_xfs_io_command() { :; }
_require_odirect() { :; }
_require_metadata_journaling() { :; }
_scratch_mkfs() { :; }   # a fresh copy of the run's base image: made by mkfs already
_scratch_mount() { mount -t "$FSTYP" $MOUNT_OPTIONS "$SCRATCH_DEV" "$SCRATCH_MNT" || exit 1; }
_scratch_unmount() { umount "$SCRATCH_MNT"; }
_scratch_sync() { sync; }
SH
	cat >"$pkg/xt/common/dmflakey" <<'SH'
# stand-in: a dm-flakey device over the scratch device that passes writes,
# then drops them (the power cut)
_flakey_table()
{
	local sz
	sz=$(cat /sys/class/block/$(basename "$FLAKEY_BACKING")/size)
	if [ "$1" = drop ]; then
		echo "0 $sz flakey $FLAKEY_BACKING 0 0 180 1 drop_writes"
	else
		echo "0 $sz flakey $FLAKEY_BACKING 0 180 0"
	fi
}
_init_flakey()
{
	FLAKEY_BACKING=$SCRATCH_DEV
	# no udev in the guest: dmsetup makes the /dev/mapper node itself
	dmsetup create flakey-test --table "$(_flakey_table allow)" && dmsetup mknodes flakey-test || exit 1
	SCRATCH_DEV=/dev/mapper/flakey-test
}
_flakey_load()
{
	# --nolockfs: no freeze, which would make the file system write everything first
	dmsetup suspend --nolockfs flakey-test && dmsetup load flakey-test --table "$(_flakey_table "$1")" &&
		dmsetup resume flakey-test
}
_flakey_drop_and_remount()
{
	_flakey_load drop || exit 1
	_scratch_unmount || exit 1
	_flakey_load allow || exit 1
	_scratch_mount || exit 1
}
_cleanup_flakey()
{
	umount "$SCRATCH_MNT" 2>/dev/null
	dmsetup remove flakey-test
}
SH
	tar -C "$pkg" -cf "$T/pkg.tar" .
	size=$(stat -c %s "$T/pkg.tar")
	truncate -s $(((size + 511) / 512 * 512)) "$T/pkg.tar"
	for fs in xfs f2fs; do
		cp --sparse=always "$(q "SELECT base_image FROM fsruns WHERE run_id = 2 AND fs = '$fs'")" "$T/scratch.img"
		"$CRASHLAB" boot --disk "$T/scratch.img" --disk "$T/pkg.tar" -- sh -c \
			"mkdir -p /tmp/x /mnt/scratch && head -c $size /dev/vdb | tar -x -C /tmp/x -f - && cd /tmp/x/xt &&
			 FSTYP=$fs SCRATCH_DEV=/dev/vda SCRATCH_MNT=/mnt/scratch RESULT_DIR=/tmp \
			 XFS_IO_PROG='/tmp/x/xio/ld-linux-x86-64.so.2 --library-path /tmp/x/xio /tmp/x/xio/xfs_io' \
			 sh ./tests/generic/901" >"$T/xt.$fs" 2>"$T/xt.err"
		rc=$?
		[ "$rc" -eq 0 ] && ok "the test ran in a guest on $fs with stand-in helpers" ||
			{ not_ok "on $fs it exited $rc"; tail -5 "$T/xt.err"; }
	done
	if diff "$t.out" "$T/xt.xfs" >"$T/diff"; then
		ok "on xfs, which keeps the promise, its output is the golden output"
	else
		not_ok "on xfs its output differs from the golden output"
		sed 's/^/    | /' "$T/diff"
	fi
	if ! diff -q "$t.out" "$T/xt.f2fs" >/dev/null && grep -q '^A/bar: absent$' "$T/xt.f2fs"; then
		ok "on f2fs, which lost it in the lab, it fails the same way: A/bar absent"
	else
		not_ok "on f2fs the output is not the loss the lab found"
		sed 's/^/    | /' "$T/xt.f2fs"
	fi
else
	skip "the exported test run in a guest" "no xfs_io here"
fi

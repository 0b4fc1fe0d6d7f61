#!/usr/bin/env bash
# The libvirt backend: every guest a transient domain of qemu:///system.
# It boots, runs the seed workload on the four file systems with the same
# op results, states, trees and verdicts as the direct QEMU backend, and
# tells a panic, a hang and a QEMU that cannot start apart with the same
# exit codes. The daemons it needs are started here when they are not
# running, and only those are stopped at the end.
. "$(dirname "$0")/../lib.sh"

URI=qemu:///system
LV=(--backend libvirt --connect "$URI")
started=()
cleanup() {
	for pid in "${started[@]}"; do
		kill "$pid" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ] || ! command -v libvirtd >/dev/null || ! command -v virtlogd >/dev/null; then
	skip "the libvirt backend" "needs root and libvirtd, virtlogd (make deps)"
	exit 0
fi

# start_daemon NAME: NAME -d unless it runs already; its pid is remembered.
start_daemon() {
	if [ -s "/run/$1.pid" ] && kill -0 "$(cat "/run/$1.pid")" 2>/dev/null; then
		return 0
	fi
	"$1" -d || return 1
	for _ in $(seq 50); do
		[ -s "/run/$1.pid" ] && kill -0 "$(cat "/run/$1.pid")" 2>/dev/null && break
		sleep 0.1
	done
	started+=("$(cat "/run/$1.pid")")
}
answers() {
	for _ in $(seq 50); do
		virsh -c "$URI" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
# a libvirt that answers already (systemd's, say) is used as it is
if virsh -c "$URI" version >/dev/null 2>&1 || { start_daemon virtlogd && start_daemon libvirtd && answers; }; then
	ok "libvirtd answers on $URI (${#started[@]} daemons started here)"
else
	not_ok "cannot start libvirtd and virtlogd"
	exit 0
fi

ours() { virsh -c "$URI" list --all --name 2>/dev/null | grep -c '^crashlab-'; }
before=$(ours)

# --- a boot, and the domain it ran as
expect_exit 0 "boot through libvirt" -- "$CRASHLAB" boot "${LV[@]}" -v -- uname -r
expect_grep "$T/out" "^[0-9]+\.[0-9]+" "the guest ran the command"
if "$CRASHLAB" doctor 2>&1 | grep -q "KVM unusable here"; then type=qemu; else type=kvm; fi
expect_grep "$T/err" "<domain type='$type'" "a domain of type '$type', as the accelerator probe says"
expect_grep "$T/err" "<kernel>.*bzImage</kernel>" "direct kernel boot"
expect_no_grep "$T/err" "<interface" "no network"
expect_grep "$T/err" "shut off .* after the power-off request" "the guest powered off when asked"

# --- the seed on four file systems, through libvirt and directly
seed=tutorials/seed/seed.wl
"$CRASHLAB" run "$seed" --db "$T/direct.db" >"$T/out-direct" 2>"$T/err-direct"
rc_direct=$?
t0=$SECONDS
"$CRASHLAB" run "$seed" "${LV[@]}" --db "$T/lv.db" >"$T/out-lv" 2>"$T/err-lv"
rc_lv=$?
echo "# the seed on 4 fs through libvirt: $((SECONDS - t0)) s"
if [ "$rc_lv" = "$rc_direct" ] && [ "$rc_lv" -le 1 ]; then
	ok "the seed through libvirt exits as directly ($rc_lv)"
else
	not_ok "the seed exits $rc_lv through libvirt, $rc_direct directly"
	tail -5 "$T/err-lv" | sed 's/^/#   /'
fi
expect_db_ok "$T/lv.db" "the libvirt run's database is sound"
# What each fs showed: not the log positions or times, which differ
# between any two recordings.
outcomes() {
	sqlite3 -batch -noheader "$1" "
	SELECT DISTINCT f.fs, f.outcome, 'op', o.op_id, o.text, o.ret, o.err
	  FROM ops o JOIN fsruns f ON f.id = o.fsrun_id;
	SELECT DISTINCT f.fs, 'state', s.mount_ok, s.fsck_clean, s.tree_hash, s.explained
	  FROM states s JOIN fsruns f ON f.id = s.fsrun_id;
	SELECT DISTINCT f.fs, 'verdict', v.model, v.rule, v.verdict, v.op_id, v.path, v.reason
	  FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id;" | sort
}
outcomes "$T/direct.db" >"$T/o-direct"
outcomes "$T/lv.db" >"$T/o-lv"
nfs=$(sqlite3 "$T/lv.db" "SELECT count(*) FROM fsruns WHERE outcome = 'ok'")
nrows=$(wc -l <"$T/o-lv")
if [ "$nfs" = 4 ] && [ "$nrows" -gt 100 ] && cmp -s "$T/o-direct" "$T/o-lv"; then
	ok "libvirt and direct store the same op results, states, trees and verdicts on 4 fs ($nrows rows)"
else
	not_ok "libvirt ($nfs fs ok) and direct differ ($nrows rows):"
	diff "$T/o-direct" "$T/o-lv" | head -20 | sed 's/^/#   /'
fi

# --- the live lab: guests that stay up, a power cut by QMP stop
printf 'mkdir a\ncreat a/f\nfsync a/f\ncrash\nquit\n' >"$T/lab.in"
"$CRASHLAB" lab --fs ext4 "${LV[@]}" --db "$T/lab.db" <"$T/lab.in" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "crash after op 3: run 1, ext4 1 state" "$T/out"; then
	ok "the lab through libvirt records, cuts the power and checks"
else
	not_ok "the lab through libvirt: exit $rc"
	tail -5 "$T/err" "$T/out" | sed 's/^/#   /'
fi

# --- health: the same outcomes and exit codes as directly
expect_exit 125 "a guest kernel panic through libvirt exits 125" -- "$CRASHLAB" boot "${LV[@]}" -- sh -c 'echo c > /proc/sysrq-trigger; sleep 60'
expect_grep "$T/err" "guest kernel panic: Kernel panic - not syncing: sysrq triggered crash" "and says it was a panic, from the console"
expect_exit 125 "the same panic directly exits 125" -- "$CRASHLAB" boot -- sh -c 'echo c > /proc/sysrq-trigger; sleep 60'
expect_exit 124 "a hanging command through libvirt exits 124" -- "$CRASHLAB" boot "${LV[@]}" --timeout 4 -- sleep 1000
expect_grep "$T/err" "guest timeout" "and says it was a timeout"
# A file with a bzImage header but nothing behind it: QEMU cannot load it.
head -c 4096 /dev/zero >"$T/fake"
printf '\x55\xaa' | dd of="$T/fake" bs=1 seek=510 conv=notrunc 2>/dev/null
printf 'HdrS' | dd of="$T/fake" bs=1 seek=514 conv=notrunc 2>/dev/null
expect_exit 69 "QEMU dying early through libvirt exits 69" -- "$CRASHLAB" boot "${LV[@]}" --kernel "$T/fake" -- true
expect_grep "$T/err" "libvirt cannot start the domain" "and says libvirt could not start it"
expect_exit 69 "a libvirt that cannot be reached exits 69" -- "$CRASHLAB" boot --backend libvirt --connect qemu:///nosuch -- true
expect_grep "$T/err" "cannot connect to libvirt" "and says so"
expect_exit 2 "--connect without --backend libvirt is a usage error" -- "$CRASHLAB" boot --connect "$URI" -- true
expect_exit 2 "an unknown backend is a usage error" -- "$CRASHLAB" boot --backend xen -- true

# --- a remote libvirt's transport: console, channel and monitor over TCP
# (the test hook takes it on the local libvirt, over 127.0.0.1)
export CRASHLAB_TEST_LIBVIRT_TCP=1
expect_exit 0 "boot with the console and channel over TCP" -- "$CRASHLAB" boot "${LV[@]}" -v -- uname -r
expect_grep "$T/out" "^[0-9]+\.[0-9]+" "the guest ran the command"
expect_grep "$T/err" "<channel type='tcp'>" "the channel is a TCP port"
expect_exit 125 "a panic read on a TCP console exits 125" -- "$CRASHLAB" boot "${LV[@]}" -- sh -c 'echo c > /proc/sysrq-trigger; sleep 60'
expect_grep "$T/err" "guest kernel panic: Kernel panic - not syncing: sysrq triggered crash" "and says it was a panic"
"$CRASHLAB" lab --fs ext4 "${LV[@]}" --db "$T/lab-tcp.db" <"$T/lab.in" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "crash after op 3: run 1, ext4 1 state" "$T/out"; then
	ok "the lab with its QMP monitor over TCP"
else
	not_ok "the lab over TCP: exit $rc"
	tail -5 "$T/err" "$T/out" | sed 's/^/#   /'
fi
unset CRASHLAB_TEST_LIBVIRT_TCP

# --- no domain is left behind (libvirt takes each down after its power cut)
for _ in $(seq 100); do
	[ "$(ours)" -le "$before" ] && break
	sleep 0.2
done
if [ "$(ours)" -le "$before" ]; then ok "no crashlab domain is left"; else not_ok "domains left: $(virsh -c "$URI" list --name | grep crashlab-)"; fi

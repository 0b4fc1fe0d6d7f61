#!/usr/bin/env bash
# The interactive shell, driven through a pipe and through tmux.
. "$(dirname "$0")/../lib.sh"

printf 'echo marker-$((6*7))\nexit\n' | timeout 300 "$CRASHLAB" shell >"$T/out" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ]; then ok "shell exits 0 after 'exit'"; else not_ok "shell exit $rc"; tail -n 5 "$T/err"; fi
expect_grep "$T/out" "marker-42" "commands typed into the shell run in the guest"

if command -v tmux >/dev/null; then
	sock="$T/tmux"
	tmux -S "$sock" new-session -d -x 120 -y 30 "$CRASHLAB shell; echo SHELL-ENDED; sleep 30"
	for _ in $(seq 1 120); do
		tmux -S "$sock" capture-pane -p >"$T/screen" 2>/dev/null
		grep -q "powers the guest off" "$T/screen" && break
		sleep 1
	done
	tmux -S "$sock" send-keys "uname -s; cat /proc/1/comm" Enter
	sleep 3
	tmux -S "$sock" send-keys "exit" Enter
	for _ in $(seq 1 60); do
		tmux -S "$sock" capture-pane -p >"$T/screen" 2>/dev/null
		grep -q SHELL-ENDED "$T/screen" && break
		sleep 1
	done
	tmux -S "$sock" kill-server 2>/dev/null
	expect_grep "$T/screen" "^Linux" "tmux: the shell answers on a terminal"
	expect_grep "$T/screen" "SHELL-ENDED" "tmux: 'exit' ends the guest"
else
	skip "tmux: the shell on a terminal" "tmux is not installed"
fi

#!/usr/bin/env bash
# The command line: help everywhere, unknown commands, doctor, bench.
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "crashlab --help" -- "$CRASHLAB" --help
# every command --help lists (and it lists the ones the README teaches)
cmds=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }' "$T/out")
for c in run show report compare tutorial; do
	case " $(echo $cmds) " in *" $c "*) ok "--help lists $c" ;; *) not_ok "--help does not list $c" ;; esac
done
for c in $cmds; do
	expect_exit 0 "crashlab $c --help works" -- env XDG_CACHE_HOME="$T/empty-cache" "$CRASHLAB" $c --help
	expect_grep "$T/out" "^usage: crashlab $c" "crashlab $c --help starts with its usage"
done
expect_exit 2 "an unknown command" -- "$CRASHLAB" frobnicate
expect_grep "$T/err" "unknown command 'frobnicate'" "is named"
expect_exit 2 "no command" -- "$CRASHLAB"
expect_exit 0 "doctor says a run can work" -- "$CRASHLAB" doctor
expect_grep "$T/out" "crashlab can run here" "doctor's verdict"
expect_grep "$T/out" "blklogwrites" "doctor checks blklogwrites"
expect_grep "$T/out" "KVM" "doctor reports on KVM"
expect_exit 0 "bench boot" -- "$CRASHLAB" bench boot -n 1
expect_grep "$T/out" "^boot to agent-ready: median [0-9.]+ s over 1 boots .*accelerator (kvm|tcg)$" "bench prints the median and the accelerator"
expect_exit 2 "bench without a benchmark" -- "$CRASHLAB" bench
# the lessons keep the shape `crashlab tutorial` runs
expect_exit 0 "crashlab tutorial --check: every lesson parses" -- "$CRASHLAB" tutorial --check
expect_grep "$T/out" "^ok  seed " "the seed lesson is one"
expect_exit 66 "an unknown lesson" -- "$CRASHLAB" tutorial sede
expect_grep "$T/err" "did you mean 'seed'" "the nearest lesson is suggested"

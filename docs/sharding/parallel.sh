#!/usr/bin/env bash
# parallel.sh - a crashlab batch cut into N shards that GNU parallel runs on
# the machines it reaches over ssh, then merged into one database
# (docs/sharding.md).
#
# usage: docs/sharding/parallel.sh [-n SHARDS] [-S LOGINS] [-o OUT.db] RUN-ARGS...
#   -n SHARDS  how many slices the batch is cut into (default 2)
#   -S LOGINS  GNU parallel's --sshlogin: 'host1,host2' or '2/host1,:' (N/ is
#              how many shards that machine runs at once, ':' is this machine;
#              default ':', this machine only)
#   -o OUT.db  the merged database (default crashlab.db; appended to when it exists)
#   RUN-ARGS   what 'crashlab run' takes for the batch: workloads, folders,
#              --fs, --crash, -j ... (not --db or --shard: this script sets them)
#
# Run it from a crashlab checkout that every machine has at the same path
# under its $HOME, with crashlab built (CRASHLAB names another binary) and
# the workloads at the same paths. Shard I runs on some machine as
#   crashlab run RUN-ARGS --shard I/N --db shard-I-of-N.db
# and its database comes back here (parallel --return). When every shard
# has ended, the shards are merged in shard order into OUT.db, which then
# holds the runs the batch would have stored on one machine, with the same
# ids. Exit status: that of 'crashlab run' for the batch (1: findings);
# when a shard could not end (a guest failure, Ctrl-C), nothing is merged
# and the shard's command is printed to run again.
set -u
shards=2 logins=: out=crashlab.db
while getopts "n:S:o:h" o; do
	case $o in
	n) shards=$OPTARG ;;
	S) logins=$OPTARG ;;
	o) out=$OPTARG ;;
	h) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "see '$0 -h'" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
crashlab=${CRASHLAB:-./crashlab}
case $shards in '' | *[!0-9]* | 0*) echo "parallel.sh: -n wants a number of shards, not '$shards'" >&2; exit 2 ;; esac
[ $# -gt 0 ] || { echo "parallel.sh: no workloads; see '$0 -h'" >&2; exit 2; }
command -v parallel >/dev/null || { echo "parallel.sh: GNU parallel is not installed (Debian: parallel)" >&2; exit 66; }
dbs=()
for i in $(seq 1 "$shards"); do
	db=shard-$i-of-$shards.db
	if [ -e "$db" ]; then
		echo "parallel.sh: '$db' exists: a shard adds its runs to it; move it away first" >&2
		exit 73
	fi
	dbs+=("$db")
done
log=shard-of-$shards.joblog
# -q: the arguments reach crashlab as they are, through ssh too; one shard
# at a time per machine unless LOGINS says N/host (each shard already uses
# its machine's cores with crashlab's own -j)
parallel --will-cite -q --jobs 1 --sshlogin "$logins" --workdir . --joblog "$log" \
	--return "shard-{}-of-$shards.db" --cleanup \
	"$crashlab" run "$@" --shard "{}/$shards" --db "shard-{}-of-$shards.db" ::: $(seq 1 "$shards") \
	2> >(grep -v -e '--return ignored as there are no remote' >&2)
worst=0 findings=0
while IFS=$'\t' read -r seq host _ _ _ _ rc sig _; do
	[ "$seq" = Seq ] && continue
	if [ "$rc" = 1 ] && [ "$sig" = 0 ]; then
		findings=1
	elif [ "$rc" != 0 ] || [ "$sig" != 0 ]; then
		echo "parallel.sh: shard $seq/$shards on ${host:-this machine} ended with exit $rc (signal $sig); run it again:" >&2
		echo "  $crashlab run $* --shard $seq/$shards --db shard-$seq-of-$shards.db    # or 'run --resume RUN' for its runs" >&2
		worst=$rc
		[ "$worst" = 0 ] && worst=$((128 + sig))
	fi
done <"$log"
[ "$worst" = 0 ] || { echo "parallel.sh: nothing merged; then: $crashlab db merge $out ${dbs[*]}" >&2; exit "$worst"; }
"$crashlab" db merge "$out" "${dbs[@]}" || exit
exit "$findings"

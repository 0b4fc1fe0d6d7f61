#!/usr/bin/env bash
# slurm-submit.sh - a crashlab batch as a Slurm job array of N shards, and
# a job that merges them once every shard has ended well (docs/sharding.md).
#
# usage: docs/sharding/slurm-submit.sh [-n SHARDS] [-o OUT.db] RUN-ARGS...
#   -n SHARDS  tasks of the array, one shard each (default 2)
#   -o OUT.db  the merged database (default crashlab.db)
#   RUN-ARGS   what 'crashlab run' takes for the batch (not --db, --shard or -j)
#
# Run it from a crashlab checkout on a file system every node sees, with
# crashlab built there (CRASHLAB names another binary). Extra sbatch
# options (partition, account, time) go in SBATCH_* variables, e.g.
# SBATCH_PARTITION=long. Prints the two job ids.
set -eu
shards=2 out=crashlab.db
while getopts "n:o:h" o; do
	case $o in
	n) shards=$OPTARG ;;
	o) out=$OPTARG ;;
	h) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "see '$0 -h'" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $shards in '' | *[!0-9]* | 0*) echo "slurm-submit.sh: -n wants a number of shards, not '$shards'" >&2; exit 2 ;; esac
[ $# -gt 0 ] || { echo "slurm-submit.sh: no workloads; see '$0 -h'" >&2; exit 2; }
here=$(dirname "$0")
crashlab=${CRASHLAB:-./crashlab}
dbs=$(for i in $(seq 1 "$shards"); do printf ' shard-%d-of-%d.db' "$i" "$shards"; done)
array=$(SHARDS=$shards sbatch --parsable --array="1-$shards" "$here/slurm-shard.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable --dependency="afterok:$array" --job-name=crashlab-merge --output="merge-of-$array.out" \
	--wrap="$crashlab db merge $out$dbs")
echo "shards: job array $array (1-$shards); merge into $out: job ${merge%%;*}, once every shard has ended well"

#!/usr/bin/env bash
# The sharding recipes of docs/sharding/ without a guest: each script is
# valid bash; the GNU parallel recipe (on this machine, --sshlogin :) and
# the Slurm recipe (with a stand-in sbatch that runs the array's tasks here)
# give each shard the right command line and merge the shards in order,
# with a stand-in crashlab that records what it is asked. The real thing on
# a guest: tests/guest/t0950-shard.sh.
. "$(dirname "$0")/../lib.sh"

R=$PWD/docs/sharding
for f in "$R"/parallel.sh "$R"/slurm-shard.sbatch "$R"/slurm-submit.sh; do
	if bash -n "$f"; then ok "$(basename "$f") is valid bash"; else not_ok "$(basename "$f") does not parse"; fi
done

# a crashlab that records its arguments, makes the --db file of a run, and
# exits $STUB_RC_<shard> for a shard (default 0)
mkdir -p "$T/bin" "$T/w"
cat >"$T/bin/crashlab" <<'STUB'
#!/usr/bin/env bash
printf '%s\n' "$*" >>"$STUB_LOG"
for a in "$@"; do [ "$a" = "my dir/" ] && echo "one argument: my dir/" >>"$STUB_LOG"; done
if [ "$1" = run ]; then
	while [ $# -gt 0 ]; do
		case $1 in
		--db) touch "$2" ;;
		--shard) i=${2%/*} ;;
		esac
		shift
	done
	eval "exit \${STUB_RC_${i:-0}:-0}"
fi
exit 0
STUB
chmod +x "$T/bin/crashlab"
export STUB_LOG=$T/log CRASHLAB=$T/bin/crashlab

# --- GNU parallel, on this machine
if ! command -v parallel >/dev/null; then
	skip "the GNU parallel recipe" "GNU parallel is not installed (make deps)"
else
	cd "$T/w" || exit 1
	expect_exit 1 "three shards, the second with findings: the batch's exit 1" -- env STUB_RC_2=1 "$R/parallel.sh" -n 3 -o all.db a.wl 'my dir/' --fs ext4
	sort "$T/log" >"$T/sorted"
	for i in 1 2 3; do
		expect_grep "$T/sorted" "^run a.wl my dir/ --fs ext4 --shard $i/3 --db shard-$i-of-3.db\$" "shard $i/3 runs with its slice and database"
	done
	if [ "$(grep -c '^one argument: my dir/$' "$T/log")" = 3 ]; then ok "a folder with a space reaches crashlab as one argument"; else not_ok "'my dir/' was split"; fi
	expect_grep "$T/log" "^db merge all.db shard-1-of-3.db shard-2-of-3.db shard-3-of-3.db\$" "then the shards are merged in shard order"
	if [ "$(tail -1 "$T/log")" = "db merge all.db shard-1-of-3.db shard-2-of-3.db shard-3-of-3.db" ]; then ok "after every shard"; else not_ok "merge not last"; fi
	expect_exit 73 "shard databases that exist already are not added to" -- "$R/parallel.sh" -n 3 -o all.db a.wl
	expect_grep "$T/err" "shard-1-of-3.db' exists" "and it says which"
	rm -f shard-*.db "$T/log"
	expect_exit 69 "a shard whose guest failed: its exit code" -- env STUB_RC_2=69 "$R/parallel.sh" -n 2 a.wl
	expect_grep "$T/err" "shard 2/2 .* exit 69" "names the shard"
	expect_grep "$T/err" "run a.wl --shard 2/2 --db shard-2-of-2.db" "and the command to run it again"
	expect_no_grep "$T/log" "db merge" "and merges nothing"
	expect_exit 2 "-n 0 is refused" -- "$R/parallel.sh" -n 0 a.wl
	expect_exit 0 "-h explains" -- "$R/parallel.sh" -h
	expect_grep "$T/out" "sshlogin" "naming --sshlogin"
	cd - >/dev/null || exit 1
fi

# --- Slurm, with a stand-in sbatch that runs the array's tasks here
rm -f "$T/log"
cat >"$T/bin/sbatch" <<'STUB'
#!/usr/bin/env bash
printf 'sbatch %s\n' "$*" >>"$STUB_LOG"
n=$(cat "$STUB_LOG.jobs" 2>/dev/null || echo 100)
echo $((n + 1)) >"$STUB_LOG.jobs"
array= script= args=()
while [ $# -gt 0 ]; do
	case $1 in
	--array=*) array=${1#--array=} ;;
	--parsable | --dependency=* | --job-name=* | --output=* | --wrap=*) ;;
	-*) ;;
	*) script=$1; shift; args=("$@"); break ;;
	esac
	shift
done
if [ -n "$array" ] && [ -n "$script" ]; then
	for i in $(seq "${array%-*}" "${array#*-}"); do
		SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=${array#*-} SLURM_CPUS_PER_TASK=4 bash "$script" "${args[@]}" ||
			echo "task $i failed" >>"$STUB_LOG"
	done
fi
echo "$((n + 1));cluster"
STUB
chmod +x "$T/bin/sbatch"
cd "$T/w" || exit 1
rm -f shard-*.db
expect_exit 0 "slurm-submit.sh: an array of 3 and a merge" -- env PATH="$T/bin:$PATH" STUB_RC_3=1 "$R/slurm-submit.sh" -n 3 -o all.db a.wl --fs ext4
expect_grep "$T/log" "^sbatch --parsable --array=1-3 .*/slurm-shard.sbatch a.wl --fs ext4\$" "the array is 1-3, one task per shard"
for i in 1 2 3; do
	expect_grep "$T/log" "^run a.wl --fs ext4 -j 4 --shard $i/3 --db shard-$i-of-3.db\$" "task $i runs --shard $i/3 with the task's cores"
done
expect_no_grep "$T/log" "task .* failed" "findings (exit 1) do not fail a task"
expect_grep "$T/log" "^sbatch --parsable --dependency=afterok:101 .*--wrap=.*db merge all.db shard-1-of-3.db shard-2-of-3.db shard-3-of-3.db\$" "the merge waits for the array (afterok) and takes the shards in order"
expect_grep "$T/out" "job array 101 \\(1-3\\).*job 102" "it prints the two jobs"
expect_grep "$R/slurm-shard.sbatch" '^#SBATCH --array=' "the task script says it is an array job"
# shellcheck disable=SC2016 # the script's own text, not expanded
expect_grep "$R/slurm-shard.sbatch" '--shard "\$i/\$n"' "and shards by SLURM_ARRAY_TASK_ID/N"
# shellcheck disable=SC2016
expect_grep "$R/slurm-shard.sbatch" 'i=\$SLURM_ARRAY_TASK_ID' "i is the task id"
expect_exit 2 "slurm-submit.sh without workloads" -- env PATH="$T/bin:$PATH" "$R/slurm-submit.sh" -n 2
unset SLURM_ARRAY_TASK_ID
expect_exit 1 "the task script outside an array says so" -- bash "$R/slurm-shard.sbatch" a.wl
expect_grep "$T/err" "sbatch --array=1-N" "and how to submit it"

#!/usr/bin/env bash
# The known-answer suite: xfstests' power-failure tests translated into
# workloads (tests/known/*.wl), each run on the file systems its source test
# covers ("# fs:" line). Every [expect] line must be kept in every crash
# state after the last persistence op, no universal rule may break, and the
# default models may report nothing LOST. A case that a file system fails
# for a reason found and named says so in its header:
#     # fails FS: real bug | translation: why (and the upstream fix)
# and is then reported as a known failure, still checked to fail the same way
# (so a fixed kernel or a fixed translation shows up). Any other failure
# is run once more on that fs: failing twice fails the suite, failing once
# is reported as such (with the first run's findings). A failure known to
# come and go from run to run is marked
#     # flaky FS: why
# and reported either way without failing the suite.
# A case whose source test mounts a file system with options says so,
#     # mount-opts: f2fs:fsync_mode=strict
# and runs with them (the default models follow: f2fs-strict here).
# CRASHLAB_KNOWN=PATTERN runs only the cases whose name contains it.
. "$(dirname "$0")/../lib.sh"

db="$T/known.db"
q() { sqlite3 -batch -noheader "$db" "$@"; }
table="$T/table"
: >"$table"
# verdict_of RUN FS NEXP: sets result (pass/fail), kept, lost, other, judged
verdict_of() {
	local run=$1 fs=$2 nexp=$3
	v() { q "SELECT count(*) FROM verdicts v JOIN states s ON s.id = v.state_id JOIN fsruns f ON f.id = s.fsrun_id
		 WHERE f.run_id = $run AND f.fs = '$fs' AND $1"; }
	kept=$(v "v.model = 'expect' AND v.verdict = 'kept'")
	lost=$(v "v.model = 'expect' AND v.verdict = 'LOST'")
	# the run's own models (fsruns.models), not every model the judge computed
	other=$(v "((v.verdict = 'LOST' AND v.model <> 'expect' AND instr(',' || f.models || ',', ',' || v.model || ',') > 0)
		OR v.verdict = 'broken')")
	judged=$(q "SELECT count(*) FROM states s JOIN fsruns f ON f.id = s.fsrun_id WHERE f.run_id = $run AND f.fs = '$fs' AND s.judged = 1")
	if [ "$lost" = 0 ] && [ "$other" = 0 ] && [ "$judged" -ge 1 ] && { [ "$nexp" = 0 ] || [ "$kept" -ge "$nexp" ]; }; then
		result=pass
	else
		result=fail
	fi
}
# findings RUN FS: the report's LOST and broken lines of that fs, indented
findings() {
	"$CRASHLAB" report "$1" --db "$db" 2>/dev/null | awk -v fs="$2" '/^== / { p = $2 == fs ":" }
		p && /^(==|states? |   (LOST|broken))/' | head -n 12 | sed 's/^/    | /'
}
ncase=0
for wl in tests/known/*.wl; do
	name=$(basename "$wl" .wl)
	case "$name" in *"${CRASHLAB_KNOWN:-}"*) ;; *) continue ;; esac
	ncase=$((ncase + 1))
	fss=$(sed -n 's/^# fs: *//p' "$wl" | head -n 1)
	if [ -z "$fss" ]; then not_ok "$name: no '# fs:' line"; continue; fi
	list=$(echo "$fss" | tr ' ' ',')
	mo=()
	while read -r opt; do mo+=(--mount-opts "$opt"); done < <(sed -n 's/^# mount-opts: *//p' "$wl")
	"$CRASHLAB" run "$wl" --fs "$list" ${mo[@]+"${mo[@]}"} --db "$db" >"$T/out" 2>"$T/err" </dev/null
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
		not_ok "$name: crashlab run exited $rc"
		tail -n 5 "$T/err" | sed 's/^/    | /'
		continue
	fi
	run=$(q "SELECT max(id) FROM runs")
	for fs in $fss; do
		nexp=$(awk -v fs="$fs" '/^\[expect/ { inx = 1; h = $0; gsub(/[][]/, " ", h); n = split(h, a, " ")
			app = n == 1; for (i = 2; i <= n; i++) if (a[i] == fs) app = 1; next }
			inx && app && NF && $1 !~ /^#/ { c++ } END { print c + 0 }' "$wl")
		verdict_of "$run" "$fs" "$nexp"
		first_run=$run
		retried=""
		if [ "$result" = fail ] && ! grep -qE "^# (fails|flaky) $fs:" "$wl"; then
			# kernels are not deterministic (writeback and checkpoint timing): one more run
			# on this fs tells a one-off from a failure; both are in the log
			first="expect LOST $lost, kept $kept of $nexp per state, other LOST/broken $other, judged states $judged"
			"$CRASHLAB" run "$wl" --fs "$fs" ${mo[@]+"${mo[@]}"} --db "$db" >"$T/out" 2>"$T/err" </dev/null
			run=$(q "SELECT max(id) FROM runs")
			verdict_of "$run" "$fs" "$nexp"
			retried=1
		fi
		known=$(sed -n "s/^# fails $fs: *//p" "$wl" | head -n 1)
		flaky=$(sed -n "s/^# flaky $fs: *//p" "$wl" | head -n 1)
		if [ -n "$flaky" ]; then
			ok "$name on $fs: $result this time; it comes and goes ($flaky)"
			echo "$name $fs flaky-$result" >>"$table"
		elif [ -n "$known" ]; then
			if [ "$result" = fail ]; then
				ok "$name on $fs: fails as its header says ($known)"
				echo "$name $fs known-failure" >>"$table"
			else
				not_ok "$name on $fs: passes now, but its header says it fails ($known): update the header"
				echo "$name $fs pass-unexpected" >>"$table"
			fi
		elif [ "$result" = pass ] && [ -n "$retried" ]; then
			ok "$name on $fs: passed on a second run; the first failed ($first), findings below"
			findings "$first_run" "$fs"
			echo "$name $fs failed-once" >>"$table"
		elif [ "$result" = pass ]; then
			ok "$name on $fs: $kept expectations kept, nothing LOST or broken"
			echo "$name $fs pass" >>"$table"
		else
			not_ok "$name on $fs: expect LOST $lost, kept $kept of $nexp per state, other LOST/broken $other, judged states $judged${retried:+ (twice)}"
			findings "$run" "$fs"
			echo "$name $fs FAIL" >>"$table"
		fi
	done
done
if [ "$ncase" -ge 30 ] || [ -n "${CRASHLAB_KNOWN:-}" ]; then
	ok "the known-answer suite has $ncase cases"
else
	not_ok "the known-answer suite has $ncase cases (at least 30 expected)"
fi
# the case x fs table, for the log: the counts, then every cell that is not a plain pass
awk '{ n[$3]++ } END { for (r in n) printf "# %s: %d\n", r, n[r] }' "$table" | sort
awk '$3 != "pass" { print "# " $1 " on " $2 ": " $3 }' "$table"
expect_db_ok "$db" "the database is sound after every known-answer case"

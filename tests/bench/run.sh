#!/bin/bash
# Runs every benchmark and prints one table.
#
#   tests/bench/run.sh            full run: results in build/bench/results/{results.csv,*.png}
#   tests/bench/run.sh --smoke    `make check`: every benchmark once with tiny sizes, to prove the
#                                 bench code still works; no figure is judged
#
# A benchmark is either a program build/bench/bench_* or a script tests/bench/bench-*.sh. Each
# prints CSV rows `benchmark,metric,value,unit` on stdout (other lines are passed through to the
# log); it gets --smoke in smoke mode. A figure that could not be measured is a row with the value
# `missing` and the reason in the unit column; it is listed, never counted as a failure. Scripts
# may also write extra CSV files for plots into $BENCH_RESULTS. Exit status: non-zero when any
# benchmark failed or printed no row.
#
# Provenance: raw.csv beside results.csv holds every repetition's result with the commit, the
# kernel and the CPU model of the run (lib.sh bench_raw). The programs (micro benchmarks, built
# from the current code by `make bench`) run BENCH_MICRO_REPS times (5; once in smoke mode):
# each run's rows go to raw.csv, and results.csv has each figure's median, its 95 % interval
# (_lo, _hi) and the count (_n). The table of results goes to table.md in the results directory
# (readme-table.sh, which also writes the README's performance table from it).
set -u
cd "$(dirname "$0")/../.." || exit 1

smoke=""
[ "${1:-}" = "--smoke" ] && smoke="--smoke"
results=build/bench/results
[ -n "$smoke" ] && results=build/bench/results-smoke
mkdir -p "$results"
export BENCH_RESULTS="$PWD/$results"
csv="$results/results.csv"
echo "benchmark,metric,value,unit" >"$csv"
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh # the statistics (bench_median_ci) and the run's provenance
BENCH_PROVENANCE=$(bench_provenance)
export BENCH_PROVENANCE
echo "commit,kernel,cpu,benchmark,metric,rep,value,unit,status" >"$results/raw.csv"
# The knobs this run was started with (a partial or shortened run says so in the table).
env | grep -E '^BENCH_[A-Z_]+=' | grep -vE '^BENCH_(RESULTS|PROVENANCE)=' | sort | tr '\n' ' ' >"$results/run.txt"
micro_reps=${BENCH_MICRO_REPS:-5}
[ -n "$smoke" ] && micro_reps=1

failed=""
row='^[A-Za-z0-9_.-]+,[^,]+,([-0-9.eE+]+|missing|PASS|FAIL|INCONCLUSIVE),'
run_one() {
	local name=$1
	shift
	local out rc start
	# BENCH_ONLY: the benchmarks to run (names), for a partial run.
	if [ -n "${BENCH_ONLY:-}" ] && ! [[ " $BENCH_ONLY " == *" $name "* ]]; then
		return
	fi
	echo "--- bench: $name $smoke"
	out=$(mktemp)
	start=$(date +%s)
	if [ "$1" = micro ]; then
		"$@" >"$out" 2>"$results/$name.log"
	else
		"$@" $smoke >"$out" 2>"$results/$name.log"
	fi
	rc=$?
	echo "--- bench: $name took $(($(date +%s) - start)) s"
	grep -E "$row" "$out" >>"$csv"
	grep -vE "$row" "$out" >>"$results/$name.log"
	if [ $rc -ne 0 ] || ! grep -qE "$row" "$out"; then
		echo "--- bench: $name FAILED (exit $rc); log: $results/$name.log"
		echo "$name,run,missing,the benchmark failed (exit $rc; see $name.log)" >>"$csv"
		tail -n 20 "$results/$name.log"
		failed="$failed $name"
	fi
	rm -f "$out"
}

# micro NAME PROGRAM: the program micro_reps times; every run's rows to raw.csv, each figure's
# median, interval and count as rows.
micro() {
	local name=$1 prog=$2 rep out all
	all=$(mktemp)
	for rep in $(seq 1 "$micro_reps"); do
		out=$("$prog" $smoke 2>>"$results/$name.log") || return 1
		grep -vE "$row" <<<"$out" >>"$results/$name.log"
		grep -E "$row" <<<"$out" | awk -F, -v r="$rep" -v p="$BENCH_PROVENANCE" '
			{ print p "," $1 "," $2 "," r "," $3 "," $4 ",ok" }' >>"$results/raw.csv"
		grep -E "$row" <<<"$out" | awk -F, -v r="$rep" '{ print r "," $0 }' >>"$all"
	done
	# One figure per benchmark and metric, in the order of the first run.
	awk -F, '$1 == 1 { print $2 "," $3 "," $5 }' "$all" | while IFS=, read -r b m u; do
		# shellcheck disable=SC2046
		read -r med lo hi n <<<"$(bench_median_ci $(awk -F, -v b="$b" -v m="$m" \
			'$2 == b && $3 == m { print $4 }' "$all"))"
		echo "$b,$m,$med,$u"
		if [ "$n" -gt 1 ]; then
			echo "$b,${m}_lo,$lo,$u"
			echo "$b,${m}_hi,$hi,$u"
		fi
		echo "$b,${m}_n,$n,runs"
	done
	rm -f "$all"
}

# lib.sh's statistics and bookkeeping first (a second, no namespaces): figures made by a broken
# lib would be wrong everywhere.
if ! bash tests/bench/lib-test.sh >"$results/lib-test.log" 2>&1; then
	echo "--- bench: lib-test FAILED"
	cat "$results/lib-test.log"
	failed="$failed lib-test"
fi

for b in build/bench/bench_*; do
	[ -x "$b" ] || continue
	run_one "$(basename "$b")" micro "$(basename "$b")" "$b"
done
for s in tests/bench/bench-*.sh; do
	[ -f "$s" ] || continue
	run_one "$(basename "$s" .sh)" bash "$s"
done

echo
printf '%-22s %-44s %16s  %s\n' benchmark metric value unit
tail -n +2 "$csv" | while IFS=, read -r b m v u; do
	printf '%-22s %-44s %16s  %s\n' "$b" "$m" "$v" "$u"
done
echo
missing=$(grep -c ',missing,' "$csv")
[ "$missing" -gt 0 ] && echo "missing figures: $missing (value 'missing'; the reason is in the unit column)"
# A figure missing for the environment (no second CPU, a load that spoils a run) is reported; a
# side that did the wrong thing (bench-queue's behaviour checks) fails the run, whether its figure
# is missing or one repetition failed that check (status wrong_behaviour in raw.csv, the others
# still making the figure).
wrong=$({
	grep -E ',missing,did not do its job' "$csv" | cut -d, -f1,2
	awk -F, '$NF == "wrong_behaviour" { print $4 "," $5 " (rep " $6 ")" }' "$results/raw.csv"
} | tr '\n' ' ')
[ -n "$wrong" ] && failed="$failed (wrong behaviour: $wrong)"
# A metric is one row: two rows of one name (one benchmark writing two figures under it) would
# leave every reader of results.csv to take one of them for the other.
dups=$(cut -d, -f1,2 "$csv" | sort | uniq -d | head -n 5 | tr '\n' ' ')
[ -n "$dups" ] && failed="$failed (rows named twice: $dups)"
verdicts=$(grep -E ',(PASS|FAIL|INCONCLUSIVE),' "$csv")
if [ -n "$verdicts" ]; then
	echo "goals:"
	echo "$verdicts" | while IFS=, read -r b m v u; do printf '  %-12s %s %s: %s\n' "$v" "$b" "$m" "$u"; done
fi
echo "results: $csv (every repetition: $results/raw.csv; run: $BENCH_PROVENANCE)"
tests/bench/readme-table.sh --print "$results" >"$results/table.md" 2>>"$results/table.log" ||
	echo "--- bench: the table of results failed (see $results/table.log)"

if [ -z "$smoke" ] && command -v gnuplot >/dev/null; then
	for p in tests/bench/plot-*.gp; do
		[ -f "$p" ] || continue
		(cd "$results" && gnuplot "$OLDPWD/$p") 2>>"$results/gnuplot.log" ||
			echo "--- bench: plot $p failed (see $results/gnuplot.log)"
	done
	ls "$results"/*.png 2>/dev/null | sed 's/^/plot: /'
fi

if [ -n "$failed" ]; then
	echo "bench: FAILED:$failed"
	exit 1
fi
echo "bench: ok"

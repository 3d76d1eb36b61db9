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

failed=""
row='^[A-Za-z0-9_.-]+,[^,]+,([-0-9.eE+]+|missing|PASS|FAIL|INCONCLUSIVE),'
run_one() {
	local name=$1
	shift
	local out rc start
	echo "--- bench: $name $smoke"
	out=$(mktemp)
	start=$(date +%s)
	"$@" $smoke >"$out" 2>"$results/$name.log"
	rc=$?
	echo "--- bench: $name took $(($(date +%s) - start)) s"
	grep -E "$row" "$out" >>"$csv"
	grep -vE "$row" "$out" >>"$results/$name.log"
	if [ $rc -ne 0 ] || ! grep -qE "$row" "$out"; then
		echo "--- bench: $name FAILED (exit $rc); log: $results/$name.log"
		tail -n 20 "$results/$name.log"
		failed="$failed $name"
	fi
	rm -f "$out"
}

for b in build/bench/bench_*; do
	[ -x "$b" ] || continue
	run_one "$(basename "$b")" "$b"
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
verdicts=$(grep -E ',(PASS|FAIL|INCONCLUSIVE),' "$csv")
if [ -n "$verdicts" ]; then
	echo "goals:"
	echo "$verdicts" | while IFS=, read -r b m v u; do printf '  %-12s %s %s: %s\n' "$v" "$b" "$m" "$u"; done
fi
echo "results: $csv"

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

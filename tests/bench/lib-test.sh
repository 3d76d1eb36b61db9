#!/bin/bash
# Checks of lib.sh's statistics and bookkeeping that every benchmark relies on (no namespaces,
# under a second): run by tests/bench/run.sh before the benchmarks, in smoke and full runs.
#   - a repetition that failed a check is reported, not dropped: its status in raw.csv, counted
#     in a _failed row, left out of the figure
#   - per-repetition pairs stay aligned when one side failed a repetition
#   - verdicts come out INCONCLUSIVE when the interval straddles the goal
#   - the README's table: headline figures there, every figure in the full file
#   - the queue counters are summed over the workers' queues
# Exit status 0 when every check holds, 1 otherwise (each failure printed).
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
BENCH_NAME=libtest
BENCH_RESULTS=$(mktemp -d)
trap 'rm -rf "$BENCH_RESULTS"' EXIT
BENCH_PROVENANCE="test,test,test"
fails=0
check() { # check WHAT EXPECTED ACTUAL
	if [ "$2" != "$3" ]; then
		echo "lib-test: FAIL $1: expected '$2', got '$3'"
		fails=$((fails + 1))
	fi
}

# A series with a failed repetition (the third): kept as nan, its status in raw.csv.
declare -A ST
for s in ok ok wrong_behaviour ok; do bench_status_add "ST[x,y]" "$s"; done
check "status list" " ok ok wrong_behaviour ok" "${ST[x,y]}"
BENCH_SERIES_STATUS=${ST[x,y]}
out=$(bench_series m ns 10 12 nan 11 2>/dev/null)
BENCH_SERIES_STATUS=""
check "median of the repetitions that passed" "libtest,m,11,ns" "$(grep '^libtest,m,' <<<"$out")"
check "count of the repetitions that passed" "libtest,m_n,3,repetitions" "$(grep '^libtest,m_n,' <<<"$out")"
check "the failed repetition in raw.csv" "test,test,test,libtest,m,3,nan,ns,wrong_behaviour" \
	"$(grep ',m,3,' "$BENCH_RESULTS/raw.csv")"
# shellcheck disable=SC2086 # the status list is word-split on purpose
check "the failed row" "libtest,m_failed,1,repetitions failing a check (raw.csv)" \
	"$(bench_failed_row m ${ST[x,y]} 2>/dev/null)"
check "no failed repetition" "libtest,n_failed,0,repetitions failing a check (raw.csv)" \
	"$(bench_failed_row n ok ok 2>/dev/null)"

# Every repetition failed: the figure is missing, the failures are still in raw.csv.
BENCH_SERIES_STATUS="unanswered"
out=$(bench_series all ns nan 2>/dev/null)
BENCH_SERIES_STATUS=""
check "a series whose every repetition failed" \
	"libtest,all,missing,every repetition failed a check (unanswered)" "$out"
check "its failure in raw.csv" "test,test,test,libtest,all,1,nan,ns,unanswered" \
	"$(grep ',all,1,' "$BENCH_RESULTS/raw.csv")"

# Pairs: side B failed repetition 2; the ratios pair 1-1 and 3-3, never 2-3.
check "aligned pairs" "2.0000 3.0000" "$(bench_ratios "1 5 2" "2 nan 6" | tr '\n' ' ' | sed 's/ $//')"

# Verdicts on intervals.
check "verdict straddling" INCONCLUSIVE "$(bench_verdict g 0.9 1.2 1 5 2>/dev/null | cut -d, -f3)"
check "verdict within" PASS "$(bench_verdict g 0.8 0.95 1 5 2>/dev/null | cut -d, -f3)"
check "verdict beyond" FAIL "$(bench_verdict g 1.1 1.3 1 5 2>/dev/null | cut -d, -f3)"
check "verdict with two repetitions" INCONCLUSIVE "$(bench_verdict g 0.8 0.9 1 2 2>/dev/null | cut -d, -f3)"

# The README's table (readme-table.sh): headline figures only there, every figure in the full
# file, a figure with an interval and no count of its own shown, the goals, the README outside
# its markers untouched.
dir=$BENCH_RESULTS/table
mkdir -p "$dir"
{
	echo "benchmark,metric,value,unit"
	echo "fwd,odata76_added_ns,51.6,ns/packet"
	echo "fwd,odata76_added_ns_lo,-74.6,ns/packet"
	echo "fwd,odata76_added_ns_hi,170.7,ns/packet"
	echo "fwd,odata76_added_ns_n,9,repetitions"
	echo "fwd,odata76_kernel_ns,2093.5,ns/packet"
	echo "fwd,odata76_kernel_ns_n,9,repetitions"
	echo "latency,rate1000_ncf_p99_vs_floor,0.6,x floor"
	echo "latency,rate1000_ncf_p99_vs_floor_lo,0.26,x floor"
	echo "latency,rate1000_ncf_p99_vs_floor_hi,1.24,x floor"
	echo "latency,rate1000_ncf_p99_vs_floor_goal,PASS,at most 1.5"
} >"$dir/results.csv"
printf 'before\n<!-- bench-table:begin -->\nold\n<!-- bench-table:end -->\nafter\n' >"$dir/README.md"
BENCH_TABLE_FULL=$dir/full.md "$(dirname "$0")/readme-table.sh" "$dir" "$dir/README.md" >/dev/null 2>&1
check "headline figure in the README" 1 "$(grep -c '^| fwd | odata76_added_ns | 51.6 | -74.6 - 170.7 | 9 |' "$dir/README.md")"
check "other figures not in the README" 0 "$(grep -c 'odata76_kernel_ns' "$dir/README.md")"
check "other figures in the full table" 1 "$(grep -c '^| fwd | odata76_kernel_ns | 2093.5 |' "$dir/full.md")"
check "a figure with an interval and no count" 1 \
	"$(grep -c '^| latency | rate1000_ncf_p99_vs_floor | 0.6 | 0.26 - 1.24 | - |' "$dir/README.md")"
check "the goal" 1 "$(grep -c '^| latency | rate1000_ncf_p99_vs_floor_goal | PASS |' "$dir/README.md")"
check "the README around the table" "before after 0" \
	"$(head -1 "$dir/README.md") $(tail -1 "$dir/README.md") $(grep -c '^old$' "$dir/README.md")"
# The queues' counters summed over the workers' queues (bench_queue_stats), from the kernel's
# tables as a router namespace shows them (lab_exec replaced: no namespace here). Columns of
# nfnetlink_queue: queue, port id, waiting, copy mode, range, dropped, user dropped, id sequence.
lab_exec() {
	case $3 in
	*nfnetlink_queue) printf '  113  11001     5 2 65531     0     0     1000  1\n  114  11002     7 2 65531     0     0     2000  1\n' ;;
	*netlink) printf '0000 12 11001 00000000 0 0 0 2 3 51\n0000 12 11002 00000000 0 0 0 2 4 52\n0000 0 1 00000000 0 0 0 2 99 53\n' ;;
	esac
}
check "one queue" "1 1000 5 3" "$(bench_queue_stats r1)"
check "two workers' queues summed" "1 3000 12 7" "$(BENCH_QUEUES="113 114" bench_queue_stats r1)"
check "the queues given" "1 2000 7 4" "$(BENCH_QUEUES="113 114" bench_queue_stats r1 114)"
check "a queue not bound" "0 1000 5 3" "$(bench_queue_stats r1 113 115)"
check "no queue bound" "0 0 0 0" "$(bench_queue_stats r1 115)"
check "handled: the id sequence less the socket drops" 10 \
	"$(bench_queue_handled "1 3000 12 7" "1 3015 0 12")"

[ "$fails" = 0 ] && echo "lib-test: ok" && exit 0
exit 1

#!/bin/bash
# Queue path: packets the router handles in user space, pgmrouterd against the minimal accept-all
# NFQUEUE consumer (same interception rules, same queue settings), both pinned to the router CPU
# and fed by a flood on the sender CPU. Interleaved in every repetition. Scenarios:
#   spm            SPMs of 100 sessions (round robin), queued once each before routing: the
#                  accept-all consumer lets the kernel forward both copies (two egress
#                  interfaces); pgmrouterd sends them itself, each with its path NLA rewritten
#   nak            NAKs from a receiver to the router, a new SQN each, for a known session, and
#                  50 ms behind them the source's NCF for each (both queued): pgmrouterd creates
#                  repair state, multicasts an NCF, forwards the NAK upstream; the source's NCF
#                  confirms the state
#   nak_unconfirmed  the same NAKs and no NCF from upstream: each state is also repeated
#                  upstream (NAK_RPT_RTE, 5/s) until NAK_RPT_IVL (2 s) ends it: the worst case
#   rdata_state    RDATA for which repair state exists: first NAK lists (63 SQNs each) from the
#                  receiver and NCF lists from the source seed and confirm one state per SQN
#                  (paced, not measured), then RDATA of those SQNs: pgmrouterd forwards the copy
#                  on the requesting interface and drops the other
#   rdata_nostate  RDATA of a known session with no NAK before: pgmrouterd drops every copy
# Two regimes. Paced: the same offered rate for both consumers, which then wake for one or two
# packets at a time. Burst (SCENARIO_burst): the consumer is stopped while a burst fills the
# queue, then drains it at full speed, reading full batches (two cores cannot offer a steady load
# that saturates a consumer with a core of its own; a stored burst can). Either way the
# consumer's throughput is measured as its capacity: queued packets handled (the kernel's queue
# id sequence less the packets the bound socket could not take) per second of the consumer's own
# CPU time (all threads, user and system, from the scheduler's statistics). The ratio
# pgmrouterd / accept-all per repetition; target >= 0.80 (README). Then instructions per packet
# under callgrind (user space, fixed packet count at a low rate, the measured phase only) and
# where they go.
# Then the nak scenario over IPv6, in an IPv6 lab of its own (LAB_IPV6=1: the receiver's NAKs to
# the router's IPv6 address, the source's NCFs to an IPv6 group, through the ip6 interception
# rules): cases nak_v6 and nak_v6_burst, rows named so (nak_v6_pgmrouterd_ratio, ...), no perf
# or callgrind. Knobs: BENCH_QUEUE_FAMILIES (default "4 6"; "6" runs only the IPv6 part),
# BENCH_QUEUE6_SCENARIOS (default nak), BENCH_QUEUE6_REGIMES (default "paced burst"; smoke
# paced).
#
#   bench-queue.sh [--smoke]
set -u
if [ -z "${BENCH_QUEUE_FAMILY:-}" ]; then
	rc=0
	for fam in ${BENCH_QUEUE_FAMILIES:-4 6}; do
		BENCH_QUEUE_FAMILY=$fam bash "$0" "$@" || rc=1
	done
	exit $rc
fi
[ "$BENCH_QUEUE_FAMILY" = 6 ] && export LAB_IPV6=1
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
bench_begin queue "$@"

SIDES="acceptall pgmrouterd"
# One source's SPMs and NAKs at 20,000/s are far over the default policing (police-spm 1000/s,
# police-nak 500/s per source): both sides would measure the policer's drops, not the queue path.
BENCH_NO_POLICE=1
# BENCH_QUEUE_AB_BIN=FILE: another pgmrouterd build as a third side, pgmrouterd_b, interleaved
# with the other two in every repetition (an A/B of a change under the same conditions; the
# machine's drift between separate runs is larger than most changes).
AB_BIN=${BENCH_QUEUE_AB_BIN:-}
if [ -n "$AB_BIN" ]; then
	[ -x "$AB_BIN" ] || lab_die "BENCH_QUEUE_AB_BIN: $AB_BIN is not an executable"
	SIDES="$SIDES pgmrouterd_b"
fi
SCENARIOS=${BENCH_QUEUE_SCENARIOS:-"spm nak nak_unconfirmed rdata_state rdata_nostate"}
SECONDS_PER_RUN=3
OFFER_RATE=20000 # packets per second sent in the measured phase
STATE_SQNS=63000 # rdata_state: SQNs with repair state (a multiple of 63)
CG_PACKETS=3000	  # callgrind: packets per measured phase
CG_RATE=1000	  # and their rate: low enough for the slowest consumer under valgrind
BURSTS=10	  # burst regime: bursts per measured phase
BURST_QUEUED=3600 # and queued packets per burst (the queue holds 4,096)
if [ "$BENCH_SMOKE" = 1 ]; then
	SECONDS_PER_RUN=0.5
	BURSTS=2
	BURST_QUEUED=600
	STATE_SQNS=6300
	CG_PACKETS=200
	CG_SCENARIOS="nak"
fi
CG_SCENARIOS=${CG_SCENARIOS:-$SCENARIOS}
# The regimes: paced (the offered rate, the consumer mostly idle) and burst (saturated).
REGIMES=${BENCH_QUEUE_REGIMES:-"paced burst"}
SFX="" # the rows' family: "" IPv4, _v6
GROUP=239.192.0.1
if [ "$BENCH_QUEUE_FAMILY" = 6 ]; then
	SFX=_v6
	GROUP=ff0e::8000:1
	lab_groups "$GROUP"
	SCENARIOS=${BENCH_QUEUE6_SCENARIOS:-nak}
	REGIMES=${BENCH_QUEUE6_REGIMES:-"paced burst"}
	[ "$BENCH_SMOKE" = 1 ] && REGIMES=${BENCH_QUEUE6_REGIMES:-paced}
	CG_SCENARIOS=""
	PERF_SCENARIOS=""
fi
CASES=""
for regime in $REGIMES; do
	for scenario in $SCENARIOS; do
		case $regime in
		paced) CASES="$CASES $scenario$SFX" ;;
		burst) CASES="$CASES ${scenario}${SFX}_burst" ;;
		*) lab_die "BENCH_QUEUE_REGIMES: no regime $regime (paced, burst)" ;;
		esac
	done
done

bench_lab_init "queue${SFX:+6}"
bench_topo_fanout 1 1
bench_steer_lan_rx r1
SRC=$TOPO_SOURCE_ADDR
RECV=$(lab_addr a1 eth0)
ROUTER_A=$(lab_addr r1 eth1) # the router's address on the receivers' LAN: where NAKs go
summary="$BENCH_RESULTS/queue-summary.csv" # for plot-queue.gp (IPv4's)
[ -n "$SFX" ] && summary=/dev/null
echo "scenario,acceptall_capacity,pgmrouterd_capacity,ratio,acceptall_instructions,pgmrouterd_instructions" >"$summary"
runs="$BENCH_RESULTS/queue${SFX:+6}-runs.csv"
echo "scenario,rep,side,capacity_pps,ns_per_packet,handled,matched,cpu_share,seconds,status" >"$runs"
GSI=0

# prepare SCENARIO: everything before the measured phase.
prepare() {
	case $1 in
	spm) ;;
	nak | nak_unconfirmed | rdata_nostate) bench_queue_seed_session "$GSI" ;;
	rdata_state)
		bench_queue_seed_session "$GSI"
		bench_queue_seed_state "$GSI" "$STATE_SQNS"
		;;
	esac
	bench_queue_drain r1
}

# The measured phase's limits: a duration, or for rdata_state the SQNs that have state.
limits() {
	if [ "$1" = rdata_state ]; then
		echo "-n $STATE_SQNS -T $(awk -v s="$SECONDS_PER_RUN" 'BEGIN { print s * 4 }')"
	else
		echo "-T $SECONDS_PER_RUN"
	fi
}

# side_up SIDE / side_down SIDE: pgmrouterd_b is pgmrouterd run from BENCH_QUEUE_AB_BIN.
side_up() {
	if [ "$1" = pgmrouterd_b ]; then
		BENCH_PGMROUTERD_BIN=$AB_BIN bench_side_up pgmrouterd r1
	else
		bench_side_up "$1" r1
	fi
}

side_down() {
	bench_side_down "${1%_b}" r1
}

# burst SCENARIO PID: the measured phase as BURSTS bursts, each queued whole while the consumer
# is stopped (SIGSTOP), then drained by it at full speed (SIGCONT): the consumer's capacity when
# it is saturated, with full receive batches and warm caches. A burst is BURST_QUEUED queued
# packets, within the queue's 4,096 (more would pass unassisted, fail-open). Prints the floods'
# sent= total and seconds= (wall time).
burst() {
	local scenario=$1 pid=$2 sent=0 t0 t1 out per=$BURST_QUEUED b
	# a NAK brings the source's NCF with it: two queued packets
	[ "$scenario" = nak ] && per=$((BURST_QUEUED / 2))
	t0=$(date +%s.%N)
	for b in $(seq 0 $((BURSTS - 1))); do
		kill -STOP "$pid"
		# each burst's sequence numbers follow the last burst's
		out=$(bench_queue_flood "$scenario" "$GSI" -n "$per" -r 0 --sqn-start $((1 + b * per)) --spm-sqn $((b * per)))
		sent=$((sent + $(lab_kv sent "$out")))
		bench_queue_settle r1 # queued once the queue length holds still
		kill -CONT "$pid"
		bench_queue_drain r1
	done
	t1=$(date +%s.%N)
	echo "sent=$sent seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
}

# A case is a scenario in a regime: SCENARIO (paced) or SCENARIO_burst (over IPv6: SCENARIO_v6,
# SCENARIO_v6_burst).
case_scenario() {
	local c=${1%_burst}
	echo "${c%_v6}"
}

# measured_phase CASE PID: the measured phase's traffic, paced or in bursts.
measured_phase() {
	local scenario
	scenario=$(case_scenario "$1")
	if [ "$scenario" != "$1" ]; then
		burst "$scenario" "$2"
	else
		# shellcheck disable=SC2046
		bench_queue_flood "$scenario" "$GSI" -r "$OFFER_RATE" $(limits "$scenario")
	fi
}

declare -A PPS NS MISSING ST WRONG
# failed_rep CASE SIDE REP CHECK: a repetition that failed CHECK keeps its place (nan: the pairs
# of the ratio stay aligned) and its status.
failed_rep() {
	PPS[$1,$2]="${PPS[$1,$2]:-} nan"
	NS[$1,$2]="${NS[$1,$2]:-} nan"
	bench_status_add "ST[$1,$2]" "$4"
	echo "$1,$3,$2,nan,nan,,,,,$4" >>"$runs"
}

run_one() {
	local case=$1 rep=$2 side=$3 scenario q0 q1 m0 m1 c0 c1 s0 s1 out secs n pid cap ns share problem
	scenario=$(case_scenario "$case")
	GSI=$((GSI + 1))
	if ! side_up "$side"; then
		MISSING[$side]=$BENCH_SIDE_REASON
		return
	fi
	pid=${BENCH_SIDE_PID[r1]}
	prepare "$scenario"
	bench_lan_settle a
	lab_counts_reset a
	lab_counts_reset b
	lab_counts_reset src
	q0=$(bench_queue_stats r1)
	m0=$(bench_rule_matches r1)
	s0=$(bench_softnet_drops)
	c0=$(bench_cpu_ns "$pid")
	out=$(measured_phase "$case" "$pid")
	bench_queue_drain r1
	c1=$(bench_cpu_ns "$pid")
	s1=$(bench_softnet_drops)
	q1=$(bench_queue_stats r1)
	m1=$(bench_rule_matches r1)
	secs=$(lab_kv seconds "$out")
	n=$(bench_queue_handled "$q0" "$q1")
	# Packets accepted unassisted (fail-open), packets the kernel dropped on a full input
	# backlog, and 1 % more are allowed for.
	problem=$(bench_queue_assist_problem "$scenario" "${side%_b}" "$(lab_kv sent "$out")" \
		$((m1 - m0 - n + s1 - s0 + $(lab_kv sent "$out") / 100 + 1)))
	side_down "$side"
	if [ -z "$secs" ] || [ "$(lab_kv sent "$out")" = 0 ] || [ "$n" -le 0 ]; then
		bench_log "$case rep $rep $side: FAILED CHECK nothing_measured: $out (handled $n)"
		failed_rep "$case" "$side" "$rep" nothing_measured
		return
	fi
	if [ -n "$problem" ]; then
		# Not the work the figure is meant to price: this repetition gives no figure; it is
		# reported (raw.csv, the _failed row), and the others still count.
		bench_log "$case rep $rep $side: FAILED CHECK wrong_behaviour: $problem"
		WRONG[$case,$side]="did not do its job: $problem (rep $rep)"
		failed_rep "$case" "$side" "$rep" wrong_behaviour
		return
	fi
	bench_status_add "ST[$case,$side]" ok
	cap=$(bench_div "$n" "$((c1 - c0))e-9" 0)
	ns=$(bench_div "$((c1 - c0))" "$n" 0)
	share=$(bench_div "$((c1 - c0))" "${secs}e9" 3)
	PPS[$case,$side]="${PPS[$case,$side]:-} $cap"
	NS[$case,$side]="${NS[$case,$side]:-} $ns"
	echo "$case,$rep,$side,$cap,$ns,$n,$((m1 - m0)),$share,$secs,ok" >>"$runs"
	bench_log "$case rep $rep $side: sent $(lab_kv sent "$out") in ${secs}s; queue rules" \
		"matched $((m1 - m0)), handled $n; consumer CPU $((c1 - c0)) ns (share $share):" \
		"$ns ns/packet, capacity $cap packets per CPU-second"
}

declare -A CAP_MED
# why_missing CASE SIDE: the reason SIDE has no figure in CASE, or nothing.
why_missing() {
	echo "${MISSING[$2]:-${MISSING[$1,$2]:-}}"
}

for case in $CASES; do
	for rep in $(seq 1 "$BENCH_REPS"); do
		# the order rotates from one repetition to the next
		set -- $SIDES
		for _ in $(seq 1 $(((rep - 1) % $#))); do
			set -- "${@:2}" "$1"
		done
		for side in "$@"; do
			[ -n "$(why_missing "$case" "$side")" ] && continue
			run_one "$case" "$rep" "$side"
		done
	done
	for side in $SIDES; do
		if [ -n "$(why_missing "$case" "$side")" ]; then
			bench_missing "${case}_${side}_capacity" "$(why_missing "$case" "$side")"
			continue
		fi
		BENCH_SERIES_STATUS=${ST[$case,$side]:-}
		bench_series "${case}_${side}_capacity" "packets/CPU-s" ${PPS[$case,$side]:-}
		bench_series "${case}_${side}_cpu" "ns/packet" ${NS[$case,$side]:-}
		BENCH_SERIES_STATUS=""
		bench_failed_row "${case}_${side}" ${ST[$case,$side]:-}
		[ -n "${WRONG[$case,$side]:-}" ] && bench_log "$case $side: last failed check: ${WRONG[$case,$side]}"
	done
	if [ -n "$AB_BIN" ] && [ -z "$(why_missing "$case" acceptall)$(why_missing "$case" pgmrouterd_b)" ]; then
		# shellcheck disable=SC2046
		bench_series "${case}_pgmrouterd_b_ratio" "x accept-all" \
			$(bench_ratios "${PPS[$case,acceptall]:-}" "${PPS[$case,pgmrouterd_b]:-}")
	fi
	if [ -z "$(why_missing "$case" acceptall)$(why_missing "$case" pgmrouterd)" ]; then
		# shellcheck disable=SC2046
		bench_series "${case}_pgmrouterd_ratio" "x accept-all" \
			$(bench_ratios "${PPS[$case,acceptall]:-}" "${PPS[$case,pgmrouterd]:-}")
		ratios=$(bench_ratios "${PPS[$case,acceptall]:-}" "${PPS[$case,pgmrouterd]:-}")
		# shellcheck disable=SC2086
		CAP_MED[$case]="$(bench_stats ${PPS[$case,acceptall]:-} | cut -d' ' -f1),$(bench_stats ${PPS[$case,pgmrouterd]:-} | cut -d' ' -f1),$(bench_stats $ratios | cut -d' ' -f1)"
	else
		bench_missing "${case}_pgmrouterd_ratio" "a side has no figure (see above)"
	fi
done

# Where the CPU goes (perf) ---------------------------------------------------------------------

# perf_one SCENARIO SIDE: the measured phase once more, at the offered rate, with the side's
# process sampled by perf (cpu-clock, so no hardware counters are needed; kernel call chains).
# Rows: user-space and kernel microseconds per queued packet. The report, per packet: the top
# functions by their own samples, and the kernel's time by system call (sending, receiving,
# verdicts, waiting), to $BENCH_RESULTS/queue-perf-*.txt. Not the capacity figure: sampling
# costs the sampled process a little.
perf_one() {
	local scenario=$1 side=$2 data report pid perf_pid q0 q1 n user kernel
	data="$BENCH_RESULTS/queue-perf-$scenario-$side.data"
	report="$BENCH_RESULTS/queue-perf-$scenario-$side.txt"
	rm -f "$data"
	GSI=$((GSI + 1))
	if ! side_up "$side"; then
		bench_missing "perf_${scenario}_${side}_user_us" "$BENCH_SIDE_REASON"
		return
	fi
	pid=${BENCH_SIDE_PID[r1]}
	prepare "$scenario"
	q0=$(bench_queue_stats r1)
	perf record -q -e cpu-clock -F "$PERF_FREQ" -g -p "$pid" -o "$data" >/dev/null 2>&1 &
	perf_pid=$!
	sleep 0.5 # attached
	measured_phase "$scenario" "$pid" >/dev/null
	bench_queue_drain r1
	kill -INT "$perf_pid" 2>/dev/null
	wait "$perf_pid" 2>/dev/null
	q1=$(bench_queue_stats r1)
	side_down "$side"
	n=$(bench_queue_handled "$q0" "$q1")
	read -r user kernel < <(perf report -i "$data" --no-children --sort dso -g none -q -n \
		2>/dev/null | awk '$3 ~ /^\[kernel/ { k += $2; next } $2 ~ /^[0-9]+$/ { u += $2 }
			END { print u + 0, k + 0 }')
	if [ "$n" -le 0 ] || [ "$((user + kernel))" -eq 0 ]; then
		bench_missing "perf_${scenario}_${side}_user_us" "no perf samples (handled $n)"
		return
	fi
	# samples / frequency = seconds on the CPU
	bench_row "perf_${scenario}_${side}_user_us" \
		"$(bench_div "$user" "$((PERF_FREQ * n))e-6" 2)" "us/packet (user space)"
	bench_row "perf_${scenario}_${side}_kernel_us" \
		"$(bench_div "$kernel" "$((PERF_FREQ * n))e-6" 2)" "us/packet (kernel)"
	{
		echo "# $scenario, $side: $n queued packets at $OFFER_RATE/s; $user user-space and" \
			"$kernel kernel samples at $PERF_FREQ Hz; microseconds per packet"
		echo "# by function (own samples):"
		perf report -i "$data" --no-children --sort dso,sym -g none -q -n 2>/dev/null |
			awk -v f="$PERF_FREQ" -v n="$n" 'NF >= 4 && $2 ~ /^[0-9]+$/ {
				fn = $0; sub(/^ *[0-9.]+% +[0-9]+ +/, "", fn)
				printf "%8.3f  %s\n", $2 / f / n * 1e6, fn }' | head -n 15
		echo "# kernel, by system call (samples under it):"
		perf report -i "$data" --children --sort sym -g none -q -n 2>/dev/null |
			awk -v f="$PERF_FREQ" -v n="$n" -v t="$((user + kernel))" \
				'$5 ~ /^__x64_sys_|^handle_softirqs$/ {
				pct = $1; sub(/%/, "", pct)
				printf "%8.3f  %s\n", pct / 100 * t / f / n * 1e6, $5 }' | head -n 8
	} >"$report"
	[ "${BENCH_KEEP_PERF:-0}" = 1 ] || rm -f "$data"
	sed 's/^/    /' "$report" >&2
}

PERF_FREQ=2999
PERF_SCENARIOS=${PERF_SCENARIOS-$SCENARIOS}
[ "$BENCH_SMOKE" = 1 ] && [ -z "$SFX" ] && PERF_SCENARIOS="nak"
if [ -z "$PERF_SCENARIOS" ]; then
	: # none (the IPv6 part)
elif ! command -v perf >/dev/null || ! perf record -q -e cpu-clock -o /dev/null true >/dev/null 2>&1; then
	bench_missing perf "perf (linux-perf) not installed or cannot sample here"
else
	for scenario in $PERF_SCENARIOS; do
		for side in $SIDES; do
			perf_one "$scenario" "$side"
		done
	done
fi

# Instructions per packet (callgrind) ----------------------------------------------------------

# callgrind_one SCENARIO SIDE: the measured phase, CG_PACKETS packets at CG_RATE, under
# callgrind with instrumentation on only during it. Rows: instructions per queued packet, and
# the top functions by their own (exclusive) instructions, to $BENCH_RESULTS/queue-callgrind-*.
callgrind_one() {
	local scenario=$1 side=$2 out q0 q1 n pid total report
	out="$BENCH_RESULTS/queue-callgrind-$scenario-$side.out"
	report="$BENCH_RESULTS/queue-callgrind-$scenario-$side.txt"
	rm -f "$out"
	GSI=$((GSI + 1))
	BENCH_SIDE_WRAPPER="valgrind --tool=callgrind --callgrind-out-file=$out --instr-atstart=no"
	BENCH_SIDE_START_TIMEOUT=60
	if ! side_up "$side"; then
		BENCH_SIDE_WRAPPER=""
		bench_missing "callgrind_${scenario}_${side}_instructions" "$BENCH_SIDE_REASON"
		return
	fi
	BENCH_SIDE_WRAPPER=""
	BENCH_SIDE_START_TIMEOUT=10
	pid=${BENCH_SIDE_PID[r1]}
	local saved=$STATE_SQNS
	STATE_SQNS=$(((CG_PACKETS + 62) / 63 * 63))
	prepare "$scenario"
	q0=$(bench_queue_stats r1)
	callgrind_control -i on "$pid" >/dev/null 2>&1
	bench_queue_flood "$scenario" "$GSI" -n "$CG_PACKETS" -r "$CG_RATE" >/dev/null
	bench_queue_drain r1
	sleep 0.2
	q1=$(bench_queue_stats r1)
	callgrind_control -i off "$pid" >/dev/null 2>&1
	STATE_SQNS=$saved
	side_down "$side"
	n=$(bench_queue_handled "$q0" "$q1")
	lab_wait 10 "callgrind output" test -s "$out"
	total=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
	if [ -z "$total" ] || [ "$n" -le 0 ]; then
		bench_missing "callgrind_${scenario}_${side}_instructions" "no callgrind profile (handled $n)"
		return
	fi
	bench_row "callgrind_${scenario}_${side}_instructions" "$(bench_div "$total" "$n" 0)" \
		"instructions/packet"
	CG_TOTAL[$scenario,$side]=$(bench_div "$total" "$n" 1)
	# The daemon's own cost of a packet: its queue callback (on_nfq_packet) with all it calls,
	# without the cost of a wakeup (epoll, recvmmsg, the verdict and send flushes, the timer),
	# which a packet shares with however many the wakeup found: that sharing depends on timing,
	# the callback's cost does not. The A/B of a change to the packet path reads this row.
	# Inlined code is listed under its own file, so every on_nfq_packet entry is summed (link-time
	# optimisation names a local function on_nfq_packet.lto_priv.N); run
	# from / so that callgrind_annotate keeps every path whole (it shortens those under the
	# current directory, and splits a function's entries when it does).
	if [ "$side" != acceptall ]; then
		local cb
		cb=$(cd / && callgrind_annotate --inclusive=yes --auto=no "$out" 2>/dev/null |
			awk '{ for (i = 2; i <= NF; i++) if ($i ~ /:on_nfq_packet(\.lto_priv\.[0-9]+)?$/) {
					gsub(",", "", $1); s += $1; n++ } }
				END { if (n) print s }')
		if [ -n "$cb" ]; then
			bench_row "callgrind_${scenario}_${side}_callback_instructions" \
				"$(bench_div "$cb" "$n" 0)" "instructions/packet"
		else
			bench_missing "callgrind_${scenario}_${side}_callback_instructions" \
				"no on_nfq_packet in the profile"
		fi
	fi
	# The top functions by exclusive cost, per packet.
	{
		echo "# $scenario, $side: $n queued packets at $CG_RATE/s, $total instructions" \
			"($(bench_div "$total" "$n" 0) per packet); exclusive cost per packet"
		callgrind_annotate --inclusive=no "$out" 2>/dev/null |
			awk -v n="$n" '/^ *[0-9,]+ +\(/ && !/PROGRAM TOTALS/ {
				ir = $1; gsub(",", "", ir); fn = $0
				sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", fn); sub(/ \[.*$/, "", fn)
				printf "%10.1f  %s\n", ir / n, fn
			}' | head -n 15
	} >"$report"
	sed 's/^/    /' "$report" >&2
}

declare -A CG_TOTAL
if [ -z "$CG_SCENARIOS" ]; then
	: # none (the IPv6 part)
elif ! command -v callgrind_control >/dev/null; then
	bench_missing callgrind "valgrind (callgrind) not installed"
else
	for scenario in $CG_SCENARIOS; do
		for side in $SIDES; do
			callgrind_one "$scenario" "$side"
		done
		if [ -n "${CG_TOTAL[$scenario,acceptall]:-}" ] && [ -n "${CG_TOTAL[$scenario,pgmrouterd]:-}" ]; then
			bench_row "callgrind_${scenario}_pgmrouterd_cost_ratio" \
				"$(bench_div "${CG_TOTAL[$scenario,pgmrouterd]}" "${CG_TOTAL[$scenario,acceptall]}" 2)" \
				"x accept-all"
		fi
	done
fi

for case in $CASES; do
	echo "$case,${CAP_MED[$case]:-nan,nan,nan},${CG_TOTAL[$case,acceptall]:-nan},${CG_TOTAL[$case,pgmrouterd]:-nan}" >>"$summary"
done

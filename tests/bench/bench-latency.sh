#!/bin/bash
# Latency: NAK in to NCF out at pgmrouterd, from packet time stamps. A receiver sends NAKs (a new
# SQN each, for a session the router knows) at a fixed rate; the source confirms each 50 ms
# later, as a source would. A capture on the receivers' LAN sees each NAK enter and the router's
# NCF leave; NCF and NAK are matched by TSI and SQN (pgm-pcapstat). Baseline in the same run: the
# same NAKs sent through the router to the source by plain kernel forwarding, timed from the
# receivers' LAN to the source's LAN (one forwarding hop through the namespace, the least a
# router can add). The floor in the same run: nfq-ncffloor, a minimal consumer on the daemon's
# queue settings and rules that answers each NAK at once with one NCF, the least any user-space
# network element can do. Two offered rates, and 10, 50 and 90 % of pgmrouterd's NAK ceiling
# from bench-ceiling in the same run (rows load{P}_...); median and 99th percentile of every
# run; the ratios
# pgmrouterd / kernel per repetition; pgmrouterd's p50, p99 and p99.9 against the floor's with a
# 95 % interval, and the goal "p99 at most 1.5 x the floor's" judged on it; at 50 % of the
# ceiling the goal "pgmrouterd's p99 at most 50 us".
#
#   bench-latency.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# Delays are measured here: the router is not pinned. On a shared two-core machine a router
# pinned to one CPU waits whenever other work holds that CPU, although the other may be idle
# (measured: median 80 us and p90 2 ms pinned, 45 us and 70 us not).
BENCH_PIN_ROUTER=0
# One receiver's 1,000 and 10,000 NAKs/s (and the source's NCFs) are over the default policing
# (500/s per source): every side without it, so the delays are the consumers'.
BENCH_NO_POLICE=1
bench_begin latency "$@"

SIDES="kernel floor pgmrouterd"
# BENCH_LATENCY_AB_BIN: a second pgmrouterd build as a fourth side, pgmrouterd_b, in the same
# rotation, with its own ratios to the floor (an A/B of a change under the same conditions).
[ -n "${BENCH_LATENCY_AB_BIN:-}" ] && SIDES="$SIDES pgmrouterd_b"
NSIDES=$(echo "$SIDES" | wc -w)
FLOOR_GOAL=1.5 # pgmrouterd p99 / floor p99
RATES=${BENCH_LATENCY_RATES:-"1000 10000"}
SECONDS_PER_RUN=2
# Loads: shares (per cent) of pgmrouterd's NAK ceiling measured by bench-ceiling in the same
# run (its ceiling-summary.csv; BENCH_LATENCY_NAK_CEILING=N NAKs/s instead), with the goal
# "p99 at 50 % at most LOAD_GOAL_US".
LOADS=${BENCH_LATENCY_LOADS:-"10 50 90"}
LOAD_GOAL_US=50
ceilings="$BENCH_RESULTS/ceiling-summary.csv"
# (written in this run: after run.sh's run.txt, when run.sh runs this)
[ -e "$BENCH_RESULTS/run.txt" ] && ! [ "$ceilings" -nt "$BENCH_RESULTS/run.txt" ] && ceilings=/dev/null
NAK_CEILING=${BENCH_LATENCY_NAK_CEILING:-$(awk -F, '$1 == "nak" && $3 ~ /^[0-9.]+$/ && $3 > 0 { printf "%d", $3 }' \
	"$ceilings" 2>/dev/null)}
if [ "$BENCH_SMOKE" = 1 ]; then
	RATES="1000"
	LOADS="50"
	SECONDS_PER_RUN=0.3
fi
# Cases TAG:RATE: rows rate{R}_... at the fixed rates, load{P}_... at the loads.
# In smoke mode the load case replaces the fixed rate when there is a ceiling.
CASES=""
[ "$BENCH_SMOKE" = 1 ] && [ -n "$NAK_CEILING" ] && RATES=""
for r in $RATES; do CASES="$CASES rate$r:$r"; done
if [ -n "$NAK_CEILING" ]; then
	for p in $LOADS; do CASES="$CASES load$p:$((NAK_CEILING * p / 100))"; done
	bench_row nak_ceiling "$NAK_CEILING" "NAKs/s: pgmrouterd's (bench-ceiling; the loads' 100 %)"
else
	bench_missing nak_ceiling "no NAK ceiling in this run (bench-ceiling; BENCH_LATENCY_NAK_CEILING)"
fi

bench_lab_init lat
bench_topo_fanout 1 1
SRC=$TOPO_SOURCE_ADDR
GROUP=239.192.0.1
RECV=$(lab_addr a1 eth0)
ROUTER_A=$(lab_addr r1 eth1)
rm -f "$BENCH_RESULTS"/latency-pooled-*.txt
runs="$BENCH_RESULTS/latency-runs.csv"
echo "rate,side,rep,naks,matched,median_us,p90_us,p99_us,max_us" >"$runs"
GSI=200

capture() { # capture LAN FILE: starts dumpcap on the LAN's bridge; pid in LAB_PID
	lab_spawn "lan:$1" "$LAB_DIR/dumpcap.$1.log" dumpcap -q -i br0 -f "ip proto 113" -w "$2"
	lab_wait 10 "capture on $1" test -s "$2"
}

declare -A MED P99 MISSING Q50 Q99 Q999 ST
add() { MED[$1]="${MED[$1]:-} ${2:-nan}"; P99[$1]="${P99[$1]:-} ${3:-nan}"; }
addq() { Q50[$1]="${Q50[$1]:-} $2"; Q99[$1]="${Q99[$1]:-} $3"; Q999[$1]="${Q999[$1]:-} $4"; }

run_one() {
	local rate=$1 side=$2 rep=$3 fa fs ca cs out stat dst ncf_pid cost pid
	GSI=$((GSI + 1))
	if ! bench_side_up "$side" r1; then
		MISSING[$side]=$BENCH_SIDE_REASON
		return
	fi
	bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm -n 3 -r 100 --gsi-base "$GSI" \
		--spm-trail 0 --spm-lead 100000000 >/dev/null
	fa="$LAB_DIR/lat-a.pcapng"
	fs="$LAB_DIR/lat-src.pcapng"
	rm -f "$fa" "$fs"
	capture a "$fa"
	ca=$LAB_PID
	capture src "$fs"
	cs=$LAB_PID
	# pgmrouterd: NAKs to the router, which answers on the LAN. kernel: NAKs routed through
	# to the source.
	dst=$ROUTER_A
	[ "$side" = kernel ] && dst=$SRC
	(
		sleep 0.05
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m ncf --sqn-start 1 --gsi-base "$GSI" \
			-r "$rate" -T "$SECONDS_PER_RUN" >/dev/null
	) &
	ncf_pid=$!
	out=$(bench_flood a1 -s "$RECV" -d "$dst" -m nak --sqn-start 1 --gsi-base "$GSI" \
		--nla-src "$SRC" --nla-grp "$GROUP" -r "$rate" -T "$SECONDS_PER_RUN")
	wait "$ncf_pid"
	bench_lan_settle a
	lab_capture_stop "$ca"
	lab_capture_stop "$cs"
	# the consumer's wakeups and CPU time over the run (its start included): what it does per NAK
	cost=""
	pid=${BENCH_SIDE_PID[r1]:-}
	if [ -n "$pid" ]; then
		cost="wakeups=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")"
		cost="$cost preempted=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")"
		cost="$cost cpu_ms=$(($(bench_cpu_ns "$pid") / 1000000))"
	fi
	bench_side_down "$side" r1
	if [ "$side" = kernel ]; then
		stat=$("$BENCH_BIN/pgm-pcapstat" --from nak@1 --to nak@2 \
			--csv "$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv" "$fa" "$fs")
	else
		stat=$("$BENCH_BIN/pgm-pcapstat" --from nak --to ncf \
			--csv "$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv" "$fa")
	fi
	rm -f "$fa" "$fs"
	bench_log "$ct ($rate/s) $side rep $rep: $(lab_kv sent "$out") NAKs sent; $stat${cost:+ $cost}"
	echo "$rate,$side,$rep,$(lab_kv sent "$out"),$(lab_kv matched "$stat"),$(lab_kv median_us "$stat"),$(lab_kv p90_us "$stat"),$(lab_kv p99_us "$stat"),$(lab_kv max_us "$stat")" >>"$runs"
	# Every NAK must be answered (NCF) or forwarded: a run with NAKs left unanswered would
	# time only the easy ones.
	if [ "$(lab_kv matched "$stat")" -lt $(($(lab_kv sent "$out") * 99 / 100)) ]; then
		bench_log "$ct ($rate/s) $side rep $rep: only $(lab_kv matched "$stat") of" \
			"$(lab_kv sent "$out") NAKs answered; no figure"
		MISSING[$ct,$side]="$(lab_kv matched "$stat") of $(lab_kv sent "$out") NAKs answered (rep $rep)"
		bench_status_add "ST[$ct,$side]" unanswered
		add "$ct,$side" nan nan
		addq "$ct,$side" nan nan nan
		rm -f "$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv"
		return
	fi
	bench_status_add "ST[$ct,$side]" ok
	add "$ct,$side" "$(lab_kv median_us "$stat")" "$(lab_kv p99_us "$stat")"
	# shellcheck disable=SC2046
	addq "$ct,$side" $(awk -F, 'NR > 1 { print $4 }' \
		"$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv" | bench_quantiles /dev/stdin)
	# Every delay of the (rate, side), pooled over the repetitions, for the distribution.
	awk -F, 'NR > 1 { print $4 }' "$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv" \
		>>"$BENCH_RESULTS/latency-pooled-$ct-$side.txt"
	rm -f "$BENCH_RESULTS/latency-$ct-$side-rep$rep.csv"
}

for c in $CASES; do
	ct=${c%%:*}
	rate=${c#*:}
	for rep in $(seq 1 "$BENCH_REPS"); do
		# the order rotates: kernel floor pgmrouterd, floor pgmrouterd kernel, ...
		# shellcheck disable=SC2086
		set -- $SIDES $SIDES
		shift $(((rep - 1) % NSIDES))
		for side in "${@:1:$NSIDES}"; do
			[ -n "${MISSING[$side]:-}" ] && continue
			run_one "$rate" "$side" "$rep"
		done
	done
	for side in $SIDES; do
		what=ncf
		[ "$side" = kernel ] && what=forward
		[ "$side" = floor ] && what=floorncf
		reason=${MISSING[$side]:-}
		if [ -n "$reason" ]; then
			bench_missing "${ct}_${side}_${what}_median" "$reason"
			continue
		fi
		[ -n "${MISSING[$ct,$side]:-}" ] && bench_log "$ct ($rate/s) $side: ${MISSING[$ct,$side]}"
		# A run with NAKs unanswered keeps its place as nan, its status "unanswered" in raw.csv
		# and the _failed row.
		BENCH_SERIES_STATUS=${ST[$ct,$side]:-}
		bench_series "${ct}_${side}_${what}_median" us ${MED[$ct,$side]:-}
		bench_series "${ct}_${side}_${what}_p99" us ${P99[$ct,$side]:-}
		bench_series "${ct}_${side}_${what}_p999" us ${Q999[$ct,$side]:-}
		BENCH_SERIES_STATUS=""
		bench_failed_row "${ct}_${side}" ${ST[$ct,$side]:-}
	done
	# pgmrouterd against the floor: per-repetition ratios of each quantile, their geometric mean
	# and its 95 % bootstrap interval over the repetitions.
	for side in pgmrouterd pgmrouterd_b; do
		case " $SIDES " in *" $side "*) ;; *) continue ;; esac
		tag=ncf
		[ "$side" = pgmrouterd_b ] && tag=ncf_b
		for m in p50 p99 p999; do
			case $m in
			p50) qa=${Q50[$ct,floor]:-} qb=${Q50[$ct,$side]:-} ;;
			p99) qa=${Q99[$ct,floor]:-} qb=${Q99[$ct,$side]:-} ;;
			p999) qa=${Q999[$ct,floor]:-} qb=${Q999[$ct,$side]:-} ;;
			esac
			read -r est lo hi n <<<"$(bench_ratio_ci "$qa" "$qb")"
			if [ "$n" = 0 ]; then
				bench_missing "${ct}_${tag}_${m}_vs_floor" \
					"${MISSING[$side]:-${MISSING[floor]:-${MISSING[$ct,$side]:-${MISSING[$ct,floor]:-no pair}}}}"
				[ "$m" = p99 ] &&
					bench_verdict "${ct}_${tag}_p99_vs_floor_goal" nan nan "$FLOOR_GOAL" 0
				continue
			fi
			bench_row "${ct}_${tag}_${m}_vs_floor" "$est" "x floor (geometric mean of $n repetitions)"
			bench_row "${ct}_${tag}_${m}_vs_floor_lo" "$lo" "x floor (95% bootstrap)"
			bench_row "${ct}_${tag}_${m}_vs_floor_hi" "$hi" "x floor (95% bootstrap)"
			[ "$m" = p99 ] &&
				bench_verdict "${ct}_${tag}_p99_vs_floor_goal" "$lo" "$hi" "$FLOOR_GOAL" "$n"
		done
	done
	# The goal at half the NAK ceiling: pgmrouterd's p99 (the median over the repetitions and
	# its 95 % interval) at most LOAD_GOAL_US.
	# When the floor's own p99 (the least any consumer does, same run) is over the goal too,
	# the machine is what is measured, not the daemon: INCONCLUSIVE.
	if [ "$ct" = load50 ]; then
		# shellcheck disable=SC2086
		read -r _ lo hi n <<<"$(bench_median_ci ${Q99[$ct,pgmrouterd]:-})"
		# shellcheck disable=SC2086
		read -r fmed flo _ fn <<<"$(bench_median_ci ${Q99[$ct,floor]:-})"
		why=""
		awk -v l="$flo" -v g="$LOAD_GOAL_US" -v n="$fn" 'BEGIN { exit !(n > 0 && l + 0 > g + 0) }' &&
			why="the floor's own p99 is over the goal too (median $fmed us): this machine's scheduling, not the daemon"
		BENCH_VERDICT_WHY=$why bench_verdict load50_ncf_p99_goal "$lo" "$hi" "$LOAD_GOAL_US" "$n"
	fi
	for m in median p99; do
		if [ "$m" = median ]; then
			ratios=$(bench_ratios "${MED[$ct,kernel]:-}" "${MED[$ct,pgmrouterd]:-}")
		else
			ratios=$(bench_ratios "${P99[$ct,kernel]:-}" "${P99[$ct,pgmrouterd]:-}")
		fi
		if [ -n "$ratios" ]; then
			# shellcheck disable=SC2086
			bench_series "${ct}_ncf_${m}_ratio" "x kernel forward" $ratios
		else
			bench_missing "${ct}_ncf_${m}_ratio" \
				"${MISSING[pgmrouterd]:-${MISSING[$ct,pgmrouterd]:-${MISSING[$ct,kernel]:-no pair}}}"
		fi
	done
done

#!/bin/bash
# Ceilings: the highest rate each kind of queued work is sustained at with nothing failing open
# and nothing dropped, pgmrouterd beside the accept-all consumer measured the same way in the
# same run (same rules, same queue, same CPU pinning; sides alternate within a repetition):
#   nak     NAKs from a receiver to the router, a new SQN each, the source's NCF for each 50 ms
#           behind (bench-queue's nak): pgmrouterd answers each with an NCF and a NAK upstream
#   spm2, spm4, spm8   SPMs of 100 sessions to a group routed into 2, 4 or 8 LANs: pgmrouterd
#           makes a copy per LAN (its path NLA rewritten); the figure counts copies
#   rdata   RDATA of 1444 bytes (TSDU 1400) for SQNs with confirmed repair state (seeded before
#           the step, not measured): pgmrouterd forwards it on the requesting interface only
# A step offers the scenario's traffic at one rate for a second and passes when the queue rules
# matched no packet that the consumer did not take (nothing accepted unassisted: neither a full
# queue nor a full socket buffer, both fail-open), and the segments show the work done for every
# packet sent (bench_queue_assist_problem; packets the kernel dropped on full input backlogs
# excepted; work left undone with nothing failing open is wrong behaviour: a row
# KIND_SIDE_behaviour "missing, did not do its job", which fails the run). The offered rate is
# stepped by bisection (lib.sh bench_bisect: first unpaced, then between nothing and what the
# unpaced step reached). A ceiling the sender could not push past
# (no step failed, or the sender fell short of the offered rate) is only a lower bound: counted
# in a _sender_bound row, and the goal is then INCONCLUSIVE.
# Goal: each of pgmrouterd's ceilings at least 0.9 of accept-all's (the per-repetition ratios'
# geometric mean and its 95 % interval). Policing is off on both sides (one generator sends what
# many receivers would): the figures price the queue path, not the policer.
#
#   bench-ceiling.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
BENCH_NO_POLICE=1
bench_begin ceiling "$@"
[ "$BENCH_SMOKE" = 1 ] || BENCH_REPS=${BENCH_REPS_OVERRIDE:-3}

SIDES="acceptall pgmrouterd"
KINDS=${BENCH_CEILING_KINDS:-"nak spm2 spm4 spm8 rdata"}
STEPS=${BENCH_CEILING_STEPS:-7} # the unpaced step and six of bisection
STEP_SECONDS=1
RDATA_MAX=40000 # SQNs with state per step: within one session's share of the repair states
GOAL=0.9
if [ "$BENCH_SMOKE" = 1 ]; then
	KINDS=${BENCH_CEILING_KINDS:-"nak spm4"}
	STEPS=1
	STEP_SECONDS=0.2
	RDATA_MAX=3000
	BENCH_BISECT_FIRST=5000 # one step at 5,000/s: a figure for bench-latency's smoke
fi
NLANS=2
for k in $KINDS; do
	case $k in
	nak | rdata) ;;
	spm[248]) [ "${k#spm}" -gt "$NLANS" ] && NLANS=${k#spm} ;;
	*) lab_die "BENCH_CEILING_KINDS: no kind $k (nak spm2 spm4 spm8 rdata)" ;;
	esac
done

bench_lab_init ceil
# The NAK and RDATA scenarios' group into LANs a and b, a group per SPM fan-out.
BENCH_FANOUT_GROUPS="2:239.192.0.1"
for k in $KINDS; do
	case $k in spm*) [ "${k#spm}" -le "$NLANS" ] && BENCH_FANOUT_GROUPS="$BENCH_FANOUT_GROUPS ${k#spm}:239.192.0.$((10 + ${k#spm}))" ;; esac
done
bench_topo_fanout 1 0 "$NLANS"
bench_steer_lan_rx r1
bench_queue_addrs
runs="$BENCH_RESULTS/ceiling-runs.csv"
echo "kind,rep,side,offered_pps,sent,achieved_pps,handled,unassisted,backlog_drops,pass,problem" >"$runs"
summary="$BENCH_RESULTS/ceiling-summary.csv" # medians, for bench-latency
echo "kind,acceptall_pps,pgmrouterd_pps,ratio,unit" >"$summary"
REP=0

# ceiling_step KIND SIDE RATE: one step for bench_bisect; prints "PASS ACHIEVED IP_LEN".
ceiling_step() {
	local kind=$1 side=$2 rate=$3 gsi scen lans="a b" lim q0 q1 m0 m1 s0 s1 out sent n un drops
	local problem pass=0 pps len lan
	gsi=$(bench_next_gsi)
	lim=(-T "$STEP_SECONDS")
	case $kind in
	nak)
		scen=nak
		bench_queue_seed_session "$gsi"
		;;
	spm*)
		scen=spm
		GROUP=239.192.0.$((10 + ${kind#spm}))
		lans=$(bench_fanout_lans "${kind#spm}")
		;;
	rdata)
		scen=rdata_state
		# the SQNs the step will send: a second's worth at RATE (unpaced: RDATA_MAX)
		n=$(awk -v r="$rate" -v t="$STEP_SECONDS" -v m="$RDATA_MAX" \
			'BEGIN { n = r > 0 ? int(r * t) : m; if (n > m) n = m; if (n < 63) n = 63; print n }')
		bench_queue_seed_session "$gsi"
		bench_queue_seed_state "$gsi" "$n"
		lim=(-n "$n" -z 1400 -T 30)
		;;
	esac
	bench_queue_drain r1
	for lan in $lans src; do
		bench_lan_settle "$lan"
		lab_counts_reset "$lan"
	done
	q0=$(bench_queue_stats r1)
	m0=$(bench_rule_matches r1)
	s0=$(bench_softnet_drops)
	out=$(bench_queue_flood "$scen" "$gsi" -r "$rate" "${lim[@]}")
	bench_queue_drain r1
	s1=$(bench_softnet_drops)
	q1=$(bench_queue_stats r1)
	m1=$(bench_rule_matches r1)
	sent=$(lab_kv sent "$out")
	n=$(bench_queue_handled "$q0" "$q1")
	un=$((m1 - m0 - n))
	drops=$((s1 - s0))
	problem=$(bench_queue_assist_problem "$scen" "$side" "${sent:-0}" "$drops" "$lans")
	[ "${sent:-0}" -gt 0 ] && [ "$un" -le 0 ] && [ -z "$problem" ] && pass=1
	# Work left undone although nothing failed open: wrong behaviour, not a ceiling.
	[ "$un" -le 0 ] && [ -n "$problem" ] && echo "$problem" >>"$LAB_DIR/wrong.$kind.$side"
	pps=$(lab_kv pps "$out" | cut -d. -f1)
	len=$(bench_div "$(lab_kv "${scen%%_*}_bytes" "$out")" "${sent:-0}" 0)
	echo "$kind,$REP,$side,$rate,${sent:-0},${pps:-0},$n,$un,$drops,$pass,${problem//,/;}" >>"$runs"
	bench_log "$kind $side at $([ "$rate" = 0 ] && echo "the sender's top rate" || echo "${rate}/s"): sent ${sent:-0} ($pps/s), handled $n," \
		"unassisted $un, backlog drops $drops${problem:+; $problem}: $([ $pass = 1 ] && echo pass || echo FAIL)"
	echo "$pass ${pps:-0} ${len:-0}"
}

declare -A PPS BOUND MED LEN
VERDICTS=""
for rep in $(seq 1 "$BENCH_REPS"); do
	REP=$rep
	# shellcheck disable=SC2086
	for side in $(bench_rotation "$rep" $SIDES); do
		bench_side_up_once "$side" r1 || continue
		for kind in $KINDS; do
			read -r pps limit len <<<"$(bench_bisect "$STEPS" ceiling_step "$kind" "$side")"
			bench_log "ceiling $kind rep $rep $side: $pps/s (limit: $limit)"
			[ "$limit" = sender ] && BOUND[$kind,$side]=$((${BOUND[$kind,$side]:-0} + 1))
			if [ "$limit" = none ]; then
				PPS[$kind,$side]="${PPS[$kind,$side]:-} nan"
			else
				PPS[$kind,$side]="${PPS[$kind,$side]:-} $pps"
				LEN[$kind]=$len
			fi
		done
		bench_side_down "$side" r1
	done
done

for kind in $KINDS; do
	unit=packets/s
	mult=1
	case $kind in
	nak) unit="NAKs/s (each an NCF and a NAK upstream)" ;;
	spm*) unit="SPM copies/s" mult=${kind#spm} ;;
	rdata) unit="RDATA/s (1444 bytes; with repair state)" ;;
	esac
	for side in $SIDES; do
		if [ -n "${BENCH_SIDE_MISSING[$side]:-}" ]; then
			bench_missing "${kind}_${side}_pps" "${BENCH_SIDE_MISSING[$side]}"
			continue
		fi
		vals=$(for v in ${PPS[$kind,$side]:-}; do
			awk -v v="$v" -v m="$mult" 'BEGIN { if (v ~ /^[0-9.]+$/) print v * m; else print v }'
		done)
		# shellcheck disable=SC2086
		bench_series "${kind}_${side}_pps" "$unit" $vals
		if [ -s "$LAB_DIR/wrong.$kind.$side" ]; then
			bench_missing "${kind}_${side}_behaviour" \
				"did not do its job with nothing failing open: $(head -n 1 "$LAB_DIR/wrong.$kind.$side")"
		fi
		bench_row "${kind}_${side}_sender_bound" "${BOUND[$kind,$side]:-0}" \
			"repetitions whose ceiling is only a lower bound (the sender's limit)"
		if [ "$kind" = rdata ]; then
			# shellcheck disable=SC2046
			bench_figure "rdata_${side}_mbps" "Mbit/s (IP datagrams)" $(for v in ${PPS[$kind,$side]:-}; do
				awk -v v="$v" -v l="${LEN[$kind]:-1444}" 'BEGIN { if (v ~ /^[0-9.]+$/) printf "%.1f\n", v * l * 8 / 1e6 }'
			done)
		fi
		# shellcheck disable=SC2086
		MED[$kind,$side]=$(bench_stats $vals | cut -d' ' -f1)
	done
	if [ -n "${BENCH_SIDE_MISSING[acceptall]:-}${BENCH_SIDE_MISSING[pgmrouterd]:-}" ]; then
		bench_missing "${kind}_ratio" "${BENCH_SIDE_MISSING[pgmrouterd]:-${BENCH_SIDE_MISSING[acceptall]:-}}"
		continue
	fi
	read -r est lo hi n <<<"$(bench_ratio_ci "${PPS[$kind,acceptall]:-}" "${PPS[$kind,pgmrouterd]:-}")"
	bench_row "${kind}_ratio" "$est" "x accept-all (geometric mean)"
	bench_row "${kind}_ratio_lo" "$lo" "x accept-all"
	bench_row "${kind}_ratio_hi" "$hi" "x accept-all"
	bench_row "${kind}_ratio_n" "$n" repetitions
	why=""
	if [ "${BOUND[$kind,acceptall]:-0}${BOUND[$kind,pgmrouterd]:-0}" != 00 ]; then
		why="a ceiling was the sender's limit in $((${BOUND[$kind,acceptall]:-0} + ${BOUND[$kind,pgmrouterd]:-0})) runs"
	fi
	row=$(BENCH_VERDICT_WHY=$why bench_verdict_min "${kind}_ratio_goal" "$lo" "$hi" "$GOAL" "$n")
	echo "$row"
	VERDICTS="$VERDICTS $(cut -d, -f3 <<<"$row")"
	echo "$kind,${MED[$kind,acceptall]:-nan},${MED[$kind,pgmrouterd]:-nan},$est,$unit" >>"$summary"
done
# Every ceiling at least 0.9 of accept-all's: PASS when every kind's goal passed, FAIL when any
# failed, else INCONCLUSIVE.
case " $VERDICTS " in
*" FAIL "*) all=FAIL ;;
*" INCONCLUSIVE "* | "  ") all=INCONCLUSIVE ;;
*) all=PASS ;;
esac
bench_row all_ratio_goal "$all" "every kind's ceiling at least $GOAL of accept-all's (kinds:${VERDICTS:- none})"

# Beside the ceilings, the demand of one OpenPGM stream at 675 Mbit/s with 5 % loss on one
# downstream interface: 1444-byte datagrams (TSDU 1400) are 58,432 ODATA a second, 2,922 lost;
# each loss brings the router at least one NAK (an NCF and a NAK upstream: NAKs are eliminated
# per interface, and the receivers that hear the NCF hold theirs; bench-storm measured 1.0-1.1
# NAKs on the LAN per loss) and one RDATA to forward. The headroom is pgmrouterd's median ceiling
# over that demand (a lower bound where the ceiling was the sender's).
DEMAND_MBPS=675
DEMAND_LOSS=0.05
demand=$(awk -v m="$DEMAND_MBPS" -v l="$DEMAND_LOSS" 'BEGIN { printf "%.0f", m * 1e6 / (1444 * 8) * l }')
bench_row demand675_losses_pps "$demand" "lost packets/s of one 675 Mbit/s stream at 5 % loss (1444-byte datagrams)"
for kind in nak rdata; do
	m=${MED[$kind,pgmrouterd]:-}
	[[ "$m" =~ ^[0-9.]+$ ]] || continue
	bench_row "${kind}_headroom_vs_demand675" "$(bench_div "$m" "$demand" 1)" \
		"x the NAKs or RDATA a second of that stream's losses (pgmrouterd's median ceiling)"
	# shellcheck disable=SC2086 # the list of repetitions' ceilings
	bench_row "${kind}_headroom_vs_demand675_n" "$(printf '%s\n' ${PPS[$kind,pgmrouterd]:-} | grep -cE '^[0-9.]+$')" repetitions
done

#!/bin/bash
# Scaling: the queue path's drain rate with two workers (`ip pgm router workers 2`: two threads,
# queues 113 and 114, each session on one of them by its GSI's last byte) against one, in
# bench-queue's burst regime: every worker's consumer stopped (SIGSTOP of the daemon) while a
# burst fills the queues, then drained at full speed with the sender idle (SIGCONT), so both
# cores are the router's. The daemon is not pinned (BENCH_PIN_ROUTER=0: its threads go where the
# scheduler puts them); the senders are, to CPU 0, but they send only while it is stopped.
#   nak   NAKs from a receiver to the router, a new SQN each, and the source's NCF for each
#         50 ms behind them (bench-queue's nak: both queued): per NAK an NCF on the LAN and the
#         NAK upstream, the source's NCF confirming the state
#   spm   SPMs from the source: two copies each (LANs a and b), each with its path NLA
# Sessions spread evenly: 256 sessions (pgm-flood --tsis 256, round robin), whose GSIs' last
# bytes are 0 .. 255, so worker k of N takes 256 / N of them (bytes below 128 and from 128 with
# N = 2) and the same share of every burst.
#
# Burst size. Every queue gets PER_QUEUE packets per burst with either side (3,584: 1,792 NAKs
# and their NCFs, or 3,584 SPMs; the queue holds 4,096), so two workers drain twice the packets
# one does (a session gets 7 NAKs or 14 SPMs a burst with one worker, twice that with two). That is the fair choice for a rate: with perfect
# scaling both sides then drain for the same wall time, and what a burst costs whatever its
# size (waking the stopped threads, the first cold batch, the millisecond of the poll that sees
# the queues empty) weighs the same on both. The same total for both (half a queue each
# with two workers) would charge those fixed costs twice as heavily to two workers and read
# below 2 even if they scaled perfectly. Each worker creates the same repair states per burst
# either way (1,792).
#
# Measured per run (a fresh daemon per side and repetition; the sides interleaved, their order
# rotating): the drain rate, queued packets handled (the kernel's queue id sequences less the
# sockets' drops, over every queue) per second of wall time from SIGCONT to the moment no queue
# has a packet waiting (bench_queue_drain_timed), summed over the bursts; and the daemon's CPU
# time over the same wall time (cores used). The scaling is the per-repetition ratio of the two
# sides' rates; goal at least 1.8 on its 95 % interval (bench_verdict_min).
#
# Checks, each failing a repetition with its status (kept in raw.csv, a nan in its series, counted
# in the _failed row): not_seeded (nak: the daemon knows fewer than 256 sessions before the
# bursts), drain_timeout (a burst still queued after 10 s), nothing_measured, fail_open (a packet
# the queue rules matched that no worker handled: accepted unassisted), wrong_behaviour
# (bench-queue's check on the segments: an NCF on LAN a and a NAK upstream for every NAK, every
# SPM on both LANs, allowing for the kernel's input backlog drops on the receiving side and 1 %),
# not_spread (two workers: a worker handled under 40 % of the packets, show ip pgm router
# dataplane json's per-worker packets).
#
# The lab's receiving side (the LAN bridges and hosts behind the router) is not steered to
# another CPU as bench-queue does (bench_steer_lan_rx): on veth it runs in the context of the
# worker that sent into it, on that worker's core; steered to CPU 0 it would give one worker a
# second core's help and understate what two gain.
#
# Rows: {nak,spm}_drain_pps_w1, _w2 (packets per second of wall time), {nak,spm}_cores_w1, _w2,
# {nak,spm}_capacity_w1, _w2 (packets per second of the daemon's CPU time, every thread, as
# bench-queue's), {nak,spm}_scaling_w2_vs_w1 and {nak,spm}_capacity_w2_vs_w1 (median, _min,
# _max, _lo, _hi, _n), {nak,spm}_scaling_goal.
#
#   bench-scaling.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
BENCH_PIN_ROUTER=0 # both cores are the router's
BENCH_REPS=9        # (bench_begin: one in smoke mode, or BENCH_REPS_OVERRIDE)
bench_begin scaling "$@"

SIDES="w1 w2"
SCENARIOS=${BENCH_SCALING_SCENARIOS:-"nak spm"}
TSIS=256
BURSTS=10
PER_QUEUE=3584 # queued packets per queue and burst: a multiple of 2 x TSIS
if [ "$BENCH_SMOKE" = 1 ]; then
	BURSTS=1
	PER_QUEUE=512
fi
# One source's floods are far over the default policing; new sessions at full speed too.
BENCH_NO_POLICE=1

bench_lab_init scal
bench_topo_fanout 1 1
bench_queue_addrs
runs="$BENCH_RESULTS/scaling-runs.csv"
echo "scenario,rep,side,drain_pps,cores,capacity,handled,drain_us,worker_packets,status" >"$runs"
GSI=0

# flood_burst SCENARIO WORKERS B: burst B (from 0) of a scenario, for WORKERS workers: PER_QUEUE
# queued packets per queue, every session's sequence numbers following the last burst's.
flood_burst() {
	local scenario=$1 w=$2 b=$3 n per_tsi
	case $scenario in
	nak)
		n=$((PER_QUEUE * w / 2)) # each NAK brings the source's NCF
		per_tsi=$((n / TSIS))
		bench_queue_flood nak "$GSI" --tsis "$TSIS" -n "$n" -r 0 --sqn-start $((1 + b * per_tsi))
		;;
	spm)
		n=$((PER_QUEUE * w))
		per_tsi=$((n / TSIS))
		bench_queue_flood spm "$GSI" --tsis "$TSIS" -n "$n" -r 0 --spm-sqn $((b * per_tsi))
		;;
	esac
}

# worker_packets: each worker's queued packets so far (show ip pgm router dataplane json), space
# separated; nothing with one worker (no per-worker lines).
worker_packets() {
	bench_pgmrouterd_cli r1 "show ip pgm router dataplane json" 2>/dev/null |
		jq -r '(.workers // []) | map(.packets | tostring) | join(" ")' 2>/dev/null
}

declare -A PPS CORES CAP ST MISSING
# record CASE SIDE REP STATUS [PPS CORES CAPACITY N US WP]: one run's outcome; a failed check
# keeps the repetition's place as nan.
record() {
	local scenario=$1 side=$2 rep=$3 status=$4
	bench_status_add "ST[$scenario,$side]" "$status"
	if [ "$status" = ok ]; then
		PPS[$scenario,$side]="${PPS[$scenario,$side]:-} $5"
		CORES[$scenario,$side]="${CORES[$scenario,$side]:-} $6"
		CAP[$scenario,$side]="${CAP[$scenario,$side]:-} $7"
	else
		PPS[$scenario,$side]="${PPS[$scenario,$side]:-} nan"
		CORES[$scenario,$side]="${CORES[$scenario,$side]:-} nan"
		CAP[$scenario,$side]="${CAP[$scenario,$side]:-} nan"
	fi
	echo "$scenario,$rep,$side,${5:-nan},${6:-nan},${7:-nan},${8:-},${9:-},${10:-},$status" >>"$runs"
}

run_one() {
	local scenario=$1 rep=$2 side=$3 w pid q0 q1 m0 m1 s0 s1 c0 c1 wp0 wp1 out sent=0 b us
	local drain_us=0 n pps cores cap failopen problem="" status=ok known k
	w=${side#w}
	GSI=$((GSI + 1))
	BENCH_QUEUES=$(seq -s ' ' "$BENCH_QUEUE" $((BENCH_QUEUE + w - 1)))
	BENCH_ROUTER_EXTRA_CONFIG="ip pgm router workers $w
ip pgm router session-rate 0"
	if ! bench_side_up pgmrouterd r1; then
		MISSING[$side]=$BENCH_SIDE_REASON
		return
	fi
	pid=${BENCH_SIDE_PID[r1]}
	if [ "$scenario" = nak ]; then
		bench_queue_seed_session "$GSI" "$TSIS"
		bench_queue_drain r1
		known=$(bench_pgmrouterd_json_field r1 sessions)
		[ "${known:-0}" -ge "$TSIS" ] || status=not_seeded
	fi
	bench_lan_settle a
	lab_counts_reset a
	lab_counts_reset b
	lab_counts_reset src
	q0=$(bench_queue_stats r1)
	m0=$(bench_rule_matches r1)
	s0=$(bench_softnet_drops)
	wp0=$(worker_packets)
	c0=$(bench_cpu_ns "$pid")
	for b in $(seq 0 $((BURSTS - 1))); do
		[ "$status" = ok ] || break
		kill -STOP "$pid"
		out=$(flood_burst "$scenario" "$w" "$b")
		sent=$((sent + $(lab_kv sent "$out")))
		bench_queue_settle r1
		if ! us=$(bench_queue_drain_timed r1 "$pid"); then
			status=drain_timeout
			break
		fi
		drain_us=$((drain_us + us))
	done
	kill -CONT "$pid" 2>/dev/null
	bench_queue_drain r1
	c1=$(bench_cpu_ns "$pid")
	s1=$(bench_softnet_drops)
	q1=$(bench_queue_stats r1)
	m1=$(bench_rule_matches r1)
	wp1=$(worker_packets)
	n=$(bench_queue_handled "$q0" "$q1")
	failopen=$((m1 - m0 - n))
	if [ "$status" = ok ]; then
		if [ "$sent" = 0 ] || [ "$n" -le 0 ] || [ "$drain_us" -le 0 ]; then
			status=nothing_measured
		elif [ "$failopen" -gt 0 ]; then
			status=fail_open
		fi
	fi
	if [ "$status" = ok ]; then
		problem=$(bench_queue_assist_problem "$scenario" pgmrouterd "$sent" \
			$((s1 - s0 + sent / 100 + 1)))
		[ -z "$problem" ] || status=wrong_behaviour
	fi
	if [ "$status" = ok ] && [ "$w" -gt 1 ]; then
		# each worker's share of the packets, at least 0.8 of an even one (1 / w)
		local -a p0 p1
		read -r -a p0 <<<"$wp0"
		read -r -a p1 <<<"$wp1"
		[ "${#p1[@]}" = "$w" ] || status=not_spread
		for k in $(seq 0 $((w - 1))); do
			[ $(((${p1[$k]:-0} - ${p0[$k]:-0}) * 10 * w)) -ge $((n * 8)) ] || status=not_spread
		done
	fi
	bench_side_down pgmrouterd r1
	pps=$(bench_div "$n" "${drain_us}e-6" 0)
	cores=$(bench_div "$((c1 - c0))" "${drain_us}e3" 3)
	cap=$(bench_div "$n" "$((c1 - c0))e-9" 0)
	bench_log "$scenario rep $rep $side: sent $sent, handled $n in $((drain_us / 1000)) ms of" \
		"draining (${BURSTS} bursts): ${pps:-?} packets/s, ${cores:-?} cores, ${cap:-?} packets per CPU-second;" \
		"fail-open $failopen; per worker ${wp0:-} -> ${wp1:-}${problem:+; $problem}: $status"
	record "$scenario" "$side" "$rep" "$status" "$pps" "$cores" "$cap" "$n" "$drain_us" "${wp1// /;}"
}

for scenario in $SCENARIOS; do
	for rep in $(seq 1 "$BENCH_REPS"); do
		# shellcheck disable=SC2086 # the rotated sides, one word each
		for side in $(bench_rotation "$rep" $SIDES); do
			[ -n "${MISSING[$side]:-}" ] && continue
			run_one "$scenario" "$rep" "$side"
		done
	done
	for side in $SIDES; do
		if [ -n "${MISSING[$side]:-}" ]; then
			bench_missing "${scenario}_drain_pps_${side}" "${MISSING[$side]}"
			continue
		fi
		BENCH_SERIES_STATUS=${ST[$scenario,$side]:-}
		bench_series "${scenario}_drain_pps_${side}" "packets/s (wall)" ${PPS[$scenario,$side]:-}
		bench_series "${scenario}_cores_${side}" "CPU-s per s of draining" ${CORES[$scenario,$side]:-}
		bench_series "${scenario}_capacity_${side}" "packets/CPU-s (daemon)" ${CAP[$scenario,$side]:-}
		BENCH_SERIES_STATUS=""
		bench_failed_row "${scenario}_${side}" ${ST[$scenario,$side]:-}
	done
	if [ -n "${MISSING[w1]:-}${MISSING[w2]:-}" ]; then
		bench_missing "${scenario}_scaling_w2_vs_w1" "a side has no figure (see above)"
		continue
	fi
	ratios=$(bench_ratios "${PPS[$scenario,w1]:-}" "${PPS[$scenario,w2]:-}")
	# shellcheck disable=SC2086
	bench_series "${scenario}_scaling_w2_vs_w1" "x one worker" $ratios
	# shellcheck disable=SC2086
	read -r _ lo hi n <<<"$(bench_median_ci $ratios)"
	bench_verdict_min "${scenario}_scaling_goal" "$lo" "$hi" 1.8 "$n"
	# What the daemon's own CPU time buys with two workers against one: below 1 by what they
	# share (not the cores they could get, which the drain rate also depends on).
	# shellcheck disable=SC2046
	bench_series "${scenario}_capacity_w2_vs_w1" "x one worker" \
		$(bench_ratios "${CAP[$scenario,w1]:-}" "${CAP[$scenario,w2]:-}")
done

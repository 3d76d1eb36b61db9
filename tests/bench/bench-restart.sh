#!/bin/bash
# Restart convergence: how long pgmrouterd takes to assist again after it was killed (kill -9)
# and restarted in the middle of a loss burst.
#
# Traffic (crafted, tests/bench's generator pgm-flood), running throughout each run: the source
# s1 announces S sessions (SPMs, round robin: each session once per SPM_IVL, the sources' ambient
# SPMs), and a receiver on LAN a NAKs (unicast to the router, as the SPMs' path tells it) SQNs
# drawn at random over every session at NAK_RATE: the loss burst. The daemon runs with its
# default limits (policing, new-session rate), as deployed.
#
# Sides, interleaved in every repetition (the order alternating):
#   kill9   the daemon runs and knows every session; it is killed with SIGKILL (its rules stay,
#           its state is gone) and started again at once. Time zero: the daemon is gone (its
#           exit reaped).
#   cold    no daemon and no rules; the daemon is started into the running traffic (the
#           baseline: a clean start under the same load). Time zero: the start.
# Measured from time zero, per run:
#   ncf_ms       the first NCF on LAN a (a capture there, dumpcap): NAKs are confirmed again
#   sessions_ms  every session is known again (sessions in `show ip pgm router state json`,
#                polled every POLL_MS)
# (restart-runs.csv and the log also have up_ms, when bench_pgmrouterd_up saw the packet path
# back: its checks poll every 50 ms through several commands, so under load it comes after the
# first NCF; a harness figure, not the daemon's.)
# Rows: {side}_{figure} (median, 95 % interval, n over the repetitions), {figure}_vs_cold (the
# per-repetition ratio kill9 / cold: geometric mean and interval; goal, judged in code: at most
# 1.2), {side}_failed (runs that
# failed a check: the daemon did not come back, or did not know every session within
# CONVERGE_S; kept in raw.csv, left out of the figures). Per run: restart-runs.csv.
#
#   bench-restart.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# Delays are measured: the daemon is not pinned (see bench-storm.sh).
BENCH_PIN_ROUTER=0
bench_begin restart "$@"

S=${BENCH_RESTART_SESSIONS:-200} # sessions
SPM_IVL=1                        # seconds between two SPMs of one session
NAK_RATE=400                     # NAKs per second (under the default NAK policing, 500/s)
SIDES="kill9 cold"
CONVERGE_S=15 # a run whose sessions are not all known again by then fails its check
POLL_MS=20
if [ "$BENCH_SMOKE" = 1 ]; then
	S=20
	SIDES="kill9"
	CONVERGE_S=5
fi
command -v tshark >/dev/null || lab_die "tshark not installed"
command -v dumpcap >/dev/null || lab_die "dumpcap not installed"

bench_lab_fanout_runs rstrt restart-runs.csv \
	"side,rep,up_ms,ncf_ms,sessions_ms,sessions_before,sessions_after,status"
GSI=200
PIN_SEND=()
[ -n "$BENCH_CPU_SEND" ] && PIN_SEND=(taskset -c "$BENCH_CPU_SEND")

now_ns() { date +%s%N; }

# sessions_known: the sessions in the daemon's state (show ip pgm router state json), or
# nothing when it does not answer.
sessions_known() {
	bench_pgmrouterd_cli r1 "show ip pgm router state json" 2>/dev/null |
		jq -e '[.. | objects | select(has("tsi"))] | length' 2>/dev/null
}

# wait_sessions T0 LIMIT_S: polls until every session is known; prints the ms since T0 (ns), or
# nothing after LIMIT_S.
wait_sessions() {
	local t0=$1 limit=$2 n t
	while :; do
		t=$(now_ns)
		n=$(sessions_known)
		if [ "${n:-0}" -ge "$S" ]; then
			echo $(((t - t0) / 1000000))
			return 0
		fi
		[ $(((t - t0) / 1000000000)) -ge "$limit" ] && return 1
		sleep "0.0$POLL_MS"
	done
}

# first_ncf FILE T0: ms from T0 (ns, the realtime clock the capture stamps with) to the first NCF
# in FILE after T0; nothing when there is none.
first_ncf() {
	tshark -r "$1" -Y "pgm.hdr.type == 0x0a" -T fields -e frame.time_epoch 2>/dev/null |
		awk -v t0="$2" '{ sub(/\./, ""); t = substr($1 "000000000", 1, 19) + 0
			if (t >= t0 && (best == "" || t < best)) best = t }
			END { if (best != "") printf "%.1f\n", (best - t0) / 1e6 }'
}

declare -A UP NCF SESS STATUS
# run SIDE REP
run() {
	local side=$1 rep=$2 cap spm_pid nak_pid cap_pid t0 up="" ncf="" sess="" before="" after=""
	local status=ok
	GSI=$((GSI + 1))
	cap="$LAB_DIR/restart.$side.$rep.pcapng"
	lab_spawn "lan:a" "$LAB_DIR/dumpcap.$side.$rep.log" dumpcap -q -i br0 -f "ip proto 113" -w "$cap"
	cap_pid=$LAB_PID
	lab_wait 10 "capture on LAN a" test -s "$cap" || true
	if [ "$side" = kill9 ] && ! bench_pgmrouterd_up r1; then
		status=side_down
		bench_log "$side rep $rep: pgmrouterd did not start: $BENCH_SIDE_REASON"
	fi
	# The traffic: SPMs of S sessions once per SPM_IVL, the receiver's NAKs.
	lab_spawn s1 "$LAB_DIR/spm.$side.$rep.log" ${PIN_SEND[@]+"${PIN_SEND[@]}"} \
		"$BENCH_BIN/pgm-flood" -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis "$S" \
		--gsi-base "$GSI" --spm-sqn 1 --spm-trail 0 --spm-lead 100000000 \
		-r "$(awk -v s="$S" -v i="$SPM_IVL" 'BEGIN { print s / i }')" -T 60
	spm_pid=$LAB_PID
	lab_spawn a1 "$LAB_DIR/nak.$side.$rep.log" ${PIN_SEND[@]+"${PIN_SEND[@]}"} \
		"$BENCH_BIN/pgm-flood" -s "$RECV" -d "$ROUTER_A" -m nak --tsis "$S" \
		--gsi-base "$GSI" --random "$rep" --sqn-start 1 --sqn-span 100000000 \
		--nla-src "$SRC" --nla-grp "$GROUP" -r "$NAK_RATE" -T 60
	nak_pid=$LAB_PID
	if [ "$status" = ok ] && [ "$side" = kill9 ]; then
		# The daemon learns every session, then is killed in the middle of the burst.
		if ! wait_sessions "$(now_ns)" "$CONVERGE_S" >/dev/null; then
			status=not_learnt
		fi
		before=$(sessions_known)
		sleep 0.5
		# Time zero once the daemon is gone: an NCF it sent before it died is not counted.
		kill -KILL "${BENCH_SIDE_PID[r1]}"
		wait "${BENCH_SIDE_PID[r1]}" 2>/dev/null
		t0=$(now_ns)
		BENCH_SIDE_PID[r1]=""
	else
		sleep 1 # the traffic runs without any daemon
		t0=$(now_ns)
	fi
	if [ "$status" = ok ]; then
		if bench_pgmrouterd_up r1; then
			up=$((($(now_ns) - t0) / 1000000))
			sess=$(wait_sessions "$t0" "$CONVERGE_S") || status=not_converged
			after=$(sessions_known)
			sleep 0.2 # NCFs of the last NAKs onto the capture
		else
			status=side_down
			bench_log "$side rep $rep: pgmrouterd did not start again: $BENCH_SIDE_REASON"
		fi
	fi
	lab_stop "$spm_pid"
	lab_stop "$nak_pid"
	bench_pgmrouterd_down r1
	lab_capture_stop "$cap_pid"
	[ "$status" = ok ] && ncf=$(first_ncf "$cap" "$t0")
	[ "$status" = ok ] && [ -z "$ncf" ] && status=no_ncf
	bench_log "$side rep $rep: $status; up ${up:--} ms, first NCF ${ncf:--} ms, every session" \
		"(${after:--} of $S; ${before:--} before) ${sess:--} ms; load average $(cut -d' ' -f1 /proc/loadavg)"
	echo "$side,$rep,$up,$ncf,$sess,$before,$after,$status" >>"$runs"
	STATUS[$side]="${STATUS[$side]:-} $status"
	if [ "$status" != ok ]; then
		up=nan ncf=nan sess=nan
	fi
	UP[$side]="${UP[$side]:-} ${up:-nan}"
	NCF[$side]="${NCF[$side]:-} ${ncf:-nan}"
	SESS[$side]="${SESS[$side]:-} ${sess:-nan}"
	bench_raw "${side}_ncf_ms" "$rep" "${ncf:-nan}" ms "$status"
	bench_raw "${side}_sessions_ms" "$rep" "${sess:-nan}" ms "$status"
	rm -f "$cap"
}

bench_log "S = $S sessions (an SPM each every $SPM_IVL s), $NAK_RATE NAKs/s"
for rep in $(seq 1 "$BENCH_REPS"); do
	order=$SIDES
	[ $((rep % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$SIDES" | tac | tr '\n' ' ')
	for side in $order; do
		run "$side" "$rep"
	done
done

# shellcheck disable=SC2086
for side in $SIDES; do
	bench_figure "${side}_ncf_ms" ms ${NCF[$side]}
	bench_figure "${side}_sessions_ms" ms ${SESS[$side]}
	f=$(tr ' ' '\n' <<<"${STATUS[$side]}" | grep -c -v -E '^(ok)?$')
	bench_row "${side}_failed" "$f" "runs failing a check (raw.csv)"
done
if [[ " $SIDES " == *" cold "* ]]; then
	for fig in ncf sessions; do
		if [ $fig = ncf ]; then
			base=${NCF[cold]} other=${NCF[kill9]}
		else
			base=${SESS[cold]} other=${SESS[kill9]}
		fi
		read -r r lo hi n <<<"$(bench_ratio_ci "$base" "$other")"
		[ "$n" -gt 0 ] || continue
		bench_row "${fig}_vs_cold" "$r" "x cold start (geometric mean)"
		bench_row "${fig}_vs_cold_lo" "$lo" "x cold start"
		bench_row "${fig}_vs_cold_hi" "$hi" "x cold start"
		bench_row "${fig}_vs_cold_n" "$n" repetitions
		# Goal: what a kill -9 leaves behind (its rules, its socket file, no clean exit)
		# slows the restart by at most a fifth against a clean start.
		bench_verdict "${fig}_vs_cold_goal" "$lo" "$hi" 1.2 "$n"
	done
fi
exit 0

#!/bin/bash
# The router's own forwarding cost: what the router namespace's CPU spends per packet it
# forwards, with pgmrouterd and with plain kernel forwarding, sides interleaved in every
# repetition. The router's receive and forwarding work is steered to a CPU of its own (RPS on
# its interfaces: the router CPU), the daemon pinned there too; senders, receivers and the LANs'
# bridges run on the sender CPU. The cost is the router CPU's time in NET_RX softirqs (exact, from
# the kernel's softirq tracepoints, lib.sh) plus the CPU time of the side's user-space program,
# per packet the router received, at a paced offered load both sides meet:
#   odata76, odata1444   ODATA to the group, 76- and 1444-byte datagrams, after one SPM that
#                        makes the session known to the daemon
#   udp                  non-PGM UDP to the same group (76-byte datagrams, port 9)
#   tcp                  one TCP stream from the source to a receiver (per 1448 bytes delivered)
# Checks, every run: the steering worked (the router CPU's NET_RX softirqs and backlog grew by at
# least the packets the router received), the trace lost nothing, and no ODATA, UDP or TCP
# packet was queued (the queue's packet count and the queue rules' counters grew by no more than
# the SPMs sent). A repetition that fails a check is reported (raw.csv, _failed rows) and left
# out of the figure; a queued data packet fails the benchmark.
# Then the zero-loss forwarding rate of ODATA with and without pgmrouterd: the highest offered
# rate at which the router forwarded every packet sent onto both receiver LANs, found by
# stepping pgm-flood's rate (lib.sh bench_zero_loss: an unpaced step, then bisection between
# nothing and the rate it reached).
# Then the same over IPv6, in an IPv6 lab of its own (LAB_IPV6=1: IPv6 forwarding and smcroute's
# IPv6 routes against the daemon's ip6 interception): the ODATA kinds as odata76_v6 and
# odata1444_v6, their rows named so (odata76_v6_added_ns, odata76_v6_cpu_ratio_goal, ...),
# judged as IPv4's. Knobs: BENCH_FWD_FAMILIES (default "4 6"; "6" runs only the IPv6 part),
# BENCH_FWD6_KINDS (default "odata76 odata1444"; smoke odata76), BENCH_FWD6_ZL_SIZES (zero-loss
# searches over IPv6: none by default).
#
#   bench-fwd.sh [--smoke]
set -u
if [ -z "${BENCH_FWD_FAMILY:-}" ]; then
	rc=0
	for fam in ${BENCH_FWD_FAMILIES:-4 6}; do
		BENCH_FWD_FAMILY=$fam bash "$0" "$@" || rc=1
	done
	exit $rc
fi
[ "$BENCH_FWD_FAMILY" = 6 ] && export LAB_IPV6=1
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
bench_begin fwd "$@"
[ "$BENCH_SMOKE" = 1 ] || BENCH_REPS=${BENCH_REPS_OVERRIDE:-9}

SIDES="kernel pgmrouterd"
KINDS=${BENCH_FWD_KINDS:-"odata76 odata1444 udp tcp"}
SECONDS_PER_RUN=${BENCH_FWD_SECONDS:-2}
RATE=${BENCH_FWD_RATE:-40000} # packets/s offered in the cost runs, on both sides
ZL_SIZES=${BENCH_FWD_ZL_SIZES:-"odata76 odata1444"}
ZL_REPS=${BENCH_FWD_ZL_REPS:-3}
ZL_STEPS=${BENCH_FWD_ZL_STEPS:-8} # the unpaced step and seven of bisection
ZL_SECONDS=1
if [ "$BENCH_SMOKE" = 1 ]; then
	SECONDS_PER_RUN=0.3
	KINDS=${BENCH_FWD_KINDS:-"odata76 tcp"} # the two tools' paths; udp is odata76's with ip-flood
	ZL_SIZES=odata76
	ZL_REPS=1
	ZL_STEPS=1
	ZL_SECONDS=0.3
	BENCH_BISECT_FIRST=$RATE # one zero-loss step at the cost runs' rate
fi
GROUP=239.192.0.1
SFX="" # the rows' family: "" IPv4, _v6
if [ "$BENCH_FWD_FAMILY" = 6 ]; then
	SFX=_v6
	GROUP=ff0e::8000:1
	KINDS=${BENCH_FWD6_KINDS:-"odata76 odata1444"}
	[ "$BENCH_SMOKE" = 1 ] && KINDS=${BENCH_FWD6_KINDS:-odata76}
	ZL_SIZES=${BENCH_FWD6_ZL_SIZES:-}
	for k in $KINDS $ZL_SIZES; do
		case $k in odata*) ;; *) lab_die "BENCH_FWD6_KINDS: only the ODATA kinds run over IPv6" ;; esac
	done
	lab_groups "$GROUP"
fi
# KIND_v6 over IPv6
KINDS=$(for k in $KINDS; do echo "$k$SFX"; done)
ZL_SIZES=$(for k in $ZL_SIZES; do echo "$k$SFX"; done)
TCP_SEG=1448 # TCP payload of a full segment on these links (MTU 1500, time stamps on)

if [ -z "$BENCH_CPU_ROUTER" ]; then
	for k in $KINDS; do bench_missing "${k}_added_ns" "needs two CPUs and pinning (BENCH_PIN)"; done
	exit 0
fi

[ -x "$BENCH_BIN/ip-flood" ] || lab_die "missing $BENCH_BIN/ip-flood (make tools)"
bench_lab_init "fwd${SFX:+6}"
# The trace instance goes before the lab (whose cleanup removes the directory it is reached from).
trap 'bench_softirq_trace_end; lab_cleanup' EXIT
trap 'bench_softirq_trace_end; lab_cleanup; trap - INT; kill -INT $$' INT
trap 'bench_softirq_trace_end; lab_cleanup; trap - TERM; kill -TERM $$' TERM
bench_topo_fanout 1 1
SRC=$TOPO_SOURCE_ADDR
A1=$(lab_addr a1 eth0)
bench_steer_lan_rx r1
if ! bench_steer_router_rx r1 "$BENCH_CPU_ROUTER"; then
	for k in $KINDS; do bench_missing "${k}_added_ns" "cannot steer r1's receive to CPU $BENCH_CPU_ROUTER (RPS)"; done
	exit 0
fi
if ! bench_softirq_trace_begin "$BENCH_CPU_ROUTER"; then
	for k in $KINDS; do bench_missing "${k}_added_ns" "$BENCH_SIDE_REASON"; done
	exit 0
fi
runs="$BENCH_RESULTS/fwd${SFX:+6}-runs.csv"
echo "kind,rep,side,sent,router_rx,tx_a,tx_b,queued,rule_matches,softirq_ns,softirqs,user_ns,softirq_on_user_ns,ns_per_packet,status" >"$runs"

declare -A NS MISSING FAILED WHY
FATAL=""

# traffic KIND SECONDS RATE: sends KIND from s1 (sender CPU); prints "sent spms" (tcp: the bytes
# the receiver got, and 0).
traffic() {
	local kind=$1 secs=$2 rate=$3 out ready pid gsi
	case ${kind%_v6} in
	odata76 | odata1444)
		# one SPM makes the session known to the daemon, then ODATA only (SPM copies are the
		# queue path's, priced by bench-queue)
		gsi=$(bench_next_gsi)
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm:1 -n 1 --gsi-base "$gsi" >/dev/null
		out=$(bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m odata:1 --gsi-base "$gsi" \
			-z "$([ "${kind%_v6}" = odata76 ] && echo 32 || echo 1400)" -r "$rate" -T "$secs")
		echo "$(lab_kv sent "$out") 1"
		;;
	udp)
		out=$(bench_on_send s1 "$BENCH_BIN/ip-flood" udp -d "$GROUP" -i eth0 -z 48 \
			-r "$rate" -T "$secs" 2>&1 | tail -n 1)
		echo "$(lab_kv sent "$out") 0"
		;;
	tcp)
		ready="$LAB_DIR/tcp.ready"
		rm -f "$ready"
		lab_spawn a1 "$LAB_DIR/tcp-sink.log" taskset -c "$BENCH_CPU_SEND" \
			"$BENCH_BIN/ip-flood" tcp-sink -T "$secs" -R "$ready"
		pid=$LAB_PID
		if ! lab_wait 5 "tcp sink" test -e "$ready"; then
			echo "0 0"
			return
		fi
		bench_on_send s1 "$BENCH_BIN/ip-flood" tcp-send -d "$A1" -T "$secs" >/dev/null 2>&1
		lab_wait_pid "$pid" 15 >/dev/null
		out=$(tail -n 1 "$LAB_DIR/tcp-sink.log")
		echo "$(lab_kv received "$out") 0"
		;;
	esac
}

# run_one KIND REP SIDE: one measurement with SIDE up; appends to NS[kind,side].
run_one() {
	local kind=$1 rep=$2 side=$3 c0 c1 q0 q1 m0 m1 n0 n1 s0 s1 p0 p1 u0=0 u1=0 pid sent spms
	local rx tx_a tx_b queued matches soft nsoft lost own user ns status=ok per
	c0=$(bench_if_counters r1)
	q0=0 q1=0 m0=0 m1=0 # the kernel side has no queue and no rules
	if [ "$side" != kernel ]; then
		read -r _ q0 _ <<<"$(bench_queue_stats r1)"
		m0=$(bench_rule_matches r1)
	fi
	read -r n0 p0 <<<"$(bench_cpu_net_rx "$BENCH_CPU_ROUTER")"
	pid=${BENCH_SIDE_PID[r1]:-}
	[ -n "$pid" ] && u0=$(bench_cpu_ns "$pid")
	bench_softirq_trace_on
	read -r sent spms <<<"$(traffic "$kind" "$SECONDS_PER_RUN" "$RATE")"
	c1=$(bench_router_settle)
	read -r soft nsoft lost own <<<"$(bench_softirq_trace_off "$pid")"
	[ -n "$pid" ] && u1=$(bench_cpu_ns "$pid")
	# the softirqs that ran on top of the daemon were charged to it too: counted once, in soft
	user=$((u1 - u0 - ${own:-0}))
	read -r n1 p1 <<<"$(bench_cpu_net_rx "$BENCH_CPU_ROUTER")"
	if [ "$side" != kernel ]; then
		m1=$(bench_rule_matches r1)
		read -r _ q1 _ <<<"$(bench_queue_stats r1)"
	fi
	rx=$(($(bench_if_sum "$c1" 2) - $(bench_if_sum "$c0" 2)))
	tx_a=$(($(bench_if_sum "$c1" 3 eth1) - $(bench_if_sum "$c0" 3 eth1)))
	tx_b=$(($(bench_if_sum "$c1" 3 eth2) - $(bench_if_sum "$c0" 3 eth2)))
	queued=$((q1 - q0))
	matches=$((m1 - m0))
	s0=$n0
	s1=$n1
	# The checks. Steering: the router CPU ran NET_RX softirqs and its backlog processed at least
	# nine in ten of the packets the router received (other work may add to both, never take).
	if [ "${sent:-0}" = 0 ] || [ "$rx" -le 0 ]; then
		status=no_traffic
	elif [ $((s1 - s0)) -le 0 ] || [ $(((p1 - p0) * 10)) -lt $((rx * 9)) ]; then
		status=not_steered
	elif [ "${lost:-1}" != 0 ] || [ "${nsoft:-0}" = 0 ]; then
		status=trace_lost
	fi
	# No data packet queued: the queue's packets and the queue rules' matches at most the SPMs.
	if [ "$queued" -gt "${spms:-0}" ] || [ "$matches" -gt "${spms:-0}" ]; then
		status=data_queued
		FATAL="$FATAL $kind/$side/rep$rep: $queued queued, $matches rule matches for ${spms:-0} SPMs;"
	fi
	if [ "$kind" = tcp ]; then
		per=$(awk -v s="$soft" -v u="$user" -v b="$sent" -v g=$TCP_SEG \
			'BEGIN { if (b > 0) printf "%.1f", (s + u) / (b / g) }')
	else
		per=$(awk -v s="$soft" -v u="$user" -v n="$rx" 'BEGIN { if (n > 0) printf "%.1f", (s + u) / n }')
	fi
	echo "$kind,$rep,$side,$sent,$rx,$tx_a,$tx_b,$queued,$matches,$soft,$nsoft,$user,${own:-0},${per:-nan},$status" >>"$runs"
	bench_raw "${kind}_${side}_ns" "$rep" "${per:-nan}" "ns/packet" "$status"
	bench_log "$kind rep $rep $side: sent $sent, router rx $rx, tx a $tx_a b $tx_b, queued $queued" \
		"(rule matches $matches, SPMs $spms); CPU $BENCH_CPU_ROUTER NET_RX $soft ns in $nsoft" \
		"softirqs (lost $lost), softirqs +$((s1 - s0)), backlog +$((p1 - p0)); user space" \
		"$user ns (+${own:-0} ns of softirqs on top of it); $per ns per packet: $status"
	if [ "$status" = ok ]; then
		NS[$kind,$side]="${NS[$kind,$side]:-} $per"
	else
		NS[$kind,$side]="${NS[$kind,$side]:-} nan"
		FAILED[$kind,$side]=$((${FAILED[$kind,$side]:-0} + 1))
		WHY[$kind,$side]="${WHY[$kind,$side]:-} $status"
	fi
}

# Every repetition: each side up once, the cost runs of every kind, then (the first ZL_REPS
# repetitions) the zero-loss searches; the sides' order alternates.
declare -A ZL_PPS ZL_MBPS
for rep in $(seq 1 "$BENCH_REPS"); do
	# shellcheck disable=SC2086
	set -- $SIDES
	[ $((rep % 2)) = 0 ] && set -- "$2" "$1"
	for side in "$@"; do
		[ -n "${MISSING[$side]:-}" ] && continue
		if ! bench_side_up "$side" r1; then
			MISSING[$side]=$BENCH_SIDE_REASON
			continue
		fi
		for kind in $KINDS; do
			run_one "$kind" "$rep" "$side"
		done
		if [ "$rep" -le "$ZL_REPS" ]; then
			for kind in $ZL_SIZES; do
				read -r pps mbps limit <<<"$(bench_zero_loss "$ZL_STEPS" "$ZL_SECONDS" \
					"$([ "${kind%_v6}" = odata76 ] && echo 32 || echo 1400)")"
				bench_log "zero-loss $kind rep $rep $side: $pps pps, $mbps Mbit/s (limit: $limit)"
				bench_raw "${kind}_${side}_zero_loss_pps" "$rep" "$pps" pps ok
				ZL_PPS[$kind,$side]="${ZL_PPS[$kind,$side]:-} $pps"
				ZL_MBPS[$kind,$side]="${ZL_MBPS[$kind,$side]:-} $mbps"
			done
		fi
		bench_side_down "$side" r1
	done
done

for kind in $KINDS; do
	unit="ns/packet"
	[ "$kind" = tcp ] && unit="ns/1448 bytes"
	for side in $SIDES; do
		bench_row "${kind}_${side}_failed" "${FAILED[$kind,$side]:-0}" "repetitions failing a check (raw.csv)"
		if [ -n "${MISSING[$side]:-}" ]; then
			bench_missing "${kind}_${side}_ns" "${MISSING[$side]}"
			continue
		fi
		if [ "${FAILED[$kind,$side]:-0}" -ge "$BENCH_REPS" ]; then
			MISSING[$kind,$side]="every repetition failed a check:${WHY[$kind,$side]}"
			bench_missing "${kind}_${side}_ns" "${MISSING[$kind,$side]}"
			continue
		fi
		# shellcheck disable=SC2086
		bench_figure "${kind}_${side}_ns" "$unit" ${NS[$kind,$side]:-}
	done
	for side in $SIDES; do
		if [ -n "${MISSING[$kind,$side]:-}" ]; then
			MISSING[$side]=${MISSING[$kind,$side]}
		fi
	done
	if [ -n "${MISSING[pgmrouterd]:-}" ] || [ -n "${MISSING[kernel]:-}" ]; then
		bench_missing "${kind}_added_ns" "${MISSING[pgmrouterd]:-${MISSING[kernel]:-}}"
		continue
	fi
	# shellcheck disable=SC2046
	bench_figure "${kind}_added_ns" "$unit (pgmrouterd - kernel; same repetition)" \
		$(bench_diffs "${NS[$kind,kernel]:-}" "${NS[$kind,pgmrouterd]:-}")
	read -r est lo hi n <<<"$(bench_ratio_ci "${NS[$kind,kernel]:-}" "${NS[$kind,pgmrouterd]:-}")"
	bench_row "${kind}_cpu_ratio" "$est" "x kernel (geometric mean)"
	bench_row "${kind}_cpu_ratio_lo" "$lo" "x kernel"
	bench_row "${kind}_cpu_ratio_hi" "$hi" "x kernel"
	bench_row "${kind}_cpu_ratio_n" "$n" repetitions
	# The ODATA fast path's target, on the router's CPU: at most 3 % over kernel forwarding
	# (the rate target >= 0.97 of kernel forwarding, as a cost).
	case $kind in odata*) bench_verdict "${kind}_cpu_ratio_goal" "$lo" "$hi" 1.03 "$n" ;; esac
done

for kind in $ZL_SIZES; do
	for side in $SIDES; do
		# shellcheck disable=SC2086
		bench_figure "${kind}_${side}_zero_loss_pps" pps ${ZL_PPS[$kind,$side]:-}
		# shellcheck disable=SC2086
		bench_figure "${kind}_${side}_zero_loss_mbps" Mbit/s ${ZL_MBPS[$kind,$side]:-}
	done
	read -r est lo hi n <<<"$(bench_ratio_ci "${ZL_PPS[$kind,kernel]:-}" "${ZL_PPS[$kind,pgmrouterd]:-}")"
	bench_row "${kind}_zero_loss_ratio" "$est" "x kernel (geometric mean)"
	bench_row "${kind}_zero_loss_ratio_lo" "$lo" "x kernel"
	bench_row "${kind}_zero_loss_ratio_hi" "$hi" "x kernel"
	bench_row "${kind}_zero_loss_ratio_n" "$n" repetitions
done

if [ -n "$FATAL" ]; then
	bench_log "FAILED: data packets were queued:$FATAL"
	exit 1
fi

#!/bin/bash
# Overload: what the router does with more than it can take, sides interleaved in every
# repetition (the order rotates), the router pinned as in bench-ceiling:
#   burst   NAKs, a new SQN each, and the source's NCF for each 50 ms behind (bench-queue's nak),
#           ten times the queue's length (4,096) sent as fast as the sender can; sides
#           acceptall and pgmrouterd. Measured: the packets the queue rules matched that the
#           consumer did not take (accepted unassisted: fail-open), the NAKs pgmrouterd left
#           without an NCF (a NAK to the router that fails open is delivered to the router's
#           own stack and goes nowhere), and the time to recover: from the end of the burst
#           until the queue is empty
#   storm   ODATA (76-byte datagrams) at 80 % of kernel forwarding's zero-loss rate, measured at
#           the start of the run (lib.sh bench_zero_loss), and into it a NAK storm: K = 256
#           receivers (pgm-flood --srcs: 256 source addresses) each NAK the same 40 SQNs of the
#           ODATA session at once, the source confirming each SQN 50 ms later; sides kernel
#           (the receivers NAK the source: no router assist) and pgmrouterd (they NAK the
#           router). Measured: ODATA sent less ODATA delivered on the poorer receiver LAN (the
#           LANs' per-type counters), what failed open, the NAKs reaching the source's LAN, and
#           the time to recover. Goal: pgmrouterd loses no ODATA beyond kernel-only (the
#           per-repetition difference of the two, its median's interval at most 0).
# Policing is off on every side (pgm-rules -P, the daemon's `no ip pgm router police-...`): with
# the defaults the interface's limit (2,000 a second, burst 400) drops most of either flood
# before the queue, and the queue's overload is what is measured here.
#
#   bench-overload.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
BENCH_NO_POLICE=1
bench_begin overload "$@"

SIDES="kernel acceptall pgmrouterd"
QUEUE_LEN=4096 # the daemon's and nfq-acceptall's queue length (dataplane/nfq.h)
BURST=$((10 * QUEUE_LEN))
K=256
STORM_SQNS=40
STORM_SECONDS=2
ODATA_SHARE=0.8
ZL_STEPS=6
ZL_SECONDS=1
STORM_DELAY=0.5 # the storm's start after the ODATA's
if [ "$BENCH_SMOKE" = 1 ]; then
	# no accept-all side; a burst of twice the queue, a short storm, one zero-loss step
	SIDES="kernel pgmrouterd" BURST=$((2 * QUEUE_LEN))
	STORM_SQNS=8 STORM_SECONDS=0.4 STORM_DELAY=0.1 ZL_STEPS=1 ZL_SECONDS=0.3
fi

bench_lab_init ovl
bench_topo_fanout 1 1
bench_steer_lan_rx r1
bench_queue_addrs
STORM_SRC=198.19.0.1 # the storm's 256 receivers' addresses from here on (the lab's 198.18.0.0/15)
runs="$BENCH_RESULTS/overload-runs.csv"
echo "test,rep,side,sent,unassisted,unanswered,odata_sent,odata_lost,naks_at_source,ncfs_a,recovery_ms" >"$runs"

# The ODATA rate of the storm test: a share of kernel forwarding's zero-loss rate.
read -r zl_pps zl_mbps zl_limit <<<"$(bench_zero_loss "$ZL_STEPS" "$ZL_SECONDS" 32)"
bench_row odata_zero_loss_pps "$zl_pps" "pps (kernel forwarding; 76 bytes; limit: $zl_limit)"
ODATA_RATE=$(awk -v r="$zl_pps" -v s="$ODATA_SHARE" 'BEGIN { printf "%d", r * s }')
bench_row storm_odata_pps "$ODATA_RATE" "pps offered ($ODATA_SHARE of $zl_pps; $zl_mbps Mbit/s at zero loss)"
[ "$ODATA_RATE" -gt 0 ] || lab_die "no zero-loss ODATA rate measured"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# recovery_ms END_MS: waits until the queue is empty (10 s at most; polled every 10 ms); prints
# the milliseconds from END_MS.
recovery_ms() {
	local i bound total
	for i in $(seq 1 1000); do
		read -r bound _ total _ <<<"$(bench_queue_stats r1)"
		{ [ "$bound" = 0 ] || [ "$total" = 0 ]; } && break
		sleep 0.01
	done
	echo $(($(now_ms) - $1))
}

# queue_begin / queue_end SIDE: the queue's counters around a test (none on the kernel side);
# queue_end prints "handled unassisted".
queue_begin() {
	Q0="0 0 0 0" M0=0
	[ "$1" = kernel ] && return
	Q0=$(bench_queue_stats r1)
	M0=$(bench_rule_matches r1)
}
queue_end() {
	local n
	[ "$1" = kernel ] && echo "0 0" && return
	n=$(bench_queue_handled "$Q0" "$(bench_queue_stats r1)")
	echo "$n $(($(bench_rule_matches r1) - M0 - n))"
}

declare -A V
add() { V[$1]="${V[$1]:-} $2"; }

burst_one() {
	local side=$1 rep=$2 gsi out end rec n un sent ncf unanswered=0
	gsi=$(bench_next_gsi)
	bench_queue_seed_session "$gsi"
	bench_queue_drain r1
	for lan in a src; do lab_counts_reset "$lan"; done
	queue_begin "$side"
	out=$(bench_queue_flood nak "$gsi" -n "$BURST" -r 0)
	end=$(now_ms)
	rec=$(recovery_ms "$end")
	read -r n un <<<"$(queue_end "$side")"
	sent=$(lab_kv sent "$out")
	bench_lan_settle a
	ncf=$(lab_count a ncf)
	[ "$side" = pgmrouterd ] && unanswered=$((sent - ncf))
	[ "$unanswered" -lt 0 ] && unanswered=0
	echo "burst,$rep,$side,$sent,$un,$unanswered,,,,$ncf,$rec" >>"$runs"
	bench_log "burst rep $rep $side: $sent NAKs (and the source's NCFs), handled $n, failed" \
		"open $un; NCFs on LAN a $ncf; queue empty $rec ms after the burst"
	add "burst,$side,unassisted" "$un"
	add "burst,$side,unassisted_share" "$(bench_div "$un" $((n + un)) 4)"
	add "burst,$side,recovery_ms" "$rec"
	[ "$side" = pgmrouterd ] && add "burst,$side,unanswered" "$unanswered"
}

storm_one() {
	local side=$1 rep=$2 gsi dst=$ROUTER_A out rec n un sent lost a b up ncf pid ncf_pid
	gsi=$(bench_next_gsi)
	[ "$side" = kernel ] && dst=$SRC
	for lan in a b src; do
		bench_lan_settle "$lan"
		lab_counts_reset "$lan"
	done
	queue_begin "$side"
	rm -f "$LAB_DIR/storm.rec"
	# The storm half a second into the ODATA, the source's NCFs 50 ms behind it; the time to
	# recover is taken while the ODATA goes on.
	(
		sleep "$STORM_DELAY"
		bench_flood a1 -s "$STORM_SRC" -d "$dst" -m nak --srcs "$K" -n $((K * STORM_SQNS)) -r 0 \
			--sqn-start 1 --gsi-base "$gsi" --nla-src "$SRC" --nla-grp "$GROUP" >"$LAB_DIR/storm.out"
		end=$(now_ms)
		[ "$side" = kernel ] || recovery_ms "$end" >"$LAB_DIR/storm.rec"
	) &
	pid=$!
	(
		sleep "$STORM_DELAY"
		sleep 0.05
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m ncf -n "$STORM_SQNS" -r 0 --sqn-start 1 \
			--gsi-base "$gsi" >/dev/null
	) &
	ncf_pid=$!
	out=$(bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m odata:1000,spm:1 --gsi-base "$gsi" -z 32 \
		-r "$ODATA_RATE" -T "$STORM_SECONDS")
	wait "$pid" "$ncf_pid"
	rec=$(cat "$LAB_DIR/storm.rec" 2>/dev/null || echo 0)
	read -r n un <<<"$(queue_end "$side")"
	for lan in a b src; do bench_lan_settle "$lan"; done
	sent=$(lab_kv odata "$out")
	a=$(lab_count a odata)
	b=$(lab_count b odata)
	[ "$b" -lt "$a" ] && a=$b
	lost=$((${sent:-0} - a))
	up=$(lab_count src nak)
	ncf=$(lab_count a ncf)
	echo "storm,$rep,$side,$(lab_kv sent "$(cat "$LAB_DIR/storm.out")"),$un,,$sent,$lost,$up,$ncf,$rec" >>"$runs"
	bench_log "storm rep $rep $side: ODATA sent $sent ($(lab_kv pps "$out") pps), lost $lost;" \
		"storm $(lab_kv sent "$(cat "$LAB_DIR/storm.out")") NAKs: handled $n, failed open $un," \
		"NAKs at the source $up, NCFs on LAN a $ncf; recovered $rec ms after it"
	add "storm,$side,odata_lost" "$lost"
	add "storm,$side,naks_at_source" "$up"
	if [ "$side" != kernel ]; then
		add "storm,$side,unassisted" "$un"
		add "storm,$side,recovery_ms" "$rec"
	fi
}

for rep in $(seq 1 "$BENCH_REPS"); do
	# shellcheck disable=SC2086
	for side in $(bench_rotation "$rep" $SIDES); do
		bench_side_up_once "$side" r1 || continue
		[ "$side" = kernel ] || burst_one "$side" "$rep"
		[ "$side" = acceptall ] || storm_one "$side" "$rep"
		bench_side_down "$side" r1
	done
done

# figure TEST SIDE WHAT UNIT
figure() {
	if [ -n "${BENCH_SIDE_MISSING[$2]:-}" ]; then
		bench_missing "${1}_${2}_$3" "${BENCH_SIDE_MISSING[$2]}"
		return
	fi
	# shellcheck disable=SC2086
	bench_series "${1}_${2}_$3" "$4" ${V[$1,$2,$3]:-}
}
for side in acceptall pgmrouterd; do
	case " $SIDES " in *" $side "*) ;; *) continue ;; esac
	figure burst "$side" unassisted "packets accepted unassisted (fail-open) of $BURST NAKs and their NCFs"
	figure burst "$side" unassisted_share "of the packets the queue rules matched"
	figure burst "$side" recovery_ms "ms from the burst's end to an empty queue"
done
figure burst pgmrouterd unanswered "NAKs without an NCF"
for side in kernel pgmrouterd; do
	figure storm "$side" odata_lost "ODATA packets lost (at ${ODATA_RATE}/s with a K=$K NAK storm)"
	figure storm "$side" naks_at_source "NAKs on the source's LAN ($((K * STORM_SQNS)) sent)"
done
figure storm pgmrouterd unassisted "packets accepted unassisted (fail-open)"
figure storm pgmrouterd recovery_ms "ms from the storm's end to an empty queue"
if [ -z "${BENCH_SIDE_MISSING[kernel]:-}${BENCH_SIDE_MISSING[pgmrouterd]:-}" ]; then
	diffs=$(bench_diffs "${V[storm,kernel,odata_lost]:-}" "${V[storm,pgmrouterd,odata_lost]:-}")
	# shellcheck disable=SC2086
	read -r _ lo hi n <<<"$(bench_median_ci $diffs)"
	# shellcheck disable=SC2086
	bench_figure storm_odata_lost_extra "ODATA packets lost beyond kernel-only (same repetition)" $diffs
	bench_verdict storm_odata_lost_extra_goal "$lo" "$hi" 0 "$n"
else
	bench_missing storm_odata_lost_extra "${BENCH_SIDE_MISSING[pgmrouterd]:-${BENCH_SIDE_MISSING[kernel]:-}}"
fi

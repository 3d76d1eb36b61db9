#!/bin/bash
# Latency: NAK in to NCF out at pgmrouterd, from packet time stamps. A receiver sends NAKs (a new
# SQN each, for a session the router knows) at a fixed rate; the source confirms each 50 ms
# later, as a source would. A capture on the receivers' LAN sees each NAK enter and the router's
# NCF leave; NCF and NAK are matched by TSI and SQN (pgm-pcapstat). Baseline in the same run: the
# same NAKs sent through the router to the source by plain kernel forwarding, timed from the
# receivers' LAN to the source's LAN (one forwarding hop through the namespace, the least a
# router can add). Two offered rates; median and 99th percentile of every run; the ratios
# pgmrouterd / kernel per repetition.
#
#   bench-latency.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# Delays are measured here: the router is not pinned. On a shared two-core machine a router
# pinned to one CPU waits whenever other work holds that CPU, although the other may be idle
# (measured: median 80 us and p90 2 ms pinned, 45 us and 70 us not).
BENCH_PIN_ROUTER=0
bench_begin latency "$@"

SIDES="kernel pgmrouterd"
RATES="1000 10000"
SECONDS_PER_RUN=2
if [ "$BENCH_SMOKE" = 1 ]; then
	RATES="1000"
	SECONDS_PER_RUN=0.3
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

declare -A MED P99 MISSING
add() { MED[$1]="${MED[$1]:-} ${2:-nan}"; P99[$1]="${P99[$1]:-} ${3:-nan}"; }

run_one() {
	local rate=$1 side=$2 rep=$3 fa fs ca cs out stat dst ncf_pid
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
	bench_side_down "$side" r1
	if [ "$side" = kernel ]; then
		stat=$("$BENCH_BIN/pgm-pcapstat" --from nak@1 --to nak@2 \
			--csv "$BENCH_RESULTS/latency-$rate-$side-rep$rep.csv" "$fa" "$fs")
	else
		stat=$("$BENCH_BIN/pgm-pcapstat" --from nak --to ncf \
			--csv "$BENCH_RESULTS/latency-$rate-$side-rep$rep.csv" "$fa")
	fi
	rm -f "$fa" "$fs"
	bench_log "rate $rate $side rep $rep: $(lab_kv sent "$out") NAKs sent; $stat"
	echo "$rate,$side,$rep,$(lab_kv sent "$out"),$(lab_kv matched "$stat"),$(lab_kv median_us "$stat"),$(lab_kv p90_us "$stat"),$(lab_kv p99_us "$stat"),$(lab_kv max_us "$stat")" >>"$runs"
	# Every NAK must be answered (NCF) or forwarded: a run with NAKs left unanswered would
	# time only the easy ones.
	if [ "$(lab_kv matched "$stat")" -lt $(($(lab_kv sent "$out") * 99 / 100)) ]; then
		bench_log "rate $rate $side rep $rep: only $(lab_kv matched "$stat") of" \
			"$(lab_kv sent "$out") NAKs answered; no figure"
		MISSING[$rate,$side]="$(lab_kv matched "$stat") of $(lab_kv sent "$out") NAKs answered (rep $rep)"
		add "$rate,$side" nan nan
		rm -f "$BENCH_RESULTS/latency-$rate-$side-rep$rep.csv"
		return
	fi
	add "$rate,$side" "$(lab_kv median_us "$stat")" "$(lab_kv p99_us "$stat")"
	# Every delay of the (rate, side), pooled over the repetitions, for the distribution.
	awk -F, 'NR > 1 { print $4 }' "$BENCH_RESULTS/latency-$rate-$side-rep$rep.csv" \
		>>"$BENCH_RESULTS/latency-pooled-$rate-$side.txt"
	rm -f "$BENCH_RESULTS/latency-$rate-$side-rep$rep.csv"
}

for rate in $RATES; do
	for rep in $(seq 1 "$BENCH_REPS"); do
		set -- $SIDES
		[ $((rep % 2)) = 0 ] && set -- "$2" "$1"
		for side in "$@"; do
			[ -n "${MISSING[$side]:-}" ] && continue
			run_one "$rate" "$side" "$rep"
		done
	done
	for side in $SIDES; do
		what=ncf
		[ "$side" = kernel ] && what=forward
		reason=${MISSING[$side]:-}
		if [ -n "$reason" ]; then
			bench_missing "rate${rate}_${side}_${what}_median" "$reason"
			continue
		fi
		[ -n "${MISSING[$rate,$side]:-}" ] && bench_log "rate $rate $side: ${MISSING[$rate,$side]}"
		bench_series "rate${rate}_${side}_${what}_median" us ${MED[$rate,$side]:-}
		bench_series "rate${rate}_${side}_${what}_p99" us ${P99[$rate,$side]:-}
	done
	for m in median p99; do
		if [ "$m" = median ]; then
			ratios=$(bench_ratios "${MED[$rate,kernel]:-}" "${MED[$rate,pgmrouterd]:-}")
		else
			ratios=$(bench_ratios "${P99[$rate,kernel]:-}" "${P99[$rate,pgmrouterd]:-}")
		fi
		if [ -n "$ratios" ]; then
			# shellcheck disable=SC2086
			bench_series "rate${rate}_ncf_${m}_ratio" "x kernel forward" $ratios
		else
			bench_missing "rate${rate}_ncf_${m}_ratio" \
				"${MISSING[pgmrouterd]:-${MISSING[$rate,pgmrouterd]:-${MISSING[$rate,kernel]:-no pair}}}"
		fi
	done
done

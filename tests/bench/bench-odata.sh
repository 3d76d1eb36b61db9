#!/bin/bash
# ODATA fast path: ODATA (with one SPM per 1000 packets, so the router knows the session) flooded
# from the source through the router namespace to two receiver LANs, as fast as the sender can,
# counted where the router delivers it (the receiver LANs' bridge counters). Sides, interleaved in
# every repetition: plain kernel forwarding (the baseline), empty nftables base chains at the
# daemon's hooks (the price of a hook at all: the floor), and pgmrouterd. Two more on request
# (BENCH_ODATA_SIDES): the earlier layout's ODATA rules with a forward hook (forward), and the
# interception rules with the accept-all consumer (acceptall). ODATA never enters the queue, so
# the ratio to the kernel's rate should stay >= 0.97 (README); a run that queued more than the
# SPMs sent fails the benchmark. Also the sender's CPU time per
# delivered packet, which includes the kernel's forwarding done in its context (veth, softirq):
# the same ratio, less disturbed by other work on the machine than the packet rate.
#
#   bench-odata.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
bench_begin odata "$@"
# More repetitions than the other benchmarks: the differences sought (a few per cent) are smaller
# than the spread of one repetition's ratio (+-5 to 10 % on this shared machine), and a median of
# nine still moved by 0.03 from run to run. Fifteen of three sides take the time nine of five did.
[ "$BENCH_SMOKE" = 1 ] || BENCH_REPS=${BENCH_REPS_OVERRIDE:-15}

SIDES="kernel hooks pgmrouterd" # kernel first: the baseline
[ "$BENCH_SMOKE" = 1 ] && SIDES="kernel hooks forward acceptall pgmrouterd" # all kept working
SIDES=${BENCH_ODATA_SIDES:-$SIDES}
SECONDS_PER_RUN=${BENCH_ODATA_SECONDS:-3}
SIZES=${BENCH_ODATA_SIZES:-"small:32 large:1400"} # TSDU bytes: packet rate, then bit rate
if [ "$BENCH_SMOKE" = 1 ]; then
	SECONDS_PER_RUN=0.5
fi

bench_lab_init odata
bench_topo_fanout 1 1
SRC=$TOPO_SOURCE_ADDR
GROUP=239.192.0.1
runs="$BENCH_RESULTS/odata-runs.csv"
echo "size,rep,side,sent_pps,delivered_pps,delivered_mbps,queued,sender_ns_per_packet" >"$runs"
ratios_csv="$BENCH_RESULTS/odata-ratios.csv" # for plot-odata.gp
echo "size,side,rep,ratio,cpu_ratio" >"$ratios_csv"

declare -A PPS MBPS NS MISSING ST
FATAL=""
# run_one SIZE_NAME TSDU REP SIDE: one measurement; appends to PPS/MBPS[size,side].
run_one() {
	local size=$1 tsdu=$2 rep=$3 side=$4 out sent secs odata bytes ip_len a b q0 q1 delivered pps mbps
	local ns
	if ! bench_side_up "$side" r1; then
		MISSING[$side]=$BENCH_SIDE_REASON
		return
	fi
	lab_counts_reset a
	lab_counts_reset b
	read -r _ q0 _ <<<"$(bench_queue_stats r1)"
	out=$(bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m odata:1000,spm:1 -z "$tsdu" \
		--gsi-base "$rep" -T "$SECONDS_PER_RUN")
	bench_lan_settle a
	bench_lan_settle b
	read -r _ q1 _ <<<"$(bench_queue_stats r1)"
	bench_side_down "$side" r1
	sent=$(lab_kv sent "$out")
	secs=$(lab_kv seconds "$out")
	odata=$(lab_kv odata "$out")
	bytes=$(lab_kv odata_bytes "$out")
	if [ -z "$secs" ] || [ "${odata:-0}" = 0 ]; then
		# Kept in its place (nan: the ratios' pairs stay aligned) and reported as failed.
		bench_log "$size rep $rep $side: FAILED CHECK flood_failed: $out"
		PPS[$size,$side]="${PPS[$size,$side]:-} nan"
		MBPS[$size,$side]="${MBPS[$size,$side]:-} nan"
		NS[$size,$side]="${NS[$size,$side]:-} nan"
		bench_status_add "ST[$size,$side]" flood_failed
		return
	fi
	bench_status_add "ST[$size,$side]" ok
	ip_len=$((bytes / odata))
	a=$(lab_count a odata)
	b=$(lab_count b odata)
	delivered=$(((a + b) / 2))
	pps=$(bench_div "$delivered" "$secs" 0)
	mbps=$(awk -v n="$delivered" -v l="$ip_len" -v s="$secs" 'BEGIN { printf "%.1f", n * l * 8 / s / 1e6 }')
	ns=$(bench_div "$(lab_kv cpu_seconds "$out")e9" "$delivered" 0)
	# ODATA is never queued: the queue's packets may grow by the SPMs' copies, no more.
	if [ $((q1 - q0)) -gt "$(lab_kv spm "$out")" ]; then
		FATAL="$FATAL $size/$side/rep$rep: $((q1 - q0)) queued for $(lab_kv spm "$out") SPMs;"
	fi
	PPS[$size,$side]="${PPS[$size,$side]:-} $pps"
	MBPS[$size,$side]="${MBPS[$size,$side]:-} $mbps"
	NS[$size,$side]="${NS[$size,$side]:-} ${ns:-nan}"
	echo "$size,$rep,$side,$(bench_div "$sent" "$secs" 0),$pps,$mbps,$((q1 - q0)),$ns" >>"$runs"
	bench_log "$size rep $rep $side: sent $sent in ${secs}s, delivered a=$a b=$b ($pps pps," \
		"$mbps Mbit/s, IP length $ip_len), queued $((q1 - q0)); sender CPU $ns ns/packet"
}

for sz in $SIZES; do
	size=${sz%%:*}
	tsdu=${sz#*:}
	for rep in $(seq 1 "$BENCH_REPS"); do
		# Rotate the order each repetition, so no side always runs first.
		set -- $SIDES
		for _ in $(seq 2 "$rep"); do set -- "${@:2}" "$1"; done
		for side in "$@"; do
			[ -n "${MISSING[$side]:-}" ] && continue
			run_one "$size" "$tsdu" "$rep" "$side"
		done
	done
	BENCH_SERIES_STATUS=${ST[$size,kernel]:-}
	bench_series "${size}_kernel_pps" pps ${PPS[$size,kernel]:-}
	bench_series "${size}_kernel_mbps" Mbit/s ${MBPS[$size,kernel]:-}
	bench_series "${size}_kernel_sender_cpu" ns/packet ${NS[$size,kernel]:-}
	BENCH_SERIES_STATUS=""
	bench_failed_row "${size}_kernel" ${ST[$size,kernel]:-}
	for side in ${SIDES#kernel }; do
		if [ -n "${MISSING[$side]:-}" ]; then
			bench_missing "${size}_${side}_ratio" "${MISSING[$side]}"
			continue
		fi
		bench_failed_row "${size}_${side}" ${ST[$size,$side]:-}
		BENCH_SERIES_STATUS=${ST[$size,$side]:-}
		bench_series "${size}_${side}_pps" pps ${PPS[$size,$side]:-}
		bench_series "${size}_${side}_mbps" Mbit/s ${MBPS[$size,$side]:-}
		BENCH_SERIES_STATUS=""
		ratios=$(bench_ratios "${PPS[$size,kernel]:-}" "${PPS[$size,$side]:-}")
		cpu_ratios=$(bench_ratios "${NS[$size,$side]:-}" "${NS[$size,kernel]:-}")
		paste -d, <(echo "$ratios") <(echo "$cpu_ratios") | grep -v '^,*$' |
			awk -v s="$size" -v d="$side" '{ print s "," d "," NR "," $0 }' >>"$ratios_csv"
		# shellcheck disable=SC2086
		bench_series "${size}_${side}_ratio" "x kernel" $ratios
		# The CPU figure as a rate ratio too: kernel's cost over this side's.
		BENCH_SERIES_STATUS=${ST[$size,$side]:-}
		bench_series "${size}_${side}_sender_cpu" ns/packet ${NS[$size,$side]:-}
		BENCH_SERIES_STATUS=""
		# shellcheck disable=SC2086
		bench_series "${size}_${side}_cpu_ratio" "x kernel" $cpu_ratios
	done
done
if [ -n "$FATAL" ]; then
	bench_log "FAILED: ODATA was queued:$FATAL"
	exit 1
fi

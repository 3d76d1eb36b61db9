#!/bin/bash
# Scale: pgmrouterd's memory and per-packet cost as its tables grow.
#   sessions      distinct TSIs announced by SPMs from the source (1,000, 10,000, 100,000), one
#                 daemon, growing: resident set (VmRSS) per session over the idle daemon's, and
#                 the daemon's CPU time per queued SPM copy of a probe (SPMs to every known
#                 session, round robin)
#   repair states outstanding (NAK'd and confirmed) repair states (10,080, 100,800, 1,008,000:
#                 whole NAK lists for each of 16 sessions), a fresh daemon per size: NAK lists of 63 SQNs from a
#                 receiver, the source's NCF lists 100 ms behind them (confirmed states live
#                 NAK_RDATA_IVL, 10 s); resident set per state, and the CPU time per NAK of a
#                 probe that asks again for SQNs with state (a lookup in the full table)
# Baselines in the same run: the accept-all consumer's CPU time per packet on the same probe
# (the queue path without tables), and the smallest table's cost (the cost should stay flat).
# The counts reached are read back from the daemon (show ip pgm router json); when the
# namespace path cannot reach a size in time, the size reached is what is reported.
# The in-memory side (no I/O) is build/bench/bench_control's.
#
#   bench-scale.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
bench_begin scale "$@"

SESSION_SIZES="1000 10000 100000"
REPAIR_SIZES="10080 100800 1008000" # 63 x 16 sessions x 10, 100, 1000 lists
REPAIR_TSIS=16
OFFER_RATE=20000     # probe and session-seeding packets per second
SEED_LIST_RATE=5000  # NAK lists (63 SQNs each) per second
PROBE_SECONDS=1
if [ "$BENCH_SMOKE" = 1 ]; then
	SESSION_SIZES="100 1000"
	REPAIR_SIZES="1008 2016"
	PROBE_SECONDS=0.3
fi

# The tables' scale is what is measured: the default bounds (a 256 MB budget, shares of a half
# and a quarter, 100 new sessions per second per interface) would stop the seeding short.
BENCH_ROUTER_EXTRA_CONFIG="ip pgm router memory-budget 2048
ip pgm router rexmit-interface-share 100
ip pgm router rexmit-session-share 100
ip pgm router session-rate 0"

bench_lab_init scale
bench_topo_fanout 1 1
SRC=$TOPO_SOURCE_ADDR
GROUP=239.192.0.1
RECV=$(lab_addr a1 eth0)
ROUTER_A=$(lab_addr r1 eth1)
csv="$BENCH_RESULTS/scale.csv"
echo "table,entries,reached,rss_kb,bytes_per_entry,daemon_bytes_per_entry,ns_per_packet,cost_ratio_smallest,cost_ratio_acceptall" >"$csv"
GSI=100
SPM_SQN=1

# probe KIND REPS: REPS probe floods against the side up in r1; prints the median ns per
# handled packet (the consumer's CPU time over the queue packets it took).
#   spm N     SPMs to sessions 0..N-1 of GSI base $GSI (new SPM SQNs each time)
#   nak N     NAKs for the seeded SQNs of $REPAIR_TSIS sessions, N states in all
probe() {
	local kind=$1 n=$2 reps=$3 pid c0 c1 q0 q1 i vals=""
	pid=${BENCH_SIDE_PID[r1]}
	for i in $(seq 1 "$reps"); do
		bench_queue_drain r1
		q0=$(bench_queue_stats r1)
		c0=$(bench_cpu_ns "$pid")
		if [ "$kind" = spm ]; then
			bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis "$n" --gsi-base "$GSI" \
				--spm-sqn "$SPM_SQN" --spm-trail 0 --spm-lead 100000000 -r "$OFFER_RATE" \
				-T "$PROBE_SECONDS" >/dev/null
			SPM_SQN=$((SPM_SQN + 1000000))
		else
			bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --tsis "$REPAIR_TSIS" \
				--gsi-base "$GSI" --sqn-start 1 --sqn-span $((n / REPAIR_TSIS)) \
				--nla-src "$SRC" --nla-grp "$GROUP" -r "$OFFER_RATE" -T "$PROBE_SECONDS" \
				>/dev/null
		fi
		bench_queue_drain r1
		c1=$(bench_cpu_ns "$pid")
		q1=$(bench_queue_stats r1)
		vals="$vals $(awk -v c="$((c1 - c0))" -v a="$q0" -v b="$q1" 'BEGIN {
			split(a, x, " "); split(b, y, " ")
			n = (y[2] - x[2]) - (y[4] - x[4]); if (n > 0) printf "%.0f", c / n }')"
	done
	bench_stats $vals | awk '{ print $1 }'
}

# seed_sessions N: one SPM for each of sessions 0..N-1 (those that exist get a new SQN).
seed_sessions() {
	bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis "$1" -n "$1" --gsi-base "$GSI" \
		--spm-sqn "$SPM_SQN" --spm-trail 0 --spm-lead 100000000 -r "$OFFER_RATE" \
		-T 600 >/dev/null
	SPM_SQN=$((SPM_SQN + 1000000))
	bench_queue_drain r1
}

# seed_repair N: N repair states over $REPAIR_TSIS sessions: NAK lists from the receiver, the
# source's NCF lists for the same SQNs 100 ms behind.
seed_repair() {
	local lists=$(($1 / 63)) ncf_pid
	(
		sleep 0.1
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m ncf --tsis "$REPAIR_TSIS" \
			--gsi-base "$GSI" --nak-list 62 --sqn-start 1 -n "$lists" -r "$SEED_LIST_RATE" \
			>/dev/null
	) &
	ncf_pid=$!
	bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --tsis "$REPAIR_TSIS" --gsi-base "$GSI" \
		--nak-list 62 --sqn-start 1 -n "$lists" -r "$SEED_LIST_RATE" --nla-src "$SRC" \
		--nla-grp "$GROUP" >/dev/null
	wait "$ncf_pid"
	bench_queue_drain r1
}

row_set() {
	local table=$1 n=$2 reached=$3 rss=$4 rss0=$5 mem=$6 mem0=$7 ns=$8 ns0=$9 nsall=${10}
	local bpe dbpe r0 ra
	[[ $ns =~ ^[0-9.]+$ ]] || ns=""
	bpe=$(bench_div "$(((rss - rss0) * 1024))" "$reached" 0)
	dbpe=$(bench_div "$((mem - mem0))" "$reached" 0)
	r0=$(bench_div "$ns" "$ns0" 3)
	ra=$(bench_div "$ns" "$nsall" 3)
	echo "$table,$n,$reached,$rss,$bpe,$dbpe,$ns,$r0,$ra" >>"$csv"
	bench_row "${table}_${n}_reached" "$reached" entries
	bench_row "${table}_${n}_rss" "$rss" kB
	[ -n "$bpe" ] && bench_row "${table}_${n}_bytes_per_entry" "$bpe" bytes
	[ -n "$dbpe" ] && bench_row "${table}_${n}_daemon_bytes_per_entry" "$dbpe" bytes
	if [ -n "$ns" ]; then
		bench_row "${table}_${n}_cpu" "$ns" ns/packet
	else
		bench_missing "${table}_${n}_cpu" "the probe measured no queued packet"
	fi
	[ -n "$r0" ] && bench_row "${table}_${n}_cost_ratio" "$r0" "x smallest table"
	[ -n "$ra" ] && bench_row "${table}_${n}_vs_acceptall" "$ra" "x accept-all"
	bench_log "$table $n: reached $reached, RSS $rss kB (${bpe:-?} B/entry; daemon's count" \
		"${dbpe:-?} B/entry), ${ns:-?} ns/packet (x${r0:-?} smallest, x${ra:-?} accept-all)"
}

# Baselines: the accept-all consumer on both probes (its cost does not depend on any table).
GSI=$((GSI + 1))
if bench_side_up acceptall r1; then
	seed_sessions "${SESSION_SIZES%% *}"
	ALL_SPM=$(probe spm "${SESSION_SIZES%% *}" "$BENCH_REPS")
	ALL_NAK=$(probe nak "${REPAIR_SIZES%% *}" "$BENCH_REPS")
	bench_side_down acceptall r1
	bench_row acceptall_spm_cpu "$ALL_SPM" ns/packet
	bench_row acceptall_nak_cpu "$ALL_NAK" ns/packet
else
	bench_missing acceptall_spm_cpu "$BENCH_SIDE_REASON"
	ALL_SPM=""
	ALL_NAK=""
fi

# Sessions: one daemon, growing.
GSI=$((GSI + 1))
if ! bench_side_up pgmrouterd r1; then
	bench_missing sessions "$BENCH_SIDE_REASON"
	bench_missing repair_states "$BENCH_SIDE_REASON"
	exit 0
fi
rss0=$(bench_pgmrouterd_rss_kb r1)
mem0=$(bench_pgmrouterd_json_field r1 memory_bytes)
bench_row idle_rss "$rss0" kB
ns0=""
for n in $SESSION_SIZES; do
	seed_sessions "$n"
	reached=$(bench_pgmrouterd_json_field r1 sessions)
	rss=$(bench_pgmrouterd_rss_kb r1)
	mem=$(bench_pgmrouterd_json_field r1 memory_bytes)
	ns=$(probe spm "$n" "$BENCH_REPS")
	[ -z "$ns0" ] && ns0=$ns
	row_set sessions "$n" "${reached:-0}" "$rss" "$rss0" "${mem:-0}" "${mem0:-0}" "$ns" "$ns0" "$ALL_SPM"
done
bench_side_down pgmrouterd r1

# Repair states: a fresh daemon per size.
ns0=""
for n in $REPAIR_SIZES; do
	GSI=$((GSI + 1))
	if ! bench_side_up pgmrouterd r1; then
		bench_missing "repair_states_$n" "$BENCH_SIDE_REASON"
		continue
	fi
	seed_sessions "$REPAIR_TSIS"
	rss0=$(bench_pgmrouterd_rss_kb r1)
	mem0=$(bench_pgmrouterd_json_field r1 memory_bytes)
	start=$(date +%s%N)
	seed_repair "$n"
	seed_ms=$((($(date +%s%N) - start) / 1000000))
	reached=$(bench_pgmrouterd_json_field r1 repair_states)
	rss=$(bench_pgmrouterd_rss_kb r1)
	mem=$(bench_pgmrouterd_json_field r1 memory_bytes)
	bench_log "repair states $n: seeded in $seed_ms ms, $reached alive"
	if [ "${reached:-0}" -lt $((n * 9 / 10)) ]; then
		bench_log "repair states $n: only $reached of $n reached (the namespace path seeds" \
			"$((SEED_LIST_RATE * 63)) states/s; confirmed states live 10 s)"
	fi
	# The probe within the states' lifetime: NAK_RDATA_IVL (10 s) from their confirmation.
	ns=$(probe nak "$n" "$BENCH_REPS")
	[ -z "$ns0" ] && ns0=$ns
	row_set repair_states "$n" "${reached:-0}" "$rss" "$rss0" "${mem:-0}" "${mem0:-0}" "$ns" "$ns0" "$ALL_NAK"
	bench_side_down pgmrouterd r1
done

#!/bin/bash
# Scale: pgmrouterd's memory and per-packet cost as its tables grow, up to a million entries.
#   sessions      distinct TSIs announced by SPMs from the source (1,000, 10,000, 100,000,
#                 1,000,000): resident set (VmRSS) per session over the daemon before seeding,
#                 the daemon's own count (memory_bytes) per session beside it, and the daemon's
#                 CPU time per queued SPM of a probe: SPMs to sessions drawn at random over the
#                 whole table (pgm-flood --random)
#   repair states outstanding (NAK'd and confirmed) repair states (10,080, 100,800, 1,008,000:
#                 whole NAK lists for each of 16 sessions): NAK lists of 63 SQNs from a receiver,
#                 the source's NCF lists 100 ms behind them (confirmed states live
#                 NAK_RDATA_IVL, 10 s); memory per state as above, and the CPU time per NAK of a
#                 probe that asks again for SQNs drawn at random over every state (a lookup in
#                 the full table). Every probe NAK does the same work at every size: it finds
#                 its state confirmed and eliminating (the benchmark sets NAK_ELIM_IVL to
#                 NAK_RDATA_IVL, 10 s, and ncf-interval 0), so it is eliminated and confirmed
#                 with an NCF. With the default NAK_ELIM_IVL (100 ms) a probe NAK went upstream
#                 (new request: forwarded, repeated, given up after NAK_RPT_IVL) unless an
#                 earlier probe NAK had asked for the same SQN, and 30,000 probe NAKs over 10,080
#                 states repeat most SQNs, over 1,008,000 almost none: the share forwarded, and
#                 with it the work per NAK, grew with the table (README, 4. Scale).
#                 BENCH_SCALE_NAK_PROBE=forward keeps the defaults (that probe). Each daemon's
#                 probe counts (NAKs, eliminated, forwarded, NCFs) are kept; a duplicate probe
#                 in which under 95 % of the NAKs were eliminated fails its check (probe_mix).
# Every measurement is a fresh daemon: one per size and repetition, the sizes of a repetition
# in a shuffled order (logged), so neither the order nor a daemon's warm-up follows the size.
# Baselines in the same repetition: the accept-all consumer on the same probes (the queue path
# without tables) and the smallest table (cost_ratio: the cost should stay flat; goal, judged
# in code on the interval, at most 1.5 at the largest size). A repetition whose daemon did not
# reach 90 % of the size asked, or whose probe measured nothing, fails its check: it stays in
# raw.csv with the check it failed, is counted in a _failed row and left out of the figures.
# The in-memory side (no I/O) is build/bench/bench_control's.
#
#   bench-scale.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
bench_begin scale "$@"

SESSION_SIZES=${BENCH_SCALE_SESSIONS:-"1000 10000 100000 1000000"}
REPAIR_SIZES=${BENCH_SCALE_STATES:-"10080 100800 1008000"} # 63 x 16 sessions x 10, 100, 1000 lists
REPAIR_TSIS=16
OFFER_RATE=20000    # probe packets per second
SEED_RATE=40000     # session-seeding SPMs per second
SEED_LIST_RATE=5000 # NAK lists (63 SQNs each) per second
PROBE_SECONDS=0.5
PROBE_RUNS=3 # probe runs per daemon: the daemon's figure is their median
if [ "$BENCH_SMOKE" = 1 ]; then
	SESSION_SIZES="100 1000"
	REPAIR_SIZES="1008 2016"
	PROBE_SECONDS=0.2
	PROBE_RUNS=1
fi
SESSION_MIN=${SESSION_SIZES%% *}
SESSION_MAX=${SESSION_SIZES##* }
REPAIR_MIN=${REPAIR_SIZES%% *}
REPAIR_MAX=${REPAIR_SIZES##* }

# The tables' scale is what is measured: the default bounds (a 256 MB budget, limits derived
# from it, shares of a half and a quarter, 100 new sessions per second per interface, policing
# of one source's SPMs and NAKs) would stop the seeding short.
BENCH_ROUTER_EXTRA_CONFIG="ip pgm router memory-budget 4096
ip pgm router max-sessions 2000000
ip pgm router max-rexmit-states 4000000
ip pgm router rexmit-interface-share 100
ip pgm router rexmit-session-share 100
ip pgm router session-rate 0"
BENCH_NO_POLICE=1
NAK_PROBE=${BENCH_SCALE_NAK_PROBE:-duplicate}
case $NAK_PROBE in
duplicate)
	BENCH_ROUTER_EXTRA_CONFIG="$BENCH_ROUTER_EXTRA_CONFIG
ip pgm router nak-eliminate-interval 10000
ip pgm router ncf-interval 0"
	;;
forward) ;;
*) lab_die "BENCH_SCALE_NAK_PROBE: duplicate or forward, not $NAK_PROBE" ;;
esac
# BENCH_SCALE_PERF=DIR: perf record (cpu-clock, call graphs) of the daemon during each NAK probe,
# perf.{states}.{seed}.data there; for reading, not for figures (it adds to the time measured).
PERF_DIR=${BENCH_SCALE_PERF:-}
if [ -n "$PERF_DIR" ]; then
	command -v perf >/dev/null || lab_die "BENCH_SCALE_PERF: perf not installed"
	mkdir -p "$PERF_DIR" || lab_die "BENCH_SCALE_PERF: cannot make $PERF_DIR"
fi

bench_lab_fanout_runs scale scale-runs.csv \
	"rep,order,table,entries,reached,rss0_kb,rss_kb,mem0_bytes,mem_bytes,seed_ms,seed_passes,ns_per_packet,fail_open,naks,eliminated,forwarded,ncfs,status"
csv="$BENCH_RESULTS/scale.csv"
GSI=100
SPM_SQN=1
SEED=0

# probe_counts: the daemon's counters of NAKs received, eliminated, forwarded and NCFs sent.
probe_counts() {
	local ev
	for ev in nak-received nak-eliminated nak-forwarded ncf-sent; do
		echo -n "$(bench_pgmrouterd_event_total r1 "$ev") "
	done
}

# probe KIND N: PROBE_RUNS probe floods against the side up in r1; prints "ns fail_open naks
# eliminated forwarded ncfs": the median ns of the consumer's CPU time per queued packet, the
# packets accepted by fail-open (the socket's drops) in all runs, and with PROBE_COUNTS=1 (a
# daemon with repair states) its counters' growth over all runs: NAKs received, eliminated,
# forwarded, NCFs sent (read before the first run and after the last, outside the CPU time
# measured; "-" otherwise).
#   spm N     SPMs to sessions drawn at random from 0..N-1 of GSI $GSI (new SPM SQNs each time)
#   nak N     NAKs for SQNs drawn at random from the seeded ones of $REPAIR_TSIS sessions
probe() {
	local kind=$1 n=$2 pid c0 c1 q0 q1 i vals="" drops=0 k0="" k1="" perf_pid=""
	pid=${BENCH_SIDE_PID[r1]}
	[ "$PROBE_COUNTS" = 1 ] && k0=$(probe_counts)
	if [ -n "$PERF_DIR" ] && [ "$PROBE_COUNTS" = 1 ]; then
		perf record -F 2999 -g -p "$pid" -o "$PERF_DIR/perf.$n.$SEED.data" >/dev/null 2>&1 &
		perf_pid=$!
	fi
	for i in $(seq 1 "$PROBE_RUNS"); do
		SEED=$((SEED + 1))
		bench_queue_drain r1
		q0=$(bench_queue_stats r1)
		c0=$(bench_cpu_ns "$pid")
		if [ "$kind" = spm ]; then
			bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis "$n" --gsi-base "$GSI" \
				--random "$SEED" --spm-sqn "$SPM_SQN" --spm-trail 0 --spm-lead 100000000 \
				-r "$OFFER_RATE" -T "$PROBE_SECONDS" >/dev/null
			SPM_SQN=$((SPM_SQN + 1000000))
		else
			bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --tsis "$REPAIR_TSIS" \
				--gsi-base "$GSI" --random "$SEED" --sqn-start 1 \
				--sqn-span $((n / REPAIR_TSIS)) --nla-src "$SRC" --nla-grp "$GROUP" \
				-r "$OFFER_RATE" -T "$PROBE_SECONDS" >/dev/null
		fi
		bench_queue_drain r1
		c1=$(bench_cpu_ns "$pid")
		q1=$(bench_queue_stats r1)
		read -r d v <<<"$(awk -v c="$((c1 - c0))" -v a="$q0" -v b="$q1" 'BEGIN {
			split(a, x, " "); split(b, y, " ")
			d = y[4] - x[4]; n = (y[2] - x[2]) - d
			printf "%d %s\n", d, (n > 0 ? sprintf("%.0f", c / n) : "nan") }')"
		drops=$((drops + d))
		vals="$vals $v"
	done
	if [ -n "$perf_pid" ]; then
		kill -INT "$perf_pid" 2>/dev/null
		wait "$perf_pid"
	fi
	[ "$PROBE_COUNTS" = 1 ] && k1=$(probe_counts)
	# shellcheck disable=SC2086
	echo "$(bench_stats $vals | awk '{ print ($6 > 0 ? $1 : "nan") }') $drops" \
		"$(awk -v a="$k0" -v b="$k1" 'BEGIN { n = split(a, x, " "); split(b, y, " ")
			for (i = 1; i <= 4; i++)
				printf "%s%s", (n == 4 && y[i] != "" ? y[i] - x[i] : "-"), (i < 4 ? " " : "\n") }')"
}

# seed_sessions N: one SPM for each of sessions 0..N-1 (those that exist get a new SQN); again,
# up to SEED_PASSES in all, while the daemon knows fewer than 99 % of them (SPMs the queue could
# not take while the table grew were accepted by fail-open, unseen). SEEDED_PASSES: the passes.
SEED_PASSES=3
seed_sessions() {
	local pass known
	for pass in $(seq 1 "$SEED_PASSES"); do
		SEEDED_PASSES=$pass
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis "$1" -n "$1" \
			--gsi-base "$GSI" --spm-sqn "$SPM_SQN" --spm-trail 0 --spm-lead 100000000 \
			-r "$SEED_RATE" -T 600 >/dev/null
		SPM_SQN=$((SPM_SQN + 1000000))
		bench_queue_drain r1
		known=$(bench_pgmrouterd_json_field r1 sessions)
		[ -z "$known" ] || [ "$known" -ge $(($1 * 99 / 100)) ] && break
	done
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

# Per job: the figures of one daemon (or accept-all consumer), kept by job key "table,entries".
declare -A NS BPE DBPE REACHED RSS STATUS
# job REP ORDER TABLE N: one fresh side, seeded to N entries of TABLE (sessions, repair_states)
# or the accept-all consumer on a probe (table acceptall_spm, acceptall_nak), then probed.
job() {
	local rep=$1 order=$2 table=$3 n=$4 side=pgmrouterd key="$3,$4" status=ok
	local rss0="" rss="" mem0="" mem="" reached="" seed_ms="" ns="" drops=0 start
	local naks=- elim=- fwd=- ncfs=-
	SEEDED_PASSES=0
	GSI=$((GSI + 1))
	case $table in acceptall_*) side=acceptall ;; esac
	PROBE_COUNTS=0
	[ "$table" = repair_states ] && PROBE_COUNTS=1
	if ! bench_side_up "$side" r1; then
		status="side_down"
		bench_log "rep $rep $table $n: $side did not come up: $BENCH_SIDE_REASON"
	else
		case $table in
		sessions)
			rss0=$(bench_pgmrouterd_rss_kb r1)
			mem0=$(bench_pgmrouterd_json_field r1 memory_bytes)
			start=$(date +%s%N)
			seed_sessions "$n"
			seed_ms=$((($(date +%s%N) - start) / 1000000))
			reached=$(bench_pgmrouterd_json_field r1 sessions)
			;;
		repair_states)
			seed_sessions "$REPAIR_TSIS"
			rss0=$(bench_pgmrouterd_rss_kb r1)
			mem0=$(bench_pgmrouterd_json_field r1 memory_bytes)
			start=$(date +%s%N)
			seed_repair "$n"
			SEEDED_PASSES=1
			seed_ms=$((($(date +%s%N) - start) / 1000000))
			reached=$(bench_pgmrouterd_json_field r1 repair_states)
			;;
		esac
		if [ "$side" = pgmrouterd ]; then
			rss=$(bench_pgmrouterd_rss_kb r1)
			mem=$(bench_pgmrouterd_json_field r1 memory_bytes)
		fi
		# The probe within the states' lifetime: NAK_RDATA_IVL (10 s) from their confirmation.
		case $table in
		sessions | acceptall_spm) read -r ns drops _ <<<"$(probe spm "${n}")" ;;
		*) read -r ns drops naks elim fwd ncfs <<<"$(probe nak "$n")" ;;
		esac
		# probe ran in a subshell: its seeds (SEED + 1 ...) are used up here, so that every
		# job draws its own (they were the same three for every job)
		SEED=$((SEED + PROBE_RUNS))
		bench_side_down "$side" r1
		if [ "$side" = pgmrouterd ] && [ "${reached:-0}" -lt $((n * 9 / 10)) ]; then
			status="short"
		elif ! [[ $ns =~ ^[0-9.]+$ ]]; then
			status="no_probe"
		elif [ "$table" = repair_states ] && [ "$NAK_PROBE" = duplicate ] &&
			! awk -v n="$naks" -v e="$elim" 'BEGIN { exit !(n > 0 && e >= 0.95 * n) }'; then
			status="probe_mix" # states ran out, or NAKs went upstream: not the lookup alone
		fi
	fi
	bench_log "rep $rep #$order $table $n: $status; reached ${reached:--}, RSS ${rss0:--} ->" \
		"${rss:--} kB, memory_bytes ${mem0:--} -> ${mem:--}, seeded in ${seed_ms:--} ms" \
		"(${SEEDED_PASSES:-0} passes)," \
		"probe ${ns:--} ns/packet, fail-open $drops; probe NAKs $naks: eliminated $elim," \
		"forwarded $fwd, NCFs $ncfs"
	echo "$rep,$order,$table,$n,${reached:-},${rss0:-},${rss:-},${mem0:-},${mem:-},${seed_ms:-},$SEEDED_PASSES,${ns:-},$drops,${naks#-},${elim#-},${fwd#-},${ncfs#-},$status" >>"$runs"
	STATUS[$key]="${STATUS[$key]:-} $status"
	REACHED[$key]="${REACHED[$key]:-} ${reached:-nan}"
	RSS[$key]="${RSS[$key]:-} ${rss:-nan}"
	if [ "$status" = ok ]; then
		NS[$key]="${NS[$key]:-} $ns"
		if [ "$side" = pgmrouterd ] && [ "${reached:-0}" -gt 0 ]; then
			BPE[$key]="${BPE[$key]:-} $(bench_div "$(((rss - rss0) * 1024))" "$reached" 1)"
			DBPE[$key]="${DBPE[$key]:-} $(bench_div "$((mem - mem0))" "$reached" 1)"
		fi
	else
		# A failed repetition keeps its place in the pairs (ratios) as "nan".
		NS[$key]="${NS[$key]:-} nan"
		BPE[$key]="${BPE[$key]:-} nan"
		DBPE[$key]="${DBPE[$key]:-} nan"
	fi
	# Every repetition in raw.csv with the check it failed, if any.
	bench_raw "${table}_${n}_cpu" "$rep" "${ns:-nan}" ns/packet "$status"
	[ "$side" = pgmrouterd ] && bench_raw "${table}_${n}_reached" "$rep" "${reached:-nan}" entries "$status"
	return 0
}

# The jobs of one repetition in a shuffled order (a seed per repetition: reproducible).
jobs_shuffled() {
	local rep=$1 n
	{
		echo "acceptall_spm $SESSION_MIN"
		echo "acceptall_nak $REPAIR_MIN"
		for n in $SESSION_SIZES; do echo "sessions $n"; done
		for n in $REPAIR_SIZES; do echo "repair_states $n"; done
	} | awk -v s="$rep" 'BEGIN { srand(s * 7919) } { print rand(), $0 }' | sort -g | cut -d' ' -f2-
}

for rep in $(seq 1 "$BENCH_REPS"); do
	order=0
	bench_log "repetition $rep: $(jobs_shuffled "$rep" | tr '\n' ';') load average $(cut -d' ' -f1-3 /proc/loadavg)"
	while read -r table n; do
		order=$((order + 1))
		job "$rep" "$order" "$table" "$n"
	done < <(jobs_shuffled "$rep")
done

# Summary ----------------------------------------------------------------------------------------
failed_row() { # failed_row KEY METRIC: the repetitions of KEY that failed a check
	local f
	f=$(tr ' ' '\n' <<<"${STATUS[$1]:-}" | grep -c -v -E '^(ok)?$')
	bench_row "${2}_failed" "$f" "repetitions failing a check (raw.csv)"
	[ "$f" -gt 0 ] && bench_log "$2: $f repetitions failed a check:${STATUS[$1]}"
}

# shellcheck disable=SC2086
for t in acceptall_spm:$SESSION_MIN acceptall_nak:$REPAIR_MIN; do
	key="${t%%:*},${t#*:}"
	bench_figure "${t%%:*}_cpu" ns/packet ${NS[$key]}
	failed_row "$key" "${t%%:*}"
done

echo "table,entries,reached,rss_kb,bytes,bytes_lo,bytes_hi,daemon_bytes,daemon_bytes_lo,daemon_bytes_hi,ns,ns_lo,ns_hi,cost_ratio,cost_ratio_lo,cost_ratio_hi,vs_acceptall,vs_acceptall_lo,vs_acceptall_hi" >"$csv"
# shellcheck disable=SC2086 # the value lists are word-split on purpose
for table in sessions repair_states; do
	if [ "$table" = sessions ]; then
		sizes=$SESSION_SIZES smallest=$SESSION_MIN largest=$SESSION_MAX per=per_session all=acceptall_spm,$SESSION_MIN
	else
		sizes=$REPAIR_SIZES smallest=$REPAIR_MIN largest=$REPAIR_MAX per=per_state all=acceptall_nak,$REPAIR_MIN
	fi
	for n in $sizes; do
		key="$table,$n"
		m="${table}_${n}"
		read -r reached _ <<<"$(bench_stats ${REACHED[$key]})"
		read -r rss _ <<<"$(bench_stats ${RSS[$key]})"
		bench_row "${m}_reached" "$reached" "entries (median)"
		bench_row "${m}_rss" "$rss" "kB (median)"
		bench_figure "${m}_bytes_$per" bytes ${BPE[$key]}
		bench_figure "${m}_daemon_bytes_$per" bytes ${DBPE[$key]}
		bench_figure "${m}_cpu" ns/packet ${NS[$key]}
		read -r b blo bhi _ <<<"$(bench_median_ci ${BPE[$key]})"
		read -r d dlo dhi _ <<<"$(bench_median_ci ${DBPE[$key]})"
		read -r c clo chi _ <<<"$(bench_median_ci ${NS[$key]})"
		# Ratios within each repetition: to the smallest table, to accept-all.
		read -r r rlo rhi rn <<<"$(bench_ratio_ci "${NS[$table,$smallest]}" "${NS[$key]}")"
		read -r a alo ahi an <<<"$(bench_ratio_ci "${NS[$all]}" "${NS[$key]}")"
		if [ "$n" != "$smallest" ] && [ "$rn" -gt 0 ]; then
			bench_row "${m}_cost_ratio" "$r" "x smallest table (geometric mean)"
			bench_row "${m}_cost_ratio_lo" "$rlo" "x smallest table"
			bench_row "${m}_cost_ratio_hi" "$rhi" "x smallest table"
			bench_row "${m}_cost_ratio_n" "$rn" repetitions
		fi
		if [ "$an" -gt 0 ]; then
			bench_row "${m}_vs_acceptall" "$a" "x accept-all (geometric mean)"
			bench_row "${m}_vs_acceptall_lo" "$alo" "x accept-all"
			bench_row "${m}_vs_acceptall_hi" "$ahi" "x accept-all"
			bench_row "${m}_vs_acceptall_n" "$an" repetitions
		fi
		[ "$n" = "$largest" ] && [ "$n" != "$smallest" ] &&
			bench_verdict "${m}_cost_ratio_goal" "$rlo" "$rhi" 1.5 "$rn"
		failed_row "$key" "$m"
		[ "$n" = "$smallest" ] && r=1 rlo=1 rhi=1
		echo "$table,$n,$reached,$rss,$b,$blo,$bhi,$d,$dlo,$dhi,$c,$clo,$chi,$r,$rlo,$rhi,$a,$alo,$ahi" >>"$csv"
	done
done
exit 0

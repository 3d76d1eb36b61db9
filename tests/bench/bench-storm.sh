#!/bin/bash
# NAK storm: K real OpenPGM receivers (tests/peers/pgm-recv) on one LAN behind the router, one
# OpenPGM source (pgm-send) upstream. Every Nth ODATA is dropped on the router's interface into
# the LAN (before the LAN, so every receiver loses the same packets) and all K receivers ask for
# it at once. Sides, interleaved: plain kernel forwarding (receivers NAK the source, the source
# confirms) and pgmrouterd (receivers NAK the router, which confirms and forwards one NAK).
# Measured per run, from the segments' counters, a capture on the receivers' LAN and the peers'
# logs:
#   NAK packets reaching the source's LAN per lost packet
#   NCF packets on the receivers' LAN per lost packet
#   NCF latency: first NAK of a (TSI, SQN) on the LAN to the first NCF for it (median, p99)
#   time to repair: a lost message's repair delivered at a receiver minus its original send
#                   (pgm-send --send-log, pgm-recv --repair-log; one host, one monotonic clock)
#   the router's hops, from a second capture on the source's LAN: the first NAK of a (TSI, SQN)
#                   on the LAN to the first on the source's LAN, and the first RDATA there to
#                   the first on the LAN (median, p99)
# Goals (README, Verdicts): time to repair with pgmrouterd no worse than without at every K
# (median and p99), NAKs at the source per lost packet at most 1.05 at K = 128.
#
# BENCH_STORM_KS (default "8 32 128"), BENCH_STORM_SIDES (default "kernel acceptall pgmrouterd"):
# the accept-all side is the least any NFQUEUE network element costs a repair (the accept-all
# consumer on the daemon's rules: the receivers NAK the source, the NAK and the RDATA pass through
# the queue), with rows k{K}_acceptall_*_vs_kernel and k{K}_pgmrouterd_*_vs_acceptall and the
# repair goals judged for it too (k{K}_acceptall_repair_*_goal): where the floor itself fails a
# goal, no network element on this data plane meets it in this lab (tests/bench/README).
# BENCH_STORM_KEEP=DIR keeps each run's captures, send and repair logs and the daemon's log with
# its repair state events (debug ip pgm router events) in DIR, to attribute every NAK that reached
# the source to a cause.
# BENCH_STORM_SEND_ARGS: more options for the source on every side, e.g. --repair-at-once (the
# source repairs when the NAK arrives, not with its next message: tests/bench/README).
#
#   bench-storm.sh [--smoke]
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# Delays are measured here: the router is not pinned. On a shared two-core machine a router
# pinned to one CPU waits whenever other work holds that CPU, although the other may be idle
# (measured: median 80 us and p90 2 ms pinned, 45 us and 70 us not).
BENCH_PIN_ROUTER=0
bench_begin storm "$@"
# Up to 128 receivers share the two CPUs with the source and the router: in a real network each
# has its own. The source and the router daemon (the two that answer NAKs, one per side) run at
# a higher priority (nice -10), so neither side's answers wait behind the receivers' work.
NICE="nice -n -10"

# The accept-all side is the floor (below): a repair goal it fails itself is out of reach of any
# network element on this data plane in this lab, and the run says so in code.
SIDES=${BENCH_STORM_SIDES:-"kernel acceptall pgmrouterd"}
KS=${BENCH_STORM_KS:-"8 32 128"}
COUNT=1500 # messages per run
RATE=500   # messages per second
LOSS_EVERY=30
if [ "$BENCH_SMOKE" = 1 ]; then
	KS="4"
	COUNT=300
fi
KMAX=${KS##* }
[ -x "$LAB_PEERS/pgm-send" ] && [ -x "$LAB_PEERS/pgm-recv" ] || lab_die "peers not built (make tools)"

bench_lab_init storm
bench_topo_fanout "$KMAX" 0
SRC=$TOPO_SOURCE_ADDR
GROUP=239.192.0.1
lab_topo_loss a "nth:$LOSS_EVERY" odata
summary="$BENCH_RESULTS/storm-summary.csv" # medians over the repetitions, for plot-storm.gp
echo "k,side,naks_at_source_per_loss,ncfs_per_loss,ncf_latency_median_us,repair_median_ms,repair_p99_ms,repair_median_mean_ms,repair_median_lo_ms,repair_median_hi_ms,repair_p99_mean_ms,repair_p99_lo_ms,repair_p99_hi_ms" >"$summary"
rm -f "$BENCH_RESULTS"/storm-repair-*.txt
runs="$BENCH_RESULTS/storm-runs.csv"
echo "k,side,rep,lost,naks_at_source,ncfs,naks_on_lan,ncf_latency_median_us,ncf_latency_p99_us,repair_median_ms,repair_p99_ms,receivers_ok" >"$runs"
# Without ODATA the captures stay small: the PGM type nibble, behind the IP header.
CAPTURE_FILTER='ip proto 113 and (ip[((ip[0] & 0x0f) << 2) + 4] & 0x0f) != 4'

# percentiles: values on stdin -> "median p99 n mean" (nearest rank for p99).
percentiles() {
	sort -g | awk '{ v[NR] = $1; sum += $1 }
		END {
			if (NR == 0) { print "nan nan 0 nan"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			r = int(0.99 * NR + 0.999999); if (r < 1) r = 1
			printf "%.3f %.3f %d %.3f\n", m, v[r], NR, sum / NR
		}'
}

_ready() { grep -q '^event=ready' "$1"; }

# Per (K, side, figure): one value per repetition, "nan" when that run measured nothing, so the
# ratios pair the same repetitions.
declare -A M MISSING FAILED ST
add() { M[$1]="${M[$1]:-} ${2:-nan}"; }

# run_one K SIDE REP
run_one() {
	local k=$1 side=$2 rep=$3 i h pids=() cap capfile sendlog lost0 lost nak_src ncf nak_a
	local lat stat ok=0 spid timeout capsrc capsrcpid deadline left hopnak hoprdata
	BENCH_SIDE_WRAPPER=$NICE
	if ! bench_side_up "$side" r1; then
		BENCH_SIDE_WRAPPER=""
		MISSING[$side]=$BENCH_SIDE_REASON
		return
	fi
	BENCH_SIDE_WRAPPER=""
	[ -n "${BENCH_STORM_KEEP:-}" ] && [ "$side" = pgmrouterd ] &&
		for c in events timers; do
			bench_pgmrouterd_cli r1 "debug ip pgm router $c" >/dev/null 2>&1
		done
	timeout=$((COUNT / RATE + 15))
	for l in src a; do lab_counts_reset "$l"; done
	lost0=$(lab_topo_loss_dropped a)
	capfile="$LAB_DIR/storm-$k-$side-$rep.pcapng"
	lab_spawn lan:a "$LAB_DIR/dumpcap.log" dumpcap -q -i br0 -f "$CAPTURE_FILTER" -w "$capfile"
	cap=$LAB_PID
	lab_wait 10 "capture on a" test -s "$capfile"
	capsrc="$LAB_DIR/storm-$k-$side-$rep-src.pcapng"
	lab_spawn lan:src "$LAB_DIR/dumpcap-src.log" dumpcap -q -i br0 -f "$CAPTURE_FILTER" -w "$capsrc"
	capsrcpid=$LAB_PID
	lab_wait 10 "capture on src" test -s "$capsrc"
	for i in $(seq 1 "$k"); do
		h=a$i
		rm -f "$LAB_DIR/repair.$h.log"
		lab_spawn "$h" "$LAB_DIR/recv.$h.log" "$LAB_PEERS/pgm-recv" \
			-n "$(lab_addr "$h" eth0);$GROUP" -c "$COUNT" -I "$rep" -T "$((timeout + 300))" \
			--repair-log "$LAB_DIR/repair.$h.log"
		pids+=("$LAB_PID")
	done
	for i in $(seq 1 "$k"); do
		lab_wait 20 "receiver a$i ready" _ready "$LAB_DIR/recv.a$i.log" || break
	done
	sendlog="$LAB_DIR/send.log"
	# The source pinned to the sender CPU; the receivers go where the scheduler puts them.
	# shellcheck disable=SC2086
	lab_spawn s1 "$LAB_DIR/send.out" ${BENCH_CPU_SEND:+taskset -c "$BENCH_CPU_SEND"} $NICE \
		"$LAB_PEERS/pgm-send" -n "$SRC;$GROUP" -c "$COUNT" -r "$RATE" -I "$rep" \
		--linger 2000 -T "$timeout" --send-log "$sendlog" ${BENCH_STORM_SEND_ARGS:-}
	spid=$LAB_PID
	lab_wait_pid "$spid" "$((timeout + 10))"
	# The source is gone: whatever a receiver still lacks now never comes. Up to 10 s more for
	# them all (their own time-out counts from their start, which on a loaded machine can be
	# tens of seconds before the source's for the first of 128).
	deadline=$(($(date +%s) + 10))
	for i in $(seq 1 "$k"); do
		left=$((deadline - $(date +%s)))
		lab_wait_pid "${pids[$((i - 1))]}" "$((left > 1 ? left : 1))" && ok=$((ok + 1))
	done
	lab_capture_stop "$cap"
	lab_capture_stop "$capsrcpid"
	bench_lan_settle a
	if [ "$side" = pgmrouterd ] && [ "$ok" != "$k" ]; then
		bench_log "k=$k rep $rep: pgmrouterd's counters after a run with incomplete receivers:"
		bench_pgmrouterd_cli r1 "show ip pgm router traffic" 2>&1 | sed 's/^/    /' >&2
	fi
	bench_side_down "$side" r1

	lost=$(($(lab_topo_loss_dropped a) - lost0))
	nak_src=$(lab_count src nak)
	ncf=$(lab_count a ncf)
	nak_a=$(lab_count a nak)
	stat=$("$BENCH_BIN/pgm-pcapstat" --from nak --to ncf "$capfile" 2>/dev/null)
	# the router's hops: a NAK from the LAN to the source's LAN, the RDATA back
	hopnak=$("$BENCH_BIN/pgm-pcapstat" --from nak@1 --to nak@2 "$capfile" "$capsrc" 2>/dev/null)
	hoprdata=$("$BENCH_BIN/pgm-pcapstat" --from rdata@2 --to rdata@1 "$capfile" "$capsrc" 2>/dev/null)
	if [ -n "${BENCH_STORM_KEEP:-}" ]; then
		# diagnosis: both captures, the send and repair logs, the daemon's event log
		mkdir -p "$BENCH_STORM_KEEP"
		mv "$capfile" "$capsrc" "$BENCH_STORM_KEEP/"
		cp "$sendlog" "$BENCH_STORM_KEEP/send-$k-$side-$rep.log"
		cat "$LAB_DIR"/repair.a*.log >"$BENCH_STORM_KEEP/repair-$k-$side-$rep.log" 2>/dev/null
		[ "$side" = pgmrouterd ] && cp "$LAB_DIR/pgmrouterd.r1.log" "$BENCH_STORM_KEEP/pgmrouterd-$k-$rep.log"
	fi
	rm -f "$capfile" "$capsrc"
	# Time to repair: every repaired message at every receiver against its send time.
	lat=$(cat "$LAB_DIR"/repair.a*.log 2>/dev/null |
		awk -v sl="$sendlog" 'BEGIN { while ((getline l < sl) > 0) { split(l, f, " "); t[f[1]] = f[2] } }
			($1 in t) { printf "%.3f\n", ($2 - t[$1]) / 1000 }')
	# Every repair latency of the (K, side), pooled over the repetitions, for the distribution.
	echo "$lat" | grep . >>"$BENCH_RESULTS/storm-repair-k$k-$side.txt"
	read -r rmed rp99 rn rmean <<<"$(echo "$lat" | grep . | percentiles)"
	if [ "$lost" -le 0 ]; then
		# Kept in its place (nan: the pairs of the ratios stay aligned), reported as failed.
		bench_log "k=$k $side rep $rep: FAILED CHECK nothing_lost: no figures"
		bench_status_add "ST[$k,$side]" nothing_lost
		for f in ok nak ncf naklan ncfmed ncfp99 rmed rp99 rmean hnak hrdata; do add "$k,$side,$f" nan; done
		return
	fi
	bench_log "k=$k $side rep $rep: $ok/$k receivers complete; lost $lost; NAKs at source" \
		"$nak_src, NCFs on the LAN $ncf, NAKs on the LAN $nak_a; NCF latency median" \
		"$(lab_kv median_us "$stat") us p99 $(lab_kv p99_us "$stat") us ($(lab_kv matched "$stat")" \
		"matched); repair median $rmed ms p99 $rp99 ms over $rn repairs; router hops, median" \
		"(p99): NAK $(lab_kv median_us "$hopnak") us ($(lab_kv p99_us "$hopnak") us), RDATA" \
		"$(lab_kv median_us "$hoprdata") us ($(lab_kv p99_us "$hoprdata") us)"
	[ "$ok" = "$k" ] || bench_log "k=$k $side rep $rep: receivers that failed:" \
		"$(for i in $(seq 1 "$k"); do lab_result "$LAB_DIR/recv.a$i.log" |
			awk -v h="a$i" '!/^result=ok/ { print h ": " substr($0, 1, 160) }'; done)"
	echo "$k,$side,$rep,$lost,$nak_src,$ncf,$nak_a,$(lab_kv median_us "$stat"),$(lab_kv p99_us "$stat"),$rmed,$rp99,$ok" >>"$runs"
	add "$k,$side,ok" "$(bench_div "$ok" "$k" 3)"
	if [ "$ok" != "$k" ]; then
		# A run where repair failed says nothing about how repair performs: no figures.
		FAILED[$k,$side]="$((k - ok)) of $k receivers did not get every message (rep $rep)"
		bench_status_add "ST[$k,$side]" receivers_incomplete
		for f in nak ncf naklan ncfmed ncfp99 rmed rp99 rmean hnak hrdata; do add "$k,$side,$f" nan; done
		return
	fi
	bench_status_add "ST[$k,$side]" ok
	add "$k,$side,nak" "$(bench_div "$nak_src" "$lost" 3)"
	add "$k,$side,ncf" "$(bench_div "$ncf" "$lost" 3)"
	add "$k,$side,naklan" "$(bench_div "$nak_a" "$lost" 3)"
	if [ "$(lab_kv matched "$stat")" -gt 0 ] 2>/dev/null; then
		add "$k,$side,ncfmed" "$(lab_kv median_us "$stat")"
		add "$k,$side,ncfp99" "$(lab_kv p99_us "$stat")"
	else
		add "$k,$side,ncfmed" nan
		add "$k,$side,ncfp99" nan
	fi
	add "$k,$side,rmed" "$rmed"
	add "$k,$side,rp99" "$rp99"
	add "$k,$side,rmean" "$rmean"
	hop() { [ "$(lab_kv matched "$1")" -gt 0 ] 2>/dev/null && lab_kv median_us "$1"; }
	add "$k,$side,hnak" "$(hop "$hopnak")"
	add "$k,$side,hrdata" "$(hop "$hoprdata")"
}

# ratio_rows ROW BASE SIDE FIGURE: rows ROW, ROW_lo and ROW_hi, SIDE's FIGURE (rmed, rp99, ...)
# over BASE's at the current K: the per-repetition ratios' geometric mean and its bootstrap
# interval; est, lo, hi and n stay set for a verdict (n 0: no pair, no rows).
ratio_rows() {
	read -r est lo hi n <<<"$(bench_ratio_ci "${M[$k,$2,$4]:-}" "${M[$k,$3,$4]:-}")"
	[ "$n" = 0 ] && return
	bench_row "$1" "$est" "x $2 (geometric mean of $n repetitions)"
	bench_row "${1}_lo" "$lo" "x $2 (95% bootstrap)"
	bench_row "${1}_hi" "$hi" "x $2 (95% bootstrap)"
}

# ci METRIC UNIT VALUE...: rows METRIC_mean, METRIC_mean_lo and METRIC_mean_hi: the mean over the
# repetitions and its 95 % interval (bootstrap, bench_mean_ci); METRIC_lo and METRIC_hi are the
# median's (bench_series).
ci() {
	local metric=$1 unit=$2 est lo hi n
	shift 2
	read -r est lo hi n <<<"$(bench_mean_ci "$@")"
	[ "$n" = 0 ] && return
	bench_row "${metric}_mean" "$est" "$unit (mean of $n repetitions)"
	bench_row "${metric}_mean_lo" "$lo" "$unit (95% bootstrap)"
	bench_row "${metric}_mean_hi" "$hi" "$unit (95% bootstrap)"
}

for k in $KS; do
	for rep in $(seq 1 "$BENCH_REPS"); do
		# shellcheck disable=SC2086
		for side in $(bench_rotation "$rep" $SIDES); do
			[ -n "${MISSING[$side]:-}" ] && continue
			run_one "$k" "$side" "$rep"
		done
	done
	for side in $SIDES; do
		if [ -n "${MISSING[$side]:-}" ]; then
			bench_missing "k${k}_${side}" "${MISSING[$side]}"
			continue
		fi
		p="k${k}_${side}"
		bench_series "${p}_receivers_complete" "share" ${M[$k,$side,ok]:-}
		bench_failed_row "$p" ${ST[$k,$side]:-}
		BENCH_SERIES_STATUS=${ST[$k,$side]:-} # the raw rows of the figures below
		if [ -n "${FAILED[$k,$side]:-}" ] && [ -z "$(bench_stats ${M[$k,$side,nak]:-} | awk '$6 > 0')" ]; then
			bench_missing "${p}_naks_at_source_per_loss" "${FAILED[$k,$side]}"
			BENCH_SERIES_STATUS=""
			continue
		fi
		bench_series "${p}_naks_at_source_per_loss" "NAKs/lost packet" ${M[$k,$side,nak]:-}
		bench_series "${p}_ncfs_on_lan_per_loss" "NCFs/lost packet" ${M[$k,$side,ncf]:-}
		bench_series "${p}_naks_on_lan_per_loss" "NAKs/lost packet" ${M[$k,$side,naklan]:-}
		bench_series "${p}_ncf_latency_median" us ${M[$k,$side,ncfmed]:-}
		bench_series "${p}_ncf_latency_p99" us ${M[$k,$side,ncfp99]:-}
		bench_series "${p}_repair_median" ms ${M[$k,$side,rmed]:-}
		bench_series "${p}_repair_p99" ms ${M[$k,$side,rp99]:-}
		bench_series "${p}_repair_mean" ms ${M[$k,$side,rmean]:-}
		ci "${p}_repair_median" ms ${M[$k,$side,rmed]:-}
		ci "${p}_repair_p99" ms ${M[$k,$side,rp99]:-}
		ci "${p}_naks_at_source_per_loss" "NAKs/lost packet" ${M[$k,$side,nak]:-}
		bench_series "${p}_hop_nak_median" us ${M[$k,$side,hnak]:-}
		bench_series "${p}_hop_rdata_median" us ${M[$k,$side,hrdata]:-}
		med() { bench_stats "$@" | cut -d' ' -f1; }
		mci() { bench_mean_ci "$@" | awk '{ print $1 "," $2 "," $3 }'; }
		BENCH_SERIES_STATUS=""
		echo "$k,$side,$(med ${M[$k,$side,nak]:-}),$(med ${M[$k,$side,ncf]:-}),$(med ${M[$k,$side,ncfmed]:-}),$(med ${M[$k,$side,rmed]:-}),$(med ${M[$k,$side,rp99]:-}),$(mci ${M[$k,$side,rmed]:-}),$(mci ${M[$k,$side,rp99]:-})" >>"$summary"
	done
	# Goals: repair with assist no worse than without (the ratio's whole interval at most 1),
	# judged on the per-repetition ratios' geometric mean and its bootstrap interval.
	for m in rmed:repair_median rp99:repair_p99; do
		ratio_rows "k${k}_${m#*:}_vs_kernel" kernel pgmrouterd "${m%%:*}"
		bench_verdict "k${k}_${m#*:}_goal" "$lo" "$hi" 1 "$n"
	done
	# The mean time to repair, a figure without a goal: the source's repairs leave on its next
	# library call (tests/bench/README, 3.), so every repair time moves in steps of the send
	# interval and a run's median and p99 jump by whole steps; the mean follows small shifts.
	ratio_rows "k${k}_repair_mean_vs_kernel" kernel pgmrouterd rmean
	# With the accept-all side among the sides (the default): the same figures against the
	# least any NFQUEUE network element costs a repair, the NAK and the RDATA through the queue
	# and a consumer that only accepts them, and the goals above judged for it: a FAIL there
	# says the goal is below what this data plane can do in this lab, whatever the network
	# element does.
	case " $SIDES " in *" acceptall "*)
		for m in rmed:repair_median rp99:repair_p99 rmean:repair_mean; do
			ratio_rows "k${k}_acceptall_${m#*:}_vs_kernel" kernel acceptall "${m%%:*}"
			[ "${m%%:*}" = rmean ] || bench_verdict "k${k}_acceptall_${m#*:}_goal" "$lo" "$hi" 1 "$n"
			ratio_rows "k${k}_pgmrouterd_${m#*:}_vs_acceptall" acceptall pgmrouterd "${m%%:*}"
		done
		;;
	esac
	if [ "$k" = 128 ]; then
		read -r est lo hi n <<<"$(bench_mean_ci ${M[$k,pgmrouterd,nak]:-})"
		bench_verdict "k${k}_naks_at_source_per_loss_goal" "$lo" "$hi" 1.05 "$n"
	fi
	for m in nak:naks_at_source ncf:ncfs_on_lan ncfmed:ncf_latency_median rmed:repair_median rp99:repair_p99 rmean:repair_mean hnak:hop_nak_median hrdata:hop_rdata_median; do
		ratios=$(bench_ratios "${M[$k,kernel,${m%%:*}]:-}" "${M[$k,pgmrouterd,${m%%:*}]:-}")
		if [ -n "$ratios" ]; then
			# shellcheck disable=SC2086
			bench_series "k${k}_${m#*:}_ratio" "x kernel" $ratios
		else
			bench_missing "k${k}_${m#*:}_ratio" "$(for side in $SIDES; do
				r=${MISSING[$side]:-${FAILED[$k,$side]:-}}
				[ -n "$r" ] && echo "$side: $r"
			done | head -n 1)"
		fi
	done
done

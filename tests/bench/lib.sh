# shellcheck shell=bash
# Variables set here are read by the benchmark scripts that source this file:
# shellcheck disable=SC2034
#
# Helpers for the namespace benchmarks (tests/bench/bench-*.sh), on top of the lab
# (tests/lab/lib.sh): options, CPU pinning, CSV rows, statistics, the router "sides" compared
# in every benchmark, and the kernel's queue and segment counters they are measured with.
#
# A benchmark compares sides of the router namespace, measured in the same run and interleaved
# (side A, side B, side A, ...), so drift of a shared machine hits every side alike:
#   kernel      plain kernel forwarding (smcroute routes), nothing else
#   acceptall   the daemon's interception rules (installed with pgm-rules) and the minimal
#               accept-all NFQUEUE consumer (nfq-acceptall) on the same queue settings
#   floor       the same rules and consumer settings as acceptall, the consumer nfq-ncffloor:
#               each NAK answered at once with one NCF (the latency benchmark's floor)
#   pgmrouterd  the daemon with its startup config: its own rules, its packet path
# A side that cannot run is reported as missing (a CSV row whose value is "missing"), never
# as a figure.
#
# Output: CSV rows "benchmark,metric,value,unit" on stdout (tests/bench/run.sh collects them),
# everything else on stderr. Extra CSV files for the plots go to $BENCH_RESULTS.

# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"

BENCH_NAME=""
BENCH_SMOKE=0
BENCH_BIN="$LAB_REPO/build/bench"
BENCH_VARIANTS="$LAB_REPO/tests/bench/odata-variants" # nftables tables: hooks, experiment sides
BENCH_REPS=5
BENCH_CPU_SEND=""
BENCH_CPU_ROUTER=""
BENCH_SIDE_REASON=""
# A command put in front of the user-space side's program (e.g. valgrind), and how long a side
# may take to come up.
BENCH_SIDE_WRAPPER=""
BENCH_SIDE_START_TIMEOUT=10
BENCH_QUEUE=113 # the daemon's default queue (the settings table, router/vty/pgm_vty.c); the baseline uses the same
declare -gA BENCH_SIDE_PID

bench_log() { echo "bench $BENCH_NAME: $*" >&2; }

# bench_lab_init NAME: the benchmark's lab run, tagged BENCH_TAG_PREFIX (letters, default pb)
# and NAME: run ids pl-pbodata-*, ... (README), or another prefix to keep parallel runs apart.
bench_lab_init() { lab_init "${BENCH_TAG_PREFIX:-pb}$1"; }

# bench_begin NAME ARGS...: parses --smoke and sets up the results directory and CPU pinning.
bench_begin() {
	local cpus
	BENCH_NAME=$1
	shift
	for a in "$@"; do
		case $a in
		--smoke) BENCH_SMOKE=1 ;;
		*) lab_die "unknown option $a" ;;
		esac
	done
	[ "$BENCH_SMOKE" = 1 ] && BENCH_REPS=1
	BENCH_REPS=${BENCH_REPS_OVERRIDE:-$BENCH_REPS}
	BENCH_RESULTS=${BENCH_RESULTS:-"$LAB_REPO/build/bench/results"}
	mkdir -p "$BENCH_RESULTS"
	# With two CPUs or more: the senders (and the kernel's forwarding, which runs in their
	# softirq context on veth) on CPU 0, the router's user-space consumer on CPU 1.
	cpus=$(nproc 2>/dev/null || echo 1)
	if [ "$cpus" -ge 2 ] && command -v taskset >/dev/null && [ "${BENCH_PIN:-1}" = 1 ]; then
		BENCH_CPU_SEND=0
		BENCH_CPU_ROUTER=1
		# A benchmark that measures delays sets BENCH_PIN_ROUTER=0 (see README).
		[ "${BENCH_PIN_ROUTER:-1}" = 1 ] || BENCH_CPU_ROUTER=""
	fi
	for t in pgm-flood nfq-acceptall nfq-ncffloor pgm-rules pgm-pcapstat; do
		[ -x "$BENCH_BIN/$t" ] || lab_die "missing $BENCH_BIN/$t (make tools)"
	done
	bench_log "start (smoke=$BENCH_SMOKE, repetitions=$BENCH_REPS," \
		"cpu send=${BENCH_CPU_SEND:-any} router=${BENCH_CPU_ROUTER:-any};" \
		"load average $(cut -d' ' -f1-3 /proc/loadavg) on $cpus CPUs)"
}

# bench_on_send NODE CMD...: CMD inside NODE, pinned to the sender CPU.
bench_on_send() {
	local node=$1
	shift
	if [ -n "$BENCH_CPU_SEND" ]; then
		lab_exec "$node" taskset -c "$BENCH_CPU_SEND" "$@"
	else
		lab_exec "$node" "$@"
	fi
}

bench_pin_router() {
	[ -n "$BENCH_CPU_ROUTER" ] && echo "taskset -c $BENCH_CPU_ROUTER"
}

# bench_flood NODE ARGS...: runs pgm-flood in NODE (sender CPU); prints its key=value line.
# Every flood is bounded in time: 120 s unless ARGS give their own -T.
bench_flood() {
	local node=$1
	shift
	bench_on_send "$node" "$BENCH_BIN/pgm-flood" -T 120 "$@" 2>&1 | tail -n 1
}

# Rows -----------------------------------------------------------------------------------------

bench_row() { echo "$BENCH_NAME,$1,$2,$3"; }

# bench_missing METRIC REASON: a figure that could not be measured, with the reason.
bench_missing() {
	local reason=${2//,/;}
	echo "$BENCH_NAME,$1,missing,$reason"
	bench_log "MISSING $1: $2"
}

# bench_stats VALUE...: "median min max q1 q3 n" (median: mean of the middle two for even n;
# quartiles by linear interpolation).
bench_stats() {
	printf '%s\n' "$@" | grep -E '^-?[0-9.]+([eE][-+]?[0-9]+)?$' | sort -g | awk '
		{ v[NR] = $1 }
		function q(p,   h, lo) {
			h = (NR - 1) * p + 1; lo = int(h)
			return lo >= NR ? v[NR] : v[lo] + (h - lo) * (v[lo + 1] - v[lo])
		}
		END {
			if (NR == 0) { print "nan nan nan nan nan 0"; exit }
			printf "%.10g %.10g %.10g %.10g %.10g %d\n", q(0.5), v[1], v[NR], q(0.25), q(0.75), NR
		}'
}

# bench_series METRIC UNIT VALUE...: rows METRIC (median), METRIC_min, METRIC_max, and the
# median's 95 % interval METRIC_lo, METRIC_hi over METRIC_n values (as bench_figure). Every value
# goes to raw.csv; BENCH_SERIES_STATUS, when set, gives each value's status in the same order (ok,
# or the check that repetition failed: bench_status_add), for the raw rows.
bench_series() {
	local metric=$1 unit=$2 med min max q1 q3 n lo hi v i=0 st
	local -a statuses
	shift 2
	read -r -a statuses <<<"${BENCH_SERIES_STATUS:-}"
	# Every value in raw.csv first (a repetition without a number as "no value", or with the
	# check it failed), also when none of them makes a figure.
	for v in "$@"; do
		i=$((i + 1))
		st=${statuses[$((i - 1))]:-}
		if [ -n "$st" ]; then
			bench_raw "$metric" "$i" "$v" "$unit" "$st"
		elif [[ $v =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]]; then
			bench_raw "$metric" "$i" "$v" "$unit" ok
		else
			bench_raw "$metric" "$i" "$v" "$unit" "no value"
		fi
	done
	read -r med min max q1 q3 n <<<"$(bench_stats "$@")"
	if [ "$n" = 0 ]; then
		if printf '%s\n' "${statuses[@]}" | grep -q -v -E '^(ok)?$'; then
			bench_missing "$metric" "every repetition failed a check (${statuses[*]})"
		else
			bench_missing "$metric" "no measurement"
		fi
		return
	fi
	bench_row "$metric" "$med" "$unit"
	bench_row "${metric}_min" "$min" "$unit"
	bench_row "${metric}_max" "$max" "$unit"
	# The median's 95 % interval and the count (bench_median_ci), beside the range.
	read -r _ lo hi n <<<"$(bench_median_ci "$@")"
	bench_row "${metric}_lo" "$lo" "$unit"
	bench_row "${metric}_hi" "$hi" "$unit"
	bench_row "${metric}_n" "$n" repetitions
}

# Failed repetitions. A repetition that failed a check keeps its place in the series as "nan"
# (pairs of sides stay aligned: bench_pairs skips it), its status names the check, and the
# summary counts it: nothing is dropped unseen.
# bench_status_add VAR STATUS: appends STATUS (ok or the check's name, no spaces) to the
# space-separated list in the variable or associative-array element VAR (e.g. 'ST[a,b]').
bench_status_add() {
	local cur
	eval "cur=\${$1:-}"
	eval "$1=\"\$cur \$2\""
}

# bench_failed_row METRIC STATUS...: the row METRIC_failed, the repetitions whose status is not
# ok, and a log line naming their checks.
bench_failed_row() {
	local metric=$1 f
	shift
	f=$(printf '%s\n' "$@" | grep -c -v -E '^(ok)?$')
	bench_row "${metric}_failed" "$f" "repetitions failing a check (raw.csv)"
	[ "$f" -gt 0 ] && bench_log "$metric: $f repetitions failed a check:" \
		"$(printf '%s\n' "$@" | grep -v -E '^(ok)?$' | sort | uniq -c | tr -s ' \n' ' ')"
	return 0
}

# bench_pairs EXPR "A..." "B...": per-repetition values of the awk expression EXPR over x = A_i
# and y = B_i, one per line; pairs where either value is not a number (e.g. "nan": nothing
# measured in that repetition) are skipped.
bench_pairs() {
	local -a a b
	local num='^-?[0-9.]+([eE][-+]?[0-9]+)?$'
	read -r -a a <<<"$2"
	read -r -a b <<<"$3"
	for i in "${!a[@]}"; do
		[[ ${a[$i]} =~ $num ]] && [[ ${b[$i]:-} =~ $num ]] || continue
		awk -v x="${a[$i]}" -v y="${b[$i]}" "BEGIN { $1 }"
	done
}

# bench_ratios "A..." "B...": per-repetition ratios B_i / A_i (A_i > 0), one per line.
bench_ratios() { bench_pairs 'if (x + 0 > 0) printf "%.4f\n", y / x' "$1" "$2"; }

# bench_quantiles FILE: "p50 p99 p99.9" of the numbers in FILE (one a line; the nearest rank).
bench_quantiles() {
	sort -g "$1" | awk '
		{ v[NR] = $1 }
		function q(p,   i) { i = int(p * NR + 0.9999999); if (i < 1) i = 1; return v[i] }
		END {
			if (NR == 0) { print "nan nan nan"; exit }
			printf "%.10g %.10g %.10g\n", q(0.5), q(0.99), q(0.999)
		}'
}

# bench_boot_ci [log]: "estimate low high n" of the numbers on stdin (one a line): their mean
# (with `log`, their geometric mean: the mean of the logarithms of those above 0) and its 95 %
# interval by bootstrap over them (2,000 resamples, a fixed seed: the same input gives the
# same interval).
bench_boot_ci() {
	awk -v geo="${1:-}" '
		geo == "" || $1 > 0 { r[++n] = geo == "" ? $1 : log($1) }
		END {
			if (n == 0) { print "nan nan nan 0"; exit }
			for (i = 1; i <= n; i++) s += r[i]
			srand(27)
			B = 2000
			for (b = 1; b <= B; b++) {
				t = 0
				for (i = 1; i <= n; i++) t += r[1 + int(rand() * n)]
				m[b] = t / n
			}
			# sort the resampled means (insertion sort: B is small)
			for (i = 2; i <= B; i++) {
				x = m[i]
				for (j = i - 1; j >= 1 && m[j] > x; j--) m[j + 1] = m[j]
				m[j + 1] = x
			}
			est = s / n; lo = m[int(0.025 * B) + 1]; hi = m[int(0.975 * B)]
			if (geo != "") { est = exp(est); lo = exp(lo); hi = exp(hi) }
			printf "%.4f %.4f %.4f %d\n", est, lo, hi, n
		}'
}

# bench_ratio_ci "A..." "B...": the paired ratios B_i / A_i of the repetitions summarised as
# "estimate low high n": their geometric mean and its 95 % interval by bootstrap over the
# repetitions (2,000 resamples, a fixed seed: the same input gives the same interval). Pairs
# where either value is not a number are left out; n is the pairs used.
bench_ratio_ci() { bench_ratios "$1" "$2" | bench_boot_ci log; }

# bench_mean_ci VALUE...: "mean low high n": the mean of the numbers given (one per repetition;
# "nan" and other non-numbers left out) and its 95 % interval (bench_boot_ci).
bench_mean_ci() {
	printf '%s\n' "$@" | grep -E '^-?[0-9.]+([eE][-+]?[0-9]+)?$' | bench_boot_ci
}

# bench_verdict METRIC LOW HIGH LIMIT N: a goal "at most LIMIT" judged on a 95 % interval
# [LOW, HIGH]: PASS when all of it is within, FAIL when none of it is, else INCONCLUSIVE (as with
# fewer than three repetitions, whose bootstrap interval is no more than their range). A row METRIC with the verdict as
# its value. bench_verdict_min: the same for a goal "at least LIMIT". BENCH_VERDICT_WHY, when
# set, makes the verdict INCONCLUSIVE whatever the interval, with that reason (e.g. a figure that
# is only a bound).
bench_verdict() { _bench_verdict max "$@"; }
bench_verdict_min() { _bench_verdict min "$@"; }
_bench_verdict() {
	local v what="at most"
	[ "$1" = min ] && what="at least"
	v=$(awk -v op="$1" -v lo="$3" -v hi="$4" -v lim="$5" -v n="$6" -v why="${BENCH_VERDICT_WHY:-}" 'BEGIN {
		if (why != "" || n < 3 || lo == "nan" || hi == "nan") print "INCONCLUSIVE"
		else if (op == "max" ? hi + 0 <= lim + 0 : lo + 0 >= lim + 0) print "PASS"
		else if (op == "max" ? lo + 0 > lim + 0 : hi + 0 < lim + 0) print "FAIL"
		else print "INCONCLUSIVE" }')
	echo "$BENCH_NAME,$2,$v,$what $5 (95% interval $3-$4; $6 repetitions${BENCH_VERDICT_WHY:+; ${BENCH_VERDICT_WHY//,/;}})"
	bench_log "VERDICT $2: $v ($what $5; 95 % interval $3-$4 over $6 repetitions${BENCH_VERDICT_WHY:+; $BENCH_VERDICT_WHY})"
}

# bench_median_ci VALUE...: "median low high n": the median of the numbers given and its 95 %
# interval by bootstrap (2,000 resamples of the values, a fixed seed: the same input gives the
# same interval). With fewer than three values the interval is their range.
bench_median_ci() {
	local vals est n
	vals=$(printf '%s\n' "$@" | grep -E '^-?[0-9.]+([eE][-+]?[0-9]+)?$' | sort -g)
	n=$(grep -c . <<<"$vals")
	if [ "$n" = 0 ]; then
		echo "nan nan nan 0"
		return
	fi
	est=$(awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' <<<"$vals")
	if [ "$n" -lt 3 ]; then
		echo "$est $(head -n 1 <<<"$vals") $(tail -n 1 <<<"$vals") $n"
		return
	fi
	# Each resample's median (its values sorted by insertion: n is a handful), then the 2.5th
	# and 97.5th percentiles of the 2,000 medians.
	awk '
		{ v[++n] = $1 }
		END {
			srand(27)
			for (b = 1; b <= 2000; b++) {
				for (i = 1; i <= n; i++) {
					x = v[1 + int(rand() * n)]
					for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]
					t[j + 1] = x
				}
				print n % 2 ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
			}
		}' <<<"$vals" | sort -g | awk -v est="$est" -v n="$n" '
		NR == 51 { lo = $1 } NR == 1950 { hi = $1 }
		END { printf "%.10g %.10g %.10g %d\n", est, lo, hi, n }'
}

# bench_figure METRIC UNIT VALUE...: a figure as rows METRIC (the median), METRIC_lo and
# METRIC_hi (its 95 % interval, bench_median_ci) and METRIC_n (the values it is made of).
bench_figure() {
	local metric=$1 unit=$2 med lo hi n
	shift 2
	read -r med lo hi n <<<"$(bench_median_ci "$@")"
	if [ "$n" = 0 ]; then
		bench_missing "$metric" "no measurement"
		return
	fi
	bench_row "$metric" "$med" "$unit"
	bench_row "${metric}_lo" "$lo" "$unit"
	bench_row "${metric}_hi" "$hi" "$unit"
	bench_row "${metric}_n" "$n" repetitions
}

# bench_diffs "A..." "B...": per-repetition differences B_i - A_i, one per line.
bench_diffs() { bench_pairs 'printf "%.1f\n", y - x' "$1" "$2"; }

# bench_raw METRIC REP VALUE UNIT STATUS: one repetition's result in $BENCH_RESULTS/raw.csv,
# with the run's provenance (commit, kernel, CPU model: tests/bench/run.sh sets BENCH_PROVENANCE,
# or it is read here). STATUS is ok, or the check the repetition failed: such a repetition is
# kept here and counted (METRIC_failed rows), never silently dropped.
bench_raw() {
	local raw="$BENCH_RESULTS/raw.csv"
	[ -n "${BENCH_PROVENANCE:-}" ] || BENCH_PROVENANCE=$(bench_provenance)
	[ -s "$raw" ] || echo "commit,kernel,cpu,benchmark,metric,rep,value,unit,status" >"$raw"
	echo "$BENCH_PROVENANCE,$BENCH_NAME,$1,$2,$3,${4//,/;},${5//,/;}" >>"$raw"
}

# bench_provenance: "commit,kernel,cpu model" of this run (commas taken out of each).
bench_provenance() {
	local commit kernel cpu
	commit=$(git -C "$LAB_REPO" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
	git -C "$LAB_REPO" diff --quiet HEAD 2>/dev/null || commit="$commit+changes"
	kernel=$(uname -r)
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "${commit//,/;},${kernel//,/;},${cpu//,/;} x$(nproc 2>/dev/null || echo 1)"
}

# bench_div A B [DIGITS]: A / B, or nothing when B is 0.
bench_div() {
	awk -v a="$1" -v b="$2" -v d="${3:-4}" 'BEGIN { if (b != 0) printf "%.*f\n", d, a / b }'
}

# Kernel counters --------------------------------------------------------------------------------

# bench_lan_count LAN TYPE: packets of TYPE on the segment so far.
bench_lan_count() { lab_count "$1" "$2"; }

# bench_lan_settle LAN: waits until the segment's counters stop moving (100 ms apart, 5 s max).
bench_lan_settle() {
	local prev="" cur i
	for i in $(seq 1 50); do
		cur=$(lab_counts "$1")
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 0.1
	done
	return 1
}

# bench_softnet_drops: packets the kernel dropped, all CPUs together, because a CPU's input
# backlog was full (/proc/net/softnet_stat, second column; the machine's, not one namespace's).
# On veth a packet sent is received in the sender's context, so a busy receiving CPU loses some.
bench_softnet_drops() {
	local n=0 _processed dropped _rest
	while read -r _processed dropped _rest; do
		n=$((n + 16#$dropped))
	done </proc/net/softnet_stat
	echo "$n"
}

# bench_queue_stats ROUTER [QUEUE...]: the kernel's view of the router's NFQUEUEs in ROUTER's
# namespace, the queues given or ${BENCH_QUEUES:-$BENCH_QUEUE} (with several workers, queue + k
# is worker k's): "bound id_sequence queue_total socket_drops", each summed over the bound
# queues; bound 1 when every one of them is bound (0 and zeros when none is). The drops are the
# bound sockets' (a full receive buffer, fail-open: accepted unassisted).
bench_queue_stats() {
	local router=$1 queues proc netlink q line portid idseq total drops
	local bound=1 any=0 sum_idseq=0 sum_total=0 sum_drops=0
	shift
	queues=${*:-${BENCH_QUEUES:-$BENCH_QUEUE}}
	proc=$(lab_exec "$router" cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null)
	netlink=$(lab_exec "$router" cat /proc/net/netlink 2>/dev/null)
	for q in $queues; do
		line=$(awk -v q="$q" '$1 == q { print $2, $8, $3; exit }' <<<"$proc")
		if [ -z "$line" ]; then
			bound=0
			continue
		fi
		any=1
		read -r portid idseq total <<<"$line"
		drops=$(awk -v p="$portid" '$2 == 12 && $3 == p { print $9; exit }' <<<"$netlink")
		sum_idseq=$((sum_idseq + idseq))
		sum_total=$((sum_total + total))
		sum_drops=$((sum_drops + ${drops:-0}))
	done
	if [ "$any" = 0 ]; then
		echo "0 0 0 0"
		return
	fi
	echo "$bound $sum_idseq $sum_total $sum_drops"
}

_bench_queue_bound() {
	local bound _
	read -r bound _ <<<"$(bench_queue_stats "$1")"
	[ "$bound" = 1 ]
}

_bench_queue_empty() {
	local total _
	read -r _ _ total _ <<<"$(bench_queue_stats "$1")"
	[ "$total" = 0 ]
}

# bench_queue_drain ROUTER: waits until nothing waits in the queues for a verdict (10 s max).
bench_queue_drain() {
	lab_wait 10 "queue drained in $1" _bench_queue_empty "$1"
}

# bench_queue_settle ROUTER: waits until the packets waiting in the queues hold still (20 ms
# apart, 2 s at most): a burst sent while the consumer is stopped is then queued whole.
bench_queue_settle() {
	local prev=-1 cur i
	for i in $(seq 1 100); do
		read -r _ _ cur _ <<<"$(bench_queue_stats "$1")"
		[ "$cur" = "$prev" ] && return 0
		prev=$cur
		sleep 0.02
	done
	return 1
}

# bench_queue_drain_timed ROUTER PID [SECONDS]: resumes the stopped consumer PID (SIGCONT) and
# prints the wall time in microseconds from then until no queue of ${BENCH_QUEUES:-$BENCH_QUEUE} has a
# packet waiting (nothing after SECONDS, default 10). One bash process in ROUTER's namespace does
# both and polls the kernel's queue table every millisecond with builtins only (no process per
# poll, no busy loop: it must not take a core from the consumer it times; measured, about 3 % of
# one core).
bench_queue_drain_timed() {
	# shellcheck disable=SC2016 # the script is the inner bash's
	lab_exec "$1" bash -c '
		pid=$1 limit=$2 queues=" $3 "
		exec {pause}<> <(:) # read -t on a pipe nobody writes: a sleep without a process
		t0=$EPOCHREALTIME
		end=$(( ${t0%[!0-9]*} + limit ))
		kill -CONT "$pid" || exit 1
		while :; do
			busy=0
			while read -r q _ total _; do
				[[ $queues == *" $q "* ]] && [ "$total" != 0 ] && busy=1
			done </proc/net/netfilter/nfnetlink_queue
			t1=$EPOCHREALTIME
			[ "$busy" = 0 ] && break
			[ "${t1%[!0-9]*}" -ge "$end" ] && exit 1
			read -r -t 0.001 -u "$pause"
		done
		echo $((${t1//[!0-9]/} - ${t0//[!0-9]/}))' \
		_ "$2" "${3:-10}" "${BENCH_QUEUES:-$BENCH_QUEUE}"
}

# bench_rule_matches ROUTER: packets the interception rules' queue rules matched so far
# (queued or, fail-open and bypass, accepted unassisted), over every backend's rules and both
# families: the counters of the nftables tables' queue rules and of the iptables and ip6tables
# NFQUEUE rules.
bench_rule_matches() {
	local n m
	n=$({
		lab_exec "$1" iptables-save -c -t mangle 2>/dev/null
		lab_exec "$1" ip6tables-save -c -t mangle 2>/dev/null
	} | awk '/NFQUEUE/ { if (match($0, /^\[[0-9]+:/)) n += substr($0, 2, RLENGTH - 2) }
			END { printf "%.0f\n", n }')
	m=$({
		lab_exec "$1" nft list table ip pgmrouter 2>/dev/null
		lab_exec "$1" nft list table ip6 pgmrouter 2>/dev/null
	} | awk '/queue num/ { for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) }
			END { printf "%.0f\n", n }')
	echo $((${n:-0} + ${m:-0}))
}

# Router sides -----------------------------------------------------------------------------------
#
# bench_side_up SIDE ROUTER: brings SIDE up in ROUTER (interception on every interface of the
# router); 0 when it runs, 1 when it cannot (BENCH_SIDE_REASON says why). The user-space
# program's pid is BENCH_SIDE_PID[ROUTER]. bench_side_down SIDE ROUTER ends it and removes what
# it installed.

# bench_steer_lan_rx ROUTER: the lab network's share of the packets ROUTER transmits (the LAN
# bridges and the hosts behind them) processed on the sender CPU, by RPS on the LAN-side ports of
# ROUTER's links. veth delivers a transmitted packet on the transmitting CPU, in the transmitting
# process's context: without this the router CPU's consumer is also charged for the bridges,
# counters and receiving hosts of the namespace lab, work a real router hands to its NIC and the
# network. Applies to every side alike; nothing to do without pinning or with BENCH_STEER=0.
bench_steer_lan_rx() {
	local router=$1 lan port mask
	[ -n "${BENCH_CPU_SEND:-}" ] && [ "${BENCH_STEER:-1}" = 1 ] || return 0
	mask=$(printf '%x' $((1 << BENCH_CPU_SEND)))
	awk -v n="$router" '$1 == n { print $3, $5 }' "$LAB_DIR/links" | while read -r lan port; do
		lab_lan_exec "$lan" sh -c "echo $mask >/sys/class/net/$port/queues/rx-0/rps_cpus" ||
			lab_die "cannot steer $port of LAN $lan to CPU $BENCH_CPU_SEND"
	done
}

bench_router_ifs() {
	awk -v n="$1" '$1 == n { print $2 }' "$LAB_DIR/links"
}

bench_side_up() {
	local side=$1 router=$2
	BENCH_SIDE_REASON=""
	case $side in
	kernel) return 0 ;;
	rules) _bench_rules_up "$router" ;;
	notransit) _bench_rules_up "$router" && _bench_transit_remove "$router" ;;
	acceptall) _bench_acceptall_up "$router" ;;
	floor) _bench_acceptall_up "$router" nfq-ncffloor ;;
	pgmrouterd) bench_pgmrouterd_up "$router" ;;
	pgmrouterd_b) BENCH_PGMROUTERD_BIN=${BENCH_LATENCY_AB_BIN:-} bench_pgmrouterd_up "$router" ;;
	*)
		# tests/bench/odata-variants/NAME.nft, a table pgmbench-nft: the hooks side (empty base
		# chains), or an experiment's own
		[ -f "$BENCH_VARIANTS/$side.nft" ] || lab_die "unknown side $side"
		if ! lab_exec "$router" nft -f "$BENCH_VARIANTS/$side.nft" >"$LAB_DIR/nft.$router.log" 2>&1; then
			BENCH_SIDE_REASON="$side.nft not installed: $(tail -n 1 "$LAB_DIR/nft.$router.log")"
			return 1
		fi
		;;
	esac
}

# bench_rotation REP SIDE...: the sides in repetition REP's order, rotated by one a repetition
# (A B C, B C A, ...: with two sides A B, B A), so that the drift of a shared machine hits them
# alike.
bench_rotation() {
	local k=$((($1 - 1) % ($# - 1)))
	shift
	echo "${@:k+1}" "${@:1:k}"
}

# bench_side_up_once SIDE ROUTER: bench_side_up, but false at once for a side that could not come
# up before in this run; BENCH_SIDE_MISSING[SIDE] has the reason.
declare -gA BENCH_SIDE_MISSING
bench_side_up_once() {
	[ -z "${BENCH_SIDE_MISSING[$1]:-}" ] || return 1
	bench_side_up "$1" "$2" && return 0
	BENCH_SIDE_MISSING[$1]=$BENCH_SIDE_REASON
	return 1
}

bench_side_down() {
	local side=$1 router=$2
	case $side in
	kernel) return 0 ;;
	rules | notransit) _bench_rules_down "$router" ;;
	acceptall | floor) _bench_acceptall_down "$router" ;;
	pgmrouterd | pgmrouterd_b) bench_pgmrouterd_down "$router" ;;
	*) lab_exec "$router" nft delete table ip pgmbench-nft >/dev/null 2>&1 ;;
	esac
}

# The rules side: the daemon's interception rules and no consumer (queued packets pass by the
# rules' bypass): what the rules cost apart from anything bound to the queue.
_bench_rules_up() {
	local router=$1
	# shellcheck disable=SC2046
	if ! lab_exec "$router" "$BENCH_BIN/pgm-rules" install -q "$BENCH_QUEUE" \
		$([ "${BENCH_NO_POLICE:-0}" = 1 ] && echo -P) $(bench_router_ifs "$router") \
		>"$LAB_DIR/rules.$router.log" 2>&1; then
		BENCH_SIDE_REASON="interception rules not installed: $(tail -n 1 "$LAB_DIR/rules.$router.log")"
		return 1
	fi
}

# The notransit side: the rules side less the queue rules for unicast NAKs past the router (the
# type matches with "fib daddr type != local" in table ip pgmrouter; the nftables backend, the
# one the lab's kernel takes): what those rules cost ODATA, against the rules side in the same run.
_bench_transit_remove() {
	local router=$1 chain handle n=0
	while read -r chain handle; do
		lab_exec "$router" nft delete rule ip pgmrouter "$chain" handle "$handle" &&
			n=$((n + 1))
	done < <(lab_exec "$router" nft -a list table ip pgmrouter |
		awk '$1 == "chain" { c = $2 } /@th.*fib daddr type != local/ { print c, $NF }')
	if [ "$n" = 0 ]; then
		BENCH_SIDE_REASON="no transit rule found (iptables backend?)"
		return 1
	fi
}

_bench_rules_down() {
	lab_exec "$1" "$BENCH_BIN/pgm-rules" remove >/dev/null 2>&1
	_bench_mangle_drop_if_empty "$1"
	return 0
}

# _bench_acceptall_up ROUTER [PROGRAM]: the rules and a minimal consumer, nfq-acceptall or the
# latency floor nfq-ncffloor (same queue settings, same placement as the daemon).
_bench_acceptall_up() {
	local router=$1 prog=${2:-nfq-acceptall} ready pin
	_bench_rules_up "$router" || return 1
	ready="$LAB_DIR/acceptall.$router.ready"
	rm -f "$ready"
	read -r -a pin <<<"$(bench_pin_router) ${BENCH_SIDE_WRAPPER:-}"
	lab_spawn "$router" "$LAB_DIR/acceptall.$router.log" "${pin[@]}" "$BENCH_BIN/$prog" \
		-q "$BENCH_QUEUE" -r "$ready"
	BENCH_SIDE_PID[$router]=$LAB_PID
	if ! lab_wait "$BENCH_SIDE_START_TIMEOUT" "$prog in $router" test -e "$ready"; then
		BENCH_SIDE_REASON="$prog did not bind: $(tail -n 1 "$LAB_DIR/acceptall.$router.log")"
		_bench_acceptall_down "$router"
		return 1
	fi
}

_bench_acceptall_down() {
	local router=$1
	[ -n "${BENCH_SIDE_PID[$router]:-}" ] && lab_stop "${BENCH_SIDE_PID[$router]}"
	BENCH_SIDE_PID[$router]=""
	_bench_rules_down "$router"
}

# The rules' first use created the mangle table; a separate pgm-rules process cannot know that
# and leaves it. Gone again when nothing is in it, so the kernel side runs without its hooks. (The
# lab's loss rules live there too: then it stays.)
_bench_mangle_drop_if_empty() {
	if ! lab_exec "$1" iptables-save -t mangle 2>/dev/null | grep -q '^-A'; then
		lab_exec "$1" nft delete table ip mangle >/dev/null 2>&1
	fi
	return 0
}

# The pgmrouterd side, in one place. The daemon runs with the lab's default startup config
# (router assist on every interface of the router), pinned to the router CPU, and counts as
# running only when it has a packet path: the queue bound and its interception rules installed.
# BENCH_ROUTER_EXTRA_CONFIG (lines) is appended inside the config, before "end". BENCH_NO_POLICE=1
# turns the policing off (the daemon's and pgm-rules'): for floods of one source's NAKs or NCFs
# faster than its limits, which would measure the policer.
# The daemon's startup config and how to tell it is ready.
bench_pgmrouterd_up() {
	local router=$1 conf sock pidfile log pin bin
	bin=${BENCH_PGMROUTERD_BIN:-"$LAB_REPO/build/pgmrouterd"} # another build to compare against
	if [ ! -x "$bin" ]; then
		BENCH_SIDE_REASON="$bin does not exist"
		return 1
	fi
	conf="$LAB_DIR/pgmrouterd.$router.conf"
	sock=$(lab_router_sock "$router")
	pidfile="$LAB_DIR/pgmrouterd.$router.pidfile"
	log="$LAB_DIR/pgmrouterd.$router.log"
	lab_router_config "$router" | sed '/^end$/d' >"$conf"
	[ -n "${BENCH_ROUTER_EXTRA_CONFIG:-}" ] && echo "$BENCH_ROUTER_EXTRA_CONFIG" >>"$conf"
	if [ "${BENCH_NO_POLICE:-0}" = 1 ]; then
		printf 'no ip pgm router police-%s\n' nak ncf spm interface >>"$conf"
	fi
	echo end >>"$conf"
	read -r -a pin <<<"$(bench_pin_router) ${BENCH_SIDE_WRAPPER:-}"
	lab_spawn "$router" "$log" "${pin[@]}" "$bin" -d -f "$conf" -s "$sock" -p "$pidfile"
	BENCH_SIDE_PID[$router]=$LAB_PID
	echo "$LAB_PID" >"$LAB_DIR/pgmrouterd.$router.pid"
	lab_wait "$BENCH_SIDE_START_TIMEOUT" "pgmrouterd packet path in $router" \
		_bench_pgmrouterd_ready "$router" "$LAB_PID" >/dev/null 2>&1
	if ! _bench_pid_alive "$LAB_PID"; then
		# The first line of its log, without the time stamp.
		BENCH_SIDE_REASON="pgmrouterd exited at start: $(grep -v '^$' "$log" | head -n 1 |
			sed -E 's/^[0-9:.]+ //')"
		bench_pgmrouterd_down "$router"
		return 1
	fi
	if ! _bench_queue_bound "$router"; then
		BENCH_SIDE_REASON="pgmrouterd runs but binds no NFQUEUE $BENCH_QUEUE (no packet path)"
		bench_pgmrouterd_down "$router"
		return 1
	fi
	if [ "$(bench_rule_matches_present "$router")" = 0 ]; then
		BENCH_SIDE_REASON="pgmrouterd bound the queue but installed no interception rules"
		bench_pgmrouterd_down "$router"
		return 1
	fi
	return 0
}

bench_pgmrouterd_down() {
	local router=$1
	[ -n "${BENCH_SIDE_PID[$router]:-}" ] && lab_stop "${BENCH_SIDE_PID[$router]}"
	BENCH_SIDE_PID[$router]=""
	# A daemon that died without removing its rules must not leave them to the next side.
	lab_exec "$router" "$BENCH_BIN/pgm-rules" remove >/dev/null 2>&1
	_bench_mangle_drop_if_empty "$router"
	return 0
}

_bench_pid_alive() {
	kill -0 "$1" 2>/dev/null && ! _lab_is_zombie "$1"
}

_bench_pgmrouterd_ready() {
	_bench_pid_alive "$2" || return 0 # dead: stop waiting
	_bench_queue_bound "$1" && [ "$(bench_rule_matches_present "$1")" = 1 ]
}

# bench_rule_matches_present ROUTER: 1 when queue rules exist in ROUTER's namespace (either
# backend), else 0.
bench_rule_matches_present() {
	if lab_exec "$1" iptables-save -t mangle 2>/dev/null | grep -q NFQUEUE; then
		echo 1
	elif lab_exec "$1" nft list ruleset 2>/dev/null | grep -q ' queue '; then
		echo 1
	else
		echo 0
	fi
}

# bench_cpu_ns PID: CPU time the process has used so far (every thread, user and system), in ns,
# from the scheduler's statistics (exact, unlike the tick-based utime/stime). (mawk's %d stops at
# 2^31: every large number here is printed with %.0f.)
bench_cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.0f\n", n }'
}

# The router's own CPU ----------------------------------------------------------------------------
#
# bench_steer_router_rx ROUTER CPU: what ROUTER receives processed on CPU, by RPS on the rx queue
# of each of its interfaces: the kernel's receive and forwarding work of the router namespace
# (netfilter, the routing decision, the transmit onto the next veth) then runs in CPU's NET_RX
# softirq, apart from the senders. With bench_steer_lan_rx the LANs' share of what it sends goes
# back to the sender CPU. False when an interface cannot be steered.
bench_steer_router_rx() {
	local router=$1 mask ifname
	mask=$(printf '%x' $((1 << $2)))
	for ifname in $(bench_router_ifs "$router"); do
		lab_exec "$router" sh -c "echo $mask >/sys/class/net/$ifname/queues/rx-0/rps_cpus" ||
			return 1
	done
}

# bench_if_counters ROUTER: the packet counters of each interface of ROUTER, one interface a line:
# "IF RX_PACKETS TX_PACKETS RX_BYTES" (/proc/net/dev of its namespace: one command).
bench_if_counters() {
	lab_exec "$1" cat /proc/net/dev | awk -v ifs=" $(bench_router_ifs "$1" | tr '\n' ' ')" '
		NR > 2 { sub(/^ +/, ""); split($0, f, /[: ]+/)
			if (index(ifs, " " f[1] " ")) print f[1], f[3], f[11], f[2] }'
}

# bench_cpu_net_rx CPU: "NET_RX softirqs so far on CPU, packets its backlog processed so far"
# (/proc/softirqs; /proc/net/softnet_stat, first column, the row of CPU). Both are the machine's:
# the steering check compares their growth during a run with the router's own packet counts.
bench_cpu_net_rx() {
	local cpu=$1 softirqs processed
	softirqs=$(awk -v c="$cpu" '$1 == "NET_RX:" { print $(c + 2) }' /proc/softirqs)
	processed=$(awk -v c="$cpu" 'NR == c + 1 { print $1 }' /proc/net/softnet_stat)
	echo "${softirqs:-0} $((16#${processed:-0}))"
}

# Time spent in NET_RX softirqs on one CPU, exactly, by the kernel's softirq_entry and
# softirq_exit tracepoints (vector 3, NET_RX) in a tracing instance of this run's own. This
# kernel counts no IRQ time apart (CONFIG_IRQ_TIME_ACCOUNTING unset): /proc/stat's softirq column
# is sampled by the 4 ms tick, which the idle CPU stops (NO_HZ_IDLE), so it misses a mostly idle
# CPU's softirqs and cannot price tens of nanoseconds per packet on a busy one; its idle time is
# exact but counts every other task on the CPU as the router's work. The tracing file system is
# mounted in a private mount namespace for each access: the machine's mounts are not touched; the
# instance (pl-...-softirq, named after the lab run) is removed by bench_softirq_trace_end.
_bench_tracefs() {
	local script=$1 dir
	dir=$(mktemp -d "$LAB_DIR/tracefs.XXXXXX") || return 1
	unshare -m --propagation private sh -c "mount -t tracefs nodev '$dir' && cd '$dir' && $script"
	local rc=$?
	rmdir "$dir" 2>/dev/null
	return $rc
}

# bench_softirq_trace_begin CPU: creates the instance, tracing NET_RX softirqs on CPU (off until
# bench_softirq_trace_on). False when the kernel has no tracing (BENCH_SIDE_REASON says why).
bench_softirq_trace_begin() {
	local cpu=$1 mask
	BENCH_TRACE_INSTANCE="$LAB_ID-softirq"
	mask=$(printf '%x' $((1 << cpu)))
	if ! _bench_tracefs "mkdir instances/$BENCH_TRACE_INSTANCE && cd instances/$BENCH_TRACE_INSTANCE &&
		echo 0 >tracing_on && echo 8192 >buffer_size_kb && echo $mask >tracing_cpumask &&
		echo 'vec == 3' >events/irq/softirq_entry/filter &&
		echo 'vec == 3' >events/irq/softirq_exit/filter &&
		echo 1 >events/irq/softirq_entry/enable && echo 1 >events/irq/softirq_exit/enable" \
		>"$LAB_DIR/tracefs.log" 2>&1; then
		BENCH_SIDE_REASON="no softirq tracing: $(tail -n 1 "$LAB_DIR/tracefs.log")"
		bench_softirq_trace_end
		return 1
	fi
}

# bench_softirq_trace_on: empties the buffer and starts recording.
bench_softirq_trace_on() {
	_bench_tracefs "cd instances/$BENCH_TRACE_INSTANCE && echo >trace && echo 1 >tracing_on"
}

# bench_softirq_trace_off [PID]: stops recording and prints "ns_in_net_rx softirqs lost
# ns_on_pid": the time between each softirq_entry and its softirq_exit, summed (microsecond time
# stamps: the rounding of the two ends cancels out over many softirqs), the softirqs counted, the
# events the buffer lost (overrun; such a run prices nothing), and of the summed time the part that
# ran on top of a thread of PID (0 without PID). The kernel has no IRQ time accounting
# (CONFIG_IRQ_TIME_ACCOUNTING), so a softirq taken while a thread runs is charged to that
# thread's CPU time as well: a side's user-space time minus ns_on_pid is its own.
bench_softirq_trace_off() {
	local tids=""
	[ -n "${1:-}" ] && tids=$(ls /proc/"$1"/task 2>/dev/null | tr '\n' ' ')
	_bench_tracefs "cd instances/$BENCH_TRACE_INSTANCE && echo 0 >tracing_on &&
		cat trace && cat per_cpu/cpu*/stats" 2>/dev/null | awk -v tids="$tids" '
		BEGIN { nt = split(tids, t, " "); for (i = 1; i <= nt; i++) mine[t[i]] = 1 }
		/softirq_entry:/ {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) t0 = substr($i, 1, length($i) - 1)
			task = $1; sub(/.*-/, "", task); on = (task in mine)
		}
		/softirq_exit:/ {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) t1 = substr($i, 1, length($i) - 1)
			if (t0 != "") { d = (t1 - t0) * 1e9; ns += d; n++; if (on) own += d }
			t0 = ""
		}
		/^overrun:/ { lost += $2 }
		END { printf "%.0f %d %d %.0f\n", ns, n, lost, own }'
}

bench_softirq_trace_end() {
	[ -n "${BENCH_TRACE_INSTANCE:-}" ] || return 0
	_bench_tracefs "rmdir instances/$BENCH_TRACE_INSTANCE" >/dev/null 2>&1
	BENCH_TRACE_INSTANCE=""
	return 0
}

# bench_pgmrouterd_cli ROUTER COMMAND: runs a pgmrouter command against the daemon.
bench_pgmrouterd_cli() {
	"$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock "$1")" -c "$2"
}

# bench_pgmrouterd_json_field ROUTER FIELD: one number from `show ip pgm router json`
# (sessions, repair_states, memory_bytes), from the daemon's summary in JSON.
bench_pgmrouterd_json_field() {
	bench_pgmrouterd_cli "$1" "show ip pgm router json" 2>/dev/null |
		grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2
}

# bench_pgmrouterd_event_total ROUTER EVENT: an event counter (show ip pgm router traffic), the
# sum over the interfaces and the router-wide count (events of no interface); nothing when the
# daemon does not answer.
bench_pgmrouterd_event_total() {
	bench_pgmrouterd_cli "$1" "show ip pgm router traffic json" 2>/dev/null |
		jq -e "[(.interfaces[] | .events[\"$2\"]), .router[\"$2\"]] | map(. // 0) | add" 2>/dev/null
}

# bench_pgmrouterd_rss_kb ROUTER: the daemon's resident set (VmRSS, kB).
bench_pgmrouterd_rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/${BENCH_SIDE_PID[$1]}/status" 2>/dev/null
}

# Topologies ---------------------------------------------------------------------------------

# bench_topo_fanout HOSTS_A [HOSTS_B [LANS]]: s1 - src - r1 - a (a1..), and b (b1..) when
# HOSTS_B > 0, like the lab's one-router topology with the receiver count of each LAN chosen (0
# allowed). LANS > 2: LANs c, d, ... up to LANS (at most 8) without hosts (their bridges count
# what r1 sends into them), b then too. r1's interface into the k-th LAN is eth{k}. Every group
# of LAB_GROUPS is routed from the source into every receiver LAN; BENCH_FANOUT_GROUPS="K:GROUP
# ..." instead routes each GROUP into the first K LANs only (bench_fanout_lans K names them).
BENCH_FANOUT_LANS="a b c d e f g h"
bench_topo_fanout() {
	local na=$1 nb=${2:-0} nlans=${3:-0} lan n i k=0 name g oifs=""
	[ "$nlans" -le 8 ] || lab_die "bench_topo_fanout: at most 8 LANs"
	_topo_reset fanout
	_topo_lan src
	_topo_router r1
	lab_attach r1 eth0 src 1
	# shellcheck disable=SC2154 # TOPO_FEED is an associative array (topo.sh)
	TOPO_FEED[src]=""
	_topo_source
	lab_route s1 default "$(lab_addr r1 eth0)"
	for lan in $BENCH_FANOUT_LANS; do
		k=$((k + 1))
		n=0
		case $lan in a) n=$na ;; b) n=$nb ;; esac
		[ "$lan" = a ] || [ "$k" -le "$nlans" ] || { [ "$lan" = b ] && [ "$nb" -gt 0 ]; } || break
		_topo_lan "$lan" src
		lab_attach r1 "eth$k" "$lan" 1
		TOPO_FEED[$lan]="r1 eth$k"
		oifs="${oifs:+$oifs }eth$k"
		TOPO_RECV_LANS="${TOPO_RECV_LANS:+$TOPO_RECV_LANS }$lan"
		for i in $(seq 1 "$n"); do
			name="$lan$i"
			lab_host "$name"
			lab_attach "$name" eth0 "$lan" $((10 + i))
			lab_route "$name" default "$(lab_addr r1 @$lan)"
			TOPO_RECEIVERS="${TOPO_RECEIVERS:+$TOPO_RECEIVERS }$name"
		done
	done
	if [ -n "${BENCH_FANOUT_GROUPS:-}" ]; then
		for g in $BENCH_FANOUT_GROUPS; do
			# shellcheck disable=SC2046
			lab_mroute r1 eth0 "$TOPO_SOURCE_ADDR" "${g#*:}" $(echo "$oifs" | cut -d' ' -f1-"${g%%:*}")
		done
	else
		# shellcheck disable=SC2086
		_topo_mroutes r1 eth0 $oifs
	fi
	_topo_start_routing
}

# bench_fanout_lans K: the first K receiver LANs' names.
bench_fanout_lans() { echo "$BENCH_FANOUT_LANS" | cut -d' ' -f1-"$1"; }

# Router counters and rate searches ------------------------------------------------------------

# bench_if_sum COUNTERS FIELD [IF]: the sum of a column of bench_if_counters' output (2 rx, 3 tx,
# 4 rx bytes) over every interface, or of one.
bench_if_sum() {
	awk -v f="$2" -v i="${3:-}" 'i == "" || $1 == i { n += $f } END { printf "%.0f\n", n }' <<<"$1"
}

# bench_next_gsi: a GSI of its own for every flood, so that each is a new session to the daemon
# (SPMs of an old one numbered from 0 again would be dropped as out of sequence, and their copies
# lost). Kept in a file: the searches run their steps in subshells.
bench_next_gsi() {
	local n
	n=$(cat "$LAB_DIR/gsi" 2>/dev/null || echo 1)
	echo $((n + 1)) >"$LAB_DIR/gsi"
	echo "$n"
}

# bench_router_settle: waits until r1's counters stop moving (100 ms apart, 3 s at most); prints
# the last reading (bench_if_counters).
bench_router_settle() {
	local prev="" cur i
	for i in $(seq 1 30); do
		cur=$(bench_if_counters r1)
		[ "$cur" = "$prev" ] && break
		prev=$cur
		sleep 0.1
	done
	echo "$cur"
}

# bench_bisect STEPS FN ARGS...: the highest offered rate at which the step `FN ARGS... RATE`
# passes. FN prints "PASS ACHIEVED [MORE...]": PASS 1 when the step lost nothing (whatever that
# means to FN), ACHIEVED the rate the sender reached (packets/s). The first step is unpaced
# (RATE 0: as fast as the sender can); when it passes, the sender was the limit. Otherwise the
# offered rate is bisected between nothing and the rate that step reached, STEPS steps in all.
# Prints "ACHIEVED LIMIT MORE..." of the step that passed with the highest rate the sender
# reached (ACHIEVED): LIMIT `router` when a step above it failed; `sender` when none failed or the
# sender fell short of the step's offered rate by more than a tenth (the figure is then only a
# lower bound of the router's); "0 none" when no step passed.
bench_bisect() {
	local steps=$1 fn=$2 lo=0 hi mid i ok got more best="0 none"
	shift 2
	# BENCH_BISECT_FIRST: a paced first step instead (smoke modes: a step the router meets)
	read -r ok got more <<<"$("$fn" "$@" "${BENCH_BISECT_FIRST:-0}")"
	if [ "$ok" = 1 ] && [ "${got:-0}" -gt 0 ]; then
		echo "$got sender $more"
		return
	fi
	hi=${got:-0}
	for i in $(seq 2 "$steps"); do
		mid=$(((lo + hi) / 2))
		[ "$mid" -le 0 ] && break
		read -r ok got more <<<"$("$fn" "$@" "$mid")"
		if [ "$ok" = 1 ] && [ "${got:-0}" -gt 0 ]; then
			lo=$mid
			# a higher step's sender may reach less than a lower one's did: the best reached
			[ "$got" -ge "${best%% *}" ] || continue
			if [ $((got * 10)) -lt $((mid * 9)) ]; then
				best="$got sender $more"
			else
				best="$got router $more"
			fi
		else
			hi=$mid
		fi
	done
	echo "$best"
}

# bench_odata_step SECONDS TSDU RATE: ODATA (one SPM per 1000) from s1 to the group GROUP at RATE
# (0: unpaced) for SECONDS; prints "PASS ACHIEVED IP_LEN LOST" for bench_bisect: PASS 1 when every
# packet sent left r1 on each of its other interfaces (counted on r1's interfaces), the rate the
# sender reached, the datagrams' length and the packets lost.
bench_odata_step() {
	local secs=$1 tsdu=$2 rate=$3 c0 c1 out sent rx tx txmin="" ifn
	c0=$(bench_if_counters r1)
	# shellcheck disable=SC2153 # GROUP: the caller's
	out=$(bench_flood s1 -s "$TOPO_SOURCE_ADDR" -d "$GROUP" -i eth0 -m odata:1000,spm:1 \
		--gsi-base "$(bench_next_gsi)" -z "$tsdu" -r "$rate" -T "$secs")
	c1=$(bench_router_settle)
	sent=$(lab_kv sent "$out")
	rx=$(($(bench_if_sum "$c1" 2 eth0) - $(bench_if_sum "$c0" 2 eth0)))
	for ifn in $(bench_router_ifs r1); do
		[ "$ifn" = eth0 ] && continue
		tx=$(($(bench_if_sum "$c1" 3 "$ifn") - $(bench_if_sum "$c0" 3 "$ifn")))
		[ -z "$txmin" ] || [ "$tx" -lt "$txmin" ] && txmin=$tx
	done
	bench_log "ODATA $tsdu bytes at ${rate}/s: sent ${sent:-?} ($(lab_kv pps "$out") pps), router" \
		"rx $rx (lost before it $((${sent:-0} - rx))), forwarded onto every LAN ${txmin:-0}"
	echo "$([ $((${sent:-0} - ${txmin:-0})) -le 0 ] && [ "${sent:-0}" -gt 0 ] && echo 1 || echo 0)" \
		"$(lab_kv pps "$out" | cut -d. -f1)" \
		"$(($(lab_kv odata_bytes "$out") / $(lab_kv odata "$out")))" "$((${sent:-0} - ${txmin:-0}))"
}

# bench_zero_loss STEPS SECONDS TSDU: ODATA's zero-loss forwarding rate through r1 (bench_bisect
# of bench_odata_step); prints "pps mbps limit".
bench_zero_loss() {
	local pps limit len
	read -r pps limit len _ <<<"$(bench_bisect "$1" bench_odata_step "$2" "$3")"
	echo "$pps $(awk -v r="$pps" -v l="${len:-0}" 'BEGIN { printf "%.1f", r * l * 8 / 1e6 }') $limit"
}

# Queue scenarios (bench-queue, bench-ceiling, bench-overload) --------------------------------
#
# They read the caller's SRC (the source's address), GROUP, RECV (receiver a1's address) and
# ROUTER_A (r1's address on LAN a, where the receivers' NAKs go): bench_queue_addrs sets them
# for the fan-out topology.
bench_queue_addrs() {
	SRC=$TOPO_SOURCE_ADDR
	GROUP=239.192.0.1
	RECV=$(lab_addr a1 eth0)
	ROUTER_A=$(lab_addr r1 eth1)
}

# bench_lab_fanout_runs TAG RUNS_CSV HEADER: the lab TAG (bench_lab_init) with the fan-out
# topology of one receiver on each of LANs a and b (bench_topo_fanout 1 1), the addresses
# bench_queue_addrs sets, and the per-run file $BENCH_RESULTS/RUNS_CSV begun with its HEADER
# line; `runs` names it (bench-restart, bench-scale).
bench_lab_fanout_runs() {
	bench_lab_init "$1"
	bench_topo_fanout 1 1
	bench_queue_addrs
	runs="$BENCH_RESULTS/$2"
	echo "$3" >"$runs"
}

# bench_queue_seed_session GSI [TSIS]: three SPMs of the session (GSI base GSI), or of each of
# TSIS sessions (pgm-flood --tsis: GSIs whose last byte is 0 .. TSIS - 1), with a leading edge far
# ahead, so every NAK of the scenarios is inside the transmit window.
bench_queue_seed_session() {
	local tsis=${2:-1}
	bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm -n $((3 * tsis)) \
		-r $((tsis > 1 ? 5000 : 100)) --tsis "$tsis" --gsi-base "$1" \
		--spm-trail 0 --spm-lead 100000000 >/dev/null
}

# bench_queue_seed_state GSI N: NAK lists for SQNs 1..N from the receiver, then NCF lists for the
# same SQNs from the source (confirming them: the state then waits NAK_RDATA_IVL for RDATA).
bench_queue_seed_state() {
	local lists=$((($2 + 62) / 63))
	bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --nak-list 62 --sqn-start 1 -n "$lists" \
		-r 2000 --gsi-base "$1" --nla-src "$SRC" --nla-grp "$GROUP" >/dev/null
	bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m ncf --nak-list 62 --sqn-start 1 \
		-n "$lists" -r 2000 --gsi-base "$1" >/dev/null
	bench_queue_drain r1
}

# bench_queue_flood SCENARIO GSI [pgm-flood options...]: a scenario's traffic (bench-queue.sh
# names them); prints the flood's key=value line (nak: the NAKs'). The options come after the
# scenario's own and override them (pgm-flood takes the last: e.g. --tsis).
bench_queue_flood() {
	local scenario=$1 gsi=$2
	shift 2
	case $scenario in
	spm) bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m spm --tsis 100 --gsi-base "$gsi" "$@" ;;
	nak)
		# The source's NCFs 50 ms behind the NAKs, at the same rate and SQNs.
		(
			sleep 0.05
			bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m ncf --sqn-start 1 \
				--gsi-base "$gsi" "$@" >/dev/null
		) &
		local ncf_pid=$!
		bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --sqn-start 1 --gsi-base "$gsi" \
			--nla-src "$SRC" --nla-grp "$GROUP" "$@"
		wait "$ncf_pid"
		;;
	nak_unconfirmed)
		bench_flood a1 -s "$RECV" -d "$ROUTER_A" -m nak --sqn-start 1 --gsi-base "$gsi" \
			--nla-src "$SRC" --nla-grp "$GROUP" "$@"
		;;
	rdata_state | rdata_nostate)
		bench_flood s1 -s "$SRC" -d "$GROUP" -i eth0 -m rdata --sqn-start 1 \
			--gsi-base "$gsi" "$@"
		;;
	esac
}

# bench_queue_handled BEFORE AFTER: queued packets a consumer took between two bench_queue_stats
# readings.
bench_queue_handled() {
	local i0 d0 i1 d1
	read -r _ i0 _ d0 <<<"$1"
	read -r _ i1 _ d1 <<<"$2"
	echo $(((i1 - i0) - (d1 - d0)))
}

# bench_queue_assist_problem SCENARIO SIDE SENT SLACK [LANS]: what the segments show the side did
# with a scenario's packets, against what it must do; prints the problem, nothing when right.
# pgmrouterd must assist (NCFs for NAKs, RDATA only where requested); the accept-all consumer
# must change nothing. SLACK packets short of that are allowed for (the caller's: packets accepted
# unassisted, dropped on full input backlogs, ...). SPMs must reach every one of LANS (a b).
bench_queue_assist_problem() {
	local scenario=$1 side=$2 sent=$3 slack=$4 lans=${5:-a b} a b ncf up lan
	for lan in $lans src; do bench_lan_settle "$lan"; done
	case $scenario in
	spm)
		for lan in $lans; do
			a=$(lab_count "$lan" spm)
			[ "$a" -ge "$((sent - slack))" ] || echo "$side forwarded $a SPMs of $sent into $lan"
		done
		;;
	nak | nak_unconfirmed)
		# The NAKs go to the router's address: only pgmrouterd sends them on upstream. A NAK
		# the source's NCF overtook (its flood stalled for the NCFs' 50 ms head start) finds
		# anticipated state and is rightly not forwarded (RFC 3208 7.5): counted as eliminated.
		ncf=$(lab_count a ncf)
		up=$(lab_count src nak)
		if [ "$side" = pgmrouterd ]; then
			local elim
			elim=$(bench_pgmrouterd_event_total r1 nak-eliminated)
			[ "$ncf" -ge "$((sent - slack))" ] && [ "$((up + ${elim:-0}))" -ge "$((sent - slack))" ] ||
				echo "pgmrouterd sent $ncf NCFs and $up NAKs upstream for $sent NAKs" \
					"(${elim:-?} not forwarded: anticipated; $slack allowed for)"
		elif [ "$up" != 0 ]; then
			echo "NAKs upstream ($up) without pgmrouterd"
		fi
		;;
	rdata_state | rdata_nostate)
		a=$(lab_count a rdata)
		b=$(lab_count b rdata)
		if [ "$side" = acceptall ]; then
			[ "$a" -ge "$((sent - slack))" ] && [ "$b" -ge "$((sent - slack))" ] ||
				echo "accept-all: RDATA a=$a b=$b of $sent"
		elif [ "$scenario" = rdata_state ]; then
			[ "$a" -ge "$((sent - slack))" ] && [ "$b" -le "$slack" ] ||
				echo "pgmrouterd forwarded RDATA with state to a=$a (requested) b=$b of $sent"
		else
			[ "$a" -le "$slack" ] && [ "$b" -le "$slack" ] ||
				echo "pgmrouterd forwarded RDATA without state to a=$a b=$b of $sent"
		fi
		;;
	esac
}

# shellcheck shell=bash
#
# Helpers for the end-to-end scenarios (tests/e2e/*/run.sh), on top of the lab (tests/lab/lib.sh),
# and the runner that runs them: a scenario declares its topology, stream, loss, rows and checks
# and calls e2e_run (see "The scenario runner" at the end of this file).
#
# A scenario runs each of its cases in two variants on a fresh topology each time:
#   without   plain kernel multicast forwarding (smcroute), no router assist
#   with      the same, plus pgmrouterd in every router namespace (e2e_router_up)
# When the daemon binary does not exist the "with" variant is skipped, loudly, and the scenario's
# result line says so. E2E_REQUIRE_ROUTER=1 turns that skip into a failure.
#
# Measured values go into a table (e2e_record) and every assertion is a named check with its
# tolerance in the text (e2e_check), so the table shows what was measured and what was required.
# The last line of a scenario's output is machine-readable for tests/e2e/run.sh:
#   E2E-RESULT scenario=NAME without=pass|FAIL with=pass|FAIL|skipped checks=N failed=N seconds=S

# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"

E2E_NAME=""
E2E_TITLE=""
E2E_START=0
E2E_ROWS=()
declare -gA E2E_VAL E2E_VARIANT_FAILED E2E_VARIANT_RAN
declare -gA E2E_RECV_RESULT E2E_COUNTS
E2E_CHECKS=0
E2E_FAILED=0
E2E_SENDER_RESULT=""
E2E_WITH_SKIPPED=0

# e2e_begin NAME TITLE
e2e_begin() {
	E2E_NAME=$1
	E2E_TITLE=$2
	E2E_START=$(date +%s)
	if [ ! -x "$LAB_PEERS/pgm-send" ] || [ ! -x "$LAB_PEERS/zmq-sub" ]; then
		lab_die "test peers not built (make tools)"
	fi
	echo "=== $E2E_NAME: $E2E_TITLE"
}

# e2e_variants: the variants to run, in order (E2E_VARIANTS="without" or "with" runs one of them,
# for debugging).
e2e_variants() {
	case ${E2E_VARIANTS:-without with} in *without*) echo without ;; esac
	case ${E2E_VARIANTS:-without with} in
	*with | *with\ *) lab_router_available && echo with ;;
	esac
	return 0
}

# Call once after the variant loop decided: prints the skip banner when needed.
e2e_note_skips() {
	if ! lab_router_available; then
		E2E_WITH_SKIPPED=1
		echo "!!! $E2E_NAME: SKIPPING the 'with pgmrouterd' variant: $(lab_router_cmd) does not exist"
		echo "!!! $E2E_NAME: only plain kernel forwarding was tested; nothing about router assist"
	fi
}

# e2e_router_config ROUTER: the startup config of pgmrouterd in ROUTER, on stdout: the lab's
# default (lab_router_config) with the scenario's ROUTER_CONFIG lines added (a scenario may
# define scenario_router_config instead).
e2e_router_config() {
	if [ ${#ROUTER_CONFIG[@]} -gt 0 ]; then
		e2e_router_config_plus "$1" "${ROUTER_CONFIG[@]}"
	else
		lab_router_config "$1"
	fi
}

# e2e_router_up: in the "with" variant, starts pgmrouterd (ROUTER_CMD) in every router namespace
# of the current topology and waits for each control socket; records a failed check when one
# does not start. A scenario may define scenario_router_config ROUTER to replace
# e2e_router_config.
e2e_router_up() {
	local r conf
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	for r in $TOPO_ROUTERS; do
		conf="$LAB_DIR/pgmrouterd.$r.conf"
		if declare -F scenario_router_config >/dev/null; then
			scenario_router_config "$r" >"$conf"
		else
			e2e_router_config "$r" >"$conf"
		fi
		# E2E_WORKERS=N: every router with N workers (sessions steered to N queues)
		[ -n "${E2E_WORKERS:-}" ] &&
			sed -i "\$i ip pgm router workers $E2E_WORKERS" "$conf"
		if ! lab_router_start "$r" "$conf"; then
			echo "!!! pgmrouterd did not start in $r"
			e2e_check "pgmrouterd started in $r" 0 -eq 1
			return 1
		fi
	done
	return 0
}

# e2e_router_check_alive: fails the variant when a daemon died during the run.
e2e_router_check_alive() {
	local r alive=1
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	for r in $TOPO_ROUTERS; do
		if ! lab_router_running "$r"; then
			alive=0
			echo "--- pgmrouterd in $r exited during the run:"
			tail -n 20 "$LAB_DIR/pgmrouterd.$r.log" 2>/dev/null | sed 's/^/    /'
		fi
	done
	e2e_check "pgmrouterd alive in every router" "$alive" -eq 1
}

# e2e_case_begin TAG VARIANT PREFIX: a fresh lab for one case of a scenario, in VARIANT
# (without or with); PREFIX starts the case's rows in the table.
e2e_case_begin() {
	lab_init "$1"
	E2E_CASE_VARIANT=$2
	E2E_CASE_PREFIX=$3
	E2E_CASE_CHECKS=0
	E2E_CASE_PASSED=0
	E2E_CASE_START=$(date +%s%N)
}

# e2e_case_end: tears the lab down, checks that nothing is left (no namespace of the run, none
# of its processes) and records the case's time and check count.
e2e_case_end() {
	local variant=$E2E_CASE_VARIANT prefix=$E2E_CASE_PREFIX id=$LAB_ID pids left=0 pid rest
	pids=$(awk '{ print $1 }' "$LAB_DIR/pids" 2>/dev/null)
	e2e_record "$variant" "$prefix time (s)" \
		"$(awk -v a="$E2E_CASE_START" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
	lab_cleanup
	if ip netns list | grep -q "^$id-"; then
		left=1
		ip netns list | grep "^$id-" | sed 's/^/    leftover namespace: /'
	fi
	for pid in $pids; do
		# A live process is a leftover only if it is still in one of the run's namespaces
		# (checked through /proc, as the namespaces' names are gone by now).
		if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
			read -r rest <"/proc/$pid/comm" 2>/dev/null
			case $rest in pgm-* | zmq-* | nfq-delay | smcrouted | dumpcap | pgmrouterd)
				left=1
				echo "    leftover process $pid ($rest)"
				;;
			esac
		fi
	done
	e2e_check "cleanup left nothing" "$left" -eq 0
	e2e_record "$variant" "$prefix checks passed" "$E2E_CASE_PASSED/$E2E_CASE_CHECKS"
}

# e2e_record VARIANT ROW VALUE: a measured value for the table.
e2e_record() {
	local variant=$1 row=$2
	[ -n "${E2E_VAL["$row|seen"]:-}" ] || {
		E2E_ROWS+=("$row")
		E2E_VAL["$row|seen"]=1
	}
	E2E_VAL["$row|$variant"]=$3
	E2E_VARIANT_RAN[$variant]=1
}

# e2e_check TEXT ACTUAL OP EXPECTED: one assertion of the current case (test(1) integer
# operators: -eq -ne -lt -le -gt -ge). TEXT states the tolerance. A failed check gets its own
# row in the table; passed ones are counted (all get rows with E2E_VERBOSE=1).
e2e_check() {
	local text=$1 actual=$2 op=$3 expected=$4 variant=$E2E_CASE_VARIANT
	E2E_CHECKS=$((E2E_CHECKS + 1))
	E2E_CASE_CHECKS=$((E2E_CASE_CHECKS + 1))
	if [[ "$actual" =~ ^-?[0-9]+$ ]] && [[ "$expected" =~ ^-?[0-9]+$ ]] &&
		test "$actual" "$op" "$expected"; then
		E2E_CASE_PASSED=$((E2E_CASE_PASSED + 1))
		[ "${E2E_VERBOSE:-0}" = 1 ] && e2e_record "$variant" "$E2E_CASE_PREFIX check: $text" ok
	else
		E2E_FAILED=$((E2E_FAILED + 1))
		E2E_VARIANT_FAILED[$variant]=1
		e2e_record "$variant" "$E2E_CASE_PREFIX FAILED: $text" "$actual $op $expected: no"
		echo "--- FAILED [$variant] $E2E_CASE_PREFIX $text: $actual $op $expected is false"
	fi
}

# e2e_check_complete RECEIVER...: each receiver delivered every message exactly once and in
# order.
e2e_check_complete() {
	local r
	for r in "$@"; do
		e2e_check "$r complete, exactly once, in order" \
			"$([ "$(e2e_r "$r" result)" = ok ] && echo 1 || echo 0)" -eq 1
	done
}

# e2e_check_all_complete: the same for every receiver of the topology.
e2e_check_all_complete() {
	local r
	for r in $TOPO_RECEIVERS; do e2e_check_complete "$r"; done
}

# e2e_check_recovered DROPPED RECEIVER...: each receiver delivered exactly the DROPPED messages
# from repairs.
e2e_check_recovered() {
	local dropped=$1 r
	shift
	for r in "$@"; do
		e2e_check "$r recovered exactly the dropped messages" "$(e2e_r "$r" recovered)" \
			-eq "$dropped"
	done
}

# e2e_check_no_repair RECEIVER...: each receiver delivered nothing from repairs.
e2e_check_no_repair() {
	local r
	for r in "$@"; do
		e2e_check "$r needed no repair" "$(e2e_r "$r" recovered)" -eq 0
	done
}

# e2e_check_loss LAN DROPPED MIN MAX: the ODATA loss injected into LAN, DROPPED messages, is within
# [MIN, MAX] (the scenario states how many standard deviations that is).
e2e_check_loss() {
	e2e_check "ODATA loss into $1 >= $3" "$2" -ge "$3"
	e2e_check "ODATA loss into $1 <= $4" "$2" -le "$4"
}

# e2e_check_loss_pct LAN DROPPED COUNT MIN MAX: the same with the bounds in percent of the COUNT
# messages sent.
e2e_check_loss_pct() {
	e2e_check "ODATA loss into $1 >= $4 %" "$2" -ge $(($3 * $4 / 100))
	e2e_check "ODATA loss into $1 <= $5 %" "$2" -le $(($3 * $5 / 100))
}

# e2e_pct PART WHOLE: PART as a percentage of WHOLE, one decimal.
e2e_pct() {
	awk -v p="$1" -v w="$2" 'BEGIN { if (w == 0) print "0.0"; else printf "%.1f", 100 * p / w }'
}

# e2e_scale N PERCENT: N * PERCENT / 100, rounded down (for tolerances).
e2e_scale() {
	awk -v n="$1" -v p="$2" 'BEGIN { printf "%d", n * p / 100 }'
}

# e2e_pgm_stream_start GROUP ENCAP COUNT RATE TIMEOUT [SENDER ARGS...]: starts one OpenPGM stream
# from the topology's source to every receiver and returns at once (1 when a receiver did not
# come up); e2e_stream_finish ends it. ENCAP is ip or udp (port 3055 for both directions: OpenPGM
# sources listen for NAKs on the multicast port only, so the two ports must be equal), with the
# suffix -ra for IP Router Alert on every packet the peers send that may carry it. Counters are
# reset and every segment's capture (e2e_wire_*) starts first. E2E_RECV_ARGS (an array) adds
# options to every receiver.
e2e_pgm_stream_start() {
	local group=$1 encap=$2 count=$3 rate=$4 limit=$5 r all=0
	local -a udp=()
	shift 5
	case $encap in udp*) udp=(-u 3055) ;; esac
	case $encap in *-ra) udp+=(-A) ;; esac
	_e2e_stream_prepare "$limit"
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" \
			-n "$(lab_addr "$r" eth0);$group" -c "$count" -T "$limit" "${udp[@]}" \
			"${E2E_RECV_ARGS[@]}"
		E2E_STREAM_PIDS+=("$LAB_PID")
	done
	_e2e_wait_ready || all=1
	lab_topo_routes_wait "$group" || all=1
	lab_spawn "$TOPO_SOURCE" "$LAB_DIR/sender.out" "$LAB_PEERS/pgm-send" \
		-n "$TOPO_SOURCE_ADDR;$group" -c "$count" -r "$rate" -T "$limit" "${udp[@]}" "$@"
	E2E_STREAM_SENDER=$LAB_PID
	return $all
}

# e2e_zmq_stream_start SCHEME GROUP COUNT RATE TIMEOUT [SENDER_OPTION...]: the same with
# zmq-pub and zmq-sub (SCHEME epgm or pgm, port 5555). Each message's send and delivery times go
# to LAB_DIR/sender.sent and LAB_DIR/RECEIVER.delivered (e2e_zmq_repair_latencies).
e2e_zmq_stream_start() {
	local scheme=$1 group=$2 count=$3 rate=$4 limit=$5 r all=0
	shift 5
	_e2e_stream_prepare "$limit"
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/zmq-sub" \
			-e "$scheme://$(lab_addr "$r" eth0);$group:5555" -c "$count" -T "$limit" \
			--delivery-log "$LAB_DIR/$r.delivered" "${E2E_RECV_ARGS[@]}"
		E2E_STREAM_PIDS+=("$LAB_PID")
	done
	_e2e_wait_ready || all=1
	lab_topo_routes_wait "$group" || all=1
	lab_spawn "$TOPO_SOURCE" "$LAB_DIR/sender.out" "$LAB_PEERS/zmq-pub" \
		-e "$scheme://$TOPO_SOURCE_ADDR;$group:5555" -c "$count" -r "$rate" -T "$limit" \
		--send-log "$LAB_DIR/sender.sent" "$@"
	E2E_STREAM_SENDER=$LAB_PID
	return $all
}

# Waits (10 s at most, together) until every receiver said event=ready; gives up at once when
# one of them is gone.
_e2e_wait_ready() {
	local r pid rc end
	end=$(($(date +%s%N) + 10000000000))
	while :; do
		rc=0
		for r in $TOPO_RECEIVERS; do
			grep -q '^event=ready' "$LAB_DIR/$r.out" 2>/dev/null || rc=1
		done
		[ "$rc" = 0 ] && return 0
		for pid in "${E2E_STREAM_PIDS[@]}"; do
			if ! kill -0 "$pid" 2>/dev/null || _lab_is_zombie "$pid"; then rc=2; fi
		done
		[ "$rc" = 2 ] || [ "$(date +%s%N)" -ge "$end" ] && break
		sleep 0.05
	done
	lab_log "receivers not ready ($([ "$rc" = 2 ] && echo "one exited" || echo "after 10 s"))"
	for r in $TOPO_RECEIVERS; do
		grep -q '^event=ready' "$LAB_DIR/$r.out" 2>/dev/null ||
			sed "s/^/    $r: /" "$LAB_DIR/$r.out" | tail -n 3
	done
	return 1
}

E2E_STREAM_PIDS=()
E2E_STREAM_SENDER=""
E2E_STREAM_LIMIT=0
E2E_RECV_ARGS=()

_e2e_stream_prepare() {
	local lan
	E2E_STREAM_LIMIT=$1
	E2E_STREAM_PIDS=()
	E2E_STREAM_SENDER=""
	for lan in $TOPO_LANS; do lab_counts_reset "$lan"; done
	e2e_wire_start
	return 0
}

# e2e_stream_finish: waits for the receivers of the stream started last, stops the sender, and
# reads the counters, the routers' counters and the captures. Fills E2E_RECV_RESULT[receiver]
# (the summary line, or "result=none rc=N"), E2E_SENDER_RESULT and E2E_COUNTS[lan]; in the "with"
# variant the routers' counters are read (e2e_rt). 0 when every receiver passed.
e2e_stream_finish() {
	local all=0
	_e2e_collect "$E2E_STREAM_LIMIT" "${E2E_STREAM_PIDS[@]}" || all=1
	[ -n "$E2E_STREAM_SENDER" ] && lab_stop "$E2E_STREAM_SENDER"
	E2E_SENDER_RESULT=$(lab_result "$LAB_DIR/sender.out")
	[ -n "$E2E_SENDER_RESULT" ] || sed 's/^/    sender: /' "$LAB_DIR/sender.out" | tail -n 5
	_e2e_snapshot_counts
	e2e_router_snapshot
	e2e_wire_stop
	return $all
}

# Reads every segment's counters into E2E_COUNTS once they stopped moving (packets still in
# flight through a router when the peers exited), polling for at most 2 s.
_e2e_snapshot_counts() {
	local lan i before after
	after=$(for lan in $TOPO_LANS; do lab_counts "$lan"; done)
	for i in $(seq 1 20); do
		before=$after
		sleep 0.1
		after=$(for lan in $TOPO_LANS; do lab_counts "$lan"; done)
		[ "$before" = "$after" ] && break
	done
	for lan in $TOPO_LANS; do E2E_COUNTS[$lan]=$(lab_counts "$lan"); done
}

# Waits for the receivers (pids in TOPO_RECEIVERS order) and stores their summaries.
_e2e_collect() {
	local limit=$1 r rc all=0 i=0
	shift
	local -a pids=("$@")
	for r in $TOPO_RECEIVERS; do
		lab_wait_pid "${pids[$i]}" $((limit + 5))
		rc=$?
		E2E_RECV_RESULT[$r]=$(lab_result "$LAB_DIR/$r.out")
		if [ -z "${E2E_RECV_RESULT[$r]}" ]; then
			E2E_RECV_RESULT[$r]="result=none rc=$rc"
			sed "s/^/    $r: /" "$LAB_DIR/$r.out" | tail -n 5
		fi
		[ "$rc" = 0 ] || all=1
		i=$((i + 1))
	done
	return $all
}

# e2e_zmq_repair_latencies RECEIVER...: the repair latency of every loss the receivers of the
# last ZeroMQ stream recovered from, in ms, one a line. ZeroMQ does not say which messages came
# from repairs, but it delivers in order: a lost message is delivered when its repair arrives,
# together with every message held behind it, so it is the head of a run of late messages whose
# latencies fall by the send interval. A head is a message more than 3 ms late (the lab's links
# deliver in well under 1 ms) and later than its predecessor by more than 1 ms; its latency is
# the repair's.
e2e_zmq_repair_latencies() {
	local r
	for r in "$@"; do
		awk 'NR == FNR { sent[$1] = $2; next }
			($1 in sent) { lat = ($2 - sent[$1]) / 1000
				if (lat > 3 && (!(($1 - 1) in prev) || lat > prev[$1 - 1] + 1))
					printf "%.1f\n", lat
				prev[$1] = lat }' \
			"$LAB_DIR/sender.sent" "$LAB_DIR/$r.delivered" 2>/dev/null
	done
}

# e2e_percentile P: the P-th percentile (nearest rank) of the numbers on stdin, "-" when none.
e2e_percentile() {
	sort -n | awk -v p="$1" '{ v[NR] = $1 } END {
		if (NR == 0) { print "-"; exit }
		i = int((p * NR + 99) / 100); if (i < 1) i = 1; print v[i] }'
}

# e2e_c LAN TYPE: a counter of the last stream.
e2e_c() {
	lab_kv "$2" "${E2E_COUNTS[$1]}"
}

# e2e_r RECEIVER KEY: a value from a receiver's summary.
e2e_r() {
	lab_kv "$2" "${E2E_RECV_RESULT[$1]}"
}

# e2e_delivered_all N: every receiver of the stream running has delivered at least N messages, by
# its last progress line (RECV_ARGS=(--progress MS)) or its summary.
e2e_delivered_all() {
	local r n
	for r in $TOPO_RECEIVERS; do
		n=$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" 2>/dev/null | tail -n 1)
		n=$(lab_kv messages "$n")
		[ "${n:-0}" -ge "$1" ] || return 1
	done
}

# e2e_receivers_ok: the number of receivers whose summary says result=ok.
e2e_receivers_ok() {
	local r n=0
	for r in $TOPO_RECEIVERS; do
		[ "$(e2e_r "$r" result)" = ok ] && n=$((n + 1))
	done
	echo "$n"
}

# e2e_record_receivers: a row per receiver of the current case: result, messages delivered,
# duplicates, out of order, messages recovered from RDATA.
e2e_record_receivers() {
	local r
	for r in $TOPO_RECEIVERS; do
		e2e_record "$E2E_CASE_VARIANT" \
			"$E2E_CASE_PREFIX rcv $r on $(lab_node_lan "$r"): result msgs/dup/ooo/recovered" \
			"$(e2e_r "$r" result) $(e2e_r "$r" messages)/$(e2e_r "$r" duplicates)/$(e2e_r "$r" out_of_order)/$(e2e_r "$r" recovered)"
	done
}

# e2e_record_outcome: the rows "CASE receivers complete" (how many of the topology's receivers
# passed) and, for each LAN of LOSS, "CASE ODATA dropped into LAN" (with its percentage of the
# COUNT messages sent, where the runner put the loss there).
e2e_record_outcome() {
	local i=0 spec dropped
	e2e_record "$E2E_CASE_VARIANT" "$E2E_CASE_PREFIX receivers complete" \
		"$(e2e_receivers_ok)/$(echo "$TOPO_RECEIVERS" | wc -w)"
	for spec in $LOSS; do
		dropped=${E2E_DROPPED[$i]}
		i=$((i + 1))
		[ "${spec#*:}" = - ] || dropped="$dropped ($(e2e_pct "$dropped" "$COUNT") %)"
		e2e_record "$E2E_CASE_VARIANT" "$E2E_CASE_PREFIX ODATA dropped into ${spec%%:*}" "$dropped"
	done
}

# e2e_record_values LABEL GETTER NAME...: a row "CASE LABEL: NAME/NAME/..." with the values GETTER
# (a command, split into words) prints for each NAME.
e2e_record_values() {
	local label=$1 n names="" values=""
	local -a getter
	read -r -a getter <<<"$2"
	shift 2
	for n in "$@"; do
		names="${names:+$names/}$n"
		values="${values:+$values/}$("${getter[@]}" "$n")"
	done
	e2e_record "$E2E_CASE_VARIANT" "$E2E_CASE_PREFIX $label: $names" "$values"
}

# e2e_record_events ROUTER EVENT...: in the "with" variant, a row with the router's event counters
# (e2e_router_ev) EVENT...
e2e_record_events() {
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	e2e_record_values "$1" "e2e_router_ev $1" "${@:2}"
}

# e2e_record_dlr KEY...: a row with the values KEY... of the DLR's summary (e2e_dlr_kv).
e2e_record_dlr() { e2e_record_values DLR e2e_dlr_kv "$@"; }

# e2e_record_segments TYPES...: a row per segment of the current case with the wire counts of
# TYPES, e.g. "odata/rdata/nak/ncf".
e2e_record_segments() {
	local lan t v types
	types=$(echo "$*" | tr ' ' '/')
	for lan in $TOPO_LANS; do
		v=""
		for t in "$@"; do v="${v:+$v/}$(e2e_c "$lan" "$t")"; done
		e2e_record "$E2E_CASE_VARIANT" "$E2E_CASE_PREFIX seg $lan: $types" "$v"
	done
}

# Captures on the wire ------------------------------------------------------------------------
#
# Every stream is captured on every segment (dumpcap on the LAN's bridge, which sees every frame
# once) with a filter that leaves out ODATA, then decoded by tshark (Wireshark's PGM dissector,
# checksums verified) into one line per frame:
#   frame ethsrc src dst ttl type ck bad sqn nlist naksrc path udp frag
# type is the PGM type number (-1 for a frame tshark did not decode as PGM), ck the dissector's
# checksum status (1 good, 0 bad, -1 none), bad 1 when tshark marked the frame malformed or
# raised an error-level expert item, sqn the NAK/NCF sequence number, nlist the number of extra
# sequence numbers in OPT_NAK_LIST, naksrc the NAK/NCF source NLA, path the SPM path NLA, udp 1
# for PGM over UDP, frag 1 for an IP fragment that is not decoded as PGM itself (tshark puts a
# reassembled datagram on the frame of its last fragment; the capture filter leaves out ODATA's
# first fragments, so its other fragments stay pieces); IPv6 datagrams fill src, dst, ttl (the
# hop limit), naksrc and path alike. e2e_wire_count and e2e_wire_sum select frames with an awk
# condition on these names.

# IPv6 (the IPv6 lab): PGM or UDP right after the fixed header, or behind a hop-by-hop header
# (Router Alert) of 8 bytes, the only extension header the lab's peers and routers send.
E2E_WIRE_FILTER='(ip proto 113 and (ip[((ip[0]&0xf)<<2)+4]&0x0f) != 4) or (udp and (dst port 3055 or dst port 3056 or dst port 5555) and (udp[12]&0x0f) != 4) or (ip6 proto 113 and (ip6[44]&0x0f) != 4) or (ip6 proto 0 and ip6[40] == 113 and ip6[41] == 0) or (ip6 proto 17 and (ip6[42:2] == 3055 or ip6[42:2] == 3056 or ip6[42:2] == 5555) and (ip6[52]&0x0f) != 4) or (ip6 proto 0 and ip6[40] == 17 and ip6[41] == 0 and (ip6[50:2] == 3055 or ip6[50:2] == 3056 or ip6[50:2] == 5555) and (ip6[60]&0x0f) != 4)'
# shellcheck disable=SC2016 # awk code, expanded by awk
E2E_WIRE_VARS='frame = $1; ethsrc = $2; src = $3; dst = $4; ttl = $5 + 0; type = $6 + 0; ck = $7 + 0; bad = $8 + 0; sqn = $9 + 0; nlist = $10 + 0; naksrc = $11; path = $12; udp = $13 + 0; frag = $14 + 0'
declare -gA E2E_WIRE_PIDS

# e2e_wire_start: starts a capture on every segment of the topology.
e2e_wire_start() {
	local lan
	E2E_WIRE_PIDS=()
	for lan in $TOPO_LANS; do
		rm -f "$LAB_DIR/wire.$lan.pcap" "$LAB_DIR/wire.$lan.tsv"
		lab_capture_start "$lan" "$LAB_DIR/wire.$lan.pcap" "$E2E_WIRE_FILTER" ||
			lab_die "cannot capture on LAN $lan"
		E2E_WIRE_PIDS[$lan]=$LAB_PID
	done
}

# e2e_wire_stop: stops the captures and decodes them.
e2e_wire_stop() {
	local lan
	for lan in "${!E2E_WIRE_PIDS[@]}"; do lab_capture_stop "${E2E_WIRE_PIDS[$lan]}"; done
	for lan in "${!E2E_WIRE_PIDS[@]}"; do
		e2e_wire_decode "$LAB_DIR/wire.$lan.pcap" >"$LAB_DIR/wire.$lan.tsv"
	done
	E2E_WIRE_PIDS=()
}

# e2e_tshark PCAP ARGS...: tshark on a capture with PGM over UDP decoded on the lab's ports and
# PGM checksums verified.
e2e_tshark() {
	local pcap=$1
	shift
	tshark -r "$pcap" -n -o pgm.check_checksum:TRUE -d udp.port==3055,pgm \
		-d udp.port==3056,pgm -d udp.port==5555,pgm "$@" 2>/dev/null
}

# e2e_wire_decode PCAP: the capture as lines of the fields above (tab-separated).
e2e_wire_decode() {
	# Wireshark 4.0 writes the PGM checksum's value into pgm.hdr.cksum.status too, so that
	# field has two values; the status proper (1 good, 0 bad) is the last one.
	e2e_tshark "$1" -T fields -E separator=/t -E occurrence=a -e frame.number -e eth.src \
		-e ip.src -e ip.dst -e ip.ttl -e pgm.hdr.type -e pgm.hdr.cksum.status \
		-e _ws.malformed -e _ws.expert.severity -e pgm.nak.sqn -e pgm.genopts.type \
		-e pgm.genopts.len -e pgm.nak.src.ipv4 -e pgm.spm.path.ipv4 -e udp.dstport \
		-e ip.flags.mf -e ip.frag_offset \
		-e ipv6.src -e ipv6.dst -e ipv6.hlim -e pgm.nak.src.ipv6 -e pgm.spm.path.ipv6 |
		awk -F'\t' '
		function hex(h,   i, c, n) {
			h = tolower(h); sub(/^0x/, "", h); n = 0
			for (i = 1; i <= length(h); i++) {
				c = index("0123456789abcdef", substr(h, i, 1))
				if (c == 0) return -1
				n = n * 16 + c - 1
			}
			return n
		}
		function first(v,   a) { split(v, a, ","); return a[1] }
		function last(v,   a, n) { n = split(v, a, ","); return n ? a[n] : "" }
		{
			type = $6 == "" ? -1 : hex(first($6))
			ck = last($7); if (ck == "") ck = -1
			bad = ($8 != "") ? 1 : 0
			n = split($9, sev, ",")
			for (i = 1; i <= n; i++) if (sev[i] + 0 >= 8388608) bad = 1
			sqn = $10 == "" ? -1 : hex(first($10))
			nlist = 0
			nt = split($11, ot, ","); split($12, ol, ",")
			for (i = 1; i <= nt; i++) if (hex(ot[i]) == 2) nlist += (ol[i] - 4) / 4
			frag = type == -1 && (first($16) == "1" || first($16) == "True" || (first($17) != "" && first($17) != "0"))
			if ($3 == "" && $18 != "") { $3 = $18; $4 = $19; $5 = $20; $13 = $21; $14 = $22 }
			printf "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\n", $1, first($2),
				first($3), first($4), first($5), type, ck, bad, sqn, nlist, first($13),
				first($14), $15 != "" ? 1 : 0, frag
		}'
}

# e2e_wire_count LAN CONDITION: the frames of the LAN's last capture matching CONDITION (awk,
# over the field names above), e.g. e2e_wire_count a 'type == 10 && ttl == 255'.
e2e_wire_count() {
	e2e_wire_sum "$1" "$2" 1
}

# e2e_wire_sum LAN CONDITION EXPR: the sum of EXPR over the matching frames, e.g. the sequence
# numbers the source was asked for: e2e_wire_sum src 'type == 8' '1 + nlist'.
e2e_wire_sum() {
	[ -s "$LAB_DIR/wire.$1.tsv" ] || [ -e "$LAB_DIR/wire.$1.tsv" ] || {
		echo "no-capture"
		return 1
	}
	awk -F'\t' "{ $E2E_WIRE_VARS } ($2) { n += ($3) } END { print n + 0 }" \
		"$LAB_DIR/wire.$1.tsv"
}

# e2e_wire_sqns LAN TYPE: every sequence number that the LAN's NAKs (TYPE 8) or NCFs (10) name,
# OPT_NAK_LIST included, one per line (from tshark's packet details: its field for the list is
# cut short).
e2e_wire_sqns() {
	e2e_tshark "$LAB_DIR/wire.$1.pcap" -V -Y "pgm.hdr.type == $2" | awk '
		function hex(h,   i, c, n) {
			h = tolower(h); sub(/^0x/, "", h); n = 0
			for (i = 1; i <= length(h); i++) {
				c = index("0123456789abcdef", substr(h, i, 1))
				if (c == 0) return -1
				n = n * 16 + c - 1
			}
			return n
		}
		/Requested Sequence Number: 0x/ { print hex($NF) }
		/^ *List\([0-9]+\):/ { for (i = 2; i <= NF; i++) print hex($i) }'
}

# e2e_mac NODE IFNAME: the interface's Ethernet address.
e2e_mac() {
	ip -n "$(lab_ns "$1")" -o link show dev "$2" 2>/dev/null |
		sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p'
}

# e2e_wire_who LAN CONDITION: who sent the matching frames of the LAN's capture and how, one
# "SENDER:IPSRC>IPDST/ttlTTL=COUNT" per kind, nodes by name: SENDER from the Ethernet source (the
# node whose interface put the frame on the segment), IPSRC and IPDST from the IP header
# ("group" for a multicast destination). Shows who originated a packet and who only forwarded it.
e2e_wire_who() {
	local lan=$1 cond=$2 fns
	_e2e_node_map
	fns='
	function load(   l, f) { while ((getline l < map) > 0) { split(l, f, " "); name[f[1]] = f[2] } }
	function nm(x) { return (x in name) ? name[x] : x }
	function count(   d, k) {
		d = (dst ~ /^(2(2[4-9]|3[0-9])\.|ff)/) ? "group" : nm(dst)
		k = nm(ethsrc) ":" nm(src) ">" d "/ttl" ttl
		if (!(k in n)) order[++m] = k
		n[k]++
	}
	function report(   i) {
		for (i = 1; i <= m; i++) printf "%s%s=%d", (i > 1 ? " " : ""), order[i], n[order[i]]
		print (m == 0 ? "none" : "")
	}'
	awk -F'\t' -v map="$LAB_DIR/nodes.map" \
		"$fns BEGIN { load() } { $E2E_WIRE_VARS } ($cond) { count() } END { report() }" \
		"$LAB_DIR/wire.$lan.tsv"
}

# Addresses and Ethernet addresses of every node interface to node names (nodes.map).
_e2e_node_map() {
	local node ifname lan addr rest
	[ -s "$LAB_DIR/nodes.map" ] && [ "$LAB_DIR/nodes.map" -nt "$LAB_DIR/links" ] && return 0
	while read -r node ifname lan addr rest; do
		echo "$addr $node"
		echo "$(e2e_mac "$node" "$ifname") $node"
	done <"$LAB_DIR/links" >"$LAB_DIR/nodes.map"
}

# The designated local repairer of the DLR scenarios --------------------------------------------

# e2e_dlr_start LAN ROUTER ARGS...: a host "dl" on LAN (address .50, default route via ROUTER's
# address there) running pgm-dlr on eth0 with ARGS (-g GROUP, --role, ...) for 90 s at most, its
# output in dlr.out; waits until it listens. Its pid goes into E2E_DLR_PID: e2e_run stops it after
# the stream, so that its summary is there for the rows and checks.
e2e_dlr_start() {
	local lan=$1 router=$2
	shift 2
	lab_host dl
	lab_attach dl eth0 "$lan" 50
	lab_route dl default "$(lab_addr "$router" "@$lan")"
	lab_spawn_ready dl "$LAB_DIR/dlr.out" "$LAB_DIR/dlr.ready" "$LAB_PEERS/pgm-dlr" -i eth0 "$@" \
		-T 90 --ready "$LAB_DIR/dlr.ready"
	E2E_DLR_PID=$LAB_PID # the runner stops it after the stream
}

# e2e_dlr_kv KEY: a value from the DLR's exit summary (0 when absent).
e2e_dlr_kv() {
	local v
	v=$(lab_kv "$1" "$(tail -n 1 "$LAB_DIR/dlr.out")")
	echo "${v:-0}"
}

# e2e_check_dlr_repaired DROPPED: the checks of a DLR that repaired the losses itself: the source
# sent few RDATA (the losses before the DLR was known), the DLR's NNAKs reached the source (NNAKs
# are packets and may carry lists: compared with the DLR's own count), and its RDATA covered them.
e2e_check_dlr_repaired() {
	local dropped=$1
	e2e_check "RDATA from the source <= 10 % of dropped + 5" "$(e2e_c src rdata)" \
		-le $(($(e2e_scale "$dropped" 10) + 5))
	e2e_check "NNAKs at the source >= 90 % of the DLR's NNAKs" "$(e2e_c src nnak)" \
		-ge "$(e2e_scale "$(e2e_dlr_kv nnaks_sent)" 90)"
	e2e_check "NNAKs at the source >= 50 % of dropped" "$(e2e_c src nnak)" \
		-ge "$(e2e_scale "$dropped" 50)"
	e2e_check "the DLR repaired >= 80 % of dropped" "$(e2e_dlr_kv rdata_sent)" \
		-ge "$(e2e_scale "$dropped" 80)"
}

# The routers' counters ------------------------------------------------------------------------

# e2e_router_ev ROUTER NAME: the router's event counter NAME (show ip pgm router traffic json),
# summed over its interfaces and the global counters; 0 when the router does not answer.
e2e_router_ev() {
	# shellcheck disable=SC2020 # three characters, each to a newline
	"$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock "$1")" -c "show ip pgm router traffic json" \
		2>/dev/null | tr ',{}' '\n\n\n' | awk -F: -v k="\"$2\"" '$1 == k { n += $2 } END { print n + 0 }'
}

# e2e_router_config_plus ROUTER LINE...: the lab's startup config of ROUTER (lab_router_config)
# with LINEs added before its final "end", for a scenario_router_config.
e2e_router_config_plus() {
	local router=$1
	shift
	lab_router_config "$router" | sed '$d'
	printf '%s\n' "$@"
	echo "end"
}

# e2e_router_snapshot: in the "with" variant, reads `show ip pgm router traffic json` of every
# running router for e2e_rt, flattened to lines "IFNAME SECTION NAME VALUE" (a router that is not
# running leaves no file: its values are empty, and every check on them fails).
e2e_router_snapshot() {
	local r f
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	for r in $TOPO_ROUTERS; do
		f="$LAB_DIR/traffic.$r"
		rm -f "$f.json" "$f.tsv"
		lab_router_running "$r" || continue
		lab_router_cli "$r" "show ip pgm router traffic json" >"$f.json" 2>&1
		jq -r '.interfaces[] | .name as $n | ("received", "sent", "events", "errors") as $s
			| .[$s] | to_entries[] | "\($n) \($s) \(.key) \(.value)"' \
			"$f.json" >"$f.tsv" 2>/dev/null || rm -f "$f.tsv"
	done
}

# e2e_rt ROUTER IFNAME SECTION NAME: one counter from the last snapshot; SECTION is received or
# sent (NAME a packet type: NAK, NCF, ...), events or errors (NAME a counter name:
# ncf-sent, nak-multicast, ...). IFNAME "*" sums over the interfaces, NAME "*" over the section.
e2e_rt() {
	local file="$LAB_DIR/traffic.$1.tsv"
	[ -s "$file" ] || return 0
	awk -v i="$2" -v s="$3" -v k="$4" \
		'(i == "*" || $1 == i) && $2 == s && (k == "*" || $3 == k) { n += $4 }
		END { print n + 0 }' "$file"
}

# e2e_rt_errors ROUTER: every error counter of every interface, summed. The counters that are
# not zero go to stderr by name ("r1 packet errors: eth0 bad-checksum 2"): a failed check's
# log says which.
e2e_rt_errors() {
	local n
	n=$(e2e_rt "$1" '*' errors '*')
	[ "$n" = 0 ] || echo "$1 packet errors: $(awk '$2 == "errors" && $4 > 0 { printf "%s%s %s %s", s, $1, $3, $4; s = ", " }' \
		"$LAB_DIR/traffic.$1.tsv")" >&2
	echo "$n"
}

# e2e_record_routers: in the "with" variant, a row per router interface with what the router
# counted there: NAKs received, NCFs sent and withheld by the rate limit, NAKs sent upstream,
# RDATA forwarded.
e2e_record_routers() {
	local r ifname lan
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	for r in $TOPO_ROUTERS; do
		while read -r ifname lan; do
			e2e_record with "$E2E_CASE_PREFIX $r $ifname ($lan): NAK in/NCF out/NCF limited/NAK out/RDATA out" \
				"$(e2e_rt "$r" "$ifname" received NAK)/$(e2e_rt "$r" "$ifname" sent NCF)/$(e2e_rt "$r" "$ifname" events ncf-rate-limited)/$(e2e_rt "$r" "$ifname" sent NAK)/$(e2e_rt "$r" "$ifname" events rdata-forwarded)"
		done < <(awk -v n="$r" '$1 == n { print $2, $3 }' "$LAB_DIR/links")
		e2e_record with "$E2E_CASE_PREFIX $r RDATA copies dropped: no state/duplicate/no session" \
			"$(e2e_rt "$r" '*' events rdata-no-state)/$(e2e_rt "$r" '*' events rdata-duplicate)/$(e2e_rt "$r" '*' events rdata-no-session)"
		[ "$TOPO_ROUTING" = pim ] || continue
		# Routes made by pimd, in steps: what SPM and RDATA met (left to the kernel without
		# a route, or off its incoming interface) and the routes at the end.
		e2e_record with "$E2E_CASE_PREFIX $r SPM+RDATA: replicated/by kernel/no route/wrong if/copies failed" \
			"$(lab_router_cli "$r" "show ip pgm router dataplane json" 2>/dev/null |
				jq -r '.replication | "\(.replicated)/\(.by_kernel + .single_rewritten)/\(.no_route)/\(.wrong_interface)/\(.copies_failed)"' 2>/dev/null)"
		e2e_record with "$E2E_CASE_PREFIX $r routes by pimd" \
			"$(ip -n "$(lab_ns "$r")" mroute show | awk '{ printf "%s%s in %s out", n++ ? "; " : "", $1, $3
				for (k = 4; k <= NF && $k != "State:"; k++) if ($k != "Oifs:") printf " %s", $k }')"
	done
}

# e2e_naks_to_confirm ROUTER IFNAME: the NAK packets the router received on IFNAME that it must
# answer with an NCF (or count as withheld by the NCF rate limit): all of them but those its
# counters put aside, each counted once per packet (multicast copies, NAKs routed through, for
# no known session, with foreign NLAs, from the upstream side, out of the window, on an interface
# without router assist, or beyond the repair state limit).
e2e_naks_to_confirm() {
	local r=$1 ifname=$2 n c
	n=$(e2e_rt "$r" "$ifname" received NAK)
	for c in nak-multicast nak-transit nak-no-session nak-address-mismatch \
		nak-upstream-interface nak-out-of-window nak-not-assisted repair-state-limit; do
		n=$((n - $(e2e_rt "$r" "$ifname" events "$c")))
	done
	echo "$n"
}

# e2e_router_checks: in the "with" variant, what every router must show after a stream, each
# router counter checked against the captures of the segments:
# - the NCFs and NAKs seen on a segment coming from the router's interface are exactly those
#   the router counted as sent there;
# - each NCF carries the data source as IP source and TTL 255 (ncf-ttl); each NAK it sends comes
#   from its own address on that segment and names the data source in NAK_SRC;
# - every frame the routers put on the wire (all types but ODATA, which the kernel switches)
#   decodes in Wireshark with a good PGM checksum and nothing malformed;
# - every NAK the router received there to confirm was confirmed or counted as withheld by the
#   NCF rate limit (ncf-sent + ncf-rate-limited = e2e_naks_to_confirm), and no parse error was
#   counted.
e2e_router_checks() {
	local r ifname lan addr mac frames=0 badf=0 n b
	[ "$E2E_CASE_VARIANT" = with ] || return 0
	for r in $TOPO_ROUTERS; do
		e2e_check "$r: counters read" "$([ -s "$LAB_DIR/traffic.$r.tsv" ] && echo 1 || echo 0)" -eq 1
		e2e_check "$r: no packet error counted" "$(e2e_rt_errors "$r")" -eq 0
		e2e_check "$r: no NAK with foreign NLAs" "$(e2e_rt "$r" '*' events nak-address-mismatch)" -eq 0
		while read -r ifname lan addr; do
			mac=$(e2e_mac "$r" "$ifname")
			e2e_check "$r $ifname: NCFs on $lan from $r = its NCFs sent" \
				"$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && type == 10")" -eq \
				"$(e2e_rt "$r" "$ifname" sent NCF)"
			e2e_check "$r $ifname: NAKs on $lan from $r = its NAKs sent" \
				"$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && type == 8")" -eq \
				"$(e2e_rt "$r" "$ifname" sent NAK)"
			e2e_check "$r $ifname: its NCFs on $lan from the data source, TTL 255 (violations)" \
				"$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && type == 10 && (src != \"$TOPO_SOURCE_ADDR\" || ttl != 255)")" -eq 0
			e2e_check "$r $ifname: its NAKs on $lan from $addr naming the source (violations)" \
				"$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && type == 8 && (src != \"$addr\" || naksrc != \"$TOPO_SOURCE_ADDR\")")" -eq 0
			e2e_check "$r $ifname: ncf-sent + ncf-rate-limited = NAKs received to confirm" \
				$(($(e2e_rt "$r" "$ifname" events ncf-sent) + $(e2e_rt "$r" "$ifname" events ncf-rate-limited))) \
				-eq "$(e2e_naks_to_confirm "$r" "$ifname")"
			n=$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && !frag")
			b=$(e2e_wire_count "$lan" "ethsrc == \"$mac\" && !frag && (bad || ck != 1)")
			frames=$((frames + n))
			badf=$((badf + b))
		done < <(awk -v n="$r" '$1 == n { print $2, $3, $4 }' "$LAB_DIR/links")
	done
	e2e_record with "$E2E_CASE_PREFIX wire: router frames decoded by tshark / bad" "$frames / $badf"
	e2e_check "router frames on the wire decode in tshark, good checksum (bad ones)" "$badf" -eq 0
	e2e_check "router frames were captured (>= 1)" "$frames" -ge 1
}

# e2e_end: prints the table and the result line; exits non-zero on any failed check.
e2e_end() {
	local row v w wname width=10 line
	for row in "${E2E_ROWS[@]}"; do
		[ ${#row} -gt "$width" ] && width=${#row}
	done
	printf "\n%-${width}s  %-26s  %s\n" "$E2E_NAME" "without pgmrouterd" "with pgmrouterd"
	for row in "${E2E_ROWS[@]}"; do
		v=${E2E_VAL["$row|without"]:--}
		if [ "$E2E_WITH_SKIPPED" = 1 ]; then
			w="skipped"
		else
			w=${E2E_VAL["$row|with"]:--}
		fi
		printf "%-${width}s  %-26s  %s\n" "$row" "$v" "$w"
	done
	for wname in without with; do
		if [ "$wname" = with ] && [ "$E2E_WITH_SKIPPED" = 1 ]; then
			line="$line with=skipped"
		elif [ -z "${E2E_VARIANT_RAN[$wname]:-}" ]; then
			line="$line $wname=notrun"
		elif [ -n "${E2E_VARIANT_FAILED[$wname]:-}" ]; then
			line="$line $wname=FAIL"
		else
			line="$line $wname=pass"
		fi
	done
	[ "$E2E_WITH_SKIPPED" = 1 ] &&
		echo "!!! $E2E_NAME: the 'with pgmrouterd' column was SKIPPED (no daemon binary)"
	echo "E2E-RESULT scenario=$E2E_NAME$line checks=$E2E_CHECKS failed=$E2E_FAILED seconds=$(($(date +%s) - E2E_START))"
	[ "$E2E_FAILED" = 0 ] || return 1
	if [ "$E2E_WITH_SKIPPED" = 1 ] && [ "${E2E_REQUIRE_ROUTER:-0}" = 1 ]; then
		return 1
	fi
	return 0
}

# The scenario runner --------------------------------------------------------------------------
#
# A scenario (tests/e2e/NAME/run.sh) sources this file, declares what it runs and what it
# checks, and ends with e2e_run, which does the rest. The declarations (variables):
#   TITLE        the table's heading
#   TAG          the lab tag of its runs (lab_init: letters and digits, up to 8)
#   TOPOLOGY     the lab topology and its argument: "one_router 2" is lab_topo_one_router 2
#   CASES        the cases each variant runs, in order (default ip); a case starts the rows of
#                its table and is the stream's encapsulation unless ENCAP is set. A case ending in
#                -pim builds its routes with FRR's pimd (LAB_ROUTING=pim), its encapsulation the
#                rest of its name ("ip-pim": PGM/IP over PIM-SM routes)
#   ENCAP        every case's encapsulation: ip, udp or ip-ra (OpenPGM), epgm or pgm (ZeroMQ)
#   STREAM       pgm (OpenPGM, the default) or zmq (ZeroMQ)
#   GROUP COUNT RATE   the stream's group, messages, messages per second
#   LIMIT        the peers' time limit in seconds (default 60)
#   SEND_ARGS RECV_ARGS   arrays: options added to the sender, to every receiver
#   LOSS         "LAN:SPEC ...": ODATA loss into each LAN (lab_topo_loss LAN SPEC odata). SPEC "-"
#                adds no rule (the scenario drops in its own way, on the router interface that
#                feeds LAN) but counts the drops there all the same
#   SEGMENTS     the PGM types recorded per segment (default "odata rdata nak ncf spm")
#   ROUTER_CONFIG   array: lines added to every router's startup config (e2e_router_config)
# and functions:
#   checks_common, checks_without, checks_with
#                the assertions after the stream: in both variants, then the variant's own;
#                called with the ODATA dropped into each LAN of LOSS, in order, then the case
# Hooks, only where a scenario needs a step of its own, called with the variant and the case:
#   scenario_setup    after the topology, before pgmrouterd (extra hosts, e2e_dlr_start)
#   scenario_start    after the loss, just before the stream (helpers that run during it)
#   scenario_inject   in the background while the stream runs, its output in LAB_DIR/inject.log;
#                     waited for after the stream
#   scenario_stream   the stream, in place of the declared one: e2e_case_stream_start, whatever
#                     happens meanwhile, e2e_stream_finish
#   scenario_stop     after the stream (and the DLR's stop), before the rows: stop helpers and
#                     read their results
#   scenario_record   rows of its own, after the common ones
#   scenario_router_config ROUTER   the daemon's startup config, where ROUTER_CONFIG is not enough
#
# For each variant (e2e_variants) and each case, on a fresh lab: the topology, scenario_setup,
# pgmrouterd in every router ("with"), the loss, scenario_start, the stream with
# scenario_inject beside it, the DLR stopped, scenario_stop; the rows (e2e_record_outcome, every
# receiver, every segment, every router interface, scenario_record); checks_common,
# checks_VARIANT, pgmrouterd still alive; the teardown and its leftover check (e2e_case_end).
# Then the table and the result line (e2e_end), whose status is the scenario's.

TITLE=""
TAG=""
TOPOLOGY=""
CASES=ip
ENCAP=""
STREAM=pgm
GROUP=""
COUNT=0
RATE=0
LIMIT=60
SEND_ARGS=()
RECV_ARGS=()
LOSS=""
SEGMENTS="odata rdata nak ncf spm"
ROUTER_CONFIG=()
E2E_CASE=""
E2E_DROPPED=()
E2E_DLR_PID=""

e2e_run() {
	local variant case
	lab_groups "$GROUP"
	e2e_begin "$(basename "$(cd "$(dirname "$0")" && pwd)")" "$TITLE"
	e2e_note_skips
	for variant in $(e2e_variants); do
		for case in ${E2E_CASES:-$CASES}; do
			e2e_run_case "$variant" "$case"
		done
	done
	e2e_end
}

# e2e_run_case VARIANT CASE: one case of the declared scenario (see above).
e2e_run_case() {
	local variant=$1 case=$2 topo arg spec
	E2E_CASE=${case%-pim}
	E2E_DROPPED=()
	E2E_DLR_PID=""
	e2e_case_begin "$TAG" "$variant" "$case"
	read -r topo arg <<<"$TOPOLOGY"
	case $case in
	*-pim) LAB_ROUTING=pim "lab_topo_$topo" ${arg:+"$arg"} ;;
	*) "lab_topo_$topo" ${arg:+"$arg"} ;;
	esac
	_e2e_hook scenario_setup "$variant" "$case"
	if e2e_router_up; then
		for spec in $LOSS; do
			[ "${spec#*:}" = - ] || lab_topo_loss "${spec%%:*}" "${spec#*:}" odata
		done
		_e2e_hook scenario_start "$variant" "$case"
		_e2e_case_stream "$variant" "$case"
		for spec in $LOSS; do E2E_DROPPED+=("$(lab_topo_loss_dropped "${spec%%:*}")"); done
		_e2e_hook scenario_stop "$variant" "$case"
		e2e_record_outcome
		e2e_record_receivers
		# shellcheck disable=SC2086 # one type a word
		e2e_record_segments $SEGMENTS
		e2e_record_routers
		_e2e_hook scenario_record "$variant" "$case"
		checks_common "${E2E_DROPPED[@]}" "$case"
		"checks_$variant" "${E2E_DROPPED[@]}" "$case"
		e2e_router_check_alive
	fi
	e2e_case_end
}

# e2e_case_stream_start: starts the declared stream of the current case (e2e_pgm_stream_start or
# e2e_zmq_stream_start); e2e_stream_finish ends it.
e2e_case_stream_start() {
	local encap=${ENCAP:-$E2E_CASE}
	case $STREAM in
	zmq) e2e_zmq_stream_start "$encap" "$GROUP" "$COUNT" "$RATE" "$LIMIT" "${SEND_ARGS[@]}" ;;
	*) e2e_pgm_stream_start "$GROUP" "$encap" "$COUNT" "$RATE" "$LIMIT" "${SEND_ARGS[@]}" ;;
	esac
}

_e2e_case_stream() {
	local ipid=""
	E2E_RECV_ARGS=("${RECV_ARGS[@]}")
	if declare -F scenario_inject >/dev/null; then
		: >"$LAB_DIR/inject.log"
		scenario_inject "$@" >>"$LAB_DIR/inject.log" 2>&1 &
		ipid=$!
	fi
	if declare -F scenario_stream >/dev/null; then
		scenario_stream "$@"
	else
		e2e_case_stream_start
		e2e_stream_finish
	fi
	[ -n "$ipid" ] && wait "$ipid"
	[ -n "$E2E_DLR_PID" ] && lab_stop "$E2E_DLR_PID"
	E2E_RECV_ARGS=()
}

# _e2e_hook NAME ARGS...: calls the scenario's function NAME when it has one.
_e2e_hook() {
	declare -F "$1" >/dev/null || return 0
	"$@"
}

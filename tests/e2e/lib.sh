# shellcheck shell=bash
#
# Helpers for the end-to-end scenarios (tests/e2e/*/run.sh), on top of the lab (tests/lab/lib.sh).
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
E2E_RECV_ARGS=()

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

# e2e_variants: the variants to run, in order. Says loudly when "with" is skipped.
e2e_variants() {
	echo without
	if lab_router_available; then
		echo with
	fi
}

# Call once after the variant loop decided: prints the skip banner when needed.
e2e_note_skips() {
	if ! lab_router_available; then
		E2E_WITH_SKIPPED=1
		echo "!!! $E2E_NAME: SKIPPING the 'with pgmrouterd' variant: $(lab_router_cmd) does not exist"
		echo "!!! $E2E_NAME: only plain kernel forwarding was tested; nothing about router assist"
	fi
}

# e2e_router_config ROUTER: the startup config of pgmrouterd in ROUTER, on stdout (the lab's
# default, lab_router_config; a scenario may define scenario_router_config instead).
e2e_router_config() {
	lab_router_config "$1"
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
			case $rest in pgm-* | zmq-* | smcrouted | dumpcap | pgmrouterd)
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

# e2e_pct PART WHOLE: PART as a percentage of WHOLE, one decimal.
e2e_pct() {
	awk -v p="$1" -v w="$2" 'BEGIN { if (w == 0) print "0.0"; else printf "%.1f", 100 * p / w }'
}

# e2e_scale N PERCENT: N * PERCENT / 100, rounded down (for tolerances).
e2e_scale() {
	awk -v n="$1" -v p="$2" 'BEGIN { printf "%d", n * p / 100 }'
}

# e2e_pgm_stream GROUP ENCAP COUNT RATE TIMEOUT [SENDER ARGS...]: one OpenPGM stream from the
# topology's source to every receiver. ENCAP is ip or udp (port 3055 for both directions: OpenPGM
# sources listen for NAKs on the multicast port only, so the two ports must be equal), with the
# suffix -ra for IP Router Alert on every packet the peers send that may carry it. Counters
# are reset first. Fills E2E_RECV_RESULT[receiver] (the summary line, or "result=none rc=N"),
# E2E_SENDER_RESULT and E2E_COUNTS[lan]. Returns 0 when every receiver passed. Extra receiver
# options go in the array E2E_RECV_ARGS (e.g. --fec 8).
e2e_pgm_stream() {
	local group=$1 encap=$2 count=$3 rate=$4 limit=$5 r lan rc all=0 spid
	local -a udp=() pids=()
	shift 5
	case $encap in udp*) udp=(-u 3055) ;; esac
	case $encap in *-ra) udp+=(-A) ;; esac
	for lan in $TOPO_LANS; do lab_counts_reset "$lan"; done
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" \
			-n "$(lab_addr "$r" eth0);$group" -c "$count" -T "$limit" "${udp[@]}" \
			"${E2E_RECV_ARGS[@]}"
		pids+=("$LAB_PID")
	done
	for r in $TOPO_RECEIVERS; do
		lab_wait_file_line 10 "$LAB_DIR/$r.out" '^event=ready' || all=1
	done
	lab_spawn "$TOPO_SOURCE" "$LAB_DIR/sender.out" "$LAB_PEERS/pgm-send" \
		-n "$TOPO_SOURCE_ADDR;$group" -c "$count" -r "$rate" -T "$limit" "${udp[@]}" "$@"
	spid=$LAB_PID
	_e2e_collect "$limit" "${pids[@]}" || all=1
	lab_stop "$spid"
	E2E_SENDER_RESULT=$(lab_result "$LAB_DIR/sender.out")
	[ -n "$E2E_SENDER_RESULT" ] || sed 's/^/    sender: /' "$LAB_DIR/sender.out" | tail -n 5
	_e2e_snapshot_counts
	return $all
}

# e2e_zmq_stream SCHEME GROUP COUNT RATE TIMEOUT: the same with zmq-pub and zmq-sub
# (SCHEME epgm or pgm, port 5555).
e2e_zmq_stream() {
	local scheme=$1 group=$2 count=$3 rate=$4 limit=$5 r lan all=0 spid
	local -a pids=()
	for lan in $TOPO_LANS; do lab_counts_reset "$lan"; done
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/zmq-sub" \
			-e "$scheme://$(lab_addr "$r" eth0);$group:5555" -c "$count" -T "$limit"
		pids+=("$LAB_PID")
	done
	for r in $TOPO_RECEIVERS; do
		lab_wait_file_line 10 "$LAB_DIR/$r.out" '^event=ready' || all=1
	done
	lab_spawn "$TOPO_SOURCE" "$LAB_DIR/sender.out" "$LAB_PEERS/zmq-pub" \
		-e "$scheme://$TOPO_SOURCE_ADDR;$group:5555" -c "$count" -r "$rate" -T "$limit"
	spid=$LAB_PID
	_e2e_collect "$limit" "${pids[@]}" || all=1
	lab_stop "$spid"
	E2E_SENDER_RESULT=$(lab_result "$LAB_DIR/sender.out")
	_e2e_snapshot_counts
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

# e2e_c LAN TYPE: a counter of the last stream.
e2e_c() {
	lab_kv "$2" "${E2E_COUNTS[$1]}"
}

# e2e_r RECEIVER KEY: a value from a receiver's summary.
e2e_r() {
	lab_kv "$2" "${E2E_RECV_RESULT[$1]}"
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

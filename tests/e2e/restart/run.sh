#!/bin/bash
# restart: pgmrouterd killed (SIGKILL) and restarted in the middle of a stream. Topology (a),
# r1 drops 5 % of the ODATA into LAN a, 8000 messages at 1000/s over PGM/IP.
#
#   phase 1  until every receiver has 2000 messages: router assist as usual
#   outage   r1's daemon gets SIGKILL; its interception rules stay (they carry --queue-bypass),
#            so the kernel forwards on without it: until every receiver has 1500 more
#   phase 3  the daemon is started again with the same config: it must take its rules over
#            (the same rules, none twice), learn the session from the next SPM and assist again
#
# Every receiver must still get every message exactly once and in order. The "without" column
# runs the same stream and phases with no daemon at all. Repairs reaching loss-free LAN b are
# counted per phase: none while r1 assists, all of them during the outage.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="pgmrouterd killed with SIGKILL and restarted mid-stream, 5 % ODATA loss into LAN a"
TAG=restart
TOPOLOGY="one_router 2"
GROUP=239.192.0.18
COUNT=8000
RATE=1000
LOSS="a:0.05"
RECV_ARGS=(--progress 100)

# The minimum of the receivers' delivered messages.
delivered_min() {
	local r n min=""
	for r in $TOPO_RECEIVERS; do
		n=$(lab_kv messages "$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" | tail -n 1)")
		n=${n:-0}
		if [ -z "$min" ] || [ "$n" -lt "$min" ]; then min=$n; fi
	done
	echo "$min"
}

# r1 knows the session again.
session_known() {
	lab_router_cli r1 "show ip pgm router json" 2>/dev/null | jq -e '.sessions >= 1' >/dev/null
}

# RDATA on LAN $1 now.
rdata_on() { lab_count "$1" rdata; }

# What the phases leave for the rows and checks: RDATA on a and on b at the start, at the end of
# phase 1 (the kill), of the outage (the restart), once r1 knows the session again, at the end;
# the messages delivered at the kill and at the restart; whether the receivers advanced 1500 in
# the outage; r1's rules before the kill, in the outage and after the restart; its pids.
PHASES=("phase 1" outage "restart until session known" "phase 3")
ON_A=()
ON_B=()
M_KILL=0
M_BACK=0
OK_OUTAGE=0
RULES_BEFORE=""
RULES_OUTAGE=""
RULES_AFTER=""
PID_BEFORE=""
PID_AFTER=""

# The stream with the phases: r1's daemon killed and started again in the middle (the "without"
# variant runs the same phases with no daemon at all).
scenario_stream() {
	local variant=$1
	ON_A=(0) ON_B=(0) OK_OUTAGE=0
	RULES_BEFORE="" RULES_OUTAGE="" RULES_AFTER="" PID_BEFORE="" PID_AFTER=""
	e2e_case_stream_start
	lab_wait 30 "2000 messages everywhere" e2e_delivered_all 2000
	# Phase 1 ends before the kill: what passes after it (the kernel, bypassing the dead
	# daemon's queue) belongs to the outage.
	ON_A+=("$(rdata_on a)") ON_B+=("$(rdata_on b)")
	if [ "$variant" = with ]; then
		RULES_BEFORE=$(lab_router_rules r1)
		PID_BEFORE=$(lab_router_pid r1)
		lab_router_kill r1 KILL
	fi
	M_KILL=$(delivered_min)
	if [ "$variant" = with ]; then
		e2e_check "pgmrouterd gone after SIGKILL" \
			"$(lab_router_running r1 && echo 1 || echo 0)" -eq 0
		RULES_OUTAGE=$(lab_router_rules r1)
	fi
	lab_wait 30 "1500 more messages everywhere" e2e_delivered_all $((M_KILL + 1500)) && OK_OUTAGE=1
	ON_A+=("$(rdata_on a)") ON_B+=("$(rdata_on b)")
	M_BACK=$(delivered_min)
	if [ "$variant" = with ]; then
		lab_router_start r1 "$LAB_DIR/pgmrouterd.r1.conf" ||
			e2e_check "pgmrouterd restarted" 0 -eq 1
		PID_AFTER=$(lab_router_pid r1)
		lab_wait 10 "r1 to learn the session again" session_known
		RULES_AFTER=$(lab_router_rules r1)
	fi
	ON_A+=("$(rdata_on a)") ON_B+=("$(rdata_on b)")
	e2e_stream_finish
	ON_A+=("$(e2e_c a rdata)") ON_B+=("$(e2e_c b rdata)")
}

scenario_record() {
	local variant=$1 i
	e2e_record "$variant" "ip messages delivered at the kill / at the restart" "$M_KILL / $M_BACK"
	for i in 0 1 2 3; do
		e2e_record "$variant" "ip RDATA on a/b, ${PHASES[$i]}" \
			"$((ON_A[i + 1] - ON_A[i]))/$((ON_B[i + 1] - ON_B[i]))"
	done
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check "ODATA loss into a >= 3 %" "$dropped" -ge $((COUNT * 3 / 100))
	e2e_check "receivers advanced 1500 messages in the outage phase" "$OK_OUTAGE" -eq 1
}

checks_without() {
	:
}

checks_with() {
	local mac bad i m
	e2e_check "a new pgmrouterd runs" \
		"$([ -n "$PID_AFTER" ] && [ "$PID_AFTER" != "$PID_BEFORE" ] &&
			lab_router_running r1 && echo 1 || echo 0)" -eq 1
	e2e_check "interception rules installed (queue rules)" \
		"$(echo "$RULES_BEFORE" | grep -cE 'queue num|NFQUEUE')" -ge 1
	e2e_check "rules left in place by the killed daemon" \
		"$([ "$RULES_OUTAGE" = "$RULES_BEFORE" ] && echo 1 || echo 0)" -eq 1
	e2e_check "rules after the restart = rules before the kill (none twice)" \
		"$([ "$RULES_AFTER" = "$RULES_BEFORE" ] && echo 1 || echo 0)" -eq 1
	e2e_check "no RDATA on b in phase 1 (r1 assists)" $((ON_B[1] - ON_B[0])) -eq 0
	# Flooded like a's, give or take the repairs in flight while the two
	# segments' counters are read one after the other.
	e2e_check "RDATA on b in the outage >= 80 % of RDATA on a (no constraint)" \
		$((ON_B[2] - ON_B[1])) -ge "$(e2e_scale $((ON_A[2] - ON_A[1])) 80)"
	e2e_check "RDATA on b in the outage (>= 1)" $((ON_B[2] - ON_B[1])) -ge 1
	e2e_check "RDATA on b in phase 3 <= 2 % of RDATA on a" \
		$((ON_B[4] - ON_B[3])) -le "$(e2e_scale $((ON_A[4] - ON_A[3])) 2)"
	# The new daemon's own counters: it assisted after the restart.
	e2e_check "new daemon: session learnt" \
		"$(e2e_rt r1 '*' events sessions-created)" -ge 1
	e2e_check "new daemon: NCFs sent on eth1 (>= 1)" \
		"$(e2e_rt r1 eth1 events ncf-sent)" -ge 1
	e2e_check "new daemon: RDATA forwarded into a (>= 1)" \
		"$(e2e_rt r1 eth1 events rdata-forwarded)" -ge 1
	e2e_check "new daemon: no packet error" "$(e2e_rt_errors r1)" -eq 0
	mac=$(for i in eth0 eth1 eth2; do e2e_mac r1 "$i"; done)
	bad=0
	for i in src a b; do
		for m in $mac; do
			bad=$((bad + $(e2e_wire_count "$i" "ethsrc == \"$m\" && (bad || ck != 1)")))
		done
	done
	e2e_check "r1's frames on the wire decode in tshark, good checksum (bad ones)" \
		"$bad" -eq 0
}

e2e_run

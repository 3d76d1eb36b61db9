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

GROUP=239.192.0.18
COUNT=8000
RATE=1000
LOSS=0.05

# Every receiver has delivered at least $1 messages (from its progress lines).
delivered_all() {
	local r n
	for r in $TOPO_RECEIVERS; do
		n=$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" 2>/dev/null | tail -n 1)
		n=$(lab_kv messages "$n")
		[ "${n:-0}" -ge "$1" ] || return 1
	done
}

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

run_case() {
	local variant=$1 dropped rules_before rules_outage rules_after pid_before pid_after
	local a0 b0 a1 b1 a2 b2 a3 b3 m_kill m_back ok_outage=0 mac bad
	e2e_case_begin restart "$variant" ip
	lab_topo_one_router 2
	if e2e_router_up; then
		lab_topo_loss a "$LOSS" odata
		E2E_RECV_ARGS=(--progress 100)
		e2e_pgm_stream_start "$GROUP" ip "$COUNT" "$RATE" 60
		a0=0 b0=0
		lab_wait 30 "2000 messages everywhere" delivered_all 2000
		# Phase 1 ends before the kill: what passes after it (the kernel, bypassing the dead
		# daemon's queue) belongs to the outage.
		a1=$(rdata_on a) b1=$(rdata_on b)
		if [ "$variant" = with ]; then
			rules_before=$(lab_router_rules r1)
			pid_before=$(lab_router_pid r1)
			lab_router_kill r1 KILL
		fi
		m_kill=$(delivered_min)
		if [ "$variant" = with ]; then
			e2e_check "pgmrouterd gone after SIGKILL" \
				"$(lab_router_running r1 && echo 1 || echo 0)" -eq 0
			rules_outage=$(lab_router_rules r1)
		fi
		lab_wait 30 "1500 more messages everywhere" delivered_all $((m_kill + 1500)) && ok_outage=1
		a2=$(rdata_on a) b2=$(rdata_on b)
		m_back=$(delivered_min)
		if [ "$variant" = with ]; then
			lab_router_start r1 "$LAB_DIR/pgmrouterd.r1.conf" ||
				e2e_check "pgmrouterd restarted" 0 -eq 1
			pid_after=$(lab_router_pid r1)
			lab_wait 10 "r1 to learn the session again" session_known
			rules_after=$(lab_router_rules r1)
		fi
		a3=$(rdata_on a) b3=$(rdata_on b)
		e2e_stream_finish
		dropped=$(lab_topo_loss_dropped a)
		e2e_record "$variant" "ip receivers complete" "$(e2e_receivers_ok)/4"
		e2e_record "$variant" "ip ODATA dropped into a" "$dropped"
		e2e_record "$variant" "ip messages delivered at the kill / at the restart" \
			"$m_kill / $m_back"
		e2e_record "$variant" "ip RDATA on a/b, phase 1" "$((a1 - a0))/$((b1 - b0))"
		e2e_record "$variant" "ip RDATA on a/b, outage" "$((a2 - a1))/$((b2 - b1))"
		e2e_record "$variant" "ip RDATA on a/b, restart until session known" \
			"$((a3 - a2))/$((b3 - b2))"
		e2e_record "$variant" "ip RDATA on a/b, phase 3" \
			"$(($(e2e_c a rdata) - a3))/$(($(e2e_c b rdata) - b3))"
		e2e_record_receivers
		e2e_record_segments odata rdata nak ncf spm
		e2e_record_routers
		e2e_check_all_complete
		e2e_check "ODATA loss into a >= 3 %" "$dropped" -ge $((COUNT * 3 / 100))
		e2e_check "receivers advanced 1500 messages in the outage phase" "$ok_outage" -eq 1
		if [ "$variant" = with ]; then
			e2e_check "a new pgmrouterd runs" \
				"$([ -n "$pid_after" ] && [ "$pid_after" != "$pid_before" ] &&
					lab_router_running r1 && echo 1 || echo 0)" -eq 1
			e2e_check "interception rules installed (queue rules)" \
				"$(echo "$rules_before" | grep -cE 'queue num|NFQUEUE')" -ge 1
			e2e_check "rules left in place by the killed daemon" \
				"$([ "$rules_outage" = "$rules_before" ] && echo 1 || echo 0)" -eq 1
			e2e_check "rules after the restart = rules before the kill (none twice)" \
				"$([ "$rules_after" = "$rules_before" ] && echo 1 || echo 0)" -eq 1
			e2e_check "no RDATA on b in phase 1 (r1 assists)" $((b1 - b0)) -eq 0
			# Flooded like a's, give or take the repairs in flight while the two
			# segments' counters are read one after the other.
			e2e_check "RDATA on b in the outage >= 80 % of RDATA on a (no constraint)" \
				$((b2 - b1)) -ge "$(e2e_scale $((a2 - a1)) 80)"
			e2e_check "RDATA on b in the outage (>= 1)" $((b2 - b1)) -ge 1
			e2e_check "RDATA on b in phase 3 <= 2 % of RDATA on a" \
				$(($(e2e_c b rdata) - b3)) -le "$(e2e_scale $(($(e2e_c a rdata) - a3)) 2)"
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
		fi
		e2e_router_check_alive
	fi
	e2e_case_end
}

lab_groups "$GROUP"
e2e_begin restart "pgmrouterd killed with SIGKILL and restarted mid-stream, 5 % ODATA loss into LAN a"
e2e_note_skips
for variant in $(e2e_variants); do
	run_case "$variant"
done
e2e_end

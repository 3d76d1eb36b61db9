#!/bin/bash
# chaos-kill: pgmrouterd killed with SIGKILL in the middle of a NAK storm, and started again.
# Topology (a), r1 drops 10 % of the ODATA into LAN a (a1 and a2 NAK about 100 sequence numbers
# a second each), 12000 messages at 1000/s over PGM/IP. Besides, b1 floods r1 with NAKs for a
# session of its own (crafted SPMs from s1 on a second group, routed by smcroute, no receiver):
# a NAK about every millisecond, 8000 of them, each making repair state that nothing confirms.
#
#   storm    once every receiver has 2000 messages, the flood starts; 1 s into it r1's daemon
#            gets SIGKILL (the queue holds NAKs; the rules stay, with queue bypass)
#   outage   1 s of unassisted forwarding
#   restart  a new daemon with the same config, the flood still running: it must replace the
#            dead daemon's nftables table as a whole (a new table, its counters from zero),
#            with the same rules, none twice, and assist both sessions again
#
# Every receiver must still get every message exactly once and in order. Only the "with"
# variant runs (the restart scenario has the same stream without a daemon).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="pgmrouterd killed with SIGKILL during a NAK storm and restarted, 10 % ODATA loss into LAN a"
TAG=chaoskil
TOPOLOGY="one_router 2"
GROUP=239.192.0.21
FLOOD_GROUP=239.192.0.22
FLOOD_GSI=5a0a5a0a5a0b
COUNT=12000
RATE=1000
LOSS="a:0.10"
RECV_ARGS=(--progress 100)
E2E_VARIANTS=${E2E_VARIANTS:-with}

delivered_all() {
	local r n
	for r in $TOPO_RECEIVERS; do
		n=$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" 2>/dev/null | tail -n 1)
		n=$(lab_kv messages "$n")
		[ "${n:-0}" -ge "$1" ] || return 1
	done
}

# The handle of r1's table, its rules without counters and handles, how many rules of it are
# queue rules and how many are duplicates, the packets its rules counted, how many pgmrouter
# tables there are.
table_handle() { lab_exec r1 nft -a list table ip pgmrouter 2>/dev/null | awk '$1 == "table" { print $NF; exit }'; }
table_rules() {
	lab_exec r1 nft list table ip pgmrouter 2>/dev/null | grep -v '^#' |
		sed 's/counter packets [0-9]* bytes [0-9]*/counter/'
}
table_packets() {
	lab_exec r1 nft list table ip pgmrouter 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}
table_count() { lab_exec r1 nft list tables 2>/dev/null | grep -c 'pgmrouter'; }
# Rules that appear twice in one chain.
rule_dups() {
	table_rules | awk '$1 == "chain" { c = $2; next } NF && $1 != "}" && $1 != "type" { print c ": " $0 }' |
		sort | uniq -d | wc -l
}

flood_known() {
	lab_router_cli r1 "show ip pgm router state $FLOOD_GROUP json" 2>/dev/null |
		jq -e '.sessions | length >= 1' >/dev/null
}
stream_known() {
	lab_router_cli r1 "show ip pgm router state $GROUP json" 2>/dev/null |
		jq -e '.sessions | length >= 1' >/dev/null
}

# The flood's session: a route for its group in r1 (smcroute), then SPMs every 200 ms for the
# whole stream, so the restarted daemon learns it again.
scenario_setup() {
	lab_exec r1 smcroutectl -u "$LAB_DIR/smcroute.r1.sock" add eth0 "$TOPO_SOURCE_ADDR" \
		"$FLOOD_GROUP" eth1 eth2 >/dev/null || lab_die "cannot add the flood's route"
	lab_wait 5 "the flood's route" sh -c "ip -n $(lab_ns r1) mroute show | grep -q $FLOOD_GROUP"
}

scenario_start() {
	lab_spawn s1 "$LAB_DIR/flood-spm.log" "$LAB_PEERS/pgm-inject" --src "$TOPO_SOURCE_ADDR" \
		--dst "$FLOOD_GROUP" --type spm --gsi "$FLOOD_GSI" --sport 4321 --trail 1 \
		--lead 1000000 --if eth0 --count 150 --interval-ms 200
	FLOOD_SPM_PID=$LAB_PID
}

H_BEFORE="" H_AFTER="" R_BEFORE="" R_AFTER="" P_BEFORE=0 P_AFTER=0 T_AFTER=0 DUPS=-1
NAKS_IN_FLIGHT=0 FLOOD_NEW=0 FLOOD_PEAK=0 FLOOD_RUNNING=0 STATES_AFTER=-1 STREAM_BACK=0 PID_BEFORE="" PID_AFTER=""
FLOOD_SPM_PID=""

scenario_stream() {
	local variant=$1 fpid
	e2e_case_stream_start
	lab_wait 30 "2000 messages everywhere" delivered_all 2000
	lab_wait 5 "r1 to know the flood's session" flood_known
	lab_spawn b1 "$LAB_DIR/flood-nak.log" "$LAB_PEERS/pgm-inject" --src "$(lab_addr b1 eth0)" \
		--dst "$(lab_addr r1 @b)" --type nak --gsi "$FLOOD_GSI" --sport 7500 --dport 4321 \
		--nak-src "$TOPO_SOURCE_ADDR" --nak-grp "$FLOOD_GROUP" --sqn 10 --count 8000 \
		--interval-ms 1
	fpid=$LAB_PID
	sleep 1
	H_BEFORE=$(table_handle) R_BEFORE=$(table_rules) P_BEFORE=$(table_packets)
	PID_BEFORE=$(lab_router_pid r1)
	NAKS_IN_FLIGHT=$(e2e_router_ev r1 nak-received)
	lab_router_kill r1 KILL
	sleep 1
	lab_router_start r1 "$LAB_DIR/pgmrouterd.r1.conf" || e2e_check "pgmrouterd restarted" 0 -eq 1
	PID_AFTER=$(lab_router_pid r1)
	H_AFTER=$(table_handle) R_AFTER=$(table_rules) P_AFTER=$(table_packets) T_AFTER=$(table_count)
	DUPS=$(rule_dups)
	kill -0 "$fpid" 2>/dev/null && ! _lab_is_zombie "$fpid" && FLOOD_RUNNING=1
	lab_wait 5 "r1 to learn the stream again" stream_known && STREAM_BACK=1
	lab_wait 5 "r1 to learn the flood's session again" flood_known
	lab_wait_pid "$fpid" 20 >/dev/null
	FLOOD_NEW=$(e2e_router_ev r1 nak-received)
	FLOOD_PEAK=$(lab_router_cli r1 "show ip pgm router json" | jq '.repair_states')
	e2e_stream_finish
	# The flood's repair states had nothing to confirm them: gone after NAK_RPT_IVL (2 s).
	lab_wait 5 "the flood's repair states to go" flood_drained
	STATES_AFTER=$(lab_router_cli r1 "show ip pgm router state $FLOOD_GROUP json" |
		jq '[.sessions[].repairs | length] | add // 0')
}

flood_drained() {
	lab_router_cli r1 "show ip pgm router state $FLOOD_GROUP json" 2>/dev/null |
		jq -e '[.sessions[].repairs | length] | add // 0 | . == 0' >/dev/null
}

scenario_stop() {
	[ -n "$FLOOD_SPM_PID" ] && lab_stop "$FLOOD_SPM_PID"
	return 0
}

scenario_record() {
	local variant=$1
	e2e_record "$variant" "ip NAKs received by the killed daemon / by the new one" \
		"$NAKS_IN_FLIGHT / $FLOOD_NEW"
	e2e_record "$variant" "ip r1 repair states when the flood ended" "$FLOOD_PEAK"
	e2e_record "$variant" "ip nft table handle before / after; rule packets before / after" \
		"$H_BEFORE / $H_AFTER; $P_BEFORE / $P_AFTER"
	e2e_record "$variant" "ip rules before / after; duplicates after" \
		"$(echo "$R_BEFORE" | grep -cE 'queue|accept|goto') / $(echo "$R_AFTER" | grep -cE 'queue|accept|goto'); $DUPS"
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check "ODATA loss into a >= 6 %" "$dropped" -ge $((COUNT * 6 / 100))
}

checks_without() { :; }

checks_with() {
	e2e_check "a new pgmrouterd runs" \
		"$([ -n "$PID_AFTER" ] && [ "$PID_AFTER" != "$PID_BEFORE" ] &&
			lab_router_running r1 && echo 1 || echo 0)" -eq 1
	e2e_check "the killed daemon was taking the NAK storm (NAKs received >= 500)" \
		"$NAKS_IN_FLIGHT" -ge 500
	e2e_check "the flood still ran when the new daemon came up" "$FLOOD_RUNNING" -eq 1
	e2e_check "the new daemon took NAKs of the storm (>= 500)" "$FLOOD_NEW" -ge 500
	e2e_check "queue rules before the kill (>= 1)" \
		"$(echo "$R_BEFORE" | grep -c 'queue')" -ge 1
	e2e_check "stale table replaced: a new table handle" \
		"$([ -n "$H_AFTER" ] && [ "$H_AFTER" != "$H_BEFORE" ] && echo 1 || echo 0)" -eq 1
	e2e_check "stale table replaced: its counters start again (after < before)" \
		"$P_AFTER" -lt "$P_BEFORE"
	e2e_check "rules after the restart = rules before the kill" \
		"$([ "$R_AFTER" = "$R_BEFORE" ] && echo 1 || echo 0)" -eq 1
	e2e_check "no duplicate rule" "$DUPS" -eq 0
	e2e_check "one pgmrouter table" "$T_AFTER" -eq 1
	e2e_check "the new daemon learnt the stream's session again" "$STREAM_BACK" -eq 1
	e2e_check "new daemon: NCFs sent on eth1 (>= 1)" "$(e2e_rt r1 eth1 events ncf-sent)" -ge 1
	e2e_check "new daemon: RDATA forwarded into a (>= 1)" \
		"$(e2e_rt r1 eth1 events rdata-forwarded)" -ge 1
	e2e_check "new daemon: no packet error" "$(e2e_rt_errors r1)" -eq 0
	e2e_check "the new daemon held the flood's repair states (>= 100 when it ended)" \
		"$FLOOD_PEAK" -ge 100
	e2e_check "the flood's repair states gone after NAK_RPT_IVL" "$STATES_AFTER" -eq 0
	# Until the next SPM (every 200 ms) teaches the new daemon the flood's session.
	e2e_check "new daemon: NAKs for an unknown session <= 500" \
		"$(e2e_rt r1 '*' events nak-no-session)" -le 500
}

e2e_run

#!/bin/bash
# chaos-kill: pgmrouterd killed with SIGKILL in the middle of a NAK storm, and started again.
# Topology (a), r1 drops 10 % of the ODATA into LAN a (a1 and a2 NAK about 100 sequence numbers
# a second each), 30000 messages at 1000/s over PGM/IP (long enough for a loaded machine to
# restart the daemon well before the end). Besides, b1 floods r1 with NAKs for a
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
#
# Case epgm: the same with a ZeroMQ stream (epgm://, 4000 messages at 100/s, 5 % loss into LAN
# a). Its source sends SPMs tens of seconds apart and its receivers give up on a NAK long
# before: the new daemon must learn the session from the receivers' first NAK (an SPMR to the
# source, 13.6), not wait for the next SPM, or LAN a's receivers stop for good.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="pgmrouterd killed with SIGKILL during a NAK storm and restarted, 10 % ODATA loss into LAN a"
TAG=chaoskil
TOPOLOGY="one_router 2"
CASES="ip epgm"
GROUP=239.192.0.21
FLOOD_GROUP=239.192.0.22
FLOOD_GSI=5a0a5a0a5a0b
COUNT=30000
RATE=1000
LOSS="a:0.10"
RECV_ARGS=(--progress 100)
E2E_VARIANTS=${E2E_VARIANTS:-with}

# The handle of r1's table, its rules without counters and handles, how many rules of it are
# queue rules and how many are duplicates, the packets its rules counted, how many pgmrouter
# tables there are.
table_handle() { lab_exec r1 nft -a list table ip pgmrouter 2>/dev/null | awk '$1 == "table" { print $NF; exit }'; }
table_rules() { lab_router_rules r1; }
table_packets() {
	lab_exec r1 nft list table ip pgmrouter 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}
# nft refuses two tables of one name in a family: 2 is one ip and one ip6 table.
table_count() { lab_exec r1 nft list tables 2>/dev/null | grep -c 'pgmrouter'; }
# Rules that appear twice in one chain (the sets' lines are not rules).
rule_dups() {
	table_rules | awk '$1 == "set" { c = ""; next } $1 == "chain" { c = $2; next }
		c != "" && NF && $1 != "}" && $1 != "type" { print c ": " $0 }' |
		sort | uniq -d | wc -l
}

# How long the new daemon ran before it knew the stream's session, in ms: its process's age less
# the session's, read together (no polling delay in it).
stream_learnt_ms() {
	local pid age
	pid=$(lab_router_pid r1)
	age=$(lab_router_cli r1 "show ip pgm router state $GROUP json" | jq '.sessions[0].age')
	awk -v u="$(cut -d' ' -f1 /proc/uptime)" -v s="$(cut -d' ' -f22 "/proc/$pid/stat")" \
		-v h="$(getconf CLK_TCK)" -v a="$age" 'BEGIN { printf "%d\n", (u - s / h - a) * 1000 }'
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
# whole stream, so the restarted daemon learns it again. The case's stream first.
scenario_setup() {
	if [ "$2" = epgm ]; then
		STREAM=zmq COUNT=4000 RATE=100 LOSS="a:0.05"
		# An idle ZeroMQ publisher answers NAKs only at its own SPM ticks, and here its SPMs
		# are held back: a receiver that lost the stream's last ODATA would never learn of it
		# (tests/soak/README, zmq-flap-end). It keeps sending through its linger, messages
		# of another run id the receivers ignore, so a lost tail is seen and repaired.
		SEND_ARGS=(--linger-rate 10)
	else
		STREAM=pgm COUNT=30000 RATE=1000 LOSS="a:0.10"
		SEND_ARGS=()
	fi
	lab_exec r1 smcroutectl -u "$LAB_DIR/smcroute.r1.sock" add eth0 "$TOPO_SOURCE_ADDR" \
		"$FLOOD_GROUP" eth1 eth2 >/dev/null || lab_die "cannot add the flood's route"
	lab_wait 5 "the flood's route" sh -c "ip -n $(lab_ns r1) mroute show | grep -q $FLOOD_GROUP"
}

scenario_start() {
	lab_spawn s1 "$LAB_DIR/flood-spm.log" "$LAB_PEERS/pgm-inject" --src "$TOPO_SOURCE_ADDR" \
		--dst "$FLOOD_GROUP" --type spm --gsi "$FLOOD_GSI" --sport 4321 --trail 1 \
		--lead 1000000 --if eth0 --count $((LIMIT * 5)) --interval-ms 200
	FLOOD_SPM_PID=$LAB_PID
}

H_BEFORE="" H_AFTER="" R_BEFORE="" R_AFTER="" P_BEFORE=0 P_AFTER=0 T_AFTER=0 DUPS=-1
NAKS_IN_FLIGHT=0 FLOOD_NEW=0 FLOOD_PEAK=0 FLOOD_RUNNING=0 STATES_AFTER=-1 STREAM_BACK=0 PID_BEFORE="" PID_AFTER=""
FLOOD_SPM_PID="" STREAM_BACK_MS=99999 SPMS_HELD=-

# The ZeroMQ case: from the kill on, the source's SPMs leave s1 only within 2 s of an SPMR
# reaching it, a source whose ambient SPMs come later than its receivers' patience (ZeroMQ's
# come seconds apart, up to 30 s). Its receivers go on NAKing r1's address, as in the soak's
# finding; the new daemon must ask for the SPM, or it never learns the session and LAN a's
# receivers stop. A table of its own in s1.
hold_spms() {
	if [ "$1" = add ]; then
		lab_exec s1 nft -f - <<-EOF
			table ip ckhold {
				set asked {
					type inet_service
					flags dynamic,timeout
					timeout 2s
				}
				chain in {
					type filter hook input priority 0;
					udp dport 5555 @th,96,8 0x0c update @asked { udp dport }
				}
				chain out {
					type filter hook output priority 0;
					ip daddr $GROUP udp dport 5555 @th,96,8 0 udp dport != @asked counter drop
					ip daddr $GROUP udp dport 5555 @th,96,8 0 counter accept
				}
			}
		EOF
	else
		SPMS_HELD=$(lab_exec s1 nft list chain ip ckhold out 2>/dev/null |
			awk '{ for (i = 1; i < NF; i++) if ($i == "packets") { printf "%s%s", sep, $(i + 1); sep = " / " } }')
		lab_exec s1 nft delete table ip ckhold 2>/dev/null
	fi
}

scenario_stream() {
	local variant=$1 case=$2 fpid n end
	STREAM_BACK=0 STREAM_BACK_MS=99999 SPMS_HELD=-
	e2e_case_stream_start
	lab_wait 30 "2000 messages everywhere" e2e_delivered_all 2000
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
	[ "$case" = epgm ] && hold_spms add
	lab_router_kill r1 KILL
	sleep 1
	lab_router_start r1 "$LAB_DIR/pgmrouterd.r1.conf" || e2e_check "pgmrouterd restarted" 0 -eq 1
	PID_AFTER=$(lab_router_pid r1)
	H_AFTER=$(table_handle) R_AFTER=$(table_rules) P_AFTER=$(table_packets) T_AFTER=$(table_count)
	DUPS=$(rule_dups)
	kill -0 "$fpid" 2>/dev/null && ! _lab_is_zombie "$fpid" && FLOOD_RUNNING=1
	lab_wait 5 "r1 to learn the stream again" stream_known && STREAM_BACK=1 &&
		STREAM_BACK_MS=$(stream_learnt_ms)
	lab_wait 5 "r1 to learn the flood's session again" flood_known
	# the most repair states while the flood runs (read after it, a loaded machine's CLI
	# round trip could outlast their NAK_RPT_IVL)
	FLOOD_PEAK=0 end=$((SECONDS + 20))
	while kill -0 "$fpid" 2>/dev/null && ! _lab_is_zombie "$fpid" && [ "$SECONDS" -lt "$end" ]; do
		n=$(lab_router_cli r1 "show ip pgm router json" 2>/dev/null | jq '.repair_states // 0')
		[ "${n:-0}" -gt "$FLOOD_PEAK" ] && FLOOD_PEAK=$n
		sleep 0.2
	done
	lab_wait_pid "$fpid" 5 >/dev/null
	FLOOD_NEW=$(e2e_router_ev r1 nak-received)
	e2e_stream_finish
	[ "$case" = epgm ] && hold_spms del
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
	local variant=$1 case=$2
	e2e_record "$variant" "$case NAKs received by the killed daemon / by the new one" \
		"$NAKS_IN_FLIGHT / $FLOOD_NEW"
	e2e_record "$variant" "$case r1's most repair states during the flood" "$FLOOD_PEAK"
	[ "$case" = epgm ] &&
		e2e_record "$variant" "$case stream's SPMs from the kill on: held back / let through after SPMRs" "$SPMS_HELD"
	e2e_record "$variant" "$case stream's session known again, ms after the new daemon started" \
		"$([ "$STREAM_BACK" = 1 ] && echo "$STREAM_BACK_MS" || echo never)"
	e2e_record "$variant" "$case SPMRs sent / rate-limited / without route (new daemon)" \
		"$(e2e_rt r1 '*' events spmr-sent) / $(e2e_rt r1 '*' events spmr-rate-limited) / $(e2e_rt r1 '*' events spmr-no-route)"
	e2e_record "$variant" "$case nft table handle before / after; rule packets before / after" \
		"$H_BEFORE / $H_AFTER; $P_BEFORE / $P_AFTER"
	e2e_record "$variant" "$case rules before / after; duplicates after" \
		"$(echo "$R_BEFORE" | grep -cE 'queue|accept|goto') / $(echo "$R_AFTER" | grep -cE 'queue|accept|goto'); $DUPS"
}

checks_common() {
	local dropped=$1 case=$2
	e2e_check_all_complete
	if [ "$case" = epgm ]; then
		e2e_check "ODATA loss into a >= 3 %" "$dropped" -ge $((COUNT * 3 / 100))
	else
		e2e_check "ODATA loss into a >= 6 %" "$dropped" -ge $((COUNT * 6 / 100))
	fi
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
	# (the slow ZeroMQ stream leaves the old table fewer packets than the flood gives the new
	# one while it starts: there the new handle says it)
	[ "$2" = epgm ] ||
		e2e_check "stale table replaced: its counters start again (after < before)" \
			"$P_AFTER" -lt "$P_BEFORE"
	e2e_check "rules after the restart = rules before the kill" \
		"$([ "$R_AFTER" = "$R_BEFORE" ] && echo 1 || echo 0)" -eq 1
	e2e_check "no duplicate rule" "$DUPS" -eq 0
	e2e_check "one pgmrouter table per family (ip, ip6)" "$T_AFTER" -eq 2
	e2e_check "the new daemon learnt the stream's session again" "$STREAM_BACK" -eq 1
	if [ "$2" = epgm ]; then
		# learnt from the SPM it asked for, not from the source's next ambient one
		e2e_check "new daemon: SPMRs sent for LAN a's NAKs (>= 1)" \
			"$(e2e_rt r1 eth1 events spmr-sent)" -ge 1
		e2e_check "the new daemon knew the stream's session within 3 s of its start (ms)" \
			"$STREAM_BACK_MS" -le 3000
	fi
	e2e_check "new daemon: NCFs sent on eth1 (>= 1)" "$(e2e_rt r1 eth1 events ncf-sent)" -ge 1
	e2e_check "new daemon: RDATA forwarded into a (>= 1)" \
		"$(e2e_rt r1 eth1 events rdata-forwarded)" -ge 1
	e2e_check "new daemon: no packet error" "$(e2e_rt_errors r1)" -eq 0
	# (counted: a loaded machine's CLI round trips can miss the states' NAK_RPT_IVL)
	e2e_check "the new daemon made repair states for the flood (nak-unique on eth2 >= 100)" \
		"$(e2e_rt r1 eth2 events nak-unique)" -ge 100
	e2e_check "the flood's repair states gone after NAK_RPT_IVL" "$STATES_AFTER" -eq 0
	# Until the next SPM (every 200 ms) teaches the new daemon the flood's session.
	e2e_check "new daemon: NAKs for an unknown session <= 500" \
		"$(e2e_rt r1 '*' events nak-no-session)" -le 500
}

e2e_run

#!/bin/bash
# nak-multicast: Microsoft-style multicast NAK copies. Topology (a) plus m1, a host on LAN a
# that copies every unicast NAK it sees there to the group with IP TTL 1 and the NAKing
# receiver's IP source (copier.sh), as MS-PGM receivers do for their neighbours; the peers send
# PGM without Router Alert (OpenPGM's default). r1 drops 5 % of the ODATA into LAN a; 3000
# messages at 1000/s over PGM/IP. After the stream m1 also multicasts TTL-1 NAKs for 20
# sequence numbers nobody lost.
#
# A network element must neither confirm nor forward multicast NAKs (they are for the LAN): the
# router counts them (nak-multicast) and nothing else happens. No NCF and no upstream NAK may
# name the 20 orphan sequence numbers; the copies may not add NCFs (every NCF answers a unicast
# NAK). A negative control checks the tshark decoding used by every scenario: a frame with a bad
# PGM checksum and a truncated NAK put on LAN b must both be flagged.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="MS-style TTL-1 multicast NAK copies on LAN a, and orphan multicast NAKs"
TAG=mcast
TOPOLOGY="one_router 2"
GROUP=239.192.0.17
COUNT=3000
RATE=1000
LOSS="a:0.05"
ORPHANS=20
COPIES=0 # the copies m1 made during the stream (scenario_stop)

# m1: the host on LAN a that copies the receivers' NAKs (copier.sh).
scenario_setup() {
	lab_host m1
	lab_attach m1 eth0 a 20
}

scenario_start() {
	lab_spawn_ready m1 "$LAB_DIR/copier.out" "$LAB_DIR/copier.ready" "$(dirname "$0")/copier.sh" \
		"$LAB_PEERS" eth0 7500 90 "$LAB_DIR/copier.ready"
	COPIER_PID=$LAB_PID
}

scenario_stop() {
	lab_stop "$COPIER_PID"
	COPIES=$(grep -c '^copied ' "$LAB_DIR/copier.out")
}

scenario_record() {
	local variant=$1
	e2e_record "$variant" "ip TTL-1 multicast copies of NAKs made on a" "$COPIES"
	e2e_record "$variant" "ip NAKs on a: unicast / multicast" \
		"$(e2e_wire_count a "type == 8 && dst != \"$GROUP\"") / $(e2e_wire_count a "type == 8 && dst == \"$GROUP\"")"
	[ "$variant" = with ] && e2e_record with "ip r1 eth1 nak-multicast" \
		"$(e2e_rt r1 eth1 events nak-multicast)"
}

checks_common() {
	local dropped=$1 copies=$COPIES
	e2e_check_all_complete
	# 5 % of 3000: mean 150, standard deviation 12; 90..210 is 5 deviations.
	e2e_check_loss a "$dropped" 90 210
	e2e_check "copies made (>= 1)" "$copies" -ge 1
	e2e_check "multicast NAKs on a = copies made" \
		"$(e2e_wire_count a "type == 8 && dst == \"$GROUP\"")" -eq "$copies"
	e2e_check "multicast NAKs with TTL > 1 on a" \
		"$(e2e_wire_count a "type == 8 && dst == \"$GROUP\" && ttl != 1")" -eq 0
	e2e_check "multicast NAKs beyond LAN a" \
		"$(($(e2e_wire_count src "type == 8 && dst == \"$GROUP\"") + $(e2e_wire_count b "type == 8")))" -eq 0
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	# The orphan checks read NAK lists from tshark's packet details: they must see every SQN.
	e2e_check "SQNs read from the NAKs on a = SQNs the NAKs carry" \
		"$(e2e_wire_sqns a 8 | wc -l)" -eq "$(e2e_wire_sum a "type == 8" "1 + nlist")"
}

# Each variant's checks end with the orphans and the decoder's control, which capture anew.
checks_without() {
	e2e_check "unicast NAKs on src = unicast NAKs on a (no elimination)" \
		"$(e2e_wire_count src "type == 8")" -eq \
		"$(e2e_wire_count a "type == 8 && dst != \"$GROUP\"")"
	orphans_and_control without
}

checks_with() {
	local copies=$COPIES unicast
	unicast=$(e2e_wire_count a "type == 8 && dst != \"$GROUP\"")
	e2e_check "r1 counted the multicast copies (nak-multicast = copies)" \
		"$(e2e_rt r1 eth1 events nak-multicast)" -eq "$copies"
	e2e_check "ncf-sent + ncf-rate-limited = unicast NAKs on a (no NCF for copies)" \
		$(($(e2e_rt r1 eth1 events ncf-sent) + $(e2e_rt r1 eth1 events ncf-rate-limited))) \
		-eq "$unicast"
	e2e_check "NCFs on a = r1's ncf-sent" "$(e2e_c a ncf)" -eq "$(e2e_rt r1 eth1 events ncf-sent)"
	e2e_check "NAKs on src = r1's NAKs sent upstream" "$(e2e_c src nak)" \
		-eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_check "NAK on src <= unicast NAK on a (elimination)" "$(e2e_c src nak)" -le "$unicast"
	e2e_router_checks
	orphans_and_control with
}

# After the stream: TTL-1 multicast NAKs for sequence numbers nobody NAKed, from m1; then the
# decoder's negative control on LAN b. Captures on a, src and b.
orphans_and_control() {
	local variant=$1 sqns gsi_port gsi port sqn before_mc before_ncf before_fwd n
	local src_addr=$TOPO_SOURCE_ADDR
	# The session's TSI, from the NAKs the receivers sent.
	gsi_port=$(e2e_tshark "$LAB_DIR/wire.a.pcap" -T fields -e pgm.hdr.gsi -e pgm.hdr.dport \
		-Y "pgm.hdr.type == 0x08" | head -n 1)
	read -r gsi port <<<"$gsi_port"
	e2e_wire_sqns a 8 | sort -un >"$LAB_DIR/naked.sqns"
	sqns=$(awk -v c="$COUNT" -v k="$ORPHANS" 'NR == FNR { naked[$1] = 1; next }
		END { for (s = 1000; s < c && n < k; s += 37) if (!(s in naked)) { print s; n++ } }' \
		"$LAB_DIR/naked.sqns" /dev/null)
	echo "$sqns" >"$LAB_DIR/orphan.sqns"
	if [ "$variant" = with ]; then
		before_mc=$(e2e_rt r1 eth1 events nak-multicast)
		before_ncf=$(e2e_rt r1 eth1 sent NCF)
		before_fwd=$(e2e_rt r1 eth0 sent NAK)
	fi
	e2e_wire_start
	n=0
	for sqn in $sqns; do
		lab_exec m1 "$LAB_PEERS/pgm-inject" --src "$(lab_addr m1 eth0)" --dst "$GROUP" \
			--type nak --gsi "$gsi" --sport 7500 --dport "$port" --sqn "$sqn" \
			--nak-src "$src_addr" --nak-grp "$GROUP" --ttl 1 --if eth0 >/dev/null &&
			n=$((n + 1))
	done
	# The decoder's negative control, from b1 to the group on LAN b.
	lab_exec b1 "$LAB_PEERS/pgm-inject" --src "$(lab_addr b1 eth0)" --dst "$GROUP" --type ncf \
		--gsi "$gsi" --sport "$port" --dport 7500 --sqn 1 --bad-checksum --ttl 1 --if eth0 \
		>/dev/null
	lab_exec b1 "$LAB_PEERS/pgm-inject" --src "$(lab_addr b1 eth0)" --dst "$GROUP" --type nak \
		--gsi "$gsi" --sport 7500 --dport "$port" --sqn 1 --truncate 6 --ttl 1 --if eth0 \
		>/dev/null
	# Let the router act on them (it would answer at once) and the captures see everything.
	lab_wait 5 "orphans on LAN a" _orphans_seen "$n"
	sleep 0.3
	e2e_router_snapshot
	e2e_wire_stop
	e2e_record "$variant" "ip orphan TTL-1 multicast NAKs sent / seen on a" \
		"$n / $(e2e_wire_count a "type == 8 && ttl == 1")"
	e2e_check "orphan multicast NAKs sent = $ORPHANS" "$n" -eq "$ORPHANS"
	e2e_check "orphan SQNs in NCFs on a" "$(_orphan_hits a 10)" -eq 0
	e2e_check "orphan SQNs in NAKs on src" "$(_orphan_hits src 8)" -eq 0
	e2e_check "NCFs on a after the orphans" "$(e2e_wire_count a "type == 10")" -eq 0
	e2e_check "NAKs on src after the orphans" "$(e2e_wire_count src "type == 8")" -eq 0
	e2e_check "RDATA on a after the orphans" "$(e2e_wire_count a "type == 5")" -eq 0
	e2e_check "decoder flags the bad checksum and the truncated NAK on b" \
		"$(e2e_wire_count b "ethsrc == \"$(e2e_mac b1 eth0)\" && (bad || ck == 0)")" -eq 2
	if [ "$variant" = with ]; then
		e2e_record with "ip r1 nak-multicast after the orphans (before)" \
			"$(e2e_rt r1 eth1 events nak-multicast) ($before_mc)"
		e2e_check "r1 counted the orphans (nak-multicast + $ORPHANS)" \
			"$(e2e_rt r1 eth1 events nak-multicast)" -eq $((before_mc + ORPHANS))
		e2e_check "r1 sent no NCF for the orphans" "$(e2e_rt r1 eth1 sent NCF)" -eq "$before_ncf"
		e2e_check "r1 sent no NAK upstream for the orphans" "$(e2e_rt r1 eth0 sent NAK)" \
			-eq "$before_fwd"
	fi
}

_orphans_seen() {
	[ "$(lab_count a nak)" -ge "$1" ]
}

# Sequence numbers among the orphans that NAKs (8) or NCFs (10) on LAN name.
_orphan_hits() {
	e2e_wire_sqns "$1" "$2" | awk 'NR == FNR { o[$1] = 1; next } ($1 in o) { n++ }
		END { print n + 0 }' "$LAB_DIR/orphan.sqns" -
}

e2e_run

#!/bin/bash
# chain-loss: topology (b), three routers in a row (src - r1 - l1 - r2 - l2 - r3 - a), receivers
# a1 a2 behind r3. r2 drops 5 % of the ODATA it sends into the trunk l2. 3000 messages at
# 1000/s over PGM/IP (and PGM/UDP by name).
#
# Without router assist, NAKs cross all three routers to the source unchanged (the receivers'
# own NAKs, TTL decremented at each router) and the source's NCFs travel the whole chain. With
# pgmrouterd, NAKs go hop by hop: checks_with proves it from the captures of every segment and
# the routers' counters.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="three routers in a row, 5 % ODATA loss into the middle trunk"
TAG=chain
TOPOLOGY="chain 2"
# PGM/UDP (case udp) passes too and runs by name (E2E_CASES=udp): branch-loss runs PGM/UDP with
# real peers in make check, ns router_udp the router's UDP NAKs upstream; this keeps make check
# within its time.
CASES="ip ip-pim"
GROUP=239.192.0.13
COUNT=3000
RATE=1000
LOSS="l2:0.05"

checks_common() {
	local dropped=$1 r
	for r in $TOPO_RECEIVERS; do
		e2e_check_complete "$r"
		e2e_check_recovered "$dropped" "$r"
	done
	# 5 % of 3000: mean 150, standard deviation 12; 3 %..7 % is 5 deviations.
	e2e_check_loss_pct l2 "$dropped" "$COUNT" 3 7
	e2e_check "ODATA on l1 = messages sent" "$(e2e_c l1 odata)" -eq "$COUNT"
	e2e_check "ODATA on a = sent - dropped" "$(e2e_c a odata)" -eq $((COUNT - dropped))
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "RDATA on a >= dropped" "$(e2e_c a rdata)" -ge "$dropped"
}

checks_without() {
	local lan
	e2e_check "RDATA on a = RDATA on src" "$(e2e_c a rdata)" -eq "$(e2e_c src rdata)"
	for lan in l1 l2 a; do
		e2e_check "NAK on $lan = NAK on src (no elimination)" "$(e2e_c "$lan" nak)" \
			-eq "$(e2e_c src nak)"
		e2e_check "NCF on $lan = NCF on src" "$(e2e_c "$lan" ncf)" -eq "$(e2e_c src ncf)"
	done
}

# Router assist, hop by hop (RFC 3208 7.2, 7.3): each router confirms the NAKs of its own
# downstream segment with NCFs it sends itself (TTL 255, the data source as IP source), and
# sends the NAKs upstream itself, one hop: from its own address to the next router's (the SPM
# path it learnt), never the receivers' NAKs passing through. Shown by who puts each NAK and NCF
# on each segment (Ethernet source, IP source and destination, TTL) and by each router's
# counters; each hop forwards at most the NAKs it received.
# Segment, the node that receives its NAKs (upstream) and the node that sends them (downstream).
HOPS="a:r3:- l2:r2:r3 l1:r1:r2 src:s1:r1"

checks_with() {
	local dropped=$1 hop lan up down up_addr down_addr up_mac down_mac
	for hop in $HOPS; do
		IFS=: read -r lan up down <<<"$hop"
		up_addr=$(lab_addr "$up" "@$lan")
		up_mac=$(e2e_mac "$up" "$(lab_if "$up" "$lan")")
		e2e_check "NAKs on $lan (>= 1)" "$(e2e_wire_count "$lan" "type == 8")" -ge 1
		e2e_check "NAKs on $lan not addressed to $up" \
			"$(e2e_wire_count "$lan" "type == 8 && dst != \"$up_addr\"")" -eq 0
		if [ "$down" != - ]; then
			down_addr=$(lab_addr "$down" "@$lan")
			down_mac=$(e2e_mac "$down" "$(lab_if "$down" "$lan")")
			e2e_check "NAKs on $lan not sent by $down from its own address" \
				"$(e2e_wire_count "$lan" "type == 8 && (ethsrc != \"$down_mac\" || src != \"$down_addr\")")" -eq 0
			e2e_check "$down: NAKs sent upstream <= NAKs received" \
				"$(e2e_rt "$down" eth0 sent NAK)" -le "$(e2e_rt "$down" eth1 received NAK)"
		fi
		if [ "$up" != s1 ]; then
			e2e_check "NCFs on $lan (>= 1)" "$(e2e_wire_count "$lan" "type == 10")" -ge 1
			e2e_check "NCFs on $lan not sent by $up itself (TTL 255)" \
				"$(e2e_wire_count "$lan" "type == 10 && (ethsrc != \"$up_mac\" || ttl != 255)")" -eq 0
			e2e_check "$up: NAKs received on its downstream side (>= 1)" \
				"$(e2e_rt "$up" eth1 received NAK)" -ge 1
			e2e_check "$up: NCFs sent on its downstream side (>= 1)" \
				"$(e2e_rt "$up" eth1 sent NCF)" -ge 1
		fi
	done
	# Each router sends one NAK upstream per lost packet: the receivers' duplicates (two
	# receivers, OpenPGM's single NAK after each list) stop at r3. Measured 1.00 on each hop.
	for lan in l2 l1 src; do
		e2e_check "SQNs NAKed on $lan per ODATA dropped x100 <= 110" \
			"$(e2e_wire_sum "$lan" "type == 8" "100 * (1 + nlist)" | awk -v d="$dropped" \
				'{ printf "%d", d ? $1 / d : 0 }')" -le 110
	done
	# A repair the source sends twice finds no repair state the second time: it stops there.
	e2e_check "RDATA on l1 <= RDATA on src" "$(e2e_c l1 rdata)" -le "$(e2e_c src rdata)"
	e2e_check "RDATA on l2 <= RDATA on l1" "$(e2e_c l2 rdata)" -le "$(e2e_c l1 rdata)"
	e2e_check "RDATA on a <= RDATA on l2" "$(e2e_c a rdata)" -le "$(e2e_c l2 rdata)"
	e2e_check "NAK on l2 <= NAK on a" "$(e2e_c l2 nak)" -le "$(e2e_c a nak)"
	e2e_check "NAK on l1 <= NAK on l2" "$(e2e_c l1 nak)" -le "$(e2e_c l2 nak)"
	e2e_check "NAK on src <= NAK on l1" "$(e2e_c src nak)" -le "$(e2e_c l1 nak)"
	e2e_router_checks
}

# Who sends the NAKs and NCFs on each segment, and the sequence numbers asked for per lost packet.
scenario_record() {
	local variant=$1 dropped=${E2E_DROPPED[0]} lan
	for lan in a l2 l1 src; do
		e2e_record "$variant" "$E2E_CASE_PREFIX NAKs on $lan: sender:ipsrc>ipdst/ttl=n" \
			"$(e2e_wire_who "$lan" "type == 8")"
		e2e_record "$variant" "$E2E_CASE_PREFIX NCFs on $lan: sender:ipsrc>ipdst/ttl=n" \
			"$(e2e_wire_who "$lan" "type == 10")"
		e2e_record "$variant" "$E2E_CASE_PREFIX SQNs NAKed on $lan per ODATA dropped" \
			"$(awk -v n="$(e2e_wire_sum "$lan" "type == 8" "1 + nlist")" -v d="$dropped" \
				'BEGIN { printf "%.2f", d ? n / d : 0 }')"
	done
}

e2e_run

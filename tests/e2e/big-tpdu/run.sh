#!/bin/bash
# big-tpdu: topology (a), one router r1; OpenPGM with a TPDU of 9000 bytes (PGM_MTU) over the
# lab's 1500-byte links, so every ODATA, RDATA and SPM-sized datagram above 1500 bytes crosses
# the wire in IP fragments; 8000-byte messages (one TPDU each), 5 % of the ODATA into LAN a
# dropped. PGM over IP.
#
# Without router assist r1 forwards fragments it cannot read: every repair floods LAN b too.
# With pgmrouterd the kernel reassembles before the queue rules (dataplane/README, Fragments):
# NAKs are confirmed, repairs go only into LAN a, and the copy r1 makes for LAN a alone (the
# route also lists LAN b) leaves in fragments of LAN a's MTU, made by the daemon.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="one router, TPDU 9000 over 1500-byte links, 5 % ODATA loss into LAN a, PGM/IP"
TAG=bt
TOPOLOGY="one_router 2"
CASES="ip"
GROUP=239.192.0.16
COUNT=1000
RATE=200
LIMIT=40
SEND_ARGS=(--tpdu 9000 --size 8000)
RECV_ARGS=(--tpdu 9000)
LOSS="a:0.05"
SEGMENTS="odata rdata nak ncf"

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	# 5 % of 1000: mean 50, standard deviation 7; 20..90 is more than 4 deviations.
	e2e_check "ODATA dropped into a (20..90)" "$dropped" -ge 20
	e2e_check "ODATA dropped into a (20..90)" "$dropped" -le 90
	e2e_check_recovered "$dropped" a1 a2
	e2e_check_no_repair b1 b2
	e2e_check "ODATA on b = messages sent" "$(e2e_c b odata)" -eq "$COUNT"
	e2e_check "RDATA on a >= dropped" "$(e2e_c a rdata)" -ge "$dropped"
}

checks_without() {
	e2e_check "RDATA on loss-free b = RDATA on a (no constraint)" \
		"$(e2e_c b rdata)" -eq "$(e2e_c a rdata)"
}

checks_with() {
	local frag
	e2e_check "RDATA on loss-free b <= 2 % of RDATA on a" "$(e2e_c b rdata)" \
		-le "$(e2e_scale "$(e2e_c a rdata)" 2)"
	e2e_check "RDATA on a = RDATA r1 forwarded into a" "$(e2e_c a rdata)" \
		-eq "$(e2e_rt r1 eth1 events rdata-forwarded)"
	e2e_check "NAKs on a all confirmed by r1 (ncf-sent + ncf-rate-limited)" \
		$(($(e2e_rt r1 eth1 events ncf-sent) + $(e2e_rt r1 eth1 events ncf-rate-limited))) \
		-ge "$(e2e_c a nak)"
	frag=$(lab_router_cli r1 "show ip pgm router dataplane json" 2>/dev/null |
		jq -r '.output | "\(.fragmented) \(.fragment_refused)"' 2>/dev/null)
	e2e_record with "ip r1 copies fragmented by the daemon / refused (DF)" "${frag// //}"
	e2e_check "r1 fragmented RDATA copies into a (>= 1)" \
		"${frag%% *}" -ge 1
	e2e_check "r1 refused no copy" "${frag##* }" -eq 0
	e2e_router_checks
}

e2e_run

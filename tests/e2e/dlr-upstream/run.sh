#!/bin/bash
# dlr-upstream: topology (c), the tree: core router, edge routers e1 and e2, receiver LANs a, b
# (behind e1) and c, d (behind e2), and a designated local repairer (tests/peers/pgm-dlr,
# upstream role) on the transit LAN t1 between core and e1. e1 drops 5 % of the ODATA it sends
# into LAN a. One OpenPGM stream, PGM/IP.
#
# Without router assist the receivers on a NAK the source, which repairs every loss down the
# whole tree. With pgmrouterd the first NAK goes from e1 to core, whose NCF on t1 makes the DLR
# announce itself with a redirecting POLR (multicast, the data source's address, Router Alert;
# RFC 3208 9.5.2.1). e1 records it and sends later NAKs to the DLR (9.5.3.2); the DLR answers
# as a source would (NCF and RDATA multicast on t1) and sends an NNAK to core, which forwards it
# to the source. So the source sees NNAKs instead of NAKs, sends RDATA only for the first
# losses, and the repairs go from t1 down LAN a only: not into b, nor anywhere behind e2.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="tree, an upstream DLR on transit LAN t1, 5 % ODATA loss into LAN a behind e1, ${DLR_COUNT:-4000} messages"
TAG=pxup
TOPOLOGY="tree 2"
GROUP=239.192.0.23
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS="a:0.05"
SEGMENTS="odata rdata nak nnak ncf polr"

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_recovered "$dropped" a1 a2
	e2e_check_no_repair b1 b2 c1 c2 d1 d2
}

checks_without() {
	local dropped=$1
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "no NNAK at the source" "$(e2e_c src nnak)" -eq 0
}

# The first losses (until core's first NCF drew the DLR's POLR) go to the source: 10 % + 5.
checks_with() {
	local dropped=$1
	e2e_check "e1 learned the upstream DLR" "$(e2e_router_ev e1 dlr-upstream-learned)" -eq 1
	e2e_check "core learned no DLR (the POLR is consumed one hop below)" \
		"$(e2e_router_ev core dlr-upstream-learned)" -eq 0
	e2e_check_dlr_repaired "$dropped"
	e2e_check "no repair into b" "$(e2e_c b rdata)" -eq 0
	e2e_check "no repair into t2" "$(e2e_c t2 rdata)" -eq 0
	e2e_check "no DLR timeout at e1" "$(e2e_router_ev e1 dlr-timeout)" -eq 0
}

# The DLR: a host on the transit LAN t1 below core, upstream role.
scenario_setup() {
	e2e_dlr_start t1 core -g "$GROUP" --role upstream
}

scenario_record() {
	e2e_record_events e1 dlr-upstream-learned nak-redirected dlr-timeout
	e2e_record_dlr naks_received rdata_sent nnaks_sent polrs_sent
}

e2e_run

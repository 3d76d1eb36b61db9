#!/bin/bash
# dlr-offtree: topology (a), one router r1, source s1 on LAN src, receivers a1 a2 on LAN a and
# b1 b2 on LAN b, and a designated local repairer (tests/peers/pgm-dlr, off-tree role) on the
# loss-free LAN b. r1 drops 5 % of the ODATA it sends into LAN a. One OpenPGM stream, PGM/IP.
#
# Without router assist nobody polls for the DLR: the receivers on a NAK the source, which
# repairs every loss. With pgmrouterd (dlr-discovery on) the first NAK makes r1 poll its LANs
# for off-tree DLRs (RFC 3208 9.5.3.1); the DLR on b answers, and from then on r1 sends the
# NAKs from a to it (9.5.3.2). The DLR confirms and repairs unicast to r1 and sends an NNAK
# upstream; r1 forwards the NNAK to the source and re-sources the RDATA onto LAN a (IP source =
# the data source, destination = the group, Router Alert). So the source sees NNAKs instead of
# NAKs and sends RDATA only for the losses before the DLR was found, and the repairs reach LAN
# a only (the RDATA counted on segment b is the DLR's unicast to r1: b1 and b2 recover nothing).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="one router, an off-tree DLR on loss-free LAN b, 5 % ODATA loss into LAN a, ${DLR_COUNT:-4000} messages"
TAG=pxoff
TOPOLOGY="one_router 2"
GROUP=239.192.0.21
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS="a:0.05"
SEGMENTS="odata rdata nak nnak ncf poll polr"
ROUTER_CONFIG=("ip pgm router dlr-discovery")

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_no_repair b1 b2
}

checks_without() {
	local dropped=$1
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "no NNAK at the source" "$(e2e_c src nnak)" -eq 0
	e2e_check "the DLR sent no repair" "$(e2e_dlr_kv rdata_sent)" -eq 0
}

# Only the losses before the DLR answered the poll (about 100 ms, 5 messages) go to the source;
# 10 % of the losses leaves room for a slow first poll on a loaded machine.
checks_with() {
	local dropped=$1
	e2e_check "r1 learned the off-tree DLR" "$(e2e_router_ev r1 dlr-offtree-learned)" -eq 1
	e2e_check "NAKs at the source <= 10 % of NAKs on a + 5" "$(e2e_c src nak)" \
		-le $(($(e2e_scale "$(e2e_c a nak)" 10) + 5))
	e2e_check_dlr_repaired "$dropped"
	e2e_check "r1 re-sourced them onto a" "$(e2e_router_ev r1 dlr-rdata)" -ge "$(e2e_scale "$dropped" 80)"
	e2e_check "NAKs sent to the DLR >= 80 % of dropped / 63" "$(e2e_router_ev r1 nak-redirected)" -ge 1
	e2e_check "no DLR timeout" "$(e2e_router_ev r1 dlr-timeout)" -eq 0
	e2e_check_recovered "$dropped" a1 a2
}

# The DLR: a host on LAN b, caching the group's ODATA, answering DLR polls only.
scenario_setup() {
	e2e_dlr_start b r1 -g "$GROUP" --role off-tree
}

scenario_record() {
	e2e_record_events r1 dlr-offtree-learned nak-redirected dlr-rdata dlr-timeout
	e2e_record_dlr naks_received rdata_sent nnaks_sent
}

e2e_run

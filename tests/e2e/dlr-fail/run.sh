#!/bin/bash
# dlr-fail: as dlr-offtree (one router r1, an off-tree DLR on loss-free LAN b, 5 % ODATA loss
# into LAN a), but the DLR stops repairing after 20 RDATA:
#   silent  it then answers nothing: r1 gets no NCF for the NAKs it sent there, drops the DLR
#           after NAK_RPT_IVL and sends them to the source (RFC 3208 9.5.3.2, MUST);
#   nak     it then confirms every NAK and NAKs the SQNs upstream itself: r1 drops the redirect
#           for those SQNs and forwards them to the source (9.5.3.2, MUST).
# Either way every receiver must complete. Without router assist the DLR is never asked and the
# source repairs everything, as in dlr-offtree.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

FAIL_AFTER=20
TITLE="one router, an off-tree DLR that stops repairing after $FAIL_AFTER RDATA (silent, or NAKing upstream), 5 % ODATA loss into LAN a"
TAG=pxfail
TOPOLOGY="one_router 2"
CASES="silent nak" # the DLR's --fail-mode
ENCAP=ip
GROUP=239.192.0.22
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS="a:0.05"
SEGMENTS="odata rdata nak nnak ncf poll polr"
ROUTER_CONFIG=("ip pgm router dlr-discovery")

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_recovered "$dropped" a1 a2
}

checks_without() {
	local dropped=$1
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "the DLR sent no repair" "$(e2e_dlr_kv rdata_sent)" -eq 0
}

checks_with() {
	local dropped=$1 mode=$2
	e2e_check "the DLR repaired its $FAIL_AFTER before failing" "$(e2e_dlr_kv rdata_sent)" -eq $FAIL_AFTER
	e2e_check "r1 learned the off-tree DLR" "$(e2e_router_ev r1 dlr-offtree-learned)" -ge 1
	e2e_check "the source repaired the rest" "$(e2e_c src rdata)" -ge $((dropped - FAIL_AFTER))
	if [ "$mode" = silent ]; then
		e2e_check "r1 dropped the DLR at NAK_RPT_IVL" "$(e2e_router_ev r1 dlr-timeout)" -eq 1
		e2e_check "the silent DLR was not learned again" "$(e2e_router_ev r1 dlr-offtree-learned)" -eq 1
	else
		e2e_check "r1 sent the SQNs the DLR NAKed upstream" "$(e2e_router_ev r1 dlr-nak-fallback)" -ge 1
		e2e_check "the DLR NAKed upstream" "$(e2e_dlr_kv naks_sent)" -ge 1
	fi
}

# The DLR: a host on LAN b, caching the group's ODATA, answering DLR polls only, failing.
scenario_setup() {
	local mode=$2
	e2e_dlr_start b r1 -g "$GROUP" --role off-tree --fail-after $FAIL_AFTER --fail-mode "$mode"
}

scenario_record() {
	e2e_record_events r1 dlr-offtree-learned nak-redirected dlr-timeout dlr-nak-fallback
	e2e_record_dlr naks_received rdata_sent nnaks_sent naks_sent
}

e2e_run

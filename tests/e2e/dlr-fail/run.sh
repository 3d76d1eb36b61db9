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

GROUP=239.192.0.22
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS=0.05
FAIL_AFTER=20

scenario_router_config() {
	e2e_router_config_plus "$1" "ip pgm router dlr-discovery"
}

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

run_case() {
	local variant=$1 mode=$2 dropped
	e2e_case_begin pxfail "$variant" "$mode"
	lab_topo_one_router 2
	e2e_dlr_start b r1 -g "$GROUP" --role off-tree --fail-after $FAIL_AFTER --fail-mode "$mode"
	if e2e_router_up; then
		lab_topo_loss a "$LOSS" odata
		e2e_pgm_stream "$GROUP" ip "$COUNT" "$RATE" 60
		dropped=$(lab_topo_loss_dropped a)
		e2e_record_loss "$mode" 4 a "$dropped" "$COUNT"
		e2e_record_receivers
		e2e_record_segments odata rdata nak nnak ncf poll polr
		if [ "$variant" = with ]; then
			e2e_record "$variant" "$mode r1: DLRs learned / NAKs redirected / timeouts / SQNs NAKed by the DLR" \
				"$(e2e_router_ev r1 dlr-offtree-learned)/$(e2e_router_ev r1 nak-redirected)/$(e2e_router_ev r1 dlr-timeout)/$(e2e_router_ev r1 dlr-nak-fallback)"
		fi
		lab_stop "$E2E_DLR_PID"
		e2e_record "$variant" "$mode DLR: NAKs received / RDATA sent / NNAKs / NAKs sent" \
			"$(e2e_dlr_kv naks_received)/$(e2e_dlr_kv rdata_sent)/$(e2e_dlr_kv nnaks_sent)/$(e2e_dlr_kv naks_sent)"
		checks_common "$dropped"
		"checks_$variant" "$dropped" "$mode"
		e2e_router_check_alive
	fi
	e2e_case_end
}

lab_groups "$GROUP"
e2e_begin dlr-fail "one router, an off-tree DLR that stops repairing after $FAIL_AFTER RDATA (silent, or NAKing upstream), $LOSS ODATA loss into LAN a"
e2e_note_skips
for variant in $(e2e_variants); do
	for mode in silent nak; do
		run_case "$variant" "$mode"
	done
done
e2e_end
